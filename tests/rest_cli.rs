//! `--rest` on a garment whose UVs are a texture layout, not a sewing pattern (issue 50,
//! "garments whose UVs are not a sewing pattern"): a skirt made like Blender's cylinder
//! primitive around the animated fixture character.
mod common;
use common::{drape, s, simulate_with_report};
use drape::cache::pc2;
use drape::fixtures::{
    tube_skirt, write_scene_gltf, CharacterMotion, GltfWriteOptions, TubeSkirtSpec,
};
use std::path::Path;

/// Bakes frames 1..24 of `scene` with `rest` (None: the default) into `dir`; returns the
/// exit code, stderr and the report.
fn bake(dir: &Path, scene: &Path, rest: Option<&str>) -> (i32, String, serde_json::Value) {
    let name = rest.unwrap_or("default");
    let out = dir.join(format!("{name}.pc2"));
    let report = dir.join(format!("{name}.json"));
    let extra: Vec<&str> = rest.map(|r| vec!["--rest", r]).unwrap_or_default();
    let (exit, err, r) = simulate_with_report(scene, "1..24", &out, &report, &extra);
    if exit == 0 {
        let (_, _, frames) = pc2::read(&out).expect("the cache reads back");
        assert_eq!(frames.len(), 24, "{name}");
    }
    (exit, err, r)
}

#[test]
fn a_cylinder_skirt_with_texture_uvs_bakes_on_its_modelled_shape_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("tube.gltf");
    let skirt = tube_skirt(&TubeSkirtSpec::default());
    write_scene_gltf(
        &[skirt],
        CharacterMotion::Linear,
        &scene,
        &GltfWriteOptions::default(),
    )
    .unwrap();
    let o = drape(&["inspect", s(&scene), "--json"]);
    let v: serde_json::Value = serde_json::from_str(&common::stdout(&o)).unwrap();
    assert_eq!(v["garments"][0]["rest"], serde_json::json!(["shape"]));
    assert!(v["garments"][0]["uv_mismatch"][0].as_f64().unwrap() > 0.15);
    let (rc, err, auto) = bake(dir.path(), &scene, None);
    assert_eq!(rc, 0, "{err}");
    assert!(
        err.contains("the garment's UV panel differs from the modelled shape")
            && err.contains("--rest uv"),
        "{err}"
    );
    assert!(!err.contains("snap toward"), "{err}");
    // `shape` is what `auto` chose here: the same bake.
    let (rc, err, _) = bake(dir.path(), &scene, Some("shape"));
    assert_eq!(rc, 0, "{err}");
    assert_eq!(
        std::fs::read(dir.path().join("default.pc2")).unwrap(),
        std::fs::read(dir.path().join("shape.pc2")).unwrap()
    );
    // Forced onto the texture rectangle, the tube is told to be 29% narrower round the
    // waist and longer than modelled: the stretch warning says so.
    // The body then holds it open: more steps and more strain than resting on the shape.
    let (_, err, uv) = bake(dir.path(), &scene, Some("uv"));
    assert!(err.contains("differs from its UV panels by up to"), "{err}");
    let total = |r: &serde_json::Value, key: &str| -> f64 {
        let frames = r["per_frame"].as_array().unwrap().iter();
        frames
            .map(|f| f[key].as_f64().unwrap())
            .fold(0.0, |a, b| match key {
                "steps" => a + b,
                _ => a.max(b),
            })
    };
    assert!(total(&uv, "steps") > total(&auto, "steps"));
    assert!(total(&uv, "max_strain") > total(&auto, "max_strain"));
}
