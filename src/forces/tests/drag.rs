//! Air drag and gravity (Baraff §4.5).
use super::stretch_shear::{random_triangle, Shape};
use super::*;
use crate::forces::external::{drag, gravity};

#[test]
fn drag_matches_finite_differences_and_independent_force() {
    let mut rng = Rng::new(20);
    let (mut err_x, mut err_v, mut err_f) = (0.0f64, 0.0f64, 0.0f64);
    for (shape, n) in [(Shape::Generic, 170), (Shape::Squashed, 30)] {
        for _ in 0..n {
            let (rest, x, v) = random_triangle(&mut rng, shape);
            let (c, wind) = (rng.range(0.1, 10.0), rng.vec(2.0));
            let name = format!("drag {shape:?} x={x:?} v={v:?}");
            let exact = drag(&x, &v, rest.area, c, wind, JacobianMode::Exact);
            let h = fd_step_triangle(&x);
            let jx = fd_jacobian(
                |x| drag(x, &v, rest.area, c, wind, JacobianMode::Exact).f,
                &x,
                h,
            );
            let jv = fd_jacobian(
                |v| drag(&x, v, rest.area, c, wind, JacobianMode::Exact).f,
                &v,
                fd_step_velocity(&v),
            );
            record_jacobians((&mut err_x, &mut err_v), &exact, (&jx, &jv), FD_TOL, &name);

            // Independent force: normal from another corner, total split in thirds.
            let n = (x[0] - x[2]).cross(&(x[1] - x[2])).normalize();
            let mean = (v[0] + v[1] + v[2]) / 3.0;
            let total = -c * rest.area * n.dot(&(mean - wind)) * n;
            let expected = [total / 3.0; 3];
            let err = rel_err(&flat_vecs(&exact.f), &flat_vecs(&expected));
            record(&mut err_f, err, ROUND_TOL, "f", &name);

            // System: no position derivative, the same (symmetric) velocity derivative.
            let system = drag(&x, &v, rest.area, c, wind, JacobianMode::System);
            assert_eq!(system.f, exact.f);
            assert_eq!(system.dfdv, exact.dfdv);
            assert!(flat(&system.dfdx).iter().all(|e| *e == 0.0));
            let block = (-c * rest.area / 9.0) * n * n.transpose();
            for row in &system.dfdv {
                for b in row {
                    assert!((b - block).amax() < 1e-12 * block.amax(), "{name}");
                }
            }
        }
    }
    eprintln!("drag: max rel err dfdx {err_x:e}, dfdv {err_v:e}, f {err_f:e}");
}

#[test]
fn drag_vanishes_when_moving_with_the_wind_or_edgewise() {
    let mut rng = Rng::new(21);
    for _ in 0..20 {
        let (rest, x, _) = random_triangle(&mut rng, Shape::Generic);
        let wind = rng.vec(3.0);
        let n = (x[1] - x[0]).cross(&(x[2] - x[0])).normalize();
        let edgewise = (x[1] - x[0]).normalize();
        for v in [[wind; 3], [wind + edgewise; 3]] {
            let out = drag(&x, &v, rest.area, 5.0, wind, JacobianMode::Exact);
            for f in out.f {
                assert!(f.amax() < 1e-12, "{f:?}");
            }
        }
        // Moving along the normal: the force opposes the motion.
        let out = drag(
            &x,
            &[wind + n; 3],
            rest.area,
            5.0,
            wind,
            JacobianMode::System,
        );
        assert!(out.f[0].dot(&n) < 0.0);
    }
}

#[test]
fn degenerate_triangle_feels_no_drag() {
    let x = [
        Vec3::zeros(),
        Vec3::new(1.0, 0.0, 0.0),
        Vec3::new(2.0, 0.0, 0.0),
    ];
    let out = drag(
        &x,
        &[Vec3::new(0.0, 1.0, 0.0); 3],
        0.1,
        1.0,
        Vec3::zeros(),
        JacobianMode::Exact,
    );
    assert_eq!(out, ElementForces::zero());
}

#[test]
fn gravity_is_mass_times_acceleration() {
    let g = Vec3::new(0.0, -9.81, 0.0);
    assert!((gravity(0.002, g) - Vec3::new(0.0, -0.01962, 0.0)).amax() < 1e-17);
}
