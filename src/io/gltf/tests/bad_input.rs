//! Malformed files: every one is an input error naming the file (and the object where
//! there is one), never a panic.
use super::*;

/// The error of reading `path`, which must be an input error about that file.
fn input_error(path: &Path) -> (Option<String>, String) {
    match read(path) {
        Err(Error::Input {
            file,
            object,
            message,
        }) => {
            assert_eq!(file.as_deref(), Some(path), "{message}");
            assert!(message.contains("; "), "no fix in '{message}'");
            (object, message)
        }
        other => panic!("expected an input error, got {other:?}"),
    }
}

#[test]
fn accessor_beyond_its_buffer_view_names_the_mesh_and_accessor() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_edited(
        dir.path(),
        "count.gltf",
        &[named_sheet("Cloak", 3)],
        |doc| {
            doc["accessors"][0]["count"] = json!(1000);
        },
    );
    let (object, msg) = input_error(&path);
    assert_eq!(object.as_deref(), Some("Cloak"));
    assert!(
        msg.contains("POSITION (accessor 0)") && msg.contains("reads 1000 elements"),
        "{msg}"
    );
    let path = write_edited(dir.path(), "view.gltf", &[named_sheet("Cloak", 3)], |doc| {
        doc["bufferViews"][0]["byteLength"] = json!(1 << 20);
    });
    let (object, msg) = input_error(&path);
    assert_eq!(object.as_deref(), Some("Cloak"));
    assert!(
        msg.contains("beyond the") && msg.contains("buffer 0"),
        "{msg}"
    );
}

#[test]
fn sparse_index_beyond_the_accessor_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let bytes: Vec<u8> = [200u8, 0, 0, 0]
        .into_iter()
        .chain(12.0f32.to_le_bytes().repeat(3))
        .collect();
    let uri = format!(
        "data:application/octet-stream;base64,{}",
        fixtures::base64(&bytes)
    );
    let path = write_edited(
        dir.path(),
        "sparse.gltf",
        &[named_sheet("Cloak", 3)],
        |doc| {
            doc["buffers"]
                .as_array_mut()
                .unwrap()
                .push(json!({"byteLength": 16, "uri": uri}));
            let views = doc["bufferViews"].as_array_mut().unwrap();
            views.push(json!({"buffer": 1, "byteOffset": 0, "byteLength": 1}));
            views.push(json!({"buffer": 1, "byteOffset": 4, "byteLength": 12}));
            let n = views.len();
            doc["accessors"][0]["sparse"] = json!({"count": 1,
            "indices": {"bufferView": n - 2, "componentType": 5121},
            "values": {"bufferView": n - 1}});
        },
    );
    let (object, msg) = input_error(&path);
    assert_eq!(object.as_deref(), Some("Cloak"));
    assert!(
        msg.contains("sparse index 200 beyond its 9 elements"),
        "{msg}"
    );
}

#[test]
fn external_buffers_are_read_and_a_missing_one_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let embedded = write_edited(dir.path(), "emb.gltf", &[named_sheet("S", 3)], |_| {});
    let mut bin = Vec::new();
    let path = write_edited(dir.path(), "ext.gltf", &[named_sheet("S", 3)], |doc| {
        let uri = doc["buffers"][0]["uri"].as_str().unwrap().to_string();
        let b64 = uri.split(',').nth(1).unwrap();
        bin =
            crate::io::gltf::uri::data_uri(&format!("data:application/octet-stream;base64,{b64}"))
                .unwrap();
        doc["buffers"][0]["uri"] = json!("my%20mesh.bin");
    });
    std::fs::write(dir.path().join("my mesh.bin"), &bin).unwrap();
    let a = read(&embedded).unwrap();
    let b = read(&path).unwrap();
    assert_eq!(a.bodies[0].animation, b.bodies[0].animation);
    std::fs::remove_file(dir.path().join("my mesh.bin")).unwrap();
    let (object, msg) = input_error(&path);
    assert_eq!(object.as_deref(), Some("buffer 0"));
    assert!(
        msg.contains("cannot read its external file") && msg.contains("my mesh.bin"),
        "{msg}"
    );
    // A buffer shorter than it declares.
    std::fs::write(dir.path().join("my mesh.bin"), &bin[..bin.len() / 2]).unwrap();
    let (object, msg) = input_error(&path);
    assert_eq!(object.as_deref(), Some("buffer 0"));
    assert!(msg.contains("truncated"), "{msg}");
}

#[test]
fn truncated_wrong_magic_and_non_utf8_files_are_input_errors() {
    let dir = tempfile::tempdir().unwrap();
    let glb = dir.path().join("s.glb");
    crate::fixtures::write_gltf(&[named_sheet("S", 3)], &glb).unwrap();
    let bytes = std::fs::read(&glb).unwrap();
    assert!(read(&glb).is_ok());
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "half.glb",
            bytes[..bytes.len() / 2].to_vec(),
            "truncated .glb",
        ),
        ("header.glb", bytes[..10].to_vec(), "truncated .glb"),
        (
            "tiny.glb",
            [&bytes[..8], &16u32.to_le_bytes()[..], &bytes[12..]].concat(),
            "truncated .glb",
        ),
        (
            "v1.glb",
            [&bytes[..4], &1u32.to_le_bytes()[..], &bytes[8..]].concat(),
            "version 1",
        ),
        (
            "magic.glb",
            [&b"glTX"[..], &bytes[4..]].concat(),
            "not UTF-8",
        ),
        (
            "latin1.gltf",
            b"{\"asset\": {\"version\": \"2.0\", \"generator\": \"caf\xe9\"}}".to_vec(),
            "not UTF-8",
        ),
        ("empty.gltf", Vec::new(), "not a readable glTF file"),
        (
            "array.gltf",
            b"[1, 2, 3]".to_vec(),
            "not a readable glTF file",
        ),
    ];
    for (name, data, says) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, data).unwrap();
        let (object, msg) = input_error(&path);
        assert!(object.is_none(), "{name}: {object:?}");
        assert!(msg.contains(says), "{name}: {msg}");
    }
}

/// A broken file: name, JSON edit, object the error must name, text it must contain.
type Case = (
    &'static str,
    Box<dyn Fn(&mut Value)>,
    &'static str,
    &'static str,
);

#[test]
fn broken_skins_animations_and_hierarchies_name_the_object() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<Case> = vec![
        (
            "cycle.gltf",
            Box::new(|doc: &mut Value| {
                doc["nodes"][0]["children"] = json!([1]);
                doc["nodes"][1]["children"] = json!([0]);
            }),
            "nodes",
            "cycle",
        ),
        (
            "two_parents.gltf",
            Box::new(|doc: &mut Value| {
                doc["nodes"]
                    .as_array_mut()
                    .unwrap()
                    .push(json!({"children": [0]}));
                doc["nodes"]
                    .as_array_mut()
                    .unwrap()
                    .push(json!({"children": [0]}));
            }),
            "node 0",
            "more than one parent",
        ),
        (
            "times.gltf",
            Box::new(|doc: &mut Value| {
                doc["animations"] = json!([{"name": "Wave", "samplers": [{"input": 0, "output": 0}],
                    "channels": [{"sampler": 0, "target": {"node": 0, "path": "translation"}}]}]);
            }),
            "animation 'Wave' channel 0",
            "input (times) (accessor 0) must be",
        ),
        (
            "weights.gltf",
            Box::new(|doc: &mut Value| {
                doc["animations"] = json!([{"samplers": [{"input": 0, "output": 0}],
                    "channels": [{"sampler": 0, "target": {"node": 1, "path": "weights"}}]}]);
            }),
            "animation 0 channel 0",
            "no morph targets",
        ),
        (
            "matrix.gltf",
            Box::new(|doc: &mut Value| {
                doc["nodes"][0]["matrix"] = json!([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]);
                // One keyframe: time and scale read from the start of the positions.
                let acc = doc["accessors"].as_array_mut().unwrap();
                acc.push(
                    json!({"bufferView": 0, "componentType": 5126, "count": 1, "type": "SCALAR"}),
                );
                acc.push(
                    json!({"bufferView": 0, "componentType": 5126, "count": 1, "type": "VEC3"}),
                );
                let n = acc.len();
                doc["animations"] = json!([{"samplers": [{"input": n - 2, "output": n - 1}],
                    "channels": [{"sampler": 0, "target": {"node": 0, "path": "scale"}}]}]);
            }),
            "A",
            "matrix",
        ),
    ];
    for (name, edit, object, says) in cases {
        let path = write_edited(
            dir.path(),
            name,
            &[named_sheet("A", 3), named_sheet("B", 3)],
            |doc| edit(doc),
        );
        let (got, msg) = input_error(&path);
        assert_eq!(got.as_deref(), Some(object), "{name}: {msg}");
        assert!(msg.contains(says), "{name}: {msg}");
    }
}

/// Crashes the corruption tests found in the `gltf` crate, kept as regressions: its
/// validation indexes a primitive's POSITION accessor before checking the index, and it
/// does not validate animation channel targets (node index, path) at all.
#[test]
fn fuzz_regressions_position_index_and_channel_targets() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_edited(dir.path(), "pos.gltf", &[named_sheet("S", 3)], |doc| {
        doc["meshes"][0]["primitives"][0]["attributes"]["POSITION"] = json!(99);
    });
    let (object, msg) = input_error(&path);
    assert!(
        object.is_none() && msg.contains("POSITION accessor 99"),
        "{msg}"
    );
    let channel = |node: u64, path: &str| {
        json!([{"samplers": [{"input": 2, "output": 2, "interpolation": "STEP"}],
                "channels": [{"sampler": 0, "target": {"node": node, "path": path}}]}])
    };
    let path = write_edited(dir.path(), "node.gltf", &[named_sheet("S", 3)], |doc| {
        doc["animations"] = channel(7, "translation");
    });
    let (object, msg) = input_error(&path);
    assert_eq!(object.as_deref(), Some("animation 0 channel 0"));
    assert!(msg.contains("targets node 7, but there are 1"), "{msg}");
    // An unknown path (an extension's) is no motion: ignored.
    let path = write_edited(dir.path(), "path.gltf", &[named_sheet("S", 3)], |doc| {
        doc["animations"] = channel(0, "pointer");
    });
    let scene = read(&path).unwrap();
    assert_eq!(scene.frame_range, None);
}

/// xorshift64: a small deterministic generator for the corruption test.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

#[test]
fn corrupted_bytes_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = named_sheet("S", 3);
    g.keyframes = vec![(5, g.positions.iter().map(|p| p * 2.0).collect())];
    let glb_path = dir.path().join("s.glb");
    crate::fixtures::write_gltf(std::slice::from_ref(&g), &glb_path).unwrap();
    let glb = std::fs::read(&glb_path).unwrap();
    let character =
        crate::fixtures::character_gltf(crate::fixtures::CharacterMotion::Cubic, true).unwrap();
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut errors = 0;
    for round in 0..600 {
        let base = if round % 2 == 0 { &glb } else { &character };
        let mut bytes = base.clone();
        for _ in 0..1 + next(&mut state) % 4 {
            let i = (next(&mut state) as usize) % bytes.len();
            bytes[i] = next(&mut state) as u8;
        }
        if round % 7 == 0 {
            bytes.truncate((next(&mut state) as usize) % bytes.len());
        }
        let outcome =
            std::panic::catch_unwind(|| GltfFile::from_slice(&bytes, Path::new("fuzz.glb")));
        match outcome {
            Ok(Ok(file)) => {
                // Whatever decoded must evaluate without panicking too.
                let pose = file.pose(0.5);
                for i in 0..file.instances().len() {
                    let _ = file.world_positions(i, &pose);
                }
            }
            Ok(Err(Error::Input { .. })) => errors += 1,
            Ok(Err(e)) => panic!("round {round}: not an input error: {e}"),
            Err(_) => panic!("round {round}: the reader panicked"),
        }
    }
    assert!(errors > 100, "only {errors} corruptions detected");
}

/// Changes one random number, string or key of a JSON tree.
fn mutate(v: &mut Value, state: &mut u64) {
    let pick = |state: &mut u64, n: usize| (next(state) as usize) % n.max(1);
    match v {
        Value::Object(map) if !map.is_empty() => {
            let keys: Vec<String> = map.keys().cloned().collect();
            let key = &keys[pick(state, keys.len())];
            if next(state).is_multiple_of(8) {
                map.remove(key);
            } else if let Some(child) = map.get_mut(key) {
                mutate(child, state);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            let i = pick(state, items.len());
            if next(state).is_multiple_of(10) {
                items.remove(i);
            } else {
                mutate(&mut items[i], state);
            }
        }
        Value::Number(_) => {
            const NUMBERS: [f64; 12] = [
                0.0,
                1.0,
                2.0,
                3.0,
                4.0,
                5.0,
                7.0,
                64.0,
                1e3,
                -1.0,
                4294967295.0,
                0.5,
            ];
            *v = json!(NUMBERS[pick(state, NUMBERS.len())]);
            if let Some(f) = v.as_f64().filter(|f| f.fract() == 0.0 && *f >= 0.0) {
                *v = json!(f as u64);
            }
        }
        Value::String(_) => {
            const STRINGS: [&str; 6] = ["", "VEC3", "SCALAR", "rotation", "weights", "CUBICSPLINE"];
            *v = json!(STRINGS[pick(state, STRINGS.len())]);
        }
        _ => {}
    }
}

#[test]
fn structurally_corrupted_json_never_panics() {
    let base: Value = serde_json::from_slice(
        &crate::fixtures::character_gltf(crate::fixtures::CharacterMotion::Cubic, false).unwrap(),
    )
    .unwrap();
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut errors = 0;
    let rounds = 400;
    for round in 0..rounds {
        let mut doc = base.clone();
        for _ in 0..1 + next(&mut state) % 3 {
            mutate(&mut doc, &mut state);
        }
        let bytes = serde_json::to_vec(&doc).unwrap();
        let outcome =
            std::panic::catch_unwind(|| GltfFile::from_slice(&bytes, Path::new("fuzz.gltf")));
        match outcome {
            Ok(Ok(file)) => {
                let pose = file.pose(0.7);
                for i in 0..file.instances().len() {
                    let _ = file.world_positions(i, &pose);
                }
            }
            Ok(Err(Error::Input { .. })) => errors += 1,
            Ok(Err(e)) => panic!("round {round}: not an input error: {e}"),
            Err(_) => panic!("round {round}: the reader panicked on {doc}"),
        }
    }
    assert!(errors > rounds / 10, "only {errors} corruptions detected");
}
