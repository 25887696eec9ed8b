//! Preconditioners `P ≈ A` of the modified PCG (Baraff §5.3): block Jacobi, symmetric
//! block Gauss–Seidel and block incomplete Cholesky IC(0), the last two built on the
//! *filtered* matrix so that constrained directions do not pollute the free ones.
//!
//! ```text
//! Ã_ij = S_i A_ij S_j  (i ≠ j),      Ã_ii = S_i A_ii S_i + (I − S_i)
//! P = L D Lᵀ,   L unit block lower triangular (3x3 blocks on the pattern of A), D block
//!               diagonal SPD
//! block Jacobi:           L = I,                     D_i = A_ii
//! block Gauss–Seidel:     L_ik = Ã_ik D_k⁻¹ (k < i), D_i = Ã_ii        (SSOR with ω = 1)
//! block IC(0):            L_ik D_k = Ã_ik − Σ_{m<k} L_im D_m L_kmᵀ   (m ∈ row i ∩ row k)
//!                         D_i      = Ã_ii − Σ_{k<i} L_ik D_k L_ikᵀ
//! ```
//! `S_i` is the filter of particle `i` (identity when free), `A` the SPD system matrix of
//! Baraff eq. 16 (kg). `Ã` equals `S A S + (I − S)`, the operator the modified PCG
//! actually inverts on the free subspace, with identity on the constrained directions; a
//! pinned particle (`S = 0`) thus decouples entirely. IC(0) keeps only the fill inside
//! the pattern of `A` (Stuyck §5.5 layout, Saad "Iterative methods" §10.3).
//!
//! IC(0) exists for M-matrices but can break down on other SPD matrices (a pivot `D_i`
//! that is not positive definite), and the stiff anisotropic blocks of cloth do break it.
//! The remedy is Manteuffel's shift: on the first failing pivot (Cholesky fails, a
//! non-finite value, or a diagonal entry below [`PIVOT_FLOOR`] of `Ã_ii`'s) the
//! factorisation restarts on `Ã + α diag(Ã)` with the next `α` of [`SHIFTS`]; the last
//! attempt replaces any pivot still failing by `Ã_ii` (through
//! [`spd_inverse_or_diagonal`]). Every `D_i` is thus symmetric positive definite, `P` is
//! SPD for any input and `rᵀ P⁻¹ r ≥ 0`, which the PCG needs; [`FactorStats`] reports the
//! shift and replacements.
//!
//! Applying `P⁻¹` is a forward sweep `y = L⁻¹ r`, then a backward sweep
//! `s = L⁻ᵀ D⁻¹ y`; both are sequential in particle order, hence bit-identical for any
//! thread count. The sweeps read copies of `L` and `D⁻¹` rounded to single precision
//! (the factorisation itself runs in double): they are bound by memory traffic, and
//! halving it made a 10,000-particle step 30% faster (513 → 359 ms) at the same CG
//! iteration count. `P` changes by about 3e-8 relative and stays symmetric positive
//! definite; the CG itself (products with `A`, residuals, the stopping rule) stays in
//! double precision. [`TriangularFactor::double_precision`] sweeps with the exact factors.
//! The factors are stored in one array over the slots of the pattern: slot `(i, k)`,
//! `k < i`, holds `L_ik`, slot `(k, i)` holds `L_ikᵀ`, so both sweeps gather along rows.
use super::block3::spd_inverse_or_diagonal;
use super::{BlockCsr, BlockPattern};
use crate::{Mat3, Vec3};
use rayon::prelude::*;
use std::sync::Arc;

/// A pivot `D_i` of IC(0) fails when its Cholesky fails or one of its diagonal entries
/// falls below `PIVOT_FLOOR` times the same entry of `Ã_ii` (dimensionless): a tiny pivot
/// would scale the later rows of `L` by its inverse and ruin the factor (or overflow).
pub const PIVOT_FLOOR: f64 = 1e-3;

/// Which preconditioner the modified PCG uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Preconditioner {
    /// `P_i = A_ii` (3x3 block diagonal, Baraff §5.3). Cheapest per iteration and fully
    /// parallel, but its iteration count grows with stiffness and resolution.
    BlockJacobi,
    /// Symmetric block Gauss–Seidel (SSOR, ω = 1) on the filtered matrix: one forward and
    /// one backward sweep per iteration, no factorisation.
    BlockGaussSeidel,
    /// Block incomplete Cholesky IC(0) on the filtered matrix (see the module doc): a
    /// sequential factorisation per solve and two sweeps per iteration. The default (see
    /// [`SolverParams::preconditioner`](crate::pipeline::SolverParams) for the figures).
    #[default]
    BlockIncompleteCholesky,
}

/// Slot maps of one pattern (rebuilt only when the pattern changes).
#[derive(Debug, Clone)]
struct Structure {
    pattern: Arc<BlockPattern>,
    /// Slot of `(i, i)`.
    diag: Vec<usize>,
    /// Slot of `(j, i)` for the slot `(i, j)`.
    transpose: Vec<usize>,
}

impl Structure {
    /// Slot maps of `pattern`, or `None` if the pattern is not structurally symmetric or
    /// misses a diagonal entry (never the case for [`BlockPattern::from_elements`]).
    fn new(pattern: &Arc<BlockPattern>) -> Option<Self> {
        let p = &**pattern;
        let mut diag = Vec::with_capacity(p.n);
        let mut transpose = vec![0; p.nnz()];
        for i in 0..p.n {
            diag.push(p.slot(i, i)?);
            let (lo, hi) = (p.row_ptr[i], p.row_ptr[i + 1]);
            for (t, &j) in transpose[lo..hi].iter_mut().zip(&p.col[lo..hi]) {
                *t = p.slot(j, i)?;
            }
        }
        Some(Structure {
            pattern: pattern.clone(),
            diag,
            transpose,
        })
    }
}

/// Figures of the last factorisation.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FactorStats {
    /// Pivots replaced by `Ã_ii` (see [`PIVOT_FLOOR`]) in the last, permissive attempt.
    pub pivot_fallbacks: usize,
    /// Relative diagonal shift `α` of the accepted IC(0) factor (one of [`SHIFTS`]).
    pub shift: f64,
    /// Attempts abandoned at a failing pivot before it.
    pub restarts: usize,
}

/// The factors `L`, `D⁻¹` of a triangular preconditioner (block Gauss–Seidel or IC(0)),
/// with its work buffers; reused across solves.
#[derive(Debug, Clone, Default)]
pub struct TriangularFactor {
    structure: Option<Structure>,
    /// `L_ik` at slot `(i, k)` for `k < i`, `L_kiᵀ` at slot `(i, k)` for `k > i`.
    tri: Vec<Mat3>,
    /// `D_i⁻¹`.
    inv_diag: Vec<Mat3>,
    /// `tri` rounded to single precision, what [`TriangularFactor::apply`] reads unless
    /// `double`.
    tri32: Vec<Mat3f>,
    /// `inv_diag` rounded to single precision.
    inv_diag32: Vec<Mat3f>,
    /// Sweep with the double-precision factors (tests of the factorisation) instead of
    /// their single-precision copies.
    double: bool,
    /// `L_ik D_k` of the row being factored, by position in the row.
    row: Vec<Mat3>,
    /// Figures of the last factorisation.
    pub stats: FactorStats,
}

impl TriangularFactor {
    /// Factors `a` under the filters `filter(i)` (`None` for a free particle) as `kind`
    /// (the module doc gives the equations; IC(0) restarts with the shifts of [`SHIFTS`]
    /// until no pivot fails). Sequential in row order. Returns `false`, leaving the factor
    /// unusable,
    /// if the pattern of `a` is not structurally symmetric with a full diagonal, or if
    /// `kind` is [`Preconditioner::BlockJacobi`] (which has no triangular factor).
    pub fn factor(
        &mut self,
        a: &BlockCsr,
        filter: impl Fn(usize) -> Option<Mat3>,
        kind: Preconditioner,
    ) -> bool {
        if kind == Preconditioner::BlockJacobi {
            return false;
        }
        let same = matches!(&self.structure, Some(s) if Arc::ptr_eq(&s.pattern, &a.pattern));
        if !same {
            self.structure = Structure::new(&a.pattern);
        }
        let Some(st) = &self.structure else {
            return false;
        };
        let p = &*st.pattern;
        self.tri.resize(p.nnz(), Mat3::zeros());
        self.inv_diag.resize(p.n, Mat3::zeros());
        self.stats = FactorStats::default();
        // Ã_ik for the slot k = (i, col) of row i.
        let filtered = |i: usize, k: usize| -> Mat3 {
            let j = p.col[k];
            let m = a.values[k];
            let (si, sj) = (filter(i), filter(j));
            let m = match (si, sj) {
                (None, None) => m,
                (Some(s), None) => s * m,
                (None, Some(t)) => m * t,
                (Some(s), Some(t)) => s * m * t,
            };
            match (i == j, si) {
                (true, Some(s)) => m + Mat3::identity() - s,
                _ => m,
            }
        };
        if kind == Preconditioner::BlockGaussSeidel {
            for i in 0..p.n {
                let (lo, d) = (p.row_ptr[i], st.diag[i]);
                for k in lo..d {
                    self.tri[k] = filtered(i, k) * self.inv_diag[p.col[k]];
                    self.tri[st.transpose[k]] = self.tri[k].transpose();
                }
                let a_ii = filtered(i, d);
                self.inv_diag[i] = spd_inverse_or_diagonal(&((a_ii + a_ii.transpose()) * 0.5));
            }
            self.round();
            return true;
        }
        let mut buffers = IcBuffers {
            tri: &mut self.tri,
            inv_diag: &mut self.inv_diag,
            row: &mut self.row,
        };
        for (attempt, &shift) in SHIFTS.iter().enumerate() {
            let last = attempt + 1 == SHIFTS.len();
            if let Some(fallbacks) = ic0(st, &filtered, shift, last, &mut buffers) {
                self.stats.shift = shift;
                self.stats.restarts = attempt;
                self.stats.pivot_fallbacks = fallbacks;
                break;
            }
        }
        self.round();
        true
    }

    /// A factor whose sweeps use the double-precision factors: `P` is then exactly the
    /// `L D Lᵀ` of the module doc (to rounding), where the default sweeps read copies
    /// rounded to single precision (see the module doc).
    pub fn double_precision() -> Self {
        TriangularFactor {
            double: true,
            ..TriangularFactor::default()
        }
    }

    /// Fills the single-precision copies of the factors read by the sweeps.
    fn round(&mut self) {
        if self.double {
            return;
        }
        self.tri32.resize(self.tri.len(), Mat3f::zeros());
        self.inv_diag32.resize(self.inv_diag.len(), Mat3f::zeros());
        self.tri32
            .par_iter_mut()
            .zip(self.tri.par_iter())
            .for_each(|(o, m)| *o = m.cast());
        self.inv_diag32
            .par_iter_mut()
            .zip(self.inv_diag.par_iter())
            .for_each(|(o, m)| *o = m.cast());
    }

    /// `s = P⁻¹ r = L⁻ᵀ D⁻¹ L⁻¹ r`; returns `Σ_i r_i · project(i, s_i)` (summed in
    /// decreasing particle order).
    ///
    /// With `project(i, ·) = S_i` this is the `δ = rᵀ S P⁻¹ r` of the modified PCG. Taking
    /// the filter inside the product matters near convergence: `r` carries rounding
    /// residue in the constrained directions, which `P⁻¹` (identity there) does not damp,
    /// and `rᵀ P⁻¹ r` would mix it into the CG coefficients.
    ///
    /// # Panics
    /// If the last [`TriangularFactor::factor`] failed, or `r`, `s` do not have one entry
    /// per particle (caller bugs).
    pub fn apply(&self, r: &[Vec3], s: &mut [Vec3], project: impl Fn(usize, Vec3) -> Vec3) -> f64 {
        let st = self
            .structure
            .as_ref()
            .expect("apply after a successful factor");
        assert_eq!(r.len(), st.pattern.n, "apply: r has the wrong length");
        assert_eq!(s.len(), st.pattern.n, "apply: s has the wrong length");
        if self.double {
            sweeps(st, &self.tri, &self.inv_diag, r, s, project)
        } else {
            sweeps(st, &self.tri32, &self.inv_diag32, r, s, project)
        }
    }
}

/// The two sweeps of [`TriangularFactor::apply`] over factors stored as `B` blocks.
fn sweeps<B: Block>(
    st: &Structure,
    tri: &[B],
    inv_diag: &[B],
    r: &[Vec3],
    s: &mut [Vec3],
    project: impl Fn(usize, Vec3) -> Vec3,
) -> f64 {
    let p = &*st.pattern;
    // Forward: y_i = r_i − Σ_{k<i} L_ik y_k.
    for i in 0..p.n {
        let mut y = r[i];
        for k in p.row_ptr[i]..st.diag[i] {
            y -= tri[k].times(&s[p.col[k]]);
        }
        s[i] = y;
    }
    // Backward: s_i = D_i⁻¹ y_i − Σ_{j>i} L_jiᵀ s_j.
    let mut dot = 0.0;
    for i in (0..p.n).rev() {
        let mut x = inv_diag[i].times(&s[i]);
        for k in st.diag[i] + 1..p.row_ptr[i + 1] {
            x -= tri[k].times(&s[p.col[k]]);
        }
        s[i] = x;
        dot += r[i].dot(&project(i, x));
    }
    dot
}

/// A 3x3 block in single precision.
type Mat3f = nalgebra::Matrix3<f32>;

/// A stored 3x3 block of a factor, applied to a double-precision vector.
trait Block {
    /// `m x` in double precision.
    fn times(&self, x: &Vec3) -> Vec3;
}

impl Block for Mat3 {
    #[inline]
    fn times(&self, x: &Vec3) -> Vec3 {
        self * x
    }
}

impl Block for Mat3f {
    #[inline]
    fn times(&self, x: &Vec3) -> Vec3 {
        self.cast::<f64>() * x
    }
}

/// Relative diagonal shifts `α` tried in turn by IC(0) (see [`TriangularFactor::factor`]);
/// the last attempt accepts failing pivots by replacing them.
pub const SHIFTS: [f64; 7] = [0.0, 1e-3, 4e-3, 1.6e-2, 6.4e-2, 0.256, 1.0];

/// The factor arrays IC(0) writes.
struct IcBuffers<'a> {
    tri: &'a mut [Mat3],
    inv_diag: &'a mut [Mat3],
    row: &'a mut Vec<Mat3>,
}

/// One IC(0) pass of `Ã + α diag(Ã)` (diagonal entries of the diagonal blocks scaled by
/// `1 + α`) in row order. Returns the number of replaced pivots, or `None` at the first
/// failing pivot unless `permissive` (then a failing pivot is replaced by the shifted
/// `Ã_ii`, see [`pivot_inverse`]).
fn ic0(
    st: &Structure,
    filtered: &impl Fn(usize, usize) -> Mat3,
    shift: f64,
    permissive: bool,
    out: &mut IcBuffers,
) -> Option<usize> {
    let p = &*st.pattern;
    let mut fallbacks = 0;
    for i in 0..p.n {
        let (lo, d) = (p.row_ptr[i], st.diag[i]);
        let a_ii = filtered(i, d);
        let a_ii = (a_ii + a_ii.transpose()) * 0.5;
        let a_ii = a_ii + Mat3::from_diagonal(&a_ii.diagonal()) * shift;
        out.row.clear();
        let mut pivot = a_ii;
        for k in lo..d {
            let j = p.col[k];
            // F_ij = Ã_ij − Σ_{m<j} F_im L_jmᵀ over m in both rows (merge of the sorted
            // lower parts of rows i and j).
            let mut f = filtered(i, k);
            let (mut x, mut y) = (lo, p.row_ptr[j]);
            let y_end = st.diag[j];
            while x < k && y < y_end {
                let (cx, cy) = (p.col[x], p.col[y]);
                if cx == cy {
                    f -= out.row[x - lo] * out.tri[y].transpose();
                    x += 1;
                    y += 1;
                } else if cx < cy {
                    x += 1;
                } else {
                    y += 1;
                }
            }
            let l = f * out.inv_diag[j];
            pivot -= f * l.transpose();
            out.row.push(f);
            out.tri[k] = l;
        }
        let pivot = (pivot + pivot.transpose()) * 0.5;
        out.inv_diag[i] = match pivot_inverse(&pivot, &a_ii) {
            Some(inv) => inv,
            None if permissive => {
                fallbacks += 1;
                spd_inverse_or_diagonal(&a_ii)
            }
            None => return None,
        };
        for k in lo..d {
            out.tri[st.transpose[k]] = out.tri[k].transpose();
        }
    }
    Some(fallbacks)
}

/// `D⁻¹` of an IC(0) pivot, or `None` if `D` is not (numerically) SPD: its Cholesky fails,
/// the inverse is not finite, or a diagonal entry fell below [`PIVOT_FLOOR`] times that of
/// `Ã_ii`.
fn pivot_inverse(pivot: &Mat3, a_ii: &Mat3) -> Option<Mat3> {
    // Written with `all` so that a NaN entry fails too.
    if !(0..3).all(|r| pivot[(r, r)] > PIVOT_FLOOR * a_ii[(r, r)].abs()) {
        return None;
    }
    let inv = pivot.cholesky()?.inverse();
    inv.iter().all(|x| x.is_finite()).then_some(inv)
}
