//! The two-domain + separator elimination order of the triangular preconditioners
//! (issue 8): the separator really separates, the factor in that order is still the
//! IC(0) of the module doc (exact where the pattern has no fill), and the two-thread
//! factorisation and sweeps give the one-thread bits.
use super::determinism::{bits, in_pool};
use super::solver::{dense_constrained_solve, max_abs, max_abs_diff, mixed_constraints};
use super::{
    dense, dense_inverse, grid_edge_nodes, grid_hinges, grid_triangles, spd_system, spring_system,
    Rng,
};
use crate::linalg::assembly::ElementSet;
use crate::linalg::precond::order::SeparatorOrder;
use crate::linalg::precond::{EliminationOrder, TriangularFactor};
use crate::linalg::{AssemblyPlan, BlockCsr, BlockPattern, Preconditioner};
use crate::{Mat3, Vec3};
use nalgebra::DMatrix;
use proptest::prelude::*;

/// Checks that `ord` is a permutation of `0..n` cut into `A, B, S` with each part
/// monotone in particle index (the separator ascending) and no entry of `p` joining `A` and `B`; returns `(|A|, |B|, |S|)`.
fn check_separation(p: &BlockPattern, ord: &SeparatorOrder) -> (usize, usize, usize) {
    let n = p.n;
    assert_eq!(ord.order.len(), n);
    let mut part = vec![usize::MAX; n];
    for (k, range) in ord.ranges().into_iter().enumerate() {
        let members = &ord.order[range];
        let ascending = members.windows(2).all(|w| w[0] < w[1]);
        let descending = members.windows(2).all(|w| w[0] > w[1]);
        assert!(ascending || (descending && k < 2), "part {k} not monotone");
        for &v in members {
            assert_eq!(part[v], usize::MAX, "particle {v} in two parts");
            part[v] = k;
        }
    }
    assert!(part.iter().all(|&k| k < 3), "a particle in no part");
    for i in 0..n {
        for &j in p.row(i) {
            assert!(
                !(part[i] == 0 && part[j] == 1 || part[i] == 1 && part[j] == 0),
                "entry ({i}, {j}) joins A and B"
            );
        }
    }
    let [a, b, s] = ord.ranges();
    (a.len(), b.len(), s.len())
}

fn grid_pattern(nx: usize, ny: usize) -> BlockPattern {
    let plan = AssemblyPlan::new(nx * ny, &[grid_triangles(nx, ny), grid_hinges(nx, ny)]);
    (*plan.pattern).clone()
}

#[test]
fn separator_of_a_cloth_grid_separates_two_balanced_domains() {
    for (nx, ny) in [(51, 51), (40, 7), (1, 30), (2, 2)] {
        let p = grid_pattern(nx, ny);
        let (a, b, s) = check_separation(&p, &SeparatorOrder::new(&p));
        eprintln!("{nx}x{ny} grid: |A| = {a}, |B| = {b}, |S| = {s}");
        assert!(
            2 * a <= p.n && 2 * b <= p.n,
            "a domain holds more than half"
        );
        if p.n >= 100 {
            assert!(s * 10 < p.n, "separator of {s} is not small");
            assert!(a * 3 > p.n && b * 3 > p.n, "domains unbalanced");
        }
    }
}

#[test]
fn separator_of_two_components_and_isolated_particles_separates() {
    // Two grids side by side (the second shifted by 300), then 7 isolated particles.
    let mut tri = grid_triangles(12, 9).nodes;
    tri.extend(grid_triangles(20, 15).nodes.iter().map(|&v| v + 300));
    let n = 300 + 300 + 7;
    let elements: Vec<&[usize]> = tri.chunks(3).collect();
    let p = BlockPattern::from_elements(n, elements);
    let ord = SeparatorOrder::new(&p);
    let (a, b, s) = check_separation(&p, &ord);
    eprintln!("two components + isolated: |A| = {a}, |B| = {b}, |S| = {s}");
    assert!(a > 0 && b > 0);
    assert!(2 * a <= n && 2 * b <= n);
}

/// `(n, symmetric elements of 1..=4 particles)`.
fn random_pattern() -> impl Strategy<Value = BlockPattern> {
    (1usize..60).prop_flat_map(|n| {
        prop::collection::vec(prop::collection::vec(0..n, 1..=4), 0..50)
            .prop_map(move |els| BlockPattern::from_elements(n, els.iter().map(|e| e.as_slice())))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Random symmetric patterns (several components, isolated particles, dense
    /// cliques): every particle in exactly one part, no entry joining the domains,
    /// neither domain above half of the particles.
    #[test]
    fn separator_of_a_random_symmetric_pattern_separates(p in random_pattern()) {
        let (a, b, _) = check_separation(&p, &SeparatorOrder::new(&p));
        prop_assert!(2 * a <= p.n && 2 * b <= p.n);
    }
}

/// Dense `Ã = S A S + I − S` (filters of `constraints`).
fn dense_filtered(a: &BlockCsr, filters: &[Option<Mat3>]) -> DMatrix<f64> {
    let n = a.n();
    let mut s = DMatrix::identity(3 * n, 3 * n);
    for (i, f) in filters.iter().enumerate() {
        if let Some(f) = f {
            s.fixed_view_mut::<3, 3>(3 * i, 3 * i).copy_from(f);
        }
    }
    let id = DMatrix::<f64>::identity(3 * n, 3 * n);
    &s * dense(a) * &s + (id - &s)
}

fn filters_of(n: usize, stride: usize, seed: u64) -> Vec<Option<Mat3>> {
    let mut rng = Rng::new(seed);
    let mut filters = vec![None; n];
    for c in mixed_constraints(n, stride, &mut rng) {
        filters[c.particle] = Some(c.filter);
    }
    filters
}

#[test]
fn ic0_in_separator_order_reproduces_the_filtered_matrix_on_its_pattern() {
    // IC(0) of Π Ã Πᵀ: (L D Lᵀ)_ij = Ã_ij on the pattern, whatever the order; and the
    // order does change P (a different fill is dropped).
    let (a, _) = spd_system(9, 8, 2.0, 71);
    let n = a.n();
    let filters = filters_of(n, 5, 72);
    let ord = SeparatorOrder::new(&a.pattern);
    assert!(ord.domain_b > 0 && ord.domain_a > 0);
    let mut inverses = Vec::new();
    for order in [EliminationOrder::Separator, EliminationOrder::Natural] {
        let mut f = TriangularFactor::double_precision().with_order(order);
        assert!(f.factor(&a, |i| filters[i], Preconditioner::BlockIncompleteCholesky));
        let pinv = dense_inverse(&f, n);
        let p = pinv.clone().try_inverse().expect("P is invertible");
        let target = dense_filtered(&a, &filters);
        let scale = target.amax();
        let mut on = 0.0f64;
        for i in 0..n {
            for &j in a.pattern.row(i) {
                let d = (p.fixed_view::<3, 3>(3 * i, 3 * j)
                    - target.fixed_view::<3, 3>(3 * i, 3 * j))
                .amax();
                on = on.max(d);
            }
        }
        let asym = (&p - p.transpose()).amax() / scale;
        eprintln!(
            "{order:?}: max |P − Ã| on the pattern {:.2e}, asymmetry {asym:.2e} (relative), \
             {:?}",
            on / scale,
            f.stats
        );
        assert!(on <= 1e-10 * scale, "{order:?}: {on}");
        assert!(asym <= 1e-10);
        inverses.push(pinv);
    }
    let change = (&inverses[0] - &inverses[1]).amax() / inverses[1].amax();
    eprintln!("separator vs natural order: max |ΔP⁻¹| = {change:.2e} (relative)");
    assert!(
        change > 1e-6,
        "the order should change the incomplete factor"
    );
}

#[test]
fn ic0_in_separator_order_is_exact_cholesky_on_a_fill_free_path() {
    // The path 0–1–2–3–8–7–6–5–4 (springs): BFS from 4 puts the separator at 8, domain A
    // = {4, 5, 6, 7}, domain B = {0, 1, 2, 3}, both eliminated towards 8: no fill, so
    // IC(0) is the complete LDLᵀ and P⁻¹ = Ã⁻¹.
    let path = [0, 1, 2, 3, 8, 7, 6, 5, 4];
    let nodes: Vec<usize> = path.windows(2).flatten().copied().collect();
    let edges = ElementSet { arity: 2, nodes };
    let n = path.len();
    let plan = AssemblyPlan::new(n, std::slice::from_ref(&edges));
    let mut rng = Rng::new(73);
    let mut blocks = Vec::new();
    for _ in 0..edges.count() {
        let d = rng.unit();
        let k = (d * d.transpose() + Mat3::identity() * 0.1) * 1e3;
        blocks.extend_from_slice(&[k, -k, -k, k]);
    }
    let mass: Vec<Mat3> = (0..n)
        .map(|_| Mat3::identity() * (1.0 + 0.5 * rng.sym()))
        .collect();
    let mut a = BlockCsr::zeros(plan.pattern.clone());
    plan.gather_matrix(&[&blocks], Some(&mass), &mut a);
    let ord = SeparatorOrder::new(&a.pattern);
    assert_eq!(ord.order, vec![4, 5, 6, 7, 0, 1, 2, 3, 8]);
    assert_eq!((ord.domain_a, ord.domain_b), (4, 4));
    let filters = filters_of(n, 4, 74);
    let mut f = TriangularFactor::double_precision();
    assert!(f.factor(&a, |i| filters[i], Preconditioner::BlockIncompleteCholesky));
    assert_eq!(f.stats.restarts, 0);
    let err = (dense_inverse(&f, n) * dense_filtered(&a, &filters)
        - DMatrix::identity(3 * n, 3 * n))
    .amax();
    eprintln!("fill-free path in separator order: max |P⁻¹Ã − I| = {err:.2e}");
    assert!(err < 1e-9, "{err}");
}

#[test]
fn pcg_in_separator_order_matches_the_dense_constrained_solve() {
    // Random SPD block systems with all four filter kinds: the default (separator
    // order) IC(0) and Gauss–Seidel reach the dense solution and keep Δv = z exactly
    // in the constrained directions.
    let mut rng = Rng::new(75);
    for (c, (a, b)) in [spd_system(13, 11, 3.0, 76), spring_system(17, 16, 1e3, 77)]
        .iter()
        .enumerate()
    {
        let ord = SeparatorOrder::new(&a.pattern);
        assert!(ord.domain_a > 0 && ord.domain_b > 0);
        let constraints = mixed_constraints(a.n(), 7, &mut rng);
        let reference = dense_constrained_solve(a, b, &constraints);
        for p in [
            Preconditioner::BlockGaussSeidel,
            Preconditioner::BlockIncompleteCholesky,
        ] {
            let (dv, res) = super::solver::solve_with(a, b, &constraints, 1e-12, 2000, p);
            let err = max_abs_diff(&dv, &reference) / max_abs(&reference);
            eprintln!(
                "case {c} {p:?}: {} iterations, rel. error {err:.1e}",
                res.iterations
            );
            assert!(res.converged && err < 1e-8, "case {c} {p:?}: {res:?} {err}");
            for k in &constraints {
                let d = dv[k.particle] - k.z;
                assert!((d - k.filter * d).amax() <= 1e-15, "case {c} {p:?}");
            }
        }
    }
}

#[test]
fn factor_and_sweeps_are_bit_identical_for_one_and_two_threads() {
    // Factor and apply directly (double and single-precision sweeps, both kinds), with a
    // filter and a projection: the returned δ and s must have the same bits.
    let (a, _) = spd_system(40, 37, 20.0, 78);
    let n = a.n();
    let ord = SeparatorOrder::new(&a.pattern);
    assert!(ord.domain_a > n / 3 && ord.domain_b > n / 3, "{ord:?}");
    let filters = filters_of(n, 11, 79);
    let mut rng = Rng::new(80);
    let r: Vec<Vec3> = (0..n).map(|_| rng.vec3()).collect();
    for kind in [
        Preconditioner::BlockGaussSeidel,
        Preconditioner::BlockIncompleteCholesky,
    ] {
        for double in [false, true] {
            let run = || {
                let mut f = if double {
                    TriangularFactor::double_precision()
                } else {
                    TriangularFactor::default()
                };
                assert!(f.factor(&a, |i| filters[i], kind));
                let mut s = vec![Vec3::zeros(); n];
                let project = |i: usize, x: Vec3| filters[i].map_or(x, |m| m * x);
                let d = f.apply(&r, &mut s, project);
                // A second factorisation over the cached structure gives the same bits.
                assert!(f.factor(&a, |i| filters[i], kind));
                let mut s2 = vec![Vec3::zeros(); n];
                assert_eq!(f.apply(&r, &mut s2, project).to_bits(), d.to_bits());
                assert_eq!(bits(&s), bits(&s2));
                (d.to_bits(), bits(&s))
            };
            let one = in_pool(1, run);
            let two = in_pool(2, run);
            assert!(
                one == two,
                "{kind:?} double={double}: 1 and 2 threads differ"
            );
        }
    }
}

#[test]
fn a_breakdown_in_one_domain_restarts_the_whole_factor_alike_on_one_and_two_threads() {
    // An 8x8 grid of springs (particles 0..64) and Kershaw's SPD 4-cycle (64..68, blocks
    // a_ij I, one coupling positive) as a second component: its BFS levels follow the
    // grid's, so it lies in domain B, where unshifted IC(0) meets a negative pivot while
    // domain A factors fine. Both must restart with the same shift.
    let k = [
        [3.0, -2.0, 0.0, 2.0],
        [-2.0, 3.0, -2.0, 0.0],
        [0.0, -2.0, 3.0, -2.0],
        [2.0, 0.0, -2.0, 3.0],
    ];
    let (nx, ny) = (8, 8);
    let mut nodes = grid_edge_nodes(nx, ny, false);
    let grid_edges = nodes.len() / 2;
    nodes.extend_from_slice(&[64, 65, 65, 66, 66, 67, 67, 64]);
    let edges = ElementSet { arity: 2, nodes };
    let n = 68;
    let plan = AssemblyPlan::new(n, std::slice::from_ref(&edges));
    let mut rng = Rng::new(81);
    let mut blocks = Vec::new();
    for e in 0..edges.count() {
        let d = rng.unit();
        let ke = if e < grid_edges {
            (d * d.transpose() + Mat3::identity() * 0.1) * 10.0
        } else {
            Mat3::zeros()
        };
        blocks.extend_from_slice(&[ke, -ke, -ke, ke]);
    }
    let mass: Vec<Mat3> = (0..n).map(|_| Mat3::identity()).collect();
    let mut a = BlockCsr::zeros(plan.pattern.clone());
    plan.gather_matrix(&[&blocks], Some(&mass), &mut a);
    for (i, row) in k.iter().enumerate() {
        for (j, &x) in row.iter().enumerate() {
            if let Some(slot) = a.pattern.slot(64 + i, 64 + j) {
                a.values[slot] = Mat3::identity() * x;
            }
        }
    }
    let ord = SeparatorOrder::new(&a.pattern);
    let [_, b_range, _] = ord.ranges();
    assert!((64..68).all(|v| ord.order[b_range.clone()].contains(&v)));
    let b: Vec<Vec3> = (0..n).map(|_| rng.vec3()).collect();
    let reference = dense_constrained_solve(&a, &b, &[]);
    let run = || {
        let mut f = TriangularFactor::default();
        assert!(f.factor(&a, |_| None, Preconditioner::BlockIncompleteCholesky));
        let kind = Preconditioner::BlockIncompleteCholesky;
        let (dv, res) = super::solver::solve_with(&a, &b, &[], 1e-12, 500, kind);
        (f.stats, res, bits(&dv))
    };
    let one = in_pool(1, run);
    let two = in_pool(2, run);
    let (stats, res, _) = one.clone();
    let dv: Vec<Vec3> = (one.2.chunks(3))
        .map(|c| {
            Vec3::new(
                f64::from_bits(c[0]),
                f64::from_bits(c[1]),
                f64::from_bits(c[2]),
            )
        })
        .collect();
    let err = max_abs_diff(&dv, &reference) / max_abs(&reference);
    eprintln!(
        "grid + Kershaw in domain B: {stats:?}, {} iterations, rel. error {err:.1e}",
        res.iterations
    );
    assert!(stats.restarts > 0 && stats.shift > 0.0, "{stats:?}");
    assert_eq!(stats.pivot_fallbacks, 0);
    assert!(res.converged && err < 1e-10, "{res:?} {err}");
    assert!(one == two, "1 and 2 threads differ");
}
