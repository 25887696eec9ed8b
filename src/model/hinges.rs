//! Bend hinges (Baraff §4.3; Stuyck §7.6, fig. 7.6): one per pair of triangles sharing an
//! edge, with the discrete-shells weight and the split between u and v rigidity.
//!
//! ```text
//! weight  = 3 ‖e‖² / (A₁ + A₂)      ‖e‖ rest length of the edge (m), A₁, A₂ rest areas (m²)
//! u_share = d_v²                    (d_u, d_v) unit rest direction of the edge in UV space
//! ```
//! Across a seam the two triangles see the edge in different panels: ‖e‖ is the mean of
//! the two rest lengths and `u_share` the mean of the two sides' `d_v²`.
use super::topology::{agree, Edge, Side};
use super::{Hinge, TriangleRest};

/// Hinges of all edges shared by two or more triangles, in edge order, and the number of
/// seam edges (edges whose triangles disagree on the edge's UVs).
///
/// An edge with `k > 2` triangles (non-manifold, e.g. a pocket sewn on a seam) gets
/// `k − 1` hinges between consecutive triangles in triangle order. A pair whose windings
/// disagree (left after [`orient`](super::topology::orient) only on non-orientable meshes)
/// gets no hinge, since its flat state is not θ = 0.
pub(crate) fn hinges(
    triangles: &[[usize; 3]],
    corner_uvs: &[[crate::Vec2; 3]],
    rest: &[TriangleRest],
    edges: &[Edge],
) -> (Vec<Hinge>, usize) {
    let mut hinges = Vec::with_capacity(edges.len());
    let mut seam_edges = 0;
    for e in edges.iter().filter(|e| e.sides.len() >= 2) {
        let mut edge_is_seam = false;
        for pair in e.sides.windows(2) {
            let (s, t) = (&pair[0], &pair[1]);
            let seam = !agree(corner_uvs, s, t);
            edge_is_seam |= seam;
            if s.runs_a_to_b() == t.runs_a_to_b() {
                continue;
            }
            hinges.push(hinge(e, s, t, triangles, rest, seam));
        }
        seam_edges += usize::from(edge_is_seam);
    }
    (hinges, seam_edges)
}

/// The hinge of triangles `s` (first) and `t` (second), ordered so that with Stuyck's
/// `n_A = (x2 − x0) × (x1 − x0)` and `n_B = (x1 − x3) × (x2 − x3)` both normals are the
/// triangles' counter-clockwise normals: `s` runs the edge from x2 to x1.
fn hinge(
    e: &Edge,
    s: &Side,
    t: &Side,
    triangles: &[[usize; 3]],
    rest: &[TriangleRest],
    seam: bool,
) -> Hinge {
    let (x2, x1) = if s.runs_a_to_b() {
        (e.a, e.b)
    } else {
        (e.b, e.a)
    };
    let wings = [
        triangles[s.tri][s.opposite()],
        triangles[t.tri][t.opposite()],
    ];
    let side = |side: &Side| {
        let r = &rest[side.tri];
        let d = r.uv[side.cb] - r.uv[side.ca];
        let len2 = d.norm_squared();
        (len2.sqrt(), d.y * d.y / len2, r.area)
    };
    let (len_s, vs, area_s) = side(s);
    let (len_t, vt, area_t) = side(t);
    let len = 0.5 * (len_s + len_t);
    Hinge {
        edge: [x1, x2],
        wings,
        weight: 3.0 * len * len / (area_s + area_t),
        u_share: 0.5 * (vs + vt),
        rest_angle: 0.0,
        seam,
    }
}
