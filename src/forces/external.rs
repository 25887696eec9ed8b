//! External forces: gravity, air drag (Baraff §4.5 last paragraph, §3 "additional
//! forces include air-drag, gravity") and aerodynamic lift (Kang & Cho §5, [`lift`]).
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
use super::{ElementForces, JacobianMode, SystemShare};
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
    let Some((Normal { nh, len, a, b }, r)) = Normal::through_air(x, v, wind) else {
        return out;
    };
    let s = nh.dot(&r);
    let coef = c * area / 3.0;
    let f = -coef * s * nh;
    let dfdv = (-coef / 3.0) * (nh * nh.transpose());
    let dfdx = if mode == JacobianMode::Exact {
        // ∂f/∂n, the same for every corner.
        let dfdn = (nh * r.transpose() + Mat3::from_diagonal_element(s))
            * (Mat3::identity() - nh * nh.transpose())
            * (-coef / len);
        normal_chain(dfdn, x, a, b)
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

/// Adds the triangle's drag share of Baraff's eq. 18 ([`SystemShare`]): [`drag`] and the
/// combination of its Jacobians (`∂f/∂x` is zero outside [`JacobianMode::Exact`]):
/// `blocks[a·3 + b] += (h c A/9) n̂n̂ᵀ`, `rhs_a += h f`.
///
/// # Panics
/// In [`JacobianMode::Exact`].
pub fn add_drag_system(
    x: &[Vec3; 3],
    v: &[Vec3; 3],
    area: f64,
    c: f64,
    wind: Vec3,
    mode: JacobianMode,
    out: &mut SystemShare<3>,
) {
    assert!(
        mode != JacobianMode::Exact,
        "add_drag_system: exact Jacobians"
    );
    let Some((Normal { nh, .. }, r)) = Normal::through_air(x, v, wind) else {
        return;
    };
    let coef = c * area / 3.0;
    let f = -coef * nh.dot(&r) * nh;
    let block = (out.h * coef / 3.0) * (nh * nh.transpose());
    for a in 0..3 {
        out.rhs[a] += out.h * f;
        for b in 0..3 {
            out.blocks[a * 3 + b] += block;
        }
    }
}

/// `∇ₓ (λᵀ D(x) a)` for drag's velocity Jacobian `D_ab = −(c A/9) n̂ n̂ᵀ` (every corner
/// pair; its position Jacobian is zero in [`JacobianMode::Definite`]), the term an exact
/// adjoint needs ([`crate::forces::jacobian_derivative`]). With `Λ = Σ λ_a`, `S = Σ a_b`:
///
/// ```text
/// λᵀ D a = −(c A/9) (n̂ᵀΛ)(n̂ᵀS)
/// q = ∂/∂n = −(c A/9) (I − n̂ n̂ᵀ) ((n̂ᵀS) Λ + (n̂ᵀΛ) S) / ‖n‖
/// ∇_{x₀,x₁,x₂} = (q × (x₂ − x₁), (x₂ − x₀) × q, q × (x₁ − x₀))
/// ```
/// the transposes of `∂n/∂x` applied to `q`. A triangle without a normal gives zero.
pub fn drag_jacobian_gradient(
    x: &[Vec3; 3],
    area: f64,
    c: f64,
    lambda: &[Vec3; 3],
    a: &[Vec3; 3],
) -> [Vec3; 3] {
    let Some(Normal {
        nh,
        len,
        a: e1,
        b: e2,
    }) = Normal::of(x)
    else {
        return [Vec3::zeros(); 3];
    };
    let big_l: Vec3 = lambda.iter().sum();
    let big_s: Vec3 = a.iter().sum();
    let r = big_l * nh.dot(&big_s) + big_s * nh.dot(&big_l);
    let q = (r - nh * nh.dot(&r)) * (-c * area / (9.0 * len));
    [q.cross(&(x[2] - x[1])), e2.cross(&q), q.cross(&e1)]
}

/// A triangle's unit normal `n̂ = n/‖n‖`, `n = a × b`, `a = x1 − x0`, `b = x2 − x0`.
struct Normal {
    nh: Vec3,
    len: f64,
    a: Vec3,
    b: Vec3,
}

impl Normal {
    /// The normal of triangle `x` and its mean velocity relative to the wind,
    /// `r = (v₀ + v₁ + v₂)/3 − w`, which drag and lift act on.
    fn through_air(x: &[Vec3; 3], v: &[Vec3; 3], wind: Vec3) -> Option<(Normal, Vec3)> {
        Some((Normal::of(x)?, (v[0] + v[1] + v[2]) / 3.0 - wind))
    }

    /// `None` for a triangle too thin to have a usable normal ([`MIN_RELATIVE_AREA`]).
    fn of(x: &[Vec3; 3]) -> Option<Normal> {
        let (a, b) = (x[1] - x[0], x[2] - x[0]);
        let n = a.cross(&b);
        let longest = a
            .norm_squared()
            .max(b.norm_squared())
            .max((b - a).norm_squared());
        let len = n.norm();
        if !(longest.is_finite() && len > MIN_RELATIVE_AREA * longest) {
            return None;
        }
        Some(Normal {
            nh: n / len,
            len,
            a,
            b,
        })
    }
}

/// `G ∂n/∂x_b` for the three corners, `∂n/∂x_{0,1,2} = ([x2 − x1]×, −[x2 − x0]×, [x1 − x0]×)`.
fn normal_chain(g: Mat3, x: &[Vec3; 3], a: Vec3, b: Vec3) -> [Mat3; 3] {
    [
        g * (x[2] - x[1]).cross_matrix(),
        -g * b.cross_matrix(),
        g * a.cross_matrix(),
    ]
}

/// Aerodynamic lift on one triangle (Kang & Cho §5, eqs. 32 and 34), perpendicular to the
/// relative velocity `r = v̄ − w` of the triangle through the air:
///
/// ```text
/// r̂ = r/‖r‖,  s = n̂·r̂,  σ = sign(s)
/// U = (σ n̂ × r̂) × r̂ = −σ (n̂ − s r̂)                               (eq. 32, ‖U‖ = cos θ)
/// f_total = c a (1 − |s|) ‖r‖² U = −c a (σ − t/ρ)(ρ² n̂ − t r),   ρ = ‖r‖, t = n̂·r  (eq. 34)
/// ```
/// split equally on the three corners; `a` rest area (m²), `c` lift coefficient (kg/m³,
/// Kang & Cho's `K_L` per unit area), `wind` w (m/s). Like drag, the result does not depend
/// on the triangle's orientation (n̂ → −n̂ flips σ and t). The paper's direction switch at
/// `s = 0` (edgewise flow) makes the force jump there; exactly at `s = 0`, or at rest
/// relative to the air, there is no lift.
///
/// Lift is applied explicitly: [`JacobianMode::System`] and [`JacobianMode::Definite`]
/// return zero Jacobians (its velocity Jacobian is not symmetric and would break the
/// conjugate gradient); [`JacobianMode::Exact`] returns the derivatives
///
/// ```text
/// ∂f/∂r = −c a [ B (−n̂ᵀ/ρ + t rᵀ/ρ³) + α (2 n̂ rᵀ − r n̂ᵀ − t I) ],   α = σ − t/ρ, B = ρ² n̂ − t r
/// ∂f/∂n̂ = −c a [ −B rᵀ/ρ + α (ρ² I − r rᵀ) ],   ∂n̂/∂n = (I − n̂ n̂ᵀ)/‖n‖
/// ```
pub fn lift(
    x: &[Vec3; 3],
    v: &[Vec3; 3],
    area: f64,
    c: f64,
    wind: Vec3,
    mode: JacobianMode,
) -> ElementForces<3> {
    let mut out = ElementForces::zero();
    let Some((Normal { nh, len, a, b }, r)) = Normal::through_air(x, v, wind) else {
        return out;
    };
    let rho = r.norm();
    let t = nh.dot(&r);
    if !(rho.is_finite() && rho > 0.0 && t != 0.0) {
        return out;
    }
    let sigma = t.signum();
    let alpha = sigma - t / rho;
    let big_b = rho * rho * nh - t * r;
    let coef = c * area / 3.0;
    let f = -coef * alpha * big_b;
    if mode == JacobianMode::Exact {
        let dalpha = -nh.transpose() / rho + (t / (rho * rho * rho)) * r.transpose();
        let db = 2.0 * nh * r.transpose() - r * nh.transpose() - t * Mat3::identity();
        let dfdr = -coef * (big_b * dalpha + alpha * db);
        let dfdn = -coef
            * (-big_b * r.transpose() / rho
                + alpha * (rho * rho * Mat3::identity() - r * r.transpose()))
            * (Mat3::identity() - nh * nh.transpose())
            / len;
        let dfdx = normal_chain(dfdn, x, a, b);
        for (dxa, dva) in out.dfdx.iter_mut().zip(&mut out.dfdv) {
            *dxa = dfdx;
            *dva = [dfdr / 3.0; 3];
        }
    }
    out.f = [f; 3];
    out
}
