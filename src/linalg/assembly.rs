//! Deterministic parallel assembly: elements write their blocks into flat per-element
//! buffers (in parallel, no sharing); a plan built once per topology then gathers, for every
//! matrix slot and every particle, its contributions in a fixed order (parallel over rows).
use super::{BlockCsr, BlockPattern};
use crate::{Mat3, Vec3};
use std::sync::Arc;

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

/// Gather plan for a list of element sets over one pattern.
#[derive(Debug, Clone)]
pub struct AssemblyPlan {
    /// The pattern all sets' couplings (and the diagonal) live in.
    pub pattern: Arc<BlockPattern>,
    // private gather lists, chosen by the implementation
}

impl AssemblyPlan {
    /// Builds the pattern of `n` particles coupled by `sets` and the gather lists.
    pub fn new(n: usize, sets: &[ElementSet]) -> Self {
        let _ = (n, sets);
        todo!()
    }

    /// Overwrites `out` (over `self.pattern`) with the sum of all contributions:
    /// `blocks[s]` is the flat matrix buffer of `sets[s]`; `diagonal[i]`, if given, is added
    /// to block `(i, i)` (e.g. the mass matrix).
    pub fn gather_matrix(&self, blocks: &[&[Mat3]], diagonal: Option<&[Mat3]>, out: &mut BlockCsr) {
        let _ = (blocks, diagonal, out);
        todo!()
    }

    /// Overwrites `out[i]` with the sum of vector contributions to particle `i`:
    /// `vectors[s]` is the flat vector buffer of `sets[s]`.
    pub fn gather_vector(&self, vectors: &[&[Vec3]], out: &mut [Vec3]) {
        let _ = (vectors, out);
        todo!()
    }
}
