//! Cloth that starts inside a body: a hand through a skirt, a collar inside the neck, a
//! sleeve through the torso — what a garment put on a character in its bind pose does.
//!
//! Contact constraints (Baraff §5, §6.2) assume the cloth starts outside: a particle
//! behind a face is pushed out through that face, whichever side of a limb it is, and a
//! step that ends deeper inside is rejected, so cloth the body keeps sweeping into itself
//! is rejected step after step. As in Baraff, Witkin & Kass, "Untangling Cloth"
//! (SIGGRAPH 2003), where cloth–solid intersections are let be and resolved over time
//! rather than by one correction, the cloth that starts inside a body is not held there by
//! that body:
//!
//! ```text
//! first frame   S_b = { i free : x_i inside body b }   (inside: some ray from x_i leaves b
//!               within R, exit faces outnumbering entry faces; [`exit_along`])
//! each step     i ∈ S_b makes no contact with b (other bodies as usual); with G the
//!               connected part of S_b (over the garment's edges) holding i:
//!   n̄_G = Σ area normals of the triangles touching G (unit), if they agree
//!               (|Σ| ≥ ½ Σ|n_t|)
//!   d = ±n̄_G    the whole region leaves by one side of the body: the sign with the
//!               smaller Σ_{j∈G} (distance out of x_j along d, R if none); without n̄_G,
//!               d = u_i, the shortest way out of x_i among the probed directions
//!   e_i = distance along d from x_i to where it leaves the body
//!   y_i = min(e_i + τ, v_ease h) d          position alteration (Baraff §6.2, eq. 17)
//! after a step  i leaves S_b once it lies outside b; from then on b meets it from outside
//!               and it collides as any particle.
//! ```
//! One side for a whole region: a sheet through a limb (a skirt through a hand hanging
//! beside the hips) crosses it along a chord, and pushing each particle to its own nearest
//! face would split the chord to both sides of the limb. The speed `v_ease` bounds how far
//! one step moves a particle; it must exceed the speed at which a limb sweeps through the
//! cloth, or the limb drags the cloth around the region (the particles it meets from
//! outside) before the region is out.
use super::body::BodyState;
use super::bvh::Aabb;
use crate::disjoint_sets::DisjointSets;
use crate::Vec3;

/// Distance (m) within which the surface of a body is searched for a particle that may be
/// inside it; a particle deeper than this inside a body is taken as outside. Covers a
/// torso's half-depth; a garment hanging a few centimetres from a wall is not "inside" it.
pub const REACH: f64 = 0.15;
/// Largest speed (m/s) at which cloth started inside a body is eased out of it: a 5 cm
/// deep limb is left in 10 ms, faster than a walking character's hands (about 1 m/s)
/// sweep more cloth into themselves. On the hands-through-skirt fixture
/// (`fixtures/skirt_hands_through.gltf`), speeds of 0.1–2 m/s let the hands drag the
/// cloth around the region (35–70% stretch at frames 2–4); 5 m/s keeps it under 5%.
pub const EASE_SPEED: f64 = 5.0;

/// A particle that started inside a body and has not left it.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Tangle {
    particle: usize,
    body: usize,
}

/// The particles that started inside a body, and where each is eased out of it.
#[derive(Debug, Clone, Default)]
pub struct Overlaps {
    /// Sorted by particle.
    tangles: Vec<Tangle>,
    /// Per particle: the body it is inside (empty when none is).
    body_of: Vec<Option<usize>>,
    /// What was found at the first frame (for the warning and the report).
    found: Vec<StartInside>,
}

/// One body the garment started inside of: how many particles, how deep, where.
#[derive(Debug, Clone, PartialEq)]
pub struct StartInside {
    /// Body index.
    pub body: usize,
    /// Particles inside it (sorted).
    pub particles: Vec<usize>,
    /// Deepest particle's depth below the surface (m).
    pub depth: f64,
    /// The body vertex nearest the deepest particle.
    pub near_vertex: usize,
}

impl Overlaps {
    /// Finds the free particles of `x` (not `fixed`) inside `bodies` (sampled at the first
    /// frame).
    pub fn find(bodies: &[BodyState], x: &[Vec3], fixed: &[bool]) -> Overlaps {
        let mut inside: Vec<Option<(usize, f64)>> = vec![None; x.len()];
        let found = crate::parallel::concat(0..x.len(), 256, |part| {
            part.filter(|&i| !fixed[i])
                .filter_map(|i| deepest_inside(bodies, x[i]).map(|(b, d)| (i, b, d)))
                .collect()
        });
        for &(i, b, d) in &found {
            inside[i] = Some((b, d));
        }
        if found.is_empty() {
            return Overlaps::default();
        }
        let tangles: Vec<Tangle> = found
            .iter()
            .map(|&(particle, body, _)| Tangle { particle, body })
            .collect();
        let mut report: Vec<StartInside> = Vec::new();
        for (bi, body) in bodies.iter().enumerate() {
            let here: Vec<(usize, f64)> = (found.iter())
                .filter(|f| f.1 == bi)
                .map(|f| (f.0, f.2))
                .collect();
            let Some(&(deepest, depth)) = here.iter().max_by(|a, b| a.1.total_cmp(&b.1)) else {
                continue;
            };
            let near_vertex = (0..body.x0.len())
                .min_by(|&a, &b| {
                    let da = (body.x0[a] - x[deepest]).norm_squared();
                    da.total_cmp(&(body.x0[b] - x[deepest]).norm_squared())
                })
                .unwrap_or(0);
            report.push(StartInside {
                body: bi,
                particles: here.iter().map(|h| h.0).collect(),
                depth,
                near_vertex,
            });
        }
        Overlaps {
            tangles,
            body_of: inside.iter().map(|s| s.map(|(b, _)| b)).collect(),
            found: report,
        }
    }

    /// Lets particle `i` (of `n`) through body `body` from now on, as if it had started
    /// inside it: no contact with that body, eased out of it once inside, released once
    /// outside. False, and nothing changed, if it already is.
    pub fn admit(&mut self, i: usize, body: usize, n: usize) -> bool {
        if self.body_of.len() < n {
            self.body_of.resize(n, None);
        }
        if self.body_of[i] == Some(body) {
            return false;
        }
        let k = self.tangles.partition_point(|t| t.particle < i);
        let tangle = Tangle { particle: i, body };
        match self.tangles.get(k) {
            Some(t) if t.particle == i => self.tangles[k] = tangle,
            _ => self.tangles.insert(k, tangle),
        }
        self.body_of[i] = Some(body);
        true
    }

    /// The body particle `i` is inside of and makes no contact with, if any.
    pub fn body_of(&self, i: usize) -> Option<usize> {
        self.body_of.get(i).copied().flatten()
    }

    /// Whether no particle is inside a body.
    pub fn is_empty(&self) -> bool {
        self.tangles.is_empty()
    }

    /// How many particles are still inside a body.
    pub fn len(&self) -> usize {
        self.tangles.len()
    }

    /// Sorted particles still inside a body.
    pub fn particles(&self) -> Vec<usize> {
        self.tangles.iter().map(|t| t.particle).collect()
    }

    /// What the first frame found, per body.
    pub fn at_start(&self) -> &[StartInside] {
        &self.found
    }

    /// Writes into `y` the alteration `y_i = min(e_i + τ, v_ease h) d` (module doc)
    /// of every particle still inside a body that has no alteration yet (a contact with
    /// another body keeps its own), for a step of `h` from `x` with the bodies sampled for
    /// it (their faces at the step's start).
    pub fn ease(
        &self,
        bodies: &[BodyState],
        x: &[Vec3],
        triangles: &[[usize; 3]],
        h: f64,
        y: &mut [Vec3],
    ) {
        if self.tangles.is_empty() {
            return;
        }
        for region in self.regions(triangles) {
            let body = &bodies[self.tangles[region[0]].body];
            let own: Vec<Option<(Vec3, Exit)>> = (region.iter())
                .map(|&k| shortest_exit(body, x[self.tangles[k].particle], false))
                .collect();
            let members: Vec<usize> = region.iter().map(|&k| self.tangles[k].particle).collect();
            // The side the region leaves by sooner: the smaller sum of the distances out
            // along ±n̄ (a particle with no way out within reach counts the reach).
            let shared = self.region_normal(&members, x, triangles).map(|n| {
                let total = |d: Vec3| -> f64 {
                    (members.iter())
                        .map(|&i| {
                            exit_along(body, x[i], d, REACH, false).map_or(REACH, |e| e.distance)
                        })
                        .sum()
                };
                if total(-n) < total(n) {
                    -n
                } else {
                    n
                }
            });
            for (&i, own) in members.iter().zip(own) {
                if y[i] != Vec3::zeros() {
                    continue;
                }
                let exit = shared
                    .and_then(|d| exit_along(body, x[i], d, REACH, false).map(|e| (d, e)))
                    .or(own);
                if let Some((d, e)) = exit {
                    let s = (e.distance + body.thickness).min(EASE_SPEED * h);
                    y[i] = s * d;
                }
            }
        }
    }

    /// After an accepted step to `x` (the bodies at its end): the particles now outside
    /// their body leave the set and collide with it from then on.
    pub fn release(&mut self, bodies: &[BodyState], x: &[Vec3]) {
        if self.tangles.is_empty() {
            return;
        }
        let body_of = &mut self.body_of;
        self.tangles.retain(|t| {
            let body = &bodies[t.body];
            let still = shortest_exit(body, x[t.particle], true).is_some();
            if !still {
                body_of[t.particle] = None;
            }
            still
        });
    }

    /// The connected parts of the set (indices into `tangles`), over the garment's edges
    /// between particles inside the same body.
    fn regions(&self, triangles: &[[usize; 3]]) -> Vec<Vec<usize>> {
        let slot = |i: usize| self.tangles.binary_search_by_key(&i, |t| t.particle).ok();
        let mut sets = DisjointSets::new(self.tangles.len());
        for t in triangles {
            for e in 0..3 {
                let (Some(a), Some(b)) = (slot(t[e]), slot(t[(e + 1) % 3])) else {
                    continue;
                };
                if self.tangles[a].body == self.tangles[b].body {
                    sets.union(a, b);
                }
            }
        }
        let mut regions: Vec<Vec<usize>> = Vec::new();
        let mut index_of_root = vec![usize::MAX; self.tangles.len()];
        for k in 0..self.tangles.len() {
            let r = sets.find(k);
            if index_of_root[r] == usize::MAX {
                index_of_root[r] = regions.len();
                regions.push(Vec::new());
            }
            regions[index_of_root[r]].push(k);
        }
        regions
    }

    /// The unit mean normal `n̄` of the triangles touching the region `members` (sorted
    /// particles), if their normals agree (module doc).
    fn region_normal(
        &self,
        members: &[usize],
        x: &[Vec3],
        triangles: &[[usize; 3]],
    ) -> Option<Vec3> {
        let touches = |t: &[usize; 3]| t.iter().any(|i| members.binary_search(i).is_ok());
        let (mut sum, mut total) = (Vec3::zeros(), 0.0);
        for t in triangles.iter().filter(|t| touches(t)) {
            let n = (x[t[1]] - x[t[0]]).cross(&(x[t[2]] - x[t[0]]));
            sum += n;
            total += n.norm();
        }
        let len = sum.norm();
        (total > 0.0 && len >= 0.5 * total).then(|| sum / len)
    }
}

/// The body `p` lies inside of, with how far it is from leaving it (m, along the nearest
/// way out of the [`probes`]), the farthest if several.
fn deepest_inside(bodies: &[BodyState], p: Vec3) -> Option<(usize, f64)> {
    (bodies.iter().enumerate())
        .filter_map(|(b, body)| shortest_exit(body, p, false).map(|(_, e)| (b, e.distance)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

/// Unit directions probed for a way out of a body: the axes, tilted off them so that a ray
/// does not run along the edges of a mesh modelled on the axes.
fn probes() -> [Vec3; 6] {
    let tilt = Vec3::new(0.0123, 0.0271, 0.0347);
    [
        Vec3::x(),
        -Vec3::x(),
        Vec3::y(),
        -Vec3::y(),
        Vec3::z(),
        -Vec3::z(),
    ]
    .map(|a| (a + tilt).normalize())
}

/// Whether `p` is inside `body` (its faces at the step's start, or at its end if `end`)
/// within [`REACH`] of a way out, and if so the shortest way out among the [`probes`]:
/// `(direction, distance)`.
fn shortest_exit(body: &BodyState, p: Vec3, end: bool) -> Option<(Vec3, Exit)> {
    (probes().into_iter())
        .filter_map(|d| exit_along(body, p, d, REACH, end).map(|e| (d, e)))
        .min_by(|a, b| a.1.distance.total_cmp(&b.1.distance))
}

/// Distance along the unit `d` from `p` to where the ray `p → p + reach d` leaves `body`,
/// if it does: the first crossing at which the faces crossed from behind (`n · d > 0`)
/// outnumber those crossed from the front. From outside a closed surface, or a union of
/// overlapping closed surfaces (a character's limbs modelled into its torso), a front face
/// comes first on every ray and never fewer of them, so `None`; from inside, a ray that
/// leaves by a face before entering another gives the distance. An open sheet (a floor)
/// counts as the inside of the half-space behind it.
fn exit_along(body: &BodyState, p: Vec3, d: Vec3, reach: f64, end: bool) -> Option<Exit> {
    let mut span = Aabb::empty();
    span.include(p);
    span.include(p + reach * d);
    let mut crossings: Vec<(Exit, i32)> = Vec::new();
    body.candidates(&span, |t| {
        let (c0, c1) = body.corners(t);
        let c = if end { c1 } else { c0 };
        if let Some(s) = ray_triangle(p, d, c) {
            if s <= reach {
                let n = (c[1] - c[0]).cross(&(c[2] - c[0]));
                crossings.push((Exit { distance: s }, if n.dot(&d) > 0.0 { 1 } else { -1 }));
            }
        }
    });
    crossings.sort_by(|a, b| a.0.distance.total_cmp(&b.0.distance));
    let mut winding = 0;
    for (exit, sign) in crossings {
        winding += sign;
        if winding > 0 {
            return Some(exit);
        }
    }
    None
}

/// Where a ray leaves a body.
#[derive(Debug, Clone, Copy)]
struct Exit {
    /// Distance from the ray's start (m).
    distance: f64,
}

/// Distance `s ≥ 0` along the unit `d` at which the ray from `p` meets the triangle `c`
/// (Möller & Trumbore 1997), if it does.
fn ray_triangle(p: Vec3, d: Vec3, c: [Vec3; 3]) -> Option<f64> {
    let (e1, e2) = (c[1] - c[0], c[2] - c[0]);
    let q = d.cross(&e2);
    let det = e1.dot(&q);
    if det.abs() < 1e-300 {
        return None;
    }
    let s = p - c[0];
    let u = s.dot(&q) / det;
    if !(0.0..=1.0).contains(&u) {
        return None;
    }
    let r = s.cross(&e1);
    let v = d.dot(&r) / det;
    if v < 0.0 || u + v > 1.0 {
        return None;
    }
    let t = e2.dot(&r) / det;
    (t >= 0.0).then_some(t)
}

// What a checkpoint keeps: the particles still being eased out of a body.
crate::persist_fields!(Tangle { particle, body });
crate::persist_fields!(StartInside {
    body,
    particles,
    depth,
    near_vertex
});
crate::persist_fields!(Overlaps {
    tangles,
    body_of,
    found
});

#[cfg(test)]
mod tests;
