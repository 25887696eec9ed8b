//! `drape simulate`: read garments, check every output up front, simulate frame by frame,
//! write each finished frame to the caches, report.
use super::args::{IntegratorArg, ModelArg, SimulateArgs, UpArg};
use super::progress::Progress;
use super::settings;
use crate::cache::{self, CacheWriter};
use crate::error::{Error, Result};
use crate::model::ClothModel;
use crate::pipeline::{FrameStats, Simulator, SolverParams};
use crate::scene::{Garment, Material, UpAxis};
use crate::Vec3;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Runs `drape simulate`.
pub fn run(args: &SimulateArgs) -> Result<()> {
    let mut progress = Progress::new(args.progress);
    let result = simulate(args, &mut progress);
    if result.is_err() {
        progress.abandon();
    }
    result
}

fn simulate(args: &SimulateArgs, progress: &mut Progress) -> Result<()> {
    check_supported(args)?;
    let material = Material::from_arg(&args.material)?;
    let uv_scale = settings::uv_scale(&args.uv_scale)?;
    let wind = match &args.wind {
        Some(w) => settings::vector("--wind", w)?,
        None => Vec3::zeros(),
    };
    let scene = crate::io::load_garments(&args.scene, &args.garments)?;
    let fps = settings::positive("--fps", args.fps.or(scene.fps).unwrap_or(24.0))?;
    let (first, last) = match &args.frames {
        Some(f) => settings::frame_range(f)?,
        None => scene.frame_range.unwrap_or((1, 48)),
    };
    let outputs = output_paths(args, &scene.garments)?;
    for out in &outputs {
        cache::check_output(out, args.force)?;
    }
    let mut params = SolverParams::new(fps, scene.up.vector());
    if let Some(h) = args.max_step {
        params.max_step = settings::positive("--max-step", h)?.min(1.0 / fps);
    }
    params.wind = wind;

    let mut runs = Vec::new();
    for (garment, out) in scene.garments.iter().zip(&outputs) {
        let model = ClothModel::build(garment, uv_scale, material.density)?;
        let to_cache = CacheTransform::new(garment, scene.up, args.up)?;
        let sim = Simulator::new(model, &material, &garment.pin, params.clone());
        runs.push((garment, out.clone(), sim, to_cache));
    }
    let names: Vec<(String, usize)> = runs
        .iter()
        .map(|(g, _, s, _)| (g.name.clone(), s.model().len()))
        .collect();
    progress.start("simulate", (first, last), &names);

    let mut writers: Vec<Box<dyn CacheWriter>> = Vec::new();
    for (g, out, sim, tf) in &runs {
        let mut w = cache::create(out, g.output_points.len(), first)?;
        w.write_frame(&tf.points(g, sim.positions()))?;
        writers.push(w);
    }
    let total = (last - first + 1) as usize;
    progress.frame(first, 1, total, 0, 0);
    let mut report_frames = Vec::new();
    for (k, frame) in (first + 1..=last).enumerate() {
        let started = Instant::now();
        let mut sum = FrameStats::default();
        for ((g, _, sim, tf), w) in runs.iter_mut().zip(writers.iter_mut()) {
            let stats = sim.advance(1.0 / fps).map_err(|e| match e {
                Error::Simulation(m) => Error::Simulation(format!(
                    "garment '{}' at frame {frame}: {m}; the partial cache {} keeps frames {first}..{}",
                    g.name,
                    w.partial_path().display(),
                    frame - 1
                )),
                e => e,
            })?;
            w.write_frame(&tf.points(g, sim.positions()))?;
            sum.steps += stats.steps;
            sum.rejections += stats.rejections;
            sum.cg_iterations += stats.cg_iterations;
            sum.max_residual = sum.max_residual.max(stats.max_residual);
            sum.max_strain = sum.max_strain.max(stats.max_strain);
        }
        let seconds = started.elapsed().as_secs_f64();
        progress.frame(frame, k + 2, total, sum.steps, sum.cg_iterations);
        report_frames.push(json!({
            "frame": frame, "steps": sum.steps, "cg_iterations": sum.cg_iterations,
            "max_residual": sum.max_residual, "rejections": sum.rejections, "contacts": 0,
            "max_strain": sum.max_strain,
            "seconds": seconds,
        }));
    }
    let mut written = Vec::new();
    for w in writers {
        written.push(w.finish()?.display().to_string());
    }
    if let Some(path) = &args.report {
        let report = json!({
            "command": "simulate",
            "scene": args.scene.display().to_string(),
            "frames": [first, last], "fps": fps,
            "garments": runs.iter().map(|(g, _, s, _)| json!({
                "name": g.name, "vertices": s.model().len(),
                "triangles": s.model().triangles.len(),
            })).collect::<Vec<_>>(),
            "outputs": written,
            "per_frame": report_frames,
            "elapsed_s": progress.elapsed(),
        });
        let text = serde_json::to_string_pretty(&report)
            .map_err(|e| Error::Internal(format!("report: {e}")))?;
        std::fs::write(path, text).map_err(|source| Error::Output {
            path: path.clone(),
            source,
        })?;
    }
    progress.done(&written);
    Ok(())
}

/// Refuses flags whose feature this build does not have, instead of ignoring them.
fn check_supported(args: &SimulateArgs) -> Result<()> {
    if args.integrator != IntegratorArg::Implicit {
        return Err(Error::usage(
            "--integrator: only 'implicit' (Baraff–Witkin) is available in this build",
        ));
    }
    if args.model != ModelArg::Continuum {
        return Err(Error::usage(
            "--model: only 'continuum' is available in this build",
        ));
    }
    if !args.bodies.is_empty() {
        return Err(Error::usage(
            "--body: collision bodies are not supported by this build yet; remove --body",
        ));
    }
    Ok(())
}

/// One output path per garment: `-o` with `{garment}` expanded, or `<garment>.pc2`
/// beside the scene.
fn output_paths(args: &SimulateArgs, garments: &[Garment]) -> Result<Vec<PathBuf>> {
    let dir = args.scene.parent().unwrap_or(Path::new("")).to_path_buf();
    let paths: Vec<PathBuf> = garments
        .iter()
        .map(|g| match &args.out {
            Some(o) => PathBuf::from(o.to_string_lossy().replace("{garment}", &g.name)),
            None => dir.join(format!("{}.pc2", g.name)),
        })
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
    swap: Option<UpArg>,
}

impl CacheTransform {
    fn new(g: &Garment, source_up: UpAxis, up: Option<UpArg>) -> Result<Self> {
        let inverse = g.world_linear.try_inverse().ok_or_else(|| {
            Error::input(
                &g.source,
                Some(&g.name),
                "the object's transform is singular (zero scale); apply a non-zero scale",
            )
        })?;
        let swap = match (source_up, up) {
            (UpAxis::Y, Some(UpArg::Z)) => Some(UpArg::Z),
            (UpAxis::Z, Some(UpArg::Y)) => Some(UpArg::Y),
            _ => None,
        };
        Ok(CacheTransform {
            inverse,
            translation: g.world_translation,
            swap,
        })
    }

    /// One position per output point of `g`, from particle positions in world space.
    fn points(&self, g: &Garment, world: &[Vec3]) -> Vec<Vec3> {
        g.output_points
            .iter()
            .map(|&i| {
                let p = self.inverse * (world[i] - self.translation);
                match self.swap {
                    Some(UpArg::Z) => Vec3::new(p.x, -p.z, p.y),
                    Some(UpArg::Y) => Vec3::new(p.x, p.z, -p.y),
                    None => p,
                }
            })
            .collect()
    }
}
