//! Element colouring for race-free parallel scatter: elements of one colour share no
//! particle, so their contributions to the matrix slots `(i, j)` and right-hand-side
//! entries `i` of their particles touch disjoint memory and can be added in parallel.
//!
//! ```text
//! colour(e) = min { c ≥ 0 : no element e' < e sharing a particle with e has colour c }
//! ```
//! Greedy in element order (Welsh–Powell without the sort): at most `Δ + 1` colours, `Δ`
//! the number of other elements an element shares a particle with (on a regular triangle
//! mesh about 12 colours for the triangles and 16 for the bend hinges). Deterministic: it
//! depends on the element list only.

/// Elements of one set grouped by colour: colour `c` holds the elements
/// `elements[ptr[c] .. ptr[c + 1]]`, in increasing element order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Colouring {
    ptr: Vec<usize>,
    elements: Vec<u32>,
}

impl Colouring {
    /// Colours the `nodes.len() / arity` elements of arity `arity` (element `e` has
    /// particles `nodes[e·arity ..][..arity]`) over `n` particles.
    ///
    /// # Panics
    /// If a node is `≥ n` or there are 2³² elements or more (topology bugs upstream).
    pub fn greedy(n: usize, arity: usize, nodes: &[usize]) -> Self {
        let count = nodes.len().checked_div(arity).unwrap_or(0);
        assert!(u32::try_from(count).is_ok(), "too many elements to colour");
        Self::greedy_of(n, arity, nodes, &(0..count as u32).collect::<Vec<_>>())
    }

    /// Colours the elements `ids` (increasing) of the set [`Colouring::greedy`] takes, in
    /// that order; the colours hold element indices of the whole set.
    ///
    /// # Panics
    /// If a node is `≥ n` or an id is out of range (topology bugs upstream).
    pub fn greedy_of(n: usize, arity: usize, nodes: &[usize], ids: &[u32]) -> Self {
        let count = ids.len();
        // Colours used around each particle, as a bit set of 64-colour words.
        let mut used: Vec<Vec<u64>> = vec![Vec::new(); n];
        let mut colour = Vec::with_capacity(count);
        let mut taken: Vec<u64> = Vec::new();
        for &id in ids {
            let e = &nodes[id as usize * arity..][..arity];
            taken.clear();
            for &i in e {
                let words = &used[i];
                if taken.len() < words.len() {
                    taken.resize(words.len(), 0);
                }
                for (t, w) in taken.iter_mut().zip(words) {
                    *t |= w;
                }
            }
            let c = (taken.iter().enumerate())
                .find(|(_, w)| **w != u64::MAX)
                .map_or(64 * taken.len(), |(k, w)| {
                    64 * k + w.trailing_ones() as usize
                });
            for &i in e {
                let words = &mut used[i];
                if words.len() <= c / 64 {
                    words.resize(c / 64 + 1, 0);
                }
                words[c / 64] |= 1 << (c % 64);
            }
            colour.push(c);
        }
        let colours = colour.iter().max().map_or(0, |c| c + 1);
        let mut ptr = vec![0usize; colours + 1];
        for &c in &colour {
            ptr[c + 1] += 1;
        }
        for c in 0..colours {
            ptr[c + 1] += ptr[c];
        }
        let mut fill = ptr[..colours].to_vec();
        let mut elements = vec![0u32; count];
        for (&e, &c) in ids.iter().zip(&colour) {
            elements[fill[c]] = e;
            fill[c] += 1;
        }
        Colouring { ptr, elements }
    }

    /// Number of colours.
    pub fn colours(&self) -> usize {
        self.ptr.len().saturating_sub(1)
    }

    /// The elements of colour `c`, in increasing order.
    pub fn colour(&self, c: usize) -> &[u32] {
        &self.elements[self.ptr[c]..self.ptr[c + 1]]
    }
}

/// Elements of one set split for a scatter that keeps its writes local: the particles
/// fall into [`Blocked::blocks`] ranges of consecutive indices; block `b` holds the
/// elements (increasing) whose particles all lie in range `b`, so elements of different
/// blocks share no particle and each block touches only its own rows; the elements that
/// span ranges are coloured ([`Blocked::rest`]). The split depends on the element list
/// and `n` only (not on the thread count), so a scatter that adds each block's elements
/// in order, then the rest colour by colour, sums every slot in one fixed order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Blocked {
    ptr: Vec<usize>,
    elements: Vec<u32>,
    /// The elements whose particles lie in two ranges or more, coloured.
    pub rest: Colouring,
}

/// Particles per range of [`Blocked`] (at least one range, at most [`MAX_BLOCKS`]): about
/// a megabyte of 3×3 blocks of a cloth mesh's matrix, one core's cache.
pub const BLOCK_PARTICLES: usize = 1024;

/// Most ranges of [`Blocked`].
pub const MAX_BLOCKS: usize = 64;

/// The number of particle ranges of a split over `n` particles: `n / BLOCK_PARTICLES`
/// rounded down to an even number, at least 1 and at most [`MAX_BLOCKS`].
///
/// Two threads then take equal shares of the ranges. With an odd count one of them has a
/// range more: at 10,000 particles 5 of 9, and the other waited for it in every
/// assembly. The count depends on `n` only, never on the thread count (the sums' order,
/// and so the results, depend on the split). Rounding down keeps the ranges at a
/// megabyte or more; `linalg::tests::perf::assembly_report` times an assembly.
pub fn range_count(n: usize) -> usize {
    let ranges = n / BLOCK_PARTICLES;
    (ranges - (ranges & 1)).clamp(1, MAX_BLOCKS)
}

impl Blocked {
    /// Splits the elements of arity `arity` (`nodes` as for [`Colouring::greedy`]) over
    /// `n` particles.
    ///
    /// # Panics
    /// If a node is `≥ n` or there are 2³² elements or more (topology bugs upstream).
    pub fn new(n: usize, arity: usize, nodes: &[usize]) -> Self {
        let count = nodes.len().checked_div(arity).unwrap_or(0);
        assert!(u32::try_from(count).is_ok(), "too many elements to split");
        let blocks = range_count(n);
        let range = |i: usize| i * blocks / n;
        let mut ptr = vec![0usize; blocks + 1];
        let mut of = vec![usize::MAX; count];
        let mut rest = Vec::new();
        for (e, el) in nodes.chunks_exact(arity.max(1)).take(count).enumerate() {
            let b = range(el[0]);
            if el.iter().all(|&i| range(i) == b) {
                of[e] = b;
                ptr[b + 1] += 1;
            } else {
                rest.push(e as u32);
            }
        }
        for b in 0..blocks {
            ptr[b + 1] += ptr[b];
        }
        let mut fill = ptr[..blocks].to_vec();
        let mut elements = vec![0u32; ptr[blocks]];
        for (e, &b) in of.iter().enumerate().filter(|(_, &b)| b != usize::MAX) {
            elements[fill[b]] = e as u32;
            fill[b] += 1;
        }
        Blocked {
            ptr,
            elements,
            rest: Colouring::greedy_of(n, arity, nodes, &rest),
        }
    }

    /// Number of particle ranges.
    pub fn blocks(&self) -> usize {
        self.ptr.len().saturating_sub(1)
    }

    /// The elements lying wholly in range `b`, in increasing order.
    pub fn block(&self, b: usize) -> &[u32] {
        &self.elements[self.ptr[b]..self.ptr[b + 1]]
    }

    /// The particles of range `b` of a split over `n` particles: the `i` with
    /// `i · blocks / n = b` ([`Blocked::blocks`] ranges), which hold the rows that the
    /// elements of [`Blocked::block`] `b` write.
    pub fn particles(&self, n: usize, b: usize) -> std::ops::Range<usize> {
        let start = |b: usize| (b * n).div_ceil(self.blocks());
        start(b)..start(b + 1)
    }

    /// Number of elements in the blocks (the rest not counted).
    pub fn in_blocks(&self) -> usize {
        self.elements.len()
    }
}

#[cfg(test)]
mod tests {
    use super::{range_count, Blocked, Colouring, BLOCK_PARTICLES, MAX_BLOCKS};
    use proptest::prelude::*;

    /// Every element exactly once, and no two elements of a colour share a particle.
    fn check(n: usize, arity: usize, nodes: &[usize], c: &Colouring) {
        let count = nodes.len() / arity;
        let mut seen = vec![false; count];
        for k in 0..c.colours() {
            let mut owner = vec![usize::MAX; n];
            assert!(!c.colour(k).is_empty(), "colour {k} is empty");
            for &e in c.colour(k) {
                let e = e as usize;
                assert!(!seen[e], "element {e} coloured twice");
                seen[e] = true;
                for &i in &nodes[e * arity..][..arity] {
                    assert!(
                        owner[i] == usize::MAX || owner[i] == e,
                        "colour {k}: elements {} and {e} share particle {i}",
                        owner[i]
                    );
                    owner[i] = e;
                }
            }
        }
        assert!(seen.iter().all(|&s| s), "an element has no colour");
    }

    /// The triangles of a `side × side` particle grid, two per cell (flattened corners).
    fn grid_triangles(side: usize) -> Vec<usize> {
        let mut nodes = Vec::new();
        for y in 0..side - 1 {
            for x in 0..side - 1 {
                let i = y * side + x;
                nodes.extend([i, i + 1, i + side]);
                nodes.extend([i + 1, i + side + 1, i + side]);
            }
        }
        nodes
    }

    #[test]
    fn a_triangle_grid_needs_few_colours_and_no_colour_shares_a_particle() {
        let side = 30;
        let nodes = grid_triangles(side);
        let c = Colouring::greedy(side * side, 3, &nodes);
        check(side * side, 3, &nodes, &c);
        // Each triangle shares a particle with 12 others on this grid.
        assert!(c.colours() <= 13, "{} colours", c.colours());
    }

    #[test]
    fn more_than_64_elements_around_one_particle_get_more_than_64_colours() {
        // A fan of 150 springs around particle 0: every spring needs its own colour.
        let nodes: Vec<usize> = (1..=150).flat_map(|j| [0, j]).collect();
        let c = Colouring::greedy(151, 2, &nodes);
        check(151, 2, &nodes, &c);
        assert_eq!(c.colours(), 150);
    }

    proptest! {
        #[test]
        fn random_elements_are_coloured_validly(
            n in 1usize..40,
            raw in proptest::collection::vec(0usize..1000, 0..240),
            arity in 1usize..5,
        ) {
            let nodes: Vec<usize> = raw.iter().map(|r| r % n).collect();
            let nodes = &nodes[..nodes.len() / arity * arity];
            let c = Colouring::greedy(n, arity, nodes);
            check(n, arity, nodes, &c);
        }

        #[test]
        fn random_elements_are_split_validly(
            n in 1usize..5000,
            raw in proptest::collection::vec(0usize..100_000, 0..400),
            arity in 1usize..5,
            spread in 1usize..50,
        ) {
            // Elements of nearby particles (most lie in one range) and a few far apart.
            let nodes: Vec<usize> = (raw.chunks_exact(arity))
                .flat_map(|e| e.iter().map(|r| (e[0] + (r % spread) * (1 + r % 3)) % n))
                .collect();
            let b = Blocked::new(n, arity, &nodes);
            check_split(n, arity, &nodes, &b);
        }
    }

    /// Every element exactly once, in a block or in the coloured rest; the elements of a
    /// block lie in its range (so two blocks share no particle), in increasing order.
    fn check_split(n: usize, arity: usize, nodes: &[usize], b: &Blocked) {
        let count = nodes.len() / arity;
        let mut seen = vec![0; count];
        // The ranges cover the particles in order, each where `Blocked::new` puts it.
        let mut next = 0;
        for k in 0..b.blocks() {
            let range = b.particles(n, k);
            assert_eq!(
                range.start, next,
                "range {k} does not follow the one before"
            );
            next = range.end;
            assert!(range.clone().all(|i| i * b.blocks() / n == k), "range {k}");
        }
        assert_eq!(next, n, "the ranges do not end at the last particle");
        for k in 0..b.blocks() {
            let block = b.block(k);
            assert!(
                block.windows(2).all(|w| w[0] < w[1]),
                "block {k} out of order"
            );
            for &e in block {
                seen[e as usize] += 1;
                for &i in &nodes[e as usize * arity..][..arity] {
                    assert!(
                        b.particles(n, k).contains(&i),
                        "element {e} outside block {k}"
                    );
                }
            }
        }
        assert_eq!(b.in_blocks(), seen.iter().sum::<usize>());
        for k in 0..b.rest.colours() {
            for &e in b.rest.colour(k) {
                seen[e as usize] += 1;
            }
        }
        assert!(
            seen.iter().all(|&s| s == 1),
            "an element is not split exactly once"
        );
        // No two elements of a colour of the rest share a particle.
        for k in 0..b.rest.colours() {
            let mut owner = vec![usize::MAX; n];
            for &e in b.rest.colour(k) {
                for &i in &nodes[e as usize * arity..][..arity] {
                    let e = e as usize;
                    assert!(
                        owner[i] == usize::MAX || owner[i] == e,
                        "colour {k} shares {i}"
                    );
                    owner[i] = e;
                }
            }
        }
    }

    #[test]
    fn the_range_count_is_even_from_two_ranges_on_and_at_most_the_maximum() {
        let b = BLOCK_PARTICLES;
        let cases = [
            (0, 1),
            (b - 1, 1),
            (2 * b - 1, 1),
            (2 * b, 2),
            (3 * b, 2),
            (9 * b + 800, 8),
            (64 * b, 64),
            (65 * b, 64),
            (1000 * b, MAX_BLOCKS),
        ];
        for (n, ranges) in cases {
            assert_eq!(range_count(n), ranges, "{n} particles");
        }
    }

    #[test]
    fn a_grid_splits_into_row_bands_with_few_elements_between_them() {
        let side = 100;
        let nodes = grid_triangles(side);
        let b = Blocked::new(side * side, 3, &nodes);
        check_split(side * side, 3, &nodes, &b);
        // 9 ranges of 1,024 particles, rounded down to an even count.
        assert_eq!(b.blocks(), 8);
        let count = nodes.len() / 3;
        // 8 bands of 12.5 rows: 7 seams of 2 · 99 triangles (or 4 where a band boundary
        // falls inside a row).
        assert!(
            count - b.in_blocks() <= 7 * 4 * 99,
            "{} between bands",
            count - b.in_blocks()
        );
        // Each seam's triangles share particles with few others: a handful of colours.
        assert!(b.rest.colours() <= 13, "{} colours", b.rest.colours());
    }
}
