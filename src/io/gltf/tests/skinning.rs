//! Skins, morph targets, sparse accessors, animated scenes and welding, on small files
//! built with the fixture document builder and checked against analytic values.
use super::*;
use crate::fixtures::gltf_doc::{Doc, ARRAY_BUFFER};
use crate::fixtures::{character_frames, character_mesh};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures");

fn f32s(v: &[[f64; 3]]) -> Vec<[f32; 3]> {
    v.iter().map(|p| p.map(|c| c as f32)).collect()
}

/// A two-bone "arm" along +Y: Rig (t = (0, 0, 2)) → J0 at its origin → J1 at (0, 1, 0).
/// Vertices (±0.1, y, 0) for y = 0, 1, 2; y = 0 on J0, y = 2 on J1, y = 1 half and half.
/// J1 rotates about Z from 0° at t = 0 to 90° at t = 1 (LINEAR). The skinned node has a
/// translation (10, 0, 0) that glTF ignores.
fn two_bone_file(dir: &Path) -> PathBuf {
    let mut doc = Doc::default();
    let ys = [0.0, 1.0, 2.0];
    let pos: Vec<[f64; 3]> = ys
        .iter()
        .flat_map(|&y| [[-0.1, y, 0.0], [0.1, y, 0.0]])
        .collect();
    let p = doc.vec3_with_bounds(&f32s(&pos));
    let joints = doc.joints_u8(&[[0, 1, 0, 0]; 6]);
    let w: Vec<f32> = ys
        .iter()
        .flat_map(|&y| {
            let s = (y / 2.0) as f32;
            let row = match y {
                0.0 => [1.0, 0.0, 0.0, 0.0],
                2.0 => [0.0, 1.0, 0.0, 0.0],
                _ => [1.0 - s, s, 0.0, 0.0],
            };
            [row, row].concat()
        })
        .collect();
    let weights = doc.floats(&w, "VEC4", Some(ARRAY_BUFFER));
    let ind = doc.indices(&[0, 1, 3, 0, 3, 2, 2, 3, 5, 2, 5, 4]);
    doc.mesh(json!({"primitives": [{"attributes": {"POSITION": p, "JOINTS_0": joints, "WEIGHTS_0": weights}, "indices": ind}]}));
    let ibm: Vec<f32> = [
        nalgebra::Matrix4::<f64>::identity(),
        nalgebra::Matrix4::new_translation(&Vec3::new(0.0, -1.0, 0.0)),
    ]
    .iter()
    .flat_map(|m| m.as_slice().iter().map(|&v| v as f32).collect::<Vec<_>>())
    .collect();
    let ibm = doc.floats(&ibm, "MAT4", None);
    doc.skin(json!({"joints": [1, 2], "inverseBindMatrices": ibm}));
    doc.node(json!({"name": "Rig", "children": [1], "translation": [0.0, 0.0, 2.0]}));
    doc.node(json!({"name": "J0", "children": [2]}));
    doc.node(json!({"name": "J1", "translation": [0.0, 1.0, 0.0]}));
    doc.node(json!({"name": "Arm", "mesh": 0, "skin": 0, "translation": [10.0, 0.0, 0.0]}));
    let times = doc.times(&[0.0, 1.0]);
    let h = std::f32::consts::FRAC_PI_4;
    let rot = doc.floats(
        &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, h.sin(), h.cos()],
        "VEC4",
        None,
    );
    doc.animation(
        json!({"samplers": [{"input": times, "output": rot, "interpolation": "LINEAR"}],
                         "channels": [{"sampler": 0, "target": {"node": 2, "path": "rotation"}}]}),
    );
    doc.scene_nodes = vec![0, 3];
    let path = dir.join("arm.gltf");
    doc.write(&path).unwrap();
    path
}

/// World position of vertex (x, y, 0) of the two-bone arm with J1 turned by `theta`.
fn arm_analytic(x: f64, y: f64, theta: f64) -> Vec3 {
    let rigid0 = Vec3::new(x, y, 0.0);
    let (c, s) = (theta.cos(), theta.sin());
    let rigid1 =
        Vec3::new(0.0, 1.0, 0.0) + Vec3::new(c * x - s * (y - 1.0), s * x + c * (y - 1.0), 0.0);
    let w1 = y / 2.0;
    let p = rigid0 * (1.0 - w1) + rigid1 * w1;
    p + Vec3::new(0.0, 0.0, 2.0)
}

#[test]
fn two_joint_bone_skins_to_the_analytic_rotation() {
    let dir = tempfile::tempdir().unwrap();
    let file = GltfFile::open(&two_bone_file(dir.path())).unwrap();
    assert_eq!(file.time_range(), Some((0.0, 1.0)));
    assert!(file.is_skinned(0) && file.is_animated(0));
    let mut worst: f64 = 0.0;
    for t in [0.0f64, 0.25, 0.5, 1.0, 2.0] {
        let theta = std::f64::consts::FRAC_PI_2 * t.min(1.0);
        let got = file.world_positions(0, &file.pose(t));
        for (v, p) in got.iter().enumerate() {
            let (x, y) = (if v % 2 == 0 { -0.1 } else { 0.1 }, (v / 2) as f64);
            worst = worst.max((p - arm_analytic(x, y, theta)).norm());
        }
    }
    // f32 storage of the inputs (sin/cos of 45°) bounds the agreement.
    assert!(worst < 1e-6, "max deviation {worst}");
}

#[test]
fn animated_body_is_sampled_per_frame_and_garment_keeps_object_space() {
    let dir = tempfile::tempdir().unwrap();
    let path = two_bone_file(dir.path());
    // As a body (default 24 fps): frames 0..=24.
    let scene = select(&path, &["Arm".into()], &[]).err();
    assert!(
        scene.is_some(),
        "the arm has no UVs, so it cannot be a garment"
    );
    let scene = read(&path).unwrap();
    assert_eq!(scene.frame_range, Some((0, 24)));
    let body = &scene.bodies[0];
    assert_eq!(body.animation.frames.len(), 25);
    assert_eq!(body.animation.range(), (0.0, 24.0));
    let mid = body.animation.sample(12.0);
    let want = arm_analytic(0.1, 2.0, std::f64::consts::FRAC_PI_4);
    assert!((mid[5] - want).norm() < 1e-6, "{} vs {want}", mid[5]);
    // At 48 fps the same motion spans frames 0..=48.
    let file = GltfFile::open(&path).unwrap();
    let at48 =
        build::build_scene(&file, &[], &[0], build::Frames::of(&file, 48.0).unwrap()).unwrap();
    assert_eq!(at48.frame_range, Some((0, 48)));
    assert!((at48.bodies[0].animation.sample(24.0)[5] - want).norm() < 1e-6);
}

#[test]
fn skinned_garment_positions_are_first_frame_pose_in_object_space() {
    let dir = tempfile::tempdir().unwrap();
    let path = two_bone_file(dir.path());
    // Give the arm UVs and mark it, and start its animation with J1 already turned.
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    doc["nodes"][3]["extras"] = json!({"drape_role": "garment"});
    let text = doc.to_string();
    std::fs::write(&path, text).unwrap();
    let file = GltfFile::open(&path).unwrap();
    let pose = file.pose(0.5);
    let (g, _) = build::garment(&file, 0, &pose).unwrap();
    // Object space of the skinned node: its translation (10, 0, 0) is still its object
    // transform, even though skinning ignores it.
    assert_eq!(g.world_translation, Vec3::new(10.0, 0.0, 0.0));
    let world = g.world_positions();
    let want = arm_analytic(-0.1, 2.0, std::f64::consts::FRAC_PI_4);
    assert!((world[4] - want).norm() < 1e-6, "{} vs {want}", world[4]);
}

#[test]
fn morph_targets_animate_except_keyframe_targets_which_become_keyframes() {
    let dir = tempfile::tempdir().unwrap();
    let mut doc = Doc::default();
    let base: Vec<[f64; 3]> = vec![
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [1.0, 1.0, 0.0],
    ];
    let p = doc.vec3_with_bounds(&f32s(&base));
    let uv = doc.floats(
        &[0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0],
        "VEC2",
        Some(ARRAY_BUFFER),
    );
    // "Bulge": sparse, only vertex 3 moves by (0, 0, 1). "key_10": every vertex up by 2.
    let bulge = doc.sparse_vec3(4, &[3], &[[0.0, 0.0, 1.0]]);
    let key = doc.vec3_with_bounds(&[[0.0, 2.0, 0.0]; 4]);
    let kw = doc.floats(&[0.0, 0.0, 1.0, 1.0], "SCALAR", Some(ARRAY_BUFFER));
    let ind = doc.indices(&[0, 1, 3, 0, 3, 2]);
    doc.mesh(json!({"weights": [0.25, 0.75], "extras": {"targetNames": ["Bulge", "key_10"]},
        "primitives": [{"attributes": {"POSITION": p, "TEXCOORD_0": uv, "_KEY_WEIGHT": kw}, "indices": ind,
                        "targets": [{"POSITION": bulge}, {"POSITION": key}]}]}));
    doc.node(json!({"name": "Flag", "mesh": 0, "extras": {"drape_role": "garment"}}));
    let times = doc.times(&[0.5, 1.5]);
    let w = doc.floats(&[0.0, 0.0, 1.0, 1.0], "SCALAR", None);
    doc.animation(
        json!({"samplers": [{"input": times, "output": w, "interpolation": "LINEAR"}],
                         "channels": [{"sampler": 0, "target": {"node": 0, "path": "weights"}}]}),
    );
    doc.scene_nodes = vec![0];
    let path = dir.path().join("flag.gltf");
    doc.write(&path).unwrap();

    let file = GltfFile::open(&path).unwrap();
    // Without animation the mesh weights apply to "Bulge" (0.25); key_10's 0.75 never does.
    let rest = file.morphed_positions(0, &GltfFile::open(&path).unwrap().pose(0.0));
    assert_eq!(rest[3], Vec3::new(1.0, 1.0, 0.0)); // animated weight at t ≤ 0.5 is 0
    let at1 = file.world_positions(0, &file.pose(1.0));
    assert_eq!(at1[3], Vec3::new(1.0, 1.0, 0.5));
    assert_eq!(at1[0], Vec3::zeros());
    // As a scene at 24 fps: frames 12..=36; the garment animates, key_10 is a keyframe.
    let scene = read(&path).unwrap();
    assert_eq!(scene.frame_range, Some((12, 36)));
    let g = &scene.garments[0];
    let anim = g.animation.as_ref().expect("morph animation");
    assert_eq!(anim.positions.len(), 25);
    assert_eq!(anim.sample(36.0)[3], Vec3::new(1.0, 1.0, 1.0));
    assert_eq!(g.keyframes.len(), 1);
    assert_eq!(g.keyframes[0].0, 10);
    assert_eq!(g.keyframes[0].1[2], Vec3::new(0.0, 3.0, 0.0));
    assert_eq!(g.key_weight.as_deref(), Some(&[0.0, 0.0, 1.0, 1.0][..]));
}

#[test]
fn sparse_accessor_over_a_buffer_view_replaces_the_named_elements() {
    let dir = tempfile::tempdir().unwrap();
    // 3 × 3 sheet: replace the positions of vertices 2 and 7 (u16 indices).
    let bytes: Vec<u8> = [2u16, 7]
        .iter()
        .flat_map(|i| i.to_le_bytes())
        .chain(
            [0.5f32, 0.25, -1.0, 9.0, 8.0, 7.0]
                .iter()
                .flat_map(|v| v.to_le_bytes()),
        )
        .collect();
    let uri = format!(
        "data:application/octet-stream;base64,{}",
        fixtures::base64(&bytes)
    );
    let path = write_edited(dir.path(), "sparse.gltf", &[named_sheet("S", 3)], |doc| {
        doc["buffers"]
            .as_array_mut()
            .unwrap()
            .push(json!({"byteLength": bytes.len(), "uri": uri}));
        let views = doc["bufferViews"].as_array_mut().unwrap();
        views.push(json!({"buffer": 1, "byteOffset": 0, "byteLength": 4}));
        views.push(json!({"buffer": 1, "byteOffset": 4, "byteLength": 24}));
        let (iv, vv) = (views.len() - 2, views.len() - 1);
        let pos = doc["meshes"][0]["primitives"][0]["attributes"]["POSITION"]
            .as_u64()
            .unwrap() as usize;
        doc["accessors"][pos]["sparse"] = json!({"count": 2,
            "indices": {"bufferView": iv, "componentType": 5123},
            "values": {"bufferView": vv}});
    });
    let file = GltfFile::open(&path).unwrap();
    let p = &file.mesh(0).positions;
    let plain = named_sheet("S", 3);
    assert_eq!(p[2], Vec3::new(0.5, 0.25, -1.0));
    assert_eq!(p[7], Vec3::new(9.0, 8.0, 7.0));
    for v in [0, 1, 3, 4, 5, 6, 8] {
        assert_eq!(
            p[v],
            plain.positions[v].map(|c| c as f32 as f64),
            "vertex {v}"
        );
    }
}

/// Two triangles with their own three vertices each, sharing the diagonal (vertices 0 ≡ 3,
/// 2 ≡ 4 by position); `skin_differs` / `delta_differs` give vertex 3 another weight or
/// morph delta than vertex 0.
fn split_quad(dir: &Path, skin_differs: bool, delta_differs: bool) -> Scene {
    let mut doc = Doc::default();
    let pos = [
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [1.0, 1.0, 0.0],
        [0.0, 0.0, 0.0],
        [1.0, 1.0, 0.0],
        [0.0, 1.0, 0.0],
    ];
    let p = doc.vec3_with_bounds(&f32s(&pos));
    let uv: Vec<f32> = pos
        .iter()
        .flat_map(|q| [q[0] as f32, q[1] as f32])
        .collect();
    let uv = doc.floats(&uv, "VEC2", Some(ARRAY_BUFFER));
    let j = doc.joints_u8(&[[0, 1, 0, 0]; 6]);
    let mut w = vec![0.5f32; 6 * 4];
    if skin_differs {
        w[3 * 4] = 0.75;
        w[3 * 4 + 1] = 0.25;
    }
    let w = doc.floats(&w, "VEC4", Some(ARRAY_BUFFER));
    let mut d = [[0.0f32; 3]; 6];
    if delta_differs {
        d[3] = [0.0, 0.0, 0.125];
    }
    let d = doc.vec3_with_bounds(&d);
    let ind = doc.indices(&[0, 1, 2, 3, 4, 5]);
    doc.mesh(json!({"primitives": [{"attributes": {"POSITION": p, "TEXCOORD_0": uv, "JOINTS_0": j, "WEIGHTS_0": w},
        "indices": ind, "targets": [{"POSITION": d}]}]}));
    let ibm = doc.floats(
        &[
            nalgebra::Matrix4::<f32>::identity().as_slice(),
            nalgebra::Matrix4::<f32>::identity().as_slice(),
        ]
        .concat(),
        "MAT4",
        None,
    );
    doc.skin(json!({"joints": [1, 2], "inverseBindMatrices": ibm}));
    doc.node(json!({"name": "Quad", "mesh": 0, "skin": 0, "extras": {"drape_role": "garment"}}));
    doc.node(json!({"name": "A"}));
    doc.node(json!({"name": "B"}));
    doc.scene_nodes = vec![0, 1, 2];
    let path = dir.join(format!("quad_{skin_differs}_{delta_differs}.gltf"));
    doc.write(&path).unwrap();
    read(&path).unwrap()
}

#[test]
fn welding_needs_equal_position_skin_weights_and_morph_deltas() {
    let dir = tempfile::tempdir().unwrap();
    let count = |s: Scene| s.garments[0].positions.len();
    assert_eq!(count(split_quad(dir.path(), false, false)), 4);
    assert_eq!(count(split_quad(dir.path(), true, false)), 5);
    assert_eq!(count(split_quad(dir.path(), false, true)), 5);
}

#[test]
fn skirt_on_character_fixture_reads_as_garment_and_animated_body() {
    let path = Path::new(FIXTURES).join("skirt_on_character.gltf");
    let scene = read(&path).unwrap();
    assert_eq!(scene.frame_range, Some((1, 48)));
    assert_eq!(scene.garments.len(), 1);
    let skirt = &scene.garments[0];
    assert_eq!((skirt.name.as_str(), skirt.positions.len()), ("Skirt", 416));
    assert!(skirt.animation.is_none());
    assert_eq!(scene.bodies.len(), 1);
    let body = &scene.bodies[0];
    let mesh = character_mesh();
    assert_eq!(body.name, "Body");
    assert_eq!(body.animation.positions[0].len(), mesh.positions.len());
    assert_eq!(
        body.animation.frames,
        (1..=48).map(f64::from).collect::<Vec<_>>()
    );
    // Frame 1 is the bind pose (every rotation the identity, Spine at rest).
    let rest_err = body.animation.positions[0]
        .iter()
        .zip(&mesh.positions)
        .map(|(a, b)| (a - b).norm())
        .fold(0.0, f64::max);
    assert!(rest_err < 1e-6, "{rest_err}");
    // The hands move: at frame 25 the left arm is down 50° and forward 25°.
    let tip = mesh
        .positions
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.x.total_cmp(&b.1.x))
        .unwrap()
        .0;
    let moved = body.animation.sample(25.0)[tip] - mesh.positions[tip];
    assert!(moved.y < -0.3 && moved.norm() > 0.35, "{moved}");
    // character_frames gives the same motion.
    let (tris, frames) = character_frames(24.0, (1, 48)).unwrap();
    assert_eq!(tris, body.triangles);
    assert_eq!(frames, body.animation.positions);
}

#[test]
fn cubic_character_uses_both_joint_sets_the_morph_and_ignores_the_skinned_node_transform() {
    let path = Path::new(FIXTURES).join("character_cubic.glb");
    let file = GltfFile::open(&path).unwrap();
    let linear = GltfFile::open(&Path::new(FIXTURES).join("character.gltf")).unwrap();
    let mesh = file.mesh(0);
    let inf = mesh.influences.as_ref().unwrap();
    // Shoulder vertices blend two joints from two sets; weights sum to 1 after normalising.
    let blended = (0..mesh.positions.len())
        .filter(|&v| inf.of(v).count() == 2)
        .count();
    assert!(blended > 10, "{blended}");
    for v in 0..mesh.positions.len() {
        let total: f64 = inf.of(v).map(|(_, w)| w).sum();
        assert!((total - 1.0).abs() < 1e-12);
    }
    assert_eq!(mesh.targets.len(), 1);
    assert_eq!(mesh.targets[0].name.as_deref(), Some("Breathe"));
    // Frame 1 (t = 1/24): bind pose moved by the Armature (30° about Y, then (0.3, 0, −0.2)),
    // not by the Body node's (5, 0, 0); the breathe weight is 0 there.
    let rot = nalgebra::Rotation3::from_axis_angle(&Vec3::y_axis(), 30f64.to_radians());
    let at1 = file.world_positions(0, &file.pose(1.0 / 24.0));
    let err = at1
        .iter()
        .zip(&mesh.positions)
        .map(|(a, p)| (a - (rot * p + Vec3::new(0.3, 0.0, -0.2))).norm())
        .fold(0.0, f64::max);
    assert!(err < 1e-5, "{err}");
    // Frame 13 (a key): the cubic spline passes through the same pose as the linear
    // character, plus the full Breathe target (STEP weight 1) and the Armature placement.
    let t = 13.0 / 24.0 + 1e-4; // just after the key: the STEP weight is 1 there
    let (a, b) = (
        file.world_positions(0, &file.pose(t)),
        linear.world_positions(0, &linear.pose(t)),
    );
    let mut worst: f64 = 0.0;
    for v in 0..a.len() {
        let want = rot * b[v] + Vec3::new(0.3, 0.0, -0.2);
        // The morph is applied before skinning; torso vertices (weight 1 on Spine) see it
        // rotated by Spine only.
        let d = a[v] - want;
        if mesh.targets[0].deltas[v].norm() == 0.0 {
            worst = worst.max(d.norm());
        } else {
            assert!(
                (d.norm() - mesh.targets[0].deltas[v].norm()).abs() < 2e-3,
                "vertex {v}"
            );
        }
    }
    // u8-quantised weights at the shoulders differ from the linear file's floats.
    assert!(worst < 5e-3, "{worst}");
}
