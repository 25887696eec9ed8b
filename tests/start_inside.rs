//! Garments that start inside a body (issue 50, "Start states that are not clean"): the
//! hands of a walking character pass through a full skirt at frame 1
//! (`fixtures/skirt_hands_through.gltf`). The bake must go to the end without tearing the
//! skirt and leave the hands: measured here against the body the file animates, with a
//! point-in-solid test of this file's own (the winding number of a ray to infinity).
mod common;

use drape::collision::geometry::closest_point_barycentric;
use drape::model::{ClothModel, UvScale};
use drape::pipeline::{Simulator, SolverParams};
use drape::scene::{Body, Material};
use drape::Vec3;

/// Winding number of the solid `tris` around `p`, from a ray along a direction no mesh
/// edge of the fixture lies along: the crossings of faces seen from behind minus those
/// seen from the front (positive inside a union of closed, outward-wound shells).
fn winding(p: Vec3, x: &[Vec3], tris: &[[usize; 3]]) -> i32 {
    let d = Vec3::new(0.5771, 0.5813, 0.5737).normalize();
    let mut w = 0;
    for t in tris {
        let [a, b, c] = t.map(|i| x[i]);
        let (e1, e2) = (b - a, c - a);
        let q = d.cross(&e2);
        let det = e1.dot(&q);
        if det.abs() < 1e-300 {
            continue;
        }
        let s = p - a;
        let u = s.dot(&q) / det;
        let r = s.cross(&e1);
        let v = d.dot(&r) / det;
        if u < 0.0 || v < 0.0 || u + v > 1.0 || e2.dot(&r) / det < 0.0 {
            continue;
        }
        w += if e1.cross(&e2).dot(&d) > 0.0 { 1 } else { -1 };
    }
    w
}

/// How deep `p` lies inside the body `x`, `tris` (m; 0 outside): its distance to the
/// surface when its winding number is positive.
fn depth(p: Vec3, x: &[Vec3], tris: &[[usize; 3]]) -> f64 {
    if winding(p, x, tris) <= 0 {
        return 0.0;
    }
    (tris.iter())
        .map(|t| {
            let [a, b, c] = t.map(|i| x[i]);
            let w = closest_point_barycentric(p, a, b, c);
            (p - (a * w[0] + b * w[1] + c * w[2])).norm()
        })
        .fold(f64::INFINITY, f64::min)
}

/// Body positions at an integer frame (a sample of its animation).
fn body_at(body: &Body, frame: f64) -> &[Vec3] {
    let k = (body.animation.frames.iter())
        .position(|&f| (f - frame).abs() < 1e-9)
        .expect("the body is sampled at every frame");
    &body.animation.positions[k]
}

#[test]
fn a_skirt_the_hands_pass_through_bakes_every_frame_untorn_and_leaves_the_hands() {
    let scene = drape::io::load_scene(&common::fixture("skirt_hands_through.gltf")).unwrap();
    let (garment, body) = (&scene.garments[0], &scene.bodies[0]);
    let material = Material::preset("cotton").unwrap();
    let model = ClothModel::build(garment, UvScale::Auto, material.density).unwrap();
    let edges: Vec<(usize, usize, f64)> = (model.triangles.iter())
        .flat_map(|t| [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])])
        .map(|(a, b)| (a, b, (model.positions[a] - model.positions[b]).norm()))
        .collect();
    let tris = body.triangles.clone();
    let first = 1.0;
    let start = model.positions.clone();
    let mut sim = Simulator::new(
        model,
        &material,
        &garment.pin,
        SolverParams::new(24.0, Vec3::y()),
    )
    .with_bodies(std::slice::from_ref(body), &material, first, 24.0)
    .unwrap();
    // The fixture does what it is for: particles start deep inside the hands.
    let deepest_start = (start.iter())
        .map(|&p| depth(p, body_at(body, first), &tris))
        .fold(0.0, f64::max);
    assert!(
        deepest_start > 0.02,
        "deepest at the start {deepest_start} m"
    );

    let (mut steps, mut worst_stretch, mut worst_late) = (0, 0.0_f64, 0.0_f64);
    for frame in 2..=48 {
        let stats = sim
            .advance(1.0 / 24.0)
            .unwrap_or_else(|e| panic!("frame {frame}: {e}"));
        steps += stats.steps;
        let x = sim.positions();
        let stretch = (edges.iter())
            .map(|&(a, b, rest)| (x[a] - x[b]).norm() / rest - 1.0)
            .fold(0.0, f64::max);
        worst_stretch = worst_stretch.max(stretch);
        if frame >= 10 {
            let at = body_at(body, f64::from(frame));
            let deepest = x.iter().map(|&p| depth(p, at, &tris)).fold(0.0, f64::max);
            worst_late = worst_late.max(deepest);
        }
    }
    println!(
        "47 frames, {:.1} steps/frame; worst edge stretch {:.1}%; deepest inside the body \
         from frame 10: {:.2} mm (at the start {:.1} mm)",
        steps as f64 / 47.0,
        100.0 * worst_stretch,
        1e3 * worst_late,
        1e3 * deepest_start
    );
    assert!(
        worst_stretch <= 0.20,
        "an edge stretched {:.1}%",
        100.0 * worst_stretch
    );
    assert!(
        worst_late <= 0.002,
        "{:.2} mm inside the body after frame 10",
        1e3 * worst_late
    );
}

#[test]
fn a_frame_that_fails_names_the_cause_and_the_particles_where_it_was_found() {
    use drape::fixtures::{sheet, SheetPins, SheetPlane, SheetSpec};
    // A sheet held by its top edge, falling at its first step of a whole frame: with no
    // room to shrink the step (minimum step = maximum step), the first rejected step (its
    // stretch jumps at the held edge) fails the frame, through the real frame loop. (The
    // messages of each cause: `pipeline::trouble`'s own tests.)
    let g = sheet(&SheetSpec {
        n: 15,
        size: 0.6,
        plane: SheetPlane::Horizontal,
        pins: SheetPins::TopEdge,
        ..SheetSpec::default()
    });
    let material = Material::preset("cotton").unwrap();
    let model = ClothModel::build(&g, UvScale::Auto, material.density).unwrap();
    let n = model.len();
    let mut params = SolverParams::new(24.0, Vec3::y());
    params.min_step = params.max_step;
    let mut sim = Simulator::new(model, &material, &g.pin, params);
    let err = sim.advance(1.0 / 24.0).unwrap_err().to_string();
    let trouble = sim.trouble().expect("the failed frame says where").clone();
    println!("{err}\n{trouble:?}");
    assert!(!trouble.particles.is_empty() && trouble.particles.iter().all(|&i| i < n));
    let named = format!("garment particle {}", trouble.particles[0]);
    assert!(err.contains(&named), "{err}");
    assert!(
        !err.contains("lower the material stiffness ratios or check the input"),
        "{err}"
    );
}
