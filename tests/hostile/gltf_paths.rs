//! glTF buffer and image URIs stay inside the file's folder unless `--allow-paths` widens
//! it; inputs and buffers must be regular files (a FIFO is refused, never read).
use crate::common::{code, drape, s, stderr};
use crate::gltf_files::Doc;
use serde_json::json;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `drape inspect <path> [extra...]`: exit code and stderr.
fn inspect(path: &Path, extra: &[&str]) -> (i32, String) {
    let mut args = vec!["inspect", s(path)];
    args.extend(extra);
    let out = drape(&args);
    (code(&out), stderr(&out))
}

#[test]
fn a_buffer_uri_outside_the_folder_is_refused_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("scene");
    std::fs::create_dir(&scene).unwrap();
    // `..` escape (the buffer is written beside `scene/`): refused; allowed with
    // --allow-paths on the parent folder.
    let path = Doc::grid().write(&scene, "up.gltf", Some("../up.bin"));
    let (rc, err) = inspect(&path, &[]);
    assert_eq!(rc, 2, "{err}");
    assert!(
        err.contains("'../up.bin'") && err.contains("--allow-paths"),
        "{err}"
    );
    let (rc, err) = inspect(&path, &["--allow-paths", s(dir.path())]);
    assert_eq!(rc, 0, "{err}");
    // An absolute path: refused even though the file exists.
    let abs = dir.path().join("abs.bin");
    std::fs::write(&abs, Doc::grid().bin).unwrap();
    let path = Doc::grid().write(&scene, "abs.gltf", Some(s(&abs)));
    let (rc, err) = inspect(&path, &[]);
    assert_eq!(rc, 2, "{err}");
    assert!(err.contains(&format!("'{}'", abs.display())), "{err}");
    // /etc/passwd, the case of the issue.
    let path = Doc::grid().write(&scene, "passwd.gltf", Some("/etc/passwd"));
    let (rc, err) = inspect(&path, &[]);
    assert_eq!(rc, 2, "{err}");
    assert!(
        err.contains("'/etc/passwd'") && err.contains("outside"),
        "{err}"
    );
}

#[test]
fn an_image_uri_outside_the_folder_is_refused_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let mut doc = Doc::grid();
    doc.json["images"] = json!([{"uri": "../../textures/cloth.png"}]);
    let path = doc.write(dir.path(), "img.gltf", None);
    let (rc, err) = inspect(&path, &[]);
    assert_eq!(rc, 2, "{err}");
    assert!(
        err.contains("image 0") && err.contains("'../../textures/cloth.png'"),
        "{err}"
    );
}

#[test]
fn an_image_with_neither_uri_nor_view_is_no_panic() {
    // The glTF Validator's `image/empty_object.gltf` case: drape reads no images, so the
    // geometry still reads.
    let dir = tempfile::tempdir().unwrap();
    let mut doc = Doc::grid();
    doc.json["images"] = json!([{}, {"bufferView": 0}]);
    let path = doc.write(dir.path(), "img.gltf", None);
    let (rc, err) = inspect(&path, &[]);
    assert!(rc == 0 || rc == 2, "exit {rc}: {err}");
    assert!(!err.contains("internal error"), "{err}");
}

/// Runs `drape inspect path`, killing it if it has not ended within 30 s.
#[cfg(unix)]
fn inspect_bounded(path: &Path) -> (i32, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_drape"))
        .args(["inspect", s(path)])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
            return (status.code().unwrap_or(-1), err);
        }
        if start.elapsed() > Duration::from_secs(30) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("drape inspect {} blocked", path.display());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[cfg(unix)]
fn mkfifo(path: &Path) {
    let ok = Command::new("mkfifo").arg(path).status().unwrap().success();
    assert!(ok, "mkfifo {}", path.display());
}

#[cfg(unix)]
#[test]
fn a_fifo_as_buffer_or_input_is_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let doc = Doc::grid();
    let path = doc.write(dir.path(), "fifo.gltf", Some("pipe.bin"));
    std::fs::remove_file(dir.path().join("pipe.bin")).unwrap();
    mkfifo(&dir.path().join("pipe.bin"));
    let (rc, err) = inspect_bounded(&path);
    assert_eq!(rc, 2, "{err}");
    assert!(err.contains("not a regular file"), "{err}");
    let input = dir.path().join("scene.gltf");
    mkfifo(&input);
    let (rc, err) = inspect_bounded(&input);
    assert_eq!(rc, 2, "{err}");
    assert!(err.contains("not a regular file"), "{err}");
}
