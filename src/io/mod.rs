//! Importers: files to [`Scene`]. They know nothing of solvers.
//!
//! | extension | reader |
//! |---|---|
//! | `.gltf`, `.glb` | [`gltf`] |
//! | `.usda`, `.usdc`, `.usd` (text or crate) | [`usd`] (crate files via `openusd`, [`usd::usdc`]) |
//! | `.abc` (Alembic, Ogawa) | [`alembic`] |
//! | `.geo` (Houdini JSON), `name.$F4.geo` sequences | [`houdini_geo`] |
//! | `.json` scene file | [`scene_file`] |
//!
//! USD, Alembic and Houdini meshes come through [`objects`], which picks garments (marked, or named
//! with `--garment`) and bodies (every other mesh).
pub mod alembic;
pub mod foreign;
pub mod gltf;
pub mod houdini_geo;
pub mod keyframes;
pub mod objects;
pub mod scene_file;
pub mod silhouettes;
pub mod usd;
pub mod weld;

use crate::error::{Error, Result};
use crate::scene::Scene;
use objects::Imported;
use std::path::Path;

/// Input formats by file name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// glTF 2.0 (`.gltf`, `.glb`).
    Gltf,
    /// USD (`.usda`, `.usd`, `.usdc`).
    Usd,
    /// Alembic (`.abc`, Ogawa).
    Alembic,
    /// Houdini JSON geometry (`.geo`), possibly a `$F` sequence.
    HoudiniGeo,
    /// A drape scene file (`.json`).
    SceneFile,
}

impl Format {
    /// The format of `path` by its extension; unknown extensions are usage errors.
    pub fn of(path: &Path) -> Result<Format> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(|e| e.to_ascii_lowercase())
            .unwrap_or_default();
        match ext.as_str() {
            "gltf" | "glb" => Ok(Format::Gltf),
            "usd" | "usda" | "usdc" | "usdz" => Ok(Format::Usd),
            "abc" => Ok(Format::Alembic),
            "geo" => Ok(Format::HoudiniGeo),
            "json" => Ok(Format::SceneFile),
            _ => Err(Error::input(
                path,
                None,
                "unknown scene format; give a .gltf/.glb, .usda, Alembic .abc, Houdini .geo or scene \
                 .json file",
            )),
        }
    }
}

/// The input exists and is a regular file (a FIFO or device would block or never end).
fn check_exists(path: &Path) -> Result<()> {
    if houdini_geo::is_sequence_pattern(path) {
        return Ok(());
    }
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => Ok(()),
        Ok(_) => Err(Error::input(
            path,
            None,
            "is not a regular file (a folder, FIFO or device); give the scene file itself",
        )),
        Err(_) => Err(Error::input(path, None, "file not found; check the path")),
    }
}

/// Reading options of the command line beyond the garment and body names.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReadOptions {
    /// `--fps`: the rate glTF animation is sampled at (24 when `None`), and the rate
    /// Alembic times become frames at (the archive's when `None`).
    pub fps: Option<f64>,
    /// `--animation`: the glTF clip to play (the file's first when `None`).
    pub animation: Option<String>,
    /// `--allow-paths`: folders glTF buffers and images may come from besides the file's.
    pub allow_paths: Vec<std::path::PathBuf>,
    /// `--variant SET=NAME`: USD variant selections over the authored ones.
    pub usd: usd::compose::Options,
}

impl ReadOptions {
    /// The glTF selection of `garments` and `bodies` with these options.
    fn gltf(&self, garments: &[String], bodies: &[String]) -> gltf::Selection {
        gltf::Selection {
            garments: garments.to_vec(),
            bodies: bodies.to_vec(),
            fps: self.fps,
            animation: self.animation.clone(),
            allow_paths: self.allow_paths.clone(),
        }
    }

    /// `--animation` names a glTF clip: an error for other formats.
    fn check_format(&self, path: &Path, format: Format) -> Result<()> {
        match (&self.animation, format) {
            (Some(name), f) if f != Format::Gltf && f != Format::SceneFile => Err(Error::input(
                path,
                None,
                format!(
                    "--animation {name} chooses a glTF animation clip, and this is not a glTF \
                     file; drop --animation"
                ),
            )),
            _ => Ok(()),
        }
    }
}

/// What `inspect` reads: the scene as [`load_scene`] does, with the glTF clip and folders
/// of `opts`, and for a glTF file its clips and ignored extensions.
pub fn inspect_scene(path: &Path, opts: &ReadOptions) -> Result<(Scene, Option<gltf::Notes>)> {
    check_exists(path)?;
    let format = Format::of(path)?;
    opts.check_format(path, format)?;
    match format {
        Format::Gltf => {
            let (scene, notes) = gltf::inspect(path, &opts.gltf(&[], &[]))?;
            Ok((scene, Some(notes)))
        }
        _ => Ok((load_scene_with(path, opts)?, None)),
    }
}

/// Reads every mesh of a USD, Alembic or Houdini file (not glTF, not scene files).
pub fn read_objects(path: &Path) -> Result<Imported> {
    read_objects_with(path, &ReadOptions::default())
}

/// [`read_objects`] with `options`; what the reader skipped or could not resolve is
/// printed as warnings on stderr (and kept in [`Imported::warnings`]).
pub fn read_objects_with(path: &Path, options: &ReadOptions) -> Result<Imported> {
    check_exists(path)?;
    match Format::of(path)? {
        Format::Usd => {
            let imported = usd::read_with(path, &options.usd)?;
            for w in &imported.warnings {
                eprintln!("warning: {}: {w}", path.display());
            }
            Ok(imported)
        }
        Format::Alembic => alembic::read(path, options.fps),
        Format::HoudiniGeo => houdini_geo::read(path),
        Format::Gltf | Format::SceneFile => Err(Error::Internal(format!(
            "read_objects called on {}, which is not USD, Alembic or Houdini",
            path.display()
        ))),
    }
}

/// Reads a scene by extension: the meshes marked as garments (none is not an error here)
/// and every other mesh as a body; a scene file gives exactly what it lists.
pub fn load_scene(path: &Path) -> Result<Scene> {
    load_scene_with(path, &ReadOptions::default())
}

/// [`load_scene`] with `options` for USD files.
pub fn load_scene_with(path: &Path, options: &ReadOptions) -> Result<Scene> {
    check_exists(path)?;
    match Format::of(path)? {
        Format::Gltf => gltf::read(path),
        Format::Usd | Format::Alembic | Format::HoudiniGeo => {
            read_objects_with(path, options)?.select(&[], &[], false)
        }
        Format::SceneFile => Ok(scene_file::load_with(path, options)?.scene),
    }
}

/// Reads `path` and keeps the garments named in `names` (all marked garments when empty),
/// with every other mesh of the file as a body. Errors name the missing garment and list
/// the meshes that exist. For a scene file `names` filters its garments.
pub fn load_garments(path: &Path, names: &[String]) -> Result<Scene> {
    Ok(select(path, names, &[], None)?.scene)
}

/// What `drape simulate` reads: the scene as the flags select it, plus the per-garment
/// settings and solver settings of a scene file.
#[derive(Debug, Clone)]
pub struct Selected {
    /// Garments and bodies.
    pub scene: Scene,
    /// Settings of `scene.garments[i]` from a scene file; empty for other inputs.
    pub garment_settings: Vec<scene_file::GarmentSettings>,
    /// `solver.max_step` of a scene file (s).
    pub max_step: Option<f64>,
    /// `keyframes` of a scene file (source resolved), for `drape control`.
    pub keyframes: Option<scene_file::KeyframesEntry>,
}

/// Reads `path` keeping the garments named in `garments` (the marked ones when empty) and
/// the bodies named in `bodies` (every other mesh when empty); animated meshes of glTF
/// files are sampled at `fps` (24 when `None`). Missing names are input errors listing what
/// exists.
pub fn select(
    path: &Path,
    garments: &[String],
    bodies: &[String],
    fps: Option<f64>,
) -> Result<Selected> {
    let opts = ReadOptions {
        fps,
        ..ReadOptions::default()
    };
    select_with(path, garments, bodies, &opts)
}

/// [`select`] with every reading option of the command line.
pub fn select_with(
    path: &Path,
    garments: &[String],
    bodies: &[String],
    opts: &ReadOptions,
) -> Result<Selected> {
    check_exists(path)?;
    opts.check_format(path, Format::of(path)?)?;
    let plain = |scene| Selected {
        scene,
        garment_settings: Vec::new(),
        max_step: None,
        keyframes: None,
    };
    match Format::of(path)? {
        Format::Gltf => Ok(plain(gltf::select_with(
            path,
            &opts.gltf(garments, bodies),
        )?)),
        Format::Usd | Format::Alembic | Format::HoudiniGeo => Ok(plain(
            read_objects_with(path, opts)?.select(garments, bodies, true)?,
        )),
        Format::SceneFile => {
            let loaded = scene_file::load_with(path, opts)?;
            let mut scene = loaded.scene;
            let mut settings = loaded.garment_settings;
            let missing = |kind: &str, names: &[String], have: Vec<&str>| {
                names.iter().find(|n| !have.contains(&n.as_str())).map(|m| {
                    Error::input(
                        path,
                        Some(m),
                        format!(
                            "the scene file lists no such {kind}; it lists: {}",
                            have.join(", ")
                        ),
                    )
                })
            };
            if let Some(e) = missing(
                "garment",
                garments,
                scene.garments.iter().map(|g| g.name.as_str()).collect(),
            ) {
                return Err(e);
            }
            if let Some(e) = missing(
                "body",
                bodies,
                scene.bodies.iter().map(|b| b.name.as_str()).collect(),
            ) {
                return Err(e);
            }
            if !garments.is_empty() {
                let keep: Vec<bool> = scene
                    .garments
                    .iter()
                    .map(|g| garments.contains(&g.name))
                    .collect();
                let mut k = keep.iter();
                settings.retain(|_| *k.next().unwrap_or(&false));
                scene.garments.retain(|g| garments.contains(&g.name));
            }
            if !bodies.is_empty() {
                scene.bodies.retain(|b| bodies.contains(&b.name));
            }
            Ok(Selected {
                scene,
                garment_settings: settings,
                max_step: loaded.max_step,
                keyframes: loaded.keyframes,
            })
        }
    }
}
