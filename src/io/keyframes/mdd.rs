//! MDD files as keyframe sources (docs/reference.md, "Inputs" (c)): one sample per keyframe.
//!
//! ```text
//! frame_k = t_k · fps        t_k: time of sample k (s, the MDD time table)
//!                            fps: frames per second of the run (1/s)
//! ```
//! `frame_k` must lie within `max(1e-3, 1e-6·|frame_k|)` of a whole number (the relative
//! part absorbs the f32 rounding of long shots). The points of a sample are the garment's
//! output points (its source vertex order), object-local, in the source axes. The byte
//! layout is the one [`crate::cache::mdd`] writes; [`crate::format::mdd`] does the parsing, after a
//! size check here that keeps a corrupt header from asking for absurd allocations.
use crate::error::{Error, Result};
use crate::format::mdd;
use crate::Vec3;
use std::io::Read;
use std::path::Path;

/// Bytes of the MDD header before the time table: frame count and point count (i32 each).
const HEADER_BYTES: u64 = 8;
/// Bytes per time-table entry (f32) and per point (three f32).
const TIME_BYTES: u64 = 4;
const POINT_BYTES: u64 = 12;

/// One sample of an MDD keyframe file.
#[derive(Debug, Clone, PartialEq)]
pub struct MddSample {
    /// Index of the sample in the file (0-based).
    pub index: usize,
    /// Frame number `round(time × fps)`.
    pub frame: i32,
    /// Object-local points, one per output point of the garment, in file order.
    pub points: Vec<Vec3>,
}

/// Reads every sample of the MDD file at `path` and converts its time to a frame at `fps`.
/// `object` names the garment in errors. Unreadable, truncated or corrupt files and times
/// that are not whole frames are input errors (exit 2) with the fix.
pub fn read_mdd(path: &Path, object: &str, fps: f64) -> Result<Vec<MddSample>> {
    let bad = |m: String| Error::input(path, Some(object), m);
    if !(fps.is_finite() && fps > 0.0) {
        return Err(Error::usage(format!(
            "frames per second {fps} must be a positive number"
        )));
    }
    check_size(path).map_err(&bad)?;
    let (times, samples) = mdd::read(path).map_err(|e| match e {
        Error::Input { message, .. } => bad(format!(
            "{message}; write the keyframe shapes again as an MDD point cache"
        )),
        other => other,
    })?;
    let mut out = Vec::with_capacity(samples.len());
    for (index, (time, points)) in times.iter().zip(samples).enumerate() {
        let frame = frame_of(f64::from(*time), fps).map_err(|m| {
            bad(format!(
                "sample {} has time {time} s, which {m}; write the MDD with time = frame / fps \
                 or run with the fps the file was written for",
                index + 1
            ))
        })?;
        let points = points
            .iter()
            .map(|p| Vec3::new(f64::from(p[0]), f64::from(p[1]), f64::from(p[2])))
            .collect();
        out.push(MddSample {
            index,
            frame,
            points,
        });
    }
    Ok(out)
}

/// The whole frame `time × fps`, or why there is none.
fn frame_of(time: f64, fps: f64) -> std::result::Result<i32, String> {
    let f = time * fps;
    if !f.is_finite() {
        return Err("is not a finite number".into());
    }
    let r = f.round();
    if (f - r).abs() > 1e-3_f64.max(1e-6 * f.abs()) {
        return Err(format!("is frame {f:.4} at {fps} fps, not a whole frame"));
    }
    if r.abs() > 1e9 {
        return Err(format!("is frame {r}, far outside any shot"));
    }
    Ok(r as i32)
}

/// Checks that the file holds the bytes its header promises, with overflow-free arithmetic.
fn check_size(path: &Path) -> std::result::Result<(), String> {
    let mut file = std::fs::File::open(path).map_err(|e| format!("cannot read the file: {e}"))?;
    let len = file
        .metadata()
        .map_err(|e| format!("cannot read the file: {e}"))?
        .len();
    let mut head = [0u8; 8];
    file.read_exact(&mut head).map_err(|_| {
        format!("not a valid MDD file: {len} bytes, shorter than the 8-byte header")
    })?;
    let frames = i32::from_be_bytes([head[0], head[1], head[2], head[3]]);
    let points = i32::from_be_bytes([head[4], head[5], head[6], head[7]]);
    let (Ok(frames), Ok(points)) = (u64::try_from(frames), u64::try_from(points)) else {
        return Err(format!(
            "not a valid MDD file: negative count in the header ({frames} samples, {points} \
             points)"
        ));
    };
    let need = frames
        .checked_mul(POINT_BYTES)
        .and_then(|b| b.checked_mul(points))
        .and_then(|b| b.checked_add(frames * TIME_BYTES + HEADER_BYTES));
    match need {
        Some(n) if n <= len => Ok(()),
        _ => Err(format!(
            "not a valid MDD file: truncated ({len} bytes, but the header promises {frames} \
             samples of {points} points)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_become_whole_frames_or_errors() {
        assert_eq!(frame_of(0.5, 24.0), Ok(12));
        assert_eq!(frame_of((7.0f32 / 24.0) as f64, 24.0), Ok(7));
        assert_eq!(frame_of((9999.0f32 / 24.0) as f64, 24.0), Ok(9999));
        assert!(frame_of(0.51, 24.0).is_err());
        assert!(frame_of(f64::NAN, 24.0).is_err());
        assert!(frame_of(1e12, 24.0).is_err());
    }
}
