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
//! The step's Jacobians `A = M − h D − h² K` depend on `x₀` too. Wojtan et al. hold them
//! fixed ("their derivatives would need third derivatives of the energy", Stuyck §8.3);
//! that frozen-Jacobian gradient stops being a descent direction once the elements rotate
//! much over the horizon. A replayed control step solves with the
//! [`JacobianMode::Definite`] Jacobians, which need second derivatives of the conditions
//! only (plus one third-derivative contraction for stretched stretch components), so the
//! pass differentiates them too ([`crate::forces::jacobian_derivative`]). The derivative
//! of the step is
//!
//! ```text
//! dv₁ = G M dv₀ + G h (Kₑ − K Y) dx₀ + h G (∂D[dx₀] Δv + ∂K[dx₀] (x₁ − x₀))
//!       + h G (Dₑ − D) dv₀ + (G A − I) C dx₀ / h + h G du
//! dx₁ = (I − Y) dx₀ + h dv₁
//! ```
//! with `Kₑ = ∂f/∂x`, `Dₑ = ∂f/∂v` exact (the forward's `f(x₀, v₀)` is exact; `K` in `A`
//! keeps only the definite part, and `D` leaves out lift, which is applied explicitly),
//! `C = I` on pinned particles, `Y = n nᵀ` on contact particles, 0 elsewhere. Its
//! transpose, applied to the adjoint state `(x̂₁, v̂₁) = (∂Φ/∂x₁, ∂Φ/∂v₁)`, is one step of
//! the backward pass (eq. 8.10):
//!
//! ```text
//! s  = v̂₁ + h x̂₁
//! ŵ  = G s                        the same filtered PCG as the forward step, z = 0
//! v̂₀ = M ŵ + h (Dₑ − D)ᵀ ŵ
//! x̂₀ = (I − Y) x̂₁ + h Kₑᵀ ŵ − h Y K ŵ + C (A ŵ − s) / h
//!      + h ∇ₓ [ŵᵀ D(x) Δv + ŵᵀ K(x) (x₁ − x₀)]
//! ∂Φ/∂u += h ŵ                     summed over the sub-steps of the frame (eq. 8.14)
//! ```
//! `C (A ŵ − s)` is the constraint force of the adjoint solve on the pins (what
//! [`constraint_forces`] computes). With [`AdjointSolver::exact`] off the last line of
//! `x̂₀` is left out (Wojtan's approximation). What the pass does not differentiate: the
//! filter, the sliding-friction direction and the remembered normal force, self-contact
//! springs' frozen normals, the Jacobians of a step solved in [`JacobianMode::System`]
//! (never the case in a replayed schedule), and the discrete choices (step sizes, contact
//! sets) — all piecewise constant in the control. Measured (tests/control_gradient.rs):
//! with pins, relative error 1.8e-7 against central differences (frozen: 0.32); with
//! wind and lift 2.4e-6; with frictionless body contact 6.5e-8; with Coulomb friction
//! 2.4e-3 (cosine 0.9999994).
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
    /// Differentiate the step's Jacobians too (the exact adjoint of a definite-Jacobian
    /// step); false gives Wojtan's frozen-Jacobian approximation. Default true.
    pub exact: bool,
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
            exact: true,
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
        let lift = self.system.explicit_velocity_transpose_product(
            model,
            &rec.x,
            &rec.v,
            params.wind,
            rec.mode,
            w,
        );
        for i in 0..lx.len() {
            lx[i] += h * kw[i];
            lv[i] = model.mass[i] * w[i];
            du[i] += h * w[i];
        }
        if let Some(lift) = lift {
            lv.iter_mut().zip(lift).for_each(|(l, e)| *l += h * e);
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
        if self.exact && rec.mode == JacobianMode::Definite {
            let moved = rec.displacement();
            let jw = (self.system).definite_jacobian_gradient(model, &rec.x, w, &rec.dv, &moved);
            lx.iter_mut().zip(jw).for_each(|(l, j)| *l += h * j);
        }
        for (c, e) in rec.constraints[..rec.pins].iter().zip(pin_forces) {
            lx[c.particle] += e / h;
        }
    }
}
