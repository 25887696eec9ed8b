//! Issue 4 ("[3 of 7] Inputs"), USD / Houdini / scene-file half: the readers on the
//! generated fixtures of `examples/gen_io_fixtures.rs`, and the real binary on them.
mod common;

#[allow(dead_code)]
#[path = "../examples/gen_io_fixtures.rs"]
mod gen;

use common::{code, drape, fixture, s, stderr, stdout};
use drape::model::{ClothModel, UvScale};
use drape::scene::{Garment, Scene};
use drape::Vec3;
use std::path::Path;

fn garment(path: &Path) -> Garment {
    let mut scene: Scene = drape::io::load_garments(path, &[]).expect("fixture loads");
    assert_eq!(scene.garments.len(), 1, "{}", path.display());
    scene.garments.remove(0)
}

fn model(g: &Garment) -> ClothModel {
    ClothModel::build(g, UvScale::Auto, 0.1).expect("model builds")
}

/// Position of every output (cache) point, source order.
fn output_positions(g: &Garment) -> Vec<Vec3> {
    g.output_points.iter().map(|&p| g.positions[p]).collect()
}

#[test]
fn usd_geo_and_split_gltf_seam_sheets_give_the_same_welded_model() {
    let gltf = garment(&fixture("sheet_seam.gltf"));
    let usd = garment(&fixture("usd/sheet_seam.usda"));
    let geo = garment(&fixture("houdini/sheet_seam.geo"));
    let m = model(&gltf);
    assert_eq!((m.len(), m.panels, m.seam_edges), (169, 2, 12));
    for g in [&usd, &geo] {
        let other = model(g);
        assert_eq!(other.len(), m.len(), "{}", g.source.display());
        assert_eq!(other.triangles.len(), m.triangles.len());
        assert_eq!(other.panels, m.panels);
        assert_eq!(other.seam_edges, m.seam_edges);
        assert_eq!(other.hinges.len(), m.hinges.len());
        assert_eq!(g.pinned_count(), gltf.pinned_count());
        // Same cache: 169 points in source order at bit-identical (f32) positions.
        assert_eq!(output_positions(g), output_positions(&gltf));
        let mut a: Vec<f64> = m.rest.iter().map(|r| r.area).collect();
        let mut b: Vec<f64> = other.rest.iter().map(|r| r.area).collect();
        a.sort_by(f64::total_cmp);
        b.sort_by(f64::total_cmp);
        let worst = a
            .iter()
            .zip(&b)
            .map(|(x, y)| (x - y).abs() / x)
            .fold(0.0, f64::max);
        assert!(worst < 1e-6, "rest areas differ by {worst:e}");
    }
    // The USD cache has the USD point count and order: one per point.
    assert_eq!(usd.output_points, (0..169).collect::<Vec<_>>());
}

#[test]
fn geo_winding_is_reversed_to_face_like_the_gltf_source() {
    let normal = |g: &Garment, t: &[usize; 3]| {
        let [a, b, c] = t.map(|i| g.positions[i]);
        (b - a).cross(&(c - a)).normalize()
    };
    let gltf = garment(&fixture("sheet_seam.gltf"));
    let geo = garment(&fixture("houdini/sheet_seam.geo"));
    // The sheet faces +Z in the generator and in glTF; every .geo triangle must too.
    for g in [&gltf, &geo] {
        for t in &g.triangles {
            let n = normal(g, t);
            assert!((n - Vec3::z()).norm() < 1e-6, "{}: {n}", g.source.display());
        }
    }
}

fn assert_body_matches_generator(path: &Path, name: &str) {
    let scene = drape::io::load_scene(path).expect("body loads");
    assert!(scene.garments.is_empty());
    let body = scene
        .bodies
        .iter()
        .find(|b| b.name == name)
        .expect("body found");
    assert_eq!(body.triangles, gen::body_triangles());
    let (first, last) = gen::BODY_FRAMES;
    assert_eq!(body.animation.range(), (f64::from(first), f64::from(last)));
    assert_eq!(scene.frame_range, Some((first, last)));
    let mut worst = 0.0f64;
    for f in first..=last {
        // Integer frames and half frames (interpolated between samples).
        for frame in [f64::from(f), f64::from(f) + 0.5] {
            if frame > f64::from(last) {
                continue;
            }
            let got = body.animation.sample(frame);
            let want = if frame.fract() == 0.0 {
                gen::body_world(frame)
            } else {
                let (a, b) = (gen::body_world(frame - 0.5), gen::body_world(frame + 0.5));
                a.iter().zip(&b).map(|(a, b)| (a + b) * 0.5).collect()
            };
            for (g, w) in got.iter().zip(&want) {
                worst = worst.max((g - w).norm());
            }
        }
    }
    assert!(
        worst < 1e-6,
        "{}: positions differ by up to {worst:e} m",
        path.display()
    );
}

#[test]
fn usd_time_sampled_body_in_centimetres_matches_the_generator() {
    assert_body_matches_generator(&fixture("usd/body_anim.usda"), "Body");
}

#[test]
fn geo_sequence_body_matches_the_generator() {
    assert_body_matches_generator(&fixture("houdini/body.$F4.geo"), "body");
}

#[test]
fn scene_file_combines_usd_garment_and_geo_sequence_with_settings() {
    let path = fixture("usd/scene_sheet_body.json");
    let loaded = drape::io::scene_file::load(&path).expect("scene file loads");
    let scene = &loaded.scene;
    assert_eq!(scene.garments.len(), 1);
    assert_eq!(scene.garments[0].name, "SheetSeam");
    assert_eq!(scene.bodies.len(), 1);
    assert_eq!(scene.bodies[0].name, "body");
    assert_eq!(scene.bodies[0].thickness, Some(0.004));
    assert_eq!(scene.bodies[0].friction, Some(0.3));
    assert_eq!(scene.frame_range, Some((1, 24)));
    assert_eq!(scene.fps, Some(24.0));
    assert_eq!(loaded.max_step, Some(0.01));
    let settings = &loaded.garment_settings[0];
    assert_eq!(settings.material.as_deref(), Some("cotton"));
    assert_eq!(
        settings.out.as_deref(),
        Some(fixture("usd/sheet_seam.pc2").as_path())
    );
}

/// A glTF body in a scene file plays at the scene's frame rate: at 48 fps its frame 2k is
/// the glTF file's frame k at 24 fps (the same time, k/24 s).
#[test]
fn scene_file_reads_gltf_animation_at_its_frame_rate() {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("scene.json");
    let character = fixture("skirt_on_character.gltf");
    std::fs::write(
        &scene,
        format!(
            r#"{{"frames": {{"start": 1, "end": 96, "fps": 48}},
                "garments": [{{"file": "{0}"}}], "bodies": [{{"file": "{0}"}}]}}"#,
            character.display()
        ),
    )
    .unwrap();
    let at48 = drape::io::load_scene(&scene).unwrap().bodies[0]
        .animation
        .clone();
    let at24 = drape::io::load_scene(&character).unwrap().bodies[0]
        .animation
        .clone();
    for k in [1.0, 7.0, 13.0, 30.0, 48.0] {
        let (a, b) = (at48.sample(2.0 * k), at24.sample(k));
        let worst = a
            .iter()
            .zip(&b)
            .map(|(p, q)| (p - q).norm())
            .fold(0.0, f64::max);
        assert!(worst < 1e-9, "frame {k} at 24 fps: {worst} m off");
    }
    let (first, later) = (at24.sample(1.0), at24.sample(24.0));
    let moved = first.iter().zip(&later).map(|(p, q)| (p - q).norm());
    assert!(moved.fold(0.0, f64::max) > 0.05, "the body moves");
}

#[test]
fn inspect_json_reports_panels_seams_and_bodies_of_the_scene_file() {
    let o = drape(&[
        "inspect",
        s(&fixture("usd/scene_sheet_body.json")),
        "--json",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON on stdout");
    let g = &v["garments"][0];
    assert_eq!(g["name"], "SheetSeam");
    assert_eq!(
        (
            g["vertices"].as_u64(),
            g["panels"].as_u64(),
            g["seam_edges"].as_u64()
        ),
        (Some(169), Some(2), Some(12))
    );
    assert_eq!(g["pinned"], 2);
    let b = &v["bodies"][0];
    assert_eq!(b["name"], "body");
    assert_eq!(b["vertices"], 40);
    assert_eq!(b["frames"], serde_json::json!([1, 24]));
    // A USD file on its own: the marked garment, the other mesh a body.
    let o = drape(&["inspect", s(&fixture("usd/body_anim.usda")), "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON on stdout");
    assert_eq!(v["bodies"][0]["frames"], serde_json::json!([1, 24]));
}

#[test]
fn broken_inputs_exit_2_naming_the_file_never_panicking() {
    let cases = [
        ("usd/bad/truncated.usda", "truncated"),
        ("usd/bad/not_utf8.usda", "UTF-8"),
        ("usd/bad/wrong_magic.usda", "#usda"),
        ("usd/bad/binary.usdc", ".usda"),
        ("usd/bad/index_out_of_range.usda", "999"),
        ("usd/bad/unknown_key.json", "gravity"),
        ("houdini/bad/truncated.geo", "JSON"),
        ("houdini/bad/not_utf8.geo", "UTF-8"),
        ("houdini/bad/wrong_magic.geo", "JSON .geo"),
        ("houdini/bad/index_out_of_range.geo", "999"),
    ];
    for (file, want) in cases {
        let path = fixture(file);
        let o = drape(&["inspect", s(&path)]);
        let err = stderr(&o);
        assert_eq!(code(&o), 2, "{file}: {err}");
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("?");
        assert!(err.contains(name) && err.contains(want), "{file}: {err}");
        assert!(!err.contains("panicked"), "{file}: {err}");
    }
}

#[test]
fn checked_in_fixtures_are_what_the_generator_writes() {
    let dir = tempfile::tempdir().unwrap();
    let written = gen::write_all(dir.path()).expect("generator runs");
    assert!(written.len() > 20);
    for p in written {
        let rel = p.strip_prefix(dir.path()).unwrap();
        let fresh = std::fs::read(&p).unwrap();
        let shipped = std::fs::read(fixture(rel.to_str().unwrap())).unwrap_or_else(|e| {
            panic!(
                "{}: {e}; run cargo run --example gen_io_fixtures",
                rel.display()
            )
        });
        assert!(
            fresh == shipped,
            "{} is stale; run cargo run --example gen_io_fixtures",
            rel.display()
        );
    }
}

#[test]
fn usd_baked_character_matches_its_gltf_motion() {
    let scene = drape::io::load_scene(&fixture("usd/character_anim.usda")).expect("loads");
    let body = scene
        .bodies
        .iter()
        .find(|b| b.name == "Character")
        .expect("body");
    let (first, last) = gen::CHARACTER_FRAMES;
    let (tris, poses) =
        drape::fixtures::character_frames(24.0, (first, last)).expect("glTF motion");
    assert_eq!(body.triangles, tris);
    let mut worst = 0.0f64;
    for (f, want) in (first..=last).zip(&poses) {
        let got = body.animation.sample(f64::from(f));
        for (g, w) in got.iter().zip(want) {
            worst = worst.max((g - w).norm());
        }
    }
    // f32 storage of metres: below 1e-6 m for a 2 m character.
    assert!(worst < 1e-6, "baked positions differ by up to {worst:e} m");
}

/// The `.usdc` fixtures are Pixar's own export (`scripts/make_usdc_fixtures.py`) of the
/// `.usda` ones: read through `openusd` they must give the same garment and body.
#[test]
fn usdc_crate_files_read_like_their_usda_sources() {
    let text = garment(&fixture("usd/sheet_seam.usda"));
    let binary = garment(&fixture("usd/sheet_seam.usdc"));
    let (a, b) = (model(&text), model(&binary));
    assert_eq!((b.len(), b.panels, b.seam_edges), (169, 2, 12));
    assert_eq!(b.triangles, a.triangles);
    assert_eq!(b.hinges.len(), a.hinges.len());
    assert_eq!(binary.name, text.name);
    assert_eq!(binary.pinned_count(), text.pinned_count());
    assert_eq!(binary.output_points, text.output_points);
    assert_eq!(output_positions(&binary), output_positions(&text));

    assert_body_matches_generator(&fixture("usd/body_anim.usdc"), "Body");
    let load = |p: &str| drape::io::load_scene(&fixture(p)).expect("body loads");
    let (text, binary) = (load("usd/body_anim.usda"), load("usd/body_anim.usdc"));
    assert_eq!(binary.frame_range, text.frame_range);
    let (tb, bb) = (&text.bodies[0], &binary.bodies[0]);
    assert_eq!(bb.animation.range(), tb.animation.range());
    let (first, last) = tb.animation.range();
    let mut frame = first;
    while frame <= last {
        assert_eq!(
            bb.animation.sample(frame),
            tb.animation.sample(frame),
            "frame {frame}"
        );
        frame += 0.25;
    }
}

#[test]
fn truncated_and_garbage_usdc_exit_2_never_panicking() {
    let dir = tempfile::tempdir().unwrap();
    let good = std::fs::read(fixture("usd/sheet_seam.usdc")).unwrap();
    let mut cases = Vec::new();
    for cut in [16, 88, good.len() / 3, good.len() / 2, good.len() - 40] {
        cases.push((format!("cut{cut}.usdc"), good[..cut].to_vec()));
    }
    let mut flipped = good.clone();
    for i in (64..flipped.len()).step_by(97) {
        flipped[i] ^= 0x5a;
    }
    cases.push(("flipped.usdc".to_string(), flipped));
    let mut junk = b"PXR-USDC".to_vec();
    junk.extend((0..3000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8));
    cases.push(("junk.usdc".to_string(), junk));
    for (name, bytes) in cases {
        let path = dir.path().join(&name);
        std::fs::write(&path, bytes).unwrap();
        let o = drape(&["inspect", s(&path)]);
        let err = stderr(&o);
        assert!(!err.contains("panicked"), "{name}: {err}");
        // A damaged file may still parse to something; if it fails, it fails cleanly.
        if code(&o) != 0 {
            assert_eq!(code(&o), 2, "{name}: {err}");
            assert!(err.contains(&name), "{name}: {err}");
        }
    }
    // The truncated ones cannot be read at all.
    let o = drape(&["inspect", s(&dir.path().join("cut88.usdc"))]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
}
