//! Tests of the glTF reader on files written by the fixture writer and edited by hand.
//!
//! * this file: roles, names, selection, hierarchy, custom attributes, topology;
//! * [`sampling`]: STEP / LINEAR / slerp / CUBICSPLINE values against hand computation;
//! * [`skinning`]: skins, morph targets, sparse accessors, animated scenes, welding;
//! * [`bad_input`]: malformed files are input errors naming file and object;
//! * [`extensions`]: quantized and meshopt-compressed meshes, ignored and refused
//!   extensions, animation clips.
mod bad_input;
mod extensions;
mod sampling;
mod skinning;

use super::mesh::assemble_triangles;
use super::*;
use crate::fixtures::{self, sheet, write_gltf_with, GltfWriteOptions, SheetSpec};
use crate::scene::UpAxis;
use crate::{Mat3, Vec3};
use gltf::mesh::Mode;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

pub(super) fn named_sheet(name: &str, n: usize) -> Garment {
    sheet(&SheetSpec {
        name: name.into(),
        n,
        ..SheetSpec::default()
    })
}

/// Writes `garments` unmarked into `dir/file`, lets `edit` change the JSON, rewrites it.
pub(super) fn write_edited(
    dir: &Path,
    file: &str,
    garments: &[Garment],
    edit: impl FnOnce(&mut Value),
) -> PathBuf {
    let path = dir.join(file);
    let opts = GltfWriteOptions {
        mark_garment: false,
        ..GltfWriteOptions::default()
    };
    write_gltf_with(garments, &path, &opts).unwrap();
    edit_json(&path, edit);
    path
}

/// Lets `edit` change the JSON of the `.gltf` file `path`, and rewrites it.
pub(super) fn edit_json(path: &Path, edit: impl FnOnce(&mut Value)) {
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    edit(&mut doc);
    std::fs::write(path, doc.to_string()).unwrap();
}

pub(super) fn input_message(r: Result<Scene>) -> (Option<String>, String) {
    match r {
        Err(Error::Input {
            object, message, ..
        }) => (object, message),
        other => panic!("expected an input error, got {other:?}"),
    }
}

#[test]
fn unmarked_meshes_are_selected_by_name_or_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_edited(
        dir.path(),
        "pair.gltf",
        &[named_sheet("Cape", 3), named_sheet("Scarf", 4)],
        |_| {},
    );
    assert!(read(&path).unwrap().garments.is_empty());
    let (_, msg) = input_message(select_garments(&path, &[]));
    assert!(
        msg.contains("pass --garment NAME") && msg.contains("Cape, Scarf"),
        "{msg}"
    );
    let scene = select_garments(&path, &["Scarf".into(), "Scarf".into()]).unwrap();
    assert_eq!(scene.garments.len(), 1);
    assert_eq!(
        (
            scene.garments[0].name.as_str(),
            scene.garments[0].positions.len()
        ),
        ("Scarf", 16)
    );
    assert_eq!(scene.up, UpAxis::Y);
    let (object, msg) = input_message(select_garments(&path, &["Shirt".into()]));
    assert_eq!(object.as_deref(), Some("Shirt"));
    assert!(msg.contains("meshes in the file: Cape, Scarf"), "{msg}");
    // A single-mesh file answers to its file stem.
    let single = write_edited(dir.path(), "skirt.gltf", &[named_sheet("Plane", 3)], |_| {});
    let scene = select_garments(&single, &["skirt".into()]).unwrap();
    assert_eq!(scene.garments[0].name, "Plane");
}

#[test]
fn drape_role_in_node_or_mesh_extras_marks_garments() {
    let dir = tempfile::tempdir().unwrap();
    let garments = [
        named_sheet("A", 3),
        named_sheet("B", 3),
        named_sheet("C", 3),
        named_sheet("D", 3),
    ];
    let path = write_edited(dir.path(), "roles.gltf", &garments, |doc| {
        doc["nodes"][0]["extras"] = json!({"drape_role": "garment"});
        doc["meshes"][1]["extras"] = json!({"drape": {"role": "garment"}});
        doc["nodes"][2]["extras"] = json!({"drape_role": "body"});
        doc["meshes"][2]["extras"] = json!({"drape_role": "garment"}); // the node's role wins
    });
    let names: Vec<String> = read(&path)
        .unwrap()
        .garments
        .into_iter()
        .map(|g| g.name)
        .collect();
    assert_eq!(names, ["A", "B"]);
    let roles: Vec<Option<String>> = read_meshes(&path)
        .unwrap()
        .into_iter()
        .map(|(_, r)| r)
        .collect();
    assert_eq!(
        roles,
        [
            Some("garment".into()),
            Some("garment".into()),
            Some("body".into()),
            None
        ]
    );
}

#[test]
fn node_hierarchy_composes_world_transforms() {
    let dir = tempfile::tempdir().unwrap();
    let (t, q, s) = (
        [1.0, 2.0, 3.0],
        [
            0.0,
            std::f64::consts::FRAC_1_SQRT_2,
            0.0,
            std::f64::consts::FRAC_1_SQRT_2,
        ],
        [2.0, 2.0, 2.0],
    );
    let path = write_edited(dir.path(), "tree.gltf", &[named_sheet("Child", 3)], |doc| {
        doc["nodes"][0]["translation"] = json!([0.0, 0.5, 0.0]);
        doc["nodes"][0]["scale"] = json!([1.0, 3.0, 1.0]);
        doc["nodes"][0]["extras"] = json!({"drape_role": "garment"});
        let parent =
            json!({"name": "Parent", "children": [0], "translation": t, "rotation": q, "scale": s});
        doc["nodes"].as_array_mut().unwrap().push(parent);
        doc["scenes"][0]["nodes"] = json!([1]);
    });
    let g = read(&path).unwrap().garments.remove(0);
    // Parent: x' = T + R_y(90°) · 2 x; child: x' = (0, 0.5, 0) + diag(1, 3, 1) x.
    let r = nalgebra::Rotation3::from_axis_angle(&Vec3::y_axis(), std::f64::consts::FRAC_PI_2);
    let lin = r.matrix() * 2.0 * Mat3::from_diagonal(&Vec3::new(1.0, 3.0, 1.0));
    let tr = Vec3::new(1.0, 2.0, 3.0) + r * Vec3::new(0.0, 1.0, 0.0);
    assert!(
        (g.world_linear - lin).abs().max() < 1e-6,
        "{}",
        g.world_linear
    );
    assert!(
        (g.world_translation - tr).abs().max() < 1e-6,
        "{}",
        g.world_translation
    );
    // Positions stay object-local.
    assert_eq!(g.positions[0], Vec3::new(-0.5, 1.0, 0.0));
}

#[test]
fn integer_custom_attributes_unnamed_nodes_and_duplicate_names() {
    let dir = tempfile::tempdir().unwrap();
    let garments = [
        named_sheet("X", 2),
        named_sheet("X", 2),
        named_sheet("X", 2),
    ];
    // Extra buffer: normalised u8 pins [255, 0, 51, 0] and u16 drape indices [3, 2, 1, 0].
    let bytes = [255u8, 0, 51, 0, 3, 0, 2, 0, 1, 0, 0, 0];
    let uri = format!(
        "data:application/octet-stream;base64,{}",
        fixtures::base64(&bytes)
    );
    let path = write_edited(dir.path(), "stem.gltf", &garments, |doc| {
        doc["buffers"]
            .as_array_mut()
            .unwrap()
            .push(json!({"byteLength": 12, "uri": uri}));
        let views = doc["bufferViews"].as_array_mut().unwrap();
        views.push(json!({"buffer": 1, "byteOffset": 0, "byteLength": 4}));
        views.push(json!({"buffer": 1, "byteOffset": 4, "byteLength": 8}));
        let (v0, v1) = (views.len() - 2, views.len() - 1);
        let acc = doc["accessors"].as_array_mut().unwrap();
        acc.push(json!({"bufferView": v0, "componentType": 5121, "normalized": true, "count": 4, "type": "SCALAR"}));
        acc.push(json!({"bufferView": v1, "componentType": 5123, "count": 4, "type": "SCALAR"}));
        let (a0, a1) = (acc.len() - 2, acc.len() - 1);
        let attrs = &mut doc["meshes"][0]["primitives"][0]["attributes"];
        attrs.as_object_mut().unwrap().remove("_PIN");
        attrs["_pin"] = json!(a0);
        attrs["_DRAPE_INDEX"] = json!(a1);
        doc["nodes"][1].as_object_mut().unwrap().remove("name");
        doc["nodes"][2].as_object_mut().unwrap().remove("name");
        doc["meshes"][2].as_object_mut().unwrap().remove("name");
    });
    let meshes = read_meshes(&path).unwrap();
    let names: Vec<&str> = meshes.iter().map(|(g, _)| g.name.as_str()).collect();
    assert_eq!(names, ["X", "X.1", "stem"]);
    let g = &meshes[0].0;
    assert_eq!(g.pin, [1.0, 0.0, 0.2, 0.0]);
    assert_eq!(g.output_points, [3, 2, 1, 0]);
}

#[test]
fn strips_and_fans_become_triangles() {
    let strip = assemble_triangles(Mode::TriangleStrip, &[0, 1, 2, 3, 3, 4, 5]);
    assert_eq!(strip, [[0, 1, 2], [1, 3, 2], [3, 4, 5]]);
    let fan = assemble_triangles(Mode::TriangleFan, &[0, 1, 2, 3]);
    assert_eq!(fan, [[1, 2, 0], [2, 3, 0]]);
    assert_eq!(
        assemble_triangles(Mode::Triangles, &[0, 1, 2, 3]),
        [[0, 1, 2]]
    );
    assert!(assemble_triangles(Mode::Lines, &[0, 1, 2]).is_empty());
}
