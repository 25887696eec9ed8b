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
//! The sample count is rewritten after every frame so the partial file is always valid.
use super::{partial_path, CacheWriter};
use crate::error::{Error, Result};
use crate::Vec3;
use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Writes a PC2 file through `<out>.partial`.
#[derive(Debug)]
pub struct Pc2Writer {
    out: PathBuf,
    partial: PathBuf,
    file: BufWriter<File>,
    points: usize,
    samples: u32,
}

impl Pc2Writer {
    /// Creates `<out>.partial` with a header for `points` points starting at `start_frame`.
    pub fn create(out: &Path, points: usize, start_frame: f32) -> Result<Self> {
        let partial = partial_path(out);
        let io_err = |source| Error::Output {
            path: partial.clone(),
            source,
        };
        let file = File::create(&partial).map_err(io_err)?;
        let mut file = BufWriter::new(file);
        let n = i32::try_from(points)
            .map_err(|_| Error::usage(format!("{}: too many points for PC2", out.display())))?;
        let mut header = Vec::with_capacity(32);
        header.extend_from_slice(b"POINTCACHE2\0");
        header.extend_from_slice(&1i32.to_le_bytes());
        header.extend_from_slice(&n.to_le_bytes());
        header.extend_from_slice(&start_frame.to_le_bytes());
        header.extend_from_slice(&1.0f32.to_le_bytes());
        header.extend_from_slice(&0i32.to_le_bytes());
        file.write_all(&header).map_err(io_err)?;
        file.flush().map_err(io_err)?;
        Ok(Pc2Writer {
            out: out.to_path_buf(),
            partial,
            file,
            points,
            samples: 0,
        })
    }
}

impl CacheWriter for Pc2Writer {
    fn write_frame(&mut self, points: &[Vec3]) -> Result<()> {
        if points.len() != self.points {
            return Err(Error::Internal(format!(
                "PC2 frame has {} points, header says {}",
                points.len(),
                self.points
            )));
        }
        let partial = self.partial.clone();
        let io_err = |source| Error::Output {
            path: partial.clone(),
            source,
        };
        let mut buf = Vec::with_capacity(points.len() * 12);
        for p in points {
            for c in p.iter() {
                buf.extend_from_slice(&(*c as f32).to_le_bytes());
            }
        }
        self.file.write_all(&buf).map_err(io_err)?;
        self.samples += 1;
        // Frame data first, then the header's count: a crash in between leaves a valid
        // file that simply ignores the trailing frame.
        self.file.flush().map_err(io_err)?;
        let f = self.file.get_mut();
        f.seek(SeekFrom::Start(28)).map_err(io_err)?;
        f.write_all(&self.samples.to_le_bytes()).map_err(io_err)?;
        f.seek(SeekFrom::End(0)).map_err(io_err)?;
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<PathBuf> {
        let partial = self.partial.clone();
        self.file.flush().map_err(|source| Error::Output {
            path: partial.clone(),
            source,
        })?;
        self.file
            .get_ref()
            .sync_all()
            .map_err(|source| Error::Output {
                path: partial.clone(),
                source,
            })?;
        std::fs::rename(&self.partial, &self.out).map_err(|source| Error::Output {
            path: self.out.clone(),
            source,
        })?;
        Ok(self.out.clone())
    }

    fn partial_path(&self) -> &Path {
        &self.partial
    }
}

/// Points of one cache sample, as stored (f32).
pub type Sample = Vec<[f32; 3]>;

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
        let mut w: Box<dyn CacheWriter> = Box::new(Pc2Writer::create(&out, 2, 5.0).unwrap());
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
        assert!(!out.exists());
        w.finish().unwrap();
        assert!(out.exists() && !partial.exists());
        let bytes = std::fs::read(&out).unwrap();
        assert_eq!(bytes.len(), 32 + 3 * 2 * 12);
    }
}
