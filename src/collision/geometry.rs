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
/// `gap`, the distance from the point to the triangle at the start.
pub fn point_triangle_ccd_from(gap: f64, [p, a, b, c]: [[Vec3; 2]; 4], tol: f64) -> Option<f64> {
    // Far apart at the start for the distance the features move: no contact (see `reach`;
    // `slack` covers the points `tol` lets lie just outside the triangle).
    let slack = tol * ((b[0] - a[0]).norm() + (c[0] - a[0]).norm() + (c[1] - a[1]).norm());
    if gap > reach(&[p], &[a, b, c]) + slack {
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
    if gap.norm() > reach(&[a, b], &[c, e]) {
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

/// Bound on how much the distance between two features (a point, segment or triangle each,
/// by their corners' paths) can shrink over the step: every point of a feature is a convex
/// combination of its corners, so it moves at most its farthest corner's distance, and the
/// distance between the features falls by at most the sum. A translation common to all
/// corners changes no distance between them, so the same holds for the displacements less
/// any common vector `c`; the bound is the smaller of the sums with `c = 0` and with `c`
/// the corners' mean displacement. Features farther apart than this at the start cannot
/// touch; the test skips most pairs of a cloth lying flat, whose coplanarity function is
/// rounding noise that would otherwise be bisected, and (through `c`) of a cloth falling
/// or sliding as a whole, whose corners move centimetres in a step but not apart.
fn reach(first: &[[Vec3; 2]], second: &[[Vec3; 2]]) -> f64 {
    let corners = first.iter().chain(second);
    let mean = corners.clone().map(|x| x[1] - x[0]).sum::<Vec3>() / corners.count() as f64;
    let farthest = |f: &[[Vec3; 2]], c: Vec3| {
        (f.iter()).fold(0.0, |m: f64, x| m.max((x[1] - x[0] - c).norm()))
    };
    let still = farthest(first, Vec3::zeros()) + farthest(second, Vec3::zeros());
    still.min(farthest(first, mean) + farthest(second, mean))
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
/// takes 43 and the fixed 60 bisections this replaced took 60.
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
mod tests {
    use super::*;

    /// Uniform numbers in [−1, 1) from `seed` (a linear congruential generator).
    fn uniform(mut seed: u64) -> impl FnMut() -> f64 {
        move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        }
    }

    /// A corner's path over a step: a start in the cube [−1, 1)³, moved up to 0.8 per axis.
    fn random_path(rnd: &mut impl FnMut() -> f64) -> [Vec3; 2] {
        let p = Vec3::new(rnd(), rnd(), rnd());
        [p, p + 0.8 * Vec3::new(rnd(), rnd(), rnd())]
    }

    fn brute_closest(p: Vec3, a: Vec3, b: Vec3, c: Vec3) -> f64 {
        let mut best = f64::INFINITY;
        let n = 200;
        for i in 0..=n {
            for j in 0..=(n - i) {
                let (u, v) = (i as f64 / n as f64, j as f64 / n as f64);
                let q = a + (b - a) * u + (c - a) * v;
                best = best.min((p - q).norm());
            }
        }
        best
    }

    #[test]
    fn closest_point_matches_brute_force_in_every_region() {
        let (a, b, c) = (
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(1.0, 0.1, 0.0),
            Vec3::new(0.2, 0.9, 0.3),
        );
        let mut seed = 1u64;
        let mut rnd = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64 * 3.0 - 1.0
        };
        for _ in 0..200 {
            let p = Vec3::new(rnd(), rnd(), rnd());
            let w = closest_point_barycentric(p, a, b, c);
            assert!(w.iter().all(|&x| (-1e-12..=1.0 + 1e-12).contains(&x)));
            assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-12);
            let q = a * w[0] + b * w[1] + c * w[2];
            let brute = brute_closest(p, a, b, c);
            assert!((p - q).norm() <= brute + 1e-9, "closest point not closest");
            assert!((p - q).norm() >= brute - 0.02, "brute grid spacing bound");
        }
    }

    #[test]
    fn ccd_finds_the_crossing_time_of_a_point_through_a_moving_triangle() {
        // Triangle in z = 0 moving up by 1; point fixed at z = 0.25 above its interior.
        let a = [Vec3::new(0.0, 0.0, 0.0), Vec3::new(0.0, 0.0, 1.0)];
        let b = [Vec3::new(1.0, 0.0, 0.0), Vec3::new(1.0, 0.0, 1.0)];
        let c = [Vec3::new(0.0, 1.0, 0.0), Vec3::new(0.0, 1.0, 1.0)];
        let p = [Vec3::new(0.2, 0.2, 0.25); 2];
        let t = point_triangle_ccd(p, a, b, c, 0.0).unwrap();
        assert!((t - 0.25).abs() < 1e-12, "t = {t}");
        // Outside the triangle's extent: no hit.
        let q = [Vec3::new(0.8, 0.8, 0.25); 2];
        assert!(point_triangle_ccd(q, a, b, c, 0.0).is_none());
        // Rotating triangle (non-linear coplanarity) and a moving point.
        let a = [Vec3::new(-1.0, -1.0, -0.5), Vec3::new(-1.0, -1.0, 0.5)];
        let b = [Vec3::new(1.0, -1.0, 0.5), Vec3::new(1.0, -1.0, -0.5)];
        let c = [Vec3::new(0.0, 1.0, 0.0), Vec3::new(0.0, 1.0, 0.0)];
        let p = [Vec3::new(0.0, -0.3, 0.6), Vec3::new(0.0, -0.3, -0.6)];
        let t = point_triangle_ccd(p, a, b, c, 0.0).unwrap();
        let at = |x: &[Vec3; 2]| x[0] + (x[1] - x[0]) * t;
        let n = (at(&b) - at(&a)).cross(&(at(&c) - at(&a))).normalize();
        assert!((at(&p) - at(&a)).dot(&n).abs() < 1e-9);
    }

    #[test]
    fn crossing_time_ends_just_past_the_root_in_few_evaluations() {
        // Cubics with one root in [0, 1] and monotone there ((t − r)(t² + p t + q) with
        // no real root in the quadratic), steep and flat, and a straight line (a point
        // passing a fixed triangle): the bracket's end past the root, within ROOT_WIDTH of
        // it, found with far fewer evaluations than the 43 bisections to that width, and
        // never more than the guaranteed halvings allow.
        let mut rnd = uniform(11);
        let (mut cases, mut evaluations) = (0, 0);
        for k in 0..300 {
            let r = 0.5 + 0.499 * rnd();
            let (p, scale) = (rnd(), 10f64.powf(6.0 * rnd()));
            let q = p * p / 4.0 + 0.01 + rnd().abs();
            let f = |t: f64| match k % 3 {
                0 => scale * (t - r),
                _ => scale * (t - r) * (t * t + p * t + q) * if k % 3 == 1 { 1.0 } else { -1.0 },
            };
            let count = std::cell::Cell::new(0);
            let counted = |t: f64| {
                count.set(count.get() + 1);
                f(t)
            };
            let t = crossing_time(&counted, [0.0, 1.0], [f(0.0), f(1.0)]);
            assert!(
                t >= r - 4.0 * f64::EPSILON && t - r <= ROOT_WIDTH,
                "root {r}, got {t}"
            );
            assert!(
                f(t) == 0.0 || (f(t) < 0.0) == (f(1.0) < 0.0),
                "{t} is past the root"
            );
            assert!(
                count.get() <= (SLOW + 1) * 44,
                "{} evaluations",
                count.get()
            );
            cases += 1;
            evaluations += count.get();
        }
        let mean = evaluations as f64 / cases as f64;
        assert!(mean < 12.0, "{mean} evaluations per root");
    }

    #[test]
    fn edge_edge_ccd_finds_where_an_edge_passes_through_another() {
        // Edge along x at height 0.3 falling by 1 through a fixed edge along z at height 0.
        let a = [Vec3::new(-1.0, 0.3, 0.2), Vec3::new(-1.0, -0.7, 0.2)];
        let b = [Vec3::new(1.0, 0.3, 0.2), Vec3::new(1.0, -0.7, 0.2)];
        let c = [Vec3::new(0.4, 0.0, -1.0); 2];
        let e = [Vec3::new(0.4, 0.0, 1.0); 2];
        let t = edge_edge_ccd(a, b, c, e, 1e-6).unwrap();
        assert!((t - 0.3).abs() < 1e-12, "t = {t}");
        // Symmetric in the pair.
        assert!((edge_edge_ccd(c, e, a, b, 1e-6).unwrap() - t).abs() < 1e-12);
        // Shifted past the other edge's end (z = 1): they pass by.
        let shift = |x: [Vec3; 2]| x.map(|p| p + Vec3::new(0.0, 0.0, 1.5));
        assert!(edge_edge_ccd(shift(a), shift(b), c, e, 1e-6).is_none());
        // Stopping short of it.
        let short = |x: [Vec3; 2]| [x[0], x[0] + (x[1] - x[0]) * 0.25];
        assert!(edge_edge_ccd(short(a), short(b), c, e, 1e-6).is_none());
    }

    #[test]
    fn edge_edge_ccd_agrees_with_dense_sampling_on_random_motions() {
        let mut rnd = uniform(7);
        let mut hits = 0;
        for _ in 0..400 {
            let mut path = || random_path(&mut rnd);
            let (a, b, c, e) = (path(), path(), path(), path());
            // Brute force: the sign of the oriented volume of the two edges flips between
            // samples where their closest points are interior and nearly meet.
            let at = |x: &[Vec3; 2], t: f64| x[0] + (x[1] - x[0]) * t;
            let n = 20_000;
            let mut brute = None;
            let (mut prev_gap, mut prev_side) = (f64::INFINITY, 0.0);
            for k in 0..=n {
                let t = k as f64 / n as f64;
                let (pa, pb, pc, pe) = (at(&a, t), at(&b, t), at(&c, t), at(&e, t));
                let side = (pb - pa).cross(&(pe - pc)).dot(&(pc - pa));
                let (s, u) = segment_closest_params(pa, pb, pc, pe);
                let interior = (0.01..=0.99).contains(&s) && (0.01..=0.99).contains(&u);
                let gap = ((pa + (pb - pa) * s) - (pc + (pe - pc) * u)).norm();
                if k > 0 && side * prev_side < 0.0 && interior && gap.max(prev_gap) < 1e-3 {
                    brute = Some(t);
                    break;
                }
                (prev_gap, prev_side) = (gap, side);
            }
            let ccd = edge_edge_ccd(a, b, c, e, 1e-6);
            if let Some(t) = brute {
                hits += 1;
                let found = ccd.expect("a crossing found by sampling");
                assert!(found <= t + 1e-4, "ccd {found}, sampled {t}");
            }
            if let Some(t) = ccd {
                // Every reported crossing is real: the edges meet at that time.
                let (pa, pb, pc, pe) = (at(&a, t), at(&b, t), at(&c, t), at(&e, t));
                let (s, u) = segment_closest_params(pa, pb, pc, pe);
                let gap = ((pa + (pb - pa) * s) - (pc + (pe - pc) * u)).norm();
                assert!(gap < 1e-9, "gap {gap} at t = {t}");
            }
        }
        assert!(hits >= 10, "the sample has crossings: {hits}");
    }

    #[test]
    fn a_motion_common_to_both_features_changes_no_contact() {
        // Random crossings and misses, then the same with every corner also carried 3 units
        // along one direction: distances between the features are unchanged, so are the
        // contacts, and the distance bound (`reach`) still rules out what cannot touch.
        let mut rnd = uniform(11);
        let (mut edge_hits, mut point_hits) = (0, 0);
        for _ in 0..400 {
            let mut path = || random_path(&mut rnd);
            let (a, b, c, e) = (path(), path(), path(), path());
            let carry = 3.0 * Vec3::new(rnd(), rnd(), rnd()).normalize();
            let moved = |x: [Vec3; 2]| [x[0], x[1] + carry];
            let same = |t0: Option<f64>, t1: Option<f64>| match (t0, t1) {
                (Some(t0), Some(t1)) => (t0 - t1).abs() < 1e-6,
                (t0, t1) => t0.is_none() && t1.is_none(),
            };
            let edges = edge_edge_ccd(a, b, c, e, 1e-6);
            let carried = edge_edge_ccd(moved(a), moved(b), moved(c), moved(e), 1e-6);
            assert!(same(edges, carried), "{edges:?} vs {carried:?}");
            edge_hits += usize::from(edges.is_some());
            let point = point_triangle_ccd(a, b, c, e, 0.0);
            let carried = point_triangle_ccd(moved(a), moved(b), moved(c), moved(e), 0.0);
            assert!(same(point, carried), "{point:?} vs {carried:?}");
            point_hits += usize::from(point.is_some());
        }
        assert!(
            edge_hits >= 10 && point_hits >= 10,
            "{edge_hits}, {point_hits}"
        );
        // A point falling 1 through a triangle 0.9 under it, and an edge through an edge,
        // all carried 3 units sideways: found, at t = 0.9.
        let carry = Vec3::new(3.0, 0.0, 1.0);
        let still = |p: Vec3| [p, p + carry];
        let falls = |p: Vec3| [p, p + carry - Vec3::y()];
        let top = Vec3::new(0.1, 0.9, 0.1);
        let t = point_triangle_ccd(
            falls(top),
            still(Vec3::zeros()),
            still(Vec3::x()),
            still(Vec3::z()),
            0.0,
        );
        assert!(t.is_some_and(|t| (t - 0.9).abs() < 1e-9), "{t:?}");
        let (a, b) = (Vec3::new(0.5, 0.9, -1.0), Vec3::new(0.5, 0.9, 1.0));
        let t = edge_edge_ccd(
            falls(a),
            falls(b),
            still(Vec3::zeros()),
            still(Vec3::x()),
            1e-6,
        );
        assert!(t.is_some_and(|t| (t - 0.9).abs() < 1e-9), "{t:?}");
        // Carried together, two parallel edges 1 mm apart are ruled out by the bound alone.
        let (a, b) = (Vec3::zeros(), Vec3::x());
        let lift = 1e-3 * Vec3::y();
        let carried = |p: Vec3| [p, p + Vec3::new(0.0, -0.05, 0.02)];
        let reach_together = reach(
            &[carried(a), carried(b)],
            &[carried(a + lift), carried(b + lift)],
        );
        assert!(reach_together < 1e-12, "{reach_together}");
    }

    #[test]
    fn segment_closest_params_find_the_common_perpendicular() {
        let (s, u) = segment_closest_params(
            Vec3::new(-1.0, 0.0, 0.0),
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(0.5, -1.0, 0.2),
            Vec3::new(0.5, 1.0, 0.2),
        );
        assert!((s - 0.75).abs() < 1e-12 && (u - 0.5).abs() < 1e-12);
    }
}
