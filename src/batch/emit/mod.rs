//! Job descriptions for render-farm schedulers (`drape batch --emit ENGINE DIR`): one task
//! per shot, each task one `drape simulate ... --resume` with absolute paths, so that a
//! task that is retried, requeued or pre-empted continues its shot (docs/reference.md,
//! "Render farms").
//!
//! | engine | file in DIR | one task per shot as |
//! |---|---|---|
//! | [`openjd`] | `<stem>.openjd.json` | the task parameter `Shot` of the step `Bake` |
//! | [`slurm`] | `<stem>.sbatch` (and `logs/`) | the job array index |
//! | [`opencue`] | `<stem>_opencue.py` | a one-frame Shell layer named after the shot |
//!
//! `<stem>` is the manifest's file stem. The binary in the tasks is the one that emitted
//! them; the farm's nodes must see it, the scenes and the outputs at the same paths. The
//! outputs' folders are created when the job is written.
pub mod opencue;
pub mod openjd;
pub mod slurm;

use super::manifest::{Manifest, Shot};
use super::plan::{continue_flags, create_output_dirs, farm_progress, simulate_args};
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// A scheduler `--emit` writes for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// Open Job Description (AWS Deadline Cloud, `openjd run`): a job template.
    OpenJd,
    /// Slurm: a job array script for `sbatch`.
    Slurm,
    /// OpenCue: a pyoutline submission script.
    OpenCue,
}

/// Writes the job of `manifest` for `engine` into `dir` (created if missing), the tasks
/// running `binary`; returns the files written.
pub fn write(
    engine: Engine,
    manifest: &Manifest,
    binary: &Path,
    dir: &Path,
) -> Result<Vec<PathBuf>> {
    let stem = job_name(manifest);
    let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| Error::Output { path, source }
    };
    std::fs::create_dir_all(&dir).map_err(io(&dir))?;
    create_output_dirs(manifest)?;
    let (file, text, executable) = match engine {
        Engine::OpenJd => (
            dir.join(format!("{stem}.openjd.json")),
            openjd::template(manifest, binary)?,
            false,
        ),
        Engine::Slurm => {
            let logs = dir.join("logs");
            std::fs::create_dir_all(&logs).map_err(io(&logs))?;
            (
                dir.join(format!("{stem}.sbatch")),
                slurm::script(manifest, binary, &logs)?,
                true,
            )
        }
        Engine::OpenCue => (
            dir.join(format!("{stem}_opencue.py")),
            opencue::script(manifest, binary)?,
            true,
        ),
    };
    std::fs::write(&file, text).map_err(io(&file))?;
    #[cfg(unix)]
    if executable {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755));
    }
    #[cfg(not(unix))]
    let _ = executable;
    Ok(vec![file])
}

/// The job's name: the manifest's stem with every character other than letters, digits,
/// `.`, `_` and `-` replaced by `_`.
pub fn job_name(manifest: &Manifest) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    let s: String = (manifest.stem().chars())
        .map(|c| if safe(c) { c } else { '_' })
        .collect();
    s.trim_start_matches(['.', '-']).to_string()
}

/// The command line of `shot`'s farm task: the binary, then `simulate ...` with the
/// continue and progress flags; every word as UTF-8 text.
pub fn task_command(shot: &Shot, binary: &Path) -> Result<Vec<String>> {
    let flags: Vec<&str> = (continue_flags(false).iter())
        .chain(farm_progress())
        .copied()
        .collect();
    std::iter::once(binary.as_os_str().to_os_string())
        .chain(simulate_args(shot, &flags))
        .map(|w| {
            w.into_string().map_err(|w| {
                Error::usage(format!(
                    "shot '{}': the path {} is not UTF-8, which a job description cannot \
                     hold; rename it",
                    shot.name,
                    Path::new(&w).display()
                ))
            })
        })
        .collect()
}

/// `word` quoted for a POSIX shell: as is when it holds only safe characters, else in
/// single quotes (a `'` inside as `'\''`).
pub fn sh_quote(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_-+=./:,@%".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// A command line as one shell line.
pub fn sh_line(words: &[String]) -> String {
    words
        .iter()
        .map(|w| sh_quote(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The `case` statement mapping a shell value `selector` (a task parameter or array
/// index) to each shot's command, given by `key(index, shot)`; `extra` is appended to
/// every command line as is (already shell syntax).
fn case_table(
    manifest: &Manifest,
    binary: &Path,
    selector: &str,
    key: impl Fn(usize, &Shot) -> String,
    extra: &str,
) -> Result<String> {
    let mut s = format!("case \"{selector}\" in\n");
    for (i, shot) in manifest.shots.iter().enumerate() {
        let line = sh_line(&task_command(shot, binary)?);
        s.push_str(&format!(
            "    {})\n        exec {line}{extra} ;;\n",
            key(i, shot)
        ));
    }
    s.push_str(&format!(
        "    *)\n        echo \"no shot {selector} in this batch\" >&2\n        exit 2 ;;\nesac\n"
    ));
    Ok(s)
}
