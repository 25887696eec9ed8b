//! `drape simulate` end to end through the real binary (issue 2, "[1 of 7] Core").
mod common;
use common::*;
use drape::cache::pc2;

#[test]
fn cache_has_one_point_per_source_vertex_in_source_order_and_first_frame_as_given() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("small.pc2");
    let scene = fixture("sheet_small.gltf");
    let o = drape(&[
        "simulate",
        s(&scene),
        "--frames",
        "3..7",
        "-o",
        s(&out),
        "--progress",
        "none",
    ]);
    assert_eq!(code(&o), 0, "stderr: {}", stderr(&o));
    let (start, rate, frames) = pc2::read(&out).unwrap();
    assert_eq!((start, rate, frames.len()), (3.0, 1.0, 5));
    let node = &gltf_mesh_nodes(&scene)[0];
    let source = gltf_positions(&scene, node);
    assert_eq!(frames[0].len(), source.len());
    for (p, q) in frames[0].iter().zip(&source) {
        assert_eq!(
            p, q,
            "first sample is the garment as given, in source order"
        );
    }
    // The sheet falls: the last frame differs from the first.
    let moved = frames[4]
        .iter()
        .zip(&frames[0])
        .map(|(a, b)| (0..3).map(|k| (a[k] - b[k]).abs()).fold(0.0f32, f32::max))
        .fold(0.0f32, f32::max);
    assert!(moved > 1e-3, "cloth moved by {moved}");
}

#[test]
fn pinned_vertices_never_move_in_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sheet.pc2");
    let scene = fixture("sheet_small.gltf");
    let o = drape(&["simulate", s(&scene), "--frames", "1..12", "-o", s(&out)]);
    assert_eq!(code(&o), 0, "stderr: {}", stderr(&o));
    let (_, _, frames) = pc2::read(&out).unwrap();
    let garment = drape::io::load_garments(&scene, &[])
        .unwrap()
        .garments
        .remove(0);
    let pinned: Vec<usize> = garment
        .output_points
        .iter()
        .enumerate()
        .filter(|(_, &p)| garment.pin[p] >= 0.5)
        .map(|(k, _)| k)
        .collect();
    assert!(!pinned.is_empty(), "fixture has pins");
    for f in &frames {
        for &k in &pinned {
            assert_eq!(f[k], frames[0][k], "pinned point {k} moved");
        }
    }
}

#[test]
fn progress_json_is_one_event_per_line_on_stderr_and_stdout_stays_empty() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.pc2");
    let report = dir.path().join("report.json");
    let scene = fixture("sheet_small.gltf");
    let o = drape(&[
        "simulate",
        s(&scene),
        "--frames",
        "1..4",
        "-o",
        s(&out),
        "--progress",
        "json",
        "--report",
        s(&report),
    ]);
    assert_eq!(code(&o), 0, "stderr: {}", stderr(&o));
    assert!(stdout(&o).is_empty());
    let events: Vec<serde_json::Value> = stderr(&o)
        .lines()
        .map(|l| serde_json::from_str(l).expect("every stderr line is JSON"))
        .collect();
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["start", "frame", "frame", "frame", "frame", "done"]);
    assert_eq!(events[0]["frames"], serde_json::json!([1, 4]));
    assert_eq!(events[4]["done"], 4);
    assert_eq!(events[4]["total"], 4);
    assert!(events[4]["cg_iterations"].as_u64().unwrap() > 0);
    assert_eq!(events[5]["outputs"][0], s(&out));
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(r["per_frame"].as_array().unwrap().len(), 3);
    assert!(r["per_frame"][0]["steps"].as_u64().unwrap() >= 1);
}

#[test]
fn existing_cache_is_not_overwritten_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("keep.pc2");
    std::fs::write(&out, b"precious").unwrap();
    let scene = fixture("sheet_small.gltf");
    let o = drape(&["simulate", s(&scene), "--frames", "1..3", "-o", s(&out)]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("--force"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&out).unwrap(), b"precious");
    let o = drape(&[
        "simulate",
        s(&scene),
        "--frames",
        "1..3",
        "-o",
        s(&out),
        "--force",
    ]);
    assert_eq!(code(&o), 0, "stderr: {}", stderr(&o));
    assert_eq!(pc2::read(&out).unwrap().2.len(), 3);
}

#[test]
fn bad_glb_inputs_exit_2_naming_file_and_mesh_without_panicking() {
    let dir = tempfile::tempdir().unwrap();
    for (file, needle) in [
        ("bad/no_uv.gltf", "UV"),
        ("bad/degenerate_uv.gltf", "UV"),
        ("bad/nan_position.gltf", "finite"),
        ("bad/not_gltf.gltf", "glTF"),
    ] {
        let scene = fixture(file);
        let out = dir.path().join("x.pc2");
        let o = drape(&["simulate", s(&scene), "-o", s(&out), "--progress", "none"]);
        let err = stderr(&o);
        assert_eq!(code(&o), 2, "{file}: {err}");
        assert!(!err.contains("panicked"), "{file}: {err}");
        assert!(
            err.contains(file.trim_start_matches("bad/")),
            "{file}: names the file: {err}"
        );
        assert!(err.contains(needle), "{file}: says what is wrong: {err}");
        assert!(!out.exists());
    }
}

#[test]
fn usage_errors_exit_2_before_any_simulation() {
    let dir = tempfile::tempdir().unwrap();
    let scene = fixture("sheet_small.gltf");
    let missing_dir = dir.path().join("nope").join("x.pc2");
    let cases: Vec<Vec<&str>> = vec![
        vec!["simulate", s(&scene), "-o", s(&missing_dir)],
        vec!["simulate", s(&scene), "--frames", "9..2"],
        vec!["simulate", s(&scene), "--material", "chainmail"],
        vec!["simulate", s(&scene), "--garment", "NoSuchMesh"],
        vec!["simulate", s(&scene), "--no-such-flag"],
        vec!["simulate", "does/not/exist.gltf"],
    ];
    for args in cases {
        let o = drape(&args);
        assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"));
    }
}

#[test]
fn thread_count_does_not_change_a_single_byte() {
    let dir = tempfile::tempdir().unwrap();
    let scene = fixture("sheet_small.gltf");
    let a = dir.path().join("a.pc2");
    let b = dir.path().join("b.pc2");
    for (out, t) in [(&a, "1"), (&b, "2")] {
        let o = drape(&[
            "simulate",
            s(&scene),
            "--frames",
            "1..10",
            "-o",
            s(out),
            "--threads",
            t,
        ]);
        assert_eq!(code(&o), 0, "stderr: {}", stderr(&o));
    }
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
}

#[test]
fn inspect_json_reports_panels_seams_and_pins() {
    let o = drape(&["inspect", s(&fixture("sheet_seam.gltf")), "--json"]);
    assert_eq!(code(&o), 0, "stderr: {}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let g = &v["garments"][0];
    assert_eq!(g["panels"], 2);
    assert!(g["seam_edges"].as_u64().unwrap() > 0);
    assert_eq!(g["uv_problems"].as_array().unwrap().len(), 0);
    assert!(g["vertices"].as_u64().unwrap() < g["triangles"].as_u64().unwrap());
}

/// Issue 55: a bake run from a script says what it wrote, unless told to be quiet.
#[test]
fn a_finished_bake_names_each_cache_with_its_frames_on_stderr_except_with_none_or_json() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("said.pc2");
    let scene = fixture("sheet_small.gltf");
    let bake = |progress: &[&str]| {
        let mut args = vec![
            "simulate",
            s(&scene),
            "--frames",
            "1..3",
            "-o",
            s(&out),
            "--force",
        ];
        args.extend_from_slice(progress);
        let o = drape(&args);
        assert_eq!(code(&o), 0, "{progress:?}: {}", stderr(&o));
        stderr(&o)
    };
    let said = bake(&[]);
    let line = format!("wrote {} (3 frames, ", s(&out));
    assert!(
        said.lines()
            .any(|l| l.starts_with(&line) && l.ends_with(" s)")),
        "{said}"
    );
    assert!(bake(&["--progress", "none"]).is_empty());
    let json = bake(&["--progress", "json"]);
    assert!(json.lines().all(|l| l.starts_with('{')), "{json}");
}

/// Issue 55: `--version` names the commit the binary was built from.
#[test]
fn version_shows_the_version_and_the_commit_in_parentheses() {
    let o = drape(&["--version"]);
    assert_eq!(code(&o), 0);
    let text = stdout(&o);
    let line = text.trim();
    let rest = line.strip_prefix("drape ").expect("starts with the name");
    let (version, commit) = rest.split_once(' ').expect("version then commit");
    assert_eq!(version, env!("CARGO_PKG_VERSION"));
    let commit = commit.strip_prefix('(').and_then(|c| c.strip_suffix(')'));
    let commit = commit.unwrap_or_else(|| panic!("commit in parentheses: {line}"));
    assert!(
        commit == "unknown" || (commit.len() >= 7 && commit.chars().all(|c| c.is_ascii_hexdigit())),
        "{line}"
    );
}
