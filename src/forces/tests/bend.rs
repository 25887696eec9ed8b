//! Bend (Baraff §4.3, Stuyck §7.6): the dihedral angle against constructed hinges and an
//! independent formula, forces and Jacobians against finite differences.
use super::*;
use crate::forces::bend::{bend, bend_condition, dihedral_angle};
use std::f64::consts::PI;

/// Hinge folded by `alpha` in a local frame, then rotated and translated at random.
///
/// Local frame: edge `x2 = 0`, `x1 = (ℓ, 0, 0)`; wing `x0 = (p_A, h_A, 0)` (so `n_A = +z`);
/// wing `x3 = (p_B, −h_B cos α, −h_B sin α)`, i.e. rotated by `α` about the edge away from
/// `n_A` for `α > 0`. `thin` makes both wing heights `1e-3 ℓ`.
pub fn folded_hinge(rng: &mut Rng, alpha: f64, thin: bool) -> [Vec3; 4] {
    let l = rng.range(0.01, 0.05);
    let (ha, hb) = if thin {
        (1e-3 * l, 1e-3 * l)
    } else {
        (rng.range(0.2, 1.0) * l, rng.range(0.2, 1.0) * l)
    };
    let (pa, pb) = (rng.range(-0.5, 1.5) * l, rng.range(-0.5, 1.5) * l);
    let local = [
        Vec3::new(pa, ha, 0.0),
        Vec3::new(l, 0.0, 0.0),
        Vec3::zeros(),
        Vec3::new(pb, -hb * alpha.cos(), -hb * alpha.sin()),
    ];
    let r = rng.rotation();
    let t = rng.vec(0.1);
    local.map(|p| r * p + t)
}

/// Dihedral angle from the in-plane perpendiculars of the wings to the edge, a different
/// construction from the normals used by [`dihedral_angle`].
fn independent_angle(x: &[Vec3; 4]) -> f64 {
    let e = (x[1] - x[2]).normalize();
    let perp = |p: Vec3| {
        let d = p - x[2];
        d - e * d.dot(&e)
    };
    let (ua, ub) = (perp(x[0]), perp(x[3]));
    (-ua.cross(&ub).dot(&e)).atan2(-ua.dot(&ub))
}

fn special_angles() -> Vec<f64> {
    let deg = PI / 180.0;
    vec![
        0.0,
        1e-4,
        -1e-4,
        1e-7,
        -1e-7,
        170.0 * deg,
        -170.0 * deg,
        90.0 * deg,
        -45.0 * deg,
    ]
}

#[test]
fn dihedral_angle_equals_constructed_fold() {
    let mut rng = Rng::new(10);
    let mut angles = special_angles();
    angles.extend((0..100).map(|i| -3.1 + 6.2 * i as f64 / 99.0));
    let mut worst = 0.0f64;
    for alpha in angles {
        for thin in [false, true] {
            let x = folded_hinge(&mut rng, alpha, thin);
            let theta = dihedral_angle(&x).expect("hinge is not degenerate");
            // Up to rounding of the constructed coordinates (relative 1e-16 of the
            // translation over the wing height).
            let tol = if thin { 1e-10 } else { 1e-13 };
            assert!((theta - alpha).abs() < tol, "α = {alpha}, θ = {theta}");
            worst = worst.max((theta - alpha).abs());
        }
    }
    eprintln!("dihedral angle: worst |θ − α| = {worst:e}");
}

#[test]
fn dihedral_angle_matches_independent_formula_on_random_hinges() {
    let mut rng = Rng::new(11);
    for _ in 0..300 {
        let x: [Vec3; 4] = rng.vecs(0.05);
        let (Some(theta), indep) = (dihedral_angle(&x), independent_angle(&x)) else {
            continue;
        };
        // Same angle modulo 2π (both in (−π, π]).
        let d = (theta - indep + PI).rem_euclid(2.0 * PI) - PI;
        assert!(d.abs() < 1e-9, "θ = {theta}, independent {indep}");
    }
}

#[test]
fn bend_matches_finite_differences_energy_and_dropped_terms() {
    let mut rng = Rng::new(12);
    let mut stats = Stats::default();
    let mut cases: Vec<(f64, bool)> = special_angles().into_iter().map(|a| (a, false)).collect();
    cases.extend(special_angles().into_iter().map(|a| (a, true)));
    cases.extend((0..200).map(|_| (rng.range(-3.0, 3.0), false)));
    for (alpha, thin) in cases {
        let x = folded_hinge(&mut rng, alpha, thin);
        // Random rest angle, keeping C = θ − θ₀ away from the ±π wrap.
        let mut rest = rng.range(-0.5, 0.5);
        if (alpha - rest).abs() > 3.0 {
            rest = 0.0;
        }
        let v = rng.vecs(1.0);
        let k = rng.range(1e-4, 1e-2);
        let kd = rng.range(0.01, 0.2) * k;
        let indep = |x: &[Vec3; 4]| [independent_angle(x) - rest];
        let case = ConditionCase {
            name: &format!("bend α={alpha} thin={thin} x={x:?}"),
            x,
            v,
            k: [k],
            kd,
            clamp: [false],
            h: fd_step_hinge(&x),
        };
        let force = |x: &[Vec3; 4], v: &[Vec3; 4], mode| bend(x, v, rest, k, kd, mode);
        check_condition_case(&case, force, |x| bend_condition(x, rest), indep, &mut stats);
    }
    eprintln!("bend: {stats:?}");
}

#[test]
fn hinge_at_rest_angle_moving_rigidly_feels_no_bend_force() {
    let mut rng = Rng::new(13);
    for _ in 0..50 {
        let alpha = rng.range(-3.0, 3.0);
        let x = folded_hinge(&mut rng, alpha, false);
        let rest = dihedral_angle(&x).unwrap();
        let (omega, c) = (rng.vec(3.0), rng.vec(1.0));
        let v = x.map(|xi| omega.cross(&xi) + c);
        let out = bend(&x, &v, rest, 1e-3, 1e-4, JacobianMode::System);
        // Scale: a 1 rad fold gives forces ~ k / h ~ 1e-3 / 1e-2.
        for f in out.f {
            assert!(f.amax() < 1e-12, "{f:?}");
        }
    }
}

#[test]
fn bend_condition_wraps_across_pi() {
    let mut rng = Rng::new(14);
    let deg = PI / 180.0;
    let x = folded_hinge(&mut rng, -175.0 * deg, false);
    let c = bend_condition(&x, 175.0 * deg).c[0];
    assert!((c - 10.0 * deg).abs() < 1e-12, "{c}");
    // The other way round (θ − θ₀ above π, wrapped down), and within (−π, π) unwrapped.
    let x = folded_hinge(&mut rng, 175.0 * deg, false);
    let c = bend_condition(&x, -175.0 * deg).c[0];
    assert!((c + 10.0 * deg).abs() < 1e-12, "{c}");
    let c = bend_condition(&x, 170.0 * deg).c[0];
    assert!((c - 5.0 * deg).abs() < 1e-12, "{c}");
}

#[test]
fn degenerate_hinges_exert_no_force() {
    let e1 = Vec3::new(0.1, 0.0, 0.0);
    let v = [Vec3::new(0.0, 0.0, 1.0); 4];
    let hinges = [
        // Wing A on the edge line.
        [
            Vec3::new(0.05, 0.0, 0.0),
            e1,
            Vec3::zeros(),
            Vec3::new(0.05, -0.05, 0.0),
        ],
        // Zero-length edge.
        [
            Vec3::new(0.0, 0.05, 0.0),
            Vec3::zeros(),
            Vec3::zeros(),
            Vec3::new(0.0, -0.05, 0.0),
        ],
        // Everything at one point.
        [Vec3::zeros(); 4],
        // Non-finite input.
        [
            Vec3::new(f64::NAN, 0.0, 0.0),
            e1,
            Vec3::zeros(),
            Vec3::new(0.05, -0.05, 0.0),
        ],
    ];
    for x in hinges {
        assert_eq!(dihedral_angle(&x), None);
        for mode in [JacobianMode::System, JacobianMode::Exact] {
            assert_eq!(bend(&x, &v, 0.3, 1.0, 0.1, mode), ElementForces::zero());
        }
    }
}
