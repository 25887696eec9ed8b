//! Where and why a frame failed: what the rejected steps measured (the particle deepest
//! inside which body, the triangle whose stretch jumped, the particles that passed through
//! the cloth), kept from the last rejection so that the error names the real cause and
//! what the artist can do, and `--report` says where in the garment it was. Also the
//! cloth torn while the bake goes on ([`Simulator::tear`]): an edge stretched past
//! [`TEAR_STRAIN`].
use super::pins::TEARING_SPREAD;
use super::stretch_check::stretch_measure;
use super::{Rejection, Simulator};
use crate::collision::BodyContacts;
use crate::Vec3;

/// What a step was rejected for, and where.
#[derive(Debug, Clone, PartialEq)]
pub struct Trouble {
    /// `"solve"`, `"stretch"`, `"contact"` or `"self_crossing"` (a failed frame), or
    /// `"tear"` (an edge stretched past [`TEAR_STRAIN`]).
    pub cause: &'static str,
    /// Garment particles where it was found (sorted; empty for a solve that failed).
    pub particles: Vec<usize>,
    /// The body a particle ended inside (contact).
    pub body: Option<String>,
    /// Speed (m/s) of that body's surface near the particle over the step.
    pub body_speed: Option<f64>,
    /// The edge strain `ℓ/ℓ₀ − 1` of a tear (its two particles are `particles`).
    pub strain: Option<f64>,
}

/// Edge strain `ℓ/ℓ₀ − 1` past which cloth counts as torn: [`Simulator::tear`], and the
/// bake's warning. The stretch force holds a sound bake within a few percent (the shipped
/// fixtures stay under 10%, garments started inside a body included), so 50% is reached
/// only where pins or bodies pull the cloth apart whatever the solver does.
pub const TEAR_STRAIN: f64 = 0.5;

/// Speed (m/s) above which a body's surface is taken to move faster than cloth can be
/// carried along (a walking character's hands move at about 1–2 m/s).
const FAST_BODY: f64 = 5.0;

impl Simulator {
    /// A warning when two pinned particles joined by an edge follow body points that move
    /// apart by more than [`TEARING_SPREAD`] of their distance
    /// ([`super::pins::Pins::largest_spread`]): the cloth between them will tear whatever
    /// the solver does. An unbound pin follows the body surface nearest to it at the first
    /// frame, which for part of a waist ring can be a hanging hand.
    pub(super) fn pin_spread_warning(&self) -> Option<String> {
        let edges: Vec<[usize; 2]> = (crate::model::topology::edges(&self.model.triangles))
            .iter()
            .map(|e| [e.a, e.b])
            .collect();
        let bodies = &self.collision.bodies;
        let spread =
            (self.drive.pins).largest_spread(&edges, &self.state.x, bodies, self.drive.clock.0)?;
        if spread.stretch <= TEARING_SPREAD {
            return None;
        }
        let [a, b] = spread.particles;
        let (pa, pb) = (self.state.x[a], self.state.x[b]);
        let follows = |body: Option<usize>| match body {
            Some(k) => format!("body '{}'", bodies[k].name),
            None => "a fixed point".to_string(),
        };
        let whom = match spread.bodies {
            [p, q] if p == q => follows(p),
            [p, q] => format!("{} and {}", follows(p), follows(q)),
        };
        Some(format!(
            "pinned particles {a} (at {:.3}, {:.3}, {:.3} m) and {b} (at {:.3}, {:.3}, {:.3} m) are joined by an edge but follow points of {whom} that move apart, by frame {:.0} to {:.0}% more than the edge's length: the cloth between them will tear — an unbound pin follows the body surface nearest to it at the first frame (here part of the pins may sit on a hand or an arm); bind the garment to the character's armature so its pins follow the skin, or pin only vertices that lie on the part of the body they should follow",
            pa.x, pa.y, pa.z, pb.x, pb.y, pb.z,
            spread.frame,
            100.0 * spread.stretch,
        ))
    }

    /// After steps rejected for contact down to the minimum step: lets the particle the
    /// last of them found deepest inside a body through that body
    /// ([`Overlaps::admit`](crate::collision::overlap::Overlaps::admit)) and starts the
    /// step size again from the largest step. A body that keeps catching cloth (pinched
    /// between a leg and the belly, under an arm) then costs one particle eased out of it
    /// instead of the bake. False, and nothing changed, when that particle is already let
    /// through that body, when the body's surface there moves faster than [`FAST_BODY`]
    /// (a jump in its animation: the failure names it), or when a recorded step schedule
    /// is replayed (keyframe control's runs must take the steps they recorded).
    pub(super) fn let_stuck_through(&mut self) -> bool {
        let fast = (self.diagnostics.trouble.as_ref())
            .and_then(|t| t.body_speed)
            .is_some_and(|v| v > FAST_BODY);
        if self.run.replaying() || fast {
            return false;
        }
        let Some((particle, body)) = self.diagnostics.stuck.take() else {
            return false;
        };
        if !self
            .collision
            .contacts
            .overlaps
            .admit(particle, body, self.state.x.len())
        {
            return false;
        }
        self.step_control.restart();
        true
    }

    /// Remembers where the proposed step `x_new` of size `h` failed for `why`.
    pub(super) fn note_trouble(&mut self, why: &Rejection, x_new: &[Vec3], h: f64) {
        let trouble = match why {
            Rejection::Contact => {
                let overlaps = &self.collision.contacts.overlaps;
                let bodies = &self.collision.bodies;
                let pinned = &self.drive.pinned;
                let deepest = BodyContacts::deepest(bodies, x_new, overlaps, |i| !pinned[i]);
                self.diagnostics.stuck = deepest.map(|d| (d.particle, d.body));
                deepest.map(|d| {
                    let body = &bodies[d.body];
                    let p = x_new[d.particle];
                    let speed = (0..body.x1.len())
                        .min_by(|&a, &b| {
                            let da = (body.x1[a] - p).norm_squared();
                            da.total_cmp(&(body.x1[b] - p).norm_squared())
                        })
                        .map(|v| (body.x1[v] - body.x0[v]).norm() / h);
                    Trouble {
                        cause: "contact",
                        particles: vec![d.particle],
                        body: Some(body.name.clone()),
                        body_speed: speed,
                        strain: None,
                    }
                })
            }
            Rejection::Stretch => {
                let bad: Vec<usize> = (0..x_new.len())
                    .filter(|&i| !x_new[i].iter().all(|c| c.is_finite()))
                    .collect();
                let particles = if bad.is_empty() {
                    self.worst_stretch_change(x_new).to_vec()
                } else {
                    bad
                };
                Some(Trouble {
                    cause: "stretch",
                    particles: sorted(particles),
                    body: None,
                    body_speed: None,
                    strain: None,
                })
            }
            _ => None,
        };
        if trouble.is_some() {
            self.diagnostics.trouble = trouble;
        }
    }

    /// Remembers the particles of a step rejected for passing cloth through itself.
    pub(super) fn note_crossing(&mut self, particles: &[usize]) {
        self.diagnostics.trouble = Some(Trouble {
            cause: "self_crossing",
            particles: sorted(particles.to_vec()),
            body: None,
            body_speed: None,
            strain: None,
        });
    }

    /// The corners of the triangle whose stretch `(‖w_u‖, ‖w_v‖)` changes most from now to
    /// `x_new` (Baraff eq. 9).
    fn worst_stretch_change(&self, x_new: &[Vec3]) -> [usize; 3] {
        let (tris, rest) = (&self.model.triangles, &self.model.rest);
        let change = |k: usize| {
            let [a0, b0] = stretch_measure(&tris[k], &rest[k], &self.state.x);
            let [a1, b1] = stretch_measure(&tris[k], &rest[k], x_new);
            (a1 - a0).abs().max((b1 - b0).abs())
        };
        (0..tris.len())
            .max_by(|&a, &b| change(a).total_cmp(&change(b)))
            .map_or([0; 3], |k| tris[k])
    }

    /// The most stretched triangle side of the current state: its strain `ℓ/ℓ₀ − 1`
    /// (`ℓ₀` the side's length in the triangle's rest panel, metres) and its two particles,
    /// the first such side in triangle order on a tie.
    pub fn worst_edge_strain(&self) -> (f64, [usize; 2]) {
        let x = &self.state.x;
        let mut worst = (f64::NEG_INFINITY, [0, 0]);
        for (t, r) in self.model.triangles.iter().zip(&self.model.rest) {
            for k in 0..3 {
                let (a, b) = (t[k], t[(k + 1) % 3]);
                let rest = (r.uv[(k + 1) % 3] - r.uv[k]).norm();
                let strain = (x[b] - x[a]).norm() / rest - 1.0;
                if strain > worst.0 {
                    worst = (strain, [a.min(b), a.max(b)]);
                }
            }
        }
        worst
    }

    /// The cloth torn: the most stretched side ([`Simulator::worst_edge_strain`]) when its
    /// strain passes [`TEAR_STRAIN`], as a trouble of cause `"tear"`. Only measures: the
    /// bake warns once per garment and goes on.
    pub fn tear(&self) -> Option<Trouble> {
        let (strain, particles) = self.worst_edge_strain();
        (strain > TEAR_STRAIN).then(|| Trouble {
            cause: "tear",
            particles: particles.to_vec(),
            body: None,
            body_speed: None,
            strain: Some(strain),
        })
    }

    /// Where the last rejected step failed, if it was measured: the trouble of a failed
    /// frame (`--report`).
    pub fn trouble(&self) -> Option<&Trouble> {
        self.diagnostics.trouble.as_ref()
    }

    /// What kept failing down to the minimum step, where, and what to do about it.
    pub(super) fn trouble_message(&self, why: &Rejection) -> String {
        let t = self.diagnostics.trouble.as_ref();
        let at = |i: usize| {
            let p = self.state.x[i];
            format!(
                "garment particle {i} (at {:.3}, {:.3}, {:.3} m)",
                p.x, p.y, p.z
            )
        };
        let min = self.params.min_step;
        match (why, t) {
            (Rejection::Contact, Some(t)) if !t.particles.is_empty() => {
                let body = t.body.as_deref().unwrap_or("?");
                let advice = match t.body_speed {
                    Some(v) if v > FAST_BODY => format!(
                        "the body's surface there moves at {v:.1} m/s, faster than the cloth \
                         can be carried along: check its animation for a jump at this frame"
                    ),
                    _ => "the cloth is caught there (between the body and a pin, between two \
                          bodies, or pressed in by cloth around it): check that the pins hold \
                          the garment clear of the body at this frame, or give the body a \
                          smaller thickness"
                        .to_string(),
                };
                format!(
                    "cloth kept ending up inside body '{body}' near {} even at the minimum \
                     step {min} s; {advice}",
                    at(t.particles[0])
                )
            }
            (Rejection::Stretch, Some(t)) if !t.particles.is_empty() => {
                let strain = self.max_strain();
                let advice = if self.model.rest_mode == crate::model::Rest::Uv && strain > 0.25 {
                    format!(
                        "the garment's shape differs from its UV panels by {:.0}%: give --rest \
                         auto (or shape) to rest on the modelled shape",
                        100.0 * strain
                    )
                } else {
                    "a pin or a body pulls the cloth there faster than it can stretch: check \
                     their animation at this frame, or lower the material stiffness ratios"
                        .to_string()
                };
                format!(
                    "the cloth stretch kept jumping near {} even at the minimum step {min} s; \
                     {advice}",
                    at(t.particles[0])
                )
            }
            (Rejection::SelfCrossing, Some(t)) if !t.particles.is_empty() => format!(
                "the cloth kept passing through itself near {} ({} particles) even at the \
                 minimum step {min} s; a fold or layer of the garment may cross another at \
                 the first frame: separate them in the modelling tool",
                at(t.particles[0]),
                t.particles.len()
            ),
            _ => format!(
                "{} even at the minimum step {min} s; lower the material stiffness ratios or \
                 check the input for overlapping or extremely small triangles",
                why.reason()
            ),
        }
    }
}

fn sorted(mut v: Vec<usize>) -> Vec<usize> {
    v.sort_unstable();
    v.dedup();
    v
}

#[cfg(test)]
mod tests;
