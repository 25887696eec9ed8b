//! `drape simulate`: read garments, check every output up front, simulate frame by frame,
//! write each finished frame to the caches, report.
//!
//! Order of work, so that bad input costs no simulation time (SPEC "Exit codes"): flags and
//! scene are read, then every output is checked ([`cache::check_output`]: format, `$F`
//! field, directory exists and is writable, no overwrite without `--force`), then the
//! cloth models are built and the caches opened, and only then does the frame loop run.
//! The loop stops at a frame boundary when SIGINT/SIGTERM arrives ([`interrupt`]); on any
//! stop every garment's partial cache is named in a warning and in the error.
use super::args::{ProgressMode, SimulateArgs, UpArg};
use super::interrupt;
use super::progress::Progress;
use super::report::{self, Report};
use super::settings;
use crate::cache::{self, CacheMeta, CacheWriter};
use crate::error::{Error, Result};
use crate::io::scene_file::GarmentSettings;
use crate::model::ClothModel;
use crate::pipeline::{Simulator, SolverParams};
use crate::scene::{Garment, Material, UpAxis};
use crate::Vec3;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Runs `drape simulate`.
pub fn run(args: &SimulateArgs) -> Result<()> {
    run_command(args, "simulate", |p, r| simulate(args, p, r))
}

/// Runs a baking command with its interrupt handler, progress display and `--report`.
pub(super) fn run_command(
    args: &SimulateArgs,
    command: &str,
    body: impl FnOnce(&mut Progress, &mut Option<Report>) -> Result<()>,
) -> Result<()> {
    interrupt::install(args.progress == ProgressMode::Json);
    let mut progress = Progress::new(args.progress);
    let mut report = args.report.as_ref().map(|p| {
        let mut r = Report::new(p, &args.scene);
        r.set("command", json!(command));
        r
    });
    let result = body(&mut progress, &mut report);
    if result.is_err() {
        progress.abandon();
    }
    match report {
        Some(r) => {
            let written = r.write(&result, progress.elapsed());
            result.and(written)
        }
        None => result,
    }
}

/// One garment being baked.
pub(super) struct Run<'a> {
    /// The garment as imported.
    pub garment: &'a Garment,
    /// Its simulator.
    pub sim: Simulator,
    to_cache: CacheTransform,
    out: PathBuf,
    /// Control forces (N per particle) of the first frame intervals (`drape control`);
    /// none after them.
    pub controls: Vec<Vec<Vec3>>,
}

fn simulate(
    args: &SimulateArgs,
    progress: &mut Progress,
    report: &mut Option<Report>,
) -> Result<()> {
    let selected = load(args)?;
    let mut prepared = prepare_selected(args, &selected, report)?;
    progress.start("simulate", prepared.frames, &prepared.names());
    for w in &prepared.warnings {
        progress.warning(w);
    }
    bake_caches(&mut prepared, progress, report)
}

/// A checked command line: the scene, its frame range, and one ready simulator per garment.
pub(super) struct Prepared<'a> {
    /// The scene file's `keyframes` settings, if any.
    pub keyframes: Option<crate::io::scene_file::KeyframesEntry>,
    /// Inclusive frame range.
    pub frames: (i32, i32),
    /// Frames per second.
    pub fps: f64,
    cache_up: UpAxis,
    /// One run per garment.
    pub runs: Vec<Run<'a>>,
    /// Warnings about the initial states.
    pub warnings: Vec<String>,
}

impl Prepared<'_> {
    /// `(name, particles)` of every garment, for the start event.
    pub fn names(&self) -> Vec<(String, usize)> {
        (self.runs.iter())
            .map(|r| (r.garment.name.clone(), r.sim.model().len()))
            .collect()
    }
}

/// Reads the scene the flags select.
pub(super) fn load(args: &SimulateArgs) -> Result<crate::io::Selected> {
    if let Some(f) = args.fps {
        settings::positive("--fps", f)?;
    }
    crate::io::select(&args.scene, &args.garments, &args.bodies, args.fps)
}

/// Checks the flags and outputs and builds one simulator per garment of `selected`.
pub(super) fn prepare_selected<'a>(
    args: &SimulateArgs,
    selected: &'a crate::io::Selected,
    report: &mut Option<Report>,
) -> Result<Prepared<'a>> {
    let material = Material::from_arg(&args.material)?;
    let uv_scale = settings::uv_scale(&args.uv_scale)?;
    let wind = match &args.wind {
        Some(w) => settings::vector("--wind", w)?,
        None => Vec3::zeros(),
    };
    let scene = &selected.scene;
    let fps = settings::positive("--fps", args.fps.or(scene.fps).unwrap_or(24.0))?;
    let (first, last) = match &args.frames {
        Some(f) => settings::frame_range(f)?,
        None => scene.frame_range.unwrap_or((1, 48)),
    };
    let outputs = output_paths(args, &scene.garments, &selected.garment_settings)?;
    for out in &outputs {
        cache::check_output(out, args.force, (first, last))?;
    }
    let mut params = SolverParams::new(fps, scene.up.vector());
    if let Some(h) = args.max_step.or(selected.max_step) {
        params.max_step = settings::positive("--max-step", h)?.min(1.0 / fps);
    }
    params.wind = wind;
    if args.wind.is_some() {
        params.lift = crate::pipeline::params::DEFAULT_LIFT;
    }
    params.integrator = args.integrator.into();
    params.model = args.model.into();
    let cache_up = match args.up {
        Some(UpArg::Y) => UpAxis::Y,
        Some(UpArg::Z) => UpAxis::Z,
        None => scene.up,
    };

    let mut runs = Vec::new();
    let mut warnings = Vec::new();
    for (i, (garment, out)) in scene.garments.iter().zip(outputs).enumerate() {
        // A scene file may give each garment its own material.
        let material = match selected
            .garment_settings
            .get(i)
            .and_then(|s| s.material.as_deref())
        {
            Some(m) => Material::from_arg(m)?,
            None => material.clone(),
        };
        let model = ClothModel::build(garment, uv_scale, material.density)?;
        let mut sim = Simulator::new(model, &material, &garment.pin, params.clone());
        if let Some(anim) = &garment.animation {
            sim = sim.with_pin_animation(anim.clone(), f64::from(first), fps);
        }
        let sim = sim.with_bodies(&scene.bodies, &material, f64::from(first), fps)?;
        for w in sim.initial_warnings() {
            warnings.push(format!("garment '{}': {w}", garment.name));
        }
        runs.push(Run {
            garment,
            to_cache: CacheTransform::new(garment, scene.up, cache_up)?,
            sim,
            out,
            controls: Vec::new(),
        });
    }
    if let Some(r) = report.as_mut() {
        r.set("frames", json!([first, last]));
        r.set("fps", json!(fps));
        r.set(
            "garments",
            runs.iter()
                .map(|r| {
                    json!({
                        "name": r.garment.name, "vertices": r.sim.model().len(),
                        "triangles": r.sim.model().triangles.len(),
                        "output_points": r.garment.output_points.len(),
                    })
                })
                .collect(),
        );
    }
    Ok(Prepared {
        keyframes: selected.keyframes.clone(),
        frames: (first, last),
        fps,
        cache_up,
        runs,
        warnings,
    })
}

/// Opens the caches, bakes every frame into them and publishes them.
pub(super) fn bake_caches(
    prepared: &mut Prepared,
    progress: &mut Progress,
    report: &mut Option<Report>,
) -> Result<()> {
    let (first, last) = prepared.frames;
    let (fps, cache_up) = (prepared.fps, prepared.cache_up);
    let runs = &mut prepared.runs;
    let total = (i64::from(last) - i64::from(first) + 1) as usize;
    let mut writers: Vec<Box<dyn CacheWriter>> = Vec::new();
    for r in runs.iter() {
        let meta = CacheMeta::for_garment(r.garment, first, total, fps, cache_up);
        writers.push(cache::create(&r.out, &meta)?);
    }
    let baked = bake(runs, &mut writers, (first, last), fps, progress, report);
    if let Err(e) = baked {
        for (r, w) in runs.iter().zip(&writers) {
            progress.warning(&kept_message(r, w.as_ref(), first));
        }
        if let Some(rep) = report.as_mut() {
            let partial = writers
                .iter()
                .map(|w| w.partial_path().display().to_string());
            rep.outputs(partial.collect(), frames_written(&writers));
        }
        return Err(e);
    }
    let frames = frames_written(&writers);
    let mut written = Vec::new();
    for w in writers {
        written.push(w.finish()?.display().to_string());
    }
    if let Some(rep) = report.as_mut() {
        rep.outputs(written.clone(), frames);
    }
    progress.done(&written);
    Ok(())
}

/// Writes the first frame as given, then simulates and writes every later frame; stops
/// with [`Error::Interrupted`] at the first frame boundary after a signal.
fn bake(
    runs: &mut [Run],
    writers: &mut [Box<dyn CacheWriter>],
    (first, last): (i32, i32),
    fps: f64,
    progress: &mut Progress,
    report: &mut Option<Report>,
) -> Result<()> {
    let total = (i64::from(last) - i64::from(first) + 1) as usize;
    for (r, w) in runs.iter().zip(writers.iter_mut()) {
        write(r, w.as_mut(), first, first)?;
    }
    progress.frame(first, 1, total, 0, 0);
    for (k, frame) in (first + 1..=last).enumerate() {
        if interrupt::requested() {
            return Err(Error::Interrupted(format!(
                "stopped by a signal after frame {}; {}",
                frame - 1,
                kept_list(writers, first)
            )));
        }
        let started = Instant::now();
        let mut stats = Vec::with_capacity(runs.len());
        for (r, w) in runs.iter_mut().zip(writers.iter_mut()) {
            if !r.controls.is_empty() {
                r.sim.set_applied_forces(r.controls.get(k).cloned());
            }
            let s = r
                .sim
                .advance(1.0 / fps)
                .map_err(|e| in_context(e, r, w.as_ref(), frame, first))?;
            write(r, w.as_mut(), frame, first)?;
            stats.push((r.garment.name.as_str(), s));
        }
        let sum = report::sum(stats.iter().map(|(_, s)| s));
        progress.frame(frame, k + 2, total, sum.steps, sum.cg_iterations);
        if let Some(rep) = report.as_mut() {
            rep.frame(frame, started.elapsed().as_secs_f64(), &stats);
        }
    }
    Ok(())
}

/// Writes garment `r`'s current state as `frame`.
fn write(r: &Run, w: &mut dyn CacheWriter, frame: i32, first: i32) -> Result<()> {
    let points = r.to_cache.points(r.garment, r.sim.positions());
    w.write_frame(&points)
        .map_err(|e| in_context(e, r, w, frame, first))
}

/// A simulation failure with the garment, frame and partial cache named.
fn in_context(e: Error, r: &Run, w: &dyn CacheWriter, frame: i32, first: i32) -> Error {
    match e {
        Error::Simulation(m) => Error::Simulation(format!(
            "garment '{}' at frame {frame}: {m}; {}",
            r.garment.name,
            kept(w, first)
        )),
        e => e,
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

fn kept_message(r: &Run, w: &dyn CacheWriter, first: i32) -> String {
    format!("garment '{}': {}", r.garment.name, kept(w, first))
}

fn kept_list(writers: &[Box<dyn CacheWriter>], first: i32) -> String {
    let list: Vec<String> = writers.iter().map(|w| kept(w.as_ref(), first)).collect();
    list.join("; ")
}

/// Samples in every cache (the same for all after a frame boundary; the smallest if a
/// bake stopped inside a frame).
fn frames_written(writers: &[Box<dyn CacheWriter>]) -> usize {
    writers
        .iter()
        .map(|w| w.frames_written())
        .min()
        .unwrap_or(0)
}

/// One output path per garment: `-o` with `{garment}` expanded, else the scene file's
/// `out` for that garment, else `<garment>.pc2` beside the scene.
fn output_paths(
    args: &SimulateArgs,
    garments: &[Garment],
    settings: &[GarmentSettings],
) -> Result<Vec<PathBuf>> {
    let dir = args.scene.parent().unwrap_or(Path::new("")).to_path_buf();
    let paths: Vec<PathBuf> = garments
        .iter()
        .enumerate()
        .map(
            |(i, g)| match (&args.out, settings.get(i).and_then(|s| s.out.clone())) {
                (Some(o), _) => PathBuf::from(o.to_string_lossy().replace("{garment}", &g.name)),
                (None, Some(o)) => o,
                (None, None) => dir.join(format!("{}.pc2", g.name)),
            },
        )
        .collect();
    for (i, p) in paths.iter().enumerate() {
        if paths[..i].contains(p) {
            return Err(Error::usage(format!(
                "{} garments would write the same cache {}; put {{garment}} in the -o path",
                garments.len(),
                p.display()
            )));
        }
    }
    Ok(paths)
}

/// World space → the garment's object-local space in the cache's axis convention.
struct CacheTransform {
    inverse: crate::Mat3,
    translation: Vec3,
    swap: Option<UpAxis>,
}

impl CacheTransform {
    fn new(g: &Garment, source_up: UpAxis, cache_up: UpAxis) -> Result<Self> {
        let inverse = g.world_linear.try_inverse().ok_or_else(|| {
            Error::input(
                &g.source,
                Some(&g.name),
                "the object's transform is singular (zero scale); apply a non-zero scale",
            )
        })?;
        Ok(CacheTransform {
            inverse,
            translation: g.world_translation,
            swap: (source_up != cache_up).then_some(cache_up),
        })
    }

    /// One position per output point of `g`, from particle positions in world space.
    /// Y-up → Z-up is (x, y, z) → (x, −z, y); Z-up → Y-up its inverse (x, z, −y).
    fn points(&self, g: &Garment, world: &[Vec3]) -> Vec<Vec3> {
        g.output_points
            .iter()
            .map(|&i| {
                let p = self.inverse * (world[i] - self.translation);
                match self.swap {
                    Some(UpAxis::Z) => Vec3::new(p.x, -p.z, p.y),
                    Some(UpAxis::Y) => Vec3::new(p.x, p.z, -p.y),
                    None => p,
                }
            })
            .collect()
    }
}
