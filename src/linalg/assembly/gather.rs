//! The gathers of [`AssemblyPlan`] (module doc of `linalg::assembly`): every slot and
//! particle sums its listed contributions in one fixed order, the reference the scatter
//! is tested against.
use super::{to_u32, AssemblyPlan};
use crate::linalg::BlockCsr;
use crate::{Mat3, Vec3};
use rayon::prelude::*;
use std::sync::Arc;

/// Slots (or particles) per parallel task of the gathers (scheduling only).
const GATHER_CHUNK: usize = 512;

/// Contribution lists in CSR form: entries of target `t` are `src[ptr[t] .. ptr[t+1]]`,
/// each `[set, offset]`.
#[derive(Debug, Clone, Default)]
pub(super) struct GatherList {
    ptr: Vec<usize>,
    src: Vec<[u32; 2]>,
}

impl GatherList {
    /// Builds the lists from `(target, [set, offset])` produced twice in the same order by
    /// `emit` (a counting pass and a filling pass): O(targets + contributions).
    fn build(targets: usize, emit: impl Fn(&mut dyn FnMut(usize, [u32; 2]))) -> Self {
        let mut ptr = vec![0usize; targets + 1];
        emit(&mut |t, _| ptr[t + 1] += 1);
        for t in 0..targets {
            ptr[t + 1] += ptr[t];
        }
        let mut fill = ptr[..targets].to_vec();
        let mut src = vec![[0u32; 2]; ptr[targets]];
        emit(&mut |t, e| {
            src[fill[t]] = e;
            fill[t] += 1;
        });
        GatherList { ptr, src }
    }

    #[inline]
    fn entries(&self, t: usize) -> &[[u32; 2]] {
        &self.src[self.ptr[t]..self.ptr[t + 1]]
    }
}

impl AssemblyPlan {
    /// The gather lists, built on first use from the sets' slots.
    fn lists(&self) -> &[GatherList; 2] {
        self.lists.get_or_init(|| {
            let n = self.pattern.n;
            let diag_set = to_u32(self.sets.len());
            let matrix = GatherList::build(self.pattern.nnz(), |push| {
                for (i, &k) in self.diagonal_slots.iter().enumerate() {
                    push(k, [diag_set, to_u32(i)]);
                }
                for (s, set) in self.sets.iter().enumerate() {
                    for (o, &k) in set.slots.iter().enumerate() {
                        push(k as usize, [s as u32, o as u32]);
                    }
                }
            });
            let vector = GatherList::build(n, |push| {
                for (s, set) in self.sets.iter().enumerate() {
                    for (o, &i) in set.nodes.iter().enumerate() {
                        push(i, [s as u32, o as u32]);
                    }
                }
            });
            [matrix, vector]
        })
    }

    /// Overwrites `out` (over `self.pattern`) with the sum of all contributions:
    /// `blocks[s]` is the flat matrix buffer of `sets[s]`; `diagonal[i]`, if given, is added
    /// to block `(i, i)` (e.g. the mass matrix).
    ///
    /// Parallel over pattern slots; each slot sums its list in order (bit-identical for
    /// any thread count).
    ///
    /// # Panics
    /// If the buffers do not match the sets given to [`AssemblyPlan::new`] (`blocks[s].len()
    /// = count·N²`, `diagonal.len() = n`) or `out` is over another pattern.
    pub fn gather_matrix(&self, blocks: &[&[Mat3]], diagonal: Option<&[Mat3]>, out: &mut BlockCsr) {
        assert_eq!(
            blocks.len(),
            self.shapes.len(),
            "gather_matrix: one buffer per set"
        );
        for (s, (b, &(arity, count))) in blocks.iter().zip(&self.shapes).enumerate() {
            assert_eq!(
                b.len(),
                count * arity * arity,
                "gather_matrix: buffer of set {s}"
            );
        }
        if let Some(d) = diagonal {
            assert_eq!(d.len(), self.pattern.n, "gather_matrix: diagonal length");
        }
        assert!(
            Arc::ptr_eq(&out.pattern, &self.pattern) || *out.pattern == *self.pattern,
            "gather_matrix: output matrix is over another pattern"
        );
        let diag_set = self.shapes.len();
        let lists = self.lists();
        out.values
            .par_chunks_mut(GATHER_CHUNK)
            .enumerate()
            .for_each(|(c, chunk)| {
                for (t, value) in chunk.iter_mut().enumerate() {
                    let mut acc = Mat3::zeros();
                    for &[s, o] in lists[0].entries(c * GATHER_CHUNK + t) {
                        let (s, o) = (s as usize, o as usize);
                        if s == diag_set {
                            if let Some(d) = diagonal {
                                acc += d[o];
                            }
                        } else {
                            acc += blocks[s][o];
                        }
                    }
                    *value = acc;
                }
            });
    }

    /// Overwrites `out[i]` with the sum of vector contributions to particle `i`:
    /// `vectors[s]` is the flat vector buffer of `sets[s]`.
    ///
    /// Parallel over particles; each particle sums its list in order.
    ///
    /// # Panics
    /// If `vectors[s].len() ≠ count·N` for some set or `out.len() ≠ n`.
    pub fn gather_vector(&self, vectors: &[&[Vec3]], out: &mut [Vec3]) {
        assert_eq!(
            vectors.len(),
            self.shapes.len(),
            "gather_vector: one buffer per set"
        );
        for (s, (v, &(arity, count))) in vectors.iter().zip(&self.shapes).enumerate() {
            assert_eq!(v.len(), count * arity, "gather_vector: buffer of set {s}");
        }
        assert_eq!(out.len(), self.pattern.n, "gather_vector: output length");
        let lists = self.lists();
        out.par_chunks_mut(GATHER_CHUNK)
            .enumerate()
            .for_each(|(c, chunk)| {
                for (t, value) in chunk.iter_mut().enumerate() {
                    let mut acc = Vec3::zeros();
                    for &[s, o] in lists[1].entries(c * GATHER_CHUNK + t) {
                        acc += vectors[s as usize][o as usize];
                    }
                    *value = acc;
                }
            });
    }
}
