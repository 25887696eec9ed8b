//! `drape control`: keyframe control (issue 6; Stuyck ch. 8). Reads the scene like
//! `simulate`, loads every garment's keyframes (bad keyframes fail before any work), finds
//! each garment's control forces by L-BFGS on Φ with adjoint gradients
//! ([`crate::control`]), reporting every iteration, then bakes the controlled simulation
//! into the caches with the same [`crate::bake`] as `simulate` (same writers, partial-file
//! protocol and interrupt handling). `--silhouettes FILE` adds (or, without `--keyframes`,
//! gives instead) outlines in a camera's image ([`crate::io::silhouettes`]). It exits 0 when the optimiser stops normally, whether or not the
//! keyframes are fully met; the report and progress give the remaining error.
use super::args::ControlArgs;
use super::interrupt;
use super::progress::Progress;
use super::report::Report;
use super::simulate::{load, prepare, run_bake, run_command, Watch};
use crate::control::keyframes::Keyframe;
use crate::control::problem::{optimiser_settings, ControlProblem, ControlSettings};
use crate::control::silhouette::SilhouetteKey;
use crate::error::{Error, Result};
use crate::io::keyframes;
use crate::io::silhouettes::{self, CameraSources};
use serde_json::json;
use std::ops::ControlFlow;

/// Default L-BFGS iteration cap.
const DEFAULT_ITERATIONS: usize = 40;

/// Runs `drape control`.
pub fn run(args: &ControlArgs) -> Result<()> {
    run_command(&args.sim, "control", |p, r| control(args, p, r))
}

fn control(args: &ControlArgs, progress: &mut Progress, report: &mut Option<Report>) -> Result<()> {
    if args.sim.resume || args.sim.checkpoint_every.is_some() {
        return Err(Error::usage(
            "drape control does not write checkpoints: --resume and --checkpoint-every are \
             options of drape simulate",
        ));
    }
    let selected = load(&args.sim)?;
    let mut bake = prepare(&args.sim, &selected, report)?;
    bake.without_checkpoints();
    let entry = selected.keyframes.clone();
    let source = match (&args.keyframes, &entry) {
        (Some(s), _) => s.clone(),
        (None, Some(e)) => e.source.clone(),
        (None, None) => args.sim.scene.clone(),
    };
    let regularization = args
        .regularization
        .or(entry.as_ref().and_then(|e| e.regularization))
        .unwrap_or(ControlSettings::default().regularization);
    if !(regularization.is_finite() && regularization >= 0.0) {
        return Err(Error::usage(format!(
            "--regularization must be a number ≥ 0, got {regularization}"
        )));
    }
    let beta = args.key_velocity_weight;
    if !(beta.is_finite() && beta >= 0.0) {
        return Err(Error::usage(format!(
            "--key-velocity-weight must be a number ≥ 0, got {beta}"
        )));
    }
    let iterations = args
        .iterations
        .or(entry
            .as_ref()
            .and_then(|e| e.iterations.map(|i| i as usize)))
        .unwrap_or(DEFAULT_ITERATIONS);
    let (fps, frames) = (bake.fps(), bake.frames());
    // With --silhouettes, 3D keyframes only when --keyframes names them too.
    let shapes = args.silhouettes.is_none() || args.keyframes.is_some();
    if args.silhouettes.is_some() && bake.tracks().len() > 1 {
        return Err(Error::usage(format!(
            "--silhouettes steers one garment and the scene selects {}; choose it with              --garment NAME",
            bake.tracks().len()
        )));
    }
    // Every garment's keyframes first: bad keyframes cost no simulation time.
    let keys: Vec<Vec<Keyframe>> = (bake.tracks().iter())
        .map(|t| match shapes {
            true => keyframes::load(&source, t.garment, fps, frames),
            false => Ok(Vec::new()),
        })
        .collect::<Result<_>>()?;
    // A named camera is placed at the keyframes' times at the run's frame rate.
    let options = args.sim.input.read_options(Some(fps))?;
    let silhouettes: Vec<Vec<SilhouetteKey>> = (bake.tracks().iter())
        .map(|t| match &args.silhouettes {
            Some(file) => {
                let files = [args.sim.scene.clone(), t.garment.source.clone()];
                let sources = CameraSources {
                    files: &files,
                    options: &options,
                    scale: args.sim.scale,
                };
                silhouettes::load(file, t.garment, sources, frames)
            }
            None => Ok(Vec::new()),
        })
        .collect::<Result<_>>()?;
    if let Some(r) = report.as_mut() {
        if shapes {
            r.set("keyframes", json!(source.display().to_string()));
        }
        if let Some(file) = &args.silhouettes {
            r.set("silhouettes", json!(file.display().to_string()));
        }
        r.set("regularization", json!(regularization));
    }
    bake.announce(&mut Watch::new("control", progress, report));
    let settings = ControlSettings {
        regularization,
        velocity_weight: beta,
        ..ControlSettings::default()
    };
    let lbfgs = optimiser_settings(iterations);
    let mut summaries = Vec::new();
    let tracks = bake.tracks_mut().iter_mut().zip(&keys).zip(&silhouettes);
    for ((track, keys), outlines) in tracks {
        let name = track.garment.name.clone();
        // Forward and adjoint passes stop inside a frame or a sweep on a signal.
        track.sim.set_stop(interrupt::stop());
        let problem = ControlProblem::with_silhouettes(
            track.sim.clone(),
            keys,
            outlines,
            frames.0,
            fps,
            settings.clone(),
        )?;
        let (has_keys, has_outlines) = (!keys.is_empty(), !outlines.is_empty());
        let solution = problem
            .optimise(&lbfgs, |it| {
                let b = &it.breakdown;
                let error = has_keys.then_some(b.keyframe_error);
                let silhouette = has_outlines.then_some((b.silhouette_error, b.silhouette_iou));
                progress.iteration(
                    &name,
                    (it.iteration, iterations),
                    b.total(),
                    error,
                    silhouette,
                );
                if let Some(r) = report.as_mut() {
                    let mut entry = json!({
                        "garment": name, "iteration": it.iteration, "objective": b.total(),
                        "keyframe_error": error.or(silhouette.map(|s| s.0)).unwrap_or(0.0),
                        "force_term": b.forces,
                        "gradient_norm": it.gradient_norm, "evaluations": it.evaluations,
                        "seconds": it.seconds,
                    });
                    if has_outlines {
                        entry["silhouette_term"] = json!(b.silhouettes);
                        entry["silhouette_error"] = json!(b.silhouette_error);
                        entry["silhouette_iou"] = json!(b.silhouette_iou);
                    }
                    r.iteration(entry);
                }
                if interrupt::requested() {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            })
            .map_err(|e| match e {
                Error::Interrupted(_) => Error::Interrupted(format!(
                    "stopped by a signal while optimising garment '{name}'; no cache was written \
                 (the controlled cache is baked after the optimisation)"
                )),
                e => e,
            })?;
        let objective = problem.objective();
        let forces = (0..objective.horizon())
            .map(|n| objective.forces(&solution.theta, n))
            .collect();
        track.control(problem.controlled(), forces);
        let (initial, best) = (&solution.initial, &solution.best);
        let mut summary = json!({
            "garment": name,
            "keyframes": keys.iter().map(|k| k.frame).collect::<Vec<_>>(),
            "initial_keyframe_error": initial.keyframe_error,
            "final_keyframe_error": best.keyframe_error,
            "iterations": solution.iterations,
            "evaluations": solution.evaluations,
            "stop": format!("{:?}", solution.stop),
        });
        if has_outlines {
            summary["silhouettes"] = json!(outlines.iter().map(|k| k.frame).collect::<Vec<_>>());
            summary["initial_silhouette_error"] = json!(initial.silhouette_error);
            summary["final_silhouette_error"] = json!(best.silhouette_error);
            summary["initial_silhouette_iou"] = json!(initial.silhouette_iou);
            summary["final_silhouette_iou"] = json!(best.silhouette_iou);
        }
        summaries.push(summary);
        let mut told = Vec::new();
        if has_keys {
            told.push(format!(
                "keyframe error {:.1} mm → {:.1} mm",
                1e3 * initial.keyframe_error,
                1e3 * best.keyframe_error
            ));
        }
        if has_outlines {
            told.push(format!(
                "silhouette IoU {:.3} → {:.3}",
                initial.silhouette_iou, best.silhouette_iou
            ));
        }
        progress.info(&format!(
            "garment '{name}': {} after {} iterations ({:?})",
            told.join(", "),
            solution.iterations,
            solution.stop
        ));
    }
    if let Some(r) = report.as_mut() {
        r.set("control", json!(summaries));
    }
    run_bake(&mut bake, &mut Watch::new("control", progress, report))
}
