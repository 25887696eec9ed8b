//! Kang & Cho's approximate implicit update (their §4.2–4.4): the system of eq. 18 is
//! not solved but approximated by a few block-Jacobi sweeps, O(n) per step.
//!
//! With `A = M − h ∂f/∂v − h² ∂f/∂x` (their `W + h C_d`, eqs. 12, 25) and `b` its right
//! side (their `h f̃`, eq. 13), each particle solves its own 3x3 block:
//!
//! ```text
//! Δv_i⁽⁰⁾   = A_ii⁻¹ b_i                                         p_i of eq. 18
//! Δv_i⁽ᵏ⁺¹⁾ = A_ii⁻¹ ( b_i − Σ_{j≠i} A_ij Δv_j⁽ᵏ⁾ )                   eq. 17 / 19
//! ```
//! stopped after `k` sweeps beyond the first, `k` odd (eq. 20 is `k = 1`; an even `k` is
//! unstable at small `k`, §4.2). Constrained particles (pins, contacts, Baraff §5.3) keep
//! their prescribed change in the constrained directions:
//! `Δv_i = z_i + S_i A_ii⁻¹ (b_i − Σ_{j≠i} A_ij Δv_j − A_ii z_i)`, so pins are exact.
//!
//! The sweeps do not converge, so stiff cloth keeps part of each step's stretch: after the
//! update, Provot's deformation constraints ([`super::explicit::provot`], Intel article
//! §3.3) pull edges longer than `(1 + provot_limit) L₀` back, with the velocity changed
//! by the same correction over `h`. Without them the sheet diverges within a second at
//! 1/24 s steps; with Baraff's stretch-jump rejection instead it takes hundreds of steps
//! per frame. The preview has no stretch-jump rejection (see
//! [`super::IntegratorState::checks_stretch_jumps`]).
//!
//! The Jacobians are the positive definite ones ([`JacobianMode::Definite`]): with
//! stretched springs that is exactly eq. 21, with compressed ones the stabilised eq. 22
//! (the mass-spring model), and for the continuum forces the Gauss–Newton part, which
//! keeps every `A_ii` positive definite.
use super::explicit::Provot;
use crate::forces::JacobianMode;
use crate::linalg::block3::spd_inverse_or_diagonal;
use crate::linalg::pcg::PcgResult;
use crate::pipeline::{Rejection, Simulator};
use crate::{Mat3, Vec3};
use rayon::prelude::*;

/// The preview's knobs.
#[derive(Debug, Clone)]
pub struct Preview {
    /// Block-Jacobi sweeps after the first (`k` of the module doc), odd
    /// ([`SolverParams::preview_iterations`] raised to the next odd number).
    ///
    /// [`SolverParams::preview_iterations`]: crate::pipeline::SolverParams::preview_iterations
    pub iterations: usize,
    /// Provot's constraints applied after the update.
    pub provot: Provot,
}

impl Simulator {
    /// Assembles the step's system at step `h` and approximates `Δv` by `1 + iterations`
    /// Jacobi sweeps of the module doc into `dv`. The result reports the sweeps as iterations and the
    /// relative residual `‖S(b − AΔv)‖/‖S b‖` of the approximation; it is "converged"
    /// whenever every value is finite.
    pub(in crate::pipeline) fn solve_preview(&mut self, h: f64, iterations: usize) -> PcgResult {
        self.assemble_step(h, JacobianMode::Definite);
        let a = &self.scratch.system.matrix;
        let b = &self.scratch.system.rhs;
        let n = a.n();
        let mut filter: Vec<Option<(Mat3, Vec3)>> = vec![None; n];
        for c in &self.scratch.constraints {
            filter[c.particle] = Some((c.filter, c.z));
        }
        let inv: Vec<Mat3> = (0..n)
            .into_par_iter()
            .map(|i| spd_inverse_or_diagonal(&a.diagonal(i)))
            .collect();
        let mut current: Vec<Vec3> = filter
            .iter()
            .map(|f| f.map_or(Vec3::zeros(), |(_, z)| z))
            .collect();
        let mut next = current.clone();
        let sweeps = iterations + 1;
        for _ in 0..sweeps {
            next.par_iter_mut().enumerate().for_each(|(i, out)| {
                let diag = a.diagonal(i);
                // b_i − Σ_{j≠i} A_ij Δv_j
                let r = b[i] - a.mul_row(i, &current) + diag * current[i];
                *out = match filter[i] {
                    None => inv[i] * r,
                    Some((s, z)) => z + s * (inv[i] * (r - diag * z)),
                };
            });
            std::mem::swap(&mut current, &mut next);
        }
        let finite = current.iter().all(|v| v.iter().all(|c| c.is_finite()));
        // Residual of the approximation in the free directions.
        let (res, norm) = (0..n)
            .into_par_iter()
            .map(|i| {
                let r = b[i] - a.mul_row(i, &current);
                let (r, bi) = match filter[i] {
                    None => (r, b[i]),
                    Some((s, _)) => (s * r, s * b[i]),
                };
                (r.norm_squared(), bi.norm_squared())
            })
            .collect::<Vec<_>>()
            .iter()
            .fold((0.0, 0.0), |(p, q), (r, s)| (p + r, q + s));
        self.scratch.dv = current;
        PcgResult {
            iterations: sweeps,
            relative_residual: if norm > 0.0 { (res / norm).sqrt() } else { 0.0 },
            converged: finite,
        }
    }

    /// Proposes `x₁ = x₀ + h v₁ + y` with `v₁ = v₀ + Δv`, applies Provot's constraints to
    /// `x₁` (pinned particles stay) and changes `v₁` by the correction over `h`, then checks
    /// and accepts the step like the other integrators.
    pub(in crate::pipeline) fn limit_and_advance(
        &mut self,
        h: f64,
        tolerate_crossing: bool,
    ) -> Result<bool, Rejection> {
        let mut v: Vec<Vec3> = (self.state.v.par_iter().zip(self.scratch.dv.par_iter()))
            .map(|(v, dv)| v + dv)
            .collect();
        let proposed: Vec<Vec3> = (self.state.x.par_iter().zip(v.par_iter()))
            .zip(self.scratch.y.par_iter())
            .map(|((x, v), y)| x + h * v + y)
            .collect();
        let mut x = proposed.clone();
        self.limit_stretch(&mut x);
        (v.par_iter_mut())
            .zip(x.par_iter().zip(proposed.par_iter()))
            .for_each(|(v, (x, p))| *v += (x - p) / h);
        self.check_and_commit(x, Some(v), h, tolerate_crossing)
    }
}
