//! Symplectic Euler with Provot's deformation constraints (Intel article §3.3, §4.2.2.1;
//! Provot 1995), sub-stepped below its stability limit.
//!
//! One step of `h` is `K` sub-steps of `δ = h/K`:
//!
//! ```text
//! v ← v + δ M⁻¹ f(x, v)                  forces of the force model, drag, lift, gravity,
//!                                        self-contact springs, applied and friction forces
//! v_i ← S_i v_i + (I − S_i) v_c,i         body contacts: the constrained velocity (Baraff
//!                                        §5.3's filter applied to v instead of Δv)
//! x̃ ← x + δ v                            (the first sub-step also adds the alteration y)
//! Provot: for every edge with ‖x̃_a − x̃_b‖ > (1 + ε) L₀, move both ends (a pinned end
//!         stays) along the edge until it is (1 + ε) L₀ long; a few sweeps
//! v ← (x̃ − x)/δ,  x ← x̃
//! ```
//! Pinned particles follow the straight line to their targets, reaching them exactly at
//! the end of the step. The stable sub-step comes from Gershgorin bounds of the force
//! Jacobians at the step's start: `δ ≤ 1 / max_i (√(k_i/m_i) + d_i/m_i)` with
//! `k_i = Σ_j ‖∂f_i/∂x_j‖`, `d_i = Σ_j ‖∂f_i/∂v_j‖` (symplectic Euler is stable for
//! `δω < 2` undamped and `δ d/m < 2` for pure damping; a factor 2 of margin for the bound
//! on the two together). Stiff cloth needs thousands of sub-steps per frame: the reason the
//! implicit integrators exist.
use super::super::{FrameStats, Rejection};
use super::IntegratorState;
use crate::model::springs::{springs, SpringKind};
use crate::model::ClothModel;
use crate::pipeline::Simulator;
use crate::{Mat3, Vec3};
use rayon::prelude::*;

/// Provot correction sweeps per limit (the Intel article uses a fixed count), after each
/// explicit sub-step and each preview step.
const PROVOT_SWEEPS: usize = 4;
/// Most sub-steps of one step; beyond, the step is rejected (halved by step control).
const MAX_SUBSTEPS: usize = 100_000;

/// Provot's deformation constraints of a garment: its edges and the strain they allow.
#[derive(Debug, Clone)]
pub struct Provot {
    /// Every edge (its two particles) with its rest length (m).
    pub edges: Vec<([usize; 2], f64)>,
    /// Largest edge strain allowed (dimensionless, [`SolverParams::provot_limit`]).
    ///
    /// [`SolverParams::provot_limit`]: crate::pipeline::SolverParams::provot_limit
    pub limit: f64,
}

impl Provot {
    /// The constraints on every edge of `model`, allowing a strain of `limit`.
    pub fn new(model: &ClothModel, limit: f64) -> Self {
        Provot {
            edges: provot_edges(model),
            limit,
        }
    }

    /// Applies the constraints to `x` in place ([`provot`], [`PROVOT_SWEEPS`] sweeps);
    /// particles marked `fixed` stay.
    pub fn apply(&self, x: &mut [Vec3], fixed: &[bool]) {
        provot(x, &self.edges, fixed, self.limit, PROVOT_SWEEPS);
    }
}

/// The stretch constraints: every edge with its rest length (m).
pub fn provot_edges(model: &ClothModel) -> Vec<([usize; 2], f64)> {
    springs(model)
        .into_iter()
        .filter(|s| s.kind == SpringKind::Stretch)
        .map(|s| (s.nodes, s.rest))
        .collect()
}

/// Applies Provot's constraints to `x` in place: `sweeps` Gauss–Seidel passes over the
/// edges in order, each pulling an edge longer than `(1 + limit) L₀` back to that length,
/// moving both ends by half (only the free end if one is `fixed`, neither if both).
pub fn provot(
    x: &mut [Vec3],
    edges: &[([usize; 2], f64)],
    fixed: &[bool],
    limit: f64,
    sweeps: usize,
) {
    for _ in 0..sweeps {
        let mut moved = false;
        for &([a, b], rest) in edges {
            let d = x[b] - x[a];
            let len = d.norm();
            let max = (1.0 + limit) * rest;
            if len <= max || !len.is_finite() {
                continue;
            }
            let excess = (len - max) / len * d;
            match (fixed[a], fixed[b]) {
                (false, false) => {
                    x[a] += 0.5 * excess;
                    x[b] -= 0.5 * excess;
                }
                (false, true) => x[a] += excess,
                (true, false) => x[b] -= excess,
                (true, true) => continue,
            }
            moved = true;
        }
        if !moved {
            break;
        }
    }
}

impl Simulator {
    /// Provot's deformation constraints of the explicit or preview integrator on positions
    /// `x` (pinned particles stay); nothing under the other integrators.
    pub(in crate::pipeline) fn limit_stretch(&self, x: &mut [Vec3]) {
        let provot = match &self.integrator {
            IntegratorState::Explicit(provot) => provot,
            IntegratorState::Preview(preview) => &preview.provot,
            _ => return,
        };
        provot.apply(x, &self.drive.pinned);
    }

    /// One explicit step of `h` (module doc).
    pub(in crate::pipeline) fn step_explicit(
        &mut self,
        h: f64,
        stats: &mut FrameStats,
    ) -> Result<(), Rejection> {
        let targets = self.begin_pinned_step(h);
        self.detect_collisions(h, stats);
        let (g, wind) = (self.params.gravity, self.params.wind);
        let bounds = self.scratch.system.jacobian_row_bounds(
            &self.model,
            &self.state.x,
            &self.state.v,
            wind,
        );
        let rate = (bounds.iter().zip(&self.model.mass).zip(&self.drive.pinned))
            .filter(|(_, &p)| !p)
            .map(|(((k, d), m), _)| (k / m).sqrt() + d / m)
            .fold(0.0, f64::max);
        let substeps = if rate > 0.0 { (h * rate).ceil() } else { 1.0 };
        if !(substeps.is_finite() && substeps <= MAX_SUBSTEPS as f64) {
            return Err(Rejection::Solve);
        }
        let substeps = (substeps as usize).max(1);
        let dt = h / substeps as f64;
        // Constrained velocity (I − S) v_c of each body contact, and its filter S.
        let n = self.state.x.len();
        let mut filter: Vec<Option<(Mat3, Vec3)>> = vec![None; n];
        for c in &self.scratch.constraints {
            let vc = self.state.v[c.particle] + c.z;
            filter[c.particle] = Some((c.filter, vc - c.filter * vc));
        }
        let friction = self.collision.contacts.friction_terms(&self.state.v);
        let mut extra = self
            .drive
            .applied
            .clone()
            .unwrap_or_else(|| vec![Vec3::zeros(); n]);
        for (i, _, f) in &friction {
            extra[*i] += f;
        }
        let (x0, v0) = (self.state.x.clone(), self.state.v.clone());
        let mut x = x0.clone();
        let mut v = v0.clone();
        for (xi, yi) in x.iter_mut().zip(&self.scratch.y) {
            *xi += yi;
        }
        let mut impulses = vec![Vec3::zeros(); n];
        let mass = &self.model.mass;
        for k in 0..substeps {
            let f = self.scratch.system.forces(&self.model, &x, &v, g, wind);
            let prev = x.clone();
            (x.par_iter_mut().zip(v.par_iter_mut()))
                .zip(f.par_iter().zip(extra.par_iter()))
                .zip(filter.par_iter().zip(impulses.par_iter_mut()))
                .zip(mass.par_iter())
                .for_each(|((((xi, vi), (fi, ei)), (flt, imp)), m)| {
                    let force = fi + ei;
                    let mut vn = *vi + (dt / m) * force;
                    if let Some((s, vc)) = flt {
                        vn = s * vn + vc;
                        let e = *m * (vn - *vi) - dt * force;
                        *imp += e - s * e;
                    }
                    *vi = vn;
                    *xi += dt * vn;
                });
            let last = k + 1 == substeps;
            let along = (k + 1) as f64 / substeps as f64;
            for &(i, goal) in &targets {
                x[i] = if last {
                    goal
                } else {
                    x0[i] + along * (goal - x0[i])
                };
            }
            self.limit_stretch(&mut x);
            (v.par_iter_mut())
                .zip(x.par_iter().zip(prev.par_iter()))
                .for_each(|(vi, (xi, pi))| *vi = (xi - pi) / dt);
        }
        self.collision.impulses = (self.collision.contacts.contacts.iter())
            .map(|c| impulses[c.particle])
            .collect();
        let tolerate_crossing = h <= self.params.max_step / 256.0;
        if self.check_and_commit(x, Some(v), h, tolerate_crossing)? {
            stats.self_crossings += 1;
        }
        self.remember_contacts(h);
        Ok(())
    }
}
