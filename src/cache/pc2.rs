//! PC2 point caches (Blender's Mesh Cache modifier, Houdini's and Max's point cache).
//!
//! ```text
//! offset 0   char[12] "POINTCACHE2\0"
//!        12  i32  version = 1
//!        16  i32  number of points
//!        20  f32  start frame
//!        24  f32  sampling (frames per sample) = 1.0
//!        28  i32  number of samples
//!        32  f32 x, y, z per point per sample, little-endian
//! ```
//! Each frame is appended first and the header's sample count rewritten after (4 bytes in
//! the first page, one write the kernel does whole), so the partial file is valid at every
//! instant: a SIGKILL in between leaves a valid file that ignores the trailing bytes. A
//! failed write cuts the file back to its finished frames.
use super::partial::{write_error, Partial, PartialFile};
use super::{not_continued, CacheMeta, CacheWriter, Reopen};
use crate::error::{Error, Result};
use crate::Vec3;
use std::path::{Path, PathBuf};

/// Header size in bytes.
const HEADER: u64 = 32;
/// Byte offset of the header's sample count.
const SAMPLES_AT: u64 = 28;

/// Writes a PC2 file through `<out>.partial`.
#[derive(Debug)]
pub struct Pc2Writer {
    file: PartialFile,
    points: usize,
}

impl Pc2Writer {
    /// Creates `<out>.partial` with a header for `points` points starting at `start_frame`
    /// (an earlier bake's partial file is replaced only with `force`).
    pub fn create(out: &Path, points: usize, start_frame: f32, force: bool) -> Result<Self> {
        let n = i32::try_from(points)
            .map_err(|_| Error::input(out, None, "too many points for a PC2 file"))?;
        let mut header = Vec::with_capacity(HEADER as usize);
        header.extend_from_slice(b"POINTCACHE2\0");
        header.extend_from_slice(&1i32.to_le_bytes());
        header.extend_from_slice(&n.to_le_bytes());
        header.extend_from_slice(&start_frame.to_le_bytes());
        header.extend_from_slice(&1.0f32.to_le_bytes());
        header.extend_from_slice(&0i32.to_le_bytes());
        Ok(Pc2Writer {
            file: PartialFile::create(out, &header, force)?,
            points,
        })
    }
}

impl Reopen for Pc2Writer {
    /// Checks the header (points, start frame) and the samples it counts, then cuts the
    /// file after `frames` samples and counts them in the header.
    fn reopen(out: &Path, meta: &CacheMeta, frames: usize) -> Result<Self> {
        let mut file = PartialFile::reopen(out, frames)?;
        let path = file.path().to_path_buf();
        let mut head = [0u8; HEADER as usize];
        let read = file.read_at(0, &mut head);
        let i32_at =
            |o: usize| i32::from_le_bytes([head[o], head[o + 1], head[o + 2], head[o + 3]]);
        if read.is_err() || &head[..12] != b"POINTCACHE2\0" {
            return Err(not_continued(&path, "is not a PC2 file"));
        }
        let start = f32::from_le_bytes([head[20], head[21], head[22], head[23]]);
        if i32_at(16) as usize != meta.points || start != meta.start_frame as f32 {
            return Err(not_continued(
                &path,
                "is a PC2 cache of other points or frames",
            ));
        }
        let valid = HEADER + (frames * meta.points * 12) as u64;
        let len = file.size().map_err(write_error(&path))?;
        if (i32_at(28).max(0) as usize) < frames || len < valid {
            return Err(not_continued(
                &path,
                &format!("holds fewer than the checkpoint's {frames} frames"),
            ));
        }
        file.truncate(valid)
            .and_then(|()| file.write_at(SAMPLES_AT, &(frames as u32).to_le_bytes()))
            .map_err(write_error(&path))?;
        Ok(Pc2Writer {
            file,
            points: meta.points,
        })
    }
}

impl CacheWriter for Pc2Writer {
    fn write_frame(&mut self, points: &[Vec3]) -> Result<()> {
        let buf = super::pack_frame(points, self.points, "PC2", f32::to_le_bytes)?;
        let samples = self.file.frames() as u32;
        let valid = HEADER + u64::from(samples) * self.points as u64 * 12;
        self.file.add_frame(
            |f| {
                f.append(&buf)?;
                f.write_at(SAMPLES_AT, &(samples + 1).to_le_bytes())
            },
            |f| {
                let cut = f.truncate(valid);
                f.write_at(SAMPLES_AT, &samples.to_le_bytes()).and(cut)
            },
        )
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

pub use crate::format::Sample;

/// Reads a PC2 file: (start frame, sampling, samples). Used by tests and tools.
pub fn read(path: &Path) -> Result<(f32, f32, Vec<Sample>)> {
    let bytes = std::fs::read(path)
        .map_err(|e| Error::input(path, None, format!("cannot read PC2 file: {e}")))?;
    let bad = |m: &str| Error::input(path, None, format!("not a valid PC2 file: {m}"));
    if bytes.len() < 32 || &bytes[0..12] != b"POINTCACHE2\0" {
        return Err(bad("missing POINTCACHE2 header"));
    }
    let i32_at =
        |o: usize| i32::from_le_bytes([bytes[o], bytes[o + 1], bytes[o + 2], bytes[o + 3]]);
    let f32_at =
        |o: usize| f32::from_le_bytes([bytes[o], bytes[o + 1], bytes[o + 2], bytes[o + 3]]);
    let points = usize::try_from(i32_at(16)).map_err(|_| bad("negative point count"))?;
    let samples = usize::try_from(i32_at(28)).map_err(|_| bad("negative sample count"))?;
    if bytes.len() < 32 + points * samples * 12 {
        return Err(bad("file shorter than its header says"));
    }
    let frames = (0..samples)
        .map(|s| {
            (0..points)
                .map(|p| {
                    let o = 32 + (s * points + p) * 12;
                    [f32_at(o), f32_at(o + 4), f32_at(o + 8)]
                })
                .collect()
        })
        .collect();
    Ok((f32_at(20), f32_at(24), frames))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_file_is_valid_after_every_frame_and_renamed_on_finish() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("c.pc2");
        let mut w: Box<dyn CacheWriter> = Box::new(Pc2Writer::create(&out, 2, 5.0, false).unwrap());
        let partial = w.partial_path().to_path_buf();
        for k in 0..3 {
            let p = [
                Vec3::new(k as f64, 1.0, 2.0),
                Vec3::new(-1.0, 0.5, k as f64),
            ];
            w.write_frame(&p).unwrap();
            let (start, rate, frames) = read(&partial).unwrap();
            assert_eq!((start, rate, frames.len()), (5.0, 1.0, k + 1));
            assert_eq!(frames[k][0], [k as f32, 1.0, 2.0]);
            assert_eq!(frames[k][1], [-1.0, 0.5, k as f32]);
        }
        assert_eq!(w.frames_written(), 3);
        assert!(!out.exists());
        w.finish().unwrap();
        assert!(out.exists() && !partial.exists());
        let bytes = std::fs::read(&out).unwrap();
        assert_eq!(bytes.len(), 32 + 3 * 2 * 12);
    }
}
