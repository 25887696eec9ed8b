//! Generic condition-function forces: from `C`, `∂C/∂x` and `∂²C/∂x²` of an element to its
//! forces and Jacobians (see the equations in [`crate::forces`]).
use super::{ElementForces, JacobianMode};
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

/// Forces and Jacobians of `E = ½ k CᵀC` and its damping `d = −k_d (∂C/∂x) Ċ`.
/// `clamp_compression[m]` drops the `k C_m ∂²C_m` stiffness term in
/// [`JacobianMode::System`] when `C_m < 0` (compressed stretch).
pub fn condition_forces<const N: usize, const M: usize>(
    eval: &ConditionEval<N, M>,
    v: &[Vec3; N],
    k: f64,
    kd: f64,
    clamp_compression: [bool; M],
    mode: JacobianMode,
) -> ElementForces<N> {
    let _ = (eval, v, k, kd, clamp_compression, mode);
    todo!()
}
