//! One keyframe-control problem: a garment's simulator at the first frame, its keyframes
//! and the objective; [`ControlProblem::evaluate`] gives Φ and its gradient (forward pass
//! plus adjoint sweep).
//!
//! Every evaluation replays the step sizes of one uncontrolled run, recorded when the
//! problem is set up ([`crate::pipeline::schedule`]): with adaptive steps a small change
//! of the forces can flip a step rejection and make Φ jump, which stalls the line search.
//! The controlled cache must be baked with the same schedule
//! ([`ControlProblem::controlled`]) to reproduce what the optimiser saw.
use super::adjoint::AdjointSolver;
use super::keyframes::Keyframe;
use super::lbfgs::{self, Evaluation, LbfgsSettings, StopReason};
use super::objective::{Breakdown, Objective};
use super::silhouette::SilhouetteKey;
use super::tape;
use crate::error::{Error, Result};
use crate::pipeline::{Integrator, Simulator, StepSchedule};
use crate::Vec3;
use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::Instant;

/// One finished L-BFGS iteration of [`ControlProblem::optimise`].
#[derive(Debug, Clone, PartialEq)]
pub struct IterationReport {
    /// 1-based iteration number.
    pub iteration: usize,
    /// Φ and its parts at the new control.
    pub breakdown: Breakdown,
    /// ‖∂Φ/∂θ‖.
    pub gradient_norm: f64,
    /// Evaluations (forward + adjoint passes) so far.
    pub evaluations: usize,
    /// Seconds since the optimisation started.
    pub seconds: f64,
}

/// The outcome of [`ControlProblem::optimise`].
#[derive(Debug, Clone)]
pub struct Solution {
    /// The best control found.
    pub theta: Vec<f64>,
    /// Φ without control (θ = 0).
    pub initial: Breakdown,
    /// Φ at `theta`.
    pub best: Breakdown,
    /// Iterations done.
    pub iterations: usize,
    /// Forward + adjoint evaluations done.
    pub evaluations: usize,
    /// Why the optimiser stopped.
    pub stop: StopReason,
}

/// Settings of keyframe control besides the optimiser's.
#[derive(Debug, Clone, PartialEq)]
pub struct ControlSettings {
    /// α of the objective (`--regularization`): the price of control forces against
    /// keyframe error ([`Objective`]). Default 1e-4.
    pub regularization: f64,
    /// β (s²): weight of the velocity at keyframes (targets at rest). Default 0.
    pub velocity_weight: f64,
    /// Relative tolerance of the adjoint PCG solves. Default 1e-6.
    pub adjoint_tolerance: f64,
    /// Memory the step records of one forward pass may take (bytes) before the pass
    /// switches to checkpoints ([`tape`]). Default 2 GiB.
    pub memory_budget: usize,
    /// Differentiate the step Jacobians in the adjoint pass, so that the gradient is the
    /// exact derivative of the replayed simulation ([`super::adjoint`]); false gives
    /// Wojtan's frozen-Jacobian approximation (cheaper per sweep, not a descent direction
    /// once elements rotate much). Default true.
    pub exact_adjoint: bool,
    /// When an L-BFGS run stalls, continue from its best point with the other adjoint
    /// ([`ControlProblem::optimise`]). Default true.
    pub switch_on_stall: bool,
}

impl Default for ControlSettings {
    fn default() -> Self {
        ControlSettings {
            regularization: 1e-4,
            velocity_weight: 0.0,
            adjoint_tolerance: 1e-6,
            memory_budget: 2 << 30,
            exact_adjoint: true,
            switch_on_stall: true,
        }
    }
}

/// L-BFGS settings for keyframe control with at most `max_iterations` iterations: the
/// first step is the one the linear model predicts brings Φ to zero
/// ([`LbfgsSettings::first_step_to_zero`]; the keyframe error is what is being removed),
/// and a line search gives up after 8 evaluations (each is a simulation and an adjoint
/// sweep) and takes the lowest point seen.
pub fn optimiser_settings(max_iterations: usize) -> LbfgsSettings {
    LbfgsSettings {
        max_iterations,
        max_evaluations_per_search: 8,
        first_step_to_zero: true,
        ..LbfgsSettings::default()
    }
}

/// Φ, its parts and its gradient at one control.
#[derive(Debug, Clone)]
pub struct Evaluated {
    /// Φ split into keyframe, silhouette and force terms, and the keyframe errors.
    pub breakdown: Breakdown,
    /// ∂Φ/∂θ.
    pub gradient: Vec<f64>,
    /// Forward steps and CG iterations, adjoint CG iterations.
    pub steps: usize,
    /// CG iterations of the forward pass.
    pub forward_iterations: usize,
    /// CG iterations of the adjoint pass.
    pub adjoint_iterations: usize,
}

/// A garment's control problem.
#[derive(Debug, Clone)]
pub struct ControlProblem {
    template: Simulator,
    objective: Objective,
    fps: f64,
    settings: ControlSettings,
    segment: usize,
    schedule: Arc<StepSchedule>,
}

impl ControlProblem {
    /// The problem of steering `template` (a simulator at frame `first`, bodies and pins
    /// set up) to `keys` at `fps` frames per second; the simulator must use
    /// [`Integrator::Implicit`] (a usage error otherwise), the step the adjoint differentiates.
    /// Runs the horizon once without control to record the step schedule every evaluation
    /// replays; fails with [`Error::Simulation`] if that run fails.
    pub fn new(
        template: Simulator,
        keys: &[Keyframe],
        first: i32,
        fps: f64,
        settings: ControlSettings,
    ) -> Result<Self> {
        Self::with_silhouettes(template, keys, &[], first, fps, settings)
    }

    /// [`ControlProblem::new`] with silhouette keyframes `silhouettes` besides (or instead
    /// of) the 3D keyframes `keys`.
    pub fn with_silhouettes(
        mut template: Simulator,
        keys: &[Keyframe],
        silhouettes: &[SilhouetteKey],
        first: i32,
        fps: f64,
        settings: ControlSettings,
    ) -> Result<Self> {
        if keys.is_empty() && silhouettes.is_empty() {
            return Err(Error::usage("keyframe control needs at least one keyframe"));
        }
        if template.params().integrator != Integrator::Implicit {
            return Err(Error::usage(
                "keyframe control differentiates the implicit integrator only; \
                 run `drape control` with --integrator implicit (the default)",
            ));
        }
        let model = template.model();
        let objective = Objective::new(
            keys,
            first,
            &model.mass,
            settings.regularization,
            settings.velocity_weight,
        )
        .with_silhouettes(silhouettes, first, &model.triangles);
        // Records of a frame: about 4 steps of x and v; checkpoints when they exceed the
        // budget, in segments of about √H frames at least.
        let frame_bytes = 4 * 2 * model.len() * std::mem::size_of::<Vec3>() + 4096;
        let horizon = objective.horizon();
        let fit = (settings.memory_budget / frame_bytes).max(1);
        let segment = if fit >= horizon {
            horizon
        } else {
            fit.min((horizon as f64).sqrt().ceil() as usize).max(1)
        };
        let mut uncontrolled = template.clone();
        uncontrolled.log_steps(true);
        for _ in 0..horizon {
            crate::bake::advance_frame(&mut uncontrolled, None, fps)?;
        }
        let schedule = Arc::new(uncontrolled.take_step_log());
        template.follow_schedule(Some(schedule.clone()));
        Ok(ControlProblem {
            template,
            objective,
            fps,
            settings,
            segment,
            schedule,
        })
    }

    /// Uses segments of `frames` frames between checkpoints instead of the planned ones.
    pub fn with_segment(mut self, frames: usize) -> Self {
        self.segment = frames.max(1);
        self
    }

    /// The objective.
    pub fn objective(&self) -> &Objective {
        &self.objective
    }

    /// Number of control variables θ.
    pub fn variables(&self) -> usize {
        self.objective.variables()
    }

    /// The simulator at the first frame, replaying the recorded step schedule.
    pub fn template(&self) -> &Simulator {
        &self.template
    }

    /// The step sizes every evaluation replays (those of the uncontrolled run).
    pub fn schedule(&self) -> &StepSchedule {
        &self.schedule
    }

    /// A simulator at the first frame that reproduces the optimised run: it replays the
    /// schedule; apply [`Objective::forces`] of `theta` frame by frame
    /// ([`Simulator::set_applied_forces`]). Frames after the last keyframe step adaptively.
    pub fn controlled(&self) -> Simulator {
        self.template.clone()
    }

    /// Frames per second.
    pub fn fps(&self) -> f64 {
        self.fps
    }

    /// Φ(θ) and ∂Φ/∂θ: one forward pass and one adjoint sweep. Fails with
    /// [`Error::Simulation`] when the forward simulation fails at θ.
    pub fn evaluate(&self, theta: &[f64]) -> Result<Evaluated> {
        self.evaluate_with(theta, self.settings.exact_adjoint)
    }

    /// [`ControlProblem::evaluate`] with the exact adjoint (`exact`) or Wojtan's
    /// frozen-Jacobian one.
    pub fn evaluate_with(&self, theta: &[f64], exact: bool) -> Result<Evaluated> {
        if theta.len() != self.variables() {
            return Err(Error::Internal(format!(
                "control: {} variables given, {} expected",
                theta.len(),
                self.variables()
            )));
        }
        let fwd = tape::forward(
            &self.template,
            &self.objective,
            theta,
            self.fps,
            self.segment,
        )?;
        let mut breakdown = fwd.breakdown;
        let (steps, forward_iterations) = (fwd.stats.steps, fwd.stats.cg_iterations);
        let mut solver = AdjointSolver::new(
            self.template.system(),
            self.template.params(),
            self.settings.adjoint_tolerance,
        );
        solver.exact = exact;
        let mut gradient = tape::backward(
            fwd,
            &self.template,
            &self.objective,
            theta,
            self.fps,
            &mut solver,
        )?;
        breakdown.forces = self.objective.force_term(theta, &mut gradient);
        Ok(Evaluated {
            breakdown,
            gradient,
            steps,
            forward_iterations,
            adjoint_iterations: solver.iterations,
        })
    }

    /// Minimises Φ by L-BFGS from θ = 0 (Stuyck §8.4; Nocedal & Wright Alg. 7.5).
    /// `on_iteration` sees every finished iteration and may stop the optimisation
    /// ([`ControlFlow::Break`], e.g. on an interrupt); the best control so far is returned.
    /// Points where the simulation fails count as infinitely bad (the line search backs
    /// off); other errors abort.
    ///
    /// A run that stalls (no lower point along its direction, a line search that used its
    /// whole budget, or no relative progress)
    /// continues from its best point with the other adjoint, exact or Wojtan's
    /// frozen-Jacobian one, with the memory cleared ([`ControlSettings::switch_on_stall`]):
    /// on a sensitive shot (a garment swinging with large steps) the exact gradient holds
    /// only very close to the current control, and the frozen one, a smoothed direction,
    /// can still make progress. The optimisation ends when a run after a hand-over makes
    /// no progress, when two runs in a row meet the relative tolerance, or when the
    /// iterations run out.
    pub fn optimise(
        &self,
        settings: &LbfgsSettings,
        mut on_iteration: impl FnMut(&IterationReport) -> ControlFlow<()>,
    ) -> Result<Solution> {
        let started = Instant::now();
        let exact = std::cell::Cell::new(self.settings.exact_adjoint);
        // Iterations and evaluations of the runs before the current one.
        let done = std::cell::Cell::new(0usize);
        let evaluated = std::cell::Cell::new(0usize);
        // Breakdowns of the current iteration's evaluations, to report the accepted one.
        let trials = std::cell::RefCell::new(Vec::<Breakdown>::new());
        let initial = std::cell::Cell::new(None::<Breakdown>);
        let mut evaluate = |theta: &[f64]| -> Result<Option<Evaluation>> {
            match self.evaluate_with(theta, exact.get()) {
                Ok(e) => {
                    if initial.get().is_none() {
                        initial.set(Some(e.breakdown));
                    }
                    trials.borrow_mut().push(e.breakdown);
                    Ok(Some(Evaluation {
                        value: e.breakdown.total(),
                        gradient: e.gradient,
                    }))
                }
                Err(Error::Simulation(_)) => Ok(None),
                Err(e) => Err(e),
            }
        };
        let mut best = None;
        let mut report = |info: &lbfgs::IterationInfo, _: &[f64]| {
            let mut t = trials.borrow_mut();
            let breakdown = (t.iter().rev())
                .find(|b| b.total() == info.value)
                .copied()
                .unwrap_or_default();
            t.clear();
            best = Some(breakdown);
            on_iteration(&IterationReport {
                iteration: done.get() + info.iteration,
                breakdown,
                gradient_norm: info.gradient_norm,
                evaluations: evaluated.get() + info.evaluations,
                seconds: started.elapsed().as_secs_f64(),
            })
        };
        let (mut x, mut switched) = (vec![0.0; self.variables()], false);
        let mut previous_converged = false;
        let stop = loop {
            let remaining = LbfgsSettings {
                max_iterations: settings.max_iterations - done.get(),
                stop_on_exhausted_search: settings.stop_on_exhausted_search
                    || self.settings.switch_on_stall,
                ..*settings
            };
            let m = lbfgs::minimize(x, &remaining, &mut evaluate, &mut report)?;
            x = m.x;
            evaluated.set(evaluated.get() + m.evaluations);
            done.set(done.get() + m.iterations);
            // Two runs in a row converged by the relative change, or one that made no
            // progress after a hand-over: both gradients are done here.
            let stalled = matches!(
                m.stop,
                StopReason::LineSearch | StopReason::ObjectiveChange | StopReason::ExhaustedSearch
            );
            let converged = m.stop == StopReason::ObjectiveChange;
            let both_stalled = switched && (m.iterations == 0 || (converged && previous_converged));
            previous_converged = converged;
            if !stalled || both_stalled || !self.settings.switch_on_stall || !m.value.is_finite() {
                break m.stop;
            }
            if done.get() >= settings.max_iterations {
                break StopReason::Iterations;
            }
            exact.set(!exact.get());
            switched = true;
        };
        let initial = initial.get().ok_or_else(|| {
            Error::Simulation("the uncontrolled simulation failed; simulate it first".into())
        })?;
        Ok(Solution {
            best: best.unwrap_or(initial),
            initial,
            theta: x,
            iterations: done.get(),
            evaluations: evaluated.get(),
            stop,
        })
    }
}
