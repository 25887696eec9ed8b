//! Perspective cameras of a glTF file, placed at given frames (the silhouette keyframes'
//! `"camera": "NAME"`, [`crate::io::silhouettes`]).
use super::{open, Selection, DEFAULT_FPS};
use crate::error::{Error, Result};
use std::path::Path;

/// A camera node at some frames.
#[derive(Debug, Clone, PartialEq)]
pub struct PlacedCamera {
    /// The node's world matrix at each frame asked for (column-major, file units and axes).
    pub world_from_camera: Vec<[f64; 16]>,
    /// Vertical field of view (radians).
    pub yfov: f64,
    /// Width / height; `None` when the file leaves it to the viewport.
    pub aspect: Option<f64>,
}

/// The camera node of `path` whose node or camera is named `name`, placed at `frames`
/// (time = frame / fps, the clip `sel` plays); `Err(names)` lists the file's cameras when
/// none has that name. An orthographic camera is an input error.
pub fn camera(
    path: &Path,
    sel: &Selection,
    name: &str,
    frames: &[i32],
) -> Result<std::result::Result<PlacedCamera, Vec<String>>> {
    let src = super::source::Source::open(path, &sel.allow_paths)?;
    let mut names = Vec::new();
    let mut found = None;
    for node in src.doc.nodes() {
        let Some(cam) = node.camera() else { continue };
        let label = node.name().or(cam.name()).unwrap_or("").to_string();
        if node.name() == Some(name) || cam.name() == Some(name) {
            let lens = match cam.projection() {
                gltf::camera::Projection::Perspective(p) => {
                    Some((f64::from(p.yfov()), p.aspect_ratio().map(f64::from)))
                }
                gltf::camera::Projection::Orthographic(_) => None,
            };
            found = Some((node.index(), lens));
            break;
        }
        names.push(label);
    }
    let Some((index, lens)) = found else {
        return Ok(Err(names));
    };
    let Some((yfov, aspect)) = lens else {
        return Err(Error::input(
            path,
            Some(name),
            "is an orthographic camera; silhouette keyframes need a perspective camera \
             (or give world_from_camera, yfov and aspect in the silhouettes file)",
        ));
    };
    let fps = sel.fps.unwrap_or(DEFAULT_FPS);
    let file = open(path, sel, fps)?;
    let world_from_camera = frames
        .iter()
        .map(|&f| {
            let pose = file.pose(f64::from(f) / fps);
            let m = pose.node(index).ok_or_else(|| {
                Error::Internal(format!("glTF camera node {index} has no world matrix"))
            })?;
            let mut out = [0.0; 16];
            out.copy_from_slice(m.as_slice());
            Ok(out)
        })
        .collect::<Result<_>>()?;
    Ok(Ok(PlacedCamera {
        world_from_camera,
        yfov,
        aspect,
    }))
}
