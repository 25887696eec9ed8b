//! The limited memory of L-BFGS: the last `m` curvature pairs and the two-loop recursion
//! (Nocedal & Wright, *Numerical Optimization*, 2nd ed., §7.2, Alg. 7.4).
//!
//! ```text
//! s_k = x_{k+1} − x_k          step between accepted iterates (variables' units)
//! y_k = g_{k+1} − g_k          change of the gradient (objective units / variables' units)
//! ρ_k = 1 / (y_kᵀ s_k)
//! H_k⁰ = γ_k I,  γ_k = s_{k−1}ᵀ y_{k−1} / y_{k−1}ᵀ y_{k−1}          (N&W eq. 7.20)
//!
//! two-loop recursion, r = H_k g_k:
//!   q ← g_k
//!   for i = k−1 … k−m:  a_i ← ρ_i s_iᵀ q ;  q ← q − a_i y_i
//!   r ← H_k⁰ q
//!   for i = k−m … k−1:  b ← ρ_i y_iᵀ r ;  r ← r + s_i (a_i − b)
//! ```
//!
//! A pair is stored only when its curvature is clearly positive,
//! `s_kᵀ y_k > ε ‖s_k‖ ‖y_k‖`, which keeps every `H_k` symmetric positive definite; with a
//! strong-Wolfe step this holds automatically in exact arithmetic (N&W §6.1), the test
//! guards against rounding and against steps accepted without the curvature condition.
//!
//! Storage: the `2m + 2` vectors (ring plus one spare candidate pair) are allocated during
//! the first `m + 1` updates and then recycled, so later iterations allocate nothing.

use super::{dot, norm};

/// One stored curvature pair `(s, y)` with `ρ = 1 / yᵀs`.
#[derive(Debug, Clone, Default)]
struct Pair {
    s: Vec<f64>,
    y: Vec<f64>,
    rho: f64,
}

/// The `m` most recent curvature pairs, oldest first, plus the scratch of the two loops.
#[derive(Debug, Clone)]
pub(super) struct History {
    /// Ring of pairs; `pairs[(start + i) % pairs.len()]` is the i-th oldest once full.
    pairs: Vec<Pair>,
    /// Index of the oldest pair in `pairs`.
    start: usize,
    /// Number of valid pairs (≤ `capacity`).
    len: usize,
    /// Maximal number of pairs, `m ≥ 1`.
    capacity: usize,
    /// The `a_i` of the first loop, reused.
    coefficients: Vec<f64>,
    /// Buffers for the candidate pair; swapped into the ring when accepted.
    spare: Pair,
}

impl History {
    /// An empty history keeping at most `memory` pairs (`memory = 0` is treated as 1).
    pub(super) fn new(memory: usize) -> Self {
        let capacity = memory.max(1);
        Self {
            pairs: Vec::new(),
            start: 0,
            len: 0,
            capacity,
            coefficients: vec![0.0; capacity],
            spare: Pair::default(),
        }
    }

    /// Number of stored pairs.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Forgets every pair (the buffers are kept for reuse).
    pub(super) fn clear(&mut self) {
        self.start = 0;
        self.len = 0;
    }

    /// Stores the pair `s = x_new − x_old`, `y = g_new − g_old` if its curvature passes
    /// `sᵀy > ε ‖s‖ ‖y‖`; returns whether it was stored. The oldest pair is dropped when full.
    pub(super) fn push(
        &mut self,
        x_old: &[f64],
        x_new: &[f64],
        g_old: &[f64],
        g_new: &[f64],
        epsilon: f64,
    ) -> bool {
        // Build the candidate in the spare slot so a rejected pair never overwrites one
        // that is still in use.
        let spare = &mut self.spare;
        spare.s.clear();
        spare.s.extend(x_new.iter().zip(x_old).map(|(n, o)| n - o));
        spare.y.clear();
        spare.y.extend(g_new.iter().zip(g_old).map(|(n, o)| n - o));
        let sy = dot(&spare.s, &spare.y);
        let accepted =
            sy.is_finite() && sy > 0.0 && sy > epsilon.max(0.0) * norm(&spare.s) * norm(&spare.y);
        if !accepted {
            return false;
        }
        spare.rho = 1.0 / sy;
        let slot = (self.start + self.len) % self.capacity;
        if slot == self.pairs.len() {
            self.pairs.push(Pair::default());
        }
        std::mem::swap(&mut self.spare, &mut self.pairs[slot]);
        if self.len < self.capacity {
            self.len += 1;
        } else {
            self.start = (self.start + 1) % self.capacity;
        }
        true
    }

    /// The i-th oldest stored pair.
    fn pair(&self, i: usize) -> &Pair {
        &self.pairs[(self.start + i) % self.capacity]
    }

    /// Writes the quasi-Newton direction `d = −H_k g` into `direction` by the two-loop
    /// recursion with `H_k⁰ = γ I`, `γ = sᵀy / yᵀy` of the newest pair.
    /// Requires at least one stored pair (returns `false` and leaves `direction` untouched
    /// otherwise).
    pub(super) fn direction(&mut self, gradient: &[f64], direction: &mut [f64]) -> bool {
        if self.len == 0 {
            return false;
        }
        let q = direction;
        q.copy_from_slice(gradient);
        let mut coefficients = std::mem::take(&mut self.coefficients);
        for i in (0..self.len).rev() {
            let pair = self.pair(i);
            let a = pair.rho * dot(&pair.s, q);
            coefficients[i] = a;
            for (qj, yj) in q.iter_mut().zip(&pair.y) {
                *qj -= a * yj;
            }
        }
        let newest = self.pair(self.len - 1);
        let gamma = 1.0 / (newest.rho * dot(&newest.y, &newest.y));
        for qj in q.iter_mut() {
            *qj *= gamma;
        }
        for (i, &a) in coefficients.iter().enumerate().take(self.len) {
            let pair = self.pair(i);
            let b = pair.rho * dot(&pair.y, q);
            for (rj, sj) in q.iter_mut().zip(&pair.s) {
                *rj += sj * (a - b);
            }
        }
        self.coefficients = coefficients;
        for rj in q.iter_mut() {
            *rj = -*rj;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::pseudo_random;
    use super::*;
    use nalgebra::{DMatrix, DVector};

    /// Dense BFGS inverse update (N&W eq. 6.17) applied to `H⁰ = γ I` with the same pairs:
    /// `H ← (I − ρ s yᵀ) H (I − ρ y sᵀ) + ρ s sᵀ`. With all pairs kept, L-BFGS must give
    /// exactly this `H`.
    fn dense_direction(pairs: &[(Vec<f64>, Vec<f64>)], g: &[f64]) -> DVector<f64> {
        let n = g.len();
        let (s_last, y_last) = pairs.last().expect("pairs");
        let gamma = dot(s_last, y_last) / dot(y_last, y_last);
        let mut h = DMatrix::identity(n, n) * gamma;
        for (s, y) in pairs {
            let (s, y) = (DVector::from_column_slice(s), DVector::from_column_slice(y));
            let rho = 1.0 / s.dot(&y);
            let v = DMatrix::identity(n, n) - &y * s.transpose() * rho;
            h = v.transpose() * h * &v + &s * s.transpose() * rho;
        }
        -(h * DVector::from_column_slice(g))
    }

    #[test]
    fn two_loop_recursion_matches_dense_bfgs_update_of_the_newest_pairs() {
        let n = 6;
        let memory = 3;
        let mut history = History::new(memory);
        let mut pairs = Vec::new();
        let zero = vec![0.0; n];
        for k in 0..5u64 {
            let s = pseudo_random(10 + k, n);
            // y = B s with B symmetric positive definite keeps sᵀy > 0.
            let y: Vec<f64> = s
                .iter()
                .enumerate()
                .map(|(i, v)| (1.0 + i as f64) * v + 0.1 * s[(i + 1) % n])
                .collect();
            assert!(history.push(&zero, &s, &zero, &y, 1e-10));
            pairs.push((s, y));
        }
        assert_eq!(history.len(), memory);
        let g = pseudo_random(99, n);
        let mut d = vec![0.0; n];
        assert!(history.direction(&g, &mut d));
        let expected = dense_direction(&pairs[pairs.len() - memory..], &g);
        let error = (DVector::from_column_slice(&d) - &expected).norm() / expected.norm();
        assert!(error < 1e-12, "relative error {error}");
    }

    #[test]
    fn pairs_without_positive_curvature_are_skipped_and_keep_the_memory_intact() {
        let mut history = History::new(2);
        let zero = [0.0; 2];
        assert!(history.push(&zero, &[1.0, 0.0], &zero, &[2.0, 0.0], 1e-10));
        let mut before = [0.0; 2];
        assert!(history.direction(&[1.0, 1.0], &mut before));
        // sᵀy < 0, then sᵀy = 0 (orthogonal): both rejected.
        assert!(!history.push(&zero, &[1.0, 0.0], &zero, &[-1.0, 0.0], 1e-10));
        assert!(!history.push(&zero, &[1.0, 0.0], &zero, &[0.0, 1.0], 1e-10));
        assert_eq!(history.len(), 1);
        let mut after = [0.0; 2];
        assert!(history.direction(&[1.0, 1.0], &mut after));
        assert_eq!(before, after);
        history.clear();
        assert!(!history.direction(&[1.0, 1.0], &mut after));
    }
}
