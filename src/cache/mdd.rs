//! MDD point caches (LightWave's format; Blender's Mesh Cache modifier, Houdini, Max).
//!
//! ```text
//! offset 0        i32  number of frames F
//!        4        i32  number of points P
//!        8        f32  time of each frame (s) = frame number / fps, F values
//!        8 + 4F   f32  x, y, z per point per frame
//! ```
//! Everything big-endian. The time table sits in front of the point data and grows with
//! every frame, so appending in place is impossible: after each frame the whole file is
//! rebuilt as `<out>.partial.tmp` (the previous partial file's points streamed across,
//! never held in memory) and renamed over `<out>.partial`. The partial file is therefore
//! always a complete MDD of the finished frames, even if the process dies mid-write. The
//! price: the bytes written grow with the square of the frame count (a 10,000-point,
//! 250-frame bake copies 30 MB at its last frame, ~4 GB over the bake, mostly in the page
//! cache), small next to the simulation of such a frame; PC2 appends instead.
use super::partial::{Partial, PartialFile};
use super::{CacheMeta, CacheWriter};
use crate::error::{Error, Result};
pub use crate::format::mdd::read;
use crate::Vec3;
use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Writes an MDD file through `<out>.partial`.
#[derive(Debug)]
pub struct MddWriter {
    file: PartialFile,
    layout: Layout,
}

/// What fixes the file's bytes besides the points.
#[derive(Debug)]
struct Layout {
    points: usize,
    start_frame: i32,
    fps: f64,
}

impl MddWriter {
    /// Creates `<out>.partial` holding no frame yet.
    pub fn create(out: &Path, meta: &CacheMeta) -> Result<Self> {
        let points = i32::try_from(meta.points)
            .map_err(|_| Error::input(out, None, "too many points for an MDD file"))?;
        let mut header = Vec::with_capacity(8);
        header.extend_from_slice(&0i32.to_be_bytes());
        header.extend_from_slice(&points.to_be_bytes());
        Ok(MddWriter {
            file: PartialFile::create(out, &header)?,
            layout: Layout {
                points: meta.points,
                start_frame: meta.start_frame,
                fps: meta.fps,
            },
        })
    }
}

impl Layout {
    /// Writes to `w` the file of the `done` finished frames of `old` (the partial file at
    /// `partial`) plus `frame` (big-endian f32 bytes).
    fn rebuild(
        &self,
        (done, frame): (usize, &[u8]),
        w: &mut BufWriter<File>,
        (old, partial): (&mut File, &Path),
    ) -> std::io::Result<()> {
        let frames = done + 1;
        let count = i32::try_from(frames).map_err(std::io::Error::other)?;
        w.write_all(&count.to_be_bytes())?;
        w.write_all(&(self.points as i32).to_be_bytes())?;
        for k in 0..frames {
            let time = (f64::from(self.start_frame) + k as f64) / self.fps;
            w.write_all(&(time as f32).to_be_bytes())?;
        }
        if done > 0 {
            old.seek(SeekFrom::Start(8 + 4 * done as u64))?;
            let bytes = (done * self.points * 12) as u64;
            let copied = std::io::copy(&mut old.take(bytes), w)?;
            if copied != bytes {
                return Err(std::io::Error::other(format!(
                    "{} is shorter than its {done} frames",
                    partial.display(),
                )));
            }
        }
        w.write_all(frame)
    }
}

impl CacheWriter for MddWriter {
    fn write_frame(&mut self, points: &[Vec3]) -> Result<()> {
        let buf = super::pack_frame(points, self.layout.points, "MDD", f32::to_be_bytes)?;
        let layout = &self.layout;
        self.file.add_frame(
            |f| {
                let (done, partial) = (f.frames(), f.path().to_path_buf());
                f.rewrite(|w, old| layout.rebuild((done, &buf), w, (old, &partial)))
            },
            // `rewrite` leaves the partial file untouched on error.
            |_| Ok(()),
        )
    }

    fn finish(self: Box<Self>) -> Result<PathBuf> {
        self.file.publish()
    }

    fn partial(&self) -> &dyn Partial {
        &self.file
    }
}
