//! Deterministic parallel assembly, two ways over one plan built per topology.
//!
//! **Scatter** (what the simulator uses): each set's elements are split ([`Blocked`])
//! into blocks of elements lying wholly in one range of consecutive particles and a rest
//! that spans ranges. Blocks share no particle, so each adds its elements' blocks straight
//! into the matrix slots and its vectors into the right-hand side, in element order, all
//! blocks in parallel without races; then the rest, whose elements of one colour of
//! [`Colouring`](super::colouring::Colouring) share no particle, colour after colour; sets
//! one after another ([`AssemblyPlan::scatter`]), or two sets' blocks in one pass that
//! also clears the rows ([`AssemblyPlan::scatter_two`], the triangles and hinges):
//!
//! ```text
//! A[k] = D_i·[k = (i, i)] + Σ_s ( Σ_{e in the block of row i, in order} (block of e at k)
//!                                + Σ_c (block of the rest's element of colour c at k) )
//! ```
//! The split depends on the mesh only, so every slot is summed in one fixed order
//! whichever thread computes an element: bit-identical for any thread count, and no
//! per-element buffer is written and read back. A block walks its own rows in mesh order,
//! where colours alone would sweep the whole matrix once per colour.
//!
//! **Gather** (the reference the scatter is tested against): elements write their blocks
//! into flat per-element buffers; for every matrix slot and every particle the plan sums
//! its contributions in a fixed order (parallel over rows):
//!
//! ```text
//! A[k]  = D_i·[k is the diagonal slot of row i] + Σ_{(s, o) ∈ src(k)} blocks_s[o]
//! b_i   =                                        Σ_{(s, o) ∈ vsrc(i)} vectors_s[o]
//! ```
//! `src(k)` lists, for the pattern slot `k = (i, j)`, every `(set s, flat offset o =
//! e·N² + a·N + b)` whose element `e` has particle `i` at position `a` and `j` at `b`,
//! ordered by set, then element, then `(a, b)`; `vsrc(i)` likewise lists `(s, e·N + a)`.
//! Both lists are stored CSR-like (offset array + `u32` pairs), built in O(total
//! contributions) on the first gather. Each slot's sum is taken in list order, so the
//! result is bit-identical to a serial scatter in that order, for any thread count.
use super::colouring::Blocked;
use super::{BlockCsr, BlockPattern};
use crate::{Mat3, Vec3};
use rayon::prelude::*;
use std::sync::{Arc, OnceLock};

/// Elements per parallel task of the scatter (scheduling only).
const SCATTER_CHUNK: usize = 64;

/// Blocks per parallel task of clearing the matrix before a scatter.
const ZERO_CHUNK: usize = 4096;

/// A colour with fewer elements is scattered on the calling thread: waking the pool for
/// a few dozen elements costs more than it saves (a mesh of a few hundred particles has
/// colours of a few dozen elements). Scheduling only: the sums are the same.
const SCATTER_PARALLEL_MIN: usize = 64;

/// Largest element arity [`AssemblyPlan::scatter`] takes (hinges and self-contact springs).
pub const MAX_SCATTER_ARITY: usize = 4;

/// A set of elements of equal arity `N` (e.g. triangles N = 3, hinges N = 4).
/// Element `e` has particles `nodes[e*N .. e*N+N]`. Its matrix contributions are laid out
/// in a flat buffer at `e*N*N + a*N + b` for block `(a, b)` (row particle `a`, column `b`),
/// its vector contributions at `e*N + a`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElementSet {
    /// Arity N.
    pub arity: usize,
    /// Flattened particle indices, `len = count * arity`.
    pub nodes: Vec<usize>,
}

impl ElementSet {
    /// Number of elements (`nodes.len() / arity`, 0 for arity 0).
    pub fn count(&self) -> usize {
        self.nodes.len().checked_div(self.arity).unwrap_or(0)
    }

    /// The elements, each a slice of `arity` particle indices.
    pub fn elements(&self) -> impl Iterator<Item = &[usize]> {
        self.nodes.chunks_exact(self.arity.max(1))
    }
}

/// One element set as the scatter sees it.
#[derive(Debug, Clone, PartialEq)]
struct ScatterSet {
    arity: usize,
    /// Shared with the plans extended from this one (topology, not pattern).
    nodes: Arc<[usize]>,
    /// Pattern slot of block `(a, b)` of element `e` at `e·N² + a·N + b`.
    slots: Vec<u32>,
    /// Shared like `nodes`.
    split: Arc<Blocked>,
}

/// Assembly plan for a list of element sets over one pattern.
#[derive(Debug, Clone)]
pub struct AssemblyPlan {
    /// The pattern all sets' couplings (and the diagonal) live in.
    pub pattern: Arc<BlockPattern>,
    /// `(arity, count)` of each set, to check the buffers handed to the gathers.
    shapes: Vec<(usize, usize)>,
    sets: Vec<ScatterSet>,
    /// Slot of each particle's diagonal block.
    diagonal_slots: Vec<usize>,
    /// The gather lists (per pattern slot, the pseudo-set `shapes.len()` meaning
    /// "`diagonal[offset]`"; per particle), built on the first gather.
    lists: OnceLock<[GatherList; 2]>,
    /// Per set, the slots and particles that its rest writes, for
    /// [`AssemblyPlan::scatter_two`] (built on its first call with that set first).
    seams: Vec<OnceLock<Seams>>,
}

/// The slots and particles that the rest of one set's split (its elements spanning
/// ranges) writes.
#[derive(Debug, Clone, Default)]
struct Seams {
    slots: Vec<bool>,
    particles: Vec<bool>,
}

impl Seams {
    fn of(set: &ScatterSet, nnz: usize, n: usize) -> Seams {
        let (arity, rest) = (set.arity, &set.split.rest);
        let mut seams = Seams {
            slots: vec![false; nnz],
            particles: vec![false; n],
        };
        for e in (0..rest.colours()).flat_map(|c| rest.colour(c)) {
            let e = *e as usize;
            for &i in &set.nodes[e * arity..][..arity] {
                seams.particles[i] = true;
            }
            for &k in &set.slots[e * arity * arity..][..arity * arity] {
                seams.slots[k as usize] = true;
            }
        }
        seams
    }
}

/// A range's contributions at the seams of another set, kept for after that set's rest
/// ([`AssemblyPlan::scatter_two`]): `(slot, block)` and `(particle, vector)` in the
/// order of the additions.
#[derive(Debug, Default)]
struct Deferred {
    blocks: Vec<(u32, Mat3)>,
    vectors: Vec<(u32, Vec3)>,
}

/// A pointer that parallel tasks write through at indices no other task touches (the
/// split's and the colouring's guarantee). Read through [`Shared::at`] so that closures capture the whole
/// wrapper (which is `Sync`), not the raw field.
#[derive(Clone, Copy)]
struct Shared<T>(*mut T);

// SAFETY: only used by `AssemblyPlan::scatter`, whose tasks write disjoint indices.
unsafe impl<T: Send> Send for Shared<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for Shared<T> {}

impl<T> Shared<T> {
    /// Pointer to entry `k`.
    ///
    /// # Safety
    /// `k` must be in bounds and no other task may access entry `k` meanwhile.
    unsafe fn at(&self, k: usize) -> *mut T {
        self.0.add(k)
    }
}

/// Checks set `s`: its node count a multiple of its arity and its flat buffer within 2³²
/// entries (topology bugs upstream, not user data: panics).
fn check_set(s: usize, set: &ElementSet) {
    assert!(
        set.nodes.len().is_multiple_of(set.arity),
        "element set {s}: {} nodes for arity {}",
        set.nodes.len(),
        set.arity
    );
    to_u32(set.count() * set.arity * set.arity);
}

impl ScatterSet {
    /// `set` over `pattern`, which holds its couplings: its block slots and its split.
    fn new(pattern: &BlockPattern, set: &ElementSet) -> Self {
        let mut slots = Vec::with_capacity(set.count() * set.arity * set.arity);
        for e in set.elements() {
            for &i in e {
                for &j in e {
                    let k = pattern.slot(i, j).expect("pattern contains every coupling");
                    slots.push(to_u32(k));
                }
            }
        }
        ScatterSet {
            arity: set.arity,
            nodes: set.nodes.as_slice().into(),
            slots,
            split: Arc::new(Blocked::new(pattern.n, set.arity, &set.nodes)),
        }
    }
}

/// Converts a flat offset or set index to the compact `u32` of the gather lists.
fn to_u32(x: usize) -> u32 {
    u32::try_from(x).expect("assembly buffer larger than 2^32 entries")
}

/// The scatter of set `s`'s elements in a list: each element's blocks (when `values` is
/// given) and vectors added at its slots and particles.
fn adder<'a>(
    s: &'a ScatterSet,
    values: Option<Shared<Mat3>>,
    vectors: Shared<Vec3>,
    element: &'a (impl Fn(usize, &mut [Mat3], &mut [Vec3]) + Sync),
) -> impl Fn(&[u32]) + Sync + 'a {
    let arity = s.arity;
    move |chunk: &[u32]| {
        let mut b = [Mat3::zeros(); MAX_SCATTER_ARITY * MAX_SCATTER_ARITY];
        let mut v = [Vec3::zeros(); MAX_SCATTER_ARITY];
        for &e in chunk {
            let e = e as usize;
            let blocks = if values.is_some() { arity * arity } else { 0 };
            element(e, &mut b[..blocks], &mut v[..arity]);
            let nodes = &s.nodes[e * arity..][..arity];
            // SAFETY: the elements of other blocks, and those of one colour of the
            // rest, share no particle with this one, so no other task of this phase
            // touches rhs[i] for i in `nodes` or a slot (i, j) with i, j
            // in `nodes`; slots and nodes are in bounds (checked when the plan was
            // built).
            unsafe {
                for (a, &i) in nodes.iter().enumerate() {
                    *vectors.at(i) += v[a];
                }
                if let Some(values) = &values {
                    let slots = &s.slots[e * blocks..][..blocks];
                    for (block, &k) in b[..blocks].iter().zip(slots) {
                        *values.at(k as usize) += *block;
                    }
                }
            }
        }
    }
}

/// Adds the elements `chunk` of set `s` as [`adder`] does, except their blocks at
/// `seams.slots` and vectors at `seams.particles`, which it returns in order.
fn add_deferring(
    s: &ScatterSet,
    (values, vectors): (Shared<Mat3>, Shared<Vec3>),
    element: &(impl Fn(usize, &mut [Mat3], &mut [Vec3]) + Sync),
    seams: &Seams,
    chunk: &[u32],
) -> Deferred {
    let arity = s.arity;
    let mut b = [Mat3::zeros(); MAX_SCATTER_ARITY * MAX_SCATTER_ARITY];
    let mut v = [Vec3::zeros(); MAX_SCATTER_ARITY];
    let mut deferred = Deferred::default();
    for &e in chunk {
        let e = e as usize;
        let blocks = arity * arity;
        element(e, &mut b[..blocks], &mut v[..arity]);
        let nodes = &s.nodes[e * arity..][..arity];
        let slots = &s.slots[e * blocks..][..blocks];
        // SAFETY: as in `adder` (the elements of one range).
        unsafe {
            for (a, &i) in nodes.iter().enumerate() {
                if seams.particles[i] {
                    deferred.vectors.push((i as u32, v[a]));
                } else {
                    *vectors.at(i) += v[a];
                }
            }
            for (block, &k) in b[..blocks].iter().zip(slots) {
                if seams.slots[k as usize] {
                    deferred.blocks.push((k, *block));
                } else {
                    *values.at(k as usize) += *block;
                }
            }
        }
    }
    deferred
}

/// Adds the rest of a split (the elements spanning ranges) colour by colour, the elements
/// of a colour in parallel.
fn add_rest(split: &Blocked, add_all: &(impl Fn(&[u32]) + Sync)) {
    for c in 0..split.rest.colours() {
        let colour = split.rest.colour(c);
        if colour.len() < SCATTER_PARALLEL_MIN {
            add_all(colour);
        } else {
            let chunk = SCATTER_CHUNK.max(colour.len().div_ceil(rayon::current_num_threads()));
            crate::parallel::for_each_chunk(colour, chunk, |_, part| add_all(part));
        }
    }
}

impl AssemblyPlan {
    /// Builds the pattern of `n` particles coupled by `sets` and the gather lists.
    ///
    /// Matrix list of slot `(i, i)` starts with the diagonal term `D_i` (pseudo-set
    /// `sets.len()`), then the element blocks in set / element / `(a, b)` order; the
    /// vector list of particle `i` has the element vectors in set / element / `a` order.
    ///
    /// # Panics
    /// If a set's `nodes.len()` is not a multiple of its arity, a node is `≥ n`, or a flat
    /// buffer would exceed 2³² entries (all topology bugs upstream, not user data).
    pub fn new(n: usize, sets: &[ElementSet]) -> Self {
        for (s, set) in sets.iter().enumerate() {
            check_set(s, set);
        }
        let pattern = Arc::new(BlockPattern::from_elements(
            n,
            sets.iter().flat_map(ElementSet::elements),
        ));
        let scattered = sets
            .iter()
            .map(|set| ScatterSet::new(&pattern, set))
            .collect();
        let diagonal_slots = (0..n)
            .map(|i| pattern.slot(i, i).expect("pattern contains the diagonal"))
            .collect();
        AssemblyPlan {
            pattern,
            shapes: sets.iter().map(|s| (s.arity, s.count())).collect(),
            sets: scattered,
            diagonal_slots,
            lists: OnceLock::new(),
            seams: sets.iter().map(|_| OnceLock::new()).collect(),
        }
    }

    /// The plan of this plan's sets followed by `extra`, equal to [`AssemblyPlan::new`] of
    /// all of them without redoing the first sets' work: the pattern gains `extra`'s
    /// couplings by a merge of sorted rows ([`BlockPattern::union`]), and the first sets
    /// keep their splits and move their slots by the merge's map. (The simulator adds a
    /// step's self-contact springs to the mesh's triangles and hinges this way whenever
    /// the coupled particles change: at 2,601 particles a plan from scratch was 5% of
    /// the fig.-1 drape.)
    ///
    /// # Panics
    /// As [`AssemblyPlan::new`] for `extra`.
    pub fn extended(&self, extra: &ElementSet) -> Self {
        check_set(self.sets.len(), extra);
        let n = self.pattern.n;
        let own = BlockPattern::from_elements(n, extra.elements());
        let (pattern, moved) = self.pattern.union(&own);
        let pattern = Arc::new(pattern);
        let mut sets: Vec<ScatterSet> = (self.sets.iter())
            .map(|set| ScatterSet {
                arity: set.arity,
                nodes: set.nodes.clone(),
                slots: set
                    .slots
                    .par_iter()
                    .map(|&k| to_u32(moved[k as usize]))
                    .collect(),
                split: set.split.clone(),
            })
            .collect();
        sets.push(ScatterSet::new(&pattern, extra));
        let mut shapes = self.shapes.clone();
        shapes.push((extra.arity, extra.count()));
        AssemblyPlan {
            diagonal_slots: self.diagonal_slots.iter().map(|&k| moved[k]).collect(),
            pattern,
            shapes,
            seams: sets.iter().map(|_| OnceLock::new()).collect(),
            sets,
            lists: OnceLock::new(),
        }
    }

    /// Starts a scatter: `out = diag(diagonal)` (zero without it), `rhs = 0`.
    ///
    /// # Panics
    /// If `out` is over another pattern or the lengths do not match it.
    pub fn scatter_begin(&self, diagonal: Option<&[Mat3]>, out: &mut BlockCsr, rhs: &mut [Vec3]) {
        assert!(
            Arc::ptr_eq(&out.pattern, &self.pattern) || *out.pattern == *self.pattern,
            "scatter_begin: output matrix is over another pattern"
        );
        assert_eq!(rhs.len(), self.pattern.n, "scatter_begin: rhs length");
        crate::parallel::for_each_chunk(&mut out.values[..], ZERO_CHUNK, |_, part| {
            part.fill(Mat3::zeros());
        });
        rhs.fill(Vec3::zeros());
        if let Some(d) = diagonal {
            assert_eq!(d.len(), self.pattern.n, "scatter_begin: diagonal length");
            for (d, &k) in d.iter().zip(&self.diagonal_slots) {
                out.values[k] = *d;
            }
        }
    }

    /// Adds the contributions of every element of set `set`: `element(e, blocks, vectors)`
    /// fills element `e`'s `N²` blocks (`[a·N + b]` for particles `a`, `b` of the
    /// element, only when `out` is given) and `N` vectors, which are added to `out` and
    /// `rhs`. Colours in order, the elements of a colour in parallel (see the module doc).
    ///
    /// # Panics
    /// If `set` is out of range, its arity exceeds [`MAX_SCATTER_ARITY`], or `out` /
    /// `rhs` do not match the pattern.
    pub fn scatter(
        &self,
        set: usize,
        out: Option<&mut BlockCsr>,
        rhs: &mut [Vec3],
        element: impl Fn(usize, &mut [Mat3], &mut [Vec3]) + Sync,
    ) {
        let s = &self.sets[set];
        let arity = s.arity;
        assert!(
            arity <= MAX_SCATTER_ARITY,
            "scatter: arity {arity} too large"
        );
        assert_eq!(rhs.len(), self.pattern.n, "scatter: rhs length");
        let values = out.map(|m| {
            assert!(
                Arc::ptr_eq(&m.pattern, &self.pattern) || *m.pattern == *self.pattern,
                "scatter: output matrix is over another pattern"
            );
            Shared(m.values.as_mut_ptr())
        });
        let add_all = adder(s, values, Shared(rhs.as_mut_ptr()), &element);
        let split = &s.split;
        if split.in_blocks() < SCATTER_PARALLEL_MIN {
            (0..split.blocks()).for_each(|b| add_all(split.block(b)));
        } else {
            crate::parallel::for_each_chunk(0..split.blocks(), 1, |b, _| add_all(split.block(b)));
        }
        add_rest(split, &add_all);
    }

    /// [`AssemblyPlan::scatter_begin`] followed by [`AssemblyPlan::scatter`] of set `a` and
    /// of set `b` (element functions `fa`, `fb` as there), with the same sums bit for bit,
    /// in one pass over the particle ranges: the task of range `r` clears its rows of
    /// `out` and `rhs` (the diagonal term `D_i` in its diagonal slots), then adds `a`'s and
    /// `b`'s elements lying in the range while those rows are still in its core's cache.
    /// Then `a`'s rest, colour by colour; then what `b`'s range elements add at the slots
    /// and particles `a`'s rest writes (the seams), kept aside until now so that every
    /// sum keeps the order of the separate calls; then `b`'s rest:
    ///
    /// ```text
    /// A[k] = D_i·[k = (i, i)] + (a's range elements) + (a's rest colours)
    ///                         + (b's range elements) + (b's rest colours)
    /// ```
    /// The separate calls clear the matrix in a pass of their own and walk every range
    /// twice. At 10,000 particles (9 MB of blocks, 2 MB of L2 per core) the second walk
    /// reads every row back from L3.
    ///
    /// # Panics
    /// If `a` or `b` is out of range, an arity exceeds [`MAX_SCATTER_ARITY`], or `out`,
    /// `rhs` or `diagonal` do not match the pattern.
    pub fn scatter_two(
        &self,
        diagonal: Option<&[Mat3]>,
        out: &mut BlockCsr,
        rhs: &mut [Vec3],
        (a, fa): (usize, impl Fn(usize, &mut [Mat3], &mut [Vec3]) + Sync),
        (b, fb): (usize, impl Fn(usize, &mut [Mat3], &mut [Vec3]) + Sync),
    ) {
        let (sa, sb) = (&self.sets[a], &self.sets[b]);
        assert!(
            sa.arity.max(sb.arity) <= MAX_SCATTER_ARITY,
            "scatter_two: arity too large"
        );
        assert!(
            Arc::ptr_eq(&out.pattern, &self.pattern) || *out.pattern == *self.pattern,
            "scatter_two: output matrix is over another pattern"
        );
        let n = self.pattern.n;
        assert_eq!(rhs.len(), n, "scatter_two: rhs length");
        if let Some(d) = diagonal {
            assert_eq!(d.len(), n, "scatter_two: diagonal length");
        }
        let seams = self.seams[a].get_or_init(|| Seams::of(sa, out.values.len(), n));
        // Both splits are over the same ranges (their count depends on `n` only).
        let ranges = sa.split.blocks();
        debug_assert_eq!(ranges, sb.split.blocks());
        let values = Shared(out.values.as_mut_ptr());
        let vectors = Shared(rhs.as_mut_ptr());
        let add_a = adder(sa, Some(values), vectors, &fa);
        let (row_ptr, diagonal_slots) = (&self.pattern.row_ptr, &self.diagonal_slots);
        let range = |r: usize| {
            let rows = sa.split.particles(n, r);
            // SAFETY: only this task touches the rows of range r (their slots are
            // `row_ptr[start]..row_ptr[end]`) and their right-hand side entries until
            // every range is done: the range elements of other ranges share no particle
            // with them (`Blocked`). All in bounds.
            unsafe {
                for k in row_ptr[rows.start]..row_ptr[rows.end] {
                    *values.at(k) = Mat3::zeros();
                }
                for i in rows {
                    *vectors.at(i) = Vec3::zeros();
                    if let Some(d) = diagonal {
                        *values.at(diagonal_slots[i]) = d[i];
                    }
                }
            }
            add_a(sa.split.block(r));
            add_deferring(sb, (values, vectors), &fb, seams, sb.split.block(r))
        };
        let mut deferred: Vec<Deferred> = Vec::new();
        if n < SCATTER_PARALLEL_MIN {
            deferred = (0..ranges).map(range).collect();
        } else {
            crate::parallel::chunks(0..ranges, 1, &mut deferred, |r, _| range(r));
        }
        add_rest(&sa.split, &add_a);
        // SAFETY: no task runs; the slots and particles were checked when the plan was
        // built.
        unsafe {
            for d in &deferred {
                for &(k, block) in &d.blocks {
                    *values.at(k as usize) += block;
                }
                for &(i, v) in &d.vectors {
                    *vectors.at(i as usize) += v;
                }
            }
        }
        add_rest(&sb.split, &adder(sb, Some(values), vectors, &fb));
    }
}

mod gather;
use gather::GatherList;
#[cfg(test)]
mod tests;
