//! The passes of the modified PCG ([`super`]) with a triangular preconditioner (symmetric
//! block Gauss–Seidel, block IC(0) or the complete factor; [`precond`](crate::linalg::precond)),
//! deflated or not: each element-wise pass over fixed chunks is followed by the factor's
//! two sweeps.
use super::Filter;
use crate::linalg::block3::{sum_in_order, CHUNK};
use crate::linalg::deflation::Deflation;
use crate::linalg::precond::TriangularFactor;
use crate::{parallel, Mat3, Vec3};

/// Vectors and factors the triangular passes read and write.
pub(super) struct Triangular<'a> {
    /// The factored preconditioner `P`.
    pub factor: &'a TriangularFactor,
    /// The coarse space (inactive when the solve is not deflated).
    pub deflation: &'a mut Deflation,
    /// Whether the solve is deflated.
    pub deflate: bool,
    /// `D_i⁻¹ = A_ii⁻¹`, the norm of the stopping rule.
    pub inv_diag: &'a [Mat3],
    /// The filter of §5.3.
    pub f: Filter<'a>,
}

impl Triangular<'_> {
    /// Start-up (lines 3-6): `r = f(b − Az)` (`q` holds `Az` where `has_z`), the coarse start
    /// when deflated, the sweeps `s = P⁻¹ r`, then `c = f(s)` with the reductions. Returns
    /// `(δ₀, δ, m)`: `δ₀ = f(b)ᵀD⁻¹f(b)`, `δ = rᵀc` and the stopping rule's `m = rᵀ f(D⁻¹ r)`.
    #[allow(clippy::too_many_arguments)]
    pub fn start(
        &mut self,
        b: &[Vec3],
        q: &[Vec3],
        has_z: bool,
        dv: &mut [Vec3],
        r: &mut [Vec3],
        s: &mut [Vec3],
        c: &mut [Vec3],
        partials3: &mut Vec<(f64, f64, f64)>,
    ) -> (f64, f64, f64) {
        let (f, inv_diag) = (self.f, self.inv_diag);
        parallel::fill(r, CHUNK, |i| {
            f.apply(i, if has_z { b[i] - q[i] } else { b[i] })
        });
        if self.deflate {
            self.deflation.begin(r, dv, |i| f.matrix(i));
        }
        self.factor.apply(r, s, |_, x| x);
        if self.deflate {
            self.deflation.correct(s, r, |i| f.matrix(i));
        }
        parallel::chunks(
            (&mut c[..], &s[..], &r[..]),
            CHUNK,
            partials3,
            |k, (cc, sc, rc)| {
                let (mut d0, mut d, mut m) = (0.0, 0.0, 0.0);
                for (t, ((ci, si), ri)) in cc.iter_mut().zip(sc).zip(rc).enumerate() {
                    let i = k * CHUNK + t;
                    let fb = f.apply(i, b[i]);
                    d0 += fb.dot(&(inv_diag[i] * fb));
                    *ci = f.apply(i, *si);
                    d += ri.dot(ci);
                    m += ri.dot(&f.apply(i, inv_diag[i] * ri));
                }
                (d0, d, m)
            },
        );
        partials3
            .iter()
            .fold((0.0, 0.0, 0.0), |(s0, s1, s2), &(p0, p1, p2)| {
                (s0 + p0, s1 + p1, s2 + p2)
            })
    }

    /// Update (lines 10-14): `Δv += αc`, `r −= αq` (`q ← P_D q` fused in where
    /// `project_q`) with the stopping rule's `m = rᵀ f(D⁻¹ r)`, then the sweeps `s = P⁻¹r`
    /// and, when deflated, `s ← P_Dᵀ s`. Returns `(δ, m)` with `δ = rᵀs`.
    #[allow(clippy::too_many_arguments)]
    pub fn update(
        &mut self,
        alpha: f64,
        project_q: bool,
        dv: &mut [Vec3],
        r: &mut [Vec3],
        s: &mut [Vec3],
        c: &[Vec3],
        q: &[Vec3],
        partials: &mut Vec<f64>,
    ) -> (f64, f64) {
        let (f, inv_diag) = (self.f, self.inv_diag);
        let coarse = &*self.deflation;
        let parts = (&mut dv[..], &mut r[..], c, q);
        parallel::chunks(parts, CHUNK, partials, |k, (dvc, rc, cc, qc)| {
            let mut m = 0.0;
            let it = dvc.iter_mut().zip(rc.iter_mut()).zip(cc).zip(qc);
            for (t, (((dvi, ri), ci), qi)) in it.enumerate() {
                let i = k * CHUNK + t;
                *dvi += alpha * ci;
                *ri -= alpha
                    * if project_q {
                        qi - coarse.az_row(i)
                    } else {
                        *qi
                    };
                m += ri.dot(&f.apply(i, inv_diag[i] * *ri));
            }
            m
        });
        let measure = sum_in_order(partials);
        let d = self.factor.apply(r, s, |i, x| f.apply(i, x));
        let delta = if self.deflate {
            // s ← P_Dᵀ s, fused into the update of c.
            d - self.deflation.correction_coefficients(s, r)
        } else {
            d
        };
        (delta, measure)
    }
}
