//! `cargo bench --bench integrators`: accuracy and speed of every integrator (issue 9).
//!
//! Accuracy (Kang & Cho §7, eqs. 35–37): the 400-particle two-corner sheet (20 × 20, 1 m,
//! cotton) falls for 12 frames (0.5 s at 24 fps) with each integrator at largest steps of
//! 1/24 s and 1/120 s (explicit: 1/24 s only, its sub-steps set its accuracy); the
//! reference is the implicit integrator at 1/2400 s. At every frame (check point) with
//! `Δx_i` a particle's motion since the previous one:
//!
//! ```text
//! E = (1/n) Σ_i ‖Δx_i^ref − Δx_i^exp‖² / ‖Δx_i^ref‖²        (eqs. 35–36)
//! S = (1/n) Σ_i (Δx̂_i^ref · Δx̂_i^exp)²                        (eq. 37)
//! ```
//! over the particles that move at least 1 mm in the reference (pins and their
//! neighbourhood excluded), averaged over the 12 check points, plus the aggregate ratio
//! `Σ‖Δx^ref − Δx^exp‖² / Σ‖Δx^ref‖²`. Speed: ms per frame on the 2,500-particle sheet
//! (`drape::bench::sheet(50)`) in the same run, `DRAPE_BENCH_FRAMES` frames
//! ([`drape::bench::knobs::BenchKnobs`], default 24;
//! the explicit integrator is left out there, its ~10⁵ sub-steps per frame would take
//! minutes). Prints markdown tables.
use drape::bake::advance_frame;
use drape::model::{ClothModel, UvScale};
use drape::pipeline::{ForceModel, Integrator, Simulator, SolverParams};
use drape::scene::{Garment, Material};
use drape::Vec3;
use std::time::Instant;

const ALL: [(Integrator, &str); 5] = [
    (Integrator::Implicit, "implicit"),
    (Integrator::Bdf2, "bdf2"),
    (Integrator::Preview, "preview"),
    (Integrator::Projective, "projective"),
    (Integrator::Explicit, "explicit"),
];

/// Particles that move less than this between check points in the reference (m) are left
/// out of E and S: near the pins the ratio of eq. 35 divides by almost nothing.
const MIN_MOTION: f64 = 1e-3;
/// Frames (check points) of the accuracy runs.
const CHECK_POINTS: usize = 12;

struct Run {
    frames: Vec<Vec<Vec3>>,
    ms_per_frame: f64,
    steps: usize,
    factorizations: usize,
}

fn run(g: &Garment, integrator: Integrator, max_step: f64, frames: usize) -> Result<Run, String> {
    let material = Material::default();
    let model = ClothModel::build(g, UvScale::Auto, material.density).map_err(|e| e.to_string())?;
    let mut p = SolverParams::new(24.0, Vec3::y());
    p.integrator = integrator;
    p.model = ForceModel::Continuum;
    p.max_step = max_step;
    let mut sim = Simulator::new(model, &material, &g.pin, p);
    let mut out = vec![sim.positions().to_vec()];
    let mut steps = 0;
    let started = Instant::now();
    for _ in 0..frames {
        let stats = advance_frame(&mut sim, None, 24.0).map_err(|e| e.to_string())?;
        steps += stats.steps;
        out.push(sim.positions().to_vec());
    }
    Ok(Run {
        frames: out,
        ms_per_frame: 1000.0 * started.elapsed().as_secs_f64() / frames.max(1) as f64,
        steps,
        factorizations: sim.factorizations(),
    })
}

/// Mean E and S over the check points (module doc), and the aggregate
/// `Σ_i ‖Δx_i^ref − Δx_i^exp‖² / Σ_i ‖Δx_i^ref‖²` (less sensitive to slow particles).
fn accuracy(reference: &[Vec<Vec3>], run: &[Vec<Vec3>]) -> (f64, f64, f64) {
    let (mut e_sum, mut s_sum, mut points) = (0.0, 0.0, 0);
    let (mut err2, mut ref2) = (0.0, 0.0);
    for k in 1..reference.len().min(run.len()) {
        let (mut e, mut s, mut n) = (0.0, 0.0, 0);
        for i in 0..reference[k].len() {
            let dr = reference[k][i] - reference[k - 1][i];
            let dx = run[k][i] - run[k - 1][i];
            if dr.norm() < MIN_MOTION {
                continue;
            }
            e += (dr - dx).norm_squared() / dr.norm_squared();
            err2 += (dr - dx).norm_squared();
            ref2 += dr.norm_squared();
            let c = if dx.norm() > 0.0 {
                dr.normalize().dot(&dx.normalize())
            } else {
                0.0
            };
            s += c * c;
            n += 1;
        }
        if n > 0 {
            e_sum += e / n as f64;
            s_sum += s / n as f64;
            points += 1;
        }
    }
    let m = points.max(1) as f64;
    (e_sum / m, s_sum / m, err2 / ref2.max(f64::MIN_POSITIVE))
}

fn main() {
    // On a worker of a pool, as the CLI runs (see `drape::bench::in_pool`).
    drape::bench::in_pool(bench_main);
}

fn bench_main() {
    let frames = drape::bench::knobs::BenchKnobs::from_env().frames;
    let small = drape::bench::sheet(20);
    let reference = match run(&small, Integrator::Implicit, 1.0 / 2400.0, CHECK_POINTS) {
        Ok(r) => r,
        Err(e) => {
            println!("reference failed: {e}");
            return;
        }
    };
    println!(
        "Accuracy: two-corner sheet, 400 particles, {CHECK_POINTS} frames at 24 fps; \
         reference implicit at 1/2400 s ({} steps).\n",
        reference.steps
    );
    println!(
        "| integrator | max step | E (eq. 36) | S (eq. 37) | Σ-ratio | steps | ms/frame | factorisations |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for (integrator, name) in ALL {
        for (label, h) in [("1/24 s", 1.0 / 24.0), ("1/120 s", 1.0 / 120.0)] {
            if integrator == Integrator::Explicit && h < 1.0 / 24.0 {
                continue; // its sub-steps, not the largest step, set its accuracy
            }
            match run(&small, integrator, h, CHECK_POINTS) {
                Ok(r) => {
                    let (e, s, ratio) = accuracy(&reference.frames, &r.frames);
                    println!(
                        "| {name} | {label} | {e:.4} | {s:.4} | {ratio:.4} | {} | {:.1} | {} |",
                        r.steps, r.ms_per_frame, r.factorizations
                    );
                }
                Err(err) => println!("| {name} | {label} | failed: {err} | | | | | |"),
            }
        }
    }
    let big = drape::bench::sheet(50);
    println!("\nSpeed: two-corner sheet, 2,500 particles, max step 1/24 s, {frames} frames (explicit: 1 frame, it takes about 10⁵ sub-steps per frame here).\n");
    println!("| integrator | ms/frame | steps/frame | factorisations |");
    println!("|---|---|---|---|");
    let mut implicit_ms = None;
    for (integrator, name) in ALL {
        let n = if integrator == Integrator::Explicit {
            1
        } else {
            frames
        };
        match run(&big, integrator, 1.0 / 24.0, n) {
            Ok(r) => {
                if integrator == Integrator::Implicit {
                    implicit_ms = Some(r.ms_per_frame);
                }
                let speedup = implicit_ms
                    .map(|i| format!(" ({:.1}× implicit's speed)", i / r.ms_per_frame))
                    .unwrap_or_default();
                println!(
                    "| {name} | {:.1}{speedup} | {:.1} | {} |",
                    r.ms_per_frame,
                    r.steps as f64 / n as f64,
                    r.factorizations
                );
            }
            Err(err) => println!("| {name} | failed: {err} | | |"),
        }
    }
}
