//! How the definite Jacobians change with position: the contraction an exact adjoint of the
//! linearised backward-Euler step needs (Stuyck §8.3; what Wojtan et al. 2006 drop).
//!
//! The step's matrix `A(x₀) = M − h D(x₀) − h² K(x₀)` and its right side's `K(x₀)(h v₀ + y)`
//! depend on the start positions through the Jacobians `D = ∂f/∂v`, `K = ∂f/∂x` of
//! [`JacobianMode::Definite`](crate::forces::JacobianMode::Definite) (what a replayed
//! control step solves with). Differentiating
//! `A Δv = b` for them adds `h G (∂D[dx₀] Δv + ∂K[dx₀] (x₁ − x₀))` to `dΔv`, whose transpose
//! is the gradient of one scalar per element,
//!
//! ```text
//! s(x) = λᵀ D(x) a + λᵀ K(x) b          (λ = ŵ the adjoint solve, a = Δv, b = x₁ − x₀)
//! ```
//! For a condition `C` (Baraff §4.1) with `g = ∂C/∂x`, `H = ∂²C/∂x²` (3N-vectors and
//! matrices), the definite Jacobians are `D = −k_d g gᵀ` and `K = −k g gᵀ − η H` with
//! `η = k C` on a stretched stretch component (`C > 0`), else 0 (see
//! [`crate::forces::condition`]), so
//!
//! ```text
//! ∇s = −H [ (k_d gᵀa + k gᵀb) λ + (λᵀg) (k_d a + k b) ] − [η > 0] k ( (λᵀHb) g + C ∇(λᵀHb) )
//! ```
//! Only the stretched stretch components need a third derivative of `C`
//! ([`stretch_hessian_gradient`]); bend and shear enter the definite `K` through `g gᵀ`
//! alone. Air drag's definite `D = −(c a/9) n̂ n̂ᵀ` changes with the normal
//! ([`crate::forces::external::drag_jacobian_gradient`]); a spring's with its direction
//! ([`spring_jacobian_gradient`]).
use super::condition::ConditionEval;
use super::deformation::Deformation;
use super::spring::SpringParams;
use crate::model::TriangleRest;
use crate::Vec3;

/// `∇ₓ [λᵀ D(x) a + λᵀ K(x) b]` for the definite Jacobians of the condition force
/// `f = −(k C + k_d Ċ) ∂C/∂x` (module doc). `hessian_gradient[m]` is `∇ₓ(λᵀ H_m b)`, needed
/// only for components with `clamp_compression[m]` (stretch) and `C_m > 0`.
#[allow(clippy::too_many_arguments)]
pub fn condition_jacobian_gradient<const N: usize, const M: usize>(
    eval: &ConditionEval<N, M>,
    hessian_gradient: &[[Vec3; N]; M],
    lambda: &[Vec3; N],
    a: &[Vec3; N],
    b: &[Vec3; N],
    k: [f64; M],
    kd: f64,
    clamp_compression: [bool; M],
) -> [Vec3; N] {
    let dot =
        |p: &[Vec3; N], q: &[Vec3; N]| -> f64 { p.iter().zip(q).map(|(p, q)| p.dot(q)).sum() };
    let mut out = [Vec3::zeros(); N];
    for m in 0..M {
        let k = k[m];
        let (g, hm) = (&eval.dc[m], &eval.d2c[m]);
        let (lg, ga, gb) = (dot(lambda, g), dot(g, a), dot(g, b));
        let s = kd * ga + k * gb;
        let mixed: [Vec3; N] = std::array::from_fn(|j| lg * (kd * a[j] + k * b[j]) + s * lambda[j]);
        let tension = clamp_compression[m] && eval.c[m] > 0.0;
        let lhb = if tension {
            (0..N)
                .map(|i| {
                    (0..N)
                        .map(|j| lambda[i].dot(&(hm[i][j] * b[j])))
                        .sum::<f64>()
                })
                .sum()
        } else {
            0.0
        };
        for (i, o) in out.iter_mut().enumerate() {
            *o -= (0..N).map(|j| hm[i][j] * mixed[j]).sum::<Vec3>();
            if tension {
                *o -= k * (lhb * g[i] + eval.c[m] * hessian_gradient[m][i]);
            }
        }
    }
    out
}

/// `∇ₓ(λᵀ H_m b)` for both components of the stretch condition
/// ([`crate::forces::stretch`]): with `L = ‖w‖`, `ŵ = w/L`, `P = I − ŵŵᵀ`, `Λ = Σ d_i λ_i`,
/// `B = Σ d_i b_i` (`d` = `du` or `dv`) and rest area `a`,
///
/// ```text
/// λᵀ H b = (a/L) (ΛᵀB − (ŵᵀΛ)(ŵᵀB))
/// ∇_{x_k} = −d_k (a/L²) [ ŵ (ΛᵀB − (ŵᵀΛ)(ŵᵀB)) + P Λ (ŵᵀB) + P B (ŵᵀΛ) ]
/// ```
/// A collapsed direction (no gradient in `eval`, see [`crate::forces::stretch`]) gives zero.
pub fn stretch_hessian_gradient(
    x: &[Vec3; 3],
    rest: &TriangleRest,
    eval: &ConditionEval<3, 2>,
    lambda: &[Vec3; 3],
    b: &[Vec3; 3],
) -> [[Vec3; 3]; 2] {
    let def = Deformation::new(x, rest);
    let mut out = [[Vec3::zeros(); 3]; 2];
    for (m, (w, d)) in [(def.wu, def.du), (def.wv, def.dv)].into_iter().enumerate() {
        if eval.dc[m].iter().all(|g| *g == Vec3::zeros()) {
            continue;
        }
        let big_l: Vec3 = (0..3).map(|i| d[i] * lambda[i]).sum();
        let big_b: Vec3 = (0..3).map(|i| d[i] * b[i]).sum();
        let gw = rest.area * unit_projection_gradient(w, big_l, big_b);
        for (o, dk) in out[m].iter_mut().zip(d) {
            *o = dk * gw;
        }
    }
    out
}

/// `∇_w [(ΛᵀB − (ŵᵀΛ)(ŵᵀB)) / ‖w‖] = −[ŵ (ΛᵀB − (ŵᵀΛ)(ŵᵀB)) + P Λ (ŵᵀB) + P B (ŵᵀΛ)] / ‖w‖²`
/// with `ŵ = w/‖w‖`, `P = I − ŵŵᵀ`: how `Λᵀ (P/‖w‖) B` changes with `w`, the form of the
/// stretch Hessian `a d_i d_j P/‖w‖`.
pub fn unit_projection_gradient(w: Vec3, big_l: Vec3, big_b: Vec3) -> Vec3 {
    let len = w.norm();
    let wh = w / len;
    let (wl, wb) = (wh.dot(&big_l), wh.dot(&big_b));
    let proj = |p: Vec3| p - wh * wh.dot(&p);
    (wh * (big_l.dot(&big_b) - wl * wb) + proj(big_l) * wb + proj(big_b) * wl)
        * (-1.0 / (len * len))
}

/// `∇ₓ [λᵀ D(x) a + λᵀ K(x) b]` for the definite Jacobians of one spring
/// ([`crate::forces::spring`]): with `d = x₁ − x₀`, `L = ‖d‖`, `Λ = λ₁ − λ₀` (likewise
/// `α` for `a`, `β` for `b`), `s = −Λᵀ J β − k_d (Λᵀd̂)(αᵀd̂)`,
///
/// ```text
/// stretched (L > L₀):  ΛᵀJβ = k [ Λᵀβ − L₀ (Λᵀβ/L − (Λᵀd)(βᵀd)/L³) ]
/// compressed:          ΛᵀJβ = k (Λᵀd)(βᵀd)/L²
/// ∇_{x₁} s = −∇_{x₀} s = ∂s/∂d
/// ```
pub fn spring_jacobian_gradient(
    x: &[Vec3; 2],
    p: &SpringParams,
    lambda: &[Vec3; 2],
    a: &[Vec3; 2],
    b: &[Vec3; 2],
) -> [Vec3; 2] {
    let d = x[1] - x[0];
    let len = d.norm();
    if !(len.is_finite() && len > 1e-12 * p.rest.max(f64::MIN_POSITIVE)) {
        return [Vec3::zeros(); 2];
    }
    let (lam, al, be) = (lambda[1] - lambda[0], a[1] - a[0], b[1] - b[0]);
    let l2 = len * len;
    // ∇_d of (pᵀd)(qᵀd)/L² times c.
    let projected = |p: Vec3, q: Vec3, c: f64| -> Vec3 {
        let (pd, qd) = (p.dot(&d), q.dot(&d));
        (p * qd + q * pd - d * (2.0 * pd * qd / l2)) * (c / l2)
    };
    let mut grad = -projected(lam, al, p.kd);
    grad -= if len > p.rest {
        let (ld, bd) = (lam.dot(&d), be.dot(&d));
        let l3 = l2 * len;
        (d * (lam.dot(&be) / l3) + (lam * bd + be * ld) / l3 - d * (3.0 * ld * bd / (l3 * l2)))
            * (p.k * p.rest)
    } else {
        projected(lam, be, p.k)
    };
    [-grad, grad]
}
