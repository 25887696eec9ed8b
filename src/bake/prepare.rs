//! From a selected scene and checked settings to a [`Bake`] ready to run: every output
//! checked up front, one simulator per garment.
//!
//! Order of work, so that bad input costs no simulation time: the frame rate and range
//! are resolved and checked ([`FPS_RANGE`], [`MAX_FRAMES`], [`CACHE_BUDGET`]), every
//! output is checked ([`cache::check_output`]: format, `$F` field,
//! directory exists and is writable, no overwrite without `force`), then the cloth models
//! are built and the simulators set up with their bodies and pin animations. The caches
//! are opened only when the bake runs.
use super::checkpoint::{checkpoint_path, Checkpoints, Every, Fingerprint};
use super::{Bake, CacheTransform, Track};
use crate::cache;
use crate::error::{Error, Result};
use crate::io::Selected;
use crate::model::{ClothModel, Rest, UvScale};
use crate::pipeline::{ForceModel, Integrator, Simulator, SolverParams};
use crate::scene::{Garment, Material, UpAxis};
use crate::Vec3;
use std::path::{Path, PathBuf};

/// Frames per second when neither the settings nor the scene give any.
pub const DEFAULT_FPS: f64 = 24.0;

/// Inclusive frame range when neither the settings nor the scene give any: two seconds
/// at [`DEFAULT_FPS`].
pub const DEFAULT_FRAMES: (i32, i32) = (1, 48);

/// Frame rates a bake accepts (frames per second, inclusive): below 1 a frame lasts
/// more than a second of simulated time, above 1000 the frames are shorter than any
/// animation needs.
pub const FPS_RANGE: (f64, f64) = (1.0, 1000.0);

/// Largest time steps a bake accepts (s, inclusive): below 10 µs a frame at 24 fps takes
/// more than 4,000 steps; above 1 s is never used (the step is capped at one frame).
pub const MAX_STEP_RANGE: (f64, f64) = (1e-5, 1.0);

/// Most frames one bake writes (over 11 hours at 24 fps).
pub const MAX_FRAMES: u64 = 1_000_000;

/// Most bytes of point data all the caches of one bake may hold: frames × output points ×
/// 12 bytes (three f32), summed over garments. 16 GiB; a larger bake is split into
/// several `--frames` ranges.
pub const CACHE_BUDGET: u64 = 16 << 30;

/// What a bake of a selected scene needs besides the scene; every field checked by the
/// caller where it came from (flags, a scene file), resolved against the scene here.
#[derive(Debug, Clone)]
pub struct BakeSettings {
    /// Material of the garments the scene file gives none. Default: cotton.
    pub material: Material,
    /// Metres per UV unit. Default: [`UvScale::Auto`] (each panel's UV area made equal to
    /// its 3D area at the first frame).
    pub uv_scale: UvScale,
    /// Rest state: the UV panels, the modelled shape at the first frame, or per panel the
    /// panel where it matches the shape (`--rest`, docs/reference.md "Rest state").
    /// Default: [`Rest::Auto`]; [`Rest::Uv`] when the UVs are the sewing pattern even
    /// though the garment is modelled stretched.
    pub rest: Rest,
    /// Frames per second (> 0). Default (`None`): the scene's, else [`DEFAULT_FPS`].
    pub fps: Option<f64>,
    /// Inclusive frame range. Default (`None`): the scene's animation range, else
    /// [`DEFAULT_FRAMES`].
    pub frames: Option<(i32, i32)>,
    /// Largest time step (s, > 0; capped at one frame); steps adapt below it (Baraff §7).
    /// Default (`None`): the scene file's `solver.max_step`, else one frame.
    pub max_step: Option<f64>,
    /// Wind velocity (m/s) seen by air drag and lift; lift is on only with wind. Default:
    /// none.
    pub wind: Option<Vec3>,
    /// Time integrator. Default: [`Integrator::Implicit`].
    pub integrator: Integrator,
    /// Force model. Default: [`ForceModel::Continuum`].
    pub model: ForceModel,
    /// The `--scale` the scene's lengths were multiplied by when read
    /// ([`Scene::scale_lengths`](crate::scene::Scene::scale_lengths)), for the advice of the
    /// size warnings ([`Scene::size_warnings`](crate::scene::Scene::size_warnings)).
    /// Default: 1.
    pub scale: f64,
    /// Axis convention of the caches. Default (`None`): the scene's.
    pub up: Option<UpAxis>,
    /// Cache path, the extension picking the format; `{garment}` expands to each
    /// garment's name. Default (`None`): the scene file's `out` of each garment, else
    /// `<garment>.pc2` beside the scene.
    pub out: Option<PathBuf>,
    /// Overwrite existing caches. Default: false (an existing output is a usage error).
    pub force: bool,
    /// When checkpoints are written (docs/reference.md, "Checkpoints"). Default:
    /// [`Every::Auto`], under 2% of the bake.
    pub checkpoint_every: Every,
    /// Continue an interrupted bake from its checkpoint and partial caches, or start from
    /// the first frame when there is no checkpoint (`--resume`). Default: false.
    pub resume: bool,
}

impl Default for BakeSettings {
    fn default() -> Self {
        BakeSettings {
            material: Material::default(),
            uv_scale: UvScale::Auto,
            rest: Rest::Auto,
            fps: None,
            frames: None,
            max_step: None,
            scale: 1.0,
            wind: None,
            integrator: Integrator::Implicit,
            model: ForceModel::Continuum,
            up: None,
            out: None,
            force: false,
            checkpoint_every: Every::Auto,
            resume: false,
        }
    }
}

impl<'a> Bake<'a> {
    /// Checks the outputs and builds one simulator per garment of `selected`, read from
    /// the scene file `scene` (its directory holds the default caches). The initial-state
    /// warnings are kept for [`Bake::announce`].
    pub fn prepare(scene: &Path, selected: &'a Selected, settings: &BakeSettings) -> Result<Self> {
        let s = &selected.scene;
        let fps = settings.fps.or(s.fps).unwrap_or(DEFAULT_FPS);
        let from = if settings.fps.is_some() {
            "--fps"
        } else {
            "the scene's frame rate (override it with --fps)"
        };
        in_range(from, fps, FPS_RANGE, "frames per second")?;
        let (first, last) = settings.frames.or(s.frame_range).unwrap_or(DEFAULT_FRAMES);
        check_budget((first, last), &s.garments)?;
        let dir = scene.parent().unwrap_or(Path::new(""));
        let outputs = super::outputs::output_paths(
            settings.out.as_deref(),
            dir,
            &s.garments,
            &selected.garment_settings,
        )?;
        for out in &outputs {
            if settings.resume {
                cache::check_resumable_output(out, settings.force, (first, last))?;
            } else {
                cache::check_output(out, settings.force, (first, last))?;
            }
        }
        let mut params = SolverParams::new(fps, s.up.vector());
        if let Some(h) = settings.max_step.or(selected.max_step) {
            let from = if settings.max_step.is_some() {
                "--max-step"
            } else {
                "the scene file's solver.max_step"
            };
            in_range(from, h, MAX_STEP_RANGE, "seconds")?;
            params.max_step = h.min(1.0 / fps);
        }
        if let Some(w) = settings.wind {
            params.wind = w;
            params.lift = crate::pipeline::params::DEFAULT_LIFT;
        }
        params.integrator = settings.integrator;
        params.model = settings.model;
        let cache_up = settings.up.unwrap_or(s.up);

        let fingerprint = Fingerprint::new(
            selected,
            options(settings, (first, last), fps, &params, cache_up),
        );
        let checkpoint = outputs.first().map(|o| checkpoint_path(o));
        let mut tracks = Vec::new();
        let mut warnings = s.size_warnings(settings.scale);
        for (i, (garment, out)) in s.garments.iter().zip(outputs).enumerate() {
            // A scene file may give each garment its own material.
            let material =
                match (selected.garment_settings.get(i)).and_then(|g| g.material.as_deref()) {
                    Some(m) => Material::from_arg(m)?,
                    None => settings.material.clone(),
                };
            let sim = simulator(garment, &material, settings, &params, first, fps)?.with_bodies(
                &s.bodies,
                &material,
                f64::from(first),
                fps,
            )?;
            for w in sim.initial_warnings() {
                warnings.push(format!("garment '{}': {w}", garment.name));
            }
            let transform = CacheTransform::new(garment, s.up, cache_up)?;
            tracks.push(Track::new(garment, sim).with_cache(out, transform));
        }
        let mut bake = Bake::new(tracks, (first, last), fps, cache_up);
        bake.warnings = warnings;
        bake.force = settings.force;
        bake.checkpoints =
            checkpoint.map(|path| Checkpoints::new(path, settings.checkpoint_every, fingerprint));
        if settings.resume {
            bake.resume()?;
        }
        Ok(bake)
    }
}

/// `(flag, value)` of every option of a bake that changes its result, as resolved against
/// the scene: what a checkpoint must match ([`Fingerprint`]).
fn options(
    settings: &BakeSettings,
    (first, last): (i32, i32),
    fps: f64,
    params: &SolverParams,
    up: UpAxis,
) -> Vec<(String, String)> {
    let lower = |d: &dyn std::fmt::Debug| format!("{d:?}").to_lowercase();
    [
        ("--frames", format!("{first}..{last}")),
        ("--fps", fps.to_string()),
        ("--material", format!("{:?}", settings.material)),
        ("--uv-scale", lower(&settings.uv_scale)),
        ("--rest", lower(&settings.rest)),
        ("--max-step", params.max_step.to_string()),
        (
            "--wind",
            format!("{:?}", settings.wind.map(|w| [w.x, w.y, w.z])),
        ),
        ("--integrator", lower(&settings.integrator)),
        ("--model", lower(&settings.model)),
        ("--scale", settings.scale.to_string()),
        ("--up", lower(&up)),
        ("(solver settings)", format!("{params:?}")),
    ]
    .into_iter()
    .map(|(f, v)| (f.to_string(), v))
    .collect()
}

/// The simulator of `garment` before its bodies: its cloth model, material, pins and solver
/// parameters, its pins following the garment's own animation from frame `first`.
fn simulator(
    garment: &Garment,
    material: &Material,
    settings: &BakeSettings,
    params: &SolverParams,
    first: i32,
    fps: f64,
) -> Result<Simulator> {
    let model =
        ClothModel::build_with_rest(garment, settings.rest, settings.uv_scale, material.density)?;
    let mut sim = Simulator::new(model, material, &garment.pin, params.clone());
    if let Some(anim) = &garment.animation {
        sim = sim.with_pin_animation(anim.clone(), f64::from(first), fps);
    }
    Ok(sim)
}

/// Checks that `value` of `what` (a flag or where the value came from) lies in `range`
/// (inclusive), in `unit`: a usage error naming the range otherwise.
pub fn in_range(what: &str, value: f64, (lo, hi): (f64, f64), unit: &str) -> Result<()> {
    if value.is_finite() && (lo..=hi).contains(&value) {
        return Ok(());
    }
    Err(Error::usage(format!(
        "{what} is {}, outside the accepted {}..{} {unit}; give a value in that range",
        short(value),
        short(lo),
        short(hi)
    )))
}

/// `x` as a person writes it: plain between 0.001 and 10⁶, else in e-notation (`1e-30`).
fn short(x: f64) -> String {
    if x == 0.0 || !x.is_finite() || (1e-3..1e6).contains(&x.abs()) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// Checks the frame count of `frames` against [`MAX_FRAMES`] and the point data of the
/// caches (frames × output points × 12 bytes, all garments) against [`CACHE_BUDGET`],
/// before any cache is opened.
fn check_budget((first, last): (i32, i32), garments: &[Garment]) -> Result<()> {
    let frames = (i64::from(last) - i64::from(first) + 1).max(0) as u64;
    if frames > MAX_FRAMES {
        return Err(Error::usage(format!(
            "--frames {first}..{last} is {frames} frames, more than the {MAX_FRAMES} one bake \
             writes; bake the range in parts"
        )));
    }
    let points: u64 = garments.iter().map(|g| g.output_points.len() as u64).sum();
    let bytes = frames.saturating_mul(points).saturating_mul(12);
    if bytes > CACHE_BUDGET {
        let gib = |b: u64| b as f64 / f64::from(1u32 << 30);
        return Err(Error::usage(format!(
            "--frames {first}..{last} makes {frames} frames of {points} points: {:.1} GiB of \
             cache, more than the {:.0} GiB one bake writes; bake the range in parts (several \
             --frames ranges, one cache each)",
            gib(bytes),
            gib(CACHE_BUDGET)
        )));
    }
    Ok(())
}
