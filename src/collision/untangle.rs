//! Cloth that starts crossing itself — a collar folded through the neckline, a layer
//! pushed through another — untangled instead of held crossed.
//!
//! Self-collision (Baraff §6) keeps cloth from passing through itself: its repulsion
//! pushes a pair apart on the side each is on, and its crossing check rejects a step that
//! passes a particle through cloth. Both assume the cloth starts untangled; where it does
//! not, they hold the tangle, and every step that moves the intersection is rejected.
//! Following Baraff, Witkin & Kass, "Untangling Cloth" (SIGGRAPH 2003), §3 (global
//! intersection analysis), the tangle is found and undone:
//!
//! ```text
//! crossings  C = { (edge pq, triangle t) : pq passes through t, sharing no particle }
//! pieces     the mesh's connected parts once the edges of C are cut: the intersection
//!            curves cut off the part of the cloth that passed through
//! wrong      W = the smallest piece holding an endpoint of a crossing edge (the part to
//!            bring back); for each (pq, t) ∈ C with p ∈ W, q ∉ W the right side of t is
//!            q's: n_t = ±(normal of t) toward q
//! each step  n̄ = mean of n_t over (pq, t) ∈ C with an endpoint in W on the wrong side
//!            of t;  y_i = v h n̄ / |n̄| for every i ∈ W     position alteration (§6.2)
//!            and the crossing check tolerates crossings while C is not empty
//! after it   C is found again (W kept until no particle of it is on a wrong side, then
//!            the next piece); untangled when C is empty
//! ```
//! While W is brought back, its repulsion springs and self-collision alterations are off
//! (they would hold it on the side it is on), and the sides the pairs were on are
//! forgotten once the cloth is untangled.
use super::bvh::{Aabb, Bvh};
use crate::disjoint_sets::DisjointSets;
use crate::Vec3;

/// Speed (m/s) at which particles are brought back through the cloth they crossed.
pub const UNTANGLE_SPEED: f64 = 2.0;

/// The crossings of a garment that started crossing itself, while some are left.
#[derive(Debug, Clone, Default)]
pub struct Untangle {
    /// `(p, t, side)`: particle `p` of the piece brought back lies on the wrong side of
    /// triangle `t`; `side` (±1) times `t`'s normal points to the right side.
    crossings: Vec<(usize, usize, f64)>,
    /// How many edge–triangle crossings there were at the first frame.
    at_start: usize,
    /// Sorted particles of the piece brought back.
    wrong: Vec<usize>,
    /// Per triangle crossed when the piece was chosen: the right side (±1 times its
    /// normal), 0 where unknown; unknown triangles take the side most of the known ones
    /// have (a layer's triangles are wound alike).
    sides: Vec<f64>,
    /// No crossing is left, or none the analysis can undo.
    done: bool,
}

impl Untangle {
    /// Finds the crossings of the mesh `x`, `tris` (none: a finished untangle).
    pub fn find(x: &[Vec3], tris: &[[usize; 3]]) -> Untangle {
        let mut u = Untangle::default();
        let found = crossings(x, tris);
        u.at_start = found.len();
        u.update_with(x, tris, found);
        u
    }

    /// Whether the untangling is over: no crossing is left (or none it can undo).
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Edge–triangle crossings found at the first frame.
    pub fn at_start(&self) -> usize {
        self.at_start
    }

    /// Sorted particles of the piece being brought back through the cloth.
    pub fn wrong(&self) -> &[usize] {
        &self.wrong
    }

    /// Writes into `y` the alteration that moves the wrong piece back through the cloth it
    /// crossed: `y_i = v h n̄` for every particle of the piece without one yet, `n̄` the
    /// mean right side of the triangles its particles lie on the wrong side of (module
    /// doc). The piece moves as a whole: moving only the particles at the crossing, the
    /// cloth behind them pulls them back.
    pub fn ease(&self, x: &[Vec3], tris: &[[usize; 3]], h: f64, y: &mut [Vec3]) {
        let mut mean = Vec3::zeros();
        for &(_, t, side) in &self.crossings {
            let [a, b, c] = tris[t].map(|i| x[i]);
            let n = (b - a).cross(&(c - a));
            let len = n.norm();
            if len > 1e-300 {
                mean += side * n / len;
            }
        }
        let len = mean.norm();
        if len < 1e-12 {
            return;
        }
        let step = UNTANGLE_SPEED * h * mean / len;
        for &i in &self.wrong {
            if y[i] == Vec3::zeros() {
                y[i] = step;
            }
        }
    }

    /// Finds the crossings at `x` again (after an accepted step).
    pub fn update(&mut self, x: &[Vec3], tris: &[[usize; 3]]) {
        let found = crossings(x, tris);
        self.update_with(x, tris, found);
    }

    fn update_with(&mut self, x: &[Vec3], tris: &[[usize; 3]], found: Vec<(usize, usize, usize)>) {
        if found.is_empty() {
            self.done = true;
            self.crossings.clear();
            return;
        }
        self.crossings = self.on_wrong_side(x, tris, &found);
        if self.crossings.is_empty() {
            // The piece is back (or none was chosen yet): choose the next.
            self.choose_piece(x, tris, &found);
            self.crossings = self.on_wrong_side(x, tris, &found);
            self.done = self.crossings.is_empty();
        }
    }

    /// The smallest piece cut off by the crossing edges holding an endpoint of one, and the
    /// right side of every triangle its edges cross (toward the other endpoint).
    fn choose_piece(&mut self, x: &[Vec3], tris: &[[usize; 3]], found: &[(usize, usize, usize)]) {
        let piece = pieces(x.len(), tris, found);
        let mut size = vec![0usize; x.len()];
        for &r in &piece {
            size[r] += 1;
        }
        let wrong_piece = (found.iter())
            .flat_map(|&(p, q, _)| [piece[p], piece[q]])
            .min_by_key(|&r| (size[r], r))
            .expect("a crossing");
        self.wrong = (0..x.len()).filter(|&i| piece[i] == wrong_piece).collect();
        if self.wrong.len() == x.len() {
            // The crossings cut nothing off: nothing to bring back.
            self.wrong.clear();
        }
        self.sides = vec![0.0; tris.len()];
        for &(p, q, t) in found {
            let right = match (piece[p] == wrong_piece, piece[q] == wrong_piece) {
                (true, false) => q,
                (false, true) => p,
                _ => continue,
            };
            let [a, b, c] = tris[t].map(|i| x[i]);
            let n = (b - a).cross(&(c - a));
            self.sides[t] = if (x[right] - a).dot(&n) >= 0.0 {
                1.0
            } else {
                -1.0
            };
        }
    }

    /// `(p, t, side)` for each crossing edge with an endpoint `p` of the wrong piece on the
    /// wrong side of the triangle `t` it crosses.
    fn on_wrong_side(
        &self,
        x: &[Vec3],
        tris: &[[usize; 3]],
        found: &[(usize, usize, usize)],
    ) -> Vec<(usize, usize, f64)> {
        if self.wrong.is_empty() {
            return Vec::new();
        }
        let majority = self.sides.iter().sum::<f64>().signum();
        let mut out = Vec::new();
        for &(p, q, t) in found {
            let side = match self.sides[t] {
                0.0 => majority,
                s => s,
            };
            let [a, b, c] = tris[t].map(|i| x[i]);
            let n = side * (b - a).cross(&(c - a));
            for i in [p, q] {
                if self.wrong.binary_search(&i).is_ok() && (x[i] - a).dot(&n) < 0.0 {
                    out.push((i, t, side));
                }
            }
        }
        out
    }
}

/// Every edge `pq` of `tris` that passes through a triangle sharing no particle with it:
/// `(p, q, triangle)`, in edge order.
fn crossings(x: &[Vec3], tris: &[[usize; 3]]) -> Vec<(usize, usize, usize)> {
    let boxes: Vec<Aabb> = (tris.iter())
        .map(|t| {
            let mut b = Aabb::empty();
            t.iter().for_each(|&i| b.include(x[i]));
            b
        })
        .collect();
    let bvh = Bvh::build(&boxes);
    let mut edges: Vec<(usize, usize)> = (tris.iter())
        .flat_map(|t| [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])])
        .map(|(a, b)| (a.min(b), a.max(b)))
        .collect();
    edges.sort_unstable();
    edges.dedup();
    let mut found = Vec::new();
    for (p, q) in edges {
        let mut span = Aabb::empty();
        span.include(x[p]);
        span.include(x[q]);
        bvh.query(&span, |t| {
            let tri = tris[t];
            if !tri.contains(&p)
                && !tri.contains(&q)
                && segment_crosses(x[p], x[q], tri.map(|i| x[i]))
            {
                found.push((p, q, t));
            }
        });
    }
    found.sort_unstable();
    found
}

/// Whether the segment `a → b` passes through triangle `c`: its ends strictly on both
/// sides of the plane, the crossing point inside the triangle or on its border (a mesh
/// laid out on the same grid as another crosses it on their edges).
fn segment_crosses(a: Vec3, b: Vec3, c: [Vec3; 3]) -> bool {
    let n = (c[1] - c[0]).cross(&(c[2] - c[0]));
    let (sa, sb) = ((a - c[0]).dot(&n), (b - c[0]).dot(&n));
    if sa * sb >= 0.0 {
        return false;
    }
    let hit = a + (b - a) * (sa / (sa - sb));
    (0..3).all(|k| {
        let (u, v) = (c[k], c[(k + 1) % 3]);
        (v - u).cross(&(hit - u)).dot(&n) >= 0.0
    })
}

/// Root of each particle's piece: the connected parts of the mesh over its edges, the
/// crossing edges cut.
fn pieces(n: usize, tris: &[[usize; 3]], cut: &[(usize, usize, usize)]) -> Vec<usize> {
    let mut sets = DisjointSets::new(n);
    let mut cut_edges: Vec<(usize, usize)> = cut.iter().map(|&(p, q, _)| (p, q)).collect();
    cut_edges.sort_unstable();
    for t in tris {
        for k in 0..3 {
            let (a, b) = (t[k].min(t[(k + 1) % 3]), t[k].max(t[(k + 1) % 3]));
            if cut_edges.binary_search(&(a, b)).is_ok() {
                continue;
            }
            sets.union(a, b);
        }
    }
    (0..n).map(|k| sets.find(k)).collect()
}

// What a checkpoint keeps: the crossings still being undone.
crate::persist_fields!(Untangle {
    crossings,
    at_start,
    wrong,
    sides,
    done
});
