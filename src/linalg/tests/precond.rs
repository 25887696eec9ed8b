//! The preconditioners of [`precond`](crate::linalg::precond): their factors against dense
//! references, and the modified PCG under each of them against dense constrained solves,
//! block Jacobi and itself on another thread count.
use super::determinism::{bits, in_pool};
use super::solver::{
    dense_constrained_solve, max_abs, max_abs_diff, mixed_constraints, solve_with,
};
use super::{dense, dense_inverse, spd_system, spring_system, Rng};
use crate::linalg::assembly::ElementSet;
use crate::linalg::block3::CHUNK;
use crate::linalg::precond::order::SeparatorOrder;
use crate::linalg::precond::{EliminationOrder, TriangularFactor};
use crate::linalg::{
    modified_pcg_with, AssemblyPlan, BlockCsr, Constraint, PcgScratch, PcgSettings, Preconditioner,
};
use crate::{Mat3, Vec3};
use nalgebra::DMatrix;

const ALL: [Preconditioner; 4] = [
    Preconditioner::BlockJacobi,
    Preconditioner::BlockGaussSeidel,
    Preconditioner::BlockIncompleteCholesky,
    Preconditioner::SparseCholesky,
];

/// Dense `Ã = S A S + I − S` of the module doc of `precond`.
fn dense_filtered(a: &BlockCsr, constraints: &[Constraint]) -> DMatrix<f64> {
    let n = a.n();
    let mut s = DMatrix::identity(3 * n, 3 * n);
    for c in constraints {
        s.fixed_view_mut::<3, 3>(3 * c.particle, 3 * c.particle)
            .copy_from(&c.filter);
    }
    let id = DMatrix::<f64>::identity(3 * n, 3 * n);
    &s * dense(a) * &s + (id - &s)
}

/// Factors `a` under `constraints` as `kind`, sweeping in double precision (default
/// elimination order).
fn factor(a: &BlockCsr, constraints: &[Constraint], kind: Preconditioner) -> TriangularFactor {
    factor_in(a, constraints, kind, EliminationOrder::default())
}

/// [`factor`] in the elimination order `order`.
fn factor_in(
    a: &BlockCsr,
    constraints: &[Constraint],
    kind: Preconditioner,
    order: EliminationOrder,
) -> TriangularFactor {
    let mut filters: Vec<Option<Mat3>> = vec![None; a.n()];
    for c in constraints {
        filters[c.particle] = Some(c.filter);
    }
    let mut f = TriangularFactor::double_precision().with_order(order);
    assert!(f.factor(a, |i| filters[i], kind));
    f
}

#[test]
fn ic0_reproduces_the_filtered_matrix_on_its_pattern() {
    let (a, _) = spd_system(5, 4, 2.0, 31);
    let n = a.n();
    let mut rng = Rng::new(32);
    let constraints = mixed_constraints(n, 3, &mut rng);
    let f = factor(&a, &constraints, Preconditioner::BlockIncompleteCholesky);
    assert_eq!(f.stats.pivot_fallbacks, 0);
    let p = dense_inverse(&f, n).try_inverse().expect("P is invertible");
    let target = dense_filtered(&a, &constraints);
    let scale = target.amax();
    let (mut on, mut off) = (0.0f64, 0.0f64);
    for i in 0..n {
        for j in 0..n {
            let d = (p.fixed_view::<3, 3>(3 * i, 3 * j) - target.fixed_view::<3, 3>(3 * i, 3 * j))
                .amax();
            if a.pattern.slot(i, j).is_some() {
                on = on.max(d);
            } else {
                off = off.max(d);
            }
        }
    }
    let asym = (&p - p.transpose()).amax();
    eprintln!(
        "IC(0): max |P − Ã| on the pattern {:.2e}, off it {:.2e} (rel. to max |Ã|), asym {:.2e}",
        on / scale,
        off / scale,
        asym / scale
    );
    assert!(on <= 1e-10 * scale, "P differs from Ã on the pattern: {on}");
    assert!(
        off > 1e-6 * scale,
        "a 2-D grid has fill: IC(0) is not exact"
    );
    assert!(asym <= 1e-10 * scale);
}

#[test]
fn ic0_without_fill_is_the_exact_cholesky_and_solves_in_one_iteration() {
    // A chain of springs: block tridiagonal, no fill, so IC(0) is the full factorisation.
    let (a, b) = spring_system(40, 1, 1e4, 33);
    let f = factor(&a, &[], Preconditioner::BlockIncompleteCholesky);
    let pinv = dense_inverse(&f, a.n());
    let err = (&pinv * dense(&a) - DMatrix::identity(3 * a.n(), 3 * a.n())).amax();
    eprintln!("chain: max |P⁻¹A − I| = {err:.2e}");
    assert!(err < 1e-9, "{err}");
    let (_, ic) = solve_with(
        &a,
        &b,
        &[],
        1e-10,
        100,
        Preconditioner::BlockIncompleteCholesky,
    );
    let (_, jacobi) = solve_with(&a, &b, &[], 1e-10, 1000, Preconditioner::BlockJacobi);
    eprintln!(
        "chain: IC(0) {} iterations, block Jacobi {}",
        ic.iterations, jacobi.iterations
    );
    assert!(ic.converged && ic.iterations <= 2, "{ic:?}");
    assert!(jacobi.converged && jacobi.iterations > 10, "{jacobi:?}");
}

#[test]
fn gauss_seidel_is_the_symmetric_sweep_product_in_its_elimination_order() {
    let (a, _) = spd_system(5, 4, 1.0, 34);
    let n = a.n();
    let mut rng = Rng::new(35);
    let constraints = mixed_constraints(n, 3, &mut rng);
    let t = dense_filtered(&a, &constraints);
    for order in [EliminationOrder::Natural, EliminationOrder::Separator] {
        let f = factor_in(&a, &constraints, Preconditioner::BlockGaussSeidel, order);
        let p = dense_inverse(&f, n).try_inverse().expect("P is invertible");
        // Π P Πᵀ = (D + L) D⁻¹ (D + Lᵀ) with D, L the block diagonal and strict lower part
        // of Π Ã Πᵀ (Π: particle order[k] to position k).
        let elimination = match order {
            EliminationOrder::Natural => SeparatorOrder::natural(n),
            EliminationOrder::Separator => SeparatorOrder::new(&a.pattern),
        };
        let mut perm = DMatrix::zeros(3 * n, 3 * n);
        for (k, &v) in elimination.order.iter().enumerate() {
            for d in 0..3 {
                perm[(3 * k + d, 3 * v + d)] = 1.0;
            }
        }
        let tp = &perm * &t * perm.transpose();
        let mut d = DMatrix::zeros(3 * n, 3 * n);
        let mut l = DMatrix::zeros(3 * n, 3 * n);
        for i in 0..n {
            for j in 0..=i {
                let blk = tp.fixed_view::<3, 3>(3 * i, 3 * j);
                if i == j {
                    d.fixed_view_mut::<3, 3>(3 * i, 3 * i).copy_from(&blk);
                } else {
                    l.fixed_view_mut::<3, 3>(3 * i, 3 * j).copy_from(&blk);
                }
            }
        }
        let dinv = d.clone().try_inverse().expect("D is invertible");
        let expected = perm.transpose() * (&d + &l) * dinv * (&d + l.transpose()) * &perm;
        let err = (&p - &expected).amax() / expected.amax();
        eprintln!(
            "Gauss–Seidel, {order:?} order (|A| = {}, |B| = {}): max |P − Πᵀ(D+L)D⁻¹(D+Lᵀ)Π| \
             = {err:.2e} (relative)",
            elimination.domain_a, elimination.domain_b
        );
        assert!(err < 1e-10, "{order:?}: {err}");
    }
}

#[test]
fn every_preconditioner_matches_the_dense_constrained_solve_and_keeps_z() {
    let mut rng = Rng::new(36);
    let cases = [spd_system(8, 7, 3.0, 37), spring_system(14, 12, 1e3, 38)];
    for (c, (a, b)) in cases.iter().enumerate() {
        let constraints = mixed_constraints(a.n(), 4, &mut rng);
        let reference = dense_constrained_solve(a, b, &constraints);
        let (jacobi, _) = solve_with(a, b, &constraints, 1e-12, 5000, ALL[0]);
        for p in ALL {
            let (dv, res) = solve_with(a, b, &constraints, 1e-12, 5000, p);
            assert!(res.converged, "case {c} {p:?}: {res:?}");
            let err = max_abs_diff(&dv, &reference) / max_abs(&reference);
            let vs_jacobi = max_abs_diff(&dv, &jacobi) / max_abs(&reference);
            let mut off: f64 = 0.0;
            for k in &constraints {
                let d = dv[k.particle] - k.z;
                off = off.max((d - k.filter * d).amax());
                if k.filter == Mat3::zeros() {
                    assert_eq!(dv[k.particle], k.z, "pinned particle, {p:?}");
                }
            }
            eprintln!(
                "case {c} {p:?}: {} iterations, rel. error vs dense {err:.1e}, vs block \
                 Jacobi {vs_jacobi:.1e}, |(I − S)(Δv − z)| {off:.1e}",
                res.iterations
            );
            assert!(err < 1e-8, "case {c} {p:?}: relative error {err}");
            assert!(
                vs_jacobi < 1e-8,
                "case {c} {p:?}: differs from block Jacobi"
            );
            assert!(
                off <= 1e-15,
                "case {c} {p:?}: constrained part off by {off}"
            );
        }
    }
}

#[test]
fn zero_iterations_leave_z_in_constrained_directions_for_every_preconditioner() {
    let (a, b) = spd_system(6, 6, 5.0, 39);
    let mut rng = Rng::new(40);
    let constraints = mixed_constraints(a.n(), 2, &mut rng);
    for p in ALL {
        for max in [0, 1, 3] {
            let (dv, res) = solve_with(&a, &b, &constraints, 1e-14, max, p);
            assert!(res.iterations <= max);
            for k in &constraints {
                let d = dv[k.particle] - k.z;
                assert!(
                    (d - k.filter * d).amax() <= 1e-15,
                    "{p:?}, {max} iterations"
                );
            }
        }
    }
}

#[test]
fn ic0_needs_several_times_fewer_iterations_than_block_jacobi_on_stiff_springs() {
    let (a, b) = spring_system(40, 40, 1e4, 41);
    let mut rng = Rng::new(42);
    let constraints = mixed_constraints(a.n(), 211, &mut rng);
    let counts: Vec<usize> = ALL
        .iter()
        .map(|&p| {
            let (_, res) = solve_with(&a, &b, &constraints, 1e-6, 5000, p);
            assert!(res.converged, "{p:?}: {res:?}");
            res.iterations
        })
        .collect();
    eprintln!(
        "stiff 40x40 springs, ε = 1e-6: block Jacobi {}, Gauss–Seidel {}, IC(0) {} iterations",
        counts[0], counts[1], counts[2]
    );
    assert!(counts[2] * 3 < counts[0], "{counts:?}");
    assert!(counts[2] < counts[1] && counts[1] < counts[0], "{counts:?}");
    // The complete factor inverts Ã: one iteration, two if rounding leaves a residual.
    assert!(counts[3] <= 2, "{counts:?}");
}

#[test]
fn the_complete_factor_inverts_the_filtered_matrix_with_constraints() {
    let (a, _) = spring_system(9, 8, 1e4, 47);
    let mut rng = Rng::new(48);
    let constraints = mixed_constraints(a.n(), 5, &mut rng);
    assert!(constraints.iter().any(|c| c.filter == Mat3::zeros()));
    assert!(constraints.iter().any(|c| c.filter != Mat3::zeros()));
    let f = factor(&a, &constraints, Preconditioner::SparseCholesky);
    assert!(f.stats.complete);
    let pinv = dense_inverse(&f, a.n());
    let filtered = dense_filtered(&a, &constraints);
    let err = (&pinv * &filtered - DMatrix::identity(3 * a.n(), 3 * a.n())).amax();
    eprintln!("complete factor: max |P⁻¹Ã − I| = {err:.2e}");
    assert!(err < 1e-9, "{err}");
}

#[test]
fn an_indefinite_matrix_falls_back_to_ic0_and_auto_factors_completely_only_small_systems() {
    let (mut a, _) = spd_system(6, 6, 1.0, 49);
    let f = factor(&a, &[], Preconditioner::SparseCholesky);
    assert!(f.stats.complete);
    for i in (0..a.n()).step_by(3) {
        let k = a.pattern.slot(i, i).expect("diagonal");
        a.values[k] = -a.values[k];
    }
    let f = factor(&a, &[], Preconditioner::SparseCholesky);
    assert!(
        !f.stats.complete && f.stats.pivot_fallbacks > 0,
        "{:?}",
        f.stats
    );
    // Auto: complete up to DIRECT_MAX_PARTICLES, IC(0) above.
    let (small, _) = spd_system(8, 8, 20.0, 50);
    assert!(factor(&small, &[], Preconditioner::Auto).stats.complete);
    let (large, _) = spd_system(33, 32, 20.0, 51);
    assert!(large.n() > crate::linalg::precond::DIRECT_MAX_PARTICLES);
    let f = factor(&large, &[], Preconditioner::Auto);
    assert!(!f.stats.complete);
}

#[test]
fn failed_pivots_fall_back_and_keep_the_preconditioner_positive_definite() {
    let (mut a, _) = spd_system(6, 6, 1.0, 43);
    let n = a.n();
    // Indefinite diagonal blocks on every third particle.
    for i in (0..n).step_by(3) {
        let k = a.pattern.slot(i, i).expect("diagonal");
        a.values[k] = -a.values[k];
    }
    let f = factor(&a, &[], Preconditioner::BlockIncompleteCholesky);
    assert!(f.stats.pivot_fallbacks > 0);
    let mut rng = Rng::new(44);
    let mut s = vec![Vec3::zeros(); n];
    let mut worst = f64::INFINITY;
    for _ in 0..20 {
        let r: Vec<Vec3> = (0..n).map(|_| rng.vec3()).collect();
        let d = f.apply(&r, &mut s, |_, x| x);
        assert!(s.iter().all(|x| x.iter().all(|c| c.is_finite())));
        let direct: f64 = r.iter().zip(&s).map(|(x, y)| x.dot(y)).sum();
        assert!((d - direct).abs() <= 1e-12 * direct.abs());
        worst = worst.min(d / r.iter().map(|x| x.norm_squared()).sum::<f64>());
    }
    eprintln!(
        "indefinite A: {} pivot fallbacks, min rᵀP⁻¹r/rᵀr = {worst:.2e}",
        f.stats.pivot_fallbacks
    );
    assert!(worst > 0.0);
}

#[test]
fn triangular_preconditioners_are_bit_identical_for_one_and_two_threads() {
    let (a, b) = spd_system(48, 46, 20.0, 45);
    assert!(a.n() > 2 * CHUNK);
    let mut rng = Rng::new(46);
    let constraints = mixed_constraints(a.n(), 37, &mut rng);
    let settings = PcgSettings {
        tolerance: 1e-9,
        max_iterations: 500,
        warm_start: false,
        deflation: false,
    };
    for p in [ALL[1], ALL[2], ALL[3]] {
        let run = || {
            let mut scratch = PcgScratch::default();
            let mut dv = vec![Vec3::zeros(); a.n()];
            let res = modified_pcg_with(&a, &b, &constraints, &settings, p, &mut scratch, &mut dv);
            // Reusing the scratch (and its cached pattern maps) gives the same answer.
            let mut dv2 = vec![Vec3::repeat(5.0); a.n()];
            let res2 =
                modified_pcg_with(&a, &b, &constraints, &settings, p, &mut scratch, &mut dv2);
            assert_eq!(bits(&dv), bits(&dv2));
            assert_eq!(res, res2);
            (res, bits(&dv))
        };
        let one = in_pool(1, run);
        let two = in_pool(2, run);
        // Several iterations, so that the threads' chunks really meet (the complete
        // factor solves in one or two).
        let iterative = p != Preconditioner::SparseCholesky;
        assert!(
            one.0.converged && (one.0.iterations > 3) == iterative && one.0.iterations > 0,
            "{p:?}: {:?}",
            one.0
        );
        assert_eq!(one.0, two.0);
        assert!(one.1 == two.1, "{p:?}: Δv differs between 1 and 2 threads");
    }
}

#[test]
fn ic0_breakdown_restarts_with_a_shift_and_still_solves() {
    // Kershaw's matrix on 3x3 blocks `a_ij I`: unshifted IC(0) meets a negative pivot.
    let a = kershaw(Mat3::identity(), Mat3::zeros());
    restarts_and_solves(&a, "Kershaw");
}

/// Factors a Kershaw system ([`kershaw`]) by IC(0) in the natural order (the order in
/// which it breaks IC(0) down; the separator order's restarts are tested in
/// `ordering.rs`), checks that the factorisation restarted with a shift and replaced no
/// pivot, and that IC(0)-preconditioned CG solves the system to its dense answer.
fn restarts_and_solves(a: &BlockCsr, name: &str) -> TriangularFactor {
    assert!(dense(a).cholesky().is_some(), "{name}: the matrix is SPD");
    let f = factor_in(
        a,
        &[],
        Preconditioner::BlockIncompleteCholesky,
        EliminationOrder::Natural,
    );
    eprintln!("{name}: {:?}", f.stats);
    assert!(f.stats.restarts > 0 && f.stats.shift > 0.0, "{:?}", f.stats);
    assert_eq!(f.stats.pivot_fallbacks, 0);
    let b: Vec<Vec3> = (0..4).map(|i| Vec3::new(1.0, -(i as f64), 0.5)).collect();
    let (dv, res) = solve_with(a, &b, &[], 1e-12, 100, ALL[2]);
    let reference = dense_constrained_solve(a, &b, &[]);
    let err = max_abs_diff(&dv, &reference) / max_abs(&reference);
    eprintln!(
        "{name}: shifted IC(0) {} iterations, rel. error {err:.1e}",
        res.iterations
    );
    assert!(res.converged && err < 1e-9, "{res:?} {err}");
    f
}

/// Kershaw's 4x4 SPD matrix `K` (a cycle of couplings, one of them positive, which breaks
/// IC(0) down) on 3x3 blocks: `A_ij = K_ij coupled + δ_ij own`.
fn kershaw(coupled: Mat3, own: Mat3) -> BlockCsr {
    let k = [
        [3.0, -2.0, 0.0, 2.0],
        [-2.0, 3.0, -2.0, 0.0],
        [0.0, -2.0, 3.0, -2.0],
        [2.0, 0.0, -2.0, 3.0],
    ];
    let edges = ElementSet {
        arity: 2,
        nodes: vec![0, 1, 1, 2, 2, 3, 3, 0],
    };
    let plan = AssemblyPlan::new(4, std::slice::from_ref(&edges));
    let mut a = BlockCsr::zeros(plan.pattern.clone());
    for (i, row) in k.iter().enumerate() {
        for (j, &x) in row.iter().enumerate() {
            if let Some(slot) = a.pattern.slot(i, j) {
                a.values[slot] = coupled * x + if i == j { own } else { Mat3::zeros() };
            }
        }
    }
    a
}

#[test]
fn ic0_shift_leaves_the_stiff_directions_of_anisotropic_blocks_alone() {
    // The shift is sized by each block's smallest eigenvalue (here Kershaw's 3 along n),
    // not by its diagonal entries (here 5k/9 to 8k/9): the factor still acts on the stiff
    // plane as `A` does, `P⁻¹ (e_i ⊗ t) = e_i ⊗ t / k` for t ⊥ n, while the weak
    // direction is shifted enough to factor. A shift by `α diag(Ã)` adds unequal amounts
    // of about `α k` to the axes, which also couples the plane to the weak normal: at
    // α = 1e-3 the in-plane error below measured 1.2e-1.
    let n = Vec3::new(1.0, 2.0, 2.0) / 3.0;
    let k = 1e6;
    // Kershaw's couplings along a tilted normal, a stiffness k in the plane across it: a
    // cloth-like block (weak along the normal, stiff in the plane) whose weak direction
    // breaks IC(0).
    let normal = n * n.transpose();
    let a = kershaw(normal, (Mat3::identity() - normal) * k);
    let f = restarts_and_solves(&a, "anisotropic Kershaw");
    let plane = [
        n.cross(&Vec3::x()).normalize(),
        n.cross(&Vec3::z()).normalize(),
    ];
    let mut worst: f64 = 0.0;
    for i in 0..4 {
        for t in plane {
            let mut r = vec![Vec3::zeros(); 4];
            r[i] = t;
            let mut s = vec![Vec3::zeros(); 4];
            f.apply(&r, &mut s, |_, x| x);
            let exact: Vec<Vec3> = r.iter().map(|x| x / k).collect();
            worst = worst.max(max_abs_diff(&s, &exact) / max_abs(&exact));
        }
    }
    eprintln!("anisotropic Kershaw: in-plane error of P⁻¹ {worst:.1e}");
    assert!(
        worst < 1e-5,
        "the shift reached the stiff plane: {worst:.1e}"
    );
}

#[test]
fn the_shift_scale_lies_within_root_three_below_the_smallest_eigenvalue() {
    use crate::linalg::precond::smallest_eigenvalue_bound;
    let mut rng = Rng::new(77);
    let mut ratios = (f64::INFINITY, 0.0f64);
    for _ in 0..2000 {
        // M = R diag(λ) Rᵀ with eigenvalues spread over up to six decades.
        let r = nalgebra::Rotation3::new(rng.vec3() * 3.0).into_inner();
        let lambda = rng.vec3().map(|e| 10f64.powf(3.0 * e));
        let m = r * Mat3::from_diagonal(&lambda) * r.transpose();
        let smallest = m.symmetric_eigenvalues().min();
        let ratio = smallest_eigenvalue_bound(&m) / smallest;
        ratios = (ratios.0.min(ratio), ratios.1.max(ratio));
    }
    eprintln!("bound / λ_min in [{:.4}, {:.4}]", ratios.0, ratios.1);
    assert!(ratios.0 >= 1.0 / 3f64.sqrt() * (1.0 - 1e-9), "{ratios:?}");
    assert!(ratios.1 <= 1.0 + 1e-9, "{ratios:?}");
    // An indefinite block is not shifted.
    let m = Mat3::from_diagonal(&Vec3::new(2.0, -5.0, 1.0));
    assert_eq!(smallest_eigenvalue_bound(&m), 0.0);
}

#[test]
fn tolerance_means_the_same_block_jacobi_residual_for_every_preconditioner() {
    let (a, b) = spring_system(30, 30, 1e4, 49);
    let mut rng = Rng::new(50);
    let constraints = mixed_constraints(a.n(), 13, &mut rng);
    let mut filters = vec![Mat3::identity(); a.n()];
    for c in &constraints {
        filters[c.particle] = c.filter;
    }
    for p in ALL {
        let (dv, res) = solve_with(&a, &b, &constraints, 1e-6, 5000, p);
        assert!(res.converged, "{p:?}: {res:?}");
        // True filtered residual in the block-Jacobi norm of the stopping rule.
        let mut ax = vec![Vec3::zeros(); a.n()];
        a.mul_vec(&dv, &mut ax);
        let (mut num, mut den) = (0.0, 0.0);
        for i in 0..a.n() {
            let d = a.diagonal(i).try_inverse().expect("SPD diagonal block");
            let r = filters[i] * (b[i] - ax[i]);
            let fb = filters[i] * b[i];
            num += r.dot(&(filters[i] * (d * r)));
            den += fb.dot(&(d * fb));
        }
        let rel = (num / den).sqrt();
        eprintln!(
            "{p:?}: {} iterations, reported {:.2e}, true block-Jacobi residual {rel:.2e}",
            res.iterations, res.relative_residual
        );
        assert!(res.relative_residual <= 1e-6);
        assert!(rel <= 1.01e-6, "{p:?}: true residual {rel}");
    }
}

#[test]
fn single_precision_sweeps_stay_within_float_rounding_of_the_exact_factor() {
    // The default factor sweeps with its blocks rounded to f32 (half the memory traffic):
    // P⁻¹ must differ from the double-precision one only by that rounding, and stay
    // symmetric positive definite.
    let (a, _) = spd_system(6, 5, 2.0, 61);
    let n = a.n();
    let mut rng = Rng::new(62);
    let constraints = mixed_constraints(n, 4, &mut rng);
    for kind in [
        Preconditioner::BlockGaussSeidel,
        Preconditioner::BlockIncompleteCholesky,
    ] {
        let exact = dense_inverse(&factor(&a, &constraints, kind), n);
        let mut filters: Vec<Option<Mat3>> = vec![None; n];
        for c in &constraints {
            filters[c.particle] = Some(c.filter);
        }
        let mut single = TriangularFactor::default();
        assert!(single.factor(&a, |i| filters[i], kind));
        let rounded = dense_inverse(&single, n);
        let err = (&rounded - &exact).amax() / exact.amax();
        let asym = (&rounded - rounded.transpose()).amax() / exact.amax();
        let sym = (&rounded + rounded.transpose()) * 0.5;
        eprintln!("{kind:?}: f32 sweeps, max |ΔP⁻¹| = {err:.2e}, asymmetry {asym:.2e} (relative)");
        assert!(err > 0.0 && err < 1e-5, "{err}");
        assert!(asym < 1e-5, "{asym}");
        assert!(sym.cholesky().is_some(), "P⁻¹ stays positive definite");
    }
}

#[test]
fn adaptive_auto_keeps_ic0_where_it_is_cheap_and_switches_for_good_where_it_is_not() {
    let settings = PcgSettings {
        tolerance: 1e-6,
        max_iterations: 1000,
        warm_start: false,
        deflation: false,
    };
    let run = |a: &BlockCsr, b: &[Vec3], scratch: &mut PcgScratch| {
        let mut dv = vec![Vec3::zeros(); a.n()];
        let res = modified_pcg_with(a, b, &[], &settings, Preconditioner::Auto, scratch, &mut dv);
        assert!(res.converged, "{res:?}");
        (res.iterations, scratch.used_complete_factor(), dv)
    };
    // A soft system (mass-dominated): IC(0) converges well within 2.5 √n iterations and
    // stays, solve after solve.
    let (soft, b) = spd_system(10, 10, 0.5, 60);
    let limit = (crate::linalg::precond::AUTO_SWITCH * (soft.n() as f64).sqrt()) as usize;
    let mut scratch = PcgScratch::default();
    scratch.adapt_auto(true);
    for _ in 0..2 {
        let (iterations, complete, _) = run(&soft, &b, &mut scratch);
        assert!(
            !complete && iterations > 2 && iterations < limit,
            "{iterations}"
        );
    }
    // A stiff one: IC(0) reaches the limit, the solve switches to the complete factor
    // (the count includes the abandoned iterations) and keeps it; the answer is the
    // complete factor's own.
    let (stiff, b) = spring_system(10, 10, 1e6, 61);
    let mut scratch = PcgScratch::default();
    scratch.adapt_auto(true);
    let (iterations, complete, dv) = run(&stiff, &b, &mut scratch);
    assert!(
        complete && (limit + 1..=limit + 2).contains(&iterations),
        "{iterations}"
    );
    let (again, complete, _) = run(&stiff, &b, &mut scratch);
    assert!(complete && again <= 2, "{again}");
    let mut fixed = PcgScratch::default();
    let (once, complete, direct) = run(&stiff, &b, &mut fixed);
    assert!(
        complete && once <= 2,
        "not adaptive: complete from the start"
    );
    assert_eq!(bits(&dv), bits(&direct));
}
