//! USD text files (`.usda`; `.usd` holding text) read by our own parser of the subset
//! artists' exporters write (Blender's USD exporter in particular).
//!
//! * Stage metadata: `upAxis` (`"Y"` default, or `"Z"`), `metersPerUnit` (default 0.01,
//!   USD's fallback), `timeCodesPerSecond` (default 24), `framesPerSecond` (default: the
//!   time codes' rate), `startTimeCode`/`endTimeCode` (the scene's frame range).
//! * Prims: `def` prims are walked from the roots (`over`/`class` prims and prims with
//!   `active = false` are skipped). A layer with composition arcs, or a `.usdz` archive,
//!   is first composed and flattened into one [`Layer`] ([`compose`], `--variant`).
//!   Every prim with an `xformOpOrder` contributes its transform ([`xform`]); time-sampled ops animate.
//! * Every `Mesh` prim is one mesh ([`mesh`]): one particle per USD point in point order
//!   (points are never split at seams; faceVarying UVs that differ at a point make it a
//!   seam point), so a garment's cache has the USD point count and order (docs/reference.md, "Outputs").
//!   Time-sampled `points` animate it.
//! * Names: Blender writes each object as an `Xform` named after the object holding the
//!   `Mesh` (named after the mesh data); the mesh then takes the object's name
//!   (`userProperties:blender:object_name` when Blender had to change it into a valid prim
//!   name, else the Xform's). The Xform's and the mesh prim's names, the mesh data name
//!   (`userProperties:blender:data_name`) and the full prim path select it too.
//! * UsdSkel: a mesh with `primvars:skel:jointIndices` is skinned to its bound skeleton
//!   and posed by its animation at every frame ([`skel`]); it is placed by the skeleton's
//!   transforms, not its own.
//! * UVs are needed by garments only: a mesh whose UVs cannot be read keeps the reason
//!   (`ImportedMesh::uv_problem`), an error only if it is chosen as a garment.
//! * Keyframes: a mesh named `<garment>_key_<frame>` next to a mesh `<garment>` is a
//!   keyframe shape of that garment (docs/reference.md, "Inputs" (b)), never a garment or body: it
//!   gets the role [`KEYFRAME_ROLE`] whatever role it carries, and
//!   [`Imported::select`] fills `Garment::keyframes` from it; `primvars:key_weight`
//!   (vertex float) gives `Garment::key_weight`.
//! * Roles: `userProperties:drape_role` (Blender's export of the custom property
//!   `drape_role`) or `customData = { dictionary drape = { string role = ... } }`
//!   (`drape:role`), on the mesh or on its object Xform.
//! * Units and time: positions stay in file units in object space; `metersPerUnit` goes
//!   into the object-to-world transform, so world space (bodies, animation, the solver) is
//!   in metres and a cache written in object space (inverse world transform) comes back in
//!   file units. Time codes become frames as `frame = time × framesPerSecond /
//!   timeCodesPerSecond`. The first frame is `startTimeCode`, else the earliest sample.
//!
//! `.usdc` binary crate files (and `.usd` files holding one) are read with the `openusd`
//! crate and converted into the same [`Layer`] ([`usdc`]), so every rule above applies to
//! them too.
pub mod blend_shape;
pub mod camera;
pub mod compose;
pub mod crate_budget;
pub mod layer;
pub mod lexer;
pub mod mesh;
pub mod parser;
pub mod skel;
pub mod usdc;
pub mod writer;
pub mod xform;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_skel;

use crate::error::{Error, Result};
use crate::io::objects::{is_keyframe_mesh, unique_name, Imported, ImportedMesh};
use crate::scene::{Animation, OutputFaces, UpAxis};
use crate::{Mat3, Vec3};
use layer::{Layer, Prim, Specifier, Value};
use nalgebra::Matrix4;
use skel::Skin;
use std::collections::HashSet;
use std::path::Path;
use xform::{numbers_at, sample_times, xform_ops, Blend, XformOps};

/// Stage-wide settings from the layer metadata.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StageInfo {
    /// `upAxis`.
    pub up: UpAxis,
    /// `metersPerUnit`.
    pub meters_per_unit: f64,
    /// `timeCodesPerSecond`.
    pub time_codes_per_second: f64,
    /// `framesPerSecond` if authored.
    pub frames_per_second: Option<f64>,
    /// `startTimeCode` if authored.
    pub start: Option<f64>,
    /// `endTimeCode` if authored.
    pub end: Option<f64>,
}

impl StageInfo {
    /// Frames per second: `framesPerSecond`, else `timeCodesPerSecond`.
    pub fn fps(&self) -> f64 {
        self.frames_per_second.unwrap_or(self.time_codes_per_second)
    }

    /// The frame number of time code `t`.
    pub fn frame_of(&self, t: f64) -> f64 {
        t * self.fps() / self.time_codes_per_second
    }

    /// Reads the layer metadata; out-of-range values are errors naming the key.
    pub fn from_layer(layer: &Layer) -> std::result::Result<StageInfo, String> {
        let num = |key: &str| -> std::result::Result<Option<f64>, String> {
            match layer.meta(key) {
                None => Ok(None),
                Some(v) => v
                    .as_f64()
                    .filter(|x| x.is_finite())
                    .map(Some)
                    .ok_or_else(|| format!("stage metadata {key} is not a finite number")),
            }
        };
        let positive = |key: &str, default: f64| -> std::result::Result<f64, String> {
            match num(key)? {
                None => Ok(default),
                Some(x) if x > 0.0 => Ok(x),
                Some(x) => Err(format!("stage metadata {key} = {x} must be positive")),
            }
        };
        let up = match layer.meta("upAxis").map(|v| v.as_str()) {
            None => UpAxis::Y,
            Some(Some("Y")) => UpAxis::Y,
            Some(Some("Z")) => UpAxis::Z,
            Some(other) => {
                return Err(format!(
                    "stage metadata upAxis = {other:?}; USD allows only \"Y\" or \"Z\""
                ))
            }
        };
        let time_codes_per_second = positive("timeCodesPerSecond", 24.0)?;
        let frames_per_second = match num("framesPerSecond")? {
            None => None,
            Some(_) => Some(positive("framesPerSecond", 24.0)?),
        };
        Ok(StageInfo {
            up,
            meters_per_unit: positive("metersPerUnit", 0.01)?,
            time_codes_per_second,
            frames_per_second,
            start: num("startTimeCode")?,
            end: num("endTimeCode")?,
        })
    }
}

fn unreadable(path: &Path, reason: impl std::fmt::Display) -> Error {
    Error::input(
        path,
        None,
        format!("not a readable USD text file ({reason}); export it again as .usda"),
    )
}

/// Parses the file at `path` into a [`Layer`] as written (no composition): a crate file
/// (`PXR-USDC` magic) through [`usdc`], else USD text (checks the encoding).
pub fn read_layer(path: &Path) -> Result<Layer> {
    let bytes = std::fs::read(path)
        .map_err(|e| Error::input(path, None, format!("cannot read the file: {e}")))?;
    parse_layer(path, &bytes)
}

fn is_usdz(bytes: &[u8]) -> bool {
    bytes.starts_with(b"PK\x03\x04")
}

fn parse_layer(path: &Path, bytes: &[u8]) -> Result<Layer> {
    if bytes.starts_with(usdc::MAGIC) {
        return usdc::parse(bytes).map_err(|reason| {
            Error::input(
                path,
                None,
                format!(
                    "not a readable binary USD crate file ({reason}); export it again as \
                     .usdc or as USD text (.usda)"
                ),
            )
        });
    }
    if is_usdz(bytes) {
        return Err(Error::input(
            path,
            None,
            "is a USDZ archive, which holds several layers, not one",
        ));
    }
    let text = std::str::from_utf8(bytes)
        .map_err(|e| unreadable(path, format!("not UTF-8 text at byte {}", e.valid_up_to())))?;
    parser::parse(text).map_err(|e| unreadable(path, e))
}

/// Reads every mesh of a `.usda`, `.usdc` or `.usdz` file with every variant selection as
/// authored.
pub fn read(path: &Path) -> Result<Imported> {
    read_with(path, &compose::Options::default())
}

/// Reads every mesh of a USD file: a single layer without composition arcs directly, a
/// layer with arcs or a `.usdz` archive through [`compose`] (with `options`' variant
/// selections). Composition problems become [`Imported::warnings`].
pub fn read_with(path: &Path, options: &compose::Options) -> Result<Imported> {
    let (layer, warnings) = stage(path, options)?;
    let mut imported = from_layer(path, &layer)?;
    imported.warnings.splice(0..0, warnings);
    Ok(imported)
}

/// The stage of the USD file `path` as one layer: the file's own layer when it has no
/// composition arcs (a `--variant` then only warns), else composed and flattened with
/// `options`' variant selections ([`compose`]); with the warnings of either.
pub fn stage(path: &Path, options: &compose::Options) -> Result<(Layer, Vec<String>)> {
    let bytes = std::fs::read(path)
        .map_err(|e| Error::input(path, None, format!("cannot read the file: {e}")))?;
    if !is_usdz(&bytes) {
        let layer = parse_layer(path, &bytes)?;
        if !compose::has_arcs(&layer) {
            let warnings = (options.variants.iter())
                .map(|(set, name)| format!("--variant {set}={name}: the file has no variant sets"))
                .collect();
            return Ok((layer, warnings));
        }
    }
    let c = compose::compose(path, options).map_err(|reason| {
        Error::input(
            path,
            None,
            format!("cannot compose the USD stage ({reason}); check the file and the files it references"),
        )
    })?;
    Ok((c.layer, c.warnings))
}

/// A prim of the type the walk looks for, with its ancestors.
struct Found<'a> {
    prim: &'a Prim,
    /// Ancestors from the root, the prim excluded.
    ancestors: Vec<&'a Prim>,
    path: String,
}

fn is_active(prim: &Prim) -> bool {
    prim.meta("active").and_then(Value::as_f64) != Some(0.0)
}

/// The active `def` prims of type `type_name` of `layer`, in file order.
fn find<'a>(layer: &'a Layer, type_name: &str) -> Vec<Found<'a>> {
    let mut found = Vec::new();
    for p in &layer.prims {
        walk(
            p,
            type_name,
            &mut Vec::new(),
            format!("/{}", p.name),
            &mut found,
        );
    }
    found
}

fn walk<'a>(
    prim: &'a Prim,
    type_name: &str,
    ancestors: &mut Vec<&'a Prim>,
    path: String,
    out: &mut Vec<Found<'a>>,
) {
    if prim.specifier != Specifier::Def || !is_active(prim) {
        return;
    }
    if prim.type_name == type_name {
        out.push(Found {
            prim,
            ancestors: ancestors.clone(),
            path: path.clone(),
        });
    }
    ancestors.push(prim);
    for c in &prim.children {
        walk(c, type_name, ancestors, format!("{path}/{}", c.name), out);
    }
    ancestors.pop();
}

/// `userProperties:drape_role` or customData `drape:role` of a prim.
fn role_of(prim: &Prim) -> Option<String> {
    let attr = prim
        .attribute("userProperties:drape_role")
        .and_then(|a| a.default.as_ref())
        .and_then(Value::as_str);
    let custom = || {
        prim.meta("customData")
            .and_then(|d| d.dict_get("drape:role"))
            .and_then(Value::as_str)
    };
    attr.or_else(custom).map(str::to_string)
}

/// The object Xform holding `found`'s mesh, if it is one in Blender's layout.
fn object_xform<'a>(found: &Found<'a>) -> Option<&'a Prim> {
    let parent = *found.ancestors.last()?;
    let generated = parent
        .meta("customData")
        .and_then(|d| d.dict_get("Blender:generated"))
        .and_then(Value::as_f64)
        == Some(1.0);
    let meshes = parent
        .children
        .iter()
        .filter(|c| c.type_name == "Mesh")
        .count();
    (parent.type_name == "Xform" && meshes == 1 && !generated).then_some(parent)
}

/// Builds the meshes of a parsed layer read from `path`.
pub fn from_layer(path: &Path, layer: &Layer) -> Result<Imported> {
    let info = StageInfo::from_layer(layer).map_err(|m| unreadable(path, m))?;
    let found = find(layer, "Mesh");
    let mut chains = Vec::with_capacity(found.len());
    let mut skins = Vec::with_capacity(found.len());
    for f in &found {
        let err =
            |m: String| Error::input(path, Some(&f.path), format!("{m}; export the scene again"));
        let skin = Skin::of(layer, f.prim, &f.path, &f.ancestors)
            .map_err(|m| err(format!("prim {}: {m}", f.path)))?;
        let placed_by: Vec<&Prim> = match &skin {
            Some(s) => s.skeleton.clone(),
            None => f.ancestors.iter().copied().chain([f.prim]).collect(),
        };
        let mut ops = Vec::new();
        for p in placed_by {
            ops.push(xform_ops(p).map_err(err)?);
        }
        chains.push(ops);
        skins.push(skin);
    }
    let mesh_times = |f: &Found, ops: &[XformOps], skin: &Option<Skin>| -> Vec<f64> {
        let mut t: Vec<f64> = ops.iter().flat_map(XformOps::times).collect();
        t.extend(skin.iter().flat_map(Skin::times));
        t.extend(
            f.prim
                .attribute("points")
                .map(sample_times)
                .unwrap_or_default(),
        );
        t.sort_by(f64::total_cmp);
        t.dedup();
        if skin.is_some() {
            t = with_every_frame(&t, &info);
        }
        t
    };
    let all_times: Vec<Vec<f64>> = found
        .iter()
        .zip(&chains)
        .zip(&skins)
        .map(|((f, c), s)| mesh_times(f, c, s))
        .collect();
    let t0 = info.start.unwrap_or_else(|| {
        all_times
            .iter()
            .filter_map(|t| t.first().copied())
            .fold(None, |m: Option<f64>, t| Some(m.map_or(t, |m| m.min(t))))
            .unwrap_or(0.0)
    });
    let mut used = HashSet::new();
    let mut meshes = Vec::with_capacity(found.len());
    for (((f, ops), times), skin) in found.iter().zip(&chains).zip(&all_times).zip(&skins) {
        let object = object_xform(f);
        let blender_name = |p: &Prim, key: &str| {
            p.attribute(key)
                .and_then(|a| a.default.as_ref())
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let object_name =
            object.and_then(|x| blender_name(x, "userProperties:blender:object_name"));
        let display = object_name
            .clone()
            .or_else(|| object.map(|x| x.name.clone()))
            .unwrap_or_else(|| f.prim.name.clone());
        let name = unique_name(&display, &mut used);
        let mut aliases = vec![f.path.clone(), f.prim.name.clone()];
        aliases.extend(object.map(|x| x.name.clone()));
        aliases.extend(blender_name(f.prim, "userProperties:blender:data_name"));
        aliases.retain(|a| a != &name);
        let reader = MeshReader {
            path,
            info: &info,
            found: f,
            ops,
            skin: skin.as_ref(),
            name: &name,
        };
        let mut m = reader.read(t0, times)?;
        m.aliases = aliases;
        m.role = role_of(f.prim).or_else(|| object.and_then(role_of));
        meshes.push(m);
    }
    mark_keyframe_meshes(&mut meshes);
    let frame_range = match (info.start, info.end) {
        (Some(s), Some(e)) => {
            let (a, b) = (info.frame_of(s).round(), info.frame_of(e).round());
            let ok = a.abs() < 1e9 && b.abs() < 1e9 && a <= b;
            ok.then_some((a as i32, b as i32))
        }
        _ => None,
    };
    let fps_authored =
        layer.meta("framesPerSecond").is_some() || layer.meta("timeCodesPerSecond").is_some();
    Ok(Imported {
        source: path.to_path_buf(),
        meshes,
        up: info.up,
        fps: fps_authored.then(|| info.fps()),
        frame_range,
        warnings: Vec::new(),
    })
}

/// `times` (time codes, sorted) with every whole frame between the first and the last
/// added: a skinned mesh is evaluated at every frame, since its points do not move
/// linearly between the joint animation's samples.
fn with_every_frame(times: &[f64], info: &StageInfo) -> Vec<f64> {
    let (Some(&first), Some(&last)) = (times.first(), times.last()) else {
        return times.to_vec();
    };
    let per_frame = info.time_codes_per_second / info.fps();
    let (a, b) = (info.frame_of(first).ceil(), info.frame_of(last).floor());
    if (b - a).partial_cmp(&1e6) != Some(std::cmp::Ordering::Less) {
        return times.to_vec();
    }
    let mut t = times.to_vec();
    let mut f = a;
    while f <= b {
        t.push(f * per_frame);
        f += 1.0;
    }
    t.sort_by(f64::total_cmp);
    t.dedup_by(|x, y| (*x - *y).abs() <= 1e-9 * per_frame.max(1.0));
    t
}

/// Role given to keyframe meshes (`<garment>_key_<frame>`, docs/reference.md, "Inputs" (b)).
pub const KEYFRAME_ROLE: &str = "keyframe";

/// Gives mesh `<name>_key_<frame>` the role [`KEYFRAME_ROLE`] when the file has a mesh
/// `<name>`, overriding a `garment` role it inherited from the garment it was duplicated
/// from (Blender copies custom properties such as `drape_role` to duplicates), so that it
/// is never simulated as a garment of its own.
pub(crate) fn mark_keyframe_meshes(meshes: &mut [ImportedMesh]) {
    let names: Vec<String> = meshes.iter().map(|m| m.name.clone()).collect();
    for m in meshes.iter_mut() {
        let others: Vec<&str> = names
            .iter()
            .map(String::as_str)
            .filter(|n| *n != m.name)
            .collect();
        if is_keyframe_mesh(&m.name, &others) {
            m.role = Some(KEYFRAME_ROLE.to_string());
        }
    }
}

struct MeshReader<'a> {
    path: &'a Path,
    info: &'a StageInfo,
    found: &'a Found<'a>,
    ops: &'a [XformOps<'a>],
    /// The UsdSkel skin, if the mesh is skinned ([`skel`]): its points are skinned and
    /// `ops` are the skeleton's.
    skin: Option<&'a Skin<'a>>,
    name: &'a str,
}

impl MeshReader<'_> {
    fn error(&self, message: impl std::fmt::Display) -> Error {
        Error::input(
            self.path,
            Some(self.name),
            format!("prim {}: {message}; export the mesh again", self.found.path),
        )
    }

    /// Object-to-world matrix in metres at time `t`.
    fn world_at(&self, t: f64) -> Result<Matrix4<f64>> {
        let mut m = Matrix4::identity();
        for ops in self.ops {
            let local = ops.matrix_at(t).map_err(|e| self.error(e))?;
            m = if ops.resets { local } else { m * local };
        }
        Ok(Matrix4::new_scaling(self.info.meters_per_unit) * m)
    }

    fn points_at(&self, t: f64) -> Result<Vec<Vec3>> {
        let Some(attr) = self.found.prim.attribute("points") else {
            return Ok(Vec::new());
        };
        let v = numbers_at(attr, t, Blend::Linear)
            .map_err(|e| self.error(e))?
            .unwrap_or_default();
        if v.len() % 3 != 0 {
            return Err(self.error(format!(
                "points has {} numbers, not a multiple of 3",
                v.len()
            )));
        }
        if let Some(i) = v.iter().position(|x| !x.is_finite()) {
            return Err(self.error(format!("point {} is not finite (NaN or infinity)", i / 3)));
        }
        let points: Vec<Vec3> = v
            .chunks_exact(3)
            .map(|c| Vec3::new(c[0], c[1], c[2]))
            .collect();
        match self.skin {
            Some(skin) => skin.apply(&points, t).map_err(|e| self.error(e)),
            None => Ok(points),
        }
    }

    fn read(&self, t0: f64, times: &[f64]) -> Result<ImportedMesh> {
        let prim = self.found.prim;
        let positions = self.points_at(t0)?;
        let n = positions.len();
        let topo = mesh::topology(prim, t0, n).map_err(|e| self.error(e))?;
        let (uvs, uv_problem) = match mesh::uvs_per_corner(prim, t0, &topo, n) {
            Ok(uvs) => (uvs, None),
            Err(e) => (None, Some(format!("prim {}: {e}", self.found.path))),
        };
        let weights =
            |name| mesh::point_weights(prim, name, t0, &topo, n).map_err(|e| self.error(e));
        let pin = weights("primvars:pin")?.unwrap_or_default();
        let key_weight = weights("primvars:key_weight")?;
        let corner_uvs = match &uvs {
            Some(uv) => topo.corners.iter().map(|c| c.map(|c| uv[c])).collect(),
            None => Vec::new(),
        };
        let faces = OutputFaces {
            counts: topo.polygons.iter().map(Vec::len).collect(),
            points: topo
                .polygons
                .iter()
                .flatten()
                .map(|&c| topo.point_of_corner[c])
                .collect(),
            uvs: match &uvs {
                Some(uv) => topo.polygons.iter().flatten().map(|&c| uv[c]).collect(),
                None => Vec::new(),
            },
        };
        let world = self.world_at(t0)?;
        let animation = if times.len() > 1 {
            let mut frames = Vec::with_capacity(times.len());
            let mut samples = Vec::with_capacity(times.len());
            for &t in times {
                let p = self.points_at(t)?;
                if p.len() != n {
                    return Err(self.error(format!(
                        "has {} points at time {t} but {n} at the first frame; the point \
                         count must not change over time",
                        p.len()
                    )));
                }
                let w = self.world_at(t)?;
                samples.push(
                    p.iter()
                        .map(|q| w.transform_point(&(*q).into()).coords)
                        .collect(),
                );
                frames.push(self.info.frame_of(t));
            }
            Some(Animation {
                frames,
                positions: samples,
            })
        } else {
            None
        };
        let world_linear: Mat3 = world.fixed_view::<3, 3>(0, 0).into_owned();
        let world_translation: Vec3 = world.fixed_view::<3, 1>(0, 3).into_owned();
        Ok(ImportedMesh {
            name: self.name.to_string(),
            aliases: Vec::new(),
            source: self.path.to_path_buf(),
            role: None,
            positions,
            triangles: topo.triangles,
            corner_uvs,
            uv_problem,
            pin,
            key_weight,
            faces,
            world_linear,
            world_translation,
            animation,
        })
    }
}
