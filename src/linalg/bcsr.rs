//! 3x3 block compressed sparse rows (Stuyck §5.5), values over a shared [`BlockPattern`].
//!
//! ```text
//! (A x)_i = Σ_{k ∈ row i} values[k] · x[col[k]]      (3x3 block times 3-vector)
//! ```
//! Each row's sum is taken in column order, so the product is bit-identical for any
//! number of threads.
use super::simd::{Avx, Lanes, Scalar};
use super::BlockPattern;
use crate::{Mat3, Vec3};
use std::sync::Arc;

/// Rows per parallel task of [`BlockCsr::mul_vec`] (only the scheduling granularity: the
/// result does not depend on it).
const ROW_CHUNK: usize = 256;

/// A square block-sparse matrix.
#[derive(Debug, Clone)]
pub struct BlockCsr {
    /// The shared pattern.
    pub pattern: Arc<BlockPattern>,
    /// One 3x3 block per stored slot of the pattern.
    pub values: Vec<Mat3>,
}

impl BlockCsr {
    /// All-zero matrix over `pattern`.
    pub fn zeros(pattern: Arc<BlockPattern>) -> Self {
        let values = vec![Mat3::zeros(); pattern.nnz()];
        BlockCsr { pattern, values }
    }

    /// Makes this the all-zero matrix over `pattern`, keeping the allocation of its values
    /// where it is large enough ([`BlockCsr::zeros`] maps fresh pages, faulted in at the
    /// first write: 1.8 MB at 2,601 particles, at each change of the self-contact springs;
    /// a larger pattern gets a fresh buffer with room to spare: growing the old one would
    /// hold both at once).
    pub fn reset(&mut self, pattern: Arc<BlockPattern>) {
        self.values.clear();
        super::resize_discarding(&mut self.values, pattern.nnz(), Mat3::zeros());
        self.pattern = pattern;
    }

    /// Number of block rows (particles).
    pub fn n(&self) -> usize {
        self.pattern.n
    }

    /// `(A x)_i = Σ_k values[k] x[col[k]]` over row `i`, in column order.
    ///
    /// # Panics
    /// If `i ≥ n` or `x` is shorter than a column index of the row.
    #[inline]
    pub fn mul_row(&self, i: usize, x: &[Vec3]) -> Vec3 {
        let p = &*self.pattern;
        let (lo, hi) = (p.row_ptr[i], p.row_ptr[i + 1]);
        let mut acc = Vec3::zeros();
        for (m, &j) in self.values[lo..hi].iter().zip(&p.col[lo..hi]) {
            acc += m * x[j];
        }
        acc
    }

    /// `out[t] = (A x)_{first + t}` for every entry of `out`, as [`BlockCsr::mul_row`]
    /// computes it (the same bits), on the AVX units where there are some
    /// ([`simd`](super::simd)).
    ///
    /// # Panics
    /// If the rows run past `n` or `x` is shorter than a column index of theirs.
    pub fn mul_rows(&self, first: usize, x: &[Vec3], out: &mut [Vec3]) {
        if super::simd::avx() {
            // SAFETY: under `simd::avx`.
            unsafe { self.mul_rows_avx(first, x, out) }
        } else {
            self.mul_rows_with::<Scalar>(first, x, out);
        }
    }

    /// [`BlockCsr::mul_rows`] with the products of `K`; inlined, so that
    /// [`BlockCsr::mul_rows_avx`] compiles it with AVX.
    #[inline(always)]
    fn mul_rows_with<K: Lanes<Mat3>>(&self, first: usize, x: &[Vec3], out: &mut [Vec3]) {
        let p = &*self.pattern;
        for (t, o) in out.iter_mut().enumerate() {
            let (lo, hi) = (p.row_ptr[first + t], p.row_ptr[first + t + 1]);
            // SAFETY: `K` is `Scalar`, or `Avx` inside `mul_rows_avx` (under `simd::avx`).
            unsafe {
                let mut acc = K::load(&Vec3::zeros());
                for (m, &j) in self.values[lo..hi].iter().zip(&p.col[lo..hi]) {
                    acc = K::add(acc, m, &x[j]);
                }
                *o = K::store(acc);
            }
        }
    }

    /// [`BlockCsr::mul_rows_with`] with the AVX products.
    ///
    /// # Safety
    /// Only under [`simd::avx`](super::simd::avx).
    #[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2"))]
    unsafe fn mul_rows_avx(&self, first: usize, x: &[Vec3], out: &mut [Vec3]) {
        self.mul_rows_with::<Avx>(first, x, out);
    }

    /// `y = A x` (parallel over rows; each row summed in column order).
    ///
    /// # Panics
    /// If `x.len()` or `y.len()` differs from the number of rows.
    pub fn mul_vec(&self, x: &[Vec3], y: &mut [Vec3]) {
        let n = self.n();
        assert_eq!(x.len(), n, "mul_vec: x has the wrong length");
        assert_eq!(y.len(), n, "mul_vec: y has the wrong length");
        crate::parallel::for_each_chunk(y, ROW_CHUNK, |k, part| {
            self.mul_rows(k * ROW_CHUNK, x, part)
        });
    }

    /// The diagonal block of row `i` (zero if `i ≥ n`).
    pub fn diagonal(&self, i: usize) -> Mat3 {
        self.pattern
            .slot(i, i)
            .map_or_else(Mat3::zeros, |k| self.values[k])
    }
}
