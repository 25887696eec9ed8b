//! Behaviour of [`minimize`]: convergence on standard problems against known minimisers,
//! the strong Wolfe conditions checked from the outside on every accepted step, the
//! handling of unevaluable points, budgets, callbacks and errors.
use super::*;
use nalgebra::{DMatrix, DVector};
use std::convert::Infallible;

/// Extended Rosenbrock (Moré, Garbow & Hillstrom 1981), `n` even:
/// `Φ = Σ_{i<n/2} 100 (x_{2i+1} − x_{2i}²)² + (1 − x_{2i})²`, minimum 0 at all ones.
fn rosenbrock(x: &[f64]) -> Evaluation {
    let mut value = 0.0;
    let mut gradient = vec![0.0; x.len()];
    for i in (0..x.len()).step_by(2) {
        let (a, b) = (x[i], x[i + 1]);
        let t = b - a * a;
        value += 100.0 * t * t + (1.0 - a) * (1.0 - a);
        gradient[i] = -400.0 * t * a - 2.0 * (1.0 - a);
        gradient[i + 1] = 200.0 * t;
    }
    Evaluation { value, gradient }
}

/// The standard start `(−1.2, 1, −1.2, 1, …)`.
fn rosenbrock_start(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| if i % 2 == 0 { -1.2 } else { 1.0 })
        .collect()
}

/// Everything observed during one run.
struct Run {
    minimum: Minimum,
    /// Every call of `evaluate`: point and result.
    evaluations: Vec<(Vec<f64>, Option<Evaluation>)>,
    /// Every `on_iteration` call: info and point.
    iterates: Vec<(IterationInfo, Vec<f64>)>,
}

fn run(
    x0: Vec<f64>,
    settings: &LbfgsSettings,
    f: impl Fn(&[f64]) -> Option<Evaluation>,
    stop_after: Option<usize>,
) -> Run {
    let mut evaluations = Vec::new();
    let mut iterates = Vec::new();
    let minimum = minimize::<Infallible>(
        x0,
        settings,
        |x| {
            let e = f(x);
            evaluations.push((x.to_vec(), e.clone()));
            Ok(e)
        },
        |info, x| {
            iterates.push((*info, x.to_vec()));
            match stop_after {
                Some(k) if info.iteration >= k => ControlFlow::Break(()),
                _ => ControlFlow::Continue(()),
            }
        },
    )
    .unwrap_or_else(|e| match e {});
    Run {
        minimum,
        evaluations,
        iterates,
    }
}

impl Run {
    /// The evaluation recorded at exactly `x` (accepted points are bit-identical to the
    /// evaluated trial points).
    fn evaluation_at(&self, x: &[f64]) -> &Evaluation {
        self.evaluations
            .iter()
            .rev()
            .find(|(p, _)| p == x)
            .and_then(|(_, e)| e.as_ref())
            .expect("every accepted point was evaluated")
    }

    /// Checks from the recorded points alone that each accepted step `s = x_{k+1} − x_k`
    /// satisfies the strong Wolfe conditions (they are invariant to the scaling of `d`):
    /// `Φ_{k+1} ≤ Φ_k + c₁ g_kᵀs` and `|g_{k+1}ᵀs| ≤ c₂ |g_kᵀs|`. Returns the largest
    /// ratio `|g_{k+1}ᵀs| / |g_kᵀs|` seen.
    fn assert_strong_wolfe(&self) -> f64 {
        let mut x = self.evaluations[0].0.clone();
        let mut worst = 0.0_f64;
        for (info, next) in &self.iterates {
            assert!(
                info.strong_wolfe,
                "iteration {} not flagged Wolfe",
                info.iteration
            );
            let (e0, e1) = (self.evaluation_at(&x), self.evaluation_at(next));
            let s: Vec<f64> = next.iter().zip(&x).map(|(a, b)| a - b).collect();
            let slope0 = dot(&e0.gradient, &s);
            let slope1 = dot(&e1.gradient, &s);
            assert!(slope0 < 0.0, "not a descent step at {}", info.iteration);
            assert!(
                e1.value <= e0.value + SUFFICIENT_DECREASE * slope0,
                "sufficient decrease fails at iteration {}",
                info.iteration
            );
            let ratio = slope1.abs() / slope0.abs();
            assert!(
                ratio <= CURVATURE,
                "curvature fails at {}: {ratio}",
                info.iteration
            );
            worst = worst.max(ratio);
            x.clone_from(next);
        }
        worst
    }

    /// Accepted values decrease strictly from `Φ(x_0)`, and the result is the last one.
    fn assert_monotone(&self) {
        let mut previous = self.evaluations[0].1.as_ref().expect("x0 evaluable").value;
        for (info, _) in &self.iterates {
            assert!(info.value < previous, "{} !< {previous}", info.value);
            previous = info.value;
        }
        assert_eq!(self.minimum.value, previous);
        assert_eq!(self.minimum.evaluations, self.evaluations.len());
    }
}

fn max_abs_error(x: &[f64], target: f64) -> f64 {
    x.iter().map(|v| (v - target).abs()).fold(0.0, f64::max)
}

/// Settings that stop on the gradient only, for convergence tests.
fn tight(max_iterations: usize) -> LbfgsSettings {
    LbfgsSettings {
        max_iterations,
        relative_tolerance: 0.0,
        gradient_tolerance: 1e-10,
        ..LbfgsSettings::default()
    }
}

/// 2-D Rosenbrock and the 100-D extended one reach all ones within 1e-5 in at most 60
/// evaluations, every accepted value lower than the last.
#[test]
fn rosenbrock_reaches_all_ones_in_few_evaluations() {
    for (n, cap) in [(2, 200), (100, 300)] {
        let r = run(
            rosenbrock_start(n),
            &tight(cap),
            |x| Some(rosenbrock(x)),
            None,
        );
        let m = &r.minimum;
        eprintln!(
            "{n}-D Rosenbrock: {} iterations, {} evaluations, {:?}",
            m.iterations, m.evaluations, m.stop
        );
        let error = max_abs_error(&m.x, 1.0);
        assert!(error <= 1e-5, "{n}-D: max error {error}");
        assert_eq!(m.stop, StopReason::Gradient, "{n}-D");
        assert!(m.evaluations <= 60, "{n}-D: {} evaluations", m.evaluations);
        r.assert_monotone();
    }
}

/// Deterministic pseudo-random numbers in `[−1, 1)` (64-bit LCG).
pub(super) fn pseudo_random(seed: u64, n: usize) -> Vec<f64> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 11) as f64 / (1u64 << 52) as f64 - 1.0
        })
        .collect()
}

/// `Φ = ½ xᵀAx − bᵀx` with `A = Q diag(λ) Qᵀ`, `λ` log-spaced over `[1, κ]`, `Q` a random
/// rotation. Returns `(A, b)`.
fn ill_conditioned_quadratic(n: usize, condition: f64) -> (DMatrix<f64>, DVector<f64>) {
    let q = DMatrix::from_vec(n, n, pseudo_random(7, n * n)).qr().q();
    let lambda = DVector::from_fn(n, |i, _| condition.powf(i as f64 / (n - 1) as f64));
    let a = &q * DMatrix::from_diagonal(&lambda) * q.transpose();
    let b = DVector::from_vec(pseudo_random(11, n));
    (a, b)
}

fn quadratic(a: &DMatrix<f64>, b: &DVector<f64>, x: &[f64]) -> Evaluation {
    let x = DVector::from_column_slice(x);
    let ax = a * &x;
    Evaluation {
        value: 0.5 * x.dot(&ax) - b.dot(&x),
        gradient: (ax - b).as_slice().to_vec(),
    }
}

/// Evaluating `Φ` in double precision limits how well any value-based search can resolve
/// `x*`: the rounding of `Φ` is `≈ ε λ_max ‖x‖²`, the change along the softest direction
/// `≈ λ_min (δ‖x‖)²`, so the attainable relative accuracy is `δ ≈ √(ε κ) ≈ 1.5e-6` at
/// `κ = 1e4`. The test asks for 1e-5.
#[test]
fn ill_conditioned_quadratic_reaches_the_analytic_minimiser() {
    let (a, b) = ill_conditioned_quadratic(50, 1e4);
    let exact = a.clone().cholesky().expect("SPD").solve(&b);
    let r = run(
        vec![0.0; 50],
        &tight(1000),
        |x| Some(quadratic(&a, &b, x)),
        None,
    );
    let m = &r.minimum;
    let error = (DVector::from_column_slice(&m.x) - &exact).norm() / exact.norm();
    eprintln!(
        "quadratic κ=1e4 n=50: {} iterations, {} evaluations, relative error {error:.2e}, {:?}",
        m.iterations, m.evaluations, m.stop
    );
    assert!(error <= 1e-5, "relative error {error}");
    r.assert_monotone();
}

#[test]
fn strong_wolfe_conditions_hold_at_every_accepted_step() {
    let (a, b) = ill_conditioned_quadratic(50, 1e4);
    let runs = [
        run(
            rosenbrock_start(2),
            &tight(200),
            |x| Some(rosenbrock(x)),
            None,
        ),
        run(
            rosenbrock_start(100),
            &tight(300),
            |x| Some(rosenbrock(x)),
            None,
        ),
        // Stopped above the rounding floor of Φ (see the quadratic test), where the search
        // can no longer tell values apart and may run out of its budget.
        run(
            vec![0.0; 50],
            &LbfgsSettings {
                gradient_tolerance: 1e-4,
                ..tight(1000)
            },
            |x| Some(quadratic(&a, &b, x)),
            None,
        ),
    ];
    for r in &runs {
        assert!(r.iterates.len() > 10);
        let worst = r.assert_strong_wolfe();
        eprintln!("largest |g_k+1ᵀs| / |g_kᵀs| = {worst:.3}");
    }
}

#[test]
fn unevaluable_points_beyond_a_radius_shrink_the_step() {
    // Φ = Σ (x−c)⁴ + ‖x−c‖², defined only for ‖x‖ ≤ 1; the first trial (length 50)
    // lands far outside.
    let c = [0.5, -0.3, 0.2];
    let f = |x: &[f64]| {
        if norm(x) > 1.0 {
            return None;
        }
        let value = x
            .iter()
            .zip(&c)
            .map(|(xi, ci)| (xi - ci).powi(4) + (xi - ci).powi(2))
            .sum();
        let gradient = x
            .iter()
            .zip(&c)
            .map(|(xi, ci)| 4.0 * (xi - ci).powi(3) + 2.0 * (xi - ci))
            .collect();
        Some(Evaluation { value, gradient })
    };
    let settings = LbfgsSettings {
        first_step: 50.0,
        ..tight(100)
    };
    let r = run(vec![0.0; 3], &settings, f, None);
    let unevaluable = r.evaluations.iter().filter(|(_, e)| e.is_none()).count();
    let error = r
        .minimum
        .x
        .iter()
        .zip(&c)
        .map(|(x, c)| (x - c).abs())
        .fold(0.0, f64::max);
    eprintln!(
        "radius test: {} evaluations ({unevaluable} unevaluable), error {error:.1e}",
        r.minimum.evaluations
    );
    assert!(unevaluable >= 1);
    assert!(error <= 1e-6, "{:?}", r.minimum.x);
    r.assert_monotone();
}

#[test]
fn callback_break_stops_after_three_iterations() {
    let r = run(
        rosenbrock_start(2),
        &LbfgsSettings::default(),
        |x| Some(rosenbrock(x)),
        Some(3),
    );
    assert_eq!(r.minimum.stop, StopReason::Callback);
    assert_eq!(r.minimum.iterations, 3);
    assert_eq!(r.iterates.len(), 3);
    assert_eq!(r.minimum.x, r.iterates[2].1);
}

#[test]
fn max_iterations_is_respected() {
    for max_iterations in [0, 1, 5] {
        let settings = LbfgsSettings {
            max_iterations,
            ..LbfgsSettings::default()
        };
        let r = run(
            rosenbrock_start(2),
            &settings,
            |x| Some(rosenbrock(x)),
            None,
        );
        assert_eq!(r.minimum.stop, StopReason::Iterations);
        assert_eq!(r.minimum.iterations, max_iterations);
        assert_eq!(r.iterates.len(), max_iterations);
    }
}

#[test]
fn accepted_values_decrease_monotonically_and_info_is_consistent() {
    let r = run(
        rosenbrock_start(10),
        &LbfgsSettings::default(),
        |x| Some(rosenbrock(x)),
        None,
    );
    r.assert_monotone();
    let mut x = rosenbrock_start(10);
    for (k, (info, next)) in r.iterates.iter().enumerate() {
        assert_eq!(info.iteration, k + 1);
        let e = r.evaluation_at(next);
        assert_eq!(info.value, e.value);
        assert!((info.gradient_norm - norm(&e.gradient)).abs() <= 1e-12 * info.gradient_norm);
        assert!((info.step_norm - distance(&x, next)).abs() <= 1e-12 * info.step_norm);
        assert!(info.evaluations <= r.evaluations.len());
        x.clone_from(next);
    }
}

#[test]
fn first_trial_is_a_step_of_first_step_length_along_minus_gradient() {
    let settings = LbfgsSettings {
        first_step: 0.25,
        ..LbfgsSettings::default()
    };
    let x0 = rosenbrock_start(4);
    let g0 = rosenbrock(&x0).gradient;
    let r = run(x0.clone(), &settings, |x| Some(rosenbrock(x)), Some(1));
    let first = &r.evaluations[1].0;
    let step: Vec<f64> = first.iter().zip(&x0).map(|(a, b)| a - b).collect();
    assert!((norm(&step) - 0.25).abs() <= 1e-12);
    let cosine = dot(&step, &g0) / (norm(&step) * norm(&g0));
    assert!((cosine + 1.0).abs() <= 1e-12, "cosine {cosine}");
}

#[test]
fn quasi_newton_iterations_usually_accept_the_unit_step() {
    let r = run(
        rosenbrock_start(100),
        &tight(300),
        |x| Some(rosenbrock(x)),
        None,
    );
    let unit = r
        .iterates
        .iter()
        .skip(1)
        .filter(|(i, _)| i.step_length == 1.0)
        .count();
    let later = r.iterates.len() - 1;
    eprintln!("unit steps accepted in {unit} of {later} quasi-Newton iterations");
    assert!(unit * 10 >= later * 7, "{unit} of {later}");
}

#[test]
fn unevaluable_start_returns_start_with_infinite_value() {
    let r = run(vec![1.0, 2.0], &LbfgsSettings::default(), |_| None, None);
    assert_eq!(r.minimum.x, vec![1.0, 2.0]);
    assert_eq!(r.minimum.value, f64::INFINITY);
    assert!(r.minimum.gradient.is_empty());
    assert_eq!(r.minimum.stop, StopReason::LineSearch);
    assert_eq!((r.minimum.iterations, r.minimum.evaluations), (0, 1));
    // A malformed result (wrong gradient length, NaN value) counts as unevaluable.
    let bad = run(
        vec![1.0, 2.0],
        &LbfgsSettings::default(),
        |_| {
            Some(Evaluation {
                value: 1.0,
                gradient: vec![0.0],
            })
        },
        None,
    );
    assert_eq!(bad.minimum.value, f64::INFINITY);
    let nan = run(
        vec![1.0],
        &LbfgsSettings::default(),
        |_| {
            Some(Evaluation {
                value: f64::NAN,
                gradient: vec![1.0],
            })
        },
        None,
    );
    assert_eq!(nan.minimum.value, f64::INFINITY);
}

#[test]
fn exhausted_line_search_without_decrease_returns_start() {
    let x0 = vec![0.5, 0.5];
    let settings = LbfgsSettings {
        max_evaluations_per_search: 7,
        ..LbfgsSettings::default()
    };
    let r = run(
        x0.clone(),
        &settings,
        |x| (x == [0.5, 0.5]).then(|| rosenbrock(x)),
        None,
    );
    assert_eq!(r.minimum.stop, StopReason::LineSearch);
    assert_eq!(r.minimum.x, x0);
    assert_eq!(r.minimum.value, rosenbrock(&x0).value);
    assert_eq!(r.minimum.evaluations, 1 + 7);
    assert_eq!(r.minimum.iterations, 0);
}

#[test]
fn exhausted_line_search_with_decrease_still_makes_progress() {
    // One evaluation per search and a tiny first step: α = 1 decreases Φ but is far too
    // short for the curvature condition, so the budget runs out on a lower point.
    let settings = LbfgsSettings {
        max_evaluations_per_search: 1,
        first_step: 1e-4,
        ..LbfgsSettings::default()
    };
    let r = run(
        rosenbrock_start(2),
        &settings,
        |x| Some(rosenbrock(x)),
        Some(1),
    );
    let (info, _) = &r.iterates[0];
    assert!(!info.strong_wolfe);
    assert_eq!(r.minimum.evaluations, 2);
    r.assert_monotone();
}

#[test]
fn failed_quasi_newton_search_retries_along_steepest_descent() {
    let settings = LbfgsSettings {
        max_evaluations_per_search: 5,
        first_step: 0.25,
        ..LbfgsSettings::default()
    };
    let x0 = rosenbrock_start(2);
    let reference = run(x0.clone(), &settings, |x| Some(rosenbrock(x)), Some(1));
    let before = reference.evaluations.len();
    // Every trial of the second line search (along the quasi-Newton direction) fails.
    let calls = std::cell::Cell::new(0);
    let failing = before + 1..=before + 5;
    let r = run(
        x0,
        &settings,
        |x| {
            calls.set(calls.get() + 1);
            (!failing.contains(&calls.get())).then(|| rosenbrock(x))
        },
        Some(2),
    );
    assert_eq!(r.iterates.len(), 2, "the retry made a second iteration");
    // The retry's first trial is a step of `first_step` along −g at the first iterate.
    let x1 = &r.iterates[0].1;
    let g1 = rosenbrock(x1).gradient;
    let trial = &r.evaluations[before + 5].0;
    let step: Vec<f64> = trial.iter().zip(x1).map(|(a, b)| a - b).collect();
    assert!((norm(&step) - 0.25).abs() <= 1e-12, "{}", norm(&step));
    let cosine = dot(&step, &g1) / (norm(&step) * norm(&g1));
    assert!((cosine + 1.0).abs() <= 1e-12, "cosine {cosine}");
    r.assert_monotone();
}

#[test]
fn first_step_to_zero_starts_where_the_linear_model_reaches_zero() {
    let settings = LbfgsSettings {
        first_step_to_zero: true,
        ..LbfgsSettings::default()
    };
    let x0 = rosenbrock_start(4);
    let e0 = rosenbrock(&x0);
    let r = run(x0.clone(), &settings, |x| Some(rosenbrock(x)), Some(1));
    let step: Vec<f64> = r.evaluations[1]
        .0
        .iter()
        .zip(&x0)
        .map(|(a, b)| a - b)
        .collect();
    let expected = e0.value / norm(&e0.gradient);
    assert!((norm(&step) - expected).abs() <= 1e-12 * expected);
}

#[test]
fn zero_gradient_at_start_stops_immediately() {
    let r = run(
        vec![1.0; 4],
        &LbfgsSettings::default(),
        |x| Some(rosenbrock(x)),
        None,
    );
    assert_eq!(r.minimum.stop, StopReason::Gradient);
    assert_eq!((r.minimum.iterations, r.minimum.evaluations), (0, 1));
}

#[test]
fn objective_change_tolerance_stops_on_stagnation() {
    let settings = LbfgsSettings {
        relative_tolerance: 1e-2,
        max_iterations: 1000,
        ..LbfgsSettings::default()
    };
    let r = run(
        rosenbrock_start(2),
        &settings,
        |x| Some(rosenbrock(x)),
        None,
    );
    assert_eq!(r.minimum.stop, StopReason::ObjectiveChange);
    let values: Vec<f64> = r.iterates.iter().map(|(i, _)| i.value).collect();
    let n = values.len();
    let before = if n >= 2 {
        values[n - 2]
    } else {
        rosenbrock(&rosenbrock_start(2)).value
    };
    assert!((before - values[n - 1]).abs() <= 1e-2 * before.abs());
}

#[test]
fn evaluation_errors_are_returned_unchanged() {
    let mut calls = 0;
    let result = minimize(
        rosenbrock_start(2),
        &LbfgsSettings::default(),
        |x| {
            calls += 1;
            if calls == 4 {
                Err("simulation crashed")
            } else {
                Ok(Some(rosenbrock(x)))
            }
        },
        |_, _| ControlFlow::Continue(()),
    );
    assert_eq!(result, Err("simulation crashed"));
}

#[test]
fn nonsense_settings_do_not_panic() {
    let settings = LbfgsSettings {
        memory: 0,
        relative_tolerance: f64::NAN,
        gradient_tolerance: f64::NAN,
        first_step: -3.0,
        curvature_epsilon: -1.0,
        ..tight(200)
    };
    let r = run(
        rosenbrock_start(2),
        &settings,
        |x| Some(rosenbrock(x)),
        None,
    );
    assert!(r.minimum.value < rosenbrock(&rosenbrock_start(2)).value);
    let none = LbfgsSettings {
        max_evaluations_per_search: 0,
        ..LbfgsSettings::default()
    };
    let r = run(rosenbrock_start(2), &none, |x| Some(rosenbrock(x)), None);
    assert_eq!(r.minimum.stop, StopReason::LineSearch);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(32))]

    /// Random quadratics `½ xᵀAx − bᵀx` with `A = MᵀM + I` (n ≤ 8, so `λ_min ≥ 1`): the run
    /// stops on the gradient test `‖g‖ ≤ 1e-5 ‖b‖`, hence `‖x − A⁻¹b‖ ≤ ‖g‖ / λ_min ≤ 1e-5 ‖b‖`
    /// against the dense solve, and every step is a strong Wolfe step. (Tighter gradient
    /// tolerances reach the rounding floor of `Φ`, see the ill-conditioned test.)
    #[test]
    fn random_quadratics_reach_the_dense_solution(
        n in 2usize..9,
        seed in 0u64..1_000_000,
    ) {
        let m = DMatrix::from_vec(n, n, pseudo_random(seed, n * n));
        let a = m.transpose() * &m + DMatrix::identity(n, n);
        let b = DVector::from_vec(pseudo_random(seed + 1, n));
        let exact = a.clone().cholesky().expect("SPD").solve(&b);
        let settings = LbfgsSettings { gradient_tolerance: 1e-5, ..tight(200) };
        let r = run(vec![0.0; n], &settings, |x| Some(quadratic(&a, &b, x)), None);
        proptest::prop_assert_eq!(r.minimum.stop, StopReason::Gradient);
        let error = (DVector::from_column_slice(&r.minimum.x) - &exact).norm();
        proptest::prop_assert!(error <= 1e-5 * b.norm(), "error {}", error);
        r.assert_strong_wolfe();
        r.assert_monotone();
    }
}

#[test]
fn exhausted_search_stops_only_when_asked() {
    // One evaluation per search and a tiny first step: the trial lowers the objective but
    // misses the curvature condition, so every search runs out with a decrease.
    let settings = |stop| LbfgsSettings {
        max_iterations: 5,
        max_evaluations_per_search: 1,
        first_step: 1e-3,
        stop_on_exhausted_search: stop,
        ..LbfgsSettings::default()
    };
    let stopping = run(
        rosenbrock_start(2),
        &settings(true),
        |x| Some(rosenbrock(x)),
        None,
    );
    let m = &stopping.minimum;
    assert_eq!((m.iterations, m.stop), (1, StopReason::ExhaustedSearch));
    assert!(m.value < rosenbrock(&rosenbrock_start(2)).value);
    assert!(!stopping.iterates[0].0.strong_wolfe);
    let going = run(
        rosenbrock_start(2),
        &settings(false),
        |x| Some(rosenbrock(x)),
        None,
    );
    assert_eq!(going.minimum.iterations, 5);
    assert_eq!(going.minimum.stop, StopReason::Iterations);
}
