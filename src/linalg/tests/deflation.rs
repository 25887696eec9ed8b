//! Subdomain deflation of the modified PCG ([`crate::linalg::deflation`]): the aggregates,
//! the projection `P_D`, and deflated solves against dense ones.
use super::determinism::in_pool;
use super::solver::{dense_constrained_solve, max_abs, max_abs_diff, mixed_constraints};
use super::{spring_system, Rng};
use crate::linalg::deflation::Deflation;
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

fn solve(
    a: &BlockCsr,
    b: &[Vec3],
    constraints: &[Constraint],
    p: Preconditioner,
    deflation: bool,
    start: Option<&[Vec3]>,
) -> (Vec<Vec3>, PcgResult) {
    let settings = PcgSettings {
        tolerance: 1e-10,
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

#[test]
fn projection_is_idempotent_and_annihilates_the_coarse_range() {
    let (a, _) = spring_system(23, 19, 50.0, 2);
    let n = a.n();
    let mut rng = Rng::new(3);
    // Unconstrained: `Z y` is piecewise constant over the aggregates, and P_D Ã Z y = 0.
    let mut d = Deflation::default();
    assert!(d.prepare(&a, |_| None));
    let agg = d.aggregate_of().expect("prepared").to_vec();
    let m = agg.iter().max().expect("particles") + 1;
    let y: Vec<Vec3> = (0..m).map(|_| rng.vec3()).collect();
    let x: Vec<Vec3> = agg.iter().map(|&g| y[g]).collect();
    let mut w = vec![Vec3::zeros(); n];
    a.mul_vec(&x, &mut w);
    let scale = max_abs(&w);
    d.project(&mut w);
    assert!(max_abs(&w) < 1e-10 * scale, "P_D Ã Z y = {}", max_abs(&w));
    // Constrained (pinned, one and two constrained directions): P_D² = P_D on filtered
    // vectors, and P_D leaves them filtered.
    let constraints = mixed_constraints(n, 5, &mut rng);
    let filter = |i: usize| {
        (constraints.iter())
            .find(|c| c.particle == i)
            .map(|c| c.filter)
    };
    assert!(d.prepare(&a, filter));
    let mut v: Vec<Vec3> = (0..n)
        .map(|i| {
            let r = rng.vec3();
            filter(i).map_or(r, |s| s * r)
        })
        .collect();
    d.project(&mut v);
    let once = v.clone();
    d.project(&mut v);
    let err = max_abs_diff(&v, &once) / max_abs(&once);
    assert!(err < 1e-10, "P_D² − P_D = {err}");
    for c in &constraints {
        let off = (Mat3::identity() - c.filter) * once[c.particle];
        assert!(off.amax() < 1e-12 * max_abs(&once), "{off}");
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
            let (dv, res) = solve(&a, &b, &constraints, p, true, start);
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
    let (plain, plain_res) = solve(&a, &b, &constraints, p, false, None);
    let (deflated, deflated_res) = solve(&a, &b, &constraints, p, true, None);
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
fn deflated_solves_are_bit_identical_for_one_and_two_threads() {
    let (a, b) = spring_system(48, 46, 300.0, 7);
    let mut rng = Rng::new(8);
    let constraints = mixed_constraints(a.n(), 11, &mut rng);
    let run = || {
        let (dv, res) = solve(&a, &b, &constraints, DEFLATED[0], true, None);
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
