//! Houdini JSON geometry (`.geo`) and `$F`-numbered sequences of it.
//!
//! * One file is one mesh named after the file stem: one particle per Houdini point in
//!   point order (the cache has the point count and order, docs/reference.md, "Outputs"), `P` positions,
//!   vertex `uv` (else point `uv`) as the sewing panels, point `pin` weights, and the role
//!   from a detail string attribute `drape_role` if present. Houdini is Y-up and has no
//!   unit: positions are metres.
//! * Winding: Houdini polygons run clockwise seen from their front (its normals follow the
//!   left-hand rule), drape's triangles counter-clockwise, so each polygon `v₀ … v_{n−1}`
//!   is reversed and fanned: `(v_{n−1}, v_{n−1−k}, v_{n−2−k})`, `k = 0 … n−3`.
//! * Sequences: a path whose file name holds a frame field `$F`, `$F4`, `${F4}`
//!   ([`FramePattern`], as the `.geo` cache writer expands them) names every file in its
//!   directory that is the pattern expanded at some frame. Frame by frame they must share
//!   their topology; together they are one mesh animated at those frames, named after the
//!   file name without the frame number (`body.$F4.geo` → `body`), a collision body
//!   unless marked otherwise.
pub mod format;
pub mod write;

#[cfg(test)]
#[path = "houdini_geo/tests.rs"]
mod tests;

use crate::error::{Error, Result};
use crate::format::FramePattern;
use crate::io::objects::{stem_name, Imported, ImportedMesh};
use crate::scene::{Animation, OutputFaces, UpAxis};
use crate::{Mat3, Vec2, Vec3};
use std::path::{Path, PathBuf};

/// True if the file name of `path` holds a `$F` frame field (see
/// [`FramePattern`], shared with the `.geo` cache writer).
pub fn is_sequence_pattern(path: &Path) -> bool {
    FramePattern::parse(path).is_ok()
}

/// A file of a sequence: its frame and where the frame number sits in its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SequenceFile {
    /// Frame number.
    pub frame: i32,
    /// File name.
    pub name: String,
    /// Byte range of the frame number in `name`.
    pub digits: std::ops::Range<usize>,
}

impl SequenceFile {
    /// The file name without the frame number and extension, separators trimmed
    /// (`body.0001.geo` → `body`).
    pub fn mesh_name(&self) -> String {
        let rest = &self.name[self.digits.end..];
        let before_ext = rest.split('.').next().unwrap_or("");
        let name = format!("{}{before_ext}", &self.name[..self.digits.start]);
        let name = name.trim_matches(|c| c == '.' || c == '_' || c == '-');
        if name.is_empty() {
            "sequence".to_string()
        } else {
            name.to_string()
        }
    }
}

/// The frame `name` stands for under `pattern`: some run of digits (with its sign) in
/// `name` is a frame number whose expansion of the pattern is exactly `name`.
pub fn match_frame(pattern: &FramePattern, name: &str) -> Option<SequenceFile> {
    let b = name.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if !b[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        let signed = if i > 0 && b[i - 1] == b'-' { i - 1 } else { i };
        for s in [signed, i] {
            let Ok(frame) = name[s..j].parse::<i32>() else {
                continue;
            };
            let expanded = pattern.path(frame);
            if expanded.file_name().and_then(|n| n.to_str()) == Some(name) {
                return Some(SequenceFile {
                    frame,
                    name: name.to_string(),
                    digits: s..j,
                });
            }
        }
        i = j;
    }
    None
}

fn unreadable(path: &Path, reason: impl std::fmt::Display) -> Error {
    Error::input(
        path,
        None,
        format!("not readable Houdini JSON geometry ({reason}); save it again as ASCII .geo"),
    )
}

/// Decodes one `.geo` file.
pub fn read_geo(path: &Path) -> Result<format::Geo> {
    let bytes = std::fs::read(path)
        .map_err(|e| Error::input(path, None, format!("cannot read the file: {e}")))?;
    if bytes.starts_with(b"PGEOMETRY") {
        return Err(unreadable(
            path,
            "it is the old pre-H12 text format; save it as JSON .geo",
        ));
    }
    if bytes.first() == Some(&0x7f) || bytes.starts_with(b"Bgeo") || bytes.starts_with(b"NSJb") {
        return Err(unreadable(
            path,
            "it is binary geometry (.bgeo); save it as ASCII .geo",
        ));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        unreadable(
            path,
            format!("not UTF-8 text at byte {}", e.utf8_error().valid_up_to()),
        )
    })?;
    format::parse(&text).map_err(|e| unreadable(path, e))
}

/// Triangles (drape winding), corner UVs and pins of decoded geometry.
pub fn to_mesh(path: &Path, name: &str, geo: &format::Geo) -> Result<ImportedMesh> {
    let err = |m: String| Error::input(path, Some(name), format!("{m}; export the geometry again"));
    let mut triangles = Vec::new();
    let mut corner_vertices = Vec::new();
    for poly in &geo.polygons {
        let r: Vec<usize> = poly.iter().rev().copied().collect();
        for k in 1..r.len().saturating_sub(1) {
            let c = [r[0], r[k], r[k + 1]];
            let mut t = [0usize; 3];
            for (slot, &v) in t.iter_mut().zip(&c) {
                *slot = *geo
                    .point_of_vertex
                    .get(v)
                    .ok_or_else(|| err(format!("polygon vertex {v} is not in the topology")))?;
            }
            triangles.push(t);
            corner_vertices.push(c);
        }
    }
    let uv = |a: [f64; 2]| Vec2::new(a[0], a[1]);
    let corner_uvs = match (&geo.vertex_uv, &geo.point_uv) {
        (Some(vuv), _) => corner_vertices
            .iter()
            .map(|c| c.map(|v| vuv.get(v).copied().map(uv).unwrap_or_default()))
            .collect(),
        (None, Some(puv)) => triangles
            .iter()
            .map(|t| t.map(|p| puv.get(p).copied().map(uv).unwrap_or_default()))
            .collect(),
        (None, None) => Vec::new(),
    };
    let mut faces = OutputFaces::default();
    for poly in geo.polygons.iter().filter(|p| p.len() >= 3) {
        faces.counts.push(poly.len());
        for &v in poly.iter().rev() {
            faces
                .points
                .push(geo.point_of_vertex.get(v).copied().unwrap_or(0));
            let uv = match (&geo.vertex_uv, &geo.point_uv) {
                (Some(vuv), _) => vuv.get(v).copied(),
                (None, Some(puv)) => geo
                    .point_of_vertex
                    .get(v)
                    .and_then(|&p| puv.get(p))
                    .copied(),
                (None, None) => None,
            };
            if let Some(uv) = uv {
                faces.uvs.push(Vec2::new(uv[0], uv[1]));
            }
        }
    }
    let positions: Vec<Vec3> = geo
        .points
        .iter()
        .map(|p| Vec3::new(p[0], p[1], p[2]))
        .collect();
    if let Some(i) = positions
        .iter()
        .position(|p| !p.iter().all(|c| c.is_finite()))
    {
        return Err(err(format!(
            "point {i} has a non-finite position (NaN or infinity)"
        )));
    }
    Ok(ImportedMesh {
        uv_problem: None,
        name: name.to_string(),
        aliases: Vec::new(),
        source: path.to_path_buf(),
        role: geo.role.clone(),
        positions,
        triangles,
        corner_uvs,
        pin: geo.pin.clone().unwrap_or_default(),
        key_weight: geo.key_weight.clone(),
        faces,
        world_linear: Mat3::identity(),
        world_translation: Vec3::zeros(),
        animation: None,
    })
}

/// Reads a `.geo` file, or a `$F` sequence of them, as one mesh.
pub fn read(path: &Path) -> Result<Imported> {
    let Ok(pattern) = FramePattern::parse(path) else {
        let mesh = to_mesh(path, &stem_name(path), &read_geo(path)?)?;
        return Ok(imported(path, vec![mesh], None));
    };
    let files = sequence_files(path, &pattern)?;
    let dir = path.parent().unwrap_or_else(|| Path::new(""));
    let first = &files[0];
    let name = first.mesh_name();
    let first_path = dir.join(&first.name);
    let mut mesh = to_mesh(&first_path, &name, &read_geo(&first_path)?)?;
    mesh.source = path.to_path_buf();
    let mut positions = vec![mesh.positions.clone()];
    for f in &files[1..] {
        let p = dir.join(&f.name);
        let m = to_mesh(&p, &name, &read_geo(&p)?)?;
        if m.positions.len() != mesh.positions.len() || m.triangles != mesh.triangles {
            return Err(Error::input(
                &p,
                Some(&name),
                format!(
                    "has {} points and {} triangles but frame {} has {} and {}; every \
                     frame of a sequence must have the same topology",
                    m.positions.len(),
                    m.triangles.len(),
                    first.frame,
                    mesh.positions.len(),
                    mesh.triangles.len()
                ),
            ));
        }
        positions.push(m.positions);
    }
    if files.len() > 1 {
        mesh.animation = Some(Animation {
            frames: files.iter().map(|f| f64::from(f.frame)).collect(),
            positions,
        });
    }
    let last = files[files.len() - 1].frame;
    Ok(imported(path, vec![mesh], Some((first.frame, last))))
}

fn imported(path: &Path, meshes: Vec<ImportedMesh>, frame_range: Option<(i32, i32)>) -> Imported {
    Imported {
        warnings: Vec::new(),
        source: path.to_path_buf(),
        meshes,
        up: UpAxis::Y,
        fps: None,
        frame_range,
    }
}

/// The files matching `pattern` in `path`'s directory, by ascending frame (at least one).
pub fn sequence_files(path: &Path, pattern: &FramePattern) -> Result<Vec<SequenceFile>> {
    let dir: PathBuf = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let entries = std::fs::read_dir(&dir).map_err(|e| {
        Error::input(
            path,
            None,
            format!("cannot list the directory {}: {e}", dir.display()),
        )
    })?;
    let mut files: Vec<SequenceFile> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str().and_then(|n| match_frame(pattern, n)))
        .collect();
    files.sort_by_key(|f| f.frame);
    files.dedup_by_key(|f| f.frame);
    if files.is_empty() {
        let example = pattern.path(1);
        return Err(Error::input(
            path,
            None,
            format!(
                "no file matches the frame pattern (looked for names like {} in {}); check \
                 the path and the $F padding",
                example.file_name().and_then(|n| n.to_str()).unwrap_or("?"),
                dir.display()
            ),
        ));
    }
    Ok(files)
}
