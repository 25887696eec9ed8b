//! Object names are not paths: a garment named `../../x` or `/tmp/x` writes its default
//! cache, or its `{garment}` cache, beside the scene under a sanitised name; a scene
//! file's `out` stays inside the scene's folder; `-o ''` is an error.
use crate::common::*;
use crate::support::*;
use std::path::Path;

/// `sheet_small.gltf` with its garment renamed `name`, written to `dir/scene/sheet.gltf`.
fn renamed_sheet(dir: &Path, name: &str) -> std::path::PathBuf {
    let text = std::fs::read_to_string(fixture("sheet_small.gltf")).unwrap();
    let quoted = serde_json::to_string(name).unwrap();
    let text = text.replace("\"name\":\"SheetSmall\"", &format!("\"name\":{quoted}"));
    let scene_dir = dir.join("a/b/scene");
    std::fs::create_dir_all(&scene_dir).unwrap();
    let scene = scene_dir.join("sheet.gltf");
    std::fs::write(&scene, text).unwrap();
    scene
}

/// Every file under `dir`, relative to it.
fn files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else {
                out.push(e.path().strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    out.sort();
    out
}

#[test]
fn object_names_never_leave_the_folder_they_are_written_to() {
    for (name, file) in [
        ("../../x", "___.._x.pc2"),
        ("/tmp/drape-hostile-x", "_tmp_drape-hostile-x.pc2"),
        ("..", "__.pc2"),
        (".hidden", "_hidden.pc2"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let scene = renamed_sheet(dir.path(), name);
        let o = simulate(&scene, "1..2", &[]);
        assert_eq!(code(&o), 0, "{name}: {}", stderr(&o));
        let pattern = dir.path().join("a/b/scene/{garment}.mdd");
        let o = simulate(&scene, "1..2", &["-o", s(&pattern)]);
        assert_eq!(code(&o), 0, "{name}: {}", stderr(&o));
        let mdd = file.replace(".pc2", ".mdd");
        let want = vec![
            format!("a/b/scene/{file}"),
            format!("a/b/scene/{mdd}"),
            "a/b/scene/sheet.gltf".to_string(),
        ];
        let mut want = want;
        want.sort();
        assert_eq!(files(dir.path()), want, "{name}");
    }
    assert!(!Path::new("/tmp/drape-hostile-x.pc2").exists());
}

#[test]
fn a_scene_files_out_stays_inside_the_scenes_folder() {
    let dir = tempfile::tempdir().unwrap();
    let scene = renamed_sheet(dir.path(), "Sheet");
    let scene_dir = scene.parent().unwrap();
    for (out, ok) in [
        ("cache/sheet.pc2", true),
        ("../escape.pc2", false),
        ("cache/../../escape.pc2", false),
        ("/tmp/drape-hostile-abs.pc2", false),
    ] {
        if ok {
            std::fs::create_dir_all(scene_dir.join("cache")).unwrap();
        }
        let json = serde_json::json!({"garments": [{"file": "sheet.gltf", "out": out}]});
        let file = scene_dir.join("scene.json");
        std::fs::write(&file, json.to_string()).unwrap();
        let o = drape(&[
            "simulate",
            s(&file),
            "--frames",
            "1..2",
            "--progress",
            "none",
            "--force",
        ]);
        if ok {
            assert_eq!(code(&o), 0, "{out}: {}", stderr(&o));
        } else {
            assert_eq!(code(&o), 2, "{out}: {}", stderr(&o));
            assert!(
                stderr(&o).contains("leaves the scene's folder"),
                "{out}: {}",
                stderr(&o)
            );
        }
    }
    assert!(!dir.path().join("a/b/escape.pc2").exists());
    assert!(!Path::new("/tmp/drape-hostile-abs.pc2").exists());
    // The command line may point anywhere.
    let abs = dir.path().join("elsewhere.pc2");
    let o = drape(&[
        "simulate",
        s(&scene_dir.join("scene.json")),
        "--frames",
        "1..2",
        "--progress",
        "none",
        "-o",
        s(&abs),
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(abs.exists());
}

#[test]
fn an_empty_output_path_is_a_usage_error() {
    for flag in ["-o", "--out"] {
        let o = drape(&[
            "simulate",
            s(&fixture("sheet_small.gltf")),
            flag,
            "",
            "--progress",
            "none",
        ]);
        assert_eq!(code(&o), 2, "{}", stderr(&o));
        assert!(stderr(&o).contains("--out"), "{}", stderr(&o));
    }
    let o = drape(&[
        "simulate",
        s(&fixture("sheet_small.gltf")),
        "--out=",
        "--progress",
        "none",
    ]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
}
