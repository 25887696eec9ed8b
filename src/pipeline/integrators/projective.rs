//! Projective dynamics (Liu et al. 2013; Stuyck ch. 6): backward Euler on the spring
//! network solved by local–global alternation with a prefactored system.
//!
//! Stuyck eqs. 6.6–6.20: the step minimises over positions `x` and spring directions
//! `d_s` (‖d_s‖ = L₀,s)
//!
//! ```text
//! g̃(x, d) = ½ (x − s)ᵀ M (x − s) + ½ h² xᵀ L x − h² xᵀ J d − h² xᵀ f_ext,   s = x₀ + h v₀ + y
//! L = Σ_s k_s A_s A_sᵀ ⊗ I,   J = Σ_s k_s A_s S_sᵀ ⊗ I                    (eq. 6.15)
//! local:   d_s = L₀,s (x_a − x_b)/‖x_a − x_b‖                              (eq. 6.19)
//! global:  (M + h² L) x = M s + h² J d + h² f_ext                          (eq. 6.20)
//! ```
//! `A_s` has +1 at the spring's first particle and −1 at its second, `k_s` its stiffness
//! (N/m), `f_ext` gravity, drag, lift, applied and friction forces at the step's start
//! (explicit), `y` the contact position alteration (Baraff §6.2). The matrix is the same
//! for every iteration and every step of the same size: it is factored once by sparse
//! Cholesky (faer) per topology and step size, as a scalar matrix shared by the three
//! coordinates, and refactored only when `h` changes ([`Projective::factorizations`]).
//!
//! Pins are eliminated: pinned particles sit exactly on their targets, their columns move
//! to the right side, so the factor depends on the pinned set (fixed per simulator).
//! After the solve `v₁ = (x₁ − x₀)/h`; body contacts are enforced by projection: a
//! contact particle's velocity gets the contact's prescribed components
//! (`v ← S v + (I − S)(v₀ + z)`, Baraff §5.3's filter) and `x₁ = x₀ + h v + y`. The
//! springs' damping is not modelled (backward Euler's numerical damping remains), nor is
//! self-collision; the energies are always the mass-spring model's.
use super::super::{FrameStats, Rejection};
use super::IntegratorState;
use crate::forces::spring::SpringParams;
use crate::model::ClothModel;
use crate::pipeline::assemble::spring_parameters;
use crate::pipeline::Simulator;
use crate::scene::Material;
use crate::{Mat3, Vec3};
use faer::prelude::*;
use faer::sparse::linalg::solvers::Llt;
use faer::sparse::{SparseColMat, Triplet};
use faer::Side;
use rayon::prelude::*;

/// The spring network and the factor of its global matrix.
#[derive(Debug, Clone)]
pub struct Projective {
    /// Local–global iterations per step ([`SolverParams::projective_iterations`], at
    /// least 1).
    ///
    /// [`SolverParams::projective_iterations`]: crate::pipeline::SolverParams::projective_iterations
    iterations: usize,
    springs: Vec<([usize; 2], SpringParams)>,
    /// The factor, the step size and pinned mask it was computed for.
    factor: Option<(Llt<usize, f64>, f64, Vec<bool>)>,
    factorizations: usize,
    /// The step the factor of a checkpointed run was built for, to build the next factor
    /// for it again ([`Projective::restore_factor_step`]).
    restored_step: Option<f64>,
}

impl Projective {
    /// The spring network of `model` with stiffness from `material` (no factor yet),
    /// taking `iterations` local–global iterations per step.
    pub fn new(model: &ClothModel, material: &Material, iterations: usize) -> Self {
        Projective {
            iterations: iterations.max(1),
            springs: spring_parameters(model, material),
            factor: None,
            factorizations: 0,
            restored_step: None,
        }
    }

    /// The step size the current factor was built for (steps within rounding of it share
    /// the factor, so it is state a checkpoint keeps).
    pub fn factor_step(&self) -> Option<f64> {
        self.factor.as_ref().map(|(_, h, _)| *h)
    }

    /// After a restore: the next factor is built for step `h` (the interrupted run's)
    /// when the step asked for is within rounding of it, as that run's factor was.
    pub fn restore_factor_step(&mut self, h: Option<f64>) {
        self.factor = None;
        self.restored_step = h;
    }

    /// Sparse Cholesky factorisations computed so far.
    pub fn factorizations(&self) -> usize {
        self.factorizations
    }

    /// The factor of `M_ff + h² L_ff` over the free particles (`index[i]` = free index or
    /// `usize::MAX`), computed if `h` or the pinned set changed. `None` if the matrix is not
    /// positive definite (zero masses).
    fn factor(
        &mut self,
        mass: &[f64],
        pinned: &[bool],
        index: &[usize],
        free: usize,
        h: f64,
    ) -> Option<&Llt<usize, f64>> {
        let stale = match &self.factor {
            // Steps that differ by rounding (a frame's last step) share the factor.
            Some((_, fh, fp)) => (fh - h).abs() > 1e-9 * h || fp.as_slice() != pinned,
            None => true,
        };
        if stale {
            self.factor = None;
            let h = match self.restored_step.take() {
                Some(h0) if (h0 - h).abs() <= 1e-9 * h => h0,
                _ => h,
            };
            let h2 = h * h;
            let mut triplets: Vec<Triplet<usize, usize, f64>> =
                Vec::with_capacity(free + 4 * self.springs.len());
            for (i, &m) in mass.iter().enumerate() {
                if index[i] != usize::MAX {
                    triplets.push(Triplet::new(index[i], index[i], m));
                }
            }
            for ([a, b], p) in &self.springs {
                let w = h2 * p.k;
                let (ia, ib) = (index[*a], index[*b]);
                if ia != usize::MAX {
                    triplets.push(Triplet::new(ia, ia, w));
                }
                if ib != usize::MAX {
                    triplets.push(Triplet::new(ib, ib, w));
                }
                if ia != usize::MAX && ib != usize::MAX {
                    triplets.push(Triplet::new(ia, ib, -w));
                    triplets.push(Triplet::new(ib, ia, -w));
                }
            }
            let matrix =
                SparseColMat::<usize, f64>::try_new_from_triplets(free, free, &triplets).ok()?;
            let llt = matrix.sp_cholesky(Side::Lower).ok()?;
            self.factorizations += 1;
            self.factor = Some((llt, h, pinned.to_vec()));
        }
        self.factor.as_ref().map(|(f, _, _)| f)
    }
}

impl Simulator {
    /// One projective-dynamics step of `h` (module doc).
    pub(in crate::pipeline) fn step_projective(
        &mut self,
        h: f64,
        stats: &mut FrameStats,
    ) -> Result<(), Rejection> {
        let targets = self.begin_pinned_step(h);
        self.detect_body_collisions(h);
        let n = self.state.x.len();
        let (g, wind) = (self.params.gravity, self.params.wind);
        // Explicit external forces: gravity, drag, lift, applied forces, friction.
        let mut f_ext =
            self.scratch
                .system
                .external_forces(&self.model, &self.state.x, &self.state.v, g, wind);
        if let Some(a) = &self.drive.applied {
            for (f, a) in f_ext.iter_mut().zip(a) {
                *f += a;
            }
        }
        for (i, _, f) in self.collision.contacts.friction_terms(&self.state.v) {
            f_ext[i] += f;
        }
        let mut index = vec![usize::MAX; n];
        let mut free = 0;
        for (slot, &pinned) in index.iter_mut().zip(&self.drive.pinned) {
            if !pinned {
                *slot = free;
                free += 1;
            }
        }
        let mut x: Vec<Vec3> = (self.state.x.par_iter().zip(self.state.v.par_iter()))
            .zip(self.scratch.y.par_iter())
            .map(|((x, v), y)| x + h * v + y)
            .collect();
        let inertial = x.clone();
        for &(i, goal) in &targets {
            x[i] = goal;
        }
        let mass = &self.model.mass;
        let IntegratorState::Projective(pd) = &mut self.integrator else {
            return Err(Rejection::Solve);
        };
        let (springs, iterations) = (pd.springs.clone(), pd.iterations);
        let Some(llt) = pd.factor(mass, &self.drive.pinned, &index, free, h) else {
            return Err(Rejection::Solve);
        };
        let h2 = h * h;
        let mut rhs = Mat::<f64>::zeros(free, 3);
        for _ in 0..iterations {
            // Right side: M s + h² f_ext, then the springs' h² k_s A_s d_s and the pinned
            // columns moved over (−h² L_fp x_p).
            for i in 0..n {
                if index[i] != usize::MAX {
                    let b = mass[i] * inertial[i] + h2 * f_ext[i];
                    for c in 0..3 {
                        rhs[(index[i], c)] = b[c];
                    }
                }
            }
            for ([a, b], p) in &springs {
                let d = x[*a] - x[*b];
                let len = d.norm();
                let dir = if len > 0.0 && len.is_finite() {
                    p.rest / len * d
                } else {
                    Vec3::zeros()
                };
                let w = h2 * p.k;
                for (i, j, sign) in [(*a, *b, 1.0), (*b, *a, -1.0)] {
                    let k = index[i];
                    if k == usize::MAX {
                        continue;
                    }
                    let mut add = sign * w * dir;
                    if index[j] == usize::MAX {
                        add += w * x[j];
                    }
                    for c in 0..3 {
                        rhs[(k, c)] += add[c];
                    }
                }
            }
            llt.solve_in_place(rhs.as_mut());
            for i in 0..n {
                if index[i] != usize::MAX {
                    x[i] = Vec3::new(rhs[(index[i], 0)], rhs[(index[i], 1)], rhs[(index[i], 2)]);
                }
            }
        }
        // Velocities, then the contacts' prescribed components by projection.
        let mut v: Vec<Vec3> = (x.par_iter().zip(self.state.x.par_iter()))
            .map(|(x1, x0)| (x1 - x0) / h)
            .collect();
        let mut impulses = Vec::with_capacity(self.collision.contacts.contacts.len());
        for c in &self.scratch.constraints {
            let i = c.particle;
            let u = (x[i] - self.state.x[i] - self.scratch.y[i]) / h;
            let vc = self.state.v[i] + c.z;
            let s: Mat3 = c.filter;
            let constrained = s * u + (vc - s * vc);
            let e = mass[i] * (constrained - u);
            impulses.push(e - s * e);
            v[i] = constrained;
            x[i] = self.state.x[i] + h * constrained + self.scratch.y[i];
        }
        self.collision.impulses = impulses;
        for &(i, goal) in &targets {
            x[i] = goal;
        }
        let _ = stats;
        self.check_and_commit(x, Some(v), h, true)?;
        self.remember_contacts(h);
        Ok(())
    }
}
