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
/// Roots are bracketed between the cubic's critical points and refined by bisection; a root
/// counts if the point's barycentric coordinates in the triangle at that time are within
/// `[−tol, 1 + tol]`.
pub fn point_triangle_ccd(
    p: [Vec3; 2],
    a: [Vec3; 2],
    b: [Vec3; 2],
    c: [Vec3; 2],
    tol: f64,
) -> Option<f64> {
    let at = |x: &[Vec3; 2], t: f64| x[0] + (x[1] - x[0]) * t;
    let f = |t: f64| {
        let (pa, pb, pc, pp) = (at(&a, t), at(&b, t), at(&c, t), at(&p, t));
        (pb - pa).cross(&(pc - pa)).dot(&(pp - pa))
    };
    // Cubic coefficients from four samples (exact for a cubic): Lagrange on t = 0, 1/3, 2/3, 1.
    let (f0, f1, f2, f3) = (f(0.0), f(1.0 / 3.0), f(2.0 / 3.0), f(1.0));
    let c3 = 4.5 * (f3 - 3.0 * f2 + 3.0 * f1 - f0);
    let c2 = 9.0 * (f0 - 2.5 * f1 + 2.0 * f2 - 0.5 * f3);
    let c1 = -5.5 * f0 + 9.0 * f1 - 4.5 * f2 + f3;
    // Split [0, 1] at the critical points (roots of 3 c3 t² + 2 c2 t + c1).
    let mut cuts = vec![0.0, 1.0];
    let (qa, qb, qc) = (3.0 * c3, 2.0 * c2, c1);
    if qa.abs() > 1e-300 {
        let disc = qb * qb - 4.0 * qa * qc;
        if disc >= 0.0 {
            let s = disc.sqrt();
            cuts.push((-qb - s) / (2.0 * qa));
            cuts.push((-qb + s) / (2.0 * qa));
        }
    } else if qb.abs() > 1e-300 {
        cuts.push(-qc / qb);
    }
    cuts.retain(|t| (0.0..=1.0).contains(t));
    cuts.sort_by(f64::total_cmp);
    cuts.dedup();
    for w in cuts.windows(2) {
        let (mut lo, mut hi) = (w[0], w[1]);
        let (mut flo, fhi) = (f(lo), f(hi));
        let root = if flo == 0.0 {
            Some(lo)
        } else if flo * fhi > 0.0 {
            None
        } else {
            for _ in 0..60 {
                let mid = 0.5 * (lo + hi);
                let fm = f(mid);
                if (fm < 0.0) == (flo < 0.0) {
                    lo = mid;
                    flo = fm;
                } else {
                    hi = mid;
                }
            }
            Some(hi)
        };
        if let Some(t) = root {
            let (pa, pb, pc, pp) = (at(&a, t), at(&b, t), at(&c, t), at(&p, t));
            if inside_triangle(pp, pa, pb, pc, tol) {
                return Some(t);
            }
        }
    }
    None
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
}
