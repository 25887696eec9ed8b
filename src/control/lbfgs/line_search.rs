//! Line search for the strong Wolfe conditions (Nocedal & Wright, *Numerical
//! Optimization*, 2nd ed., §3.5: Alg. 3.5 bracketing, Alg. 3.6 `zoom`, eq. 3.59 cubic
//! interpolation).
//!
//! Along the search direction `d` from the current iterate `x`:
//!
//! ```text
//! φ(α)  = Φ(x + α d)                  objective along the ray (objective units)
//! φ'(α) = ∇Φ(x + α d)ᵀ d              its slope; φ'(0) < 0 for a descent direction
//! α                                   step length (dimensionless, 1 = full step d)
//!
//! sufficient decrease:  φ(α) ≤ φ(0) + c₁ α φ'(0)         c₁ = 1e-4   (N&W eq. 3.7a)
//! curvature (strong):   |φ'(α)| ≤ c₂ |φ'(0)|              c₂ = 0.9    (N&W eq. 3.7b)
//! ```
//!
//! Every evaluation returns `φ` and `∇Φ` together, so each trial costs exactly one
//! evaluation and both value and slope feed the interpolation.
//!
//! * Bracketing (Alg. 3.5) starts at α = 1 and extrapolates with the cubic through the
//!   last two trials, safeguarded to `[α_i + 1.1 (α_i − α_{i−1}), α_i + 4 (α_i − α_{i−1})]`
//!   (the extrapolation bounds of Moré & Thuente).
//! * `zoom` (Alg. 3.6) keeps `α_lo` (lowest trial with sufficient decrease) and `α_hi`
//!   and tries the minimiser of the cubic through both ends (eq. 3.59), falling back to the
//!   quadratic through `φ(α_lo), φ'(α_lo), φ(α_hi)` and then to bisection, always kept at
//!   least 10 % of the interval away from either end.
//! * A point that cannot be evaluated counts as `φ = +∞`: it fails sufficient decrease and
//!   becomes `α_hi`, and the next trial bisects `[α_lo, α_hi]`.
//!
//! Two deviations from the textbook: sufficient decrease also demands `φ(α) < φ(0)`
//! (rounding can make the right-hand side equal to `φ(0)`), and when the evaluation budget
//! runs out the lowest point seen is still returned if it is lower than `φ(0)`
//! (a `Decrease` outcome), because every evaluation is an expensive simulation.
use super::{dot, probe, step_point, Evaluation};

/// Sufficient-decrease constant `c₁` of the Wolfe conditions (N&W §3.1).
pub const SUFFICIENT_DECREASE: f64 = 1e-4;
/// Curvature constant `c₂` of the strong Wolfe conditions (N&W §3.1, 0.9 for quasi-Newton).
pub const CURVATURE: f64 = 0.9;

/// Trials keep this fraction of the bracket away from either end in `zoom`.
const ZOOM_MARGIN: f64 = 0.1;
/// Smallest extrapolation, as a multiple of the last step increase (Moré & Thuente).
const EXTRAPOLATE_MIN: f64 = 1.1;
/// Largest extrapolation, as a multiple of the last step increase (Moré & Thuente).
const EXTRAPOLATE_MAX: f64 = 4.0;

/// An accepted point on the ray.
#[derive(Debug, Clone)]
pub(super) struct Accepted {
    /// Step length α; the point is `x + α d` (see [`step_point`]).
    pub alpha: f64,
    /// Objective and gradient at the point.
    pub evaluation: Evaluation,
}

/// Result of one line search.
#[derive(Debug, Clone)]
pub(super) enum Outcome {
    /// The point satisfies the strong Wolfe conditions.
    Wolfe(Accepted),
    /// The budget ran out; this is the lowest point seen and it is lower than `φ(0)`.
    Decrease(Accepted),
    /// The budget ran out (or the bracket collapsed) without any point lower than `φ(0)`.
    Failed,
}

/// What the search knows about one trial step.
#[derive(Debug, Clone, Copy)]
struct Trial {
    /// Step length.
    alpha: f64,
    /// `φ(α)`, `+∞` when not evaluable.
    value: f64,
    /// `φ'(α)`, NaN when not evaluable.
    slope: f64,
}

/// The ray, the budget and the bookkeeping shared by both phases.
struct Search<'a, F> {
    x: &'a [f64],
    direction: &'a [f64],
    origin: Trial,
    evaluations_left: usize,
    point: &'a mut Vec<f64>,
    evaluate: &'a mut F,
    evaluations: &'a mut usize,
    /// Lowest trial below `φ(0)` so far, with its evaluation.
    best: Option<Accepted>,
}

impl<F> Search<'_, F> {
    /// Evaluates `φ(α)` (one evaluation of the objective). The evaluation is handed back
    /// so the caller can accept it ([`accept`]) or keep it as a fallback
    /// ([`Search::remember`]).
    fn trial<E>(&mut self, alpha: f64) -> Result<(Trial, Option<Evaluation>), E>
    where
        F: FnMut(&[f64]) -> Result<Option<Evaluation>, E>,
    {
        self.evaluations_left = self.evaluations_left.saturating_sub(1);
        step_point(self.x, self.direction, alpha, self.point);
        let Some(evaluation) = probe(self.evaluate, self.point, self.evaluations)? else {
            let unevaluable = Trial {
                alpha,
                value: f64::INFINITY,
                slope: f64::NAN,
            };
            return Ok((unevaluable, None));
        };
        let trial = Trial {
            alpha,
            value: evaluation.value,
            slope: dot(&evaluation.gradient, self.direction),
        };
        Ok((trial, Some(evaluation)))
    }

    /// Keeps `evaluation` (at step `alpha`) if it is the lowest point below `φ(0)` so far.
    fn remember(&mut self, alpha: f64, evaluation: Option<Evaluation>) {
        let Some(evaluation) = evaluation else {
            return;
        };
        let lowest = self
            .best
            .as_ref()
            .map_or(self.origin.value, |b| b.evaluation.value);
        if evaluation.value < lowest {
            self.best = Some(Accepted { alpha, evaluation });
        }
    }

    /// Sufficient decrease (N&W eq. 3.7a), plus strict decrease.
    fn sufficient_decrease(&self, t: &Trial) -> bool {
        t.value < self.origin.value
            && t.value <= self.origin.value + SUFFICIENT_DECREASE * t.alpha * self.origin.slope
    }

    /// Strong curvature condition (N&W eq. 3.7b).
    fn curvature(&self, t: &Trial) -> bool {
        t.slope.abs() <= -CURVATURE * self.origin.slope
    }

    /// The outcome when no more trials are possible.
    fn exhausted(&mut self) -> Outcome {
        self.best.take().map_or(Outcome::Failed, Outcome::Decrease)
    }

    /// `zoom` of N&W Alg. 3.6 on the bracket `[lo, hi]` (either order).
    fn zoom<E>(&mut self, mut lo: Trial, mut hi: Trial) -> Result<Outcome, E>
    where
        F: FnMut(&[f64]) -> Result<Option<Evaluation>, E>,
    {
        loop {
            let width = hi.alpha - lo.alpha;
            if self.evaluations_left == 0
                || width.abs() <= 4.0 * f64::EPSILON * lo.alpha.abs().max(hi.alpha.abs())
            {
                return Ok(self.exhausted());
            }
            let (t, evaluation) = self.trial(zoom_step(&lo, &hi))?;
            if !self.sufficient_decrease(&t) || t.value >= lo.value {
                self.remember(t.alpha, evaluation);
                hi = t;
            } else {
                if self.curvature(&t) {
                    return Ok(accept(&t, evaluation));
                }
                self.remember(t.alpha, evaluation);
                if t.slope * (hi.alpha - lo.alpha) >= 0.0 {
                    hi = lo;
                }
                lo = t;
            }
        }
    }
}

/// Searches along `direction` from `x` (where `φ(0) = value`, `φ'(0) = slope < 0`) for a
/// step satisfying the strong Wolfe conditions, using at most `max_evaluations`
/// evaluations. `point` is scratch for the trial points (length of `x`); `evaluations`
/// counts every call of `evaluate`.
#[allow(clippy::too_many_arguments)]
pub(super) fn search<E, F>(
    x: &[f64],
    direction: &[f64],
    value: f64,
    slope: f64,
    max_evaluations: usize,
    point: &mut Vec<f64>,
    evaluate: &mut F,
    evaluations: &mut usize,
) -> Result<Outcome, E>
where
    F: FnMut(&[f64]) -> Result<Option<Evaluation>, E>,
{
    let origin = Trial {
        alpha: 0.0,
        value,
        slope,
    };
    let mut s = Search {
        x,
        direction,
        origin,
        evaluations_left: max_evaluations,
        point,
        evaluate,
        evaluations,
        best: None,
    };
    let mut previous = origin;
    let mut alpha = 1.0;
    loop {
        if s.evaluations_left == 0 {
            return Ok(s.exhausted());
        }
        let (t, evaluation) = s.trial(alpha)?;
        if !s.sufficient_decrease(&t) || (previous.alpha > 0.0 && t.value >= previous.value) {
            s.remember(t.alpha, evaluation);
            return s.zoom(previous, t);
        }
        if s.curvature(&t) {
            return Ok(accept(&t, evaluation));
        }
        s.remember(t.alpha, evaluation);
        if t.slope >= 0.0 {
            return s.zoom(t, previous);
        }
        alpha = extrapolate(&previous, &t);
        previous = t;
    }
}

/// The strong Wolfe point `t` with its evaluation.
fn accept(t: &Trial, evaluation: Option<Evaluation>) -> Outcome {
    match evaluation {
        Some(evaluation) => Outcome::Wolfe(Accepted {
            alpha: t.alpha,
            evaluation,
        }),
        // An unevaluable trial never passes sufficient decrease; kept total anyway.
        None => Outcome::Failed,
    }
}

/// Next trial of the bracketing phase: the cubic minimiser through `previous` and
/// `current`, kept in `[α + 1.1 Δ, α + 4 Δ]` with `Δ = α − α_previous`; the upper bound
/// when the cubic has no minimiser.
fn extrapolate(previous: &Trial, current: &Trial) -> f64 {
    let increase = current.alpha - previous.alpha;
    let lower = current.alpha + EXTRAPOLATE_MIN * increase;
    let upper = current.alpha + EXTRAPOLATE_MAX * increase;
    match cubic_minimizer(previous, current) {
        Some(alpha) => alpha.clamp(lower, upper),
        None => upper,
    }
}

/// Next trial inside the bracket `[lo, hi]`: cubic (eq. 3.59), else quadratic, else
/// bisection, kept at least [`ZOOM_MARGIN`] of the width away from either end.
fn zoom_step(lo: &Trial, hi: &Trial) -> f64 {
    let width = hi.alpha - lo.alpha;
    let candidate = cubic_minimizer(lo, hi)
        .or_else(|| quadratic_minimizer(lo, hi))
        .unwrap_or(lo.alpha + 0.5 * width);
    let fraction = (candidate - lo.alpha) / width;
    let fraction = if fraction.is_finite() {
        fraction.clamp(ZOOM_MARGIN, 1.0 - ZOOM_MARGIN)
    } else {
        0.5
    };
    lo.alpha + fraction * width
}

/// Minimiser of the cubic interpolating `φ` and `φ'` at `a` and `b` (N&W eq. 3.59):
///
/// ```text
/// d₁ = φ'(a) + φ'(b) − 3 (φ(a) − φ(b)) / (a − b)
/// d₂ = sign(b − a) √(d₁² − φ'(a) φ'(b))
/// α  = b − (b − a) (φ'(b) + d₂ − d₁) / (φ'(b) − φ'(a) + 2 d₂)
/// ```
///
/// `None` when the cubic has no local minimiser or any input is not finite.
fn cubic_minimizer(a: &Trial, b: &Trial) -> Option<f64> {
    let d1 = a.slope + b.slope - 3.0 * (a.value - b.value) / (a.alpha - b.alpha);
    let discriminant = d1 * d1 - a.slope * b.slope;
    // Also rejects NaN (non-finite inputs).
    if discriminant.is_nan() || discriminant < 0.0 {
        return None;
    }
    let d2 = (b.alpha - a.alpha).signum() * discriminant.sqrt();
    let alpha =
        b.alpha - (b.alpha - a.alpha) * (b.slope + d2 - d1) / (b.slope - a.slope + 2.0 * d2);
    alpha.is_finite().then_some(alpha)
}

/// Minimiser of the quadratic through `φ(a)`, `φ'(a)` and `φ(b)`:
///
/// ```text
/// q(α) = φ(a) + φ'(a) (α − a) + c (α − a)²,   c = (φ(b) − φ(a) − φ'(a)(b − a)) / (b − a)²
/// α*   = a − φ'(a) / (2c)
/// ```
///
/// `None` when `c ≤ 0` (no minimiser) or any input is not finite.
fn quadratic_minimizer(a: &Trial, b: &Trial) -> Option<f64> {
    let h = b.alpha - a.alpha;
    let c = (b.value - a.value - a.slope * h) / (h * h);
    if !c.is_finite() || c <= 0.0 {
        return None;
    }
    let alpha = a.alpha - a.slope / (2.0 * c);
    alpha.is_finite().then_some(alpha)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trial(alpha: f64, f: impl Fn(f64) -> (f64, f64)) -> Trial {
        let (value, slope) = f(alpha);
        Trial {
            alpha,
            value,
            slope,
        }
    }

    #[test]
    fn cubic_interpolation_is_exact_for_cubics_in_either_order() {
        // φ(α) = (α − 0.3)² (α + 1) has its local minimum at α = 0.3.
        let f = |a: f64| {
            (
                (a - 0.3).powi(2) * (a + 1.0),
                2.0 * (a - 0.3) * (a + 1.0) + (a - 0.3).powi(2),
            )
        };
        let (a, b) = (trial(0.0, f), trial(1.0, f));
        let forward = cubic_minimizer(&a, &b).expect("cubic has a minimiser");
        let backward = cubic_minimizer(&b, &a).expect("cubic has a minimiser");
        assert!((forward - 0.3).abs() < 1e-12, "{forward}");
        assert!((backward - 0.3).abs() < 1e-12, "{backward}");
    }

    #[test]
    fn quadratic_interpolation_is_exact_for_parabolas() {
        let f = |a: f64| ((a - 0.7).powi(2), 2.0 * (a - 0.7));
        let got = quadratic_minimizer(&trial(0.0, f), &trial(2.0, f)).expect("convex");
        assert!((got - 0.7).abs() < 1e-12, "{got}");
        // Concave data has no minimiser.
        let g = |a: f64| (-(a * a) - a, -2.0 * a - 1.0);
        assert!(quadratic_minimizer(&trial(0.0, g), &trial(1.0, g)).is_none());
    }

    #[test]
    fn zoom_step_stays_inside_the_bracket_even_without_information() {
        let lo = Trial {
            alpha: 0.0,
            value: 1.0,
            slope: -1.0,
        };
        let unevaluable = Trial {
            alpha: 1.0,
            value: f64::INFINITY,
            slope: f64::NAN,
        };
        assert_eq!(zoom_step(&lo, &unevaluable), 0.5);
        // Interpolant far outside the bracket is pulled back to the 10 % margin.
        let steep = Trial {
            alpha: 1.0,
            value: 1.0 - 1e-9,
            slope: -1.0,
        };
        let got = zoom_step(&lo, &steep);
        assert!((ZOOM_MARGIN..=1.0 - ZOOM_MARGIN).contains(&got), "{got}");
    }
}
