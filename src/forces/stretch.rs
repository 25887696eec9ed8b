//! Stretch condition (Baraff §4.2 eq. 10, Stuyck §7.4 eq. 7.12-7.27).
//!
//! ```text
//! C(x) = a (‖w_u‖ − b_u, ‖w_v‖ − b_v)
//! ∂C_u/∂x_i        = a du_i ŵ_u
//! ∂²C_u/∂x_i∂x_j   = (a du_i du_j / ‖w_u‖) (I − ŵ_u ŵ_uᵀ)            (same for v)
//! ```
//!
//! `a` rest area (m²), `w_u`, `w_v`, `du`, `dv` from [`Deformation`] (Baraff eq. 9), `b_u`,
//! `b_v` rest scales (1 = unstretched). Both components are clamped in
//! [`JacobianMode::System`] when compressed (`‖w‖ < b`): the `k C ∂²C` term is dropped.
//! Where `‖w‖ < 1e-12` (a triangle collapsed along that direction) `ŵ` is taken as zero:
//! gradient and Hessian of that component vanish instead of dividing by zero (likewise for
//! non-finite `w`).
use super::condition::{condition_forces, ConditionEval};
use super::deformation::Deformation;
use super::{ElementForces, JacobianMode};
use crate::model::TriangleRest;
use crate::{Mat3, Vec3};

/// Below this `‖w‖` a stretch direction is treated as collapsed (no direction, no Hessian).
const MIN_STRETCH: f64 = 1e-12;

/// Parameters of the stretch force of one triangle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StretchParams {
    /// Stiffness `k` applied to `C = a (‖w_u‖ − b_u, ‖w_v‖ − b_v)`.
    pub k: f64,
    /// Damping `k_d`.
    pub kd: f64,
    /// Rest scale in u.
    pub bu: f64,
    /// Rest scale in v.
    pub bv: f64,
}

/// Value, gradient and Hessian of the stretch condition `C = a (‖w_u‖ − b_u, ‖w_v‖ − b_v)`
/// (component 0 is u, 1 is v).
pub fn stretch_condition(
    x: &[Vec3; 3],
    rest: &TriangleRest,
    bu: f64,
    bv: f64,
) -> ConditionEval<3, 2> {
    let def = Deformation::new(x, rest);
    let a = rest.area;
    let mut eval = ConditionEval::zero();
    for (m, (w, d, b)) in [(def.wu, def.du, bu), (def.wv, def.dv, bv)]
        .into_iter()
        .enumerate()
    {
        let len = w.norm();
        eval.c[m] = a * (len - b);
        if !len.is_finite() || len < MIN_STRETCH {
            continue;
        }
        let wh = w / len;
        let proj = (Mat3::identity() - wh * wh.transpose()) * (a / len);
        for i in 0..3 {
            eval.dc[m][i] = (a * d[i]) * wh;
            for j in 0..3 {
                eval.d2c[m][i][j] = (d[i] * d[j]) * proj;
            }
        }
    }
    eval
}

/// Stretch force and Jacobians of one triangle with particle positions `x`, velocities `v`.
pub fn stretch(
    x: &[Vec3; 3],
    v: &[Vec3; 3],
    rest: &TriangleRest,
    p: &StretchParams,
    mode: JacobianMode,
) -> ElementForces<3> {
    let eval = stretch_condition(x, rest, p.bu, p.bv);
    condition_forces(&eval, v, p.k, p.kd, [true, true], mode)
}
