//! Helpers on 3-vectors and 3x3 blocks: deterministic parallel dot products and axpys over
//! slices of [`Vec3`].
//!
//! Determinism rule of the whole [`linalg`](super) module: a reduction over particles is cut
//! into fixed chunks of [`CHUNK`] particles (chunk `k` covers `k·CHUNK .. (k+1)·CHUNK`),
//! each chunk is summed sequentially in index order on whichever thread runs it, the
//! partial sums are collected *by chunk index* and then added sequentially:
//!
//! ```text
//! Σᵢ aᵢ·bᵢ = ( … ((p₀ + p₁) + p₂) … ) + p_{K−1},   p_k = Σ_{i ∈ chunk k} aᵢ·bᵢ (in order)
//! ```
//! The rounding therefore depends only on `CHUNK` and the data, never on the number of
//! rayon threads or on work stealing (rayon's own `sum()` would not guarantee this).
use crate::{Mat3, Vec3};
use rayon::prelude::*;

/// Chunk length (in particles) of every parallel reduction; fixed so that sums do not
/// depend on the thread count. Small enough that a 2,600-particle system still splits
/// into 11 tasks (1,024 gave 3, and one of two threads idled a third of each pass).
pub const CHUNK: usize = 256;

/// `Σ a_i · b_i`, summed per fixed chunk in parallel, chunks combined in order.
///
/// Allocates one `f64` per chunk; hot loops use [`dot_with`] with a reused buffer.
///
/// # Panics
/// If `a.len() != b.len()`.
pub fn dot(a: &[Vec3], b: &[Vec3]) -> f64 {
    let mut partials = Vec::new();
    dot_with(a, b, &mut partials)
}

/// [`dot`] with a caller-owned buffer for the per-chunk partial sums (no allocation once
/// `partials` has grown to the chunk count).
///
/// # Panics
/// If `a.len() != b.len()`.
pub fn dot_with(a: &[Vec3], b: &[Vec3], partials: &mut Vec<f64>) -> f64 {
    assert_eq!(a.len(), b.len(), "dot: length mismatch");
    a.par_chunks(CHUNK)
        .zip(b.par_chunks(CHUNK))
        .map(|(ca, cb)| ca.iter().zip(cb).map(|(x, y)| x.dot(y)).sum::<f64>())
        .collect_into_vec(partials);
    sum_in_order(partials)
}

/// Sequential left-to-right sum of per-chunk partial results (the last stage of every
/// deterministic reduction).
pub fn sum_in_order(partials: &[f64]) -> f64 {
    partials.iter().fold(0.0, |acc, p| acc + p)
}

/// `y ← y + α x`, in parallel over chunks (element-wise, hence deterministic).
///
/// # Panics
/// If `x.len() != y.len()`.
pub fn axpy(alpha: f64, x: &[Vec3], y: &mut [Vec3]) {
    assert_eq!(x.len(), y.len(), "axpy: length mismatch");
    y.par_chunks_mut(CHUNK)
        .zip(x.par_chunks(CHUNK))
        .for_each(|(cy, cx)| {
            for (yi, xi) in cy.iter_mut().zip(cx) {
                *yi += alpha * xi;
            }
        });
}

/// `y ← x + β y` (the search-direction update of conjugate gradients), in parallel over
/// chunks.
///
/// # Panics
/// If `x.len() != y.len()`.
pub fn xpby(x: &[Vec3], beta: f64, y: &mut [Vec3]) {
    assert_eq!(x.len(), y.len(), "xpby: length mismatch");
    y.par_chunks_mut(CHUNK)
        .zip(x.par_chunks(CHUNK))
        .for_each(|(cy, cx)| {
            for (yi, xi) in cy.iter_mut().zip(cx) {
                *yi = xi + beta * *yi;
            }
        });
}

/// Inverse of a 3x3 block meant to be symmetric positive definite (a diagonal block of the
/// system matrix, used by the block-Jacobi preconditioner).
///
/// ```text
/// B = (A + Aᵀ)/2;  B = L Lᵀ (Cholesky)  ⇒  A⁻¹ ≈ B⁻¹ = L⁻ᵀ L⁻¹
/// otherwise        diag(1/A₀₀, 1/A₁₁, 1/A₂₂), any entry that is not positive and finite → 1
/// ```
/// The result is always symmetric positive definite and finite, so a preconditioner built
/// from it keeps `rᵀ P⁻¹ r ≥ 0` even when the system matrix is not positive definite
/// (never panics, never returns NaN).
pub fn spd_inverse_or_diagonal(a: &Mat3) -> Mat3 {
    let sym = (a + a.transpose()) * 0.5;
    if let Some(inv) = cholesky_inverse(&sym).filter(|m| m.iter().all(|x| x.is_finite())) {
        return inv;
    }
    Mat3::from_fn(|r, c| {
        let d = a[(r, r)];
        match (r == c, d > 0.0 && d.is_finite() && (1.0 / d).is_finite()) {
            (false, _) => 0.0,
            (true, true) => 1.0 / d,
            (true, false) => 1.0,
        }
    })
}

/// `M⁻¹` of a symmetric 3x3 block through its Cholesky factor `M = G Gᵀ` (lower triangle
/// of `M` read), or `None` if a pivot of the factorisation is not positive (or NaN):
///
/// ```text
/// g_jj = sqrt(m_jj − Σ_{k<j} g_jk²),   g_ij = (m_ij − Σ_{k<j} g_ik g_jk) / g_jj   (i > j)
/// M⁻¹ = Hᵀ H,   H = G⁻¹ (lower triangular)
/// ```
/// Written out rather than nalgebra's generic `cholesky().inverse()` so that the IC(0) row
/// loop inlines it (it is a fifth of the factorisation's time); the block-Jacobi inverse
/// ([`spd_inverse_or_diagonal`]) uses it too.
#[inline]
pub(crate) fn cholesky_inverse(m: &Mat3) -> Option<Mat3> {
    let positive = |x: f64| (x > 0.0).then(|| x.sqrt());
    let g00 = positive(m[(0, 0)])?;
    let (g10, g20) = (m[(1, 0)] / g00, m[(2, 0)] / g00);
    let g11 = positive(m[(1, 1)] - g10 * g10)?;
    let g21 = (m[(2, 1)] - g20 * g10) / g11;
    let g22 = positive(m[(2, 2)] - g20 * g20 - g21 * g21)?;
    let (h00, h11, h22) = (1.0 / g00, 1.0 / g11, 1.0 / g22);
    let h10 = -g10 * h00 * h11;
    let h21 = -g21 * h11 * h22;
    let h20 = -(g20 * h00 + g21 * h10) * h22;
    let h = Mat3::new(h00, 0.0, 0.0, h10, h11, 0.0, h20, h21, h22);
    Some(h.transpose() * h)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ramp(n: usize, phase: f64) -> Vec<Vec3> {
        (0..n)
            .map(|i| {
                let t = i as f64 * 0.37 + phase;
                Vec3::new(t.sin(), (1.3 * t).cos(), (0.7 * t).sin() * 1e3)
            })
            .collect()
    }

    #[test]
    fn dot_matches_serial_chunked_sum_and_is_close_to_naive() {
        let n = 3 * CHUNK + 17;
        let (a, b) = (ramp(n, 0.0), ramp(n, 1.0));
        let expected = a
            .chunks(CHUNK)
            .zip(b.chunks(CHUNK))
            .map(|(x, y)| x.iter().zip(y).map(|(p, q)| p.dot(q)).sum::<f64>())
            .fold(0.0, |s, p| s + p);
        let got = dot(&a, &b);
        assert_eq!(got.to_bits(), expected.to_bits());
        let naive: f64 = a.iter().zip(&b).map(|(p, q)| p.dot(q)).sum();
        assert!((got - naive).abs() <= 1e-12 * naive.abs().max(1.0));
        assert_eq!(dot(&[], &[]), 0.0);
    }

    #[test]
    fn axpy_and_xpby_are_elementwise() {
        let n = 2 * CHUNK + 5;
        let x = ramp(n, 0.3);
        let mut y = ramp(n, 2.0);
        let y0 = y.clone();
        axpy(0.25, &x, &mut y);
        for i in 0..n {
            assert_eq!(y[i], y0[i] + 0.25 * x[i]);
        }
        let y1 = y.clone();
        xpby(&x, -1.5, &mut y);
        for i in 0..n {
            assert_eq!(y[i], x[i] + -1.5 * y1[i]);
        }
    }

    #[test]
    fn block_inverse_is_exact_for_spd_and_falls_back_otherwise() {
        let a = Mat3::new(4.0, 1.0, 0.5, 1.0, 3.0, 0.2, 0.5, 0.2, 2.0);
        let err = (spd_inverse_or_diagonal(&a) * a - Mat3::identity())
            .abs()
            .max();
        assert!(err < 1e-14, "err {err}");
        // Singular (rank 1): falls back to the inverse diagonal.
        let v = Vec3::new(1.0, 2.0, 0.0);
        let s = v * v.transpose();
        assert_eq!(
            spd_inverse_or_diagonal(&s),
            Mat3::from_diagonal(&Vec3::new(1.0, 0.25, 1.0))
        );
        // Indefinite and NaN blocks: finite, positive diagonal.
        let ind = Mat3::from_diagonal(&Vec3::new(-1.0, 2.0, f64::NAN));
        assert_eq!(
            spd_inverse_or_diagonal(&ind),
            Mat3::from_diagonal(&Vec3::new(1.0, 0.5, 1.0))
        );
        assert_eq!(spd_inverse_or_diagonal(&Mat3::zeros()), Mat3::identity());
    }

    #[test]
    fn cholesky_inverse_matches_nalgebra_and_rejects_indefinite_blocks() {
        let g = Mat3::new(2.0, 0.0, 0.0, -0.7, 1.3, 0.0, 0.4, 0.9, 0.6);
        let m = g * g.transpose();
        let reference = m.cholesky().expect("SPD").inverse();
        let err = (cholesky_inverse(&m).expect("SPD") - reference).amax() / reference.amax();
        assert!(err < 1e-14, "{err}");
        for bad in [
            Mat3::from_diagonal(&crate::Vec3::new(1.0, -1.0, 1.0)),
            Mat3::new(1.0, 2.0, 0.0, 2.0, 1.0, 0.0, 0.0, 0.0, 1.0),
            Mat3::from_diagonal(&crate::Vec3::new(1.0, 1.0, 0.0)),
            Mat3::from_diagonal(&crate::Vec3::new(1.0, f64::NAN, 1.0)),
        ] {
            assert_eq!(cholesky_inverse(&bad), None, "{bad}");
        }
    }
}
