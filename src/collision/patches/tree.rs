//! The hierarchy of cloth patches that the culling tests: built once per garment from its
//! triangles alone, by merging neighbouring patches level by level (each patch with the
//! unmerged neighbour it shares the most edges with), keeping every patch a topological
//! disc: a triangle is one, and two discs sharing one run of edges make one.
use std::cmp::Reverse;
use std::collections::HashMap;
use std::ops::Range;

/// A patch of the hierarchy.
#[derive(Debug, Clone)]
pub(super) struct Node {
    /// The two patches it merges (earlier nodes), or `None` for a single triangle.
    pub children: Option<(usize, usize)>,
    /// Its triangles: this range of [`Tree::order`].
    pub triangles: Range<usize>,
    /// Its boundary, each edge in its triangle's direction: this range of
    /// [`Tree::edges`] (empty for patches too small to cull).
    pub boundary: Range<usize>,
}

/// Where a patch's normal cone comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Kind {
    /// Too small to cull (fewer than [`MIN_TRIANGLES`]), or inside a base patch.
    Small,
    /// The smallest patches tested: the cone is taken over their triangles.
    Base,
    /// Merged from two patches that are each a base or merged: the cone is merged.
    Merged,
}

/// The patches, children before parents.
#[derive(Debug, Clone, Default)]
pub(super) struct Tree {
    pub nodes: Vec<Node>,
    /// The patches that merged with no other (one per piece of cloth, or more).
    pub roots: Vec<usize>,
    /// The triangles, each patch's contiguous.
    pub order: Vec<usize>,
    pub edges: Vec<(usize, usize)>,
    /// Per patch, where its cone comes from.
    pub kinds: Vec<Kind>,
    /// The base patches, and the merged ones (children before parents).
    pub bases: Vec<usize>,
    pub merged: Vec<usize>,
}

/// The fewest triangles of a patch worth culling: the base patches have at least this
/// many, and their children fewer (smaller patches hold mostly neighbours, and a cone per
/// triangle merged up the tree costs more than the few pairs it culls).
pub(super) const MIN_TRIANGLES: usize = 8;

impl Tree {
    /// Builds the hierarchy over `triangles`.
    pub fn build(triangles: &[[usize; 3]]) -> Tree {
        let mut children: Vec<Option<(usize, usize)>> = vec![None; triangles.len()];
        let mut size: Vec<usize> = vec![1; triangles.len()];
        let mut boundary: Vec<Vec<(usize, usize)>> = (triangles.iter())
            .map(|&[a, b, c]| vec![(a, b), (b, c), (c, a)])
            .collect();
        let mut active: Vec<usize> = (0..triangles.len()).collect();
        loop {
            let mut owner: HashMap<(usize, usize), usize> = HashMap::new();
            for (i, &n) in active.iter().enumerate() {
                for &e in &boundary[n] {
                    owner.insert(e, i);
                }
            }
            let mut merged = vec![false; active.len()];
            let mut next = Vec::new();
            for i in 0..active.len() {
                if merged[i] {
                    continue;
                }
                // The unmerged neighbours and how many edges each shares.
                let mut shared: Vec<(usize, usize)> = Vec::new();
                for &(a, b) in &boundary[active[i]] {
                    match owner.get(&(b, a)) {
                        Some(&j) if j != i && !merged[j] => {
                            match shared.iter_mut().find(|s| s.0 == j) {
                                Some(s) => s.1 += 1,
                                None => shared.push((j, 1)),
                            }
                        }
                        _ => {}
                    }
                }
                shared.sort_unstable_by_key(|&(j, count)| (Reverse(count), size[active[j]], j));
                let x = active[i];
                let found = shared.iter().find_map(|&(j, _)| {
                    let y = active[j];
                    merge_discs(&boundary[x], &boundary[y]).map(|b| (j, y, b))
                });
                if let Some((j, y, b)) = found {
                    merged[i] = true;
                    merged[j] = true;
                    children.push(Some((x, y)));
                    size.push(size[x] + size[y]);
                    boundary.push(b);
                    next.push(children.len() - 1);
                    // A merged patch too small to cull needs its boundary no more.
                    for c in [x, y] {
                        if size[c] < MIN_TRIANGLES {
                            boundary[c] = Vec::new();
                        }
                    }
                }
            }
            if next.is_empty() {
                break;
            }
            next.extend((0..active.len()).filter(|&i| !merged[i]).map(|i| active[i]));
            active = next;
        }
        active.sort_unstable();
        // Each patch's triangles in a row, from the roots down.
        let mut order = Vec::with_capacity(triangles.len());
        let mut ranges = vec![0..0; children.len()];
        for &root in &active {
            place(root, &children, &mut order, &mut ranges);
        }
        let kinds: Vec<Kind> = (0..children.len())
            .map(|n| match children[n] {
                _ if size[n] < MIN_TRIANGLES => Kind::Small,
                Some((l, r)) if size[l] >= MIN_TRIANGLES && size[r] >= MIN_TRIANGLES => {
                    Kind::Merged
                }
                _ => Kind::Base,
            })
            .collect();
        let of_kind = |k: Kind| {
            (0..kinds.len())
                .filter(|&n| kinds[n] == k)
                .collect::<Vec<_>>()
        };
        let (bases, merged) = (of_kind(Kind::Base), of_kind(Kind::Merged));
        let mut edges = Vec::new();
        let nodes = (0..children.len())
            .map(|n| {
                let start = edges.len();
                if kinds[n] != Kind::Small {
                    edges.extend(&boundary[n]);
                }
                Node {
                    children: children[n],
                    triangles: ranges[n].clone(),
                    boundary: start..edges.len(),
                }
            })
            .collect();
        Tree {
            nodes,
            roots: active,
            order,
            edges,
            kinds,
            bases,
            merged,
        }
    }
}

/// Appends the triangles of patch `n` to `order` (depth first), recording each patch's
/// range.
fn place(
    n: usize,
    children: &[Option<(usize, usize)>],
    order: &mut Vec<usize>,
    ranges: &mut [Range<usize>],
) {
    let mut stack = vec![(n, false)];
    while let Some((n, done)) = stack.pop() {
        match children[n] {
            None => {
                ranges[n] = order.len()..order.len() + 1;
                order.push(n);
            }
            Some((l, r)) if done => ranges[n] = ranges[l].start..ranges[r].end,
            Some((l, r)) => stack.extend([(n, true), (r, false), (l, false)]),
        }
    }
}

/// The boundary of two discs with boundaries `x` and `y` (directed edges) merged, if it is
/// one simple loop (they share one run of edges and touch nowhere else): the edges of
/// either whose reverse the other does not hold.
fn merge_discs(x: &[(usize, usize)], y: &[(usize, usize)]) -> Option<Vec<(usize, usize)>> {
    let reversed = |e: &(usize, usize), other: &[(usize, usize)]| other.contains(&(e.1, e.0));
    let (small, large) = if x.len() <= y.len() { (x, y) } else { (y, x) };
    let shared: Vec<(usize, usize)> = small
        .iter()
        .filter(|e| reversed(e, large))
        .copied()
        .collect();
    let kept = |e: &&(usize, usize)| !shared.contains(e) && !shared.contains(&(e.1, e.0));
    let edges: Vec<(usize, usize)> = x.iter().chain(y).filter(kept).copied().collect();
    // One loop through all the edges, no particle left twice.
    let mut next: HashMap<usize, usize> = HashMap::with_capacity(edges.len());
    for &(a, b) in &edges {
        if next.insert(a, b).is_some() {
            return None;
        }
    }
    let &(start, mut p) = edges.first()?;
    let mut steps = 1;
    while p != start && steps <= edges.len() {
        p = *next.get(&p)?;
        steps += 1;
    }
    (p == start && steps == edges.len()).then_some(edges)
}

impl Tree {
    /// The splits of [`Bvh::from_tree`](crate::collision::bvh::Bvh::from_tree) that make
    /// its nodes these patches: items grouped by patch, patch `n`'s being `bounds[n]` of
    /// their order (nested as the patches), with leaves of at most `leaf` items. A patch
    /// without items is passed over.
    pub fn splitter(
        &self,
        bounds: Vec<Range<usize>>,
        leaf: usize,
    ) -> impl Fn(Range<usize>) -> Option<(Range<usize>, Range<usize>)> {
        // The highest patch of each range (parents come after their children).
        let mut by_range: HashMap<(usize, usize), usize> = HashMap::new();
        for n in (0..self.nodes.len()).rev() {
            by_range
                .entry((bounds[n].start, bounds[n].end))
                .or_insert(n);
        }
        let roots: Vec<usize> = (self.roots.iter())
            .filter(|&&n| !bounds[n].is_empty())
            .copied()
            .collect();
        let nodes = self.nodes.clone();
        move |range: Range<usize>| {
            if range.len() <= leaf {
                return None;
            }
            if let Some(&found) = by_range.get(&(range.start, range.end)) {
                let mut n = found;
                while let Some((l, r)) = nodes[n].children {
                    match (bounds[l].is_empty(), bounds[r].is_empty()) {
                        (true, _) => n = r,
                        (_, true) => n = l,
                        _ => return Some((bounds[l].clone(), bounds[r].clone())),
                    }
                }
                return None;
            }
            // Several roots (pieces of cloth), each whole: halve their list.
            let inside: Vec<usize> = (roots.iter())
                .filter(|&&n| range.start <= bounds[n].start && bounds[n].end <= range.end)
                .copied()
                .collect();
            let mid = bounds[*inside.get(inside.len() / 2)?].start;
            (range.start < mid && mid < range.end).then_some((range.start..mid, mid..range.end))
        }
    }
}

impl Tree {
    /// The tree without its patches too small to cull ([`Kind::Small`]): they serve only
    /// to build hierarchies over the patches ([`Tree::splitter`]). A base patch keeps no
    /// children; the triangles' order stays.
    pub fn without_small(self) -> Tree {
        let mut index = vec![usize::MAX; self.nodes.len()];
        let mut nodes = Vec::new();
        for (n, node) in self.nodes.iter().enumerate() {
            if self.kinds[n] == Kind::Small {
                continue;
            }
            index[n] = nodes.len();
            let children = match (self.kinds[n], node.children) {
                (Kind::Merged, Some((l, r))) => Some((index[l], index[r])),
                _ => None,
            };
            nodes.push(Node {
                children,
                ..node.clone()
            });
        }
        let kinds = (0..self.nodes.len())
            .filter(|&n| self.kinds[n] != Kind::Small)
            .map(|n| self.kinds[n])
            .collect();
        let remap = |list: &[usize]| -> Vec<usize> {
            (list.iter())
                .filter(|&&n| index[n] != usize::MAX)
                .map(|&n| index[n])
                .collect()
        };
        Tree {
            roots: remap(&self.roots),
            bases: remap(&self.bases),
            merged: remap(&self.merged),
            nodes,
            kinds,
            order: self.order,
            edges: self.edges,
        }
    }
}
