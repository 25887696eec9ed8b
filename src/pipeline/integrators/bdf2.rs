//! Second-order backward differences (BDF2; Stuyck §5.10 eq. 5.25, Choi & Ko 2002),
//! linearised like Baraff's step and written in the velocity change `Δv = v₁ − v₀`.
//!
//! Stuyck's eq. 5.25, with `x₋₁, v₋₁` the state one step back:
//!
//! ```text
//! (3/2 x₁ − 2 x₀ + 1/2 x₋₁)/h = v₁,      (3/2 v₁ − 2 v₀ + 1/2 v₋₁)/h = M⁻¹ f(x₁, v₁)
//! ```
//! With `τ = 2h/3`, `η = (x₀ − x₋₁)/3` and `Δv = v₁ − v₀` the two lines read
//!
//! ```text
//! x₁ = x₀ + η + τ (v₀ + Δv)                            (positions)
//! M Δv = (1/3) M (v₀ − v₋₁) + τ f(x₁, v₁)             (velocities)
//! ```
//! and linearising `f(x₁, v₁) ≈ f₀ + ∂f/∂x (x₁ − x₀) + ∂f/∂v Δv` gives
//!
//! ```text
//! (M − τ ∂f/∂v − τ² ∂f/∂x) Δv = τ ( f₀ + ∂f/∂x (τ v₀ + η + y) ) + (1/3) M (v₀ − v₋₁)
//! x₁ = x₀ + η + τ v₁ + y
//! ```
//! This is Baraff's eq. 18 with `h → τ` and `y → y + η`, plus the momentum term
//! `(1/3) M (v₀ − v₋₁)` on the right: one PCG solve per step, the same cost as the
//! implicit step. (Stuyck's eq. 5.26 is the same system solved for `Δx` instead.) Pins
//! prescribe `Δv` so that `x₁` is the target: `z = (p − (x₀ + η))/τ − v₀`. A particle in
//! body contact keeps only the tangential part of `η` (none if stuck): its normal motion
//! is the contact's. `y` is the position alteration of contacts (Baraff §6.2).
//!
//! The formula needs the previous step to have had the same size: the first step, and
//! any step after the size changed (adaptive control, the end of a frame), is a backward
//! Euler step (the implicit one), which starts the history again.
use super::IntegratorState;
use crate::pipeline::Simulator;
use crate::Vec3;
use rayon::prelude::*;

/// What BDF2 keeps between steps.
#[derive(Debug, Clone, Default)]
pub struct Bdf2 {
    /// The state before the last accepted step (`None` before the first).
    pub history: Option<History>,
    /// The terms of the step being taken (`None` for a backward Euler step).
    pub terms: Option<Terms>,
}

/// The state before the last accepted step.
#[derive(Debug, Clone)]
pub struct History {
    /// Positions `x₋₁` (m).
    pub x: Vec<Vec3>,
    /// Velocities `v₋₁` (m/s).
    pub v: Vec<Vec3>,
    /// Size of the step that followed (s).
    pub h: f64,
}

// A checkpoint keeps the history: the next step is BDF2's two-step formula from it.
crate::persist_fields!(History { x, v, h });

/// The BDF2 terms of one step.
#[derive(Debug, Clone)]
pub struct Terms {
    /// `η = (x₀ − x₋₁)/3` (m), tangential only for contact particles.
    pub eta: Vec<Vec3>,
    /// `x₀ + η`, the start the pins' velocity change is measured from (m).
    pub base: Vec<Vec3>,
    /// `(1/3) M (v₀ − v₋₁)` (N·s).
    pub momentum: Vec<Vec3>,
    /// `y + η`, the system's position offset (m).
    pub y_total: Vec<Vec3>,
}

/// Relative difference of step sizes still treated as equal (rounding at frame ends).
const SAME_STEP: f64 = 1e-9;

impl Simulator {
    /// Starts a step of size `h`: under [`Integrator::Bdf2`](crate::pipeline::Integrator::Bdf2) with a history of the same
    /// step size, sets the BDF2 terms and returns `τ = 2h/3`; otherwise clears them and
    /// returns `h` (a backward Euler step).
    pub(in crate::pipeline) fn begin_bdf2(&mut self, h: f64) -> f64 {
        let IntegratorState::Bdf2(bdf2) = &mut self.integrator else {
            return h;
        };
        bdf2.terms = None;
        let Some(hist) = &bdf2.history else {
            return h;
        };
        if (hist.h - h).abs() > SAME_STEP * h {
            return h;
        }
        let eta: Vec<Vec3> = (self.state.x.par_iter())
            .zip(hist.x.par_iter())
            .map(|(x, xp)| (x - xp) / 3.0)
            .collect();
        let base = (self.state.x.par_iter())
            .zip(eta.par_iter())
            .map(|(x, e)| x + e)
            .collect();
        let momentum = (self.state.v.par_iter())
            .zip(hist.v.par_iter())
            .zip(self.model.mass.par_iter())
            .map(|((v, vp), m)| (m / 3.0) * (v - vp))
            .collect();
        let n = self.state.x.len();
        bdf2.terms = Some(Terms {
            eta,
            base,
            momentum,
            y_total: vec![Vec3::zeros(); n],
        });
        2.0 * h / 3.0
    }

    /// Completes the BDF2 terms once contacts and position alterations `y` are known:
    /// contact particles keep the tangential part of η only (none when stuck), and
    /// `y_total = y + η`.
    pub(in crate::pipeline) fn finish_bdf2_terms(&mut self) {
        let IntegratorState::Bdf2(Bdf2 { terms: Some(t), .. }) = &mut self.integrator else {
            return;
        };
        for c in &self.collision.contacts.contacts {
            let e = &mut t.eta[c.particle];
            *e = if c.stuck {
                Vec3::zeros()
            } else {
                *e - c.normal * c.normal.dot(e)
            };
        }
        t.y_total
            .par_iter_mut()
            .zip(self.scratch.y.par_iter().zip(t.eta.par_iter()))
            .for_each(|(yt, (y, e))| *yt = y + e);
    }
}
