//! Shared helpers of the integration tests: run the real binary in a temp dir.
#![allow(dead_code)]
pub mod tangle;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

/// The repository's fixture `name`.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
}

/// `drape ARGS...`, run to completion with no stdin.
pub fn drape(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_drape"))
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("drape binary runs")
}

/// Exit code, or -1 if killed by a signal.
pub fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

/// Stderr as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Stdout as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A path string.
pub fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// `drape simulate scene --frames frames -o out --report report --progress none extra...`:
/// the exit code, stderr and the run report (which every run that got to the bake writes).
#[allow(dead_code)] // not every test binary that includes `common` bakes with a report
pub fn simulate_with_report(
    scene: &Path,
    frames: &str,
    out: &Path,
    report: &Path,
    extra: &[&str],
) -> (i32, String, serde_json::Value) {
    let mut args = vec!["simulate", s(scene), "--frames", frames, "-o", s(out)];
    args.extend(["--report", s(report), "--progress", "none"]);
    args.extend(extra);
    let o = drape(&args);
    let text = std::fs::read_to_string(report).expect("the run report is written");
    (
        code(&o),
        stderr(&o),
        serde_json::from_str(&text).expect("the report is JSON"),
    )
}

/// The document and buffers of a glTF file, read with the `gltf` crate (embedded base64
/// buffers, a `.glb` chunk or files beside it).
fn gltf_import(path: &Path) -> (gltf::Document, Vec<Vec<u8>>) {
    let file = gltf::Gltf::open(path).expect("fixture is valid glTF");
    let dir = path.parent().expect("a file in a folder");
    let buffers = file
        .buffers()
        .map(|b| match b.source() {
            gltf::buffer::Source::Bin => file.blob.clone().expect("the .glb has its chunk"),
            gltf::buffer::Source::Uri(uri) => match uri.split_once(";base64,") {
                Some((_, data)) => base64::decode(data).expect("base64 buffer"),
                None => std::fs::read(dir.join(uri)).expect("buffer file"),
            },
        })
        .collect();
    (file.document, buffers)
}

/// Positions of every vertex of the glTF mesh node named `node`, in file order (all
/// primitives concatenated), in object-local space — read with the `gltf` crate directly,
/// independent of drape's importer.
pub fn gltf_positions(path: &Path, node: &str) -> Vec<[f32; 3]> {
    let (doc, buffers) = gltf_import(path);
    let n = doc
        .nodes()
        .find(|n| n.name() == Some(node))
        .expect("node exists");
    let mesh = n.mesh().expect("node has a mesh");
    let mut out = Vec::new();
    for prim in mesh.primitives() {
        let reader = prim.reader(|b| Some(&buffers[b.index()]));
        out.extend(reader.read_positions().expect("positions"));
    }
    out
}

/// Names of the glTF nodes that carry meshes.
pub fn gltf_mesh_nodes(path: &Path) -> Vec<String> {
    let (doc, _) = gltf_import(path);
    doc.nodes()
        .filter(|n| n.mesh().is_some())
        .filter_map(|n| n.name().map(str::to_string))
        .collect()
}

/// `drape simulate scene --frames frames -o out --progress json extra...`, started.
pub fn spawn_bake(scene: &Path, frames: &str, out: &Path, extra: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_drape"))
        .args(["simulate", s(scene), "--frames", frames, "-o", s(out)])
        .args(["--progress", "json"])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("drape runs")
}

/// Reads `child`'s JSON progress until `frames` frame events have come; returns the
/// stderr reader to keep the pipe open.
pub fn wait_frames(child: &mut Child, frames: usize) -> BufReader<std::process::ChildStderr> {
    let mut r = BufReader::new(child.stderr.take().expect("stderr piped"));
    let mut seen = 0;
    let mut line = String::new();
    while seen < frames {
        line.clear();
        if r.read_line(&mut line).unwrap() == 0 {
            panic!("the bake ended after {seen} frames");
        }
        if line.contains("\"event\":\"frame\"") {
            seen += 1;
        }
    }
    r
}
