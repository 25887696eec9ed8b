//! Checkpoints and `--resume` (issue 54): a bake killed or stopped at any frame and
//! resumed writes the same bytes as one never stopped, in every format, with body contact
//! and self-contact (the skirt over the walking character); a checkpoint of another
//! scene or option set is refused with exit 2 naming it; `--progress plain` prints the
//! lines render farms read.
mod common;
#[path = "../examples/sheet_on_sphere.rs"]
mod sheet_on_sphere;
use common::*;
use std::path::{Path, PathBuf};

/// Frames of every bake here: long enough for contact and self-contact to build up
/// friction memory, step-size changes and repulsion springs.
const FRAMES: &str = "1..14";

/// `drape simulate SCENE --frames FRAMES -o OUT --progress none EXTRA...` to its end.
fn bake(scene: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    bake_frames(scene, FRAMES, out, extra)
}

/// [`bake`] of the frames `frames`.
fn bake_frames(scene: &Path, frames: &str, out: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["simulate", s(scene), "--frames", frames, "-o", s(out)];
    args.extend(["--progress", "none"]);
    args.extend(extra);
    drape(&args)
}

/// Every file of the finished cache `out` (a `.geo` sequence: each frame file), as bytes.
fn cache_bytes(out: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let name = out.file_name().unwrap().to_str().unwrap();
    let files: Vec<PathBuf> = match name.find("$F4") {
        Some(at) => (1..=14)
            .map(|f| out.with_file_name(format!("{}{f:04}{}", &name[..at], &name[at + 3..])))
            .collect(),
        None => vec![out.to_path_buf()],
    };
    (files.into_iter())
        .map(|f| {
            let b = std::fs::read(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            (f, b)
        })
        .collect()
}

/// `out` with `suffix` appended.
fn with(out: &Path, suffix: &str) -> PathBuf {
    PathBuf::from(format!("{}{suffix}", out.display()))
}

/// Bakes `ext` uninterrupted, then again with `--checkpoint-every every`, killed (SIGKILL)
/// after `at` frames were reported, and resumed: the caches must be identical.
fn killed_and_resumed(ext: &str, integrator: &str, every: &str, at: usize) {
    let dir = tempfile::tempdir().unwrap();
    let scene = fixture("skirt_on_character.gltf");
    kill_and_resume(&scene, FRAMES, dir.path(), ext, integrator, every, at);
}

/// [`killed_and_resumed`] of `scene` over `frames`, the caches in `dir`.
fn kill_and_resume(
    scene: &Path,
    frames: &str,
    dir: &Path,
    ext: &str,
    integrator: &str,
    every: &str,
    at: usize,
) {
    let opts = ["--integrator", integrator];
    let whole = dir.join(format!("whole.{ext}"));
    let o = bake_frames(scene, frames, &whole, &opts);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = dir.join(format!("cut.{ext}"));
    let mut child = spawn_bake(
        scene,
        frames,
        &out,
        &[&opts[..], &["--checkpoint-every", every]].concat(),
    );
    let _events = wait_frames(&mut child, at);
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        with(&out, ".checkpoint").exists(),
        "{ext}: a checkpoint was written"
    );
    let o = bake_frames(scene, frames, &out, &[&opts[..], &["--resume"]].concat());
    assert_eq!(code(&o), 0, "{ext}: {}", stderr(&o));
    assert!(
        stderr(&o).contains("continuing after frame"),
        "{}",
        stderr(&o)
    );
    assert!(!with(&out, ".checkpoint").exists(), "removed on success");
    for ((a, x), (b, y)) in cache_bytes(&whole).iter().zip(cache_bytes(&out)) {
        assert!(
            *x == y,
            "{ext} {integrator}: {} differs from {}",
            b.display(),
            a.display()
        );
    }
}

#[test]
fn a_pc2_bake_killed_and_resumed_is_byte_identical() {
    killed_and_resumed("pc2", "implicit", "1", 6);
}

#[test]
fn an_mdd_bake_killed_and_resumed_is_byte_identical() {
    killed_and_resumed("mdd", "implicit", "3", 8);
}

#[test]
fn a_usd_bake_killed_and_resumed_is_byte_identical() {
    killed_and_resumed("usda", "implicit", "2", 5);
}

#[test]
fn an_alembic_bake_killed_and_resumed_is_byte_identical() {
    killed_and_resumed("abc", "implicit", "2", 6);
}

#[test]
fn a_10000_particle_sheet_on_a_sphere_killed_and_resumed_is_byte_identical() {
    // 100 × 100 particles falling onto the sphere: body contact from the fourth frame.
    let dir = tempfile::tempdir().unwrap();
    let scene = sheet_on_sphere::write_sheet_on_sphere(100, dir.path()).unwrap();
    kill_and_resume(&scene, "1..10", dir.path(), "abc", "implicit", "2", 7);
}

#[test]
fn a_geo_sequence_killed_and_resumed_is_byte_identical() {
    killed_and_resumed("$F4.geo", "implicit", "1", 7);
}

#[test]
fn a_bdf2_bake_killed_and_resumed_is_byte_identical() {
    killed_and_resumed("pc2", "bdf2", "2", 7);
}

#[test]
fn a_projective_bake_killed_and_resumed_is_byte_identical() {
    // Its factor is shared by steps within rounding of the one it was built for.
    killed_and_resumed("pc2", "projective", "1", 6);
}

#[test]
fn an_interrupted_bake_exits_130_and_resumes_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let scene = fixture("skirt_on_character.gltf");
    for ext in ["mdd", "usda", "abc"] {
        let whole = dir.path().join(format!("whole.{ext}"));
        assert_eq!(code(&bake(&scene, &whole, &[])), 0);
        let out = dir.path().join(format!("int.{ext}"));
        // No periodic checkpoint: the one written at the stop is the one resumed from.
        let mut child = spawn_bake(&scene, FRAMES, &out, &["--checkpoint-every", "0"]);
        let _events = wait_frames(&mut child, 4);
        assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
        assert_eq!(child.wait().unwrap().code(), Some(130), "{ext}");
        let o = bake(&scene, &out, &["--resume"]);
        assert_eq!(code(&o), 0, "{ext}: {}", stderr(&o));
        assert_eq!(cache_bytes(&whole)[0].1, cache_bytes(&out)[0].1, "{ext}");
    }
}

#[test]
fn a_checkpoint_of_another_option_or_scene_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let scene = fixture("skirt_on_character.gltf");
    let out = dir.path().join("c.pc2");
    let mut child = spawn_bake(&scene, FRAMES, &out, &["--checkpoint-every", "1"]);
    let _events = wait_frames(&mut child, 3);
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    assert_eq!(child.wait().unwrap().code(), Some(130));
    let partial = std::fs::read(with(&out, ".partial")).unwrap();

    let o = bake(&scene, &out, &["--resume", "--material", "denim"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("--material"), "{}", stderr(&o));
    assert!(stderr(&o).contains("c.pc2.checkpoint"), "{}", stderr(&o));

    // The same garment and body, the body's skeleton 1 mm higher: another scene.
    let other = dir.path().join("other.gltf");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&scene).unwrap()).unwrap();
    let spine = (v["nodes"].as_array_mut().unwrap().iter_mut())
        .find(|n| n["name"] == "Spine")
        .unwrap();
    spine["translation"] = serde_json::json!([0.0, 1.001, 0.0]);
    std::fs::write(&other, v.to_string()).unwrap();
    let o = bake(&other, &out, &["--resume"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("another scene"), "{}", stderr(&o));

    assert_eq!(
        std::fs::read(with(&out, ".partial")).unwrap(),
        partial,
        "a refused resume leaves the partial cache as it was"
    );
}

#[test]
fn resume_without_a_checkpoint_starts_from_the_first_frame_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let scene = fixture("skirt_on_character.gltf");
    let whole = dir.path().join("whole.pc2");
    assert_eq!(code(&bake(&scene, &whole, &[])), 0);
    let out = dir.path().join("r.pc2");
    // A partial cache without a checkpoint, as a kill before the first one leaves.
    std::fs::write(with(&out, ".partial"), b"POINTCACHE2\0").unwrap();
    let o = bake(&scene, &out, &["--resume"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("starting from the first frame"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&whole).unwrap());
    // A finished cache is never replaced by a resume.
    let o = bake(&scene, &out, &["--resume"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&whole).unwrap());
}

#[test]
fn plain_progress_prints_percentages_and_the_absolute_output_files() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.pc2");
    let o = drape(&[
        "simulate",
        s(&fixture("skirt_on_character.gltf")),
        "--frames",
        "1..4",
        "-o",
        s(&out),
        "--progress",
        "plain",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let lines: Vec<String> = stdout(&o).lines().map(str::to_string).collect();
    assert_eq!(
        lines,
        [
            "PROGRESS: 25%".to_string(),
            "PROGRESS: 50%".into(),
            "PROGRESS: 75%".into(),
            "PROGRESS: 100%".into(),
            format!("OUTPUT_FILE:{};", out.display()),
        ]
    );
}
