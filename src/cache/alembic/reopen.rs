//! Continuing the partial archive of an interrupted bake (`--resume`, docs/reference.md
//! "Checkpoints and resume").
//!
//! The writer's bytes are a function of the cache's metadata and the points of its
//! frames, so the partial archive is checked by laying it out again: the part written at
//! creation must be the same bytes (the root position and the reserved slots aside), and
//! each of the first `frames` frames must be the block this writer lays out from that
//! frame's `P` as read back, its slots filled with its samples. The archive of those
//! frames is then made the live one in three steps, each leaving a complete archive for
//! a reader or a second kill: the root position is set to their tree, the reserved slots
//! after them are emptied (no tree reaches them), and the file is cut after their last
//! block. Frames written next continue it as if the bake had never stopped.
use super::ogawa::{slot, EMPTY_DATA, ROOT_AT};
use super::{AlembicWriter, CacheMeta};
use crate::cache::partial::{write_error, Partial, PartialFile};
use crate::cache::{not_continued, Reopen};
use crate::error::Result;
use std::path::Path;

/// Bytes of a sample's data before its values: the data's size (u64) and the key.
const SAMPLE_PREFIX: u64 = 8 + 16;

impl Reopen for AlembicWriter {
    fn reopen(out: &Path, meta: &CacheMeta, frames: usize) -> Result<Self> {
        let layout = AlembicWriter::layout(out, meta)?;
        let mut file = PartialFile::reopen(out, frames)?;
        let path = file.path().to_path_buf();
        let other = || not_continued(&path, "is not the .abc cache of this bake");
        let fewer = || {
            not_continued(
                &path,
                &format!("holds fewer than the checkpoint's {frames} frames"),
            )
        };
        if frames > meta.frames {
            return Err(fewer());
        }
        let mut found = vec![0u8; layout.bytes.len()];
        file.read_at(0, &mut found).map_err(|_| other())?;
        let root = ROOT_AT as usize..ROOT_AT as usize + 8;
        found[root.clone()].copy_from_slice(&layout.bytes[root]);
        for t in &layout.tracks {
            let slots = slot(t.group, 0) as usize..slot(t.group, t.slots) as usize;
            found[slots.clone()].copy_from_slice(&layout.bytes[slots]);
        }
        if found != layout.bytes {
            return Err(other());
        }

        let mut w = AlembicWriter::over(file, meta, layout);
        let mut points = vec![0u8; 12 * meta.points];
        let mut reference = [0u8; 8];
        for _ in 0..frames {
            (w.file.read_at(w.end + SAMPLE_PREFIX, &mut points)).map_err(|_| fewer())?;
            let p: Vec<[f32; 3]> = points
                .chunks_exact(12)
                .map(|c| std::array::from_fn(|i| f32_at(c, 4 * i)))
                .collect();
            let next = w.lay_out_frame(&p);
            found.resize(next.block.bytes.len(), 0);
            (w.file.read_at(w.end, &mut found)).map_err(|_| fewer())?;
            if found != next.block.bytes {
                return Err(fewer());
            }
            for &(at, r) in &next.patches {
                w.file.read_at(at, &mut reference).map_err(|_| fewer())?;
                if reference != r.to_le_bytes() {
                    return Err(fewer());
                }
            }
            w.commit(&next, p);
        }

        let (end, root) = (w.end, w.root);
        let AlembicWriter { file, tracks, .. } = &mut w;
        let mut live = || {
            file.write_at(ROOT_AT, &root.to_le_bytes())?;
            for t in tracks.iter() {
                let first = (t.stride * frames).min(t.slots);
                let empty = EMPTY_DATA.to_le_bytes().repeat(t.slots - first);
                file.write_at(slot(t.group, first), &empty)?;
            }
            file.truncate(end)
        };
        live().map_err(write_error(&path))?;
        Ok(w)
    }
}

/// The little-endian f32 at byte `at` of `b`.
fn f32_at(b: &[u8], at: usize) -> f32 {
    f32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}
