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
use super::{partial_path, write_error, CacheMeta, CacheWriter};
use crate::error::{Error, Result};
pub use crate::format::mdd::read;
use crate::Vec3;
use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Writes an MDD file through `<out>.partial`.
#[derive(Debug)]
pub struct MddWriter {
    out: PathBuf,
    partial: PathBuf,
    tmp: PathBuf,
    points: usize,
    start_frame: i32,
    fps: f64,
    frames: usize,
}

impl MddWriter {
    /// Creates `<out>.partial` holding no frame yet.
    pub fn create(out: &Path, meta: &CacheMeta) -> Result<Self> {
        i32::try_from(meta.points)
            .map_err(|_| Error::input(out, None, "too many points for an MDD file"))?;
        let partial = partial_path(out);
        let mut tmp = partial.clone().into_os_string();
        tmp.push(".tmp");
        let w = MddWriter {
            out: out.to_path_buf(),
            partial,
            tmp: PathBuf::from(tmp),
            points: meta.points,
            start_frame: meta.start_frame,
            fps: meta.fps,
            frames: 0,
        };
        w.rebuild(&[]).map_err(write_error(&w.tmp))?;
        Ok(w)
    }

    /// Writes the partial file of the finished frames plus `frame` (big-endian f32 bytes)
    /// to the temporary file and renames it over the partial file.
    fn rebuild(&self, frame: &[u8]) -> std::io::Result<()> {
        let frames = self.frames + usize::from(!frame.is_empty());
        let count = i32::try_from(frames).map_err(std::io::Error::other)?;
        let mut w = BufWriter::new(File::create(&self.tmp)?);
        w.write_all(&count.to_be_bytes())?;
        w.write_all(&(self.points as i32).to_be_bytes())?;
        for k in 0..frames {
            let time = (f64::from(self.start_frame) + k as f64) / self.fps;
            w.write_all(&(time as f32).to_be_bytes())?;
        }
        if self.frames > 0 {
            let mut old = File::open(&self.partial)?;
            old.seek(SeekFrom::Start(8 + 4 * self.frames as u64))?;
            let bytes = (self.frames * self.points * 12) as u64;
            let copied = std::io::copy(&mut old.take(bytes), &mut w)?;
            if copied != bytes {
                return Err(std::io::Error::other(format!(
                    "{} is shorter than its {} frames",
                    self.partial.display(),
                    self.frames
                )));
            }
        }
        w.write_all(frame)?;
        w.into_inner().map_err(|e| e.into_error())?;
        std::fs::rename(&self.tmp, &self.partial)
    }
}

impl CacheWriter for MddWriter {
    fn write_frame(&mut self, points: &[Vec3]) -> Result<()> {
        let buf = super::pack_frame(points, self.points, "MDD", f32::to_be_bytes)?;
        if let Err(e) = self.rebuild(&buf) {
            let _ = std::fs::remove_file(&self.tmp); // the partial file is untouched
            return Err(write_error(&self.partial)(e));
        }
        self.frames += 1;
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<PathBuf> {
        super::publish(&self.partial, &self.out)
    }

    fn partial_path(&self) -> &Path {
        &self.partial
    }

    fn frames_written(&self) -> usize {
        self.frames
    }
}
