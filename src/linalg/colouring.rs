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
        // Colours used around each particle, as a bit set of 64-colour words.
        let mut used: Vec<Vec<u64>> = vec![Vec::new(); n];
        let mut colour = Vec::with_capacity(count);
        let mut taken: Vec<u64> = Vec::new();
        for e in nodes.chunks_exact(arity.max(1)).take(count) {
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
        for (e, &c) in colour.iter().enumerate() {
            elements[fill[c]] = e as u32;
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

#[cfg(test)]
mod tests {
    use super::Colouring;
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

    #[test]
    fn a_triangle_grid_needs_few_colours_and_no_colour_shares_a_particle() {
        let side = 30;
        let mut nodes = Vec::new();
        for y in 0..side - 1 {
            for x in 0..side - 1 {
                let i = y * side + x;
                nodes.extend([i, i + 1, i + side]);
                nodes.extend([i + 1, i + side + 1, i + side]);
            }
        }
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
    }
}
