//! The integrators besides Baraff & Witkin's implicit step (SPEC `--integrator`), each in
//! its own module as `impl Simulator` blocks that reuse the pipeline's stages:
//!
//! | integrator | system per step | pins | body contacts | self-collision | step control |
//! |---|---|---|---|---|---|
//! | [`bdf2`] | eq. 18 at `2h/3` + history, PCG | filter | filter + alteration | springs + check | §7 |
//! | [`preview`] | eq. 18, odd Jacobi sweeps, Provot | filter | filter + alteration | springs + check | no stretch check |
//! | [`explicit`] | none: forces only, sub-steps | prescribed path | velocity filter + alteration | springs + check | non-finite / contact |
//! | [`projective`] | prefactored `M + h²L`, local–global | eliminated (exact) | projection after the solve | none | non-finite / contact |
//!
//! [`IntegratorState`] holds what they keep between steps.
pub mod bdf2;
pub mod explicit;
pub mod preview;
pub mod projective;

use super::params::{Integrator, SolverParams};
use crate::model::ClothModel;
use crate::scene::Material;
use crate::Vec3;

/// What the integrators other than [`Integrator::Implicit`] keep between steps.
#[derive(Debug, Clone)]
pub struct IntegratorState {
    integrator: Integrator,
    /// BDF2: the state before the last accepted step and that step's size.
    pub(super) history: Option<bdf2::History>,
    /// BDF2: the terms of the step being taken (`None` for a backward Euler step).
    pub(super) bdf2: Option<bdf2::Terms>,
    /// Explicit and preview: Provot's stretch constraints (particles, rest length).
    pub(super) provot: Vec<([usize; 2], f64)>,
    /// Projective: the spring network and its factorisation.
    pub(super) projective: Option<Box<projective::Projective>>,
}

impl IntegratorState {
    /// Empty state for `params.integrator` on `model`.
    pub fn new(model: &ClothModel, material: &Material, params: &SolverParams) -> Self {
        let provot = if matches!(
            params.integrator,
            Integrator::Explicit | Integrator::Preview
        ) {
            explicit::provot_edges(model)
        } else {
            Vec::new()
        };
        let projective = (params.integrator == Integrator::Projective)
            .then(|| Box::new(projective::Projective::new(model, material)));
        IntegratorState {
            integrator: params.integrator,
            history: None,
            bdf2: None,
            provot,
            projective,
        }
    }

    /// Whether accepted steps must remember the state they started from (BDF2).
    pub(super) fn keeps_history(&self) -> bool {
        self.integrator == Integrator::Bdf2
    }

    /// Remembers the start state `(x, v)` of an accepted step of size `h` (BDF2).
    pub(super) fn remember(&mut self, x: Vec<Vec3>, v: Vec<Vec3>, h: f64) {
        self.history = Some(bdf2::History { x, v, h });
    }

    /// Factorisations of the projective integrator's system so far (0 for the others).
    pub fn factorizations(&self) -> usize {
        self.projective.as_ref().map_or(0, |p| p.factorizations())
    }
}

/// Whether steps of `integrator` are rejected when a triangle's stretch jumps (Baraff §7).
/// The explicit and projective integrators limit stretch by their own constraints; the
/// preview leaves part of every stretch to later steps by design (its Jacobi sweeps do not
/// converge), so the check would halve its steps down to thousands per frame (measured on
/// the two-corner sheet: 540 steps per frame instead of 3), defeating its purpose.
pub(super) fn checks_stretch_jumps(integrator: Integrator) -> bool {
    !matches!(
        integrator,
        Integrator::Explicit | Integrator::Projective | Integrator::Preview
    )
}
