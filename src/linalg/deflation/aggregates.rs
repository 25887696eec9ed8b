//! The particle aggregates of the deflation's coarse space ([`super`]), grown once per
//! block pattern.
use super::RINGS;
use crate::linalg::BlockPattern;

/// The aggregate of each particle ([`super`]'s module doc), numbered from 0 in order of creation:
/// 1. every particle whose [`RINGS`]-ring neighbourhood is entirely unassigned becomes
///    the seed of an aggregate holding that neighbourhood (particles in index order);
/// 2. each particle still unassigned joins the aggregate of its first neighbour (in row
///    order) assigned in step 1;
/// 3. each particle still unassigned forms an aggregate with its unassigned neighbours,
///    or, if it has none, joins the aggregate of its first neighbour.
pub(super) fn aggregates(pattern: &BlockPattern) -> Vec<usize> {
    const NONE: usize = usize::MAX;
    let n = pattern.n;
    let mut agg = vec![NONE; n];
    let mut m = 0;
    let mut hood = Vec::new();
    let mut mark = vec![NONE; n];
    for seed in 0..n {
        if agg[seed] != NONE {
            continue;
        }
        // The `rings`-ring neighbourhood of `seed`, if entirely unassigned.
        hood.clear();
        hood.push(seed);
        mark[seed] = seed;
        let mut free = true;
        let mut begin = 0;
        for _ in 0..RINGS {
            let end = hood.len();
            for h in begin..end {
                for &j in pattern.row(hood[h]) {
                    if mark[j] != seed {
                        mark[j] = seed;
                        free &= agg[j] == NONE;
                        hood.push(j);
                    }
                }
            }
            begin = end;
        }
        if free {
            hood.iter().for_each(|&j| agg[j] = m);
            m += 1;
        }
    }
    let first = agg.clone();
    for (i, g) in agg.iter_mut().enumerate() {
        if *g == NONE {
            if let Some(&j) = pattern.row(i).iter().find(|&&j| first[j] != NONE) {
                *g = first[j];
            }
        }
    }
    for i in 0..n {
        if agg[i] != NONE {
            continue;
        }
        let row = pattern.row(i);
        if let Some(&j) = (row.iter())
            .find(|&&j| j != i && agg[j] == NONE)
            .or(row.first())
        {
            if agg[j] != NONE {
                agg[i] = agg[j];
                continue;
            }
        }
        agg[i] = m;
        for &j in row {
            if agg[j] == NONE {
                agg[j] = m;
            }
        }
        m += 1;
    }
    agg
}
