//! 3x3 block compressed sparse rows (Stuyck §5.5), values over a shared [`BlockPattern`].
use super::BlockPattern;
use crate::{Mat3, Vec3};
use std::sync::Arc;

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
        let _ = pattern;
        todo!()
    }

    /// `y = A x` (parallel over rows; each row summed in column order).
    pub fn mul_vec(&self, x: &[Vec3], y: &mut [Vec3]) {
        let _ = (x, y);
        todo!()
    }

    /// The diagonal block of row `i`.
    pub fn diagonal(&self, i: usize) -> Mat3 {
        let _ = i;
        todo!()
    }
}
