//! [`JacobianMode::Definite`]: the solver's fallback makes `−∂f/∂x` and `−∂f/∂v` positive
//! semi-definite on any element, where [`JacobianMode::System`] can be indefinite.
use super::bend::folded_hinge;
use super::stretch_shear::{random_triangle, Shape};
use super::*;
use crate::forces::bend::bend;
use crate::forces::shear::shear;
use crate::forces::stretch::{stretch, StretchParams};

/// Smallest eigenvalue of the symmetric part of `−J`, relative to its largest magnitude.
fn min_relative_eigenvalue<const N: usize>(j: &[[Mat3; N]; N]) -> f64 {
    let n = 3 * N;
    let m = nalgebra::DMatrix::from_fn(n, n, |r, c| {
        let a = -j[r / 3][c / 3][(r % 3, c % 3)];
        let b = -j[c / 3][r / 3][(c % 3, r % 3)];
        0.5 * (a + b)
    });
    let eig = m.symmetric_eigenvalues();
    let max = eig.amax();
    if max == 0.0 {
        return 0.0;
    }
    eig.min() / max
}

#[test]
fn definite_mode_is_positive_semidefinite_where_system_mode_is_not() {
    let mut rng = Rng::new(7);
    let p = StretchParams {
        k: [3e4, 2e4],
        kd: 30.0,
        bu: 1.0,
        bv: 1.0,
    };
    let mut system_indefinite = 0;
    for _ in 0..200 {
        let (rest, x, v) = random_triangle(&mut rng, Shape::Generic);
        for (mode, count) in [
            (JacobianMode::System, true),
            (JacobianMode::Definite, false),
        ] {
            let mut e = stretch(&x, &v, &rest, &p, mode);
            e.add(&shear(&x, &v, &rest, 500.0, 5.0, mode));
            let worst = min_relative_eigenvalue(&e.dfdx).min(min_relative_eigenvalue(&e.dfdv));
            if count {
                system_indefinite += (worst < -1e-9) as usize;
            } else {
                assert!(
                    worst > -1e-12,
                    "definite triangle Jacobian has eigenvalue {worst}"
                );
            }
        }
        let alpha = rng.range(-3.0, 3.0);
        let xh = folded_hinge(&mut rng, alpha, false);
        let vh = rng.vecs(1.0);
        let e = bend(&xh, &vh, 0.0, 1e-3, 1e-4, JacobianMode::Definite);
        let worst = min_relative_eigenvalue(&e.dfdx).min(min_relative_eigenvalue(&e.dfdv));
        assert!(
            worst > -1e-12,
            "definite hinge Jacobian has eigenvalue {worst} at fold {alpha}"
        );
        let s = bend(&xh, &vh, 0.0, 1e-3, 1e-4, JacobianMode::System);
        system_indefinite += (min_relative_eigenvalue(&s.dfdx) < -1e-9) as usize;
    }
    // The fallback exists because System mode is indefinite on deformed elements.
    assert!(
        system_indefinite > 50,
        "System mode indefinite on {system_indefinite} cases"
    );
}
