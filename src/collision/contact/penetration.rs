//! The penetration check of a proposed step (Baraff §7 extended to contact trouble): the
//! particle deepest inside a body, behind the face nearest it.
use super::{surface_distance, BodyContacts, PARTICLE_CHUNK};
use crate::collision::bvh::Aabb;
use crate::collision::overlap::Overlaps;
use crate::collision::BodyState;
use crate::Vec3;

/// A particle found inside a body ([`BodyContacts::deepest`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Penetration {
    /// Cloth particle.
    pub particle: usize,
    /// Body index.
    pub body: usize,
    /// Depth below the surface, in the body's thicknesses.
    pub depth: f64,
}

impl BodyContacts {
    /// Deepest penetration below the surface among `x` at the end of the step, as a
    /// fraction of each body's thickness (0 if none): the step check of Baraff §7 extended
    /// to contact trouble. A particle inside the body it started in (`overlaps`) does not
    /// count against that body; only the particles `counted` holds for are looked at.
    pub fn max_penetration(
        bodies: &[BodyState],
        x: &[Vec3],
        overlaps: &Overlaps,
        counted: impl Fn(usize) -> bool + Sync,
    ) -> f64 {
        Self::deepest(bodies, x, overlaps, counted).map_or(0.0, |d| d.depth)
    }

    /// Where [`BodyContacts::max_penetration`] is found: the deepest particle, its body and
    /// its depth (in thicknesses); `None` if no particle is inside.
    pub fn deepest(
        bodies: &[BodyState],
        x: &[Vec3],
        overlaps: &Overlaps,
        counted: impl Fn(usize) -> bool + Sync,
    ) -> Option<Penetration> {
        let deepest = |i: usize, p: Vec3| {
            let mut worst: Option<Penetration> = None;
            if !counted(i) {
                return worst;
            }
            for (bi, body) in bodies.iter().enumerate() {
                if overlaps.body_of(i) == Some(bi) {
                    continue;
                }
                let q = Aabb { min: p, max: p }.inflate(body.thickness);
                let mut best: Option<(f64, f64)> = None;
                body.candidates(&q, |t| {
                    let (_, c1) = body.corners(t);
                    let nearest = best.map_or(f64::INFINITY, |b| b.0);
                    if let Some((dist, signed)) = surface_distance(p, c1, nearest) {
                        if dist < nearest {
                            best = Some((dist, signed));
                        }
                    }
                });
                // Inside only if behind the face: the closest point is the point's own
                // projection (a point beside a rim is not inside).
                if let Some((dist, signed)) = best {
                    let depth = -signed / body.thickness;
                    if signed < 0.0
                        && -signed >= 0.999 * dist
                        && worst.is_none_or(|w| depth > w.depth)
                    {
                        worst = Some(Penetration {
                            particle: i,
                            body: bi,
                            depth,
                        });
                    }
                }
            }
            worst
        };
        let deeper = |a: Option<Penetration>, b: Option<Penetration>| match (a, b) {
            (Some(a), Some(b)) => Some(if b.depth > a.depth { b } else { a }),
            (a, b) => a.or(b),
        };
        let mut partials = Vec::new();
        crate::parallel::chunks(x, PARTICLE_CHUNK, &mut partials, |k, part| {
            let first = k * PARTICLE_CHUNK;
            (part.iter().enumerate()).fold(None, |m, (j, &p)| deeper(m, deepest(first + j, p)))
        });
        partials.into_iter().fold(None, deeper)
    }
}
