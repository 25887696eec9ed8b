//! Generic condition-function forces: from `C`, `∂C/∂x` and `∂²C/∂x²` of an element to its
//! forces and Jacobians (Baraff §4.1 eq. 7-8, §4.5 eq. 11-12; Stuyck §7.3 eq. 7.2-7.11).
//!
//! For each component `C_m` of an `M`-component condition over `N` particles, with
//! stiffness `k` (N/m for a length-like `C`) and damping `k_d`:
//!
//! ```text
//! Ċ_m            = Σ_j (∂C_m/∂x_j)ᵀ v_j
//! f_i            = −Σ_m (k C_m + k_d Ċ_m) ∂C_m/∂x_i
//! ∂f_i/∂v_j      = −k_d Σ_m (∂C_m/∂x_i)(∂C_m/∂x_j)ᵀ
//! ∂f_i/∂x_j      = −Σ_m [ k (∂C_m/∂x_i)(∂C_m/∂x_j)ᵀ + (k C_m + k_d Ċ_m) ∂²C_m/∂x_i∂x_j
//!                         + k_d (∂C_m/∂x_i)(∂Ċ_m/∂x_j)ᵀ ]
//! ∂Ċ_m/∂x_j      = Σ_l (∂²C_m/∂x_l∂x_j)ᵀ v_l
//! ```
//!
//! [`JacobianMode::System`] drops the last (asymmetric) term of `∂f/∂x` (Baraff §4.5) and,
//! for components with `clamp_compression[m] && C_m < 0`, the `k C_m ∂²C_m` term (a
//! compressed stretch component would otherwise make `−∂f/∂x` indefinite). What remains is
//! symmetric whenever the condition Hessians are. [`JacobianMode::Definite`] keeps only
//! `k (∂C/∂x_i)(∂C/∂x_j)ᵀ` and, for `clamp_compression` components with `C_m > 0`, the
//! tension term `k C_m ∂²C_m` (positive semi-definite for stretch).
//! [`JacobianMode::Exact`] keeps every term.
use super::{ElementForces, JacobianMode, SystemShare};
use crate::{Mat3, Vec3};

/// Value, gradient and Hessian of an `M`-component condition over `N` particles.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConditionEval<const N: usize, const M: usize> {
    /// `C_m(x)`.
    pub c: [f64; M],
    /// `∂C_m/∂x_a`, indexed `[m][a]`.
    pub dc: [[Vec3; N]; M],
    /// `∂²C_m/∂x_a∂x_b`, indexed `[m][a][b]`.
    pub d2c: [[[Mat3; N]; N]; M],
}

impl<const N: usize, const M: usize> ConditionEval<N, M> {
    /// A condition identically zero (value, gradient and Hessian).
    pub fn zero() -> Self {
        ConditionEval {
            c: [0.0; M],
            dc: [[Vec3::zeros(); N]; M],
            d2c: [[[Mat3::zeros(); N]; N]; M],
        }
    }

    /// `Ċ_m = Σ_j (∂C_m/∂x_j)ᵀ v_j` for every component, the rate of change of the condition
    /// under velocities `v`.
    pub fn rate(&self, v: &[Vec3; N]) -> [f64; M] {
        let mut cdot = [0.0; M];
        for (cd, dc) in cdot.iter_mut().zip(&self.dc) {
            *cd = dc.iter().zip(v).map(|(g, vj)| g.dot(vj)).sum();
        }
        cdot
    }
}

/// Forces and Jacobians of `E = ½ Σ_m k_m C_m²` and its damping `d = −k_d (∂C/∂x) Ċ`
/// (`k` per component: the stretch condition's u and v fibres differ).
/// `clamp_compression[m]` drops the `k C_m ∂²C_m` stiffness term in
/// [`JacobianMode::System`] when `C_m < 0` (compressed stretch).
pub fn condition_forces<const N: usize, const M: usize>(
    eval: &ConditionEval<N, M>,
    v: &[Vec3; N],
    k: [f64; M],
    kd: f64,
    clamp_compression: [bool; M],
    mode: JacobianMode,
) -> ElementForces<N> {
    let exact = mode == JacobianMode::Exact;
    let cdot = eval.rate(v);
    let mut out = ElementForces::zero();
    for m in 0..M {
        let k = k[m];
        let c = eval.c[m];
        let dc = &eval.dc[m];
        let d2c = &eval.d2c[m];
        let s = k * c + kd * cdot[m];
        for (f, g) in out.f.iter_mut().zip(dc) {
            *f -= s * g;
        }
        let h = hessian_coefficient(mode, clamp_compression[m], c, k, kd * cdot[m]);
        // ∂Ċ_m/∂x_j, only needed for the exact (asymmetric) damping term.
        let mut dcdot = [Vec3::zeros(); N];
        if exact && kd != 0.0 {
            for (j, dj) in dcdot.iter_mut().enumerate() {
                for l in 0..N {
                    *dj += d2c[l][j].tr_mul(&v[l]);
                }
            }
        }
        for i in 0..N {
            for j in 0..N {
                let outer = dc[i] * dc[j].transpose();
                let mut kij = k * outer + h * d2c[i][j];
                if exact && kd != 0.0 {
                    kij += kd * dc[i] * dcdot[j].transpose();
                }
                out.dfdx[i][j] -= kij;
                out.dfdv[i][j] -= kd * outer;
            }
        }
    }
    out
}

/// Adds the element's share of Baraff's eq. 18 ([`SystemShare`]) straight from its
/// condition: the combination of [`condition_forces`]' Jacobians without forming them.
///
/// ```text
/// blocks[i·N + j] += Σ_m (h k_d + h² k) ∂C_m/∂x_i (∂C_m/∂x_j)ᵀ + h² c_m ∂²C_m/∂x_i∂x_j
/// rhs_i           −= h Σ_m [ (k C_m + k_d Ċ_m + k ∂C_m·u) ∂C_m/∂x_i
///                            + c_m Σ_j ∂²C_m/∂x_i∂x_j u_j ]
/// ```
/// `∂C_m·u = Σ_j (∂C_m/∂x_j)ᵀ u_j`, `c_m` the coefficient of `∂²C_m` that
/// [`condition_forces`] uses in `mode`.
///
/// Both terms of a block are symmetric in (i, j) (an outer product and a Hessian), so only
/// the blocks with j ≥ i are formed and the rest mirrored: 10 of 16 for a bend hinge.
///
/// # Panics
/// In [`JacobianMode::Exact`] (its asymmetric damping term goes through
/// [`condition_forces`]).
pub fn condition_system<const N: usize, const M: usize>(
    eval: &ConditionEval<N, M>,
    v: &[Vec3; N],
    (k, kd): (f64, f64),
    clamp_compression: [bool; M],
    mode: JacobianMode,
    out: &mut SystemShare<N>,
) {
    assert!(
        mode != JacobianMode::Exact,
        "condition_system: exact Jacobians"
    );
    let cdot = eval.rate(v);
    let (h, u) = (out.h, &out.u);
    let outer_scale = h * kd + h * h * k;
    for m in 0..M {
        let (c, dc, d2c) = (eval.c[m], &eval.dc[m], &eval.d2c[m]);
        let hc = hessian_coefficient(mode, clamp_compression[m], c, k, kd * cdot[m]);
        let along: f64 = dc.iter().zip(u).map(|(g, uj)| g.dot(uj)).sum();
        let s = k * c + kd * cdot[m] + k * along;
        let hh = h * h * hc;
        for i in 0..N {
            let mut r = s * dc[i];
            for j in 0..N {
                r += hc * (d2c[i][j] * u[j]);
            }
            out.rhs[i] -= h * r;
            let di = outer_scale * dc[i];
            out.blocks[i * N + i] += di * dc[i].transpose() + hh * d2c[i][i];
            for j in i + 1..N {
                let block = di * dc[j].transpose() + hh * d2c[i][j];
                out.blocks[i * N + j] += block;
                out.blocks[j * N + i] += block.transpose();
            }
        }
    }
}

/// Coefficient of `∂²C_m` in `−∂f/∂x` for a component with value `c`, stiffness `k` and
/// damping term `k_d Ċ_m = damping`: `k C_m + k_d Ċ_m`, except that [`JacobianMode::System`]
/// drops `k C_m` of a compressed (`clamp`, `C_m < 0`) component and
/// [`JacobianMode::Definite`] keeps only the tension term `k C_m` of a stretched (`clamp`,
/// `C_m > 0`) one.
#[inline]
pub(crate) fn hessian_coefficient(
    mode: JacobianMode,
    clamp: bool,
    c: f64,
    k: f64,
    damping: f64,
) -> f64 {
    match mode {
        JacobianMode::Exact => k * c + damping,
        JacobianMode::System if clamp && c < 0.0 => damping,
        JacobianMode::System => k * c + damping,
        JacobianMode::Definite if clamp && c > 0.0 => k * c,
        JacobianMode::Definite => 0.0,
    }
}

/// `max |a − b| / max |b|` over the forces and Jacobian blocks of two evaluations of the
/// same element (tests of the structured fast paths against [`condition_forces`]).
#[cfg(test)]
pub(crate) fn max_relative_difference<const N: usize>(
    a: &ElementForces<N>,
    b: &ElementForces<N>,
) -> f64 {
    let mut num: f64 = 0.0;
    let mut den: f64 = 0.0;
    for i in 0..N {
        num = num.max((a.f[i] - b.f[i]).amax());
        den = den.max(b.f[i].amax());
        for j in 0..N {
            num = num.max((a.dfdx[i][j] - b.dfdx[i][j]).amax());
            num = num.max((a.dfdv[i][j] - b.dfdv[i][j]).amax());
            den = den.max(b.dfdx[i][j].amax()).max(b.dfdv[i][j].amax());
        }
    }
    num / den.max(f64::MIN_POSITIVE)
}
