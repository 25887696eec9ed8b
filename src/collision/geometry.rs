//! Point–triangle geometry: closest points (Ericson, *Real-Time Collision Detection* §5.1.5)
//! and continuous point–triangle collision times (the coplanarity cubic of Provot 1997 /
//! Bridson et al. 2002 §4).
use crate::Vec3;

/// Closest point of triangle `(a, b, c)` to `p`, as barycentric weights `(wa, wb, wc)`
/// (non-negative, summing to 1). Degenerate triangles are handled (the closest point of
/// their edges is returned).
pub fn closest_point_barycentric(p: Vec3, a: Vec3, b: Vec3, c: Vec3) -> [f64; 3] {
    let ab = b - a;
    let ac = c - a;
    let ap = p - a;
    let d1 = ab.dot(&ap);
    let d2 = ac.dot(&ap);
    if d1 <= 0.0 && d2 <= 0.0 {
        return [1.0, 0.0, 0.0];
    }
    let bp = p - b;
    let d3 = ab.dot(&bp);
    let d4 = ac.dot(&bp);
    if d3 >= 0.0 && d4 <= d3 {
        return [0.0, 1.0, 0.0];
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let v = safe_ratio(d1, d1 - d3);
        return [1.0 - v, v, 0.0];
    }
    let cp = p - c;
    let d5 = ab.dot(&cp);
    let d6 = ac.dot(&cp);
    if d6 >= 0.0 && d5 <= d6 {
        return [0.0, 0.0, 1.0];
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let w = safe_ratio(d2, d2 - d6);
        return [1.0 - w, 0.0, w];
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        let w = safe_ratio(d4 - d3, (d4 - d3) + (d5 - d6));
        return [0.0, 1.0 - w, w];
    }
    let denom = va + vb + vc;
    if denom.abs() < f64::MIN_POSITIVE || !denom.is_finite() {
        return [1.0, 0.0, 0.0];
    }
    let v = vb / denom;
    let w = vc / denom;
    [1.0 - v - w, v, w]
}

fn safe_ratio(n: f64, d: f64) -> f64 {
    if d.abs() < f64::MIN_POSITIVE {
        0.0
    } else {
        (n / d).clamp(0.0, 1.0)
    }
}

/// Earliest time `t ∈ [0, 1]` at which the point moving linearly `p0 → p1` lies in the
/// triangle moving linearly `(a0, b0, c0) → (a1, b1, c1)`, if any.
///
/// ```text
/// coplanar:  f(t) = ((b − a) × (c − a)) · (p − a) = 0,  all linear in t → f cubic in t
/// ```
/// A root counts if the point's barycentric coordinates in the triangle at that time are
/// within `[−tol, 1 + tol]` (roots as in `first_coplanar_time`).
pub fn point_triangle_ccd(
    p: [Vec3; 2],
    a: [Vec3; 2],
    b: [Vec3; 2],
    c: [Vec3; 2],
    tol: f64,
) -> Option<f64> {
    let w = closest_point_barycentric(p[0], a[0], b[0], c[0]);
    let gap = (p[0] - (a[0] * w[0] + b[0] * w[1] + c[0] * w[2])).norm();
    point_triangle_ccd_from(gap, [p, a, b, c], tol)
}

/// [`point_triangle_ccd`] of the paths `[p, a, b, c]` for a caller that already has
/// `gap`, the distance from the point to the triangle at the start or at the end of the
/// step (their reach bounds how much it changes over the step either way, see
/// `beyond_reach`).
pub fn point_triangle_ccd_from(gap: f64, [p, a, b, c]: [[Vec3; 2]; 4], tol: f64) -> Option<f64> {
    // Far apart at the start for the distance the features move: no contact (see
    // `beyond_reach`; `slack` covers the points `tol` lets lie just outside the triangle).
    let slack = tol * ((b[0] - a[0]).norm() + (c[0] - a[0]).norm() + (c[1] - a[1]).norm());
    if beyond_reach(gap, slack, &[p], &[a, b, c]) {
        return None;
    }
    first_coplanar_time([p, a, b, c], |[p, a, b, c]| {
        inside_triangle(p, a, b, c, tol)
    })
}

/// Earliest time `t ∈ [0, 1]` at which the edge moving linearly `(a0, b0) → (a1, b1)` passes
/// through the edge `(c0, e0) → (c1, e1)`, if any: the four points are coplanar
/// (`f(t) = ((b − a) × (c − a)) · (e − a) = 0`, a cubic) and the segments' closest points
/// at that time, interior to both (parameters in `[tol, 1 − tol]`), are within `tol` times
/// the longer edge of each other (Provot 1997; Bridson et al. 2002 §4).
pub fn edge_edge_ccd(
    a: [Vec3; 2],
    b: [Vec3; 2],
    c: [Vec3; 2],
    e: [Vec3; 2],
    tol: f64,
) -> Option<f64> {
    let (s, u) = segment_closest_params(a[0], b[0], c[0], e[0]);
    let gap = (a[0] + (b[0] - a[0]) * s) - (c[0] + (e[0] - c[0]) * u);
    edge_edge_ccd_from(gap.norm(), [a, b, c, e], tol)
}

/// [`edge_edge_ccd`] of the paths `[a, b, c, e]` for a caller that already has `gap`, the
/// distance between the segments at the start or at the end of the step (their reach
/// bounds how much it changes over the step either way, see `beyond_reach`).
pub fn edge_edge_ccd_from(gap: f64, [a, b, c, e]: [[Vec3; 2]; 4], tol: f64) -> Option<f64> {
    if beyond_reach(gap, 0.0, &[a, b], &[c, e]) {
        return None;
    }
    first_coplanar_time([e, a, b, c], |[e, a, b, c]| {
        let (s, u) = segment_closest_params(a, b, c, e);
        let interior = |w: f64| (tol..=1.0 - tol).contains(&w);
        let gap = (a + (b - a) * s) - (c + (e - c) * u);
        let scale = (b - a).norm().max((e - c).norm());
        interior(s) && interior(u) && gap.norm() <= tol * scale
    })
}

/// Whether features `gap` apart at the start (or at the end) stay farther apart than
/// `slack` over the step.
///
/// The reach of two features (a point, segment or triangle each, by their corners' paths)
/// bounds how much the distance between them can shrink over the step: every point of a
/// feature is a convex combination of its corners, so it moves at most its farthest
/// corner's distance, and the distance between the features falls by at most the sum. A
/// translation common to all corners changes no distance between them, so the same holds
/// for the displacements less any common vector `c`; the reach is the smaller of the sums
/// with `c = 0` and with `c` the corners' mean displacement. Features farther apart than
/// this at the start cannot touch, nor can features this far apart at the end (the same
/// bound read backwards in time); the test skips most pairs of a cloth lying flat, whose
/// coplanarity function is rounding noise that would otherwise be bisected, and (through
/// `c`) of a cloth falling or sliding as a whole, whose corners move centimetres in a step
/// but not apart.
///
/// The sum with `c = 0` alone decides most pairs of a cloth at rest; the one with the mean
/// (four more square roots) is taken only when it does not. The reach is at most the
/// first sum, so the answer is that of `gap > reach + slack` either way.
fn beyond_reach(gap: f64, slack: f64, first: &[[Vec3; 2]], second: &[[Vec3; 2]]) -> bool {
    let still = still_reach(first, second);
    gap > still + slack || gap > still.min(moving_reach(first, second)) + slack
}

/// The reach of [`beyond_reach`].
#[cfg(test)]
fn reach(first: &[[Vec3; 2]], second: &[[Vec3; 2]]) -> f64 {
    still_reach(first, second).min(moving_reach(first, second))
}

/// The reach of [`beyond_reach`] with `c = 0`.
fn still_reach(first: &[[Vec3; 2]], second: &[[Vec3; 2]]) -> f64 {
    farthest(first, Vec3::zeros()) + farthest(second, Vec3::zeros())
}

/// The reach of [`beyond_reach`] with `c` the corners' mean displacement.
fn moving_reach(first: &[[Vec3; 2]], second: &[[Vec3; 2]]) -> f64 {
    let corners = first.iter().chain(second);
    let mean = corners.clone().map(|x| x[1] - x[0]).sum::<Vec3>() / corners.count() as f64;
    farthest(first, mean) + farthest(second, mean)
}

/// The largest displacement less `c` of the corners `f`: one square root of the largest
/// squared length (the same value as the largest length, the root being monotone and
/// correctly rounded; a search's pairs take two to four roots fewer each).
fn farthest(f: &[[Vec3; 2]], c: Vec3) -> f64 {
    (f.iter())
        .fold(0.0, |m: f64, x| m.max((x[1] - x[0] - c).norm_squared()))
        .sqrt()
}

/// The earliest root `t ∈ [0, 1]` of the coplanarity cubic
/// `f(t) = ((b − a) × (c − a)) · (p − a)` of four points moving linearly (`[p, a, b, c]`,
/// each from `[0]` to `[1]`) at which `accept` holds for the positions at `t`.
///
/// Roots are bracketed between the cubic's critical points and refined by [`crossing_time`].
fn first_coplanar_time(points: [[Vec3; 2]; 4], accept: impl Fn([Vec3; 4]) -> bool) -> Option<f64> {
    let at = |t: f64| points.map(|x| x[0] + (x[1] - x[0]) * t);
    let f = |t: f64| {
        let [p, a, b, c] = at(t);
        (b - a).cross(&(c - a)).dot(&(p - a))
    };
    // Cubic coefficients from four samples (exact for a cubic): Lagrange on t = 0, 1/3, 2/3, 1.
    let (f0, f1, f2, f3) = (f(0.0), f(1.0 / 3.0), f(2.0 / 3.0), f(1.0));
    let c3 = 4.5 * (f3 - 3.0 * f2 + 3.0 * f1 - f0);
    let c2 = 9.0 * (f0 - 2.5 * f1 + 2.0 * f2 - 0.5 * f3);
    let c1 = -5.5 * f0 + 9.0 * f1 - 4.5 * f2 + f3;
    // Split [0, 1] at the critical points (roots of 3 c3 t² + 2 c2 t + c1) inside it:
    // sorted, without repeats, on the stack (this runs for every pair the crossing
    // search does not rule out by distance).
    let mut roots = [f64::NAN; 2];
    let (qa, qb, qc) = (3.0 * c3, 2.0 * c2, c1);
    if qa.abs() > 1e-300 {
        let disc = qb * qb - 4.0 * qa * qc;
        if disc >= 0.0 {
            let s = disc.sqrt();
            roots = [(-qb - s) / (2.0 * qa), (-qb + s) / (2.0 * qa)];
        }
    } else if qb.abs() > 1e-300 {
        roots[0] = -qc / qb;
    }
    let mut cuts = [0.0, 1.0, 0.0, 0.0];
    let mut len = 2;
    for t in roots.into_iter().filter(|t| (0.0..=1.0).contains(t)) {
        cuts[len] = t;
        len += 1;
    }
    cuts[..len].sort_by(f64::total_cmp);
    let mut kept = 1;
    for k in 1..len {
        if cuts[k] != cuts[kept - 1] {
            cuts[kept] = cuts[k];
            kept += 1;
        }
    }
    for w in cuts[..kept].windows(2) {
        let (lo, hi) = (w[0], w[1]);
        let (flo, fhi) = (f(lo), f(hi));
        let root = if flo == 0.0 {
            Some(lo)
        } else if flo * fhi > 0.0 {
            None
        } else {
            Some(crossing_time(&f, [lo, hi], [flo, fhi]))
        };
        if let Some(t) = root.filter(|&t| accept(at(t))) {
            return Some(t);
        }
    }
    None
}

/// Width of the bracket at which [`crossing_time`] stops (a fraction of the step).
const ROOT_WIDTH: f64 = 1e-13;
/// Secant steps in a row that may each fail to halve the bracket before [`crossing_time`]
/// bisects.
const SLOW: usize = 3;

/// The end of a bracket `[lo, hi]` of a sign change of `f` (values `[f(lo), f(hi)]`, of
/// opposite signs, `f` monotone in between) narrowed to at most [`ROOT_WIDTH`]: the first
/// time known to be past the root (`f` of the sign of `f(hi)`, or 0 there).
///
/// Illinois false position (Dowell & Jarratt 1971): the secant through the bracket's ends,
/// with the value of an end kept twice in a row halved, converges superlinearly; after
/// [`SLOW`] steps in a row that did not halve the bracket the next one bisects, so the
/// bracket halves at least every `SLOW + 1` steps. A linear `f` (a point passing a fixed
/// triangle) takes 1-3 evaluations, a cubic about 10, where bisection to the same width
/// takes 43.
fn crossing_time(
    f: &impl Fn(f64) -> f64,
    [mut lo, mut hi]: [f64; 2],
    [mut flo, mut fhi]: [f64; 2],
) -> f64 {
    let mut kept = 0i8;
    let mut slow = 0;
    // Enough for the guaranteed halvings from width 1 to ROOT_WIDTH.
    for _ in 0..(SLOW + 1) * 64 {
        let width = hi - lo;
        if width <= ROOT_WIDTH {
            break;
        }
        let secant = (lo * fhi - hi * flo) / (fhi - flo);
        let t = if slow >= SLOW || !(lo < secant && secant < hi) {
            0.5 * (lo + hi)
        } else {
            secant
        };
        let ft = f(t);
        if ft == 0.0 {
            return t;
        }
        if (ft < 0.0) == (flo < 0.0) {
            lo = t;
            flo = ft;
            if kept == 1 {
                fhi *= 0.5;
            }
            kept = 1;
        } else {
            hi = t;
            fhi = ft;
            if kept == -1 {
                flo *= 0.5;
            }
            kept = -1;
        }
        slow = if slow >= SLOW || hi - lo <= 0.5 * width {
            0
        } else {
            slow + 1
        };
    }
    hi
}

/// Closest points of segments `p1 q1` and `p2 q2` as parameters `(s, u)` in `[0, 1]`
/// (Ericson, *Real-Time Collision Detection* §5.1.9).
pub fn segment_closest_params(p1: Vec3, q1: Vec3, p2: Vec3, q2: Vec3) -> (f64, f64) {
    let d1 = q1 - p1;
    let d2 = q2 - p2;
    let r = p1 - p2;
    let a = d1.dot(&d1);
    let e = d2.dot(&d2);
    let f = d2.dot(&r);
    if a <= 1e-300 && e <= 1e-300 {
        return (0.0, 0.0);
    }
    if a <= 1e-300 {
        return (0.0, (f / e).clamp(0.0, 1.0));
    }
    let c = d1.dot(&r);
    if e <= 1e-300 {
        return ((-c / a).clamp(0.0, 1.0), 0.0);
    }
    let b = d1.dot(&d2);
    let denom = a * e - b * b;
    let mut s = if denom > 1e-300 {
        ((b * f - c * e) / denom).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let mut u = (b * s + f) / e;
    if u < 0.0 {
        u = 0.0;
        s = (-c / a).clamp(0.0, 1.0);
    } else if u > 1.0 {
        u = 1.0;
        s = ((b - c) / a).clamp(0.0, 1.0);
    }
    (s, u)
}

/// True if `p`, assumed (nearly) in the triangle's plane, has barycentric coordinates in
/// `[−tol, 1 + tol]`.
fn inside_triangle(p: Vec3, a: Vec3, b: Vec3, c: Vec3, tol: f64) -> bool {
    let v0 = b - a;
    let v1 = c - a;
    let v2 = p - a;
    let d00 = v0.dot(&v0);
    let d01 = v0.dot(&v1);
    let d11 = v1.dot(&v1);
    let d20 = v2.dot(&v0);
    let d21 = v2.dot(&v1);
    let denom = d00 * d11 - d01 * d01;
    if denom <= 1e-300 {
        return false;
    }
    let v = (d11 * d20 - d01 * d21) / denom;
    let w = (d00 * d21 - d01 * d20) / denom;
    let u = 1.0 - v - w;
    [u, v, w].iter().all(|&x| x >= -tol && x <= 1.0 + tol)
}

#[cfg(test)]
mod tests;
