//! Results are bit-identical whatever the number of rayon threads (sizes > 2·CHUNK so that
//! several chunks exist and the threads really split the work).
use super::{grid_hinges, grid_triangles, spd_system, Rng};
use crate::linalg::block3::{dot, CHUNK};
use crate::linalg::{modified_pcg, AssemblyPlan, BlockCsr, Constraint, PcgScratch, PcgSettings};
use crate::{Mat3, Vec3};

/// Runs `f` inside a rayon pool of `threads` threads.
pub(super) fn in_pool<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool")
        .install(f)
}

pub(super) fn bits(v: &[Vec3]) -> Vec<u64> {
    v.iter()
        .flat_map(|x| x.iter().map(|c| c.to_bits()))
        .collect()
}

#[test]
fn kernels_are_bit_identical_for_one_and_two_threads() {
    let (nx, ny) = (48, 48);
    let n = nx * ny;
    assert!(n > 2 * CHUNK);
    let mut rng = Rng::new(21);
    let x: Vec<Vec3> = (0..n).map(|_| rng.vec3() * 1e3).collect();
    let y: Vec<Vec3> = (0..n).map(|_| rng.vec3()).collect();
    let sets = [grid_triangles(nx, ny), grid_hinges(nx, ny)];
    let blocks: Vec<Vec<Mat3>> = sets
        .iter()
        .map(|s| {
            (0..s.count() * s.arity * s.arity)
                .map(|_| rng.mat3())
                .collect()
        })
        .collect();
    let vectors: Vec<Vec<Vec3>> = sets
        .iter()
        .map(|s| (0..s.nodes.len()).map(|_| rng.vec3()).collect())
        .collect();
    let run = || {
        let plan = AssemblyPlan::new(n, &sets);
        let mut a = BlockCsr::zeros(plan.pattern.clone());
        let refs: Vec<&[Mat3]> = blocks.iter().map(|b| b.as_slice()).collect();
        plan.gather_matrix(&refs, None, &mut a);
        let mut rhs = vec![Vec3::zeros(); n];
        let vrefs: Vec<&[Vec3]> = vectors.iter().map(|v| v.as_slice()).collect();
        plan.gather_vector(&vrefs, &mut rhs);
        let mut ax = vec![Vec3::zeros(); n];
        a.mul_vec(&x, &mut ax);
        // The scatter of the same elements, by particle ranges and colours.
        let mut scattered = BlockCsr::zeros(plan.pattern.clone());
        let mut scattered_rhs = vec![Vec3::zeros(); n];
        plan.scatter_begin(None, &mut scattered, &mut scattered_rhs);
        for (s, set) in sets.iter().enumerate() {
            let k = set.arity;
            plan.scatter(s, Some(&mut scattered), &mut scattered_rhs, |e, b, v| {
                b.copy_from_slice(&blocks[s][e * k * k..][..k * k]);
                v.copy_from_slice(&vectors[s][e * k..][..k]);
            });
        }
        // Two particle ranges of the scatter's split here (and their seam coloured): it
        // sums in another order than the gathers, equal to rounding.
        for (sc, ga) in scattered.values.iter().zip(&a.values) {
            assert!(
                (sc - ga).amax() <= 1e-12 * ga.amax().max(1.0),
                "scatter {sc} gather {ga}"
            );
        }
        for (sc, ga) in scattered_rhs.iter().zip(&rhs) {
            assert!((sc - ga).amax() <= 1e-12 * ga.amax().max(1.0));
        }
        // Both sets in one pass over the ranges, into buffers that held garbage: each
        // range clears its own rows.
        let mut two = BlockCsr::zeros(plan.pattern.clone());
        two.values.fill(Mat3::repeat(f64::NAN));
        let mut two_rhs = vec![Vec3::repeat(f64::NAN); n];
        let element = |s: usize| {
            let (blocks, vectors, k) = (&blocks[s], &vectors[s], sets[s].arity);
            move |e: usize, b: &mut [Mat3], v: &mut [Vec3]| {
                b.copy_from_slice(&blocks[e * k * k..][..k * k]);
                v.copy_from_slice(&vectors[e * k..][..k]);
            }
        };
        plan.scatter_two(
            None,
            &mut two,
            &mut two_rhs,
            (0, element(0)),
            (1, element(1)),
        );
        let matrix_bits = |m: &BlockCsr| -> Vec<u64> {
            (m.values.iter())
                .flat_map(|m| m.iter().map(|c| c.to_bits()))
                .collect()
        };
        // The same sums as the separate calls, bit for bit (signed zeros included).
        assert!(
            matrix_bits(&two) == matrix_bits(&scattered),
            "scatter_two differs from scatter"
        );
        assert_eq!(bits(&two_rhs), bits(&scattered_rhs));
        let scattered = (matrix_bits(&scattered), matrix_bits(&two));
        let sums = (
            bits(&ax),
            bits(&rhs),
            scattered,
            bits(&scattered_rhs),
            bits(&two_rhs),
        );
        (dot(&x, &y).to_bits(), sums)
    };
    let one = in_pool(1, run);
    let two = in_pool(2, run);
    assert!(one == two, "kernels differ between 1 and 2 threads");
    // The chunked dot is not a plain serial sum, so the comparison above is meaningful.
    let serial: f64 = x.iter().zip(&y).map(|(a, b)| a.dot(b)).sum();
    assert!((f64::from_bits(one.0) - serial).abs() <= 1e-9 * serial.abs().max(1.0));
}

#[test]
fn pcg_is_bit_identical_for_one_and_two_threads() {
    let (a, b) = spd_system(48, 46, 20.0, 22);
    assert!(a.n() > 2 * CHUNK);
    let constraints: Vec<Constraint> = (0..a.n())
        .step_by(101)
        .map(|i| Constraint {
            particle: i,
            filter: Mat3::from_diagonal(&Vec3::new(1.0, 0.0, 1.0)),
            z: Vec3::new(0.0, 0.3, 0.0),
        })
        .collect();
    let settings = PcgSettings {
        tolerance: 1e-9,
        max_iterations: 500,
        warm_start: false,
        deflation: false,
    };
    let run = || {
        let mut scratch = PcgScratch::default();
        let mut dv = vec![Vec3::zeros(); a.n()];
        let res = modified_pcg(&a, &b, &constraints, &settings, &mut scratch, &mut dv);
        // A second solve with the same scratch must give the same answer.
        let mut dv2 = vec![Vec3::repeat(5.0); a.n()];
        let res2 = modified_pcg(&a, &b, &constraints, &settings, &mut scratch, &mut dv2);
        assert_eq!(bits(&dv), bits(&dv2));
        assert_eq!(res, res2);
        (res, bits(&dv))
    };
    let one = in_pool(1, run);
    let two = in_pool(2, run);
    assert!(one.0.converged && one.0.iterations > 5, "{:?}", one.0);
    assert_eq!(one.0, two.0);
    assert!(one.1 == two.1, "Δv differs between 1 and 2 threads");
}
