//! Alembic caches (`.abc`, the Ogawa back end): what Maya, Houdini, Blender and the
//! other VFX programs read as an animated mesh.
//!
//! One Xform named after the garment (identity: the points are object-local) with one
//! PolyMesh child `<name>Shape`:
//!
//! ```text
//! /<name>                 AbcGeom_Xform_v3     .xform/.inherits = true
//! /<name>/<name>Shape     AbcGeom_PolyMesh_v1  .geom:
//!     P            float32[3] array   one sample per frame, Y up
//!     .velocities  float32[3] array   per frame, (P_k − P_{k−1}) · fps (m/s); 0 at the first
//!     .selfBnds    float64[6] scalar  per frame, min x y z, max x y z of P
//!     .faceCounts  int32 array        constant: corners per source polygon
//!     .faceIndices int32 array        constant: each polygon's points, order reversed
//!     uv           compound           face-varying indexed GeomParam: .vals float32[2]
//!                                     (distinct UVs), .indices uint32 (one per corner)
//! ```
//! Time sampling 1 is uniform: one sample every 1/fps s from `first frame / fps` s, so
//! sample k is frame `first + k`. Points are the garment's output points in source order
//! as f32 (the same numbers as a PC2 of the same bake). Alembic is Y-up: a cache asked
//! in Z-up axes (a Z-up source, or `--up z`) is turned back, (x, y, z) → (x, z, −y), the
//! inverse of drape's Y-up → Z-up conversion, so importers apply their usual Y-up → Z-up
//! turn. Alembic winds front faces clockwise (Maya's convention, which Blender's and
//! Houdini's importers follow); the source is counter-clockwise, so each polygon's
//! corners, and its UVs with them, are written in reverse order. The archive metadata
//! names the writing application; no date or host is written (`_ai_DateWritten` is
//! `unrecorded`): the same bake gives the same bytes. The container and schema layers
//! are [`ogawa`] and [`schema`].
//!
//! **The partial file is a complete archive at every instant.** Ogawa readers follow
//! references from the root group, whose position is one u64 at a fixed header offset;
//! bytes nothing references are ignored. The file is written as
//!
//! 1. at creation: the header, everything that never changes (topology, UVs, the Xform,
//!    metadata), and for `P`, `.velocities` and `.selfBnds` one group with a child slot
//!    per frame of the range (empty data until filled), then the tree of zero frames;
//! 2. per frame: its three samples and a new chain of the groups whose content depends
//!    on the sample count (property headers, the groups from `.geom` up to the root, the
//!    time samplings) are appended; the frame's slots in the three reserved groups are
//!    filled (a reader of the old tree never looks at them: its sample count stops before);
//! 3. one 8-byte write in the first page swaps the root position: readers see the old
//!    archive or the new one, never a mix.
//!
//! The frozen flag is set from the start, as the file is complete whenever it is read
//! (Alembic's reader refuses an archive without it). A failed write puts the old root
//! back, empties the new slots and cuts the file to its old length. [`CacheWriter::finish`]
//! renames the partial file over `<out>`; a resumed bake continues it (`reopen.rs`).
//! Growth per frame: the three samples (`12 ×
//! points` bytes twice, 48 bytes, each with a 24-byte size and key) and about 1 KB of
//! groups and headers.
pub mod ogawa;
mod reopen;
pub mod schema;
#[cfg(test)]
pub(crate) mod tests;

use super::partial::{write_error, Partial, PartialFile};
use super::{CacheMeta, CacheWriter};
use crate::error::{Error, Result};
use crate::format::text::{check_finite, to_f32};
use crate::scene::UpAxis;
use crate::Vec3;
use ogawa::{murmur3_x64_128, slot, Block, EMPTY_DATA, EMPTY_GROUP, FROZEN, HEADER_LEN, ROOT_AT};
use schema::PropertyHeader;
use schema::{metadata, write_object_header, write_time_sampling, Kind, MetaIndex, Pod};
use std::path::{Path, PathBuf};

/// The Alembic library version whose file layout is written (1.8.12, as XXYYZZ).
pub const LIBRARY_VERSION: i32 = 10812;
/// AbcCoreOgawa's file version.
pub const FILE_VERSION: i32 = 0;
/// Most frames one file takes (the reserved sample slots then take 40 MB).
pub const MAX_FRAMES: usize = 500_000;
/// Index of the frames' time sampling in the archive's list (0 is the identity).
const FRAMES: u32 = 1;

/// An animated property: its group with one reserved slot per frame, the keys written.
#[derive(Debug)]
struct Track {
    /// Position of the reserved group.
    group: u64,
    /// Children per sample: 2 for an array (data, dimensions), 1 for a scalar.
    stride: usize,
    /// Children of the reserved group: `stride` per frame of the range (at least one).
    slots: usize,
    /// Key of every sample written, in order.
    keys: Vec<[u8; 16]>,
}

/// What is written once and referenced by every tree.
#[derive(Debug)]
struct Fixed {
    xform_name: String,
    shape_name: String,
    /// The metadata listed by the fixed part; every tree starts from it.
    index: MetaIndex,
    /// Data references: file version, library version, archive metadata.
    versions: [u64; 2],
    archive_metadata: u64,
    /// The Xform's property compound and its digest.
    xform_props: u64,
    xform_digest: [u8; 16],
    /// Header data of the PolyMesh's top compound (its one property, `.geom`).
    shape_props_headers: u64,
    face_indices: u64,
    face_counts: u64,
    /// The groups of `uv/.vals` and `uv/.indices`, if the mesh has UVs.
    uv: Option<[u64; 2]>,
    per_sample: f64,
    start: f64,
}

/// Writes an `.abc` cache through `<out>.partial`.
#[derive(Debug)]
pub struct AlembicWriter {
    file: PartialFile,
    capacity: usize,
    points: usize,
    fps: f64,
    z_up: bool,
    /// Length of the file: the next frame's block starts here.
    end: u64,
    /// The root group as it stands.
    root: u64,
    fixed: Fixed,
    /// `P`, `.velocities`, `.selfBnds`.
    tracks: [Track; 3],
    /// The last frame's points (Y up), for the velocities.
    previous: Option<Vec<[f32; 3]>>,
}

/// Metadata of the schemas and properties written.
mod md {
    pub const XFORM_SCHEMA: &str = "AbcGeom_Xform_v3";
    pub const MESH_SCHEMA: &str = "AbcGeom_PolyMesh_v1";
    pub const GEOM_BASE: &str = "AbcGeom_GeomBase_v1";
}

impl AlembicWriter {
    /// Creates `<out>.partial` holding the archive of zero frames, with room for
    /// `meta.frames` frames.
    pub fn create(out: &Path, meta: &CacheMeta) -> Result<Self> {
        let layout = AlembicWriter::layout(out, meta)?;
        let file = PartialFile::create(out, &layout.bytes, meta.replace_partial)?;
        Ok(AlembicWriter::over(file, meta, layout))
    }

    /// A writer of `file`, which holds `layout`'s archive of zero frames.
    fn over(file: PartialFile, meta: &CacheMeta, layout: Layout) -> Self {
        AlembicWriter {
            file,
            capacity: meta.frames,
            points: meta.points,
            fps: meta.fps,
            z_up: meta.up == UpAxis::Z,
            end: layout.bytes.len() as u64,
            root: layout.root,
            fixed: layout.fixed,
            tracks: layout.tracks,
            previous: None,
        }
    }

    /// The archive of zero frames of the cache `meta` (step 1 of the module doc) and
    /// where its parts are.
    fn layout(out: &Path, meta: &CacheMeta) -> Result<Layout> {
        let err = |m: String| Error::input(out, Some(meta.name), m);
        if meta.frames > MAX_FRAMES {
            return Err(err(format!(
                "{} frames are more than an .abc cache holds ({MAX_FRAMES}); bake a shorter \
                 --frames range per file",
                meta.frames
            )));
        }
        let faces = &meta.faces;
        if i32::try_from(meta.points).is_err() || i32::try_from(faces.points.len()).is_err() {
            return Err(err("too many points for an Alembic mesh".into()));
        }
        if faces
            .uvs
            .iter()
            .any(|uv| !uv.iter().all(|c| (*c as f32).is_finite()))
        {
            return Err(err(
                "has non-finite UVs; fix the UV map and export again".into()
            ));
        }
        let name = object_name(meta.name);
        let mut block = Block::new(HEADER_LEN);
        let mut index = MetaIndex::default();
        let versions = [
            block.data(&[&FILE_VERSION.to_le_bytes()]),
            block.data(&[&LIBRARY_VERSION.to_le_bytes()]),
        ];
        let application = format!("drape {}", env!("CARGO_PKG_VERSION"));
        let fps_text = format!("{}", meta.fps);
        let archive_md = metadata(&[
            ("_ai_AlembicVersion", "Alembic 1.8.12 file layout"),
            ("_ai_Application", &application),
            ("_ai_DateWritten", "unrecorded"),
            ("FramesPerTimeUnit", &fps_text),
        ]);
        let archive_metadata = block.data(&[archive_md.as_bytes()]);

        // The Xform: `.xform` holding `.inherits` = true, one sample (identity sampling).
        let inherits = sample(&mut block, &[1]);
        let inherits = block.group(&[inherits.0]);
        let mut headers = Vec::new();
        PropertyHeader {
            name: ".inherits".into(),
            kind: Kind::Scalar,
            pod: Pod::Bool,
            extent: 1,
            metadata: String::new(),
            time_sampling: 0,
            samples: 1,
            animated: false,
            scalar_like: true,
        }
        .write(&mut headers, &mut index);
        let xform_headers = block.data(&[&headers]);
        let xform = block.group(&[inherits, xform_headers]);
        let xform_md = metadata(&[("schema", md::XFORM_SCHEMA)]);
        let mut top_headers = Vec::new();
        PropertyHeader::compound(".xform", xform_md).write(&mut top_headers, &mut index);
        let xform_top_headers = block.data(&[&top_headers]);
        let xform_props = block.group(&[xform, xform_top_headers]);
        headers.extend_from_slice(&top_headers);
        let xform_digest = murmur3_x64_128(&headers);

        let geom_md = metadata(&[
            ("schema", md::MESH_SCHEMA),
            ("schemaBaseType", md::GEOM_BASE),
        ]);
        let mut shape_headers = Vec::new();
        PropertyHeader::compound(".geom", geom_md).write(&mut shape_headers, &mut index);
        let shape_props_headers = block.data(&[&shape_headers]);

        // Topology: each polygon's corners reversed (Alembic's clockwise winding).
        let mut order = Vec::with_capacity(faces.points.len());
        let mut first = 0;
        for &n in &faces.counts {
            order.extend((first..first + n).rev());
            first += n;
        }
        if first != faces.points.len() {
            return Err(Error::Internal(format!(
                "{}: face corner counts add up to {first}, not {}",
                out.display(),
                faces.points.len()
            )));
        }
        let counts: Vec<u8> = faces
            .counts
            .iter()
            .flat_map(|&n| (n as i32).to_le_bytes())
            .collect();
        let corners: Vec<u8> = order
            .iter()
            .flat_map(|&c| (faces.points[c] as i32).to_le_bytes())
            .collect();
        let face_indices = array_group(&mut block, &corners);
        let face_counts = array_group(&mut block, &counts);
        let uv = (!faces.uvs.is_empty()).then(|| {
            let (mut vals, mut indices) = (Vec::new(), Vec::new());
            let mut seen = std::collections::HashMap::new();
            for &c in &order {
                let t = [faces.uvs[c].x as f32, faces.uvs[c].y as f32];
                let next = seen.len() as u32;
                let i = *seen.entry(t.map(f32::to_bits)).or_insert_with(|| {
                    vals.extend(t.iter().flat_map(|v| v.to_le_bytes()));
                    next
                });
                indices.extend_from_slice(&i.to_le_bytes());
            }
            [
                array_group(&mut block, &vals),
                array_group(&mut block, &indices),
            ]
        });

        // One slot per frame for each animated property.
        let mut reserve = |stride: usize| {
            let slots = stride * meta.frames.max(1);
            Track {
                group: block.group(&vec![EMPTY_DATA; slots]),
                stride,
                slots,
                keys: Vec::new(),
            }
        };
        let tracks = [reserve(2), reserve(2), reserve(1)];
        let fixed = Fixed {
            shape_name: format!("{name}Shape"),
            xform_name: name,
            index,
            versions,
            archive_metadata,
            xform_props,
            xform_digest,
            shape_props_headers,
            face_indices,
            face_counts,
            uv,
            per_sample: 1.0 / meta.fps,
            start: f64::from(meta.start_frame) / meta.fps,
        };
        let root = tree(&fixed, &tracks, &mut block);
        let mut bytes = ogawa::header(FROZEN, root).to_vec();
        bytes.extend_from_slice(&block.bytes);
        Ok(Layout {
            bytes,
            fixed,
            tracks,
            root,
        })
    }

    /// Lays out the next frame (points `p`, Y up) after the file's end: its three samples
    /// and the new tree (step 2 of the module doc), its keys added to the tracks. Nothing
    /// is written: [`AlembicWriter::write_frame`] writes it, [`Reopen::reopen`] compares
    /// it with what an interrupted bake wrote.
    fn lay_out_frame(&mut self, p: &[[f32; 3]]) -> NextFrame {
        let k = self.tracks[0].keys.len();
        let velocities: Vec<[f32; 3]> = match &self.previous {
            Some(prev) => p
                .iter()
                .zip(prev)
                .map(|(a, b)| {
                    std::array::from_fn(|i| ((f64::from(a[i]) - f64::from(b[i])) * self.fps) as f32)
                })
                .collect(),
            None => vec![[0.0; 3]; p.len()],
        };
        let (lo, hi) = crate::format::text::bounds(p);
        let bounds: Vec<u8> = lo
            .iter()
            .chain(&hi)
            .flat_map(|&c| f64::from(c).to_le_bytes())
            .collect();
        let f32_bytes = |v: &[[f32; 3]]| -> Vec<u8> {
            v.iter().flatten().flat_map(|c| c.to_le_bytes()).collect()
        };
        let mut block = Block::new(self.end);
        let samples = [
            sample(&mut block, &f32_bytes(p)),
            sample(&mut block, &f32_bytes(&velocities)),
            sample(&mut block, &bounds),
        ];
        let mut patches = Vec::with_capacity(3);
        for (t, (reference, key)) in self.tracks.iter_mut().zip(samples) {
            t.keys.push(key);
            patches.push((slot(t.group, t.stride * k), reference));
        }
        let root = tree(&self.fixed, &self.tracks, &mut block);
        NextFrame {
            block,
            patches,
            root,
        }
    }

    /// Counts a frame laid out by [`AlembicWriter::lay_out_frame`] as written, `p` its
    /// points.
    fn commit(&mut self, next: &NextFrame, p: Vec<[f32; 3]>) {
        self.end = next.block.end();
        self.root = next.root;
        self.previous = Some(p);
    }
}

/// The archive of zero frames and the parts of it every later tree refers to.
struct Layout {
    /// Header, fixed part, reserved groups and the tree of zero frames.
    bytes: Vec<u8>,
    fixed: Fixed,
    tracks: [Track; 3],
    root: u64,
}

/// One frame laid out ([`AlembicWriter::lay_out_frame`]).
struct NextFrame {
    /// Its samples and tree, to go at the file's end.
    block: Block,
    /// `(position, reference)` of the reserved slot of each of its samples.
    patches: Vec<(u64, u64)>,
    /// Its new root group.
    root: u64,
}

/// Appends the groups and headers that depend on the sample count (the tracks' keys) to
/// `block`; returns the new root group.
fn tree(f: &Fixed, tracks: &[Track; 3], block: &mut Block) -> u64 {
    let frames = tracks[0].keys.len() as u32;
    let mut index = f.index.clone();
    let animated = |name: &str, kind, pod, extent, md: String| PropertyHeader {
        name: name.into(),
        kind,
        pod,
        extent,
        metadata: md,
        time_sampling: FRAMES,
        samples: frames,
        animated: true,
        scalar_like: false,
    };
    let constant = |name: &str, pod, extent, md: String| PropertyHeader {
        animated: false,
        ..animated(name, Kind::Array, pod, extent, md)
    };
    let vector = |i: &str| metadata(&[("geoScope", "vtx"), ("interpretation", i)]);
    let mut geom = vec![
        animated("P", Kind::Array, Pod::F32, 3, vector("point")),
        animated(
            ".selfBnds",
            Kind::Scalar,
            Pod::F64,
            6,
            metadata(&[("interpretation", "box")]),
        ),
        constant(".faceIndices", Pod::I32, 1, String::new()),
        constant(".faceCounts", Pod::I32, 1, String::new()),
        animated(".velocities", Kind::Array, Pod::F32, 3, vector("vector")),
    ];
    let mut children = vec![
        tracks[0].group,
        tracks[2].group,
        f.face_indices,
        f.face_counts,
        tracks[1].group,
    ];
    if let Some([vals, indices]) = f.uv {
        let uv_md = metadata(&[
            ("arrayExtent", "1"),
            ("geoScope", "fvr"),
            ("interpretation", "vector"),
            ("isGeomParam", "true"),
            ("podExtent", "2"),
            ("podName", "float32_t"),
        ]);
        let mut headers = Vec::new();
        constant(".vals", Pod::F32, 2, uv_md.clone()).write(&mut headers, &mut index);
        constant(".indices", Pod::U32, 1, String::new()).write(&mut headers, &mut index);
        let headers = block.data(&[&headers]);
        children.push(block.group(&[vals, indices, headers]));
        geom.push(PropertyHeader::compound("uv", uv_md));
    }
    let mut headers = Vec::new();
    for h in &geom {
        h.write(&mut headers, &mut index);
    }
    children.push(block.data(&[&headers]));
    let geom = block.group(&children);
    let shape_props = block.group(&[geom, f.shape_props_headers]);
    for t in tracks {
        for k in &t.keys {
            headers.extend_from_slice(k);
        }
    }
    // Object headers end with two digests: of the object's properties and of its
    // children (zero without children).
    let shape_digest = murmur3_x64_128(&headers);
    let shape_headers = block.data(&[&shape_digest, &[0; 16]]);
    let shape = block.group(&[shape_props, shape_headers]);
    let mut headers = Vec::new();
    let shape_md = metadata(&[
        ("schema", md::MESH_SCHEMA),
        ("schemaBaseType", md::GEOM_BASE),
        ("schemaObjTitle", &format!("{}:.geom", md::MESH_SCHEMA)),
    ]);
    write_object_header(&mut headers, &f.shape_name, &shape_md, &mut index);
    let shape_pair = [shape_digest, [0; 16]].concat();
    headers.extend_from_slice(&f.xform_digest);
    headers.extend_from_slice(&murmur3_x64_128(&shape_pair));
    let xform_headers = block.data(&[&headers]);
    let xform = block.group(&[f.xform_props, shape, xform_headers]);
    let mut headers = Vec::new();
    let xform_md = metadata(&[
        ("schema", md::XFORM_SCHEMA),
        ("schemaObjTitle", &format!("{}:.xform", md::XFORM_SCHEMA)),
    ]);
    write_object_header(&mut headers, &f.xform_name, &xform_md, &mut index);
    let xform_pair = [f.xform_digest, murmur3_x64_128(&shape_pair)].concat();
    headers.extend_from_slice(&[0; 16]);
    headers.extend_from_slice(&murmur3_x64_128(&xform_pair));
    let top_headers = block.data(&[&headers]);
    let top = block.group(&[EMPTY_GROUP, xform, top_headers]);
    let mut samplings = Vec::new();
    write_time_sampling(&mut samplings, 1, 1.0, 0.0);
    write_time_sampling(&mut samplings, frames, f.per_sample, f.start);
    let samplings = block.data(&[&samplings]);
    let listed = block.data(&[&index.bytes()]);
    block.group(&[
        f.versions[0],
        f.versions[1],
        top,
        f.archive_metadata,
        samplings,
        listed,
    ])
}

impl CacheWriter for AlembicWriter {
    fn write_frame(&mut self, points: &[Vec3]) -> Result<()> {
        let k = self.file.frames();
        if k >= self.capacity {
            return Err(Error::Internal(format!(
                "{}: more frames than the {} reserved",
                self.file.path().display(),
                self.capacity
            )));
        }
        if points.len() != self.points {
            return Err(Error::Internal(format!(
                "Alembic frame has {} points, the mesh {}",
                points.len(),
                self.points
            )));
        }
        check_finite(points)?;
        let p: Vec<[f32; 3]> = points
            .iter()
            .map(|q| {
                let [x, y, z] = to_f32(q);
                if self.z_up {
                    [x, z, -y]
                } else {
                    [x, y, z]
                }
            })
            .collect();
        let end = self.end;
        let next = self.lay_out_frame(&p);
        let (block, patches, root) = (&next.block, &next.patches, next.root);
        let old_root = self.root;
        let result = self.file.add_frame(
            |f| {
                f.write_at(end, &block.bytes)?;
                for &(at, reference) in patches {
                    f.write_at(at, &reference.to_le_bytes())?;
                }
                f.write_at(ROOT_AT, &root.to_le_bytes())
            },
            // Back to the finished frames: the old root, empty slots, the old length.
            |f| {
                let mut results = vec![f.write_at(ROOT_AT, &old_root.to_le_bytes())];
                for &(at, _) in patches {
                    results.push(f.write_at(at, &EMPTY_DATA.to_le_bytes()));
                }
                results.push(f.truncate(end));
                results.into_iter().collect()
            },
        );
        if let Err(e) = result {
            for t in &mut self.tracks {
                t.keys.pop();
            }
            return Err(e);
        }
        self.commit(&next, p);
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<PathBuf> {
        self.file.publish()
    }

    fn partial(&self) -> &dyn Partial {
        &self.file
    }

    fn sync(&mut self) -> Result<()> {
        self.file.sync().map_err(write_error(self.file.path()))
    }
}

/// Adds one sample's data (key, then `bytes`); returns its reference and key.
fn sample(block: &mut Block, bytes: &[u8]) -> (u64, [u8; 16]) {
    let key = murmur3_x64_128(bytes);
    (block.data(&[&key, bytes]), key)
}

/// Adds the group of a constant array property: its one sample and empty dimensions.
fn array_group(block: &mut Block, bytes: &[u8]) -> u64 {
    let (data, _) = sample(block, bytes);
    block.group(&[data, EMPTY_DATA])
}

/// A valid Alembic object name for `name`: no `/` (the path separator) and no control
/// characters, not empty.
pub fn object_name(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| if c == '/' || c.is_control() { '_' } else { c })
        .collect();
    if s.is_empty() {
        "_".to_string()
    } else {
        s
    }
}
