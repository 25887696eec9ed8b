//! The feature pairs of cloth self-collision (Baraff §6): a particle and a triangle not
//! containing it, two edges sharing no particle. At one time they are tested for
//! proximity (a repulsion spring when closer than the distance `d`, see
//! [`super::self_contact`]); over a step for a crossing ([`point_triangle_ccd`],
//! [`edge_edge_ccd`]).
//!
//! ```text
//! point–triangle  q = w_a a + w_b b + w_c c  closest to p,   spring if 0 < ‖p − q‖ < d
//! edge–edge       closest points a + s(b − a), c + u(e − c) with s, u interior,
//!                 spring if 0 < ‖·‖ < d   (an end point closest is a point–triangle pair)
//! ```
use super::geometry::{
    closest_point_barycentric, edge_edge_ccd, point_triangle_ccd, segment_closest_params,
};
use super::self_contact::Repulsion;
use crate::Vec3;

/// Parameters of an edge–edge pair's closest points closer than this to an end count as
/// the end point (a point–triangle pair).
const END: f64 = 1e-6;

/// Tolerance of the edge–edge crossing test ([`edge_edge_ccd`]): closest points within this
/// fraction of the edge length count as touching, and so do parameters this close to an end
/// (a hit at an end point is a point–triangle crossing, found by that test).
const EDGE_CROSSING_TOLERANCE: f64 = 1e-6;

/// The repulsion spring of particle `p` and triangle `[a, b, c]` at positions `x`, if
/// closer than `d` (the caller skips triangles containing `p`).
pub(super) fn point_triangle_spring(
    x: &[Vec3],
    p: usize,
    [a, b, c]: [usize; 3],
    d: f64,
) -> Option<Repulsion> {
    let w = closest_point_barycentric(x[p], x[a], x[b], x[c]);
    let sep = x[p] - (x[a] * w[0] + x[b] * w[1] + x[c] * w[2]);
    let dist = sep.norm();
    (dist < d && dist > 1e-12 * d).then(|| Repulsion {
        nodes: [p, a, b, c],
        gamma: [1.0, -w[0], -w[1], -w[2]],
        normal: sep / dist,
        point_triangle: true,
    })
}

/// The repulsion spring of edges `[a, b]` and `[c, e]` (sharing no particle) at positions
/// `x`, if their closest points are interior to both and closer than `d`.
pub(super) fn edge_edge_spring(
    x: &[Vec3],
    [a, b]: [usize; 2],
    [c, e]: [usize; 2],
    d: f64,
) -> Option<Repulsion> {
    let (s, u) = segment_closest_params(x[a], x[b], x[c], x[e]);
    if !(END..=1.0 - END).contains(&s) || !(END..=1.0 - END).contains(&u) {
        return None;
    }
    let sep = (x[a] + (x[b] - x[a]) * s) - (x[c] + (x[e] - x[c]) * u);
    let dist = sep.norm();
    (dist < d && dist > 1e-12 * d).then(|| Repulsion {
        nodes: [a, b, c, e],
        gamma: [1.0 - s, s, -(1.0 - u), -u],
        normal: sep / dist,
        point_triangle: false,
    })
}

/// Whether particle `p` passes through triangle `[a, b, c]` on the straight paths
/// `x0 → x1` after the start (a contact already there at `x0` is not a new crossing).
pub(super) fn point_crosses_triangle(
    x0: &[Vec3],
    x1: &[Vec3],
    p: usize,
    [a, b, c]: [usize; 3],
) -> bool {
    let path = |i: usize| [x0[i], x1[i]];
    point_triangle_ccd(path(p), path(a), path(b), path(c), 0.0).is_some_and(|t| t > 0.0)
}

/// Whether edge `[a, b]` passes through edge `[c, e]` on the straight paths `x0 → x1`
/// after the start.
pub(super) fn edge_crosses_edge(
    x0: &[Vec3],
    x1: &[Vec3],
    [a, b]: [usize; 2],
    [c, e]: [usize; 2],
) -> bool {
    let path = |i: usize| [x0[i], x1[i]];
    edge_edge_ccd(path(a), path(b), path(c), path(e), EDGE_CROSSING_TOLERANCE)
        .is_some_and(|t| t > 0.0)
}

/// Whether two edges share a particle (such pairs are never tested).
pub(super) fn adjacent([a, b]: [usize; 2], [c, e]: [usize; 2]) -> bool {
    c == a || c == b || e == a || e == b
}
