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

pub use assembly::{AssemblyPlan, ElementSet};
pub use bcsr::BlockCsr;
pub use constraint_forces::constraint_forces;
pub use pattern::BlockPattern;
pub use pcg::{modified_pcg, modified_pcg_with, Constraint, PcgResult, PcgScratch, PcgSettings};
pub use precond::Preconditioner;

#[cfg(test)]
mod tests;
