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
//! ŵ  = G s                        the forward step's filtered PCG (same preconditioner), z = 0
//! v̂₀ = M ŵ + h (Dₑ − D)ᵀ ŵ
//! x̂₀ = (I − Y) x̂₁ + h Kₑᵀ ŵ − h Y K ŵ + C (A ŵ − s) / h
//!      + h ∇ₓ [ŵᵀ D(x) Δv + ŵᵀ K(x) (x₁ − x₀)]
//! ∂Φ/∂u += h ŵ                     summed over the sub-steps of the frame (eq. 8.14)
//! ```
//! `C (A ŵ − s)` is the constraint force of the adjoint solve on the pins (what
//! [`constraint_forces`] computes). With [`AdjointSolver::exact`] off the last line of
//! `x̂₀` is left out (Wojtan's approximation).
//!
//! Friction carries state from one step to the next: the normal force `N = nᵀe/h` of the
//! contact force `e = (I − S)(A Δv − b)` and the direction of the friction force that a
//! slowly slipping contact keeps (the previous slip, or the tangential force that broke a
//! stuck contact). The pass differentiates both: a step hands `∂Φ/∂N`, `∂Φ/∂d` of its
//! friction terms to the step before, which turns them into `ẽ = ∂Φ/∂e` and extra `v̂₁`,
//! solves for `ŵ = G (s + A ẽ)` and uses `λ = ŵ − ẽ` in place of `ŵ` in every line above
//! (see [`AdjointSolver::step`]).
//!
//! What the pass does not differentiate: the filter, how a fast-slipping contact's
//! friction Jacobian changes with its velocity, self-contact springs' frozen normals, the
//! Jacobians of a step solved in [`JacobianMode::System`] (never the case in a replayed
//! schedule), and the discrete choices (step sizes, contact sets, stuck or sliding) — all
//! piecewise constant in the control. Measured (tests/control_gradient.rs): with pins,
//! relative error 1e-7 against central differences (frozen Jacobians: 0.32); with wind
//! and lift 2e-6; with frictionless body contact 9e-8; with Coulomb friction 1.6e-3
//! (cosine 0.99999987; 2.2e-3 without the friction memory).
use crate::forces::JacobianMode;
use crate::linalg::constraint_forces::constraint_forces;
use crate::linalg::pcg::{modified_pcg_with, Constraint, PcgScratch, PcgSettings};
use crate::linalg::Preconditioner;
use crate::model::ClothModel;
use crate::pipeline::assemble::System;
use crate::pipeline::{SolverParams, StepRecord};
use crate::{Mat3, Vec3};

/// The backward pass's solver: a copy of the forward system rebuilt per recorded step.
#[derive(Debug, Clone)]
pub struct AdjointSolver {
    system: System,
    pcg: PcgScratch,
    settings: PcgSettings,
    /// The forward solves' preconditioner ([`SolverParams::preconditioner`]).
    preconditioner: Preconditioner,
    w: Vec<Vec3>,
    /// ∂Φ with respect to what the last step's friction remembered, for the step before.
    friction_seeds: Vec<FrictionSeed>,
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
        let deflation = params.deflates(system.matrix.n());
        AdjointSolver {
            system,
            pcg: PcgScratch::default(),
            settings: PcgSettings {
                tolerance,
                max_iterations: params.cg_max_iterations,
                warm_start: false,
                deflation,
            },
            preconditioner: params.preconditioner,
            w: Vec::new(),
            friction_seeds: Vec::new(),
            exact: true,
            iterations: 0,
            unconverged: 0,
        }
    }

    /// One backward step through `rec`: maps `(x̂₁, v̂₁)` in `lx`, `lv` to `(x̂₀, v̂₀)` and
    /// adds `∂Φ/∂u` of the step to `du`. Steps must come in reverse order of the forward
    /// pass: the derivative with respect to the normal forces that this step's friction
    /// remembers is handed to the step before ([`AdjointSolver::step`] keeps it).
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
        let n = lx.len();
        // ẽ: ∂Φ/∂e of this step's contact forces e = (I − S)(A Δv − b), and more ∂Φ/∂v₁,
        // through what the next step's friction remembered of them (its seeds).
        let seeds = std::mem::take(&mut self.friction_seeds);
        let e_hat = friction_memory_adjoint(rec, &self.system, &seeds, lv);
        let s: Vec<Vec3> = lv.iter().zip(lx.iter()).map(|(v, x)| v + h * x).collect();
        let mut rhs = s.clone();
        if e_hat.iter().any(|e| *e != Vec3::zeros()) {
            let mut ae = vec![Vec3::zeros(); n];
            self.system.matrix.mul_vec(&e_hat, &mut ae);
            rhs.iter_mut().zip(&ae).for_each(|(r, a)| *r += a);
        }
        let filters: Vec<Constraint> = (rec.constraints.iter())
            .map(|c| Constraint {
                z: Vec3::zeros(),
                ..*c
            })
            .collect();
        self.w.resize(n, Vec3::zeros());
        let a = &self.system.matrix;
        let r = modified_pcg_with(
            a,
            &rhs,
            &filters,
            &self.settings,
            self.preconditioner,
            &mut self.pcg,
            &mut self.w,
        );
        self.iterations += r.iterations;
        if !r.converged {
            self.unconverged += 1;
        }
        // λ = ŵ − ẽ multiplies every partial derivative of the step's residual.
        let lambda: Vec<Vec3> = self.w.iter().zip(&e_hat).map(|(w, e)| w - e).collect();
        let w = &lambda;
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
        for i in 0..n {
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
                // (I − Y) x̂₁ − h Y K λ with Y = n nᵀ; x̂₁ is already in lx[i] (plus h Kₑᵀλ).
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
        if self.exact {
            self.friction_seeds = friction_seeds(rec, w);
        }
    }
}

/// ∂Φ with respect to the memory one friction term of a step was built from.
#[derive(Debug, Clone, Copy)]
struct FrictionSeed {
    particle: usize,
    /// ∂Φ/∂N, the remembered normal force.
    normal_force: f64,
    /// ∂Φ/∂d, the remembered direction (zero while slipping fast: then unused).
    direction: Vec3,
}

/// The seeds of step `rec` for the step before it. The step adds `h K` to its matrix and
/// `h f₀` to its right side, both proportional to the remembered normal force `N`, and
/// below the slip threshold `f₀ = μN P_t d` with the remembered direction `d`; so the
/// residual `r = A Δv − b` changes by `h (K Δv − f₀)/N` per unit of `N` and by
/// `−h μN P_t` per unit of `d`, and with `∂Φ = −λᵀ ∂r`
///
/// ```text
/// ∂Φ/∂N = −h λᵀ (K Δv − f₀)/N,      ∂Φ/∂d = h μN P_t λ   (K = 0 only)
/// ```
fn friction_seeds(rec: &StepRecord, lambda: &[Vec3]) -> Vec<FrictionSeed> {
    (rec.friction.iter().zip(&rec.friction_sources))
        .filter(|(_, src)| src.normal_force > 0.0)
        .map(|(&(i, k, f0), src)| {
            let dr = (k * rec.dv[i] - f0) * (rec.h / src.normal_force);
            let slow = k == Mat3::zeros();
            let normal = rec.contact_of(i).map(|j| rec.contact_normals[j].1);
            let direction = match normal {
                Some(n) if slow => {
                    let l = lambda[i] - n * n.dot(&lambda[i]);
                    (rec.h * src.limit) * l
                }
                _ => Vec3::zeros(),
            };
            FrictionSeed {
                particle: i,
                normal_force: -lambda[i].dot(&dr),
                direction,
            }
        })
        .collect()
}

/// Applies the next step's friction seeds to step `rec` (whose system is rebuilt in
/// `system`): returns `ẽ`, ∂Φ with respect to the step's contact forces
/// `e = (I − S)(A Δv − b)`, and adds to `lv` (∂Φ/∂v₁) what the remembered direction owes
/// to the step's final slip. What the next step remembered of a contact of this one:
///
/// ```text
/// N = nᵀ e / h
/// d = t/‖t‖,  t = P_n e / h                     (stuck here: the force that broke it)
/// d = −ŝ,     ŝ = s/‖s‖, s = P_n (v₁ − v_body)   (sliding here)
/// ```
fn friction_memory_adjoint(
    rec: &StepRecord,
    system: &System,
    seeds: &[FrictionSeed],
    lv: &mut [Vec3],
) -> Vec<Vec3> {
    let h = rec.h;
    let mut e_hat = vec![Vec3::zeros(); rec.x.len()];
    for seed in seeds {
        let i = seed.particle;
        let Some(j) = rec.contact_of(i) else {
            continue;
        };
        let n = rec.contact_normals[j].1;
        e_hat[i] += (seed.normal_force / h) * n;
        if seed.direction == Vec3::zeros() {
            continue;
        }
        let tangent = |p: Vec3| p - n * n.dot(&p);
        let stuck = rec.constraints[rec.pins + j].filter == Mat3::zeros();
        if stuck {
            let e = system.matrix.mul_row(i, &rec.dv) - system.rhs[i];
            let t = tangent(e / h);
            let len = t.norm();
            if len > 0.0 {
                let th = t / len;
                let g = seed.direction - th * th.dot(&seed.direction);
                e_hat[i] += tangent(g) / (len * h);
            }
        } else {
            let slip = tangent(rec.v[i] + rec.dv[i] - rec.contact_velocities[j]);
            let len = slip.norm();
            if len > 0.0 {
                let sh = slip / len;
                let g = seed.direction - sh * sh.dot(&seed.direction);
                lv[i] -= tangent(g) / len;
            }
        }
    }
    e_hat
}
