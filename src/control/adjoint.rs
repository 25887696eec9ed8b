//! The adjoint pass (Wojtan et al. 2006; Stuyck §8.3–8.4, eqs. 8.5–8.14): the gradient of
//! Φ with respect to every control force, backwards in time, one linear solve per step
//! with the step's own matrix and filter.
//!
//! One forward step ([`crate::pipeline`]) maps `(x₀, v₀, u)` to `(x₁, v₁)`:
//!
//! ```text
//! Δv = z + G (b − A z),   G = S (S A S)⁺ S        the filtered solve (Baraff §5.3)
//! b  = h (f(x₀, v₀) + K (h v₀ + y) + u)
//! v₁ = v₀ + Δv,           x₁ = x₀ + h v₁ + y
//! z  = (p − x₀)/h − v₀  (pins),   z = Q (v_body − v₀)  (contacts, Q = I − S)
//! y  = (τ − d₀) n        (contacts: the push-out to the body's thickness)
//! ```
//! Holding the step's Jacobians `A = M − h D − h² K` fixed (Wojtan's approximation: their
//! own derivatives would need third derivatives of the energy, Stuyck §8.3), its
//! derivative is
//!
//! ```text
//! dv₁ = G M dv₀ + G h (Kₑ − K Y) dx₀ + (G A − I) C dx₀ / h + h G du
//! dx₁ = (I − Y) dx₀ + h dv₁
//! ```
//! with `Kₑ = ∂f/∂x` exact (the forward's `f(x₀, v₀)` is exact; `K` in `A` drops the
//! asymmetric damping and compressed-stretch terms), `C = I` on pinned particles,
//! `Y = n nᵀ` on contact particles, 0 elsewhere. Its transpose, applied to the adjoint
//! state `(x̂₁, v̂₁) = (∂Φ/∂x₁, ∂Φ/∂v₁)`, is one step of the backward pass (eq. 8.10):
//!
//! ```text
//! s  = v̂₁ + h x̂₁
//! ŵ  = G s                        the same filtered PCG as the forward step, z = 0
//! v̂₀ = M ŵ
//! x̂₀ = (I − Y) x̂₁ + h Kₑᵀ ŵ − h Y K ŵ + C (A ŵ − s) / h
//! ∂Φ/∂u += h ŵ                     summed over the sub-steps of the frame (eq. 8.14)
//! ```
//! `C (A ŵ − s)` is the constraint force of the adjoint solve on the pins (what
//! [`constraint_forces`] computes). What the pass does not differentiate, and so the
//! measured accuracy of the gradient (tests): the step's Jacobians and filter, the
//! sliding-friction direction and the remembered normal force, self-contact springs'
//! frozen normals, and the discrete choices (step sizes, contact sets) — all piecewise
//! constant or slowly varying in the control.
use crate::forces::JacobianMode;
use crate::linalg::pcg::{constraint_forces, modified_pcg, Constraint, PcgScratch, PcgSettings};
use crate::model::ClothModel;
use crate::pipeline::assemble::System;
use crate::pipeline::{SolverParams, StepRecord};
use crate::Vec3;

/// The backward pass's solver: a copy of the forward system rebuilt per recorded step.
#[derive(Debug, Clone)]
pub struct AdjointSolver {
    system: System,
    pcg: PcgScratch,
    settings: PcgSettings,
    w: Vec<Vec3>,
    /// PCG iterations of the adjoint solves so far.
    pub iterations: usize,
    /// Adjoint solves that stopped at the iteration cap or broke down (their last iterate
    /// is used).
    pub unconverged: usize,
}

impl AdjointSolver {
    /// A solver for the simulator whose system is `system`, solving to `tolerance`.
    pub fn new(system: System, params: &SolverParams, tolerance: f64) -> Self {
        AdjointSolver {
            system,
            pcg: PcgScratch::default(),
            settings: PcgSettings {
                tolerance,
                max_iterations: params.cg_max_iterations,
                warm_start: false,
            },
            w: Vec::new(),
            iterations: 0,
            unconverged: 0,
        }
    }

    /// One backward step through `rec`: maps `(x̂₁, v̂₁)` in `lx`, `lv` to `(x̂₀, v̂₀)` and
    /// adds `∂Φ/∂u` of the step to `du`.
    pub fn step(
        &mut self,
        rec: &StepRecord,
        model: &ClothModel,
        params: &SolverParams,
        lx: &mut [Vec3],
        lv: &mut [Vec3],
        du: &mut [Vec3],
    ) {
        let h = rec.h;
        rec.rebuild(&mut self.system, model, params);
        let s: Vec<Vec3> = lv.iter().zip(lx.iter()).map(|(v, x)| v + h * x).collect();
        let filters: Vec<Constraint> = (rec.constraints.iter())
            .map(|c| Constraint {
                z: Vec3::zeros(),
                ..*c
            })
            .collect();
        self.w.resize(s.len(), Vec3::zeros());
        let a = &self.system.matrix;
        let r = modified_pcg(a, &s, &filters, &self.settings, &mut self.pcg, &mut self.w);
        self.iterations += r.iterations;
        if !r.converged {
            self.unconverged += 1;
        }
        let w = &self.w;
        let pin_forces = constraint_forces(a, &s, w, &filters[..rec.pins]);
        let kw = self.system.stiffness_transpose_product(
            model,
            &rec.x,
            &rec.v,
            params.wind,
            JacobianMode::Exact,
            w,
        );
        for i in 0..lx.len() {
            lx[i] += h * kw[i];
            lv[i] = model.mass[i] * w[i];
            du[i] += h * w[i];
        }
        if !rec.contact_normals.is_empty() {
            let ksw = self.system.stiffness_transpose_product(
                model,
                &rec.x,
                &rec.v,
                params.wind,
                rec.mode,
                w,
            );
            for &(i, n) in &rec.contact_normals {
                // (I − Y) x̂₁ − h Y K ŵ with Y = n nᵀ; x̂₁ is already in lx[i] (plus h Kₑᵀŵ).
                let xhat1 = lx[i] - h * kw[i];
                lx[i] -= n * n.dot(&(xhat1 + h * ksw[i]));
            }
        }
        for (c, e) in rec.constraints[..rec.pins].iter().zip(pin_forces) {
            lx[c.particle] += e / h;
        }
    }
}
