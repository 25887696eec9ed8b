//! stdout and stderr that cannot be written, a report path that cannot be written, the
//! file size limit: each ends with a clear exit code (2, or 3 for no room), never a panic
//! (exit 101) or a signal's death, and `--progress json` stays one JSON object per line.
use crate::common::*;
use std::process::{Command, Stdio};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_drape"));
    c.stdin(Stdio::null());
    c
}

fn no_panic(o: &std::process::Output) {
    assert!(!stderr(o).contains("panicked"), "{}", stderr(o));
    assert_ne!(code(o), 101);
}

fn dev_full() -> std::fs::File {
    std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap()
}

#[test]
fn command_output_to_a_full_disk_or_a_closed_pipe_is_an_exit_code() {
    let scene = fixture("sheet_small.gltf");
    let o = bin()
        .args(["inspect", "--json", s(&scene)])
        .stdout(dev_full())
        .output()
        .unwrap();
    no_panic(&o);
    assert_eq!(code(&o), 3, "ENOSPC on stdout: {}", stderr(&o));
    assert!(stderr(&o).contains("<stdout>"), "{}", stderr(&o));
    // A reader that went away: EPIPE (SIGPIPE is ignored).
    let mut child = bin()
        .args(["inspect", s(&scene)])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    no_panic(&o);
    assert!([0, 2].contains(&code(&o)), "{}", stderr(&o));
}

#[test]
fn an_error_message_to_a_full_stderr_still_exits_with_its_code() {
    let o = bin()
        .args(["simulate", "/nonexistent/scene.gltf"])
        .stderr(dev_full())
        .output()
        .unwrap();
    assert_eq!(code(&o), 2);
}

#[test]
fn progress_to_a_full_or_closed_stderr_does_not_stop_the_bake() {
    let dir = tempfile::tempdir().unwrap();
    let scene = fixture("sheet_small.gltf");
    for mode in ["bar", "json", "auto"] {
        let out = dir.path().join(format!("{mode}.pc2"));
        let o = bin()
            .args(["simulate", s(&scene), "--frames", "1..4", "-o", s(&out)])
            .args(["--progress", mode])
            .stderr(dev_full())
            .output()
            .unwrap();
        assert_eq!(code(&o), 0, "{mode}");
        assert_eq!(drape::cache::pc2::read(&out).unwrap().2.len(), 4, "{mode}");
        let out = dir.path().join(format!("{mode}-pipe.pc2"));
        let mut child = bin()
            .args(["simulate", s(&scene), "--frames", "1..4", "-o", s(&out)])
            .args(["--progress", mode])
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stderr.take());
        assert_eq!(child.wait().unwrap().code(), Some(0), "{mode}");
        assert!(out.exists(), "{mode}");
    }
}

#[test]
fn an_unwritable_report_path_is_refused_before_the_bake() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c.pc2");
    for report in [dir.path().join("missing/r.json"), dir.path().to_path_buf()] {
        let o = drape(&[
            "simulate",
            s(&fixture("sheet_small.gltf")),
            "-o",
            s(&out),
            "--progress",
            "json",
            "--report",
            s(&report),
        ]);
        assert_eq!(code(&o), 2, "{}", stderr(&o));
        for line in stderr(&o).lines() {
            let e: serde_json::Value = serde_json::from_str(line).unwrap();
            assert_ne!(e["event"], "frame");
        }
        assert!(stderr(&o).contains("--report"), "{}", stderr(&o));
        assert!(!out.exists() && !dir.path().join("c.pc2.partial").exists());
    }
}

#[test]
fn the_file_size_limit_ends_like_a_full_disk_with_exit_3_and_a_valid_partial() {
    // No `trap '' XFSZ` here: drape ignores SIGXFSZ itself, so the write fails with
    // EFBIG instead of the signal killing it (exit 153).
    let dir = tempfile::tempdir().unwrap();
    let scene = fixture("sheet_small.gltf");
    for (ext, kib) in [("pc2", 8), ("usda", 48), ("mdd", 4)] {
        let out = dir.path().join(format!("limit.{ext}"));
        let script = format!(
            "ulimit -f {kib}; exec '{}' simulate '{}' --frames 1..40 -o '{}' --progress json",
            env!("CARGO_BIN_EXE_drape"),
            s(&scene),
            s(&out)
        );
        let o = Command::new("bash").args(["-c", &script]).output().unwrap();
        assert_eq!(code(&o), 3, "{ext}: {}", stderr(&o));
        let mut frames = 0;
        for line in stderr(&o).lines() {
            let e: serde_json::Value = serde_json::from_str(line)
                .unwrap_or_else(|_| panic!("{ext}: not one JSON object: {line}"));
            frames += usize::from(e["event"] == "frame");
        }
        assert!(frames < 40, "{ext}");
        let kept = crate::support::partial_frames(&out).unwrap();
        assert_eq!(kept, frames, "{ext}: the partial keeps the reported frames");
    }
}
