//! Bounding volume hierarchy of axis-aligned boxes over triangles: the tree is built once
//! per topology (median splits), its boxes are refitted every step to the swept triangles.
use crate::Vec3;
use std::ops::Range;

/// An axis-aligned box.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Aabb {
    /// Lower corner.
    pub min: Vec3,
    /// Upper corner.
    pub max: Vec3,
}

impl Aabb {
    /// The empty box (contains nothing, grows by union).
    pub fn empty() -> Self {
        Aabb {
            min: Vec3::repeat(f64::INFINITY),
            max: Vec3::repeat(f64::NEG_INFINITY),
        }
    }

    /// Grows to contain `p`.
    pub fn include(&mut self, p: Vec3) {
        self.min = self.min.inf(&p);
        self.max = self.max.sup(&p);
    }

    /// Union with `o`.
    pub fn merge(&self, o: &Aabb) -> Aabb {
        Aabb {
            min: self.min.inf(&o.min),
            max: self.max.sup(&o.max),
        }
    }

    /// Grown by `r` on every side.
    pub fn inflate(&self, r: f64) -> Aabb {
        Aabb {
            min: self.min - Vec3::repeat(r),
            max: self.max + Vec3::repeat(r),
        }
    }

    /// True if the boxes overlap (touching counts).
    pub fn overlaps(&self, o: &Aabb) -> bool {
        // Without short-circuits: which axis separates two boxes is unpredictable, and
        // the six comparisons cost less than the mispredicted branches (most of the box
        // tests of a self-collision search fail).
        let (a, b) = (self, o);
        (a.min.x <= b.max.x)
            & (b.min.x <= a.max.x)
            & (a.min.y <= b.max.y)
            & (b.min.y <= a.max.y)
            & (a.min.z <= b.max.z)
            & (b.min.z <= a.max.z)
    }
}

#[derive(Debug, Clone)]
struct Node {
    bounds: Aabb,
    /// Leaf: items `first..first+count` of `order`; inner: children `first`, `first + 1`.
    first: usize,
    count: usize,
    leaf: bool,
}

/// The hierarchy over `n` items (triangles), each refitted from its own box.
#[derive(Debug, Clone)]
pub struct Bvh {
    nodes: Vec<Node>,
    order: Vec<usize>,
    /// Item boxes in tree order (`order`), each with its item index.
    items: Vec<(Aabb, usize)>,
    /// Per node (empty for inner nodes): the pairs of positions in the leaf whose items
    /// [`Bvh::overlapping_pairs`] may pair, where [`Bvh::exclude_within_leaves`] set them.
    within: Option<Vec<Vec<(u8, u8)>>>,
}

const LEAF_SIZE: usize = 4;
/// Items per parallel task of [`Bvh::refit_with`] (scheduling only).
const REFIT_ITEMS: usize = 512;
/// Nodes per parallel task of the leaves' refit (scheduling only).
const REFIT_NODES: usize = 256;
/// Largest leaf of [`Bvh::build_with_leaves`].
pub const MAX_LEAF_SIZE: usize = 16;

impl Bvh {
    /// Builds the tree over items with boxes `boxes` (median split on the longest axis of
    /// the centroids).
    pub fn build(boxes: &[Aabb]) -> Self {
        Self::build_with_leaves(boxes, LEAF_SIZE)
    }

    /// [`Bvh::build`] with leaves of up to `leaf_size` items (clamped to `1..=`
    /// [`MAX_LEAF_SIZE`]). Larger leaves trade node visits for box tests: they pay where
    /// most items overlap their neighbours anyway (see `EDGE_LEAF_SIZE` in
    /// `self_contact.rs`).
    pub fn build_with_leaves(boxes: &[Aabb], leaf_size: usize) -> Self {
        let leaf_size = leaf_size.clamp(1, MAX_LEAF_SIZE);
        let centroids: Vec<Vec3> = boxes.iter().map(|b| 0.5 * (b.min + b.max)).collect();
        let median = |order: &mut [usize], range: Range<usize>| {
            if range.len() <= leaf_size {
                return None;
            }
            let items = &mut order[range.clone()];
            let mut cb = Aabb::empty();
            for &i in items.iter() {
                cb.include(centroids[i]);
            }
            let ext = cb.max - cb.min;
            let axis = if ext.x >= ext.y && ext.x >= ext.z {
                0
            } else if ext.y >= ext.z {
                1
            } else {
                2
            };
            let mid = items.len() / 2;
            items.select_nth_unstable_by(mid, |&a, &b| {
                centroids[a][axis].total_cmp(&centroids[b][axis])
            });
            Some(range.start + mid)
        };
        Self::grow(boxes, (0..boxes.len()).collect(), median)
    }

    /// The tree of a given hierarchy over the items with boxes `boxes`: `order` lists the
    /// items so that every subtree's are contiguous, and `split(range)` gives the two
    /// ranges a subtree's `range` of `order` splits into (non-empty, together `range`), or
    /// `None` to make it a leaf (at most [`MAX_LEAF_SIZE`] items; a leaf split further).
    pub fn from_tree(
        boxes: &[Aabb],
        order: Vec<usize>,
        split: impl Fn(Range<usize>) -> Option<(Range<usize>, Range<usize>)>,
    ) -> Self {
        Self::grow(boxes, order, |_, range| {
            split(range).map(|(left, _)| left.end)
        })
    }

    /// The tree over the items with boxes `boxes`, in the order `order`, grown from the
    /// root: `split(order, range)` may reorder the items of a node's `range` of `order`
    /// and gives where its children split it (`None` for a leaf; a leaf of more than
    /// [`MAX_LEAF_SIZE`] items is halved). Children are numbered after their parent.
    fn grow(
        boxes: &[Aabb],
        mut order: Vec<usize>,
        mut split: impl FnMut(&mut [usize], Range<usize>) -> Option<usize>,
    ) -> Self {
        let mut nodes = vec![Node {
            bounds: Aabb::empty(),
            first: 0,
            count: order.len(),
            leaf: true,
        }];
        let mut stack = vec![0usize];
        while let Some(ni) = stack.pop() {
            let (first, count) = (nodes[ni].first, nodes[ni].count);
            let mid = match split(&mut order, first..first + count) {
                // A leaf too large for the pair buffers: halve it.
                None if count > MAX_LEAF_SIZE => first + count / 2,
                None => continue,
                Some(mid) => mid,
            };
            debug_assert!(first < mid && mid < first + count);
            let left = nodes.len();
            for (start, end) in [(first, mid), (mid, first + count)] {
                nodes.push(Node {
                    bounds: Aabb::empty(),
                    first: start,
                    count: end - start,
                    leaf: true,
                });
            }
            nodes[ni] = Node {
                bounds: Aabb::empty(),
                first: left,
                count: 0,
                leaf: false,
            };
            stack.extend([left, left + 1]);
        }
        let mut bvh = Bvh {
            nodes,
            order,
            items: Vec::new(),
            within: None,
        };
        bvh.refit(boxes);
        bvh
    }

    /// Recomputes every node's box from the items' current boxes (children before parents:
    /// children always have larger indices than their parent). The item boxes are kept in
    /// tree order, next to their item index, so that a query reads a leaf contiguously.
    pub fn refit(&mut self, boxes: &[Aabb]) {
        self.refit_with(|i| boxes[i]);
    }

    /// [`Bvh::refit`] with item `i`'s box `box_of(i)`, computed in parallel straight into
    /// the tree-ordered item boxes (no intermediate array of boxes).
    pub fn refit_with(&mut self, box_of: impl Fn(usize) -> Aabb + Sync) {
        self.items.resize(self.order.len(), (Aabb::empty(), 0));
        let order = &self.order;
        crate::parallel::fill(&mut self.items, REFIT_ITEMS, |k| {
            (box_of(order[k]), order[k])
        });
        // The leaves from their items in parallel (most of the work), then the inner
        // nodes from their children, children first.
        let items = &self.items;
        crate::parallel::for_each_chunk(&mut self.nodes[..], REFIT_NODES, |_, part| {
            for node in part.iter_mut().filter(|n| n.leaf) {
                node.bounds = items[node.first..node.first + node.count]
                    .iter()
                    .fold(Aabb::empty(), |b, (item, _)| b.merge(item));
            }
        });
        for ni in (0..self.nodes.len()).rev() {
            let node = &self.nodes[ni];
            if !node.leaf {
                let (l, r) = (node.first, node.first + 1);
                self.nodes[ni].bounds = self.nodes[l].bounds.merge(&self.nodes[r].bounds);
            }
        }
    }

    /// Leaves [`Bvh::overlapping_pairs`] the pairs of items of one leaf for which
    /// `excluded(i, j)` holds untested from now on (a fixed relation of the items, such as
    /// two edges sharing a particle: the pairs are listed once per leaf, and most items of
    /// a leaf are neighbours). Its results are those of `test` with such pairs answering
    /// `None`, in the same order.
    pub fn exclude_within_leaves(&mut self, excluded: impl Fn(usize, usize) -> bool) {
        let lists = (self.nodes.iter())
            .map(|node| {
                let mut pairs = Vec::new();
                if node.leaf {
                    let items = &self.order[node.first..node.first + node.count];
                    for (k, &i) in items.iter().enumerate() {
                        for (l, &j) in items.iter().enumerate().skip(k + 1) {
                            if !excluded(i.min(j), i.max(j)) {
                                // Leaves hold at most MAX_LEAF_SIZE (16) items.
                                pairs.push((k as u8, l as u8));
                            }
                        }
                    }
                }
                pairs
            })
            .collect();
        self.within = Some(lists);
    }

    /// Calls `f(item)` for every item whose box overlaps `query` (in tree order).
    pub fn query(&self, query: &Aabb, f: impl FnMut(usize)) {
        self.query_pruned(query, |_| false, f);
    }

    /// [`Bvh::query`] without the subtrees of the nodes `n` for which `skip(n)` holds:
    /// their items are left out, the others come in the same order.
    pub fn query_pruned(
        &self,
        query: &Aabb,
        skip: impl Fn(usize) -> bool,
        mut f: impl FnMut(usize),
    ) {
        let wanted = |n: usize| self.nodes[n].bounds.overlaps(query) && !skip(n);
        if self.items.is_empty() {
            return;
        }
        // Depth-first with a fixed stack: median splits keep the depth ≤ log2(items) + 1,
        // and a depth-first walk holds at most depth + 1 nodes.
        let mut stack = [0usize; STACK];
        let mut top: usize = 0;
        let mut next = Some(0usize).filter(|&n| wanted(n));
        // Invariant: every node on the stack or in `next` overlaps the query (and is not
        // skipped); children are
        // tested before they are pushed (same visiting order as testing them on pop).
        while let Some(ni) = next.take().or_else(|| {
            top = top.checked_sub(1)?;
            Some(stack[top])
        }) {
            let node = &self.nodes[ni];
            if node.leaf {
                for (item, i) in &self.items[node.first..node.first + node.count] {
                    if item.overlaps(query) {
                        f(*i);
                    }
                }
            } else {
                let (left, right) = (node.first, node.first + 1);
                if wanted(right) {
                    stack[top] = right;
                    top += 1;
                }
                if wanted(left) {
                    next = Some(left);
                }
            }
        }
    }
}

/// The label of a node that [`Bvh::common_labels`] gives none.
pub const NO_LABEL: u32 = u32::MAX;

impl Bvh {
    /// The two children of node `n`, or `None` for a leaf.
    fn children(&self, n: usize) -> Option<(usize, usize)> {
        let node = &self.nodes[n];
        (!node.leaf).then_some((node.first, node.first + 1))
    }

    /// Labels every node bottom-up into `out`: a leaf `leaf(its items)`, an inner node
    /// its children's label where they agree, else [`NO_LABEL`].
    pub fn common_labels(&self, leaf: impl Fn(&[usize]) -> u32 + Sync, out: &mut Vec<u32>) {
        out.resize(self.nodes.len(), NO_LABEL);
        let (nodes, order) = (&self.nodes, &self.order);
        crate::parallel::fill(out, REFIT_NODES, |n| {
            let node = &nodes[n];
            if node.leaf {
                leaf(&order[node.first..node.first + node.count])
            } else {
                NO_LABEL
            }
        });
        for n in (0..nodes.len()).rev() {
            if let Some((l, r)) = self.children(n) {
                out[n] = if out[l] == out[r] { out[l] } else { NO_LABEL };
            }
        }
    }
}

/// A unit of work of [`Bvh::overlapping_pairs`]: the pairs inside one subtree, or the
/// pairs between two disjoint subtrees.
#[derive(Debug, Clone, Copy)]
enum PairTask {
    Within(usize),
    Between(usize, usize),
}

/// Work units [`Bvh::overlapping_pairs`] hands to rayon (the frontier of its top-level
/// expansion; only the scheduling granularity, not the result, depends on it).
const PAIR_TASKS: usize = 64;

impl Bvh {
    /// `test(i, j)` (with `i < j`) for every pair of distinct items whose boxes overlap,
    /// collecting the `Some` results: a traversal of the tree against itself, which visits
    /// each overlapping pair once and shares the descent among neighbouring items, where
    /// one [`Bvh::query`] per item visits each pair twice from the root. The order of the
    /// results depends only on the tree and the boxes (never on the number of threads):
    /// the top of the traversal is expanded into a fixed list of subtasks, run in parallel
    /// and concatenated in list order.
    ///
    /// Two items' boxes inflated by `r/2` each overlap exactly when one's box overlaps the
    /// other's inflated by `r`, so a proximity search at distance `r` refits with boxes
    /// inflated by `r/2`.
    pub fn overlapping_pairs<T: Send>(
        &self,
        test: impl Fn(usize, usize) -> Option<T> + Sync,
    ) -> Vec<T> {
        self.overlapping_pairs_pruned(|_, _| false, test)
    }

    /// [`Bvh::overlapping_pairs`] without the pairs within a subtree `n` for which
    /// `prune(n, n)` holds, nor between subtrees `a` and `b` for which `prune(a, b)` holds
    /// (`prune` must hold for the children's pairs of a pruned node, as for nodes sharing
    /// a label of [`Bvh::common_labels`]). The other results come in the same order.
    pub fn overlapping_pairs_pruned<T: Send>(
        &self,
        prune: impl Fn(usize, usize) -> bool + Sync,
        test: impl Fn(usize, usize) -> Option<T> + Sync,
    ) -> Vec<T> {
        let live = |t: &PairTask| match *t {
            PairTask::Within(n) => !prune(n, n),
            PairTask::Between(a, b) => !prune(a, b),
        };
        if self.items.is_empty() {
            return Vec::new();
        }
        let mut tasks: Vec<PairTask> = [PairTask::Within(0)].into_iter().filter(live).collect();
        while tasks.len() < PAIR_TASKS {
            let mut expanded = Vec::with_capacity(2 * tasks.len() + 1);
            let mut grew = false;
            for &t in &tasks {
                match self.expand(t) {
                    Some(children) => {
                        grew = true;
                        expanded.extend(children.into_iter().flatten().filter(live));
                    }
                    None => expanded.push(t),
                }
            }
            tasks = expanded;
            if !grew {
                break;
            }
        }
        crate::parallel::concat(&tasks[..], 1, |task| {
            let mut out = Vec::new();
            let mut stack = task.to_vec();
            // The buffer of each leaf task's candidate pairs (4 KB), zeroed once per subtask
            // rather than once per leaf task, where zeroing it would be a noticeable cost.
            let mut found = [(0usize, 0usize); MAX_LEAF_SIZE * MAX_LEAF_SIZE];
            while let Some(t) = stack.pop() {
                match self.expand(t) {
                    // Pushed in reverse so that the walk takes them in order.
                    Some(children) => {
                        stack.extend(children.into_iter().flatten().filter(live).rev());
                    }
                    None => self.leaf_pairs(t, &test, &mut found, &mut out),
                }
            }
            out
        })
    }

    /// The subtasks of `t` (`None` entries are pairs of subtrees whose boxes do not
    /// overlap), or `None` if `t` involves only leaves.
    fn expand(&self, t: PairTask) -> Option<[Option<PairTask>; 3]> {
        let nodes = &self.nodes;
        match t {
            PairTask::Within(n) if !nodes[n].leaf => {
                let (l, r) = (nodes[n].first, nodes[n].first + 1);
                let between = nodes[l].bounds.overlaps(&nodes[r].bounds);
                Some([
                    Some(PairTask::Within(l)),
                    Some(PairTask::Within(r)),
                    between.then_some(PairTask::Between(l, r)),
                ])
            }
            PairTask::Between(a, b) if !(nodes[a].leaf && nodes[b].leaf) => {
                // Descend the subtree that is not a leaf (the larger one if neither is).
                let split_a = !nodes[a].leaf && (nodes[b].leaf || nodes[a].count >= nodes[b].count);
                let (keep, split) = if split_a { (b, a) } else { (a, b) };
                let (l, r) = (nodes[split].first, nodes[split].first + 1);
                let pair = |c: usize| {
                    let task = if split_a {
                        PairTask::Between(c, keep)
                    } else {
                        PairTask::Between(keep, c)
                    };
                    nodes[c]
                        .bounds
                        .overlaps(&nodes[keep].bounds)
                        .then_some(task)
                };
                Some([pair(l), pair(r), None])
            }
            _ => None,
        }
    }

    /// The overlapping item pairs of a leaf task of [`Bvh::overlapping_pairs`].
    fn leaf_pairs<T>(
        &self,
        t: PairTask,
        test: &impl Fn(usize, usize) -> Option<T>,
        found: &mut [(usize, usize); MAX_LEAF_SIZE * MAX_LEAF_SIZE],
        out: &mut Vec<T>,
    ) {
        let range = |n: usize| {
            let node = &self.nodes[n];
            &self.items[node.first..node.first + node.count]
        };
        // The overlapping pairs are gathered first, without a branch per box test (most of
        // them fail, unpredictably), and tested after, in the same order.
        let mut count = 0;
        let mut check = |(bi, i): &(Aabb, usize), (bj, j): &(Aabb, usize)| {
            found[count] = (*i.min(j), *i.max(j));
            count += usize::from(bi.overlaps(bj));
        };
        match t {
            PairTask::Within(n) => {
                let items = range(n);
                match &self.within {
                    Some(lists) => {
                        for &(k, l) in &lists[n] {
                            check(&items[k as usize], &items[l as usize]);
                        }
                    }
                    None => {
                        for (k, a) in items.iter().enumerate() {
                            for b in &items[k + 1..] {
                                check(a, b);
                            }
                        }
                    }
                }
            }
            PairTask::Between(a, b) => {
                // Only an item overlapping the other leaf's box can overlap one of its
                // items, and two neighbouring leaves overlap in a thin strip.
                let (first, second) = (range(a), range(b));
                let (xs, nx) = overlapping(first, &self.nodes[b].bounds);
                let (ys, ny) = overlapping(second, &self.nodes[a].bounds);
                for &k in &xs[..nx] {
                    for &l in &ys[..ny] {
                        check(&first[k], &second[l]);
                    }
                }
            }
        }
        for &(i, j) in &found[..count] {
            out.extend(test(i, j));
        }
    }
}

/// The positions in `items` (at most [`MAX_LEAF_SIZE`]) of the items whose boxes overlap
/// `bounds`, in order, and their count.
fn overlapping(items: &[(Aabb, usize)], bounds: &Aabb) -> ([usize; MAX_LEAF_SIZE], usize) {
    let mut kept = [0; MAX_LEAF_SIZE];
    let mut count = 0;
    for (k, (b, _)) in items.iter().enumerate() {
        kept[count] = k;
        count += usize::from(b.overlaps(bounds));
    }
    (kept, count)
}

/// Capacity of the query stack: more than the depth + 1 of any tree over `usize` items.
const STACK: usize = 2 * usize::BITS as usize;

#[cfg(test)]
mod tests;
