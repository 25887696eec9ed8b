//! Mesh topology of a garment: the edges with the triangles around them, and the panels
//! (UV islands) found by joining triangles across edges on which they agree about the UVs.
use crate::disjoint_sets::DisjointSets;
use crate::Vec2;
use std::collections::HashMap;

/// One triangle's use of an edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Side {
    /// Triangle index.
    pub tri: usize,
    /// Local corner (0..3) of the edge's first particle `a` in that triangle.
    pub ca: usize,
    /// Local corner of the edge's second particle `b`.
    pub cb: usize,
}

impl Side {
    /// Local corner of the triangle's third particle (the wing).
    pub fn opposite(&self) -> usize {
        3 - self.ca - self.cb
    }

    /// True if the triangle runs along the edge from `a` to `b` (counter-clockwise order).
    pub fn runs_a_to_b(&self) -> bool {
        self.cb == (self.ca + 1) % 3
    }
}

/// An edge `a < b` (particle indices) and the triangles using it, in triangle order.
#[derive(Debug, Clone)]
pub(crate) struct Edge {
    /// Smaller particle index.
    pub a: usize,
    /// Larger particle index.
    pub b: usize,
    /// Triangles around the edge (1 on the border, 2 inside, more if non-manifold).
    pub sides: Vec<Side>,
}

/// All edges of `triangles` in order of first appearance (deterministic).
/// Triangles must have three distinct particles.
pub(crate) fn edges(triangles: &[[usize; 3]]) -> Vec<Edge> {
    let mut index: HashMap<(usize, usize), usize> = HashMap::with_capacity(triangles.len() * 2);
    let mut edges: Vec<Edge> = Vec::with_capacity(triangles.len() * 3 / 2 + 2);
    for (tri, t) in triangles.iter().enumerate() {
        for ca in 0..3 {
            let cb = (ca + 1) % 3;
            let (p, q) = (t[ca], t[cb]);
            let (a, b, ca, cb) = if p < q {
                (p, q, ca, cb)
            } else {
                (q, p, cb, ca)
            };
            let id = *index.entry((a, b)).or_insert_with(|| {
                edges.push(Edge {
                    a,
                    b,
                    sides: Vec::with_capacity(2),
                });
                edges.len() - 1
            });
            edges[id].sides.push(Side { tri, ca, cb });
        }
    }
    edges
}

/// Two corner UVs are the same point of the UV layout: equal, or within 1e-9 relative.
pub(crate) fn same_uv(p: Vec2, q: Vec2) -> bool {
    p == q || (p - q).norm() <= 1e-9 * p.norm().max(q.norm())
}

/// True if the two triangles of `s` and `t` give the edge the same UVs at both ends.
pub(crate) fn agree(corner_uvs: &[[Vec2; 3]], s: &Side, t: &Side) -> bool {
    let (us, ut) = (&corner_uvs[s.tri], &corner_uvs[t.tri]);
    same_uv(us[s.ca], ut[t.ca]) && same_uv(us[s.cb], ut[t.cb])
}

/// Panel (UV island) of each triangle and the number of panels. Two triangles are in the
/// same panel if a chain of shared edges, on each of which both triangles agree on the
/// UVs, joins them. Panels are numbered in order of their first triangle.
pub(crate) fn panels(
    n_triangles: usize,
    edges: &[Edge],
    corner_uvs: &[[Vec2; 3]],
) -> (Vec<usize>, usize) {
    let mut uf = DisjointSets::new(n_triangles);
    for e in edges {
        for (i, s) in e.sides.iter().enumerate() {
            for t in &e.sides[i + 1..] {
                if agree(corner_uvs, s, t) {
                    uf.union(s.tri, t.tri);
                }
            }
        }
    }
    let mut label = vec![usize::MAX; n_triangles];
    let mut panel_of = Vec::with_capacity(n_triangles);
    let mut count = 0;
    for t in 0..n_triangles {
        let r = uf.find(t);
        if label[r] == usize::MAX {
            label[r] = count;
            count += 1;
        }
        panel_of.push(label[r]);
    }
    (panel_of, count)
}

/// Makes the winding of each connected piece consistent (every interior edge run in
/// opposite directions by its two triangles), so that flat hinges have dihedral angle 0.
/// Flips a triangle by swapping its corners 1 and 2 (with their UVs); in each piece the
/// winding of the majority of triangles is kept. Non-orientable pieces keep their
/// conflicting edges (hinges there are skipped). Returns the number of triangles flipped;
/// `edges` must be recomputed if it is not 0.
pub(crate) fn orient(
    triangles: &mut [[usize; 3]],
    corner_uvs: &mut [[Vec2; 3]],
    edges: &[Edge],
) -> usize {
    let n = triangles.len();
    // Neighbours across manifold edges, with "same direction" flags.
    let mut adj: Vec<Vec<(usize, bool)>> = vec![Vec::new(); n];
    for e in edges.iter().filter(|e| e.sides.len() == 2) {
        let (s, t) = (e.sides[0], e.sides[1]);
        let same = s.runs_a_to_b() == t.runs_a_to_b();
        adj[s.tri].push((t.tri, same));
        adj[t.tri].push((s.tri, same));
    }
    let mut flip: Vec<Option<bool>> = vec![None; n];
    let mut flipped = 0;
    let mut stack = Vec::new();
    for root in 0..n {
        if flip[root].is_some() {
            continue;
        }
        let mut piece = vec![root];
        flip[root] = Some(false);
        stack.push(root);
        while let Some(t) = stack.pop() {
            let ft = flip[t].unwrap_or(false);
            for &(u, same) in &adj[t] {
                if flip[u].is_none() {
                    flip[u] = Some(ft ^ same);
                    piece.push(u);
                    stack.push(u);
                }
            }
        }
        let count = piece.iter().filter(|&&t| flip[t] == Some(true)).count();
        let invert = 2 * count > piece.len();
        for &t in &piece {
            if (flip[t] == Some(true)) != invert {
                triangles[t].swap(1, 2);
                corner_uvs[t].swap(1, 2);
                flipped += 1;
            }
        }
    }
    flipped
}
