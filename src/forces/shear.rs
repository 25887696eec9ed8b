//! Shear condition (Baraff §4.3, Stuyck §7.5 eq. 7.28-7.32).
//!
//! ```text
//! C(x)            = a w_uᵀ w_v
//! ∂C/∂x_i         = a (du_i w_v + dv_i w_u)
//! ∂²C/∂x_i∂x_j    = a (du_i dv_j + du_j dv_i) I
//! ```
//!
//! `a` rest area (m²), `w_u`, `w_v`, `du`, `dv` from [`Deformation`] (Baraff eq. 9). `C`
//! is zero when the u and v material directions stay orthogonal; no clamping.
use super::condition::{condition_forces, ConditionEval};
use super::deformation::Deformation;
use super::{ElementForces, JacobianMode};
use crate::model::TriangleRest;
use crate::{Mat3, Vec3};

/// Value, gradient and Hessian of the shear condition `C = a w_uᵀ w_v`.
pub fn shear_condition(x: &[Vec3; 3], rest: &TriangleRest) -> ConditionEval<3, 1> {
    let def = Deformation::new(x, rest);
    let a = rest.area;
    let mut eval = ConditionEval::zero();
    eval.c[0] = a * def.wu.dot(&def.wv);
    for i in 0..3 {
        eval.dc[0][i] = a * (def.du[i] * def.wv + def.dv[i] * def.wu);
        for j in 0..3 {
            eval.d2c[0][i][j] =
                Mat3::from_diagonal_element(a * (def.du[i] * def.dv[j] + def.du[j] * def.dv[i]));
        }
    }
    eval
}

/// Shear force and Jacobians of one triangle; `k`, `kd` are stiffness and damping.
pub fn shear(
    x: &[Vec3; 3],
    v: &[Vec3; 3],
    rest: &TriangleRest,
    k: f64,
    kd: f64,
    mode: JacobianMode,
) -> ElementForces<3> {
    let eval = shear_condition(x, rest);
    condition_forces(&eval, v, k, kd, [false], mode)
}
