//! USD caches as text (`.usda`; `.usd` holds the same text, USD tells by content).
//!
//! One `Mesh` prim, the stage's default prim, named after the garment (characters USD
//! does not allow in a prim name become `_`):
//!
//! ```text
//! #usda 1.0
//! (
//!     defaultPrim = "Shirt"
//!     endTimeCode = 48            last finished frame (rewritten in place, fixed width)
//!     framesPerSecond = 24
//!     metersPerUnit = 1
//!     startTimeCode = 1
//!     timeCodesPerSecond = 24
//!     upAxis = "Y"                the cache's axes (source, or as --up converts)
//! )
//! def Mesh "Shirt"
//! {
//!     float3[] extent.timeSamples = { 1: [(min), (max)], ... }    one reserved line per frame
//!     int[] faceVertexCounts / faceVertexIndices                  source polygons, source winding
//!     uniform token orientation = "rightHanded"
//!     texCoord2f[] primvars:st (interpolation = "faceVarying")   one UV per face corner
//!     uniform token subdivisionScheme = "none"
//!     point3f[] points.timeSamples = { 1: [...], 2: [...], ... } appended per frame
//! }
//! ```
//! Time codes are frame numbers. Points are object-local, f32 values written as the
//! shortest decimal that reads back exactly ([`crate::format::text`]), so a `.usda` holds the same
//! numbers as a PC2 of the same bake.
//!
//! The partial file is valid after every frame without being rewritten: the points sample
//! is written over the closing braces, which follow it again; the extent sample fills one
//! of the lines of spaces reserved for every frame when the file was created (whitespace
//! is insignificant in `.usda`); `endTimeCode` is overwritten in its fixed-width field.
//! Cost per frame: that frame's text only.
use super::partial::{Partial, PartialFile};
use super::{CacheMeta, CacheWriter};
use crate::error::{Error, Result};
use crate::format::text::{bounds, check_finite, f32_text, to_f32, F32_TEXT_MAX};
use crate::scene::UpAxis;
use crate::Vec3;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// What follows the last points sample: the dictionary's and the prim's closing braces.
const TAIL: &str = "    }\n}\n";
/// Most frames one file takes (the reserved extent lines then fill 64 MB).
pub const MAX_FRAMES: usize = 500_000;
/// Width of `endTimeCode`'s value (an i32 with sign).
const TIME_CODE_WIDTH: usize = 11;
/// Bytes of one reserved extent line, newline included: indent (8), frame number, two
/// `(x, y, z)` tuples and the punctuation `: [`, `, `, `],`, newline (8).
const EXTENT_LINE: usize = 8 + TIME_CODE_WIDTH + 2 * (3 * F32_TEXT_MAX + 6) + 8;

/// Writes a `.usda` cache through `<out>.partial`.
#[derive(Debug)]
pub struct UsdaWriter {
    file: PartialFile,
    start_frame: i32,
    capacity: usize,
    /// Byte offset of `endTimeCode`'s value.
    end_code_at: u64,
    /// Byte offset of the first reserved extent line.
    extent_at: u64,
    /// Byte offset of [`TAIL`].
    tail_at: u64,
}

impl UsdaWriter {
    /// Creates `<out>.partial`: stage metadata, topology, UVs, room for `meta.frames`
    /// extent samples and an empty points dictionary.
    pub fn create(out: &Path, meta: &CacheMeta) -> Result<Self> {
        if meta.frames > MAX_FRAMES {
            return Err(Error::input(
                out,
                Some(meta.name),
                format!(
                    "{} frames are more than a .usda cache holds ({MAX_FRAMES}: it reserves \
                     one extent line per frame); bake a shorter --frames range per file",
                    meta.frames
                ),
            ));
        }
        let faces = &meta.faces;
        if faces
            .uvs
            .iter()
            .any(|uv| !uv.iter().all(|c| (*c as f32).is_finite()))
        {
            return Err(Error::input(
                out,
                Some(meta.name),
                "has non-finite UVs; fix the UV map and export again",
            ));
        }
        let mut text = String::new();
        let name = prim_name(meta.name);
        let fps = meta.fps;
        let up = match meta.up {
            UpAxis::Y => "Y",
            UpAxis::Z => "Z",
        };
        let _ = write!(
            text,
            "#usda 1.0\n(\n    defaultPrim = \"{name}\"\n    doc = \"Cloth cache written by \
             drape {}\"\n    endTimeCode = ",
            env!("CARGO_PKG_VERSION")
        );
        let end_code_at = text.len() as u64;
        let _ = write!(
            text,
            "{:<w$}\n    framesPerSecond = {fps}\n    metersPerUnit = 1\n    startTimeCode = \
             {start}\n    timeCodesPerSecond = {fps}\n    upAxis = \"{up}\"\n)\n\n\
             def Mesh \"{name}\"\n{{\n    float3[] extent.timeSamples = {{\n",
            meta.start_frame,
            w = TIME_CODE_WIDTH,
            start = meta.start_frame,
        );
        let extent_at = text.len() as u64;
        let blank = format!("{:w$}\n", "", w = EXTENT_LINE - 1);
        for _ in 0..meta.frames {
            text.push_str(&blank);
        }
        text.push_str("    }\n");
        let list = |v: &mut String, items: &mut dyn Iterator<Item = String>| {
            v.push('[');
            for (i, item) in items.enumerate() {
                if i > 0 {
                    v.push_str(", ");
                }
                v.push_str(&item);
            }
            v.push(']');
        };
        text.push_str("    int[] faceVertexCounts = ");
        list(&mut text, &mut faces.counts.iter().map(|c| c.to_string()));
        text.push_str("\n    int[] faceVertexIndices = ");
        list(&mut text, &mut faces.points.iter().map(|c| c.to_string()));
        text.push_str("\n    uniform token orientation = \"rightHanded\"\n");
        if !faces.uvs.is_empty() {
            text.push_str("    texCoord2f[] primvars:st = ");
            list(
                &mut text,
                &mut faces
                    .uvs
                    .iter()
                    .map(|uv| format!("({}, {})", f32_text(uv.x as f32), f32_text(uv.y as f32))),
            );
            text.push_str(" (\n        interpolation = \"faceVarying\"\n    )\n");
        }
        text.push_str("    uniform token subdivisionScheme = \"none\"\n");
        text.push_str("    point3f[] points.timeSamples = {\n");
        let tail_at = text.len() as u64;
        text.push_str(TAIL);
        Ok(UsdaWriter {
            file: PartialFile::create(out, text.as_bytes())?,
            start_frame: meta.start_frame,
            capacity: meta.frames,
            end_code_at,
            extent_at,
            tail_at,
        })
    }
}

impl CacheWriter for UsdaWriter {
    fn write_frame(&mut self, points: &[Vec3]) -> Result<()> {
        let done = self.file.frames();
        if done >= self.capacity {
            return Err(Error::Internal(format!(
                "{}: more frames than the {} reserved",
                self.file.path().display(),
                self.capacity
            )));
        }
        check_finite(points)?;
        let frame = self.start_frame + done as i32;
        let p: Vec<[f32; 3]> = points.iter().map(to_f32).collect();
        let mut sample = String::with_capacity(16 + p.len() * 3 * 12);
        let _ = write!(sample, "        {frame}: [");
        for (i, q) in p.iter().enumerate() {
            if i > 0 {
                sample.push_str(", ");
            }
            sample.push_str(&tuple(q));
        }
        sample.push_str("],\n");
        let (lo, hi) = bounds(&p);
        let mut extent = format!("        {frame}: [{}, {}],", tuple(&lo), tuple(&hi));
        let _ = writeln!(extent, "{:w$}", "", w = EXTENT_LINE - 1 - extent.len());
        let line = self.extent_at + (done * EXTENT_LINE) as u64;
        let (tail_at, end_code_at) = (self.tail_at, self.end_code_at);
        self.file.add_frame(
            // The points sample (then the tail), the extent line, the end time code.
            |f| {
                let mut block = String::with_capacity(sample.len() + TAIL.len());
                block.push_str(&sample);
                block.push_str(TAIL);
                f.write_at(tail_at, block.as_bytes())?;
                f.write_at(line, extent.as_bytes())?;
                let code = format!("{frame:<w$}", w = TIME_CODE_WIDTH);
                f.write_at(end_code_at, code.as_bytes())
            },
            // Back to the finished frames: tail, blank extent line, previous end time code.
            |f| {
                let blank = format!("{:w$}\n", "", w = EXTENT_LINE - 1);
                let last = frame - i32::from(done > 0);
                let code = format!("{last:<w$}", w = TIME_CODE_WIDTH);
                let results = [
                    f.truncate(tail_at),
                    f.write_at(tail_at, TAIL.as_bytes()),
                    f.write_at(line, blank.as_bytes()),
                    f.write_at(end_code_at, code.as_bytes()),
                ];
                results.into_iter().collect()
            },
        )?;
        self.tail_at += sample.len() as u64;
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<PathBuf> {
        self.file.publish()
    }

    fn partial(&self) -> &dyn Partial {
        &self.file
    }
}

/// `(x, y, z)`.
fn tuple(p: &[f32; 3]) -> String {
    format!(
        "({}, {}, {})",
        f32_text(p[0]),
        f32_text(p[1]),
        f32_text(p[2])
    )
}

/// A valid USD prim name for `name`: letters, digits and `_`, not starting with a digit.
pub fn prim_name(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prim_names_are_usd_identifiers() {
        assert_eq!(prim_name("Shirt"), "Shirt");
        assert_eq!(prim_name("Shirt.001"), "Shirt_001");
        assert_eq!(prim_name("3d cloth"), "_3d_cloth");
        assert_eq!(prim_name(""), "_");
        assert_eq!(prim_name("Röck"), "R_ck");
    }

    #[test]
    fn extent_line_fits_the_widest_sample() {
        let w = -1.129_813_44e-26_f32;
        assert_eq!(f32_text(w).len(), F32_TEXT_MAX);
        let e = format!(
            "        {}: [{}, {}],",
            i32::MIN,
            tuple(&[w; 3]),
            tuple(&[w; 3])
        );
        assert!(e.len() < EXTENT_LINE, "{} >= {EXTENT_LINE}", e.len());
    }
}
