//! Modified preconditioned conjugate gradient (Baraff §5.3) with per-particle filters.
//!
//! ```text
//! filter(a)_i = S_i a_i              S_i = I (free), I − p pᵀ, I − p pᵀ − q qᵀ, 0 (pinned)
//! Δv = z; δ₀ = filter(b)ᵀ P⁻¹ filter(b); r = filter(b − AΔv); c = filter(P⁻¹ r); δ = rᵀc
//! while δ > ε² δ₀: q = filter(A c); α = δ/(cᵀq); Δv += α c; r −= α q;
//!                  s = P⁻¹ r; δ' = δ; δ = rᵀ s; c = filter(s + (δ/δ') c)
//! ```
//! `P` is one of the [`Preconditioner`]s: Baraff's block Jacobi `P_i = A_ii` (3x3,
//! inverted once per solve), or a triangular one factored once per solve (symmetric block
//! Gauss–Seidel, block IC(0); see [`precond`](super::precond)). The components of Δv in the
//! constrained directions equal `z` exactly after any number of iterations, whatever `P`
//! (the filter is applied after `P⁻¹`). After the solve, `e = A Δv − b` restricted to the
//! constrained directions is the constraint force (times h) that enforced them (§5.4).
//!
//! The stopping rule is Baraff's in the block-Jacobi norm whatever `P` accelerates the
//! iteration, so that `ε` keeps one meaning (the residual it allows):
//! ```text
//! stop when  rᵀ filter(D⁻¹ r) ≤ ε² filter(b)ᵀ D⁻¹ filter(b),     D_i = A_ii
//! ```
//! (with `P = D` this is the `δ ≤ ε² δ₀` above, and block Jacobi runs bit-identically to
//! Baraff's algorithm). The same ε thus allows the same residual for every preconditioner;
//! the error it leaves still differs (at ε = 1e-4 the 2,601-particle two-corner sheet ends
//! 12 frames within 0.10 mm of a 1e-8 solve with block Jacobi, 0.25 mm with Gauss–Seidel,
//! 3.1 mm with IC(0), 0.36 mm with deflated IC(0); at 1e-5 IC(0) 0.11 mm, deflated IC(0)
//! 0.023 mm). The smooth error modes, which a small residual hides, are what deflation
//! solves exactly.
//!
//! With [`PcgSettings::deflation`] the iteration is deflated by a coarse space of
//! particle aggregates ([`deflation`](super::deflation)): the start takes the coarse
//! part of the solution (`Δv += Q r`, `r ← P_D r`), and every preconditioned residual is
//! made Ã-orthogonal to the coarse space (`s ← P_Dᵀ s`), so every residual stays
//! orthogonal to it and the loop tests the residual of `Δv` itself.
//!
//! Symbols: `A` the SPD system matrix of Baraff eq. 16 (kg), `b` its right side (N·s),
//! `Δv` the velocity change (m/s), `z` the prescribed velocity change in the constrained
//! directions (m/s), `p, q` unit constrained directions, `ε` the relative tolerance.
//!
//! Implementation: one solve is a block-sparse product `A c` fused with the filter and the
//! reduction `cᵀq`, one pass fusing the `α` updates of `Δv` and `r` with `s = P⁻¹ r` and
//! `rᵀs`, and one pass for the new direction `c`. Every reduction follows the fixed-chunk
//! rule of [`block3`](super::block3), so the result is bit-identical for any thread
//! count. A triangular preconditioner replaces the fused `s = P⁻¹ r` by its two sweeps,
//! which run two domains of the mesh in parallel and their separator after them
//! ([`precond`](super::precond); deterministic as well). No allocation happens once the [`PcgScratch`] has been
//! sized by a first solve, but for the deflation's set-up (a few vectors of one entry per
//! particle or aggregate, and faer's factorisation stack, once per solve).
use super::block3::{spd_inverse_or_diagonal, sum_in_order, CHUNK};
use super::deflation::{Deflation, PROJECT_PRODUCTS_BELOW};
use super::precond::{Preconditioner, TriangularFactor};
use super::{BlockCsr, BlockPattern};
use crate::stop::Stop;
use crate::{parallel, Mat3, Vec3};
use rayon::prelude::*;
use std::sync::Arc;

mod jacobi;
mod triangular;
use jacobi::{jacobi_start, jacobi_update};
use triangular::Triangular;

/// Constraint of one particle: the filter `S_i` (projection on its free directions) and the
/// prescribed velocity change `z_i` in its constrained directions (`(I − S_i) z_i = z_i`).
///
/// `S_i` must be a symmetric projection (`S² = S = Sᵀ`) for the solver to be a conjugate
/// gradient method on the free subspace; the four forms of the module doc are.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Constraint {
    /// Particle index.
    pub particle: usize,
    /// `S_i`.
    pub filter: Mat3,
    /// `z_i`.
    pub z: Vec3,
}

/// Stopping rule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PcgSettings {
    /// Relative tolerance ε on the preconditioned residual (Baraff: stop when δ ≤ ε² δ₀).
    /// A negative or non-finite value is treated as 0 (iterate to the cap).
    pub tolerance: f64,
    /// Iteration cap.
    pub max_iterations: usize,
    /// Start from the caller's `dv` in the free directions (`Δv₀ = S dv + z`) instead of
    /// `Δv₀ = z`: consecutive implicit steps have similar Δv, so this saves iterations.
    /// The constrained components are still `z` (up to rounding of `(I − S) S`).
    pub warm_start: bool,
    /// Deflate the iteration by the coarse space of particle aggregates
    /// ([`deflation`](super::deflation)) when the preconditioner is incomplete (IC(0),
    /// Gauss–Seidel); ignored with block Jacobi and when the complete sparse Cholesky
    /// factor is used (it solves in one or two iterations).
    pub deflation: bool,
}

impl Default for PcgSettings {
    fn default() -> Self {
        PcgSettings {
            tolerance: 1e-6,
            max_iterations: 1000,
            warm_start: false,
            deflation: false,
        }
    }
}

/// Outcome of one solve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PcgResult {
    /// Iterations performed.
    pub iterations: usize,
    /// `sqrt(δ/δ₀)` at exit, in the block-Jacobi norm of the stopping rule (0 if nothing was to be solved, +∞ if `A` or `b` held
    /// non-finite values; see [`modified_pcg`] for the reference used when δ₀ = 0).
    pub relative_residual: f64,
    /// Whether the tolerance was reached (false when the cap was hit or the iteration broke
    /// down: `cᵀq ≤ 0` or a non-finite value; `Δv` is then the last finite iterate).
    pub converged: bool,
}

/// Marker of a free particle in [`PcgScratch`]'s dense filter index.
const FREE: u32 = u32::MAX;

/// Work vectors reused across solves (sized on first use).
#[derive(Debug, Default, Clone)]
pub struct PcgScratch {
    /// Filtered residual `r`.
    r: Vec<Vec3>,
    /// Search direction `c`.
    c: Vec<Vec3>,
    /// `q = filter(A c)` (also `A z` at start).
    q: Vec<Vec3>,
    /// Preconditioned residual `s = P⁻¹ r`.
    s: Vec<Vec3>,
    /// `P_i⁻¹ = A_ii⁻¹` (or its fallback, see [`spd_inverse_or_diagonal`]).
    inv_diag: Vec<Mat3>,
    /// Per particle: index into the constraint list, or [`FREE`].
    filter_of: Vec<u32>,
    /// Per-chunk partial sums.
    partials: Vec<f64>,
    /// Per-chunk partial sums of the two start-up reductions (δ₀, δ).
    partials2: Vec<(f64, f64)>,
    /// Per-chunk partial sums of the three start-up reductions of a triangular
    /// preconditioner (δ₀, δ, and the δ of the stopping rule).
    partials3: Vec<(f64, f64, f64)>,
    /// Factors of a triangular preconditioner (unused by block Jacobi).
    factor: TriangularFactor,
    /// Coarse space of the deflated iteration.
    deflation: Deflation,
    /// A stop request polled before every iteration ([`crate::stop`]): once raised, the
    /// solve ends unconverged at once.
    stop: Stop,
}

impl PcgScratch {
    /// Shares `stop` with the solves that use this scratch: a raised flag ends a solve
    /// before its next iteration, unconverged (the caller abandons the step).
    pub fn set_stop(&mut self, stop: Stop) {
        self.stop = stop;
    }

    /// IC(0) pivots of the last solve that were replaced by the diagonal block (0 for the
    /// other preconditioners).
    pub fn pivot_fallbacks(&self) -> usize {
        self.factor.stats.pivot_fallbacks
    }

    /// Makes [`Preconditioner::Auto`] adaptive for the solves with this scratch
    /// ([`TriangularFactor::adapt`]).
    pub fn adapt_auto(&mut self, on: bool) {
        self.factor.adapt(on);
    }

    /// The preconditioner's factor, whose adaptive choice carries across solves
    /// ([`TriangularFactor::switched_to_complete`]).
    pub fn factor_mut(&mut self) -> &mut TriangularFactor {
        &mut self.factor
    }

    /// The preconditioner's factor.
    pub fn factor(&self) -> &TriangularFactor {
        &self.factor
    }

    /// Whether a solve of a matrix over `pattern` with `preconditioner` (deflated where
    /// `deflation`) would first build per-pattern structures: the preconditioner's
    /// (see [`TriangularFactor::prepare`]) and the deflation's aggregates.
    pub fn needs_prepare(
        &self,
        pattern: &Arc<BlockPattern>,
        preconditioner: Preconditioner,
        deflation: bool,
    ) -> bool {
        self.factor.needs_prepare(pattern, preconditioner)
            || (deflation
                && self.deflates(pattern, preconditioner)
                && !self.deflation.prepared_for(pattern))
    }

    /// Builds the per-pattern structures that the next solve over `pattern` would build
    /// first ([`PcgScratch::needs_prepare`]), so that the caller can overlap that serial
    /// work with the assembly of the matrix's values. The solve is the same either way.
    pub fn prepare(
        &mut self,
        pattern: &Arc<BlockPattern>,
        preconditioner: Preconditioner,
        deflation: bool,
    ) {
        self.factor.prepare(pattern, preconditioner);
        if deflation && self.deflates(pattern, preconditioner) {
            self.deflation.prepare_pattern(pattern);
        }
    }

    /// Whether a deflated solve over `pattern` would use the deflation: only an
    /// incomplete triangular factor leaves anything to deflate.
    fn deflates(&self, pattern: &Arc<BlockPattern>, preconditioner: Preconditioner) -> bool {
        preconditioner != Preconditioner::BlockJacobi
            && !self.factor.wants_complete(pattern.n, preconditioner)
    }

    /// Whether the last solve used the complete sparse Cholesky factor.
    pub fn used_complete_factor(&self) -> bool {
        self.factor.stats.complete
    }
}

/// The filter of §5.3 as a dense per-particle lookup over the sparse constraint list.
#[derive(Clone, Copy)]
struct Filter<'a> {
    of: &'a [u32],
    constraints: &'a [Constraint],
}

impl Filter<'_> {
    /// `S_i a`.
    #[inline]
    fn apply(&self, i: usize, a: Vec3) -> Vec3 {
        match self.of[i] {
            FREE => a,
            k => self.constraints[k as usize].filter * a,
        }
    }

    /// `S_i`, `None` for a free particle.
    #[inline]
    fn matrix(&self, i: usize) -> Option<Mat3> {
        match self.of[i] {
            FREE => None,
            k => Some(self.constraints[k as usize].filter),
        }
    }
}

/// Checks the constraint indices and fills the dense index (later entries win when a
/// particle is listed twice).
fn index_constraints(n: usize, constraints: &[Constraint], of: &mut Vec<u32>) {
    of.clear();
    of.resize(n, FREE);
    assert!(constraints.len() < FREE as usize, "too many constraints");
    for (k, c) in constraints.iter().enumerate() {
        assert!(
            c.particle < n,
            "constraint on particle {} of {n}",
            c.particle
        );
        of[c.particle] = k as u32;
    }
}

/// Solves `A Δv = b` under `constraints` (particles not listed are free) into `dv`
/// (its input value is ignored). `A` must be symmetric positive definite on the free
/// subspace.
///
/// Follows Baraff §5.3 line by line (module doc) with the block-Jacobi preconditioner
/// `P_i = A_ii` (inverted once per solve by [`spd_inverse_or_diagonal`]). Guarantees:
/// - `(I − S_i) Δv_i = z_i` for every constrained particle after any number of iterations,
///   including 0 and a breakdown (exactly for pinned and axis-aligned filters, to rounding
///   of `S_i c` otherwise);
/// - `δ₀ = 0` and `r = filter(b − A z) = 0` (nothing to solve) returns `Δv = z`,
///   0 iterations, converged; if `δ₀ = 0` but `r ≠ 0` (only the prescribed `z` drives the
///   free particles, e.g. a moving pin without forces) the initial `δ = rᵀc` replaces `δ₀`
///   as the reference of the stopping rule, where Baraff's rule `δ > ε²·0` would never
///   stop;
/// - `cᵀq ≤ 0` or non-finite values stop the iteration with `converged = false` and the
///   last finite `Δv`, never NaN.
///
/// A particle listed twice takes its later constraint.
///
/// Always block Jacobi (Baraff's, bit-identical to before IC(0) became the default of
/// [`Preconditioner`]); [`modified_pcg_with`] chooses the preconditioner.
///
/// # Panics
/// If `b` or `dv` does not have one entry per row of `A`, or a constraint names a particle
/// out of range (caller bugs, not user data).
pub fn modified_pcg(
    a: &BlockCsr,
    b: &[Vec3],
    constraints: &[Constraint],
    settings: &PcgSettings,
    scratch: &mut PcgScratch,
    dv: &mut [Vec3],
) -> PcgResult {
    let p = Preconditioner::BlockJacobi;
    modified_pcg_with(a, b, constraints, settings, p, scratch, dv)
}

/// [`modified_pcg`] with the preconditioner `preconditioner` (same guarantees; a
/// triangular preconditioner falls back to block Jacobi if `A`'s pattern is not
/// structurally symmetric).
///
/// # Panics
/// As [`modified_pcg`].
pub fn modified_pcg_with(
    a: &BlockCsr,
    b: &[Vec3],
    constraints: &[Constraint],
    settings: &PcgSettings,
    preconditioner: Preconditioner,
    scratch: &mut PcgScratch,
    dv: &mut [Vec3],
) -> PcgResult {
    // An adaptive `Auto` tries IC(0) on a small system only up to the iterations the
    // complete factor costs; past them it switches and solves again
    // (`TriangularFactor::adapt`). The returned count includes the abandoned iterations.
    let probe = (preconditioner == Preconditioner::Auto)
        .then(|| scratch.factor.probe_limit(a.n()))
        .flatten();
    let capped = PcgSettings {
        max_iterations: probe.map_or(settings.max_iterations, |p| p.min(settings.max_iterations)),
        ..*settings
    };
    let first = solve(a, b, constraints, &capped, preconditioner, scratch, dv);
    // Only the cap counts: a breakdown (an indefinite System-mode matrix) is the caller's
    // to handle, whatever the preconditioner.
    let capped_out = !first.converged && first.iterations >= capped.max_iterations;
    if probe.is_none() || !capped_out || !scratch.factor.switch_if_costly(a.n()) {
        return first;
    }
    let second = solve(a, b, constraints, settings, preconditioner, scratch, dv);
    PcgResult {
        iterations: first.iterations + second.iterations,
        ..second
    }
}

/// One run of [`modified_pcg_with`]: the module doc's algorithm line by line, each stage a
/// function of its own (the fused passes of block Jacobi in [`jacobi`], those of a
/// triangular preconditioner in [`triangular`]).
fn solve(
    a: &BlockCsr,
    b: &[Vec3],
    constraints: &[Constraint],
    settings: &PcgSettings,
    preconditioner: Preconditioner,
    scratch: &mut PcgScratch,
    dv: &mut [Vec3],
) -> PcgResult {
    let n = a.n();
    assert_eq!(b.len(), n, "modified_pcg: b has the wrong length");
    assert_eq!(dv.len(), n, "modified_pcg: dv has the wrong length");
    let PcgScratch {
        r,
        c,
        q,
        s,
        inv_diag,
        filter_of,
        partials,
        partials2,
        partials3,
        factor,
        deflation,
        stop,
    } = scratch;
    index_constraints(n, constraints, filter_of);
    let f = Filter {
        of: filter_of,
        constraints,
    };
    for v in [&mut *r, &mut *c, &mut *q, &mut *s] {
        v.resize(n, Vec3::zeros());
    }
    let (triangular, deflate) =
        factor_preconditioner(a, f, settings, preconditioner, factor, deflation, inv_diag);
    let mut tri = Triangular {
        factor,
        deflation,
        deflate,
        inv_diag,
        f,
    };

    let has_z = start_iterate(settings, constraints, f, dv);
    if has_z {
        a.mul_vec(dv, q);
    }

    // Lines 3-6 in one pass: δ₀ = f(b)ᵀP⁻¹f(b), r = f(b − Az), c = f(P⁻¹r), δ = rᵀc.
    // `measure` is the δ of the stopping rule, always in the block-Jacobi norm
    // (`rᵀ f(D⁻¹ r)`, D = diag blocks of A); `delta` drives the CG recurrences in the norm of
    // the chosen preconditioner. They coincide for block Jacobi.
    let (delta0, mut delta, mut measure) = if triangular {
        tri.start(b, q, has_z, dv, r, s, c, partials3)
    } else {
        let (delta0, delta) = jacobi_start(b, q, tri.inv_diag, f, has_z, r, c, partials2);
        (delta0, delta, delta)
    };

    if !delta0.is_finite() || !delta.is_finite() || !measure.is_finite() {
        return PcgResult {
            iterations: 0,
            relative_residual: f64::INFINITY,
            converged: false,
        };
    }
    // Reference of the stopping rule: Baraff's δ₀, or, when filter(b) = 0 but the
    // prescribed z still drives the free particles (r ≠ 0), the initial δ.
    let reference = if delta0 > 0.0 { delta0 } else { measure };
    if reference <= 0.0 {
        return PcgResult {
            iterations: 0,
            relative_residual: 0.0,
            converged: true,
        };
    }
    let eps = if settings.tolerance.is_finite() && settings.tolerance > 0.0 {
        settings.tolerance
    } else {
        0.0
    };
    let threshold = eps * eps * reference;
    let mut iterations = 0;
    let converged = loop {
        // Line 7.
        if measure <= threshold {
            break true;
        }
        if iterations >= settings.max_iterations || stop.requested() {
            break false;
        }
        // Lines 8-9: q = f(A c), α = δ / cᵀq.
        let cq = filtered_product(a, c, f, q, partials);
        // q ← P_D q, fused into the update of r below: keeps r orthogonal to the coarse
        // space against rounding (q's coarse part is rounding, c being Ã-orthogonal to
        // it, so cᵀq stands); only for tight solves, where that rounding tells.
        let project_q = deflate && settings.tolerance < PROJECT_PRODUCTS_BELOW;
        if project_q {
            tri.deflation.product_coefficients(q);
        }
        let alpha = delta / cq;
        if !(cq > 0.0 && cq.is_finite() && alpha.is_finite()) {
            break false;
        }
        // Lines 10-14 fused: Δv += αc, r −= αq, s = P⁻¹r, δ = rᵀs (the sweeps of a
        // triangular P⁻¹ after the element-wise pass).
        let delta_new = if triangular {
            let (d, m) = tri.update(alpha, project_q, dv, r, s, c, q, partials);
            measure = m;
            d
        } else {
            let d = jacobi_update(alpha, dv, r, s, c, q, tri.inv_diag, partials);
            measure = d;
            d
        };
        iterations += 1;
        if !delta_new.is_finite() || !measure.is_finite() {
            break false;
        }
        // Line 15: c = f(s + (δ_new/δ_old) c).
        let beta = delta_new / delta;
        delta = delta_new;
        next_direction(beta, s, f, tri.deflation, c);
    };
    PcgResult {
        iterations,
        relative_residual: (measure / reference).max(0.0).sqrt(),
        converged,
    }
}

/// Factors the preconditioner for `a` (and, deflated, sets up the coarse space beside an
/// incomplete factor) and inverts the diagonal blocks into `inv_diag`: the block-Jacobi
/// preconditioner of Baraff's method and the norm of the stopping rule for every
/// preconditioner. Returns `(triangular, deflate)`: whether `P` is a triangular factor, and
/// whether the solve is deflated.
fn factor_preconditioner(
    a: &BlockCsr,
    f: Filter,
    settings: &PcgSettings,
    preconditioner: Preconditioner,
    factor: &mut TriangularFactor,
    deflation: &mut Deflation,
    inv_diag: &mut Vec<Mat3>,
) -> (bool, bool) {
    let n = a.n();
    factor.stats = Default::default();
    // The deflation's set-up does not depend on the factor: when an incomplete factor is
    // coming, the two run side by side, each one's serial parts (the separator rows, the
    // coarse matrix and its Cholesky factor) beside the other's parallel ones.
    let beside = settings.deflation
        && preconditioner != Preconditioner::BlockJacobi
        && !factor.wants_complete(n, preconditioner);
    let (triangular, prepared) = if beside {
        let (triangular, prepared) = parallel::join(
            || factor.factor(a, |i| f.matrix(i), preconditioner),
            || deflation.prepare(a, |i| f.matrix(i)),
        );
        (triangular, Some(prepared))
    } else {
        (factor.factor(a, |i| f.matrix(i), preconditioner), None)
    };
    // (A complete factor solves in one or two iterations: nothing to deflate.)
    let deflate = triangular
        && settings.deflation
        && !factor.stats.complete
        && prepared.unwrap_or_else(|| deflation.prepare(a, |i| f.matrix(i)));
    if !deflate {
        deflation.deactivate();
    }
    inv_diag.resize(n, Mat3::zeros());
    parallel::fill(inv_diag, CHUNK, |i| spd_inverse_or_diagonal(&a.diagonal(i)));
    (triangular, deflate)
}

/// Line 2: `Δv = z` (free particles have no constrained direction: z = 0), or with a warm
/// start `Δv = S dv + z` (non-finite entries of `dv` taken as 0). Returns whether `Δv` may
/// be non-zero, i.e. whether `A Δv` has to be computed.
fn start_iterate(
    settings: &PcgSettings,
    constraints: &[Constraint],
    f: Filter,
    dv: &mut [Vec3],
) -> bool {
    if settings.warm_start {
        dv.par_iter_mut().enumerate().for_each(|(i, x)| {
            if !x.iter().all(|c| c.is_finite()) {
                *x = Vec3::zeros();
            }
            *x = f.apply(i, *x);
        });
        for k in constraints {
            dv[k.particle] += k.z;
        }
    } else {
        dv.fill(Vec3::zeros());
        for k in constraints {
            dv[k.particle] = k.z;
        }
    }
    settings.warm_start || constraints.iter().any(|k| k.z != Vec3::zeros())
}

/// Lines 8-9's product: `q = f(A c)` fused with the reduction `cᵀq`, which it returns.
fn filtered_product(
    a: &BlockCsr,
    c: &[Vec3],
    f: Filter,
    q: &mut [Vec3],
    partials: &mut Vec<f64>,
) -> f64 {
    parallel::chunks(q, CHUNK, partials, |k, qc: &mut [Vec3]| {
        let mut acc = 0.0;
        a.mul_rows(k * CHUNK, c, qc);
        for (t, qi) in qc.iter_mut().enumerate() {
            let i = k * CHUNK + t;
            *qi = f.apply(i, *qi);
            acc += c[i].dot(qi);
        }
        acc
    });
    sum_in_order(partials)
}

/// Line 15: `c = f(s + β c)`, with the deflation's `s ← P_Dᵀ s` fused in (its basis rows
/// are zero when the solve is not deflated).
fn next_direction(beta: f64, s: &[Vec3], f: Filter, coarse: &Deflation, c: &mut [Vec3]) {
    parallel::for_each_chunk((c, s), CHUNK, |k, (cc, sc)| {
        for (t, (ci, si)) in cc.iter_mut().zip(sc).enumerate() {
            let i = k * CHUNK + t;
            *ci = f.apply(i, si - coarse.basis_row(i) + beta * *ci);
        }
    });
}
