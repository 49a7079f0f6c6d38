//! An indexed 4-ary min-heap of (key, id) with O(log n) insert, re-key and
//! removal of any id: WFQ's heaps of head finish tags and of GPS finish times, and
//! LQD's longest-queue index (with negated keys), all keep one entry per class and
//! re-key it on every change of that class.
//!
//! Ties on the key go to the smaller id, so the order is a function of the inputs
//! alone (ids are class slots, allocated deterministically).

use std::cmp::Ordering;

const ABSENT: u32 = u32::MAX;

/// Children per node: a 4-ary heap is half as deep as a binary one and its
/// siblings share a cache line, which is what costs at 10,000 classes (the
/// engine's event queue is 4-ary for the same reason).
const ARITY: usize = 4;

#[derive(Debug, Clone, Default)]
pub struct IndexedHeap {
    /// (key, id), heap-ordered.
    heap: Vec<(f64, u32)>,
    /// Position of each id in `heap`, or `ABSENT`.
    pos: Vec<u32>,
}

#[inline]
fn before(a: (f64, u32), b: (f64, u32)) -> bool {
    match a.0.total_cmp(&b.0) {
        Ordering::Less => true,
        Ordering::Greater => false,
        Ordering::Equal => a.1 < b.1,
    }
}

impl IndexedHeap {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    #[inline]
    pub fn contains(&self, id: u32) -> bool {
        self.pos.get(id as usize).is_some_and(|&p| p != ABSENT)
    }

    /// The key of `id`, if present.
    pub fn key(&self, id: u32) -> Option<f64> {
        let p = *self.pos.get(id as usize)?;
        (p != ABSENT).then(|| self.heap[p as usize].0)
    }

    /// The smallest (id, key).
    #[inline]
    pub fn peek(&self) -> Option<(u32, f64)> {
        self.heap.first().map(|&(k, id)| (id, k))
    }

    /// Inserts `id` with `key`, or re-keys it if present.
    pub fn set(&mut self, id: u32, key: f64) {
        debug_assert!(!key.is_nan());
        let i = id as usize;
        if i >= self.pos.len() {
            self.pos.resize(i + 1, ABSENT);
        }
        let p = self.pos[i];
        if p == ABSENT {
            self.heap.push((key, id));
            let last = self.heap.len() - 1;
            self.pos[i] = last as u32;
            self.sift_up(last);
        } else {
            let p = p as usize;
            let old = self.heap[p].0;
            self.heap[p].0 = key;
            if key < old {
                self.sift_up(p);
            } else {
                self.sift_down(p);
            }
        }
    }

    /// Removes `id` if present.
    pub fn remove(&mut self, id: u32) {
        let Some(&p) = self.pos.get(id as usize) else {
            return;
        };
        if p == ABSENT {
            return;
        }
        let p = p as usize;
        let last = self.heap.len() - 1;
        self.heap.swap(p, last);
        self.heap.pop();
        self.pos[id as usize] = ABSENT;
        if p < last {
            self.pos[self.heap[p].1 as usize] = p as u32;
            // The moved entry may belong above or below its new place.
            self.sift_up(p);
            self.sift_down(p);
        }
    }

    /// Removes and returns the smallest (id, key).
    pub fn pop(&mut self) -> Option<(u32, f64)> {
        let top = self.peek()?;
        self.remove(top.0);
        Some(top)
    }

    fn sift_up(&mut self, mut i: usize) {
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if !before(self.heap[i], self.heap[parent]) {
                break;
            }
            self.swap(i, parent);
            i = parent;
        }
    }

    fn sift_down(&mut self, mut i: usize) {
        let n = self.heap.len();
        loop {
            let first = ARITY * i + 1;
            let mut best = i;
            for child in first..(first + ARITY).min(n) {
                if before(self.heap[child], self.heap[best]) {
                    best = child;
                }
            }
            if best == i {
                break;
            }
            self.swap(i, best);
            i = best;
        }
    }

    #[inline]
    fn swap(&mut self, a: usize, b: usize) {
        self.heap.swap(a, b);
        self.pos[self.heap[a].1 as usize] = a as u32;
        self.pos[self.heap[b].1 as usize] = b as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng;
    use rand::Rng as _;

    #[test]
    fn agrees_with_a_sorted_scan_under_random_operations() {
        let mut h = IndexedHeap::new();
        let mut model: Vec<Option<f64>> = vec![None; 64];
        let mut r = rng::stream(3, 0);
        for _ in 0..20_000 {
            let id = r.gen_range(0..64u32);
            match r.gen_range(0..3) {
                0 | 1 => {
                    // Few distinct keys, so ties are exercised.
                    let key = r.gen_range(0..16) as f64;
                    h.set(id, key);
                    model[id as usize] = Some(key);
                }
                _ => {
                    h.remove(id);
                    model[id as usize] = None;
                }
            }
            let want = model
                .iter()
                .enumerate()
                .filter_map(|(i, k)| k.map(|k| (i as u32, k)))
                .min_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
            assert_eq!(h.peek(), want);
            assert_eq!(h.len(), model.iter().flatten().count());
            assert_eq!(h.key(id), model[id as usize]);
        }
        while let Some((id, _)) = h.pop() {
            model[id as usize] = None;
        }
        assert!(model.iter().all(|k| k.is_none()));
    }
}
