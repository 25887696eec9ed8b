//! One implicit step and the frame loop (Baraff §3, §5, §6.2, §7).
//!
//! A step (`Simulator::step_linearised` in `stages.rs`) reads like the algorithm:
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
//! [`SolverParams::model`] the force model (continuum or mass-spring).
//!
//! Where the parts live: the frame loop in `frame.rs`, the step and its stages in
//! `stages.rs`, assembly and solve in `solve.rs`, the checks that accept or reject a
//! proposed step in `accept.rs`, the run modes of keyframe control in `run_mode.rs`.
mod accept;
pub mod assemble;
mod frame;
pub mod integrators;
pub mod params;
pub mod pins;
pub mod record;
mod run_mode;
pub mod schedule;
mod snapshot;
mod solve;
mod stages;
pub mod step_control;
mod stretch_check;
pub mod stretch_limit;
pub mod trouble;
pub mod workers;

pub use params::{ForceModel, Integrator, SolverParams, CONTROL_CG_TOLERANCE};
pub use record::StepRecord;
pub use schedule::StepSchedule;

use crate::collision::contact::Contact;
use crate::collision::overlap::Overlaps;
use crate::collision::self_contact::SelfCollision;
use crate::collision::untangle::Untangle;
use crate::collision::{BodyContacts, BodyState};
use crate::error::Result;
use crate::forces::JacobianMode;
use crate::linalg::pcg::{Constraint, PcgScratch};
use crate::model::ClothModel;
use crate::scene::{Animation, Body, Material};
use crate::stop::Stop;
use crate::Vec3;
use assemble::System;
use integrators::IntegratorState;
use pins::Pins;
use run_mode::RunMode;
use std::sync::Arc;
use step_control::StepControl;
use stretch_check::stretch_measures;
use stretch_limit::StretchLimit;

/// Solver figures of one frame (docs/reference.md: `--report`, progress events).
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
    /// not avoid it. 0 in normal runs.
    pub self_crossings: usize,
    /// Particles let through a body that kept catching them even at the minimum step
    /// (cloth pinched between two parts of a character), then eased out of it as cloth
    /// that starts inside is ([`crate::collision::overlap`]). 0 in normal runs.
    pub let_through: usize,
}

/// The state of one garment's simulation and the buffers reused by every step.
#[derive(Debug, Clone)]
pub struct Simulator {
    /// The cloth: mesh, rest state, masses.
    model: ClothModel,
    /// The solver's settings, fixed at construction.
    params: SolverParams,
    /// Where the cloth is and how it moves.
    state: State,
    /// What moves the cloth from outside besides the bodies.
    drive: Drive,
    /// The bodies and the contacts with them and with the cloth itself.
    collision: Collision,
    /// Buffers every step refills.
    scratch: Scratch,
    /// The adaptive step size (Baraff §7).
    step_control: StepControl,
    /// The integrator, with its knobs and what it keeps between steps.
    integrator: IntegratorState,
    /// A plain simulation or one of the runs of keyframe control ([`run_mode`]).
    run: RunMode,
    /// Figures of the last steps, reported in [`FrameStats`] or read by step control.
    diagnostics: Diagnostics,
    /// A request to stop, polled before each step attempt, between a step's stages and in
    /// the PCG ([`crate::stop`]); never raised unless [`Simulator::set_stop`] shares one.
    stop: Stop,
}

/// The cloth's state.
#[derive(Debug, Clone)]
struct State {
    /// Particle positions (world space, m).
    x: Vec<Vec3>,
    /// Particle velocities (m/s).
    v: Vec<Vec3>,
    /// Simulated time since the start (s).
    time: f64,
    /// Each particle's acceleration over the last accepted step, `(v₁ − v₀)/h` (gravity
    /// before the first): whether it would carry a particle into a body decides a new
    /// contact ([`BodyContacts::detect`]).
    accel: Vec<Vec3>,
    /// `(‖w_u‖, ‖w_v‖)` of every triangle at `x`, when the step that ended there measured
    /// them (its stretch check): the next step's start. Set wherever `x` changes
    /// (`Simulator::check_and_commit`).
    stretch_at_x: Option<Vec<[f64; 2]>>,
}

/// What moves the cloth from outside besides the bodies.
#[derive(Debug, Clone)]
struct Drive {
    /// Pinned particles and their targets.
    pins: Pins,
    /// Whether each particle is pinned.
    pinned: Vec<bool>,
    /// Frame number at time 0 and frames per second, to sample body and pin animations.
    clock: (f64, f64),
    /// Applied external forces (N) per particle, constant over the steps until changed
    /// (keyframe control forces, Stuyck §8.4); `None` when there are none.
    applied: Option<Vec<Vec3>>,
}

/// The collision bodies and what contacts keep between steps.
#[derive(Debug, Clone)]
struct Collision {
    /// The bodies, sampled at the current step.
    bodies: Vec<BodyState>,
    /// The frame numbers the bodies were last sampled at (a step's start and end).
    sampled: (f64, f64),
    /// Body contacts of the last step (Baraff §5, §6.2).
    contacts: BodyContacts,
    /// Contact forces (N·s over the step) of the body contacts of the last step, in their
    /// order (§5.4).
    impulses: Vec<Vec3>,
    /// Sorted particles of pairs that passed through each other in rejected attempts of
    /// this frame and that their body contact pulled down: from then on their contacts
    /// only push out (see `Simulator::check_and_commit`). Cleared at each frame's start.
    held: Vec<usize>,
    /// Cloth self-collision (Baraff §6), when on.
    self_collision: Option<SelfCollision>,
    /// The crossings of cloth that started crossing itself, while some are left
    /// ([`crate::collision::untangle`]).
    untangle: Option<Untangle>,
}

/// Buffers every step refills.
#[derive(Debug, Clone)]
struct Scratch {
    /// The filter constraints of the step: pins first, then one per body contact.
    constraints: Vec<Constraint>,
    /// The linear system of eq. 18: pattern, plan, matrix and right side.
    system: System,
    /// The PCG's vectors and preconditioner.
    pcg: PcgScratch,
    /// The step's solution `Δv` (m/s).
    dv: Vec<Vec3>,
    /// The step's position alteration `y` (m, §6.2).
    y: Vec<Vec3>,
    /// Jacobians the last solve used.
    mode: JacobianMode,
    /// The limit on the stretch a step adds, with its scratch.
    stretch_limit: StretchLimit,
}

/// Figures of the last steps.
#[derive(Debug, Clone, Default)]
struct Diagnostics {
    /// Seconds of cloth–solid and cloth–cloth collision work not yet reported.
    collision_time: [f64; 2],
    /// The largest stretch jump of the last accepted step as a fraction of
    /// `max_stretch_change` (0 where the check is off): the step grows only after calm steps
    /// ([`StepControl::accept`]).
    last_jump: f64,
    /// Where the last rejected step of this frame failed ([`trouble`]).
    trouble: Option<trouble::Trouble>,
    /// The particle deepest inside a body, and that body, of the last step rejected for
    /// contact: the one let through if the rejections reach the minimum step.
    stuck: Option<(usize, usize)>,
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
    /// A stop was requested ([`crate::stop`]): the frame is abandoned, not retried.
    Stopped,
}

impl Simulator {
    /// A simulator at rest in the model's initial positions. `pin[i] ≥ 0.5` pins particle i.
    pub fn new(model: ClothModel, material: &Material, pin: &[f64], params: SolverParams) -> Self {
        let n = model.len();
        let pins = Pins::new(pin, &model.positions);
        let pinned = pins.mask(n);
        let mut system = System::with_force_model(&model, material, params.model);
        system.set_lift(params.lift);
        let integrator = IntegratorState::new(&model, material, &params);
        let step_control = StepControl::new(
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
            state: State {
                x,
                v: vec![Vec3::zeros(); n],
                time: 0.0,
                accel: vec![gravity; n],
                stretch_at_x: None,
            },
            drive: Drive {
                pins,
                pinned,
                clock: (0.0, 24.0),
                applied: None,
            },
            collision: Collision {
                bodies: Vec::new(),
                sampled: (0.0, 0.0),
                contacts: BodyContacts::default(),
                impulses: Vec::new(),
                held: Vec::new(),
                untangle: self_collision
                    .is_some()
                    .then(|| Untangle::find(&model.positions, &model.triangles))
                    .filter(|u| !u.is_done()),
                self_collision,
            },
            scratch: Scratch {
                constraints: Vec::new(),
                system,
                pcg: PcgScratch::default(),
                dv: vec![Vec3::zeros(); n],
                y: vec![Vec3::zeros(); n],
                mode: JacobianMode::System,
                stretch_limit: StretchLimit::default(),
            },
            step_control,
            integrator,
            run: RunMode::Plain,
            diagnostics: Diagnostics::default(),
            stop: Stop::new(),
            model,
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
        self.collision.bodies = bodies
            .iter()
            .map(|b| BodyState::new(b, material.thickness, material.friction))
            .collect::<Result<_>>()?;
        self.drive.clock = (start_frame, fps);
        for b in &mut self.collision.bodies {
            b.advance_to(start_frame, start_frame);
        }
        self.collision.sampled = (start_frame, start_frame);
        self.drive.pins.attach_to_bodies(&self.collision.bodies);
        self.collision.contacts.overlaps =
            Overlaps::find(&self.collision.bodies, &self.state.x, &self.drive.pinned);
        Ok(self)
    }

    /// Makes pinned particles follow the garment's own animation (world-space particle
    /// positions keyed by frame), sampled at frame `start_frame + t · fps` (docs/reference.md, "Inputs").
    pub fn with_pin_animation(mut self, animation: Animation, start_frame: f64, fps: f64) -> Self {
        self.drive.pins.follow_animation(animation);
        self.drive.clock = (start_frame, fps);
        self
    }

    /// Warnings about the initial state: particles that start inside a body (let through
    /// it and eased out, [`crate::collision::overlap`]; one warning per body, naming it,
    /// the depth and the body vertex nearest the deepest particle), UV panels that `--rest
    /// auto` replaced by the modelled shape ([`ClothModel::rest_warning`]), and under
    /// `--rest uv` a 3D shape far (over 25% stretch) from the rest panels.
    pub fn initial_warnings(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        for found in self.collision.contacts.overlaps.at_start() {
            let body = &self.collision.bodies[found.body];
            warnings.push(format!(
                "{} particles of the garment start inside body '{}' (up to {:.1} mm deep, near its vertex {}); they are let through that body and eased out of it at up to {} m/s — for a clean start, move the garment clear of the body or pose the body away from it at the first frame",
                found.particles.len(),
                body.name,
                1e3 * found.depth,
                found.near_vertex,
                crate::collision::overlap::EASE_SPEED,
            ));
        }
        let depth = self.max_penetration();
        if depth > 0.1 {
            warnings.push(format!(
                "the garment starts inside a body (up to {depth:.1}× the thickness deep); it is pushed out over the first steps — move it clear of the body for a clean start"
            ));
        }
        warnings.extend(self.pin_spread_warning());
        warnings.extend(self.model.rest_warning());
        if let Some(u) = &self.collision.untangle {
            warnings.push(format!(
                "the garment crosses itself at the first frame ({} edges pass through its triangles); the smaller piece cut off by the crossing ({} particles) is brought back through the cloth over the first steps — for a clean start, separate the layers in the modelling tool",
                u.at_start(),
                u.wrong().len()
            ));
        }
        let strain = match self.model.rest_mode {
            crate::model::Rest::Uv => self.max_strain(),
            _ => 0.0,
        };
        if strain > 0.25 {
            warnings.push(format!(
                "the garment's shape differs from its UV panels by up to {:.0}% stretch; it will snap toward them in the first frames — check the UV layout or --uv-scale, or give --rest auto to rest on the modelled shape where the panels do not match it",
                100.0 * strain
            ));
        }
        warnings
    }

    /// Shares `stop` with this simulator (and its clones): once it is requested,
    /// [`Simulator::advance`] ends within one stage of one step with
    /// [`Error::Interrupted`](crate::Error::Interrupted) and the frame is abandoned (the
    /// state is then that of an unfinished frame: not to be written or continued).
    pub fn set_stop(&mut self, stop: Stop) {
        self.scratch.pcg.set_stop(stop.clone());
        self.stop = stop;
    }

    /// The stop request this simulator polls.
    pub fn stop(&self) -> &Stop {
        &self.stop
    }

    /// Sets external forces `f` (N, one per particle) applied at every following step,
    /// explicitly (no Jacobian; Stuyck eq. 8.12), until changed; `None` removes them.
    /// They enter the right side of eq. 18 as `h f`, so the filter keeps them out of the
    /// constrained directions of pinned and contact particles.
    pub fn set_applied_forces(&mut self, f: Option<Vec<Vec3>>) {
        debug_assert!(f.as_ref().is_none_or(|f| f.len() == self.state.x.len()));
        self.drive.applied = f;
    }

    /// Starts (or stops, dropping what was kept) recording a [`StepRecord`] of every
    /// accepted step for the adjoint pass of keyframe control; a replayed schedule goes on.
    pub fn record_steps(&mut self, on: bool) {
        self.run.record_steps(on);
    }

    /// The steps recorded since the last call (empty when not recording).
    pub fn take_records(&mut self) -> Vec<StepRecord> {
        self.run.take_records()
    }

    /// Starts (or stops) logging the accepted step sizes of every following frame, the
    /// planning run of keyframe control; starting ends any replay or recording.
    pub fn log_steps(&mut self, on: bool) {
        self.run.log_steps(on);
    }

    /// The step sizes logged since [`Simulator::log_steps`] (empty when not logging).
    pub fn take_step_log(&mut self) -> StepSchedule {
        self.run.take_step_log()
    }

    /// Replays `schedule` from the next frame on instead of choosing steps adaptively
    /// (see [`schedule`]); `None` returns to adaptive steps. A recording goes on; a log of
    /// step sizes ends.
    pub fn follow_schedule(&mut self, schedule: Option<Arc<StepSchedule>>) {
        self.run.follow_schedule(schedule);
    }

    /// Where the pinned particles must be now (particle, target in m): their targets at
    /// the current time, which every integrator meets at the end of each step.
    pub fn pin_targets(&self) -> Vec<(usize, Vec3)> {
        let (start, fps) = self.drive.clock;
        self.drive.pins.targets(
            &self.state.x,
            start + self.state.time * fps,
            &self.collision.bodies,
        )
    }

    /// Sparse Cholesky factorisations the [`Integrator::Projective`] integrator computed so
    /// far (one per topology and step size); 0 for the other integrators.
    pub fn factorizations(&self) -> usize {
        self.integrator.factorizations()
    }

    /// The solver parameters.
    pub fn params(&self) -> &SolverParams {
        &self.params
    }

    /// A fresh copy of this simulator's system (pattern, plan, coefficients) for rebuilding
    /// recorded steps ([`StepRecord::rebuild`]).
    pub fn system(&self) -> System {
        self.scratch.system.clone()
    }

    /// Contacts of the last step.
    pub fn contacts(&self) -> &[Contact] {
        &self.collision.contacts.contacts
    }

    /// Deepest penetration of any free particle below a body surface now, as a fraction of
    /// the body's thickness (0 if none).
    pub fn max_penetration(&self) -> f64 {
        let overlaps = &self.collision.contacts.overlaps;
        BodyContacts::max_penetration(&self.collision.bodies, &self.state.x, overlaps, |i| {
            !self.drive.pinned[i]
        })
    }

    /// How many particles that started inside a body are still inside it
    /// ([`crate::collision::overlap`]).
    pub fn particles_inside_bodies(&self) -> usize {
        self.collision.contacts.overlaps.len()
    }

    /// Current particle positions (world space, m).
    pub fn positions(&self) -> &[Vec3] {
        &self.state.x
    }

    /// Current particle velocities (m/s).
    pub fn velocities(&self) -> &[Vec3] {
        &self.state.v
    }

    /// The cloth model being simulated.
    pub fn model(&self) -> &ClothModel {
        &self.model
    }

    /// Simulated time since the start (s).
    pub fn time(&self) -> f64 {
        self.state.time
    }

    /// Kinetic energy ½ Σ m v² (J).
    pub fn kinetic_energy(&self) -> f64 {
        self.state
            .v
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
        match &self.state.stretch_at_x {
            Some(s) => s.into(),
            None => stretch_measures(&self.model.triangles, &self.model.rest, &self.state.x).into(),
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
