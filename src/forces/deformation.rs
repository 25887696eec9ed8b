//! The deformation `[w_u w_v]` of one triangle (Baraff §4.2, eq. 9; Stuyck §7.4).
//!
//! ```text
//! [w_u w_v] = [Δx1 Δx2] · [[Δu1 Δu2], [Δv1 Δv2]]⁻¹,   Δx1 = x1 − x0, Δx2 = x2 − x0
//! w_u = Σ_i du_i x_i,   w_v = Σ_i dv_i x_i,   ∂w_u/∂x_i = du_i I,   ∂w_v/∂x_i = dv_i I
//! ```
//!
//! `w_u`, `w_v` (dimensionless) are the world-space images of the unit material directions
//! u and v: `‖w_u‖ = 1` means unstretched along u. `du`, `dv` (1/m) depend on the rest UVs
//! only, so every derivative of `w` with respect to a particle is a scalar times the
//! identity — the stretch and shear blocks are cheap scalar multiples of small matrices.
use crate::model::TriangleRest;
use crate::Vec3;

/// `w_u`, `w_v` of one triangle and the weights `du`, `dv` that make them linear in `x`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Deformation {
    /// `w_u = ∂w/∂u` (dimensionless).
    pub wu: Vec3,
    /// `w_v = ∂w/∂v` (dimensionless).
    pub wv: Vec3,
    /// `du_i = ∂w_u/∂x_i` (scalar multiple of the identity), 1/m.
    pub du: [f64; 3],
    /// `dv_i = ∂w_v/∂x_i` (scalar multiple of the identity), 1/m.
    pub dv: [f64; 3],
}

impl Deformation {
    /// Deformation of the triangle with corner positions `x` and rest state `rest`.
    ///
    /// With `inv = [[a, b], [c, d]]` ([`TriangleRest::inv`]): `w_u = a Δx1 + c Δx2`,
    /// `w_v = b Δx1 + d Δx2`, hence `du = (−a − c, a, c)`, `dv = (−b − d, b, d)`.
    pub fn new(x: &[Vec3; 3], rest: &TriangleRest) -> Deformation {
        let [[a, b], [c, d]] = rest.inv;
        let dx1 = x[1] - x[0];
        let dx2 = x[2] - x[0];
        Deformation {
            wu: a * dx1 + c * dx2,
            wv: b * dx1 + d * dx2,
            du: [-a - c, a, c],
            dv: [-b - d, b, d],
        }
    }
}
