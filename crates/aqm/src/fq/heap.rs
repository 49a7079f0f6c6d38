//! An indexed 4-ary min-heap of (key, id) with O(log n) insert, re-key and
//! removal of any id: WFQ's heaps of head finish tags and of GPS finish times, and
//! LQD's longest-queue index (with negated keys), all keep one entry per class and
//! re-key it on every change of that class.
//!
//! Ties on the key go to the smaller id, so the order is a function of the inputs
//! alone (ids are class slots, allocated deterministically).

const ABSENT: u32 = u32::MAX;

/// Children per node: a 4-ary heap is half as deep as a binary one and its
/// siblings share a cache line, which is what costs at 10,000 classes (the engine's
/// event queue is a radix heap: its keys only grow, where LQD's lengths go both ways).
const ARITY: usize = 4;

/// An entry: the key mapped to an order-preserving u64, then the id, packed so that
/// one integer comparison orders by (key, id).
type Entry = u128;

/// Maps an f64 to a u64 in the same order (IEEE 754's total order).
#[inline]
fn ordered(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | (1 << 63)
    }
}

#[inline]
fn unordered(u: u64) -> f64 {
    f64::from_bits(if u >> 63 == 1 { u & !(1 << 63) } else { !u })
}

#[inline]
fn entry(key: f64, id: u32) -> Entry {
    ((ordered(key) as u128) << 32) | id as u128
}

#[inline]
fn id_of(e: Entry) -> u32 {
    e as u32
}

#[inline]
fn key_of(e: Entry) -> f64 {
    unordered((e >> 32) as u64)
}

#[derive(Debug, Clone, Default)]
pub struct IndexedHeap {
    /// Entries, heap-ordered.
    heap: Vec<Entry>,
    /// Position of each id in `heap`, or `ABSENT`.
    pos: Vec<u32>,
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
        (p != ABSENT).then(|| key_of(self.heap[p as usize]))
    }

    /// The smallest (id, key).
    #[inline]
    pub fn peek(&self) -> Option<(u32, f64)> {
        self.heap.first().map(|&e| (id_of(e), key_of(e)))
    }

    /// Inserts `id` with `key`, or re-keys it if present.
    pub fn set(&mut self, id: u32, key: f64) {
        debug_assert!(!key.is_nan());
        let i = id as usize;
        if i >= self.pos.len() {
            self.pos.resize(i + 1, ABSENT);
        }
        let e = entry(key, id);
        let p = self.pos[i];
        if p == ABSENT {
            self.heap.push(e);
            self.sift_up(self.heap.len() - 1, e);
        } else {
            let p = p as usize;
            if e < self.heap[p] {
                self.sift_up(p, e);
            } else {
                self.sift_down(p, e);
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
        self.pos[id as usize] = ABSENT;
        let p = p as usize;
        let last = self.heap.pop().expect("a present id has an entry");
        if p < self.heap.len() {
            // The last entry fills the hole, and may belong above or below it.
            if p > 0 && last < self.heap[(p - 1) / ARITY] {
                self.sift_up(p, last);
            } else {
                self.sift_down(p, last);
            }
        }
    }

    /// Removes and returns the smallest (id, key).
    pub fn pop(&mut self) -> Option<(u32, f64)> {
        let top = self.peek()?;
        self.remove(top.0);
        Some(top)
    }

    /// Places `e` at or above the hole at `i`, moving larger parents down.
    #[inline]
    fn sift_up(&mut self, mut i: usize, e: Entry) {
        while i > 0 {
            let parent = (i - 1) / ARITY;
            let pe = self.heap[parent];
            if e >= pe {
                break;
            }
            self.put(i, pe);
            i = parent;
        }
        self.put(i, e);
    }

    /// Places `e` at or below the hole at `i`, moving smaller children up.
    #[inline]
    fn sift_down(&mut self, mut i: usize, e: Entry) {
        let n = self.heap.len();
        loop {
            let first = ARITY * i + 1;
            if first >= n {
                break;
            }
            let mut best = first;
            let mut be = self.heap[first];
            for child in first + 1..(first + ARITY).min(n) {
                let ce = self.heap[child];
                if ce < be {
                    best = child;
                    be = ce;
                }
            }
            if e <= be {
                break;
            }
            self.put(i, be);
            i = best;
        }
        self.put(i, e);
    }

    #[inline]
    fn put(&mut self, i: usize, e: Entry) {
        self.heap[i] = e;
        self.pos[id_of(e) as usize] = i as u32;
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
                    // Few distinct keys, so ties are exercised; negative too (LQD).
                    let key = r.gen_range(-8..8) as f64 * 0.75;
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
