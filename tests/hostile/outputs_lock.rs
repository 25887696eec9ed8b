//! One writer per output: a second bake to the same `-o` stops at once naming the first;
//! an earlier bake's partial cache is never truncated without `--force`, and a symbolic
//! link there is never written through.
use crate::common::*;
use crate::support::*;

#[test]
fn a_second_bake_to_the_same_output_stops_at_once_naming_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let scene = fixture("skirt_on_character.gltf");
    for ext in FORMATS {
        let out = dir.path().join(format!("same.{ext}"));
        let mut first = spawn_bake(&scene, "1..400", &out, &[]);
        let _events = wait_frames(&mut first, 2);
        let o = drape(&["simulate", s(&scene), "--frames", "1..400", "-o", s(&out)]);
        let pid = first.id().to_string();
        kill(&mut first);
        assert_eq!(code(&o), 2, "{ext}: {}", stderr(&o));
        let m = stderr(&o);
        assert!(
            m.contains("another drape bake") && m.contains(&pid),
            "{ext}: {m}"
        );
        // The first bake's partial cache is intact: every frame it holds reads back.
        let frames = partial_frames(&out).unwrap_or_else(|e| panic!("{ext}: {e}"));
        assert!(frames >= 2, "{ext}: {frames} frames kept");
        // With --force too: the lock is not a stale partial.
        let mut first = spawn_bake(&scene, "1..400", &out, &["--force"]);
        let _events = wait_frames(&mut first, 1);
        let o = drape(&["simulate", s(&scene), "-o", s(&out), "--force"]);
        kill(&mut first);
        assert_eq!(code(&o), 2, "{ext} --force: {}", stderr(&o));
        assert!(stderr(&o).contains("another drape bake"), "{ext}");
    }
}

#[test]
fn an_earlier_partial_cache_is_kept_unless_force() {
    let dir = tempfile::tempdir().unwrap();
    let scene = fixture("sheet_small.gltf");
    for ext in ["pc2", "mdd", "usda"] {
        let out = dir.path().join(format!("kept.{ext}"));
        let p = partial(&out);
        std::fs::write(&p, b"frames of an interrupted bake").unwrap();
        let o = bake_three(&scene, &out, &[]);
        assert_eq!(code(&o), 2, "{ext}: {}", stderr(&o));
        assert!(stderr(&o).contains("--force"), "{ext}: {}", stderr(&o));
        assert_eq!(std::fs::read(&p).unwrap(), b"frames of an interrupted bake");
        let o = bake_three(&scene, &out, &["--force"]);
        assert_eq!(code(&o), 0, "{ext}: {}", stderr(&o));
        assert!(out.exists() && !p.exists(), "{ext}");
    }
    let seq = dir.path().join("kept.$F4.geo");
    std::fs::write(partial(&seq), b"").unwrap();
    let o = bake_three(&scene, &seq, &[]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
}

#[test]
fn a_symbolic_link_at_the_partial_path_is_never_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let scene = fixture("sheet_small.gltf");
    let target = dir.path().join("precious.txt");
    for ext in ["pc2", "mdd", "usda", "$F4.geo"] {
        std::fs::write(&target, b"keep me").unwrap();
        let out = dir.path().join(format!("link.{ext}"));
        let p = partial(&out);
        let _ = std::fs::remove_file(&p);
        std::os::unix::fs::symlink(&target, &p).unwrap();
        let o = bake_three(&scene, &out, &[]);
        assert_eq!(code(&o), 2, "{ext}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("symbolic link"),
            "{ext}: {}",
            stderr(&o)
        );
        let o = bake_three(&scene, &out, &["--force"]);
        assert_eq!(code(&o), 0, "{ext}: {}", stderr(&o));
        assert_eq!(std::fs::read(&target).unwrap(), b"keep me", "{ext}");
        assert!(
            std::fs::symlink_metadata(&p).is_err(),
            "{ext}: no partial left"
        );
    }
}
