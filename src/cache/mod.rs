//! Point-cache writers behind one trait ([`CacheWriter`]): PC2, MDD, USD (`.usda`),
//! Alembic (`.abc`) and Houdini `.geo` sequences (docs/reference.md, "Outputs").
//!
//! Every writer takes one frame at a time: one position per output point, in the garment's
//! source vertex order and object-local space, already in the cache's axis convention
//! (`--up` is applied by the caller). What a writer needs beyond the points — the start
//! frame, fps, axis, topology — comes in one [`CacheMeta`].
//!
//! **Nothing is lost.** Frames go to `<out>.partial` as they finish; after every
//! [`CacheWriter::write_frame`] the partial file is a complete, valid cache of the frames
//! finished so far, and it is a valid cache at every instant between (a SIGKILL never
//! leaves it unreadable). One bake writes one output: the partial file is claimed first
//! ([`claim`]). [`CacheWriter::finish`] renames it over `<out>`. On error or interrupt
//! the writer is dropped unfinished: the partial cache remains and an existing `<out>` is
//! untouched. How each format keeps its partial file valid:
//!
//! | format | after each frame |
//! |---|---|
//! | PC2 | frame appended, then the header's sample count rewritten |
//! | MDD | laid out for the whole range up front (sparse); frame written in place; trimmed to the finished frames when a bake stops early |
//! | USD | extent fills a reserved line; sample appended as a comment, then made live with the closing braces by one small write; `endTimeCode` rewritten in place |
//! | Alembic | frame's samples and changed groups appended, reserved sample slots filled, then the root group's position rewritten (8 bytes) |
//! | `.geo` | one complete file per frame, `<frame file>.partial` (through `.partial.tmp`); all renamed at the end |
//!
//! If a write fails part-way (a full disk), the writer cuts the partial file back to its
//! last valid state before returning the error. The plumbing all formats share (creating
//! the partial file, counting frames, restoring on error, publishing by rename) lives in
//! [`partial`]; each writer holds only its format's bytes.
pub mod alembic;
pub mod claim;
pub mod houdini_geo;
pub mod mdd;
pub mod partial;
pub mod pc2;
pub mod usd;

#[cfg(test)]
mod tests;

pub use crate::format::FramePattern;
pub use partial::{partial_path, Partial};

use crate::error::{Error, Result};
use crate::format::text;
use crate::scene::{Garment, OutputFaces, UpAxis};
use crate::Vec3;
use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// A cache being written, one frame at a time.
pub trait CacheWriter {
    /// Appends one frame: one position per output point, in source order.
    fn write_frame(&mut self, points: &[Vec3]) -> Result<()>;
    /// Completes the cache and moves it to its final path; returns that path (for a
    /// sequence, its pattern).
    fn finish(self: Box<Self>) -> Result<PathBuf>;
    /// The partial output being written.
    fn partial(&self) -> &dyn Partial;
    /// Path of the partial file being written (for a sequence, the pattern of the partial
    /// frame files).
    fn partial_path(&self) -> &Path {
        self.partial().path()
    }
    /// Frames written so far.
    fn frames_written(&self) -> usize {
        self.partial().frames()
    }
    /// Flushes the frames written so far to the disk, before a checkpoint names them
    /// (docs/reference.md, "Checkpoints"). The default does nothing: the frames are then
    /// safe from a killed process (they are in the page cache) but not from a power cut.
    fn sync(&mut self) -> Result<()> {
        Ok(())
    }
}

/// A writer that continues the partial cache of an interrupted bake (`--resume`).
pub trait Reopen: CacheWriter + Sized {
    /// Takes over the `<out>.partial` an interrupted bake of the same cache (`meta`) left,
    /// keeping its first `frames` frames and cutting what follows them, so that the frames
    /// written next continue it and the finished cache is byte for byte that of a bake
    /// never stopped. An input error if the partial file is missing, holds fewer frames,
    /// or is not such a cache.
    fn reopen(out: &Path, meta: &CacheMeta, frames: usize) -> Result<Self>;
}

/// The error of a partial cache that cannot be continued: `why`.
pub(crate) fn not_continued(path: &Path, why: &str) -> Error {
    Error::input(
        path,
        None,
        format!("{why}, so the bake cannot continue from its checkpoint"),
    )
}

/// What a writer needs to know besides the points of each frame.
#[derive(Debug, Clone)]
pub struct CacheMeta<'a> {
    /// Garment name (the USD prim is named after it).
    pub name: &'a str,
    /// Points per frame (the garment's output points).
    pub points: usize,
    /// Frame number of the first sample.
    pub start_frame: i32,
    /// Samples the finished cache will hold (USD reserves room for them).
    pub frames: usize,
    /// Frames per second (MDD times, USD time codes per second).
    pub fps: f64,
    /// Axis convention of the written points (USD `upAxis`).
    pub up: UpAxis,
    /// Source polygons over output points with per-corner UVs (USD and `.geo` topology).
    pub faces: Cow<'a, OutputFaces>,
    /// Replace a partial file an earlier bake left at `<out>.partial` (`--force`).
    /// Default: false (such a file is an input error).
    pub replace_partial: bool,
}

impl<'a> CacheMeta<'a> {
    /// The metadata of garment `g`'s cache of `frames` samples from `start_frame`.
    pub fn for_garment(
        g: &'a Garment,
        start_frame: i32,
        frames: usize,
        fps: f64,
        up: UpAxis,
    ) -> Self {
        CacheMeta {
            name: &g.name,
            points: g.output_points.len(),
            start_frame,
            frames,
            fps,
            up,
            faces: output_faces(g),
            replace_partial: false,
        }
    }
}

/// The cache formats, chosen by the output path's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `.pc2`: [`pc2`].
    Pc2,
    /// `.mdd`: [`mdd`].
    Mdd,
    /// `.usda` / `.usd` (text): [`usd`].
    Usda,
    /// `.geo` with `$F` in the name, one JSON file per frame: [`houdini_geo`].
    Geo,
    /// `.abc` (Ogawa): [`alembic`].
    Abc,
}

impl Format {
    /// The format of `out` by extension, or an input error naming the supported ones.
    pub fn of(out: &Path) -> Result<Format> {
        let ext = out
            .extension()
            .and_then(|e| e.to_str())
            .map(|e| e.to_ascii_lowercase())
            .unwrap_or_default();
        match ext.as_str() {
            "pc2" => Ok(Format::Pc2),
            "mdd" => Ok(Format::Mdd),
            "usda" | "usd" => Ok(Format::Usda),
            "geo" => Ok(Format::Geo),
            "abc" => Ok(Format::Abc),
            "usdc" => Err(Error::input(
                out,
                None,
                "this build writes USD as text only; use a .usda path (Pixar's usdcat converts \
                 it: usdcat shirt.usda -o shirt.usdc)",
            )),
            "bgeo" | "sc" => Err(Error::input(
                out,
                None,
                "binary Houdini geometry is not written by this build; use a JSON .geo sequence \
                 such as shirt.$F4.geo",
            )),
            _ => Err(Error::input(
                out,
                None,
                format!(
                    "unknown cache format '.{ext}'; use .pc2, .mdd, .usda, .abc or a .geo sequence \
                     with $F4 in the name"
                ),
            )),
        }
    }
}

/// Checks up front, before any simulation time is spent, that `out` can be written for
/// frames `first..=last`: its extension is a supported format (a `.geo` sequence has a
/// `$F` field in its file name), its directory exists and is writable, no other bake is
/// writing it, and unless `force` neither it (for a sequence: any frame file of its
/// pattern, whatever the frame) nor a partial file of an earlier bake exists.
pub fn check_output(out: &Path, force: bool, frames: (i32, i32)) -> Result<()> {
    check(out, force, frames, false)
}

/// [`check_output`] for `--resume`: a partial file an earlier bake left is no obstacle
/// (the bake continues it, or replaces it when there is no checkpoint to continue).
pub fn check_resumable_output(out: &Path, force: bool, frames: (i32, i32)) -> Result<()> {
    check(out, force, frames, true)
}

/// [`check_output`], an earlier bake's partial file allowed if `resume`.
fn check(out: &Path, force: bool, (first, last): (i32, i32), resume: bool) -> Result<()> {
    let format = Format::of(out)?;
    let pattern = match format {
        Format::Geo => Some(FramePattern::parse(out)?),
        _ => None,
    };
    let dir = match out.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !dir.is_dir() {
        let what = if dir.exists() {
            "is not a directory"
        } else {
            "does not exist"
        };
        return Err(Error::input(
            out,
            None,
            format!(
                "the output directory {} {what}; create it or choose another -o path",
                dir.display()
            ),
        ));
    }
    probe_writable(out, &dir)?;
    let partial = partial_path(out);
    if let Some(e) = claim::refusal(&partial, claim::inspect(&partial), force || resume) {
        return Err(e);
    }
    let existing = match &pattern {
        Some(p) => (first..=last)
            .map(|f| p.path(f))
            .find(|p| p.exists())
            .or_else(|| p.existing().ok()?.into_iter().next().map(|(_, f)| f)),
        None => Some(out.to_path_buf()).filter(|p| p.exists()),
    };
    if let Some(path) = existing {
        if path.is_dir() {
            return Err(Error::input(
                &path,
                None,
                "is a directory; choose a file name for the -o path",
            ));
        }
        if !force {
            let message = match pattern {
                Some(_) => {
                    "already exists, a frame of an earlier sequence; pass --force to replace \
                     that sequence (its frames this bake does not write are removed) or choose \
                     another -o path"
                }
                None => "already exists; pass --force to overwrite it or choose another -o path",
            };
            return Err(Error::input(&path, None, message));
        }
    }
    Ok(())
}

/// Creates and removes a probe file in `dir`: permissions, read-only mounts and the like
/// show here rather than after the first simulated frame.
fn probe_writable(out: &Path, dir: &Path) -> Result<()> {
    let probe = dir.join(format!(".drape-probe-{}", std::process::id()));
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(Error::input(
            out,
            None,
            format!(
                "cannot write in the output directory {} ({e}); make it writable or choose \
                 another -o path",
                dir.display()
            ),
        )),
    }
}

/// Opens a writer for `out` chosen by its extension (see [`Format::of`]).
pub fn create(out: &Path, meta: &CacheMeta) -> Result<Box<dyn CacheWriter>> {
    if meta.faces.points.iter().any(|&p| p >= meta.points) {
        return Err(Error::Internal(format!(
            "{}: a face references a point beyond the {} output points",
            out.display(),
            meta.points
        )));
    }
    Ok(match Format::of(out)? {
        Format::Pc2 => Box::new(pc2::Pc2Writer::create(
            out,
            meta.points,
            meta.start_frame as f32,
            meta.replace_partial,
        )?),
        Format::Mdd => Box::new(mdd::MddWriter::create(out, meta)?),
        Format::Usda => Box::new(usd::UsdaWriter::create(out, meta)?),
        Format::Geo => Box::new(houdini_geo::GeoWriter::create(out, meta)?),
        Format::Abc => Box::new(alembic::AlembicWriter::create(out, meta)?),
    })
}

/// Reopens the partial cache of `out` at `frames` finished frames ([`Reopen`]), the
/// writer chosen by extension as [`create`] chooses it.
pub fn reopen(out: &Path, meta: &CacheMeta, frames: usize) -> Result<Box<dyn CacheWriter>> {
    Ok(match Format::of(out)? {
        Format::Pc2 => Box::new(pc2::Pc2Writer::reopen(out, meta, frames)?),
        Format::Mdd => Box::new(mdd::MddWriter::reopen(out, meta, frames)?),
        Format::Usda => Box::new(usd::UsdaWriter::reopen(out, meta, frames)?),
        Format::Geo => Box::new(houdini_geo::GeoWriter::reopen(out, meta, frames)?),
        Format::Abc => Box::new(alembic::AlembicWriter::reopen(out, meta, frames)?),
    })
}

/// The source polygons of `g` over its output points: the importer's
/// [`Garment::output_faces`] if it gave them, else its triangles with each particle shown
/// by its first output point (triangles of particles no output point shows are left out).
pub fn output_faces(g: &Garment) -> Cow<'_, OutputFaces> {
    if !g.output_faces.counts.is_empty() {
        return Cow::Borrowed(&g.output_faces);
    }
    let mut first_point = vec![None; g.positions.len()];
    for (k, &p) in g.output_points.iter().enumerate().rev() {
        if let Some(slot) = first_point.get_mut(p) {
            *slot = Some(k);
        }
    }
    let mut faces = OutputFaces::default();
    let with_uvs = g.corner_uvs.len() == g.triangles.len();
    for (t, tri) in g.triangles.iter().enumerate() {
        let corners: Option<Vec<usize>> = tri
            .iter()
            .map(|&p| first_point.get(p).copied().flatten())
            .collect();
        let Some(corners) = corners else { continue };
        faces.counts.push(3);
        faces.points.extend(corners);
        if with_uvs {
            faces.uvs.extend(g.corner_uvs[t]);
        }
    }
    Cow::Owned(faces)
}

/// Checks one frame of a binary cache (`expected` points, all finite in f32) and packs it
/// as f32 x, y, z per point with `encode` (little- or big-endian bytes of one f32).
pub(crate) fn pack_frame(
    points: &[Vec3],
    expected: usize,
    format: &str,
    encode: fn(f32) -> [u8; 4],
) -> Result<Vec<u8>> {
    if points.len() != expected {
        return Err(Error::Internal(format!(
            "{format} frame has {} points, header says {expected}",
            points.len()
        )));
    }
    text::check_finite(points)?;
    let mut buf = Vec::with_capacity(points.len() * 12);
    for p in points {
        for c in text::to_f32(p) {
            buf.extend_from_slice(&encode(c));
        }
    }
    Ok(buf)
}
