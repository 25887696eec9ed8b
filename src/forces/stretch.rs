//! Stretch condition (Baraff §4.2 eq. 10, Stuyck §7.4).
use super::{ElementForces, JacobianMode};
use crate::model::TriangleRest;
use crate::Vec3;

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

/// Stretch force and Jacobians of one triangle with particle positions `x`, velocities `v`.
pub fn stretch(
    x: &[Vec3; 3],
    v: &[Vec3; 3],
    rest: &TriangleRest,
    p: &StretchParams,
    mode: JacobianMode,
) -> ElementForces<3> {
    let _ = (x, v, rest, p, mode);
    todo!()
}
