//! Sampler values (glTF 2.0 Appendix C) against hand-computed numbers.
use super::super::animation::{slerp, Interpolation, Sampler};

fn sampler(times: &[f64], values: &[f64], width: usize, i: Interpolation) -> Sampler {
    Sampler::new(times.to_vec(), values.to_vec(), width, i).unwrap()
}

fn at(s: &Sampler, t: f64, rotation: bool) -> Vec<f64> {
    let mut out = vec![0.0; s.width];
    s.sample(t, rotation, &mut out);
    out
}

#[test]
fn step_holds_each_key_and_clamps_outside_the_range() {
    let s = sampler(&[0.0, 1.0, 2.0], &[0.0, 10.0, 20.0], 1, Interpolation::Step);
    for (t, want) in [
        (-1.0, 0.0),
        (0.0, 0.0),
        (0.5, 0.0),
        (1.0, 10.0),
        (1.99, 10.0),
        (2.0, 20.0),
        (7.0, 20.0),
    ] {
        assert_eq!(at(&s, t, false), [want], "t = {t}");
    }
}

#[test]
fn linear_interpolates_each_component() {
    let s = sampler(
        &[1.0, 3.0],
        &[0.0, 2.0, -4.0, 10.0, 6.0, 0.0],
        3,
        Interpolation::Linear,
    );
    // t = 1.5: s = 0.25.
    assert_eq!(at(&s, 1.5, false), [2.5, 3.0, -3.0]);
    assert_eq!(at(&s, 0.0, false), [0.0, 2.0, -4.0]);
}

fn rot_z(deg: f64) -> [f64; 4] {
    let h = deg.to_radians() / 2.0;
    [0.0, 0.0, h.sin(), h.cos()]
}

#[test]
fn linear_rotations_slerp_at_constant_angular_speed_along_the_short_arc() {
    // identity → 90° about Z; a third of the way is exactly 30°, not the ≈ 27.6° of a
    // normalised linear blend.
    let s = sampler(
        &[0.0, 3.0],
        &[rot_z(0.0), rot_z(90.0)].concat(),
        4,
        Interpolation::Linear,
    );
    let q = at(&s, 1.0, true);
    let want = rot_z(30.0);
    for c in 0..4 {
        assert!((q[c] - want[c]).abs() < 1e-12, "{q:?} vs {want:?}");
    }
    // The same key stored as −q (same rotation): slerp still takes the 90° arc.
    let neg: Vec<f64> = rot_z(90.0).iter().map(|x| -x).collect();
    let q = slerp(rot_z(0.0), [neg[0], neg[1], neg[2], neg[3]], 1.0 / 3.0);
    for c in 0..4 {
        assert!((q[c] - want[c]).abs() < 1e-12, "{q:?}");
    }
    // Nearly equal quaternions fall back to a normalised blend without dividing by 0.
    let q = slerp(rot_z(0.0), rot_z(1e-9), 0.5);
    assert!((q.iter().map(|x| x * x).sum::<f64>() - 1.0).abs() < 1e-15);
}

#[test]
fn slerp_of_a_general_pair_matches_the_axis_angle_rotation() {
    // a = 40° about (1, 2, 2)/3, b = a · (60° about (0, 1, 0)): slerp(a, b, 0.25) = a · 15°.
    use nalgebra::{Unit, UnitQuaternion, Vector3};
    let a = UnitQuaternion::from_axis_angle(&Unit::new_normalize(Vector3::new(1.0, 2.0, 2.0)), 0.7);
    let r = |deg: f64| UnitQuaternion::from_axis_angle(&Vector3::y_axis(), f64::to_radians(deg));
    let b = a * r(60.0);
    let want = a * r(15.0);
    let v = |q: &UnitQuaternion<f64>| [q.i, q.j, q.k, q.w];
    let got = slerp(v(&a), v(&b), 0.25);
    for c in 0..4 {
        assert!(
            (got[c] - v(&want)[c]).abs() < 1e-12,
            "{got:?} vs {:?}",
            v(&want)
        );
    }
}

#[test]
fn cubic_spline_uses_tangents_scaled_by_the_key_interval() {
    // Keys at t = 0 and 2 (t_d = 2): v0 = 1, out-tangent b0 = 3; v1 = 5, in-tangent a1 = −1.
    // s = 0.25: h00 = 0.84375, h10 = t_d·0.140625, h01 = 0.15625, h11 = t_d·(−0.046875)
    // v = 0.84375 + 0.28125·3 + 0.15625·5 + 0.09375 = 2.5625.
    let values = [9.0, 1.0, 3.0, -1.0, 5.0, 9.0]; // [a0, v0, b0, a1, v1, b1]
    let s = sampler(&[0.0, 2.0], &values, 1, Interpolation::CubicSpline);
    assert!((at(&s, 0.5, false)[0] - 2.5625).abs() < 1e-14);
    assert_eq!(at(&s, 0.0, false), [1.0]);
    assert_eq!(at(&s, 2.0, false), [5.0]);
    assert_eq!(at(&s, 3.0, false), [5.0]);
    // Slopes at the keys are the stored tangents (per second), not tangent / t_d.
    let h = 1e-6;
    let d0 = (at(&s, h, false)[0] - at(&s, 0.0, false)[0]) / h;
    let d1 = (at(&s, 2.0, false)[0] - at(&s, 2.0 - h, false)[0]) / h;
    assert!(
        (d0 - 3.0).abs() < 1e-5 && (d1 + 1.0).abs() < 1e-5,
        "{d0} {d1}"
    );
}

#[test]
fn cubic_spline_rotations_are_normalised() {
    let key = |q: [f64; 4]| [[0.0; 4], q, [0.0; 4]].concat();
    let values = [key(rot_z(0.0)), key(rot_z(120.0))].concat();
    let s = sampler(&[0.0, 1.0], &values, 4, Interpolation::CubicSpline);
    let q = at(&s, 0.5, true);
    assert!((q.iter().map(|x| x * x).sum::<f64>() - 1.0).abs() < 1e-14);
    // Zero tangents, s = 0.5: equal blend of the keys, normalised: 60° about Z.
    let want = rot_z(60.0);
    assert!((0..4).all(|c| (q[c] - want[c]).abs() < 1e-12), "{q:?}");
}

#[test]
fn malformed_keyframes_are_refused_with_a_reason() {
    let bad = [
        (
            vec![0.0, 2.0, 1.0],
            vec![0.0; 3],
            1,
            Interpolation::Linear,
            "decreasing",
        ),
        (
            vec![0.0, f64::NAN],
            vec![0.0; 2],
            1,
            Interpolation::Linear,
            "non-finite time",
        ),
        (
            vec![0.0, 1.0],
            vec![0.0; 4],
            1,
            Interpolation::CubicSpline,
            "output numbers",
        ),
        (vec![], vec![], 1, Interpolation::Step, "no keyframes"),
        (
            vec![0.0],
            vec![f64::INFINITY],
            1,
            Interpolation::Step,
            "non-finite output",
        ),
    ];
    for (times, values, width, i, says) in bad {
        let e = Sampler::new(times, values, width, i).unwrap_err();
        assert!(e.contains(says), "{e}");
    }
}
