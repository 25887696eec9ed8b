//! Modified PCG (Baraff §5.3) and constraint forces (§5.4) against dense solves.
use super::{dense, flat, spd_system, spring_system, unflat, Rng};
use crate::linalg::constraint_forces::constraint_forces;
use crate::linalg::{
    modified_pcg_with, BlockCsr, Constraint, PcgScratch, PcgSettings, Preconditioner,
};
use crate::{Mat3, Vec3};
use nalgebra::{DMatrix, DVector};

/// A mix of the four filter kinds on every `stride`-th particle: pinned (S = 0), one
/// constrained direction (S = I − ppᵀ), two (S = I − ppᵀ − qqᵀ), and an explicit free
/// entry (S = I); `z` random in the constrained directions.
pub(super) fn mixed_constraints(n: usize, stride: usize, rng: &mut Rng) -> Vec<Constraint> {
    (0..n)
        .step_by(stride)
        .enumerate()
        .map(|(k, i)| {
            let p = rng.unit();
            let q = p.cross(&rng.unit()).normalize();
            let (filter, z) = match k % 4 {
                0 => (Mat3::zeros(), rng.vec3()),
                1 => (Mat3::identity() - p * p.transpose(), p * rng.sym()),
                2 => (
                    Mat3::identity() - p * p.transpose() - q * q.transpose(),
                    p * rng.sym() + q * rng.sym(),
                ),
                _ => (Mat3::identity(), Vec3::zeros()),
            };
            Constraint {
                particle: i,
                filter,
                z,
            }
        })
        .collect()
}

/// Dense `S` (block diagonal filter) and `z` of a constraint list.
fn dense_filter(n: usize, constraints: &[Constraint]) -> (DMatrix<f64>, DVector<f64>) {
    let mut s = DMatrix::identity(3 * n, 3 * n);
    let mut z = vec![Vec3::zeros(); n];
    for c in constraints {
        s.fixed_view_mut::<3, 3>(3 * c.particle, 3 * c.particle)
            .copy_from(&c.filter);
        z[c.particle] = c.z;
    }
    (s, flat(&z))
}

/// Dense reference of the constrained solve:
///
/// ```text
/// (S A S + I − S) x = S (b − A z),   Δv = z + S x
/// ```
/// (`S A S + I − S` is SPD for symmetric projections S, and `x` has no constrained part).
pub(super) fn dense_constrained_solve(
    a: &BlockCsr,
    b: &[Vec3],
    constraints: &[Constraint],
) -> Vec<Vec3> {
    let n = a.n();
    let (s, z) = dense_filter(n, constraints);
    let ad = dense(a);
    let id = DMatrix::<f64>::identity(3 * n, 3 * n);
    let lhs = &s * &ad * &s + (&id - &s);
    let lhs = (&lhs + lhs.transpose()) * 0.5;
    let rhs = &s * (flat(b) - &ad * &z);
    let x = lhs.cholesky().expect("reference system is SPD").solve(&rhs);
    unflat(&(z + &s * x))
}

pub(super) fn max_abs_diff(a: &[Vec3], b: &[Vec3]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).amax())
        .fold(0.0, f64::max)
}

pub(super) fn max_abs(a: &[Vec3]) -> f64 {
    a.iter().map(|x| x.amax()).fold(0.0, f64::max)
}

/// Solves with the default preconditioner (the tests of this file hold for all of them;
/// `precond.rs` repeats the main ones for each).
fn solve(
    a: &BlockCsr,
    b: &[Vec3],
    c: &[Constraint],
    tol: f64,
    max: usize,
) -> (Vec<Vec3>, crate::linalg::PcgResult) {
    solve_with(a, b, c, tol, max, Preconditioner::default())
}

/// Solves from a NaN-filled `dv` (the input must be ignored) with preconditioner `p`.
pub(super) fn solve_with(
    a: &BlockCsr,
    b: &[Vec3],
    c: &[Constraint],
    tol: f64,
    max: usize,
    p: Preconditioner,
) -> (Vec<Vec3>, crate::linalg::PcgResult) {
    let mut dv = vec![Vec3::repeat(f64::NAN); a.n()];
    let settings = PcgSettings {
        tolerance: tol,
        max_iterations: max,
        warm_start: false,
        deflation: false,
    };
    let res = modified_pcg_with(a, b, c, &settings, p, &mut PcgScratch::default(), &mut dv);
    (dv, res)
}

#[test]
fn unconstrained_solution_matches_dense_cholesky() {
    let (a, b) = spd_system(9, 8, 1.0, 1);
    let (dv, res) = solve(&a, &b, &[], 1e-10, 1000);
    assert!(res.converged, "{res:?}");
    assert!(res.relative_residual <= 1e-10);
    let reference = dense(&a).cholesky().unwrap().solve(&flat(&b));
    let err = (flat(&dv) - &reference).amax() / reference.amax();
    eprintln!(
        "unconstrained: {} iterations, rel. error vs Cholesky {err:.2e}",
        res.iterations
    );
    assert!(err < 1e-8, "relative error {err}");
}

/// The filtered residual `f(b − A Δv)` recomputed from `Δv`, relative to `f(b)`, both in
/// the block-Jacobi norm of the PCG's stopping rule (`√(rᵀ D⁻¹ r / f(b)ᵀ D⁻¹ f(b))`).
pub(super) fn true_relative_residual(
    a: &BlockCsr,
    b: &[Vec3],
    constraints: &[Constraint],
    dv: &[Vec3],
) -> f64 {
    let mut ax = vec![Vec3::zeros(); a.n()];
    a.mul_vec(dv, &mut ax);
    let (mut num, mut den) = (0.0, 0.0);
    let mut filters = vec![Mat3::identity(); a.n()];
    for c in constraints {
        filters[c.particle] = c.filter;
    }
    for i in 0..a.n() {
        let p = a.diagonal(i).try_inverse().unwrap();
        let r = filters[i] * (b[i] - ax[i]);
        let fb = filters[i] * b[i];
        num += r.dot(&(p * r));
        den += fb.dot(&(p * fb));
    }
    (num / den).sqrt()
}

#[test]
fn stiff_spring_grid_reaches_tolerance_in_true_residual() {
    let (a, b) = spring_system(45, 45, 1e3, 2);
    let mut rng = Rng::new(3);
    let constraints = mixed_constraints(a.n(), 97, &mut rng);
    let (dv, res) = solve(&a, &b, &constraints, 1e-8, 2000);
    assert!(res.converged, "{res:?}");
    let rel = true_relative_residual(&a, &b, &constraints, &dv);
    eprintln!(
        "springs 45x45: {} iterations, true rel. residual {rel:.2e}",
        res.iterations
    );
    assert!(rel < 1e-7, "true relative residual {rel}");
}

#[test]
fn constrained_components_equal_z_after_any_number_of_iterations() {
    let (a, b) = spd_system(7, 7, 5.0, 4);
    let mut rng = Rng::new(5);
    let constraints = mixed_constraints(a.n(), 3, &mut rng);
    let mut worst: f64 = 0.0;
    for max in [0, 1, 2, 5, 1000] {
        let (dv, res) = solve(&a, &b, &constraints, 1e-12, max);
        assert!(res.iterations <= max);
        assert!(dv.iter().all(|v| v.iter().all(|x| x.is_finite())));
        if max == 1000 {
            assert!(res.converged, "{res:?}");
        }
        for c in &constraints {
            let d = dv[c.particle] - c.z;
            let constrained = d - c.filter * d;
            if c.filter == Mat3::zeros() {
                assert_eq!(dv[c.particle], c.z, "pinned particle, {max} iterations");
            }
            worst = worst.max(constrained.amax());
        }
    }
    eprintln!("max |(I − S)(Δv − z)| over 0,1,2,5,∞ iterations: {worst:.2e}");
    assert!(worst <= 1e-15, "constrained component off by {worst}");
}

#[test]
fn constrained_solution_matches_dense_filtered_solve() {
    let (a, b) = spd_system(8, 7, 3.0, 6);
    let mut rng = Rng::new(7);
    let constraints = mixed_constraints(a.n(), 4, &mut rng);
    let (dv, res) = solve(&a, &b, &constraints, 1e-12, 1000);
    assert!(res.converged, "{res:?}");
    let reference = dense_constrained_solve(&a, &b, &constraints);
    let err = max_abs_diff(&dv, &reference) / max_abs(&reference);
    eprintln!(
        "constrained: {} iterations, rel. error vs dense {err:.2e}",
        res.iterations
    );
    assert!(err < 1e-9, "relative error {err}");
}

#[test]
fn constraint_forces_are_the_residual_in_constrained_directions() {
    let (a, b) = spd_system(8, 6, 2.0, 8);
    let mut rng = Rng::new(9);
    let constraints = mixed_constraints(a.n(), 3, &mut rng);
    let (dv, res) = solve(&a, &b, &constraints, 1e-13, 1000);
    assert!(res.converged);
    let forces = constraint_forces(&a, &b, &dv, &constraints);
    assert_eq!(forces.len(), constraints.len());
    // Dense e = A Δv − b.
    let e = unflat(&(dense(&a) * flat(&dv) - flat(&b)));
    let scale = max_abs(&b);
    let mut listed = vec![false; a.n()];
    let mut worst: f64 = 0.0;
    for (c, f) in constraints.iter().zip(&forces) {
        listed[c.particle] = true;
        // The whole residual of a constrained particle is its constraint force: the free
        // part of it has converged to zero.
        worst = worst.max((f - e[c.particle]).amax() / scale);
        assert!(
            (c.filter * f).amax() <= 1e-12 * scale,
            "force has a free component"
        );
    }
    for (i, ei) in e.iter().enumerate() {
        if !listed[i] {
            worst = worst.max(ei.amax() / scale);
        }
    }
    eprintln!("constraint forces vs dense residual: {worst:.2e}");
    assert!(worst < 1e-9, "{worst}");
    // Pinned particles feel a force, free ones (S = I) none.
    assert!(forces[0].norm() > 1e-3);
    assert_eq!(forces[3], Vec3::zeros());
}

#[test]
fn nothing_to_solve_returns_z_without_iterations() {
    let (a, _) = spd_system(5, 4, 1.0, 10);
    let n = a.n();
    let (dv, res) = solve(&a, &vec![Vec3::zeros(); n], &[], 1e-8, 100);
    assert_eq!(res.iterations, 0);
    assert!(res.converged);
    assert_eq!(res.relative_residual, 0.0);
    assert_eq!(dv, vec![Vec3::zeros(); n]);
    // b only in the constrained directions and z = 0: filter(b) = 0 and r = 0.
    let mut b = vec![Vec3::zeros(); n];
    b[2] = Vec3::new(1.0, -2.0, 3.0);
    let pin = [Constraint {
        particle: 2,
        filter: Mat3::zeros(),
        z: Vec3::zeros(),
    }];
    let (dv, res) = solve(&a, &b, &pin, 1e-8, 100);
    assert_eq!((res.iterations, res.converged), (0, true));
    assert_eq!(dv, vec![Vec3::zeros(); n]);
}

#[test]
fn moving_pin_without_forces_still_drives_free_particles() {
    let (a, _) = spd_system(6, 5, 1.0, 11);
    let b = vec![Vec3::zeros(); a.n()];
    let pin = [Constraint {
        particle: 7,
        filter: Mat3::zeros(),
        z: Vec3::new(0.5, -1.0, 0.25),
    }];
    let (dv, res) = solve(&a, &b, &pin, 1e-12, 1000);
    assert!(res.converged && res.iterations > 0, "{res:?}");
    let reference = dense_constrained_solve(&a, &b, &pin);
    let err = max_abs_diff(&dv, &reference) / max_abs(&reference);
    assert!(err < 1e-9, "relative error {err}");
    assert_eq!(dv[7], pin[0].z);
}

#[test]
fn breakdown_and_bad_input_stop_without_nan() {
    let (mut a, b) = spd_system(5, 5, 1.0, 12);
    let n = a.n();
    // Non-finite right side: Δv = z, not converged.
    let mut bad = b.clone();
    bad[4].y = f64::NAN;
    let (dv, res) = solve(&a, &bad, &[], 1e-8, 100);
    assert!(!res.converged);
    assert_eq!(dv, vec![Vec3::zeros(); n]);
    // Negative definite matrix: cᵀq < 0 on the first iteration.
    let neg = BlockCsr {
        pattern: a.pattern.clone(),
        values: a.values.iter().map(|m| -m).collect(),
    };
    let (dv, res) = solve(&neg, &b, &[], 1e-8, 100);
    assert!(!res.converged);
    assert!(dv.iter().all(|v| v.iter().all(|x| x.is_finite())));
    // A pinned particle whose row and column are zero (singular diagonal block): the
    // preconditioner falls back, the rest solves normally.
    for i in 0..n {
        for (k, &j) in a.pattern.row(i).iter().enumerate() {
            if i == 6 || j == 6 {
                a.values[a.pattern.row_ptr[i] + k] = Mat3::zeros();
            }
        }
    }
    let pin = [Constraint {
        particle: 6,
        filter: Mat3::zeros(),
        z: Vec3::new(1.0, 2.0, 3.0),
    }];
    let (dv, res) = solve(&a, &b, &pin, 1e-12, 1000);
    assert!(res.converged, "{res:?}");
    let reference = dense_constrained_solve(&a, &b, &pin);
    assert!(max_abs_diff(&dv, &reference) < 1e-9 * max_abs(&reference));
}

#[test]
fn spring_grid_solution_matches_dense_filtered_solve() {
    let (a, b) = spring_system(12, 10, 1e2, 13);
    let mut rng = Rng::new(14);
    let constraints = mixed_constraints(a.n(), 5, &mut rng);
    let (dv, res) = solve(&a, &b, &constraints, 1e-12, 2000);
    assert!(res.converged, "{res:?}");
    let reference = dense_constrained_solve(&a, &b, &constraints);
    let err = max_abs_diff(&dv, &reference) / max_abs(&reference);
    eprintln!(
        "springs 12x10: {} iterations, rel. error vs dense {err:.2e}",
        res.iterations
    );
    assert!(err < 1e-8, "relative error {err}");
    for c in &constraints {
        let d = dv[c.particle] - c.z;
        assert!((d - c.filter * d).amax() <= 1e-15);
    }
}

#[test]
fn warm_start_reaches_the_same_solution_in_fewer_iterations_and_keeps_z() {
    let (a, b) = spd_system(8, 7, 3.0, 6);
    let mut rng = Rng::new(11);
    let constraints = mixed_constraints(a.n(), 4, &mut rng);
    let reference = dense_constrained_solve(&a, &b, &constraints);
    // An iterative preconditioner: the complete factor of `Auto` solves in one iteration
    // either way.
    let ic0 = Preconditioner::BlockIncompleteCholesky;
    let (cold, cold_res) = solve_with(&a, &b, &constraints, 1e-10, 1000, ic0);
    // A guess near the solution (as the previous implicit step's Δv is), with garbage in
    // the constrained directions that the filter must discard.
    let mut dv: Vec<Vec3> = reference.iter().map(|x| x * 1.001).collect();
    for k in &constraints {
        dv[k.particle] += (Mat3::identity() - k.filter) * Vec3::new(0.3, -0.2, 0.1);
    }
    let settings = PcgSettings {
        tolerance: 1e-10,
        max_iterations: 1000,
        warm_start: true,
        deflation: false,
    };
    // The same preconditioner as the cold solve.
    let warm_res = modified_pcg_with(
        &a,
        &b,
        &constraints,
        &settings,
        ic0,
        &mut PcgScratch::default(),
        &mut dv,
    );
    assert!(cold_res.converged && warm_res.converged);
    let err = max_abs_diff(&dv, &reference) / max_abs(&reference);
    assert!(err < 1e-7, "warm-started solution off by {err}");
    assert!(max_abs_diff(&cold, &reference) / max_abs(&reference) < 1e-7);
    for k in &constraints {
        let off = (Mat3::identity() - k.filter) * (dv[k.particle] - k.z);
        assert!(
            off.amax() < 1e-14,
            "constrained part of Δv differs from z by {off}"
        );
    }
    eprintln!(
        "iterations: cold {} warm {}",
        cold_res.iterations, warm_res.iterations
    );
    assert!(
        warm_res.iterations < cold_res.iterations,
        "a guess 0.1% off saves iterations"
    );
}

#[test]
fn a_raised_stop_ends_the_solve_before_its_first_iteration() {
    let (a, b) = spd_system(9, 8, 1.0, 1);
    let settings = PcgSettings {
        tolerance: 1e-10,
        max_iterations: 1000,
        warm_start: false,
        deflation: false,
    };
    let mut scratch = PcgScratch::default();
    let stop = crate::stop::Stop::new();
    scratch.set_stop(stop.clone());
    let mut dv = vec![Vec3::zeros(); a.n()];
    let p = Preconditioner::default();
    let free = modified_pcg_with(&a, &b, &[], &settings, p, &mut scratch, &mut dv);
    assert!(free.converged && free.iterations > 0, "{free:?}");
    stop.request();
    let stopped = modified_pcg_with(&a, &b, &[], &settings, p, &mut scratch, &mut dv);
    assert!(!stopped.converged, "{stopped:?}");
    assert_eq!(stopped.iterations, 0);
}
