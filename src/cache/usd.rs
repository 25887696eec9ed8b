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
//! **The partial file is valid at every instant**, even after a SIGKILL in the middle of
//! a write, and every frame's text is written once. It differs from the finished file
//! only from the `{` of `points.timeSamples = {` on: each sample is a line of its own and
//! the dictionary's and the prim's closing braces, `};}`, end the last one (or, before
//! the first frame, the `{` line). A frame is added in four steps:
//!
//! 1. its extent line is written into its reserved line of spaces as a comment (`#`
//!    in place of its first space; a comment cut short is still a comment), then the `#`
//!    becomes a space;
//! 2. `#` + its points sample + ` };}` + newline is appended after the file's end: a
//!    comment again, whatever part of it is written;
//! 3. one 6-byte write, never across a page boundary (so the kernel writes it whole),
//!    turns the previous ` };}` into spaces and the new line's `#` into a space: the
//!    sample and its closing braces become live at the same instant;
//! 4. `endTimeCode` is overwritten in its fixed-width field.
//!
//! [`CacheWriter::finish`] writes the finished file (one sample per line, the closing
//! braces on their own lines as above) from the partial one and renames it over `<out>`.
//! Cost per frame: that frame's text once, plus once more when finishing.
use super::partial::{write_error, Partial, PartialFile};
use super::{not_continued, CacheMeta, CacheWriter, Reopen};
use crate::error::{Error, Result};
use crate::format::text::{bounds, check_finite, f32_text, to_f32, F32_TEXT_MAX};
use crate::scene::UpAxis;
use crate::Vec3;
use std::fmt::Write as _;
use std::io::{BufRead, Read, Seek, SeekFrom, Write as _};
use std::path::{Path, PathBuf};

/// What follows the last points sample of the finished file: the dictionary's and the
/// prim's closing braces.
const TAIL: &str = "    }\n}\n";
/// The same braces at the end of the partial file's last live line (`;` separates them
/// where the finished file has a newline).
const CLOSE: &str = " };}\n";
/// Page size the commit write of a frame must not cross (the smallest Linux page).
const PAGE: u64 = 4096;
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
    /// Byte offset just after the `{` of `points.timeSamples = {`.
    samples_at: u64,
    /// Length of the partial file: its live text ends with [`CLOSE`].
    end: u64,
    /// Byte offset and length of every points sample (`        F: [...],`).
    samples: Vec<(u64, usize)>,
}

impl UsdaWriter {
    /// Creates `<out>.partial`: stage metadata, topology, UVs, room for `meta.frames`
    /// extent samples and an empty points dictionary.
    pub fn create(out: &Path, meta: &CacheMeta) -> Result<Self> {
        let layout = UsdaWriter::layout(out, meta)?;
        let file = PartialFile::create(out, layout.text.as_bytes(), meta.replace_partial)?;
        let end = layout.text.len() as u64;
        Ok(UsdaWriter::over(file, meta, &layout, Vec::new(), end))
    }

    /// A writer of `file` laid out as `l`, its frames' samples at `samples`, its live
    /// text ending at byte `end`.
    fn over(
        file: PartialFile,
        meta: &CacheMeta,
        l: &Layout,
        samples: Vec<(u64, usize)>,
        end: u64,
    ) -> Self {
        UsdaWriter {
            file,
            start_frame: meta.start_frame,
            capacity: meta.frames,
            end_code_at: l.end_code_at,
            extent_at: l.extent_at,
            samples_at: l.samples_at,
            end,
            samples,
        }
    }

    /// The partial file of no frame, and where its fields are.
    fn layout(out: &Path, meta: &CacheMeta) -> Result<Layout> {
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
        text.push_str("    point3f[] points.timeSamples = {");
        let samples_at = text.len() as u64;
        text.push_str(&closing(samples_at));
        Ok(Layout {
            text,
            end_code_at,
            extent_at,
            samples_at,
        })
    }
}

/// The text of a partial file of no frame and the byte offsets of its fields.
struct Layout {
    text: String,
    end_code_at: u64,
    extent_at: u64,
    samples_at: u64,
}

impl Reopen for UsdaWriter {
    /// Checks that the partial file is this cache's (its text before the points, extent
    /// lines and end time code aside), finds the first `frames` samples, one line each
    /// and all live, cuts the file after them with the closing braces back on the last,
    /// blanks the extent lines of the frames after them and sets `endTimeCode`.
    fn reopen(out: &Path, meta: &CacheMeta, frames: usize) -> Result<Self> {
        let l = UsdaWriter::layout(out, meta)?;
        let mut file = PartialFile::reopen(out, frames)?;
        let path = file.path().to_path_buf();
        let extent_end = l.extent_at + (meta.frames * EXTENT_LINE) as u64;
        let header = l.text.as_bytes();
        let mut found = vec![0u8; header.len()];
        let read = file.read_at(0, &mut found);
        let head = l.end_code_at as usize;
        let (rest, upto) = (extent_end as usize, l.samples_at as usize);
        if read.is_err()
            || found[..head] != header[..head]
            || found[rest..upto] != header[rest..upto]
        {
            return Err(not_continued(&path, "is not the .usda cache of this bake"));
        }
        let mut samples = Vec::with_capacity(frames);
        let mut at = header.len() as u64;
        {
            let f = file.file();
            f.seek(SeekFrom::Start(at)).map_err(write_error(&path))?;
            let mut lines = std::io::BufReader::new(f);
            let mut line = Vec::new();
            for k in 0..frames {
                line.clear();
                let n = lines
                    .read_until(b'\n', &mut line)
                    .map_err(write_error(&path))?;
                let prefix = format!("       {}: [", meta.start_frame + k as i32);
                let close = line.iter().position(|&b| b == b']');
                match close {
                    Some(c)
                        if line.ends_with(b"\n")
                            && line[0] == b' '
                            && line[1..].starts_with(prefix.as_bytes()) =>
                    {
                        samples.push((at, c + 2));
                        at += n as u64;
                    }
                    _ => {
                        return Err(not_continued(
                            &path,
                            &format!("holds fewer than the checkpoint's {frames} frames"),
                        ))
                    }
                }
            }
        }
        let blank = format!("{:w$}\n", "", w = EXTENT_LINE - 1).repeat(meta.frames - frames);
        let last = meta.start_frame + frames as i32 - 1;
        let code = format!("{:<w$}", last.max(meta.start_frame), w = TIME_CODE_WIDTH);
        (file.truncate(at))
            .and_then(|()| file.write_at(at - 5, CLOSE.as_bytes()))
            .and_then(|()| {
                file.write_at(
                    l.extent_at + (frames * EXTENT_LINE) as u64,
                    blank.as_bytes(),
                )
            })
            .and_then(|()| file.write_at(l.end_code_at, code.as_bytes()))
            .map_err(write_error(&path))?;
        Ok(UsdaWriter::over(file, meta, &l, samples, at))
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
        sample.push_str("],");
        let (lo, hi) = bounds(&p);
        let mut extent = format!("        {frame}: [{}, {}],", tuple(&lo), tuple(&hi));
        let _ = writeln!(extent, "{:w$}", "", w = EXTENT_LINE - 1 - extent.len());
        let line = self.extent_at + (done * EXTENT_LINE) as u64;
        let end = self.end;
        let mut block = String::with_capacity(sample.len() + 8);
        block.push('#');
        block.push_str(&sample[1..]);
        block.push_str(&closing(end + block.len() as u64));
        let (end_code_at, last) = (self.end_code_at, frame - i32::from(done > 0));
        self.file.add_frame(
            |f| {
                f.write_at(line, format!("#{}", &extent[1..]).as_bytes())?;
                f.write_at(line, b" ")?;
                f.write_at(end, block.as_bytes())?;
                f.write_at(end - 5, b"    \n ")?;
                let code = format!("{frame:<w$}", w = TIME_CODE_WIDTH);
                f.write_at(end_code_at, code.as_bytes())
            },
            // Back to the finished frames: the old closing braces, the file's old end, a
            // blank extent line, the previous end time code.
            |f| {
                let blank = format!("{:w$}\n", "", w = EXTENT_LINE - 1);
                let code = format!("{last:<w$}", w = TIME_CODE_WIDTH);
                let results = [
                    f.write_at(end - 5, CLOSE.as_bytes()),
                    f.truncate(end),
                    f.write_at(line, blank.as_bytes()),
                    f.write_at(end_code_at, code.as_bytes()),
                ];
                results.into_iter().collect()
            },
        )?;
        self.samples.push((end, sample.len()));
        self.end += block.len() as u64;
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<PathBuf> {
        let UsdaWriter {
            file,
            samples_at,
            samples,
            ..
        } = *self;
        file.publish_with(|w, partial| {
            partial.seek(SeekFrom::Start(0))?;
            let copied = std::io::copy(&mut Read::by_ref(partial).take(samples_at), w)?;
            if copied != samples_at {
                return Err(std::io::Error::other(
                    "the partial file is shorter than its header",
                ));
            }
            w.write_all(b"\n")?;
            let mut buf = Vec::new();
            for &(at, len) in &samples {
                buf.resize(len, 0);
                partial.seek(SeekFrom::Start(at))?;
                partial.read_exact(&mut buf)?;
                // The first byte was the comment sign before the frame went live.
                buf[0] = b' ';
                w.write_all(&buf)?;
                w.write_all(b"\n")?;
            }
            w.write_all(TAIL.as_bytes())
        })
    }

    fn partial(&self) -> &dyn Partial {
        &self.file
    }

    fn sync(&mut self) -> Result<()> {
        self.file.sync().map_err(write_error(self.file.path()))
    }
}

/// Spaces + [`CLOSE`] to write at byte `at`, the spaces as many as keep the 6-byte
/// commit of the next frame (step 3 of the module's doc: the last 5 bytes and the one
/// after them) inside one page.
fn closing(at: u64) -> String {
    let mut s = String::new();
    let end = |s: &String| at + (s.len() + CLOSE.len()) as u64;
    while (end(&s) - 5) / PAGE != end(&s) / PAGE {
        s.push(' ');
    }
    s.push_str(CLOSE);
    s
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
