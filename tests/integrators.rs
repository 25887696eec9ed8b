//! The other integrators, the mass-spring model and aerodynamics (issue 9, "[8] The other
//! solvers of the literature"): every integrator on the two-corner sheet and on the
//! garment-on-body fixture with pins exact, BDF2's order of convergence, bad input.
mod common;

use common::{code, drape, fixture, s, stderr};
use drape::model::{ClothModel, UvScale};
use drape::pipeline::{ForceModel, Integrator, Simulator, SolverParams};
use drape::scene::{Garment, Material};
use drape::Vec3;

const ALL: [Integrator; 5] = [
    Integrator::Implicit,
    Integrator::Bdf2,
    Integrator::Preview,
    Integrator::Projective,
    Integrator::Explicit,
];

fn params(integrator: Integrator, model: ForceModel) -> SolverParams {
    let mut p = SolverParams::new(24.0, Vec3::y());
    p.integrator = integrator;
    p.model = model;
    p
}

/// Asserts finite positions and pinned particles on their targets (to rounding: moving
/// targets are reached as `x₀ + h (p − x₀)/h`; fixed ones exactly).
fn assert_sane(sim: &Simulator, what: &str) -> f64 {
    let x = sim.positions();
    assert!(
        x.iter()
            .chain(sim.velocities())
            .all(|p| p.iter().all(|c| c.is_finite())),
        "{what}: non-finite state"
    );
    let targets = sim.pin_targets();
    assert!(!targets.is_empty(), "{what}: the scene has pins");
    let worst = targets
        .iter()
        .map(|(i, t)| (x[*i] - t).norm())
        .fold(0.0, f64::max);
    assert!(worst <= 1e-12, "{what}: a pin is {worst} m off its target");
    worst
}

#[test]
fn every_integrator_runs_the_two_corner_sheet_with_fixed_pins_exact() {
    let g = drape::bench::sheet(12);
    let material = Material::default();
    for model in [ForceModel::Continuum, ForceModel::MassSpring] {
        for integrator in ALL {
            let what = format!("{integrator:?} / {model:?}");
            let m = ClothModel::build(&g, UvScale::Auto, material.density).unwrap();
            let start = m.positions.clone();
            let mut sim = Simulator::new(m, &material, &g.pin, params(integrator, model));
            let frames = if integrator == Integrator::Explicit {
                1
            } else {
                4
            };
            let clock = std::time::Instant::now();
            for _ in 0..frames {
                sim.advance(1.0 / 24.0)
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
            }
            let seconds = clock.elapsed().as_secs_f64();
            assert_sane(&sim, &what);
            // Fixed pins: bit for bit where they started.
            for (i, _) in sim.pin_targets() {
                assert_eq!(sim.positions()[i], start[i], "{what}: pin {i} moved");
            }
            // The free edge fell.
            let drop = (start.iter().zip(sim.positions()))
                .map(|(a, b)| a.y - b.y)
                .fold(0.0, f64::max);
            println!(
                "{what}: fell {drop:.3} m, strain {:.3} ({seconds:.2} s)",
                sim.max_strain()
            );
            // A quarter of free fall at least (preview and projective lag, Kang & Cho §4.2).
            let t = frames as f64 / 24.0;
            assert!(
                drop > 0.25 * 0.5 * 9.81 * t * t,
                "{what}: the free edge fell ({drop} m)"
            );
        }
    }
}

/// The skirt on the animated character (a shipped fixture), its waist pinned to the body.
fn skirt() -> (Garment, Vec<drape::scene::Body>) {
    let sel = drape::io::select(&fixture("skirt_on_character.gltf"), &[], &[], None).unwrap();
    let mut scene = sel.scene;
    (scene.garments.remove(0), scene.bodies)
}

#[test]
fn every_integrator_runs_the_skirt_on_the_character_with_pins_on_the_body() {
    let (g, bodies) = skirt();
    let material = Material::default();
    for integrator in ALL {
        let what = format!("{integrator:?}");
        let m = ClothModel::build(&g, UvScale::Auto, material.density).unwrap();
        let mut sim = Simulator::new(
            m,
            &material,
            &g.pin,
            params(integrator, ForceModel::Continuum),
        )
        .with_bodies(&bodies, &material, 1.0, 24.0)
        .unwrap();
        // The explicit integrator needs ~10⁴ sub-steps per frame here: a tenth of a frame.
        let (frames, length) = match integrator {
            Integrator::Explicit => (1, 1.0 / 240.0),
            _ => (3, 1.0 / 24.0),
        };
        let clock = std::time::Instant::now();
        for _ in 0..frames {
            sim.advance(length)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
        }
        let worst = assert_sane(&sim, &what);
        println!(
            "{what}: pins within {worst:e} m, penetration {:.3} τ ({:.2} s)",
            sim.max_penetration(),
            clock.elapsed().as_secs_f64()
        );
        assert!(
            sim.max_penetration() < 0.5,
            "{what}: stays outside the body"
        );
    }
}

/// Position of the free corners after 0.5 s of an undamped two-triangle spring pendulum
/// (mass-spring model, two corners pinned) at fixed steps `h`.
fn pendulum(integrator: Integrator, steps: usize) -> Vec<Vec3> {
    let g = drape::fixtures::sheet(&drape::fixtures::SheetSpec {
        n: 2,
        size: 0.5,
        plane: drape::fixtures::SheetPlane::Horizontal,
        ..Default::default()
    });
    let material = Material {
        stretch_u: 20.0,
        stretch_v: 20.0,
        stretch_damping: 0.0,
        shear: 2.0,
        shear_damping: 0.0,
        bend_u: 0.0,
        bend_v: 0.0,
        bend_damping: 0.0,
        drag: 0.0,
        ..Material::default()
    };
    let m = ClothModel::build(&g, UvScale::Auto, material.density).unwrap();
    let mut p = params(integrator, ForceModel::MassSpring);
    let duration = 0.5;
    p.max_step = duration / steps as f64;
    p.max_stretch_change = f64::INFINITY;
    p.self_collision = false;
    p.cg_tolerance = 1e-12;
    let mut sim = Simulator::new(m, &material, &g.pin, p);
    sim.advance(duration).unwrap();
    sim.positions().to_vec()
}

fn error(a: &[Vec3], b: &[Vec3]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(p, q)| (p - q).norm())
        .fold(0.0, f64::max)
}

#[test]
fn bdf2_converges_at_second_order_where_backward_euler_is_first_order() {
    for (integrator, lo, hi) in [
        (Integrator::Bdf2, 3.3, 4.8),
        (Integrator::Implicit, 1.6, 2.5),
    ] {
        let reference = pendulum(integrator, 4096);
        let errors: Vec<f64> = [64, 128, 256]
            .iter()
            .map(|&n| error(&pendulum(integrator, n), &reference))
            .collect();
        let ratios = [errors[0] / errors[1], errors[1] / errors[2]];
        println!("{integrator:?}: errors {errors:?}, ratios {ratios:?}");
        for r in ratios {
            assert!(
                r > lo && r < hi,
                "{integrator:?}: error ratio {r} when halving h"
            );
        }
    }
}

#[test]
fn projective_factors_once_per_step_size() {
    let g = drape::bench::sheet(12);
    let material = Material::default();
    let m = ClothModel::build(&g, UvScale::Auto, material.density).unwrap();
    let mut sim = Simulator::new(
        m,
        &material,
        &g.pin,
        params(Integrator::Projective, ForceModel::Continuum),
    );
    let mut steps = 0;
    for _ in 0..8 {
        steps += sim.advance(1.0 / 24.0).unwrap().steps;
    }
    assert_eq!(steps, 8, "one step per frame at the default step");
    assert_eq!(
        sim.factorizations(),
        1,
        "the factor is reused by every step"
    );
    // A smaller step needs its own factor.
    let m = ClothModel::build(&g, UvScale::Auto, material.density).unwrap();
    let mut p = params(Integrator::Projective, ForceModel::Continuum);
    p.max_step = 1.0 / 48.0;
    let mut sim = Simulator::new(m, &material, &g.pin, p);
    sim.advance(1.0 / 24.0).unwrap();
    assert_eq!(sim.factorizations(), 1);
    assert_eq!(Simulator::factorizations(&sim), 1);
}

#[test]
fn unknown_integrator_or_model_and_bad_wind_exit_2_listing_the_choices() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.pc2");
    let scene = fixture("sheet_2corner.gltf");
    let run = |extra: &[&str]| {
        let mut args = vec!["simulate", s(&scene), "-o", s(&out), "--frames", "1..2"];
        args.extend_from_slice(extra);
        drape(&args)
    };
    let o = run(&["--integrator", "rk4"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    for name in ["implicit", "bdf2", "preview", "projective", "explicit"] {
        assert!(stderr(&o).contains(name), "lists {name}: {}", stderr(&o));
    }
    let o = run(&["--model", "fem"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    for name in ["continuum", "mass-spring"] {
        assert!(stderr(&o).contains(name), "lists {name}: {}", stderr(&o));
    }
    for wind in ["1,2", "a,b,c", "1,2,nan"] {
        let o = run(&["--wind", wind]);
        assert_eq!(code(&o), 2, "--wind {wind}: {}", stderr(&o));
        assert!(stderr(&o).contains("--wind"), "{}", stderr(&o));
        assert!(!out.exists());
    }
}

#[test]
fn simulate_accepts_every_integrator_model_and_wind() {
    let dir = tempfile::tempdir().unwrap();
    let scene = fixture("sheet_2corner.gltf");
    for (integrator, model) in [
        ("bdf2", "mass-spring"),
        ("preview", "continuum"),
        ("projective", "mass-spring"),
    ] {
        let out = dir.path().join(format!("{integrator}.pc2"));
        let o = drape(&[
            "simulate",
            s(&scene),
            "-o",
            s(&out),
            "--frames",
            "1..3",
            "--progress",
            "none",
            "--integrator",
            integrator,
            "--model",
            model,
            "--wind",
            "2,0,-1",
        ]);
        assert_eq!(code(&o), 0, "{integrator}/{model}: {}", stderr(&o));
        assert!(out.exists());
    }
}

#[test]
fn control_with_another_integrator_exits_2_naming_the_implicit_one() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.pc2");
    let o = drape(&[
        "control",
        s(&fixture("skirt_keys.gltf")),
        "-o",
        s(&out),
        "--integrator",
        "preview",
        "--iterations",
        "1",
        "--progress",
        "none",
    ]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--integrator implicit"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
}
