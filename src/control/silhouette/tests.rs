//! The silhouette term against analytic values and central differences.
use super::*;

/// Column-major world_from_camera: rotation by `angle` about Y, then a translation.
fn placement(angle: f64, at: Vec3) -> [f64; 16] {
    let (s, c) = angle.sin_cos();
    [
        c, 0.0, -s, 0.0, 0.0, 1.0, 0.0, 0.0, s, 0.0, c, 0.0, at.x, at.y, at.z, 1.0,
    ]
}

fn square(c: Vec2, half: f64) -> Outline {
    vec![
        c + Vec2::new(-half, -half),
        c + Vec2::new(half, -half),
        c + Vec2::new(half, half),
        c + Vec2::new(-half, half),
    ]
}

/// A wavy n × n grid of side `size` in the plane z = 0 centred at `centre`, and its
/// triangles.
fn grid(n: usize, size: f64, centre: Vec3) -> (Vec<Vec3>, Vec<[usize; 3]>) {
    let mut x = Vec::new();
    for r in 0..n {
        for c in 0..n {
            let (u, v) = (c as f64 / (n - 1) as f64, r as f64 / (n - 1) as f64);
            let wave = 0.1 * size * ((7.0 * u).sin() + (5.0 * v + 1.0).cos());
            x.push(centre + Vec3::new((u - 0.5) * size, (v - 0.5) * size, wave));
        }
    }
    let mut t = Vec::new();
    for r in 0..n - 1 {
        for c in 0..n - 1 {
            let i = r * n + c;
            t.push([i, i + 1, i + n + 1]);
            t.push([i, i + n + 1, i + n]);
        }
    }
    (x, t)
}

fn key(camera: Camera, outlines: Vec<Outline>, weight: f64) -> SilhouetteTerm {
    SilhouetteTerm::new(
        SilhouetteKey {
            frame: 5,
            camera,
            region: Region::new(outlines),
            weight,
            name: "test".into(),
        },
        0,
    )
}

/// tan(yfov/2) = ½ and aspect 2 at 5 m: x = 1 m lands at 1/(2·½)/5 = 0.2, y = 1 m at 0.4.
#[test]
fn projection_matches_the_pinhole_formula() {
    let yfov = 2.0 * 0.5f64.atan();
    let cam = Camera::new(&placement(0.0, Vec3::new(0.0, 0.0, 5.0)), yfov, 2.0).unwrap();
    let q = cam.project(&Vec3::new(1.0, 1.0, 0.0)).unwrap();
    assert!((q - Vec2::new(0.2, 0.4)).norm() < 1e-12, "{q}");
    assert!(
        cam.project(&Vec3::new(0.0, 0.0, 6.0)).is_none(),
        "behind the camera"
    );
    // Turned a quarter turn about Y the camera looks down world −X.
    let turned = Camera::new(
        &placement(std::f64::consts::FRAC_PI_2, Vec3::zeros()),
        yfov,
        1.0,
    )
    .unwrap();
    let p = turned.to_camera(&Vec3::new(-2.0, 0.0, 0.0));
    assert!((p - Vec3::new(0.0, 0.0, -2.0)).norm() < 1e-12, "{p}");
}

#[test]
fn degenerate_cameras_are_refused() {
    let ok = placement(0.3, Vec3::new(0.0, 1.0, 4.0));
    let mut singular = ok;
    singular[0..3].copy_from_slice(&[0.0; 3]);
    let mut projective = ok;
    projective[3] = 0.5;
    let mut nan = ok;
    nan[13] = f64::NAN;
    for m in [singular, projective, nan] {
        assert!(Camera::new(&m, 0.6, 1.5).is_err());
    }
    assert!(Camera::new(&ok, 0.0, 1.5).is_err());
    assert!(Camera::new(&ok, 3.2, 1.5).is_err());
    assert!(Camera::new(&ok, 0.6, -1.0).is_err());
    assert!(Camera::new(&ok, 0.6, 1.5).is_ok());
}

/// Even–odd: a square with a square hole; the hole is outside, the ring inside.
#[test]
fn region_is_the_even_odd_interior() {
    let r = Region::new(vec![square(Vec2::zeros(), 0.8), square(Vec2::zeros(), 0.3)]);
    assert!(!r.contains(&Vec2::new(0.0, 0.0)));
    assert!(r.contains(&Vec2::new(0.5, 0.1)));
    assert!(!r.contains(&Vec2::new(0.9, 0.0)));
    let b = r.nearest_boundary_point(&Vec2::new(0.1, 0.05));
    assert!((b - Vec2::new(0.3, 0.05)).norm() < 1e-12, "{b}");
    let samples = r.samples(64);
    assert!(
        samples.len() >= 64 && samples.len() <= 72,
        "{}",
        samples.len()
    );
}

/// A garment exactly on the target has IoU ≈ 1 and Φ = 0; shifted by half its width,
/// IoU ≈ ⅓ (overlap ½ over union 1½).
#[test]
fn iou_of_a_flat_square_against_its_own_outline_and_a_shifted_one() {
    let yfov = 2.0 * 0.5f64.atan();
    let cam = Camera::new(&placement(0.0, Vec3::new(0.0, 0.0, 5.0)), yfov, 1.0).unwrap();
    let x: Vec<Vec3> = [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)]
        .iter()
        .map(|&(a, b)| Vec3::new(a, b, 0.0))
        .collect();
    let t = [[0, 1, 2], [0, 2, 3]];
    // 1 m at 5 m with tan(yfov/2) = ½ is 0.4 in the image.
    let same = key(cam.clone(), vec![square(Vec2::zeros(), 0.4)], 1.0);
    let iou = same.iou(&x, &t);
    assert!(iou > 0.99, "{iou}");
    assert!(same.evaluate(&x, &t).value < 1e-20);
    let shifted = key(cam, vec![square(Vec2::new(0.4, 0.0), 0.4)], 1.0);
    let iou = shifted.iou(&x, &t);
    assert!((iou - 1.0 / 3.0).abs() < 0.01, "{iou}");
    let v = shifted.evaluate(&x, &t);
    // The two left corners are 0.4 outside; two of four, so (2 · 0.16) / 4.
    assert!(v.error_squared > 0.08, "{}", v.error_squared);
}

/// Deterministic pseudo-random numbers in [−1, 1].
fn noise(seed: u64, n: usize) -> Vec<f64> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 52) as f64 - 1.0
        })
        .collect()
}

/// ∂Φ_k/∂x against central differences along random directions, with part of the garment
/// outside the target and part of the target uncovered, seen by a turned camera.
#[test]
fn silhouette_gradient_matches_central_differences() {
    let (x, t) = grid(9, 1.2, Vec3::new(0.2, 1.0, 0.0));
    let cam = Camera::new(&placement(0.4, Vec3::new(2.0, 1.3, 4.5)), 0.7, 1.6).unwrap();
    let target = vec![vec![
        Vec2::new(-0.35, -0.3),
        Vec2::new(0.1, -0.45),
        Vec2::new(0.25, 0.2),
        Vec2::new(-0.05, 0.5),
        Vec2::new(-0.3, 0.15),
    ]];
    let term = key(cam, target, 0.7);
    let at = term.evaluate(&x, &t);
    assert!(at.value > 1e-4, "the test needs a miss: {}", at.value);
    let (mut worst, eps) = (0.0f64, 1e-6);
    for k in 0..8 {
        let d: Vec<Vec3> = noise(k + 1, 3 * x.len())
            .chunks_exact(3)
            .map(|c| Vec3::new(c[0], c[1], c[2]))
            .collect();
        let moved = |s: f64| -> Vec<Vec3> { x.iter().zip(&d).map(|(p, d)| p + d * s).collect() };
        let fd = (term.evaluate(&moved(eps), &t).value - term.evaluate(&moved(-eps), &t).value)
            / (2.0 * eps);
        let adj: f64 = at.gradient.iter().zip(&d).map(|(g, d)| g.dot(d)).sum();
        let rel = (adj - fd).abs() / fd.abs().max(1e-12);
        eprintln!("direction {k}: analytic {adj:.9e}, differences {fd:.9e}, relative {rel:.1e}");
        worst = worst.max(rel);
    }
    assert!(worst < 1e-5, "worst relative error {worst:e}");
}

/// Tracing a rasterised garment gives outlines whose region rasterises to the same pixels
/// (a hole, a diagonal touch and the frame's edge included).
#[test]
fn traced_outlines_give_back_the_mask() {
    let n = 40;
    let mut mask = vec![false; n * n];
    for r in 0..n {
        for c in 0..n {
            let (x, y) = (c as f64 - 14.0, r as f64 - 20.0);
            let ring = (x * x + y * y).sqrt();
            mask[r * n + c] =
                (4.0..11.0).contains(&ring) || (r == 3 && c == 3) || (r == 4 && c == 4) || c == 39;
        }
    }
    let region = Region::trace(&mask, n);
    assert!(region.outlines().len() >= 4, "{}", region.outlines().len());
    assert_eq!(region.raster(n), mask);
}
