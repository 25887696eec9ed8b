//! Deterministic parallel assembly: elements write their blocks into flat per-element
//! buffers (in parallel, no sharing); a plan built once per topology then gathers, for every
//! matrix slot and every particle, its contributions in a fixed order (parallel over rows).
//!
//! ```text
//! A[k]  = D_i·[k is the diagonal slot of row i] + Σ_{(s, o) ∈ src(k)} blocks_s[o]
//! b_i   =                                        Σ_{(s, o) ∈ vsrc(i)} vectors_s[o]
//! ```
//! `src(k)` lists, for the pattern slot `k = (i, j)`, every `(set s, flat offset o =
//! e·N² + a·N + b)` whose element `e` has particle `i` at position `a` and `j` at `b`,
//! ordered by set, then element, then `(a, b)`; `vsrc(i)` likewise lists `(s, e·N + a)`.
//! Both lists are stored CSR-like (offset array + `u32` pairs) and built in
//! O(total contributions). Each slot's sum is taken in list order, so the result is
//! bit-identical to a serial scatter in that order, for any thread count.
use super::{BlockCsr, BlockPattern};
use crate::{Mat3, Vec3};
use rayon::prelude::*;
use std::sync::Arc;

/// Slots (or particles) per parallel task of the gathers (scheduling only).
const GATHER_CHUNK: usize = 512;

/// A set of elements of equal arity `N` (e.g. triangles N = 3, hinges N = 4).
/// Element `e` has particles `nodes[e*N .. e*N+N]`. Its matrix contributions are laid out
/// in a flat buffer at `e*N*N + a*N + b` for block `(a, b)` (row particle `a`, column `b`),
/// its vector contributions at `e*N + a`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElementSet {
    /// Arity N.
    pub arity: usize,
    /// Flattened particle indices, `len = count * arity`.
    pub nodes: Vec<usize>,
}

impl ElementSet {
    /// Number of elements (`nodes.len() / arity`, 0 for arity 0).
    pub fn count(&self) -> usize {
        self.nodes.len().checked_div(self.arity).unwrap_or(0)
    }

    /// The elements, each a slice of `arity` particle indices.
    pub fn elements(&self) -> impl Iterator<Item = &[usize]> {
        self.nodes.chunks_exact(self.arity.max(1))
    }
}

/// Contribution lists in CSR form: entries of target `t` are `src[ptr[t] .. ptr[t+1]]`,
/// each `[set, offset]`.
#[derive(Debug, Clone, Default)]
struct GatherList {
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

/// Gather plan for a list of element sets over one pattern.
#[derive(Debug, Clone)]
pub struct AssemblyPlan {
    /// The pattern all sets' couplings (and the diagonal) live in.
    pub pattern: Arc<BlockPattern>,
    /// `(arity, count)` of each set, to check the buffers handed to the gathers.
    shapes: Vec<(usize, usize)>,
    /// Per pattern slot; the pseudo-set `shapes.len()` means "diagonal[offset]".
    matrix: GatherList,
    /// Per particle.
    vector: GatherList,
}

/// Converts a flat offset or set index to the compact `u32` of the gather lists.
fn to_u32(x: usize) -> u32 {
    u32::try_from(x).expect("assembly buffer larger than 2^32 entries")
}

impl AssemblyPlan {
    /// Builds the pattern of `n` particles coupled by `sets` and the gather lists.
    ///
    /// Matrix list of slot `(i, i)` starts with the diagonal term `D_i` (pseudo-set
    /// `sets.len()`), then the element blocks in set / element / `(a, b)` order; the
    /// vector list of particle `i` has the element vectors in set / element / `a` order.
    ///
    /// # Panics
    /// If a set's `nodes.len()` is not a multiple of its arity, a node is `≥ n`, or a flat
    /// buffer would exceed 2³² entries (all topology bugs upstream, not user data).
    pub fn new(n: usize, sets: &[ElementSet]) -> Self {
        for (s, set) in sets.iter().enumerate() {
            let ok = if set.arity == 0 {
                set.nodes.is_empty()
            } else {
                set.nodes.len() % set.arity == 0
            };
            assert!(
                ok,
                "element set {s}: {} nodes for arity {}",
                set.nodes.len(),
                set.arity
            );
            to_u32(set.count() * set.arity * set.arity);
        }
        let pattern = Arc::new(BlockPattern::from_elements(
            n,
            sets.iter().flat_map(ElementSet::elements),
        ));
        let diag_set = to_u32(sets.len());
        // Slot of every element block, in emission order, so the two passes of the matrix
        // list search the pattern only once.
        let mut slots: Vec<u32> = Vec::new();
        for set in sets {
            for e in set.elements() {
                for &i in e {
                    for &j in e {
                        let k = pattern.slot(i, j).expect("pattern contains every coupling");
                        slots.push(to_u32(k));
                    }
                }
            }
        }
        let matrix = GatherList::build(pattern.nnz(), |push| {
            for i in 0..n {
                let k = pattern.slot(i, i).expect("pattern contains the diagonal");
                push(k, [diag_set, to_u32(i)]);
            }
            let mut next = slots.iter();
            for (s, set) in sets.iter().enumerate() {
                for o in 0..set.count() * set.arity * set.arity {
                    let k = *next.next().expect("one slot per element block");
                    push(k as usize, [s as u32, o as u32]);
                }
            }
        });
        let vector = GatherList::build(n, |push| {
            for (s, set) in sets.iter().enumerate() {
                for (o, &i) in set.nodes.iter().enumerate() {
                    push(i, [s as u32, o as u32]);
                }
            }
        });
        AssemblyPlan {
            pattern,
            shapes: sets.iter().map(|s| (s.arity, s.count())).collect(),
            matrix,
            vector,
        }
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
        out.values
            .par_chunks_mut(GATHER_CHUNK)
            .enumerate()
            .for_each(|(c, chunk)| {
                for (t, value) in chunk.iter_mut().enumerate() {
                    let mut acc = Mat3::zeros();
                    for &[s, o] in self.matrix.entries(c * GATHER_CHUNK + t) {
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
        out.par_chunks_mut(GATHER_CHUNK)
            .enumerate()
            .for_each(|(c, chunk)| {
                for (t, value) in chunk.iter_mut().enumerate() {
                    let mut acc = Vec3::zeros();
                    for &[s, o] in self.vector.entries(c * GATHER_CHUNK + t) {
                        acc += vectors[s as usize][o as usize];
                    }
                    *value = acc;
                }
            });
    }
}
