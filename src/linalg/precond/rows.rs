//! Row loops of the factorisations and the sweeps over one part (domain `A`, domain `B`
//! or the separator `S`) of the permuted matrix `Π Ã Πᵀ` (see [`order`](super::order)),
//! and the driver running the two domains on two threads.
//!
//! The factor arrays of a domain are contiguous (rows of `A` precede those of `B`, those
//! of `B` precede `S`): a domain's loop gets the sub-slices of its rows, shifted by the
//! [`Rows`] bases, and touches nothing else, so the borrow checker proves the domains
//! independent. The equations are those of the module doc of [`precond`](super).
use super::structure::Structure;
use super::{pivot_inverse, Filtered};
use crate::linalg::block3::spd_inverse_or_diagonal;
use crate::linalg::simd::{Avx, Block, Lanes, Scalar};
use crate::{Mat3, Vec3};
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// A run of rows whose factor entries live in slices starting at entry `lower_base` (of
/// the strictly lower `L`, [`Structure::lower_slot`]) and row `row_base` (of `D⁻¹`).
pub(super) struct Rows {
    /// Rows (positions in the elimination order).
    pub(super) range: Range<usize>,
    /// First entry of the `L` slice the loop receives.
    pub(super) lower_base: usize,
    /// First row of the `D⁻¹` slice the loop receives.
    pub(super) row_base: usize,
}

/// Runs `rows_loop` on domain `A` and domain `B` in parallel ([`crate::parallel::join`]; in sequence
/// on one thread, with the same result), then, if both returned `Some`, on the separator.
/// Returns the sum of the three results, `None` if one failed.
///
/// `rows_loop(rows, l, d_inv, row_buffer)` gets the slices of `l` (slots) and `d_inv`
/// (rows) covering its rows and every row they may read: the domain itself for `A`,
/// `B`, everything for `S`.
pub(super) fn by_domains(
    st: &Structure,
    l: &mut [Mat3],
    d_inv: &mut [Mat3],
    buffers: &mut [Vec<Mat3>; 2],
    rows_loop: impl Fn(&Rows, &mut [Mat3], &mut [Mat3], &mut Vec<Mat3>) -> Option<usize> + Sync,
) -> Option<usize> {
    let [a, b, s] = st.ranges.clone();
    let (slot_b, slot_s) = (st.lower_ptr[b.start], st.lower_ptr[s.start]);
    let [buf_a, buf_b] = buffers;
    let domains = {
        let (l_ab, _) = l.split_at_mut(slot_s);
        let (l_a, l_b) = l_ab.split_at_mut(slot_b);
        let (d_ab, _) = d_inv.split_at_mut(s.start);
        let (d_a, d_b) = d_ab.split_at_mut(b.start);
        let rows_a = Rows {
            range: a,
            lower_base: 0,
            row_base: 0,
        };
        let rows_b = Rows {
            range: b.clone(),
            lower_base: slot_b,
            row_base: b.start,
        };
        let mut run_a = || on_own(buf_a, |buf| rows_loop(&rows_a, l_a, d_a, buf));
        if b.is_empty() {
            run_a().map(|x| (x, 0))
        } else {
            match crate::parallel::join(run_a, || {
                on_own(buf_b, |buf| rows_loop(&rows_b, l_b, d_b, buf))
            }) {
                (Some(x), Some(y)) => Some((x, y)),
                _ => None,
            }
        }
    };
    let (x, y) = domains?;
    let rows_s = Rows {
        range: s,
        lower_base: 0,
        row_base: 0,
    };
    let z = rows_loop(&rows_s, l, d_inv, buf_a)?;
    Some(x + y + z)
}

/// Runs `run` on the contents of `buf` moved onto the running thread's stack, then puts
/// them back. The two domains' buffers sit side by side in one array, their headers in one
/// cache line: a loop pushing through the references wrote that line from both threads
/// for every block (each domain's IC(0) pass took 3.6 times as long beside the other as
/// alone, on the fig.-1 drape).
fn on_own<R>(buf: &mut Vec<Mat3>, run: impl FnOnce(&mut Vec<Mat3>) -> R) -> R {
    let mut local = std::mem::take(buf);
    let result = run(&mut local);
    *buf = local;
    result
}

/// Symmetric block Gauss–Seidel factor of `rows`: `L_ik = Ã_ik D_k⁻¹` (k < i),
/// `D_i = Ã_ii` (symmetrised, inverted by [`spd_inverse_or_diagonal`]).
pub(super) fn gauss_seidel_rows(
    st: &Structure,
    rows: &Rows,
    filtered: &Filtered,
    l: &mut [Mat3],
    d_inv: &mut [Mat3],
) {
    let (lb, rb) = (rows.lower_base, rows.row_base);
    for i in rows.range.clone() {
        let (lo, d) = (st.row_ptr[i], st.diag[i]);
        for k in lo..d {
            l[st.lower_slot(i, k) - lb] = filtered.at(i, k) * d_inv[st.col[k] - rb];
        }
        d_inv[i - rb] = spd_inverse_or_diagonal(&filtered.diagonal(i));
    }
}

/// Settings of one IC(0) pass.
pub(super) struct IcPass<'a> {
    /// Relative shift `α`: the pass factors `Ã + α Λ` (module doc of [`super`]).
    pub(super) shift: f64,
    /// `λ̂_i` per row (elimination order; read only when `shift > 0`).
    pub(super) scales: &'a [f64],
    /// Replace failing pivots (the last attempt) instead of failing.
    pub(super) permissive: bool,
    /// Set by the first failing pivot so that the other domain stops early (the pass is
    /// discarded anyway; never set in a permissive pass).
    pub(super) abort: &'a AtomicBool,
}

/// One IC(0) pass of `Ã + α Λ` (`α λ̂_i I` added to each diagonal block, `λ̂_i` its
/// [`smallest_eigenvalue_bound`](super::smallest_eigenvalue_bound), from `pass.scales`)
/// over `rows`, in row order. Returns the number of replaced pivots, or `None` at the
/// first failing pivot (of this or another domain) unless `permissive` (then a failing
/// pivot is replaced by the shifted `Ã_ii`, see [`pivot_inverse`]). `row` is scratch for
/// `F_ik = L_ik D_k` of the current row.
pub(super) fn ic0_rows(
    st: &Structure,
    rows: &Rows,
    filtered: &Filtered,
    pass: &IcPass,
    l: &mut [Mat3],
    d_inv: &mut [Mat3],
    row: &mut Vec<Mat3>,
) -> Option<usize> {
    let (lb, rb) = (rows.lower_base, rows.row_base);
    let mut fallbacks = 0;
    for i in rows.range.clone() {
        if !pass.permissive && pass.abort.load(Relaxed) {
            return None;
        }
        let (lo, d) = (st.row_ptr[i], st.diag[i]);
        let a_ii = filtered.diagonal(i);
        let a_ii = if pass.shift > 0.0 {
            a_ii + Mat3::identity() * (pass.shift * pass.scales[i])
        } else {
            a_ii
        };
        row.clear();
        let mut pivot = a_ii;
        let li = st.lower_ptr[i] - lb;
        for k in lo..d {
            let j = st.col[k];
            // F_ij = Ã_ij − Σ_{m<j} F_im L_jmᵀ over m in both rows (merge of the sorted
            // lower parts of rows i and j).
            let mut f = filtered.at(i, k);
            let (mut x, mut y) = (lo, st.row_ptr[j]);
            let (y_end, lj) = (st.diag[j], st.lower_ptr[j] - lb);
            let y_start = y;
            while x < k && y < y_end {
                let (cx, cy) = (st.col[x], st.col[y]);
                if cx == cy {
                    f -= row[x - lo] * l[lj + (y - y_start)].transpose();
                    x += 1;
                    y += 1;
                } else if cx < cy {
                    x += 1;
                } else {
                    y += 1;
                }
            }
            let l_ij = f * d_inv[j - rb];
            pivot -= f * l_ij.transpose();
            row.push(f);
            l[li + (k - lo)] = l_ij;
        }
        let pivot = (pivot + pivot.transpose()) * 0.5;
        d_inv[i - rb] = match pivot_inverse(&pivot, &a_ii) {
            Some(inv) => inv,
            None if pass.permissive => {
                fallbacks += 1;
                spd_inverse_or_diagonal(&a_ii)
            }
            None => {
                pass.abort.store(true, Relaxed);
                return None;
            }
        };
    }
    Some(fallbacks)
}

/// `y = L⁻ᵀ D⁻¹ L⁻¹ Π r` in elimination order (`y_i` belongs to particle `order[i]`):
/// forward `y_i = r_order[i] − Σ_{k<i} L_ik y_k` on `A ∥ B`, then `S`; backward
/// `y_i ← D_i⁻¹ y_i − Σ_{j>i} L_jiᵀ y_j` on `S`, then `A ∥ B`. The products run on the
/// AVX units where there are some ([`simd`](crate::linalg::simd); the same bits).
pub(super) fn sweeps<B: Block + Sync>(
    st: &Structure,
    l: &[B],
    d_inv: &[B],
    r: &[Vec3],
    y: &mut [Vec3],
) where
    Avx: Lanes<B>,
{
    let f = Sweep { st, l, d_inv, r };
    let avx = crate::linalg::simd::avx();
    let fw = |rows: Range<usize>, base: usize, y: &mut [Vec3]| {
        if avx {
            // SAFETY: under `simd::avx`.
            unsafe { forward_avx(&f, rows, base, y) }
        } else {
            forward::<B, Scalar>(&f, rows, base, y)
        }
    };
    let bw = |rows: Range<usize>, own: (&mut [Vec3], usize), sep: (&[Vec3], usize)| {
        if avx {
            // SAFETY: as above.
            unsafe { backward_avx(&f, rows, own, sep) }
        } else {
            backward::<B, Scalar>(&f, rows, own, sep)
        }
    };
    let [a, b, s] = st.ranges.clone();
    {
        let (y_a, y_rest) = y.split_at_mut(b.start);
        let y_b = &mut y_rest[..b.len()];
        let mut run_a = || fw(a.clone(), 0, y_a);
        if b.is_empty() {
            run_a();
        } else {
            crate::parallel::join(run_a, || fw(b.clone(), b.start, y_b));
        }
    }
    fw(s.clone(), 0, y);
    let (y_ab, y_s) = y.split_at_mut(s.start);
    bw(s.clone(), (y_s, s.start), (&[], usize::MAX));
    let (y_a, y_b) = y_ab.split_at_mut(b.start);
    let y_s = &*y_s;
    let run_a = || bw(a, (y_a, 0), (y_s, s.start));
    if b.is_empty() {
        run_a();
    } else {
        crate::parallel::join(run_a, || bw(b.clone(), (y_b, b.start), (y_s, s.start)));
    }
}

/// What the sweeps read: the permuted structure, `L` and `D⁻¹` over it, and `r`.
struct Sweep<'a, B> {
    st: &'a Structure,
    l: &'a [B],
    d_inv: &'a [B],
    r: &'a [Vec3],
}

/// Forward sweep over `rows`; `y` starts at row `base` and covers every row they read.
/// `K` forms the products ([`Lanes`]); inlined, so that [`forward_avx`] compiles it with AVX.
#[inline(always)]
fn forward<B: Block, K: Lanes<B>>(f: &Sweep<B>, rows: Range<usize>, base: usize, y: &mut [Vec3]) {
    let Sweep { st, l, r, .. } = *f;
    for i in rows {
        // SAFETY: `K` is `Scalar`, or `Avx` inside `forward_avx` (called under `simd::avx`).
        unsafe {
            let mut v = K::load(&r[st.order[i]]);
            let lower = st.row_ptr[i]..st.diag[i];
            for (m, &j) in l[lower.clone()].iter().zip(&st.col[lower]) {
                v = K::sub(v, m, &y[j - base]);
            }
            y[i - base] = K::store(v);
        }
    }
}

/// Backward sweep over `rows` (in decreasing order): `own` holds the rows of the part
/// (from row `own.1`), `sep` the separator's finished rows (from row `sep.1`; columns at
/// or after it are read there). `K` as in [`forward`].
#[inline(always)]
fn backward<B: Block, K: Lanes<B>>(
    f: &Sweep<B>,
    rows: Range<usize>,
    own: (&mut [Vec3], usize),
    sep: (&[Vec3], usize),
) {
    let Sweep { st, l, d_inv, .. } = *f;
    let ((y, base), (y_s, s_base)) = (own, sep);
    for i in rows.rev() {
        // SAFETY: as in `forward`.
        unsafe {
            let mut x = K::times(&d_inv[i], &y[i - base]);
            let upper = st.diag[i] + 1..st.row_ptr[i + 1];
            for (m, &j) in l[upper.clone()].iter().zip(&st.col[upper]) {
                let yj = if j >= s_base {
                    &y_s[j - s_base]
                } else {
                    &y[j - base]
                };
                x = K::sub(x, m, yj);
            }
            y[i - base] = K::store(x);
        }
    }
}

/// [`forward`] with the AVX products.
///
/// # Safety
/// Only under [`simd::avx`](crate::linalg::simd::avx).
#[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2"))]
unsafe fn forward_avx<B: Block>(f: &Sweep<B>, rows: Range<usize>, base: usize, y: &mut [Vec3])
where
    Avx: Lanes<B>,
{
    forward::<B, Avx>(f, rows, base, y);
}

/// [`backward`] with the AVX products.
///
/// # Safety
/// As [`forward_avx`].
#[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2"))]
unsafe fn backward_avx<B: Block>(
    f: &Sweep<B>,
    rows: Range<usize>,
    own: (&mut [Vec3], usize),
    sep: (&[Vec3], usize),
) where
    Avx: Lanes<B>,
{
    backward::<B, Avx>(f, rows, own, sep);
}

/// Blocks per parallel task of [`whole`] (scheduling only).
const WHOLE_CHUNK: usize = 2048;

/// Fills `out`, over every slot of the permuted pattern, with `convert` of `L_ik` at the
/// strictly lower slots `(i, k)` (from `lower`, [`Structure::lower_slot`]), of `L_kiᵀ` at
/// the strictly upper ones, and zero on the diagonal (which the sweeps do not read).
pub(super) fn whole<B: Copy + Send + Sync>(
    st: &Structure,
    lower: &[Mat3],
    (out, zero): (&mut Vec<B>, B),
    convert: impl Fn(Mat3) -> B + Sync,
) {
    crate::linalg::resize_discarding(out, st.col.len(), zero);
    crate::parallel::for_each_chunk(&mut out[..], WHOLE_CHUNK, |c, part| {
        let start = c * WHOLE_CHUNK;
        // The row holding the chunk's first slot, then each next one in turn.
        let mut i = st.row_ptr.partition_point(|&p| p <= start) - 1;
        for (t, o) in part.iter_mut().enumerate() {
            let k = start + t;
            while k >= st.row_ptr[i + 1] {
                i += 1;
            }
            let d = st.diag[i];
            *o = if k < d {
                convert(lower[st.lower_slot(i, k)])
            } else if k > d {
                let j = st.col[k];
                convert(lower[st.lower_slot(j, st.transpose[k])].transpose())
            } else {
                zero
            };
        }
    });
}
