//! Keyframe sources round-trip a lifted sheet to world-space particle targets; every bad
//! input is an exit-2 error naming the keyframe (issue 6, "Bad input").
use super::*;
use crate::fixtures::{sheet, write_gltf, SheetSpec};
use crate::io::usd::writer::{to_usda, UsdMesh, UsdStage};
use crate::scene::UpAxis;
use nalgebra::Rotation3;
use proptest::prelude::*;
use std::path::PathBuf;

const FPS: f64 = 24.0;
const FRAMES: (i32, i32) = (1, 48);

/// A 4 × 4 sheet with a UV seam (split vertices in glTF) and its keyframe shape lifted
/// out of its plane by 0.25·y.
fn seamed_sheet() -> (Garment, Vec<Vec3>) {
    let g = sheet(&SheetSpec {
        n: 4,
        seam: true,
        ..SheetSpec::default()
    });
    let lifted = g
        .positions
        .iter()
        .map(|p| p + Vec3::new(0.0, 0.0, 0.25 * p.y))
        .collect();
    (g, lifted)
}

/// A rotation about a skew axis times a scale of 2.
fn skew_linear() -> Mat3 {
    Rotation3::from_axis_angle(
        &nalgebra::Unit::new_normalize(Vec3::new(1.0, 2.0, 0.5)),
        0.7,
    )
    .into_inner()
        * 2.0
}

fn world(g: &Garment, p: &[Vec3]) -> Vec<Vec3> {
    p.iter()
        .map(|q| g.world_linear * q + g.world_translation)
        .collect()
}

fn max_error(a: &[Vec3], b: &[Vec3]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).norm())
        .fold(0.0, f64::max)
}

fn read_gltf(path: &Path) -> Garment {
    crate::io::select(path, &[], &[], Some(FPS))
        .unwrap()
        .scene
        .garments
        .remove(0)
}

/// Writes an MDD file (big-endian, docs/reference.md, "Outputs") with arbitrary sample times.
fn write_mdd(path: &Path, times: &[f32], samples: &[Vec<Vec3>]) {
    let points = samples.first().map_or(0, Vec::len) as i32;
    let mut b = Vec::new();
    b.extend((times.len() as i32).to_be_bytes());
    b.extend(points.to_be_bytes());
    for t in times {
        b.extend(t.to_be_bytes());
    }
    for s in samples {
        for p in s {
            for x in p.iter() {
                b.extend((*x as f32).to_be_bytes());
            }
        }
    }
    std::fs::write(path, b).unwrap();
}

/// The glTF-read seamed sheet (output points = split vertices), its lifted shape per
/// output point, and a non-identity world transform set on the garment.
fn mdd_garment() -> (tempfile::TempDir, Garment, Vec<Vec3>, Vec<Vec3>) {
    let dir = tempfile::tempdir().unwrap();
    let (g, lifted) = seamed_sheet();
    let path = dir.path().join("scene.gltf");
    write_gltf(std::slice::from_ref(&g), &path).unwrap();
    let mut g = read_gltf(&path);
    assert!(
        g.output_points.len() > g.positions.len(),
        "the seam splits vertices"
    );
    g.world_linear = skew_linear();
    g.world_translation = Vec3::new(0.3, -1.0, 2.0);
    let per_point = g.output_points.iter().map(|&i| lifted[i]).collect();
    (dir, g, lifted, per_point)
}

/// The error of `r`, checked to be bad input (exit 2) naming `name`.
fn bad_input(r: Result<Vec<Keyframe>>, name: &str) -> String {
    let e = r.expect_err("bad input must be an error");
    let msg = e.to_string();
    assert_eq!(e.exit_code(), 2, "{msg}");
    assert!(msg.contains(name), "'{msg}' does not name '{name}'");
    msg
}

#[test]
fn gltf_morph_targets_of_the_scene_file_become_world_targets() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("scene.gltf");
    let (mut g, lifted) = seamed_sheet();
    g.world_linear = skew_linear();
    g.world_translation = Vec3::new(1.0, 2.0, -3.0);
    g.keyframes = vec![(30, g.positions.clone()), (7, lifted.clone())];
    g.key_weight = Some((0..16).map(|i| if i < 8 { 1.0 } else { 0.5 }).collect());
    g.keyframes.sort_by_key(|k| k.0);
    write_gltf(std::slice::from_ref(&g), &path).unwrap();
    let read = read_gltf(&path);
    let keys = load(&path, &read, FPS, FRAMES).unwrap();
    assert_eq!(keys.len(), 2);
    assert_eq!((keys[0].frame, keys[1].frame), (7, 30));
    assert_eq!(
        (keys[0].name.as_str(), keys[1].name.as_str()),
        ("key_7", "key_30")
    );
    let err = max_error(&keys[0].positions, &world(&g, &lifted));
    println!("glTF same file: max error {err:.2e} m");
    assert!(err < 1e-5, "{err}");
    assert!(max_error(&keys[1].positions, &world(&g, &g.positions)) < 1e-5);
    assert_eq!(Some(keys[0].weights.clone()), g.key_weight);
}

#[test]
fn another_gltf_file_gives_the_keyframes_of_the_garment_of_the_same_name() {
    let dir = tempfile::tempdir().unwrap();
    let (g, lifted) = seamed_sheet();
    let scene = dir.path().join("scene.gltf");
    write_gltf(std::slice::from_ref(&g), &scene).unwrap();
    let mut keyed = g.clone();
    keyed.keyframes = vec![(12, lifted.clone())];
    keyed.world_translation = Vec3::new(0.0, 0.5, 0.0);
    let keys_path = dir.path().join("keys.glb");
    write_gltf(std::slice::from_ref(&keyed), &keys_path).unwrap();
    let read = read_gltf(&scene);
    let keys = load(&keys_path, &read, FPS, FRAMES).unwrap();
    assert_eq!((keys.len(), keys[0].frame), (1, 12));
    // The keyframe file's own placement counts: its garment sits 0.5 m higher.
    let err = max_error(&keys[0].positions, &world(&keyed, &lifted));
    println!("glTF other file: max error {err:.2e} m");
    assert!(err < 1e-5, "{err}");
    assert!(keys[0].weights.iter().all(|&w| w == 1.0));
}

/// A stage in centimetres holding the sheet `g` and its keyframe prim `Sheet_key_12` (the
/// mesh `key`, carrying the garment role as a Blender duplicate would), both translated by
/// 10 cm.
fn usd_scene(dir: &Path, g: &Garment, key: &Garment, weights: &str) -> PathBuf {
    let translate = Vec3::new(0.0, 10.0, 0.0);
    let garment = UsdMesh {
        translate,
        ..UsdMesh::from_garment(g, "SheetData")
    };
    let key = UsdMesh {
        name: "Sheet_key_12".into(),
        translate,
        ..UsdMesh::from_garment(key, "SheetData_001")
    };
    let stage = UsdStage {
        up: UpAxis::Y,
        meters_per_unit: 0.01,
        fps: FPS,
        range: Some((1.0, 48.0)),
        meshes: vec![garment, key],
    };
    let text = to_usda(&stage).replacen(
        "            float[] primvars:pin",
        &format!(
            "            float[] primvars:key_weight = [{weights}] (\n                \
             interpolation = \"vertex\"\n            )\n            float[] primvars:pin"
        ),
        1,
    );
    let path = dir.join("scene.usda");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn usd_key_prims_are_keyframes_with_key_weight_not_garments_or_bodies() {
    let dir = tempfile::tempdir().unwrap();
    let (g, lifted) = seamed_sheet();
    let weights: Vec<String> = (0..16).map(|i| format!("{}", i % 2)).collect();
    let key = Garment {
        positions: lifted.clone(),
        ..g.clone()
    };
    let path = usd_scene(dir.path(), &g, &key, &weights.join(", "));
    let scene = crate::io::select(&path, &[], &[], Some(FPS)).unwrap().scene;
    assert_eq!(scene.garments.len(), 1, "the key prim is no garment");
    assert!(scene.bodies.is_empty(), "the key prim is no body");
    let read = &scene.garments[0];
    assert_eq!(read.keyframes.len(), 1);
    let keys = load(&path, read, FPS, FRAMES).unwrap();
    assert_eq!(keys[0].name, "Sheet_key_12");
    // metersPerUnit 0.01 and the 10 cm translation: world = 0.01·(p + (0, 10, 0)).
    let want: Vec<Vec3> = lifted
        .iter()
        .map(|p| (p + Vec3::new(0.0, 10.0, 0.0)) * 0.01)
        .collect();
    let err = max_error(&keys[0].positions, &want);
    println!("USD: max error {err:.2e} m");
    assert!(err < 1e-8, "{err}");
    let want_w: Vec<f64> = (0..16).map(|i| f64::from(i % 2)).collect();
    assert_eq!(keys[0].weights, want_w);
}

#[test]
fn usd_key_prim_with_another_point_count_is_bad_input_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let (g, _) = seamed_sheet();
    let small = sheet(&SheetSpec {
        n: 3,
        ..SheetSpec::default()
    });
    let path = usd_scene(dir.path(), &g, &small, &["1"; 16].join(", "));
    let r = crate::io::select(&path, &[], &[], Some(FPS)).map(|_| Vec::new());
    let msg = bad_input(r, "Sheet_key_12");
    assert!(msg.contains("9 points") && msg.contains("16"), "{msg}");
}

#[test]
fn mdd_samples_at_half_and_one_second_are_frames_12_and_24_in_world_space() {
    let (dir, g, lifted, per_point) = mdd_garment();
    let path = dir.path().join("keys.mdd");
    write_mdd(
        &path,
        &[0.5, 1.0],
        &[
            per_point.clone(),
            g.output_points.iter().map(|&i| g.positions[i]).collect(),
        ],
    );
    let keys = load(&path, &g, FPS, FRAMES).unwrap();
    assert_eq!((keys[0].frame, keys[1].frame), (12, 24));
    assert_eq!(keys[1].name, "keys.mdd sample 2 (frame 24)");
    let err = max_error(&keys[0].positions, &world(&g, &lifted));
    println!("MDD with world transform: max error {err:.2e} m");
    assert!(err < 1e-6, "{err}");
    assert!(max_error(&keys[1].positions, &g.world_positions()) < 1e-6);
}

#[test]
fn mdd_bad_inputs_are_exit_2_naming_the_keyframe() {
    let (dir, g, _, p) = mdd_garment();
    let path = dir.path().join("keys.mdd");
    let run = |times: &[f32], samples: &[Vec<Vec3>]| {
        write_mdd(&path, times, samples);
        load(&path, &g, FPS, FRAMES)
    };
    let n = p.len();
    let msg = bad_input(
        run(&[0.5], &[p[1..].to_vec()]),
        "keys.mdd sample 1 (frame 12)",
    );
    assert!(msg.contains(&format!("{} points", n - 1)) && msg.contains(&n.to_string()));
    let msg = bad_input(
        run(&[1.0 / 24.0], std::slice::from_ref(&p)),
        "sample 1 (frame 1)",
    );
    assert!(msg.contains("start state"), "{msg}");
    bad_input(run(&[0.0], std::slice::from_ref(&p)), "sample 1 (frame 0)");
    bad_input(
        run(&[49.0 / 24.0], std::slice::from_ref(&p)),
        "sample 1 (frame 49)",
    );
    let mut nan = p.clone();
    nan[3].y = f64::NAN;
    bad_input(run(&[0.5, 1.0], &[p.clone(), nan]), "sample 2 (frame 24)");
    let msg = bad_input(
        run(&[0.5, 0.5], &[p.clone(), p.clone()]),
        "sample 2 (frame 12)",
    );
    assert!(msg.contains("sample 1 (frame 12)"), "{msg}");
    let msg = bad_input(run(&[0.51], std::slice::from_ref(&p)), "sample 1");
    assert!(msg.contains("whole frame"), "{msg}");
    // Split copies of one seam vertex 1 cm apart.
    let k = (0..n)
        .find(|&k| {
            g.output_points
                .iter()
                .filter(|&&i| i == g.output_points[k])
                .count()
                > 1
        })
        .unwrap();
    let mut torn = p.clone();
    torn[k].x += 0.01;
    let msg = bad_input(run(&[0.5], &[torn]), "sample 1 (frame 12)");
    assert!(msg.contains("seam"), "{msg}");
    // No samples at all: the garment is named.
    bad_input(run(&[], &[]), "Sheet");
}

#[test]
fn truncated_or_corrupt_mdd_files_are_exit_2() {
    let (dir, g, _, p) = mdd_garment();
    let path = dir.path().join("keys.mdd");
    write_mdd(&path, &[0.5], std::slice::from_ref(&p));
    let bytes = std::fs::read(&path).unwrap();
    for cut in [0, 5, 8, 11, bytes.len() - 1] {
        std::fs::write(&path, &bytes[..cut]).unwrap();
        bad_input(load(&path, &g, FPS, FRAMES), "Sheet");
    }
    // Counts that would overflow a size computation.
    let mut huge = bytes.clone();
    huge[..8].copy_from_slice(&[0x7f, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff]);
    std::fs::write(&path, &huge).unwrap();
    bad_input(load(&path, &g, FPS, FRAMES), "truncated");
    huge[..4].copy_from_slice(&(-1i32).to_be_bytes());
    std::fs::write(&path, &huge).unwrap();
    bad_input(load(&path, &g, FPS, FRAMES), "negative");
    bad_input(
        load(&dir.path().join("missing.mdd"), &g, FPS, FRAMES),
        "cannot read",
    );
}

#[test]
fn gltf_bad_inputs_are_exit_2_naming_the_keyframe() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("scene.gltf");
    let (mut g, lifted) = seamed_sheet();
    write_gltf(std::slice::from_ref(&g), &path).unwrap();
    // No keyframes in the scene's own file.
    let msg = bad_input(load(&path, &read_gltf(&path), FPS, FRAMES), "Sheet");
    assert!(msg.contains("no keyframes"), "{msg}");
    g.keyframes = vec![(60, lifted.clone())];
    write_gltf(std::slice::from_ref(&g), &path).unwrap();
    let read = read_gltf(&path);
    let msg = bad_input(load(&path, &read, FPS, FRAMES), "key_60");
    assert!(msg.contains("2..=48"), "{msg}");
    // Keyframe weights that are zero everywhere.
    let mut zero = read.clone();
    zero.key_weight = Some(vec![0.0; zero.positions.len()]);
    bad_input(load(&path, &zero, FPS, (1, 90)), "key_60");
    // A keyframe of the wrong size and one with NaN, as an importer bug could give them.
    let mut short = read.clone();
    short.keyframes[0].1.pop();
    let msg = bad_input(load(&path, &short, FPS, (1, 90)), "key_60");
    assert!(
        msg.contains("15 points") && msg.contains("16 particles"),
        "{msg}"
    );
    let mut nan = read.clone();
    nan.keyframes[0].1[2].z = f64::INFINITY;
    bad_input(load(&path, &nan, FPS, (1, 90)), "key_60");
    // An unknown file type as source.
    bad_input(
        load(&dir.path().join("keys.txt"), &read, FPS, FRAMES),
        "Sheet",
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn arbitrary_mdd_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.mdd");
        std::fs::write(&path, &bytes).unwrap();
        let g = sheet(&SheetSpec { n: 2, ..SheetSpec::default() });
        if let Err(e) = load(&path, &g, FPS, FRAMES) {
            prop_assert_eq!(e.exit_code(), 2);
        }
    }
}
