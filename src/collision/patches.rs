//! Self-collision culling: the patches of cloth that cannot touch themselves during a
//! step, found by normal cones and star-shaped contours (Volino and Magnenat-Thalmann
//! 1994, "Efficient self-collision detection on smoothly discretized surface animations
//! using geometrical shape regularity"; Schvartzman, Pérez and Otaduy 2010,
//! "Star-contours for efficient hierarchical self-collision detection").
//!
//! The patches are a hierarchy of topological discs built once from the triangles
//! (`tree`). A patch `S` cannot touch itself if some direction `V` has
//! ```text
//! n_t · V > 0                for every triangle t of S         (the normal cone)
//! ∂S projected along V       is a simple closed curve           (the contour)
//! ```
//! then the projection along `V` maps `S` one to one onto the plane (it is a local
//! homeomorphism, positively oriented on every triangle, and one to one on the boundary),
//! so `S` is a graph over that plane. The contour is tested for being star-shaped around
//! the mean `c` of its particles: `((a − c) × (b − c)) · V > 0` for each boundary edge
//! `a → b` (oriented as its triangle), winding once around `c`.
//!
//! For a step, the particles move on straight paths `x(τ) = x₀ + τ (x₁ − x₀)`,
//! `τ ∈ [0, 1]`, and both conditions must hold at every `τ`:
//! ```text
//! n_t(τ) = (1 − τ)² e₁⁰ × e₂⁰ + τ(1 − τ) (e₁⁰ × e₂¹ + e₁¹ × e₂⁰) + τ² e₁¹ × e₂¹
//! ```
//! is a combination with non-negative weights of three vectors, so a cone holding those
//! holds every `n_t(τ)`; and each contour edge's `((a − c) × (b − c)) · V` is a quadratic
//! in `τ`, checked positive on all of `[0, 1]` (its winding, an integer that cannot jump
//! while every term stays positive, is counted at `τ = 0`). The cones are held to a
//! half-angle of 60° ([`MIN_COS`]).
//!
//! A particle of `S` then never meets a triangle of `S` not containing it, nor an edge of
//! `S` another edge of `S` sharing no particle with it: the crossing check skips those
//! pairs, and stays exact. It makes no repulsion spring between them either: two features
//! of one such patch closer than the distance `d` lie side by side in the cloth's own
//! surface (the cloth squeezed in its plane, which the stretch and shear forces resist),
//! not facing each other through its thickness. On the side-by-side benchmark's scenes
//! (the sheets of 2,500 and 10,000 particles on the sphere, the skirt) no pair the culling
//! skipped would have given a spring or a crossing.
use super::bvh::{Aabb, Bvh, NO_LABEL};
use crate::Vec3;
use tree::{Kind, Tree};

mod tree;

/// The cosine of the widest half-angle of a culled patch's normal cone (60°).
pub const MIN_COS: f64 = 0.5;

/// Relative margin of the contour's orientation tests (rounding).
const MARGIN: f64 = 1e-9;

/// Base patches per parallel task of their cones (scheduling only).
const CONE_PATCHES: usize = 64;

/// A cone of directions: every direction within the half-angle `α` of the unit `axis`
/// (`cos α`, `sin α` kept, not `α`: merging needs no trigonometric function).
#[derive(Debug, Clone, Copy)]
struct Cone {
    axis: Vec3,
    cos: f64,
    sin: f64,
}

impl Cone {
    /// A cone too wide to cull (also the cone of a degenerate triangle).
    const WIDE: Cone = Cone {
        axis: Vec3::new(0.0, 0.0, 1.0),
        cos: -1.0,
        sin: 0.0,
    };

    fn culls(&self) -> bool {
        self.cos >= MIN_COS
    }

    /// A cone holding the unit vectors `dirs` (or [`Cone::WIDE`]).
    fn around(dirs: &[Vec3]) -> Cone {
        let Some(axis) = dirs.iter().sum::<Vec3>().try_normalize(0.0) else {
            return Cone::WIDE;
        };
        Cone::at(axis, dirs.iter().map(|d| d.dot(&axis)).fold(1.0, f64::min))
    }

    /// The cone around `axis` with half-angle cosine `cos` less the margin, or
    /// [`Cone::WIDE`] if that is too wide to cull.
    fn at(axis: Vec3, cos: f64) -> Cone {
        let cos = cos - MARGIN;
        if cos < MIN_COS {
            return Cone::WIDE;
        }
        Cone {
            axis,
            cos,
            sin: (1.0 - cos * cos).max(0.0).sqrt(),
        }
    }

    /// A cone holding both, around their axes' sum weighted by `weights` (or
    /// [`Cone::WIDE`]): for each, `cos(α + θ) = cos α cos θ − sin α sin θ` with `θ` the
    /// angle between its axis and the new one.
    fn merge(&self, o: &Cone, weights: (f64, f64)) -> Cone {
        if !self.culls() || !o.culls() {
            return Cone::WIDE;
        }
        let Some(axis) = (weights.0 * self.axis + weights.1 * o.axis).try_normalize(0.0) else {
            return Cone::WIDE;
        };
        let widened = |c: &Cone| {
            let cos = c.axis.dot(&axis).min(1.0);
            c.cos * cos - c.sin * (1.0 - cos * cos).max(0.0).sqrt()
        };
        Cone::at(axis, widened(self).min(widened(o)))
    }
}

/// The culled patches of one garment, recomputed for each step searched.
#[derive(Debug, Clone)]
pub struct Patches {
    tree: Tree,
    /// Per patch of the tree, the cone of its triangles' normals over the step.
    cones: Vec<Cone>,
    /// The base patches' cones (a buffer).
    base_cones: Vec<Cone>,
    /// Per triangle, the patch culled for the step that holds it, or [`NO_LABEL`].
    patch: Vec<u32>,
    /// Per particle, its triangles (`vertex_start[p]..vertex_start[p + 1]` of
    /// `vertex_triangles`).
    vertex_start: Vec<usize>,
    vertex_triangles: Vec<usize>,
    /// Per edge, its one or two triangles (the second [`NO_LABEL`] on a border).
    edge_triangles: Vec<[u32; 2]>,
}

impl Patches {
    /// The patch hierarchy of `triangles` over `particles` particles, whose edges have the
    /// triangles `edge_triangles` (one or two each, the second [`NO_LABEL`] on a border).
    pub fn new(triangles: &[[usize; 3]], edge_triangles: Vec<[u32; 2]>, particles: usize) -> Self {
        let tree = Tree::build(triangles);
        let mut vertex_start = vec![0usize; particles + 1];
        for t in triangles {
            for &p in t {
                vertex_start[p + 1] += 1;
            }
        }
        for p in 0..particles {
            vertex_start[p + 1] += vertex_start[p];
        }
        let mut fill = vertex_start.clone();
        let mut vertex_triangles = vec![0; vertex_start[particles]];
        for (k, t) in triangles.iter().enumerate() {
            for &p in t {
                vertex_triangles[fill[p]] = k;
                fill[p] += 1;
            }
        }
        Patches {
            cones: vec![Cone::WIDE; tree.nodes.len()],
            base_cones: Vec::new(),
            tree,
            patch: vec![NO_LABEL; triangles.len()],
            vertex_start,
            vertex_triangles,
            edge_triangles,
        }
    }

    /// A hierarchy over the triangles with boxes `boxes` whose subtrees are the patches
    /// (cut into leaves of at most `leaf` triangles): a subtree of a culled patch is then
    /// skipped whole.
    pub fn triangle_bvh(&self, boxes: &[Aabb], leaf: usize) -> Bvh {
        let tree = &self.tree;
        let bounds = tree.nodes.iter().map(|n| n.triangles.clone()).collect();
        Bvh::from_tree(boxes, tree.order.clone(), tree.splitter(bounds, leaf))
    }

    /// A hierarchy over the edges with boxes `boxes`, each edge in the patches of its
    /// first triangle in the patches' order, with leaves of at most `leaf` edges.
    pub fn edge_bvh(&self, boxes: &[Aabb], leaf: usize) -> Bvh {
        let edge_triangles = &self.edge_triangles;
        let tree = &self.tree;
        let mut position = vec![0; tree.order.len()];
        for (k, &t) in tree.order.iter().enumerate() {
            position[t] = k;
        }
        let at = |e: usize| {
            let [a, b] = edge_triangles[e];
            let of = |t: u32| {
                if t == NO_LABEL {
                    usize::MAX
                } else {
                    position[t as usize]
                }
            };
            of(a).min(of(b))
        };
        let mut order: Vec<usize> = (0..edge_triangles.len()).collect();
        order.sort_by_key(|&e| (at(e), e));
        let first_at = |k: usize| order.partition_point(|&e| at(e) < k);
        let bounds = (tree.nodes.iter())
            .map(|n| first_at(n.triangles.start)..first_at(n.triangles.end))
            .collect();
        let split = tree.splitter(bounds, leaf);
        Bvh::from_tree(boxes, order, split)
    }

    /// Drops the patches too small to cull, once the hierarchies over the patches are
    /// built ([`Patches::triangle_bvh`], [`Patches::edge_bvh`]): they hold seven eighths
    /// of the tree's nodes.
    pub fn drop_small_patches(&mut self) {
        self.tree = std::mem::take(&mut self.tree).without_small();
        self.cones = vec![Cone::WIDE; self.tree.nodes.len()];
    }

    /// Finds the patches culled for the step `x0 → x1`: the largest ones whose normal
    /// cone and contour pass over the whole step.
    pub fn update(&mut self, triangles: &[[usize; 3]], x0: &[Vec3], x1: &[Vec3]) {
        let tree = &self.tree;
        // The base patches' cones over their triangles, then the merged patches'.
        let mut base_cones = std::mem::take(&mut self.base_cones);
        base_cones.resize(tree.bases.len(), Cone::WIDE);
        crate::parallel::fill(&mut base_cones, CONE_PATCHES, |k| {
            let node = &tree.nodes[tree.bases[k]];
            let mut dirs = Vec::with_capacity(3 * node.triangles.len());
            for &t in &tree.order[node.triangles.clone()] {
                let mut three = [Vec3::zeros(); 3];
                match step_normals(triangles[t], x0, x1, &mut three) {
                    0 => return Cone::WIDE,
                    k => dirs.extend_from_slice(&three[..k]),
                }
            }
            Cone::around(&dirs)
        });
        for (&n, &cone) in tree.bases.iter().zip(&base_cones) {
            self.cones[n] = cone;
        }
        self.base_cones = base_cones;
        for &n in &tree.merged {
            if let Some((l, r)) = tree.nodes[n].children {
                let size = |c: usize| tree.nodes[c].triangles.len() as f64;
                self.cones[n] = self.cones[l].merge(&self.cones[r], (size(l), size(r)));
            }
        }
        let (cones, mut culled) = (&self.cones, Vec::new());
        for &root in &tree.roots {
            if tree.kinds[root] != Kind::Small {
                culled.extend(culled_under(tree, cones, root, (x0, x1)));
            }
        }
        self.patch.fill(NO_LABEL);
        for n in culled {
            for &t in &tree.order[tree.nodes[n].triangles.clone()] {
                self.patch[t] = n as u32;
            }
        }
    }

    /// Labels the nodes of `bvh` (over the triangles) into `out`: the culled patch holding
    /// all the node's triangles, or [`NO_LABEL`].
    pub fn label_triangle_nodes(&self, bvh: &Bvh, out: &mut Vec<u32>) {
        let leaf = |items: &[usize]| {
            let first = self.patch[items[0]];
            let all = items.iter().all(|&t| self.patch[t] == first);
            if all {
                first
            } else {
                NO_LABEL
            }
        };
        bvh.common_labels(leaf, out);
    }

    /// Labels the nodes of `bvh` (over the edges) into `out`: a culled patch holding all
    /// the node's edges (an edge lies on the patches of its triangles), or [`NO_LABEL`].
    pub fn label_edge_nodes(&self, bvh: &Bvh, out: &mut Vec<u32>) {
        let leaf = |items: &[usize]| {
            (self.of_edge(items[0]).into_iter())
                .find(|p| *p != NO_LABEL && items.iter().all(|&e| self.of_edge(e).contains(p)))
                .unwrap_or(NO_LABEL)
        };
        bvh.common_labels(leaf, out);
    }

    /// The culled patches of edge `e`'s triangles ([`NO_LABEL`] where none).
    fn of_edge(&self, e: usize) -> [u32; 2] {
        self.edge_triangles[e].map(|t| {
            if t == NO_LABEL {
                NO_LABEL
            } else {
                self.patch[t as usize]
            }
        })
    }

    /// Whether edges `e` and `f` lie on one culled patch (and so cannot meet in the step).
    pub fn share_edges(&self, e: usize, f: usize) -> bool {
        let theirs = self.of_edge(f);
        self.of_edge(e)
            .iter()
            .any(|p| *p != NO_LABEL && theirs.contains(p))
    }

    /// The culled patch of triangle `t` ([`NO_LABEL`] if none).
    pub fn of_triangle(&self, t: usize) -> u32 {
        self.patch[t]
    }

    /// The culled patches holding particle `p` (those of its triangles).
    pub fn of_particle(&self, p: usize) -> OwnPatches {
        let mut found = [NO_LABEL; 4];
        let mut count = 0;
        for &t in &self.vertex_triangles[self.vertex_start[p]..self.vertex_start[p + 1]] {
            let patch = self.patch[t];
            if patch != NO_LABEL && count < found.len() && !found[..count].contains(&patch) {
                found[count] = patch;
                count += 1;
            }
        }
        OwnPatches(found)
    }
}

/// The culled patches a particle lies on (up to four: a particle on more is taken to lie
/// on its first four, which only culls less).
#[derive(Debug, Clone, Copy)]
pub struct OwnPatches([u32; 4]);

impl OwnPatches {
    /// Whether `patch` (a culled patch or [`NO_LABEL`]) is one of them.
    pub fn hold(&self, patch: u32) -> bool {
        patch != NO_LABEL && self.0.contains(&patch)
    }
}

/// Triangles under a patch above which [`culled_under`] tests its two children in
/// parallel (scheduling only).
const PARALLEL_TRIANGLES: usize = 1024;

/// The highest patches under patch `n` (a base or merged one) whose normal cone and
/// contour pass over the step `x0 → x1`, in tree order.
fn culled_under(tree: &Tree, cones: &[Cone], n: usize, (x0, x1): (&[Vec3], &[Vec3])) -> Vec<usize> {
    let (node, cone) = (&tree.nodes[n], cones[n]);
    let contour = &tree.edges[node.boundary.clone()];
    if cone.culls() && star_shaped(contour, cone.axis, x0, x1) {
        return vec![n];
    }
    match (tree.kinds[n], node.children) {
        (Kind::Merged, Some((l, r))) => {
            let under = |c: usize| culled_under(tree, cones, c, (x0, x1));
            let (mut left, right) = if node.triangles.len() > PARALLEL_TRIANGLES {
                crate::parallel::join(|| under(l), || under(r))
            } else {
                (under(l), under(r))
            };
            left.extend(right);
            left
        }
        _ => Vec::new(),
    }
}

/// Writes the unit directions of the vectors whose non-negative combinations give triangle
/// `tri`'s normal over the step (module doc) into `dirs`, and returns their count (0 if
/// the triangle degenerates).
fn step_normals(tri: [usize; 3], x0: &[Vec3], x1: &[Vec3], dirs: &mut [Vec3; 3]) -> usize {
    let [a, b, c] = tri;
    let (e1_0, e2_0) = (x0[b] - x0[a], x0[c] - x0[a]);
    let (e1_1, e2_1) = (x1[b] - x1[a], x1[c] - x1[a]);
    let (Some(n0), Some(n1)) = (
        e1_0.cross(&e2_0).try_normalize(0.0),
        e1_1.cross(&e2_1).try_normalize(0.0),
    ) else {
        return 0;
    };
    dirs[0] = n0;
    dirs[1] = n1;
    // The middle term may vanish (it then adds nothing to the normal).
    match (e1_0.cross(&e2_1) + e1_1.cross(&e2_0)).try_normalize(0.0) {
        Some(m) => {
            dirs[2] = m;
            3
        }
        None => 2,
    }
}

/// Whether the boundary `edges` projected along the unit `axis` stays star-shaped around
/// the mean of the edges' starts, winding once, over the whole step `x0 → x1` (module doc).
fn star_shaped(edges: &[(usize, usize)], axis: Vec3, x0: &[Vec3], x1: &[Vec3]) -> bool {
    let u = (axis.cross(&Vec3::x()).try_normalize(1e-6))
        .unwrap_or_else(|| axis.cross(&Vec3::y()).normalize());
    let w = axis.cross(&u);
    let inv = 1.0 / edges.len() as f64;
    let c0 = edges.iter().map(|&(p, _)| x0[p]).sum::<Vec3>() * inv;
    let c1 = edges.iter().map(|&(p, _)| x1[p]).sum::<Vec3>() * inv;
    // Projected offset from the centre at τ = 0, and its change over the step.
    let at = |p: usize| {
        let (r0, r1) = (x0[p] - c0, x1[p] - c1);
        let start = [r0.dot(&u), r0.dot(&w)];
        (start, [r1.dot(&u) - start[0], r1.dot(&w) - start[1]])
    };
    let cross = |a: [f64; 2], b: [f64; 2]| a[0] * b[1] - a[1] * b[0];
    let norm = |a: [f64; 2]| a[0].hypot(a[1]);
    let mut winding = 0;
    for &(a, b) in edges {
        let ((a0, da), (b0, db)) = (at(a), at(b));
        // f(τ) = f0 + q1 τ + q2 τ², with |f| ≤ |a(τ)| |b(τ)| ≤ the tolerance's scale.
        let f0 = cross(a0, b0);
        let q1 = cross(a0, db) + cross(da, b0);
        let q2 = cross(da, db);
        let tol = MARGIN * (norm(a0) + norm(da)) * (norm(b0) + norm(db));
        let min = if q2 > 0.0 && -q1 > 0.0 && -q1 < 2.0 * q2 {
            f0 - q1 * q1 / (4.0 * q2)
        } else {
            f0.min(f0 + q1 + q2)
        };
        if min <= tol {
            return false;
        }
        // Each edge turns counter-clockwise by less than π: it passes the ray `+u` from
        // the centre exactly when it goes from below it to above.
        winding += usize::from(a0[1] < 0.0 && b0[1] >= 0.0);
    }
    winding == 1
}

#[cfg(test)]
mod tests;
