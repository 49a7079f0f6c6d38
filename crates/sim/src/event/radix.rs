//! A radix heap: a min-queue of distinct `u128` keys for a run whose keys only grow.
//!
//! Every key in it is at least `base` (the last key popped). A key sits in the
//! bucket named by the highest 4-bit digit where it differs from `base` and its
//! value in that digit, so every key of a lower bucket is below every key of a
//! higher one. A push is one `xor` and one `Vec::push`; a pop takes the lowest
//! non-empty bucket, makes its least key the new `base` and spreads the rest over
//! lower buckets. A key only ever moves down a digit at least, so it moves at most
//! 32 times, in a run a few. It reads its buckets in order instead of hopping down
//! a tree; with only a handful of pending keys a comparison heap is cheaper
//! (BENCHMARKS.md, "The event queue").
//!
//! Why not the `radix-heap` crate: the engine needs to look at the next key without
//! popping it (to stop at the end of a run, and to prefetch what the next event
//! touches), and to take a key below that peeked minimum afterwards; the crate only
//! peeks by popping and refuses such a key.

/// Keys are read in digits of this many bits: a key's bucket is the highest digit
/// where it differs from `base` and its value there. When `base` moves up into a
/// bucket, the keys of the other buckets of that digit still differ from it there,
/// so they stay put; the keys of its own bucket fall a whole digit or more (one
/// bit per move with single-bit buckets).
const DIGIT_BITS: u32 = 4;
const DIGIT_VALUES: usize = 1 << DIGIT_BITS;
const BUCKETS: usize = 128 / DIGIT_BITS as usize * DIGIT_VALUES;
const WORDS: usize = BUCKETS / 64;

/// How many keys of the lowest bucket [`RadixHeap::hint`] looks through.
const HINT_SCAN: usize = 8;

/// An emptied bucket keeps its buffer up to this many keys, and gives back a larger
/// one: every bucket keeping the capacity of its fullest moment held about ten times the
/// pending keys of a 100,000-flow run (199 bytes a flow). Now the buffers hold at
/// most twice the pending keys, plus this much a bucket.
const KEPT_CAPACITY: usize = 256;

pub struct RadixHeap {
    /// No key is below it: the last key popped, or the least key once found.
    base: u128,
    /// The least key, once a peek or pop has found it and until it is popped.
    least: Option<u128>,
    /// Keys by the highest digit where they differ from `base` and their value
    /// there, in key order.
    buckets: Box<[Vec<u128>; BUCKETS]>,
    /// Bit `i % 64` of word `i / 64` set: bucket `i` is not empty.
    occupied: [u64; WORDS],
    len: usize,
}

impl Default for RadixHeap {
    fn default() -> Self {
        Self::new()
    }
}

impl RadixHeap {
    pub fn new() -> Self {
        RadixHeap {
            base: 0,
            least: None,
            buckets: Box::new(std::array::from_fn(|_| Vec::new())),
            occupied: [0; WORDS],
            len: 0,
        }
    }

    /// The index into `buckets` of a key other than `base`.
    #[inline]
    fn slot(base: u128, key: u128) -> usize {
        debug_assert!(key != base);
        let digit = (127 - (key ^ base).leading_zeros()) / DIGIT_BITS;
        let value = (key >> (digit * DIGIT_BITS)) as usize & (DIGIT_VALUES - 1);
        digit as usize * DIGIT_VALUES + value
    }

    #[inline]
    fn mark(&mut self, i: usize) {
        self.occupied[i / 64] |= 1 << (i % 64);
    }

    /// The lowest non-empty bucket, if any.
    #[inline]
    fn lowest(&self) -> Option<usize> {
        let w = self.occupied.iter().position(|&w| w != 0)?;
        Some(w * 64 + self.occupied[w].trailing_zeros() as usize)
    }

    #[inline]
    fn put(&mut self, key: u128) {
        if key == self.base {
            debug_assert!(self.least.is_none(), "keys are distinct");
            self.least = Some(key);
        } else {
            let i = Self::slot(self.base, key);
            self.buckets[i].push(key);
            self.mark(i);
        }
    }

    /// Adds a key that is not in the heap.
    #[inline]
    pub fn push(&mut self, key: u128) {
        if key < self.base {
            self.rebase(key);
        }
        self.put(key);
        self.len += 1;
    }

    /// The least key, found if need be (which moves `base` up to it).
    #[inline]
    pub fn peek(&mut self) -> Option<u128> {
        if self.least.is_none() {
            if let Some(i) = self.lowest() {
                self.find_least(i);
            }
        }
        self.least
    }

    #[inline]
    pub fn pop(&mut self) -> Option<u128> {
        let key = self.peek()?;
        self.least = None;
        self.len -= 1;
        Some(key)
    }

    /// Empties the lowest non-empty bucket, `i`: its least key becomes `base` and
    /// `least`, the others go to lower buckets relative to it.
    #[inline]
    fn find_least(&mut self, i: usize) {
        self.occupied[i / 64] &= !(1 << (i % 64));
        // Every key of bucket `i` goes to a lower bucket: split there to read one
        // while writing the others.
        let (lower, rest) = self.buckets.split_at_mut(i);
        let bucket = &mut rest[0];
        let least = if let [only] = bucket[..] {
            only
        } else {
            let least = *bucket.iter().min().expect("an occupied bucket has a key");
            for &key in bucket.iter() {
                if key != least {
                    let j = Self::slot(least, key);
                    lower[j].push(key);
                    self.occupied[j / 64] |= 1 << (j % 64);
                }
            }
            least
        };
        if bucket.capacity() > KEPT_CAPACITY {
            *bucket = Vec::new();
        } else {
            bucket.clear(); // keeps its buffer for the next time
        }
        self.base = least;
        self.least = Some(least);
    }

    /// The least key if it is cheap to tell without moving any (it is found, or the
    /// lowest bucket is small), for prefetching; `None` otherwise.
    #[inline]
    pub fn hint(&self) -> Option<u128> {
        if self.least.is_some() {
            return self.least;
        }
        let bucket = &self.buckets[self.lowest()?];
        (bucket.len() <= HINT_SCAN)
            .then(|| bucket.iter().min().copied())
            .flatten()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Removes every key, in no particular order; `base` goes back to 0.
    pub fn take_all(&mut self) -> Vec<u128> {
        let mut keys: Vec<u128> = self.least.take().into_iter().collect();
        for bucket in self.buckets.iter_mut() {
            keys.append(bucket);
        }
        self.occupied = [0; WORDS];
        self.base = 0;
        self.len = 0;
        keys
    }

    /// Takes a key below `base` (a push after a peek found a larger least key):
    /// every key is placed again relative to it. Rare: a run that stops at a time
    /// and then schedules something before the next event.
    #[cold]
    fn rebase(&mut self, new_base: u128) {
        let keys = self.take_all();
        self.base = new_base;
        self.len = keys.len();
        for key in keys {
            self.put(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    proptest! {
        /// Against an ordered set, with keys pushed at or above the last key popped
        /// (as the engine pushes) and now and then below a peeked minimum.
        #[test]
        fn pops_in_key_order(
            ops in proptest::collection::vec((0u8..4, 0u128..1 << 20, 0u32..128), 0..400),
        ) {
            let mut heap = RadixHeap::new();
            let mut reference = BTreeSet::new();
            let mut last = 0u128;
            for (op, delta, shift) in ops {
                match op {
                    0 | 1 => {
                        let key = (last + delta).wrapping_shl(shift % 8).max(last + 1);
                        if reference.insert(key) {
                            heap.push(key);
                        }
                    }
                    2 => {
                        let want = reference.pop_first();
                        prop_assert_eq!(heap.pop(), want);
                        if let Some(k) = want {
                            last = k;
                        }
                    }
                    _ => {
                        let want = reference.first().copied();
                        if let Some(h) = heap.hint() {
                            prop_assert_eq!(Some(h), want);
                        }
                        prop_assert_eq!(heap.peek(), want);
                    }
                }
                prop_assert_eq!(heap.len(), reference.len());
            }
            let mut rest = heap.take_all();
            rest.sort_unstable();
            prop_assert_eq!(rest, reference.into_iter().collect::<Vec<_>>());
        }
    }

    #[test]
    fn buffers_stay_within_twice_the_keys_plus_what_a_bucket_keeps() {
        // 100,000 pending keys, each pop scheduling one more up to 2^36 ahead (a
        // run with a timer per flow): keys pass through many buckets on their way
        // down, and each bucket once held thousands of them.
        let mut heap = RadixHeap::new();
        let mut state = 1u128;
        let mut ahead = || {
            state = state.wrapping_mul(6_364_136_223_846_793_005) + 1_442_695_040_888_963_407;
            1 + (state >> 64) % (1 << 36)
        };
        for _ in 0..100_000 {
            heap.push(ahead());
        }
        for step in 0..300_000 {
            let k = heap.pop().expect("never empty");
            heap.push(k + ahead());
            if step % 10_000 == 0 {
                let held: usize = heap.buckets.iter().map(Vec::capacity).sum();
                assert!(
                    held <= 2 * heap.len() + BUCKETS * KEPT_CAPACITY,
                    "step {step}: {held} slots for {} keys",
                    heap.len()
                );
            }
        }
    }

    #[test]
    fn keys_across_all_128_bits() {
        let mut heap = RadixHeap::new();
        let keys = [u128::MAX, 0, 1 << 127, 1 << 64, 3, u128::MAX - 1];
        for k in keys {
            heap.push(k);
        }
        let mut sorted = keys.to_vec();
        sorted.sort_unstable();
        let popped: Vec<_> = std::iter::from_fn(|| heap.pop()).collect();
        assert_eq!(popped, sorted);
    }
}
