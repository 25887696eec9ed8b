//! Complete sparse Cholesky factor of the filtered matrix, `Ã = L Lᵀ` (faer's simplicial or
//! supernodal `LLᵀ` after an approximate-minimum-degree ordering), the preconditioner of
//! small systems ([`Preconditioner::SparseCholesky`](super::Preconditioner)):
//!
//! ```text
//! Ã_ij = S_i A_ij S_j  (i ≠ j),      Ã_ii = S_i A_ii S_i + (I − S_i)      (module doc)
//! s = Ã⁻¹ r = L⁻ᵀ L⁻¹ r
//! ```
//! With the exact inverse as `P⁻¹` the modified PCG converges in one or two iterations
//! (two when rounding leaves a residual above the tolerance), and the constraints stay
//! exact because the PCG filters every direction it takes. The fill of `L` grows like
//! `n log n` on a mesh and the work like `n^1.5`, so it pays only below some size: on the
//! 441-particle fig.-1 sheet a numeric factorisation takes 0.9 ms and a solve 0.08 ms,
//! against 100+ IC(0) iterations of 30 µs on the 416-particle skirt; at 2,601 particles
//! the factorisation takes 12 ms (measurements in [`DIRECT_MAX_PARTICLES`]).
//!
//! The symbolic factorisation (ordering, elimination tree, the scalar pattern and where
//! each of its entries comes from in the block matrix) is kept per block pattern. Every
//! call runs on the calling thread (`Par::Seq`), so the factor is bit-identical for any
//! thread count. A matrix that is not numerically positive definite (a compressed
//! system whose Jacobians make `Ã` indefinite) makes [`DirectFactor::factor`] fail, and
//! the caller falls back to IC(0).
use super::super::{BlockCsr, BlockPattern};
use crate::{Mat3, Vec3};
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt::factor::LltRegularization;
use faer::sparse::linalg::cholesky::{
    factorize_symbolic_cholesky, LltRef, SymbolicCholesky, SymmetricOrdering,
};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMat};
use faer::{Conj, Mat, Par, Side};
use std::sync::{Arc, Mutex, PoisonError};

/// Largest system (particles) [`Preconditioner::Auto`](super::Preconditioner) factors
/// completely (from the start, or once IC(0) proves costly when adaptive, see
/// [`AUTO_SWITCH`](super::AUTO_SWITCH)); IC(0) above. Measured (faer on one thread, fig.-1 sheet, numeric
/// factorisation / solve): 441 particles 0.94 / 0.08 ms, 961: 2.6 / 0.20 ms, 2,601:
/// 12.0 / 0.67 ms, while IC(0) costs a 0.3–0.6 ms factorisation and 50–130 iterations
/// of 30–80 µs per step at these sizes.
pub const DIRECT_MAX_PARTICLES: usize = 1024;

/// The symbolic part, kept per block pattern.
#[derive(Debug)]
struct Symbolic {
    pattern: Arc<BlockPattern>,
    /// Lower triangle of the scalar `3n × 3n` matrix, column by column.
    csc: SymbolicSparseColMat<usize>,
    /// Per scalar entry: the block slot `(j, i)` (row `j` of the block pattern, `i ≥ j`)
    /// and the entry `(c, r)` of that block, with `j`, `i` the block column and row.
    sources: Vec<(usize, usize, usize, u8, u8)>,
    cholesky: SymbolicCholesky<usize>,
}

/// A complete Cholesky factor of `Ã`, reused across calls (its symbolic part per pattern).
#[derive(Debug, Default)]
pub(crate) struct DirectFactor {
    symbolic: Option<Symbolic>,
    /// `Ã` in the order of `csc`.
    values: Vec<f64>,
    /// The blocks of `Ã` that a filter changes, by slot of the block pattern (ascending).
    filtered: Vec<(usize, Mat3)>,
    /// The numeric factor (valid after a successful [`DirectFactor::factor`]).
    l_values: Vec<f64>,
    valid: bool,
    /// Right-hand side and faer's stack of [`DirectFactor::apply`], kept across calls.
    scratch: Mutex<Option<SolveScratch>>,
}

/// The right-hand side and faer's stack of one solve.
struct SolveScratch(Mat<f64>, MemBuffer);

impl std::fmt::Debug for SolveScratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SolveScratch({} rows)", self.0.nrows())
    }
}

impl Clone for DirectFactor {
    /// A clone starts empty (the symbolic factorisation is rebuilt on first use).
    fn clone(&self) -> Self {
        DirectFactor::default()
    }
}

impl DirectFactor {
    /// Whether the symbolic factorisation is that of `pattern` (compared by pointer).
    pub(crate) fn prepared_for(&self, pattern: &Arc<BlockPattern>) -> bool {
        matches!(&self.symbolic, Some(s) if Arc::ptr_eq(&s.pattern, pattern))
    }

    /// Builds the symbolic factorisation of `pattern` unless it is already there (done by
    /// [`DirectFactor::factor`] otherwise; ahead of it, it can overlap other work).
    pub(crate) fn prepare(&mut self, pattern: &Arc<BlockPattern>) {
        if !self.prepared_for(pattern) {
            self.valid = false;
            // Dropped before the new one is built (see `Deflation::prepare_pattern`).
            self.symbolic = None;
            self.symbolic = Symbolic::new(pattern);
            *self
                .scratch
                .get_mut()
                .unwrap_or_else(PoisonError::into_inner) = None;
        }
    }

    /// Factors `Ã` of `a` under the filters `filter(i)` (`None` for a free particle).
    /// Returns false, leaving the factor unusable, if `Ã` is not numerically positive
    /// definite or faer cannot allocate.
    pub(crate) fn factor(&mut self, a: &BlockCsr, filter: impl Fn(usize) -> Option<Mat3>) -> bool {
        self.valid = false;
        self.prepare(&a.pattern);
        let Some(sym) = &self.symbolic else {
            return false;
        };
        // The filtered blocks `S_j A_ji S_i` (+ `I − S_j` on the diagonal) of the rows
        // with a filter on either side, each formed once: a block gives up to 9 entries.
        let filters: Vec<Option<Mat3>> = (0..a.n()).map(&filter).collect();
        self.filtered.clear();
        let pattern = &a.pattern;
        for (j, s_j) in filters.iter().enumerate() {
            for k in pattern.row_ptr[j]..pattern.row_ptr[j + 1] {
                let i = pattern.col[k];
                if s_j.is_none() && filters[i].is_none() {
                    continue;
                }
                let mut m = a.values[k];
                if let Some(s) = s_j {
                    m = s * m;
                }
                if let Some(s) = filters[i] {
                    m *= s;
                }
                if let (true, Some(s)) = (i == j, s_j) {
                    m += Mat3::identity() - s;
                }
                self.filtered.push((k, m));
            }
        }
        let filtered = &self.filtered;
        self.values.clear();
        self.values
            .extend(sym.sources.iter().map(|&(slot, j, i, c, r)| {
                let block = if filters[j].is_none() && filters[i].is_none() {
                    &a.values[slot]
                } else {
                    let at = filtered.binary_search_by_key(&slot, |&(k, _)| k);
                    &filtered[at.expect("every filtered slot was formed")].1
                };
                block[(c as usize, r as usize)]
            }));
        let matrix = SparseColMatRef::new(sym.csc.as_ref(), &self.values);
        self.l_values.resize(sym.cholesky.len_val(), 0.0);
        let scratch = sym
            .cholesky
            .factorize_numeric_llt_scratch::<f64>(Par::Seq, Default::default());
        let Ok(mut buffer) = MemBuffer::try_new(scratch) else {
            return false;
        };
        let factored = sym.cholesky.factorize_numeric_llt(
            &mut self.l_values,
            matrix,
            Side::Lower,
            LltRegularization::default(),
            Par::Seq,
            MemStack::new(&mut buffer),
            Default::default(),
        );
        self.valid = factored.is_ok() && self.l_values.iter().all(|x| x.is_finite());
        self.valid
    }

    /// `s = Ã⁻¹ r`.
    ///
    /// # Panics
    /// If the last [`DirectFactor::factor`] failed, or `r`, `s` do not have one entry per
    /// particle (caller bugs).
    pub(crate) fn apply(&self, r: &[Vec3], s: &mut [Vec3]) {
        let sym = self.symbolic.as_ref().filter(|_| self.valid);
        let sym = sym.expect("apply after a successful factor");
        let n = sym.pattern.n;
        assert_eq!(r.len(), n, "apply: r has the wrong length");
        assert_eq!(s.len(), n, "apply: s has the wrong length");
        let mut guard = self.scratch.lock().unwrap_or_else(PoisonError::into_inner);
        let SolveScratch(rhs, buffer) = guard.get_or_insert_with(|| {
            let req = sym.cholesky.solve_in_place_scratch::<f64>(1, Par::Seq);
            SolveScratch(Mat::zeros(3 * n, 1), MemBuffer::new(req))
        });
        for (i, ri) in r.iter().enumerate() {
            for c in 0..3 {
                rhs[(3 * i + c, 0)] = ri[c];
            }
        }
        LltRef::new(&sym.cholesky, &self.l_values).solve_in_place_with_conj(
            Conj::No,
            rhs.as_mut(),
            Par::Seq,
            MemStack::new(buffer),
        );
        for (i, si) in s.iter_mut().enumerate() {
            *si = Vec3::new(rhs[(3 * i, 0)], rhs[(3 * i + 1, 0)], rhs[(3 * i + 2, 0)]);
        }
    }
}

impl Symbolic {
    /// The scalar lower-triangle pattern of `pattern`, where each entry comes from, and its
    /// symbolic Cholesky factorisation (AMD ordering); `None` if faer fails (allocation).
    fn new(pattern: &Arc<BlockPattern>) -> Option<Symbolic> {
        let n = pattern.n;
        let mut col_ptr = Vec::with_capacity(3 * n + 1);
        let mut row_idx = Vec::new();
        let mut sources = Vec::new();
        col_ptr.push(0);
        // Scalar column 3j + c holds rows 3i + r ≥ 3j + c, read from the block (j, i) of
        // row j (the pattern is symmetric), entry (c, r).
        for j in 0..n {
            let row = pattern.row_ptr[j]..pattern.row_ptr[j + 1];
            for c in 0..3u8 {
                for k in row.clone() {
                    let i = pattern.col[k];
                    for r in 0..3u8 {
                        if 3 * i + r as usize >= 3 * j + c as usize {
                            row_idx.push(3 * i + r as usize);
                            sources.push((k, j, i, c, r));
                        }
                    }
                }
                col_ptr.push(row_idx.len());
            }
        }
        let csc = SymbolicSparseColMat::new_checked(3 * n, 3 * n, col_ptr, None, row_idx);
        let cholesky = factorize_symbolic_cholesky(
            csc.as_ref(),
            Side::Lower,
            SymmetricOrdering::Amd,
            Default::default(),
        )
        .ok()?;
        Some(Symbolic {
            pattern: pattern.clone(),
            csc,
            sources,
            cholesky,
        })
    }
}
