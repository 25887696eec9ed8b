//! Subdomain deflation of the modified PCG: the conjugate gradient runs on the part of
//! the filtered system that a coarse space of particle aggregates cannot solve, and the
//! coarse part is solved exactly (Nicolaides 1987; Frank & Vuik 2001; the deflated CG of
//! Saad, Yeung, Erhel & Guyomarc'h 2000):
//!
//! ```text
//! Z        n × 3m: Z_iJ = S_i B_J if particle i belongs to aggregate J, else 0
//! E = Zᵀ Ã Z                        (3m × 3m, SPD, factored completely)
//! Q = Z E⁻¹ Zᵀ,    P_D = I − Ã Q
//! start:           Δv ← Δv + Q r,  r ← P_D r                    (Zᵀ r = 0)
//! every iteration: s = P⁻¹ r,  s ← P_Dᵀ s = s − Z E⁻¹ (Ã Z)ᵀ s  ((Ã Z)ᵀ s = 0)
//!                  δ = rᵀ s of the corrected s
//!                  q = filter(A c),  q ← P_D q                  (rounding only; solves
//!                                                                 tighter than 1e-4)
//! ```
//! `Ã` is the filtered matrix of [`precond`](super::precond). Every search direction is
//! Ã-orthogonal to the coarse space, so every residual stays orthogonal to it and is the
//! residual of `Δv` itself: the stopping rule keeps its meaning. The CG thus never sees
//! the smallest eigenvalues of `P⁻¹ Ã` (the smooth, mesh-wide modes IC(0) leaves), and
//! the iteration count drops, most on large meshes where those modes dominate. In exact
//! arithmetic projecting `q` changes nothing; in floating point it keeps the residual
//! orthogonal to the coarse space (in solves tighter than [`PROJECT_PRODUCTS_BELOW`]). Without it (and `δ` taken before the correction) a
//! 196-particle sheet solved to 1e-13 diverged (residuals growing to 1e4 over 5,000
//! iterations), and with `δ` corrected its solves still stalled (the test took twice
//! as long and its trajectory changed); projecting only `q` and
//! the start (DEF1 of Tang, Nabben, Vuik & Erlangga 2009) broke down instead at relative
//! residuals near 1e-6, `cᵀ P_D Ã c` lost to cancellation when `c` lies mostly in the
//! coarse space (tests/control_gradient.rs caught both). `δ` is taken after the
//! correction (`rᵀ s − (Zᵀ r)ᵀ y`): the two differ only by the rounding left in `Zᵀ r`,
//! but near 1e-13 that outweighs `δ`, and adjoint solves of a 144-particle sheet lying on
//! the floor swung between residuals of 1e-11 and 10 for 5,000 iterations.
//!
//! The coarse space holds the three translations of each aggregate, filtered: `S_i B_J`
//! with `B_J` the eigenvectors of `W_J = Σ_{i ∈ J} S_i` whose eigenvalue is at least
//! [`MIN_FREE_SHARE`] times the aggregate's size (the directions in which enough of its
//! particles are free), zero columns for the others (`E_JJ` gets `I − B_JᵀB_J` on its
//! diagonal). The columns of `Z` are mutually orthogonal, so `E` stays well conditioned
//! even where contacts constrain most of an aggregate in nearly the same direction; a
//! free aggregate has `B_J = I`, and `Z` lies in the free subspace (`S_i² = S_i`).
//!
//! Aggregates are grown once per block pattern (`aggregates`): the [`RINGS`]-ring
//! neighbourhoods of seeds whose neighbourhood is still unassigned, then the particles
//! left over join a neighbouring aggregate. One ring would give about three times as many
//! aggregates and fewer iterations, but a coarse solve and factorisation several times
//! dearer per step; two rings also keep the coarse system growing slowly. The space holds
//! the translations of each aggregate only: adding its rotations doubles the coarse
//! unknowns and does not pay on the drape, the sheets resting on a sphere or the skirt.
//!
//! Implementation: per pattern, the slot of `Ã Z` (row `i`, aggregate `J`) of every slot
//! of `A` and the slot of `E` of every slot of `Ã Z`; per solve, `Ã Z` row by row in
//! parallel, `E` on the calling thread and its faer Cholesky factor (`precond::direct`);
//! per iteration, the restrictions `Zᵀ v` and `(Ã Z)ᵀ v` aggregate by aggregate in
//! parallel (over each aggregate's members and each column of `Ã Z`, kept per pattern)
//! and the products with `Z` and `Ã Z` row by row. Every sum runs in a fixed order
//! (particle order within an aggregate), so the result is bit-identical for any thread
//! count, and the same as when the restrictions ran sequentially over the particles: at
//! 10,000 particles (`linalg::tests::perf::deflation_report`, 2 threads) a projection
//! took 137 → 94 µs and a correction 156 → 122 µs with the restrictions in parallel.
use super::block3::CHUNK;
use super::precond::DirectFactor;
use super::{BlockCsr, BlockPattern};
use crate::{Mat3, Vec3};
use std::sync::Arc;

mod aggregates;
use aggregates::aggregates;

/// Fewest particles for which the simulator deflates its solves
/// ([`SolverParams::deflates`](crate::pipeline::SolverParams::deflates)), which then stop
/// at the looser [`SolverParams::cg_deflated_tolerance`](crate::pipeline::SolverParams).
/// Below it the coarse work of each step and iteration (the coarse factor, two coarse
/// solves and the products with `Ã Z` per iteration) costs about what the saved
/// iterations do (`linalg::tests::perf::perf_report` measures both sides). Deflated solves
/// stop at the looser tolerance; a sheet resting on a body may then take more steps per
/// frame, its larger steps failing Baraff's stretch check next to the contacts.
pub const MIN_PARTICLES: usize = 2000;

/// Relative tolerance below which every iteration also projects `q` (module doc). The
/// projection removes rounding only: it kept solves to 1e-13 and the adjoint's solves
/// from stalling, but a solve stopped at the simulator's deflated tolerance (1e-2) has
/// not run long enough for that rounding to tell, and skips it (a restriction, a coarse
/// solve and a product with `Ã Z` per iteration) at the same iteration count.
/// `linalg::tests::deflation` checks the true residual of such a solve.
pub const PROJECT_PRODUCTS_BELOW: f64 = 1e-4;

/// Rings of neighbours grown around an aggregate's first particle.
pub const RINGS: usize = 2;

/// The coarse space of one block pattern and the factor of the last solve.
#[derive(Debug, Default, Clone)]
pub struct Deflation {
    structure: Option<Arc<Structure>>,
    /// `(Ã Z)_iJ = S_i (Σ_{j ∈ J} A_ij S_j) B_J` over `Structure::az_col`.
    az: Vec<Mat3>,
    /// `E`, factored into `factor`.
    coarse: Option<BlockCsr>,
    factor: DirectFactor,
    /// Per aggregate `J`: the basis `B_J` of its free directions (module doc).
    basis: Vec<Mat3>,
    /// Coarse work vectors.
    rc: Vec<Vec3>,
    yc: Vec<Vec3>,
    /// Coarse coefficients of the fused passes (see [`Deflation::az_row`] and
    /// [`Deflation::basis_row`]).
    yq: Vec<Vec3>,
    ys: Vec<Vec3>,
    /// `Zᵀ r` of [`Deflation::correction_coefficients`].
    rr: Vec<Vec3>,
    /// Whether the last [`Deflation::prepare`] succeeded.
    active: bool,
}

/// Aggregates of a pattern and the slot maps of `Ã Z` and `E`.
#[derive(Debug)]
struct Structure {
    pattern: Arc<BlockPattern>,
    /// Aggregate of each particle.
    agg: Vec<usize>,
    /// `Ã Z` in CSR form: row `i` holds the aggregates `az_col[az_ptr[i]..az_ptr[i + 1]]`.
    az_ptr: Vec<usize>,
    az_col: Vec<usize>,
    /// Per slot of `A`: its slot in `Ã Z`.
    az_of_slot: Vec<usize>,
    /// Per slot of `Ã Z` (row `i`, aggregate `J`): the slot `(agg[i], J)` of `E`.
    coarse_of_az: Vec<usize>,
    /// The members of each aggregate in ascending order: aggregate `J` holds
    /// `members[member_ptr[J]..member_ptr[J + 1]]`.
    member_ptr: Vec<usize>,
    members: Vec<usize>,
    /// The slots of `Ã Z` in column `J`, by ascending row: `(row, slot)` pairs
    /// `column[column_ptr[J]..column_ptr[J + 1]]` (the transpose of `az_col`).
    column_ptr: Vec<usize>,
    column: Vec<(usize, usize)>,
    coarse_pattern: Arc<BlockPattern>,
}

impl Structure {
    fn new(pattern: &Arc<BlockPattern>) -> Structure {
        let n = pattern.n;
        let agg = aggregates(pattern);
        let m = agg.iter().map(|&g| g + 1).max().unwrap_or(0);
        let mut az_ptr = Vec::with_capacity(n + 1);
        let mut az_col = Vec::new();
        let mut az_of_slot = vec![0; pattern.nnz()];
        az_ptr.push(0);
        let mut cols = Vec::new();
        for i in 0..n {
            let row = pattern.row_ptr[i]..pattern.row_ptr[i + 1];
            let start = az_col.len();
            cols.clear();
            cols.extend(row.clone().map(|k| agg[pattern.col[k]]));
            cols.sort_unstable();
            cols.dedup();
            az_col.extend_from_slice(&cols);
            for k in row {
                let at = cols.binary_search(&agg[pattern.col[k]]);
                az_of_slot[k] = start + at.expect("aggregate listed");
            }
            az_ptr.push(az_col.len());
        }
        let pairs: Vec<[usize; 2]> = (0..n)
            .flat_map(|i| {
                az_col[az_ptr[i]..az_ptr[i + 1]]
                    .iter()
                    .map(move |&c| (i, c))
            })
            .map(|(i, c)| [agg[i], c])
            .collect();
        let coarse_pattern = Arc::new(BlockPattern::from_elements(m, pairs.iter().map(|p| &p[..])));
        let coarse_of_az = (0..n)
            .flat_map(|i| {
                az_col[az_ptr[i]..az_ptr[i + 1]]
                    .iter()
                    .map(move |&c| (i, c))
            })
            .map(|(i, c)| coarse_pattern.slot(agg[i], c).expect("coarse slot"))
            .collect();
        let (member_ptr, members) =
            transpose(m, (0..n).map(|i| (i, std::slice::from_ref(&agg[i]))));
        let (column_ptr, slots) =
            transpose(m, (0..n).map(|i| (i, &az_col[az_ptr[i]..az_ptr[i + 1]])));
        // `transpose` lists rows; pair each with its slot (row `i`'s entry in column `J`).
        let column = (0..m)
            .flat_map(|g| {
                let (az_ptr, az_col) = (&az_ptr, &az_col);
                slots[column_ptr[g]..column_ptr[g + 1]]
                    .iter()
                    .map(move |&i| {
                        let row = &az_col[az_ptr[i]..az_ptr[i + 1]];
                        (i, az_ptr[i] + row.binary_search(&g).expect("listed column"))
                    })
            })
            .collect();
        Structure {
            pattern: pattern.clone(),
            agg,
            az_ptr,
            az_col,
            az_of_slot,
            coarse_of_az,
            coarse_pattern,
            member_ptr,
            members,
            column_ptr,
            column,
        }
    }

    fn aggregates(&self) -> usize {
        self.coarse_pattern.n
    }
}

impl Deflation {
    /// Whether the aggregates and slot maps are those of `pattern` (compared by pointer).
    pub fn prepared_for(&self, pattern: &Arc<BlockPattern>) -> bool {
        matches!(&self.structure, Some(s) if Arc::ptr_eq(&s.pattern, pattern))
    }

    /// Builds the aggregates and slot maps of `pattern`, and the symbolic factorisation of
    /// its coarse pattern, unless already there: the per-pattern work of
    /// [`Deflation::prepare`], done ahead so that it can overlap the assembly.
    pub fn prepare_pattern(&mut self, pattern: &Arc<BlockPattern>) {
        if self.prepared_for(pattern) {
            return;
        }
        // The old pattern's structures go first: built beside them, the new ones would
        // add their size to the peak resident size at every change of the self-contact
        // springs.
        self.active = false;
        self.structure = None;
        self.coarse = None;
        let st = Arc::new(Structure::new(pattern));
        if st.aggregates() > 0 {
            self.factor.prepare(&st.coarse_pattern);
        }
        self.coarse = Some(BlockCsr::zeros(st.coarse_pattern.clone()));
        self.structure = Some(st);
    }

    /// Builds `Ã Z` and factors `E` for `a` under the filters `filter(i)` (`None` for a free
    /// particle). Returns false (deflation off for this solve) when `E` is not numerically
    /// positive definite.
    pub fn prepare(&mut self, a: &BlockCsr, filter: impl Fn(usize) -> Option<Mat3> + Sync) -> bool {
        self.active = false;
        self.prepare_pattern(&a.pattern);
        let Some(st) = self.structure.clone() else {
            return false;
        };
        let m = st.aggregates();
        if m == 0 {
            return false;
        }
        // B_J from W_J = Σ_{i ∈ J} S_i (module doc).
        self.basis.clear();
        self.basis.resize(m, Mat3::zeros());
        let mut size = vec![0usize; m];
        for (i, &g) in st.agg.iter().enumerate() {
            self.basis[g] += filter(i).unwrap_or_else(Mat3::identity);
            size[g] += 1;
        }
        for (b, &count) in self.basis.iter_mut().zip(&size) {
            *b = free_basis(b, count);
        }
        // Ã Z row by row: (Ã Z)_iJ = S_i (Σ_{j ∈ J} A_ij S_j) B_J.
        crate::linalg::resize_discarding(&mut self.az, st.az_col.len(), Mat3::zeros());
        let (basis, pattern) = (&self.basis, &st.pattern);
        let mut rows: Vec<(usize, &mut [Mat3])> = split_rows(&mut self.az, &st.az_ptr);
        let fill_row = |i: usize, out: &mut [Mat3]| {
            out.iter_mut().for_each(|b| *b = Mat3::zeros());
            let base = st.az_ptr[i];
            for k in pattern.row_ptr[i]..pattern.row_ptr[i + 1] {
                let j = pattern.col[k];
                out[st.az_of_slot[k] - base] += match filter(j) {
                    Some(s) => a.values[k] * s,
                    None => a.values[k],
                };
            }
            let si = filter(i);
            for (slot, b) in out.iter_mut().enumerate() {
                let bj = basis[st.az_col[base + slot]];
                *b = match si {
                    Some(s) => s * *b * bj,
                    None => *b * bj,
                };
            }
        };
        crate::parallel::for_each_chunk(&mut rows[..], CHUNK, |_, part| {
            for (i, out) in part.iter_mut() {
                fill_row(*i, out);
            }
        });
        // E_IJ = B_Iᵀ Σ_{i ∈ I} (Ã Z)_iJ, plus I − B_JᵀB_J on the diagonal (the directions
        // left out).
        let coarse = self
            .coarse
            .get_or_insert_with(|| BlockCsr::zeros(st.coarse_pattern.clone()));
        coarse.values.iter_mut().for_each(|b| *b = Mat3::zeros());
        for (slot, b) in self.az.iter().enumerate() {
            coarse.values[st.coarse_of_az[slot]] += b;
        }
        for g in 0..m {
            let bt = self.basis[g].transpose();
            for k in st.coarse_pattern.row_ptr[g]..st.coarse_pattern.row_ptr[g + 1] {
                coarse.values[k] = bt * coarse.values[k];
            }
            let slot = st.coarse_pattern.slot(g, g).expect("coarse diagonal");
            coarse.values[slot] += Mat3::identity() - bt * self.basis[g];
        }
        self.rc.resize(m, Vec3::zeros());
        self.yc.resize(m, Vec3::zeros());
        self.yq.resize(m, Vec3::zeros());
        self.rr.resize(m, Vec3::zeros());
        self.ys.resize(m, Vec3::zeros());
        self.active = self.factor.factor(coarse, |_| None);
        self.active
    }

    /// Whether the last [`Deflation::prepare`] succeeded (the other calls do nothing
    /// otherwise).
    pub fn active(&self) -> bool {
        self.active
    }

    /// Turns the deflation off until the next [`Deflation::prepare`] (every call is then
    /// the identity, and the rows of the fused passes are zero).
    pub fn deactivate(&mut self) {
        self.active = false;
    }

    /// The aggregate of each particle (after a [`Deflation::prepare`]).
    pub fn aggregate_of(&self) -> Option<&[usize]> {
        self.structure.as_ref().map(|s| s.agg.as_slice())
    }

    /// The coarse start: `Δv ← Δv + Q r`, `r ← P_D r = r − Ã Z E⁻¹ Zᵀ r` (`r` the filtered
    /// start residual, `Δv` the start iterate; afterwards `Zᵀ r = 0`).
    pub fn begin(
        &mut self,
        r: &mut [Vec3],
        dv: &mut [Vec3],
        filter: impl Fn(usize) -> Option<Mat3> + Sync,
    ) {
        if !self.active {
            return;
        }
        self.restrict(r);
        self.factor.apply(&self.rc, &mut self.yc);
        self.prolong(dv, 1.0, &filter);
        self.subtract_az(r);
    }

    /// `v ← P_D v = v − Ã Z E⁻¹ Zᵀ v` (`v` filtered; afterwards `Zᵀ v = 0`).
    pub fn project(&mut self, v: &mut [Vec3]) {
        if !self.active {
            return;
        }
        self.restrict(v);
        self.factor.apply(&self.rc, &mut self.yc);
        self.subtract_az(v);
    }

    /// `v ← v − (Ã Z) yc`.
    fn subtract_az(&self, v: &mut [Vec3]) {
        let st = self.structure.as_ref().expect("prepared");
        let (az, yc) = (&self.az, &self.yc);
        crate::parallel::for_each_chunk(v, CHUNK, |k, vc: &mut [Vec3]| {
            for (t, vi) in vc.iter_mut().enumerate() {
                let i = k * CHUNK + t;
                for slot in st.az_ptr[i]..st.az_ptr[i + 1] {
                    *vi -= az[slot] * yc[st.az_col[slot]];
                }
            }
        });
    }

    /// `s ← P_Dᵀ s = s − Z E⁻¹ (Ã Z)ᵀ s` (`s` filtered; afterwards `(Ã Z)ᵀ s = 0`, `s`
    /// is Ã-orthogonal to the coarse space). Returns `rᵀ (s_before − s_after) = (Zᵀ r)ᵀ y`:
    /// what `rᵀ s` loses, zero when `Zᵀ r = 0` but for rounding, which near convergence
    /// can outweigh `rᵀ s` itself.
    pub fn correct(
        &mut self,
        s: &mut [Vec3],
        r: &[Vec3],
        filter: impl Fn(usize) -> Option<Mat3> + Sync,
    ) -> f64 {
        if !self.active {
            return 0.0;
        }
        self.transpose_product(s);
        self.factor.apply(&self.rc, &mut self.yc);
        self.prolong(s, -1.0, &filter);
        self.restrict(r);
        self.rc.iter().zip(&self.yc).map(|(a, b)| a.dot(b)).sum()
    }

    /// The coarse coefficients of [`Deflation::project`] for a fused pass:
    /// `yq = E⁻¹ Zᵀ q`, after which `q − (Ã Z) yq` is [`Deflation::az_row`] away.
    pub fn product_coefficients(&mut self, q: &[Vec3]) {
        if !self.active {
            return;
        }
        self.restrict(q);
        self.factor.apply(&self.rc, &mut self.yq);
    }

    /// `((Ã Z) yq)_i` (zero when not active).
    #[inline]
    pub fn az_row(&self, i: usize) -> Vec3 {
        let Some(st) = self.structure.as_ref().filter(|_| self.active) else {
            return Vec3::zeros();
        };
        (st.az_ptr[i]..st.az_ptr[i + 1]).fold(Vec3::zeros(), |acc, slot| {
            acc + self.az[slot] * self.yq[st.az_col[slot]]
        })
    }

    /// The coarse coefficients of [`Deflation::correct`] for a fused pass:
    /// `ys = E⁻¹ (Ã Z)ᵀ s`, after which `s − Z ys` is `S_i` [`Deflation::basis_row`]
    /// away; returns `(Zᵀ r)ᵀ ys` as [`Deflation::correct`] does.
    pub fn correction_coefficients(&mut self, s: &[Vec3], r: &[Vec3]) -> f64 {
        if !self.active {
            return 0.0;
        }
        // (Ã Z)ᵀ s and Zᵀ r in one pass over the aggregates (one fork–join per CG
        // iteration fewer than one after the other; the same sums).
        let st = self.structure.as_ref().expect("prepared");
        let (az, basis) = (&self.az, &self.basis);
        let parts = (&mut self.rc[..], &mut self.rr[..]);
        crate::parallel::for_each_chunk(parts, AGGREGATE_CHUNK, |k, (xc, yc)| {
            for (t, (x, y)) in xc.iter_mut().zip(yc).enumerate() {
                let g = k * AGGREGATE_CHUNK + t;
                *x = az_transposed(st, az, s, g);
                *y = restricted(st, basis, r, g);
            }
        });
        self.factor.apply(&self.rc, &mut self.ys);
        self.rr.iter().zip(&self.ys).map(|(a, b)| a.dot(b)).sum()
    }

    /// `B_J ys_J` of particle `i`'s aggregate `J` (zero when not active): `(Z ys)_i` before
    /// its filter.
    #[inline]
    pub fn basis_row(&self, i: usize) -> Vec3 {
        let Some(st) = self.structure.as_ref().filter(|_| self.active) else {
            return Vec3::zeros();
        };
        let g = st.agg[i];
        self.basis[g] * self.ys[g]
    }

    /// `v ← v + sign · Z yc`, `(Z y)_i = S_i B_J y_J`.
    fn prolong(&self, v: &mut [Vec3], sign: f64, filter: &(impl Fn(usize) -> Option<Mat3> + Sync)) {
        let st = self.structure.as_ref().expect("prepared");
        let (basis, yc) = (&self.basis, &self.yc);
        crate::parallel::for_each_chunk(v, CHUNK, |k, vc: &mut [Vec3]| {
            for (t, vi) in vc.iter_mut().enumerate() {
                let i = k * CHUNK + t;
                let g = st.agg[i];
                let x = sign * (basis[g] * yc[g]);
                *vi += filter(i).map_or(x, |s| s * x);
            }
        });
    }

    /// `rc = Zᵀ v = B_Jᵀ Σ_{i ∈ J} v_i` for a filtered `v`: aggregates in parallel, each
    /// summed in particle order (bit-identical for any thread count).
    fn restrict(&mut self, v: &[Vec3]) {
        let st = self.structure.as_ref().expect("prepared");
        let basis = &self.basis;
        crate::parallel::fill(&mut self.rc, AGGREGATE_CHUNK, |g| {
            restricted(st, basis, v, g)
        });
    }

    /// `rc = (Ã Z)ᵀ v`: aggregates in parallel, each summed in particle order.
    fn transpose_product(&mut self, v: &[Vec3]) {
        let st = self.structure.as_ref().expect("prepared");
        let az = &self.az;
        crate::parallel::fill(&mut self.rc, AGGREGATE_CHUNK, |g| {
            az_transposed(st, az, v, g)
        });
    }
}

/// Aggregates per parallel task of the passes over the coarse space (scheduling only:
/// each aggregate's sum is the same whichever thread computes it).
const AGGREGATE_CHUNK: usize = 32;

/// `(Zᵀ v)_J = B_Jᵀ Σ_{i ∈ J} v_i`, summed in particle order.
#[inline]
fn restricted(st: &Structure, basis: &[Mat3], v: &[Vec3], g: usize) -> Vec3 {
    let members = &st.members[st.member_ptr[g]..st.member_ptr[g + 1]];
    basis[g].transpose() * members.iter().fold(Vec3::zeros(), |acc, &i| acc + v[i])
}

/// `((Ã Z)ᵀ v)_J = Σ_i (Ã Z)_iJᵀ v_i`, summed in particle order.
#[inline]
fn az_transposed(st: &Structure, az: &[Mat3], v: &[Vec3], g: usize) -> Vec3 {
    let column = &st.column[st.column_ptr[g]..st.column_ptr[g + 1]];
    (column.iter()).fold(Vec3::zeros(), |acc, &(i, slot)| {
        acc + az[slot].transpose() * v[i]
    })
}

/// Least share of an aggregate's particles free in a direction for that direction to stay
/// in its coarse basis (eigenvalue of `W_J` over the aggregate's size).
pub const MIN_FREE_SHARE: f64 = 0.25;

/// `B_J`: the eigenvectors of `W_J = Σ_{i ∈ J} S_i` (summed over `count` particles) whose
/// eigenvalue is at least [`MIN_FREE_SHARE`] `· count`, as columns, and zero columns for
/// the others; `I` when no particle of the aggregate is constrained (`W_J = count · I`).
fn free_basis(w: &Mat3, count: usize) -> Mat3 {
    let count = count as f64;
    if *w == Mat3::identity() * count {
        return Mat3::identity();
    }
    let eigen = nalgebra::SymmetricEigen::new(0.5 * (w + w.transpose()));
    let mut b = eigen.eigenvectors;
    for k in 0..3 {
        // Written so that a NaN eigenvalue drops its direction too.
        let keep = eigen.eigenvalues[k] >= MIN_FREE_SHARE * count;
        if !keep {
            b.set_column(k, &Vec3::zeros());
        }
    }
    b
}

/// The transpose of a sparse pattern with `m` columns given row by row (`(row, columns)`
/// in ascending row order): `(ptr, rows)` with column `J`'s rows, ascending, in
/// `rows[ptr[J]..ptr[J + 1]]`.
fn transpose<'a>(
    m: usize,
    rows: impl Iterator<Item = (usize, &'a [usize])> + Clone,
) -> (Vec<usize>, Vec<usize>) {
    let mut ptr = vec![0usize; m + 1];
    for (_, cols) in rows.clone() {
        for &c in cols {
            ptr[c + 1] += 1;
        }
    }
    for k in 0..m {
        ptr[k + 1] += ptr[k];
    }
    let mut fill = ptr.clone();
    let mut out = vec![0usize; ptr[m]];
    for (i, cols) in rows {
        for &c in cols {
            out[fill[c]] = i;
            fill[c] += 1;
        }
    }
    (ptr, out)
}

/// `values` split into the rows of a CSR layout `ptr`, each with its row index.
fn split_rows<'a>(mut values: &'a mut [Mat3], ptr: &[usize]) -> Vec<(usize, &'a mut [Mat3])> {
    let mut rows = Vec::with_capacity(ptr.len().saturating_sub(1));
    for (i, w) in ptr.windows(2).enumerate() {
        let (row, rest) = std::mem::take(&mut values).split_at_mut(w[1] - w[0]);
        rows.push((i, row));
        values = rest;
    }
    rows
}
