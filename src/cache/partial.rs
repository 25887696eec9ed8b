//! The partial-file plumbing every cache writer shares: a cache is written as
//! `<out>.partial`, kept a complete, valid cache of the finished frames after every frame,
//! and renamed over `<out>` only when the bake finishes. An interrupted or failed bake thus
//! leaves the finished frames in the partial file and never touches an existing `<out>`.
//!
//! Two shapes of output share the [`Partial`] view (path and finished frames):
//!
//! * [`PartialFile`]: one file holding every frame (PC2, MDD, USD). A frame goes in through
//!   [`PartialFile::add_frame`], which counts it once its bytes are in and otherwise runs the
//!   format's restore step, cutting the file back to its last valid state (a full disk frees
//!   the space again). Formats that cannot grow in place rebuild the whole file with
//!   [`PartialFile::rewrite`], through `<out>.partial.tmp` and a rename.
//! * [`PartialSequence`]: one file per frame (`.geo` sequences), each written complete as
//!   `<frame file>.partial` and all renamed at the end.
use crate::error::{Error, Result};
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Seek, SeekFrom, Write};
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
    /// Creates `<out>.partial` (replacing any left by an earlier bake) holding `header`,
    /// the format's valid file of no frames.
    pub fn create(out: &Path, header: &[u8]) -> Result<Self> {
        let path = partial_path(out);
        let mut file = open_new(&path).map_err(write_error(&path))?;
        file.write_all(header).map_err(write_error(&path))?;
        Ok(PartialFile {
            out: out.to_path_buf(),
            path,
            file,
            frames: 0,
        })
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

    /// Replaces the whole file: `write` writes the new content to `<out>.partial.tmp`,
    /// reading what it keeps from the current file (given second, at an unspecified
    /// position), and the temporary file is then renamed over the partial file. The
    /// partial file is therefore always either the old or the new complete cache, even if
    /// the process dies mid-write. On error the temporary file is removed and the partial
    /// file is untouched.
    pub fn rewrite(
        &mut self,
        write: impl FnOnce(&mut BufWriter<File>, &mut File) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        let tmp = with_suffix(&self.path, ".tmp");
        let result = (|| {
            let mut w = BufWriter::new(open_new(&tmp)?);
            write(&mut w, &mut self.file)?;
            let file = w.into_inner().map_err(|e| e.into_error())?;
            std::fs::rename(&tmp, &self.path)?;
            Ok(file)
        })();
        match result {
            Ok(file) => {
                self.file = file;
                Ok(())
            }
            Err(e) => {
                let _ = std::fs::remove_file(&tmp);
                Err(e)
            }
        }
    }

    /// Flushes the file to disk and renames it over `<out>`; returns `<out>`.
    pub fn publish(self) -> Result<PathBuf> {
        self.file.sync_all().map_err(write_error(&self.path))?;
        std::fs::rename(&self.path, &self.out).map_err(write_error(&self.out))?;
        Ok(self.out)
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

/// A file created (or emptied) for reading and writing.
fn open_new(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
}

/// A sequence of frame files being written, each as `<frame file>.partial`.
#[derive(Debug)]
pub struct PartialSequence {
    out: PathBuf,
    path: PathBuf,
    /// Final and partial path of every finished frame.
    written: Vec<(PathBuf, PathBuf)>,
}

impl PartialSequence {
    /// An empty sequence whose pattern is `out`; writes nothing yet.
    pub fn new(out: &Path) -> Self {
        PartialSequence {
            out: out.to_path_buf(),
            path: partial_path(out),
            written: Vec::new(),
        }
    }

    /// Writes the next frame, whose final file is `path`, complete as `<path>.partial`; on
    /// error removes it again, so only complete frame files remain.
    pub fn add_frame(&mut self, path: PathBuf, bytes: &[u8]) -> Result<()> {
        let partial = partial_path(&path);
        if let Err(e) = std::fs::write(&partial, bytes) {
            let _ = std::fs::remove_file(&partial);
            return Err(write_error(&partial)(e));
        }
        self.written.push((path, partial));
        Ok(())
    }

    /// Renames every frame file to its final name; returns the sequence's pattern.
    pub fn publish(self) -> Result<PathBuf> {
        for (path, partial) in &self.written {
            std::fs::rename(partial, path).map_err(write_error(path))?;
        }
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
        let mut f = PartialFile::create(&out, b"head").unwrap();
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

    #[test]
    fn a_failed_rewrite_leaves_the_partial_file_and_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("c.bin");
        let mut f = PartialFile::create(&out, b"v0").unwrap();
        f.rewrite(|w, _| w.write_all(b"v1")).unwrap();
        let failed = f.rewrite(|w, _| {
            w.write_all(b"v2")?;
            Err(std::io::Error::other("disk full"))
        });
        assert!(failed.is_err());
        assert_eq!(std::fs::read(f.path()).unwrap(), b"v1");
        assert!(!with_suffix(f.path(), ".tmp").exists());
    }
}
