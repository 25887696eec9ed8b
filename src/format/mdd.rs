//! The MDD point-cache byte layout (LightWave's format), read back: the cache writer
//! ([`crate::cache::mdd`]) writes it, MDD keyframe sources ([`crate::io::keyframes`]) and
//! the tests read it.
//!
//! ```text
//! offset 0        i32  number of frames F
//!        4        i32  number of points P
//!        8        f32  time of each frame (s) = frame number / fps, F values
//!        8 + 4F   f32  x, y, z per point per frame
//! ```
//! Everything big-endian.
use super::Sample;
use crate::error::{Error, Result};
use std::path::Path;

/// Reads an MDD file: (time of each frame in s, points of each frame). For tests and tools.
pub fn read(path: &Path) -> Result<(Vec<f32>, Vec<Sample>)> {
    let bytes = std::fs::read(path)
        .map_err(|e| Error::input(path, None, format!("cannot read MDD file: {e}")))?;
    let bad = |m: &str| Error::input(path, None, format!("not a valid MDD file: {m}"));
    let word = |o: usize| -> Option<[u8; 4]> { bytes.get(o..o + 4)?.try_into().ok() };
    let frames = word(0)
        .map(i32::from_be_bytes)
        .ok_or_else(|| bad("no header"))?;
    let points = word(4)
        .map(i32::from_be_bytes)
        .ok_or_else(|| bad("no header"))?;
    let frames = usize::try_from(frames).map_err(|_| bad("negative frame count"))?;
    let points = usize::try_from(points).map_err(|_| bad("negative point count"))?;
    if bytes.len() < 8 + frames * 4 + frames * points * 12 {
        return Err(bad("file shorter than its header says"));
    }
    let f32_at = |o: usize| word(o).map(f32::from_be_bytes).unwrap_or(f32::NAN);
    let times = (0..frames).map(|k| f32_at(8 + 4 * k)).collect();
    let data = 8 + 4 * frames;
    let samples = (0..frames)
        .map(|f| {
            (0..points)
                .map(|p| {
                    let o = data + (f * points + p) * 12;
                    [f32_at(o), f32_at(o + 4), f32_at(o + 8)]
                })
                .collect()
        })
        .collect();
    Ok((times, samples))
}
