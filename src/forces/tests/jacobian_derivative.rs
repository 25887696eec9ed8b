//! The position derivatives of the definite Jacobians ([`crate::forces::jacobian_derivative`],
//! what the exact adjoint of keyframe control adds) against central differences of
//! `s(x) = λᵀ D(x) a + λᵀ K(x) b` computed from the forces' own [`JacobianMode::Definite`]
//! Jacobians.
use super::bend::folded_hinge;
use super::spring_lift::random_spring;
use super::stretch_shear::{random_triangle, Shape};
use super::*;
use crate::forces::bend::{bend, bend_condition};
use crate::forces::external::{drag, drag_jacobian_gradient};
use crate::forces::jacobian_derivative::{
    condition_jacobian_gradient, spring_jacobian_gradient, stretch_hessian_gradient,
};
use crate::forces::shear::{shear, shear_condition};
use crate::forces::spring::spring;
use crate::forces::stretch::{stretch, stretch_condition, StretchParams};

/// `λᵀ D a + λᵀ K b` of one element's Jacobians.
fn contraction<const N: usize>(
    e: &ElementForces<N>,
    lambda: &[Vec3; N],
    a: &[Vec3; N],
    b: &[Vec3; N],
) -> f64 {
    let mut s = 0.0;
    for (li, (dv, dx)) in lambda.iter().zip(e.dfdv.iter().zip(&e.dfdx)) {
        for j in 0..N {
            s += li.dot(&(dv[j] * a[j] + dx[j] * b[j]));
        }
    }
    s
}

/// Relative error of `analytic` against central differences of `s` with step `h`.
fn against_differences<const N: usize>(
    s: impl Fn(&[Vec3; N]) -> f64,
    analytic: &[Vec3; N],
    x: &[Vec3; N],
    h: f64,
) -> f64 {
    let fd = fd_gradient(s, x, h);
    rel_err(&flat_vecs(analytic), &flat_vecs(&fd))
}

#[test]
fn stretch_and_shear_jacobian_gradients_match_differences() {
    let mut rng = Rng::new(61);
    let (mut worst, mut tension_cases) = (0.0f64, 0);
    for case in 0..200 {
        let shape = [Shape::Generic, Shape::Mirrored][case % 2];
        let (rest, x, v) = random_triangle(&mut rng, shape);
        let p = StretchParams {
            k: [
                rng.range(1.0, 1e3) / rest.area,
                rng.range(1.0, 1e3) / rest.area,
            ],
            kd: rng.range(0.0, 5.0) / rest.area,
            bu: rng.range(0.9, 1.1),
            bv: rng.range(0.9, 1.1),
        };
        let (ks, kds) = (
            rng.range(1.0, 1e2) / rest.area,
            rng.range(0.0, 1.0) / rest.area,
        );
        let [lambda, a, b] = [rng.vecs::<3>(1.0), rng.vecs::<3>(1.0), rng.vecs::<3>(0.01)];
        let s = |x: &[Vec3; 3]| {
            let mut e = stretch(x, &v, &rest, &p, JacobianMode::Definite);
            e.add(&shear(x, &v, &rest, ks, kds, JacobianMode::Definite));
            contraction(&e, &lambda, &a, &b)
        };
        let se = stretch_condition(&x, &rest, p.bu, p.bv);
        tension_cases += se.c.iter().filter(|c| **c > 0.0).count();
        let third = stretch_hessian_gradient(&x, &rest, &se, &lambda, &b);
        let mut g = condition_jacobian_gradient(&se, &third, &lambda, &a, &b, p.k, p.kd, [true; 2]);
        let sh = shear_condition(&x, &rest);
        let none = [[Vec3::zeros(); 3]];
        let gs = condition_jacobian_gradient(&sh, &none, &lambda, &a, &b, [ks], kds, [false]);
        g.iter_mut().zip(gs).for_each(|(g, s)| *g += s);
        let err = against_differences(s, &g, &x, fd_step_triangle(&x));
        assert!(
            err < FD_TOL,
            "case {case} ({shape:?}): relative error {err:e}"
        );
        worst = worst.max(err);
    }
    assert!(
        tension_cases > 100,
        "too few stretched components ({tension_cases})"
    );
    eprintln!(
        "stretch+shear: 200 triangles, {tension_cases} stretched components, worst {worst:.2e}"
    );
}

#[test]
fn bend_jacobian_gradient_matches_differences() {
    let mut rng = Rng::new(62);
    let mut worst = 0.0f64;
    for case in 0..200 {
        let alpha = rng.range(-2.8, 2.8);
        let x = folded_hinge(&mut rng, alpha, false);
        let v = rng.vecs::<4>(1.0);
        let (k, kd, theta0) = (
            rng.range(1e-5, 1e-2),
            rng.range(0.0, 1e-4),
            rng.range(-1.0, 1.0),
        );
        let [lambda, a, b] = [rng.vecs::<4>(1.0), rng.vecs::<4>(1.0), rng.vecs::<4>(0.01)];
        let s = |x: &[Vec3; 4]| {
            let e = bend(x, &v, theta0, k, kd, JacobianMode::Definite);
            contraction(&e, &lambda, &a, &b)
        };
        let eval = bend_condition(&x, theta0);
        let none = [[Vec3::zeros(); 4]];
        let g = condition_jacobian_gradient(&eval, &none, &lambda, &a, &b, [k], kd, [false]);
        let err = against_differences(s, &g, &x, fd_step_hinge(&x));
        assert!(
            err < FD_TOL,
            "case {case} (fold {alpha:.2}): relative error {err:e}"
        );
        worst = worst.max(err);
    }
    eprintln!("bend: 200 hinges, worst {worst:.2e}");
}

#[test]
fn drag_and_spring_jacobian_gradients_match_differences() {
    let mut rng = Rng::new(63);
    let (mut worst_drag, mut worst_spring) = (0.0f64, 0.0f64);
    for case in 0..100 {
        let (rest, x, v) = random_triangle(&mut rng, Shape::Generic);
        let (c, wind) = (rng.range(0.1, 5.0), rng.vec(2.0));
        let [lambda, a, b] = [rng.vecs::<3>(1.0), rng.vecs::<3>(1.0), rng.vecs::<3>(0.01)];
        let s = |x: &[Vec3; 3]| {
            let e = drag(x, &v, rest.area, c, wind, JacobianMode::Definite);
            contraction(&e, &lambda, &a, &b)
        };
        let g = drag_jacobian_gradient(&x, rest.area, c, &lambda, &a);
        let err = against_differences(s, &g, &x, fd_step_triangle(&x));
        assert!(err < FD_TOL, "drag case {case}: relative error {err:e}");
        worst_drag = worst_drag.max(err);

        let (x, v, p) = random_spring(&mut rng, case % 2 == 0);
        let [lambda, a, b] = [rng.vecs::<2>(1.0), rng.vecs::<2>(1.0), rng.vecs::<2>(0.01)];
        let s = |x: &[Vec3; 2]| {
            let e = spring(x, &v, &p, JacobianMode::Definite);
            contraction(&e, &lambda, &a, &b)
        };
        let g = spring_jacobian_gradient(&x, &p, &lambda, &a, &b);
        let err = against_differences(s, &g, &x, 1e-6 * p.rest);
        assert!(err < FD_TOL, "spring case {case}: relative error {err:e}");
        worst_spring = worst_spring.max(err);
    }
    eprintln!("drag: worst {worst_drag:.2e}; spring: worst {worst_spring:.2e}");
}
