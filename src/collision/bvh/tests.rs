//! Tests of the bounding volume hierarchy.
use super::*;

/// Whether items `i` and `j` lie in one leaf.
fn same_leaf(bvh: &Bvh, i: usize, j: usize) -> bool {
    bvh.nodes.iter().filter(|n| n.leaf).any(|n| {
        let items = &bvh.order[n.first..n.first + n.count];
        items.contains(&i) && items.contains(&j)
    })
}

#[test]
fn overlapping_pairs_finds_each_overlapping_pair_once() {
    let mut boxes = Vec::new();
    for i in 0..700 {
        let c = Vec3::new(
            (i * 37 % 101) as f64,
            (i * 53 % 97) as f64,
            (i * 11 % 89) as f64,
        ) * 0.01;
        let size = 0.05 + 0.1 * ((i * 7 % 13) as f64 / 13.0);
        boxes.push(Aabb {
            min: c,
            max: c + Vec3::repeat(size),
        });
    }
    for (n, leaf) in [0, 1, 3, 5, 60, 700]
        .into_iter()
        .flat_map(|n| [1, LEAF_SIZE, 8, MAX_LEAF_SIZE, 2 * MAX_LEAF_SIZE].map(|leaf| (n, leaf)))
    {
        let bvh = Bvh::build_with_leaves(&boxes[..n], leaf);
        let mut got = bvh.overlapping_pairs(|i, j| Some((i, j)));
        let in_order = got.clone();
        got.sort();
        let mut want = Vec::new();
        for i in 0..n {
            for j in i + 1..n {
                if boxes[i].overlaps(&boxes[j]) {
                    want.push((i, j));
                }
            }
        }
        assert_eq!(got, want, "{n} boxes, leaves of {leaf}");
        assert!(
            n < 700 || want.len() > n,
            "the test has overlaps to find: {}",
            want.len()
        );
        // The same order on a one-thread pool.
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        assert_eq!(
            pool.install(|| bvh.overlapping_pairs(|i, j| Some((i, j)))),
            in_order
        );
        // Pairs excluded within leaves are left out, the rest kept in order.
        let excluded = |i: usize, j: usize| (i + j).is_multiple_of(3);
        let mut pruned = bvh.clone();
        pruned.exclude_within_leaves(excluded);
        let kept: Vec<_> = (in_order.iter())
            .filter(|&&(i, j)| !excluded(i, j))
            .copied()
            .collect();
        let got = pruned.overlapping_pairs(|i, j| (!excluded(i, j)).then_some((i, j)));
        assert_eq!(got, kept, "{n} boxes, leaves of {leaf}");
        // Excluded pairs in one leaf are never tested; those across leaves still are.
        let tested = pruned.overlapping_pairs(|i, j| {
            assert!(
                !excluded(i, j) || !same_leaf(&pruned, i, j),
                "({i}, {j}) tested"
            );
            Some((i, j))
        });
        let across: Vec<_> = (in_order.iter())
            .filter(|&&(i, j)| !excluded(i, j) || !same_leaf(&pruned, i, j))
            .copied()
            .collect();
        assert_eq!(tested, across, "{n} boxes, leaves of {leaf}");
    }
}

#[test]
fn query_finds_exactly_the_overlapping_boxes() {
    let mut boxes = Vec::new();
    for i in 0..300 {
        let c = Vec3::new(
            (i * 37 % 101) as f64,
            (i * 53 % 97) as f64,
            (i * 11 % 89) as f64,
        ) * 0.01;
        boxes.push(Aabb {
            min: c,
            max: c + Vec3::repeat(0.02),
        });
    }
    let mut bvh = Bvh::build(&boxes);
    for shift in [0.0, 0.3] {
        let moved: Vec<Aabb> = boxes
            .iter()
            .map(|b| Aabb {
                min: b.min + Vec3::repeat(shift),
                max: b.max + Vec3::repeat(shift),
            })
            .collect();
        bvh.refit(&moved);
        for q in 0..50 {
            let c = Vec3::new(q as f64 * 0.02, 0.5, 0.4);
            let query = Aabb {
                min: c,
                max: c + Vec3::repeat(0.15),
            };
            let mut got = vec![];
            bvh.query(&query, |i| got.push(i));
            got.sort();
            let want: Vec<usize> = (0..moved.len())
                .filter(|&i| moved[i].overlaps(&query))
                .collect();
            assert_eq!(got, want);
        }
    }
}

#[test]
fn a_given_hierarchy_finds_the_pairs_and_prunes_whole_groups() {
    let boxes: Vec<Aabb> = (0..400)
        .map(|i| {
            let c = Vec3::new((i % 20) as f64, (i / 20) as f64, ((i * 7) % 5) as f64) * 0.1;
            Aabb {
                min: c,
                max: c + Vec3::repeat(0.15),
            }
        })
        .collect();
    // Groups of 40 consecutive items; the tree splits ranges at a third, items reversed.
    let group = |i: usize| (i / 40) as u32;
    let order: Vec<usize> = (0..boxes.len()).rev().collect();
    let bvh = Bvh::from_tree(&boxes, order, |r| {
        (r.len() > 3).then(|| (r.start..r.start + r.len() / 3, r.start + r.len() / 3..r.end))
    });
    let mut all = bvh.overlapping_pairs(|i, j| Some((i, j)));
    all.sort_unstable();
    let mut want = Vec::new();
    for i in 0..boxes.len() {
        for j in i + 1..boxes.len() {
            if boxes[i].overlaps(&boxes[j]) {
                want.push((i, j));
            }
        }
    }
    assert_eq!(all, want);
    let mut labels = Vec::new();
    let leaf = |items: &[usize]| {
        let g = group(items[0]);
        if items.iter().all(|&i| group(i) == g) {
            g
        } else {
            NO_LABEL
        }
    };
    bvh.common_labels(leaf, &mut labels);
    let pruned = bvh.overlapping_pairs_pruned(
        |a, b| labels[a] != NO_LABEL && labels[a] == labels[b],
        |i, j| Some((i, j)),
    );
    // The pairs across groups all stay; only pairs within one group go, and some do.
    let across: Vec<_> = want
        .iter()
        .filter(|(i, j)| group(*i) != group(*j))
        .collect();
    assert!(across.iter().all(|p| pruned.contains(p)));
    assert!(pruned.iter().all(|p| want.contains(p)));
    assert!(pruned.len() < want.len() && !across.is_empty());
    // A query skipping group 3's subtrees misses only (some of) its items.
    let query = Aabb {
        min: Vec3::new(0.0, 0.0, 0.0),
        max: Vec3::new(2.0, 0.8, 0.5),
    };
    let mut got = Vec::new();
    bvh.query_pruned(&query, |n| labels[n] == 3, |i| got.push(i));
    got.sort_unstable();
    let hits: Vec<usize> = (0..boxes.len())
        .filter(|&i| boxes[i].overlaps(&query))
        .collect();
    assert!(hits
        .iter()
        .filter(|&&i| group(i) != 3)
        .all(|i| got.contains(i)));
    assert!(got.iter().all(|i| hits.contains(i)));
    assert!(got.len() < hits.len(), "group 3 was skipped");
}
