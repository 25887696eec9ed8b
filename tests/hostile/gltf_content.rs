//! Weights and topology that would silently give wrong cloth: NaN or out-of-range pin and
//! skin weights, an index count not a multiple of 3, `_DRAPE_INDEX` 0 everywhere. Each is
//! exit 2 naming the file and the mesh.
use crate::common::{code, drape, s, stderr};
use crate::gltf_files::{Doc, VERTICES};
use serde_json::json;

/// Writes `doc`, runs `drape inspect` on it, expects exit 2 naming file and mesh, and
/// returns the message.
fn refused(doc: Doc, name: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = doc.write(dir.path(), name, None);
    let out = drape(&["inspect", s(&path)]);
    let err = stderr(&out);
    assert_eq!(code(&out), 2, "{err}");
    assert!(err.contains(name) && err.contains("'Grid'"), "{err}");
    err
}

/// The grid with the scalar float attribute `name`, `value(v)` per vertex.
fn with_scalar(name: &str, value: impl Fn(usize) -> f32) -> Doc {
    let mut doc = Doc::grid();
    let values: Vec<f32> = (0..VERTICES).map(value).collect();
    let acc = doc.add_f32(&values, "SCALAR");
    doc.attribute(name, acc);
    doc
}

#[test]
fn nan_and_out_of_range_pin_weights_are_refused() {
    let nan = with_scalar("_PIN", |v| if v == 7 { f32::NAN } else { 0.0 });
    let err = refused(nan, "nan_pin.gltf");
    assert!(err.contains("vertex 7") && err.contains("NaN"), "{err}");
    let big = with_scalar("_PIN", |v| if v == 3 { 2.0 } else { 1.0 });
    let err = refused(big, "big_pin.gltf");
    assert!(
        err.contains("vertex 3") && err.contains("pin weight"),
        "{err}"
    );
}

#[test]
fn nan_and_negative_skin_weights_are_refused() {
    for (bad, file) in [(f32::NAN, "nan_skin.gltf"), (-0.5, "negative_skin.gltf")] {
        let mut doc = Doc::grid();
        let joints = doc.add_bytes(&[0u8; 4 * VERTICES], 5121, VERTICES, "VEC4");
        let mut weights = vec![0.0f32; 4 * VERTICES];
        for v in 0..VERTICES {
            weights[4 * v] = if v == 11 { bad } else { 1.0 };
        }
        let weights = doc.add_f32(&weights, "VEC4");
        doc.attribute("JOINTS_0", joints);
        doc.attribute("WEIGHTS_0", weights);
        doc.json["nodes"][0]["skin"] = json!(0);
        doc.json["nodes"]
            .as_array_mut()
            .unwrap()
            .push(json!({"name": "Bone"}));
        doc.json["scenes"][0]["nodes"] = json!([0, 1]);
        doc.json["skins"] = json!([{"joints": [1]}]);
        let err = refused(doc, file);
        assert!(
            err.contains("vertex 11") && err.contains("skin weight"),
            "{err}"
        );
    }
}

#[test]
fn an_index_count_not_a_multiple_of_3_is_refused() {
    let mut doc = Doc::grid();
    doc.json["accessors"][2]["count"] = json!(95);
    let err = refused(doc, "indices.gltf");
    assert!(
        err.contains("95 indices") && err.contains("multiple of 3"),
        "{err}"
    );
}

#[test]
fn drape_index_zero_everywhere_is_refused() {
    let err = refused(with_scalar("_DRAPE_INDEX", |_| 0.0), "zero_index.gltf");
    assert!(err.contains("_DRAPE_INDEX 0 on every vertex"), "{err}");
}
