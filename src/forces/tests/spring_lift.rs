//! Springs (Kang & Cho eqs. 21–22) and aerodynamic lift (Kang & Cho §5) against finite
//! differences and independent formulas.
use super::stretch_shear::{random_triangle, Shape};
use super::*;
use crate::forces::external::lift;
use crate::forces::spring::{spring, SpringParams};

pub fn random_spring(rng: &mut Rng, stretch: bool) -> ([Vec3; 2], [Vec3; 2], SpringParams) {
    let x0 = rng.vec(1.0);
    let dir = rng.vec(1.0).normalize();
    let rest = rng.range(0.05, 0.5);
    let len = if stretch {
        rest * rng.range(1.01, 1.5)
    } else {
        rest * rng.range(0.2, 0.99)
    };
    let x = [x0, x0 + len * dir];
    let v = rng.vecs::<2>(2.0);
    let p = SpringParams {
        rest,
        k: rng.range(1.0, 1e4),
        kd: rng.range(0.0, 10.0),
    };
    (x, v, p)
}

#[test]
fn spring_matches_finite_differences_and_hookes_law() {
    let mut rng = Rng::new(90);
    let (mut err_x, mut err_v, mut err_f) = (0.0f64, 0.0f64, 0.0f64);
    for case in 0..200 {
        let (x, v, p) = random_spring(&mut rng, case % 2 == 0);
        let name = format!("spring x={x:?} v={v:?} {p:?}");
        let exact = spring(&x, &v, &p, JacobianMode::Exact);
        let h = 1e-6 * p.rest;
        let jx = fd_jacobian(|x| spring(x, &v, &p, JacobianMode::Exact).f, &x, h);
        // The force is affine in v: a large step keeps rounding of the (large) elastic
        // force out of the difference.
        let jv = fd_jacobian(|v| spring(&x, v, &p, JacobianMode::Exact).f, &v, 1e-2);
        record_jacobians((&mut err_x, &mut err_v), &exact, (&jx, &jv), FD_TOL, &name);
        // Hooke plus dashpot along the spring, computed independently from x₀'s side.
        let d = x[0] - x[1];
        let n = d / d.norm();
        let expected1 = p.k * (d.norm() - p.rest) * n + p.kd * n.dot(&(v[0] - v[1])) * n;
        let err = rel_err(&flat_vecs(&exact.f), &flat_vecs(&[-expected1, expected1]));
        record(&mut err_f, err, ROUND_TOL, "f", &name);
    }
    eprintln!("spring: max rel err dfdx {err_x:e}, dfdv {err_v:e}, f {err_f:e}");
}

#[test]
fn compressed_spring_jacobian_is_the_stabilised_one_of_eq_22() {
    let mut rng = Rng::new(91);
    for case in 0..100 {
        let stretched = case % 2 == 0;
        let (x, v, p) = random_spring(&mut rng, stretched);
        let d = x[1] - x[0];
        let n = d / d.norm();
        let system = spring(&x, &v, &p, JacobianMode::System);
        let definite = spring(&x, &v, &p, JacobianMode::Definite);
        assert_eq!(system, definite);
        let expected = if stretched {
            let r = p.rest / d.norm();
            p.k * ((1.0 - r) * Mat3::identity() + r * n * n.transpose())
        } else {
            p.k * n * n.transpose()
        };
        assert!((system.dfdx[0][1] - expected).amax() <= 1e-12 * expected.amax());
        // −∂f/∂x = [[J, −J], [−J, J]] is positive semi-definite in both regimes (a stable
        // implicit system) since J is.
        let eig = system.dfdx[0][1].symmetric_eigenvalues();
        assert!(eig.iter().all(|e| *e >= -1e-9 * p.k), "{eig:?}");
    }
}

#[test]
fn lift_matches_finite_differences_and_kang_cho_eq_34() {
    let mut rng = Rng::new(92);
    let (mut err_x, mut err_v, mut err_f) = (0.0f64, 0.0f64, 0.0f64);
    for _ in 0..200 {
        let (rest, x, v) = random_triangle(&mut rng, Shape::Generic);
        let (c, wind) = (rng.range(0.1, 2.0), rng.vec(2.0));
        let name = format!("lift x={x:?} v={v:?} wind={wind:?}");
        let r = (v[0] + v[1] + v[2]) / 3.0 - wind;
        let n = (x[1] - x[0]).cross(&(x[2] - x[0])).normalize();
        let s = n.dot(&r.normalize());
        // Stay clear of the paper's direction switch at s = 0 for the differences.
        if s.abs() < 0.05 || s.abs() > 0.95 {
            continue;
        }
        let exact = lift(&x, &v, rest.area, c, wind, JacobianMode::Exact);
        let jx = fd_jacobian(
            |x| lift(x, &v, rest.area, c, wind, JacobianMode::Exact).f,
            &x,
            fd_step_triangle(&x),
        );
        let jv = fd_jacobian(
            |v| lift(&x, v, rest.area, c, wind, JacobianMode::Exact).f,
            &v,
            1e-6 * r.norm(),
        );
        record_jacobians((&mut err_x, &mut err_v), &exact, (&jx, &jv), 1e-4, &name);
        // Eq. 32–34 literally: U = (n̂ × v̂) × v̂ with n̂ facing the flow.
        let rh = r.normalize();
        let ns = if s > 0.0 { n } else { -n };
        let u = ns.cross(&rh).cross(&rh);
        let total = c * rest.area * (1.0 - ns.dot(&rh)) * r.norm_squared() * u;
        let err = rel_err(&flat_vecs(&exact.f), &flat_vecs(&[total / 3.0; 3]));
        record(&mut err_f, err, ROUND_TOL, "f", &name);
        // Perpendicular to the relative velocity; applied explicitly in the solver.
        assert!(exact.f[0].dot(&rh).abs() <= 1e-9 * exact.f[0].norm());
        let system = lift(&x, &v, rest.area, c, wind, JacobianMode::System);
        assert_eq!(system.f, exact.f);
        assert!(flat(&system.dfdx)
            .iter()
            .chain(&flat(&system.dfdv))
            .all(|e| *e == 0.0));
    }
    eprintln!("lift: max rel err dfdx {err_x:e}, dfdv {err_v:e}, f {err_f:e}");
}
