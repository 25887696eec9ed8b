//! A damped linear spring between two particles (Kang & Cho §3–4, Stuyck §5.4), with the
//! stabilised compressed-spring Jacobian of Choi & Ko 2002 (Kang & Cho §4.3, eq. 22).
//!
//! ```text
//! d = x₁ − x₀,  L = ‖d‖,  d̂ = d/L,  u = v₁ − v₀
//! f₀ = k (L − L₀) d̂ + k_d (d̂·u) d̂,         f₁ = −f₀
//! J = ∂f₀/∂x₁ = k [ (1 − L₀/L) I + (L₀/L) d̂ d̂ᵀ ]                      (Kang & Cho eq. 21)
//!     + (k_d/L) [ (d̂·u) I + d̂ uᵀ ] (I − d̂ d̂ᵀ)                  (damping, exact only)
//! ∂f₀/∂v₁ = k_d d̂ d̂ᵀ
//! ∂f₀/∂x₀ = −J,  ∂f₁/∂x₁ = −J,  ∂f₁/∂x₀ = J   (likewise for v)
//! ```
//! `k` stiffness (N/m), `k_d` damping (N·s/m), `L₀` rest length (m).
//!
//! Compressed (`L ≤ L₀`), the first term `(1 − L₀/L) I` is negative and grows without
//! bound as `L → 0`, which makes the implicit system indefinite. Eq. 22 replaces `L₀` by
//! `L` there, leaving `J = k d̂ d̂ᵀ` ([`JacobianMode::System`] and
//! [`JacobianMode::Definite`]); the damping's position derivative is dropped in both, as
//! Baraff §4.5 drops the non-symmetric damping term. [`JacobianMode::Exact`] keeps
//! everything so tests compare it with finite differences.
use super::{ElementForces, JacobianMode};
use crate::{Mat3, Vec3};

/// Stiffness and damping of one spring.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpringParams {
    /// Rest length `L₀` (m).
    pub rest: f64,
    /// Stiffness `k` (N/m).
    pub k: f64,
    /// Damping `k_d` along the spring (N·s/m).
    pub kd: f64,
}

/// Force and Jacobians of a spring between particles `x[0]` and `x[1]` (module doc).
/// Coincident particles (`L` not positive and finite) give no force.
pub fn spring(
    x: &[Vec3; 2],
    v: &[Vec3; 2],
    p: &SpringParams,
    mode: JacobianMode,
) -> ElementForces<2> {
    let mut out = ElementForces::zero();
    let d = x[1] - x[0];
    let len = d.norm();
    if !(len.is_finite() && len > 1e-12 * p.rest.max(f64::MIN_POSITIVE)) {
        return out;
    }
    let dh = d / len;
    let u = v[1] - v[0];
    let du = dh.dot(&u);
    let f = (p.k * (len - p.rest) + p.kd * du) * dh;
    let ddt = dh * dh.transpose();
    let mut j = if len > p.rest || mode == JacobianMode::Exact {
        let ratio = p.rest / len;
        p.k * ((1.0 - ratio) * Mat3::identity() + ratio * ddt)
    } else {
        p.k * ddt
    };
    if mode == JacobianMode::Exact {
        j += (p.kd / len) * (du * Mat3::identity() + dh * u.transpose()) * (Mat3::identity() - ddt);
    }
    let jv = p.kd * ddt;
    out.f = [f, -f];
    out.dfdx = [[-j, j], [j, -j]];
    out.dfdv = [[-jv, jv], [jv, -jv]];
    out
}
