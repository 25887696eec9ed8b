//! `cargo bench --bench control`: keyframe control on Baraff's two-corner sheet (issue 6's
//! benchmark). 2,500 particles, 60 frames at 24 fps; the keyframe is frame 60 of the same
//! sheet simulated in a wind the controller does not know. Prints JSON lines:
//! one plain simulation's seconds, one evaluation (forward + adjoint) as a multiple of it,
//! every L-BFGS iteration (seconds, keyframe error), iterations to a 95% error reduction,
//! and the peak resident memory (VmHWM).
//!
//! The optimisation stops at the first iteration with 95% less keyframe error unless told
//! to run on. Environment: [`drape::bench::knobs::ControlKnobs`] (problem size,
//! iterations, full run, frozen-Jacobian adjoint).
use drape::bake::advance_frame;
use drape::bench;
use drape::bench::knobs::ControlKnobs;
use drape::control::keyframes::Keyframe;
use drape::control::problem::{optimiser_settings, ControlProblem, ControlSettings};
use drape::model::{ClothModel, UvScale};
use drape::pipeline::Simulator;
use drape::scene::Material;
use drape::Vec3;
use std::ops::ControlFlow;
use std::time::Instant;

fn main() {
    // On a worker of a pool, as the CLI runs (see `drape::bench::in_pool`).
    drape::bench::in_pool(bench_main);
}

fn bench_main() {
    let knobs = ControlKnobs::from_env();
    let (side, frames, iterations) = (knobs.side, knobs.frames, knobs.iterations);
    let material = Material::default();
    let g = bench::sheet(side);
    let model = ClothModel::build(&g, UvScale::Auto, material.density).expect("sheet model");
    let calm = Simulator::new(model, &material, &g.pin, bench::default_params());
    let mut windy_params = bench::default_params();
    windy_params.wind = Vec3::new(3.0, 0.0, 1.5);
    let mut windy = Simulator::new(calm.model().clone(), &material, &g.pin, windy_params);
    let started = Instant::now();
    let mut plain = calm.clone();
    for _ in 0..frames {
        advance_frame(&mut plain, None, 24.0).expect("plain simulation");
    }
    let plain_s = started.elapsed().as_secs_f64();
    for _ in 0..frames {
        advance_frame(&mut windy, None, 24.0).expect("windy simulation");
    }
    let key = Keyframe {
        frame: frames as i32,
        positions: windy.positions().to_vec(),
        weights: vec![1.0; g.positions.len()],
        name: format!("windy frame {frames}"),
    };
    let particles = calm.model().len();
    let exact = !knobs.frozen;
    let settings = ControlSettings {
        regularization: 1e-6,
        exact_adjoint: exact,
        ..ControlSettings::default()
    };
    let full = knobs.full;
    let problem = ControlProblem::new(calm, &[key], 0, 24.0, settings).expect("problem");
    let theta = vec![0.0; problem.variables()];
    let started = Instant::now();
    let first = problem.evaluate(&theta).expect("evaluation");
    let eval_s = started.elapsed().as_secs_f64();
    println!(
        "{{\"particles\":{particles},\"frames\":{frames},\"plain_simulation_s\":{plain_s:.3},\"evaluation_s\":{eval_s:.3},\"evaluation_over_simulation\":{:.3},\"forward_cg\":{},\"adjoint_cg\":{},\"initial_keyframe_error_m\":{:.5},\"exact_adjoint\":{}}}",
        eval_s / plain_s,
        first.forward_iterations,
        first.adjoint_iterations,
        first.breakdown.keyframe_error,
        exact
    );
    let initial = first.breakdown.keyframe_error;
    let mut reached: Option<usize> = None;
    let lbfgs = optimiser_settings(iterations);
    let solution = problem
        .optimise(&lbfgs, |it| {
            let e = it.breakdown.keyframe_error;
            if reached.is_none() && e <= 0.05 * initial {
                reached = Some(it.iteration);
            }
            println!(
                "{{\"iteration\":{},\"seconds\":{:.2},\"evaluations\":{},\"keyframe_error_m\":{e:.5},\"objective\":{:.6e}}}",
                it.iteration, it.seconds, it.evaluations, it.breakdown.total()
            );
            if reached.is_some() && !full {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })
        .expect("optimisation");
    let total_s = started.elapsed().as_secs_f64() - eval_s;
    println!(
        "{{\"iterations\":{},\"evaluations\":{},\"seconds_per_iteration\":{:.2},\"iteration_over_simulation\":{:.2},\"iterations_to_95_percent\":{},\"final_reduction\":{:.4},\"stop\":\"{:?}\",\"peak_memory_mb\":{:.0}}}",
        solution.iterations,
        solution.evaluations,
        total_s / solution.iterations.max(1) as f64,
        total_s / solution.iterations.max(1) as f64 / plain_s,
        reached.map_or("null".to_string(), |r| r.to_string()),
        1.0 - solution.best.keyframe_error / initial,
        solution.stop,
        bench::fit::peak_resident_bytes().map_or(f64::NAN, |b| b as f64 / (1024.0 * 1024.0))
    );
}
