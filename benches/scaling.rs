//! `cargo bench --bench scaling`: the two-corner sheet of Baraff fig. 2 at about 2,600,
//! 5,000, 10,000, 20,000 and 30,000 particles ([`drape::bench::SCALING_SIDES`]), each in
//! its own child process (this binary re-run with `--child SIDE`) so that the peak resident
//! size (`VmHWM`, a per-process high-water mark) belongs to that size alone. One JSON line
//! per size — ms per frame, CG iterations per step, steps per frame, ms per step, peak
//! resident MB and MB per 10,000 particles — then a summary line with the least-squares fits
//!
//! ```text
//! ms/frame ≈ c · n^p      (n: particles; Baraff §8 measured p ≈ 1.5)
//! ms/step  ≈ c' · n^p'    (the cost of one step, apart from how many steps a frame takes)
//! RSS      ≈ a + b · n    (b · 10⁴: resident MB per 10,000 particles beyond a fixed a)
//! ```
//! A size stops early at the first frame boundary after `DRAPE_SCALING_BUDGET_S` seconds
//! (at least one frame); the ms/frame fit then uses, for every size, the mean of the first
//! k frames, k the fewest any size completed, so that all sizes time the same stretch of
//! motion (the fall from rest is cheaper than the swing that follows).
//!
//! Environment: [`drape::bench::knobs::ScalingKnobs`] (frames and seconds per size, the
//! sizes) and the solver overrides of [`drape::bench::knobs::SolverKnobs`].
use drape::bench::fit::{fit_line, fit_power_law, peak_resident_bytes};
use drape::bench::{self, knobs::ScalingKnobs};
use drape::scene::Material;
use serde_json::{json, Value};
use std::process::Command;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--child") {
        let side = args.get(at + 1).and_then(|s| s.parse().ok());
        match side {
            Some(side) => child(side),
            None => {
                eprintln!("scaling: --child needs a side length");
                std::process::exit(2);
            }
        }
        return;
    }
    parent();
}

/// One size in this process: the timing and this process's peak resident size.
fn child(side: usize) {
    let knobs = ScalingKnobs::from_env();
    let g = bench::sheet(side);
    let line = match bench::run_scene_within(
        &g,
        &[],
        &Material::default(),
        &bench::params_from_env(),
        24.0,
        knobs.frames,
        knobs.budget_s,
    ) {
        Ok(r) => {
            let peak_mb = peak_resident_bytes().map(|b| b as f64 / (1024.0 * 1024.0));
            json!({
                "name": r.name,
                "particles": r.particles,
                "frames": r.frames,
                "ms_per_frame": r.ms_per_frame,
                "cg_per_step": r.cg_per_step,
                "steps_per_frame": r.steps_per_frame,
                "ms_per_step": r.ms_per_frame / r.steps_per_frame.max(1e-9),
                "rejections": r.rejections,
                "final_max_strain": r.final_max_strain,
                "frame_ms": r.frame_ms,
                "peak_rss_mb": peak_mb,
                "peak_rss_mb_per_10k_particles":
                    peak_mb.map(|m| m * 1e4 / r.particles.max(1) as f64),
            })
        }
        Err(e) => json!({"name": format!("sheet_{side}x{side}"), "error": e.to_string()}),
    };
    println!("{line}");
}

/// Every size in increasing order, each in a child process; then the fits.
fn parent() {
    let exe = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("scaling: cannot find this executable to re-run it: {e}");
            std::process::exit(1);
        }
    };
    let mut runs: Vec<Value> = Vec::new();
    let mut sides = ScalingKnobs::from_env().sides;
    sides.sort_unstable();
    for side in sides {
        let out = Command::new(&exe)
            .args(["--child", &side.to_string()])
            .output();
        let line = match out {
            Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
            Ok(o) => json!({
                "name": format!("sheet_{side}x{side}"),
                "error": format!("child exited with {}: {}", o.status,
                                 String::from_utf8_lossy(&o.stderr).trim()),
            })
            .to_string(),
            Err(e) => {
                json!({"name": format!("sheet_{side}x{side}"), "error": e.to_string()}).to_string()
            }
        };
        println!("{line}");
        runs.push(serde_json::from_str(&line).unwrap_or(Value::Null));
    }
    let ok: Vec<&Value> = runs
        .iter()
        .filter(|v| v["particles"].as_f64().is_some() && v["frame_ms"].is_array())
        .collect();
    let frame_ms = |v: &Value| -> Vec<f64> {
        v["frame_ms"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_f64).collect())
            .unwrap_or_default()
    };
    let common = ok.iter().map(|v| frame_ms(v).len()).min().unwrap_or(0);
    let point = |v: &Value, key: &str| Some((v["particles"].as_f64()?, v[key].as_f64()?));
    let times: Vec<(f64, f64)> = ok
        .iter()
        .filter_map(|v| {
            let ms = frame_ms(v);
            let n = v["particles"].as_f64()?;
            (common > 0).then(|| (n, ms[..common].iter().sum::<f64>() / common as f64))
        })
        .collect();
    let step_times: Vec<(f64, f64)> = ok.iter().filter_map(|v| point(v, "ms_per_step")).collect();
    let memory: Vec<(f64, f64)> = ok.iter().filter_map(|v| point(v, "peak_rss_mb")).collect();
    let time_fit = fit_power_law(&times);
    let step_fit = fit_power_law(&step_times);
    let memory_fit = fit_line(&memory);
    println!(
        "{}",
        json!({
            "fit": "ms_per_frame = coefficient * particles^exponent (least squares in log-log)",
            "frames_fitted": common,
            "ms_per_frame_fitted": times,
            "sizes": times.len(),
            "exponent": time_fit.map(|f| f.exponent),
            "coefficient_ms": time_fit.map(|f| f.coefficient),
            "r_squared": time_fit.map(|f| f.r_squared),
            "ms_per_step_exponent": step_fit.map(|f| f.exponent),
            "peak_rss_mb_per_10k_particles_slope": memory_fit.map(|f| f.slope * 1e4),
            "peak_rss_mb_at_zero_particles": memory_fit.map(|f| f.intercept),
        })
    );
}
