//! The linear algebra of the implicit step: a 3x3 block CSR matrix whose sparsity pattern is
//! built once per topology ([`pattern`]), deterministic parallel assembly from per-element
//! blocks ([`assembly`], race-free through the element colouring of [`colouring`]), and the modified preconditioned conjugate gradient of Baraff §5.3
//! with per-particle filters ([`pcg`]) and its constraint forces ([`mod@constraint_forces`]), its preconditioners ([`precond`]: block Jacobi,
//! symmetric block Gauss–Seidel, block incomplete Cholesky, complete sparse Cholesky) and
//! its coarse-space deflation ([`deflation`]).
//!
//! Determinism: every reduction (dot products, gathers) is split into fixed-size chunks
//! whose partial results are combined in chunk order, so results are bit-identical for any
//! number of rayon threads.
pub mod assembly;
pub mod bcsr;
pub mod block3;
pub mod colouring;
pub mod constraint_forces;
pub mod deflation;
pub mod pattern;
pub mod pcg;
pub mod precond;
pub mod simd;

pub use assembly::{AssemblyPlan, ElementSet};
pub use bcsr::BlockCsr;
pub use constraint_forces::constraint_forces;
pub use pattern::BlockPattern;
pub use pcg::{modified_pcg, modified_pcg_with, Constraint, PcgResult, PcgScratch, PcgSettings};
pub use precond::Preconditioner;

/// Spare room, as a share of the new length, of a buffer [`resize_discarding`] had to
/// replace: the self-contact springs move the system's pattern by a few dozen blocks
/// either way (127,612–127,738 slots on the 10,000-vertex sheet on a sphere).
const SPARE: usize = 32;

/// `v.resize(len, value)` for a buffer whose contents are about to be overwritten: where
/// `v` would grow past its capacity it is replaced by a fresh buffer (all `value`, with
/// `len / 32` to spare) instead. Growing in place moves the old contents into the new
/// block with both held at once, which adds the old block's size to the peak resident
/// size: 8.9 MB for the system matrix at 10,000 particles, at the first change of the
/// self-contact springs.
pub(crate) fn resize_discarding<T: Clone>(v: &mut Vec<T>, len: usize, value: T) {
    if len > v.capacity() {
        *v = Vec::new();
        v.reserve_exact(len + len / SPARE);
    }
    v.resize(len, value);
}

#[cfg(test)]
mod tests;
