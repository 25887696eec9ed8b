//! Sparsity pattern of a square block matrix, kept apart from its values and built once
//! per topology (in the manner of nalgebra-sparse's `SparsityPattern`).

/// Rows × block columns, sorted, diagonal always present.
///
/// ```text
/// row i stores the blocks (i, col[k]) for k ∈ row_ptr[i] .. row_ptr[i+1],
/// col[row_ptr[i]] < col[row_ptr[i]+1] < …,   i ∈ { col[k] }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockPattern {
    /// Number of block rows (= block columns = particles).
    pub n: usize,
    /// Start of each row in `col`; `row_ptr.len() == n + 1`.
    pub row_ptr: Vec<usize>,
    /// Block column of each stored block, sorted within a row.
    pub col: Vec<usize>,
}

impl BlockPattern {
    /// The pattern coupling every pair of particles that share an element (each element a
    /// list of particle indices), plus the full diagonal.
    ///
    /// Algorithm (O(total couplings), plus a sort of each short row): flatten the elements
    /// once; count an upper bound of entries per row (1 diagonal + `m − 1` per element of
    /// `m` particles touching the row); fill the rows; sort and deduplicate each row in
    /// place; compact the rows into `col`.
    ///
    /// # Panics
    /// If an element names a particle `≥ n` (a topology bug upstream, not user data).
    pub fn from_elements<'a>(n: usize, elements: impl IntoIterator<Item = &'a [usize]>) -> Self {
        let mut nodes: Vec<usize> = Vec::new();
        let mut starts: Vec<usize> = vec![0];
        for e in elements {
            for &i in e {
                assert!(i < n, "element particle {i} out of range (n = {n})");
            }
            nodes.extend_from_slice(e);
            starts.push(nodes.len());
        }
        // Upper bound of entries per row.
        let mut cap = vec![1usize; n + 1];
        for w in starts.windows(2) {
            let m = w[1] - w[0];
            for &i in &nodes[w[0]..w[1]] {
                cap[i] += m - 1;
            }
        }
        // Exclusive prefix sum → bucket starts.
        let mut bucket = Vec::with_capacity(n + 1);
        let mut acc = 0usize;
        for c in &cap[..n] {
            bucket.push(acc);
            acc += c;
        }
        bucket.push(acc);
        let mut raw = vec![0usize; acc];
        let mut fill: Vec<usize> = bucket[..n].to_vec();
        for (i, f) in fill.iter_mut().enumerate() {
            raw[*f] = i;
            *f += 1;
        }
        for w in starts.windows(2) {
            let e = &nodes[w[0]..w[1]];
            for (a, &i) in e.iter().enumerate() {
                for (b, &j) in e.iter().enumerate() {
                    if a != b {
                        raw[fill[i]] = j;
                        fill[i] += 1;
                    }
                }
            }
        }
        // Sort, dedup and compact each row (rows only move left, so in place is safe).
        let mut row_ptr = Vec::with_capacity(n + 1);
        row_ptr.push(0);
        let mut len = 0usize;
        for i in 0..n {
            let (lo, hi) = (bucket[i], fill[i]);
            raw[lo..hi].sort_unstable();
            let mut prev = usize::MAX;
            for k in lo..hi {
                let j = raw[k];
                if j != prev {
                    raw[len] = j;
                    len += 1;
                    prev = j;
                }
            }
            row_ptr.push(len);
        }
        raw.truncate(len);
        raw.shrink_to_fit();
        BlockPattern {
            n,
            row_ptr,
            col: raw,
        }
    }

    /// Index of block `(i, j)` in the value array, if stored (binary search in row `i`;
    /// `None` also when `i ≥ n`).
    pub fn slot(&self, i: usize, j: usize) -> Option<usize> {
        if i >= self.n {
            return None;
        }
        let (lo, hi) = (self.row_ptr[i], self.row_ptr[i + 1]);
        self.col[lo..hi].binary_search(&j).ok().map(|k| lo + k)
    }

    /// Number of stored blocks.
    pub fn nnz(&self) -> usize {
        self.col.len()
    }

    /// The union of this pattern and `other` (same `n`), row by row a merge of sorted
    /// columns, and where each of this pattern's slots went in it (`moved[k]` is the new
    /// slot of old slot `k`). Equal to [`BlockPattern::from_elements`] of both patterns'
    /// elements together, in O(nnz).
    ///
    /// # Panics
    /// If the sizes differ.
    pub fn union(&self, other: &BlockPattern) -> (BlockPattern, Vec<usize>) {
        assert_eq!(self.n, other.n, "union of patterns of different sizes");
        let mut row_ptr = Vec::with_capacity(self.n + 1);
        let mut col = Vec::with_capacity(self.nnz() + other.nnz());
        let mut moved = Vec::with_capacity(self.nnz());
        row_ptr.push(0);
        for i in 0..self.n {
            let (mut a, b) = (self.row(i).iter().peekable(), other.row(i));
            for &j in b {
                while let Some(&&c) = a.peek().filter(|&&&c| c < j) {
                    moved.push(col.len());
                    col.push(c);
                    a.next();
                }
                if a.peek() == Some(&&j) {
                    moved.push(col.len());
                    a.next();
                }
                col.push(j);
            }
            for &c in a {
                moved.push(col.len());
                col.push(c);
            }
            row_ptr.push(col.len());
        }
        let n = self.n;
        (BlockPattern { n, row_ptr, col }, moved)
    }

    /// The block columns stored in row `i` (sorted), empty if `i ≥ n`.
    pub fn row(&self, i: usize) -> &[usize] {
        if i >= self.n {
            return &[];
        }
        &self.col[self.row_ptr[i]..self.row_ptr[i + 1]]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn pattern_has_sorted_unique_columns_diagonal_and_all_element_couplings() {
        let elements: Vec<Vec<usize>> = vec![
            vec![0, 1, 2],
            vec![2, 1, 3],
            vec![3, 4, 5, 0],
            vec![1, 1, 2], // repeated particle
            vec![],
        ];
        let n = 8; // 6 and 7 isolated
        let p = BlockPattern::from_elements(n, elements.iter().map(|e| e.as_slice()));
        let mut expected: Vec<BTreeSet<usize>> = (0..n).map(|i| BTreeSet::from([i])).collect();
        for e in &elements {
            for &i in e {
                for &j in e {
                    expected[i].insert(j);
                }
            }
        }
        assert_eq!(p.row_ptr.len(), n + 1);
        for (i, exp) in expected.iter().enumerate() {
            let row: Vec<usize> = exp.iter().copied().collect();
            assert_eq!(p.row(i), row.as_slice(), "row {i}");
            for j in 0..n {
                let s = p.slot(i, j);
                assert_eq!(s.is_some(), exp.contains(&j));
                if let Some(k) = s {
                    assert_eq!(p.col[k], j);
                    assert!(k >= p.row_ptr[i] && k < p.row_ptr[i + 1]);
                }
            }
        }
        assert_eq!(p.slot(n, 0), None);
        assert_eq!(p.nnz(), expected.iter().map(|s| s.len()).sum::<usize>());
    }

    #[test]
    fn union_is_the_pattern_of_both_element_lists_and_maps_the_old_slots() {
        let n = 40;
        // Two pseudo-random element lists (a mesh-like one and a sparse far one).
        let first: Vec<Vec<usize>> = (0..30).map(|e| vec![e, e + 1, (e * 7 + 3) % n]).collect();
        let second: Vec<Vec<usize>> = (0..9)
            .map(|e| vec![(e * 13) % n, (e * 5 + 11) % n, (e * 3 + 29) % n, 39 - e])
            .collect();
        let a = BlockPattern::from_elements(n, first.iter().map(|e| e.as_slice()));
        let b = BlockPattern::from_elements(n, second.iter().map(|e| e.as_slice()));
        let (u, moved) = a.union(&b);
        let want =
            BlockPattern::from_elements(n, first.iter().chain(&second).map(|e| e.as_slice()));
        assert_eq!(u, want);
        assert!(u.nnz() > a.nnz() && u.nnz() > b.nnz(), "both add couplings");
        assert_eq!(moved.len(), a.nnz());
        let rows = (0..n).flat_map(|i| (a.row_ptr[i]..a.row_ptr[i + 1]).map(move |_| i));
        for ((k, &m), i) in moved.iter().enumerate().zip(rows) {
            assert_eq!(Some(m), u.slot(i, a.col[k]), "slot {k} of row {i}");
        }
        // With itself: the same pattern, every slot in place.
        let (same, moved) = a.union(&a);
        assert_eq!(same, a);
        assert!(moved.iter().enumerate().all(|(k, &m)| k == m));
    }

    #[test]
    fn empty_pattern_is_valid() {
        let p = BlockPattern::from_elements(0, std::iter::empty());
        assert_eq!(p.row_ptr, vec![0]);
        assert_eq!(p.nnz(), 0);
    }
}
