//! The generic condition machinery on a spring `C = ‖x1 − x0‖ − L`, whose forces and
//! Jacobians are known in closed form.
use super::*;
use crate::forces::condition::condition_forces;

fn spring(x: &[Vec3; 2], rest: f64) -> ConditionEval<2, 1> {
    let d = x[1] - x[0];
    let len = d.norm();
    let dh = d / len;
    let p = (Mat3::identity() - dh * dh.transpose()) / len;
    let mut e = ConditionEval::zero();
    e.c[0] = len - rest;
    e.dc[0] = [-dh, dh];
    e.d2c[0] = [[p, -p], [-p, p]];
    e
}

#[test]
fn spring_force_and_stiffness_match_closed_form() {
    let x = [Vec3::new(0.1, 0.2, -0.3), Vec3::new(1.1, 0.7, 0.2)];
    let v = [Vec3::new(0.3, -1.0, 0.5), Vec3::new(-0.2, 0.4, 0.9)];
    let (k, kd, rest) = (50.0, 3.0, 0.8);
    let out = condition_forces(
        &spring(&x, rest),
        &v,
        [k],
        kd,
        [false],
        JacobianMode::System,
    );
    let d = x[1] - x[0];
    let (len, dh) = (d.norm(), d.normalize());
    let rate = dh.dot(&(v[1] - v[0]));
    let f1 = -(k * (len - rest) + kd * rate) * dh;
    assert!((out.f[1] - f1).amax() < 1e-12 && (out.f[0] + f1).amax() < 1e-12);
    let outer = dh * dh.transpose();
    let k11 = -k * outer - (k * (len - rest) + kd * rate) * (Mat3::identity() - outer) / len;
    assert!((out.dfdx[1][1] - k11).amax() < 1e-12);
    assert!((out.dfdv[0][1] - kd * outer).amax() < 1e-12);
}

#[test]
fn compressed_clamped_component_drops_only_its_geometric_stiffness_in_system_mode() {
    // Spring compressed to half its rest length, at rest (no damping contribution).
    let x = [Vec3::zeros(), Vec3::new(0.3, 0.4, 0.0)];
    let v = [Vec3::zeros(); 2];
    let eval = spring(&x, 1.0);
    let k = 10.0;
    let sys = condition_forces(&eval, &v, [k], 1.0, [true], JacobianMode::System);
    let exact = condition_forces(&eval, &v, [k], 1.0, [true], JacobianMode::Exact);
    let unclamped = condition_forces(&eval, &v, [k], 1.0, [false], JacobianMode::System);
    let dh = (x[1] - x[0]).normalize();
    // System, clamped: only −k ∇C ∇Cᵀ survives, so K is negative semi-definite.
    assert!((sys.dfdx[1][1] + k * dh * dh.transpose()).amax() < 1e-12);
    assert_eq!(exact.dfdx, unclamped.dfdx);
    assert!((exact.dfdx[1][1] - sys.dfdx[1][1]).amax() > 1.0);
    // A stretched spring is not clamped.
    let long = spring(&[Vec3::zeros(), Vec3::new(3.0, 4.0, 0.0)], 1.0);
    let a = condition_forces(&long, &v, [k], 1.0, [true], JacobianMode::System);
    let b = condition_forces(&long, &v, [k], 1.0, [false], JacobianMode::System);
    assert_eq!(a.dfdx, b.dfdx);
}

#[test]
fn spring_passes_the_generic_condition_checks() {
    let mut rng = Rng::new(7);
    let mut stats = Stats::default();
    for _ in 0..50 {
        let x: [Vec3; 2] = rng.vecs(1.0);
        let v: [Vec3; 2] = rng.vecs(2.0);
        let rest = (x[1] - x[0]).norm() * rng.range(0.5, 1.5);
        let case = ConditionCase {
            name: "spring",
            x,
            v,
            k: [rng.range(1.0, 100.0)],
            kd: rng.range(0.1, 10.0),
            clamp: [true],
            h: 1e-6 * (x[1] - x[0]).norm(),
        };
        let force = |x: &[Vec3; 2], v: &[Vec3; 2], mode| {
            condition_forces(&spring(x, rest), v, case.k, case.kd, [true], mode)
        };
        let indep = |x: &[Vec3; 2]| [(x[1] - x[0]).norm() - rest];
        check_condition_case(&case, force, |x| spring(x, rest), indep, &mut stats);
    }
    eprintln!("spring: {stats:?}");
}
