//! Assembly and solve of the linear system of one step (Baraff eq. 18, §5.3), and what
//! the adjoint pass records of an accepted step ([`super::record`]).
use super::{FrameStats, IntegratorState, Simulator, StepRecord, CONTROL_CG_TOLERANCE};
use crate::forces::JacobianMode;
use crate::linalg::pcg::{modified_pcg_with, PcgResult, PcgSettings};
use crate::Vec3;
use rayon::prelude::*;

impl Simulator {
    /// What the adjoint pass needs to rebuild this step's system (called before the state
    /// advances).
    pub(super) fn record(&self, h: f64) -> StepRecord {
        let pins = self.scratch.constraints.len() - self.collision.contacts.contacts.len();
        StepRecord {
            h,
            x: self.state.x.clone(),
            v: self.state.v.clone(),
            dv: self.scratch.dv.clone(),
            y: (self.scratch.y.iter().enumerate())
                .filter(|(_, y)| **y != Vec3::zeros())
                .map(|(i, y)| (i, *y))
                .collect(),
            mode: self.scratch.mode,
            constraints: self.scratch.constraints.clone(),
            pins,
            contact_normals: (self.collision.contacts.contacts.iter())
                .map(|c| (c.particle, c.normal))
                .collect(),
            repulsions: self.scratch.system.repulsions().to_vec(),
            repulsion_distance: self
                .collision
                .self_collision
                .as_ref()
                .map_or(0.0, |s| s.distance),
            friction: if self.collision.contacts.contacts.is_empty() {
                Vec::new()
            } else {
                self.collision.contacts.friction_terms(&self.state.v)
            },
            friction_sources: if self.collision.contacts.contacts.is_empty() {
                Vec::new()
            } else {
                self.collision.contacts.friction_sources()
            },
            contact_velocities: (self.collision.contacts.contacts.iter())
                .map(|c| c.body_velocity)
                .collect(),
        }
    }

    /// Solves the step's linear system of step `h` into `dv`: by the preview's Jacobi
    /// sweeps under [`IntegratorState::Preview`], else by PCG with Baraff's Jacobians
    /// ([`JacobianMode::System`]); if the PCG meets non-positive curvature there (an
    /// indefinite system under large shear or folds), it is rebuilt with the positive
    /// definite [`JacobianMode::Definite`] ones and solved again.
    pub(super) fn solve_step(&mut self, h: f64, stats: &mut FrameStats) -> PcgResult {
        if let IntegratorState::Preview(preview) = &self.integrator {
            let iterations = preview.iterations;
            return self.solve_preview(h, iterations);
        }
        // A replayed schedule (keyframe control) solves with the definite Jacobians from
        // the start: the fallback below is a switch that would make the trajectory jump
        // under small changes of the control forces.
        let first = if self.run.replaying() {
            JacobianMode::Definite
        } else {
            JacobianMode::System
        };
        let mut result = self.solve(h, first);
        stats.cg_iterations += result.iterations;
        if first == JacobianMode::System
            && !result.converged
            && result.iterations < self.params.cg_max_iterations
        {
            stats.definite_fallbacks += 1;
            result = self.solve(h, JacobianMode::Definite);
            stats.cg_iterations += result.iterations;
        }
        result
    }

    /// Assembles the step's system with Jacobians of `mode` and solves it into `dv`.
    fn solve(&mut self, h: f64, mode: JacobianMode) -> PcgResult {
        // Recorded and replayed runs (keyframe control) solve tightly, since their
        // objective must be a smooth function of the control forces and a loose solve's
        // stopping point moves in jumps with them; and they keep the preconditioner
        // chosen at the start, since the adjoint reuses the forward solves' preconditioner
        // and a switch driven by iteration counts would move with the control forces.
        let controlled = self.run.is_controlled();
        (self.scratch.pcg).adapt_auto(!controlled);
        // A new pattern (the self-contact springs changed) needs the preconditioner's slot
        // maps and the deflation's aggregates rebuilt, serial work that otherwise starts
        // the solve: it runs beside the assembly instead.
        let pattern = self.scratch.system.matrix.pattern.clone();
        let (kind, deflation) = (self.params.preconditioner, self.params.deflates(pattern.n));
        if self.scratch.pcg.needs_prepare(&pattern, kind, deflation) {
            let mut pcg = std::mem::take(&mut self.scratch.pcg);
            crate::parallel::join(
                || self.assemble_step(h, mode),
                || pcg.prepare(&pattern, kind, deflation),
            );
            self.scratch.pcg = pcg;
        } else {
            self.assemble_step(h, mode);
        }
        let tolerance = self.params.tolerance(self.scratch.system.matrix.n());
        let settings = PcgSettings {
            tolerance: if controlled {
                tolerance.min(CONTROL_CG_TOLERANCE)
            } else {
                tolerance
            },
            max_iterations: self.params.cg_max_iterations,
            warm_start: self.params.cg_warm_start,
            deflation,
        };
        modified_pcg_with(
            &self.scratch.system.matrix,
            &self.scratch.system.rhs,
            &self.scratch.constraints,
            &settings,
            self.params.preconditioner,
            &mut self.scratch.pcg,
            &mut self.scratch.dv,
        )
    }

    /// Assembles the step's system (eq. 18) with Jacobians of `mode`, sliding friction and
    /// applied forces; under BDF2 with its position history in `y` and its momentum term
    /// on the right ([`integrators::bdf2`]).
    pub(super) fn assemble_step(&mut self, h: f64, mode: JacobianMode) {
        self.scratch.mode = mode;
        let bdf2 = self.integrator.bdf2_terms();
        let y = bdf2.map_or(&self.scratch.y, |t| &t.y_total);
        self.scratch.system.assemble(
            &self.model,
            &self.state.x,
            &self.state.v,
            y,
            h,
            self.params.gravity,
            self.params.wind,
            mode,
        );
        if let Some(t) = bdf2 {
            for (b, m) in self.scratch.system.rhs.iter_mut().zip(&t.momentum) {
                *b += m;
            }
        }
        if !self.collision.contacts.contacts.is_empty() {
            let friction = self.collision.contacts.friction_terms(&self.state.v);
            self.scratch.system.add_particle_terms(&friction, h);
        }
        if let Some(f) = &self.drive.applied {
            self.scratch
                .system
                .rhs
                .par_iter_mut()
                .zip(f.par_iter())
                .for_each(|(b, f)| *b += h * f);
        }
    }
}
