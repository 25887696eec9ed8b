//! Keyframe control (issue 6, "[5 of 7] Keyframe control"): the adjoint gradient of Φ
//! against central finite differences of the simulation it differentiates.
use drape::control::keyframes::Keyframe;
use drape::control::lbfgs::StopReason;
use drape::control::problem::{ControlProblem, ControlSettings};
use drape::fixtures::{bodies, sheet, SheetPins, SheetPlane, SheetSpec};
use drape::model::{ClothModel, UvScale};
use drape::pipeline::{Simulator, SolverParams};
use drape::scene::{Body, Garment, Material};
use drape::Vec3;

/// Exact solves and fixed steps, so that Φ is a smooth function of θ for the differences.
fn params(steps_per_frame: f64) -> SolverParams {
    let mut p = SolverParams::new(24.0, Vec3::y());
    p.max_step = 1.0 / (24.0 * steps_per_frame);
    p.cg_tolerance = 1e-13;
    p.max_stretch_change = f64::INFINITY;
    p
}

fn simulator(g: &Garment, bodies: &[Body], params: SolverParams) -> Simulator {
    simulator_with(g, bodies, params, Material::preset("cotton").unwrap())
}

fn simulator_with(
    g: &Garment,
    bodies: &[Body],
    params: SolverParams,
    material: Material,
) -> Simulator {
    let model = ClothModel::build(g, UvScale::Auto, material.density).unwrap();
    Simulator::new(model, &material, &g.pin, params)
        .with_bodies(bodies, &material, 0.0, 24.0)
        .unwrap()
}

/// A keyframe at `frame`: the uncontrolled state there, moved by `shift` on the lower half.
fn keyframe(sim: &Simulator, frame: i32, shift: Vec3) -> Keyframe {
    let mut s = sim.clone();
    for _ in 0..frame {
        s.advance(1.0 / 24.0).unwrap();
    }
    let n = s.positions().len();
    let positions = (s.positions().iter().enumerate())
        .map(|(i, p)| if i >= n / 2 { p + shift } else { *p })
        .collect();
    let weights = (0..n).map(|i| if i % 3 == 0 { 0.5 } else { 1.0 }).collect();
    Keyframe {
        frame,
        positions,
        weights,
        name: format!("key_{frame}"),
    }
}

/// Deterministic pseudo-random numbers in [−1, 1].
fn noise(seed: u64, n: usize) -> Vec<f64> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        })
        .collect()
}

/// Compares the adjoint gradient with central differences along `directions` random
/// directions; returns (worst relative error, cosine of the projected gradients).
fn check(problem: &ControlProblem, theta: &[f64], directions: usize, eps: f64) -> (f64, f64) {
    let at = problem.evaluate(theta).unwrap();
    // Differences are only meaningful while the discrete choices (steps) stay the same.
    let phi = |t: &[f64]| {
        let e = problem.evaluate(t).unwrap();
        assert_eq!(
            e.steps, at.steps,
            "the perturbation changed the step sequence"
        );
        e.breakdown.total()
    };
    let (mut worst, mut dot, mut na, mut nf) = (0.0f64, 0.0, 0.0, 0.0);
    for k in 0..directions {
        let d = noise(100 + k as u64, theta.len());
        let plus: Vec<f64> = theta.iter().zip(&d).map(|(t, d)| t + eps * d).collect();
        let minus: Vec<f64> = theta.iter().zip(&d).map(|(t, d)| t - eps * d).collect();
        let (pp, pm) = (phi(&plus), phi(&minus));
        let fd = (pp - pm) / (2.0 * eps);
        let adj: f64 = at.gradient.iter().zip(&d).map(|(g, d)| g * d).sum();
        let rel = (adj - fd).abs() / fd.abs().max(1e-300);
        eprintln!("direction {k}: adjoint {adj:.9e}  differences {fd:.9e}  relative {rel:.2e}");
        worst = worst.max(rel);
        dot += adj * fd;
        na += adj * adj;
        nf += fd * fd;
    }
    (worst, dot / (na.sqrt() * nf.sqrt()))
}

/// The two-corner sheet (14 × 14 particles) with a keyframe at frame 12, two steps per
/// frame, and its control problem with the exact or the frozen-Jacobian adjoint.
fn pinned_problem(params: SolverParams, exact_adjoint: bool) -> ControlProblem {
    let settings = ControlSettings {
        regularization: 1e-3,
        adjoint_tolerance: 1e-13,
        exact_adjoint,
        ..ControlSettings::default()
    };
    pinned_problem_with(params, settings)
}

fn pinned_problem_with(params: SolverParams, settings: ControlSettings) -> ControlProblem {
    let g = sheet(&SheetSpec {
        n: 14,
        pins: SheetPins::TopCorners,
        ..SheetSpec::default()
    });
    let sim = simulator(&g, &[], params);
    let key = keyframe(&sim, 12, Vec3::new(0.0, 0.0, 0.08));
    ControlProblem::new(sim, &[key], 0, 24.0, settings).unwrap()
}

/// The exact adjoint is the derivative of the discrete simulation: relative error under
/// 1e-4 (the bound for an exact adjoint). The differences use ε = 1e-6: at 1e-5 a
/// perturbation can carry a stretch component across C = 0, where the definite Jacobian's
/// tension term switches on (a kink of the discrete simulation, not an adjoint error).
/// Wojtan's frozen Jacobians, on the same problem, are off by far more.
#[test]
fn adjoint_gradient_matches_differences_with_pins() {
    let exact = pinned_problem(params(2.0), true);
    let theta: Vec<f64> = noise(7, exact.variables())
        .iter()
        .map(|t| 0.3 * t)
        .collect();
    let (worst, cosine) = check(&exact, &theta, 6, 1e-6);
    eprintln!("pins, exact adjoint: worst relative error {worst:.2e}, cosine {cosine:.10}");
    let frozen = pinned_problem(params(2.0), false);
    let (worst_frozen, cosine_frozen) = check(&frozen, &theta, 6, 1e-6);
    eprintln!("pins, frozen Jacobians: worst {worst_frozen:.2e}, cosine {cosine_frozen:.8}");
    assert!(
        worst < 1e-4,
        "exact adjoint: worst relative error {worst:e}"
    );
    assert!(
        worst_frozen > 100.0 * worst,
        "the Jacobian terms should matter here: frozen {worst_frozen:e} vs exact {worst:e}"
    );
}

/// Wind with drag and lift: lift is applied explicitly, so its velocity Jacobian is
/// missing from the step matrix and the adjoint adds it; drag's definite Jacobian turns
/// with the triangle normals.
#[test]
fn adjoint_gradient_matches_differences_with_wind_and_lift() {
    let mut p = params(2.0);
    p.wind = Vec3::new(0.0, 0.5, 3.0);
    p.lift = drape::pipeline::params::DEFAULT_LIFT;
    let problem = pinned_problem(p, true);
    let theta: Vec<f64> = noise(11, problem.variables())
        .iter()
        .map(|t| 0.3 * t)
        .collect();
    let (worst, cosine) = check(&problem, &theta, 6, 1e-6);
    eprintln!("wind and lift: worst relative error {worst:.2e}, cosine {cosine:.10}");
    assert!(worst < 1e-4, "worst relative error {worst:e}");
}

/// A 12 × 12 sheet falling flat onto the floor from 1 cm, keyframe at frame 10 moved
/// sideways; `friction` is the cloth's Coulomb coefficient against the floor.
fn contact_problem(friction: f64) -> ControlProblem {
    let g = sheet(&SheetSpec {
        n: 12,
        size: 0.8,
        plane: SheetPlane::Horizontal,
        pins: SheetPins::None,
        offset: Vec3::new(0.0, 0.01, 0.0),
        ..SheetSpec::default()
    });
    let floor = bodies::inclined_plane(Vec3::zeros(), 2.0, 0.0, 4);
    let mut material = Material::preset("cotton").unwrap();
    material.friction = friction;
    let sim = simulator_with(&g, &[floor], params(2.0), material);
    let key = keyframe(&sim, 10, Vec3::new(0.05, 0.0, 0.0));
    let settings = ControlSettings {
        regularization: 1e-3,
        adjoint_tolerance: 1e-13,
        ..ControlSettings::default()
    };
    ControlProblem::new(sim, &[key], 0, 24.0, settings).unwrap()
}

/// Body contact without friction: the contact filter, its velocity targets and the
/// position alteration are differentiated exactly.
#[test]
fn adjoint_gradient_matches_differences_with_frictionless_body_contact() {
    let problem = contact_problem(0.0);
    let theta: Vec<f64> = noise(9, problem.variables())
        .iter()
        .map(|t| 0.2 * t)
        .collect();
    let (worst, cosine) = check(&problem, &theta, 6, 1e-6);
    eprintln!("frictionless contact: worst relative error {worst:.2e}, cosine {cosine:.10}");
    assert!(worst < 1e-4, "worst relative error {worst:e}");
}

/// With Coulomb friction the gradient is a measured approximation (worst relative error
/// 1.6e-3 here, cosine 0.99999987): the pass differentiates the normal force and the
/// direction that friction remembers from the previous step (without them: 2.2e-3), but
/// part of the error remains; its source is not yet identified (no contact here slips
/// fast, so it is not the friction Jacobian's velocity dependence). Besides the issue's
/// bound (cosine above 0.99), the test holds the friction memory to what it achieves:
/// the thresholds lie between the measured errors with it (1.59e-3, 1 − cosine 1.3e-7)
/// and without its normal-force part (1 − cosine 1.9e-7) or its direction part (2.21e-3).
/// The simulation is deterministic, so these figures move only when its code does.
#[test]
fn adjoint_gradient_matches_differences_with_body_contact() {
    let problem = contact_problem(Material::preset("cotton").unwrap().friction);
    let theta: Vec<f64> = noise(9, problem.variables())
        .iter()
        .map(|t| 0.2 * t)
        .collect();
    let (worst, cosine) = check(&problem, &theta, 6, 1e-6);
    eprintln!("contact with friction: worst relative error {worst:.2e}, cosine {cosine:.10}");
    assert!(cosine > 0.99, "cosine {cosine}");
    assert!(worst < 1.9e-3, "worst relative error {worst:e}");
    assert!(1.0 - cosine < 1.6e-7, "1 − cosine {:e}", 1.0 - cosine);
}

#[test]
fn checkpointed_sweep_gives_the_same_gradient() {
    let g = sheet(&SheetSpec {
        n: 8,
        ..SheetSpec::default()
    });
    let sim = simulator(&g, &[], SolverParams::new(24.0, Vec3::y()));
    let keys = [
        keyframe(&sim, 5, Vec3::new(0.0, 0.0, 0.05)),
        keyframe(&sim, 11, Vec3::new(0.0, 0.0, -0.05)),
    ];
    let whole = ControlProblem::new(sim, &keys, 0, 24.0, ControlSettings::default()).unwrap();
    let theta: Vec<f64> = noise(3, whole.variables())
        .iter()
        .map(|t| 0.1 * t)
        .collect();
    let a = whole.evaluate(&theta).unwrap();
    for segment in [1, 3, 4] {
        let b = whole
            .clone()
            .with_segment(segment)
            .evaluate(&theta)
            .unwrap();
        assert_eq!(a.breakdown, b.breakdown, "segment {segment}");
        assert_eq!(a.gradient, b.gradient, "segment {segment}");
    }
}

/// Φ with adaptive steps (Baraff §7) jumps when a perturbation of the forces flips a step
/// rejection; the problem replays the uncontrolled run's steps instead
/// (`pipeline::schedule`), so Φ is smooth along a line and the adjoint slope matches it.
/// Along the line the adaptive runs take different numbers of steps, and the largest kink
/// between neighbouring secants of their Φ is compared with that of the replayed Φ.
#[test]
fn replayed_schedule_makes_phi_smooth_where_adaptive_steps_jump() {
    let g = drape::bench::sheet(20);
    let exact = || {
        let mut p = SolverParams::new(24.0, Vec3::y());
        p.cg_tolerance = 1e-12;
        p
    };
    let sim = simulator(&g, &[], exact());
    let key = keyframe(&sim, 24, Vec3::new(0.0, 0.0, 0.15));
    let settings = ControlSettings {
        regularization: 1e-4,
        adjoint_tolerance: 1e-12,
        ..ControlSettings::default()
    };
    let problem = ControlProblem::new(sim, &[key], 0, 24.0, settings).unwrap();
    let planned = problem.schedule().steps();
    assert!(
        planned > 24,
        "the uncontrolled run must adapt its steps: {planned}"
    );
    let d = noise(11, problem.variables());
    let at = |t: f64| -> Vec<f64> { d.iter().map(|d| t * d).collect() };
    let spacing = 0.002;
    let ts: Vec<f64> = (0..=12).map(|k| spacing * k as f64).collect();
    // Keyframe term and step count of the adaptive simulation with the same forces.
    let objective = problem.objective();
    let adaptive: Vec<(f64, usize)> = (ts.iter())
        .map(|&t| {
            let theta = at(t);
            let mut s = simulator(&g, &[], exact());
            let mut steps = 0;
            for n in 0..objective.horizon() {
                s.set_applied_forces(Some(objective.forces(&theta, n)));
                steps += s.advance(1.0 / 24.0).unwrap().steps;
            }
            (
                objective.key_term(0, s.positions(), s.velocities()).0,
                steps,
            )
        })
        .collect();
    let replayed_at = |t: f64| {
        let e = problem.evaluate(&at(t)).unwrap();
        assert_eq!(e.steps, planned, "replayed runs take the planned steps");
        e
    };
    let replayed: Vec<f64> = (ts.iter())
        .map(|&t| replayed_at(t).breakdown.keyframes)
        .collect();
    // The largest change between neighbouring secant slopes: a jump of Φ shows as a kink
    // far larger than its smooth curvature gives on this spacing.
    let kink = |values: &[f64]| {
        let secants: Vec<f64> = values.windows(2).map(|w| (w[1] - w[0]) / spacing).collect();
        eprintln!("secants {secants:?}");
        (secants.windows(2)).fold(0.0f64, |m, w| m.max((w[1] - w[0]).abs()))
    };
    let steps: Vec<usize> = adaptive.iter().map(|a| a.1).collect();
    let values: Vec<f64> = adaptive.iter().map(|a| a.0).collect();
    let (kink_adaptive, kink_replayed) = (kink(&values), kink(&replayed));
    eprintln!(
        "adaptive steps {steps:?} kink {kink_adaptive:.3e}; replayed {planned} steps kink {kink_replayed:.3e}"
    );
    assert!(
        steps.iter().any(|&s| s != steps[0]),
        "the forces along the line must change the adaptive steps: {steps:?}"
    );
    assert!(
        kink_replayed < 0.01 * kink_adaptive,
        "replayed Φ must be smooth where the adaptive one jumps"
    );
    let (t0, dt) = (0.016, 0.0005);
    let slope: f64 = (replayed_at(t0).gradient.iter().zip(&d))
        .map(|(g, d)| g * d)
        .sum();
    let phi = |t: f64| replayed_at(t).breakdown.total();
    let central = (phi(t0 + dt) - phi(t0 - dt)) / (2.0 * dt);
    eprintln!("adjoint slope {slope:.6e}, central difference {central:.6e}");
    assert!(
        (slope - central).abs() < 0.1 * central.abs(),
        "{slope} vs {central}"
    );
}

/// Forty frames of one step each: the exact adjoint still matches the differences, while
/// Wojtan's frozen Jacobians, whose error compounds step after step, no longer point the
/// right way.
#[test]
fn exact_adjoint_holds_over_a_long_horizon_where_frozen_jacobians_fail() {
    let g = sheet(&SheetSpec {
        n: 14,
        pins: SheetPins::TopCorners,
        ..SheetSpec::default()
    });
    let sim = simulator(&g, &[], params(1.0));
    let key = keyframe(&sim, 40, Vec3::new(0.0, 0.0, 0.08));
    let problem = |exact_adjoint| {
        let settings = ControlSettings {
            regularization: 1e-3,
            adjoint_tolerance: 1e-13,
            exact_adjoint,
            ..ControlSettings::default()
        };
        ControlProblem::new(sim.clone(), std::slice::from_ref(&key), 0, 24.0, settings).unwrap()
    };
    let exact = problem(true);
    let theta: Vec<f64> = noise(7, exact.variables())
        .iter()
        .map(|t| 0.3 * t)
        .collect();
    let (worst, cosine) = check(&exact, &theta, 3, 1e-6);
    let (worst_frozen, cosine_frozen) = check(&problem(false), &theta, 3, 1e-6);
    eprintln!("40 steps: exact worst {worst:.2e} cosine {cosine:.8}; frozen worst {worst_frozen:.2e} cosine {cosine_frozen:.4}");
    assert!(
        worst < 1e-4,
        "exact adjoint: worst relative error {worst:e}"
    );
    assert!(
        cosine_frozen < 0.9,
        "frozen Jacobians were expected to fail here: {cosine_frozen}"
    );
}

/// A run that stalls hands over to the other adjoint from its best point, the iteration
/// and evaluation counts carrying on. A relative tolerance of 1 makes every run stop after
/// one iteration (objective change): the exact run hands over to the frozen one, whose
/// stop by the same test ends the optimisation; without the hand-over it ends after one.
#[test]
fn optimise_switches_adjoint_when_a_run_stalls() {
    let run = |switch_on_stall| {
        let settings = ControlSettings {
            regularization: 1e-3,
            switch_on_stall,
            ..ControlSettings::default()
        };
        let problem = pinned_problem_with(params(2.0), settings);
        let mut lbfgs = drape::control::problem::optimiser_settings(6);
        lbfgs.relative_tolerance = 1.0;
        let mut seen = Vec::new();
        let solution = problem
            .optimise(&lbfgs, |it| {
                seen.push((it.iteration, it.breakdown.total(), it.evaluations));
                std::ops::ControlFlow::Continue(())
            })
            .unwrap();
        eprintln!("hand-over {switch_on_stall}: {:?} {seen:?}", solution.stop);
        (solution, seen)
    };
    let (alone, _) = run(false);
    let (handed, seen) = run(true);
    assert_eq!(
        (alone.iterations, alone.stop),
        (1, StopReason::ObjectiveChange)
    );
    assert_eq!(
        (handed.iterations, handed.stop),
        (2, StopReason::ObjectiveChange)
    );
    assert_eq!(seen.iter().map(|s| s.0).collect::<Vec<_>>(), [1, 2]);
    assert!(seen[1].1 < seen[0].1, "the second run lowers Φ further");
    assert!(seen[1].2 > seen[0].2, "evaluations count on across runs");
    assert_eq!(seen[1].2, handed.evaluations);
    assert!(handed.best.total() < alone.best.total());
}
