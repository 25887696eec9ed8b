//! The fused kernels of the implicit step's system ([`SystemShare`]) against the
//! combination of the elements' own Jacobians, `−h ∂f/∂v − h² ∂f/∂x` and
//! `h (f + ∂f/∂x u)`, for the solver's Jacobian modes.
use super::bend::folded_hinge;
use super::stretch_shear::{random_triangle, Shape};
use super::*;
use crate::forces::bend::{add_bend_system, bend};
use crate::forces::external::{add_drag_system, drag};
use crate::forces::shear::{add_shear, add_shear_system};
use crate::forces::stretch::{add_stretch, add_stretch_system, StretchParams};
use crate::forces::SystemShare;

const MODES: [JacobianMode; 2] = [JacobianMode::System, JacobianMode::Definite];

/// Relative differences of the blocks and right side `share` filled against those of `e`.
fn compare<const N: usize>(
    e: &ElementForces<N>,
    u: &[Vec3; N],
    h: f64,
    fill: impl FnOnce(&mut SystemShare<N>),
) -> (f64, f64) {
    let expected_blocks: [[Mat3; N]; N] =
        std::array::from_fn(|a| std::array::from_fn(|b| -h * e.dfdv[a][b] - h * h * e.dfdx[a][b]));
    let expected_rhs: Vec<Vec3> = (0..N)
        .map(|a| h * (e.f[a] + (0..N).map(|b| e.dfdx[a][b] * u[b]).sum::<Vec3>()))
        .collect();
    // Garbage in the buffers: `clear` must reset them.
    let mut blocks = vec![Mat3::identity(); N * N];
    let mut rhs = vec![Vec3::repeat(1.0); N];
    let mut share = SystemShare {
        h,
        u: *u,
        blocks: &mut blocks,
        rhs: &mut rhs,
    };
    share.clear();
    fill(&mut share);
    let got: [[Mat3; N]; N] = std::array::from_fn(|a| std::array::from_fn(|b| blocks[a * N + b]));
    (
        rel_err(&flat(&got), &flat(&expected_blocks)),
        rel_err(&flat_vecs(&rhs), &flat_vecs(&expected_rhs)),
    )
}

#[test]
fn bend_share_is_the_combination_of_the_bend_jacobians() {
    let mut rng = Rng::new(31);
    let mut worst: f64 = 0.0;
    for case in 0..300 {
        // Folds up to ±3.1 rad, some with thin wings; damping on and off.
        let alpha = rng.range(-3.1, 3.1);
        let x = folded_hinge(&mut rng, alpha, case % 10 == 0);
        let v: [Vec3; 4] = rng.vecs(0.5);
        let y: [Vec3; 4] = rng.vecs(0.01);
        let rest = rng.range(-1.0, 1.0);
        let k = rng.range(1e-6, 1e-2);
        let kd = if case % 3 == 0 {
            0.0
        } else {
            rng.range(0.0, 1e-3)
        };
        let h = rng.range(1e-3, 0.05);
        let u: [Vec3; 4] = std::array::from_fn(|j| h * v[j] + y[j]);
        for mode in MODES {
            let e = bend(&x, &v, rest, k, kd, mode);
            let (eb, er) = compare(&e, &u, h, |s| {
                add_bend_system(&x, &v, rest, (k, kd), mode, s)
            });
            assert!(
                eb < ROUND_TOL && er < ROUND_TOL,
                "case {case} {mode:?}: {eb:e} {er:e}"
            );
            worst = worst.max(eb).max(er);
        }
    }
    println!("bend share: worst relative difference {worst:.2e}");
}

#[test]
fn triangle_share_is_the_combination_of_stretch_shear_and_drag_jacobians() {
    let mut rng = Rng::new(32);
    let mut worst: f64 = 0.0;
    for case in 0..300 {
        let shape = [Shape::Generic, Shape::Squashed, Shape::Mirrored][case % 3];
        let (rest, x, v) = random_triangle(&mut rng, shape);
        let y: [Vec3; 3] = rng.vecs(0.01);
        // Rest scales around 1 so that compressed (clamped) and stretched components occur.
        let p = StretchParams {
            k: [rng.range(1e2, 1e4), rng.range(1e2, 1e4)],
            kd: if case % 4 == 0 {
                0.0
            } else {
                rng.range(0.1, 10.0)
            },
            bu: rng.range(0.7, 1.3),
            bv: rng.range(0.7, 1.3),
        };
        let (ks, kds) = (rng.range(1.0, 1e3), rng.range(0.0, 5.0));
        let (c, wind) = (rng.range(0.0, 2.0), rng.vec(3.0));
        let h = rng.range(1e-3, 0.05);
        let u: [Vec3; 3] = std::array::from_fn(|j| h * v[j] + y[j]);
        for mode in MODES {
            let mut e = ElementForces::zero();
            add_stretch(&mut e, &x, &v, &rest, &p, mode);
            add_shear(&mut e, &x, &v, &rest, ks, kds, mode);
            e.add(&drag(&x, &v, rest.area, c, wind, mode));
            let (eb, er) = compare(&e, &u, h, |s| {
                add_stretch_system(&x, &v, &rest, &p, mode, s);
                add_shear_system(&x, &v, &rest, (ks, kds), mode, s);
                add_drag_system(&x, &v, rest.area, c, wind, mode, s);
            });
            assert!(
                eb < ROUND_TOL && er < ROUND_TOL,
                "case {case} {mode:?}: {eb:e} {er:e}"
            );
            worst = worst.max(eb).max(er);
        }
    }
    println!("triangle share: worst relative difference {worst:.2e}");
}
