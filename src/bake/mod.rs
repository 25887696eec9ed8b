//! The bake: every garment simulated frame by frame, each finished frame written to its
//! cache — the one frame loop that `drape simulate`, `drape control` and `drape bench`
//! run.
//!
//! ```text
//! Bake::prepare(scene, selected, settings)    outputs checked, one Simulator per garment
//!   └─ Bake::run(observer, stop)
//!        announce     Observer::start, the initial-state warnings
//!        open         one CacheWriter per garment (frames go to <out>.partial)
//!        frame A      every garment as given (nothing simulated)
//!        frame f > A  stop requested? → checkpoint, Outcome::Stopped
//!                     per garment: advance_frame (control forces of interval f − A − 1,
//!                     one frame of 1/fps s), a garment's first tear warned
//!                     (Observer::torn), world → cache space, write;
//!                     Observer::frame; a checkpoint when one is due
//!        finish       partial files renamed over the outputs, checkpoint removed,
//!                     Observer::done
//! ```
//!
//! With `--resume`, [`Bake::prepare`] continues an interrupted bake: it checks the
//! checkpoint against the build, scene and options, takes over the partial caches cut
//! back to its frame and restores the simulators (`checkpoint.rs`); the run then goes on
//! from the next frame.
//!
//! A stop ([`Stop`], read at every frame boundary and, through every simulator, inside
//! the frame: [`crate::stop`]) or a failure leaves every cache's partial file valid with
//! the frames finished so far; [`Observer::kept`] and a warning per garment name them. A
//! bake stopped at a frame boundary keeps its state: calling [`Bake::run`] again
//! continues with the next frame. One stopped inside a frame abandons that frame and
//! cannot continue.
//!
//! Keyframe control ([`crate::control`]) bakes its controlled run here
//! ([`Track::control`]) and advances its optimiser's forward runs with the same
//! [`advance_frame`]; the benchmarks time a bake without caches ([`crate::bench`]).
mod checkpoint;
mod events;
mod fingerprint;
mod outputs;
mod prepare;
mod transform;

#[cfg(test)]
mod tests;

pub use crate::stop::Stop;
pub use checkpoint::{build, checkpoint_path, Every, Fingerprint, AUTO_RATIO};
pub use events::{sum, Failure, Frame, Observer, Outputs, Start};
pub use outputs::file_name;
pub(crate) use outputs::lexical;
pub use prepare::{
    in_range, BakeSettings, CACHE_BUDGET, DEFAULT_FPS, DEFAULT_FRAMES, FPS_RANGE, MAX_FRAMES,
    MAX_STEP_RANGE,
};
pub use transform::CacheTransform;

use crate::cache::{self, CacheMeta, CacheWriter};
use crate::error::{Error, Result};
use crate::pipeline::{FrameStats, Simulator};
use crate::scene::{Garment, UpAxis};
use crate::Vec3;
use std::path::PathBuf;
use std::time::Instant;

/// Advances `sim` by one frame interval, `1/fps` seconds, with `forces` (N, one per
/// particle) applied through it, or none. Every frame of every run — a bake's, keyframe
/// control's forward passes, a benchmark's — is advanced by this function.
pub fn advance_frame(
    sim: &mut Simulator,
    forces: Option<Vec<Vec3>>,
    fps: f64,
) -> Result<FrameStats> {
    sim.set_applied_forces(forces);
    sim.advance(1.0 / fps)
}

/// How a [`Bake::run`] ended (failures are errors).
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Every frame is written and every cache finished.
    Finished,
    /// A stop was requested; the frames up to `after_frame` are in the partial caches.
    Stopped {
        /// The last frame written.
        after_frame: i32,
        /// What each partial cache keeps ("the partial cache X keeps frames A..B; …"),
        /// empty without caches.
        kept: String,
    },
}

/// One garment being baked: its simulator, the control forces it follows, its cache.
pub struct Track<'a> {
    /// The garment as imported.
    pub garment: &'a Garment,
    /// Its simulator, at the bake's current frame.
    pub sim: Simulator,
    /// Control forces (N per particle) of the first frame intervals; none after them.
    controls: Vec<Vec<Vec3>>,
    cache: Option<Cache>,
    /// Whether the warning that cloth was let through a body was given.
    let_through: bool,
    /// Whether the warning that the cloth tore was given.
    torn: bool,
}

/// Where a track's frames go.
struct Cache {
    path: PathBuf,
    transform: CacheTransform,
    writer: Option<Box<dyn CacheWriter>>,
}

impl<'a> Track<'a> {
    /// `garment` simulated by `sim`, written nowhere.
    pub fn new(garment: &'a Garment, sim: Simulator) -> Self {
        Track {
            garment,
            sim,
            controls: Vec::new(),
            cache: None,
            let_through: false,
            torn: false,
        }
    }

    /// Writes every frame to the cache `path` (format by extension), through `transform`.
    pub fn with_cache(mut self, path: PathBuf, transform: CacheTransform) -> Self {
        self.cache = Some(Cache {
            path,
            transform,
            writer: None,
        });
        self
    }

    /// Replaces the simulator by `sim` following control forces `forces[n]` through frame
    /// interval `n` (none after the last): keyframe control's optimised run.
    pub fn control(&mut self, sim: Simulator, forces: Vec<Vec<Vec3>>) {
        self.sim = sim;
        self.controls = forces;
    }

    /// The cache path, if the track writes one.
    pub fn output(&self) -> Option<&std::path::Path> {
        self.cache.as_ref().map(|c| c.path.as_path())
    }

    /// Writes the current state as `frame` (nothing without a cache).
    fn write(&mut self, frame: i32, first: i32) -> Result<()> {
        let Some(cache) = self.cache.as_mut() else {
            return Ok(());
        };
        let Some(w) = cache.writer.as_mut() else {
            return Ok(());
        };
        let points = cache.transform.points(self.garment, self.sim.positions());
        w.write_frame(&points)
            .map_err(|e| in_context(e, self.garment, Some(w.as_ref()), frame, first))
    }

    fn writer(&self) -> Option<&dyn CacheWriter> {
        self.cache.as_ref()?.writer.as_deref()
    }
}

/// A bake of one or more garments over an inclusive frame range.
pub struct Bake<'a> {
    tracks: Vec<Track<'a>>,
    frames: (i32, i32),
    fps: f64,
    cache_up: UpAxis,
    warnings: Vec<String>,
    announced: bool,
    /// Frames written so far (the first is frame `frames.0`).
    done: usize,
    finished: bool,
    /// A stop came inside a frame: the simulators hold an unfinished frame and the bake
    /// cannot continue.
    abandoned: bool,
    /// Replace partial caches earlier bakes left (`--force`).
    force: bool,
    /// Replace partial caches earlier bakes left, the outputs themselves not (`--resume`
    /// without a checkpoint to continue).
    force_partial: bool,
    /// Where and how often checkpoints are written (none without caches).
    checkpoints: Option<checkpoint::Checkpoints>,
}

impl<'a> Bake<'a> {
    /// A bake of `tracks` over `frames` (inclusive) at `fps`, caches in `cache_up`
    /// convention. [`Bake::prepare`] builds one from a scene.
    pub fn new(tracks: Vec<Track<'a>>, frames: (i32, i32), fps: f64, cache_up: UpAxis) -> Self {
        Bake {
            tracks,
            frames,
            fps,
            cache_up,
            warnings: Vec::new(),
            announced: false,
            done: 0,
            finished: false,
            abandoned: false,
            force: false,
            force_partial: false,
            checkpoints: None,
        }
    }

    /// Writes no checkpoint (a bake whose simulators are replaced after preparing, as
    /// keyframe control's, cannot be resumed from one).
    pub fn without_checkpoints(&mut self) {
        self.checkpoints = None;
    }

    /// Inclusive frame range.
    pub fn frames(&self) -> (i32, i32) {
        self.frames
    }

    /// Frames per second.
    pub fn fps(&self) -> f64 {
        self.fps
    }

    /// Frames of the whole range.
    pub fn total(&self) -> usize {
        (i64::from(self.frames.1) - i64::from(self.frames.0) + 1).max(0) as usize
    }

    /// Frames written (or simulated) so far, the first included.
    pub fn frames_done(&self) -> usize {
        self.done
    }

    /// The garments' tracks.
    pub fn tracks(&self) -> &[Track<'a>] {
        &self.tracks
    }

    /// The garments' tracks, e.g. to hand them control forces before the run.
    pub fn tracks_mut(&mut self) -> &mut [Track<'a>] {
        &mut self.tracks
    }

    /// Warnings about the initial states found while preparing.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Sends [`Observer::start`] and the initial-state warnings, once per bake (a caller
    /// that reports other work before the frames, like keyframe control's optimisation,
    /// announces first; [`Bake::run`] does it otherwise).
    pub fn announce(&mut self, observer: &mut dyn Observer) {
        if self.announced {
            return;
        }
        self.announced = true;
        let garments = (self.tracks.iter())
            .map(|t| (t.garment.name.clone(), t.sim.model().len()))
            .collect();
        observer.start(&Start {
            frames: self.frames,
            fps: self.fps,
            garments,
        });
        for w in &self.warnings {
            observer.warning(w);
        }
    }

    /// Runs the frames not yet done: writes the first frame as given, then simulates and
    /// writes every later frame, and finishes the caches. Returns
    /// [`Outcome::Stopped`] when `stop` is requested: at the next frame boundary (run
    /// again to continue) or, when it comes inside a frame, within one stage of one step,
    /// that frame abandoned (the bake cannot continue); fails with the simulation's error (garment, frame and partial
    /// cache named) or a cache's. On a stop or a failure every partial cache is reported
    /// ([`Observer::kept`]).
    pub fn run(&mut self, observer: &mut dyn Observer, stop: &Stop) -> Result<Outcome> {
        self.announce(observer);
        if self.finished {
            return Ok(Outcome::Finished);
        }
        if self.abandoned {
            return Err(Error::Internal(
                "a bake stopped inside a frame cannot continue".into(),
            ));
        }
        for t in &mut self.tracks {
            t.sim.set_stop(stop.clone());
        }
        self.open()?;
        match self.frames_loop(observer, stop) {
            Ok(Some(after_frame)) => {
                // Stopped at a frame boundary: the state there is kept for --resume.
                if !self.abandoned {
                    if let Some(w) = self.checkpoint(0.0, true) {
                        observer.warning(&w);
                    }
                }
                self.report_kept(observer);
                Ok(Outcome::Stopped {
                    after_frame,
                    kept: self.kept(),
                })
            }
            Ok(None) => {
                let frames = self.frames_written();
                let mut paths = Vec::new();
                for t in &mut self.tracks {
                    if let Some(w) = t.cache.as_mut().and_then(|c| c.writer.take()) {
                        paths.push(w.finish()?);
                    }
                }
                self.finished = true;
                self.remove_checkpoint();
                observer.done(&Outputs { paths, frames });
                Ok(Outcome::Finished)
            }
            Err(e) => {
                self.report_kept(observer);
                Err(e)
            }
        }
    }

    /// Creates the cache writers not yet open; a bake that starts anew removes the
    /// checkpoint an earlier bake of its outputs left.
    fn open(&mut self) -> Result<()> {
        let (first, total) = (self.frames.0, self.total());
        let mut created = false;
        for t in &mut self.tracks {
            if let Some(c) = t.cache.as_mut().filter(|c| c.writer.is_none()) {
                let mut meta =
                    CacheMeta::for_garment(t.garment, first, total, self.fps, self.cache_up);
                meta.replace_partial = self.force || self.force_partial;
                c.writer = Some(cache::create(&c.path, &meta)?);
                created = true;
            }
        }
        if created && self.done == 0 {
            self.remove_checkpoint();
        }
        Ok(())
    }

    /// The frame loop; `Some(last frame written)` when stopped.
    fn frames_loop(&mut self, observer: &mut dyn Observer, stop: &Stop) -> Result<Option<i32>> {
        let (first, total, fps) = (self.frames.0, self.total(), self.fps);
        if self.done == 0 && total > 0 {
            let started = Instant::now();
            for t in &mut self.tracks {
                t.write(first, first)?;
            }
            self.done = 1;
            observer.frame(&Frame {
                frame: first,
                done: 1,
                total,
                seconds: started.elapsed().as_secs_f64(),
                garments: &[],
            });
        }
        while self.done < total {
            let frame = first + self.done as i32;
            if stop.requested() {
                return Ok(Some(frame - 1));
            }
            let started = Instant::now();
            let interval = self.done - 1;
            let mut stats = Vec::with_capacity(self.tracks.len());
            for t in &mut self.tracks {
                let garment: &'a Garment = t.garment;
                let forces = t.controls.get(interval).cloned();
                let s = match advance_frame(&mut t.sim, forces, fps) {
                    Ok(s) => s,
                    // Stopped inside the frame: it is abandoned, the caches keep the
                    // frames before it.
                    Err(Error::Interrupted(_)) => {
                        self.abandoned = true;
                        return Ok(Some(frame - 1));
                    }
                    Err(e) => {
                        if let Some(trouble) = t.sim.trouble() {
                            observer.failed(&Failure::new(garment, frame, trouble));
                        }
                        return Err(in_context(e, garment, t.writer(), frame, first));
                    }
                };
                if s.let_through > 0 && !t.let_through {
                    t.let_through = true;
                    observer.warning(&format!(
                        "garment '{}': at frame {frame} a body kept catching the cloth even at the minimum step (cloth pinched between two parts of a character); {} particle(s) were let through it and eased out, as cloth that starts inside a body is — check the cache there, or give the garment more room",
                        garment.name, s.let_through
                    ));
                }
                if !t.torn {
                    if let Some(tear) = t.sim.tear() {
                        t.torn = true;
                        let place = Failure::new(garment, frame, &tear);
                        observer.warning(&tear_warning(&place));
                        observer.torn(&place);
                    }
                }
                t.write(frame, first)?;
                stats.push((garment.name.as_str(), s));
            }
            self.done += 1;
            let seconds = started.elapsed().as_secs_f64();
            observer.frame(&Frame {
                frame,
                done: self.done,
                total,
                seconds,
                garments: &stats,
            });
            if self.done < total {
                if let Some(w) = self.checkpoint(seconds, false) {
                    observer.warning(&w);
                }
            }
        }
        Ok(None)
    }

    /// A warning per partial cache, then [`Observer::kept`] (nothing without caches).
    fn report_kept(&self, observer: &mut dyn Observer) {
        let first = self.frames.0;
        let mut paths = Vec::new();
        for t in &self.tracks {
            if let Some(w) = t.writer() {
                observer.warning(&format!("garment '{}': {}", t.garment.name, kept(w, first)));
                paths.push(w.partial_path().to_path_buf());
            }
        }
        if !paths.is_empty() {
            observer.kept(&Outputs {
                paths,
                frames: self.frames_written(),
            });
        }
    }

    /// What every partial cache keeps, joined by "; ".
    fn kept(&self) -> String {
        let list: Vec<String> = (self.tracks.iter())
            .filter_map(|t| t.writer().map(|w| kept(w, self.frames.0)))
            .collect();
        list.join("; ")
    }

    /// Samples in every cache (the same for all after a frame boundary; the fewest if a
    /// bake failed inside a frame).
    fn frames_written(&self) -> usize {
        (self.tracks.iter())
            .filter_map(|t| t.writer().map(|w| w.frames_written()))
            .min()
            .unwrap_or(0)
    }
}

/// The warning that a garment's cloth tore ([`Simulator::tear`]), given once per garment
/// and bake: the frame, the strain and where, as garment particles and cache vertices.
fn tear_warning(place: &Failure) -> String {
    let t = place.trouble;
    let list = |v: &[usize]| {
        v.iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "garment '{}': at frame {} the cloth tears: an edge is stretched by {:.0}% (more than {:.0}%), between garment particles {} (cache vertices {}); a pin or a body pulls the cloth apart there — pins that follow body points moving apart (bind the garment to the character's armature, or pin only vertices on the part of the body they should follow), or cloth caught between two bodies: check the pins and the animation around that frame. The bake goes on; this is said once",
        place.garment,
        place.frame,
        100.0 * t.strain.unwrap_or(0.0),
        100.0 * crate::pipeline::trouble::TEAR_STRAIN,
        list(&t.particles),
        list(&place.vertices),
    )
}

/// A simulation failure with the garment, frame and partial cache named.
fn in_context(
    e: Error,
    garment: &Garment,
    w: Option<&dyn CacheWriter>,
    frame: i32,
    first: i32,
) -> Error {
    match (e, w) {
        (Error::Simulation(m), Some(w)) => Error::Simulation(format!(
            "garment '{}' at frame {frame}: {m}; {}",
            garment.name,
            kept(w, first)
        )),
        (Error::Simulation(m), None) => {
            Error::Simulation(format!("garment '{}' at frame {frame}: {m}", garment.name))
        }
        (e, _) => e,
    }
}

/// "the partial cache X keeps frames A..B" (or "holds no frame").
fn kept(w: &dyn CacheWriter, first: i32) -> String {
    match w.frames_written() {
        0 => format!(
            "the partial cache {} holds no frame",
            w.partial_path().display()
        ),
        n => format!(
            "the partial cache {} keeps frames {first}..{}",
            w.partial_path().display(),
            first + n as i32 - 1
        ),
    }
}
