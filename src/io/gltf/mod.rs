//! glTF 2.0 scenes (`.gltf` with embedded or external buffers, `.glb`) on the `gltf` crate:
//! garments and bodies, static or animated by node animation, skins and morph targets.
//!
//! * `source`: the file, its buffers and accessors (sparse, normalised, strided), every
//!   bound checked, so malformed files are input errors naming the object.
//! * `mesh`: primitives to one vertex list (`POSITION`, `TEXCOORD_0`, `_PIN`,
//!   `_DRAPE_INDEX`, `_KEY_WEIGHT`, every `JOINTS_n`/`WEIGHTS_n`, morph targets).
//! * `animation`: STEP, LINEAR (slerp) and CUBICSPLINE samplers.
//! * [`GltfFile`]: the node hierarchy evaluated at any time; skinning and morphing.
//! * [`build`]: garments and bodies for drape's [`Scene`], welded at seams (equal
//!   position, skin and morph deltas), animated ones sampled per frame.
//!
//! * `extensions`, `uri`, `meshopt`, `draco`: which extensions are read, ignored or
//!   refused; where external files may come from; compressed buffer views; Draco-compressed
//!   primitives.
//!
//! Clips: each glTF animation is a clip; one plays, the one [`Selection::animation`]
//! names, else the first of the file (what Blender plays after importing it).
//!
//! Roles: node or mesh `extras` `{"drape": {"role": "garment"}}` or
//! `{"drape_role": "garment"}` (Blender's custom property; the node's wins) mark garments;
//! every other mesh is a body unless `--body` names the bodies. Names: node name, else
//! mesh name, else the file stem; repeated names get `.1`, `.2`, ... glTF is Y-up, metres.
mod animation;
pub mod build;
pub mod camera;
mod draco;
mod extensions;
mod file;
mod mesh;
mod meshopt;
mod source;
mod uri;

pub use build::{DEFAULT_FPS, MAX_FRAMES, MAX_SAMPLED_POSITIONS};
pub use file::{Clip, GltfFile, MeshInstance, Pose};

use crate::error::{Error, Result};
use crate::scene::{Garment, Scene};
use build::{build_scene, Frames};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Role value marking a garment.
const GARMENT_ROLE: &str = "garment";

/// Which meshes of a file become garments and bodies, and the frame rate to sample at.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Selection {
    /// `--garment` names; empty: the meshes marked as garments.
    pub garments: Vec<String>,
    /// `--body` names; empty: every mesh that is not a garment.
    pub bodies: Vec<String>,
    /// `--fps`; `None`: [`DEFAULT_FPS`] (glTF stores no frame rate).
    pub fps: Option<f64>,
    /// `--animation`: the clip to play, by name or index; `None`: the file's first.
    pub animation: Option<String>,
    /// `--allow-paths`: folders external buffers and images may come from besides the
    /// file's own.
    pub allow_paths: Vec<PathBuf>,
}

/// What `inspect` says of a glTF file besides its garments and bodies.
#[derive(Debug, Clone, PartialEq)]
pub struct Notes {
    /// Every clip with its first and last frame at 24 fps (`None`: it animates nothing).
    pub clips: Vec<(String, Option<(i64, i64)>)>,
    /// The clip that plays, if the file has any.
    pub playing: Option<String>,
    /// Extensions the file uses that drape does not apply.
    pub ignored_extensions: Vec<String>,
}

/// Reads a glTF file: the meshes marked as garments (possibly none: the caller then asks
/// for `--garment NAME`, see [`select`]) and every other mesh as a body, at 24 fps.
pub fn read(path: &Path) -> Result<Scene> {
    read_with(path, &Selection::default())
}

/// [`read`] with the clip, folders and frame rate of `sel` (its names are not used: the
/// marked meshes are the garments, every other mesh a body).
pub fn read_with(path: &Path, sel: &Selection) -> Result<Scene> {
    Ok(inspect_at(path, sel, sel.fps.unwrap_or(DEFAULT_FPS))?.0)
}

/// [`read`] with the clip and folders of `sel`, and what `inspect` reports besides.
pub fn inspect(path: &Path, sel: &Selection) -> Result<(Scene, Notes)> {
    inspect_at(path, sel, DEFAULT_FPS)
}

/// [`inspect`] with the animation sampled at `fps`.
fn inspect_at(path: &Path, sel: &Selection, fps: f64) -> Result<(Scene, Notes)> {
    let file = open(path, sel, fps)?;
    let notes = Notes {
        clips: file
            .clips()
            .iter()
            .map(|c| {
                let frames = c.seconds.map(|(a, b)| (frame_of(a), frame_of(b)));
                (c.name.clone(), frames)
            })
            .collect(),
        playing: file.playing_clip().map(str::to_string),
        ignored_extensions: file.ignored_extensions().to_vec(),
    };
    let garments = marked(&file, &[]);
    let bodies = others(&file, &garments);
    let scene = build_scene(&file, &garments, &bodies, Frames::of(&file, fps)?)?;
    Ok((require_uvs(scene)?, notes))
}

/// The frame of time `t` (s) at [`DEFAULT_FPS`], rounded.
fn frame_of(t: f64) -> i64 {
    (t * DEFAULT_FPS).round() as i64
}

/// Every mesh node of a glTF file as a [`Garment`] (first frame, 24 fps) with its role
/// (`extras.drape.role` / `extras.drape_role`, `None` if unmarked), in scene-walk order.
/// A mesh without `TEXCOORD_0` comes back with empty `corner_uvs`.
pub fn read_meshes(path: &Path) -> Result<Vec<(Garment, Option<String>)>> {
    let file = open(path, &Selection::default(), DEFAULT_FPS)?;
    let all: Vec<usize> = (0..file.instances().len()).collect();
    let scene = build_scene(&file, &all, &[], Frames::of(&file, DEFAULT_FPS)?)?;
    Ok(scene
        .garments
        .into_iter()
        .zip(file.instances().iter().map(|i| i.role.clone()))
        .collect())
}

/// The garments named in `garments` (`--garment`; the marked ones when empty) and the
/// bodies named in `bodies` (`--body`; every other mesh with triangles when empty), at
/// 24 fps. See [`select_with`].
pub fn select(path: &Path, garments: &[String], bodies: &[String]) -> Result<Scene> {
    select_with(
        path,
        &Selection {
            garments: garments.to_vec(),
            bodies: bodies.to_vec(),
            ..Selection::default()
        },
    )
}

/// The garments named in `names` (`--garment`, or the marked ones) and every other mesh
/// as a body; kept for callers that know no bodies. See [`select_with`].
pub fn select_garments(path: &Path, names: &[String]) -> Result<Scene> {
    select(path, names, &[])
}

/// Garments and bodies of `path` as `sel` says, animated meshes sampled at `sel.fps`.
///
/// Errors name the fix: a missing name lists the meshes available; no marked mesh asks
/// for `--garment NAME` or the `drape_role` property; a mesh named both as garment and
/// body is refused. A name may also be the file stem when the file holds one mesh.
pub fn select_with(path: &Path, sel: &Selection) -> Result<Scene> {
    let fps = sel.fps.unwrap_or(DEFAULT_FPS);
    if !(fps.is_finite() && fps > 0.0) {
        return Err(Error::usage(format!(
            "--fps {fps}: give a positive frame rate"
        )));
    }
    let file = open(path, sel, fps)?;
    let available = || {
        let list: Vec<&str> = file.instances().iter().map(|i| i.name.as_str()).collect();
        if list.is_empty() {
            "the file has no meshes".to_string()
        } else {
            format!("meshes in the file: {}", list.join(", "))
        }
    };
    let garments = if sel.garments.is_empty() {
        let bodies = find_all(&file, path, &sel.bodies, &available)?;
        let g: Vec<usize> = marked(&file, &bodies);
        if g.is_empty() {
            return Err(Error::input(
                path,
                None,
                format!(
                    "no mesh is marked as a garment ({}); pass --garment NAME or set the \
                     custom property drape_role = \"garment\" on the garment object",
                    available()
                ),
            ));
        }
        g
    } else {
        find_all(&file, path, &sel.garments, &available)?
    };
    let bodies = if sel.bodies.is_empty() {
        others(&file, &garments)
    } else {
        let bodies = find_all(&file, path, &sel.bodies, &available)?;
        if let Some(&both) = bodies.iter().find(|b| garments.contains(b)) {
            return Err(Error::input(
                path,
                Some(&file.instances()[both].name),
                "is named as both a garment and a body; name it in only one of --garment and --body",
            ));
        }
        bodies
    };
    let scene = build_scene(&file, &garments, &bodies, Frames::of(&file, fps)?)?;
    require_uvs(scene)
}

/// Opens a file with the folders of `sel` and plays the clip it names (else the first);
/// a panic inside the `gltf` crate on a malformed file (none is known; this is a safety
/// net) is still the file's fault and becomes an input error.
fn open(path: &Path, sel: &Selection, fps: f64) -> Result<GltfFile> {
    let mut file = crate::io::foreign::catch(|| GltfFile::open_with(path, &sel.allow_paths))
        .unwrap_or_else(|| {
            Err(Error::input(
                path,
                None,
                "not a readable glTF file (malformed data); export it again as glTF 2.0",
            ))
        })?;
    let clips = file.clips().to_vec();
    let chosen = match sel.animation.as_deref() {
        None => (!clips.is_empty()).then_some(0),
        Some(name) => {
            let by_index = || name.parse::<usize>().ok().filter(|&k| k < clips.len());
            let found = clips.iter().position(|c| c.name == name).or_else(by_index);
            if found.is_none() {
                return Err(Error::input(path, Some(name), no_such_clip(&clips, fps)));
            }
            found
        }
    };
    if let Some(k) = chosen {
        file.play_clip(k);
    }
    Ok(file)
}

/// The message for an unknown `--animation` name: the clips there are, with frames.
fn no_such_clip(clips: &[Clip], fps: f64) -> String {
    if clips.is_empty() {
        return "no such animation: the file has no animations; drop --animation".into();
    }
    let list: Vec<String> = clips
        .iter()
        .map(|c| match c.seconds {
            Some((a, b)) => format!(
                "{} (frames {}..{})",
                c.name,
                (a * fps).round(),
                (b * fps).round()
            ),
            None => c.name.clone(),
        })
        .collect();
    format!(
        "no such animation; the file's animations: {} (give --animation one of these names)",
        list.join(", ")
    )
}

/// Instances marked as garments, except those in `exclude`.
fn marked(file: &GltfFile, exclude: &[usize]) -> Vec<usize> {
    (0..file.instances().len())
        .filter(|i| file.instances()[*i].role.as_deref() == Some(GARMENT_ROLE))
        .filter(|i| !exclude.contains(i))
        .collect()
}

/// Instances with triangles that are not in `garments`.
fn others(file: &GltfFile, garments: &[usize]) -> Vec<usize> {
    (0..file.instances().len())
        .filter(|i| !garments.contains(i) && !file.mesh(*i).triangles.is_empty())
        .collect()
}

/// Instance indices of `names` (duplicates dropped); the file stem names a lone mesh.
fn find_all(
    file: &GltfFile,
    path: &Path,
    names: &[String],
    available: &dyn Fn() -> String,
) -> Result<Vec<usize>> {
    let stem = path.file_stem().and_then(|s| s.to_str());
    let instances = file.instances();
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for name in names {
        if !seen.insert(name) {
            continue;
        }
        let found = instances
            .iter()
            .position(|i| &i.name == name)
            .or_else(|| (instances.len() == 1 && stem == Some(name.as_str())).then_some(0));
        match found {
            Some(i) => out.push(i),
            None => {
                return Err(Error::input(
                    path,
                    Some(name),
                    format!("no such mesh; {}", available()),
                ))
            }
        }
    }
    Ok(out)
}

fn require_uvs(scene: Scene) -> Result<Scene> {
    for g in &scene.garments {
        if g.corner_uvs.len() != g.triangles.len() {
            return Err(Error::input(
                &g.source,
                Some(&g.name),
                "has no UV map (TEXCOORD_0) on all its faces; add a UV map (unwrap the garment \
                 into its sewing panels) and export again",
            ));
        }
    }
    Ok(scene)
}

#[cfg(test)]
mod tests;
