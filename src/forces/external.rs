//! External forces: gravity and air drag (Baraff §4.5 last paragraph, §3 "additional
//! forces include air-drag, gravity").
//!
//! Air drag on a triangle resists only the motion along its normal (a sheet slides through
//! air edgewise almost freely):
//!
//! ```text
//! n = (x1 − x0) × (x2 − x0),   n̂ = n/‖n‖,   v̄ = (v0 + v1 + v2)/3,   r = v̄ − w
//! f_a          = −(c a / 3) (n̂·r) n̂                       for each corner a
//! ∂f_a/∂v_b    = −(c a / 9) n̂ n̂ᵀ
//! ∂f_a/∂x_b    = −(c a / 3) (n̂ rᵀ + (n̂·r) I) (I − n̂ n̂ᵀ)/‖n‖ · ∂n/∂x_b
//! ∂n/∂x_{0,1,2} = ([x2 − x1]×, −[x2 − x0]×, [x1 − x0]×)
//! ```
//!
//! `a` rest area (m²), `c` drag coefficient (N·s/m³), `w` wind velocity (m/s). The sign of
//! `n̂` cancels (`f ∝ n̂ n̂ᵀ r`), so the triangle's orientation does not matter.
use super::{ElementForces, JacobianMode};
use crate::{Mat3, Vec3};

/// A triangle whose `‖n‖` (twice its area) is below this fraction of its longest squared
/// edge length has no usable normal and feels no drag.
const MIN_RELATIVE_AREA: f64 = 1e-12;

/// Gravity on one particle: `f = m g` (N), `mass` in kg, `g` in m/s².
pub fn gravity(mass: f64, g: Vec3) -> Vec3 {
    mass * g
}

/// Air drag on one triangle: opposes the triangle's mean velocity relative to the wind
/// along its current normal `n̂`: `f_total = −c a (n̂·(v̄ − w)) n̂`, split equally on the
/// three corners; `a` rest area (m²), `c` drag coefficient (N·s/m³), `wind` (m/s).
///
/// [`JacobianMode::System`] returns `∂f/∂x = 0` (the solver treats the normal as fixed over
/// a step) and `∂f_a/∂v_b = −(c a/9) n̂ n̂ᵀ`; [`JacobianMode::Exact`] adds the derivative
/// through `n̂(x)`. A degenerate triangle (no normal) gets no force.
pub fn drag(
    x: &[Vec3; 3],
    v: &[Vec3; 3],
    area: f64,
    c: f64,
    wind: Vec3,
    mode: JacobianMode,
) -> ElementForces<3> {
    let mut out = ElementForces::zero();
    let (a, b) = (x[1] - x[0], x[2] - x[0]);
    let n = a.cross(&b);
    let longest = a
        .norm_squared()
        .max(b.norm_squared())
        .max((b - a).norm_squared());
    let len = n.norm();
    if !(longest.is_finite() && len > MIN_RELATIVE_AREA * longest) {
        return out;
    }
    let nh = n / len;
    let r = (v[0] + v[1] + v[2]) / 3.0 - wind;
    let s = nh.dot(&r);
    let coef = c * area / 3.0;
    let f = -coef * s * nh;
    let dfdv = (-coef / 3.0) * (nh * nh.transpose());
    let dfdx = if mode == JacobianMode::Exact {
        // ∂f/∂n, the same for every corner.
        let dfdn = (nh * r.transpose() + Mat3::from_diagonal_element(s))
            * (Mat3::identity() - nh * nh.transpose())
            * (-coef / len);
        [
            dfdn * (x[2] - x[1]).cross_matrix(),
            -dfdn * b.cross_matrix(),
            dfdn * a.cross_matrix(),
        ]
    } else {
        [Mat3::zeros(); 3]
    };
    for ((fa, dxa), dva) in out.f.iter_mut().zip(&mut out.dfdx).zip(&mut out.dfdv) {
        *fa = f;
        *dxa = dfdx;
        *dva = [dfdv; 3];
    }
    out
}
