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
use super::condition::{hessian_coefficient, ConditionEval};
use super::deformation::Deformation;
use super::{ElementForces, JacobianMode, SystemShare};
use crate::model::TriangleRest;
use crate::{Mat3, Vec3};

/// Below this `‖w‖` a stretch direction is treated as collapsed (no direction, no Hessian).
const MIN_STRETCH: f64 = 1e-12;

/// Parameters of the stretch force of one triangle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StretchParams {
    /// Stiffness `k` of each component of `C = a (‖w_u‖ − b_u, ‖w_v‖ − b_v)`: (u, v).
    pub k: [f64; 2],
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
    let mut out = ElementForces::zero();
    add_stretch(&mut out, x, v, rest, p, mode);
    out
}

/// Adds the stretch force and Jacobians of one triangle to `out`: the result of
/// [`condition_forces`] on [`stretch_condition`] (to rounding), computed without the
/// per-block Hessians. With `P = (a/‖w‖)(I − ŵŵᵀ)`, `w_d = Σ_l d_l v_l` and the
/// coefficient `h` of `∂²C` chosen by `mode` as in [`condition_forces`], every block of
/// one component is `d_i d_j` times one 3x3 matrix:
///
/// ```text
/// f_i        = −(k C + k_d Ċ) a d_i ŵ,           Ċ = a ŵ·w_d
/// ∂f_i/∂x_j  = −d_i d_j ( k a² ŵŵᵀ + h P [+ k_d a ŵ (P w_d)ᵀ  (Exact)] )
/// ∂f_i/∂v_j  = −d_i d_j k_d a² ŵŵᵀ
/// ```
/// (`d = du` and `k = k_u` for the u component, `dv` and `k_v` for v).
///
/// [`condition_forces`]: super::condition::condition_forces
pub fn add_stretch(
    out: &mut ElementForces<3>,
    x: &[Vec3; 3],
    v: &[Vec3; 3],
    rest: &TriangleRest,
    p: &StretchParams,
    mode: JacobianMode,
) {
    let def = Deformation::new(x, rest);
    let a = rest.area;
    let kd = p.kd;
    for (k, (w, d, b)) in
        p.k.into_iter()
            .zip([(def.wu, def.du, p.bu), (def.wv, def.dv, p.bv)])
    {
        let len = w.norm();
        let c = a * (len - b);
        if !len.is_finite() || len < MIN_STRETCH {
            // No direction: zero gradient and Hessian (a non-finite C still poisons f, as
            // in the generic form).
            let s = k * c;
            for f in out.f.iter_mut() {
                *f -= s * Vec3::zeros();
            }
            continue;
        }
        let wh = w / len;
        let wd: Vec3 = d[0] * v[0] + d[1] * v[1] + d[2] * v[2];
        let cdot = a * wh.dot(&wd);
        let s = k * c + kd * cdot;
        let h = hessian_coefficient(mode, true, c, k, kd * cdot);
        let g = a * wh;
        let outer = wh * wh.transpose();
        let proj = (Mat3::identity() - outer) * (a / len);
        let mut kx = (k * a * a) * outer + h * proj;
        if mode == JacobianMode::Exact && kd != 0.0 {
            kx += (kd * a) * wh * (proj * wd).transpose();
        }
        let kv = (kd * a * a) * outer;
        for i in 0..3 {
            out.f[i] -= (s * d[i]) * g;
            for j in 0..3 {
                let dd = d[i] * d[j];
                out.dfdx[i][j] -= dd * kx;
                out.dfdv[i][j] -= dd * kv;
            }
        }
    }
}

/// Adds the triangle's stretch share of Baraff's eq. 18 ([`SystemShare`]): [`add_stretch`]
/// followed by the combination of its Jacobians, without forming them. Per component
/// (`d = du` or `dv`, `k = k_u` or `k_v`, `u_d = Σ_j d_j u_j`, `K = k a² ŵŵᵀ + h_C P` the stiffness matrix of
/// [`add_stretch`]):
///
/// ```text
/// blocks[i·3 + j] += d_i d_j (h k_d a² ŵŵᵀ + h² K)
/// rhs_i           −= h d_i ((k C + k_d Ċ) a ŵ + K u_d)
/// ```
/// # Panics
/// In [`JacobianMode::Exact`].
pub fn add_stretch_system(
    x: &[Vec3; 3],
    v: &[Vec3; 3],
    rest: &TriangleRest,
    p: &StretchParams,
    mode: JacobianMode,
    out: &mut SystemShare<3>,
) {
    assert!(
        mode != JacobianMode::Exact,
        "add_stretch_system: exact Jacobians"
    );
    let def = Deformation::new(x, rest);
    let (a, h) = (rest.area, out.h);
    let kd = p.kd;
    for (k, (w, d, b)) in
        p.k.into_iter()
            .zip([(def.wu, def.du, p.bu), (def.wv, def.dv, p.bv)])
    {
        let len = w.norm();
        let c = a * (len - b);
        if !len.is_finite() || len < MIN_STRETCH {
            // As in `add_stretch`: no direction, but a non-finite C still poisons f.
            for r in out.rhs.iter_mut() {
                *r -= h * (k * c) * Vec3::zeros();
            }
            continue;
        }
        let wh = w / len;
        let wd: Vec3 = d[0] * v[0] + d[1] * v[1] + d[2] * v[2];
        let ud: Vec3 = d[0] * out.u[0] + d[1] * out.u[1] + d[2] * out.u[2];
        let cdot = a * wh.dot(&wd);
        let s = k * c + kd * cdot;
        let hc = hessian_coefficient(mode, true, c, k, kd * cdot);
        let outer = wh * wh.transpose();
        let kx = (k * a * a) * outer + hc * (Mat3::identity() - outer) * (a / len);
        let block = (h * kd * a * a) * outer + (h * h) * kx;
        let r = (s * a) * wh + kx * ud;
        for i in 0..3 {
            out.rhs[i] -= (h * d[i]) * r;
            for j in 0..3 {
                out.blocks[i * 3 + j] += (d[i] * d[j]) * block;
            }
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
    fn structured_stretch_equals_the_generic_condition_forces_in_every_mode() {
        let mut rng = Rng::new(81);
        let mut worst: f64 = 0.0;
        for case in 0..200 {
            let x: [Vec3; 3] = rng.vecs(0.1);
            let v: [Vec3; 3] = rng.vecs(1.0);
            let rest = TriangleRest::new([
                Vec2::new(0.0, 0.0),
                Vec2::new(rng.range(0.05, 0.1), 0.0),
                Vec2::new(rng.range(-0.02, 0.05), rng.range(0.05, 0.1)),
            ]);
            let Some(rest) = rest else { continue };
            // Compressed and stretched components both occur over the cases.
            let p = StretchParams {
                k: [rng.range(1e2, 1e4), rng.range(1e2, 1e4)],
                kd: if case % 3 == 0 {
                    0.0
                } else {
                    rng.range(0.1, 10.0)
                },
                bu: rng.range(0.5, 1.5),
                bv: rng.range(0.5, 1.5),
            };
            for mode in [
                JacobianMode::System,
                JacobianMode::Definite,
                JacobianMode::Exact,
            ] {
                let eval = stretch_condition(&x, &rest, p.bu, p.bv);
                let generic = condition_forces(&eval, &v, p.k, p.kd, [true, true], mode);
                worst = worst.max(max_relative_difference(
                    &stretch(&x, &v, &rest, &p, mode),
                    &generic,
                ));
            }
        }
        eprintln!("stretch: structured vs generic, max relative difference {worst:.2e}");
        assert!(worst < 1e-12, "{worst}");
    }
}
