//! Bend condition (Baraff §4.3, Stuyck §7.6 eq. 7.33-7.37): `C = θ − θ₀`, the dihedral
//! angle of a hinge.
//!
//! Particles `x0..x3`: `x1, x2` the shared edge, `x0` the wing of triangle A, `x3` the wing
//! of triangle B (Stuyck fig. 7.6).
//!
//! ```text
//! e   = x1 − x2,   ℓ = ‖e‖
//! n_A = (x2 − x0) × (x1 − x0),   n_B = (x1 − x3) × (x2 − x3)      (‖n‖ = twice the area)
//! sin θ = (n̂_A × n̂_B)·ê,   cos θ = n̂_A·n̂_B,   θ = atan2(sin θ, cos θ) ∈ (−π, π]
//! ```
//!
//! Sign convention: a flat hinge (wings on opposite sides of the edge) has `n_A ∥ n_B`
//! and `θ = 0`; `θ > 0` when both wings fold *against* the normal (a ridge seen from the
//! side the normals point to), `θ < 0` when they fold towards it; `θ` is smooth through 0.
//!
//! Gradient (Bridson et al. 2003, "Simulation of clothing with folds and wrinkles", §4,
//! written for this sign convention), with `q_A = n_A/‖n_A‖²`, `q_B = n_B/‖n_B‖²` and the
//! projections of the wings on the edge `t_A = (x0 − x2)·e/ℓ²`, `t_B = (x3 − x2)·e/ℓ²`:
//!
//! ```text
//! g0 = ∂θ/∂x0 = −ℓ q_A                 g3 = ∂θ/∂x3 = −ℓ q_B
//! g1 = ∂θ/∂x1 = −t_A g0 − t_B g3       g2 = ∂θ/∂x2 = −(1 − t_A) g0 − (1 − t_B) g3
//! ```
//!
//! Hessian: the exact derivative of these expressions (product and quotient rules; the
//! same result as Tamstorf & Grinspun 2013, "Discrete bending forces and their Jacobians"):
//!
//! ```text
//! ∂q_A/∂x_b = P_A ∂n_A/∂x_b,   P_A = (I − 2 n̂_A n̂_Aᵀ)/‖n_A‖²      (same for B)
//! ∂n_A/∂x_{0,1,2,3} = ([e]×, [x2 − x0]×, −[x1 − x0]×, 0)
//! ∂n_B/∂x_{0,1,2,3} = (0, −[x2 − x3]×, [x1 − x3]×, −[e]×)
//! ∂ℓ/∂x_{0,1,2,3}   = (0, ê, −ê, 0)
//! ∂t_A/∂x_{0,1,2,3} = (e, (x0 − x2) − 2 t_A e, −e − (x0 − x2) + 2 t_A e, 0) / ℓ²
//! ∂t_B/∂x_{0,1,2,3} = (0, (x3 − x2) − 2 t_B e, −e − (x3 − x2) + 2 t_B e, e) / ℓ²
//! ∂g0/∂x_b = −(q_A (∂ℓ/∂x_b)ᵀ + ℓ ∂q_A/∂x_b)        (g3 likewise with B)
//! ∂g1/∂x_b = −g0 (∂t_A/∂x_b)ᵀ − t_A ∂g0/∂x_b − g3 (∂t_B/∂x_b)ᵀ − t_B ∂g3/∂x_b
//! ∂g2/∂x_b = −∂g0/∂x_b − ∂g1/∂x_b − ∂g3/∂x_b              (translation invariance)
//! ```
//!
//! `[a]×` is the cross-product matrix, `[a]× b = a × b`. A hinge whose edge or either
//! triangle is degenerate (see [`dihedral_angle`]) has no defined angle and exerts no force.
use super::condition::{condition_forces, condition_system, ConditionEval};
use super::{ElementForces, JacobianMode, SystemShare};
use crate::{Mat3, Vec3};
use std::f64::consts::{PI, TAU};

/// A triangle whose `‖n‖` (twice its area) is below this fraction of the hinge's longest
/// squared edge length counts as degenerate.
const MIN_RELATIVE_AREA: f64 = 1e-6;
/// An edge whose squared length is below this fraction of the longest squared edge
/// length counts as degenerate.
const MIN_RELATIVE_EDGE: f64 = 1e-12;

/// Edge vector and (unnormalised) triangle normals of a non-degenerate hinge.
struct HingeFrame {
    e: Vec3,
    na: Vec3,
    nb: Vec3,
}

impl HingeFrame {
    fn new(x: &[Vec3; 4]) -> Option<HingeFrame> {
        let e = x[1] - x[2];
        let na = (x[2] - x[0]).cross(&(x[1] - x[0]));
        let nb = (x[1] - x[3]).cross(&(x[2] - x[3]));
        let longest = [x[0] - x[1], x[0] - x[2], x[3] - x[1], x[3] - x[2]]
            .iter()
            .fold(e.norm_squared(), |m, d| m.max(d.norm_squared()));
        // Negated comparisons so that NaN input also counts as degenerate.
        let ok = longest.is_finite()
            && longest > 0.0
            && e.norm_squared() > MIN_RELATIVE_EDGE * longest
            && na.norm() > MIN_RELATIVE_AREA * longest
            && nb.norm() > MIN_RELATIVE_AREA * longest;
        ok.then_some(HingeFrame { e, na, nb })
    }

    fn angle(&self) -> f64 {
        // sin θ and cos θ both scaled by ‖n_A‖‖n_B‖ > 0, which atan2 ignores.
        let s = self.na.cross(&self.nb).dot(&self.e) / self.e.norm();
        let c = self.na.dot(&self.nb);
        s.atan2(c)
    }
}

/// Dihedral angle `θ ∈ (−π, π]` of a hinge `[x0, x1, x2, x3]` (radians, sign convention in
/// the module doc); `None` if the edge is shorter than `1e-6` of the longest hinge edge or
/// either triangle's area is below `5e-7` of the longest squared edge length.
/// Use it for rest angles so they share the convention of [`bend`].
pub fn dihedral_angle(x: &[Vec3; 4]) -> Option<f64> {
    HingeFrame::new(x).map(|h| h.angle())
}

/// Value, gradient and Hessian of the bend condition `C = θ − θ₀`, wrapped into
/// `[−π, π)`; all zero for a degenerate hinge.
pub fn bend_condition(x: &[Vec3; 4], rest_angle: f64) -> ConditionEval<4, 1> {
    let mut eval = ConditionEval::zero();
    fill_bend_condition(x, rest_angle, &mut eval);
    eval
}

/// [`bend_condition`] written into `eval`, which must be zero: the assembly's path. Writing
/// in place avoids copying the 1.3 kB evaluation out of the function once per hinge (and
/// a temporary for row 2, and an `fmod` for the common wrap); the bits are the same as
/// [`bend_condition`]'s.
fn fill_bend_condition(x: &[Vec3; 4], rest_angle: f64, eval: &mut ConditionEval<4, 1>) {
    debug_assert!(
        *eval == ConditionEval::zero(),
        "fill_bend_condition: eval not zero"
    );
    let Some(h) = HingeFrame::new(x) else {
        return;
    };
    // θ − θ₀ + π wrapped into [0, 2π); the test spares the common case `fmod`.
    let shifted = h.angle() - rest_angle + PI;
    let wrapped = if (0.0..TAU).contains(&shifted) {
        shifted
    } else {
        shifted.rem_euclid(TAU)
    };
    eval.c[0] = wrapped - PI;

    let HingeFrame { e, na, nb } = h;
    let len2 = e.norm_squared();
    let len = len2.sqrt();
    let eh = e / len;
    let (na2, nb2) = (na.norm_squared(), nb.norm_squared());
    let (qa, qb) = (na / na2, nb / nb2);
    let g0 = -len * qa;
    let g3 = -len * qb;
    let (r0, r3) = (x[0] - x[2], x[3] - x[2]);
    let ta = r0.dot(&e) / len2;
    let tb = r3.dot(&e) / len2;
    eval.dc[0] = [
        g0,
        -ta * g0 - tb * g3,
        -(1.0 - ta) * g0 - (1.0 - tb) * g3,
        g3,
    ];

    // ℓ ∂q_A/∂x_b = ℓ P_A [a_b]× with ∂n_A/∂x_b = [a_b]×, and P_A [a]× =
    // ([a]× − 2 q_A (n_A × a)ᵀ)/‖n_A‖² (as n_Aᵀ[a]× = (n_A × a)ᵀ): a cross-product matrix
    // and a rank-one term, so ∂g0/∂x_b = −s_A [a_b]× + q_A w_bᵀ with s_A = ℓ/‖n_A‖² and
    // w_b = 2 s_A (n_A × a_b) − ∂ℓ/∂x_b (likewise for B). ∂n_A/∂x3 = ∂n_B/∂x0 = 0 and
    // ∂ℓ/∂x0 = ∂ℓ/∂x3 = 0: the wings do not couple (blocks (0, 3) and (3, 0) are zero).
    let (sa, sb) = (len / na2, len / nb2);
    let da = [e, x[2] - x[0], x[0] - x[1], Vec3::zeros()];
    let db = [Vec3::zeros(), x[3] - x[2], x[1] - x[3], -e];
    let dl = [Vec3::zeros(), eh, -eh, Vec3::zeros()];
    let wing = |s: f64, n: &Vec3, q: &Vec3, a: &Vec3, dl: &Vec3| -> Mat3 {
        let w = (2.0 * s) * n.cross(a) - dl;
        q * w.transpose() - s * a.cross_matrix()
    };
    let d2c = &mut eval.d2c[0];
    for b in 0..3 {
        d2c[0][b] = wing(sa, &na, &qa, &da[b], &dl[b]);
        d2c[3][b + 1] = wing(sb, &nb, &qb, &db[b + 1], &dl[b + 1]);
    }
    // Row 1 at columns 1 and 2; columns 0 and 3 by symmetry (a Hessian).
    let dta = [(r0 - 2.0 * ta * e) / len2, (2.0 * ta * e - e - r0) / len2];
    let dtb = [(r3 - 2.0 * tb * e) / len2, (2.0 * tb * e - e - r3) / len2];
    for (k, b) in [1, 2].into_iter().enumerate() {
        d2c[1][b] =
            -(g0 * dta[k].transpose() + ta * d2c[0][b] + g3 * dtb[k].transpose() + tb * d2c[3][b]);
    }
    d2c[1][0] = d2c[0][1].transpose();
    d2c[1][3] = d2c[3][1].transpose();
    // Row 2 by translation invariance: the rows of each column sum to zero.
    let [r0, r1, r2, r3] = d2c;
    for (b, out) in r2.iter_mut().enumerate() {
        *out = -(r0[b] + r1[b] + r3[b]);
    }
}

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
    let eval = bend_condition(x, rest_angle);
    condition_forces(&eval, v, [k], kd, [false], mode)
}

/// Adds the hinge's share of Baraff's eq. 18 ([`SystemShare`]): what [`bend`] and the
/// combination of its Jacobians give, without forming them ([`condition_system`]).
pub fn add_bend_system(
    x: &[Vec3; 4],
    v: &[Vec3; 4],
    rest_angle: f64,
    k: (f64, f64),
    mode: JacobianMode,
    out: &mut SystemShare<4>,
) {
    let mut eval = ConditionEval::zero();
    fill_bend_condition(x, rest_angle, &mut eval);
    condition_system(&eval, v, k, [false], mode, out);
}
