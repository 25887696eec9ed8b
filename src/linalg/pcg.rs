//! Modified preconditioned conjugate gradient (Baraff §5.3) with per-particle filters.
//!
//! ```text
//! filter(a)_i = S_i a_i              S_i = I (free), I − p pᵀ, I − p pᵀ − q qᵀ, 0 (pinned)
//! Δv = z; δ₀ = filter(b)ᵀ P⁻¹ filter(b); r = filter(b − AΔv); c = filter(P⁻¹ r); δ = rᵀc
//! while δ > ε² δ₀: q = filter(A c); α = δ/(cᵀq); Δv += α c; r −= α q;
//!                  s = P⁻¹ r; δ' = δ; δ = rᵀ s; c = filter(s + (δ/δ') c)
//! ```
//! `P` is block Jacobi: `P_i = A_ii` (3x3, inverted once per solve). The components of Δv
//! in the constrained directions equal `z` exactly after any number of iterations. After the
//! solve, `e = A Δv − b` restricted to the constrained directions is the constraint force
//! (times h) that enforced them (§5.4).
use super::BlockCsr;
use crate::{Mat3, Vec3};

/// Constraint of one particle: the filter `S_i` (projection on its free directions) and the
/// prescribed velocity change `z_i` in its constrained directions (`(I − S_i) z_i = z_i`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Constraint {
    /// Particle index.
    pub particle: usize,
    /// `S_i`.
    pub filter: Mat3,
    /// `z_i`.
    pub z: Vec3,
}

/// Stopping rule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PcgSettings {
    /// Relative tolerance ε on the preconditioned residual (Baraff: stop when δ ≤ ε² δ₀).
    pub tolerance: f64,
    /// Iteration cap.
    pub max_iterations: usize,
}

impl Default for PcgSettings {
    fn default() -> Self {
        PcgSettings {
            tolerance: 1e-6,
            max_iterations: 1000,
        }
    }
}

/// Outcome of one solve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PcgResult {
    /// Iterations performed.
    pub iterations: usize,
    /// `sqrt(δ/δ₀)` at exit (0 if δ₀ = 0).
    pub relative_residual: f64,
    /// Whether the tolerance was reached.
    pub converged: bool,
}

/// Work vectors reused across solves (sized on first use).
#[derive(Debug, Default, Clone)]
pub struct PcgScratch {
    // private buffers chosen by the implementation
}

/// Solves `A Δv = b` under `constraints` (particles not listed are free) into `dv`
/// (its input value is ignored). `A` must be symmetric positive definite on the free
/// subspace.
pub fn modified_pcg(
    a: &BlockCsr,
    b: &[Vec3],
    constraints: &[Constraint],
    settings: &PcgSettings,
    scratch: &mut PcgScratch,
    dv: &mut [Vec3],
) -> PcgResult {
    let _ = (a, b, constraints, settings, scratch, dv);
    todo!()
}

/// Constraint forces of §5.4: for each constraint, `(I − S_i)(A Δv − b)_i`.
pub fn constraint_forces(a: &BlockCsr, b: &[Vec3], dv: &[Vec3], constraints: &[Constraint]) -> Vec<Vec3> {
    let _ = (a, b, dv, constraints);
    todo!()
}
