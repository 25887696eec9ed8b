//! What a bake tells the outside while it runs ([`Observer`]) and how the outside asks it
//! to stop ([`Stop`](crate::stop::Stop)).
//!
//! A bake announces itself once ([`Observer::start`]), then reports every frame as it is
//! written ([`Observer::frame`]), warnings about its input or its partial caches
//! ([`Observer::warning`]), and how it ended: the finished caches ([`Observer::done`]) or,
//! when it stopped or failed, the partial caches it leaves ([`Observer::kept`]). The CLI's
//! progress bar, its JSON progress lines and its `--report` are observers; so is the
//! timing of `drape bench`.
use crate::pipeline::trouble::Trouble;
use crate::pipeline::FrameStats;
use crate::scene::Garment;
use std::path::PathBuf;

/// The garments of a bake as [`Observer::start`] announces them.
#[derive(Debug, Clone, PartialEq)]
pub struct Start {
    /// Inclusive frame range.
    pub frames: (i32, i32),
    /// Frames per second.
    pub fps: f64,
    /// `(name, particles)` of every garment.
    pub garments: Vec<(String, usize)>,
}

/// One frame written (or, without caches, simulated) for every garment.
#[derive(Debug, Clone, Copy)]
pub struct Frame<'a> {
    /// Frame number.
    pub frame: i32,
    /// Frames done so far, this one included (1 for the first frame).
    pub done: usize,
    /// Frames of the whole range.
    pub total: usize,
    /// Wall-clock seconds the frame took, all garments together.
    pub seconds: f64,
    /// Each garment's name and solver figures, in garment order; empty for the first
    /// frame, which is every garment as given (nothing simulated).
    pub garments: &'a [(&'a str, FrameStats)],
}

impl Frame<'_> {
    /// The figures of every garment together: counts add, extremes combine (all zero for
    /// the first frame).
    pub fn sum(&self) -> FrameStats {
        sum(self.garments.iter().map(|(_, s)| s))
    }
}

/// The figures of several garments' frames together: counts add, extremes combine.
pub fn sum<'a>(stats: impl Iterator<Item = &'a FrameStats>) -> FrameStats {
    let mut t = FrameStats {
        min_step: f64::INFINITY,
        ..FrameStats::default()
    };
    for s in stats {
        t.steps += s.steps;
        t.rejections += s.rejections;
        t.cg_iterations += s.cg_iterations;
        t.definite_fallbacks += s.definite_fallbacks;
        t.contacts += s.contacts;
        t.max_residual = t.max_residual.max(s.max_residual);
        t.max_strain = t.max_strain.max(s.max_strain);
        t.min_step = t.min_step.min(s.min_step);
    }
    if !t.min_step.is_finite() {
        t.min_step = 0.0;
    }
    t
}

/// Caches a bake finished ([`Observer::done`]) or left partial ([`Observer::kept`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Outputs {
    /// One path per garment with a cache: the final cache, or the partial file (for a
    /// `.geo` sequence, the pattern of its frame files).
    pub paths: Vec<PathBuf>,
    /// Samples in every cache (the fewest, if a bake stopped inside a frame).
    pub frames: usize,
}

/// Where in a garment a frame went wrong: the frame failed ([`Observer::failed`]), or the
/// cloth tore and the bake goes on ([`Observer::torn`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Failure<'a> {
    /// The garment's name.
    pub garment: &'a str,
    /// The frame that could not be simulated, or where the cloth tore.
    pub frame: i32,
    /// What was measured, in particles: what the rejected steps found, or the torn edge.
    pub trouble: &'a Trouble,
    /// The same place as points of the output cache (the artist's vertex order), for
    /// selecting it in the modelling tool.
    pub vertices: Vec<usize>,
}

impl<'a> Failure<'a> {
    /// `trouble` found in `garment` at `frame`, its particles also as the cache points
    /// showing them.
    pub fn new(garment: &'a Garment, frame: i32, trouble: &'a Trouble) -> Self {
        let vertices = (garment.output_points.iter().enumerate())
            .filter(|(_, p)| trouble.particles.binary_search(p).is_ok())
            .map(|(k, _)| k)
            .collect();
        Failure {
            garment: &garment.name,
            frame,
            trouble,
            vertices,
        }
    }
}

/// Receives a bake's events; every method does nothing unless overridden.
pub trait Observer {
    /// The bake starts (sent once, before its first frame, even if it is resumed).
    fn start(&mut self, _start: &Start) {}
    /// A frame is done.
    fn frame(&mut self, _frame: &Frame) {}
    /// Something the user should see: a doubtful initial state, a partial cache kept.
    fn warning(&mut self, _message: &str) {}
    /// Every cache is finished and in place.
    fn done(&mut self, _outputs: &Outputs) {}
    /// The bake stopped or failed; these partial caches keep the frames finished.
    fn kept(&mut self, _partial: &Outputs) {}
    /// A garment's frame failed (sent before the failure ends the bake), with where.
    fn failed(&mut self, _failure: &Failure) {}
    /// A garment's cloth tore ([`crate::pipeline::Simulator::tear`]; sent once per garment,
    /// after the warning saying so); the bake goes on.
    fn torn(&mut self, _tear: &Failure) {}
}

/// An observer that ignores everything.
impl Observer for () {}
