//! Tests of the geometric predicates and continuous collision tests ([`super`]).
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

#[test]
fn beyond_reach_answers_as_the_full_reach_bound() {
    // The cheap half first must not change a single answer: against `gap > reach + slack`
    // on random paths (some moving together, where only the mean-relative bound is
    // small) and gaps around both bounds and between them.
    let mut rnd = uniform(17);
    let mut decided_by_mean = 0;
    for k in 0..2000 {
        let shift = if k % 2 == 0 {
            Vec3::zeros()
        } else {
            Vec3::new(rnd(), rnd(), rnd())
        };
        let mut path = || {
            let [a, b] = random_path(&mut rnd);
            [a, b + shift]
        };
        let (first, second) = ([path(), path()], [path(), path(), path()]);
        let (first, second) = (&first[..1 + k % 2], &second[..2 + k % 2]);
        let slack = 0.01 * rnd().abs();
        let (still, moving) = (still_reach(first, second), moving_reach(first, second));
        let full = reach(first, second);
        let gaps = [full, still, moving, 0.5 * (still + moving)].map(|g| g + slack);
        for gap in gaps.into_iter().flat_map(|g| [0.5 * g, g, 1.01 * g]) {
            let expected = gap > full + slack;
            assert_eq!(
                beyond_reach(gap, slack, first, second),
                expected,
                "case {k}"
            );
            decided_by_mean += usize::from(expected && gap <= still + slack);
        }
    }
    assert!(
        decided_by_mean > 100,
        "{decided_by_mean} answers needed the mean bound"
    );
}

#[test]
fn the_gap_at_either_end_of_the_step_gates_the_crossing_tests_alike() {
    // The self-collision search passes the distance at the end of the step (which its
    // repulsion springs need anyway) where the tests compute the one at the start: the
    // reach bounds the change of the distance from either end, so the answers agree. Long
    // and short motions: short ones put many pairs beyond reach from one end or both.
    let mut rnd = uniform(23);
    let (mut hits, mut gated) = (0, [0, 0]);
    for k in 0..1200 {
        let scale = [1.0, 0.3, 0.08][k % 3];
        let mut path = || {
            let [p, q] = random_path(&mut rnd);
            [p, p + (q - p) * scale]
        };
        let (a, b, c, e) = (path(), path(), path(), path());
        let same = |t0: Option<f64>, t1: Option<f64>| match (t0, t1) {
            (Some(t0), Some(t1)) => t0 == t1,
            (t0, t1) => t0.is_none() && t1.is_none(),
        };
        for end in [0, 1] {
            let (s, u) = segment_closest_params(a[end], b[end], c[end], e[end]);
            let gap = ((a[end] + (b[end] - a[end]) * s) - (c[end] + (e[end] - c[end]) * u)).norm();
            let from = edge_edge_ccd_from(gap, [a, b, c, e], 1e-6);
            let plain = edge_edge_ccd(a, b, c, e, 1e-6);
            assert!(
                same(from, plain),
                "edges, gap at {end}: {from:?} vs {plain:?}"
            );
            gated[end] += usize::from(beyond_reach(gap, 0.0, &[a, b], &[c, e]));
            hits += usize::from(from.is_some());
            let w = closest_point_barycentric(a[end], b[end], c[end], e[end]);
            let gap = (a[end] - (b[end] * w[0] + c[end] * w[1] + e[end] * w[2])).norm();
            let from = point_triangle_ccd_from(gap, [a, b, c, e], 0.0);
            let plain = point_triangle_ccd(a, b, c, e, 0.0);
            assert!(
                same(from, plain),
                "point, gap at {end}: {from:?} vs {plain:?}"
            );
            gated[end] += usize::from(beyond_reach(gap, 0.0, &[a], &[b, c, e]));
            hits += usize::from(from.is_some());
        }
    }
    assert!(hits >= 100, "the sample has crossings: {hits}");
    assert!(
        gated[0] >= 1000 && gated[1] >= 1000,
        "pairs beyond reach: {gated:?}"
    );
}
