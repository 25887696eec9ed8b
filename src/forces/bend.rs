//! Bend condition (Baraff §4.3, Stuyck §7.6): `C = θ − θ₀`, the dihedral angle of a hinge.
use super::{ElementForces, JacobianMode};
use crate::Vec3;

/// Bend force and Jacobians of one hinge. Particle order `x = [x0, x1, x2, x3]`: `x1, x2`
/// the shared edge, `x0` the wing of the first triangle, `x3` of the second (Stuyck fig.
/// 7.6); `k`, `kd` the hinge's stiffness and damping; `rest_angle` θ₀.
pub fn bend(
    x: &[Vec3; 4],
    v: &[Vec3; 4],
    rest_angle: f64,
    k: f64,
    kd: f64,
    mode: JacobianMode,
) -> ElementForces<4> {
    let _ = (x, v, rest_angle, k, kd, mode);
    todo!()
}
