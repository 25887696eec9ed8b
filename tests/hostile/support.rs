//! Helpers of the hostile suite: bakes started in the background, the partial caches read
//! back by each format's reader.
#![allow(dead_code)]
use crate::common::*;
use drape::cache::{mdd, pc2};

use std::path::{Path, PathBuf};
use std::process::Child;

/// The four cache formats, as `-o` suffixes.
pub const FORMATS: [&str; 4] = ["pc2", "mdd", "usda", "$F4.geo"];

/// `drape simulate scene --frames frames --progress none extra...`, run to its end.
pub fn simulate(scene: &Path, frames: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "simulate",
        s(scene),
        "--frames",
        frames,
        "--progress",
        "none",
    ];
    args.extend(extra);
    drape(&args)
}

/// `drape simulate scene --frames 1..3 -o out extra...`, run to its end.
pub fn bake_three(scene: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["-o", s(out)];
    args.extend(extra);
    simulate(scene, "1..3", &args)
}

/// SIGKILL.
pub fn kill(child: &mut Child) {
    child.kill().unwrap();
    child.wait().unwrap();
}

/// The partial path of `out` (a `.geo` pattern: its claim file).
pub fn partial(out: &Path) -> PathBuf {
    let mut s = out.as_os_str().to_owned();
    s.push(".partial");
    PathBuf::from(s)
}

/// Frames a partial cache holds, read by its format's reader; an error if it is not a
/// valid cache. USD: the Mesh's points samples as drape's own USD reader (openusd) reads
/// them, the file copied to a `.usda` name first; `.geo`: every `<frame>.geo.partial` of
/// the pattern parsed as JSON.
pub fn partial_frames(out: &Path) -> Result<usize, String> {
    let name = out.file_name().unwrap().to_str().unwrap();
    let p = partial(out);
    if name.ends_with(".pc2") {
        return pc2::read(&p).map(|c| c.2.len()).map_err(|e| e.to_string());
    }
    if name.ends_with(".mdd") {
        return mdd::read(&p).map(|c| c.1.len()).map_err(|e| e.to_string());
    }
    if name.ends_with(".usda") {
        return usd_frames(&p);
    }
    let prefix = name.split("$F4").next().unwrap();
    let mut n = 0;
    for e in std::fs::read_dir(out.parent().unwrap()).unwrap().flatten() {
        let f = e.file_name().to_str().unwrap().to_string();
        // Frame files, not the sequence's claim file (`name.$F4.geo.partial`).
        if f.starts_with(prefix) && f.ends_with(".geo.partial") && !f.contains('$') {
            let text = std::fs::read(e.path()).unwrap();
            serde_json::from_slice::<serde_json::Value>(&text)
                .map_err(|err| format!("{f}: {err}"))?;
            n += 1;
        }
    }
    Ok(n)
}

/// Time samples of the one Mesh of a `.usda` text, through `drape inspect --json` (the
/// mesh is a body there: its `frames` are its first and last sample); 0 without samples,
/// an error if drape cannot read the file.
pub fn usd_frames(path: &Path) -> Result<usize, String> {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("partial.usda");
    std::fs::copy(path, &copy).unwrap();
    let o = drape(&["inspect", "--json", s(&copy)]);
    if code(&o) != 0 {
        return Err(stderr(&o));
    }
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).map_err(|e| e.to_string())?;
    let body = &v["bodies"][0];
    Ok(match body["frames"].as_array() {
        Some(f) => (f[1].as_i64().unwrap() - f[0].as_i64().unwrap() + 1) as usize,
        None => usize::from(body["vertices"].as_u64().unwrap_or(0) > 0),
    })
}
