//! Reading silhouette keyframes ([`crate::control::silhouette`]; docs/reference.md,
//! "Keyframe silhouettes") from a JSON file:
//!
//! ```text
//! { "camera": {"world_from_camera": [16 numbers, column-major], "yfov": 0.6, "aspect": 1.78},
//!   "keyframes": [ {"frame": 40, "outlines": [[[x, y], ...], ...], "weight": 1.0} ] }
//! ```
//! The camera looks down its −Z axis, +Y up (glTF), placed in the scene's world (its
//! units and axes, scaled by `--scale` like the scene); `"camera": "NAME"` names a glTF
//! camera node (node or camera name) or a USD camera prim ([`super::usd::camera`]) of the
//! scene instead, placed where its animation has it at each keyframe. Outlines are closed polygons in normalised image coordinates
//! (x, y ∈ [−1, 1], y up); the region is their even–odd interior. Every problem is an
//! [`Error::Input`] (exit 2) naming the file and the keyframe, with the fix.
use super::keyframes::check_frame;
use super::{Format, ReadOptions};
use crate::control::silhouette::{Camera, Outline, Region, SilhouetteKey};
use crate::error::{Error, Result};
use crate::scene::Garment;
use crate::Vec2;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// Where a named camera may be found and how the scene was read.
#[derive(Debug, Clone, Copy)]
pub struct CameraSources<'a> {
    /// Files searched for a named camera (glTF and USD ones are read; others are skipped).
    pub files: &'a [PathBuf],
    /// How the scene was read (clip, allowed folders).
    pub options: &'a ReadOptions,
    /// `--scale`.
    pub scale: f64,
}

/// The camera as the file gives it.
enum CameraSpec {
    Explicit([f64; 16], f64, f64),
    Named(String),
}

/// The silhouette keyframes of `path` for `garment`, frames checked against the run's
/// `frames = (first, last)` (in `first + 1 ..= last`), sorted by frame.
pub fn load(
    path: &Path,
    garment: &Garment,
    cameras: CameraSources,
    frames: (i32, i32),
) -> Result<Vec<SilhouetteKey>> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::input(
            path,
            None,
            format!(
                "cannot read the silhouettes file ({e}); check the path given to --silhouettes"
            ),
        )
    })?;
    let root: Value = serde_json::from_str(&text).map_err(|e| {
        Error::input(
            path,
            None,
            format!("is not valid JSON ({e}); see docs/reference.md, \"Keyframe silhouettes\""),
        )
    })?;
    let bad = |object: &str, m: String| Error::input(path, Some(object), m);
    let root = object(&root, "the file").map_err(|m| bad("file", m))?;
    known_keys(root, &["camera", "keyframes"]).map_err(|m| bad("file", m))?;
    let camera = match root.get("camera") {
        Some(c) => camera_spec(c).map_err(|m| bad("camera", m))?,
        None => {
            return Err(bad(
                "file",
                "has no \"camera\"; give {\"world_from_camera\": [...], \"yfov\": ..., \
                 \"aspect\": ...} or the name of a camera of the scene"
                    .into(),
            ))
        }
    };
    let list = match root.get("keyframes") {
        Some(Value::Array(a)) if !a.is_empty() => a,
        _ => {
            return Err(bad(
                "keyframes",
                "must be a non-empty list of {\"frame\": N, \"outlines\": [[[x, y], ...]]}".into(),
            ))
        }
    };
    let mut read: Vec<(i32, Region, f64, String)> = Vec::with_capacity(list.len());
    for (k, entry) in list.iter().enumerate() {
        let label = |frame: Option<i32>| match frame {
            Some(f) => format!("keyframes[{k}] (frame {f})"),
            None => format!("keyframes[{k}]"),
        };
        let (frame, region, weight) =
            keyframe(entry, frames).map_err(|(f, m)| bad(&label(f), m))?;
        if let Some((_, _, _, other)) = read.iter().find(|r| r.0 == frame) {
            return Err(bad(
                &label(Some(frame)),
                format!("targets the same frame as {other}; keep one keyframe per frame"),
            ));
        }
        read.push((frame, region, weight, label(Some(frame))));
    }
    read.sort_by_key(|r| r.0);
    let key_frames: Vec<i32> = read.iter().map(|r| r.0).collect();
    let placed = place(path, &camera, &key_frames, cameras)?;
    let start = garment.world_positions();
    let mut keys = Vec::with_capacity(read.len());
    for ((frame, region, weight, label), camera) in read.into_iter().zip(placed) {
        if !start.iter().any(|x| camera.project(x).is_some()) {
            return Err(bad(
                &label,
                format!(
                    "the camera sees nothing of garment '{}': the whole garment lies behind \
                     it at the first frame; check that the camera looks down its −Z axis \
                     (glTF convention) and that world_from_camera is column-major",
                    garment.name
                ),
            ));
        }
        keys.push(SilhouetteKey {
            frame,
            camera,
            region,
            weight,
            name: format!("{} {label}", file_name(path)),
        });
    }
    Ok(keys)
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

fn object<'a>(v: &'a Value, what: &str) -> std::result::Result<&'a Map<String, Value>, String> {
    v.as_object()
        .ok_or_else(|| format!("{what} must be a JSON object {{...}}"))
}

fn known_keys(map: &Map<String, Value>, known: &[&str]) -> std::result::Result<(), String> {
    match map.keys().find(|k| !known.contains(&k.as_str())) {
        None => Ok(()),
        Some(k) => Err(format!(
            "has an unknown key \"{k}\"; the keys are {}",
            known
                .iter()
                .map(|k| format!("\"{k}\""))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

fn number(v: Option<&Value>, what: &str) -> std::result::Result<f64, String> {
    match v.and_then(Value::as_f64) {
        Some(x) if x.is_finite() => Ok(x),
        Some(_) => Err(format!("{what} is not a finite number")),
        None => Err(format!("{what} must be a number")),
    }
}

fn camera_spec(v: &Value) -> std::result::Result<CameraSpec, String> {
    if let Value::String(name) = v {
        return Ok(CameraSpec::Named(name.clone()));
    }
    let map = object(v, "the camera (or a camera name)")?;
    known_keys(map, &["world_from_camera", "yfov", "aspect"])?;
    let m = match map.get("world_from_camera") {
        Some(Value::Array(a)) if a.len() == 16 => a,
        _ => {
            return Err(
                "world_from_camera must be a list of 16 numbers, the camera's world \
                        matrix in column-major order (translation in elements 12..14)"
                    .into(),
            )
        }
    };
    let mut matrix = [0.0; 16];
    for (k, (slot, x)) in matrix.iter_mut().zip(m).enumerate() {
        *slot = number(Some(x), &format!("world_from_camera[{k}]"))?;
    }
    let yfov = number(map.get("yfov"), "yfov (vertical field of view, radians)")?;
    let aspect = number(map.get("aspect"), "aspect (width / height)")?;
    Camera::new(&matrix, yfov, aspect)?;
    Ok(CameraSpec::Explicit(matrix, yfov, aspect))
}

/// One keyframe entry: frame, region, weight; errors carry the frame once known.
fn keyframe(
    v: &Value,
    frames: (i32, i32),
) -> std::result::Result<(i32, Region, f64), (Option<i32>, String)> {
    let map = object(v, "a keyframe").map_err(|m| (None, m))?;
    known_keys(map, &["frame", "outlines", "weight"]).map_err(|m| (None, m))?;
    let frame = match map.get("frame").and_then(Value::as_i64) {
        Some(f) => i32::try_from(f).map_err(|_| (None, format!("frame {f} is out of range")))?,
        None => return Err((None, "\"frame\" must be a whole number".into())),
    };
    let err = |m: String| (Some(frame), m);
    check_frame(frame, frames).map_err(err)?;
    let weight = match map.get("weight") {
        None => 1.0,
        w => number(w, "weight").map_err(err)?,
    };
    if weight < 0.0 {
        return Err(err(format!(
            "weight {weight} is negative; give a weight ≥ 0"
        )));
    }
    let polygons = match map.get("outlines") {
        Some(Value::Array(a)) if !a.is_empty() => a,
        _ => {
            return Err(err(
                "\"outlines\" must be a non-empty list of closed polygons [[x, y], ...] in \
                 normalised image coordinates"
                    .into(),
            ))
        }
    };
    let mut outlines: Vec<Outline> = Vec::with_capacity(polygons.len());
    for (o, poly) in polygons.iter().enumerate() {
        let points = poly
            .as_array()
            .ok_or_else(|| err(format!("outlines[{o}] must be a list of points [x, y]")))?;
        if points.len() < 3 {
            return Err(err(format!(
                "outlines[{o}] has {} points; a closed outline needs at least 3",
                points.len()
            )));
        }
        let mut outline = Vec::with_capacity(points.len());
        for (p, point) in points.iter().enumerate() {
            let what = format!("outlines[{o}][{p}]");
            let xy = match point.as_array() {
                Some(xy) if xy.len() == 2 => xy,
                _ => return Err(err(format!("{what} must be a point [x, y]"))),
            };
            let x = number(xy.first(), &format!("{what} x")).map_err(err)?;
            let y = number(xy.get(1), &format!("{what} y")).map_err(err)?;
            outline.push(Vec2::new(x, y));
        }
        outlines.push(outline);
    }
    Ok((frame, Region::new(outlines), weight))
}

/// The camera of `spec` at each of `frames`, in the scene's (scaled) world.
fn place(
    path: &Path,
    spec: &CameraSpec,
    frames: &[i32],
    sources: CameraSources,
) -> Result<Vec<Camera>> {
    let scaled = |m: &[f64; 16]| {
        let mut out = *m;
        for (k, v) in out.iter_mut().enumerate() {
            if k % 4 != 3 {
                *v *= sources.scale;
            }
        }
        out
    };
    let make = |m: &[f64; 16], yfov: f64, aspect: f64, object: &str| {
        Camera::new(&scaled(m), yfov, aspect).map_err(|e| Error::input(path, Some(object), e))
    };
    let name = match spec {
        CameraSpec::Explicit(m, yfov, aspect) => {
            let camera = make(m, *yfov, *aspect, "camera")?;
            return Ok(vec![camera; frames.len()]);
        }
        CameraSpec::Named(name) => name,
    };
    let selection = sources.options.gltf(&[], &[]);
    let (mut seen, mut cameras) = (Vec::new(), Vec::<String>::new());
    for file in sources.files {
        let format = Format::of(file).ok();
        if !matches!(format, Some(Format::Gltf | Format::Usd)) || seen.contains(file) {
            continue;
        }
        seen.push(file.clone());
        let found = match format {
            Some(Format::Usd) => {
                super::usd::camera::camera(file, &sources.options.usd, name, frames)?
            }
            _ => super::gltf::camera::camera(file, &selection, name, frames)?,
        };
        match found {
            Ok(placed) => {
                let aspect = placed.aspect.ok_or_else(|| {
                    Error::input(
                        file,
                        Some(name),
                        "gives no aspect ratio; set the camera's aspect ratio (Blender's \
                         exporter writes it) or give the camera in the silhouettes file",
                    )
                })?;
                return (placed.world_from_camera.iter())
                    .map(|m| make(m, placed.yfov, aspect, name))
                    .collect();
            }
            Err(names) => cameras.extend(
                names
                    .into_iter()
                    .map(|n| format!("{n} ({})", file_name(file))),
            ),
        }
    }
    let have = if cameras.is_empty() {
        "the scene's glTF and USD files have no cameras".to_string()
    } else {
        format!("cameras there: {}", cameras.join(", "))
    };
    Err(Error::input(
        path,
        Some("camera"),
        format!(
            "names camera \"{name}\", but no glTF or USD file of the scene has a camera of \
             that name ({have}; cameras are read from glTF and USD scenes only); name one of \
             them or give world_from_camera, yfov and aspect instead"
        ),
    ))
}
