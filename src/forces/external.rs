//! External forces: gravity and air drag (Baraff §4.5 last paragraph).
use super::{ElementForces, JacobianMode};
use crate::Vec3;

/// Air drag on one triangle: opposes the triangle's mean velocity relative to the wind
/// along its current normal `n̂`: `f_total = −c a (n̂·(v̄ − w)) n̂`, split equally on the
/// three corners; `a` rest area (m²), `c` drag coefficient (N·s/m³), `wind` (m/s).
pub fn drag(
    x: &[Vec3; 3],
    v: &[Vec3; 3],
    area: f64,
    c: f64,
    wind: Vec3,
    mode: JacobianMode,
) -> ElementForces<3> {
    let _ = (x, v, area, c, wind, mode);
    todo!()
}
