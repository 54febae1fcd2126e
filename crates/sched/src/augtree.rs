//! An ordered set that also keeps, for every subtree, the minimum of a value its members carry: the
//! structure of Linux's augmented red-black tree of the fair class (ordered by virtual deadline,
//! each node knowing its subtree's smallest virtual runtime, `min_vruntime`), as [`crate::eevdf`]
//! uses it to find the eligible task with the earliest deadline in O(log n).
//!
//! **Shape.** A treap (Seidel and Aragon, "Randomized Search Trees", Algorithmica 1996): a binary
//! search tree by key that is also a heap by a random priority drawn when a member joins, so its
//! expected depth is O(log n) whatever order members join and leave in. The generator is PCG32 from a
//! fixed seed: the tree's shape is the same every run, and nothing read out of the tree depends on
//! its shape anyway (only on the keys and values in it).
//!
//! **Members are slots.** A member is a small index (a task id): its node lives at that index (plus
//! one: index 0 is a sentinel standing for "no node") of an arena, so joining and leaving allocate
//! nothing once the arena has grown to the largest slot, and a member is removed by its slot
//! without searching for its key. (Packing the members' nodes at the front of the arena instead, a
//! leaving node replaced by the last, was measured slower: moving a node touches its parent and
//! children too.)
//!
//! **Invariants** (checked by `check` in the tests): keys are distinct; every key in a node's left
//! subtree is smaller than its own and every key in its right subtree larger; a node's priority is
//! at least its children's; a node's `min` is the smallest `val` of its subtree and its `lmin` that
//! of its left subtree (`i64::MAX` without one); the sentinel is no member, with `min` `i64::MAX`.
//!
//! **Branches.** Which way a descent goes is a coin toss at every level, so a branch on it is
//! mispredicted half the time (measured at ab77721: 2.35 M mispredictions for 385 M instructions
//! where EDF has 0.89 M, in a run of 1000 tasks; 1.51 M since). The descents compute the side
//! instead, as an index into a node's `[left, right]` children, and read a missing child's minimum
//! from the sentinel rather than test for it; the search decides from the node it stands on
//! (`lmin`), so that its only branches on the data are its end and the bounds checks.
//! Keys compare without branches when `K` does (eevdf packs its pair in a `u128`).
//!
//! **Cost.** `insert` and `first_where` take O(depth), expected O(log n); `remove` finds its node
//! by slot and goes up by parent links only while a subtree's minimum changes; `first` is O(1),
//! the leftmost member being kept as the kernel caches it, and `first_where` tries it first (the
//! kernel's fast path). `iter` walks the members in key order in O(n).

/// No node: index 0 of the arena, a sentinel whose subtree minimum is `i64::MAX`, so that a
/// missing child's minimum is read like any other (no branch); member slot `s` lives at `s + 1`.
const NIL: u32 = 0;

#[derive(Clone, Copy, Debug, Default)]
struct Node<K> {
    key: K,
    /// The member's value, and the smallest value of the subtree rooted here.
    val: i64,
    min: i64,
    /// The smallest value of the left subtree (`i64::MAX` without one): the search reads it from
    /// the node it stands on rather than from the child.
    lmin: i64,
    /// Heap priority: a parent's is at least its children's; 0 for a slot that is not a member.
    prio: u32,
    /// The left and right children: a descent indexes them by the side it takes instead of
    /// branching on it.
    child: [u32; 2],
    parent: u32,
}

impl<K: Default> Node<K> {
    /// A slot not in the tree.
    fn unlinked() -> Self {
        Node {
            key: K::default(),
            val: 0,
            min: i64::MAX,
            lmin: i64::MAX,
            prio: 0,
            child: [NIL; 2],
            parent: NIL,
        }
    }
}

impl<K> Node<K> {
    fn linked(&self) -> bool {
        self.prio != 0
    }
}

/// An ordered set of slots by distinct keys `K`, each slot carrying a value whose minimum is kept
/// per subtree (see the module documentation).
#[derive(Clone, Debug)]
pub(crate) struct MinTree<K> {
    nodes: Vec<Node<K>>,
    root: u32,
    /// The member with the smallest key (the kernel's cached leftmost node).
    leftmost: u32,
    len: usize,
    /// The generator of the priorities.
    rng: rand_pcg::Pcg32,
}

impl<K: Ord + Copy + Default> MinTree<K> {
    /// An empty tree.
    pub fn new() -> Self {
        let rng = rand::SeedableRng::seed_from_u64(0);
        MinTree { nodes: vec![Node::unlinked()], root: NIL, leftmost: NIL, len: 0, rng }
    }

    /// The number of members.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether `slot` is a member.
    #[cfg(test)]
    pub fn contains(&self, slot: usize) -> bool {
        self.nodes.get(slot + 1).is_some_and(Node::linked)
    }

    /// The key and value `slot` joined with, if it is a member.
    pub fn get(&self, slot: usize) -> Option<(K, i64)> {
        self.nodes.get(slot + 1).filter(|n| n.linked()).map(|n| (n.key, n.val))
    }

    /// A priority for a joining member (never 0, which marks a slot not in the tree).
    fn prio(&mut self) -> u32 {
        rand::RngCore::next_u32(&mut self.rng) | 1
    }

    /// Adds `slot` with `key` and `val`. `slot` must not be a member, and `key` must differ from every
    /// member's.
    pub fn insert(&mut self, slot: usize, key: K, val: i64) {
        let i = slot + 1;
        if self.nodes.len() <= i {
            self.nodes.resize(i + 1, Node::unlinked());
        }
        assert!(!self.nodes[i].linked(), "slot {slot} inserted twice");
        let x = i as u32;
        let prio = self.prio();
        self.nodes[i] = Node { key, val, min: val, lmin: i64::MAX, prio, child: [NIL; 2], parent: NIL };
        self.len += 1;
        if self.root == NIL {
            (self.root, self.leftmost) = (x, x);
            return;
        }
        // Down to a leaf, every subtree on the way now holding `val` (the side taken computed, not
        // branched on: it is a coin toss at every level).
        let (mut n, mut leftmost) = (self.root, true);
        loop {
            let node = &mut self.nodes[n as usize];
            node.min = node.min.min(val);
            let side = usize::from(key > node.key);
            let lmin = node.lmin.min(val);
            node.lmin = if side == 0 { lmin } else { node.lmin };
            leftmost &= side == 0;
            let next = node.child[side];
            if next == NIL {
                node.child[side] = x;
                break;
            }
            n = next;
        }
        self.nodes[i].parent = n;
        if leftmost {
            self.leftmost = x;
        }
        // Up while its priority is above its parent's (rotations keep every subtree's members but
        // the two rotated ones', so only theirs change).
        loop {
            let p = self.nodes[i].parent;
            if p == NIL || self.nodes[p as usize].prio >= prio {
                break;
            }
            self.rotate_up(x);
        }
    }

    /// Node `x` takes the place of its parent `p`, which becomes its child.
    fn rotate_up(&mut self, x: u32) {
        let p = self.nodes[x as usize].parent;
        let g = self.nodes[p as usize].parent;
        let side = usize::from(self.nodes[p as usize].child[1] == x);
        let b = self.nodes[x as usize].child[1 - side];
        self.nodes[p as usize].child[side] = b;
        self.set_parent(b, p);
        self.nodes[x as usize].child[1 - side] = p;
        self.nodes[p as usize].parent = x;
        self.nodes[x as usize].parent = g;
        self.replace_child(g, p, x);
        self.pull(p);
        self.pull(x);
    }

    /// `n`'s parent is `parent` (the sentinel's is written too, and never read).
    fn set_parent(&mut self, n: u32, parent: u32) {
        self.nodes[n as usize].parent = parent;
    }

    /// `parent`'s child `old` becomes `new` (the root if `parent` is none).
    fn replace_child(&mut self, parent: u32, old: u32, new: u32) {
        if parent == NIL {
            self.root = new;
        } else {
            let node = &mut self.nodes[parent as usize];
            let side = usize::from(node.child[1] == old);
            node.child[side] = new;
        }
        self.set_parent(new, parent);
    }

    /// Removes `slot`; false if it was not a member.
    pub fn remove(&mut self, slot: usize) -> bool {
        let i = slot + 1;
        if !self.nodes.get(i).is_some_and(Node::linked) {
            return false;
        }
        let x = i as u32;
        let Node { child: [left, right], parent, .. } = self.nodes[i];
        if self.leftmost == x {
            // It has no left child: the next is the first of its right subtree, else its parent.
            self.leftmost = if right == NIL { parent } else { self.first_under(right) };
        }
        let c = self.merge(left, right);
        self.replace_child(parent, x, c);
        // Up while a subtree's minimum changes (above one that keeps it, none does).
        let mut n = parent;
        while n != NIL {
            let old = self.nodes[n as usize].min;
            self.pull(n);
            if self.nodes[n as usize].min == old {
                break;
            }
            n = self.nodes[n as usize].parent;
        }
        let node = &mut self.nodes[i];
        (node.prio, node.child, node.parent) = (0, [NIL; 2], NIL);
        self.len -= 1;
        true
    }

    fn first_under(&self, mut n: u32) -> u32 {
        while self.nodes[n as usize].child[0] != NIL {
            n = self.nodes[n as usize].child[0];
        }
        n
    }

    /// The member with the smallest key.
    pub fn first(&self) -> Option<usize> {
        (self.leftmost != NIL).then(|| self.leftmost as usize - 1)
    }

    /// The member with the smallest key among those whose value satisfies `ok`, where `ok` is
    /// monotone: if it holds for a value it holds for every smaller one (as eligibility does for a
    /// virtual runtime). A subtree whose minimum fails `ok` holds no such member and is not entered,
    /// so this descends one path (or none: as the kernel's, it first tries the leftmost member).
    pub fn first_where(&self, ok: impl Fn(i64) -> bool) -> Option<usize> {
        if self.leftmost != NIL && ok(self.nodes[self.leftmost as usize].val) {
            return Some(self.leftmost as usize - 1);
        }
        let mut n = self.root;
        if n == NIL || !ok(self.nodes[n as usize].min) {
            return None;
        }
        // Invariant: the subtree at `n` holds a member satisfying `ok`, and every member before that
        // subtree in key order fails it. Each step reads only the node it stands on.
        loop {
            let node = &self.nodes[n as usize];
            // Both tests evaluated (`&`, not `&&`): which way the search goes is a coin toss, and
            // only the end of the search is a branch.
            let left = (node.child[0] != NIL) & ok(node.lmin);
            if !left & ok(node.val) {
                return Some(n as usize - 1);
            }
            n = node.child[usize::from(!left)];
        }
    }

    /// The members in key order.
    pub fn iter(&self) -> Iter<'_, K> {
        let mut it = Iter { tree: self, stack: Vec::new() };
        it.push_left(self.root);
        it
    }

    fn pull(&mut self, n: u32) {
        let [left, right] = self.nodes[n as usize].child;
        let (lmin, rmin) = (self.nodes[left as usize].min, self.nodes[right as usize].min);
        let node = &mut self.nodes[n as usize];
        node.lmin = lmin;
        node.min = node.val.min(lmin).min(rmin);
    }

    /// Joins subtrees `a` and `b`, every key of `a` smaller than every key of `b`; returns the root
    /// (its parent left for the caller to set). Down the right spine of `a` and the left spine of
    /// `b`, the node of higher priority next each time, then the minima pulled back up that path.
    fn merge(&mut self, mut a: u32, mut b: u32) -> u32 {
        if a == NIL {
            return b;
        }
        if b == NIL {
            return a;
        }
        let root = if self.nodes[a as usize].prio > self.nodes[b as usize].prio { a } else { b };
        // `last` is the node last taken; the next one becomes its child on side `side`.
        let (mut last, mut side) = (NIL, 0);
        while a != NIL && b != NIL {
            let take_a = self.nodes[a as usize].prio > self.nodes[b as usize].prio;
            let t = if take_a { a } else { b };
            if last != NIL {
                self.nodes[last as usize].child[side] = t;
                self.nodes[t as usize].parent = last;
            }
            // A node from `a` keeps its left subtree and takes the rest on its right; one from `b`
            // keeps its right and takes the rest on its left.
            (last, side) = (t, usize::from(take_a));
            if take_a {
                a = self.nodes[a as usize].child[1];
            } else {
                b = self.nodes[b as usize].child[0];
            }
        }
        let rest = if a == NIL { b } else { a };
        self.nodes[last as usize].child[side] = rest;
        self.set_parent(rest, last);
        // Every node taken, from the last up to the root, has a new subtree on one side.
        let mut n = last;
        loop {
            self.pull(n);
            if n == root {
                break;
            }
            n = self.nodes[n as usize].parent;
        }
        root
    }

    /// Checks every invariant of the module documentation; returns the depth.
    #[cfg(test)]
    pub fn check(&self) -> usize
    where
        K: std::fmt::Debug,
    {
        fn walk<K: Ord + Copy + std::fmt::Debug>(
            t: &MinTree<K>,
            n: u32,
            lo: Option<K>,
            hi: Option<K>,
            count: &mut usize,
        ) -> usize {
            if n == NIL {
                return 0;
            }
            *count += 1;
            let node = &t.nodes[n as usize];
            assert!(node.linked(), "slot {n} in the tree but not a member");
            assert!(lo.is_none_or(|lo| lo < node.key) && hi.is_none_or(|hi| node.key < hi), "order at {n}");
            let mut min = node.val;
            for c in node.child {
                if c != NIL {
                    assert!(t.nodes[c as usize].prio <= node.prio, "heap at {n}");
                    min = min.min(t.nodes[c as usize].min);
                }
            }
            assert_eq!(node.min, min, "subtree minimum at {n}");
            let [left, right] = node.child;
            let lmin = if left == NIL { i64::MAX } else { t.nodes[left as usize].min };
            assert_eq!(node.lmin, lmin, "left subtree's minimum at {n}");
            for c in node.child {
                if c != NIL {
                    assert_eq!(t.nodes[c as usize].parent, n, "parent of {c}");
                }
            }
            let l = walk(t, left, lo, Some(node.key), count);
            let r = walk(t, right, Some(node.key), hi, count);
            1 + l.max(r)
        }
        let mut count = 0;
        let depth = walk(self, self.root, None, None, &mut count);
        if self.root != NIL {
            assert_eq!(self.nodes[self.root as usize].parent, NIL, "the root's parent");
            assert_eq!(self.leftmost, self.first_under(self.root), "the leftmost member");
        } else {
            assert_eq!(self.leftmost, NIL, "the leftmost member of an empty tree");
        }
        assert_eq!(count, self.len);
        assert_eq!(self.nodes.iter().filter(|n| n.linked()).count(), self.len);
        let sentinel = &self.nodes[NIL as usize];
        assert!(!sentinel.linked() && sentinel.min == i64::MAX && sentinel.child == [NIL; 2], "the sentinel");
        depth
    }
}

/// The members of a [`MinTree`] in key order.
pub(crate) struct Iter<'a, K> {
    tree: &'a MinTree<K>,
    stack: Vec<u32>,
}

impl<K> Iter<'_, K> {
    fn push_left(&mut self, mut n: u32) {
        while n != NIL {
            self.stack.push(n);
            n = self.tree.nodes[n as usize].child[0];
        }
    }
}

impl<K> Iterator for Iter<'_, K> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        let n = self.stack.pop()?;
        self.push_left(self.tree.nodes[n as usize].child[1]);
        Some(n as usize - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    #[derive(Clone, Debug)]
    enum Op {
        Insert(usize, i64, i64),
        Remove(usize),
        Find(i64),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (0usize..64, -20i64..20, -50i64..50).prop_map(|(s, k, v)| Op::Insert(s, k, v)),
            2 => (0usize..64).prop_map(Op::Remove),
            2 => (-60i64..60).prop_map(Op::Find),
        ]
    }

    proptest! {
        /// Against a `BTreeMap` by key, walked in order: the same members in the same order, the
        /// same first member, and the same first member whose value is at most a bound.
        #[test]
        fn agrees_with_a_sorted_map_walked_in_order(ops in prop::collection::vec(op(), 1..400)) {
            let mut tree = MinTree::<(i64, u64)>::new();
            let mut map: BTreeMap<(i64, u64), (usize, i64)> = BTreeMap::new();
            let mut seq = 0;
            for op in ops {
                match op {
                    Op::Insert(s, k, v) => {
                        if !tree.contains(s) {
                            seq += 1;
                            tree.insert(s, (k, seq), v);
                            map.insert((k, seq), (s, v));
                        }
                    }
                    Op::Remove(s) => {
                        let key = tree.get(s).map(|(k, _)| k);
                        prop_assert_eq!(tree.remove(s), key.is_some());
                        if let Some(k) = key {
                            map.remove(&k);
                        }
                    }
                    Op::Find(bound) => {
                        let want = map.values().find(|&&(_, v)| v <= bound).map(|&(s, _)| s);
                        prop_assert_eq!(tree.first_where(|v| v <= bound), want);
                    }
                }
                tree.check();
                prop_assert_eq!(tree.len(), map.len());
                prop_assert_eq!(tree.first(), map.values().next().map(|&(s, _)| s));
                let order: Vec<usize> = map.values().map(|&(s, _)| s).collect();
                prop_assert_eq!(tree.iter().collect::<Vec<_>>(), order);
            }
        }
    }

    #[test]
    fn stays_shallow_whatever_the_order_of_keys() {
        // Keys joining in increasing order (a plain search tree's worst case) and leaving from the
        // front, as deadlines do in a queue.
        let mut t = MinTree::<(i64, u64)>::new();
        for i in 0..10_000usize {
            t.insert(i, (i as i64, 0), -(i as i64));
        }
        let depth = t.check();
        assert!(depth < 60, "depth {depth} for 10,000 members");
        for i in 0..5_000usize {
            assert!(t.remove(i));
        }
        assert!(!t.remove(0), "already gone");
        let depth = t.check();
        assert!(depth < 55, "depth {depth} for 5,000 members");
        assert_eq!(t.first(), Some(5_000));
        // Values decrease with the key: only the last member has a value at most −9,999.
        assert_eq!(t.first_where(|v| v <= -9_999), Some(9_999));
        assert_eq!(t.first_where(|v| v <= -20_000), None);
    }
}
