//! Profiling harnesses of the solver (ignored: timing, not a check). Each prints one line
//! of figures per run:
//!
//! ```text
//! cargo test --release --lib linalg::tests::perf -- --ignored --nocapture
//! ```
//! `perf_report` simulates a scene, `assembly_report`, `precond_report` and
//! `deflation_report` time one kernel each. Their knobs are environment variables:
//! [`PerfKnobs`] (scene, size, frames, threads, repetitions, a dump of the final
//! positions to compare runs) and the solver overrides of [`SolverKnobs`].
use crate::bench;
use crate::bench::knobs::{PerfKnobs, SolverKnobs};
use crate::linalg::Preconditioner;
use crate::model::{ClothModel, UvScale};
use crate::pipeline::Simulator;
use crate::scene::Material;
use std::time::Instant;

/// Median over `rounds` rounds of the microseconds per call of `f` (`reps` calls a round).
fn median_us(rounds: usize, reps: usize, f: &mut dyn FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..rounds)
        .map(|_| {
            let started = Instant::now();
            for _ in 0..reps {
                f();
            }
            1e6 * started.elapsed().as_secs_f64() / reps as f64
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// The system of the fig.-1 sheet with `side` particles per side, crumpled as in
/// [`assembly_report`], its positions, and the filters of a drape (every 50th particle in
/// contact with a horizontal plane).
fn crumpled_drape(
    side: usize,
) -> (
    crate::pipeline::assemble::System,
    Vec<crate::Vec3>,
    Vec<Option<crate::Mat3>>,
) {
    use crate::forces::JacobianMode;
    use crate::Vec3;
    let material = Material::default();
    let (garment, _) = bench::drape_over_sphere(side);
    let model = ClothModel::build(&garment, UvScale::Auto, material.density).expect("model");
    let n = model.len();
    let (x, v) = bench::crumpled_state(&model.positions, 0.02);
    let y = vec![Vec3::zeros(); n];
    let mut system = crate::pipeline::assemble::System::new(&model, &material);
    let g = Vec3::new(0.0, -9.81, 0.0);
    let mode = JacobianMode::System;
    system.assemble(&model, &x, &v, &y, 1.0 / 24.0, g, Vec3::zeros(), mode);
    let plane = crate::Mat3::from_diagonal(&Vec3::new(1.0, 0.0, 1.0));
    let filters = (0..n).map(|i| (i % 50 == 0).then_some(plane)).collect();
    (system, x, filters)
}

#[test]
#[ignore]
fn perf_report() {
    let knobs = PerfKnobs::from_env();
    let (frames, side, scene) = (knobs.frames, knobs.side, knobs.scene.as_str());
    let material = match &knobs.material {
        Some(name) => Material::preset(name).expect("material preset"),
        None => Material::default(),
    };
    // IC(0) without warm start unless the environment says otherwise.
    let mut params = bench::default_params();
    params.preconditioner = Preconditioner::BlockIncompleteCholesky;
    params.cg_warm_start = false;
    let params = SolverKnobs::from_env().apply(params);
    let threads = knobs.threads.unwrap_or(2);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool");
    // Inside the pool, so that with one thread every kernel runs on the caller's stack
    // (callgrind's inclusive costs then add up).
    pool.install(|| {
        let (garment, bodies) = if scene == "sheet" {
            (bench::sheet(side), vec![])
        } else if scene == "drop" {
            let (g, floor) = crate::fixtures::dropped_sheet_and_floor();
            (g, vec![floor])
        } else {
            let (g, sphere) = bench::drape_over_sphere(side);
            (g, vec![sphere])
        };
        let model = ClothModel::build(&garment, UvScale::Auto, material.density).expect("model");
        let n = model.len();
        let mut sim = Simulator::new(model, &material, &garment.pin, params.clone())
            .with_bodies(&bodies, &material, 0.0, 24.0)
            .expect("bodies");
        let started = Instant::now();
        let (mut steps, mut cg, mut rej, mut fallbacks) = (0, 0, 0, 0);
        let (mut strain, mut pen) = (0.0f64, 0.0f64);
        for _ in 0..frames {
            let s = match crate::bake::advance_frame(&mut sim, None, 24.0) {
                Ok(s) => s,
                Err(e) => {
                    println!("PERF error at t = {:.3}: {e}", sim.time());
                    return;
                }
            };
            steps += s.steps;
            cg += s.cg_iterations;
            rej += s.rejections;
            fallbacks += s.definite_fallbacks;
            strain = strain.max(s.max_strain);
            pen = pen.max(sim.max_penetration());
            if knobs.verbose {
                println!(
                    "frame: {} steps, {} rejections, {} CG, strain {:.4}",
                    s.steps, s.rejections, s.cg_iterations, s.max_strain
                );
            }
        }
        let ms = 1000.0 * started.elapsed().as_secs_f64() / frames as f64;
        println!(
            "PERF {scene} n={n} {:?} tol={} warm={} threads={threads}: {ms:.1} ms/frame, \
             {:.2} steps/frame, {:.1} CG/step, {rej} rejections, {fallbacks} definite \
             fallbacks, max strain {strain:.4}, max penetration {:.2} mm",
            params.preconditioner,
            params.cg_tolerance,
            params.cg_warm_start,
            steps as f64 / frames as f64,
            cg as f64 / steps.max(1) as f64,
            pen * 1e3
        );
        if let Some(path) = &knobs.dump {
            let text: String = sim
                .positions()
                .iter()
                .map(|p| format!("{:.17e} {:.17e} {:.17e}\n", p.x, p.y, p.z))
                .collect();
            std::fs::write(path, text).expect("dump");
        }
    });
}

/// `cargo test --release --lib linalg::tests::perf::assembly_report -- --ignored --nocapture`:
/// milliseconds per [`System::assemble`](crate::pipeline::assemble::System) of the
/// 2,601-particle fig.-1 sheet, crumpled by a smooth displacement so that every force is
/// active, on `DRAPE_PERF_THREADS` threads (default 1; `DRAPE_PERF_ASSEMBLIES`
/// repetitions, default 200).
#[test]
#[ignore]
fn assembly_report() {
    use crate::forces::JacobianMode;
    use crate::pipeline::assemble::System;
    use crate::Vec3;
    let knobs = PerfKnobs::from_env();
    let (reps, side) = (knobs.assemblies, knobs.side);
    let material = Material::default();
    let (garment, _) = bench::drape_over_sphere(side);
    let model = ClothModel::build(&garment, UvScale::Auto, material.density).expect("model");
    let (x, v) = bench::crumpled_state(&model.positions, 0.02);
    let y = vec![Vec3::zeros(); x.len()];
    let mut system = System::new(&model, &material);
    let threads = knobs.threads.unwrap_or(1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool");
    pool.install(|| {
        let g = Vec3::new(0.0, -9.81, 0.0);
        let h = 1.0 / 24.0;
        let mut started = Instant::now();
        // The first assembly warms the caches and is not timed.
        for rep in 0..=reps {
            if rep == 1 {
                started = Instant::now();
            }
            let zero = Vec3::zeros();
            system.assemble(&model, &x, &v, &y, h, g, zero, JacobianMode::System);
        }
        let ms = 1000.0 * started.elapsed().as_secs_f64() / reps as f64;
        let checksum: f64 = system.matrix.values.iter().map(|m| m.sum()).sum::<f64>()
            + system.rhs.iter().map(|b| b.sum()).sum::<f64>();
        println!(
            "ASSEMBLY n={} {ms:.3} ms per assembly ({threads} threads), checksum {checksum:.12e}",
            x.len()
        );
    });
}

/// `cargo test --release --lib linalg::tests::perf::precond_report -- --ignored --nocapture`:
/// microseconds per IC(0) factorisation, per sweep pair (`apply`) and per pattern set-up
/// (slot maps + elimination order) of the fig.-1 sheet's system matrix (crumpled as in
/// [`assembly_report`]) at `DRAPE_PERF_SIDES` (default `51,100`) particles per side, for
/// the natural and the separator order on 1 and 2 threads, the other workers spinning as
/// they do inside `Simulator::advance` (`pipeline::workers`; otherwise every join would
/// wake a sleeping worker and time that wake-up). Each figure is the median of
/// `DRAPE_PERF_ROUNDS` (default 9) rounds of `DRAPE_PERF_REPS` (default 100) calls.
#[test]
#[ignore]
fn precond_report() {
    use crate::linalg::precond::{EliminationOrder, TriangularFactor};
    use crate::Vec3;
    let knobs = PerfKnobs::from_env();
    let (reps, rounds) = (knobs.reps.unwrap_or(100), knobs.rounds);
    let median_us = |f: &mut dyn FnMut()| median_us(rounds, reps, f);
    for &side in &knobs.sides {
        let (system, x, filters) = crumpled_drape(side);
        let n = x.len();
        let a = &system.matrix;
        let r: Vec<Vec3> = x.iter().map(|p| Vec3::new(p.y, p.z, p.x)).collect();
        let filter = |i: usize| filters[i];
        let ord = crate::linalg::precond::order::SeparatorOrder::new(&a.pattern);
        println!(
            "PRECOND n={n} nnz={}: |A| = {}, |B| = {}, |S| = {}",
            a.pattern.nnz(),
            ord.domain_a,
            ord.domain_b,
            n - ord.domain_a - ord.domain_b
        );
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("thread pool");
            pool.install(|| {
                crate::pipeline::workers::with_spinning_workers(|| {
                    for order in [EliminationOrder::Natural, EliminationOrder::Separator] {
                        let kind = Preconditioner::BlockIncompleteCholesky;
                        let mut f = TriangularFactor::default().with_order(order);
                        let setup = median_us(&mut || {
                            let mut fresh = TriangularFactor::default().with_order(order);
                            fresh.factor(a, filter, kind);
                        });
                        let factor = median_us(&mut || {
                            f.factor(a, filter, kind);
                        });
                        let mut s = vec![Vec3::zeros(); n];
                        let mut dot = 0.0;
                        let sweeps = median_us(&mut || dot += f.apply(&r, &mut s, |_, x| x));
                        // As inside the CG: a product before each apply (only the apply
                        // timed), whose matrix evicts part of the factor from the caches.
                        let mut q = vec![Vec3::zeros(); n];
                        let mut in_cg = 0.0;
                        let total = median_us(&mut || {
                            a.mul_vec(&r, &mut q);
                            let started = Instant::now();
                            dot += f.apply(&r, &mut s, |_, x| x);
                            in_cg += started.elapsed().as_secs_f64();
                        });
                        let in_cg = 1e6 * in_cg / (rounds * reps) as f64;
                        println!(
                            "PRECOND n={n} threads={threads} {order:?}: factor {factor:.0} µs \
                         ({:?}), sweep pair {sweeps:.1} µs (after a product {in_cg:.1} µs, \
                         with it {total:.1} µs), pattern set-up {:.0} µs \
                         (checksum {dot:.6e})",
                            f.stats,
                            setup - factor
                        );
                    }
                })
            });
        }
    }
}

/// `cargo test --release --lib linalg::tests::perf::deflation_report -- --ignored --nocapture`:
/// microseconds per [`Deflation`](crate::linalg::deflation::Deflation) call (`prepare`,
/// `project`, `correct`) on the fig.-1 sheet's system matrix (crumpled as in
/// [`assembly_report`], every 50th particle on a plane) at `DRAPE_PERF_SIDES` (default
/// `51,100`) particles per side, 2 threads; medians of `DRAPE_PERF_ROUNDS` (default 9)
/// rounds of `DRAPE_PERF_REPS` (default 200) calls.
#[test]
#[ignore]
fn deflation_report() {
    use crate::linalg::deflation::Deflation;
    use crate::Vec3;
    let knobs = PerfKnobs::from_env();
    let (reps, rounds) = (knobs.reps.unwrap_or(200), knobs.rounds);
    let median_us = |f: &mut dyn FnMut()| median_us(rounds, reps, f);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("thread pool");
    for &side in &knobs.sides {
        pool.install(|| {
            let (system, x, filters) = crumpled_drape(side);
            let n = x.len();
            let a = &system.matrix;
            let filter = |i: usize| filters[i];
            let mut d = Deflation::default();
            assert!(d.prepare(a, filter));
            let prepare = median_us(&mut || {
                d.prepare(a, filter);
            });
            let mut r: Vec<Vec3> = (0..n)
                .map(|i| filter(i).map_or(x[i], |s| s * x[i]))
                .collect();
            let project = median_us(&mut || d.project(&mut r));
            let r2 = r.clone();
            let correct = median_us(&mut || {
                d.correct(&mut r, &r2, filter);
            });
            let mut q = vec![Vec3::zeros(); n];
            let spmv = median_us(&mut || a.mul_vec(&r, &mut q));
            println!(
                "DEFLATION n={n} aggregates={}: prepare {prepare:.0} µs, project {project:.1} µs, \
                 correct {correct:.1} µs (a product with A: {spmv:.1} µs)",
                d.aggregate_of()
                    .map_or(0, |g| g.iter().max().map_or(0, |m| m + 1))
            );
        });
    }
}
