//! Standard benchmark scenes and their per-frame timing, shared by `cargo bench` and
//! `drape bench` so both report the same figures.
//!
//! A benchmark is a bake without caches ([`crate::bake::Bake`]) whose observer times
//! every frame ([`run_scene_within`]). The reference is Baraff & Witkin §8, table 1: the
//! two-corner sheet of fig. 2 at 500, 900, 2,602 and 7,400 particles took 0.23, 0.46,
//! 2.23 and 10.3 s per frame on a 1998 CPU.
//!
//! The `drape bench` command needs only the standard sheets and their timing; the rest —
//! more scenes, the tuning knobs read from the environment ([`knobs`]), the fits of the
//! scaling run ([`fit`]) — serves the benches and tests, and, like the module itself in
//! the public API, exists only with the `dev` feature.
#[cfg(any(test, feature = "dev"))]
pub mod fit;
#[cfg(any(test, feature = "dev"))]
pub mod knobs;

use crate::bake::{Bake, Frame, Observer, Stop, Track};
use crate::error::Result;
use crate::fixtures::{SheetPlane, SheetSpec};
use crate::model::{ClothModel, UvScale};
use crate::pipeline::{Simulator, SolverParams};
use crate::scene::{Body, Garment, Material, UpAxis};
use serde::Serialize;
use std::time::Instant;

/// Timing of one scene.
#[derive(Debug, Clone, Serialize)]
pub struct BenchResult {
    /// Scene name.
    pub name: String,
    /// Particles after welding.
    pub particles: usize,
    /// Simulated frames (after the first).
    pub frames: usize,
    /// Wall-clock milliseconds per simulated frame.
    pub ms_per_frame: f64,
    /// Accepted steps per frame.
    pub steps_per_frame: f64,
    /// Average PCG iterations per accepted step.
    pub cg_per_step: f64,
    /// Rejected steps in total.
    pub rejections: usize,
    /// Largest stretch strain at the end (max |‖w‖ − 1|).
    pub final_max_strain: f64,
    /// Share of the run time spent on cloth–solid collision detection (Baraff's C/S).
    pub cloth_solid_share: f64,
    /// Share of the run time spent on cloth self-collision detection (Baraff's C/C).
    pub cloth_cloth_share: f64,
    /// Wall-clock milliseconds of each simulated frame, in order (not in the JSON; read by
    /// the scaling benchmark).
    #[serde(skip)]
    #[cfg_attr(not(feature = "dev"), allow(dead_code))]
    pub frame_ms: Vec<f64>,
}

/// Runs `f` on a rayon pool of one worker per core, as the CLI runs every command
/// (`cli::with_threads`), so that the caller's thread is one of the workers. Outside a
/// pool the sequential parts of a step (the IC(0) sweeps) run on a thread of their own
/// while every worker spins for the next parallel pass: three threads on two cores, a
/// slower frame. Falls back to running `f` directly if no pool can be started.
pub fn in_pool<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    match rayon::ThreadPoolBuilder::new().build() {
        Ok(pool) => pool.install(f),
        Err(_) => f(),
    }
}

/// Simulates `garment` for `frames` frames at `fps` with `material` and times it.
#[cfg(any(test, feature = "dev"))]
pub fn run_garment(
    garment: &Garment,
    material: &Material,
    params: &SolverParams,
    fps: f64,
    frames: usize,
) -> Result<BenchResult> {
    run_scene_within(garment, &[], material, params, fps, frames, f64::INFINITY)
}

/// Simulates `garment` against `bodies` for `frames` frames and times it.
#[cfg(any(test, feature = "dev"))]
pub fn run_scene(
    garment: &Garment,
    bodies: &[Body],
    material: &Material,
    params: &SolverParams,
    fps: f64,
    frames: usize,
) -> Result<BenchResult> {
    run_scene_within(
        garment,
        bodies,
        material,
        params,
        fps,
        frames,
        f64::INFINITY,
    )
}

/// Like [`run_scene`], but stops at the first frame boundary after `budget_s` seconds of
/// simulation (at least one frame is simulated); `frames` of the result is the number
/// actually simulated and `frame_ms` their times. For runs whose cost is not known up front
/// (the scaling benchmark at 30,000 particles).
#[cfg(any(test, feature = "dev"))]
pub fn run_scene_within(
    garment: &Garment,
    bodies: &[Body],
    material: &Material,
    params: &SolverParams,
    fps: f64,
    frames: usize,
    budget_s: f64,
) -> Result<BenchResult> {
    let timing = (fps, frames, budget_s);
    run_until(garment, bodies, (material, params), timing, &Stop::new())
}

/// The timed bake every benchmark runs: `garment` against `bodies` for `frames` frames at
/// `fps`, ending at the first frame boundary after `budget_s` seconds, or within a step
/// once `stop` is requested (`drape bench` shares the signals' stop); the result counts
/// the frames finished.
pub fn run_until(
    garment: &Garment,
    bodies: &[Body],
    (material, params): (&Material, &SolverParams),
    (fps, frames, budget_s): (f64, usize, f64),
    stop: &Stop,
) -> Result<BenchResult> {
    if rayon::current_thread_index().is_none() {
        let settings = (material, params);
        return in_pool(|| run_until(garment, bodies, settings, (fps, frames, budget_s), stop));
    }
    let model = ClothModel::build(garment, UvScale::Auto, material.density)?;
    let particles = model.len();
    let sim = Simulator::new(model, material, &garment.pin, params.clone())
        .with_bodies(bodies, material, 0.0, fps)?;
    // Frame 0 is the garment as given; frames 1..=frames are simulated.
    let last = i32::try_from(frames).unwrap_or(i32::MAX);
    let mut bake = Bake::new(vec![Track::new(garment, sim)], (0, last), fps, UpAxis::Y);
    let mut timing = Timing::new(budget_s, stop.clone());
    bake.run(&mut timing, stop)?;
    let seconds = timing.started.elapsed().as_secs_f64();
    let done = timing.frame_ms.len();
    Ok(BenchResult {
        name: garment.name.clone(),
        particles,
        frames: done,
        ms_per_frame: 1000.0 * seconds / done.max(1) as f64,
        steps_per_frame: timing.steps as f64 / done.max(1) as f64,
        cg_per_step: timing.cg as f64 / timing.steps.max(1) as f64,
        rejections: timing.rejections,
        final_max_strain: bake.tracks()[0].sim.max_strain(),
        cloth_solid_share: timing.solid / seconds.max(f64::MIN_POSITIVE),
        cloth_cloth_share: timing.cloth / seconds.max(f64::MIN_POSITIVE),
        frame_ms: timing.frame_ms,
    })
}

/// The observer of a timed bake: per-frame times and solver figures summed, a stop
/// requested once the budget is spent.
struct Timing {
    started: Instant,
    budget_s: f64,
    stop: Stop,
    frame_ms: Vec<f64>,
    steps: usize,
    cg: usize,
    rejections: usize,
    solid: f64,
    cloth: f64,
}

impl Timing {
    fn new(budget_s: f64, stop: Stop) -> Self {
        Timing {
            started: Instant::now(),
            budget_s,
            stop,
            frame_ms: Vec::new(),
            steps: 0,
            cg: 0,
            rejections: 0,
            solid: 0.0,
            cloth: 0.0,
        }
    }
}

impl Observer for Timing {
    fn frame(&mut self, f: &Frame) {
        if f.garments.is_empty() {
            return; // the first frame, as given
        }
        self.frame_ms.push(1000.0 * f.seconds);
        for (_, s) in f.garments {
            self.steps += s.steps;
            self.cg += s.cg_iterations;
            self.rejections += s.rejections;
            self.solid += s.cloth_solid_seconds;
            self.cloth += s.cloth_cloth_seconds;
        }
        if self.started.elapsed().as_secs_f64() >= self.budget_s {
            self.stop.request();
        }
    }
}

/// Baraff fig. 1: a 1.4 m square of `side × side` particles, flat, falling from 10 cm above
/// onto a sphere of radius 0.35 m.
#[cfg(any(test, feature = "dev"))]
pub fn drape_over_sphere(side: usize) -> (Garment, Body) {
    let g = crate::fixtures::sheet(&SheetSpec {
        name: format!("drape_{side}x{side}"),
        n: side,
        size: 1.4,
        plane: SheetPlane::Horizontal,
        pins: crate::fixtures::SheetPins::None,
        offset: crate::Vec3::new(0.0, 0.45, 0.0),
        ..SheetSpec::default()
    });
    let sphere = crate::fixtures::bodies::sphere(crate::Vec3::zeros(), 0.35, 24, 48);
    (g, sphere)
}

/// Side lengths (particles per side) of the standard sheets: 22² ≈ 500, 30² = 900,
/// 51² = 2,601, 86² = 7,396 particles (Baraff §8's sizes).
pub const SHEET_SIDES: [usize; 4] = [22, 30, 51, 86];

/// The two-corner sheet of Baraff fig. 2 with `side × side` particles: a 1 m square, flat
/// and horizontal at rest, held by the two corners of one edge, falling under gravity.
pub fn sheet(side: usize) -> Garment {
    crate::fixtures::sheet(&SheetSpec {
        name: format!("sheet_{side}x{side}"),
        n: side,
        plane: SheetPlane::Horizontal,
        ..SheetSpec::default()
    })
}

/// A state in which every force of a step is active: `positions` displaced by a smooth
/// crumpling of amplitude `amplitude` (m), and a swirling velocity field (m/s). Used by
/// the solver's perf harnesses and the assembly tests.
#[cfg(any(test, feature = "dev"))]
pub fn crumpled_state(
    positions: &[crate::Vec3],
    amplitude: f64,
) -> (Vec<crate::Vec3>, Vec<crate::Vec3>) {
    use crate::Vec3;
    let x: Vec<Vec3> = (positions.iter())
        .map(|p| p + amplitude * Vec3::new((9.0 * p.z).sin(), (7.0 * p.x).cos(), (5.0 * p.x).sin()))
        .collect();
    let v = x.iter().map(|p| Vec3::new(p.z, -p.x, 0.3 * p.y)).collect();
    (x, v)
}

/// Default solver parameters at 24 fps, Y up.
pub fn default_params() -> SolverParams {
    SolverParams::new(24.0, UpAxis::Y.vector())
}

/// [`default_params`] with the solver overrides of the environment
/// ([`knobs::SolverKnobs`]).
#[cfg(any(test, feature = "dev"))]
pub fn params_from_env() -> SolverParams {
    knobs::SolverKnobs::from_env().apply(default_params())
}

/// Side lengths of the scaling run: 51² = 2,601, 71² = 5,041, 100² = 10,000,
/// 141² = 19,881 and 173² = 29,929 particles of the two-corner [`sheet`].
#[cfg(any(test, feature = "dev"))]
pub const SCALING_SIDES: [usize; 5] = [51, 71, 100, 141, 173];
