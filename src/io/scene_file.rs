//! Scene files (`.json`, docs/reference.md "Scene file"): which garments and bodies to take from which
//! files, with per-object settings, the frame range, solver and keyframe settings.
//!
//! ```json
//! { "frames": {"start": 1, "end": 120, "fps": 24},
//!   "garments": [{"file": "shirt.usda", "name": "Shirt", "material": "cotton", "out": "cache/shirt.pc2"}],
//!   "bodies":   [{"file": "body.usda", "name": "Body", "thickness": 0.004, "friction": 0.3}],
//!   "solver":   {"max_step": 0.02},
//!   "keyframes": {"source": "keys.mdd", "regularization": 1e-3, "iterations": 40} }
//! ```
//! Unknown keys anywhere are errors naming the key. Paths (`file`, `out`, `source`, and a
//! `material` that is not a preset name) are relative to the scene file's directory. An
//! entry without `name` takes the marked garments (garments) or every unmarked mesh
//! (bodies) of its file. Every file must share one up axis.
use crate::error::{Error, Result};
use crate::io::objects::Imported;
use crate::io::{gltf, read_objects_with, Format, ReadOptions};
use crate::scene::{Body, Garment, Material, Scene, UpAxis};
use serde::Deserialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The frame range (`"frames"`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Frames {
    /// First frame (inclusive).
    pub start: i32,
    /// Last frame (inclusive).
    pub end: i32,
    /// Frames per second.
    pub fps: Option<f64>,
}

/// One garment entry.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GarmentEntry {
    /// File holding the garment (relative to the scene file).
    pub file: PathBuf,
    /// Object name in the file; absent: the garments marked in the file.
    pub name: Option<String>,
    /// Material preset name or JSON file.
    pub material: Option<String>,
    /// Cache path (relative to the scene file).
    pub out: Option<PathBuf>,
}

/// One body entry.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BodyEntry {
    /// File holding the body (relative to the scene file).
    pub file: PathBuf,
    /// Object name in the file; absent: every unmarked mesh of the file.
    pub name: Option<String>,
    /// Collision thickness (m).
    pub thickness: Option<f64>,
    /// Friction coefficient.
    pub friction: Option<f64>,
}

/// Solver settings (`"solver"`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SolverEntry {
    /// Largest time step (s).
    pub max_step: Option<f64>,
}

/// Keyframe matching settings (`"keyframes"`, used by `drape control`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyframesEntry {
    /// Keyframe source (MDD file or a scene file holding keyframe shapes), relative to the
    /// scene file.
    pub source: PathBuf,
    /// Regularization weight of the objective.
    pub regularization: Option<f64>,
    /// Optimisation iterations.
    pub iterations: Option<u32>,
}

/// A scene file as written (paths not yet resolved).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SceneFile {
    /// Frame range and rate.
    pub frames: Option<Frames>,
    /// Garments to simulate (at least one).
    pub garments: Vec<GarmentEntry>,
    /// Collision bodies.
    #[serde(default)]
    pub bodies: Vec<BodyEntry>,
    /// Solver settings.
    pub solver: Option<SolverEntry>,
    /// Keyframe settings.
    pub keyframes: Option<KeyframesEntry>,
}

/// Per-garment settings from the scene file, paths resolved.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GarmentSettings {
    /// Material preset name, or the absolute path of a material JSON file.
    pub material: Option<String>,
    /// Cache path.
    pub out: Option<PathBuf>,
}

/// A loaded scene file: the scene plus what the CLI needs beside it.
#[derive(Debug, Clone)]
pub struct LoadedScene {
    /// Garments (in entry order) and bodies; `fps` and `frame_range` from `"frames"`
    /// when given, else from the files.
    pub scene: Scene,
    /// Settings of `scene.garments[i]`.
    pub garment_settings: Vec<GarmentSettings>,
    /// `solver.max_step` (s).
    pub max_step: Option<f64>,
    /// `keyframes`, its `source` resolved.
    pub keyframes: Option<KeyframesEntry>,
    /// The file as written.
    pub file: SceneFile,
}

fn bad(path: &Path, message: impl Into<String>) -> Error {
    Error::input(path, None, message)
}

impl SceneFile {
    /// Parses and checks a scene file (no referenced file is opened).
    pub fn read(path: &Path) -> Result<SceneFile> {
        let bytes = std::fs::read(path)
            .map_err(|e| bad(path, format!("cannot read the scene file: {e}")))?;
        let text = String::from_utf8(bytes).map_err(|_| {
            bad(
                path,
                "the scene file is not UTF-8 text; save it as UTF-8 JSON",
            )
        })?;
        SceneFile::parse(&text).map_err(|m| bad(path, m))
    }

    /// Parses and checks scene-file text; the message names the key or value at fault.
    pub fn parse(text: &str) -> std::result::Result<SceneFile, String> {
        let file: SceneFile = serde_json::from_str(text).map_err(|e| {
            format!("{e}; fix or remove it (the scene file format is in docs/reference.md, \"Scene file\")")
        })?;
        file.validate()?;
        Ok(file)
    }

    fn validate(&self) -> std::result::Result<(), String> {
        if self.garments.is_empty() {
            return Err("\"garments\" is empty; list at least one garment".into());
        }
        if let Some(f) = &self.frames {
            if f.end < f.start {
                return Err(format!(
                    "frames.end ({}) is before frames.start ({})",
                    f.end, f.start
                ));
            }
            if f.fps.is_some_and(|x| !(x.is_finite() && x > 0.0)) {
                return Err("frames.fps must be a positive number".into());
            }
        }
        for (i, b) in self.bodies.iter().enumerate() {
            if b.thickness.is_some_and(|x| !(x.is_finite() && x >= 0.0)) {
                return Err(format!(
                    "bodies[{i}].thickness must be a non-negative number of metres"
                ));
            }
            if b.friction.is_some_and(|x| !(x.is_finite() && x >= 0.0)) {
                return Err(format!(
                    "bodies[{i}].friction must be a non-negative number"
                ));
            }
        }
        if let Some(s) = self.solver.as_ref().and_then(|s| s.max_step) {
            if !(s.is_finite() && s > 0.0) {
                return Err("solver.max_step must be a positive number of seconds".into());
            }
        }
        if let Some(k) = &self.keyframes {
            if k.regularization
                .is_some_and(|x| !(x.is_finite() && x >= 0.0))
            {
                return Err("keyframes.regularization must be a non-negative number".into());
            }
        }
        Ok(())
    }
}

/// A file's meshes, read once however many entries name it.
enum Source {
    Objects(Imported),
    Gltf,
}

/// Reads the scene file at `path` and every file it references.
pub fn load(path: &Path) -> Result<LoadedScene> {
    load_with(path, &ReadOptions::default())
}

/// [`load`] with the reading options of the command line, applied to every file the scene
/// references: USD variants (`--variant`), the glTF clip (`--animation`) and folders
/// (`--allow-paths`), and the frame rate glTF and Alembic animation is read at (`--fps`,
/// else the scene file's `frames.fps`, else each file's own).
pub fn load_with(path: &Path, options: &ReadOptions) -> Result<LoadedScene> {
    let file = SceneFile::read(path)?;
    let options = ReadOptions {
        fps: options.fps.or(file.frames.as_ref().and_then(|f| f.fps)),
        ..options.clone()
    };
    let gltf_selection = |garments: &[String]| gltf::Selection {
        garments: garments.to_vec(),
        bodies: Vec::new(),
        fps: options.fps,
        animation: options.animation.clone(),
        allow_paths: options.allow_paths.clone(),
    };
    let base = path.parent().unwrap_or_else(|| Path::new(""));
    let resolve = |p: &Path| base.join(p);
    let mut cache: HashMap<PathBuf, Source> = HashMap::new();
    let mut up: Option<(UpAxis, PathBuf)> = None;
    let (mut fps, mut range) = (None, None);
    let mut open = |p: &Path, cache: &mut HashMap<PathBuf, Source>| -> Result<()> {
        if cache.contains_key(p) {
            return Ok(());
        }
        let source =
            match Format::of(p)? {
                Format::Gltf => Source::Gltf,
                Format::SceneFile => return Err(Error::input(
                    p,
                    None,
                    "a scene file cannot reference another scene file; list its objects directly",
                )),
                Format::Usd | Format::Alembic | Format::HoudiniGeo => {
                    Source::Objects(read_objects_with(p, &options)?)
                }
            };
        if let Source::Objects(o) = &source {
            fps = fps.or(o.fps);
            range = range.or(o.frame_range);
            match &up {
                Some((u, first)) if *u != o.up => {
                    return Err(Error::input(p, None, format!(
                        "is {:?}-up but {} is {u:?}-up; export every file of the scene with the same up axis",
                        o.up, first.display()
                    )))
                }
                Some(_) => {}
                None => up = Some((o.up, p.to_path_buf())),
            }
        } else if up.is_none() {
            up = Some((UpAxis::Y, p.to_path_buf()));
        }
        cache.insert(p.to_path_buf(), source);
        Ok(())
    };
    let mut garments: Vec<Garment> = Vec::new();
    let mut settings = Vec::new();
    for entry in &file.garments {
        let p = resolve(&entry.file);
        open(&p, &mut cache)?;
        let names: Vec<String> = entry.name.iter().cloned().collect();
        let found = match &cache[&p] {
            Source::Gltf => gltf::select_with(&p, &gltf_selection(&names))?.garments,
            Source::Objects(o) => o.clone().select(&names, &[], true)?.garments,
        };
        let material = entry.material.as_ref().map(|m| match Material::preset(m) {
            Some(_) => m.clone(),
            None => resolve(Path::new(m)).to_string_lossy().into_owned(),
        });
        for g in found {
            settings.push(GarmentSettings {
                material: material.clone(),
                out: entry.out.as_deref().map(&resolve),
            });
            garments.push(g);
        }
    }
    let mut bodies: Vec<Body> = Vec::new();
    for entry in &file.bodies {
        let p = resolve(&entry.file);
        open(&p, &mut cache)?;
        let names: Vec<String> = entry.name.iter().cloned().collect();
        let found = match &cache[&p] {
            Source::Gltf => gltf_bodies(&p, &names, &gltf_selection(&[]))?,
            Source::Objects(o) => {
                let taken: Vec<usize> = (0..o.meshes.len())
                    .filter(|&i| {
                        garments
                            .iter()
                            .any(|g| g.source == p && g.name == o.meshes[i].name)
                    })
                    .collect();
                let idx = o.body_indices(&names, &taken)?;
                idx.into_iter()
                    .map(|i| o.meshes[i].clone().into_body())
                    .collect()
            }
        };
        for mut b in found {
            b.thickness = entry.thickness.or(b.thickness);
            b.friction = entry.friction.or(b.friction);
            bodies.push(b);
        }
    }
    if let Some(f) = &file.frames {
        range = Some((f.start, f.end));
        fps = f.fps.or(fps);
    }
    let scene = Scene {
        garments,
        bodies,
        up: up.map_or(UpAxis::Y, |(u, _)| u),
        fps,
        frame_range: range,
    };
    let keyframes = file.keyframes.clone().map(|mut k| {
        k.source = resolve(&k.source);
        k
    });
    Ok(LoadedScene {
        scene,
        garment_settings: settings,
        max_step: file.solver.as_ref().and_then(|s| s.max_step),
        keyframes,
        file,
    })
}

/// Bodies from a glTF file read as `selection` says: whatever the glTF reader delivers as
/// bodies, filtered by name.
fn gltf_bodies(path: &Path, names: &[String], selection: &gltf::Selection) -> Result<Vec<Body>> {
    let bodies = gltf::read_with(path, selection)?.bodies;
    if names.is_empty() {
        return Ok(bodies);
    }
    names
        .iter()
        .map(|n| {
            bodies
                .iter()
                .find(|b| &b.name == n)
                .cloned()
                .ok_or_else(|| {
                    let list: Vec<&str> = bodies.iter().map(|b| b.name.as_str()).collect();
                    Error::input(
                        path,
                        Some(n),
                        format!("no such body mesh; bodies in the file: {}", list.join(", ")),
                    )
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spec_example_parses() {
        let f = SceneFile::parse(
            r#"{ "frames": {"start": 1, "end": 120, "fps": 24},
  "garments": [{"file": "shirt.usda", "name": "Shirt", "material": "cotton", "out": "cache/shirt.pc2"}],
  "bodies":   [{"file": "body.usda", "name": "Body", "thickness": 0.004, "friction": 0.3}],
  "solver":   {"max_step": 0.02},
  "keyframes": {"source": "keys.mdd", "regularization": 1e-3, "iterations": 40} }"#,
        )
        .unwrap();
        assert_eq!(f.frames.as_ref().map(|f| (f.start, f.end)), Some((1, 120)));
        assert_eq!(f.garments[0].name.as_deref(), Some("Shirt"));
        assert_eq!(f.bodies[0].friction, Some(0.3));
        assert_eq!(f.solver.and_then(|s| s.max_step), Some(0.02));
        assert_eq!(f.keyframes.and_then(|k| k.iterations), Some(40));
    }

    #[test]
    fn unknown_keys_are_errors_naming_the_key_at_every_level() {
        let cases = [
            (
                r#"{"garments": [{"file": "a.usda"}], "gravity": 1}"#,
                "gravity",
            ),
            (r#"{"garments": [{"file": "a.usda", "mass": 1}]}"#, "mass"),
            (
                r#"{"garments": [{"file": "a.usda"}], "bodies": [{"file": "b", "thick": 1}]}"#,
                "thick",
            ),
            (
                r#"{"garments": [{"file": "a.usda"}], "frames": {"start": 1, "end": 2, "rate": 3}}"#,
                "rate",
            ),
            (
                r#"{"garments": [{"file": "a.usda"}], "solver": {"maxstep": 1}}"#,
                "maxstep",
            ),
        ];
        for (text, key) in cases {
            let e = SceneFile::parse(text).unwrap_err();
            assert!(e.contains(&format!("unknown field `{key}`")), "{e}");
        }
    }

    #[test]
    fn bad_values_are_errors() {
        for text in [
            r#"{"garments": []}"#,
            r#"{"garments": [{"file": "a"}], "frames": {"start": 5, "end": 1}}"#,
            r#"{"garments": [{"file": "a"}], "solver": {"max_step": -1}}"#,
            r#"{"garments": [{"file": "a"}], "bodies": [{"file": "b", "friction": -0.1}]}"#,
            r#"{"bodies": []}"#,
            r#"[1, 2]"#,
            "{\"garments\": [{\"file\": \"a\"}]",
        ] {
            assert!(SceneFile::parse(text).is_err(), "{text}");
        }
    }
}
