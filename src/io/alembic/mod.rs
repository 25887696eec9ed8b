//! Alembic archives (`.abc`, the Ogawa back end) as scenes, read by our own code from the
//! public format description: [`ogawa`] (the container), [`core`] (objects, properties,
//! samples, time samplings), [`pod`] (number types), [`geom`] (the `PolyMesh`, `SubD` and
//! `Xform` schemas).
//!
//! * Meshes: every `PolyMesh` and `SubD` object (a SubD as its control cage) is one mesh
//!   with one particle per Alembic point in point order, so a garment's cache has the
//!   archive's point count and order. Faces are wound clockwise in Alembic; they are
//!   reversed into drape's counter-clockwise triangles (fans `(v_{n−1}, v_{n−1−k},
//!   v_{n−2−k})`) and polygons.
//! * Transforms: the `Xform` objects above a mesh, accumulated from the top
//!   (`M_world = M_parent · M_local`, a parent dropped where `.inherits` is false).
//! * Animation: time-sampled `P` and/or time-sampled transforms make a mesh animated; it
//!   is sampled at the union of those sample times (frame = time × fps), linear in
//!   between, as the USD reader does. The first frame is the earliest sample of the
//!   archive; the scene's frame range runs from the earliest to the latest sample.
//! * Frame rate: `--fps`, else the archive's `FramesPerTimeUnit` (Blender, Maya), else
//!   one over the time per cycle of its first uniform time sampling.
//! * Names: a mesh whose parent `Xform` holds no other mesh takes the `Xform`'s name (the
//!   object name in Blender's, Maya's and Houdini's layout); the mesh object's name and its
//!   full path select it too.
//! * UVs (`uv`, face-varying, indexed or not) are needed by garments only; pins and
//!   keyframe weights come from the `.arbGeomParams` `pin` and `key_weight`.
//! * Roles: a string `drape_role` in the `.userProperties` of the mesh or of its parent
//!   `Xform` (where Blender's exporter writes an object's custom property `drape_role`).
//! * Axes and units: Alembic is Y-up and has no unit; positions are metres.
//! * HDF5 archives (the back end before Alembic 1.5, 2013) are refused with the fix.
//! * Hostile files: every offset and size is checked against the file before it is
//!   followed ([`ogawa`]); a property has at most [`geom::MAX_SAMPLES`] samples, an
//!   object at most [`MAX_DEPTH`] ancestors, and all meshes together at most
//!   [`gltf::MAX_SAMPLED_POSITIONS`](crate::io::gltf::MAX_SAMPLED_POSITIONS) sampled
//!   positions.
pub mod core;
pub mod geom;
pub mod ogawa;
pub mod pod;

#[cfg(test)]
mod tests;

use crate::error::{Error, Result};
use crate::io::gltf::MAX_SAMPLED_POSITIONS;
use crate::io::objects::{unique_name, Imported, ImportedMesh};
use crate::scene::{Animation, OutputFaces, UpAxis};
use crate::{Mat3, Vec2, Vec3};
use core::{Archive, Compound, Object};
use geom::{MeshSchema, Topology, Track, XformSchema};
use nalgebra::Matrix4;
use std::collections::HashSet;
use std::path::Path;

/// The signature of HDF5 files.
pub const HDF5_SIGNATURE: &[u8] = b"\x89HDF";
/// Most nested objects followed.
pub const MAX_DEPTH: usize = 1000;

/// A mesh object found by the walk.
struct Found {
    obj: Object,
    schema: MeshSchema,
    /// Indices into [`Walk::xforms`] from the top down.
    chain: Vec<usize>,
    /// The parent `Xform` (index) if it holds no other mesh.
    object: Option<usize>,
}

struct Walk<'a, 'b> {
    ar: &'b Archive<'a>,
    path: &'b Path,
    xforms: Vec<(Object, XformSchema)>,
    found: Vec<Found>,
    seen: HashSet<u64>,
}

fn is_mesh(o: &Object) -> bool {
    o.meta
        .get("schema")
        .is_some_and(|s| s.starts_with("AbcGeom_PolyMesh") || s.starts_with("AbcGeom_SubD"))
}

fn is_xform(o: &Object) -> bool {
    o.meta
        .get("schema")
        .is_some_and(|s| s.starts_with("AbcGeom_Xform"))
}

impl Walk<'_, '_> {
    fn error(&self, obj: &str, m: impl std::fmt::Display) -> Error {
        let obj = if obj.is_empty() { "/" } else { obj };
        Error::input(
            self.path,
            Some(obj),
            format!("{m}; export the archive again"),
        )
    }

    fn visit(
        &mut self,
        obj: &Object,
        chain: &mut Vec<usize>,
        own_xform: Option<usize>,
    ) -> Result<()> {
        if chain.len() >= MAX_DEPTH {
            return Err(self.error(
                &obj.path,
                format!("objects are nested more than {MAX_DEPTH} deep"),
            ));
        }
        let children = self
            .ar
            .children(obj)
            .map_err(|m| self.error(&obj.path, m))?;
        let meshes = children.iter().filter(|c| is_mesh(c)).count();
        for (k, child) in children.iter().enumerate() {
            if let Some(g) = self.ar.child_offset(obj, k).filter(|&g| g != 0) {
                if !self.seen.insert(g) {
                    return Err(self.error(&child.path, "shares its data with another object"));
                }
            }
            let props = || {
                self.ar
                    .properties(child)
                    .map_err(|m| self.error(&child.path, m))
            };
            if is_xform(child) {
                let x = XformSchema::read(self.ar, &props()?)
                    .map_err(|m| self.error(&child.path, m))?;
                self.xforms.push((child.clone(), x));
                chain.push(self.xforms.len() - 1);
                self.visit(child, chain, Some(self.xforms.len() - 1))?;
                chain.pop();
                continue;
            }
            if is_mesh(child) {
                let schema =
                    MeshSchema::read(self.ar, &props()?).map_err(|m| self.error(&child.path, m))?;
                self.found.push(Found {
                    obj: child.clone(),
                    schema,
                    chain: chain.clone(),
                    object: own_xform.filter(|_| meshes == 1),
                });
            }
            self.visit(child, chain, None)?;
        }
        Ok(())
    }

    /// World matrix of `f` at `t`.
    fn world_at(&self, f: &Found, t: f64) -> std::result::Result<Matrix4<f64>, String> {
        let mut m = Matrix4::identity();
        for &x in &f.chain {
            let (local, inherits) = self.xforms[x].1.at(self.ar, t)?;
            m = if inherits { m * local } else { local };
        }
        Ok(m)
    }

    fn times(&self, f: &Found) -> Vec<f64> {
        let mut t = f.schema.points.times.clone();
        for &x in f.chain.iter().rev() {
            t.extend(self.xforms[x].1.times());
            if self.xforms[x].1.resets {
                break;
            }
        }
        t.sort_by(f64::total_cmp);
        t.dedup();
        t
    }
}

/// The string `drape_role` of a `.userProperties` compound inside `schema`, if any.
fn role_in(ar: &Archive, schema: &Compound) -> std::result::Result<Option<String>, String> {
    let Some(user) = schema.compound(ar, ".userProperties")? else {
        return Ok(None);
    };
    match Track::of(ar, &user, "drape_role")? {
        Some(t) if t.samples() > 0 => Ok(t.strings(ar, 0).ok().and_then(|s| s.into_iter().next())),
        _ => Ok(None),
    }
}

/// Frames per second of the archive: `FramesPerTimeUnit`, else one over the time per
/// cycle of its first uniform or cyclic time sampling after the identity one.
fn archive_fps(ar: &Archive) -> Option<f64> {
    let from_meta = ar
        .meta
        .get("FramesPerTimeUnit")
        .and_then(|s| s.trim().parse::<f64>().ok());
    let from_sampling = || {
        ar.time_samplings
            .iter()
            .skip(1)
            .find(|ts| !ts.is_acyclic())
            .map(|ts| 1.0 / ts.tpc)
    };
    let fps = from_meta
        .filter(|f| f.is_finite() && *f > 0.0)
        .or_else(from_sampling)?;
    let round = fps.round();
    Some(if (fps - round).abs() < 1e-6 {
        round
    } else {
        fps
    })
}

/// Reads every `PolyMesh` and `SubD` of the Alembic archive at `path`; `fps` (`--fps`)
/// overrides the archive's frame rate in converting times to frames.
pub fn read(path: &Path, fps: Option<f64>) -> Result<Imported> {
    let bytes = std::fs::read(path)
        .map_err(|e| Error::input(path, None, format!("cannot read the file: {e}")))?;
    if bytes.starts_with(HDF5_SIGNATURE) {
        return Err(Error::input(
            path,
            None,
            "the archive uses the HDF5 back end of Alembic before 2013, which drape does not \
             read; re-export it as Ogawa (the default of every current exporter)",
        ));
    }
    let ar = Archive::open(&bytes).map_err(|m| {
        Error::input(
            path,
            None,
            format!("not a readable Alembic (Ogawa) archive ({m}); export it again"),
        )
    })?;
    let mut walk = Walk {
        ar: &ar,
        path,
        xforms: Vec::new(),
        found: Vec::new(),
        seen: HashSet::new(),
    };
    walk.visit(&ar.top(), &mut Vec::new(), None)?;
    let file_fps = archive_fps(&ar);
    let fps = fps.or(file_fps).unwrap_or(crate::io::gltf::DEFAULT_FPS);
    let all_times: Vec<Vec<f64>> = walk.found.iter().map(|f| walk.times(f)).collect();
    let t0 = all_times
        .iter()
        .filter_map(|t| t.first().copied())
        .fold(None, |m: Option<f64>, t| Some(m.map_or(t, |m| m.min(t))))
        .unwrap_or(0.0);
    let mut budget = 0usize;
    let mut used = HashSet::new();
    let mut meshes = Vec::with_capacity(walk.found.len());
    for (f, times) in walk.found.iter().zip(&all_times) {
        let display = match f.object {
            Some(x) => walk.xforms[x].0.name.clone(),
            None => f.obj.name.clone(),
        };
        let name = unique_name(&display, &mut used);
        let mut m = read_mesh(&walk, f, &name, t0, times, fps, &mut budget)
            .map_err(|m| walk.error(&f.obj.path, m))?;
        m.aliases = vec![f.obj.path.clone(), f.obj.name.clone()];
        m.aliases.retain(|a| *a != name);
        let own = role_in(&ar, &f.schema.geom).map_err(|m| walk.error(&f.obj.path, m))?;
        let object = match f.object {
            Some(x) => role_in(&ar, &walk.xforms[x].1.compound)
                .map_err(|m| walk.error(&walk.xforms[x].0.path, m))?,
            None => None,
        };
        m.role = own.or(object);
        meshes.push(m);
    }
    crate::io::usd::mark_keyframe_meshes(&mut meshes);
    let frames: Vec<f64> = all_times
        .iter()
        .flatten()
        .map(|&t| frame_of(t, fps))
        .collect();
    let frame_range = match (
        frames.iter().copied().reduce(f64::min),
        frames.iter().copied().reduce(f64::max),
    ) {
        (Some(a), Some(b)) if a.abs() < 1e9 && b.abs() < 1e9 => {
            Some((a.round() as i32, b.round() as i32))
        }
        _ => None,
    };
    Ok(Imported {
        source: path.to_path_buf(),
        meshes,
        up: UpAxis::Y,
        fps: file_fps,
        frame_range,
        warnings: Vec::new(),
    })
}

/// The frame of time `t` (s) at `fps`, snapped to the whole frame it misses by rounding
/// alone (a uniform sampling's `t₀ + i/fps` gives 5.999… for frame 6).
fn frame_of(t: f64, fps: f64) -> f64 {
    let f = t * fps;
    if (f - f.round()).abs() <= 1e-9 * f.abs().max(1.0) {
        f.round()
    } else {
        f
    }
}

fn vec3(p: [f64; 3]) -> Vec3 {
    Vec3::new(p[0], p[1], p[2])
}

/// One mesh at `t0`, animated over `times` (s) at `fps` when it has more than one.
fn read_mesh(
    walk: &Walk,
    f: &Found,
    name: &str,
    t0: f64,
    times: &[f64],
    fps: f64,
    budget: &mut usize,
) -> std::result::Result<ImportedMesh, String> {
    let ar = walk.ar;
    let positions: Vec<Vec3> = f.schema.points_at(ar, t0)?.into_iter().map(vec3).collect();
    let n = positions.len();
    if times.len() > 1 {
        *budget = budget.saturating_add(times.len().saturating_mul(n));
        if *budget > MAX_SAMPLED_POSITIONS {
            return Err(format!(
                "its {} samples of {n} points take the animated meshes past the \
                 {MAX_SAMPLED_POSITIONS} positions drape keeps; shorten the animation or name \
                 fewer bodies with --body",
                times.len()
            ));
        }
    }
    let topo = f.schema.topology(ar, n)?;
    let (uvs, uv_problem) = match f.schema.uvs(ar, &topo) {
        Ok(uvs) => (uvs, None),
        Err(e) => (None, Some(format!("object {}: {e}", f.obj.path))),
    };
    let pin = f
        .schema
        .point_weights(ar, "pin", &topo)?
        .unwrap_or_default();
    let key_weight = f.schema.point_weights(ar, "key_weight", &topo)?;
    let (triangles, corners, faces) = wind(&topo, uvs.as_deref());
    let corner_uvs = match &uvs {
        Some(uv) => corners.iter().map(|c| c.map(|c| uv[c])).collect(),
        None => Vec::new(),
    };
    let world = walk.world_at(f, t0)?;
    let animation = if times.len() > 1 {
        let mut samples = Vec::with_capacity(times.len());
        for &t in times {
            let p = f.schema.points_at(ar, t)?;
            if p.len() != n {
                return Err(format!(
                    "has {} points at {t} s but {n} at the first frame; the point count must \
                     not change over time",
                    p.len()
                ));
            }
            let w = walk.world_at(f, t)?;
            samples.push(
                p.into_iter()
                    .map(|q| w.transform_point(&vec3(q).into()).coords)
                    .collect(),
            );
        }
        Some(Animation {
            frames: times.iter().map(|&t| frame_of(t, fps)).collect(),
            positions: samples,
        })
    } else {
        None
    };
    let world_linear: Mat3 = world.fixed_view::<3, 3>(0, 0).into_owned();
    let world_translation: Vec3 = world.fixed_view::<3, 1>(0, 3).into_owned();
    Ok(ImportedMesh {
        name: name.to_string(),
        aliases: Vec::new(),
        source: walk.path.to_path_buf(),
        role: None,
        positions,
        triangles,
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

/// Triangles (counter-clockwise), the face corner of each triangle corner, and the
/// polygons with their UVs, from Alembic's clockwise faces.
fn wind(topo: &Topology, uvs: Option<&[Vec2]>) -> (Vec<[usize; 3]>, Vec<[usize; 3]>, OutputFaces) {
    let mut triangles = Vec::new();
    let mut corners = Vec::new();
    let mut faces = OutputFaces::default();
    let mut base = 0;
    for &n in &topo.counts {
        let r: Vec<usize> = (base..base + n).rev().collect();
        base += n;
        if n < 3 {
            continue;
        }
        for k in 1..n - 1 {
            let c = [r[0], r[k], r[k + 1]];
            triangles.push(c.map(|c| topo.point_of_corner[c]));
            corners.push(c);
        }
        faces.counts.push(n);
        faces
            .points
            .extend(r.iter().map(|&c| topo.point_of_corner[c]));
        if let Some(uv) = uvs {
            faces.uvs.extend(r.iter().map(|&c| uv[c]));
        }
    }
    (triangles, corners, faces)
}
