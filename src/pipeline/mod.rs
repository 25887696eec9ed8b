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
pub mod assemble;
pub mod params;
pub mod pins;
pub mod record;
pub mod step_control;

pub use params::SolverParams;
pub use record::StepRecord;

use crate::collision::contact::Contact;
use crate::collision::self_contact::SelfCollision;
use crate::collision::{BodyContacts, BodyState};
use crate::error::{Error, Result};
use crate::forces::deformation::Deformation;
use crate::forces::JacobianMode;
use crate::linalg::pcg::constraint_forces;
use crate::linalg::pcg::{modified_pcg, Constraint, PcgResult, PcgScratch, PcgSettings};
use crate::model::{ClothModel, TriangleRest};
use crate::scene::{Animation, Body, Material};
use crate::Vec3;
use assemble::System;
use pins::Pins;
use rayon::prelude::*;
use std::time::Instant;
use step_control::StepControl;

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
    /// Steps accepted although a particle passed through the cloth, because even steps of
    /// `max_step / 256` could not avoid it (cloth pressed into itself against a body, where
    /// the body constraint holds both layers in one plane). 0 in normal runs.
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
    stretch_before: Vec<[f64; 2]>,
    time: f64,
    bodies: Vec<BodyState>,
    contacts: BodyContacts,
    impulses: Vec<Vec3>,
    self_collision: Option<SelfCollision>,
    /// Seconds of cloth–solid and cloth–cloth collision work not yet reported.
    collision_time: [f64; 2],
    /// Frame number at time 0 and frames per second, to sample body animations.
    clock: (f64, f64),
    /// Applied external forces (N) per particle, constant over the steps until changed
    /// (keyframe control forces, Stuyck §8.4); `None` when there are none.
    applied: Option<Vec<Vec3>>,
    /// Accepted steps recorded for the adjoint pass, when recording.
    tape: Option<Vec<StepRecord>>,
    /// Jacobians the last solve used.
    mode: JacobianMode,
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
        let system = System::new(&model, material);
        let control = StepControl::new(
            params.max_step,
            params.min_step,
            params.grow_wait,
            params.max_grow_wait,
        );
        let x = model.positions.clone();
        let self_collision = params.self_collision.then(|| {
            let mean_edge = mean_rest_edge(&model);
            SelfCollision::new(&model, material.thickness.min(0.25 * mean_edge))
        });
        let stretch_before = vec![[0.0; 2]; model.triangles.len()];
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
            stretch_before,
            time: 0.0,
            model,
            bodies: Vec::new(),
            contacts: BodyContacts::default(),
            impulses: Vec::new(),
            self_collision,
            collision_time: [0.0; 2],
            clock: (0.0, 24.0),
            applied: None,
            tape: None,
            mode: JacobianMode::System,
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
        stretch_measures(&self.model.triangles, &self.model.rest, &self.x)
            .iter()
            .flat_map(|s| s.iter().map(|w| (w - 1.0).abs()))
            .fold(0.0, f64::max)
    }

    /// Advances by `duration` seconds (one frame), adapting the step (Baraff §7).
    /// Fails with [`Error::Simulation`] when the step would fall below the minimum.
    pub fn advance(&mut self, duration: f64) -> Result<FrameStats> {
        let end = self.time + duration;
        let mut stats = FrameStats {
            min_step: f64::INFINITY,
            ..FrameStats::default()
        };
        // Stop when the remainder is a rounding residue of the frame length.
        while end - self.time > 1e-9 * duration.max(1e-12) {
            let h = self.control.step().min(end - self.time);
            match self.step(h, &mut stats) {
                Ok(()) => {
                    self.control.accept();
                    stats.steps += 1;
                    stats.min_step = stats.min_step.min(h);
                }
                Err(why) => {
                    stats.rejections += 1;
                    if !self.control.reject() {
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

    /// One implicit step of size `h`; on success the state is advanced. The system is
    /// built with Baraff's Jacobians ([`JacobianMode::System`]); if the PCG meets
    /// non-positive curvature there (an indefinite system under large shear or folds), it is
    /// rebuilt with the positive definite [`JacobianMode::Definite`] ones and solved again.
    fn step(&mut self, h: f64, stats: &mut FrameStats) -> Result<(), Rejection> {
        let (start, fps) = self.clock;
        let (f0, f1) = (start + self.time * fps, start + (self.time + h) * fps);
        for b in &mut self.bodies {
            b.advance_to(f0, f1);
        }
        self.constraints.clear();
        self.pins
            .constrain(&self.x, &self.v, h, f1, &self.bodies, &mut self.constraints);
        self.y.iter_mut().for_each(|y| *y = Vec3::zeros());
        if !self.bodies.is_empty() {
            let clock = Instant::now();
            self.detect_contacts(h);
            self.collision_time[0] += clock.elapsed().as_secs_f64();
        }
        if let Some(sc) = &mut self.self_collision {
            let clock = Instant::now();
            let (repulsions, alterations) = sc.detect(&self.x);
            for (i, y) in alterations {
                // Pins and body contacts keep their own exact targets.
                if !self.pinned[i] && self.y[i] == Vec3::zeros() {
                    self.y[i] = y;
                }
            }
            stats.self_contacts = stats.self_contacts.max(repulsions.len());
            let d = sc.distance;
            self.system.set_repulsions(self.x.len(), repulsions, d);
            self.collision_time[1] += clock.elapsed().as_secs_f64();
        }
        let mut result = self.solve(h, JacobianMode::System);
        stats.cg_iterations += result.iterations;
        if !result.converged && result.iterations < self.params.cg_max_iterations {
            stats.definite_fallbacks += 1;
            result = self.solve(h, JacobianMode::Definite);
            stats.cg_iterations += result.iterations;
        }
        if !result.converged {
            return Err(Rejection::Solve);
        }
        let record = self.tape.is_some().then(|| self.record(h));
        if !self.contacts.contacts.is_empty() {
            let all = constraint_forces(
                &self.system.matrix,
                &self.system.rhs,
                &self.dv,
                &self.constraints,
            );
            let pins = self.constraints.len() - self.contacts.contacts.len();
            self.impulses = all[pins..].to_vec();
        }
        let tolerate_crossing = h <= self.params.max_step / 256.0;
        if self.check_and_advance(h, tolerate_crossing)? {
            stats.self_crossings += 1;
        }
        if !self.bodies.is_empty() {
            self.contacts.remember(&self.impulses, &self.v, h);
        }
        if let Some(sc) = &mut self.self_collision {
            sc.accept();
        }
        if let (Some(tape), Some(r)) = (&mut self.tape, record) {
            tape.push(r);
        }
        stats.max_residual = stats.max_residual.max(result.relative_residual);
        Ok(())
    }

    /// Finds contacts with the bodies (sampled for this step, Baraff §6) and turns them into
    /// constraints and position alterations.
    fn detect_contacts(&mut self, h: f64) {
        self.contacts.detect(
            &self.bodies,
            &self.x,
            &self.v,
            &self.pinned,
            h,
            self.params.gravity,
        );
        self.contacts
            .constrain(&self.v, &mut self.constraints, &mut self.y);
    }

    /// What the adjoint pass needs to rebuild this step's system (called before the state
    /// advances).
    fn record(&self, h: f64) -> StepRecord {
        let pins = self.constraints.len() - self.contacts.contacts.len();
        StepRecord {
            h,
            x: self.x.clone(),
            v: self.v.clone(),
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
        }
    }

    /// Assembles the step's system with Jacobians of `mode` and solves it into `dv`.
    fn solve(&mut self, h: f64, mode: JacobianMode) -> PcgResult {
        self.mode = mode;
        self.system.assemble(
            &self.model,
            &self.x,
            &self.v,
            &self.y,
            h,
            self.params.gravity,
            self.params.wind,
            mode,
        );
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
        let settings = PcgSettings {
            tolerance: self.params.cg_tolerance,
            max_iterations: self.params.cg_max_iterations,
            warm_start: self.params.cg_warm_start,
        };
        modified_pcg(
            &self.system.matrix,
            &self.system.rhs,
            &self.constraints,
            &settings,
            &mut self.pcg,
            &mut self.dv,
        )
    }

    /// Proposes `v₁ = v₀ + Δv`, `x₁ = x₀ + h v₁ + y`; accepts it unless a triangle's
    /// stretch jumps (Baraff §7), a value is not finite, a particle ends inside a body, or a
    /// particle passes through the cloth (unless `tolerate_crossing`). Returns whether an
    /// accepted step had a crossing.
    fn check_and_advance(&mut self, h: f64, tolerate_crossing: bool) -> Result<bool, Rejection> {
        let x_new: Vec<Vec3> = self
            .x
            .par_iter()
            .zip(self.v.par_iter())
            .zip(self.dv.par_iter().zip(self.y.par_iter()))
            .map(|((x, v), (dv, y))| x + h * (v + dv) + y)
            .collect();
        if x_new.iter().any(|p| !p.iter().all(|c| c.is_finite())) {
            return Err(Rejection::Stretch);
        }
        let tris = &self.model.triangles;
        let rest = &self.model.rest;
        // The stretch change is measured from the altered start x₀ + y: position alteration
        // (§6.2) is a deliberate displacement, the check judges the solve's own motion.
        let shifted: Vec<Vec3> = self.x.iter().zip(&self.y).map(|(x, y)| x + y).collect();
        self.stretch_before = stretch_measures(tris, rest, &shifted);
        let after = stretch_measures(tris, rest, &x_new);
        let limit = self.params.max_stretch_change;
        let jump = self
            .stretch_before
            .par_iter()
            .zip(after.par_iter())
            .any(|(a, b)| (a[0] - b[0]).abs() > limit || (a[1] - b[1]).abs() > limit);
        if jump {
            return Err(Rejection::Stretch);
        }
        let mut crossed = false;
        if let Some(sc) = &mut self.self_collision {
            let clock = Instant::now();
            let crosses = sc.crosses(&shifted, &x_new);
            self.collision_time[1] += clock.elapsed().as_secs_f64();
            if crosses {
                if !tolerate_crossing {
                    return Err(Rejection::SelfCrossing);
                }
                crossed = true;
            }
        }
        if !self.bodies.is_empty() {
            let clock = Instant::now();
            let after = BodyContacts::max_penetration(&self.bodies, &x_new);
            let worse = after > 0.1 && after > self.max_penetration();
            self.collision_time[0] += clock.elapsed().as_secs_f64();
            if worse {
                return Err(Rejection::Contact);
            }
        }
        // Pinned particles: Δv = z exactly (S = 0), so a pin at rest keeps v = 0 exactly.
        for (v, dv) in self.v.iter_mut().zip(&self.dv) {
            *v += dv;
        }
        self.x = x_new;
        self.time += h;
        Ok(crossed)
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

/// `(‖w_u‖, ‖w_v‖)` of every triangle (Baraff eq. 9, [`Deformation`]).
fn stretch_measures(tris: &[[usize; 3]], rest: &[TriangleRest], x: &[Vec3]) -> Vec<[f64; 2]> {
    tris.par_iter()
        .zip(rest.par_iter())
        .map(|(t, r)| {
            let d = Deformation::new(&t.map(|i| x[i]), r);
            [d.wu.norm(), d.wv.norm()]
        })
        .collect()
}
