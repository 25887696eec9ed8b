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
use super::condition::{hessian_coefficient, ConditionEval};
use super::deformation::Deformation;
use super::{ElementForces, JacobianMode, SystemShare};
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
    let mut out = ElementForces::zero();
    add_shear(&mut out, x, v, rest, k, kd, mode);
    out
}

/// Adds the shear force and Jacobians of one triangle to `out`: the result of
/// [`condition_forces`] on [`shear_condition`] (to rounding), with the diagonal Hessian
/// blocks applied as scalars. With `g_i = ∂C/∂x_i`, `v_u = Σ_l du_l v_l`,
/// `v_v = Σ_l dv_l v_l` and `h` the coefficient of `∂²C` chosen by `mode`:
///
/// ```text
/// f_i        = −(k C + k_d Ċ) g_i,                  Ċ = Σ_l g_l·v_l
/// ∂f_i/∂x_j  = −( k g_i g_jᵀ + h a (du_i dv_j + du_j dv_i) I
///               [+ k_d a g_i (dv_j v_u + du_j v_v)ᵀ  (Exact)] )
/// ∂f_i/∂v_j  = −k_d g_i g_jᵀ
/// ```
///
/// [`condition_forces`]: super::condition::condition_forces
pub fn add_shear(
    out: &mut ElementForces<3>,
    x: &[Vec3; 3],
    v: &[Vec3; 3],
    rest: &TriangleRest,
    k: f64,
    kd: f64,
    mode: JacobianMode,
) {
    let def = Deformation::new(x, rest);
    let a = rest.area;
    let (du, dv) = (def.du, def.dv);
    let c = a * def.wu.dot(&def.wv);
    let g: [Vec3; 3] = std::array::from_fn(|i| a * (du[i] * def.wv + dv[i] * def.wu));
    let cdot: f64 = g.iter().zip(v).map(|(gi, vi)| gi.dot(vi)).sum();
    let s = k * c + kd * cdot;
    let h = hessian_coefficient(mode, false, c, k, kd * cdot);
    let exact = mode == JacobianMode::Exact && kd != 0.0;
    let (vu, vv) = if exact {
        (
            du[0] * v[0] + du[1] * v[1] + du[2] * v[2],
            dv[0] * v[0] + dv[1] * v[1] + dv[2] * v[2],
        )
    } else {
        (Vec3::zeros(), Vec3::zeros())
    };
    for i in 0..3 {
        out.f[i] -= s * g[i];
        for j in 0..3 {
            let outer = g[i] * g[j].transpose();
            let mut kij = k * outer;
            let diag = h * (a * (du[i] * dv[j] + du[j] * dv[i]));
            for r in 0..3 {
                kij[(r, r)] += diag;
            }
            if exact {
                kij += (kd * a) * g[i] * (dv[j] * vu + du[j] * vv).transpose();
            }
            out.dfdx[i][j] -= kij;
            out.dfdv[i][j] -= kd * outer;
        }
    }
}

/// Adds the triangle's shear share of Baraff's eq. 18 ([`SystemShare`]): [`add_shear`]
/// followed by the combination of its Jacobians, without forming them
/// (`u_u = Σ_j du_j u_j`, `u_v = Σ_j dv_j u_j`):
///
/// ```text
/// blocks[i·3 + j] += (h k_d + h² k) g_i g_jᵀ + h² h_C a (du_i dv_j + du_j dv_i) I
/// rhs_i           −= h ((k C + k_d Ċ + k g·u) g_i + h_C a (du_i u_v + dv_i u_u))
/// ```
/// # Panics
/// In [`JacobianMode::Exact`].
pub fn add_shear_system(
    x: &[Vec3; 3],
    v: &[Vec3; 3],
    rest: &TriangleRest,
    (k, kd): (f64, f64),
    mode: JacobianMode,
    out: &mut SystemShare<3>,
) {
    assert!(
        mode != JacobianMode::Exact,
        "add_shear_system: exact Jacobians"
    );
    let def = Deformation::new(x, rest);
    let (a, h, u) = (rest.area, out.h, &out.u);
    let (du, dv) = (def.du, def.dv);
    let c = a * def.wu.dot(&def.wv);
    let g: [Vec3; 3] = std::array::from_fn(|i| a * (du[i] * def.wv + dv[i] * def.wu));
    let cdot: f64 = g.iter().zip(v).map(|(gi, vi)| gi.dot(vi)).sum();
    let along: f64 = g.iter().zip(u).map(|(gi, ui)| gi.dot(ui)).sum();
    let hc = hessian_coefficient(mode, false, c, k, kd * cdot);
    let (uu, uv) = (
        du[0] * u[0] + du[1] * u[1] + du[2] * u[2],
        dv[0] * u[0] + dv[1] * u[1] + dv[2] * u[2],
    );
    let s = k * c + kd * cdot + k * along;
    let outer_scale = h * kd + h * h * k;
    for i in 0..3 {
        out.rhs[i] -= h * (s * g[i] + (hc * a) * (du[i] * uv + dv[i] * uu));
        for j in 0..3 {
            let mut b = outer_scale * g[i] * g[j].transpose();
            let diag = (h * h * hc * a) * (du[i] * dv[j] + du[j] * dv[i]);
            for r in 0..3 {
                b[(r, r)] += diag;
            }
            out.blocks[i * 3 + j] += b;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::forces::condition::{condition_forces, max_relative_difference};
    use crate::forces::tests::Rng;
    use crate::Vec2;

    #[test]
    fn structured_shear_equals_the_generic_condition_forces_in_every_mode() {
        let mut rng = Rng::new(82);
        let mut worst: f64 = 0.0;
        for case in 0..200 {
            let x: [Vec3; 3] = rng.vecs(0.1);
            let v: [Vec3; 3] = rng.vecs(1.0);
            let Some(rest) = TriangleRest::new([
                Vec2::new(0.0, 0.0),
                Vec2::new(rng.range(0.05, 0.1), 0.0),
                Vec2::new(rng.range(-0.02, 0.05), rng.range(0.05, 0.1)),
            ]) else {
                continue;
            };
            let k = rng.range(1e1, 1e3);
            let kd = if case % 3 == 0 {
                0.0
            } else {
                rng.range(0.1, 10.0)
            };
            for mode in [
                JacobianMode::System,
                JacobianMode::Definite,
                JacobianMode::Exact,
            ] {
                let eval = shear_condition(&x, &rest);
                let generic = condition_forces(&eval, &v, [k], kd, [false], mode);
                let fast = shear(&x, &v, &rest, k, kd, mode);
                worst = worst.max(max_relative_difference(&fast, &generic));
            }
        }
        eprintln!("shear: structured vs generic, max relative difference {worst:.2e}");
        assert!(worst < 1e-12, "{worst}");
    }
}
