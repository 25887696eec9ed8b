//! Tests of the limit on the stretch a step adds.
use super::*;
use crate::fixtures::{sheet, SheetPins, SheetPlane, SheetSpec, SheetUv};
use crate::model::UvScale;
use crate::pipeline::stretch_measures;

/// Sweeps of the simulations with the limit on (it is off by default).
const SWEEPS: usize = 80;

/// A flat, horizontal 0.5 m sheet of `n × n` particles with UVs in metres (at rest as
/// built).
fn model(n: usize) -> ClothModel {
    let g = sheet(&SheetSpec {
        n,
        size: 0.5,
        uv: SheetUv::Metres,
        pins: SheetPins::None,
        plane: SheetPlane::Horizontal,
        ..SheetSpec::default()
    });
    ClothModel::build(&g, UvScale::Fixed(1.0), 0.1).unwrap()
}

/// The bounds of a step that starts from the sheet as built, allowing `allow`.
fn rest_bounds(m: &ClothModel, allow: f64) -> Vec<[f64; 2]> {
    bounds(
        &stretch_measures(&m.triangles, &m.rest, &m.positions),
        allow,
    )
}

/// The 2 × 2 sheet (two triangles), its first triangle, bounds that allow no added
/// stretch, and its positions as built.
fn one_triangle() -> (ClothModel, [usize; 3], Vec<[f64; 2]>, Vec<Vec3>) {
    let m = model(2);
    let (tri, bound, x) = (m.triangles[0], rest_bounds(&m, 0.0), m.positions.clone());
    (m, tri, bound, x)
}

/// Largest `s − bound` over all triangles and both measures.
fn worst_excess(m: &ClothModel, bound: &[[f64; 2]], x: &[Vec3]) -> f64 {
    let s = stretch_measures(&m.triangles, &m.rest, x);
    (s.iter().zip(bound))
        .flat_map(|(s, b)| [s[0] - b[0], s[1] - b[1]])
        .fold(f64::MIN, f64::max)
}

/// [`StretchLimit::apply`] with no particle constrained or held.
fn unheld(
    limit: &mut StretchLimit,
    m: &ClothModel,
    bound: &[[f64; 2]],
    tolerance: f64,
    max_sweeps: usize,
    x: &mut [Vec3],
) -> Limited {
    let settle = Settle {
        tolerance,
        max_sweeps,
    };
    limit.apply(m, bound, &[], |_| false, settle, x)
}

/// Each particle moved along a straight line as a linearised step moves it under a turn of
/// `angle` about the sheet's normal through its centre, plus a smooth ripple: every
/// triangle ends stretched by about `angle²/2`, unevenly.
fn turned(m: &ClothModel, angle: f64) -> Vec<Vec3> {
    let c = m.positions.iter().sum::<Vec3>() / m.len() as f64;
    let axis = Vec3::y();
    m.positions
        .iter()
        .map(|p| {
            let r = p - c;
            let ripple = 0.01 * Vec3::new((9.0 * p.z).sin(), 0.0, (7.0 * p.x).cos());
            p + angle * axis.cross(&r) + ripple
        })
        .collect()
}

#[test]
fn a_turned_sheet_is_pulled_back_within_its_bounds_without_moving_its_centre_of_mass() {
    let m = model(12);
    let allow = 0.01;
    let bound = rest_bounds(&m, allow);
    let proposed = turned(&m, 0.3);
    let before = worst_excess(&m, &bound, &proposed);
    assert!(
        before > 0.03,
        "the turn must stretch past the bound: {before}"
    );
    let tolerance = 1e-4 * allow;
    let mut limit = StretchLimit::default();
    let mut x = proposed.clone();
    let once = unheld(&mut limit, &m, &bound, tolerance, 1, &mut x);
    assert!(
        !once.converged,
        "one sweep cannot settle a whole sheet: {once:?}"
    );
    let mut x = proposed.clone();
    let out = unheld(&mut limit, &m, &bound, tolerance, 500, &mut x);
    assert!(out.violating > 100, "{out:?}");
    assert!(
        out.converged && out.sweeps < 500,
        "the sweeps must converge: {out:?}"
    );
    let after = worst_excess(&m, &bound, &x);
    assert!(after <= tolerance, "excess {before} -> {after}");
    // Σ_i c_i = 0 for both measures: every projection keeps Σ m_i x_i.
    let moment = |x: &[Vec3]| (x.iter().zip(&m.mass)).map(|(p, &mi)| mi * p).sum::<Vec3>();
    let shift = (moment(&x) - moment(&proposed)).norm() / m.mass.iter().sum::<f64>();
    assert!(shift < 1e-14, "centre of mass moved {shift} m");
}

#[test]
fn one_projection_keeps_the_angular_moment_of_the_displacement_zero() {
    // Σ_i m_i x_i × δx_i = −λ (Σ_i c_i x_i) × ŵ = −λ w × ŵ = 0 (module doc).
    let (m, tri, bound, mut x) = one_triangle();
    x[tri[1]] += Vec3::new(0.07, 0.02, -0.03);
    x[tri[2]] += Vec3::new(-0.01, 0.05, 0.04);
    let proposed = x.clone();
    unheld(&mut StretchLimit::default(), &m, &bound, 0.0, 1, &mut x);
    let mut moment = Vec3::zeros();
    let mut scale: f64 = 0.0;
    for i in 0..m.len() {
        let dx = x[i] - proposed[i];
        moment += m.mass[i] * x[i].cross(&dx);
        scale = scale.max(m.mass[i] * x[i].norm() * dx.norm());
    }
    assert!(scale > 1e-6, "the triangle must have been projected");
    assert!(moment.norm() < 1e-12 * scale, "{moment:?} against {scale}");
}

#[test]
fn a_pinned_corner_stays_and_a_corner_in_contact_only_slides() {
    let (m, tri, bound, mut x) = one_triangle();
    for (k, &i) in tri.iter().enumerate() {
        x[i] *= 1.0 + 0.1 * (k + 1) as f64;
    }
    let proposed = x.clone();
    let n = Vec3::new(0.3, 1.0, -0.2).normalize();
    let constraints = [
        Constraint {
            particle: tri[0],
            filter: Mat3::zeros(),
            z: Vec3::zeros(),
        },
        Constraint {
            particle: tri[1],
            filter: Mat3::identity() - n * n.transpose(),
            z: Vec3::zeros(),
        },
    ];
    let tolerance = 1e-9;
    let out = StretchLimit::default().apply(
        &m,
        &bound,
        &constraints,
        |_| false,
        Settle {
            tolerance,
            max_sweeps: 2000,
        },
        &mut x,
    );
    assert!(out.violating > 0, "{out:?}");
    assert_eq!(x[tri[0]], proposed[tri[0]], "the pinned corner moved");
    let slide = x[tri[1]] - proposed[tri[1]];
    assert!(
        slide.norm() > 1e-3,
        "the contact corner must slide: {slide:?}"
    );
    assert!(
        slide.dot(&n).abs() < 1e-12 * slide.norm(),
        "it left the body: {slide:?}"
    );
    assert!(worst_excess(&m, &bound, &x) <= tolerance);
}

#[test]
fn a_step_within_its_bounds_is_left_as_it_was() {
    let m = model(6);
    let bound = rest_bounds(&m, 0.01);
    let proposed = turned(&m, 0.05);
    assert!(worst_excess(&m, &bound, &proposed) < 0.0);
    let mut x = proposed.clone();
    let out = unheld(&mut StretchLimit::default(), &m, &bound, 0.0, 20, &mut x);
    let untouched = Limited {
        converged: true,
        ..Limited::default()
    };
    assert_eq!(out, untouched);
    assert_eq!(x, proposed);
}

#[test]
fn bounds_start_at_rest_for_a_compressed_triangle() {
    let b = bounds(&[[0.9, 1.05], [1.0, 1.0]], 0.01);
    assert_eq!(b, vec![[1.01, 1.06], [1.01, 1.01]]);
}

#[test]
fn a_sheet_meeting_a_sphere_needs_fewer_rejections_and_stays_within_the_limit() {
    let (g, sphere) = crate::bench::drape_over_sphere(21);
    let material = crate::scene::Material::default();
    let run = |sweeps: usize| {
        let mut p = crate::bench::default_params();
        p.stretch_sweeps = sweeps;
        crate::bench::run_scene(&g, std::slice::from_ref(&sphere), &material, &p, 24.0, 24).unwrap()
    };
    let (limited, rejected) = (run(SWEEPS), run(0));
    assert!(
        limited.rejections < rejected.rejections,
        "rejections {} with the limit, {} without",
        limited.rejections,
        rejected.rejections
    );
    assert!(
        limited.final_max_strain < 0.05,
        "strain {} (without the limit {})",
        limited.final_max_strain,
        rejected.final_max_strain
    );
}

#[test]
fn free_cloth_takes_baraffs_steps_alone() {
    // No body contact: the limit stays off (SolverParams::stretch_sweeps), and the
    // two-corner sheet of Baraff fig. 2 moves exactly as without it.
    let g = crate::bench::sheet(12);
    let material = crate::scene::Material::default();
    let run = |sweeps: usize| {
        let mut p = crate::bench::default_params();
        p.stretch_sweeps = sweeps;
        let model = ClothModel::build(&g, UvScale::Auto, material.density).unwrap();
        let mut sim = crate::pipeline::Simulator::new(model, &material, &g.pin, p);
        let mut rejections = 0;
        for _ in 0..12 {
            rejections += sim.advance(1.0 / 24.0).unwrap().rejections;
        }
        (sim.positions().to_vec(), rejections)
    };
    let (with, without) = (run(SWEEPS), run(0));
    assert!(without.1 > 0, "the sheet's fall must have rejected steps");
    assert_eq!(with, without);
}

#[test]
fn a_held_particle_stays_and_is_asked_about_once_when_a_sweep_reaches_it() {
    let m = model(12);
    let bound = rest_bounds(&m, 0.01);
    let proposed = turned(&m, 0.3);
    // One particle: two held ones would be too far apart for the sheet between them to
    // shrink back (the turn stretched it all).
    let held = |i: usize| i == 77;
    let asked = std::cell::RefCell::new(Vec::new());
    let mut x = proposed.clone();
    let out = StretchLimit::default().apply(
        &m,
        &bound,
        &[],
        |i| {
            asked.borrow_mut().push(i);
            held(i)
        },
        Settle {
            tolerance: 1e-6,
            max_sweeps: 500,
        },
        &mut x,
    );
    assert!(out.converged && out.violating > 0, "{out:?}");
    let mut asked = asked.into_inner();
    let times = asked.len();
    asked.sort_unstable();
    asked.dedup();
    assert_eq!(times, asked.len(), "a particle was asked about twice");
    let mut moved = 0;
    for i in 0..m.len() {
        if held(i) {
            assert_eq!(x[i], proposed[i], "held particle {i} moved");
        } else if x[i] != proposed[i] {
            moved += 1;
            assert!(asked.binary_search(&i).is_ok(), "{i} moved unasked");
        }
    }
    assert!(moved > m.len() / 2, "only {moved} particles moved");
}

#[test]
fn widening_adds_every_triangle_around_a_moved_corner_in_order() {
    let m = model(8);
    let mut limit = StretchLimit::default();
    limit.index(&m);
    // The sweep with every triangle around a corner of `moved` (by brute force).
    let widened = |sweep: &[u32], moved: &[usize]| -> Vec<u32> {
        let corners: Vec<usize> = moved.iter().flat_map(|&t| m.triangles[t]).collect();
        let around = |t: &[usize; 3]| t.iter().any(|i| corners.contains(i));
        let mut all: Vec<u32> = (0..m.triangles.len() as u32)
            .filter(|&t| sweep.contains(&t) || around(&m.triangles[t as usize]))
            .collect();
        all.dedup();
        all
    };
    let mut sweep = vec![5u32, 40, 41];
    for &t in &sweep {
        limit.queued[t as usize] = true;
    }
    // Corners met again (5 twice, then beside 40) and a moved triangle the sweep reached
    // only by widening (`moved` lies in the sweep in `apply`).
    for moved in [vec![5], vec![5, 40], vec![41, 6], vec![60]] {
        let want = widened(&sweep, &moved);
        let before = sweep.clone();
        let added = limit.widen(&m, &moved, &mut sweep);
        assert_eq!(sweep, want, "after moving {moved:?}");
        let new: Vec<u32> = want.into_iter().filter(|t| !before.contains(t)).collect();
        assert_eq!(added, new, "added by {moved:?}");
    }
}

#[test]
fn a_limit_applied_again_does_the_same_as_a_fresh_one() {
    // The marks of one `apply` (queued triangles, expanded corners) must not leak into
    // the next: one particle pulled out of a sheet at rest, whose sweeps must widen from
    // its own triangles to their neighbours, limited twice by one limit and once each by
    // fresh ones.
    let m = model(12);
    let bound = rest_bounds(&m, 0.01);
    let pulled = |i: usize, by: Vec3| {
        let mut x = m.positions.clone();
        x[i] += by;
        x
    };
    let mut used = StretchLimit::default();
    for (i, by) in [(77, 0.02), (77, 0.02), (64, 0.015)] {
        let by = Vec3::new(by, 0.5 * by, 0.2 * by);
        let (mut again, mut fresh) = (pulled(i, by), pulled(i, by));
        let a = unheld(&mut used, &m, &bound, 1e-6, 500, &mut again);
        let b = unheld(
            &mut StretchLimit::default(),
            &m,
            &bound,
            1e-6,
            500,
            &mut fresh,
        );
        assert!(b.converged && b.sweeps > 3, "{b:?}");
        assert_eq!(a, b, "particle {i}");
        assert!(again == fresh, "particle {i}: the positions differ");
    }
}

#[test]
fn spreading_marks_the_triangles_around_a_particle() {
    // Grid spacing h = 0.5 / 8; the particle at the centre of the 9 × 9 sheet.
    let m = model(9);
    let h = 0.5 / 8.0;
    let centre = m.positions.iter().sum::<Vec3>() / m.len() as f64;
    let seed = (0..m.len())
        .min_by(|&a, &b| {
            let d = |i: usize| (m.positions[i] - centre).norm();
            d(a).total_cmp(&d(b))
        })
        .unwrap();
    assert!((m.positions[seed] - centre).norm() < 1e-9);
    let mut marked = vec![false; m.len()];
    marked[seed] = true;
    spread(&m, &mut marked);
    for (i, p) in m.positions.iter().enumerate() {
        let r = (p - m.positions[seed]).norm();
        if r < 1.01 * h {
            assert!(marked[i], "edge neighbour {i} at {r} not marked");
        }
        if r > 1.5 * h {
            assert!(!marked[i], "{i} at {r} marked");
        }
    }
    let count = marked.iter().filter(|&&b| b).count();
    assert!((7..=9).contains(&count), "{count} marked");
}
