//! Block CSR product and assembly gathers against dense references (proptest).
use super::{dense, flat, Rng};
use crate::linalg::assembly::ElementSet;
use crate::linalg::{AssemblyPlan, BlockCsr, BlockPattern};
use crate::{Mat3, Vec3};
use nalgebra::DMatrix;
use proptest::prelude::*;
use std::sync::Arc;

/// `(n, elements of 1..=4 particles, seed for the values)`.
fn pattern_case() -> impl Strategy<Value = (usize, Vec<Vec<usize>>, u64)> {
    (1usize..40).prop_flat_map(|n| {
        (
            Just(n),
            prop::collection::vec(prop::collection::vec(0..n, 1..=4), 0..30),
            any::<u64>(),
        )
    })
}

/// `(n, triangle nodes, hinge nodes, with mass diagonal, seed)`.
fn assembly_case() -> impl Strategy<Value = (usize, Vec<usize>, Vec<usize>, bool, u64)> {
    (1usize..30).prop_flat_map(|n| {
        (
            Just(n),
            prop::collection::vec(0..n, 0..10).prop_map(|v| v.repeat(3)),
            prop::collection::vec(0..n, 0..32).prop_map(|mut v| {
                v.truncate(v.len() / 4 * 4);
                v
            }),
            any::<bool>(),
            any::<u64>(),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// `y = A x` of the block CSR equals the dense product on random patterns and values.
    #[test]
    fn block_csr_product_matches_dense_product((n, elements, seed) in pattern_case()) {
        let mut rng = Rng::new(seed);
        let pattern = Arc::new(BlockPattern::from_elements(n, elements.iter().map(|e| e.as_slice())));
        let mut a = BlockCsr::zeros(pattern.clone());
        prop_assert!(a.values.iter().all(|m| *m == Mat3::zeros()));
        for m in &mut a.values {
            *m = rng.mat3() * 10f64.powi(rng.below(5) as i32 - 2);
        }
        let x: Vec<Vec3> = (0..n).map(|_| rng.vec3()).collect();
        let mut y = vec![Vec3::repeat(f64::NAN); n];
        a.mul_vec(&x, &mut y);
        let d = dense(&a);
        let expected = &d * flat(&x);
        let scale = d.abs() * flat(&x).abs();
        for r in 0..3 * n {
            let err = (flat(&y)[r] - expected[r]).abs();
            prop_assert!(err <= 1e-14 * scale[r].max(1e-300), "row {} err {}", r, err);
        }
        for i in 0..n {
            prop_assert_eq!(a.diagonal(i), d.fixed_view::<3, 3>(3 * i, 3 * i).into_owned());
        }
    }

    /// The gathers equal a naive serial scatter (mass first, then sets, elements, (a, b) in
    /// order) into a dense matrix, bit for bit, and overwrite what `out` held.
    #[test]
    fn gathers_match_naive_serial_scatter((n, tri, hinge, with_mass, seed) in assembly_case()) {
        let mut rng = Rng::new(seed);
        let sets = [
            ElementSet { arity: 3, nodes: tri },
            ElementSet { arity: 4, nodes: hinge },
            ElementSet { arity: 2, nodes: vec![] },
        ];
        let plan = AssemblyPlan::new(n, &sets);
        let blocks: Vec<Vec<Mat3>> = sets
            .iter()
            .map(|s| (0..s.count() * s.arity * s.arity).map(|_| rng.mat3()).collect())
            .collect();
        let vectors: Vec<Vec<Vec3>> = sets
            .iter()
            .map(|s| (0..s.nodes.len()).map(|_| rng.vec3()).collect())
            .collect();
        let mass: Vec<Mat3> = (0..n).map(|_| rng.mat3()).collect();

        let mut naive = DMatrix::<f64>::zeros(3 * n, 3 * n);
        let mut naive_v = vec![Vec3::zeros(); n];
        if with_mass {
            for (i, m) in mass.iter().enumerate() {
                let mut view = naive.fixed_view_mut::<3, 3>(3 * i, 3 * i);
                view += m;
            }
        }
        for (s, set) in sets.iter().enumerate() {
            let nn = set.arity;
            for (e, el) in set.elements().enumerate() {
                for a in 0..nn {
                    naive_v[el[a]] += vectors[s][e * nn + a];
                    for b in 0..nn {
                        let mut view = naive.fixed_view_mut::<3, 3>(3 * el[a], 3 * el[b]);
                        view += blocks[s][e * nn * nn + a * nn + b];
                    }
                }
            }
        }

        let mut out = BlockCsr::zeros(plan.pattern.clone());
        out.values.iter_mut().for_each(|m| *m = Mat3::repeat(7.0));
        let refs: Vec<&[Mat3]> = blocks.iter().map(|b| b.as_slice()).collect();
        plan.gather_matrix(&refs, with_mass.then_some(mass.as_slice()), &mut out);
        prop_assert_eq!(&dense(&out), &naive);

        let mut out_v = vec![Vec3::repeat(7.0); n];
        let vrefs: Vec<&[Vec3]> = vectors.iter().map(|v| v.as_slice()).collect();
        plan.gather_vector(&vrefs, &mut out_v);
        prop_assert_eq!(&out_v, &naive_v);

        // The scatter sums in colour order instead of element order: equal to rounding.
        let mut sc = BlockCsr::zeros(plan.pattern.clone());
        sc.values.iter_mut().for_each(|m| *m = Mat3::repeat(7.0));
        let mut sc_v = vec![Vec3::repeat(7.0); n];
        plan.scatter_begin(with_mass.then_some(mass.as_slice()), &mut sc, &mut sc_v);
        for (s, set) in sets.iter().enumerate() {
            let k = set.arity;
            plan.scatter(s, Some(&mut sc), &mut sc_v, |e, b, v| {
                b.copy_from_slice(&blocks[s][e * k * k..][..k * k]);
                v.copy_from_slice(&vectors[s][e * k..][..k]);
            });
        }
        let err = (dense(&sc) - &naive).amax();
        prop_assert!(err <= 1e-12 * (1.0 + naive.amax()), "matrix error {}", err);
        let err_v = sc_v.iter().zip(&naive_v).map(|(a, b)| (a - b).amax()).fold(0.0, f64::max);
        prop_assert!(err_v <= 1e-12 * (1.0 + out_v.iter().map(|v| v.amax()).fold(0.0, f64::max)));
        // Triangles and hinges in one pass over the particle ranges, then the third set,
        // into buffers that held garbage.
        let mut two = BlockCsr::zeros(plan.pattern.clone());
        two.values.iter_mut().for_each(|m| *m = Mat3::repeat(7.0));
        let mut two_v = vec![Vec3::repeat(7.0); n];
        let element = |s: usize| {
            let (blocks, vectors, k) = (&blocks[s], &vectors[s], sets[s].arity);
            move |e: usize, b: &mut [Mat3], v: &mut [Vec3]| {
                b.copy_from_slice(&blocks[e * k * k..][..k * k]);
                v.copy_from_slice(&vectors[e * k..][..k]);
            }
        };
        let diagonal = with_mass.then_some(mass.as_slice());
        plan.scatter_two(diagonal, &mut two, &mut two_v, (0, element(0)), (1, element(1)));
        plan.scatter(2, Some(&mut two), &mut two_v, element(2));
        // The same sums as the separate calls, bit for bit (signed zeros included).
        let bits = |m: &[Mat3]| -> Vec<u64> {
            m.iter().flat_map(|b| b.iter().map(|c| c.to_bits())).collect()
        };
        let vector_bits = |v: &[Vec3]| -> Vec<u64> {
            v.iter().flat_map(|b| b.iter().map(|c| c.to_bits())).collect()
        };
        prop_assert!(bits(&two.values) == bits(&sc.values), "scatter_two differs from scatter");
        prop_assert!(vector_bits(&two_v) == vector_bits(&sc_v), "scatter_two's vectors differ");
        // Vectors only: the matrix is not needed.
        let mut only_v = vec![Vec3::zeros(); n];
        plan.scatter_begin(None, &mut sc, &mut only_v);
        for (s, set) in sets.iter().enumerate() {
            let k = set.arity;
            plan.scatter(s, None, &mut only_v, |e, b, v| {
                assert!(b.is_empty(), "blocks asked for without a matrix");
                v.copy_from_slice(&vectors[s][e * k..][..k]);
            });
        }
        prop_assert_eq!(only_v, sc_v);
    }
}

/// A plan over no elements is the diagonal: the mass matrix alone.
#[test]
fn plan_without_elements_gathers_the_diagonal() {
    let plan = AssemblyPlan::new(3, &[]);
    assert_eq!(plan.pattern.col, vec![0, 1, 2]);
    let mass = [
        Mat3::identity(),
        Mat3::identity() * 2.0,
        Mat3::identity() * 3.0,
    ];
    let mut a = BlockCsr::zeros(plan.pattern.clone());
    plan.gather_matrix(&[], Some(&mass), &mut a);
    assert_eq!(a.values, mass.to_vec());
    let mut v = vec![Vec3::repeat(1.0); 3];
    plan.gather_vector(&[], &mut v);
    assert_eq!(v, vec![Vec3::zeros(); 3]);
}

#[test]
fn a_buffer_past_its_capacity_is_replaced_and_one_within_it_resized() {
    use crate::linalg::resize_discarding;
    let mut v: Vec<f64> = Vec::with_capacity(10);
    v.extend([1.0; 10]);
    // Within the capacity: `Vec::resize` exactly (the prefix kept).
    resize_discarding(&mut v, 5, 0.0);
    assert_eq!(v, [1.0; 5]);
    resize_discarding(&mut v, 8, 2.0);
    assert_eq!(v, [1.0, 1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0]);
    assert_eq!(v.capacity(), 10);
    // Past it: a fresh buffer of `value` only, with a thirty-second to spare.
    resize_discarding(&mut v, 64, 3.0);
    assert_eq!(v, [3.0; 64]);
    assert!(v.capacity() >= 66, "capacity {}", v.capacity());
    // The spare room then takes a slightly longer length in place.
    let at = v.as_ptr();
    resize_discarding(&mut v, 66, 4.0);
    assert_eq!(v.as_ptr(), at);
    assert_eq!(&v[64..], [4.0, 4.0]);

    // A matrix reset onto a larger pattern is all zeros over it.
    let small = Arc::new(BlockPattern::from_elements(3, [&[0usize, 1][..]]));
    let large = Arc::new(BlockPattern::from_elements(3, [&[0usize, 1, 2][..]]));
    let mut a = BlockCsr::zeros(small);
    a.values.iter_mut().for_each(|m| *m = Mat3::identity());
    a.reset(large.clone());
    assert_eq!(a.values.len(), large.nnz());
    assert!(a.values.iter().all(|m| *m == Mat3::zeros()));
}

/// Runs `f` with the scalar kernels ([`crate::linalg::simd`]) and with the AVX ones (where
/// the processor has them), returning both results.
fn both_kernels<T>(f: impl Fn() -> T) -> (T, T) {
    use crate::linalg::simd::SCALAR_ONLY;
    use std::sync::atomic::Ordering::SeqCst;
    SCALAR_ONLY.store(true, SeqCst);
    let scalar = f();
    SCALAR_ONLY.store(false, SeqCst);
    (scalar, f())
}

/// Bits of a list of vectors (`==` would equate 0.0 and −0.0).
fn bits(v: &[Vec3]) -> Vec<[u64; 3]> {
    v.iter()
        .map(|p| [p.x, p.y, p.z].map(f64::to_bits))
        .collect()
}

#[test]
fn the_avx_products_give_the_scalar_bits() {
    use crate::linalg::simd::{Lanes, Mat3f, Scalar};
    let mut rng = Rng::new(7);
    // Magnitudes over six orders, with signed zeros.
    let mut value = |_| match rng.below(10) {
        0 => 0.0,
        1 => -0.0,
        _ => rng.sym() * 10f64.powi(rng.below(7) as i32 - 3),
    };
    let blocks: Vec<Mat3> = (0..200).map(|_| Mat3::from_fn(|_, _| value(()))).collect();
    let singles: Vec<Mat3f> = blocks.iter().map(|m| m.cast::<f32>()).collect();
    let xs: Vec<Vec3> = (0..200).map(|_| Vec3::from_fn(|_, _| value(()))).collect();
    let scalar = |acc: Vec3, k: usize| unsafe {
        let a = <Scalar as Lanes<Mat3>>::sub(acc, &blocks[k], &xs[k]);
        let b = <Scalar as Lanes<Mat3f>>::add(a, &singles[k], &xs[k]);
        <Scalar as Lanes<Mat3>>::add(b, &blocks[k], &xs[(k + 1) % 200])
            + <Scalar as Lanes<Mat3f>>::times(&singles[k], &xs[k])
    };
    let mut want = Vec::new();
    let mut acc = Vec3::zeros();
    for k in 0..200 {
        acc = scalar(acc, k);
        want.push(acc);
    }
    // The processor's own answer: `simd::avx` says no while another test compares the
    // scalar kernels.
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        #[target_feature(enable = "avx2")]
        unsafe fn run(blocks: &[Mat3], singles: &[Mat3f], xs: &[Vec3]) -> Vec<Vec3> {
            use crate::linalg::simd::Avx;
            let mut out = Vec::new();
            let mut acc = <Avx as Lanes<Mat3>>::load(&Vec3::zeros());
            for k in 0..blocks.len() {
                let a = <Avx as Lanes<Mat3>>::sub(acc, &blocks[k], &xs[k]);
                let b = <Avx as Lanes<Mat3f>>::add(a, &singles[k], &xs[k]);
                let c = <Avx as Lanes<Mat3>>::add(b, &blocks[k], &xs[(k + 1) % blocks.len()]);
                let t = <Avx as Lanes<Mat3f>>::times(&singles[k], &xs[k]);
                let sum = <Avx as Lanes<Mat3>>::store(c) + <Avx as Lanes<Mat3f>>::store(t);
                acc = <Avx as Lanes<Mat3>>::load(&sum);
                out.push(sum);
            }
            out
        }
        // SAFETY: the processor has AVX2.
        let got = unsafe { run(&blocks, &singles, &xs) };
        assert_eq!(bits(&got), bits(&want));
    }
}

#[test]
fn the_product_and_the_sweeps_give_the_same_bits_with_either_kernel() {
    use crate::linalg::precond::{Preconditioner, TriangularFactor};
    let mut rng = Rng::new(11);
    let n = 300;
    let mut elements = Vec::new();
    for i in 0..n - 1 {
        elements.push(vec![i, i + 1]);
        elements.push(vec![i, (i * 37 + 5) % n]);
    }
    let pattern = Arc::new(BlockPattern::from_elements(
        n,
        elements.iter().map(|e| &e[..]),
    ));
    let mut a = BlockCsr::zeros(pattern.clone());
    for i in 0..n {
        for k in pattern.row_ptr[i]..pattern.row_ptr[i + 1] {
            let j = pattern.col[k];
            if j < i {
                let t = pattern.slot(j, i).expect("symmetric pattern");
                a.values[k] = a.values[t].transpose();
            } else if j == i {
                a.values[k] = Mat3::identity() * 40.0;
            } else {
                a.values[k] = rng.mat3();
            }
        }
    }
    let x: Vec<Vec3> = (0..n).map(|_| rng.vec3()).collect();
    let (scalar, avx) = both_kernels(|| {
        let mut y = vec![Vec3::zeros(); n];
        a.mul_vec(&x, &mut y);
        let mut single = TriangularFactor::default();
        let mut double = TriangularFactor::double_precision();
        let mut s = vec![Vec3::zeros(); n];
        let mut t = vec![Vec3::zeros(); n];
        assert!(single.factor(&a, |_| None, Preconditioner::BlockIncompleteCholesky));
        assert!(double.factor(&a, |_| None, Preconditioner::BlockIncompleteCholesky));
        single.apply(&x, &mut s, |_, v| v);
        double.apply(&x, &mut t, |_, v| v);
        [y, s, t].map(|v| bits(&v))
    });
    assert_eq!(scalar, avx);
}
