//! `cargo bench`: the two-corner sheet of Baraff fig. 2 at 500, 900, 2,600 and 7,400
//! particles, ms per frame and CG iterations per step (one JSON line per size), the drape
//! over a sphere of Baraff fig. 1 with the collision-detection shares, and the
//! bend-stiffness sweep of Baraff §8 (run time at bend ×0.1 … ×1000 relative to ×1).
//!
//! Environment: `DRAPE_BENCH_FRAMES` (frames per scene, default 24), `DRAPE_BENCH_SCENES`
//! (comma-separated subset of `sheets,drape,bend`, default all), and the solver overrides
//! of [`drape::bench::params_from_env`] (`DRAPE_BENCH_PRECONDITIONER`,
//! `DRAPE_BENCH_CG_TOLERANCE`).
use drape::bench;
use drape::scene::Material;

fn main() {
    let frames: usize = std::env::var("DRAPE_BENCH_FRAMES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(24);
    let scenes = std::env::var("DRAPE_BENCH_SCENES").unwrap_or_else(|_| "sheets,drape,bend".into());
    let wants = |name: &str| scenes.split(',').any(|s| s.trim() == name);
    let material = Material::default();
    let params = bench::params_from_env();
    for side in bench::SHEET_SIDES.into_iter().filter(|_| wants("sheets")) {
        let g = bench::sheet(side);
        match bench::run_garment(&g, &material, &params, 24.0, frames) {
            Ok(r) => println!("{}", serde_json::to_string(&r).unwrap_or_default()),
            Err(e) => println!("{{\"name\":\"sheet {side}x{side}\",\"error\":\"{e}\"}}"),
        }
    }
    // Baraff fig. 1: the drape over a sphere, with the share of collision detection.
    if wants("drape") {
        let (g, sphere) = bench::drape_over_sphere(51);
        match bench::run_scene(&g, &[sphere], &material, &params, 24.0, frames) {
            Ok(r) => println!("{}", serde_json::to_string(&r).unwrap_or_default()),
            Err(e) => println!("{{\"name\":\"drape\",\"error\":\"{e}\"}}"),
        }
    }
    if !wants("bend") {
        return;
    }
    // Baraff §8: bend stiffness ×10,000 changed run time by under 5%.
    let g = bench::sheet(51);
    let mut base = None;
    for factor in [0.1, 1.0, 10.0, 100.0, 1000.0] {
        let m = material.with_bend_scaled(factor);
        match bench::run_garment(&g, &m, &params, 24.0, frames) {
            Ok(r) => {
                if factor == 1.0 {
                    base = Some(r.ms_per_frame);
                }
                let ratio = base.map(|b| r.ms_per_frame / b);
                println!(
                    "{{\"bend_factor\":{factor},\"particles\":{},\"ms_per_frame\":{:.3},\"relative_to_x1\":{},\"cg_per_step\":{:.2}}}",
                    r.particles,
                    r.ms_per_frame,
                    ratio.map(|x| format!("{x:.3}")).unwrap_or("null".into()),
                    r.cg_per_step
                );
            }
            Err(e) => println!("{{\"bend_factor\":{factor},\"error\":\"{e}\"}}"),
        }
    }
}
