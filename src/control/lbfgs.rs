//! L-BFGS minimisation for keyframe control (Nocedal & Wright, *Numerical Optimization*,
//! 2nd ed., §7.2, Alg. 7.5; Stuyck, *Cloth Simulation for Computer Graphics*, §8 points to
//! it for choosing the update of the control forces).
//!
//! The objective `Φ(x)` (keyframe error plus force regularisation, see
//! [`crate::control`]) costs one forward cloth simulation and one adjoint sweep per
//! evaluation, which yield the value and the gradient together. The optimiser is therefore
//! built to spend as few evaluations as possible:
//!
//! ```text
//! x_k ∈ ℝⁿ     control variables (e.g. per-frame control forces, N)
//! Φ_k = Φ(x_k), g_k = ∇Φ(x_k)
//! d_k = −H_k g_k                   quasi-Newton direction, two-loop recursion (Alg. 7.4)
//!                                  with H_k⁰ = γ_k I, γ_k = s_{k−1}ᵀy_{k−1} / y_{k−1}ᵀy_{k−1}
//! d_0 = −(ℓ / ‖g_0‖) g_0           first direction: a step of length ℓ = `first_step`,
//!                                  or ℓ = Φ_0 / ‖g_0‖ with `first_step_to_zero`
//! x_{k+1} = x_k + α_k d_k          α_k from a strong-Wolfe line search, trial α = 1 first
//! s_k = x_{k+1} − x_k, y_k = g_{k+1} − g_k   stored only if s_kᵀy_k > ε ‖s_k‖‖y_k‖
//! ```
//!
//! The first direction has no curvature information, so its length is set in the
//! variables' own units by [`LbfgsSettings::first_step`] (the gradient's units are those of
//! `Φ` per variable and say nothing about a sensible step). The same scaled steepest
//! descent is used whenever the memory is empty (all pairs rejected) or the two-loop
//! direction is not a descent direction because of rounding; in both cases the memory is
//! cleared. Afterwards `γ_k` scales the direction so that α = 1 is usually accepted at
//! once (N&W §7.2 eq. 7.20). When a line search along the quasi-Newton direction finds no
//! lower point, the memory is cleared and the search is repeated once along the scaled
//! steepest descent before the optimiser gives up (an inexact gradient, such as that of
//! an approximate adjoint, can make the quasi-Newton model point the wrong way).
//!
//! The line search ([`line_search`]) enforces the strong Wolfe conditions with
//! `c₁ = 1e-4`, `c₂ = 0.9` ([`SUFFICIENT_DECREASE`], [`CURVATURE`]). A point where the
//! objective cannot be evaluated (`Ok(None)`, e.g. the simulation failed there) counts as
//! `Φ = +∞` and shrinks the step; so do evaluations with a non-finite value or gradient or a
//! gradient of the wrong length. Accepted values decrease strictly, so the returned point is
//! never worse than `x_0`.

mod history;
pub mod line_search;

pub use line_search::{CURVATURE, SUFFICIENT_DECREASE};

use history::History;
use line_search::Outcome;
use std::ops::ControlFlow;

/// Settings of [`minimize`]. Every field is sanitised rather than rejected: values outside
/// the documented range fall back as documented, so no setting can make [`minimize`] panic.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LbfgsSettings {
    /// Number `m` of curvature pairs `(s, y)` kept (default 8). Memory use is `2m + 5`
    /// vectors of the problem size; more pairs capture more curvature at no extra
    /// evaluations. 0 is treated as 1.
    pub memory: usize,
    /// Maximal number of accepted iterations (default 40). Each iteration usually costs one
    /// evaluation, at most [`LbfgsSettings::max_evaluations_per_search`]. 0 returns `x_0`.
    pub max_iterations: usize,
    /// Stop when the objective changed by little in an iteration (default 1e-6):
    /// `|Φ_k − Φ_{k+1}| ≤ tol · max(|Φ_k|, f64::MIN_POSITIVE)`. Dimensionless; NaN disables it.
    pub relative_tolerance: f64,
    /// Stop when the gradient became small (default 1e-8): `‖g_k‖ ≤ tol · ‖g_0‖`.
    /// Dimensionless; NaN disables it. A zero gradient at `x_0` always stops at once.
    pub gradient_tolerance: f64,
    /// Maximal number of objective evaluations within one line search (default 20). When
    /// it runs out the lowest point seen is accepted if it is lower than the current one
    /// (without the Wolfe conditions), otherwise the optimiser stops with
    /// [`StopReason::LineSearch`]. 0 stops at once.
    pub max_evaluations_per_search: usize,
    /// Length `ℓ` of the first trial step along `−g_0`, in the variables' units (default
    /// 1.0): `x_1 = x_0 − ℓ g_0 / ‖g_0‖` is tried first. Choose about the size of the
    /// change you expect in the variables; too long costs a few extra evaluations (the
    /// line search shrinks it by interpolation), too short a few extrapolations. Values that
    /// are not finite and positive are replaced by 1.0.
    pub first_step: f64,
    /// Use `ℓ = Φ/‖g‖` at the current point instead of [`LbfgsSettings::first_step`] for
    /// steepest-descent steps: the step the linear model predicts brings `Φ` to zero
    /// (half-way to the minimiser of the parabola with minimum 0 and the same slope).
    /// Fits non-negative objectives whose minimum is near zero, such as keyframe error;
    /// falls back to `first_step` when `Φ/‖g‖` is not finite and positive. Default false.
    pub first_step_to_zero: bool,
    /// Curvature threshold `ε` of the update (default 1e-10): the pair `(s, y)` is skipped
    /// unless `sᵀy > ε ‖s‖ ‖y‖` (the cosine of the angle between `s` and `y`). Negative
    /// values act as 0 (then only `sᵀy > 0` is required).
    pub curvature_epsilon: f64,
    /// Stop with [`StopReason::ExhaustedSearch`] after an iteration whose line search ran
    /// out of evaluations (its lowest point is kept), so that the caller can change the
    /// model; default false (carry on).
    pub stop_on_exhausted_search: bool,
}

impl Default for LbfgsSettings {
    fn default() -> Self {
        Self {
            memory: 8,
            max_iterations: 40,
            relative_tolerance: 1e-6,
            gradient_tolerance: 1e-8,
            max_evaluations_per_search: 20,
            first_step: 1.0,
            first_step_to_zero: false,
            curvature_epsilon: 1e-10,
            stop_on_exhausted_search: false,
        }
    }
}

/// Why [`minimize`] stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// [`LbfgsSettings::max_iterations`] iterations were done.
    Iterations,
    /// The objective changed by at most [`LbfgsSettings::relative_tolerance`] (relative).
    ObjectiveChange,
    /// The gradient norm fell to [`LbfgsSettings::gradient_tolerance`] times its initial
    /// value (or the initial gradient was zero).
    Gradient,
    /// No acceptable step was found (no lower point within the line-search budget, or `x_0`
    /// could not be evaluated); the best point so far is returned.
    LineSearch,
    /// `on_iteration` returned [`ControlFlow::Break`].
    Callback,
    /// A line search used its whole budget and its lowest point (lower than the current
    /// one) was taken, with [`LbfgsSettings::stop_on_exhausted_search`]: the direction's
    /// model of the objective fits badly.
    ExhaustedSearch,
}

/// One evaluation of the objective: its value and gradient at a point.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    /// `Φ(x)`, objective units.
    pub value: f64,
    /// `∇Φ(x)`, same length as `x`, objective units per variable unit.
    pub gradient: Vec<f64>,
}

/// Progress reported to `on_iteration` after every accepted iteration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IterationInfo {
    /// Number of completed iterations, 1-based.
    pub iteration: usize,
    /// Objective at the new point, `Φ_{k+1}`.
    pub value: f64,
    /// `‖g_{k+1}‖` (Euclidean).
    pub gradient_norm: f64,
    /// Total objective evaluations so far, including the one at `x_0`.
    pub evaluations: usize,
    /// Accepted line-search step `α_k` (dimensionless; 1 = full quasi-Newton step).
    pub step_length: f64,
    /// `‖x_{k+1} − x_k‖`, in the variables' units.
    pub step_norm: f64,
    /// Whether the step satisfies the strong Wolfe conditions; `false` only when the
    /// line-search budget ran out and the lowest point seen was taken instead.
    pub strong_wolfe: bool,
}

/// Result of [`minimize`].
#[derive(Debug, Clone, PartialEq)]
pub struct Minimum {
    /// Best point found (never worse than `x_0`).
    pub x: Vec<f64>,
    /// Objective at `x`; `+∞` if `x_0` could not be evaluated.
    pub value: f64,
    /// Gradient at `x`; empty if `x_0` could not be evaluated.
    pub gradient: Vec<f64>,
    /// Number of accepted iterations.
    pub iterations: usize,
    /// Total number of objective evaluations.
    pub evaluations: usize,
    /// Why the optimiser stopped.
    pub stop: StopReason,
}

/// Minimises `Φ` from `x0` by L-BFGS with a strong-Wolfe line search (N&W Alg. 7.5).
///
/// * `evaluate(x)` returns `Φ(x)` and `∇Φ(x)` together; `Ok(None)` means the point cannot
///   be evaluated (treated as `Φ = +∞`, the line search shrinks the step); `Err` aborts the
///   minimisation and is returned unchanged.
/// * `on_iteration(info, x)` is called after each accepted iteration with the new point;
///   returning [`ControlFlow::Break`] stops with [`StopReason::Callback`] (unless a
///   convergence test stopped at the same iteration, which is reported instead).
///
/// `x0` must be evaluable: if `evaluate(x0)` is `Ok(None)` the result is `x0` with value
/// `+∞`, an empty gradient, zero iterations and [`StopReason::LineSearch`].
///
/// Allocation: beyond the gradients returned by `evaluate`, a run allocates `2m + 5`
/// vectors of length `n` during its first iterations and reuses them afterwards.
pub fn minimize<E>(
    x0: Vec<f64>,
    settings: &LbfgsSettings,
    mut evaluate: impl FnMut(&[f64]) -> Result<Option<Evaluation>, E>,
    mut on_iteration: impl FnMut(&IterationInfo, &[f64]) -> ControlFlow<()>,
) -> Result<Minimum, E> {
    let mut evaluations = 0;
    let Some(Evaluation {
        mut value,
        mut gradient,
    }) = probe(&mut evaluate, &x0, &mut evaluations)?
    else {
        return Ok(Minimum {
            x: x0,
            value: f64::INFINITY,
            gradient: Vec::new(),
            iterations: 0,
            evaluations,
            stop: StopReason::LineSearch,
        });
    };
    let first_step = if settings.first_step.is_finite() && settings.first_step > 0.0 {
        settings.first_step
    } else {
        1.0
    };
    let initial_gradient_norm = norm(&gradient);
    let mut x = x0;
    let mut direction = vec![0.0; x.len()];
    let mut next = vec![0.0; x.len()];
    let mut history = History::new(settings.memory);
    let mut iterations = 0;

    let stop = if initial_gradient_norm <= 0.0 {
        StopReason::Gradient
    } else if settings.max_iterations == 0 {
        StopReason::Iterations
    } else {
        loop {
            let length = match value / norm(&gradient) {
                l if settings.first_step_to_zero && l.is_finite() && l > 0.0 => l,
                _ => first_step,
            };
            let slope = choose_direction(&mut history, &gradient, length, &mut direction);
            if slope.is_nan() || slope >= 0.0 {
                // Only reachable when the gradient norm overflows or underflows.
                break StopReason::LineSearch;
            }
            let quasi_newton = history.len() > 0;
            let outcome = line_search::search(
                &x,
                &direction,
                value,
                slope,
                settings.max_evaluations_per_search,
                &mut next,
                &mut evaluate,
                &mut evaluations,
            )?;
            let (accepted, strong_wolfe) = match outcome {
                Outcome::Wolfe(accepted) => (accepted, true),
                Outcome::Decrease(accepted) => (accepted, false),
                // Retry once along the steepest descent.
                Outcome::Failed if quasi_newton => {
                    history.clear();
                    continue;
                }
                Outcome::Failed => break StopReason::LineSearch,
            };
            step_point(&x, &direction, accepted.alpha, &mut next);
            history.push(
                &x,
                &next,
                &gradient,
                &accepted.evaluation.gradient,
                settings.curvature_epsilon,
            );
            let step_norm = distance(&x, &next);
            std::mem::swap(&mut x, &mut next);
            let previous_value = value;
            value = accepted.evaluation.value;
            gradient = accepted.evaluation.gradient;
            iterations += 1;

            let gradient_norm = norm(&gradient);
            let info = IterationInfo {
                iteration: iterations,
                value,
                gradient_norm,
                evaluations,
                step_length: accepted.alpha,
                step_norm,
                strong_wolfe,
            };
            let flow = on_iteration(&info, &x);
            if gradient_norm <= settings.gradient_tolerance * initial_gradient_norm {
                break StopReason::Gradient;
            }
            let scale = previous_value.abs().max(f64::MIN_POSITIVE);
            if (previous_value - value).abs() <= settings.relative_tolerance * scale {
                break StopReason::ObjectiveChange;
            }
            if flow.is_break() {
                break StopReason::Callback;
            }
            if settings.stop_on_exhausted_search && !strong_wolfe {
                break StopReason::ExhaustedSearch;
            }
            if iterations >= settings.max_iterations {
                break StopReason::Iterations;
            }
        }
    };
    Ok(Minimum {
        x,
        value,
        gradient,
        iterations,
        evaluations,
        stop,
    })
}

/// Writes the search direction into `direction` and returns its slope `gᵀd`.
///
/// The two-loop direction when the memory holds pairs and it is a descent direction;
/// otherwise the memory is cleared and `d = −(ℓ/‖g‖) g` (a step of length `ℓ`).
fn choose_direction(
    history: &mut History,
    gradient: &[f64],
    first_step: f64,
    direction: &mut [f64],
) -> f64 {
    if history.len() > 0 && history.direction(gradient, direction) {
        let slope = dot(gradient, direction);
        if slope < 0.0 && slope.is_finite() {
            return slope;
        }
        history.clear();
    }
    let scale = first_step / norm(gradient);
    for (d, g) in direction.iter_mut().zip(gradient) {
        *d = -scale * g;
    }
    dot(gradient, direction)
}

/// Evaluates the objective at `x`, counting the evaluation, and screens the result:
/// a non-finite value, a gradient of the wrong length or with non-finite entries counts as
/// not evaluable (`None`).
fn probe<E>(
    evaluate: &mut impl FnMut(&[f64]) -> Result<Option<Evaluation>, E>,
    x: &[f64],
    evaluations: &mut usize,
) -> Result<Option<Evaluation>, E> {
    *evaluations += 1;
    Ok(evaluate(x)?.filter(|e| {
        e.value.is_finite()
            && e.gradient.len() == x.len()
            && e.gradient.iter().all(|g| g.is_finite())
    }))
}

/// The point `x + α d` written into `out` (resized to the length of `x`). The driver
/// and the line search both build points here, so an accepted point is bit-identical to
/// the one evaluated.
fn step_point(x: &[f64], direction: &[f64], alpha: f64, out: &mut Vec<f64>) {
    out.clear();
    out.extend(x.iter().zip(direction).map(|(xi, di)| xi + alpha * di));
}

/// `aᵀb`.
fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// `‖a‖` (Euclidean).
fn norm(a: &[f64]) -> f64 {
    dot(a, a).sqrt()
}

/// `‖a − b‖` (Euclidean).
fn distance(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y) * (x - y))
        .sum::<f64>()
        .sqrt()
}

#[cfg(test)]
mod tests;
