//! `drape bench`: per-frame timings of the standard sheets or of given scenes (each a
//! bake without caches, timed: [`crate::bench`]).
use super::args::BenchArgs;
use crate::bench::{self, BenchResult};
use crate::error::{Error, Result};
use crate::scene::Material;

/// Runs `drape bench`. SIGINT/SIGTERM end it within a step, with exit 130 and the lines of
/// the garments already timed.
pub fn run(args: &BenchArgs) -> Result<()> {
    if args.frames == 0 {
        return Err(Error::usage("--frames must be at least 1"));
    }
    super::interrupt::install(false);
    let stop = super::interrupt::stop();
    let interrupted = || {
        Error::Interrupted(
            "drape bench stopped by a signal; the lines above are the garments timed".into(),
        )
    };
    let material = Material::default();
    let mut results: Vec<BenchResult> = Vec::new();
    if args.scenes.is_empty() {
        for side in bench::SHEET_SIDES {
            let g = bench::sheet(side);
            let fps = crate::bake::DEFAULT_FPS;
            let params = bench::default_params();
            let timing = (fps, args.frames, f64::INFINITY);
            let r = bench::run_until(&g, &[], (&material, &params), timing, &stop)?;
            if stop.requested() {
                return Err(interrupted());
            }
            if !args.json {
                print_line(&r)?;
            }
            results.push(r);
        }
    } else {
        for path in &args.scenes {
            let scene = crate::io::load_garments(path, &[])?;
            let fps = scene.fps.unwrap_or(crate::bake::DEFAULT_FPS);
            let params = crate::pipeline::SolverParams::new(fps, scene.up.vector());
            for g in &scene.garments {
                let timing = (fps, args.frames, f64::INFINITY);
                let r = bench::run_until(g, &[], (&material, &params), timing, &stop)?;
                if stop.requested() {
                    return Err(interrupted());
                }
                if !args.json {
                    print_line(&r)?;
                }
                results.push(r);
            }
        }
    }
    if args.json {
        let text = serde_json::to_string_pretty(&results)
            .map_err(|e| Error::Internal(format!("bench JSON: {e}")))?;
        super::process::print(&format!("{text}\n"))?;
    }
    Ok(())
}

fn print_line(r: &BenchResult) -> Result<()> {
    super::process::print(&format!(
        "{:<24} {:>6} particles  {:>9.2} ms/frame  {:>5.2} steps/frame  {:>6.1} CG it/step  {} rejections  max strain {:.4}\n",
        r.name, r.particles, r.ms_per_frame, r.steps_per_frame, r.cg_per_step, r.rejections, r.final_max_strain
    ))
}
