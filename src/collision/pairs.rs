//! The feature pairs of cloth self-collision (Baraff §6): a particle and a triangle not
//! containing it, two edges sharing no particle. At one time they are tested for
//! proximity (a repulsion spring when closer than the distance `d`, see
//! [`super::self_contact`]); over a step for a crossing
//! ([`super::geometry::point_triangle_ccd`], [`super::geometry::edge_edge_ccd`]).
//!
//! ```text
//! point–triangle  q = w_a a + w_b b + w_c c  closest to p,   spring if 0 < ‖p − q‖ < d
//! edge–edge       closest points a + s(b − a), c + u(e − c) with s, u interior,
//!                 spring if 0 < ‖·‖ < d   (an end point closest is a point–triangle pair)
//! ```
use super::geometry::{
    closest_point_barycentric, edge_edge_ccd_from, point_triangle_ccd_from, segment_closest_params,
};
use super::self_contact::{step_slack, Repulsion};
use crate::Vec3;

/// Parameters of an edge–edge pair's closest points closer than this to an end count as
/// the end point (a point–triangle pair).
const END: f64 = 1e-6;

/// Tolerance of the edge–edge crossing test ([`edge_edge_ccd_from`]): closest points within
/// this fraction of the edge length count as touching, and so do parameters this close to
/// an end (a hit at an end point is a point–triangle crossing, found by that test).
const EDGE_CROSSING_TOLERANCE: f64 = 1e-6;

/// A pair passes through the other over the step (the result of [`point_triangle_pair`]
/// and [`edge_edge_pair`] that rejects it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Crossing;

/// Particle `p` and triangle `[a, b, c]` (not containing `p`) over the straight paths
/// `x0 → x1`: [`Crossing`] if `p` passes through the triangle after the start (only when
/// `moving`; a contact already there at `x0` is not a new crossing) unless the four
/// particles lie within `flat` of one plane at both ends ([`flat_at_both_ends`]), else their
/// repulsion spring at `x1` if closer than `d`.
///
/// One nearest point serves both: the distance at the end gates the crossing test as well
/// as the distance at the start would ([`point_triangle_ccd_from`]), and the spring needs it.
pub(super) fn point_triangle_pair(
    (x0, x1): (&[Vec3], &[Vec3]),
    p: usize,
    [a, b, c]: [usize; 3],
    d: f64,
    (moving, flat): (bool, f64),
) -> Result<Option<Repulsion>, Crossing> {
    let w = closest_point_barycentric(x1[p], x1[a], x1[b], x1[c]);
    let sep = x1[p] - (x1[a] * w[0] + x1[b] * w[1] + x1[c] * w[2]);
    let dist = sep.norm();
    if moving {
        let path = |i: usize| [x0[i], x1[i]];
        let paths = [path(p), path(a), path(b), path(c)];
        if point_triangle_ccd_from(dist, paths, 0.0).is_some_and(|t| t > 0.0)
            && !flat_at_both_ends(x0, x1, [p, a, b, c], flat)
        {
            return Err(Crossing);
        }
    }
    Ok((dist < d && dist > 1e-12 * d).then(|| Repulsion {
        nodes: [p, a, b, c],
        gamma: [1.0, -w[0], -w[1], -w[2]],
        normal: sep / dist,
        point_triangle: true,
        slack: step_slack(dist, d),
    }))
}

/// Edges `[a, b]` and `[c, e]` (sharing no particle) over the straight paths `x0 → x1`:
/// [`Crossing`] if one passes through the other after the start (only when `moving`)
/// unless the four particles lie within `flat` of one plane at both ends
/// ([`flat_at_both_ends`]), else their repulsion spring at `x1` if their closest points
/// are interior to both and closer than `d`.
///
/// One pair of closest points serves both, as in [`point_triangle_pair`].
pub(super) fn edge_edge_pair(
    (x0, x1): (&[Vec3], &[Vec3]),
    [a, b]: [usize; 2],
    [c, e]: [usize; 2],
    d: f64,
    (moving, flat): (bool, f64),
) -> Result<Option<Repulsion>, Crossing> {
    let (s, u) = segment_closest_params(x1[a], x1[b], x1[c], x1[e]);
    let sep = (x1[a] + (x1[b] - x1[a]) * s) - (x1[c] + (x1[e] - x1[c]) * u);
    let dist = sep.norm();
    if moving {
        let path = |i: usize| [x0[i], x1[i]];
        let paths = [path(a), path(b), path(c), path(e)];
        if edge_edge_ccd_from(dist, paths, EDGE_CROSSING_TOLERANCE).is_some_and(|t| t > 0.0)
            && !flat_at_both_ends(x0, x1, [a, b, c, e], flat)
        {
            return Err(Crossing);
        }
    }
    let interior = |w: f64| (END..=1.0 - END).contains(&w);
    Ok(
        (interior(s) && interior(u) && dist < d && dist > 1e-12 * d).then(|| Repulsion {
            nodes: [a, b, c, e],
            gamma: [1.0 - s, s, -(1.0 - u), -u],
            normal: sep / dist,
            point_triangle: false,
            slack: step_slack(dist, d),
        }),
    )
}

/// Whether the four particles `q` lie within `flat` of one plane both at `x0` and at `x1`
/// ([`flatness`]). Such a pair only slides within its plane over the step (two layers
/// lying in one plane on the floor, all four particles in floor contact at the body's
/// thickness): the coplanarity cubic of the crossing tests is then rounding noise whose
/// roots fall anywhere, and a "crossing" from one side of the plane to the other by
/// 1e-19 m is not cloth passing through cloth. (The repulsion springs act on pairs
/// closer than the repulsion distance whatever the side.)
fn flat_at_both_ends(x0: &[Vec3], x1: &[Vec3], q: [usize; 4], flat: f64) -> bool {
    flatness(q.map(|i| x0[i])) <= flat && flatness(q.map(|i| x1[i])) <= flat
}

/// How far four points are from lying in one plane: the height of their tetrahedron over
/// its largest face, `|det| / max ‖face cross product‖`
/// (`det = ((q₁ − q₀) × (q₂ − q₀)) · (q₃ − q₀)`); 0 for points on one line or one point.
pub(super) fn flatness([q0, q1, q2, q3]: [Vec3; 4]) -> f64 {
    let det = (q1 - q0).cross(&(q2 - q0)).dot(&(q3 - q0)).abs();
    let faces = [
        (q1 - q0).cross(&(q2 - q0)),
        (q1 - q0).cross(&(q3 - q0)),
        (q2 - q0).cross(&(q3 - q0)),
        (q2 - q1).cross(&(q3 - q1)),
    ];
    let largest = faces.iter().map(|f| f.norm()).fold(0.0, f64::max);
    if largest > 0.0 {
        det / largest
    } else {
        0.0
    }
}

/// Whether two edges share a particle (such pairs are never tested).
pub(super) fn adjacent([a, b]: [usize; 2], [c, e]: [usize; 2]) -> bool {
    c == a || c == b || e == a || e == b
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collision::geometry::{edge_edge_ccd, point_triangle_ccd};

    /// Whether the pair crosses over `x0 → x1` (no spring: distance 0).
    fn crosses_pt(x0: &[Vec3], x1: &[Vec3], p: usize, tri: [usize; 3], flat: f64) -> bool {
        point_triangle_pair((x0, x1), p, tri, 0.0, (true, flat)) == Err(Crossing)
    }

    /// Whether the edges cross over `x0 → x1`.
    fn crosses_ee(x0: &[Vec3], x1: &[Vec3], e: [usize; 2], f: [usize; 2], flat: f64) -> bool {
        edge_edge_pair((x0, x1), e, f, 0.0, (true, flat)) == Err(Crossing)
    }

    #[test]
    fn flatness_is_the_height_over_the_largest_face() {
        let (o, u, w) = (Vec3::zeros(), Vec3::x(), Vec3::z());
        assert!((flatness([o, u, w, Vec3::new(0.2, 0.3, 0.2)]) - 0.3).abs() < 1e-15);
        assert_eq!(flatness([o, u, w, Vec3::new(0.2, 0.0, 0.2)]), 0.0);
        assert_eq!(flatness([o, u, 2.0 * u, 3.0 * u]), 0.0);
    }

    #[test]
    fn features_sliding_in_one_plane_do_not_cross_but_leaving_it_does() {
        // Four particles of the floor pile-up of tests/self_collision.rs (IC(0), default
        // tolerance), all in floor contact at τ = 2 mm, over a step of 1.6e-4 s: one
        // height is 0.0019999999999999996 at the start, every other exactly 0.002.
        let x0 = vec![
            Vec3::new(-0.019424605378207616, 0.002, 0.026437041726657277),
            Vec3::new(-0.04989848162061704, 0.002, 0.03288217196961578),
            Vec3::new(-0.016506360484218618, 0.002, 0.03124274597208066),
            Vec3::new(
                -0.01810344815574626,
                0.0019999999999999996,
                -0.0021381000643096995,
            ),
        ];
        let x1 = vec![
            Vec3::new(-0.019514018293882707, 0.002, 0.0264367272014883),
            Vec3::new(-0.04986985267892798, 0.002, 0.032881037548874184),
            Vec3::new(-0.016476619273232893, 0.002, 0.031241493872844608),
            Vec3::new(-0.018055545884025692, 0.002, -0.002139930941084565),
        ];
        let flat = 1e-3 * 0.002;
        let path = |i: usize| [x0[i], x1[i]];
        let (mut raw, mut kept) = (0, 0);
        for p in 0..4 {
            let t: Vec<usize> = (0..4).filter(|&k| k != p).collect();
            let tri = [t[0], t[1], t[2]];
            let ccd = point_triangle_ccd(path(p), path(tri[0]), path(tri[1]), path(tri[2]), 0.0);
            raw += usize::from(ccd.is_some_and(|t| t > 0.0));
            kept += usize::from(crosses_pt(&x0, &x1, p, tri, flat));
        }
        for (e, f) in [([0, 1], [2, 3]), ([0, 2], [1, 3]), ([0, 3], [1, 2])] {
            let ccd = edge_edge_ccd(path(e[0]), path(e[1]), path(f[0]), path(f[1]), 1e-6);
            raw += usize::from(ccd.is_some_and(|t| t > 0.0));
            kept += usize::from(crosses_ee(&x0, &x1, e, f, flat));
        }
        assert!(
            raw > 0,
            "the coplanarity roots of rounding noise read as a crossing"
        );
        assert_eq!(kept, 0, "sliding within one plane is not a crossing");
        // A point passing 1 mm through a triangle's middle, and one leaving the plane of
        // the triangle it lay in by 20 µm (the other pile-up failure, `contact::ON_BODY`),
        // still cross.
        let tri = [
            Vec3::zeros(),
            Vec3::new(0.03, 0.0, 0.0),
            Vec3::new(0.0, 0.0, 0.03),
        ];
        for (start, end) in [(1e-3, -1e-3), (1e-19, -2e-5)] {
            let p = |y: f64| Vec3::new(0.008, y, 0.008);
            let x0 = vec![p(start), tri[0], tri[1], tri[2]];
            let x1 = vec![p(end), tri[0], tri[1], tri[2]];
            assert!(crosses_pt(&x0, &x1, 0, [1, 2, 3], flat));
        }
    }
}
