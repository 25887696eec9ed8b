//! MDD point caches (LightWave's format; Blender's Mesh Cache modifier, Houdini, Max).
//!
//! ```text
//! offset 0        i32  number of frames F
//!        4        i32  number of points P
//!        8        f32  time of each frame (s) = frame number / fps, F values
//!        8 + 4F   f32  x, y, z per point per frame
//! ```
//! Everything big-endian. The time table sits in front of the point data, so a file that
//! grew frame by frame would have to move all its points at every frame. Instead the
//! partial file is laid out for the whole range from the start: the header and time table
//! of all F frames are written first and the file extended to its full size (a sparse
//! file: the unwritten frames cost no disk and read as zeros); each frame's points are
//! then written once, in place. The partial file is thus a valid MDD at every instant,
//! even after a SIGKILL (its unfinished frames then hold zeros), and finishing is a
//! rename. When a bake stops early in an orderly way (a signal, an error, a full disk),
//! the writer trims the partial file to the frames it finished: their points move back by
//! the unused part of the time table, the frame count becomes theirs, the rest is cut.
use super::partial::{write_error, Partial, PartialFile};
use super::{not_continued, CacheMeta, CacheWriter, Reopen};
use crate::error::{Error, Result};
pub use crate::format::mdd::read;
use crate::Vec3;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// Writes an MDD file through `<out>.partial`.
#[derive(Debug)]
pub struct MddWriter {
    /// `None` once published.
    file: Option<PartialFile>,
    points: usize,
    /// Frames the range holds (the header's count until trimmed).
    frames: usize,
}

impl MddWriter {
    /// Creates `<out>.partial`: the header and time table of `meta.frames` frames, the
    /// file extended to the size of all of them.
    pub fn create(out: &Path, meta: &CacheMeta) -> Result<Self> {
        let too_big = || {
            Error::input(
                out,
                Some(meta.name),
                "too many points or frames for an MDD file",
            )
        };
        let points = i32::try_from(meta.points).map_err(|_| too_big())?;
        let frames = i32::try_from(meta.frames).map_err(|_| too_big())?;
        // Valid at every step: no frame (then zeros after it), the time table, the count.
        let mut empty = Vec::with_capacity(8);
        empty.extend_from_slice(&0i32.to_be_bytes());
        empty.extend_from_slice(&points.to_be_bytes());
        let mut times = Vec::with_capacity(4 * meta.frames);
        for k in 0..meta.frames {
            let time = (f64::from(meta.start_frame) + k as f64) / meta.fps;
            times.extend_from_slice(&(time as f32).to_be_bytes());
        }
        let mut file = PartialFile::create(out, &empty, meta.replace_partial)?;
        let size = data_at(meta.frames) + (meta.frames * meta.points * 12) as u64;
        let laid_out = file
            .truncate(size)
            .and_then(|()| file.write_at(8, &times))
            .and_then(|()| file.write_at(0, &frames.to_be_bytes()));
        if let Err(e) = laid_out {
            let _ = file.write_at(0, &0i32.to_be_bytes());
            let _ = file.truncate(8);
            return Err(Error::Output {
                path: file.path().to_path_buf(),
                source: e,
            });
        }
        Ok(MddWriter {
            file: Some(file),
            points: meta.points,
            frames: meta.frames,
        })
    }

    /// Cuts the partial file to the `done` finished frames (see the module's doc).
    fn trim(
        file: &mut PartialFile,
        (done, frames, points): (usize, usize, usize),
    ) -> std::io::Result<()> {
        let frame_bytes = (points * 12) as u64;
        let (from, to) = (data_at(frames), data_at(done));
        let mut buf = vec![0u8; 1 << 20];
        let mut moved = 0;
        let total = done as u64 * frame_bytes;
        while moved < total {
            let n = buf.len().min((total - moved) as usize);
            let f = file.file();
            f.seek(SeekFrom::Start(from + moved))?;
            f.read_exact(&mut buf[..n])?;
            file.write_at(to + moved, &buf[..n])?;
            moved += n as u64;
        }
        file.write_at(0, &(done as i32).to_be_bytes())?;
        file.truncate(to + total)
    }
}

impl Reopen for MddWriter {
    /// Checks the header (points, frame count, size), then lays the file out for the whole
    /// range again: a file trimmed when its bake stopped has its `frames` finished frames
    /// moved back behind the full time table; frames after them are left to be
    /// overwritten.
    fn reopen(out: &Path, meta: &CacheMeta, frames: usize) -> Result<Self> {
        let mut file = PartialFile::reopen(out, frames)?;
        let path = file.path().to_path_buf();
        let mut head = [0u8; 8];
        let read = file.read_at(0, &mut head);
        let count = i32::from_be_bytes([head[0], head[1], head[2], head[3]]).max(0) as usize;
        let points = i32::from_be_bytes([head[4], head[5], head[6], head[7]]);
        if read.is_err() || points as usize != meta.points || count > meta.frames {
            return Err(not_continued(
                &path,
                "is an MDD cache of other points or frames",
            ));
        }
        let frame_bytes = (meta.points * 12) as u64;
        let len = file.size().map_err(write_error(&path))?;
        if count < frames || len < data_at(count) + frames as u64 * frame_bytes {
            return Err(not_continued(
                &path,
                &format!("holds fewer than the checkpoint's {frames} frames"),
            ));
        }
        let mut times = Vec::with_capacity(4 * meta.frames);
        for k in 0..meta.frames {
            let time = (f64::from(meta.start_frame) + k as f64) / meta.fps;
            times.extend_from_slice(&(time as f32).to_be_bytes());
        }
        let size = data_at(meta.frames) + meta.frames as u64 * frame_bytes;
        let (from, to, total) = (
            data_at(count),
            data_at(meta.frames),
            frames as u64 * frame_bytes,
        );
        let laid_out = (|| {
            if from != to {
                // Hidden first (a file of no frame is valid whatever follows), then moved
                // back to front: the target lies after the source.
                file.write_at(0, &0i32.to_be_bytes())?;
                file.truncate(size.max(len))?;
                let mut buf = vec![0u8; 1 << 20];
                let mut left = total;
                while left > 0 {
                    let n = buf.len().min(left as usize);
                    left -= n as u64;
                    file.read_at(from + left, &mut buf[..n])?;
                    file.write_at(to + left, &buf[..n])?;
                }
            }
            file.truncate(size)?;
            file.write_at(8, &times)?;
            file.write_at(0, &(meta.frames as i32).to_be_bytes())
        })();
        laid_out.map_err(write_error(&path))?;
        Ok(MddWriter {
            file: Some(file),
            points: meta.points,
            frames: meta.frames,
        })
    }
}

/// Byte offset of the point data of a file of `frames` frames.
fn data_at(frames: usize) -> u64 {
    8 + 4 * frames as u64
}

impl CacheWriter for MddWriter {
    fn write_frame(&mut self, points: &[Vec3]) -> Result<()> {
        let buf = super::pack_frame(points, self.points, "MDD", f32::to_be_bytes)?;
        let (frames, n) = (self.frames, self.points);
        let Some(file) = self.file.as_mut() else {
            return Err(Error::Internal("MDD frame after finish".into()));
        };
        let done = file.frames();
        if done >= frames {
            return Err(Error::Internal(format!(
                "{}: more frames than the {frames} of its header",
                file.path().display()
            )));
        }
        let at = data_at(frames) + (done * n * 12) as u64;
        // An unfinished frame's bytes are never read: the header counts every frame of
        // the range, and a trim drops the unfinished ones.
        file.add_frame(|f| f.write_at(at, &buf), |_| Ok(()))
    }

    fn finish(mut self: Box<Self>) -> Result<PathBuf> {
        let file = self
            .file
            .take()
            .ok_or_else(|| Error::Internal("MDD finished twice".into()))?;
        if file.frames() != self.frames {
            return Err(Error::Internal(format!(
                "{}: {} of {} frames written",
                file.path().display(),
                file.frames(),
                self.frames
            )));
        }
        file.publish()
    }

    fn sync(&mut self) -> Result<()> {
        match &self.file {
            Some(f) => f.sync().map_err(write_error(f.path())),
            None => Ok(()),
        }
    }

    fn partial(&self) -> &dyn Partial {
        match &self.file {
            Some(f) => f,
            None => &Published,
        }
    }
}

impl Drop for MddWriter {
    /// An unfinished bake's partial file is trimmed to its finished frames (errors are
    /// ignored: the untrimmed file is a valid MDD too).
    fn drop(&mut self) {
        if let Some(file) = self.file.as_mut() {
            let done = file.frames();
            if done < self.frames {
                let _ = MddWriter::trim(file, (done, self.frames, self.points));
            }
        }
    }
}

/// What a published writer reports as its partial file: none.
struct Published;

impl Partial for Published {
    fn path(&self) -> &Path {
        Path::new("")
    }

    fn frames(&self) -> usize {
        0
    }
}
