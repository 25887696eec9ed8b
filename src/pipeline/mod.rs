//! One implicit step and the frame loop (Baraff §3, §5, §6.2, §7).
//!
//! `Simulator::step` reads like the algorithm:
//!
//! ```text
//! sample bodies        body positions at the step's start and end frames
//! constrain pins       S_i = 0, z_i = (p(t + h) − x₀)/h − v₀ᵢ: pins reach their targets
//!                      exactly (fixed, following the garment's animation or a body)
//! detect contacts      body contacts → constraints (S, z) and position alteration y
//!                      (§5, §6.2, collision::contact); self-contacts → repulsion springs
//!                      and y for pairs already crossing (§6, collision::self_contact)
//! assemble             (M − h ∂f/∂v − h² ∂f/∂x) Δv = h (f₀ + ∂f/∂x (h v₀ + y))    eq. 18
//! solve                modified PCG with the filter (§5.3)
//! advance              v₁ = v₀ + Δv,  x₁ = x₀ + h v₁ + y                          eq. 17
//! check                reject if any triangle's ‖w_u‖ or ‖w_v‖ changed from x₀ + y by
//!                      more than `max_stretch_change`, a particle ends inside a body or
//!                      passes through the cloth, or the solve failed; retry at h/2   §7
//! remember             contact forces (§5.4) decide release and friction next step
//! ```
//! [`Simulator::advance`] steps until the end of a frame, never stepping past it.
//!
//! That is the default [`Integrator::Implicit`]; [`SolverParams::integrator`] picks another
//! ([`integrators`]: BDF2, Kang & Cho's preview, projective dynamics, explicit), and
//! [`SolverParams::model`] the force model (continuum or mass-spring). The shared stages
//! live in `stages.rs`.
pub mod assemble;
pub mod integrators;
pub mod params;
pub mod pins;
pub mod record;
pub mod schedule;
mod stages;
pub mod step_control;
mod stretch_check;
pub mod stretch_limit;
pub mod workers;

pub use params::{ForceModel, Integrator, SolverParams, CONTROL_CG_TOLERANCE};
pub use record::StepRecord;
pub use schedule::StepSchedule;

use crate::collision::contact::Contact;
use crate::collision::self_contact::SelfCollision;
use crate::collision::{BodyContacts, BodyState};
use crate::error::{Error, Result};
use crate::forces::JacobianMode;
use crate::linalg::pcg::{modified_pcg_with, Constraint, PcgResult, PcgScratch, PcgSettings};
use crate::model::ClothModel;
use crate::scene::{Animation, Body, Material};
use crate::Vec3;
use assemble::System;
use pins::Pins;
use rayon::prelude::*;
use schedule::Replay;
use std::sync::Arc;
use step_control::StepControl;
use stretch_check::stretch_measures;

/// Solver figures of one frame (SPEC `--report`, progress events).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FrameStats {
    /// Accepted steps.
    pub steps: usize,
    /// Rejected (retried) steps.
    pub rejections: usize,
    /// PCG iterations summed over all solves, rejected ones included.
    pub cg_iterations: usize,
    /// Largest relative PCG residual of an accepted step.
    pub max_residual: f64,
    /// Smallest step taken (s).
    pub min_step: f64,
    /// Solves that met non-positive curvature with the [`JacobianMode::System`] Jacobians
    /// and were redone with the positive definite [`JacobianMode::Definite`] ones.
    pub definite_fallbacks: usize,
    /// Largest stretch strain max |‖w‖ − 1| over all triangles at the end of the frame.
    pub max_strain: f64,
    /// Body contacts at the last step of the frame.
    pub contacts: usize,
    /// Most cloth self-contact springs in one step of the frame.
    pub self_contacts: usize,
    /// Wall-clock seconds spent detecting cloth–body contacts and checking penetration
    /// (Baraff table 1's "C/S" share), rejected steps included.
    pub cloth_solid_seconds: f64,
    /// Wall-clock seconds spent detecting cloth self-contacts and checking crossings
    /// (Baraff table 1's "C/C" share), rejected steps included.
    pub cloth_cloth_seconds: f64,
    /// Steps accepted although the cloth passed through itself (a particle through a
    /// triangle or an edge through an edge), because even steps of `max_step / 256` could
    /// not avoid it. 0 in normal runs (tests/self_collision.rs asserts it on piles of cloth
    /// under several solver settings).
    pub self_crossings: usize,
}

/// The state of one garment's simulation and the buffers reused by every step.
#[derive(Debug, Clone)]
pub struct Simulator {
    model: ClothModel,
    params: SolverParams,
    x: Vec<Vec3>,
    v: Vec<Vec3>,
    pinned: Vec<bool>,
    pins: Pins,
    constraints: Vec<Constraint>,
    system: System,
    control: StepControl,
    pcg: PcgScratch,
    dv: Vec<Vec3>,
    y: Vec<Vec3>,
    time: f64,
    bodies: Vec<BodyState>,
    contacts: BodyContacts,
    impulses: Vec<Vec3>,
    /// Each particle's acceleration over the last accepted step, `(v₁ − v₀)/h` (gravity
    /// before the first): whether it would carry a particle into a body decides a new
    /// contact ([`BodyContacts::detect`]).
    accel: Vec<Vec3>,
    self_collision: Option<SelfCollision>,
    /// Seconds of cloth–solid and cloth–cloth collision work not yet reported.
    collision_time: [f64; 2],
    /// Sorted particles of pairs that passed through each other in rejected attempts of
    /// this frame and that their body contact pulled down: from then on their contacts
    /// only push out (see `Simulator::check_and_commit`). Cleared at each frame's start.
    held: Vec<usize>,
    /// The largest stretch jump of the last accepted step as a fraction of
    /// `max_stretch_change` (0 where the check is off): the step grows only after calm steps
    /// ([`StepControl::accept`]).
    last_jump: f64,
    /// The limit on the stretch a step adds, with its scratch.
    stretch_limit: stretch_limit::StretchLimit,
    /// `(‖w_u‖, ‖w_v‖)` of every triangle at `x`, when the step that ended there measured
    /// them (its stretch check): the next step's start. Set wherever `x` changes
    /// (`Simulator::check_and_commit`).
    stretch_at_x: Option<Vec<[f64; 2]>>,
    /// Frame number at time 0 and frames per second, to sample body animations.
    clock: (f64, f64),
    /// Applied external forces (N) per particle, constant over the steps until changed
    /// (keyframe control forces, Stuyck §8.4); `None` when there are none.
    applied: Option<Vec<Vec3>>,
    /// Accepted steps recorded for the adjoint pass, when recording.
    tape: Option<Vec<StepRecord>>,
    /// Jacobians the last solve used.
    mode: JacobianMode,
    /// What the integrators other than [`Integrator::Implicit`] keep between steps.
    integ: integrators::IntegratorState,
    /// Step sizes to replay instead of choosing them adaptively ([`schedule`]).
    replay: Option<Replay>,
    /// Whether the current frame replays its steps (no stretch-jump rejection).
    replaying: bool,
    /// Accepted step sizes logged frame by frame, when logging.
    step_log: Option<StepSchedule>,
}

/// Why a proposed step was not accepted.
enum Rejection {
    /// The solve broke down or hit its iteration cap.
    Solve,
    /// A triangle's stretch jumped (Baraff §7) or the state became non-finite.
    Stretch,
    /// A particle ended deeper inside a body than 10% of its thickness.
    Contact,
    /// A particle passed through the cloth.
    SelfCrossing,
}

impl Simulator {
    /// A simulator at rest in the model's initial positions. `pin[i] ≥ 0.5` pins particle i.
    pub fn new(model: ClothModel, material: &Material, pin: &[f64], params: SolverParams) -> Self {
        let n = model.len();
        let pins = Pins::new(pin, &model.positions);
        let pinned = pins.mask(n);
        let mut system = System::with_force_model(&model, material, params.model);
        system.set_lift(params.lift);
        let integ = integrators::IntegratorState::new(&model, material, &params);
        let control = StepControl::new(
            params.max_step,
            params.min_step,
            params.grow_wait,
            params.max_grow_wait,
        );
        let x = model.positions.clone();
        let gravity = params.gravity;
        let self_collision = params.self_collision.then(|| {
            let mean_edge = mean_rest_edge(&model);
            SelfCollision::new(&model, material.thickness.min(0.25 * mean_edge))
        });
        Simulator {
            params,
            x,
            v: vec![Vec3::zeros(); n],
            pinned,
            pins,
            constraints: Vec::new(),
            system,
            control,
            pcg: PcgScratch::default(),
            dv: vec![Vec3::zeros(); n],
            y: vec![Vec3::zeros(); n],
            time: 0.0,
            model,
            bodies: Vec::new(),
            contacts: BodyContacts::default(),
            impulses: Vec::new(),
            accel: vec![gravity; n],
            self_collision,
            collision_time: [0.0; 2],
            held: Vec::new(),
            last_jump: 0.0,
            stretch_limit: Default::default(),
            stretch_at_x: None,
            clock: (0.0, 24.0),
            applied: None,
            tape: None,
            mode: JacobianMode::System,
            integ,
            replay: None,
            replaying: false,
            step_log: None,
        }
    }

    /// Adds collision bodies (Baraff §5–§6), sampled at frame `start_frame + t · fps` at
    /// simulation time `t`; thickness and friction default to the material's.
    pub fn with_bodies(
        mut self,
        bodies: &[Body],
        material: &Material,
        start_frame: f64,
        fps: f64,
    ) -> Result<Self> {
        self.bodies = bodies
            .iter()
            .map(|b| BodyState::new(b, material.thickness, material.friction))
            .collect::<Result<_>>()?;
        self.clock = (start_frame, fps);
        for b in &mut self.bodies {
            b.advance_to(start_frame, start_frame);
        }
        self.pins.attach_to_bodies(&self.bodies);
        Ok(self)
    }

    /// Makes pinned particles follow the garment's own animation (world-space particle
    /// positions keyed by frame), sampled at frame `start_frame + t · fps` (SPEC "Pins").
    pub fn with_pin_animation(mut self, animation: Animation, start_frame: f64, fps: f64) -> Self {
        self.pins.follow_animation(animation);
        self.clock = (start_frame, fps);
        self
    }

    /// Warnings about the initial state: particles that start inside a body (they are
    /// pushed out over the first steps when less than 5 cm deep), and a 3D shape far
    /// (over 25% stretch) from the rest panels.
    pub fn initial_warnings(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        let depth = self.max_penetration();
        if depth > 0.1 {
            warnings.push(format!(
                "the garment starts inside a body (up to {depth:.1}× the thickness deep); it is pushed out over the first steps — move it clear of the body for a clean start"
            ));
        }
        let strain = self.max_strain();
        if strain > 0.25 {
            warnings.push(format!(
                "the garment's shape differs from its UV panels by up to {:.0}% stretch; it will snap toward them in the first frames — check the UV layout or --uv-scale",
                100.0 * strain
            ));
        }
        warnings
    }

    /// Sets external forces `f` (N, one per particle) applied at every following step,
    /// explicitly (no Jacobian; Stuyck eq. 8.12), until changed; `None` removes them.
    /// They enter the right side of eq. 18 as `h f`, so the filter keeps them out of the
    /// constrained directions of pinned and contact particles.
    pub fn set_applied_forces(&mut self, f: Option<Vec<Vec3>>) {
        debug_assert!(f.as_ref().is_none_or(|f| f.len() == self.x.len()));
        self.applied = f;
    }

    /// Starts (or stops, dropping what was kept) recording a [`StepRecord`] of every
    /// accepted step for the adjoint pass of keyframe control.
    pub fn record_steps(&mut self, on: bool) {
        self.tape = on.then(Vec::new);
    }

    /// The steps recorded since the last call (empty when not recording).
    pub fn take_records(&mut self) -> Vec<StepRecord> {
        self.tape.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Starts (or stops) logging the accepted step sizes of every following frame.
    pub fn log_steps(&mut self, on: bool) {
        self.step_log = on.then(StepSchedule::default);
    }

    /// The step sizes logged since [`Simulator::log_steps`] (empty when not logging).
    pub fn take_step_log(&mut self) -> StepSchedule {
        self.step_log
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Replays `schedule` from the next frame on instead of choosing steps adaptively
    /// (see [`schedule`]); `None` returns to adaptive steps.
    pub fn follow_schedule(&mut self, schedule: Option<Arc<StepSchedule>>) {
        self.replay = schedule.map(Replay::new);
    }

    /// Where the pinned particles must be now (particle, target in m): their targets at
    /// the current time, which every integrator meets at the end of each step.
    pub fn pin_targets(&self) -> Vec<(usize, Vec3)> {
        let (start, fps) = self.clock;
        self.pins
            .targets(&self.x, start + self.time * fps, &self.bodies)
    }

    /// Sparse Cholesky factorisations the [`Integrator::Projective`] integrator computed so
    /// far (one per topology and step size); 0 for the other integrators.
    pub fn factorizations(&self) -> usize {
        self.integ.factorizations()
    }

    /// The solver parameters.
    pub fn params(&self) -> &SolverParams {
        &self.params
    }

    /// A fresh copy of this simulator's system (pattern, plan, coefficients) for rebuilding
    /// recorded steps ([`StepRecord::rebuild`]).
    pub fn system(&self) -> System {
        self.system.clone()
    }

    /// Contacts of the last step.
    pub fn contacts(&self) -> &[Contact] {
        &self.contacts.contacts
    }

    /// Deepest penetration of any particle below a body surface now, as a fraction of the
    /// body's thickness (0 if none).
    pub fn max_penetration(&self) -> f64 {
        BodyContacts::max_penetration(&self.bodies, &self.x)
    }

    /// Current particle positions (world space, m).
    pub fn positions(&self) -> &[Vec3] {
        &self.x
    }

    /// Current particle velocities (m/s).
    pub fn velocities(&self) -> &[Vec3] {
        &self.v
    }

    /// The cloth model being simulated.
    pub fn model(&self) -> &ClothModel {
        &self.model
    }

    /// Simulated time since the start (s).
    pub fn time(&self) -> f64 {
        self.time
    }

    /// Kinetic energy ½ Σ m v² (J).
    pub fn kinetic_energy(&self) -> f64 {
        self.v
            .iter()
            .zip(&self.model.mass)
            .map(|(v, m)| 0.5 * m * v.norm_squared())
            .sum()
    }

    /// Largest stretch strain over all triangles: max |‖w_u‖ − 1|, |‖w_v‖ − 1|.
    pub fn max_strain(&self) -> f64 {
        self.stretch_at_start()
            .iter()
            .flat_map(|s| s.iter().map(|w| (w - 1.0).abs()))
            .fold(0.0, f64::max)
    }

    /// `(‖w_u‖, ‖w_v‖)` of every triangle at `x` (kept from the last step's check, else
    /// evaluated).
    fn stretch_at_start(&self) -> std::borrow::Cow<'_, [[f64; 2]]> {
        match &self.stretch_at_x {
            Some(s) => s.into(),
            None => stretch_measures(&self.model.triangles, &self.model.rest, &self.x).into(),
        }
    }

    /// Advances by `duration` seconds (one frame), adapting the step (Baraff §7).
    /// Fails with [`Error::Simulation`] when the step would fall below the minimum.
    /// Inside a rayon pool the other workers spin for work meanwhile
    /// ([`workers::with_spinning_workers`]).
    pub fn advance(&mut self, duration: f64) -> Result<FrameStats> {
        workers::with_spinning_workers(|| self.advance_frame(duration))
    }

    /// [`Simulator::advance`] on the calling thread's pool as it is.
    fn advance_frame(&mut self, duration: f64) -> Result<FrameStats> {
        let end = self.time + duration;
        let mut stats = FrameStats {
            min_step: f64::INFINITY,
            ..FrameStats::default()
        };
        self.replaying = self.replay.as_mut().is_some_and(Replay::begin_frame);
        self.held.clear();
        if let Some(log) = &mut self.step_log {
            log.begin_frame();
        }
        // Stop when the remainder is a rounding residue of the frame length.
        while end - self.time > 1e-9 * duration.max(1e-12) {
            let h = match self.replay.as_ref().filter(|_| self.replaying) {
                Some(r) => r.next_step(end - self.time),
                None => self.control.step().min(end - self.time),
            };
            match self.step(h, &mut stats) {
                Ok(()) => {
                    match self.replay.as_mut().filter(|_| self.replaying) {
                        Some(r) => r.accepted(),
                        None => self.control.accept(self.last_jump),
                    }
                    if let Some(log) = &mut self.step_log {
                        log.log(h);
                    }
                    stats.steps += 1;
                    stats.min_step = stats.min_step.min(h);
                }
                Err(why) => {
                    stats.rejections += 1;
                    let min_step = self.params.min_step;
                    let retry = match self.replay.as_mut().filter(|_| self.replaying) {
                        Some(r) => r.rejected(h, min_step),
                        None => self.control.reject(h),
                    };
                    if !retry {
                        let reason = match why {
                            Rejection::Solve => "the linear solve did not converge",
                            Rejection::Stretch => "the cloth stretch kept jumping",
                            Rejection::Contact => "cloth kept ending up inside a body",
                            Rejection::SelfCrossing => "the cloth kept passing through itself",
                        };
                        return Err(Error::Simulation(format!(
                            "at t = {:.4} s {reason} even at the minimum step {} s; \
                             lower the material stiffness ratios or check the input for \
                             overlapping or extremely small triangles",
                            self.time, self.params.min_step
                        )));
                    }
                }
            }
        }
        self.time = end;
        stats.max_strain = self.max_strain();
        stats.contacts = self.contacts.contacts.len();
        [stats.cloth_solid_seconds, stats.cloth_cloth_seconds] =
            std::mem::take(&mut self.collision_time);
        Ok(stats)
    }

    /// What the adjoint pass needs to rebuild this step's system (called before the state
    /// advances).
    fn record(&self, h: f64) -> StepRecord {
        let pins = self.constraints.len() - self.contacts.contacts.len();
        StepRecord {
            h,
            x: self.x.clone(),
            v: self.v.clone(),
            dv: self.dv.clone(),
            y: (self.y.iter().enumerate())
                .filter(|(_, y)| **y != Vec3::zeros())
                .map(|(i, y)| (i, *y))
                .collect(),
            mode: self.mode,
            constraints: self.constraints.clone(),
            pins,
            contact_normals: (self.contacts.contacts.iter())
                .map(|c| (c.particle, c.normal))
                .collect(),
            repulsions: self.system.repulsions().to_vec(),
            repulsion_distance: self.self_collision.as_ref().map_or(0.0, |s| s.distance),
            friction: if self.contacts.contacts.is_empty() {
                Vec::new()
            } else {
                self.contacts.friction_terms(&self.v)
            },
            friction_sources: if self.contacts.contacts.is_empty() {
                Vec::new()
            } else {
                self.contacts.friction_sources()
            },
            contact_velocities: (self.contacts.contacts.iter())
                .map(|c| c.body_velocity)
                .collect(),
        }
    }

    /// Assembles the step's system with Jacobians of `mode` and solves it into `dv`.
    fn solve(&mut self, h: f64, mode: JacobianMode) -> PcgResult {
        // Recorded and replayed runs (keyframe control) solve tightly: the objective must
        // be a smooth function of the control forces, and a loose solve's stopping point
        // moves in jumps with them.
        let controlled = self.tape.is_some() || self.replay.is_some();
        // Recorded and replayed runs (keyframe control) keep the fixed choice: the
        // adjoint reuses the forward solves' preconditioner, and a switch driven by
        // iteration counts would move with the control forces.
        (self.pcg).adapt_auto(!controlled);
        // A new pattern (the self-contact springs changed) needs the preconditioner's slot
        // maps and the deflation's aggregates rebuilt, serial work that otherwise starts
        // the solve: it runs beside the assembly instead.
        let pattern = self.system.matrix.pattern.clone();
        let (kind, deflation) = (self.params.preconditioner, self.params.deflates(pattern.n));
        if self.pcg.needs_prepare(&pattern, kind, deflation) {
            let mut pcg = std::mem::take(&mut self.pcg);
            crate::parallel::join(
                || self.assemble_step(h, mode),
                || pcg.prepare(&pattern, kind, deflation),
            );
            self.pcg = pcg;
        } else {
            self.assemble_step(h, mode);
        }
        let tolerance = self.params.tolerance(self.system.matrix.n());
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
            &self.system.matrix,
            &self.system.rhs,
            &self.constraints,
            &settings,
            self.params.preconditioner,
            &mut self.pcg,
            &mut self.dv,
        )
    }

    /// Assembles the step's system (eq. 18) with Jacobians of `mode`, sliding friction and
    /// applied forces; under BDF2 with its position history in `y` and its momentum term
    /// on the right ([`integrators::bdf2`]).
    fn assemble_step(&mut self, h: f64, mode: JacobianMode) {
        self.mode = mode;
        let y = self.integ.bdf2.as_ref().map_or(&self.y, |t| &t.y_total);
        self.system.assemble(
            &self.model,
            &self.x,
            &self.v,
            y,
            h,
            self.params.gravity,
            self.params.wind,
            mode,
        );
        if let Some(t) = &self.integ.bdf2 {
            for (b, m) in self.system.rhs.iter_mut().zip(&t.momentum) {
                *b += m;
            }
        }
        if !self.contacts.contacts.is_empty() {
            let friction = self.contacts.friction_terms(&self.v);
            self.system.add_particle_terms(&friction, h);
        }
        if let Some(f) = &self.applied {
            self.system
                .rhs
                .par_iter_mut()
                .zip(f.par_iter())
                .for_each(|(b, f)| *b += h * f);
        }
    }
}

/// Mean rest length of the triangles' edges (m), from their rest UVs.
fn mean_rest_edge(model: &ClothModel) -> f64 {
    let total: f64 = model
        .rest
        .iter()
        .map(|r| {
            (0..3)
                .map(|k| (r.uv[(k + 1) % 3] - r.uv[k]).norm())
                .sum::<f64>()
        })
        .sum();
    total / (3 * model.rest.len()).max(1) as f64
}
