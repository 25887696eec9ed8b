//! Cloth–body contact as exact constraints (Baraff §5, §6).
//!
//! Each step, every free particle is tested against the bodies' triangles near its path:
//!
//! ```text
//! x̃ = x₀ + h v₀ + h² g          predicted end position under gravity
//! contact if  CCD: x₀→x̃ crosses a triangle moving (a₀b₀c₀)→(a₁b₁c₁), or
//!             proximity: x̃ lies within thickness τ of a triangle at the step's end
//! n  outward normal at the contact point, v_b the body's velocity there (barycentric),
//! d₀ = (x₀ − q₀)·n  signed distance from the contact point at the step's start; for x₀
//!     outside, at least min(dist(x₀, body), τ) (the contact face's plane, extended over
//!     a convex bend, passes closer to x₀ than the body does)
//! new contact (none last step) of a particle not landing (−(v₀ − v_b)·n h ≤ τ/2) and
//!     with no cloth near: also x₀ + h v₀ + h² a (a its last step's acceleration, at
//!     most |g| long) must make contact
//! ```
//! A contact becomes a constraint of the modified PCG (§5.3): sliding contacts constrain
//! the normal direction only (`S = I − nnᵀ`, `z = n nᵀ(v_b − v₀)`), stuck contacts all three
//! (`S = 0`, `z = v_b − v₀`). Position alteration (§6.2, eq. 17) `y = (τ − d₀) n` puts the
//! particle at distance τ from the surface at the end of the step. After the solve, the
//! constraint force `f_c = (AΔv − b)/h` (§5.4) decides what happens next step: a contact
//! whose normal force `N = f_c·n` is attractive is released (Baraff §5.4); a stuck contact
//! whose tangential force exceeds `μN` starts sliding (a new contact starts stuck if the
//! impact's normal velocity change plus gravity over the step, times μ, exceeds its
//! tangential slip); a sliding contact feels the
//! Coulomb force `f = −μN v̂_t` (`P_t = I − nnᵀ`, `v_t = P_t(v − v_b)`, linearised in `v`),
//! and sticks again when its relative tangential speed falls below 1 cm/s.
use super::body::BodyState;
use super::bvh::Aabb;
use super::geometry::{closest_point_barycentric, point_triangle_ccd_from};
use super::layers::NearbyCloth;
use super::overlap::Overlaps;
use crate::linalg::pcg::Constraint;
use crate::{Mat3, Vec3};

/// Speed below which friction's viscous form is capped (m/s).
const SLIP_EPS: f64 = 1e-3;

/// Particles per parallel task of contact detection and the penetration check
/// (scheduling only: contacts come out in particle order).
const PARTICLE_CHUNK: usize = 256;

/// Depth (m) down to which a particle found inside a body, right behind a face, is pushed
/// back out (a garment placed intersecting its body).
pub const DEEP_PUSH_OUT: f64 = 0.05;
/// Relative tolerance of "at the body's thickness": a released contact whose particle
/// still lies within `τ (1 + ON_BODY)` of the body rests on it and is detected again
/// (with gravity), even with cloth near it. Without that, a particle of a pile-up lying at
/// `τ` on the floor beside a triangle of another layer at `τ`, released by a pull of its
/// own cloth, fell 20 µm below the triangle's plane in a 1.6e-4 s step, which the crossing
/// check counts as passing through it (`tests/self_collision.rs`, IC(0) with warm starts
/// at tolerance 1e-4: a crossing accepted at the smallest step, frame 18). A particle
/// lifted off the body by more than that (onto cloth lying there) is still left to its
/// own momentum.
const ON_BODY: f64 = 1e-6;
/// Relative tangential speed below which a sliding contact sticks again (m/s).
const STICK_SPEED: f64 = 1e-2;

/// One contact of the current step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Contact {
    /// Cloth particle.
    pub particle: usize,
    /// Body index.
    pub body: usize,
    /// Outward unit normal.
    pub normal: Vec3,
    /// Body velocity at the contact point (m/s).
    pub body_velocity: Vec3,
    /// Position alteration `y` (m).
    pub y: Vec3,
    /// Stuck (all directions constrained) or sliding (normal only).
    pub stuck: bool,
    /// Coulomb coefficient of the body.
    pub friction: f64,
}

/// The remembered state one sliding-friction term of [`BodyContacts::friction_terms`]
/// is built from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrictionSource {
    /// Normal force `N` (N): the previous step's constraint force along the normal.
    pub normal_force: f64,
    /// `μN` (N), the largest friction force.
    pub limit: f64,
    /// The remembered unit direction of the friction force (used below the slip speed
    /// threshold): against the previous step's slip, or along the tangential force that
    /// broke a stuck contact.
    pub direction: Vec3,
}

/// What a particle remembers of its contact from the previous step.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Memory {
    body: usize,
    normal_force: f64,
    stuck: bool,
    released: bool,
    /// Unit direction of the kinetic friction force for the next step.
    friction_dir: Vec3,
}

/// Contacts of the current step and the memory that carries friction state across steps.
#[derive(Debug, Clone, Default)]
pub struct BodyContacts {
    memory: Vec<Option<Memory>>,
    /// Contacts of the current step, in particle order.
    pub contacts: Vec<Contact>,
    /// Particles that started inside a body: they make no contact with it until they
    /// have left it ([`super::overlap`]).
    pub overlaps: Overlaps,
}

/// Outcome of testing one particle.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Hit {
    body: usize,
    normal: Vec3,
    body_velocity: Vec3,
    d0: f64,
    ccd: bool,
    distance: f64,
}

impl BodyContacts {
    /// Detects this step's contacts of particles `x`, `v` (skipping `fixed` ones) against
    /// `bodies` over a step `h` under acceleration `g`.
    ///
    /// A particle released last step (its constraint force turned attractive, Baraff §5.4)
    /// comes back only if its own momentum carries it into the body, unless it still lies
    /// on the surface (within 10% of the thickness of where position alteration put it)
    /// with no cloth near it (`layers`: no self-contact spring in this step's detection):
    /// then gravity counts too, as for any particle. At the edge of a contact region
    /// (cloth draped over a sphere, bending lifting the last row off) the constraint force
    /// flips sign from step to step; without gravity a released particle there would be
    /// free for a step and sink into the body by millimetres, and every attempt to grow
    /// the step would fail Baraff's stretch check. With cloth near it the rule stays off:
    /// pressing an upper layer onto the surface would hold both layers in one plane (the
    /// floor pile-up of tests/self_collision.rs would then pass through itself).
    ///
    /// A new contact (none with that body last step) is made only if the particle's own
    /// acceleration of the last step (`accel`, the cloth's forces included; `None` before
    /// any step) would also carry it into the body, not gravity alone: cloth resting on a
    /// body hangs millimetres above it beside its contacts, held by its neighbours, and
    /// gravity's `h² g` (4.3 mm over 1/48 s) would pull such particles down onto the
    /// surface, stretching their triangles by a few per cent, so that every attempt of a
    /// resting sheet to grow its step would fail Baraff's stretch check. The acceleration
    /// counts only up to `|g|` (an impact beside the particle decelerates it far more, and
    /// its landing would be missed), and not for a particle landing (its velocity carries
    /// it more than half the thickness toward the body in the step: missing the last
    /// millimetres of a fall would stretch the cloth at its impact). With cloth near the
    /// particle gravity alone still decides (an upper layer lying on a lower one is held by
    /// it; left off the body, it would pass through it in the floor pile-up of
    /// tests/self_collision.rs).
    #[allow(clippy::too_many_arguments)]
    pub fn detect(
        &mut self,
        bodies: &[BodyState],
        x: &[Vec3],
        v: &[Vec3],
        fixed: &[bool],
        layers: &NearbyCloth,
        h: f64,
        g: Vec3,
        accel: Option<&[Vec3]>,
    ) {
        let n = x.len();
        self.memory.resize(n, None);
        let memory = &self.memory;
        let overlaps = &self.overlaps;
        let contact_of = |i: usize| -> Option<Contact> {
            if fixed[i] {
                return None;
            }
            let find_hit = |x0, pred, h| find_hit(bodies, x0, pred, h, overlaps.body_of(i));
            let pred = x[i] + h * v[i] + h * h * g;
            let hit = find_hit(x[i], pred, h)?;
            let mem = memory[i].filter(|m| m.body == hit.body);
            let approach = -(v[i] - hit.body_velocity).dot(&hit.normal) * h;
            let landing = approach > 0.5 * bodies[hit.body].thickness;
            if let (None, Some(a), false, false) = (mem, accel, layers.near(i), landing) {
                let a = a[i] * (g.norm() / a[i].norm()).min(1.0);
                find_hit(x[i], x[i] + h * v[i] + h * h * a, h)?;
            }
            if let Some(m) = mem {
                let outside = hit.d0 >= 0.9 * bodies[hit.body].thickness;
                let body = &bodies[hit.body];
                let on_body = hit.d0 <= body.thickness * (1.0 + ON_BODY);
                let resting = on_body || (hit.d0 <= 1.1 * body.thickness && !layers.near(i));
                if m.released && !hit.ccd && outside && !resting {
                    // Released last step (attractive force): only its own momentum
                    // carrying it into the body brings it back.
                    let inertial = x[i] + h * v[i];
                    find_hit(x[i], inertial, h)?;
                }
            }
            let body = &bodies[hit.body];
            let stuck = match mem {
                Some(m) => m.stuck && !m.released,
                None => {
                    // A new contact sticks if the impact's normal impulse (plus gravity
                    // over the step) can stop its tangential slip under Coulomb's law.
                    let rel = v[i] - hit.body_velocity;
                    let vn = rel.dot(&hit.normal);
                    let vt = (rel - vn * hit.normal).norm();
                    vt <= body.friction * (vn.abs() + g.norm() * h)
                }
            };
            Some(Contact {
                particle: i,
                body: hit.body,
                normal: hit.normal,
                body_velocity: hit.body_velocity,
                y: alteration(body.thickness, hit.d0, layers.over_cloth(i, hit.normal))
                    * hit.normal,
                stuck,
                friction: body.friction,
            })
        };
        self.contacts = crate::parallel::concat(0..n, PARTICLE_CHUNK, |particles| {
            particles.filter_map(contact_of).collect()
        });
    }

    /// The contacts whose alteration pulls their particle down by more than `least` (m):
    /// `(particle, where the alteration puts it, outward normal)`, for the check of cloth
    /// lying in the way (`SelfCollision::pulls_onto_cloth`).
    pub fn pulls(&self, x: &[Vec3], least: f64) -> Vec<(usize, Vec3, Vec3)> {
        (self.contacts.iter())
            .filter(|c| c.y.dot(&c.normal) < -least)
            .map(|c| (c.particle, x[c.particle] + c.y, c.normal))
            .collect()
    }

    /// Makes the contacts of the sorted `particles` only push out, as contacts with cloth
    /// between their particle and the surface (the rule of `alteration` with
    /// `over_cloth`): a pull down becomes no alteration.
    pub fn push_only(&mut self, particles: &[usize]) {
        for c in &mut self.contacts {
            if particles.binary_search(&c.particle).is_ok() {
                c.y = c.y.dot(&c.normal).max(0.0) * c.normal;
            }
        }
    }

    /// Appends the contacts' constraints and writes their position alterations into `y`.
    pub fn constrain(&self, v: &[Vec3], constraints: &mut Vec<Constraint>, y: &mut [Vec3]) {
        for c in &self.contacts {
            let i = c.particle;
            let nn = c.normal * c.normal.transpose();
            let (filter, z) = if c.stuck {
                (Mat3::zeros(), c.body_velocity - v[i])
            } else {
                (Mat3::identity() - nn, nn * (c.body_velocity - v[i]))
            };
            constraints.push(Constraint {
                particle: i,
                filter,
                z,
            });
            y[i] = c.y;
        }
    }

    /// Sliding friction of this step: for each sliding contact with a remembered normal
    /// force `N`, `(particle, K, f₀)` with the Coulomb force `f₀ = μN t̂` (`t̂` against the
    /// slip, or along the tangential constraint force that broke a stuck contact) and
    /// `K = −∂f/∂v = (μN/|v_t|)(P_t − v̂_t v̂_tᵀ)` while slipping faster than ε (the exact
    /// derivative of `−μN v_t/|v_t|`, positive semi-definite), else 0.
    pub fn friction_terms(&self, v: &[Vec3]) -> Vec<(usize, Mat3, Vec3)> {
        self.sliding()
            .map(|(c, m)| {
                let limit = c.friction * m.normal_force;
                let pt = Mat3::identity() - c.normal * c.normal.transpose();
                let vt = pt * (v[c.particle] - c.body_velocity);
                let speed = vt.norm();
                if speed > SLIP_EPS {
                    let dir = vt / speed;
                    let k = (limit / speed) * (pt - dir * dir.transpose());
                    (c.particle, k, -limit * dir)
                } else {
                    let dir = pt * m.friction_dir;
                    (c.particle, Mat3::zeros(), limit * dir)
                }
            })
            .collect()
    }

    /// What each term of [`BodyContacts::friction_terms`] was built from, in the same
    /// order: keyframe control's adjoint carries the derivatives with respect to these
    /// back to the step that produced them.
    pub fn friction_sources(&self) -> Vec<FrictionSource> {
        self.sliding()
            .map(|(c, m)| FrictionSource {
                normal_force: m.normal_force,
                limit: c.friction * m.normal_force,
                direction: m.friction_dir,
            })
            .collect()
    }

    /// Sliding contacts with friction and a remembered normal force from the same body.
    fn sliding(&self) -> impl Iterator<Item = (&Contact, &Memory)> {
        self.contacts
            .iter()
            .filter(|c| !c.stuck && c.friction > 0.0)
            .filter_map(|c| {
                let m = self.memory.get(c.particle)?.as_ref()?;
                (m.body == c.body && !m.released && m.normal_force > 0.0).then_some((c, m))
            })
    }

    /// Updates the memory after an accepted step from the constraint forces `impulses`
    /// (`AΔv − b` per contact, in contact order, N·s) and the new velocities `v`.
    pub fn remember(&mut self, impulses: &[Vec3], v: &[Vec3], h: f64) {
        for m in self.memory.iter_mut() {
            *m = None;
        }
        for (c, e) in self.contacts.iter().zip(impulses) {
            let f = e / h;
            let normal_force = f.dot(&c.normal);
            let released = normal_force < 0.0;
            let tangential = f - normal_force * c.normal;
            let pt = Mat3::identity() - c.normal * c.normal.transpose();
            let slip = pt * (v[c.particle] - c.body_velocity);
            let (stuck, friction_dir) = if released {
                (false, Vec3::zeros())
            } else if c.stuck {
                // Stuck while the tangential constraint force stays inside the cone.
                let t = tangential.norm();
                (
                    t <= c.friction * normal_force,
                    tangential / t.max(f64::MIN_POSITIVE),
                )
            } else {
                // Baraff §5.4: lock the particle when its relative tangential velocity is low.
                let speed = slip.norm();
                (speed < STICK_SPEED, -slip / speed.max(f64::MIN_POSITIVE))
            };
            self.memory[c.particle] = Some(Memory {
                body: c.body,
                normal_force,
                stuck,
                released,
                friction_dir,
            });
        }
    }

    /// Whether `p` lies within `reach` times a body's thickness of that body's surface (or
    /// inside it).
    pub fn near(bodies: &[BodyState], p: Vec3, reach: f64) -> bool {
        bodies.iter().any(|body| {
            let r = reach * body.thickness;
            let mut hit = false;
            body.candidates(&Aabb { min: p, max: p }.inflate(r), |t| {
                let (_, c1) = body.corners(t);
                hit = hit
                    || surface_distance(p, c1, f64::INFINITY).is_some_and(|(dist, _)| dist <= r);
            });
            hit
        })
    }
}

/// Unsigned distance to the triangle and signed distance along its normal (positive
/// outside); `None` for a degenerate triangle, and for one whose plane alone lies at least
/// `nearer_than` from `p` (its distance is no smaller: the nearest point is not computed).
fn surface_distance(p: Vec3, c: [Vec3; 3], nearer_than: f64) -> Option<(f64, f64)> {
    let n = (c[1] - c[0]).cross(&(c[2] - c[0]));
    let len = n.norm();
    if len < 1e-300 {
        return None;
    }
    let n = n / len;
    if (p - c[0]).dot(&n).abs() >= nearer_than {
        return None;
    }
    let w = closest_point_barycentric(p, c[0], c[1], c[2]);
    let q = c[0] * w[0] + c[1] * w[1] + c[2] * w[2];
    Some(((p - q).norm(), (p - q).dot(&n)))
}

/// Length of the position alteration along the normal (§6.2, eq. 17): `τ − d₀`, to end
/// the step at the thickness `τ` from the surface; but a particle with cloth between it and
/// the surface (`over_cloth`, [`NearbyCloth::over_cloth`]) is only pushed out, never pulled
/// down to `τ`: that would put it in the plane of the layer under it, and at the floor
/// pile-up of tests/self_collision.rs every step then crossed that layer down to the
/// smallest step sizes. It rests where it is, on the cloth under it. Cloth beyond the
/// springs' reach that a pull would meet is found afterwards
/// ([`BodyContacts::push_only`]).
fn alteration(tau: f64, d0: f64, over_cloth: bool) -> f64 {
    if over_cloth {
        (tau - d0).max(0.0)
    } else {
        tau - d0
    }
}

/// The contact of a particle moving `x0 → pred` over a step of `h`, if any: the earliest
/// continuous hit, else the nearest triangle within the thickness at the step's end; the
/// body `let_through` (the one the particle started inside, [`Overlaps`]) is not tested.
fn find_hit(
    bodies: &[BodyState],
    x0: Vec3,
    pred: Vec3,
    h: f64,
    let_through: Option<usize>,
) -> Option<Hit> {
    find_hit_with(bodies, x0, pred, h, true, let_through)
}

/// [`find_hit`], with the plane test that skips a still face both ends of the path lie
/// beyond the thickness in front of ([`clear_of_still_face`]) or without it (`skip`
/// false, the reference of the tests: the result is the same).
fn find_hit_with(
    bodies: &[BodyState],
    x0: Vec3,
    pred: Vec3,
    h: f64,
    skip: bool,
    let_through: Option<usize>,
) -> Option<Hit> {
    let mut best: Option<Hit> = None;
    for (bi, body) in bodies.iter().enumerate() {
        if let_through == Some(bi) {
            continue;
        }
        let tau = body.thickness;
        let mut path = Aabb::empty();
        path.include(x0);
        path.include(pred);
        let query = path.inflate(tau);
        // Distance from x0 to the nearest face with x0 on its outer side.
        let mut start_distance = f64::INFINITY;
        body.candidates(&query, |t| {
            let (c0, c1) = body.corners(t);
            if skip && c0 == c1 && clear_of_still_face(x0, pred, c1, tau) {
                return;
            }
            // x0 against the face at the step's start: its nearest point and side.
            let w0 = closest_point_barycentric(x0, c0[0], c0[1], c0[2]);
            let from = x0 - (c0[0] * w0[0] + c0[1] * w0[1] + c0[2] * w0[2]);
            let outside = from.dot(&(c0[1] - c0[0]).cross(&(c0[2] - c0[0]))) >= 0.0;
            let gap = from.norm();
            if outside {
                start_distance = start_distance.min(gap);
            }
            let n1 = (c1[1] - c1[0]).cross(&(c1[2] - c1[0]));
            let len = n1.norm();
            if len < 1e-300 {
                return;
            }
            let face_n = n1 / len;
            let w = closest_point_barycentric(pred, c1[0], c1[1], c1[2]);
            let q1 = c1[0] * w[0] + c1[1] * w[1] + c1[2] * w[2];
            let dist = (pred - q1).norm();
            let signed = (pred - q1).dot(&face_n);
            // Near: within the thickness at the end of the step; or already inside, right
            // behind this face (its own projection) by up to DEEP_PUSH_OUT, to be pushed out.
            let behind = signed < 0.0 && -signed >= 0.999 * dist && dist < DEEP_PUSH_OUT;
            let near = (dist < tau && signed > -tau.max((pred - x0).norm())) || behind;
            let ccd = !near;
            if ccd {
                // Continuous test: the particle's path crosses the moving face (from
                // outside: a start behind this face is not a crossing). The contact point
                // stays the nearest point to the predicted end (`w`).
                if !outside {
                    return;
                }
                let path = [x0, pred];
                let [a, b, c] = [0, 1, 2].map(|k| [c0[k], c1[k]]);
                // `gap` is the distance check's own start (the same nearest point of x0).
                if point_triangle_ccd_from(gap, [path, a, b, c], 1e-6).is_none() {
                    return;
                }
            }
            let q0 = c0[0] * w[0] + c0[1] * w[1] + c0[2] * w[2];
            // Outward normal: the face normal, or toward the particle off a convex edge.
            let normal = if !ccd && signed > 0.0 && dist > 1e-12 {
                (pred - q1) / dist
            } else {
                face_n
            };
            let candidate = Hit {
                body: bi,
                normal,
                body_velocity: (q1 - q0) / h,
                d0: (x0 - q0).dot(&normal),
                ccd,
                distance: if ccd { -1.0 } else { dist },
            };
            let better = match &best {
                None => true,
                Some(b) => candidate.distance < b.distance,
            };
            if better {
                best = Some(candidate);
            }
        });
        // d₀ is measured along the contact's normal, from the plane of the face nearest the
        // predicted end. Off that face's edge, over a convex neighbour, the plane passes
        // closer to x0 than the body does (by s·sin θ, s beyond the edge, θ the bend), and
        // the alteration would push a particle resting at τ out by millimetres. The body's
        // own distance at x0 bounds d₀ from below, up to τ (beyond it the contact is a
        // landing, and the faces near x0 may not all be candidates).
        if let Some(b) = best
            .as_mut()
            .filter(|b| b.body == bi && !b.ccd && b.d0 >= 0.0)
        {
            b.d0 = b.d0.max(start_distance.min(tau));
        }
    }
    best
}

/// Whether both ends of the path `x0 → pred` lie farther than `tau` in front of the plane
/// of the face `c` that does not move over the step (none of its tests in [`find_hit`]
/// can then pass, so such a face is skipped before its two nearest points are computed;
/// on cloth falling onto a still body this skips about a third of the candidate faces):
/// either end is more than `tau` from the face (not near, not behind it, no start
/// distance under `tau`), and the straight path stays on the face's outer side of its
/// still plane (no continuous hit). A degenerate face is not skipped.
fn clear_of_still_face(x0: Vec3, pred: Vec3, c: [Vec3; 3], tau: f64) -> bool {
    let n = (c[1] - c[0]).cross(&(c[2] - c[0]));
    let len = n.norm();
    len > 1e-300 && (x0 - c[0]).dot(&n) > tau * len && (pred - c[0]).dot(&n) > tau * len
}

mod penetration;
// What a checkpoint keeps of the contacts (docs/reference.md, "Checkpoints"): the
// friction memory and the contacts of the last step carry into the next one.
crate::persist_fields!(Contact {
    particle,
    body,
    normal,
    body_velocity,
    y,
    stuck,
    friction
});
crate::persist_fields!(Memory {
    body,
    normal_force,
    stuck,
    released,
    friction_dir
});
crate::persist_fields!(BodyContacts {
    memory,
    contacts,
    overlaps
});

#[cfg(test)]
mod tests;

pub use penetration::Penetration;
