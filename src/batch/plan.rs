//! What each shot runs: the `drape simulate` command line of a shot, the threads each of
//! `--jobs N` concurrent shots gets, where a local batch keeps logs, reports and its
//! summary, and whether a shot is already finished.
//!
//! Every command line ends with the flag that makes a retried run continue
//! ([`continue_flags`]): a farm task that is pre-empted, requeued or retried, or a local
//! batch run again after an interrupt, picks the shot up where it stopped.
use super::manifest::{Manifest, Shot};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The flags that end every shot's command line: `--resume` (an unfinished bake
/// continues from `<out>.checkpoint` and its partial cache, a new one starts), or
/// `--force` when the batch is forced (every shot baked again from its first frame).
pub fn continue_flags(force: bool) -> &'static [&'static str] {
    if force {
        &["--force"]
    } else {
        &["--resume"]
    }
}

/// The progress flags of a farm task: `--progress plain` (`PROGRESS: N%` and
/// `OUTPUT_FILE:` lines that Deadline and Houdini PDG read).
pub fn farm_progress() -> &'static [&'static str] {
    &["--progress", "plain"]
}

/// The arguments after the binary of `shot`'s bake: `simulate SCENE -o OUT [--frames
/// A..B] OPTIONS... FLAGS...`, paths absolute.
pub fn simulate_args(shot: &Shot, flags: &[&str]) -> Vec<OsString> {
    let mut a: Vec<OsString> = vec!["simulate".into(), shot.scene.clone().into()];
    a.push("-o".into());
    a.push(shot.out.clone().into());
    if let Some((first, last)) = shot.frames {
        a.push("--frames".into());
        a.push(format!("{first}..{last}").into());
    }
    a.extend(shot.options.iter().map(OsString::from));
    a.extend(flags.iter().map(OsString::from));
    a
}

/// Worker threads of each of `jobs` shots baked at once on `cores` processors:
/// `max(1, cores / jobs)`, so that the shots share the machine without oversubscribing it.
pub fn threads_per_job(cores: usize, jobs: usize) -> usize {
    (cores / jobs.max(1)).max(1)
}

/// Where a local batch keeps what it writes besides the caches.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    /// Folder of the shots' logs and reports: `<manifest stem>.logs/` beside the manifest.
    pub logs: PathBuf,
    /// The JSON summary: `--summary FILE`, else `<manifest stem>.summary.json` beside the
    /// manifest.
    pub summary: PathBuf,
}

impl Layout {
    /// The layout of `manifest`'s batch, the summary at `summary` if given.
    pub fn new(manifest: &Manifest, summary: Option<&Path>) -> Layout {
        let stem = manifest.stem();
        Layout {
            logs: manifest.dir().join(format!("{stem}.logs")),
            summary: summary.map_or_else(
                || manifest.dir().join(format!("{stem}.summary.json")),
                Path::to_path_buf,
            ),
        }
    }

    /// The shot's log: its `--progress json` lines (stderr) and anything on its stdout.
    pub fn log(&self, shot: &Shot) -> PathBuf {
        self.logs.join(format!("{}.log", shot.name))
    }

    /// The shot's `--report` file.
    pub fn report(&self, shot: &Shot) -> PathBuf {
        self.logs.join(format!("{}.report.json", shot.name))
    }
}

/// True if `shot`'s output is finished: the cache file exists, or, for an output that is
/// a pattern (`{garment}`, a `$F` sequence), the shot's last report says it succeeded and
/// every cache it names exists (a `$F` sequence counts on the report alone).
pub fn finished(shot: &Shot, report: &Path) -> bool {
    let out = shot.out.to_string_lossy();
    if !out.contains("{garment}") && !out.contains("$F") {
        return shot.out.is_file();
    }
    let Some(r) = std::fs::read(report)
        .ok()
        .and_then(|t| serde_json::from_slice::<serde_json::Value>(&t).ok())
    else {
        return false;
    };
    let exists = |p: &serde_json::Value| {
        p.as_str()
            .is_some_and(|p| p.contains("$F") || Path::new(p).is_file())
    };
    r["status"] == "ok"
        && (r["outputs"].as_array()).is_some_and(|o| !o.is_empty() && o.iter().all(exists))
}

/// Creates the folder of every shot's output (a manifest names caches in folders that
/// need not exist yet; `drape simulate` itself refuses a missing folder).
pub fn create_output_dirs(manifest: &Manifest) -> crate::Result<()> {
    for shot in &manifest.shots {
        if let Some(dir) = shot.out.parent() {
            std::fs::create_dir_all(dir).map_err(|source| crate::Error::Output {
                path: dir.to_path_buf(),
                source,
            })?;
        }
    }
    Ok(())
}
