//! Sizes are checked before allocating: an animation range against the frame budget, an
//! accessor's count against its buffer view.
use crate::common::{code, drape, s, stderr};
use crate::gltf_files::Doc;
use serde_json::json;

/// The grid with one translation key at t = 0 and one at `t_last` seconds.
fn keyed_grid(t_last: f32) -> Doc {
    let mut doc = Doc::grid();
    let input = doc.add_f32(&[0.0, t_last], "SCALAR");
    let output = doc.add_f32(&[0.0, 0.0, 0.0, 0.0, 1.0, 0.0], "VEC3");
    doc.json["animations"] = json!([{"name": "Far",
        "samplers": [{"input": input, "output": output}],
        "channels": [{"sampler": 0, "target": {"node": 0, "path": "translation"}}]}]);
    doc
}

#[test]
fn a_key_a_billion_seconds_away_is_an_error_stating_the_frame_budget() {
    let dir = tempfile::tempdir().unwrap();
    let path = keyed_grid(1e9).write(dir.path(), "far.gltf", None);
    let out = drape(&["inspect", s(&path)]);
    let err = stderr(&out);
    assert_eq!(code(&out), 2, "{err}");
    assert!(
        err.contains("100000 frames") && err.contains("'Far'") && err.contains("--animation"),
        "{err}"
    );
    // Within the budget the same file reads, its clip spanning the keys.
    let path = keyed_grid(2.0).write(dir.path(), "near.gltf", None);
    let out = drape(&["inspect", "--json", s(&path)]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["animations"], json!([{"name": "Far", "frames": [0, 48]}]));
}

#[test]
fn an_accessor_count_beyond_its_buffer_view_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut doc = Doc::grid();
    doc.json["accessors"][0]["count"] = json!(1u64 << 40);
    let path = doc.write(dir.path(), "count.gltf", None);
    let out = drape(&["inspect", s(&path)]);
    let err = stderr(&out);
    assert_eq!(code(&out), 2, "{err}");
    assert!(err.contains("POSITION") && err.contains("only"), "{err}");
}
