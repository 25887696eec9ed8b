//! Stretch and shear (Baraff §4.2-4.3) on random deformed triangles, squashed triangles
//! and mirrored UVs.
use super::*;
use crate::forces::shear::{shear, shear_condition};
use crate::forces::stretch::{stretch, stretch_condition, StretchParams};
use crate::model::TriangleRest;
use crate::Vec2;
use nalgebra::{Matrix2, Matrix3x2};

/// How a random case is deformed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shape {
    /// Random affine deformation (±30 %), rotation, translation and noise.
    Generic,
    /// As `Generic`, then the third corner pushed to 1e-3 of its height above the edge x0x1.
    Squashed,
    /// As `Generic` on a UV triangle mirrored in u (negative UV determinant).
    Mirrored,
}

/// A random well-shaped UV triangle, a few centimetres across.
pub fn random_rest(rng: &mut Rng) -> TriangleRest {
    loop {
        let uv: [Vec2; 3] =
            std::array::from_fn(|_| Vec2::new(rng.range(0.0, 0.05), rng.range(0.0, 0.05)));
        let l = (uv[1] - uv[0])
            .norm()
            .max((uv[2] - uv[0]).norm())
            .max((uv[2] - uv[1]).norm());
        if let Some(rest) = TriangleRest::new(uv) {
            if rest.area > 0.1 * l * l {
                return rest;
            }
        }
    }
}

/// `rest` mirrored in u, so its UV determinant changes sign.
pub fn mirror(rest: &TriangleRest) -> TriangleRest {
    let uv = rest.uv.map(|p| Vec2::new(-p.x, p.y));
    TriangleRest::new(uv).expect("mirroring keeps the area")
}

/// A random rest triangle and a deformed placement of it, with random velocities.
pub fn random_triangle(rng: &mut Rng, shape: Shape) -> (TriangleRest, [Vec3; 3], [Vec3; 3]) {
    let mut rest = random_rest(rng);
    if shape == Shape::Mirrored {
        let det = {
            let (d1, d2) = (rest.uv[1] - rest.uv[0], rest.uv[2] - rest.uv[0]);
            d1.x * d2.y - d2.x * d1.y
        };
        if det > 0.0 {
            rest = mirror(&rest);
        }
    }
    let f = Mat3::identity() + Mat3::from_fn(|_, _| rng.range(-0.3, 0.3));
    let r = rng.rotation();
    let t = rng.vec(0.1);
    let mut x = rest.uv.map(|p| r * f * Vec3::new(p.x, p.y, 0.0) + t);
    for xi in &mut x {
        *xi += rng.vec(0.002);
    }
    if shape == Shape::Squashed {
        let d = x[1] - x[0];
        let foot = x[0] + d * ((x[2] - x[0]).dot(&d) / d.norm_squared());
        x[2] = foot + 1e-3 * (x[2] - foot);
    }
    let v = rng.vecs(1.0);
    (rest, x, v)
}

/// `[w_u w_v]` computed independently of `TriangleRest::inv` (from the UVs directly).
fn independent_w(x: &[Vec3; 3], rest: &TriangleRest) -> (Vec3, Vec3, f64) {
    let (d1, d2) = (rest.uv[1] - rest.uv[0], rest.uv[2] - rest.uv[0]);
    let duv = Matrix2::new(d1.x, d2.x, d1.y, d2.y);
    let inv = duv
        .try_inverse()
        .expect("test triangles are not degenerate");
    let w = Matrix3x2::from_columns(&[x[1] - x[0], x[2] - x[0]]) * inv;
    (
        w.column(0).into(),
        w.column(1).into(),
        0.5 * duv.determinant().abs(),
    )
}

fn shapes() -> impl Iterator<Item = (Shape, usize)> {
    [
        (Shape::Generic, 160),
        (Shape::Squashed, 30),
        (Shape::Mirrored, 30),
    ]
    .into_iter()
}

#[test]
fn stretch_matches_finite_differences_energy_and_dropped_terms() {
    let mut rng = Rng::new(1);
    let mut stats = Stats::default();
    let mut compressed = 0;
    for (shape, n) in shapes() {
        for _ in 0..n {
            let (rest, x, v) = random_triangle(&mut rng, shape);
            let k = rng.range(10.0, 1000.0);
            let p = StretchParams {
                // The u and v fibres differ (warp and weft).
                k: [k, rng.range(10.0, 1000.0)],
                kd: rng.range(0.01, 0.2) * k,
                bu: rng.range(0.9, 1.1),
                bv: rng.range(0.9, 1.1),
            };
            let indep = |x: &[Vec3; 3]| {
                let (wu, wv, a) = independent_w(x, &rest);
                [a * (wu.norm() - p.bu), a * (wv.norm() - p.bv)]
            };
            compressed += indep(&x).iter().filter(|c| **c < 0.0).count();
            let case = ConditionCase {
                name: &format!("stretch {shape:?} x={x:?} uv={:?}", rest.uv),
                x,
                v,
                k: p.k,
                kd: p.kd,
                clamp: [true, true],
                h: fd_step_triangle(&x),
            };
            let force = |x: &[Vec3; 3], v: &[Vec3; 3], mode| stretch(x, v, &rest, &p, mode);
            let cond = |x: &[Vec3; 3]| stretch_condition(x, &rest, p.bu, p.bv);
            check_condition_case(&case, force, cond, indep, &mut stats);
        }
    }
    // Both the clamped and the unclamped branch must have been exercised.
    assert!(
        compressed > 50 && compressed < 2 * stats.cases - 50,
        "{compressed}"
    );
    eprintln!("stretch: {stats:?}");
}

#[test]
fn shear_matches_finite_differences_energy_and_dropped_terms() {
    let mut rng = Rng::new(2);
    let mut stats = Stats::default();
    for (shape, n) in shapes() {
        for _ in 0..n {
            let (rest, x, v) = random_triangle(&mut rng, shape);
            let k = rng.range(1.0, 100.0);
            let kd = rng.range(0.01, 0.2) * k;
            let indep = |x: &[Vec3; 3]| {
                let (wu, wv, a) = independent_w(x, &rest);
                [a * wu.dot(&wv)]
            };
            let case = ConditionCase {
                name: &format!("shear {shape:?} x={x:?} uv={:?}", rest.uv),
                x,
                v,
                k: [k],
                kd,
                clamp: [false],
                h: fd_step_triangle(&x),
            };
            let force = |x: &[Vec3; 3], v: &[Vec3; 3], mode| shear(x, v, &rest, k, kd, mode);
            let cond = |x: &[Vec3; 3]| shear_condition(x, &rest);
            check_condition_case(&case, force, cond, indep, &mut stats);
        }
    }
    eprintln!("shear: {stats:?}");
}

/// Rest placement `x_i = R (b_u u_i, b_v v_i, 0) + t` moving rigidly (`v = ω × x + c`).
fn rest_placement(rng: &mut Rng, rest: &TriangleRest, bu: f64, bv: f64) -> ([Vec3; 3], [Vec3; 3]) {
    let r = rng.rotation();
    let t = rng.vec(0.1);
    let x = rest.uv.map(|p| r * Vec3::new(bu * p.x, bv * p.y, 0.0) + t);
    let (omega, c) = (rng.vec(3.0), rng.vec(1.0));
    (x, x.map(|xi| omega.cross(&xi) + c))
}

#[test]
fn rest_shape_moving_rigidly_feels_no_stretch_or_shear_force() {
    let mut rng = Rng::new(3);
    for i in 0..50 {
        let mut rest = random_rest(&mut rng);
        if i % 2 == 1 {
            rest = mirror(&rest);
        }
        let (bu, bv) = (rng.range(0.9, 1.1), rng.range(0.9, 1.1));
        let (x, v) = rest_placement(&mut rng, &rest, bu, bv);
        let p = StretchParams {
            k: [1000.0, 1000.0],
            kd: 10.0,
            bu,
            bv,
        };
        let (k, kd) = (100.0, 1.0);
        // Scale of a force on this triangle at 1 % strain: k a² · 0.01 / L.
        let scale = rest.area * rest.area * 0.01 / longest_edge(&x);
        let fs = stretch(&x, &v, &rest, &p, JacobianMode::System);
        let fh = shear(&x, &v, &rest, k, kd, JacobianMode::System);
        for f in fs.f {
            assert!(f.amax() < 1e-9 * p.k[0] * scale, "{f:?}");
        }
        for f in fh.f {
            assert!(f.amax() < 1e-9 * k * scale, "{f:?}");
        }
    }
}

#[test]
fn stretch_condition_measures_stretch_along_u_and_v() {
    // Unit right triangle in UV stretched by 1.2 along u and 0.7 along v.
    let uv = [
        Vec2::new(0.0, 0.0),
        Vec2::new(0.1, 0.0),
        Vec2::new(0.0, 0.1),
    ];
    let rest = TriangleRest::new(uv).unwrap();
    let x = uv.map(|p| Vec3::new(1.2 * p.x, 0.0, 0.7 * p.y));
    let c = stretch_condition(&x, &rest, 1.0, 1.0).c;
    assert!((c[0] - 0.005 * 0.2).abs() < 1e-15 && (c[1] + 0.005 * 0.3).abs() < 1e-15);
    // The mirrored triangle measures the same.
    let m = mirror(&rest);
    let xm = m.uv.map(|p| Vec3::new(1.2 * p.x, 0.0, 0.7 * p.y));
    assert_eq!(stretch_condition(&xm, &m, 1.0, 1.0).c, c);
}

#[test]
fn collapsed_triangles_give_finite_forces() {
    let rest = TriangleRest::new([
        Vec2::new(0.0, 0.0),
        Vec2::new(0.1, 0.0),
        Vec2::new(0.0, 0.1),
    ])
    .unwrap();
    let p = StretchParams {
        k: [1e3, 1e3],
        kd: 10.0,
        bu: 1.0,
        bv: 1.0,
    };
    let v = [
        Vec3::new(1.0, 0.0, 0.0),
        Vec3::zeros(),
        Vec3::new(0.0, 1.0, 0.0),
    ];
    let cases = [
        [Vec3::zeros(); 3],
        [
            Vec3::zeros(),
            Vec3::new(0.1, 0.0, 0.0),
            Vec3::new(0.05, 0.0, 0.0),
        ],
        [Vec3::zeros(), Vec3::new(0.1, 0.0, 0.0), Vec3::zeros()],
    ];
    for x in cases {
        for mode in [JacobianMode::System, JacobianMode::Exact] {
            let s = stretch(&x, &v, &rest, &p, mode);
            let h = shear(&x, &v, &rest, 10.0, 1.0, mode);
            for out in [s, h] {
                assert!(flat_vecs(&out.f).iter().all(|e| e.is_finite()));
                assert!(flat(&out.dfdx).iter().all(|e| e.is_finite()));
                assert!(flat(&out.dfdv).iter().all(|e| e.is_finite()));
            }
        }
    }
}
