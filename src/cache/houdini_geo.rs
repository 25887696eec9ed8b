//! Houdini `.geo` sequences: one JSON geometry file per frame, named by the `$F`/`$F4`
//! field of the output path ([`crate::format::FramePattern`]).
//!
//! Each file is Houdini's JSON geometry layout (`.geo` as Houdini saves it: a flat array
//! of alternating keys and values):
//!
//! ```text
//! [ "fileversion","18.5.0", "hasindex",false,
//!   "pointcount",P, "vertexcount",V, "primitivecount",N,
//!   "info",{ "software":..., "bounds":[xmin,xmax,ymin,ymax,zmin,zmax], ... },
//!   "topology",[ "pointref",[ "indices",[point of each vertex] ] ],
//!   "attributes",[
//!     "vertexattributes",[ [ [ "scope","public","type","numeric","name","uv",
//!         "options",{"type":{"type":"string","value":"texturecoord"}} ],
//!       [ "size",3,"storage","fpreal32","defaults",[...],
//!         "values",[ "size",3,"storage","fpreal32","tuples",[[u,v,0],...] ] ] ] ],
//!     "pointattributes",[ ...the same for "P" (type "point"), tuples [[x,y,z],...] ] ],
//!   "primitives",[ [ ["type","Polygon_run"],
//!       ["startvertex",0,"nprimitives",N,"nvertices_rle",[count,repeat,...]] ] ] ]
//! ```
//! Points are the garment's output points (source order, object-local, f32 written as the
//! shortest decimal that reads back exactly); vertices are the polygon corners. Houdini
//! winds front faces clockwise, the source (glTF, USD, Blender) counter-clockwise, so
//! every polygon's corners are written in reverse order (its UVs with them), as Houdini's
//! own importers do. No date or host is written: the same bake gives the same bytes.
//!
//! **Partial files.** Frame F goes to `<file of F>.partial` (written as `.partial.tmp` and
//! renamed, so it is complete whenever it exists) before the next frame starts;
//! [`CacheWriter::finish`] renames every frame file to its final name at the end, so an
//! interrupted or failed bake leaves the finished frames as `shirt.0001.geo.partial`, ...
//! and never mixes them into an existing sequence. A bake with `--force` over an existing
//! sequence removes, when it finishes, that sequence's frames it did not write again.
use super::partial::{write_error, Partial, PartialSequence};
use super::{CacheMeta, CacheWriter, Reopen};
use crate::error::{Error, Result};
use crate::format::text::{bounds, check_finite, f32_text, to_f32};
use crate::Vec3;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The `fileversion` written: a Houdini release whose JSON geometry layout this is (read
/// by that release and every later one).
pub const FILE_VERSION: &str = "18.5.0";

/// Writes a `.geo` sequence, one file per frame.
#[derive(Debug)]
pub struct GeoWriter {
    files: PartialSequence,
    start_frame: i32,
    points: usize,
    /// Number of polygons and of vertices (polygon corners).
    counts: (usize, usize),
    /// `"topology"` and the vertex attributes, the same every frame.
    topology: String,
    vertex_attributes: String,
    primitives: String,
}

impl GeoWriter {
    /// Prepares the sequence `out` (a path with a `$F` field); writes nothing yet.
    pub fn create(out: &Path, meta: &CacheMeta) -> Result<Self> {
        GeoWriter::with_files(out, meta, || {
            PartialSequence::new(out, meta.replace_partial)
        })
    }

    /// The writer of `meta`'s frames, to the sequence `files` opens.
    fn with_files(
        out: &Path,
        meta: &CacheMeta,
        files: impl FnOnce() -> Result<PartialSequence>,
    ) -> Result<Self> {
        let faces = &meta.faces;
        // Vertices in Houdini winding: each polygon's corners reversed.
        let mut order = Vec::with_capacity(faces.points.len());
        let mut start = 0;
        for &n in &faces.counts {
            order.extend((start..start + n).rev());
            start += n;
        }
        if start != faces.points.len() {
            return Err(Error::Internal(format!(
                "{}: face corner counts add up to {start}, not {}",
                out.display(),
                faces.points.len()
            )));
        }
        let mut topology = String::from("\t\"topology\",[\n\t\t\"pointref\",[\n\t\t\t\"indices\",");
        json_list(
            &mut topology,
            order.iter().map(|&c| faces.points[c].to_string()),
        );
        topology.push_str("\n\t\t]\n\t],\n");
        let vertex_attributes = if faces.uvs.is_empty() {
            String::new()
        } else {
            let uv = order.iter().map(|&c| {
                let t = faces.uvs[c];
                format!("[{},{},0]", f32_text(t.x as f32), f32_text(t.y as f32))
            });
            let mut s = String::from("\t\t\"vertexattributes\",[\n");
            attribute(&mut s, "uv", "texturecoord", uv);
            s.push_str("\t\t],\n");
            s
        };
        let mut primitives = String::from(
            "\t\"primitives\",[\n\t\t[\n\t\t\t[\"type\",\"Polygon_run\"],\n\t\t\t[\"startvertex\",0,",
        );
        let _ = write!(
            primitives,
            "\"nprimitives\",{},\"nvertices_rle\",",
            faces.counts.len()
        );
        json_list(
            &mut primitives,
            run_lengths(&faces.counts).map(|n| n.to_string()),
        );
        primitives.push_str("]\n\t\t]\n\t]\n]\n");
        Ok(GeoWriter {
            files: files()?,
            start_frame: meta.start_frame,
            points: meta.points,
            counts: (faces.counts.len(), order.len()),
            topology,
            vertex_attributes,
            primitives,
        })
    }

    /// The whole JSON text of one frame.
    fn frame_text(&self, points: &[[f32; 3]]) -> String {
        let (lo, hi) = bounds(points);
        let mut s = String::with_capacity(points.len() * 40 + self.topology.len() * 2);
        let _ = write!(
            s,
            "[\n\t\"fileversion\",\"{FILE_VERSION}\",\n\t\"hasindex\",false,\n\t\"pointcount\",{},\n\t\
             \"vertexcount\",{},\n\t\"primitivecount\",{},\n\t\"info\",{{\n\t\t\"software\":\"drape {}\",\n\t\t\
             \"bounds\":[{},{},{},{},{},{}],\n\t\t\"primcount_summary\":\"{} Polygons\\n\"\n\t}},\n",
            points.len(),
            self.counts.1,
            self.counts.0,
            env!("CARGO_PKG_VERSION"),
            f32_text(lo[0]),
            f32_text(hi[0]),
            f32_text(lo[1]),
            f32_text(hi[1]),
            f32_text(lo[2]),
            f32_text(hi[2]),
            self.counts.0,
        );
        s.push_str(&self.topology);
        s.push_str("\t\"attributes\",[\n");
        s.push_str(&self.vertex_attributes);
        s.push_str("\t\t\"pointattributes\",[\n");
        let p = points
            .iter()
            .map(|q| format!("[{},{},{}]", f32_text(q[0]), f32_text(q[1]), f32_text(q[2])));
        attribute(&mut s, "P", "point", p);
        s.push_str("\t\t]\n\t],\n");
        s.push_str(&self.primitives);
        s
    }
}

impl Reopen for GeoWriter {
    /// Keeps the `frames` partial frame files from the first frame on (each must be
    /// there) and removes those after them.
    fn reopen(out: &Path, meta: &CacheMeta, frames: usize) -> Result<Self> {
        let last = meta.start_frame + meta.frames as i32 - 1;
        GeoWriter::with_files(out, meta, || {
            PartialSequence::reopen(out, meta.replace_partial, meta.start_frame, frames, last)
        })
    }
}

impl CacheWriter for GeoWriter {
    fn write_frame(&mut self, points: &[Vec3]) -> Result<()> {
        if points.len() != self.points {
            return Err(Error::Internal(format!(
                ".geo frame has {} points, expected {}",
                points.len(),
                self.points
            )));
        }
        check_finite(points)?;
        let frame = self.start_frame + self.files.frames() as i32;
        let p: Vec<[f32; 3]> = points.iter().map(to_f32).collect();
        let text = self.frame_text(&p);
        self.files.add_frame(frame, text.as_bytes())
    }

    fn finish(self: Box<Self>) -> Result<PathBuf> {
        self.files.publish()
    }

    fn partial(&self) -> &dyn Partial {
        &self.files
    }

    fn sync(&mut self) -> Result<()> {
        let path = self.files.path().to_path_buf();
        self.files.sync().map_err(write_error(&path))
    }
}

/// `[a,b,...]` appended to `s`, at most 16 items per line.
fn json_list(s: &mut String, items: impl Iterator<Item = String>) {
    s.push('[');
    for (i, item) in items.enumerate() {
        if i > 0 {
            s.push(',');
            if i % 16 == 0 {
                s.push_str("\n\t\t\t\t");
            }
        }
        s.push_str(&item);
    }
    s.push(']');
}

/// One numeric 3-float attribute (`size` 3, `fpreal32`) named `name` whose `options` give
/// its type (`point`, `texturecoord`), values as a list of tuples.
fn attribute(s: &mut String, name: &str, kind: &str, tuples: impl Iterator<Item = String>) {
    let _ = write!(
        s,
        "\t\t\t[\n\t\t\t\t[\"scope\",\"public\",\"type\",\"numeric\",\"name\",\"{name}\",\
         \"options\",{{\"type\":{{\"type\":\"string\",\"value\":\"{kind}\"}}}}],\n\t\t\t\t\
         [\"size\",3,\"storage\",\"fpreal32\",\"defaults\",[\"size\",1,\"storage\",\"fpreal64\",\
         \"values\",[0]],\n\t\t\t\t\t\"values\",[\"size\",3,\"storage\",\"fpreal32\",\"tuples\","
    );
    json_list(s, tuples);
    s.push_str("]\n\t\t\t\t]\n\t\t\t]\n");
}

/// Houdini's `nvertices_rle`: (count, repeat) pairs, flattened.
fn run_lengths(counts: &[usize]) -> impl Iterator<Item = usize> + '_ {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for &c in counts {
        match runs.last_mut() {
            Some((n, r)) if *n == c => *r += 1,
            _ => runs.push((c, 1)),
        }
    }
    runs.into_iter().flat_map(|(n, r)| [n, r])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::{OutputFaces, UpAxis};
    use crate::Vec2;
    use serde_json::Value;
    use std::borrow::Cow;

    /// A quad and a triangle over 5 points.
    fn meta(faces: &OutputFaces) -> CacheMeta<'_> {
        CacheMeta {
            name: "Cloth",
            points: 5,
            start_frame: 9,
            frames: 2,
            fps: 24.0,
            up: UpAxis::Y,
            faces: Cow::Borrowed(faces),
            replace_partial: false,
        }
    }

    /// `key → value` of one of Houdini's flat key/value arrays.
    fn get<'a>(list: &'a Value, key: &str) -> &'a Value {
        let a = list.as_array().unwrap();
        let i = a.iter().position(|v| v == key).unwrap();
        &a[i + 1]
    }

    #[test]
    fn each_frame_is_houdini_json_with_reversed_polygons_and_vertex_uvs() {
        let faces = OutputFaces {
            counts: vec![4, 3],
            points: vec![0, 1, 2, 3, 3, 2, 4],
            uvs: (0..7).map(|k| Vec2::new(k as f64, 0.5)).collect(),
        };
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("c.$F4.geo");
        let mut w: Box<dyn CacheWriter> = Box::new(GeoWriter::create(&out, &meta(&faces)).unwrap());
        let pts: Vec<Vec3> = (0..5).map(|k| Vec3::new(k as f64, -0.25, 1e-6)).collect();
        w.write_frame(&pts).unwrap();
        let partial = dir.path().join("c.0009.geo.partial");
        assert!(partial.exists() && !dir.path().join("c.0009.geo").exists());
        w.write_frame(&pts).unwrap();
        w.finish().unwrap();
        assert!(!partial.exists());
        let v: Value =
            serde_json::from_slice(&std::fs::read(dir.path().join("c.0010.geo")).unwrap()).unwrap();
        assert_eq!(get(&v, "pointcount"), 5);
        assert_eq!(get(&v, "vertexcount"), 7);
        assert_eq!(get(&v, "primitivecount"), 2);
        let indices = get(get(&v, "topology"), "pointref");
        assert_eq!(
            get(indices, "indices"),
            &serde_json::json!([3, 2, 1, 0, 4, 2, 3])
        );
        let attrs = get(&v, "attributes");
        let uv = &get(attrs, "vertexattributes")[0];
        assert_eq!(get(&uv[0], "name"), "uv");
        let floats = |v: &Value| -> Vec<f32> {
            let a = v.as_array().unwrap();
            a.iter().map(|x| x.as_f64().unwrap() as f32).collect()
        };
        let uv_tuples = get(get(&uv[1], "values"), "tuples");
        assert_eq!(
            floats(&uv_tuples[0]),
            [3.0, 0.5, 0.0],
            "quad reversed: corner 3 first"
        );
        assert_eq!(
            floats(&uv_tuples[4]),
            [6.0, 0.5, 0.0],
            "triangle reversed: corner 6 first"
        );
        let p = &get(attrs, "pointattributes")[0];
        assert_eq!(get(&p[0], "name"), "P");
        let p_tuples = get(get(&p[1], "values"), "tuples");
        assert_eq!(floats(&p_tuples[4]), [4.0, -0.25, 1e-6]);
        let prims = &get(&v, "primitives")[0];
        assert_eq!(get(&prims[0], "type"), "Polygon_run");
        assert_eq!(
            get(&prims[1], "nvertices_rle"),
            &serde_json::json!([4, 1, 3, 1])
        );
    }
}
