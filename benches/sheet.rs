//! `cargo bench`: the two-corner sheet of Baraff fig. 2 at 500, 900, 2,600 and 7,400
//! particles, ms per frame and CG iterations per step (one JSON line per size), the drape
//! over a sphere of Baraff fig. 1 with the collision-detection shares, and the
//! bend-stiffness sweep of Baraff §8 (run time at bend ×0.1 … ×1000 relative to ×1).
//!
//! Environment: [`drape::bench::knobs::BenchKnobs`] (frames per scene, which parts run)
//! and the solver overrides of [`drape::bench::knobs::SolverKnobs`].
use drape::bench;
use drape::bench::knobs::BenchKnobs;
use drape::scene::Material;

fn main() {
    let knobs = BenchKnobs::from_env();
    let frames = knobs.frames;
    let wants = |name: &str| knobs.wants(name);
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
