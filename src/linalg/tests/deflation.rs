//! Subdomain deflation of the modified PCG ([`crate::linalg::deflation`]): the aggregates,
//! the projection `P_D`, and deflated solves against dense ones.
use super::determinism::in_pool;
use super::solver::{
    dense_constrained_solve, max_abs, max_abs_diff, mixed_constraints, true_relative_residual,
};
use super::{spring_system, Rng};
use crate::linalg::deflation::{Deflation, PROJECT_PRODUCTS_BELOW};
use crate::linalg::{
    modified_pcg_with, BlockCsr, Constraint, PcgResult, PcgScratch, PcgSettings, Preconditioner,
};
use crate::{Mat3, Vec3};

/// The triangular preconditioners deflation applies to.
const DEFLATED: [Preconditioner; 3] = [
    Preconditioner::BlockIncompleteCholesky,
    Preconditioner::BlockGaussSeidel,
    Preconditioner::SparseCholesky,
];

/// Relative tolerance of the solves compared with dense ones.
const TIGHT: f64 = 1e-10;

fn solve(
    a: &BlockCsr,
    b: &[Vec3],
    constraints: &[Constraint],
    p: Preconditioner,
    deflation: bool,
    start: Option<&[Vec3]>,
    tolerance: f64,
) -> (Vec<Vec3>, PcgResult) {
    let settings = PcgSettings {
        tolerance,
        max_iterations: 5000,
        warm_start: start.is_some(),
        deflation,
    };
    let mut dv = start.map_or_else(|| vec![Vec3::repeat(f64::NAN); a.n()], <[Vec3]>::to_vec);
    let mut scratch = PcgScratch::default();
    let res = modified_pcg_with(a, b, constraints, &settings, p, &mut scratch, &mut dv);
    (dv, res)
}

#[test]
fn aggregates_cover_the_grid_in_connected_groups() {
    let (a, _) = spring_system(40, 37, 1.0, 1);
    let mut d = Deflation::default();
    assert!(d.prepare(&a, |_| None));
    let agg = d.aggregate_of().expect("prepared").to_vec();
    let m = agg.iter().max().expect("particles") + 1;
    let mut size = vec![0; m];
    agg.iter().for_each(|&g| size[g] += 1);
    // Two rings on a grid with one diagonal per cell hold 19 particles inside.
    let (min, max) = (size.iter().min().copied(), size.iter().max().copied());
    eprintln!(
        "{} particles in {m} aggregates, sizes {min:?}..{max:?}",
        a.n()
    );
    assert!(size.iter().all(|&s| s >= 2), "no singleton aggregate");
    assert!(m * 8 < a.n() && m * 40 > a.n(), "{m} aggregates");
    // Connected: a search inside each aggregate from its first particle reaches all of it.
    for (g, &count) in size.iter().enumerate() {
        let first = agg.iter().position(|&x| x == g).expect("non-empty");
        let mut seen = vec![false; a.n()];
        let mut stack = vec![first];
        seen[first] = true;
        let mut reached = 0;
        while let Some(i) = stack.pop() {
            reached += 1;
            for &j in a.pattern.row(i) {
                if agg[j] == g && !seen[j] {
                    seen[j] = true;
                    stack.push(j);
                }
            }
        }
        assert_eq!(reached, count, "aggregate {g} is not connected");
    }
}

/// `Σ_{i ∈ J} v_i` per aggregate (`Zᵀ v` of an unconstrained coarse space).
fn per_aggregate(agg: &[usize], v: &[Vec3]) -> Vec<Vec3> {
    let m = agg.iter().max().expect("particles") + 1;
    let mut out = vec![Vec3::zeros(); m];
    agg.iter().zip(v).for_each(|(&g, x)| out[g] += x);
    out
}

#[test]
fn start_and_correction_leave_residuals_orthogonal_to_the_coarse_space() {
    let (a, _) = spring_system(23, 19, 50.0, 2);
    let n = a.n();
    let mut rng = Rng::new(3);
    let random = |rng: &mut Rng| (0..n).map(|_| rng.vec3()).collect::<Vec<_>>();
    // Unconstrained: Z sums over aggregates. After the start Zᵀ r = 0, and Ã Δv moved by
    // exactly what r lost; after the correction Zᵀ Ã s = 0.
    let mut d = Deflation::default();
    assert!(d.prepare(&a, |_| None));
    let agg = d.aggregate_of().expect("prepared").to_vec();
    let r0 = random(&mut rng);
    let (mut r, mut dv) = (r0.clone(), vec![Vec3::zeros(); n]);
    d.begin(&mut r, &mut dv, |_| None);
    let scale = max_abs(&r0);
    assert!(
        max_abs(&per_aggregate(&agg, &r)) < 1e-10 * scale,
        "Zᵀ r ≠ 0"
    );
    let mut adv = vec![Vec3::zeros(); n];
    a.mul_vec(&dv, &mut adv);
    let moved: Vec<Vec3> = (0..n).map(|i| r0[i] - r[i] - adv[i]).collect();
    assert!(max_abs(&moved) < 1e-10 * scale, "r₀ − r ≠ Ã ΔΔv");
    let mut s = random(&mut rng);
    d.correct(&mut s, &r0, |_| None);
    let mut as_ = vec![Vec3::zeros(); n];
    a.mul_vec(&s, &mut as_);
    let tiny = 1e-10 * max_abs(&as_).max(1.0);
    assert!(max_abs(&per_aggregate(&agg, &as_)) < tiny, "Zᵀ Ã s ≠ 0");
    // Constrained (pinned, one and two constrained directions): both maps are
    // projections (a second application changes nothing) and keep vectors filtered.
    let constraints = mixed_constraints(n, 5, &mut rng);
    let filter = |i: usize| {
        (constraints.iter())
            .find(|c| c.particle == i)
            .map(|c| c.filter)
    };
    let filtered = |v: Vec<Vec3>| -> Vec<Vec3> {
        v.iter()
            .enumerate()
            .map(|(i, x)| filter(i).map_or(*x, |s| s * x))
            .collect()
    };
    assert!(d.prepare(&a, filter));
    let mut r = filtered(random(&mut rng));
    let mut dv = vec![Vec3::zeros(); n];
    d.begin(&mut r, &mut dv, filter);
    let (r_once, dv_once) = (r.clone(), dv.clone());
    d.begin(&mut r, &mut dv, filter);
    assert!(max_abs_diff(&r, &r_once) < 1e-10 * max_abs(&r_once));
    assert!(max_abs_diff(&dv, &dv_once) < 1e-10 * max_abs(&dv_once));
    let mut s = filtered(random(&mut rng));
    d.correct(&mut s, &r, filter);
    let once = s.clone();
    d.correct(&mut s, &r, filter);
    assert!(max_abs_diff(&s, &once) < 1e-10 * max_abs(&once));
    for c in &constraints {
        for v in [&r_once, &dv_once, &once] {
            let off = (Mat3::identity() - c.filter) * v[c.particle];
            assert!(off.amax() < 1e-12 * max_abs(v), "{off}");
        }
    }
}

#[test]
fn deflated_solves_match_the_dense_filtered_solve_and_keep_z() {
    let (a, b) = spring_system(21, 18, 200.0, 4);
    let mut rng = Rng::new(5);
    // Every 3rd particle constrained: most aggregates hold some, several are pinned
    // throughout or constrained in one direction.
    let constraints = mixed_constraints(a.n(), 3, &mut rng);
    let reference = dense_constrained_solve(&a, &b, &constraints);
    let guess: Vec<Vec3> = reference
        .iter()
        .map(|x| x * 0.9 + Vec3::repeat(0.01))
        .collect();
    for p in DEFLATED {
        for start in [None, Some(guess.as_slice())] {
            let (dv, res) = solve(&a, &b, &constraints, p, true, start, TIGHT);
            assert!(res.converged, "{p:?}: {res:?}");
            let err = max_abs_diff(&dv, &reference) / max_abs(&reference);
            assert!(err < 1e-7, "{p:?} warm {}: off by {err}", start.is_some());
            for k in &constraints {
                let off = (Mat3::identity() - k.filter) * (dv[k.particle] - k.z);
                assert!(off.amax() < 1e-13, "{p:?}: constrained part off by {off}");
            }
        }
    }
}

#[test]
fn fully_pinned_and_tiny_systems_solve_with_deflation_on() {
    // Every particle pinned: every aggregate's basis is empty, Δv = z.
    let (a, b) = spring_system(9, 8, 10.0, 9);
    let mut rng = Rng::new(10);
    let pinned: Vec<Constraint> = (0..a.n())
        .map(|particle| Constraint {
            particle,
            filter: Mat3::zeros(),
            z: rng.vec3(),
        })
        .collect();
    let (dv, res) = solve(&a, &b, &pinned, DEFLATED[0], true, None, TIGHT);
    assert!(res.converged, "{res:?}");
    for k in &pinned {
        assert_eq!(dv[k.particle], k.z);
    }
    // One aggregate holding the whole (2 × 2) system.
    let (a, b) = spring_system(2, 2, 10.0, 11);
    let reference = dense_constrained_solve(&a, &b, &[]);
    let (dv, res) = solve(&a, &b, &[], DEFLATED[0], true, None, TIGHT);
    assert!(res.converged, "{res:?}");
    assert!(max_abs_diff(&dv, &reference) < 1e-8 * max_abs(&reference));
}

#[test]
fn deflation_cuts_the_iterations_of_a_stiff_sheet() {
    // A 60 × 60 sheet of stiff springs with two pinned corners, like the drape: the
    // smooth modes IC(0) leaves are those the aggregates capture.
    let (a, b) = spring_system(60, 60, 1e4, 6);
    let pin = |particle| Constraint {
        particle,
        filter: Mat3::zeros(),
        z: Vec3::zeros(),
    };
    let constraints = [pin(0), pin(59)];
    let p = Preconditioner::BlockIncompleteCholesky;
    let (plain, plain_res) = solve(&a, &b, &constraints, p, false, None, TIGHT);
    let (deflated, deflated_res) = solve(&a, &b, &constraints, p, true, None, TIGHT);
    eprintln!(
        "iterations: IC(0) {}, deflated {}",
        plain_res.iterations, deflated_res.iterations
    );
    assert!(plain_res.converged && deflated_res.converged);
    assert!(max_abs_diff(&plain, &deflated) < 1e-6 * max_abs(&plain));
    assert!(
        2 * deflated_res.iterations < plain_res.iterations,
        "{} vs {}",
        deflated_res.iterations,
        plain_res.iterations
    );
}

#[test]
fn loose_deflated_solves_skip_the_projection_of_q_and_meet_their_tolerance() {
    // At the tolerances of the simulator's deflated solves each iteration does not project
    // q (`PROJECT_PRODUCTS_BELOW`): the residual the recurrences carry must still be the
    // true one, and the constrained part exact.
    let (a, b) = spring_system(60, 60, 1e4, 6);
    let mut rng = Rng::new(12);
    let constraints = mixed_constraints(a.n(), 13, &mut rng);
    for tolerance in [3e-3, 1e-3, PROJECT_PRODUCTS_BELOW] {
        let (dv, res) = solve(&a, &b, &constraints, DEFLATED[0], true, None, tolerance);
        assert!(res.converged && res.iterations > 5, "{tolerance}: {res:?}");
        let rel = true_relative_residual(&a, &b, &constraints, &dv);
        eprintln!(
            "tolerance {tolerance:e}: {} iterations, reported {:.3e}, true {rel:.3e}",
            res.iterations, res.relative_residual
        );
        assert!(
            rel <= tolerance,
            "{tolerance}: true relative residual {rel}"
        );
        assert!(
            (rel - res.relative_residual).abs() < 1e-3 * rel,
            "{tolerance}: reported {} against true {rel}",
            res.relative_residual
        );
        for k in &constraints {
            let off = (Mat3::identity() - k.filter) * (dv[k.particle] - k.z);
            assert!(
                off.amax() < 1e-13,
                "{tolerance}: constrained part off by {off}"
            );
        }
    }
}

#[test]
fn deflated_solves_are_bit_identical_for_one_and_two_threads() {
    let (a, b) = spring_system(48, 46, 300.0, 7);
    let mut rng = Rng::new(8);
    let constraints = mixed_constraints(a.n(), 11, &mut rng);
    let run = || {
        let (dv, res) = solve(&a, &b, &constraints, DEFLATED[0], true, None, TIGHT);
        (
            res,
            dv.iter()
                .flat_map(|x| x.iter().map(|c| c.to_bits()))
                .collect::<Vec<_>>(),
        )
    };
    let one = in_pool(1, run);
    let two = in_pool(2, run);
    assert!(one.0.converged && one.0.iterations > 3, "{:?}", one.0);
    assert_eq!(one.0, two.0);
    assert!(one.1 == two.1, "Δv differs between 1 and 2 threads");
}

#[test]
fn preparing_a_pattern_ahead_changes_no_solve() {
    // What a solve would build first (the preconditioner's slot maps or symbolic factor,
    // the aggregates and the coarse symbolic factor), built ahead by `PcgScratch::prepare`
    // while the caller assembles: the solve must come out bit-identical, and need nothing
    // more for that pattern.
    let (a, b) = spring_system(30, 27, 300.0, 12);
    let (other, _) = spring_system(27, 30, 300.0, 13);
    let mut rng = Rng::new(14);
    let constraints = mixed_constraints(a.n(), 7, &mut rng);
    let settings = PcgSettings {
        tolerance: 1e-6,
        max_iterations: 5000,
        warm_start: false,
        deflation: true,
    };
    let bits = |v: &[Vec3]| -> Vec<u64> {
        v.iter()
            .flat_map(|x| x.iter().map(|c| c.to_bits()))
            .collect()
    };
    for p in DEFLATED.into_iter().chain([Preconditioner::Auto]) {
        let mut plain = PcgScratch::default();
        let mut dv = vec![Vec3::zeros(); a.n()];
        let expected = modified_pcg_with(&a, &b, &constraints, &settings, p, &mut plain, &mut dv);
        let expected_bits = bits(&dv);
        let mut ahead = PcgScratch::default();
        // A scratch that has solved over another pattern must prepare again.
        ahead.prepare(&other.pattern, p, true);
        assert!(!ahead.needs_prepare(&other.pattern, p, true), "{p:?}");
        assert!(ahead.needs_prepare(&a.pattern, p, true), "{p:?}");
        ahead.prepare(&a.pattern, p, true);
        assert!(!ahead.needs_prepare(&a.pattern, p, true), "{p:?}");
        let mut dv = vec![Vec3::zeros(); a.n()];
        let got = modified_pcg_with(&a, &b, &constraints, &settings, p, &mut ahead, &mut dv);
        // (One iteration with a complete factor; several with the incomplete ones.)
        let complete = matches!(p, Preconditioner::SparseCholesky | Preconditioner::Auto);
        assert!(expected.converged, "{p:?}: {expected:?}");
        assert!(complete || expected.iterations > 2, "{p:?}: {expected:?}");
        assert_eq!(got, expected, "{p:?}");
        assert!(
            bits(&dv) == expected_bits,
            "{p:?}: Δv differs after preparing ahead"
        );
        assert!(!ahead.needs_prepare(&a.pattern, p, true), "{p:?}");
    }
}
