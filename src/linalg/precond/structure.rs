//! The pattern of the permuted matrix `Π Ã Πᵀ` whose rows the factorisations and sweeps
//! walk (rebuilt only when the pattern of `A` changes; O(nnz) plus a sort of each short
//! row).
//!
//! ```text
//! row  i  of Π Ã Πᵀ  =  row order[i] of Ã,   column j  =  particle order[j]
//! values[source[k]]  is the block of A stored at slot k of the permuted pattern
//! ```
use super::order::{is_well_formed, SeparatorOrder};
use crate::linalg::BlockPattern;
use std::ops::Range;
use std::sync::Arc;

/// Slot maps of one pattern under one elimination order. Rows and columns are positions
/// in the elimination order (see [`SeparatorOrder`]).
#[derive(Debug, Clone)]
pub(super) struct Structure {
    /// The pattern of `A` these maps were built for (compared by pointer).
    pub(super) pattern: Arc<BlockPattern>,
    /// Whether the order is the separator order (else the natural one).
    pub(super) separator: bool,
    /// Particle at each position.
    pub(super) order: Vec<usize>,
    /// Position of each particle (the inverse of `order`).
    pub(super) position: Vec<usize>,
    /// Positions of domain `A`, domain `B` and the separator `S`.
    pub(super) ranges: [Range<usize>; 3],
    /// Start of each permuted row in `col`.
    pub(super) row_ptr: Vec<usize>,
    /// Permuted column (a position) of each slot, sorted within a row.
    pub(super) col: Vec<usize>,
    /// Slot of `A`'s pattern holding the block of each permuted slot.
    pub(super) source: Vec<usize>,
    /// Slot of `(i, i)`.
    pub(super) diag: Vec<usize>,
    /// Slot of `(j, i)` for the slot `(i, j)`.
    pub(super) transpose: Vec<usize>,
    /// Start of each row's strictly lower slots `row_ptr[i]..diag[i]` in the factor's
    /// array of `L`, which holds only those ([`Structure::lower_slot`]).
    pub(super) lower_ptr: Vec<usize>,
}

impl Structure {
    /// Slot maps of `pattern` in the separator order (`separator`) or the natural one, or
    /// `None` if the pattern is malformed, not structurally symmetric or misses a
    /// diagonal entry (never the case for [`BlockPattern::from_elements`]).
    pub(super) fn new(pattern: &Arc<BlockPattern>, separator: bool) -> Option<Self> {
        let p = &**pattern;
        if !is_well_formed(p) {
            return None;
        }
        let (n, nnz) = (p.n, p.nnz());
        if p.col.iter().any(|&j| j >= n) {
            return None;
        }
        let mut ord = if separator {
            SeparatorOrder::new(p)
        } else {
            SeparatorOrder::natural(n)
        };
        let mut position = positions(&ord.order);
        if !separates(p, &ord, &position) {
            // Cannot happen for a symmetric pattern (module doc of `order`); kept so that
            // a wrong order can never reach the parallel row loops.
            ord = SeparatorOrder::natural(n);
            position = positions(&ord.order);
        }
        let mut row_ptr = Vec::with_capacity(n + 1);
        let mut col = Vec::with_capacity(nnz);
        let mut source = Vec::with_capacity(nnz);
        let mut entries: Vec<(usize, usize)> = Vec::new();
        row_ptr.push(0);
        for &v in &ord.order {
            entries.clear();
            entries.extend((p.row_ptr[v]..p.row_ptr[v + 1]).map(|k| (position[p.col[k]], k)));
            entries.sort_unstable();
            for &(c, k) in &entries {
                col.push(c);
                source.push(k);
            }
            row_ptr.push(col.len());
        }
        let (diag, transpose) = transpose_slots(&row_ptr, &col)?;
        let mut lower_ptr = Vec::with_capacity(n + 1);
        lower_ptr.push(0);
        for i in 0..n {
            lower_ptr.push(lower_ptr[i] + diag[i] - row_ptr[i]);
        }
        Some(Structure {
            pattern: pattern.clone(),
            separator,
            ranges: ord.ranges(),
            order: ord.order,
            position,
            row_ptr,
            col,
            source,
            diag,
            transpose,
            lower_ptr,
        })
    }

    /// Number of rows (particles).
    pub(super) fn n(&self) -> usize {
        self.order.len()
    }

    /// Index in the array of `L` of the strictly lower slot `k` of row `i`.
    #[inline]
    pub(super) fn lower_slot(&self, i: usize, k: usize) -> usize {
        self.lower_ptr[i] + (k - self.row_ptr[i])
    }

    /// Number of strictly lower slots (the length of the array of `L`).
    pub(super) fn lower_len(&self) -> usize {
        self.lower_ptr.last().copied().unwrap_or(0)
    }
}

/// Slot of `(i, i)` for each row and slot of `(j, i)` for each slot `(i, j)` of a
/// pattern with sorted rows, or `None` if it is not structurally symmetric or misses a
/// diagonal entry. O(nnz): rows are visited in increasing `i`, so the entries `(j, i)`
/// of each row `j` are met in increasing `i`, i.e. in their stored order (one cursor
/// per row).
fn transpose_slots(row_ptr: &[usize], col: &[usize]) -> Option<(Vec<usize>, Vec<usize>)> {
    let n = row_ptr.len() - 1;
    let mut cursor = row_ptr[..n].to_vec();
    let mut diag = vec![usize::MAX; n];
    let mut transpose = vec![0; col.len()];
    for i in 0..n {
        for k in row_ptr[i]..row_ptr[i + 1] {
            let j = col[k];
            let t = cursor[j];
            if t >= row_ptr[j + 1] || col[t] != i {
                return None;
            }
            cursor[j] += 1;
            transpose[k] = t;
            if i == j {
                diag[i] = k;
            }
        }
    }
    diag.iter()
        .all(|&d| d != usize::MAX)
        .then_some((diag, transpose))
}

/// Position of each particle in `order` (the inverse permutation).
fn positions(order: &[usize]) -> Vec<usize> {
    let mut position = vec![0; order.len()];
    for (k, &v) in order.iter().enumerate() {
        position[v] = k;
    }
    position
}

/// Whether no entry of `p` joins domain `A` and domain `B` of `ord`.
fn separates(p: &BlockPattern, ord: &SeparatorOrder, position: &[usize]) -> bool {
    let [a, b, _] = ord.ranges();
    let part = |v: usize| -> u8 {
        let k = position[v];
        u8::from(a.contains(&k)) | (u8::from(b.contains(&k)) << 1)
    };
    (0..p.n).all(|i| {
        let pi = part(i);
        pi == 0 || p.row(i).iter().all(|&j| j >= p.n || (part(j) | pi) != 3)
    })
}
