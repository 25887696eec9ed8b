//! Point-cache writers behind one trait ([`CacheWriter`]).
//!
//! Nothing is lost (SPEC "Outputs"): frames are appended to `<out>.partial` as they finish,
//! with a header that is valid after every frame; [`CacheWriter::finish`] renames the
//! partial file over `<out>`. On error or interrupt the partial cache of finished frames
//! remains and an existing `<out>` is untouched.
pub mod pc2;

use crate::error::{Error, Result};
use crate::Vec3;
use std::path::{Path, PathBuf};

/// A cache being written, one frame at a time.
pub trait CacheWriter {
    /// Appends one frame: one position per output point, in source order.
    fn write_frame(&mut self, points: &[Vec3]) -> Result<()>;
    /// Completes the cache and moves it to its final path.
    fn finish(self: Box<Self>) -> Result<PathBuf>;
    /// Path of the partial file being written.
    fn partial_path(&self) -> &Path;
}

/// `<out>.partial`.
pub fn partial_path(out: &Path) -> PathBuf {
    let mut s = out.as_os_str().to_owned();
    s.push(".partial");
    PathBuf::from(s)
}

/// Checks up front that `out` can be written: its extension is a supported format, its
/// directory exists, and it does not exist unless `force`.
pub fn check_output(out: &Path, force: bool) -> Result<()> {
    let ext = out
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase())
        .unwrap_or_default();
    if ext != "pc2" {
        return Err(Error::usage(format!(
            "{}: output format '.{ext}' is not supported by this build; use a .pc2 path",
            out.display()
        )));
    }
    let dir = match out.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !dir.is_dir() {
        return Err(Error::usage(format!(
            "{}: output directory {} does not exist; create it or choose another -o path",
            out.display(),
            dir.display()
        )));
    }
    if out.exists() && !force {
        return Err(Error::usage(format!(
            "{} already exists; pass --force to overwrite it or choose another -o path",
            out.display()
        )));
    }
    Ok(())
}

/// Opens a writer for `out` chosen by its extension.
pub fn create(out: &Path, points: usize, start_frame: i32) -> Result<Box<dyn CacheWriter>> {
    Ok(Box::new(pc2::Pc2Writer::create(
        out,
        points,
        start_frame as f32,
    )?))
}
