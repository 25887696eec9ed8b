//! The integrators besides Baraff & Witkin's implicit step (`--integrator`, docs/reference.md), each in
//! its own module as `impl Simulator` blocks that reuse the pipeline's stages:
//!
//! | integrator | system per step | pins | body contacts | self-collision | step control |
//! |---|---|---|---|---|---|
//! | [`bdf2`] | eq. 18 at `2h/3` + history, PCG | filter | filter + alteration | springs + check | §7 |
//! | [`preview`] | eq. 18, odd Jacobi sweeps, Provot | filter | filter + alteration | springs + check | no stretch check |
//! | [`explicit`] | none: forces only, sub-steps | prescribed path | velocity filter + alteration | springs + check | non-finite / contact |
//! | [`projective`] | prefactored `M + h²L`, local–global | eliminated (exact) | projection after the solve | none | non-finite / contact |
//!
//! [`IntegratorState`] is a simulator's integrator: each variant holds its knobs and what it
//! keeps between steps, and the shared stages ask it rather than test the kind.
pub mod bdf2;
pub mod explicit;
pub mod preview;
pub mod projective;

use super::params::{Integrator, SolverParams};
use crate::model::ClothModel;
use crate::scene::Material;
use crate::Vec3;

/// The integrator of a simulator ([`SolverParams::integrator`]) with its knobs and what it
/// keeps between steps.
#[derive(Debug, Clone)]
pub enum IntegratorState {
    /// Baraff & Witkin's implicit step: nothing kept.
    Implicit,
    /// BDF2 ([`bdf2`]): the previous step and the terms of the current one.
    Bdf2(bdf2::Bdf2),
    /// Kang & Cho's preview ([`preview`]): its sweeps and Provot's constraints.
    Preview(preview::Preview),
    /// Projective dynamics ([`projective`]): the spring network and its factor.
    Projective(Box<projective::Projective>),
    /// Symplectic Euler ([`explicit`]): Provot's constraints.
    Explicit(explicit::Provot),
}

impl IntegratorState {
    /// The integrator `params.integrator` on `model`, with its knobs from `params` and
    /// nothing kept yet.
    pub fn new(model: &ClothModel, material: &Material, params: &SolverParams) -> Self {
        let provot = || explicit::Provot::new(model, params.provot_limit);
        match params.integrator {
            Integrator::Implicit => IntegratorState::Implicit,
            Integrator::Bdf2 => IntegratorState::Bdf2(bdf2::Bdf2::default()),
            Integrator::Preview => IntegratorState::Preview(preview::Preview {
                iterations: params.preview_iterations | 1,
                provot: provot(),
            }),
            Integrator::Projective => IntegratorState::Projective(Box::new(
                projective::Projective::new(model, material, params.projective_iterations),
            )),
            Integrator::Explicit => IntegratorState::Explicit(provot()),
        }
    }

    /// Which integrator this is.
    pub fn kind(&self) -> Integrator {
        match self {
            IntegratorState::Implicit => Integrator::Implicit,
            IntegratorState::Bdf2(_) => Integrator::Bdf2,
            IntegratorState::Preview(_) => Integrator::Preview,
            IntegratorState::Projective(_) => Integrator::Projective,
            IntegratorState::Explicit(_) => Integrator::Explicit,
        }
    }

    /// Whether steps are rejected when a triangle's stretch jumps (Baraff §7). The explicit
    /// and projective integrators limit stretch by their own constraints; the preview
    /// leaves part of every stretch to later steps by design (its Jacobi sweeps do not
    /// converge), so the check would halve its steps down to thousands per frame,
    /// defeating its purpose.
    pub fn checks_stretch_jumps(&self) -> bool {
        matches!(self, IntegratorState::Implicit | IntegratorState::Bdf2(_))
    }

    /// The BDF2 terms of the step being taken (`None` for a backward Euler step and the
    /// other integrators).
    pub(super) fn bdf2_terms(&self) -> Option<&bdf2::Terms> {
        match self {
            IntegratorState::Bdf2(b) => b.terms.as_ref(),
            _ => None,
        }
    }

    /// Whether accepted steps must remember the state they started from (BDF2).
    pub(super) fn keeps_history(&self) -> bool {
        matches!(self, IntegratorState::Bdf2(_))
    }

    /// Remembers the start state `(x, v)` of an accepted step of size `h` (BDF2).
    pub(super) fn remember(&mut self, x: Vec<Vec3>, v: Vec<Vec3>, h: f64) {
        if let IntegratorState::Bdf2(b) = self {
            b.history = Some(bdf2::History { x, v, h });
        }
    }

    /// Factorisations of the projective integrator's system so far (0 for the others).
    pub fn factorizations(&self) -> usize {
        match self {
            IntegratorState::Projective(p) => p.factorizations(),
            _ => 0,
        }
    }
}
