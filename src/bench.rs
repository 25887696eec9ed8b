//! Standard benchmark scenes and their per-frame timing, shared by `cargo bench` and
//! `drape bench` so both report the same figures.
//!
//! The reference is Baraff & Witkin §8, table 1: the two-corner sheet of fig. 2 at 500,
//! 900, 2,602 and 7,400 particles took 0.23, 0.46, 2.23 and 10.3 s per frame on a 1998 CPU.
use crate::error::Result;
use crate::fixtures::{SheetPlane, SheetSpec};
use crate::linalg::Preconditioner;
use crate::model::{ClothModel, UvScale};
use crate::pipeline::{Simulator, SolverParams};
use crate::scene::{Body, Garment, Material, UpAxis};
use crate::Vec3;
use serde::Serialize;
use std::time::Instant;

/// Timing of one scene.
#[derive(Debug, Clone, Serialize)]
pub struct BenchResult {
    /// Scene name.
    pub name: String,
    /// Particles after welding.
    pub particles: usize,
    /// Simulated frames (after the first).
    pub frames: usize,
    /// Wall-clock milliseconds per simulated frame.
    pub ms_per_frame: f64,
    /// Accepted steps per frame.
    pub steps_per_frame: f64,
    /// Average PCG iterations per accepted step.
    pub cg_per_step: f64,
    /// Rejected steps in total.
    pub rejections: usize,
    /// Largest stretch strain at the end (max |‖w‖ − 1|).
    pub final_max_strain: f64,
    /// Share of the run time spent on cloth–solid collision detection (Baraff's C/S).
    pub cloth_solid_share: f64,
    /// Share of the run time spent on cloth self-collision detection (Baraff's C/C).
    pub cloth_cloth_share: f64,
    /// Wall-clock milliseconds of each simulated frame, in order (not in the JSON).
    #[serde(skip)]
    pub frame_ms: Vec<f64>,
}

/// Runs `f` on a rayon pool of one worker per core, as the CLI runs every command
/// (`cli::with_threads`), so that the caller's thread is one of the workers. Outside a
/// pool the sequential parts of a step (the IC(0) sweeps) run on a thread of their own
/// while every worker spins for the next parallel pass, three threads on two cores: the
/// fig.-1 drape took 9% longer per frame that way. Falls back to running `f` directly if
/// no pool can be started.
pub fn in_pool<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    match rayon::ThreadPoolBuilder::new().build() {
        Ok(pool) => pool.install(f),
        Err(_) => f(),
    }
}

/// Simulates `garment` for `frames` frames at `fps` with `material` and times it.
pub fn run_garment(
    garment: &Garment,
    material: &Material,
    params: &SolverParams,
    fps: f64,
    frames: usize,
) -> Result<BenchResult> {
    run_scene(garment, &[], material, params, fps, frames)
}

/// Simulates `garment` against `bodies` for `frames` frames and times it.
pub fn run_scene(
    garment: &Garment,
    bodies: &[Body],
    material: &Material,
    params: &SolverParams,
    fps: f64,
    frames: usize,
) -> Result<BenchResult> {
    run_scene_within(
        garment,
        bodies,
        material,
        params,
        fps,
        frames,
        f64::INFINITY,
    )
}

/// Like [`run_scene`], but stops at the first frame boundary after `budget_s` seconds of
/// simulation (at least one frame is simulated); `frames` of the result is the number
/// actually simulated and `frame_ms` their times. For runs whose cost is not known up
/// front (the scaling benchmark at 30,000 particles).
pub fn run_scene_within(
    garment: &Garment,
    bodies: &[Body],
    material: &Material,
    params: &SolverParams,
    fps: f64,
    frames: usize,
    budget_s: f64,
) -> Result<BenchResult> {
    if rayon::current_thread_index().is_none() {
        return in_pool(|| {
            run_scene_within(garment, bodies, material, params, fps, frames, budget_s)
        });
    }
    let model = ClothModel::build(garment, UvScale::Auto, material.density)?;
    let particles = model.len();
    let mut sim = Simulator::new(model, material, &garment.pin, params.clone())
        .with_bodies(bodies, material, 0.0, fps)?;
    let started = Instant::now();
    let (mut steps, mut cg, mut rejections) = (0, 0, 0);
    let (mut solid, mut cloth) = (0.0, 0.0);
    let mut frame_ms = Vec::with_capacity(frames);
    while frame_ms.len() < frames {
        let frame_started = Instant::now();
        let s = sim.advance(1.0 / fps)?;
        frame_ms.push(1000.0 * frame_started.elapsed().as_secs_f64());
        steps += s.steps;
        cg += s.cg_iterations;
        rejections += s.rejections;
        solid += s.cloth_solid_seconds;
        cloth += s.cloth_cloth_seconds;
        if started.elapsed().as_secs_f64() >= budget_s {
            break;
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let done = frame_ms.len();
    Ok(BenchResult {
        name: garment.name.clone(),
        particles,
        frames: done,
        ms_per_frame: 1000.0 * seconds / done.max(1) as f64,
        steps_per_frame: steps as f64 / done.max(1) as f64,
        cg_per_step: cg as f64 / steps.max(1) as f64,
        rejections,
        final_max_strain: sim.max_strain(),
        cloth_solid_share: solid / seconds.max(f64::MIN_POSITIVE),
        cloth_cloth_share: cloth / seconds.max(f64::MIN_POSITIVE),
        frame_ms,
    })
}

/// Baraff fig. 1: a 1.4 m square of `side × side` particles, flat, falling from 10 cm above
/// onto a sphere of radius 0.35 m.
pub fn drape_over_sphere(side: usize) -> (Garment, Body) {
    let g = crate::fixtures::sheet(&SheetSpec {
        name: format!("drape_{side}x{side}"),
        n: side,
        size: 1.4,
        plane: SheetPlane::Horizontal,
        pins: crate::fixtures::SheetPins::None,
        offset: crate::Vec3::new(0.0, 0.45, 0.0),
        ..SheetSpec::default()
    });
    let sphere = crate::fixtures::bodies::sphere(crate::Vec3::zeros(), 0.35, 24, 48);
    (g, sphere)
}

/// Side lengths (particles per side) of the standard sheets: 22² ≈ 500, 30² = 900,
/// 51² = 2,601, 86² = 7,396 particles (Baraff §8's sizes).
pub const SHEET_SIDES: [usize; 4] = [22, 30, 51, 86];

/// The two-corner sheet of Baraff fig. 2 with `side × side` particles: a 1 m square, flat
/// and horizontal at rest, held by the two corners of one edge, falling under gravity.
pub fn sheet(side: usize) -> Garment {
    crate::fixtures::sheet(&SheetSpec {
        name: format!("sheet_{side}x{side}"),
        n: side,
        plane: SheetPlane::Horizontal,
        ..SheetSpec::default()
    })
}

/// A state in which every force of a step is active: `positions` displaced by a smooth
/// crumpling of amplitude `amplitude` (m), and a swirling velocity field (m/s). Used by
/// the solver's perf harnesses and the assembly tests.
pub fn crumpled_state(positions: &[Vec3], amplitude: f64) -> (Vec<Vec3>, Vec<Vec3>) {
    let x: Vec<Vec3> = (positions.iter())
        .map(|p| p + amplitude * Vec3::new((9.0 * p.z).sin(), (7.0 * p.x).cos(), (5.0 * p.x).sin()))
        .collect();
    let v = x.iter().map(|p| Vec3::new(p.z, -p.x, 0.3 * p.y)).collect();
    (x, v)
}

/// Default solver parameters at 24 fps, Y up.
pub fn default_params() -> SolverParams {
    SolverParams::new(24.0, UpAxis::Y.vector())
}

/// [`default_params`] with overrides from the environment, so the benchmarks can compare
/// settings without a rebuild: `DRAPE_BENCH_PRECONDITIONER` (`jacobi`, `gauss-seidel`,
/// `ic0`, `cholesky` or `auto`), `DRAPE_BENCH_CG_TOLERANCE` (ε of every PCG solve,
/// deflated or not), `DRAPE_BENCH_MAX_STRETCH_CHANGE` (the stretch-jump limit of a step)
/// and `DRAPE_BENCH_STRETCH_SWEEPS` (the sweeps of the limit on the stretch a step adds,
/// 0 for none). Unset or unparsable values keep the default.
pub fn params_from_env() -> SolverParams {
    let mut p = default_params();
    let var = |name: &str| std::env::var(name).ok();
    if let Some(kind) = var("DRAPE_BENCH_PRECONDITIONER").and_then(|s| parse_preconditioner(&s)) {
        p.preconditioner = kind;
    }
    let positive = |name: &str| {
        var(name)
            .and_then(|s| s.parse::<f64>().ok())
            .filter(|x| x.is_finite() && *x > 0.0)
    };
    if let Some(eps) = positive("DRAPE_BENCH_CG_TOLERANCE") {
        p.cg_tolerance = eps;
        p.cg_deflated_tolerance = eps;
    }
    if let Some(on) = var("DRAPE_BENCH_DEFLATION").and_then(|s| s.parse().ok()) {
        p.cg_deflation = on;
    }
    if let Some(limit) = positive("DRAPE_BENCH_MAX_STRETCH_CHANGE") {
        p.max_stretch_change = limit;
    }
    if let Some(sweeps) = var("DRAPE_BENCH_STRETCH_SWEEPS").and_then(|s| s.parse().ok()) {
        p.stretch_sweeps = sweeps;
    }
    p
}

/// The preconditioner named `name` (`jacobi`, `gauss-seidel`, `ic0`, `cholesky`, `auto`),
/// if any.
pub fn parse_preconditioner(name: &str) -> Option<Preconditioner> {
    match name.trim().to_ascii_lowercase().as_str() {
        "jacobi" | "block-jacobi" => Some(Preconditioner::BlockJacobi),
        "gauss-seidel" | "gs" => Some(Preconditioner::BlockGaussSeidel),
        "ic0" | "ic" => Some(Preconditioner::BlockIncompleteCholesky),
        "cholesky" | "sparse-cholesky" => Some(Preconditioner::SparseCholesky),
        "auto" => Some(Preconditioner::Auto),
        _ => None,
    }
}

/// Side lengths of the scaling run (issue 8): 51² = 2,601, 71² = 5,041, 100² = 10,000,
/// 141² = 19,881 and 173² = 29,929 particles of the two-corner [`sheet`].
pub const SCALING_SIDES: [usize; 5] = [51, 71, 100, 141, 173];

/// Peak resident set size of this process in bytes (`VmHWM` of `/proc/self/status`), or
/// `None` where that file does not exist (not Linux). A high-water mark over the whole
/// process lifetime: to compare problem sizes run each in its own process.
pub fn peak_resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    parse_vm_hwm(&status)
}

/// The `VmHWM:  <n> kB` line of a `/proc/<pid>/status` text, in bytes.
pub fn parse_vm_hwm(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let mut words = line["VmHWM:".len()..].split_whitespace();
    let value: u64 = words.next()?.parse().ok()?;
    match words.next() {
        Some("kB") | None => value.checked_mul(1024),
        _ => None,
    }
}

/// A least-squares straight line `y ≈ slope · x + intercept`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LineFit {
    /// Slope (units of y per unit of x).
    pub slope: f64,
    /// Value at x = 0.
    pub intercept: f64,
    /// Coefficient of determination R² ∈ [0, 1] (1: every point on the line).
    pub r_squared: f64,
}

/// Ordinary least squares through `(x, y)` points:
///
/// ```text
/// slope = Σ (x − x̄)(y − ȳ) / Σ (x − x̄)²,   intercept = ȳ − slope · x̄,
/// R²    = 1 − Σ (y − slope·x − intercept)² / Σ (y − ȳ)²
/// ```
/// `None` for fewer than two points, non-finite values or all x equal.
pub fn fit_line(points: &[(f64, f64)]) -> Option<LineFit> {
    if points.len() < 2 || points.iter().any(|(x, y)| !x.is_finite() || !y.is_finite()) {
        return None;
    }
    let n = points.len() as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|(x, _)| (x - mx) * (x - mx)).sum();
    let sxy: f64 = points.iter().map(|(x, y)| (x - mx) * (y - my)).sum();
    if sxx <= f64::EPSILON * mx.abs().max(1.0) {
        return None;
    }
    let slope = sxy / sxx;
    let intercept = my - slope * mx;
    let syy: f64 = points.iter().map(|(_, y)| (y - my) * (y - my)).sum();
    let residual: f64 = points
        .iter()
        .map(|(x, y)| (y - slope * x - intercept).powi(2))
        .sum();
    let r_squared = if syy > 0.0 { 1.0 - residual / syy } else { 1.0 };
    Some(LineFit {
        slope,
        intercept,
        r_squared,
    })
}

/// A power law `t ≈ coefficient · n^exponent`, fitted as a straight line in log–log space.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PowerFit {
    /// The exponent p (Baraff & Witkin §8 measured about 1.5 for time per frame).
    pub exponent: f64,
    /// The coefficient c (units of t at n = 1).
    pub coefficient: f64,
    /// R² of the straight line through (ln n, ln t).
    pub r_squared: f64,
}

/// Least-squares fit of `t = c · n^p` to `(n, t)` points, minimising the squared error of
/// `ln t = ln c + p ln n` (every point weighs the same in relative terms). `None` for fewer
/// than two points, a non-positive n or t, or all n equal.
pub fn fit_power_law(points: &[(f64, f64)]) -> Option<PowerFit> {
    if points
        .iter()
        .any(|&(n, t)| n.is_nan() || t.is_nan() || n <= 0.0 || t <= 0.0)
    {
        return None;
    }
    let logs: Vec<(f64, f64)> = points.iter().map(|(n, t)| (n.ln(), t.ln())).collect();
    let line = fit_line(&logs)?;
    Some(PowerFit {
        exponent: line.slope,
        coefficient: line.intercept.exp(),
        r_squared: line.r_squared,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn power_law_fit_recovers_exponent_and_coefficient_of_exact_data() {
        let points: Vec<(f64, f64)> = [2601.0, 5041.0, 10_000.0, 19_881.0, 29_929.0]
            .iter()
            .map(|&n: &f64| (n, 3e-4 * n.powf(1.3)))
            .collect();
        let fit = fit_power_law(&points).expect("fit");
        assert!((fit.exponent - 1.3).abs() < 1e-12, "{fit:?}");
        assert!((fit.coefficient / 3e-4 - 1.0).abs() < 1e-10, "{fit:?}");
        assert!((fit.r_squared - 1.0).abs() < 1e-12, "{fit:?}");
    }

    #[test]
    fn power_law_fit_of_scattered_data_matches_the_normal_equations() {
        // Points off any power law: the fitted exponent is the slope solving the 2x2
        // normal equations [Σ1 Σx; Σx Σx²] [a; p] = [Σy; Σxy] in log space.
        let points = [(1.0, 2.0), (2.0, 3.0), (4.0, 9.0), (8.0, 14.0)];
        let fit = fit_power_law(&points).expect("fit");
        let (mut s1, mut sx, mut sxx, mut sy, mut sxy) = (0.0, 0.0, 0.0, 0.0, 0.0);
        for (n, t) in points {
            let (x, y) = (f64::ln(n), f64::ln(t));
            s1 += 1.0;
            sx += x;
            sxx += x * x;
            sy += y;
            sxy += x * y;
        }
        let det = s1 * sxx - sx * sx;
        let p = (s1 * sxy - sx * sy) / det;
        let a = (sxx * sy - sx * sxy) / det;
        assert!((fit.exponent - p).abs() < 1e-12, "{} vs {p}", fit.exponent);
        assert!((fit.coefficient.ln() - a).abs() < 1e-12);
        assert!(
            fit.r_squared > 0.9 && fit.r_squared < 1.0,
            "{}",
            fit.r_squared
        );
    }

    #[test]
    fn fits_refuse_degenerate_input() {
        assert_eq!(fit_power_law(&[(10.0, 1.0)]), None);
        assert_eq!(fit_power_law(&[(10.0, 1.0), (10.0, 2.0)]), None);
        assert_eq!(fit_power_law(&[(10.0, 1.0), (20.0, 0.0)]), None);
        assert_eq!(fit_power_law(&[(10.0, 1.0), (-20.0, 2.0)]), None);
        assert_eq!(fit_line(&[(0.0, 1.0), (f64::NAN, 2.0)]), None);
        let line = fit_line(&[(0.0, 1.0), (2.0, 5.0), (4.0, 9.0)]).expect("line");
        assert_eq!(
            (line.slope, line.intercept, line.r_squared),
            (2.0, 1.0, 1.0)
        );
    }

    #[test]
    fn peak_resident_size_is_read_from_the_status_text() {
        let status = "Name:\tscaling\nVmPeak:\t  20000 kB\nVmHWM:\t   1536 kB\nVmRSS:\t 1000 kB\n";
        assert_eq!(parse_vm_hwm(status), Some(1536 * 1024));
        assert_eq!(parse_vm_hwm("VmRSS: 5 kB\n"), None);
        assert_eq!(parse_vm_hwm("VmHWM: lots kB\n"), None);
        assert_eq!(parse_vm_hwm("VmHWM: 5 MB\n"), None);
        if let Some(bytes) = peak_resident_bytes() {
            assert!(
                bytes > 1024 * 1024,
                "a test process holds more than 1 MB: {bytes}"
            );
        }
    }
}
