//! The fused block-Jacobi passes of the modified PCG ([`super`]): with `P = diag(A_ii)` the
//! start-up and the update each run as one pass over fixed chunks.
use super::Filter;
use crate::linalg::block3::{sum_in_order, CHUNK};
use crate::{Mat3, Vec3};
use rayon::prelude::*;

/// Block-Jacobi start-up pass (lines 3-6): `δ₀ = f(b)ᵀP⁻¹f(b)`, `r = f(b − Az)`,
/// `c = f(P⁻¹r)`, `δ = rᵀc`, fused over fixed chunks. Returns `(δ₀, δ)`.
#[allow(clippy::too_many_arguments)]
pub(super) fn jacobi_start(
    b: &[Vec3],
    q: &[Vec3],
    inv_diag: &[Mat3],
    f: Filter,
    has_z: bool,
    r: &mut [Vec3],
    c: &mut [Vec3],
    partials2: &mut Vec<(f64, f64)>,
) -> (f64, f64) {
    r.par_chunks_mut(CHUNK)
        .zip(c.par_chunks_mut(CHUNK))
        .enumerate()
        .map(|(k, (rc, cc))| {
            let (mut d0, mut d) = (0.0, 0.0);
            for (t, (ri, ci)) in rc.iter_mut().zip(cc.iter_mut()).enumerate() {
                let i = k * CHUNK + t;
                let fb = f.apply(i, b[i]);
                d0 += fb.dot(&(inv_diag[i] * fb));
                *ri = if has_z { f.apply(i, b[i] - q[i]) } else { fb };
                *ci = f.apply(i, inv_diag[i] * *ri);
                d += ri.dot(ci);
            }
            (d0, d)
        })
        .collect_into_vec(partials2);
    partials2
        .iter()
        .fold((0.0, 0.0), |(s0, s1), &(p0, p1)| (s0 + p0, s1 + p1))
}

/// Block-Jacobi update pass (lines 10-14): `Δv += αc`, `r −= αq`, `s = P⁻¹r`; returns
/// `δ = rᵀs`, fused over fixed chunks.
#[allow(clippy::too_many_arguments)]
pub(super) fn jacobi_update(
    alpha: f64,
    dv: &mut [Vec3],
    r: &mut [Vec3],
    s: &mut [Vec3],
    c: &[Vec3],
    q: &[Vec3],
    inv_diag: &[Mat3],
    partials: &mut Vec<f64>,
) -> f64 {
    dv.par_chunks_mut(CHUNK)
        .zip(r.par_chunks_mut(CHUNK))
        .zip(s.par_chunks_mut(CHUNK))
        .zip(c.par_chunks(CHUNK))
        .zip(q.par_chunks(CHUNK))
        .zip(inv_diag.par_chunks(CHUNK))
        .map(|(((((dvc, rc), sc), cc), qc), pc)| {
            let mut acc = 0.0;
            for (((((dvi, ri), si), ci), qi), pi) in dvc
                .iter_mut()
                .zip(rc.iter_mut())
                .zip(sc.iter_mut())
                .zip(cc)
                .zip(qc)
                .zip(pc)
            {
                *dvi += alpha * ci;
                *ri -= alpha * qi;
                *si = pi * *ri;
                acc += ri.dot(si);
            }
            acc
        })
        .collect_into_vec(partials);
    sum_in_order(partials)
}
