//! Sparsity pattern of a square block matrix, kept apart from its values and built once
//! per topology (in the manner of nalgebra-sparse's `SparsityPattern`).

/// Rows × block columns, sorted, diagonal always present.
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
    pub fn from_elements<'a>(n: usize, elements: impl IntoIterator<Item = &'a [usize]>) -> Self {
        let _ = (n, elements.into_iter());
        todo!()
    }

    /// Index of block `(i, j)` in the value array, if stored.
    pub fn slot(&self, i: usize, j: usize) -> Option<usize> {
        let _ = (i, j);
        todo!()
    }

    /// Number of stored blocks.
    pub fn nnz(&self) -> usize {
        self.col.len()
    }
}
