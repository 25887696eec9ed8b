//! `drape simulate`: the flags turned into [`BakeSettings`], the bake run with the
//! progress display and `--report` as its observer, and the outcome turned into an exit
//! status.
//!
//! The work itself — outputs checked before any simulation, one simulator per garment, the
//! frame loop, partial caches — is the library's [`crate::bake`]. A first SIGINT/SIGTERM
//! requests a stop at the next frame boundary ([`interrupt`]); a stopped bake ends with
//! [`Error::Interrupted`] (exit code 130) naming every partial cache.
use super::args::{ProgressMode, SimulateArgs, UpArg};
use super::interrupt;
use super::progress::Progress;
use super::report::Report;
use super::settings;
use crate::bake::{self, Bake, BakeSettings, Every, Observer, Outcome, Outputs};
use crate::error::{Error, Result};
use crate::scene::{Material, UpAxis};
use serde_json::json;

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
    if let Some(p) = &args.report {
        Report::check(p)?;
    }
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

fn simulate(
    args: &SimulateArgs,
    progress: &mut Progress,
    report: &mut Option<Report>,
) -> Result<()> {
    let selected = load(args)?;
    let mut bake = prepare(args, &selected, report)?;
    run_bake(&mut bake, &mut Watch::new("simulate", progress, report))
}

/// Reads the scene the flags select.
pub(super) fn load(args: &SimulateArgs) -> Result<crate::io::Selected> {
    if let Some(f) = args.fps {
        bake::in_range("--fps", f, bake::FPS_RANGE, "frames per second")?;
    }
    settings::positive("--scale", args.scale)?;
    let opts = args.input.read_options(args.fps)?;
    let mut selected = crate::io::select_with(&args.scene, &args.garments, &args.bodies, &opts)?;
    selected.scene.scale_lengths(args.scale);
    Ok(selected)
}

/// The bake settings the flags give.
fn bake_settings(args: &SimulateArgs) -> Result<BakeSettings> {
    let wind = match &args.wind {
        Some(w) => Some(settings::vector("--wind", w)?),
        None => None,
    };
    Ok(BakeSettings {
        material: Material::from_arg(&args.material)?,
        uv_scale: settings::uv_scale(&args.uv_scale)?,
        rest: settings::rest(&args.rest)?,
        wind,
        fps: args.fps,
        frames: args
            .frames
            .as_deref()
            .map(settings::frame_range)
            .transpose()?,
        max_step: args.max_step,
        scale: args.scale,
        integrator: args.integrator.into(),
        model: args.model.into(),
        up: args.up.map(|u| match u {
            UpArg::Y => UpAxis::Y,
            UpArg::Z => UpAxis::Z,
        }),
        out: args.out.clone(),
        force: args.force,
        checkpoint_every: args.checkpoint_every.map_or(Every::Auto, Every::Frames),
        resume: args.resume,
    })
}

/// Checks the flags and outputs and prepares the bake of `selected`; the report gets the
/// frame range, fps and garments.
pub(super) fn prepare<'a>(
    args: &SimulateArgs,
    selected: &'a crate::io::Selected,
    report: &mut Option<Report>,
) -> Result<Bake<'a>> {
    let bake = Bake::prepare(&args.scene, selected, &bake_settings(args)?)?;
    if let Some(r) = report.as_mut() {
        let (first, last) = bake.frames();
        r.set("frames", json!([first, last]));
        r.set("fps", json!(bake.fps()));
        r.set(
            "garments",
            (bake.tracks().iter())
                .map(|t| {
                    json!({
                        "name": t.garment.name, "vertices": t.sim.model().len(),
                        "triangles": t.sim.model().triangles.len(),
                        "output_points": t.garment.output_points.len(),
                    })
                })
                .collect(),
        );
    }
    Ok(bake)
}

/// Runs `bake` to the end; a stop request (a signal) becomes [`Error::Interrupted`].
pub(super) fn run_bake(bake: &mut Bake, watch: &mut Watch) -> Result<()> {
    match bake.run(watch, &interrupt::stop())? {
        Outcome::Finished => Ok(()),
        Outcome::Stopped { after_frame, kept } => Err(Error::Interrupted(format!(
            "stopped by a signal after frame {after_frame}; {kept}"
        ))),
    }
}

/// The CLI's observer of a bake: the progress display and the `--report`.
pub(super) struct Watch<'p> {
    command: &'static str,
    /// The progress display.
    pub progress: &'p mut Progress,
    /// The report being collected, if any.
    pub report: &'p mut Option<Report>,
}

impl<'p> Watch<'p> {
    /// The observer of command `command`.
    pub fn new(
        command: &'static str,
        progress: &'p mut Progress,
        report: &'p mut Option<Report>,
    ) -> Self {
        Watch {
            command,
            progress,
            report,
        }
    }
}

impl Observer for Watch<'_> {
    fn start(&mut self, start: &bake::Start) {
        self.progress
            .start(self.command, start.frames, &start.garments);
    }

    fn frame(&mut self, f: &bake::Frame) {
        let sum = f.sum();
        self.progress
            .frame(f.frame, f.done, f.total, sum.steps, sum.cg_iterations);
        if let (Some(r), false) = (self.report.as_mut(), f.garments.is_empty()) {
            r.frame(f.frame, f.seconds, f.garments);
        }
    }

    fn warning(&mut self, message: &str) {
        self.progress.warning(message);
    }

    fn done(&mut self, outputs: &Outputs) {
        let paths = display(outputs);
        if let Some(r) = self.report.as_mut() {
            r.outputs(paths.clone(), outputs.frames);
        }
        self.progress.done(&paths, outputs.frames);
    }

    fn kept(&mut self, partial: &Outputs) {
        if let Some(r) = self.report.as_mut() {
            r.outputs(display(partial), partial.frames);
        }
    }

    fn failed(&mut self, f: &bake::Failure) {
        if let Some(r) = self.report.as_mut() {
            r.set("trouble", place(f));
        }
    }

    fn torn(&mut self, f: &bake::Failure) {
        if let Some(r) = self.report.as_mut() {
            r.append("tears", place(f));
        }
    }
}

/// Where a frame went wrong as the report gives it (`trouble`, `tears`).
fn place(f: &bake::Failure) -> serde_json::Value {
    let t = f.trouble;
    serde_json::json!({
        "garment": f.garment,
        "frame": f.frame,
        "cause": t.cause,
        "particles": t.particles,
        "vertices": f.vertices,
        "body": t.body,
        "body_speed": t.body_speed,
        "strain": t.strain,
    })
}

fn display(outputs: &Outputs) -> Vec<String> {
    (outputs.paths.iter())
        .map(|p| p.display().to_string())
        .collect()
}
