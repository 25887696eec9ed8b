//! Tests of self-collision detection and the repulsion springs ([`super`]).
use super::*;
use crate::collision::geometry::{closest_point_barycentric, point_triangle_ccd};

#[test]
fn repulsion_matches_finite_differences_and_only_pushes() {
    let x = [
        Vec3::new(0.2, 0.3, 0.001),
        Vec3::new(0.0, 0.0, 0.0),
        Vec3::new(1.0, 0.0, 0.0),
        Vec3::new(0.0, 1.0, 0.0),
    ];
    let v = [
        Vec3::new(0.1, -0.2, -0.5),
        Vec3::new(0.0, 0.1, 0.2),
        Vec3::new(-0.1, 0.0, 0.3),
        Vec3::new(0.05, 0.0, 0.1),
    ];
    let w = closest_point_barycentric(x[0], x[1], x[2], x[3]);
    let r = Repulsion {
        nodes: [0, 1, 2, 3],
        gamma: [1.0, -w[0], -w[1], -w[2]],
        normal: Vec3::z(),
        point_triangle: true,
        slack: 0.0,
    };
    let (d, k, kd) = (0.004, 5e3, 5.0);
    let e = repulsion_forces(&r, &x, &v, d, k, kd, JacobianMode::Exact);
    // Pushes the point away from the triangle (+z), equal and opposite on the triangle.
    assert!(e.f[0].z > 0.0);
    let total: Vec3 = e.f.iter().sum();
    assert!(total.norm() < 1e-12 * e.f[0].norm());
    let force =
        |x: &[Vec3; 4], v: &[Vec3; 4]| repulsion_forces(&r, x, v, d, k, kd, JacobianMode::Exact).f;
    let h = 1e-7;
    let mut worst: f64 = 0.0;
    for b in 0..4 {
        for j in 0..3 {
            let (mut xp, mut xm, mut vp, mut vm) = (x, x, v, v);
            xp[b][j] += h;
            xm[b][j] -= h;
            vp[b][j] += h;
            vm[b][j] -= h;
            let (fp, fm, gp, gm) = (
                force(&xp, &v),
                force(&xm, &v),
                force(&x, &vp),
                force(&x, &vm),
            );
            for a in 0..4 {
                let dx = (fp[a] - fm[a]) / (2.0 * h);
                let dv = (gp[a] - gm[a]) / (2.0 * h);
                worst = worst.max((dx - e.dfdx[a][b].column(j)).amax() / e.dfdx[0][0].amax());
                worst = worst.max((dv - e.dfdv[a][b].column(j)).amax() / e.dfdv[0][0].amax());
            }
        }
    }
    assert!(worst < 1e-6, "relative FD error {worst}");
    assert!(asymmetry(&e.dfdx) < 1e-9 && asymmetry(&e.dfdv) < 1e-9);
    // Beyond the distance: no force.
    let far = [x[0] + Vec3::new(0.0, 0.0, 0.01), x[1], x[2], x[3]];
    assert_eq!(
        repulsion_forces(&r, &far, &v, d, k, kd, JacobianMode::Exact).f,
        [Vec3::zeros(); 4]
    );
}

#[test]
fn a_point_that_crossed_a_triangle_is_moved_back_to_its_side() {
    use crate::fixtures::{sheet, SheetPins, SheetPlane, SheetSpec};
    use crate::model::{ClothModel, UvScale};
    // Two separate triangles' worth of cloth: a 2 × 2 sheet (two triangles) and a free
    // particle far from it, so the particle takes part in no triangle of its own.
    let g = sheet(&SheetSpec {
        n: 3,
        size: 0.1,
        plane: SheetPlane::Horizontal,
        pins: SheetPins::None,
        ..SheetSpec::default()
    });
    let model = ClothModel::build(&g, UvScale::Auto, 0.1).unwrap();
    let d = 0.004;
    let mut sc = SelfCollision::new(&model, d);
    // Fold: particle 8 (a corner) brought 2 mm above the triangle fan near particle 0.
    let mut x = model.positions.clone();
    let target = (x[0] + x[1] + x[3]) / 3.0;
    x[8] = target + Vec3::new(0.0, 0.002, 0.0);
    let (springs, alterations) = sc.detect(&x);
    sc.accept();
    let ours: Vec<&Repulsion> = springs
        .iter()
        .filter(|r| r.nodes[0] == 8 && r.point_triangle)
        .collect();
    assert!(!ours.is_empty(), "the close pair has a spring");
    assert!(alterations.is_empty());
    let n = ours[0].normal;
    assert!(n.y > 0.99, "separation points up: {n}");
    // 2 mm apart, half of d: the spring pushes them to 2 mm + PUSH_PER_STEP · d this step.
    let slack = (1.0 - 0.5 - PUSH_PER_STEP) * d;
    assert!(
        (ours[0].slack - slack).abs() < 1e-12,
        "slack {}",
        ours[0].slack
    );
    // Next step it has passed 1 mm below: the spring keeps its up direction and the
    // particle is moved back up to distance d above.
    x[8] = target - Vec3::new(0.0, 0.001, 0.0);
    let (springs, alterations) = sc.detect(&x);
    let (p, y) = alterations
        .iter()
        .copied()
        .find(|(p, _)| *p == 8)
        .expect("repaired");
    assert_eq!(p, 8);
    assert!(
        (y - Vec3::new(0.0, d + 0.001, 0.0)).norm() < 1e-9,
        "y = {y}"
    );
    // Its spring holds it at d, the distance the alteration restores: no slack.
    let kept = springs
        .iter()
        .find(|r| r.nodes[0] == 8 && r.normal.y > 0.99);
    assert_eq!(kept.expect("kept").slack, 0.0);
}

#[test]
fn a_spring_pushes_at_most_a_share_of_the_distance_per_step() {
    let d = 0.004;
    // Apart by at least (1 − PUSH_PER_STEP) d: the spring pushes to d.
    assert_eq!(step_slack(0.9 * d, d), 0.0);
    assert_eq!(step_slack((1.0 - PUSH_PER_STEP) * d, d), 0.0);
    // Closer: to `dist + PUSH_PER_STEP · d`, where its force ends.
    let dist = 0.2 * d;
    let slack = step_slack(dist, d);
    assert!((slack - (0.8 - PUSH_PER_STEP) * d).abs() < 1e-15);
    let spring = Repulsion {
        nodes: [0, 1, 2, 3],
        gamma: [1.0, -1.0 / 3.0, -1.0 / 3.0, -1.0 / 3.0],
        normal: Vec3::z(),
        point_triangle: true,
        slack,
    };
    let triangle = [Vec3::new(0.0, 0.0, 0.0), Vec3::x(), Vec3::y()];
    let at = |z: f64| {
        let x = [
            Vec3::new(1.0 / 3.0, 1.0 / 3.0, z),
            triangle[0],
            triangle[1],
            triangle[2],
        ];
        let v = [Vec3::zeros(); 4];
        repulsion_forces(&spring, &x, &v, d, 5e3, 5.0, JacobianMode::Exact).f[0].z
    };
    let reach = dist + PUSH_PER_STEP * d;
    assert!(at(dist) > 0.0 && at(reach - 1e-6) > 0.0);
    assert_eq!(at(reach + 1e-9), 0.0);
    // The force is that of a spring of rest length `reach`: k (reach − z).
    assert!((at(dist) - 5e3 * (reach - dist)).abs() < 1e-9);
}

#[test]
fn a_retried_detection_reuses_the_search_and_accepting_resets_it() {
    use crate::fixtures::{sheet, SheetPins, SheetPlane, SheetSpec};
    use crate::model::{ClothModel, UvScale};
    let g = sheet(&SheetSpec {
        n: 6,
        size: 0.1,
        plane: SheetPlane::Horizontal,
        pins: SheetPins::None,
        ..SheetSpec::default()
    });
    let model = ClothModel::build(&g, UvScale::Auto, 0.1).unwrap();
    let mut sc = SelfCollision::new(&model, 0.004);
    // Fold the last row 2 mm above the first rows, so there are springs to find.
    let mut x = model.positions.clone();
    let n = x.len();
    for p in &mut x[n - 6..] {
        *p = Vec3::new(p.x, 0.002, -0.05 + 0.01);
    }
    let fresh = sc.clone().detect(&x);
    let first = sc.detect(&x);
    assert!(!first.0.is_empty());
    assert_eq!(first, fresh);
    // Retried at the same positions: same answer, from the cache.
    assert!(sc.last.is_some());
    assert_eq!(sc.detect(&x), first);
    // An accepted step forgets it; other positions search again.
    sc.accept();
    assert!(sc.last.is_none());
    x[0].y += 1e-3;
    let moved = sc.detect(&x);
    assert_eq!(moved, sc.clone_without_cache().detect(&x));
    // A crossing check that finds none keeps the springs at its end, and the next
    // detection there takes them: the same as searching afresh.
    sc.accept();
    let mut end = x.clone();
    for p in &mut end[n - 6..] {
        p.y -= 5e-4;
    }
    assert!(!sc.crosses(&x, &end));
    assert!(sc.at_end.is_some());
    let fresh = sc.clone_without_cache().detect(&end);
    assert_eq!(sc.detect(&end), fresh);
    assert!(sc.at_end.is_none() && !fresh.0.is_empty());
}

#[test]
fn an_edge_passing_through_an_edge_is_a_crossing() {
    use crate::fixtures::{sheet, SheetSpec};
    use crate::model::{ClothModel, UvScale};
    // Two triangles in perpendicular planes, 10 cm across: the bottom edge of the first
    // (plane z = 0) falls through the top edge of the second (plane x = 0). No corner
    // passes through a face, so only the edge–edge test sees it.
    let mut g = sheet(&SheetSpec::default());
    g.positions = [
        (-1.0, 0.1, 0.0),
        (1.0, 0.1, 0.0),
        (0.0, 1.1, 0.0),
        (0.0, 0.0, -1.0),
        (0.0, 0.0, 1.0),
        (0.0, -1.0, 0.0),
    ]
    .map(|(x, y, z)| 0.1 * Vec3::new(x, y, z))
    .to_vec();
    g.triangles = vec![[0, 1, 2], [3, 4, 5]];
    g.corner_uvs = vec![g.corner_uvs[0]; 2];
    g.pin = vec![0.0; 6];
    g.output_points = (0..6).collect();
    g.output_faces = Default::default();
    let model = ClothModel::build(&g, UvScale::Auto, 0.1).unwrap();
    assert_eq!(model.positions, g.positions);
    let mut sc = SelfCollision::new(&model, 0.004);
    let x0 = model.positions.clone();
    let fall = |dy: f64| {
        let mut x = x0.clone();
        x[..3].iter_mut().for_each(|p| p.y -= dy);
        x
    };
    let x1 = fall(0.02);
    for (p, t) in [(0, 1), (1, 1), (2, 1), (3, 0), (4, 0), (5, 0)] {
        let [a, b, c] = model.triangles[t];
        let path = |i: usize| [x0[i], x1[i]];
        assert!(point_triangle_ccd(path(p), path(a), path(b), path(c), 0.0).is_none());
    }
    assert!(sc.crosses(&x0, &x1));
    // The pair's particles: the falling edge's and the edge it passed through.
    assert_eq!(sc.crossings(&x0, &x1), [0, 1, 3, 4]);
    // A corner of the second triangle pushed through the first: the point and the
    // triangle's corners are among the pairs' particles.
    let (mut start, mut end) = (x0.clone(), x0.clone());
    start[3] = Vec3::new(0.0, 0.05, -0.1);
    end[3] = Vec3::new(0.0, 0.05, 0.1);
    let through = sc.crossings(&start, &end);
    assert!(
        [0, 1, 2, 3].iter().all(|i| through.contains(i)),
        "{through:?}"
    );
    assert!(!sc.crosses(&x0, &fall(0.005)), "stops 5 mm short");
    // Already touching at the start is not a new crossing.
    assert!(!sc.crosses(&fall(0.01), &fall(0.01)));
}

/// The springs (sorted) or crossing particles that testing every pair of features finds
/// on the paths `x0 → x1`: what [`SelfCollision::search`] must find with its culling.
fn every_pair(sc: &SelfCollision, x0: &[Vec3], x1: &[Vec3]) -> Result<Vec<Repulsion>, Vec<usize>> {
    let (d, moving) = (sc.distance, x0 != x1);
    let (mut springs, mut crossed) = (Vec::new(), Vec::new());
    for p in 0..x0.len() {
        for &tri in sc.triangles.iter().filter(|t| !t.contains(&p)) {
            match point_triangle_pair((x0, x1), p, tri, d, (moving, FLAT * d)) {
                Err(Crossing) => crossed.extend([p, tri[0], tri[1], tri[2]]),
                Ok(spring) => springs.extend(spring),
            }
        }
    }
    for (i, &e) in sc.edges.iter().enumerate() {
        for &f in sc.edges[i + 1..].iter().filter(|&&f| !adjacent(e, f)) {
            match edge_edge_pair((x0, x1), e, f, d, (moving, FLAT * d)) {
                Err(Crossing) => crossed.extend([e[0], e[1], f[0], f[1]]),
                Ok(spring) => springs.extend(spring),
            }
        }
    }
    crossed.sort_unstable();
    crossed.dedup();
    if !crossed.is_empty() {
        return Err(crossed);
    }
    springs.sort_by_key(|a| (a.point_triangle, a.nodes));
    Ok(springs)
}

#[test]
fn the_culled_search_finds_what_testing_every_pair_finds() {
    use crate::fixtures::{sheet, SheetPins, SheetPlane, SheetSpec};
    use crate::model::{ClothModel, UvScale};
    use std::f64::consts::PI;
    // A 1 m sheet in the x–z plane, 25 × 13 particles; its positions are replaced below.
    let g = sheet(&SheetSpec {
        n: 25,
        size: 1.0,
        plane: SheetPlane::Horizontal,
        pins: SheetPins::None,
        ..SheetSpec::default()
    });
    let mut model = ClothModel::build(&g, UvScale::Auto, 0.1).unwrap();
    let uv: Vec<(f64, f64)> = (model.positions.iter())
        .map(|p| (p.x + 0.5, p.z + 0.5))
        .collect();
    let d = 0.004;
    // A ramp of 1.5 turns whose turns lie `gap` apart: every normal within a few degrees
    // of up, so only the contour test keeps the whole ramp from counting as one patch.
    let ramp = |gap: f64| -> Vec<Vec3> {
        (uv.iter())
            .map(|&(u, v)| {
                let (theta, r) = (3.0 * PI * u, 0.2 + 1.8 * v);
                Vec3::new(r * theta.cos(), gap * theta / (2.0 * PI), r * theta.sin())
            })
            .collect()
    };
    // A crumpled sheet: waves steep enough to turn its normals past the cones' limit.
    let waves = |a: f64, phase: f64| -> Vec<Vec3> {
        (uv.iter())
            .map(|&(u, v)| {
                let h = a * ((7.0 * u + phase).sin() * (5.0 * v).cos());
                Vec3::new(u + 0.3 * a * (9.0 * v).sin(), h, v)
            })
            .collect()
    };
    // Folded in half along u = 0.5, the upper half `gap` above the lower one.
    let folded = |gap: f64| -> Vec<Vec3> {
        (uv.iter())
            .map(|&(u, v)| match u <= 0.5 {
                true => Vec3::new(u, 0.0, v),
                false => Vec3::new(1.0 - u, gap + 0.2 * (u - 0.5) * (u - 0.5), v),
            })
            .collect()
    };
    // A tuck: the interior folded over itself within a height of d / 4, the border square
    // as before: only the cones keep the whole sheet from counting as one patch.
    let tuck: Vec<Vec3> = (uv.iter())
        .map(|&(u, v)| {
            let bump = 0.6 * (PI * u).sin().powi(2) * (PI * v).sin().powi(2);
            Vec3::new(u + bump, 0.25 * d * u * v, v)
        })
        .collect();
    // Per case: whether the cloth is squeezed in its own surface, so that features of one
    // culled patch lie side by side closer than d (the springs the search leaves out).
    let cases = [
        ("tucked", tuck.clone(), tuck, true),
        ("ramp at rest", ramp(0.75 * d), ramp(0.75 * d), false),
        ("ramp closing", ramp(4.0 * d), ramp(0.5 * d), false),
        (
            "ramp passing through itself",
            ramp(2.0 * d),
            ramp(-2.0 * d),
            false,
        ),
        ("crumpled", waves(0.05, 0.0), waves(0.2, 0.7), false),
        ("folded at rest", folded(0.5 * d), folded(0.5 * d), false),
        ("fold pushed through", folded(2.0 * d), folded(-0.01), false),
    ];
    let (mut with_springs, mut with_crossings) = (0, 0);
    for (name, x0, x1, squeezed) in cases {
        model.positions = x0.clone();
        let mut sc = SelfCollision::new(&model, d);
        let want = every_pair(&sc, &x0, &x1);
        let got = sc.search(&x0, &x1).map(|mut springs| {
            springs.sort_by_key(|a| (a.point_triangle, a.nodes));
            springs
        });
        let culled = (0..sc.triangles.len())
            .filter(|&t| sc.patches.of_triangle(t) != NO_LABEL)
            .count();
        assert!(culled > 0, "{name}: the search culled no patch");
        // A spring between two features lying on one culled patch.
        let within_patch = |r: &Repulsion| match r.point_triangle {
            true => {
                let tri = [r.nodes[1], r.nodes[2], r.nodes[3]];
                let t = sc.triangles.iter().position(|&u| u == tri).unwrap();
                (sc.patches.of_particle(r.nodes[0])).hold(sc.patches.of_triangle(t))
            }
            false => {
                let edge =
                    |a: usize, b: usize| sc.edges.binary_search(&[a.min(b), a.max(b)]).unwrap();
                let (e, f) = (edge(r.nodes[0], r.nodes[1]), edge(r.nodes[2], r.nodes[3]));
                sc.patches.share_edges(e, f)
            }
        };
        match (&got, &want) {
            (Ok(got), Ok(want)) => {
                let kept: Vec<Repulsion> =
                    want.iter().filter(|r| !within_patch(r)).copied().collect();
                assert_eq!(got, &kept, "{name}");
                let left_out = want.len() - kept.len();
                assert_eq!(
                    left_out > 0,
                    squeezed,
                    "{name}: {left_out} springs left out"
                );
                // They push within the sheet's plane, never through its thickness (up).
                for r in want.iter().filter(|r| within_patch(r)) {
                    assert!(r.normal.y.abs() < 0.5, "{name}: {r:?} left out");
                }
            }
            // Crossings are never culled.
            _ => assert_eq!(got, want, "{name}"),
        }
        with_springs += usize::from(want.as_ref().is_ok_and(|s| !s.is_empty()));
        with_crossings += usize::from(want.is_err());
    }
    assert!(
        with_springs >= 4 && with_crossings >= 2,
        "{with_springs} {with_crossings}"
    );
}
