//! The partial-file plumbing every cache writer shares: a cache is written as
//! `<out>.partial`, kept a complete, valid cache of the finished frames after every frame
//! (and after a SIGKILL at any instant), and renamed over `<out>` only when the bake
//! finishes. An interrupted or failed bake thus leaves the finished frames in the partial
//! file and never touches an existing `<out>`. The partial file is claimed first
//! ([`super::claim`]): one bake per output, no truncation of an earlier bake's partial
//! without `force`, no writing through a symbolic link.
//!
//! Two shapes of output share the [`Partial`] view (path and finished frames):
//!
//! * [`PartialFile`]: one file holding every frame (PC2, MDD, USD). A frame goes in through
//!   [`PartialFile::add_frame`], which counts it once its bytes are in and otherwise runs the
//!   format's restore step, cutting the file back to its last valid state (a full disk frees
//!   the space again). A format whose finished file differs from its partial layout
//!   publishes through [`PartialFile::publish_with`].
//! * [`PartialSequence`]: one file per frame (`.geo` sequences), each written complete as
//!   `<frame file>.partial.tmp` and renamed to `<frame file>.partial`, all renamed to their
//!   final names at the end; the claimed `<pattern>.partial` holds the lock meanwhile.
use super::claim;
use crate::error::{Error, Result};
use crate::format::FramePattern;
use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// `<out>.partial`.
pub fn partial_path(out: &Path) -> PathBuf {
    with_suffix(out, ".partial")
}

/// `path` with `suffix` appended to its file name.
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// The error of a failed write to `path`.
pub(crate) fn write_error(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |source| Error::Output {
        path: path.to_path_buf(),
        source,
    }
}

/// What every partial output tells: where it is and how many frames it holds.
pub trait Partial {
    /// Path of the partial file (for a sequence, the pattern of the partial frame files).
    fn path(&self) -> &Path;
    /// Frames finished so far.
    fn frames(&self) -> usize;
}

/// One cache file being written as `<out>.partial`.
#[derive(Debug)]
pub struct PartialFile {
    out: PathBuf,
    path: PathBuf,
    file: File,
    frames: usize,
}

impl PartialFile {
    /// Claims `<out>.partial` ([`claim::claim`]: an earlier bake's partial file is
    /// replaced only with `force`) and writes `header`, the format's valid file of no
    /// frames.
    pub fn create(out: &Path, header: &[u8], force: bool) -> Result<Self> {
        let path = partial_path(out);
        let file = claim::claim(&path, force, header)?;
        Ok(PartialFile {
            out: out.to_path_buf(),
            path,
            file,
            frames: 0,
        })
    }

    /// Takes over the partial file `<out>.partial` of an interrupted bake
    /// ([`claim::reclaim`]), its bytes kept, counting `frames` finished frames: the
    /// format's `reopen` has checked and cut it to them.
    pub fn reopen(out: &Path, frames: usize) -> Result<Self> {
        let path = partial_path(out);
        let file = claim::reclaim(&path)?;
        Ok(PartialFile {
            out: out.to_path_buf(),
            path,
            file,
            frames,
        })
    }

    /// Length of the file in bytes.
    pub fn size(&self) -> std::io::Result<u64> {
        Ok(self.file.metadata()?.len())
    }

    /// Reads `buf.len()` bytes at byte offset `at`.
    pub fn read_at(&mut self, at: u64, buf: &mut [u8]) -> std::io::Result<()> {
        self.file.seek(SeekFrom::Start(at))?;
        self.file.read_exact(buf)
    }

    /// Flushes the frames written so far to the disk.
    pub fn sync(&self) -> std::io::Result<()> {
        self.file.sync_data()
    }

    /// Adds one frame: `write` puts its bytes in; on success the frame counts, on failure
    /// `restore` takes the file back to the finished frames (its own errors are ignored:
    /// the write's error is the one reported) and the error names the partial file.
    pub fn add_frame(
        &mut self,
        write: impl FnOnce(&mut Self) -> std::io::Result<()>,
        restore: impl FnOnce(&mut Self) -> std::io::Result<()>,
    ) -> Result<()> {
        if let Err(e) = write(self) {
            let _ = restore(self);
            return Err(write_error(&self.path)(e));
        }
        self.frames += 1;
        Ok(())
    }

    /// Writes `bytes` at byte offset `at`.
    pub fn write_at(&mut self, at: u64, bytes: &[u8]) -> std::io::Result<()> {
        self.file.seek(SeekFrom::Start(at))?;
        self.file.write_all(bytes)
    }

    /// Writes `bytes` at the end of the file.
    pub fn append(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.file.seek(SeekFrom::End(0))?;
        self.file.write_all(bytes)
    }

    /// Cuts the file to `len` bytes.
    pub fn truncate(&mut self, len: u64) -> std::io::Result<()> {
        self.file.set_len(len)
    }

    /// Flushes the file to disk and renames it over `<out>`; returns `<out>`.
    pub fn publish(self) -> Result<PathBuf> {
        self.file.sync_all().map_err(write_error(&self.path))?;
        std::fs::rename(&self.path, &self.out).map_err(write_error(&self.out))?;
        Ok(self.out)
    }

    /// Publishes a finished file other than the partial one: `write` writes it to
    /// `<out>.partial.tmp`, reading what it needs from the partial file (given second, at
    /// an unspecified position); the temporary file is flushed and renamed over `<out>`,
    /// then the partial file removed. On error the temporary file is removed and the
    /// partial file kept.
    pub fn publish_with(
        mut self,
        write: impl FnOnce(&mut BufWriter<File>, &mut File) -> std::io::Result<()>,
    ) -> Result<PathBuf> {
        let tmp = with_suffix(&self.path, ".tmp");
        let result = (|| {
            let _ = std::fs::remove_file(&tmp);
            let mut w = BufWriter::new(claim::create_new(&tmp)?);
            write(&mut w, &mut self.file)?;
            let file = w.into_inner().map_err(|e| e.into_error())?;
            file.sync_all()?;
            std::fs::rename(&tmp, &self.out)
        })();
        if let Err(e) = result {
            let _ = std::fs::remove_file(&tmp);
            return Err(write_error(&self.out)(e));
        }
        let _ = std::fs::remove_file(&self.path);
        Ok(self.out)
    }

    /// The partial file, to read back what it holds.
    pub fn file(&mut self) -> &mut File {
        &mut self.file
    }
}

impl Partial for PartialFile {
    fn path(&self) -> &Path {
        &self.path
    }

    fn frames(&self) -> usize {
        self.frames
    }
}

/// A sequence of frame files being written, each as `<frame file>.partial`.
#[derive(Debug)]
pub struct PartialSequence {
    pattern: FramePattern,
    out: PathBuf,
    path: PathBuf,
    /// The claimed `<pattern>.partial` (empty; it holds the lock).
    claim: File,
    /// Replace an earlier sequence: its frames this one does not write are removed.
    force: bool,
    /// Frame number, final and partial path of every finished frame.
    written: Vec<(i32, PathBuf, PathBuf)>,
    /// Frames of `written` flushed to the disk ([`PartialSequence::sync`]).
    synced: usize,
}

impl PartialSequence {
    /// Claims the sequence `out` (its pattern's `<out>.partial`, [`claim::claim`]);
    /// writes no frame yet.
    pub fn new(out: &Path, force: bool) -> Result<Self> {
        let path = partial_path(out);
        Ok(PartialSequence {
            pattern: FramePattern::parse(out)?,
            out: out.to_path_buf(),
            claim: claim::claim(&path, force, b"")?,
            path,
            force,
            written: Vec::new(),
            synced: 0,
        })
    }

    /// Takes over the sequence `out` of an interrupted bake (its `<out>.partial` lock file,
    /// [`claim::reclaim`]) with the `frames` frame files from `first` on kept: each must
    /// be there; partial frame files after them are removed.
    pub fn reopen(out: &Path, force: bool, first: i32, frames: usize, last: i32) -> Result<Self> {
        let path = partial_path(out);
        let claim = claim::reclaim(&path)?;
        let pattern = FramePattern::parse(out)?;
        let mut written = Vec::with_capacity(frames);
        for k in 0..frames {
            let frame = first + k as i32;
            let final_path = pattern.path(frame);
            let partial = partial_path(&final_path);
            if !partial.is_file() {
                return Err(Error::input(
                    &partial,
                    None,
                    "is missing, so the bake cannot continue from its checkpoint",
                ));
            }
            written.push((frame, final_path, partial));
        }
        for frame in first + frames as i32..=last {
            let partial = partial_path(&pattern.path(frame));
            let _ = std::fs::remove_file(with_suffix(&partial, ".tmp"));
            if partial.exists() {
                std::fs::remove_file(&partial).map_err(write_error(&partial))?;
            }
        }
        Ok(PartialSequence {
            pattern,
            out: out.to_path_buf(),
            path,
            claim,
            force,
            written,
            synced: 0,
        })
    }

    /// Flushes the frame files written since the last call to the disk.
    pub fn sync(&mut self) -> std::io::Result<()> {
        for (_, _, partial) in &self.written[self.synced..] {
            File::open(partial)?.sync_all()?;
        }
        self.synced = self.written.len();
        Ok(())
    }

    /// Writes frame `frame` complete as `<frame file>.partial.tmp`, then renames it to
    /// `<frame file>.partial`: a frame's partial file is complete whenever it exists.
    pub fn add_frame(&mut self, frame: i32, bytes: &[u8]) -> Result<()> {
        let path = self.pattern.path(frame);
        let partial = partial_path(&path);
        let tmp = with_suffix(&partial, ".tmp");
        let _ = std::fs::remove_file(&tmp);
        let written = claim::create_new(&tmp)
            .and_then(|mut f| f.write_all(bytes))
            .and_then(|()| std::fs::rename(&tmp, &partial));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(write_error(&partial)(e));
        }
        self.written.push((frame, path, partial));
        Ok(())
    }

    /// Renames every frame file to its final name; with `force`, removes the frames of an
    /// earlier sequence of the same pattern that this one did not write (and nothing
    /// else); returns the sequence's pattern.
    pub fn publish(self) -> Result<PathBuf> {
        for (_, path, partial) in &self.written {
            std::fs::rename(partial, path).map_err(write_error(path))?;
        }
        if self.force {
            let mine: std::collections::HashSet<i32> =
                self.written.iter().map(|(f, _, _)| *f).collect();
            for (frame, old) in self.pattern.existing()? {
                if !mine.contains(&frame) {
                    std::fs::remove_file(&old).map_err(write_error(&old))?;
                }
            }
        }
        let _ = std::fs::remove_file(&self.path);
        drop(self.claim);
        Ok(self.out)
    }
}

impl Partial for PartialSequence {
    fn path(&self) -> &Path {
        &self.path
    }

    fn frames(&self) -> usize {
        self.written.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_frame_is_not_counted_and_the_restore_step_runs() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("c.bin");
        let mut f = PartialFile::create(&out, b"head", false).unwrap();
        f.add_frame(|f| f.append(b"one"), |_| Ok(())).unwrap();
        let e = f
            .add_frame(
                |f| {
                    f.append(b"half")?;
                    Err(std::io::Error::other("disk full"))
                },
                |f| f.truncate(7),
            )
            .unwrap_err();
        assert!(e.to_string().contains("c.bin.partial"), "{e}");
        assert_eq!(f.frames(), 1);
        assert_eq!(std::fs::read(f.path()).unwrap(), b"headone");
        assert_eq!(f.publish().unwrap(), out);
        assert_eq!(std::fs::read(&out).unwrap(), b"headone");
    }
}
