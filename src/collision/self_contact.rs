//! Cloth self-collision (Baraff §6): stiff damped repulsion springs between cloth
//! features closer than a distance `d`, in the implicit system with their Jacobians, and a
//! continuous check that rejects a step in which a particle passes through a triangle or
//! an edge through an edge (the pair tests are in `collision::pairs`).
//!
//! ```text
//! point–triangle  p, (a, b, c):  q = w_a a + w_b b + w_c c  closest point at the step start
//! edge–edge       (a, b), (c, e): closest points a + s(b − a), c + u(e − c)
//! C(x) = n · Σ_k γ_k x_k − (d − slack),   γ = (1, −w_a, −w_b, −w_c)  or  (1 − s, s, −(1 − u), −u)
//! slack = max(0, d − dist₀ − PUSH_PER_STEP · d)     a step pushes by at most a quarter of d
//! ```
//! `n` (the unit separation direction) and the weights `γ` are frozen at detection, so `C`
//! is linear in `x`: `∂C/∂x_k = γ_k n`, `∂²C = 0`, and the spring `E = ½ k C²` has the exact,
//! symmetric, negative semi-definite Jacobian `−k (∂C/∂x)(∂C/∂x)ᵀ` — a linear spring, as
//! Baraff's cloth/cloth contacts. Damping `−k_d (∂C/∂x) Ċ` damps approach only along `n`.
//!
//! Each search skips the pairs within a patch of cloth that cannot touch itself during
//! the step (`collision::patches`); its hierarchies over the triangles and edges follow
//! those patches, so that such a patch's subtree is skipped whole.
use super::bvh::{Aabb, Bvh, NO_LABEL};
use super::layers;
use super::pairs::{adjacent, edge_edge_pair, point_triangle_pair, Crossing};
use super::patches::Patches;
use crate::forces::condition::{condition_forces, condition_system, ConditionEval};
use crate::forces::{ElementForces, JacobianMode, SystemShare};
use crate::format::binary::{Damaged, Reader, Writer};
use crate::model::ClothModel;
use crate::parallel;
use crate::Vec3;
use rayon::prelude::*;
use std::collections::HashMap;

/// Share of the repulsion distance within which four particles count as lying in one
/// plane for the crossing tests (see `pairs::point_triangle_pair`): a pair this flat
/// at both ends of a step slides within its plane and does not cross.
pub const FLAT: f64 = 1e-3;

/// One repulsion spring between four particles.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Repulsion {
    /// Particles: `[p, a, b, c]` (point–triangle) or `[a, b, c, e]` (edge–edge).
    pub nodes: [usize; 4],
    /// Weights `γ_k` of the condition.
    pub gamma: [f64; 4],
    /// Frozen unit separation direction `n`.
    pub normal: Vec3,
    /// Point–triangle (`true`) or edge–edge pair.
    pub point_triangle: bool,
    /// How much of the distance `d` the spring gives up for this step: it pushes towards
    /// `d − slack` ([`step_slack`]; 0 for a pair found at least `(1 − PUSH_PER_STEP) d`
    /// apart).
    pub slack: f64,
}

/// Share of the repulsion distance `d` by which one step's spring pushes a pair apart
/// at most. (Bridson, Fedkiw and Anderson 2002 bound their repulsion impulses in the same
/// spirit: a pair's separating speed after one is at most a tenth of its overlap per
/// step.)
///
/// The springs are as stiff as stretch, so a step of any size resolves the spring's whole
/// compression: a pair that an earlier step left `δ` inside `d` is pushed apart by `δ`
/// in the next. That pushes one triangle against its neighbours, its stretch jumps past
/// Baraff's §7 limit, and halving the step does not help: the jump shrinks only slowly
/// with the step (the whole deficit is resolved at every size), so the step control
/// drives the step down by several halvings. A spring that pushes to at most
/// `dist₀ + PUSH_PER_STEP · d` in the step takes that deficit back over a few steps
/// instead, and the step stays large. The result is not sensitive to the share: values
/// between 0.15 and 0.4 behave alike.
pub const PUSH_PER_STEP: f64 = 0.25;

/// The [`Repulsion::slack`] of a spring between features `dist` apart at the step's
/// start: `max(0, d − dist − PUSH_PER_STEP · d)`, so that the spring pushes them to at
/// most `dist + PUSH_PER_STEP · d` (`d` where they are at least `(1 − PUSH_PER_STEP) d`
/// apart).
pub fn step_slack(dist: f64, d: f64) -> f64 {
    (d - dist - PUSH_PER_STEP * d).max(0.0)
}

/// The condition `C = Σ γ_k n·x_k − (d − slack)` of a repulsion spring with distance `d`
/// ([`Repulsion::slack`]) and its gradient `∂C/∂x_k = γ_k n`, or `None` where it does not
/// push (`C ≥ 0`).
fn repulsion_condition(r: &Repulsion, x: &[Vec3; 4], d: f64) -> Option<ConditionEval<4, 1>> {
    let mut eval = ConditionEval::<4, 1>::zero();
    eval.c[0] = (0..4)
        .map(|i| r.gamma[i] * r.normal.dot(&x[i]))
        .sum::<f64>()
        - (d - r.slack);
    if eval.c[0] >= 0.0 {
        return None;
    }
    for i in 0..4 {
        eval.dc[0][i] = r.gamma[i] * r.normal;
    }
    Some(eval)
}

/// Force and Jacobians of a repulsion spring with rest distance `d`, stiffness `k` (N/m) and
/// damping `kd` (N·s/m). The spring only pushes: zero when `C ≥ 0` at `x`.
pub fn repulsion_forces(
    r: &Repulsion,
    x: &[Vec3; 4],
    v: &[Vec3; 4],
    d: f64,
    k: f64,
    kd: f64,
    mode: JacobianMode,
) -> ElementForces<4> {
    match repulsion_condition(r, x, d) {
        Some(eval) => condition_forces(&eval, v, [k], kd, [false], mode),
        None => ElementForces::zero(),
    }
}

/// A repulsion spring's share of the implicit system ([`SystemShare`], Baraff eq. 18),
/// the same sums as [`repulsion_forces`] without forming its Jacobians; `k` is the
/// stiffness and damping `(k, k_d)`. Nothing where the spring does not push.
pub fn add_repulsion_system(
    r: &Repulsion,
    x: &[Vec3; 4],
    v: &[Vec3; 4],
    d: f64,
    k: (f64, f64),
    mode: JacobianMode,
    out: &mut SystemShare<4>,
) {
    if let Some(eval) = repulsion_condition(r, x, d) {
        condition_system(&eval, v, k, [false], mode, out);
    }
}

/// Leaf size of the edge hierarchy. Every edge's box overlaps those of the ~10 edges
/// sharing a particle with it, so a self-traversal finds about nine adjacent pairs
/// (skipped) for each pair it tests; large leaves visit fewer node pairs for them, and a
/// pair of leaves tests only its items that overlap the other leaf's box
/// (`Bvh::overlapping_pairs`), which keeps large leaves cheap. Scheduling only: the result
/// does not depend on it (edge springs and crossings are sorted), so the caches are the
/// same for any leaf size.
const EDGE_LEAF_SIZE: usize = 16;

/// Triangles per leaf of the triangle hierarchy.
const TRIANGLE_LEAF_SIZE: usize = 4;

/// Particles per parallel task of the point–triangle search (scheduling only: the
/// springs and crossings come out in particle order).
const POINT_CHUNK: usize = 128;

/// Self-collision detection over one garment.
#[derive(Debug, Clone)]
pub struct SelfCollision {
    triangles: Vec<[usize; 3]>,
    edges: Vec<[usize; 2]>,
    /// Repulsion distance `d` (m).
    pub distance: f64,
    tri_bvh: Bvh,
    edge_bvh: Bvh,
    /// The patches of cloth that cannot touch themselves in the step searched; both
    /// hierarchies follow them.
    patches: Patches,
    /// Per node of `edge_bvh`, the culled patch holding all its edges, or [`NO_LABEL`].
    edge_labels: Vec<u32>,
    /// Per node of `tri_bvh`, the culled patch holding all its triangles, or [`NO_LABEL`].
    tri_labels: Vec<u32>,
    /// Point–triangle springs at the start of the last accepted step, to recognise pairs
    /// that crossed.
    previous: Vec<Repulsion>,
    /// Point–triangle springs of the current attempt, kept by [`SelfCollision::accept`].
    pending: Vec<Repulsion>,
    /// The positions and result of the last [`SelfCollision::detect`] since the last
    /// accepted step: a rejected step is retried from the same positions, whose detection
    /// is then reused instead of repeated.
    last: Option<Detection>,
    /// The springs of the pairs closer than the distance at the end `x1` of the last
    /// crossing check that found no crossing (`(x1, springs)`): the step is accepted and
    /// the next detection at `x1` reuses them (see [`SelfCollision::crosses`]).
    at_end: Option<(Vec<Vec3>, Vec<Repulsion>)>,
}

/// Positions, springs and alterations of one detection.
#[derive(Debug, Clone)]
struct Detection {
    x: Vec<Vec3>,
    springs: Vec<Repulsion>,
    alterations: Vec<(usize, Vec3)>,
}

impl SelfCollision {
    /// Prepares self-collision of `model` with repulsion distance `distance`.
    pub fn new(model: &ClothModel, distance: f64) -> Self {
        let mut by_edge: HashMap<[usize; 2], [u32; 2]> = HashMap::new();
        for (k, t) in model.triangles.iter().enumerate() {
            for j in 0..3 {
                let (a, b) = (t[j], t[(j + 1) % 3]);
                let tris = by_edge.entry([a.min(b), a.max(b)]).or_insert([NO_LABEL; 2]);
                tris[usize::from(tris[0] != NO_LABEL)] = k as u32;
            }
        }
        let mut edges: Vec<([usize; 2], [u32; 2])> = by_edge.into_iter().collect();
        edges.sort_unstable();
        let (edges, edge_triangles): (Vec<[usize; 2]>, Vec<[u32; 2]>) = edges.into_iter().unzip();
        let x = &model.positions;
        let tri_boxes = boxes(&model.triangles, x, x, distance);
        let edge_boxes = boxes(&edges, x, x, 0.5 * distance);
        // Both hierarchies follow the patches that the search culls.
        let mut patches = Patches::new(&model.triangles, edge_triangles, x.len());
        // Edges sharing a particle are never paired: within a leaf, most are such pairs.
        let mut edge_bvh = patches.edge_bvh(&edge_boxes, EDGE_LEAF_SIZE);
        edge_bvh.exclude_within_leaves(|i, j| adjacent(edges[i], edges[j]));
        let tri_bvh = patches.triangle_bvh(&tri_boxes, TRIANGLE_LEAF_SIZE);
        patches.drop_small_patches();
        SelfCollision {
            patches,
            triangles: model.triangles.clone(),
            tri_bvh,
            edge_bvh,
            edges,
            edge_labels: Vec::new(),
            tri_labels: Vec::new(),
            distance,
            previous: Vec::new(),
            pending: Vec::new(),
            last: None,
            at_end: None,
        }
    }

    /// Keeps the current attempt's springs as the reference for the next step (call when
    /// the step is accepted; a rejected attempt keeps the older reference).
    pub fn accept(&mut self) {
        self.previous = std::mem::take(&mut self.pending);
        self.last = None;
    }

    /// Forgets the sides the pairs were on (after cloth was brought back through cloth,
    /// [`super::untangle`]): the next detection starts from the cloth as it is.
    pub fn forget_sides(&mut self) {
        self.previous.clear();
        self.pending.clear();
        self.last = None;
    }

    /// Repulsion springs for every point–triangle and edge–edge pair closer than the
    /// distance at positions `x`, in a deterministic order, and position alterations
    /// (Baraff §6.2) for pairs already crossing: a point–triangle pair of the previous
    /// detection whose point is now behind the triangle along the remembered direction
    /// `n` keeps its spring with that `n`, and the point is moved back to distance `d` on
    /// its side (`y_p = (d − C₀) n`, the largest one per point).
    ///
    /// Detecting again at the same `x` without an accepted step in between (a rejected
    /// step retried smaller) returns the previous result without searching.
    pub fn detect(&mut self, x: &[Vec3]) -> (Vec<Repulsion>, Vec<(usize, Vec3)>) {
        if let Some(last) = self.last.as_ref().filter(|l| l.x == x) {
            return (last.springs.clone(), last.alterations.clone());
        }
        let mut springs = self.detect_near(x);
        let d = self.distance;
        let mut alterations: Vec<(usize, Vec3)> = Vec::new();
        for r in &self.previous {
            let s: f64 = (0..4)
                .map(|k| r.gamma[k] * r.normal.dot(&x[r.nodes[k]]))
                .sum();
            if s >= 0.0 {
                continue;
            }
            springs.retain(|q| !(q.point_triangle && q.nodes == r.nodes));
            // The alteration puts the point back at `d`, and the spring holds it there.
            springs.push(Repulsion { slack: 0.0, ..*r });
            let y = (d - s) * r.normal;
            let p = r.nodes[0];
            match alterations.iter_mut().find(|(q, _)| *q == p) {
                Some((_, old)) if old.norm() >= y.norm() => {}
                Some((_, old)) => *old = y,
                None => alterations.push((p, y)),
            }
        }
        self.pending = springs
            .iter()
            .filter(|r| r.point_triangle)
            .copied()
            .collect();
        self.last = Some(Detection {
            x: x.to_vec(),
            springs: springs.clone(),
            alterations: alterations.clone(),
        });
        (springs, alterations)
    }

    /// Springs of the pairs closer than the distance at `x`: point–triangle pairs by
    /// particle, then edge–edge pairs sorted by particles. Reuses the springs the last
    /// crossing check found at its end positions if `x` is that end.
    fn detect_near(&mut self, x: &[Vec3]) -> Vec<Repulsion> {
        if let Some((_, springs)) = self.at_end.take().filter(|(end, _)| end == x) {
            return springs;
        }
        self.search(x, x).unwrap_or_default()
    }

    /// The particles of every pair that passes through the other on the straight paths
    /// `x0 → x1` (sorted, empty if none): a particle through a triangle not containing it,
    /// or an edge through an edge sharing no particle with it (a self-intersection the
    /// repulsion did not prevent); each pair gives all four of its particles. Contacts
    /// already there at `x0` (time 0) are not new crossings.
    ///
    /// The same search finds the springs at `x1` (boxes swept from `x0` to `x1` and grown
    /// by the distance contain every pair close at `x1`): a step without crossing is
    /// usually accepted, and the next step's detection at `x1` then takes them instead of
    /// searching again.
    pub fn crossings(&mut self, x0: &[Vec3], x1: &[Vec3]) -> Vec<usize> {
        self.at_end = None;
        match self.search(x0, x1) {
            Ok(springs) => {
                self.at_end = Some((x1.to_vec(), springs));
                Vec::new()
            }
            Err(particles) => particles,
        }
    }

    /// The particles among `pulls` (particle, where its body contact's alteration would
    /// put it, outward surface normal) whose pull down passes cloth lying between them and
    /// the surface at positions `x` ([`layers::pull_meets_cloth`]), sorted.
    pub fn pulls_onto_cloth(&mut self, x: &[Vec3], pulls: &[(usize, Vec3, Vec3)]) -> Vec<usize> {
        if pulls.is_empty() {
            return Vec::new();
        }
        let d = self.distance;
        let tris = &self.triangles;
        self.tri_bvh.refit_with(|t| element_box(&tris[t], x, x, d));
        let bvh = &self.tri_bvh;
        let meets = |&(i, to, n): &(usize, Vec3, Vec3)| {
            let mut q = Aabb::empty();
            q.include(x[i]);
            q.include(to);
            let mut met = false;
            bvh.query(&q, |t| {
                met = met || layers::pull_meets_cloth(x, tris[t], i, to, n, d);
            });
            met
        };
        let mut blocked = parallel::concat(pulls, POINT_CHUNK, |part| {
            part.iter().filter(|p| meets(p)).map(|p| p.0).collect()
        });
        blocked.sort_unstable();
        blocked
    }

    /// Whether the cloth passes through itself on the paths `x0 → x1`
    /// ([`SelfCollision::crossings`] not empty).
    pub fn crosses(&mut self, x0: &[Vec3], x1: &[Vec3]) -> bool {
        !self.crossings(x0, x1).is_empty()
    }

    /// The springs of the pairs closer than the distance at `x1`, or the particles of the
    /// pairs that cross on the paths `x0 → x1` (see [`SelfCollision::crossings`]; with
    /// `x0 = x1` a pure proximity search).
    fn search(&mut self, x0: &[Vec3], x1: &[Vec3]) -> Result<Vec<Repulsion>, Vec<usize>> {
        let d = self.distance;
        let moving = x0 != x1;
        let tris = &self.triangles;
        self.tri_bvh
            .refit_with(|t| element_box(&tris[t], x0, x1, d));
        self.patches.update(tris, x0, x1);
        let patches = &self.patches;
        patches.label_triangle_nodes(&self.tri_bvh, &mut self.tri_labels);
        let tri_labels = &self.tri_labels;
        // Per chunk of particles, in particle order: the springs of the particles that
        // cross nothing, and the crossing pairs' particles.
        let mut near: Vec<(Vec<Repulsion>, Vec<usize>)> = Vec::new();
        let bvh = &self.tri_bvh;
        parallel::chunks(0..x1.len(), POINT_CHUNK, &mut near, |_, particles| {
            let (mut found, mut crossed) = (Vec::new(), Vec::new());
            for p in particles {
                let mut q = Aabb::empty();
                q.include(x0[p]);
                q.include(x1[p]);
                let (kept, mut crossing) = (found.len(), false);
                // The triangles of the particle's own culled patches cannot meet it.
                let own = patches.of_particle(p);
                bvh.query_pruned(
                    &q,
                    |n| own.hold(tri_labels[n]),
                    |t| {
                        let tri = tris[t];
                        if tri.contains(&p) || own.hold(patches.of_triangle(t)) {
                            return;
                        }
                        match point_triangle_pair((x0, x1), p, tri, d, (moving, FLAT * d)) {
                            Err(Crossing) => {
                                crossed.extend([p, tri[0], tri[1], tri[2]]);
                                crossing = true;
                            }
                            Ok(spring) if !crossing => found.extend(spring),
                            Ok(_) => {}
                        }
                    },
                );
                if crossing {
                    found.truncate(kept);
                }
            }
            (found, crossed)
        });
        let mut crossed: Vec<usize> = Vec::new();
        let mut springs: Vec<Repulsion> = Vec::new();
        for (found, particles) in near {
            crossed.extend(particles);
            if crossed.is_empty() {
                springs.extend(found);
            }
        }
        // Edge pairs: boxes grown by d/2 each overlap (see `Bvh::overlapping_pairs`).
        let edges = &self.edges;
        self.edge_bvh
            .refit_with(|e| element_box(&edges[e], x0, x1, 0.5 * d));
        // Edges on one culled patch cannot meet: subtrees within one are skipped.
        patches.label_edge_nodes(&self.edge_bvh, &mut self.edge_labels);
        let labels = &self.edge_labels;
        let same_patch = |a: usize, b: usize| labels[a] != NO_LABEL && labels[a] == labels[b];
        let pairs = self.edge_bvh.overlapping_pairs_pruned(same_patch, |i, j| {
            let (first, second) = (edges[i], edges[j]);
            if adjacent(first, second) || patches.share_edges(i, j) {
                return None;
            }
            match edge_edge_pair((x0, x1), first, second, d, (moving, FLAT * d)) {
                Err(Crossing) => Some(Err([first[0], first[1], second[0], second[1]])),
                Ok(spring) => spring.map(Ok),
            }
        });
        let start = springs.len();
        for pair in pairs {
            match pair {
                Ok(spring) => springs.push(spring),
                Err(particles) => crossed.extend(particles),
            }
        }
        if !crossed.is_empty() {
            crossed.sort_unstable();
            crossed.dedup();
            return Err(crossed);
        }
        // The traversal's order depends on the boxes: sorted, the springs (and so the
        // system) are the same whether the search came from a crossing check or not.
        springs[start..].sort_unstable_by_key(|r| r.nodes);
        Ok(springs)
    }
}

/// Boxes of elements over positions `x0` and `x1`, inflated by `r`.
fn boxes<const N: usize>(elements: &[[usize; N]], x0: &[Vec3], x1: &[Vec3], r: f64) -> Vec<Aabb> {
    elements
        .par_iter()
        .map(|e| element_box(e, x0, x1, r))
        .collect()
}

/// The box of one element over positions `x0` and `x1`, inflated by `r`.
fn element_box<const N: usize>(element: &[usize; N], x0: &[Vec3], x1: &[Vec3], r: f64) -> Aabb {
    let mut b = Aabb::empty();
    for &i in element {
        b.include(x0[i]);
        b.include(x1[i]);
    }
    b.inflate(r)
}

crate::persist_fields!(Repulsion {
    nodes,
    gamma,
    normal,
    point_triangle,
    slack
});
crate::persist_fields!(Detection {
    x,
    springs,
    alterations
});

impl SelfCollision {
    /// Writes what carries from one step to the next (the springs that tell which side
    /// each pair was on, and the detections kept for reuse) to a checkpoint; the
    /// hierarchies and patches are rebuilt from the model and refitted at every search.
    pub fn save_state(&self, w: &mut Writer) {
        w.put(&self.previous);
        w.put(&self.pending);
        w.put(&self.last);
        w.put(&self.at_end);
    }

    /// Reads back what [`SelfCollision::save_state`] wrote.
    pub fn load_state(&mut self, r: &mut Reader) -> Result<(), Damaged> {
        self.previous = r.get()?;
        self.pending = r.get()?;
        self.last = r.get()?;
        self.at_end = r.get()?;
        Ok(())
    }
}

#[cfg(test)]
impl SelfCollision {
    /// A copy that has to search (tests of the cache).
    fn clone_without_cache(&self) -> SelfCollision {
        SelfCollision {
            last: None,
            at_end: None,
            ..self.clone()
        }
    }
}

/// `max ‖J_ab − J_baᵀ‖` over the blocks (tests).
#[cfg(test)]
fn asymmetry(j: &[[crate::Mat3; 4]; 4]) -> f64 {
    (0..16)
        .map(|k| (j[k / 4][k % 4] - j[k % 4][k / 4].transpose()).amax())
        .fold(0.0, f64::max)
}

#[cfg(test)]
mod tests;
