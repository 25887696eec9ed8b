//! Tests of every force against finite differences and independent references.
//!
//! Error measure used throughout ([`rel_err`]): `max |analytic − reference|` over all
//! entries of a force vector or a whole `3N x 3N` Jacobian, divided by the larger of the two
//! max-abs entries. Finite differences are central with step `h = 1e-5 · h_min`, `h_min`
//! the smallest triangle height of the element (so squashed triangles are resolved;
//! `≈ 3e-6 L` for well-shaped ones), dividing by the step actually taken after rounding.
//! Velocity derivatives use `1e-6 · max(1, max|v|)` (forces are affine in `v`). Cases come from a seeded generator ([`Rng`]) so failures
//! reproduce; each suite prints its worst measured errors (`--nocapture`).
use super::condition::ConditionEval;
use super::{ElementForces, JacobianMode};
use crate::{Mat3, Vec3};

mod bend;
mod condition;
mod definite;
mod drag;
mod jacobian_derivative;
mod spring_lift;
mod stretch_shear;
mod system_share;

/// FD Jacobian tolerance demanded by the issue.
pub const FD_TOL: f64 = 1e-5;
/// Tolerance for identities that hold up to rounding only.
pub const ROUND_TOL: f64 = 1e-9;

/// Small deterministic generator (SplitMix64) so the tests need no extra dependency.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[lo, hi)`.
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        let unit = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        lo + (hi - lo) * unit
    }

    /// Each coordinate uniform in `[−s, s)`.
    pub fn vec(&mut self, s: f64) -> Vec3 {
        Vec3::new(self.range(-s, s), self.range(-s, s), self.range(-s, s))
    }

    pub fn vecs<const N: usize>(&mut self, s: f64) -> [Vec3; N] {
        std::array::from_fn(|_| self.vec(s))
    }

    /// A uniformly random-ish rotation (random axis and angle).
    pub fn rotation(&mut self) -> Mat3 {
        let axis = self.vec(std::f64::consts::PI);
        *nalgebra::Rotation3::from_scaled_axis(axis).matrix()
    }
}

/// `max|a − b| / max(max|a|, max|b|)` (0 if both are exactly zero).
pub fn rel_err(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    let scale = a.iter().chain(b).fold(0.0f64, |m, x| m.max(x.abs()));
    let diff = a
        .iter()
        .zip(b)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
    if scale == 0.0 {
        0.0
    } else {
        diff / scale
    }
}

/// Row-major entries of a `3N x 3N` block matrix.
pub fn flat<const N: usize>(m: &[[Mat3; N]; N]) -> Vec<f64> {
    let mut out = Vec::with_capacity(9 * N * N);
    for row in m {
        for r in 0..3 {
            for block in row {
                out.extend(block.row(r).iter());
            }
        }
    }
    out
}

/// Entries of a list of 3-vectors.
pub fn flat_vecs(v: &[Vec3]) -> Vec<f64> {
    v.iter().flat_map(|x| [x.x, x.y, x.z]).collect()
}

/// Block transpose of a `3N x 3N` matrix.
pub fn transpose<const N: usize>(m: &[[Mat3; N]; N]) -> [[Mat3; N]; N] {
    std::array::from_fn(|a| std::array::from_fn(|b| m[b][a].transpose()))
}

/// Relative asymmetry `max|M − Mᵀ| / max|M|`.
pub fn asymmetry<const N: usize>(m: &[[Mat3; N]; N]) -> f64 {
    rel_err(&flat(m), &flat(&transpose(m)))
}

/// Central-difference Jacobian of `f` at `x`: `[a][b] = ∂f_a/∂x_b`.
pub fn fd_jacobian<const N: usize>(
    f: impl Fn(&[Vec3; N]) -> [Vec3; N],
    x: &[Vec3; N],
    h: f64,
) -> [[Mat3; N]; N] {
    let mut jac = [[Mat3::zeros(); N]; N];
    for b in 0..N {
        for c in 0..3 {
            let (mut xp, mut xm) = (*x, *x);
            xp[b][c] += h;
            xm[b][c] -= h;
            // The step actually taken after rounding (the subtraction is exact).
            let step = xp[b][c] - xm[b][c];
            let (fp, fm) = (f(&xp), f(&xm));
            for a in 0..N {
                jac[a][b].set_column(c, &((fp[a] - fm[a]) / step));
            }
        }
    }
    jac
}

/// Central-difference gradient of a scalar function.
pub fn fd_gradient<const N: usize>(
    e: impl Fn(&[Vec3; N]) -> f64,
    x: &[Vec3; N],
    h: f64,
) -> [Vec3; N] {
    let mut g = [Vec3::zeros(); N];
    for b in 0..N {
        for c in 0..3 {
            let (mut xp, mut xm) = (*x, *x);
            xp[b][c] += h;
            xm[b][c] -= h;
            g[b][c] = (e(&xp) - e(&xm)) / (xp[b][c] - xm[b][c]);
        }
    }
    g
}

/// Longest distance between two of the points.
pub fn longest_edge(x: &[Vec3]) -> f64 {
    let mut l = 0.0f64;
    for (i, a) in x.iter().enumerate() {
        for b in &x[i + 1..] {
            l = l.max((a - b).norm());
        }
    }
    l
}

/// Smallest height of the triangle `x` (twice its area over its longest edge).
pub fn min_height(x: [Vec3; 3]) -> f64 {
    (x[1] - x[0]).cross(&(x[2] - x[0])).norm() / longest_edge(&x)
}

/// FD step for a triangle: `1e-5` of its smallest height (`≈ 3e-6` of the edge length
/// for well-shaped triangles), so squashed triangles are resolved too.
pub fn fd_step_triangle(x: &[Vec3; 3]) -> f64 {
    1e-5 * min_height(*x)
}

/// FD step for a hinge: `1e-5` of the smallest height of its two triangles.
pub fn fd_step_hinge(x: &[Vec3; 4]) -> f64 {
    1e-5 * min_height([x[0], x[1], x[2]]).min(min_height([x[1], x[2], x[3]]))
}

/// FD step for velocities (forces are affine in `v`, so only rounding matters).
pub fn fd_step_velocity(v: &[Vec3]) -> f64 {
    1e-6 * v.iter().fold(1.0f64, |m, vi| m.max(vi.amax()))
}

/// Worst errors seen by a suite, printed at its end.
#[derive(Debug, Default)]
pub struct Stats {
    pub cases: usize,
    pub fd_dfdx: f64,
    pub fd_dfdv: f64,
    pub force_vs_energy: f64,
    pub stiffness_asym: f64,
    pub system_asym: f64,
    pub system_vs_dropped: f64,
    pub momentum: f64,
}

/// Asserts that `exact`'s Jacobians match the difference Jacobians `jx` (positions) and
/// `jv` (velocities) within `tol`, and records the errors in `err_x`, `err_v`.
pub fn record_jacobians<const N: usize>(
    (err_x, err_v): (&mut f64, &mut f64),
    exact: &ElementForces<N>,
    (jx, jv): (&[[Mat3; N]; N], &[[Mat3; N]; N]),
    tol: f64,
    case: &str,
) {
    record(
        err_x,
        rel_err(&flat(&exact.dfdx), &flat(jx)),
        tol,
        "dfdx",
        case,
    );
    record(
        err_v,
        rel_err(&flat(&exact.dfdv), &flat(jv)),
        tol,
        "dfdv",
        case,
    );
}

/// Asserts `err < tol` and records it in `slot`.
pub fn record(slot: &mut f64, err: f64, tol: f64, what: &str, case: &str) {
    assert!(
        err < tol,
        "{what}: relative error {err:e} ≥ {tol:e} ({case})"
    );
    *slot = slot.max(err);
}

/// Asserts `Σ_a f_a = 0`, `Σ_a (x_a − x̄) × f_a = 0` and zero block row sums of the
/// Jacobians (translation invariance); returns the worst relative residual.
pub fn check_momentum<const N: usize>(x: &[Vec3; N], out: &ElementForces<N>, case: &str) -> f64 {
    let centre = x.iter().sum::<Vec3>() / N as f64;
    let fmax = out.f.iter().fold(0.0f64, |m, f| m.max(f.amax()));
    let l = longest_edge(x);
    let sum: Vec3 = out.f.iter().sum();
    let torque: Vec3 = x
        .iter()
        .zip(&out.f)
        .map(|(xa, f)| (xa - centre).cross(f))
        .sum();
    let mut worst = sum.amax() / fmax.max(1e-300);
    worst = worst.max(torque.amax() / (l * fmax).max(1e-300));
    for m in [&out.dfdx, &out.dfdv] {
        let mmax = flat(m).iter().fold(0.0f64, |a, x| a.max(x.abs()));
        for row in m.iter() {
            let s: Mat3 = row.iter().sum();
            worst = worst.max(s.amax() / mmax.max(1e-300));
        }
    }
    assert!(
        worst < ROUND_TOL,
        "momentum/torque/translation residual {worst:e} ({case})"
    );
    worst
}

/// One case of a condition force (`E = ½ k CᵀC` plus damping).
pub struct ConditionCase<'a, const N: usize, const M: usize> {
    /// Label printed on failure.
    pub name: &'a str,
    pub x: [Vec3; N],
    pub v: [Vec3; N],
    /// Stiffness of each component.
    pub k: [f64; M],
    pub kd: f64,
    /// Components clamped in System mode when negative.
    pub clamp: [bool; M],
    /// FD step for positions (velocities use [`fd_step_velocity`]).
    pub h: f64,
}

/// Checks one case of a condition force against finite differences and independent
/// references:
///
/// * Exact `∂f/∂x`, `∂f/∂v` against central differences of `f` (< [`FD_TOL`]);
/// * `f = −∂E/∂x − k_d Σ_m ∇C_m Ċ_m` with `E = ½ k |C|²`, `∇C` by FD of the independent
///   `indep_c` and `Ċ_m = ∇C_m·v` (< [`FD_TOL`]);
/// * the stiffness (`v = 0`) Exact and System `∂f/∂x`, and the System `∂f/∂x` with
///   damping, symmetric (< [`ROUND_TOL`]);
/// * System `∂f/∂x` = Exact `∂f/∂x` + `k_d ∇C_m (∂Ċ_m/∂x)ᵀ` + `k C_m ∂²C_m` (clamped
///   components), both terms recomputed by FD of the analytic gradient `cond(x).dc`;
///   System `∂f/∂v` = Exact `∂f/∂v`;
/// * zero net force, torque and Jacobian row sums (internal forces).
pub fn check_condition_case<const N: usize, const M: usize>(
    case: &ConditionCase<N, M>,
    force: impl Fn(&[Vec3; N], &[Vec3; N], JacobianMode) -> ElementForces<N>,
    cond: impl Fn(&[Vec3; N]) -> ConditionEval<N, M>,
    indep_c: impl Fn(&[Vec3; N]) -> [f64; M],
    stats: &mut Stats,
) {
    let (x, v, h, name) = (&case.x, &case.v, case.h, case.name);
    let exact = force(x, v, JacobianMode::Exact);
    let system = force(x, v, JacobianMode::System);
    assert!(
        flat(&exact.dfdx).iter().all(|e| e.is_finite()),
        "non-finite ({name})"
    );

    // Jacobians against FD of the force.
    let jx = fd_jacobian(|xp| force(xp, v, JacobianMode::Exact).f, x, h);
    let jv = fd_jacobian(
        |vp| force(x, vp, JacobianMode::Exact).f,
        v,
        fd_step_velocity(v),
    );
    record(
        &mut stats.fd_dfdx,
        rel_err(&flat(&exact.dfdx), &flat(&jx)),
        FD_TOL,
        "dfdx vs FD",
        name,
    );
    record(
        &mut stats.fd_dfdv,
        rel_err(&flat(&exact.dfdv), &flat(&jv)),
        FD_TOL,
        "dfdv vs FD",
        name,
    );

    // Force against the energy and the independent condition.
    let energy = |xp: &[Vec3; N]| {
        let c = indep_c(xp);
        0.5 * (0..M).map(|m| case.k[m] * c[m] * c[m]).sum::<f64>()
    };
    let de = fd_gradient(energy, x, h);
    let mut expected: [Vec3; N] = std::array::from_fn(|a| -de[a]);
    for m in 0..M {
        let gm = fd_gradient(|xp| indep_c(xp)[m], x, h);
        let cdot: f64 = gm.iter().zip(v).map(|(g, vj)| g.dot(vj)).sum();
        for a in 0..N {
            expected[a] -= case.kd * cdot * gm[a];
        }
    }
    let err = rel_err(&flat_vecs(&exact.f), &flat_vecs(&expected));
    record(
        &mut stats.force_vs_energy,
        err,
        FD_TOL,
        "f vs −∂E/∂x − damping",
        name,
    );
    assert_eq!(
        exact.f, system.f,
        "force depends on the Jacobian mode ({name})"
    );

    // Symmetry.
    let rest_v = [Vec3::zeros(); N];
    for mode in [JacobianMode::Exact, JacobianMode::System] {
        let stiff = force(x, &rest_v, mode);
        record(
            &mut stats.stiffness_asym,
            asymmetry(&stiff.dfdx),
            ROUND_TOL,
            "K asymmetric",
            name,
        );
    }
    record(
        &mut stats.system_asym,
        asymmetry(&system.dfdx),
        ROUND_TOL,
        "System asym",
        name,
    );
    record(
        &mut stats.system_asym,
        asymmetry(&system.dfdv),
        ROUND_TOL,
        "dfdv asym",
        name,
    );

    // System = Exact + dropped terms, recomputed independently.
    let c = indep_c(x);
    let grad = cond(x).dc;
    let mut expected_system = exact.dfdx;
    for m in 0..M {
        let cdot_of = |xp: &[Vec3; N]| {
            let g = cond(xp).dc[m];
            g.iter().zip(v).map(|(g, vj)| g.dot(vj)).sum::<f64>()
        };
        let dcdot = fd_gradient(cdot_of, x, h);
        let hess = (case.clamp[m] && c[m] < 0.0).then(|| fd_jacobian(|xp| cond(xp).dc[m], x, h));
        for a in 0..N {
            for b in 0..N {
                expected_system[a][b] += case.kd * grad[m][a] * dcdot[b].transpose();
                if let Some(hess) = &hess {
                    expected_system[a][b] += case.k[m] * c[m] * hess[a][b];
                }
            }
        }
    }
    let err = rel_err(&flat(&system.dfdx), &flat(&expected_system));
    record(
        &mut stats.system_vs_dropped,
        err,
        FD_TOL,
        "System ≠ Exact − dropped",
        name,
    );
    assert_eq!(system.dfdv, exact.dfdv, "dfdv depends on the mode ({name})");

    for out in [&exact, &system] {
        stats.momentum = stats.momentum.max(check_momentum(x, out, name));
    }
    stats.cases += 1;
}
