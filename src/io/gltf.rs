//! glTF 2.0 garments (`.gltf` with embedded or external buffers, `.glb`) on the `gltf` crate.
//!
//! * The default scene (else the first, else every root node) is walked from its roots;
//!   each node's world transform is its local TRS or matrix composed with its parents'.
//! * Every node with a mesh gives one mesh: its primitives concatenated in order.
//!   `TRIANGLES`, `TRIANGLE_STRIP` and `TRIANGLE_FAN` primitives are read (strips and fans
//!   are turned into triangles, dropping the strips' degenerate joining triangles);
//!   points and lines primitives are skipped (they carry no cloth).
//! * Attributes: `POSITION`, `TEXCOORD_0` (the sewing panels), custom `_PIN` (scalar pin
//!   weight, float or normalised integer; default 0) and `_DRAPE_INDEX` (scalar source
//!   vertex number, float or integer). Custom names are matched case-insensitively.
//! * Split vertices are welded by bit-identical position ([`weld`](super::weld)); the cache
//!   has one point per glTF vertex, or `max(_DRAPE_INDEX) + 1` points (SPEC "Outputs").
//! * Roles: node or mesh `extras` `{"drape": {"role": "garment"}}` or
//!   `{"drape_role": "garment"}` (Blender's custom property); the node's wins.
//! * Names: node name, else mesh name, else file stem; repeated names get `.1`, `.2`, ...
//!
//! Static garments only so far: skins and morph targets are ignored. glTF is Y-up.
use super::weld::SplitMesh;
use crate::error::{Error, Result};
use crate::scene::{Garment, Scene, UpAxis};
use crate::{Mat3, Vec2, Vec3};
use gltf::accessor::{DataType, Dimensions, Iter};
use gltf::mesh::{Mode, Semantic};
use nalgebra::{Matrix4, Quaternion, UnitQuaternion};
use std::collections::HashSet;
use std::path::Path;

/// Role value marking a garment.
const GARMENT_ROLE: &str = "garment";

/// Reads a glTF file: every mesh marked as a garment (SPEC "Common options":
/// `extras.drape.role = "garment"` or `extras.drape_role`) becomes a
/// [`Garment`]; with none marked, `garments` is empty (the caller then asks for
/// `--garment NAME`, see [`select_garments`]).
pub fn read(path: &Path) -> Result<Scene> {
    let garments = read_meshes(path)?
        .into_iter()
        .filter(|(_, role)| role.as_deref() == Some(GARMENT_ROLE))
        .map(|(g, _)| require_uvs(g))
        .collect::<Result<Vec<_>>>()?;
    Ok(scene(garments))
}

/// Reads every mesh node of a glTF file as a [`Garment`] with its role
/// (`extras.drape.role` / `extras.drape_role`, `None` if unmarked), in scene-walk order.
/// A mesh without `TEXCOORD_0` comes back with empty `corner_uvs` (bodies need no UVs).
pub fn read_meshes(path: &Path) -> Result<Vec<(Garment, Option<String>)>> {
    // The gltf crate indexes a few arrays without checking on malformed files; a panic
    // there is still the file's fault, so it becomes an input error.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| read_meshes_inner(path)))
        .unwrap_or_else(|_| {
            Err(Error::input(
                path,
                None,
                "not a readable glTF file (malformed accessors or indices); export it again as glTF 2.0",
            ))
        })
}

/// The garments named in `names` (`--garment`), or, if `names` is empty, the meshes marked
/// as garments. Errors name the fix: a missing name lists the meshes available; no marked
/// mesh asks for `--garment NAME` or the `drape_role` property. A name may also be the file
/// stem when the file holds exactly one mesh.
pub fn select_garments(path: &Path, names: &[String]) -> Result<Scene> {
    let meshes = read_meshes(path)?;
    let available = || {
        let list: Vec<&str> = meshes.iter().map(|(g, _)| g.name.as_str()).collect();
        if list.is_empty() {
            "the file has no meshes".to_string()
        } else {
            format!("meshes in the file: {}", list.join(", "))
        }
    };
    let mut garments = Vec::new();
    if names.is_empty() {
        garments.extend(
            meshes
                .iter()
                .filter(|(_, role)| role.as_deref() == Some(GARMENT_ROLE))
                .map(|(g, _)| g.clone()),
        );
        if garments.is_empty() {
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
    } else {
        let stem = path.file_stem().and_then(|s| s.to_str());
        let mut seen = HashSet::new();
        for name in names {
            if !seen.insert(name) {
                continue;
            }
            let found = meshes
                .iter()
                .find(|(g, _)| &g.name == name)
                .or_else(|| (meshes.len() == 1 && stem == Some(name.as_str())).then(|| &meshes[0]));
            match found {
                Some((g, _)) => garments.push(g.clone()),
                None => {
                    return Err(Error::input(
                        path,
                        Some(name),
                        format!("no such mesh; {}", available()),
                    ))
                }
            }
        }
    }
    let garments = garments
        .into_iter()
        .map(require_uvs)
        .collect::<Result<_>>()?;
    Ok(scene(garments))
}

fn scene(garments: Vec<Garment>) -> Scene {
    Scene {
        garments,
        bodies: Vec::new(),
        up: UpAxis::Y,
        fps: None,
        frame_range: None,
    }
}

fn require_uvs(g: Garment) -> Result<Garment> {
    if g.corner_uvs.len() != g.triangles.len() {
        return Err(Error::input(
            &g.source,
            Some(&g.name),
            "has no UV map (TEXCOORD_0) on all its faces; add a UV map (unwrap the garment \
             into its sewing panels) and export again",
        ));
    }
    Ok(g)
}

fn unreadable(path: &Path, reason: impl std::fmt::Display) -> Error {
    Error::input(
        path,
        None,
        format!("not a readable glTF file ({reason}); export it again as glTF 2.0"),
    )
}

fn read_meshes_inner(path: &Path) -> Result<Vec<(Garment, Option<String>)>> {
    let gltf = gltf::Gltf::open(path).map_err(|e| unreadable(path, e))?;
    let base = path.parent().unwrap_or_else(|| Path::new("."));
    let buffers = gltf::import_buffers(&gltf.document, Some(base), gltf.blob)
        .map_err(|e| unreadable(path, e))?;
    let doc = &gltf.document;
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("mesh")
        .to_string();
    let mut used_names = HashSet::new();
    let mut out = Vec::new();
    for (node, world) in walk_nodes(doc) {
        let Some(mesh) = node.mesh() else { continue };
        let base_name = node
            .name()
            .or(mesh.name())
            .filter(|n| !n.is_empty())
            .unwrap_or(&stem)
            .to_string();
        let name = unique_name(&base_name, &mut used_names);
        let role = role_of(node.extras()).or_else(|| role_of(mesh.extras()));
        let reader = MeshReader {
            path,
            name: &name,
            buffers: &buffers,
        };
        let split = reader.read(&mesh, &world)?;
        out.push((split.into_garment()?, role));
    }
    Ok(out)
}

fn unique_name(base: &str, used: &mut HashSet<String>) -> String {
    let mut name = base.to_string();
    let mut k = 1;
    while !used.insert(name.clone()) {
        name = format!("{base}.{k}");
        k += 1;
    }
    name
}

/// Nodes of the default scene (else the first scene, else all root nodes) in depth-first
/// pre-order with their world transforms. Each node is visited once (guards cycles).
fn walk_nodes(doc: &gltf::Document) -> Vec<(gltf::Node<'_>, Matrix4<f64>)> {
    let roots: Vec<gltf::Node> = match doc.default_scene().or_else(|| doc.scenes().next()) {
        Some(s) => s.nodes().collect(),
        None => {
            let children: HashSet<usize> = doc
                .nodes()
                .flat_map(|n| n.children().map(|c| c.index()))
                .collect();
            doc.nodes()
                .filter(|n| !children.contains(&n.index()))
                .collect()
        }
    };
    let mut visited = HashSet::new();
    let mut out = Vec::new();
    let mut stack: Vec<(gltf::Node, Matrix4<f64>)> = roots
        .into_iter()
        .rev()
        .map(|n| (n, Matrix4::identity()))
        .collect();
    while let Some((node, parent)) = stack.pop() {
        if !visited.insert(node.index()) {
            continue;
        }
        let world = parent * local_transform(&node);
        let children: Vec<gltf::Node> = node.children().collect();
        for c in children.into_iter().rev() {
            stack.push((c, world));
        }
        out.push((node, world));
    }
    out
}

/// Local transform of a node in f64: its matrix, or `T · R · S` (glTF 2.0 §5.25).
fn local_transform(node: &gltf::Node) -> Matrix4<f64> {
    match node.transform() {
        gltf::scene::Transform::Matrix { matrix } => {
            Matrix4::from_fn(|r, c| f64::from(matrix[c][r])) // column-major
        }
        gltf::scene::Transform::Decomposed {
            translation: t,
            rotation: q,
            scale: s,
        } => {
            let [t, q, s] = [t.to_vec(), q.to_vec(), s.to_vec()]
                .map(|v| v.into_iter().map(f64::from).collect::<Vec<f64>>());
            let rot = UnitQuaternion::new_normalize(Quaternion::new(q[3], q[0], q[1], q[2]));
            let mut m = rot.to_homogeneous()
                * Matrix4::new_nonuniform_scaling(&Vec3::new(s[0], s[1], s[2]));
            m.fixed_view_mut::<3, 1>(0, 3)
                .copy_from(&Vec3::new(t[0], t[1], t[2]));
            m
        }
    }
}

/// `"garment"` from `{"drape": {"role": ...}}` or `{"drape_role": ...}` extras.
fn role_of(extras: &gltf::json::Extras) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(extras.as_ref()?.get()).ok()?;
    let role = value
        .get("drape")
        .and_then(|d| d.get("role"))
        .or_else(|| value.get("drape_role"))?;
    role.as_str().map(str::to_string)
}

/// Reads the primitives of one mesh node into a [`SplitMesh`].
struct MeshReader<'a> {
    path: &'a Path,
    name: &'a str,
    buffers: &'a [gltf::buffer::Data],
}

impl MeshReader<'_> {
    fn error(&self, message: impl Into<String>) -> Error {
        Error::input(self.path, Some(self.name), message)
    }

    fn read(&self, mesh: &gltf::Mesh, world: &Matrix4<f64>) -> Result<SplitMesh> {
        let mut positions: Vec<Vec3> = Vec::new();
        let mut uvs: Vec<Vec2> = Vec::new();
        let mut pins: Vec<f64> = Vec::new();
        let mut source_index: Vec<f64> = Vec::new();
        let mut triangles: Vec<[usize; 3]> = Vec::new();
        let (mut all_uv, mut any_index, mut all_index) = (true, false, true);
        let get = |b: gltf::Buffer| self.buffers.get(b.index()).map(|d| d.0.as_slice());
        for prim in mesh.primitives() {
            let mode = prim.mode();
            if !matches!(
                mode,
                Mode::Triangles | Mode::TriangleStrip | Mode::TriangleFan
            ) {
                continue;
            }
            let p = prim.index();
            let reader = prim.reader(get);
            let pos: Vec<Vec3> = reader
                .read_positions()
                .ok_or_else(|| self.unreadable_attr(p, "POSITION"))?
                .map(|q| Vec3::new(q[0].into(), q[1].into(), q[2].into()))
                .collect();
            let n = pos.len();
            let base = positions.len();
            match reader.read_tex_coords(0) {
                Some(t) => uvs.extend(t.into_f32().map(|t| Vec2::new(t[0].into(), t[1].into()))),
                None => all_uv = false,
            }
            match self.custom_scalar(&prim, "PIN")? {
                Some(w) => pins.extend(w),
                None => pins.extend(std::iter::repeat_n(0.0, n)),
            }
            match self.custom_scalar(&prim, "DRAPE_INDEX")? {
                Some(k) => {
                    any_index = true;
                    source_index.extend(k)
                }
                None => all_index = false,
            }
            let counts_ok = (!all_uv || uvs.len() == base + n)
                && pins.len() == base + n
                && (!all_index || source_index.len() == base + n || !any_index);
            if !counts_ok {
                return Err(self.error(format!(
                    "primitive {p}: TEXCOORD_0, _PIN or _DRAPE_INDEX has a different vertex \
                     count than POSITION; export the mesh again"
                )));
            }
            let idx: Vec<usize> = match reader.read_indices() {
                Some(i) => i.into_u32().map(|i| i as usize).collect(),
                None => (0..n).collect(),
            };
            if let Some(&bad) = idx.iter().find(|&&i| i >= n) {
                return Err(self.error(format!(
                    "primitive {p}: index {bad} is beyond its {n} vertices; export the mesh again"
                )));
            }
            triangles.extend(
                assemble_triangles(mode, &idx)
                    .into_iter()
                    .map(|t| t.map(|i| i + base)),
            );
            positions.extend(pos);
        }
        if any_index && !all_index {
            return Err(self.error(
                "has _DRAPE_INDEX on some primitives only; export the attribute on the whole mesh",
            ));
        }
        let world_linear: Mat3 = world.fixed_view::<3, 3>(0, 0).into_owned();
        let world_translation: Vec3 = world.fixed_view::<3, 1>(0, 3).into_owned();
        Ok(SplitMesh {
            name: self.name.to_string(),
            source: self.path.to_path_buf(),
            positions,
            uvs: if all_uv { uvs } else { Vec::new() },
            pins,
            triangles,
            source_index: any_index.then_some(source_index),
            world_linear,
            world_translation,
        })
    }

    fn unreadable_attr(&self, prim: usize, attr: &str) -> Error {
        self.error(format!(
            "primitive {prim}: {attr} is missing or its buffer is too short; export the mesh again"
        ))
    }

    /// A custom scalar attribute `_NAME` (any case) as f64, normalised integers mapped to
    /// [0, 1]; `None` if absent.
    fn custom_scalar(&self, prim: &gltf::Primitive, name: &str) -> Result<Option<Vec<f64>>> {
        let Some(acc) = prim.attributes().find_map(|(sem, acc)| match sem {
            Semantic::Extras(s) if s.eq_ignore_ascii_case(name) => Some(acc),
            _ => None,
        }) else {
            return Ok(None);
        };
        let attr = format!("_{name}");
        if acc.dimensions() != Dimensions::Scalar {
            return Err(self.error(format!(
                "primitive {}: {attr} must be a scalar attribute (one number per vertex); \
                 export it as a float attribute",
                prim.index()
            )));
        }
        let norm = acc.normalized();
        let s = |max: f64| if norm { max } else { 1.0 };
        let b = self.buffers;
        let values = match acc.data_type() {
            DataType::F32 => scalars::<f32>(acc, b, 1.0),
            DataType::U8 => scalars::<u8>(acc, b, s(255.0)),
            DataType::U16 => scalars::<u16>(acc, b, s(65535.0)),
            DataType::U32 => scalars::<u32>(acc, b, 1.0),
            DataType::I8 => scalars::<i8>(acc, b, s(127.0)),
            DataType::I16 => scalars::<i16>(acc, b, s(32767.0)),
        };
        values
            .map(Some)
            .ok_or_else(|| self.unreadable_attr(prim.index(), &attr))
    }
}

/// The values of a scalar accessor as f64 divided by `scale`; `None` if its buffer is short.
fn scalars<'a, 's, T: gltf::accessor::Item + Into<f64>>(
    acc: gltf::Accessor<'a>,
    buffers: &'s [gltf::buffer::Data],
    scale: f64,
) -> Option<Vec<f64>> {
    let get = |b: gltf::Buffer<'a>| -> Option<&'s [u8]> {
        buffers.get(b.index()).map(|d| d.0.as_slice())
    };
    Iter::<T>::new(acc, get).map(|it| it.map(|v| v.into() / scale).collect())
}

/// Triangles of a primitive from its index list (glTF 2.0 §3.7.2.1 topology types).
fn assemble_triangles(mode: Mode, idx: &[usize]) -> Vec<[usize; 3]> {
    match mode {
        Mode::Triangles => idx.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect(),
        Mode::TriangleStrip => (0..idx.len().saturating_sub(2))
            .map(|i| {
                let o = i % 2;
                [idx[i], idx[i + 1 + o], idx[i + 2 - o]]
            })
            .filter(|t| t[0] != t[1] && t[1] != t[2] && t[0] != t[2])
            .collect(),
        Mode::TriangleFan => (1..idx.len().saturating_sub(1))
            .map(|i| [idx[i], idx[i + 1], idx[0]])
            .filter(|t| t[0] != t[1] && t[1] != t[2] && t[0] != t[2])
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
#[path = "gltf_tests.rs"]
mod tests;
