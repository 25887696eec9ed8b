//! Products of stored 3x3 blocks with double-precision vectors on the AVX units, for the
//! loops that stream the most blocks: the IC(0) sweeps (single-precision factor copies)
//! and the system matrix's product in the CG.
//!
//! A block is stored column-major (nalgebra), so `m x = c₀ x₀ + c₁ x₁ + c₂ x₂` with `c_k`
//! its columns: three column loads (a 4-lane register, the fourth lane unused), three
//! broadcasts of `x_k`, three products and two sums, where the compiled scalar code
//! converts and multiplies the nine entries one by one. The sums are taken in the same
//! order as nalgebra's (`(c₀ x₀ + c₁ x₁) + c₂ x₂`, then the row's running sum), with
//! separate products and sums (no fused multiply–add): the results are bit-identical to
//! the scalar code, which stays the path on processors without AVX2 (checked once per
//! process) and off x86-64. `linalg::tests::kernels` compares both bit for bit.
//!
//! On the crumpled 10,000-particle sheet a CG iteration's product and IC(0) sweep pair
//! runs about a quarter faster this way (`linalg::tests::perf::precond_report` measures it).
use crate::{Mat3, Vec3};

/// A 3x3 block in single precision (the sweeps' copies of the IC(0) factor).
pub type Mat3f = nalgebra::Matrix3<f32>;

/// Set by the tests that compare the two forms: every kernel then takes the scalar one.
/// (Both give the same bits, so other tests running meanwhile are not affected.)
#[cfg(test)]
pub(crate) static SCALAR_ONLY: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Whether the AVX kernels run (x86-64 with AVX2, detected once per process).
#[inline]
pub fn avx() -> bool {
    #[cfg(test)]
    if SCALAR_ONLY.load(std::sync::atomic::Ordering::Relaxed) {
        return false;
    }
    #[cfg(target_arch = "x86_64")]
    {
        static AVX: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *AVX.get_or_init(|| std::arch::is_x86_feature_detected!("avx2"))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// A row's running sum `acc ∓ m x` over stored blocks `m`: the scalar form ([`Scalar`]) or
/// the AVX form ([`Avx`]), with the same bits.
pub trait Lanes<B> {
    /// The running sum.
    type Acc: Copy;
    /// `v` as a running sum.
    ///
    /// # Safety
    /// Only under [`avx`] for [`Avx`] (none for [`Scalar`]).
    unsafe fn load(v: &Vec3) -> Self::Acc;
    /// `acc − m x`.
    ///
    /// # Safety
    /// As [`Lanes::load`].
    unsafe fn sub(acc: Self::Acc, m: &B, x: &Vec3) -> Self::Acc;
    /// `acc + m x`.
    ///
    /// # Safety
    /// As [`Lanes::load`].
    unsafe fn add(acc: Self::Acc, m: &B, x: &Vec3) -> Self::Acc;
    /// `m x` as a running sum.
    ///
    /// # Safety
    /// As [`Lanes::load`].
    unsafe fn times(m: &B, x: &Vec3) -> Self::Acc;
    /// The running sum as a vector.
    ///
    /// # Safety
    /// As [`Lanes::load`].
    unsafe fn store(acc: Self::Acc) -> Vec3;
}

/// The scalar form of [`Lanes`] (nalgebra's products).
pub struct Scalar;

/// A stored block applied to a double-precision vector.
pub trait Block {
    /// `m x` in double precision.
    fn times(&self, x: &Vec3) -> Vec3;
}

impl Block for Mat3 {
    #[inline]
    fn times(&self, x: &Vec3) -> Vec3 {
        self * x
    }
}

impl Block for Mat3f {
    #[inline]
    fn times(&self, x: &Vec3) -> Vec3 {
        self.cast::<f64>() * x
    }
}

impl<B: Block> Lanes<B> for Scalar {
    type Acc = Vec3;
    #[inline(always)]
    unsafe fn load(v: &Vec3) -> Vec3 {
        *v
    }
    #[inline(always)]
    unsafe fn sub(acc: Vec3, m: &B, x: &Vec3) -> Vec3 {
        acc - m.times(x)
    }
    #[inline(always)]
    unsafe fn add(acc: Vec3, m: &B, x: &Vec3) -> Vec3 {
        acc + m.times(x)
    }
    #[inline(always)]
    unsafe fn times(m: &B, x: &Vec3) -> Vec3 {
        m.times(x)
    }
    #[inline(always)]
    unsafe fn store(acc: Vec3) -> Vec3 {
        acc
    }
}

/// The AVX form of [`Lanes`]: only inside functions compiled with
/// `#[target_feature(enable = "avx2")]`, called under [`avx`].
pub struct Avx;

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{Avx, Lanes, Mat3f};
    use crate::{Mat3, Vec3};
    use std::arch::x86_64::*;

    /// `c₀ x₀ + c₁ x₁ + c₂ x₂` from three column registers.
    #[inline(always)]
    unsafe fn combine(c: [__m256d; 3], x: &Vec3) -> __m256d {
        let p0 = _mm256_mul_pd(c[0], _mm256_set1_pd(x.x));
        let p1 = _mm256_mul_pd(c[1], _mm256_set1_pd(x.y));
        let p2 = _mm256_mul_pd(c[2], _mm256_set1_pd(x.z));
        _mm256_add_pd(_mm256_add_pd(p0, p1), p2)
    }

    /// The columns of a double-precision block. Lane 3 of the first two is the next
    /// column's first entry, unused; the last column is loaded from entry 5 and rotated,
    /// so that no byte past the block is read.
    #[inline(always)]
    unsafe fn columns_f64(m: &Mat3) -> [__m256d; 3] {
        let p = m.as_ptr();
        [
            _mm256_loadu_pd(p),
            _mm256_loadu_pd(p.add(3)),
            _mm256_permute4x64_pd::<0b00_11_10_01>(_mm256_loadu_pd(p.add(5))),
        ]
    }

    /// The columns of a single-precision block, widened (exactly) to double precision
    /// (loaded as in [`columns_f64`]).
    #[inline(always)]
    unsafe fn columns_f32(m: &Mat3f) -> [__m256d; 3] {
        let p = m.as_ptr();
        let last = _mm_loadu_ps(p.add(5));
        [
            _mm256_cvtps_pd(_mm_loadu_ps(p)),
            _mm256_cvtps_pd(_mm_loadu_ps(p.add(3))),
            _mm256_cvtps_pd(_mm_shuffle_ps::<0b00_11_10_01>(last, last)),
        ]
    }

    macro_rules! avx_lanes {
        ($block:ty, $columns:ident) => {
            impl Lanes<$block> for Avx {
                type Acc = __m256d;
                #[inline(always)]
                unsafe fn load(v: &Vec3) -> __m256d {
                    _mm256_set_pd(0.0, v.z, v.y, v.x)
                }
                #[inline(always)]
                unsafe fn sub(acc: __m256d, m: &$block, x: &Vec3) -> __m256d {
                    _mm256_sub_pd(acc, combine($columns(m), x))
                }
                #[inline(always)]
                unsafe fn add(acc: __m256d, m: &$block, x: &Vec3) -> __m256d {
                    _mm256_add_pd(acc, combine($columns(m), x))
                }
                #[inline(always)]
                unsafe fn times(m: &$block, x: &Vec3) -> __m256d {
                    combine($columns(m), x)
                }
                #[inline(always)]
                unsafe fn store(acc: __m256d) -> Vec3 {
                    let mut out = [0.0; 4];
                    _mm256_storeu_pd(out.as_mut_ptr(), acc);
                    Vec3::new(out[0], out[1], out[2])
                }
            }
        };
    }
    avx_lanes!(Mat3, columns_f64);
    avx_lanes!(Mat3f, columns_f32);
}

#[cfg(not(target_arch = "x86_64"))]
impl<B: Block> Lanes<B> for Avx {
    type Acc = Vec3;
    unsafe fn load(v: &Vec3) -> Vec3 {
        Scalar::load(v)
    }
    unsafe fn sub(acc: Vec3, m: &B, x: &Vec3) -> Vec3 {
        <Scalar as Lanes<B>>::sub(acc, m, x)
    }
    unsafe fn add(acc: Vec3, m: &B, x: &Vec3) -> Vec3 {
        acc + m.times(x)
    }
    unsafe fn times(m: &B, x: &Vec3) -> Vec3 {
        m.times(x)
    }
    unsafe fn store(acc: Vec3) -> Vec3 {
        acc
    }
}
