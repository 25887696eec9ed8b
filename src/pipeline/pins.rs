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
use crate::format::binary::{Damaged, Persist, Reader, Writer};
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

/// Edge stretch, between two pinned particles, above which their targets are taken to
/// tear the cloth between them (50%: cloth barely stretches 10% in life).
pub const TEARING_SPREAD: f64 = 0.5;

/// Two pinned particles joined by a garment edge whose targets move apart
/// ([`Pins::largest_spread`]).
#[derive(Debug, Clone, PartialEq)]
pub struct PinSpread {
    /// The two particles.
    pub particles: [usize; 2],
    /// The bodies their targets follow (`None`: a pin fixed in space).
    pub bodies: [Option<usize>; 2],
    /// Strain of the edge between them if it followed the targets: distance over the
    /// particles' first-frame distance, minus one.
    pub stretch: f64,
    /// The body animation frame where the targets are farthest apart.
    pub frame: f64,
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

    /// Of the garment `edges` whose two ends are pinned and follow bodies (or a body and a
    /// fixed point), the one whose targets move apart the most over the bodies' animation
    /// samples from `start` on, with that stretch: a pin attached to a hand and its
    /// neighbour attached to the hips tear the cloth between them whatever the solver does.
    /// `x` are the first-frame positions.
    pub fn largest_spread(
        &self,
        edges: &[[usize; 2]],
        x: &[Vec3],
        bodies: &[BodyState],
        start: f64,
    ) -> Option<PinSpread> {
        let slot = |i: usize| self.particles.binary_search(&i).ok();
        let mut frames: Vec<f64> = (bodies.iter())
            .flat_map(|b| b.animation().frames.iter().copied())
            .filter(|&f| f >= start)
            .collect();
        frames.sort_by(f64::total_cmp);
        frames.dedup();
        let body_of = |t: &Target| match t {
            Target::Body(b, ..) => Some(*b),
            _ => None,
        };
        let target_at = |t: &Target, frame: f64| match t {
            Target::Fixed(p) => Some(*p),
            Target::Own => None,
            Target::Body(b, tri, w, offset) => {
                let body = &bodies[*b];
                let corners = body.triangles[*tri].map(|v| body.animation().sample_point(frame, v));
                Some(corners[0] * w[0] + corners[1] * w[1] + corners[2] * w[2] + offset)
            }
        };
        let mut best: Option<PinSpread> = None;
        for &[a, b] in edges {
            let (Some(sa), Some(sb)) = (slot(a), slot(b)) else {
                continue;
            };
            let (ta, tb) = (&self.targets[sa], &self.targets[sb]);
            let rest = (x[a] - x[b]).norm();
            if body_of(ta).or(body_of(tb)).is_none() || rest <= 0.0 {
                continue;
            }
            for &frame in &frames {
                let (Some(pa), Some(pb)) = (target_at(ta, frame), target_at(tb, frame)) else {
                    break;
                };
                let stretch = (pa - pb).norm() / rest - 1.0;
                if best.as_ref().is_none_or(|s| stretch > s.stretch) {
                    best = Some(PinSpread {
                        particles: [a, b],
                        bodies: [body_of(ta), body_of(tb)],
                        stretch,
                        frame,
                    });
                }
            }
        }
        best
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

impl Persist for Target {
    fn save(&self, w: &mut Writer) {
        match self {
            Target::Fixed(p) => {
                w.put(&0u8);
                w.put(p);
            }
            Target::Own => w.put(&1u8),
            Target::Body(b, t, weights, offset) => {
                w.put(&2u8);
                w.put(&(*b, *t));
                w.put(weights);
                w.put(offset);
            }
        }
    }

    fn load(r: &mut Reader) -> Result<Self, Damaged> {
        Ok(match r.get::<u8>()? {
            0 => Target::Fixed(r.get()?),
            1 => Target::Own,
            2 => {
                let (b, t) = r.get()?;
                Target::Body(b, t, r.get()?, r.get()?)
            }
            _ => return Err(Damaged),
        })
    }
}

impl Pins {
    /// Writes the pins' attachments (the body point each pinned particle follows) to a
    /// checkpoint.
    pub fn save_state(&self, w: &mut Writer) {
        w.put(&self.targets);
    }

    /// Reads back what [`Pins::save_state`] wrote, for the same pinned particles.
    pub fn load_state(&mut self, r: &mut Reader) -> Result<(), Damaged> {
        let targets: Vec<Target> = r.get()?;
        if targets.len() != self.targets.len() {
            return Err(Damaged);
        }
        self.targets = targets;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::{Animation, Body};
    use std::path::PathBuf;

    /// Two small horizontal plates at y = 0 side by side, 'hips' at x < 0 and 'hand' at
    /// x > 0; the hand plate moves `hand_dx` along +x between frames 1 and 11.
    fn hips_and_hand(hand_dx: f64) -> BodyState {
        let plate = |x0: f64, dx: f64| {
            [[0.0, -0.1], [0.1, -0.1], [0.0, 0.1], [0.1, 0.1]]
                .map(|[x, z]| Vec3::new(x0 + x + dx, 0.0, z))
        };
        let at = |dx: f64| [plate(-0.11, 0.0), plate(0.01, dx)].concat();
        let body = Body {
            name: "Figure".into(),
            source: PathBuf::from("figure.gltf"),
            triangles: vec![[0, 1, 2], [1, 3, 2], [4, 5, 6], [5, 7, 6]],
            animation: Animation {
                frames: vec![1.0, 11.0],
                positions: vec![at(0.0), at(hand_dx)],
            },
            thickness: None,
            friction: None,
        };
        BodyState::new(&body, 0.004, 0.3).unwrap()
    }

    #[test]
    fn pins_following_parts_that_part_are_found_with_the_stretch_of_their_edge() {
        // Particles 0 and 1 sit 1 cm above the hips and the hand plates, 4 cm apart (an
        // edge); particle 2 is free. The hand moves 6 cm away: the edge would be 10 cm long,
        // a stretch of 150%, reached at the hand's last sample (frame 11).
        let x = [
            Vec3::new(-0.02, 0.01, 0.0),
            Vec3::new(0.02, 0.01, 0.0),
            Vec3::new(0.0, 0.01, 0.05),
        ];
        let bodies = [hips_and_hand(0.06)];
        let mut pins = Pins::new(&[1.0, 1.0, 0.0], &x);
        pins.attach_to_bodies(&bodies);
        let edges = [[0, 1], [1, 2], [0, 2]];
        let s = pins.largest_spread(&edges, &x, &bodies, 1.0).unwrap();
        assert_eq!(
            (s.particles, s.bodies, s.frame),
            ([0, 1], [Some(0), Some(0)], 11.0)
        );
        assert!((s.stretch - 1.5).abs() < 1e-12, "{}", s.stretch);
        // Counted from frame 6 on (only the hand's sample at frame 11 is left): the same.
        let later = pins.largest_spread(&edges, &x, &bodies, 6.0).unwrap();
        assert!((later.stretch - 1.5).abs() < 1e-12);
        // A still hand: the pins keep their distance.
        let still = [hips_and_hand(0.0)];
        let mut pins = Pins::new(&[1.0, 1.0, 0.0], &x);
        pins.attach_to_bodies(&still);
        let s = pins.largest_spread(&edges, &x, &still, 1.0).unwrap();
        assert!(s.stretch.abs() < 1e-12, "{}", s.stretch);
        // Pins that follow the garment's own animation are the artist's choice: none found.
        let mut own = Pins::new(&[1.0, 1.0, 0.0], &x);
        own.follow_animation(Animation::fixed(x.to_vec()));
        assert_eq!(own.largest_spread(&edges, &x, &bodies, 1.0), None);
    }
}
