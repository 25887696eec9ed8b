//! Standard benchmark scenes and their per-frame timing, shared by `cargo bench` and
//! `drape bench` so both report the same figures.
//!
//! The reference is Baraff & Witkin §8, table 1: the two-corner sheet of fig. 2 at 500,
//! 900, 2,602 and 7,400 particles took 0.23, 0.46, 2.23 and 10.3 s per frame on a 1998 CPU.
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
}

/// Simulates `garment` for `frames` frames at `fps` with `material` and times it.
pub fn run_garment(
    garment: &Garment,
    material: &Material,
    params: &SolverParams,
    fps: f64,
    frames: usize,
) -> Result<BenchResult> {
    run_scene(garment, &[], material, params, fps, frames)
}

/// Simulates `garment` against `bodies` for `frames` frames and times it.
pub fn run_scene(
    garment: &Garment,
    bodies: &[Body],
    material: &Material,
    params: &SolverParams,
    fps: f64,
    frames: usize,
) -> Result<BenchResult> {
    let model = ClothModel::build(garment, UvScale::Auto, material.density)?;
    let particles = model.len();
    let mut sim = Simulator::new(model, material, &garment.pin, params.clone())
        .with_bodies(bodies, material, 0.0, fps)?;
    let started = Instant::now();
    let (mut steps, mut cg, mut rejections) = (0, 0, 0);
    let (mut solid, mut cloth) = (0.0, 0.0);
    for _ in 0..frames {
        let s = sim.advance(1.0 / fps)?;
        steps += s.steps;
        cg += s.cg_iterations;
        rejections += s.rejections;
        solid += s.cloth_solid_seconds;
        cloth += s.cloth_cloth_seconds;
    }
    let seconds = started.elapsed().as_secs_f64();
    Ok(BenchResult {
        name: garment.name.clone(),
        particles,
        frames,
        ms_per_frame: 1000.0 * seconds / frames.max(1) as f64,
        steps_per_frame: steps as f64 / frames.max(1) as f64,
        cg_per_step: cg as f64 / steps.max(1) as f64,
        rejections,
        final_max_strain: sim.max_strain(),
        cloth_solid_share: solid / seconds,
        cloth_cloth_share: cloth / seconds,
    })
}

/// Baraff fig. 1: a 1.4 m square of `side × side` particles, flat, falling from 10 cm above
/// onto a sphere of radius 0.35 m.
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

/// Default solver parameters at 24 fps, Y up.
pub fn default_params() -> SolverParams {
    SolverParams::new(24.0, UpAxis::Y.vector())
}
