//! Shear condition (Baraff §4.3, Stuyck §7.5): `C = a w_uᵀ w_v`.
use super::{ElementForces, JacobianMode};
use crate::model::TriangleRest;
use crate::Vec3;

/// Shear force and Jacobians of one triangle; `k`, `kd` are stiffness and damping.
pub fn shear(
    x: &[Vec3; 3],
    v: &[Vec3; 3],
    rest: &TriangleRest,
    k: f64,
    kd: f64,
    mode: JacobianMode,
) -> ElementForces<3> {
    let _ = (x, v, rest, k, kd, mode);
    todo!()
}
