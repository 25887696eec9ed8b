//! Batch manifests (`drape batch MANIFEST.json`, docs/reference.md "Batch manifest"): the
//! shots to bake, each a scene, an output, a frame range and further `simulate` options.
//!
//! ```json
//! { "shots": [ {"name": "sh010", "scene": "sh010/scene.usda", "out": "cache/sh010.pc2",
//!               "frames": "1001..1240", "options": ["--material", "denim"]} ] }
//! ```
//! Unknown keys are errors naming the key. `scene` and `out` are relative to the manifest's
//! folder and become absolute here, so that a farm task runs the same files from any
//! working directory. Names are unique, short and safe in file names and shell words;
//! outputs are unique. The flags the batch itself sets for every shot (output, frames,
//! threads, progress, report, `--force`, `--resume`) are refused among the `options`.
use crate::bake::lexical;
use crate::error::{Error, Result};
use serde::Deserialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Longest shot name, in bytes (it names log files and farm tasks).
const NAME_MAX: usize = 100;

/// `simulate` flags the batch sets for every shot, with where the manifest says it instead.
const RESERVED: &[(&str, &str)] = &[
    ("-o", "the shot's \"out\""),
    ("--out", "the shot's \"out\""),
    ("--frames", "the shot's \"frames\""),
    (
        "--threads",
        "`drape batch --jobs`, which shares the cores between shots",
    ),
    (
        "--progress",
        "nothing: the batch reads its shots' JSON progress",
    ),
    (
        "--report",
        "nothing: the batch keeps each shot's report beside its log",
    ),
    ("--force", "`drape batch --force`"),
    ("--resume", "nothing: every shot resumes an unfinished bake"),
];

/// A batch of shots read from a manifest.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    /// The manifest file, absolute.
    pub path: PathBuf,
    /// The shots, in the manifest's order.
    pub shots: Vec<Shot>,
}

/// One shot: one `drape simulate` run.
#[derive(Debug, Clone, PartialEq)]
pub struct Shot {
    /// Unique name: letters, digits, `.`, `_`, `-`; not starting with `.` or `-`.
    pub name: String,
    /// Scene file, absolute.
    pub scene: PathBuf,
    /// Cache path, absolute (`{garment}` and `$F` patterns as `simulate -o` takes them).
    pub out: PathBuf,
    /// Inclusive frame range `A..B`; absent: the scene's own range.
    pub frames: Option<(i32, i32)>,
    /// Further `simulate` flags, passed as given.
    pub options: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    shots: Vec<RawShot>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawShot {
    name: String,
    scene: PathBuf,
    out: PathBuf,
    frames: Option<String>,
    #[serde(default)]
    options: Vec<String>,
}

impl Manifest {
    /// Reads and checks the manifest at `path`.
    pub fn read(path: &Path) -> Result<Manifest> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            Error::input(
                path,
                None,
                format!("cannot read the batch manifest ({e}); check the path"),
            )
        })?;
        let path = absolute(path)?;
        Manifest::parse(&text, &path)
    }

    /// Checks the manifest `text` of the file at `path` (absolute; its folder anchors the
    /// relative paths).
    pub fn parse(text: &str, path: &Path) -> Result<Manifest> {
        let raw: RawManifest = serde_json::from_str(text).map_err(|e| {
            Error::input(
                path,
                None,
                format!(
                    "{e}; a manifest is {{\"shots\": [{{\"name\", \"scene\", \"out\", \
                     \"frames\", \"options\"}}]}} (docs/reference.md, \"Batch manifest\")"
                ),
            )
        })?;
        if raw.shots.is_empty() {
            return Err(Error::input(
                path,
                None,
                "\"shots\" is empty; list at least one shot",
            ));
        }
        let dir = path.parent().unwrap_or(Path::new("/"));
        let mut names: HashMap<String, usize> = HashMap::new();
        let mut outs: HashMap<PathBuf, String> = HashMap::new();
        let mut shots = Vec::with_capacity(raw.shots.len());
        for (i, s) in raw.shots.into_iter().enumerate() {
            let shot = check_shot(s, i, dir, path)?;
            if let Some(first) = names.insert(shot.name.clone(), i) {
                return Err(Error::input(
                    path,
                    Some(&shot.name),
                    format!(
                        "shots {} and {} are both named '{}'; give each shot its own name",
                        first + 1,
                        i + 1,
                        shot.name
                    ),
                ));
            }
            if let Some(other) = outs.insert(shot.out.clone(), shot.name.clone()) {
                return Err(Error::input(
                    path,
                    Some(&shot.name),
                    format!(
                        "shots '{other}' and '{}' both write {}; give each shot its own \"out\"",
                        shot.name,
                        shot.out.display()
                    ),
                ));
            }
            shots.push(shot);
        }
        Ok(Manifest {
            path: path.to_path_buf(),
            shots,
        })
    }

    /// The manifest's file stem (`shots` for `shots.json`), which names the batch.
    pub fn stem(&self) -> String {
        (self.path.file_stem())
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "batch".into())
    }

    /// The folder the manifest is in.
    pub fn dir(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new("/"))
    }
}

fn check_shot(s: RawShot, i: usize, dir: &Path, path: &Path) -> Result<Shot> {
    let at = |message: String| Error::input(path, Some(&s.name), message);
    check_name(&s.name).map_err(|m| {
        Error::input(
            path,
            None,
            format!("shot {}: name '{}' {m}", i + 1, s.name.escape_debug()),
        )
    })?;
    if s.scene.as_os_str().is_empty() {
        return Err(at("\"scene\" is empty; give the scene file".into()));
    }
    if s.out.as_os_str().is_empty() {
        return Err(at(
            "\"out\" is empty; give the cache path, such as cache/sh010.pc2".into(),
        ));
    }
    let frames = match &s.frames {
        Some(f) => Some(frame_range(f).ok_or_else(|| {
            at(format!(
                "\"frames\" '{f}' is not a range like \"1001..1240\" (inclusive, start ≤ end)"
            ))
        })?),
        None => None,
    };
    for o in &s.options {
        let flag = o.split_once('=').map_or(o.as_str(), |(f, _)| f);
        if let Some((f, instead)) = RESERVED.iter().find(|(f, _)| *f == flag) {
            return Err(at(format!(
                "\"options\" holds {f}, which the batch sets for every shot; use {instead}"
            )));
        }
    }
    Ok(Shot {
        scene: lexical(&dir.join(&s.scene)),
        out: lexical(&dir.join(&s.out)),
        frames,
        options: s.options,
        name: s.name,
    })
}

/// Why `name` cannot name a shot, if it cannot.
fn check_name(name: &str) -> std::result::Result<(), String> {
    let safe = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    if name.is_empty() {
        Err("is empty; give every shot a name".into())
    } else if name.len() > NAME_MAX {
        Err(format!("is longer than {NAME_MAX} bytes; shorten it"))
    } else if !name.chars().all(safe) || name.starts_with(['.', '-']) {
        Err(
            "may hold only letters, digits, '.', '_' and '-', and not start with '.' or '-' \
             (it names log files and farm tasks); rename the shot"
                .into(),
        )
    } else {
        Ok(())
    }
}

/// `A..B` with integers A ≤ B.
fn frame_range(text: &str) -> Option<(i32, i32)> {
    let (a, b) = text.split_once("..")?;
    let (a, b) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
    (a <= b).then_some((a, b))
}

/// `path` made absolute against the working directory, without resolving links.
fn absolute(path: &Path) -> Result<PathBuf> {
    std::path::absolute(path)
        .map(|p| lexical(&p))
        .map_err(|e| Error::input(path, None, format!("cannot make the path absolute ({e})")))
}
