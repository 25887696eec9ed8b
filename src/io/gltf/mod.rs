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
//! Roles: node or mesh `extras` `{"drape": {"role": "garment"}}` or
//! `{"drape_role": "garment"}` (Blender's custom property; the node's wins) mark garments;
//! every other mesh is a body unless `--body` names the bodies. Names: node name, else
//! mesh name, else the file stem; repeated names get `.1`, `.2`, ... glTF is Y-up, metres.
mod animation;
pub mod build;
mod file;
mod mesh;
mod source;

pub use build::DEFAULT_FPS;
pub use file::{GltfFile, MeshInstance, Pose};

use crate::error::{Error, Result};
use crate::scene::{Garment, Scene};
use build::{build_scene, Frames};
use std::collections::HashSet;
use std::path::Path;

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
}

/// Reads a glTF file: the meshes marked as garments (possibly none: the caller then asks
/// for `--garment NAME`, see [`select`]) and every other mesh as a body, at 24 fps.
pub fn read(path: &Path) -> Result<Scene> {
    let file = open(path)?;
    let garments = marked(&file, &[]);
    let bodies = others(&file, &garments);
    let scene = build_scene(&file, &garments, &bodies, Frames::of(&file, DEFAULT_FPS))?;
    require_uvs(scene)
}

/// Every mesh node of a glTF file as a [`Garment`] (first frame, 24 fps) with its role
/// (`extras.drape.role` / `extras.drape_role`, `None` if unmarked), in scene-walk order.
/// A mesh without `TEXCOORD_0` comes back with empty `corner_uvs`.
pub fn read_meshes(path: &Path) -> Result<Vec<(Garment, Option<String>)>> {
    let file = open(path)?;
    let all: Vec<usize> = (0..file.instances().len()).collect();
    let scene = build_scene(&file, &all, &[], Frames::of(&file, DEFAULT_FPS))?;
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
            fps: None,
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
    let file = open(path)?;
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
    let scene = build_scene(&file, &garments, &bodies, Frames::of(&file, fps))?;
    require_uvs(scene)
}

/// Opens a file; a panic inside the `gltf` crate on a malformed file (none is known; this
/// is a safety net) is still the file's fault and becomes an input error.
fn open(path: &Path) -> Result<GltfFile> {
    std::panic::catch_unwind(|| GltfFile::open(path)).unwrap_or_else(|_| {
        Err(Error::input(
            path,
            None,
            "not a readable glTF file (malformed data); export it again as glTF 2.0",
        ))
    })
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
