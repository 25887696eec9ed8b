//! Build script: records the commit the binary is built from, for `drape --version`
//! (`drape 0.1.0 (3c18a31)`).
//!
//! `DRAPE_COMMIT` is the short hash of `git rev-parse --short HEAD`, or `unknown` outside
//! a git checkout (a crates.io package, a source archive) or without git. The script is
//! rerun only when HEAD moves: `.git/HEAD` changes on a checkout, and the file of the
//! branch it points to (or `packed-refs`) on a commit; other builds reuse its result.
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let commit = Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=DRAPE_COMMIT={commit}");
    println!("cargo:rerun-if-changed=build.rs");
    if let Some(git) = git_dir() {
        watch_head(&git);
    }
}

/// The git directory of the checkout: `.git`, or where a worktree's `.git` file points.
fn git_dir() -> Option<PathBuf> {
    let out = Command::new("git")
        .args(["rev-parse", "--git-dir"])
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let dir = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    Some(if dir.is_absolute() {
        dir
    } else {
        Path::new(&std::env::var("CARGO_MANIFEST_DIR").ok()?).join(dir)
    })
}

/// Reruns the script when HEAD, the ref it names or the packed refs change.
fn watch_head(git: &Path) {
    let head = git.join("HEAD");
    println!("cargo:rerun-if-changed={}", head.display());
    let Ok(text) = std::fs::read_to_string(&head) else {
        return;
    };
    if let Some(name) = text.trim().strip_prefix("ref: ") {
        // A worktree keeps its HEAD in its own directory, its refs in the common one.
        let common = std::fs::read_to_string(git.join("commondir"))
            .map(|c| git.join(c.trim()))
            .unwrap_or_else(|_| git.to_path_buf());
        for dir in [git, common.as_path()] {
            let file = dir.join(name);
            if file.exists() {
                println!("cargo:rerun-if-changed={}", file.display());
            }
        }
        let packed = common.join("packed-refs");
        if packed.exists() {
            println!("cargo:rerun-if-changed={}", packed.display());
        }
    }
}
