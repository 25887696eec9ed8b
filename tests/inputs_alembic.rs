//! Issue 53 ("Alembic"), reader half: the character Blender exports as Alembic
//! (fixtures/alembic/tube.abc, written by tests/python/abc_scene.py) reads as the same
//! scene as Blender's USD export of it, frame by frame.
mod common;

use common::{code, drape, fixture, s, stderr};
use drape::io::objects::Imported;
use drape::scene::UpAxis;
use drape::Vec3;

/// f32 machine epsilon: both exporters store points as 32-bit floats.
const F32_EPS: f64 = f32::EPSILON as f64;

fn read(name: &str) -> Imported {
    drape::io::read_objects(&fixture(name)).expect("fixture reads")
}

/// Alembic's Y-up axes back to Blender's Z-up ones: (x, y, z) → (x, −z, y).
fn z_up(p: Vec3) -> Vec3 {
    Vec3::new(p.x, -p.z, p.y)
}

/// The largest coordinate difference between `abc` (Y-up) and `usd` (Z-up) body `name`
/// over every frame of the USD file, and the largest coordinate there.
fn body_difference(abc: &Imported, usd: &Imported, name: &str) -> (f64, f64) {
    let find = |i: &Imported| i.meshes.iter().find(|m| m.name == name).cloned().unwrap();
    let (a, u) = (find(abc), find(usd));
    let (aa, ua) = (a.animation.unwrap(), u.animation.unwrap());
    let (mut worst, mut scale) = (0.0f64, 0.0f64);
    for f in ua.frames.iter() {
        let (p, q) = (aa.sample(*f), ua.sample(*f));
        assert_eq!(p.len(), q.len());
        for (x, y) in p.iter().zip(&q) {
            worst = worst.max((z_up(*x) - y).amax());
            scale = scale.max(y.amax());
        }
    }
    (worst, scale)
}

#[test]
fn blenders_alembic_body_matches_its_usd_export_at_every_frame() {
    let abc = read("alembic/tube.abc");
    let usd = read("alembic/tube.usda");
    assert_eq!((abc.up, usd.up), (UpAxis::Y, UpAxis::Z));
    assert_eq!(abc.fps, Some(24.0));
    assert_eq!(abc.frame_range, usd.frame_range);
    let names = |i: &Imported| i.meshes.iter().map(|m| m.name.clone()).collect::<Vec<_>>();
    let (mut a, mut u) = (names(&abc), names(&usd));
    a.sort();
    u.sort();
    assert_eq!(a, u);
    let frames = |i: &Imported| {
        let m = i.meshes.iter().find(|m| m.name == "Tube").unwrap();
        m.animation.as_ref().unwrap().frames.clone()
    };
    assert_eq!(frames(&abc), frames(&usd));
    // Both files hold Blender's f32 points and its world matrices (f64 in Alembic, f64 in
    // USD), so the world points agree to a few roundings of an f32 at the scene's size.
    let (worst, scale) = body_difference(&abc, &usd, "Tube");
    println!("Tube, .abc vs .usda: max |d| {worst:e} m over the frames (scale {scale} m)");
    assert!(worst <= 4.0 * F32_EPS * scale, "{worst:e} at scale {scale}");
    // The garment: same role, points, faces (winding included) and UVs.
    let scene_a = abc.select(&[], &[], true).unwrap();
    let scene_u = usd.select(&[], &[], true).unwrap();
    let (ga, gu) = (&scene_a.garments[0], &scene_u.garments[0]);
    assert_eq!(ga.name, gu.name);
    assert_eq!(ga.triangles, gu.triangles);
    assert_eq!(ga.corner_uvs.len(), gu.corner_uvs.len());
    for (x, y) in ga
        .corner_uvs
        .iter()
        .flatten()
        .zip(gu.corner_uvs.iter().flatten())
    {
        assert!((x - y).amax() <= F32_EPS * 2.0, "{x} {y}");
    }
    for (x, y) in ga.world_positions().iter().zip(gu.world_positions()) {
        assert!((z_up(*x) - y).amax() <= 4.0 * F32_EPS * scale, "{x} {y}");
    }
}

#[test]
fn blenders_alembic_body_matches_the_usdskel_export_skinned_by_drape() {
    let abc = read("alembic/tube.abc");
    let skel = read("alembic/tube_skel.usda");
    // drape skins the UsdSkel file itself (f64 over f32 joint matrices and weights): each
    // point is a weighted sum of up to three bones' transforms of the rest point.
    let (worst, scale) = body_difference(&abc, &skel, "Tube");
    println!("Tube, .abc vs UsdSkel skinned by drape: max |d| {worst:e} m (scale {scale} m)");
    assert!(
        worst <= 16.0 * F32_EPS * scale,
        "{worst:e} at scale {scale}"
    );
}

#[test]
fn inspect_reads_the_alembic_character() {
    let out = drape(&["inspect", "--json", s(&fixture("alembic/tube.abc"))]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["garments"][0]["name"], "Sleeve");
    assert_eq!(v["bodies"][0]["name"], "Tube");
    assert_eq!(v["bodies"][0]["frames"], serde_json::json!([1, 13]));
}
