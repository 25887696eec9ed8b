//! Helpers on 3-vectors and 3x3 blocks: deterministic parallel dot products and axpys over
//! slices of [`Vec3`](crate::Vec3).
use crate::Vec3;

/// Chunk length (in particles) of every parallel reduction; fixed so that sums do not
/// depend on the thread count.
pub const CHUNK: usize = 1024;

/// `Σ a_i · b_i`, summed per fixed chunk in parallel, chunks combined in order.
pub fn dot(a: &[Vec3], b: &[Vec3]) -> f64 {
    let _ = (a, b);
    todo!()
}
