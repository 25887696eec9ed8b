//! Pins (docs/reference.md, "Inputs"): exact constraints through the PCG filter, never springs.
//!
//! A pinned particle (weight ≥ 0.5) follows, in this order of preference: the garment's own
//! animation (skin, morphs, time samples); else the point of the nearest body surface it
//! sits on at the first frame (barycentric on that triangle, plus its world offset); else
//! its initial position. Over a step ending at frame `f₁` with target `p(f₁)`:
//!
//! ```text
//! S_i = 0,   z_i = (p(f₁) − x₀)/h − v₀,   y_i = 0   ⇒   v₁ = (p(f₁) − x₀)/h,  x₁ = p(f₁)
//! ```
use crate::collision::geometry::closest_point_barycentric;
use crate::collision::BodyState;
use crate::linalg::pcg::Constraint;
use crate::scene::Animation;
use crate::{Mat3, Vec3};

/// Where one pinned particle goes.
#[derive(Debug, Clone, PartialEq)]
enum Target {
    /// Stays at this position.
    Fixed(Vec3),
    /// Follows the garment's own animation.
    Own,
    /// Follows a body surface point: body, triangle, barycentric weights, world offset.
    Body(usize, usize, [f64; 3], Vec3),
}

/// The pinned particles and their targets.
#[derive(Debug, Clone)]
pub struct Pins {
    particles: Vec<usize>,
    targets: Vec<Target>,
    animation: Option<Animation>,
}

impl Pins {
    /// Pins of weight ≥ 0.5, fixed at their positions `x` until attached.
    pub fn new(pin: &[f64], x: &[Vec3]) -> Self {
        let particles: Vec<usize> = (0..x.len())
            .filter(|&i| pin.get(i).is_some_and(|&w| w >= 0.5))
            .collect();
        let targets = particles.iter().map(|&i| Target::Fixed(x[i])).collect();
        Pins {
            particles,
            targets,
            animation: None,
        }
    }

    /// True for pinned particles, indexed by particle.
    pub fn mask(&self, n: usize) -> Vec<bool> {
        let mut m = vec![false; n];
        for &i in &self.particles {
            m[i] = true;
        }
        m
    }

    /// Makes every pin follow the garment's own animation (world-space particle positions).
    pub fn follow_animation(&mut self, animation: Animation) {
        self.targets.iter_mut().for_each(|t| *t = Target::Own);
        self.animation = Some(animation);
    }

    /// Attaches every pin that does not follow the garment's animation to the nearest body
    /// surface point (bodies sampled at the first frame).
    pub fn attach_to_bodies(&mut self, bodies: &[BodyState]) {
        for target in self.targets.iter_mut() {
            let Target::Fixed(p) = *target else {
                continue;
            };
            let mut best: Option<(f64, Target)> = None;
            for (b, body) in bodies.iter().enumerate() {
                for t in 0..body.triangles.len() {
                    let (c0, _) = body.corners(t);
                    let w = closest_point_barycentric(p, c0[0], c0[1], c0[2]);
                    let q = c0[0] * w[0] + c0[1] * w[1] + c0[2] * w[2];
                    let d = (p - q).norm();
                    if best.as_ref().is_none_or(|(bd, _)| d < *bd) {
                        best = Some((d, Target::Body(b, t, w, p - q)));
                    }
                }
            }
            if let Some((_, attached)) = best {
                *target = attached;
            }
        }
    }

    /// Where every pinned particle must be at `frame1` (pairs of particle and target,
    /// m); bodies must be sampled for the step ending there (their `x1` at `frame1`).
    pub fn targets(&self, x: &[Vec3], frame1: f64, bodies: &[BodyState]) -> Vec<(usize, Vec3)> {
        let own = match (&self.animation, self.targets.contains(&Target::Own)) {
            (Some(a), true) => Some(a.sample(frame1)),
            _ => None,
        };
        (self.particles.iter().zip(&self.targets))
            .map(|(&i, target)| {
                let goal = match target {
                    Target::Fixed(p) => *p,
                    Target::Own => own.as_ref().map_or(x[i], |o| o[i]),
                    Target::Body(b, t, w, offset) => {
                        let (_, c1) = bodies[*b].corners(*t);
                        c1[0] * w[0] + c1[1] * w[1] + c1[2] * w[2] + offset
                    }
                };
                (i, goal)
            })
            .collect()
    }

    /// Appends the pins' constraints for a step of `h` ending at `frame1`; bodies must be
    /// sampled for this step (their `x1` at `frame1`).
    pub fn constrain(
        &self,
        x: &[Vec3],
        v: &[Vec3],
        h: f64,
        frame1: f64,
        bodies: &[BodyState],
        out: &mut Vec<Constraint>,
    ) {
        for (i, goal) in self.targets(x, frame1, bodies) {
            // For a fixed pin at rest this is exactly z = −v₀ (goal − x₀ = 0).
            let z = if goal == x[i] {
                -v[i]
            } else {
                (goal - x[i]) / h - v[i]
            };
            out.push(Constraint {
                particle: i,
                filter: Mat3::zeros(),
                z,
            });
        }
    }
}
