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
//! The remedy is a diagonal shift after Manteuffel: on the first failing pivot (Cholesky
//! fails, a non-finite value, or a diagonal entry below [`PIVOT_FLOOR`] of `Ã_ii`'s) the
//! factorisation restarts on `Ã + α Λ` with the next `α` of [`SHIFTS`], where
//!
//! ```text
//! Λ_ii = λ̂_i I,   λ̂_i = 1 / ‖Ã_ii⁻¹‖_∞ ∈ [λ_min(Ã_ii)/√3, λ_min(Ã_ii)]
//! ```
//! ([`smallest_eigenvalue_bound`]). A cloth block is stiff in its plane and weak along
//! its normal (in-plane eigenvalues 18 against 0.02 at a sheet of 10,000), and what
//! breaks is the weak direction: the bending's positive couplings between the wings of a
//! hinge. The shift is sized by that
//! direction and isotropic, so it leaves the stiff directions, which set the CG's
//! convergence, as they are. Manteuffel's scalar shift `α diag(Ã)` instead added `α`
//! times the world-axis diagonal, in which the in-plane stiffness shows on every axis of
//! a tilted sheet. On the same systems (the solves of a run, each factored both ways),
//! CG iterations and restarts: 10,000 sheet on a sphere 1,943 → 1,245 and 290 → 213,
//! 2,500 sheet 748 → 702 and 108 → 74, fig.-1 drape 415 → 351 and 85 → 56. The last
//! attempt replaces any pivot still failing by `Ã_ii` (through
//! [`spd_inverse_or_diagonal`](super::block3::spd_inverse_or_diagonal)). Every `D_i` is
//! thus symmetric positive definite, `P` is SPD for any input and `rᵀ P⁻¹ r ≥ 0`, which
//! the PCG needs; [`FactorStats`] reports the shift and replacements. A restart caused by
//! either domain restarts both (see [`order`]), so the accepted shift is that of the
//! whole matrix.
//!
//! Elimination order (see [`order`]): the factors are those of `Π Ã Πᵀ`, `Π` the
//! permutation putting the particles in the order `A, B, S` — two domains that share no
//! entry of `A` and the BFS level separating them. Rows of `A` and rows of `B` depend
//! only on rows of their own domain, so the factorisation and both sweeps run the two
//! domains on two threads ([`crate::parallel::join`]) and only the separator sequentially:
//!
//! ```text
//! factor:   rows of A ∥ rows of B,   then rows of S
//! forward:  y = L⁻¹ Π r              A ∥ B, then S
//! backward: y ← L⁻ᵀ D⁻¹ y            S, then A ∥ B
//! s = Πᵀ y
//! ```
//! Every row is computed by the same sequential loop whichever thread runs it, so the
//! result is bit-identical for any thread count. The order changes `P` (IC(0) drops a
//! different fill) but not its properties; [`EliminationOrder::Natural`] keeps particle
//! order (sequential). On the drape of Baraff's fig. 1 the separator holds 101 of 2,601
//! particles (200 of 10,000 at 100 × 100; figures in [`EliminationOrder`]).
//!
//! The sweeps read copies of `L` and `D⁻¹` rounded to single precision (the
//! factorisation itself runs in double): they are bound by memory traffic, and halving
//! it made a 10,000-particle step 30% faster (513 → 359 ms) at the same CG iteration
//! count. `P` changes by about 3e-8 relative and stays symmetric positive definite; the
//! CG itself (products with `A`, residuals, the stopping rule) stays in double
//! precision. [`TriangularFactor::double_precision`] sweeps with the exact factors.
//! The factors are stored in one array over the slots of the permuted pattern: slot
//! `(i, k)`, `k < i`, holds `L_ik`, slot `(k, i)` holds `L_ikᵀ`, so both sweeps gather
//! along rows.
mod direct;
pub mod order;
mod rows;
mod structure;

pub(crate) use self::direct::DirectFactor;
pub use self::direct::DIRECT_MAX_PARTICLES;
use self::rows::{by_domains, gauss_seidel_rows, ic0_rows, sweeps, whole, IcPass};
use self::structure::Structure;
use super::block3::cholesky_inverse;
use super::{BlockCsr, BlockPattern};
use crate::{Mat3, Vec3};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, PoisonError};

/// A pivot `D_i` of IC(0) fails when its Cholesky fails or one of its diagonal entries
/// falls below `PIVOT_FLOOR` times the same entry of `Ã_ii` (dimensionless): a tiny pivot
/// would scale the later rows of `L` by its inverse and ruin the factor (or overflow).
pub const PIVOT_FLOOR: f64 = 1e-3;

/// Which preconditioner the modified PCG uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Preconditioner {
    /// [`Preconditioner::SparseCholesky`] up to [`DIRECT_MAX_PARTICLES`] particles,
    /// [`Preconditioner::BlockIncompleteCholesky`] above; or, made adaptive (the
    /// simulator's forward solves, [`TriangularFactor::adapt`]), IC(0) until a solve of a
    /// small system proves costly, then complete. The default (see
    /// [`SolverParams::preconditioner`](crate::pipeline::SolverParams) for the figures).
    #[default]
    Auto,
    /// The complete sparse Cholesky factor of the filtered matrix (`direct` module doc):
    /// one or two iterations per solve, at a factorisation that grows like `n^1.5`.
    /// Falls back to IC(0) when the filtered matrix is not numerically positive definite.
    SparseCholesky,
    /// `P_i = A_ii` (3x3 block diagonal, Baraff §5.3). Cheapest per iteration and fully
    /// parallel, but its iteration count grows with stiffness and resolution.
    BlockJacobi,
    /// Symmetric block Gauss–Seidel (SSOR, ω = 1) on the filtered matrix: one forward and
    /// one backward sweep per iteration, no factorisation.
    BlockGaussSeidel,
    /// Block incomplete Cholesky IC(0) on the filtered matrix (see the module doc): a
    /// factorisation per solve and two sweeps per iteration, each on two threads but for
    /// the separator. [`Preconditioner::Auto`] uses it above [`DIRECT_MAX_PARTICLES`].
    BlockIncompleteCholesky,
}

/// The order in which a [`TriangularFactor`] eliminates the particles.
///
/// Measured on the fig.-1 drape and the two-corner sheet (2,601 particles, 24 frames,
/// ε = 1e-5, `linalg::tests::perf`): CG iterations per step 51.8 and 77.8 in the
/// natural order, 49.9 and 81.0 in the separator order; at 10,000 particles (12
/// frames of the drape) 116.8 and 110.8. The separator order with each domain in plain
/// ascending index instead of towards the separator took 110.7, 125.4 and 170.1
/// (see [`order`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EliminationOrder {
    /// Particle index order, entirely sequential.
    Natural,
    /// Two domains then their separator ([`order`]): the domains are factored and swept
    /// on two threads. The default.
    #[default]
    Separator,
}

/// Figures of the last factorisation.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FactorStats {
    /// Pivots replaced by `Ã_ii` (see [`PIVOT_FLOOR`]) in the last, permissive attempt.
    pub pivot_fallbacks: usize,
    /// Relative shift `α` of the accepted IC(0) factor (one of [`SHIFTS`]; the factor is
    /// that of `Ã + α Λ`, module doc).
    pub shift: f64,
    /// Attempts abandoned at a failing pivot before it.
    pub restarts: usize,
    /// Whether the factor is the complete Cholesky factor (no shift, no restarts).
    pub complete: bool,
}

/// Marker of a free particle in `TriangularFactor::filter_of`.
const FREE: usize = usize::MAX;

/// The work vectors of [`TriangularFactor::apply`] (which takes `&self`): the permuted
/// vector of the sweeps and the terms of the projected dot product; a clone starts empty.
#[derive(Debug, Default)]
struct SweepBuffer(Mutex<(Vec<Vec3>, Vec<f64>)>);

impl Clone for SweepBuffer {
    fn clone(&self) -> Self {
        SweepBuffer::default()
    }
}

/// The factors `L`, `D⁻¹` of a triangular preconditioner (block Gauss–Seidel or IC(0)),
/// with its work buffers; reused across solves.
#[derive(Debug, Clone, Default)]
pub struct TriangularFactor {
    structure: Option<Structure>,
    /// Elimination order used from the next change of pattern on.
    order: EliminationOrder,
    /// `L_ik` for the strictly lower slots `(i, k)`, `k < i`, of the permuted pattern, in
    /// slot order (`Structure::lower_slot`): what the factorisation reads back. The sweeps'
    /// copies (`tri32`, or `tri_full` under `double`) also hold `L_kiᵀ` at the slots
    /// `(i, k)`, `k > i`. Keeping only the lower half in double precision saves 5 MB of the
    /// peak resident size at 10,000 particles.
    tri: Vec<Mat3>,
    /// `tri` over the whole permuted pattern in double precision, what
    /// [`TriangularFactor::apply`] reads under `double` (empty otherwise).
    tri_full: Vec<Mat3>,
    /// `D_i⁻¹` (elimination order).
    inv_diag: Vec<Mat3>,
    /// `λ̂_i` of the rows (elimination order) while IC(0) restarts with a shift (module
    /// doc), computed at the first shifted pass of a factorisation.
    scales: Vec<f64>,
    /// `tri` over the whole permuted pattern, rounded to single precision: what
    /// [`TriangularFactor::apply`] reads unless `double`.
    tri32: Vec<Mat3f>,
    /// `inv_diag` rounded to single precision.
    inv_diag32: Vec<Mat3f>,
    /// Sweep with the double-precision factors (tests of the factorisation) instead of
    /// their single-precision copies.
    double: bool,
    /// Per position of the elimination order: index of its `S_i` in `filter_blocks`, or
    /// [`FREE`].
    filter_of: Vec<usize>,
    /// The `S_i` of the constrained particles.
    filter_blocks: Vec<Mat3>,
    /// `L_ik D_k` of the row being factored, by position in the row, one per domain.
    rows: [Vec<Mat3>; 2],
    /// `P⁻¹ r` in elimination order.
    work: SweepBuffer,
    /// Figures of the last factorisation.
    pub stats: FactorStats,
    /// The complete factor, used instead of `L`, `D` when `complete` is set.
    direct: DirectFactor,
    complete: bool,
    /// Whether [`Preconditioner::Auto`] starts small systems with IC(0) and switches to
    /// the complete factor for good once a solve needs more than
    /// [`AUTO_SWITCH`]` · √n` iterations (see [`TriangularFactor::adapt`]).
    adaptive: bool,
    /// The switch has happened ([`TriangularFactor::adapt`]).
    auto_complete: bool,
}

/// Iterations per `√n` of an IC(0) solve beyond which [`Preconditioner::Auto`], when
/// adaptive, factors a system of `n ≤` [`DIRECT_MAX_PARTICLES`] particles completely from
/// then on: about where the complete factor's cost equals IC(0)'s. Measured per step on
/// the fig.-1 drape (2 threads): 441 particles, IC(0) 25.2 CG per step and 3.3 ms
/// against 4.8 ms for the complete factor; 961 particles, 33.2 CG and 6.8 ms against
/// 12.2 ms; break-even at about 46 and 80 iterations, `2.2–2.6 √n`. The 416-particle
/// skirt takes 125 IC(0) iterations per step and stays with the complete factor.
pub const AUTO_SWITCH: f64 = 2.5;

impl TriangularFactor {
    /// Whether [`TriangularFactor::factor`] of a system of `n` particles first tries the
    /// complete factor.
    pub(crate) fn wants_complete(&self, n: usize, kind: Preconditioner) -> bool {
        match kind {
            Preconditioner::SparseCholesky => true,
            Preconditioner::Auto => {
                n <= DIRECT_MAX_PARTICLES && (!self.adaptive || self.auto_complete)
            }
            _ => false,
        }
    }

    /// Whether the next [`TriangularFactor::factor`] of a matrix over `pattern` as `kind`
    /// would first build pattern structures ([`TriangularFactor::prepare`] builds them).
    pub fn needs_prepare(&self, pattern: &Arc<BlockPattern>, kind: Preconditioner) -> bool {
        match kind {
            Preconditioner::BlockJacobi => false,
            _ if self.wants_complete(pattern.n, kind) => !self.direct.prepared_for(pattern),
            _ => !self.has_structure(pattern),
        }
    }

    /// Builds what [`TriangularFactor::factor`] keeps per pattern for a matrix over
    /// `pattern` as `kind` (the complete factor's symbolic part, or the slot maps of the
    /// elimination order), unless already there: the same work `factor` would do first,
    /// done ahead so that it can overlap the assembly of the values.
    pub fn prepare(&mut self, pattern: &Arc<BlockPattern>, kind: Preconditioner) {
        match kind {
            Preconditioner::BlockJacobi => {}
            _ if self.wants_complete(pattern.n, kind) => self.direct.prepare(pattern),
            _ => self.prepare_triangular(pattern),
        }
    }

    /// Whether the slot maps are those of `pattern` in the current elimination order.
    fn has_structure(&self, pattern: &Arc<BlockPattern>) -> bool {
        let separator = self.order == EliminationOrder::Separator;
        matches!(&self.structure, Some(s)
            if Arc::ptr_eq(&s.pattern, pattern) && s.separator == separator)
    }

    /// Builds the slot maps of `pattern` in the current elimination order unless there.
    fn prepare_triangular(&mut self, pattern: &Arc<BlockPattern>) {
        if !self.has_structure(pattern) {
            let separator = self.order == EliminationOrder::Separator;
            // Dropped before the new one is built (see `Deflation::prepare_pattern`).
            self.structure = None;
            self.structure = Structure::new(pattern, separator);
        }
    }

    /// Factors `a` under the filters `filter(i)` (`None` for a free particle) as `kind`
    /// (the module doc gives the equations; IC(0) restarts with the shifts of [`SHIFTS`]
    /// until no pivot fails). Domains `A` and `B` in parallel, then the separator (module
    /// doc). Returns `false`, leaving the factor unusable, if the pattern of `a` is not
    /// structurally symmetric with a full diagonal (or `a.values` does not match it), or
    /// if `kind` is [`Preconditioner::BlockJacobi`] (which has no triangular factor).
    pub fn factor(
        &mut self,
        a: &BlockCsr,
        filter: impl Fn(usize) -> Option<Mat3>,
        kind: Preconditioner,
    ) -> bool {
        self.complete = false;
        if kind == Preconditioner::BlockJacobi {
            return false;
        }
        if self.wants_complete(a.n(), kind) && self.direct.factor(a, &filter) {
            self.complete = true;
            self.stats = FactorStats {
                complete: true,
                ..FactorStats::default()
            };
            return true;
        }
        self.prepare_triangular(&a.pattern);
        let Some(st) = &self.structure else {
            return false;
        };
        if a.values.len() != st.col.len() {
            self.structure = None;
            return false;
        }
        // Every entry read later is written by the factorisation.
        crate::linalg::resize_discarding(&mut self.tri, st.lower_len(), Mat3::zeros());
        self.inv_diag.resize(st.n(), Mat3::zeros());
        self.stats = FactorStats::default();
        self.filter_of.clear();
        self.filter_blocks.clear();
        for &i in &st.order {
            self.filter_of.push(match filter(i) {
                None => FREE,
                Some(m) => {
                    self.filter_blocks.push(m);
                    self.filter_blocks.len() - 1
                }
            });
        }
        let filtered = Filtered {
            st,
            values: &a.values,
            filter_of: &self.filter_of,
            filter_blocks: &self.filter_blocks,
        };
        let (tri, inv_diag, scales) = (&mut self.tri, &mut self.inv_diag, &mut self.scales);
        if kind == Preconditioner::BlockGaussSeidel {
            by_domains(st, tri, inv_diag, &mut self.rows, |rows, l, d, _| {
                gauss_seidel_rows(st, rows, &filtered, l, d);
                Some(0)
            });
            self.round();
            return true;
        }
        for (attempt, &shift) in SHIFTS.iter().enumerate() {
            if attempt == 1 {
                // The first shifted pass: the rows' `λ̂_i`, once for all later passes.
                scales.resize(st.n(), 0.0);
                crate::parallel::fill(scales, super::block3::CHUNK, |i| {
                    smallest_eigenvalue_bound(&filtered.diagonal(i))
                });
            }
            let abort = AtomicBool::new(false);
            let pass = IcPass {
                shift,
                scales,
                permissive: attempt + 1 == SHIFTS.len(),
                abort: &abort,
            };
            let done = by_domains(st, tri, inv_diag, &mut self.rows, |rows, l, d, row| {
                ic0_rows(st, rows, &filtered, &pass, l, d, row)
            });
            if let Some(fallbacks) = done {
                self.stats.shift = shift;
                self.stats.restarts = attempt;
                self.stats.pivot_fallbacks = fallbacks;
                break;
            }
        }
        self.round();
        true
    }

    /// Makes [`Preconditioner::Auto`] adaptive (`on`) or not (the default: complete up to
    /// [`DIRECT_MAX_PARTICLES`] particles). Adaptive, it starts every system with IC(0)
    /// and, after a solve of a system of `n ≤` [`DIRECT_MAX_PARTICLES`] particles that
    /// took `iterations` (or did not converge), factors completely from then on if that
    /// was more than [`AUTO_SWITCH`]` · √n`. The choice follows iteration counts only, so
    /// it is the same for any thread count.
    pub fn adapt(&mut self, on: bool) {
        self.adaptive = on;
    }

    /// Whether the adaptive [`Preconditioner::Auto`] switched to the complete factor for
    /// good ([`TriangularFactor::adapt`]): state a checkpoint keeps.
    pub fn switched_to_complete(&self) -> bool {
        self.auto_complete
    }

    /// Restores the switch [`TriangularFactor::switched_to_complete`] reported.
    pub fn set_switched_to_complete(&mut self, on: bool) {
        self.auto_complete = on;
    }

    /// Under an adaptive [`Preconditioner::Auto`] that still uses IC(0) on a system of
    /// `n ≤` [`DIRECT_MAX_PARTICLES`] particles, the iterations an IC(0) solve may take
    /// before the complete factor is cheaper: `⌊AUTO_SWITCH · √n⌋`. `None` otherwise.
    pub(crate) fn probe_limit(&self, n: usize) -> Option<usize> {
        let probing = self.adaptive && !self.auto_complete && n <= DIRECT_MAX_PARTICLES;
        probing.then(|| (AUTO_SWITCH * (n as f64).sqrt()) as usize)
    }

    /// After a probing IC(0) solve ([`TriangularFactor::probe_limit`]) that did not
    /// converge within its limit: switches to the complete factor for good and returns
    /// true, unless the solve already used the complete factor (which failed over to
    /// IC(0) only on an indefinite matrix).
    pub(crate) fn switch_if_costly(&mut self, n: usize) -> bool {
        if self.complete || self.probe_limit(n).is_none() {
            return false;
        }
        self.auto_complete = true;
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

    /// This factor eliminating in `order` (from its next [`TriangularFactor::factor`] on).
    pub fn with_order(self, order: EliminationOrder) -> Self {
        TriangularFactor { order, ..self }
    }

    /// Fills the copies of the factors read by the sweeps: `L` and `Lᵀ` over the whole
    /// permuted pattern, rounded to single precision (or kept in double under `double`).
    fn round(&mut self) {
        let Some(st) = &self.structure else {
            return;
        };
        if self.double {
            whole(st, &self.tri, (&mut self.tri_full, Mat3::zeros()), |m| m);
            return;
        }
        whole(st, &self.tri, (&mut self.tri32, Mat3f::zeros()), |m| {
            m.cast()
        });
        self.inv_diag32.resize(self.inv_diag.len(), Mat3f::zeros());
        let diagonal = (&mut self.inv_diag32[..], &self.inv_diag[..]);
        crate::parallel::for_each_chunk(diagonal, ROUND_CHUNK, |_, (out, exact)| {
            for (o, m) in out.iter_mut().zip(exact) {
                *o = m.cast();
            }
        });
    }

    /// `s = P⁻¹ r = L⁻ᵀ D⁻¹ L⁻¹ r` (in the elimination order, module doc); returns
    /// `Σ_i r_i · project(i, s_i)`, the terms computed in parallel and summed in
    /// decreasing particle order on the calling thread (the same sum for any number of
    /// threads).
    ///
    /// With `project(i, ·) = S_i` this is the `δ = rᵀ S P⁻¹ r` of the modified PCG. Taking
    /// the filter inside the product matters near convergence: `r` carries rounding
    /// residue in the constrained directions, which `P⁻¹` (identity there) does not damp,
    /// and `rᵀ P⁻¹ r` would mix it into the CG coefficients.
    ///
    /// # Panics
    /// If the last [`TriangularFactor::factor`] failed, or `r`, `s` do not have one entry
    /// per particle (caller bugs).
    pub fn apply(
        &self,
        r: &[Vec3],
        s: &mut [Vec3],
        project: impl Fn(usize, Vec3) -> Vec3 + Sync,
    ) -> f64 {
        let mut work = self.work.0.lock().unwrap_or_else(PoisonError::into_inner);
        let (y, terms) = &mut *work;
        terms.resize(r.len(), 0.0);
        if self.complete {
            self.direct.apply(r, s);
            return projected_dot(r, s, None, project, terms);
        }
        let st = self
            .structure
            .as_ref()
            .expect("apply after a successful factor");
        let n = st.n();
        assert_eq!(r.len(), n, "apply: r has the wrong length");
        assert_eq!(s.len(), n, "apply: s has the wrong length");
        y.resize(n, Vec3::zeros());
        if self.double {
            sweeps(st, &self.tri_full, &self.inv_diag, r, y);
        } else {
            sweeps(st, &self.tri32, &self.inv_diag32, r, y);
        }
        projected_dot(r, s, Some((y, &st.position)), project, terms)
    }
}

/// Blocks per parallel task of the rounding of `D⁻¹` (scheduling only).
const ROUND_CHUNK: usize = 2048;

/// Rows per parallel task of [`projected_dot`] (scheduling only: the sum does not depend
/// on it).
const DOT_CHUNK: usize = 512;

/// `Σ_i r_iᵀ project(i, s_i)` after `s = Πᵀ y` where `permuted = (y, position)` is given
/// (`s_i = y[position[i]]`): the gather and the terms in parallel, their sum sequential
/// in decreasing `i`, so the result is that of the sequential pass it replaced (which
/// took 2% of the time of the 10,000-particle sheet on the sphere, one thread working).
fn projected_dot(
    r: &[Vec3],
    s: &mut [Vec3],
    permuted: Option<(&[Vec3], &[usize])>,
    project: impl Fn(usize, Vec3) -> Vec3 + Sync,
    terms: &mut [f64],
) -> f64 {
    crate::parallel::for_each_chunk((s, &mut *terms), DOT_CHUNK, |c, (sc, tc)| {
        for (k, (si, ti)) in sc.iter_mut().zip(tc).enumerate() {
            let i = c * DOT_CHUNK + k;
            if let Some((y, position)) = permuted {
                *si = y[position[i]];
            }
            *ti = r[i].dot(&project(i, *si));
        }
    });
    terms.iter().rev().fold(0.0, |dot, t| dot + t)
}

/// The filtered matrix `Ã` (module doc) in elimination order, read slot by slot.
struct Filtered<'a> {
    st: &'a Structure,
    /// The values of `A` (over `A`'s own pattern).
    values: &'a [Mat3],
    /// Per position: index of its `S_i` in `filter_blocks`, or [`FREE`].
    filter_of: &'a [usize],
    filter_blocks: &'a [Mat3],
}

impl Filtered<'_> {
    /// `S_i`, `None` for a free particle.
    #[inline]
    fn filter(&self, i: usize) -> Option<Mat3> {
        let k = self.filter_of[i];
        (k != FREE).then(|| self.filter_blocks[k])
    }

    /// The symmetric part of `Ã_ii` (position `i` in the elimination order), the diagonal
    /// block IC(0) factors.
    #[inline]
    fn diagonal(&self, i: usize) -> Mat3 {
        let a_ii = self.at(i, self.st.diag[i]);
        (a_ii + a_ii.transpose()) * 0.5
    }

    /// `Ã_ij` for the slot `k = (i, j)` of row `i` (positions in the elimination order).
    #[inline]
    fn at(&self, i: usize, k: usize) -> Mat3 {
        let j = self.st.col[k];
        let m = self.values[self.st.source[k]];
        let si = self.filter(i);
        let m = match (si, self.filter(j)) {
            (None, None) => m,
            (Some(s), None) => s * m,
            (None, Some(t)) => m * t,
            (Some(s), Some(t)) => s * m * t,
        };
        match (i == j, si) {
            (true, Some(s)) => m + Mat3::identity() - s,
            _ => m,
        }
    }
}

use crate::linalg::simd::Mat3f;

/// Relative shifts `α` (of `Ã + α Λ`, module doc) tried in turn by IC(0) (see
/// [`TriangularFactor::factor`]); the last attempt accepts failing pivots by replacing
/// them. The sheets on a sphere accept 0.1 in most factorisations at 10,000 particles,
/// 0 or 0.025 at 2,500; a ladder of ratio 2 from 0.01 took 1,186 CG iterations and 425
/// restarts on the 10,000 sheet's systems against 1,245 and 213 with this one.
pub const SHIFTS: [f64; 8] = [0.0, 0.025, 0.1, 0.4, 1.6, 6.4, 25.6, 102.4];

/// `λ̂ = 1/‖M⁻¹‖_∞` of a symmetric block `M` (its lower triangle read), the scale of IC(0)'s
/// shift (module doc): for `M` positive definite a lower bound of its smallest eigenvalue
/// within `√3`, as `ρ(M⁻¹) ≤ ‖M⁻¹‖_∞ ≤ √3 ‖M⁻¹‖₂` and `ρ(M⁻¹) = ‖M⁻¹‖₂ = 1/λ_min`.
/// 0 for an `M` that is not (numerically) positive definite: no shift makes an
/// indefinite `Ã_ii` a system IC(0) should factor, and its pivot is replaced in the last
/// attempt as before the shift had this form.
pub fn smallest_eigenvalue_bound(m: &Mat3) -> f64 {
    let row_sum = |inv: &Mat3, r: usize| (0..3).map(|c| inv[(r, c)].abs()).sum::<f64>();
    match cholesky_inverse(m) {
        Some(inv) if inv.iter().all(|x| x.is_finite()) => {
            1.0 / (0..3).map(|r| row_sum(&inv, r)).fold(0.0, f64::max)
        }
        _ => 0.0,
    }
}

/// `D⁻¹` of an IC(0) pivot, or `None` if `D` is not (numerically) SPD: its Cholesky fails
/// ([`cholesky_inverse`](super::block3::cholesky_inverse)), the inverse is not finite, or a diagonal entry fell below
/// [`PIVOT_FLOOR`] times that of `Ã_ii`.
fn pivot_inverse(pivot: &Mat3, a_ii: &Mat3) -> Option<Mat3> {
    // Written with `all` so that a NaN entry fails too.
    if !(0..3).all(|r| pivot[(r, r)] > PIVOT_FLOOR * a_ii[(r, r)].abs()) {
        return None;
    }
    let inv = cholesky_inverse(pivot)?;
    inv.iter().all(|x| x.is_finite()).then_some(inv)
}
