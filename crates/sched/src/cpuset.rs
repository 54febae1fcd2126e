//! Small sets of CPUs for the core's bookkeeping: a bit set, and a first-come-first-served queue of
//! CPUs that must decide.

use std::collections::VecDeque;

use crate::CpuId;

/// A set of CPUs as a bit set (at most [`crate::MAX_CPUS`]), iterated in ascending order. CPUs 0 to
/// 63 in one word (the common machine: no loop, no bounds check), the others in more words.
#[derive(Clone, Debug, Default)]
pub struct CpuSet {
    lo: u64,
    hi: Vec<u64>,
}

impl CpuSet {
    /// The CPUs `0..n`.
    #[inline]
    pub fn full(n: usize) -> CpuSet {
        let mut s = CpuSet::default();
        for c in 0..n as CpuId {
            s.insert(c);
        }
        s
    }
    /// Adds `c`.
    #[inline]
    pub fn insert(&mut self, c: CpuId) {
        if c < 64 {
            self.lo |= 1 << c;
        } else {
            self.insert_hi(c);
        }
    }
    #[cold]
    fn insert_hi(&mut self, c: CpuId) {
        let w = c as usize / 64 - 1;
        if w >= self.hi.len() {
            self.hi.resize(w + 1, 0);
        }
        self.hi[w] |= 1 << (c % 64);
    }
    /// Removes `c`.
    #[inline]
    pub fn remove(&mut self, c: CpuId) {
        if c < 64 {
            self.lo &= !(1 << c);
        } else {
            self.remove_hi(c);
        }
    }
    #[cold]
    fn remove_hi(&mut self, c: CpuId) {
        if let Some(w) = self.hi.get_mut(c as usize / 64 - 1) {
            *w &= !(1 << (c % 64));
        }
    }
    /// Whether `c` is in the set.
    #[inline]
    pub fn contains(&self, c: CpuId) -> bool {
        if c < 64 {
            self.lo & (1 << c) != 0
        } else {
            self.contains_hi(c)
        }
    }
    #[cold]
    fn contains_hi(&self, c: CpuId) -> bool {
        self.hi.get(c as usize / 64 - 1).is_some_and(|w| w & (1 << (c % 64)) != 0)
    }
    /// Empty (the words above `lo` are only looked at on machines of more than 64 CPUs).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.lo == 0 && (self.hi.is_empty() || self.hi.iter().all(|&w| w == 0))
    }
    /// The members, ascending.
    #[inline]
    pub fn iter(&self) -> CpuIter<'_> {
        CpuIter { set: self, i: 0, w: self.lo }
    }
}

/// The members of a [`CpuSet`], in ascending order.
pub struct CpuIter<'a> {
    set: &'a CpuSet,
    /// The word being taken apart (0: `lo`, k: `hi[k - 1]`), and what is left of it.
    i: usize,
    w: u64,
}

impl Iterator for CpuIter<'_> {
    type Item = CpuId;
    #[inline]
    fn next(&mut self) -> Option<CpuId> {
        while self.w == 0 {
            self.w = *self.set.hi.get(self.i)?;
            self.i += 1;
        }
        let b = self.w.trailing_zeros();
        self.w &= self.w - 1;
        Some((self.i * 64) as CpuId + b)
    }
}

/// CPUs waiting to decide, first come first served, each once.
#[derive(Clone, Debug, Default)]
pub(crate) struct Resched {
    order: VecDeque<CpuId>,
    marked: CpuSet,
}

impl Resched {
    #[inline]
    pub(crate) fn push(&mut self, c: CpuId) {
        if !self.marked.contains(c) {
            self.marked.insert(c);
            self.order.push_back(c);
        }
    }
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<CpuId> {
        let c = self.order.pop_front()?;
        self.marked.remove(c);
        Some(c)
    }
    #[inline]
    pub(crate) fn remove(&mut self, c: CpuId) {
        if self.marked.contains(c) {
            self.marked.remove(c);
            self.order.retain(|&x| x != c);
        }
    }
    #[inline]
    pub(crate) fn contains(&self, c: CpuId) -> bool {
        self.marked.contains(c)
    }
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.order.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_of_more_than_64_cpus_iterate_in_order() {
        let mut s = CpuSet::default();
        for c in [3, 200, 64, 0, 127, 128] {
            s.insert(c);
        }
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![0, 3, 64, 127, 128, 200]);
        s.remove(64);
        s.remove(0);
        assert!(s.contains(200) && !s.contains(64) && !s.is_empty());
        assert_eq!(CpuSet::full(3).iter().collect::<Vec<_>>(), vec![0, 1, 2]);
    }

    #[test]
    fn resched_keeps_first_come_order_once_each() {
        let mut r = Resched::default();
        for c in [2, 0, 2, 1] {
            r.push(c);
        }
        r.remove(0);
        assert_eq!((r.pop(), r.pop(), r.pop()), (Some(2), Some(1), None));
        assert!(r.is_empty());
    }
}
