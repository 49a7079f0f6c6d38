//! Queueing delay (sojourn time: dequeue minus enqueue) at a monitored queue, as a
//! log-linear histogram per link, overall and per flow group.
//!
//! Buckets follow HdrHistogram's layout: values below 2^SUB_BITS nanoseconds are
//! exact, above that each power of two is split into 2^SUB_BITS equal buckets, so a
//! quantile is within 1/2^SUB_BITS (1.6%) of the true value, memory grows with the
//! logarithm of the largest delay, and recording is a few integer operations. Count,
//! sum and maximum are exact. Only the measured interval counts: the histograms are
//! cleared when the warm-up ends.

use std::sync::Arc;

/// Bits of each power of two's sub-buckets: 64 buckets per octave.
const SUB_BITS: u32 = 6;
const SUB: u64 = 1 << SUB_BITS;

/// The bucket of `v`.
#[inline]
fn bucket(v: u64) -> usize {
    if v < SUB {
        return v as usize;
    }
    let shift = 63 - v.leading_zeros() - SUB_BITS; // v >> shift is in [SUB, 2 SUB)
    ((shift as u64 + 1) * SUB + ((v >> shift) - SUB)) as usize
}

/// The values bucket `i` holds: `[lo, hi)`.
fn bucket_range(i: usize) -> (u64, u64) {
    let i = i as u64;
    if i < SUB {
        return (i, i + 1);
    }
    let shift = i / SUB - 1;
    let lo = (SUB + i % SUB) << shift;
    (lo, lo.saturating_add(1 << shift))
}

/// A distribution of nanosecond values.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Histogram {
    counts: Vec<u64>,
    pub n: u64,
    pub sum_ns: u128,
    pub max_ns: u64,
}

impl Histogram {
    #[inline]
    pub fn record(&mut self, v: u64) {
        let b = bucket(v);
        if b >= self.counts.len() {
            self.counts.resize(b + 1, 0);
        }
        self.counts[b] += 1;
        self.n += 1;
        self.sum_ns += v as u128;
        self.max_ns = self.max_ns.max(v);
    }

    pub fn mean_ns(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.n as f64
        }
    }

    /// The value at quantile `q` in [0, 1]: the midpoint of the bucket holding the
    /// `ceil(q n)`-th smallest value (exact below 64 ns), never above the maximum.
    pub fn quantile_ns(&self, q: f64) -> f64 {
        if self.n == 0 {
            return 0.0;
        }
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (lo, hi) = bucket_range(i);
                let mid = if hi - lo == 1 {
                    lo as f64
                } else {
                    (lo as f64 + hi as f64) / 2.0
                };
                return mid.min(self.max_ns as f64);
            }
        }
        self.max_ns as f64
    }

    /// The non-empty buckets: `(lo_ns, hi_ns, count)`.
    pub fn buckets(&self) -> impl Iterator<Item = (u64, u64, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| {
                let (lo, hi) = bucket_range(i);
                (lo, hi, c)
            })
    }
}

/// The sojourn times at one monitored queue.
pub struct Delays {
    /// Each flow's group index.
    group_of: Arc<[u32]>,
    pub all: Histogram,
    pub groups: Vec<Histogram>,
}

impl Delays {
    pub fn new(group_of: Arc<[u32]>, groups: usize) -> Self {
        Delays {
            group_of,
            all: Histogram::default(),
            groups: vec![Histogram::default(); groups],
        }
    }

    #[inline]
    pub fn record(&mut self, flow: usize, ns: u64) {
        self.all.record(ns);
        self.groups[self.group_of[flow] as usize].record(ns);
    }

    /// The warm-up is over: only what follows counts.
    pub fn clear(&mut self) {
        self.all = Histogram::default();
        for g in &mut self.groups {
            *g = Histogram::default();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn small_values_are_exact_and_buckets_tile_the_line() {
        for v in 0..SUB {
            assert_eq!(bucket_range(bucket(v)), (v, v + 1));
        }
        let mut expect_lo = 0;
        for i in 0..(20 * SUB as usize) {
            let (lo, hi) = bucket_range(i);
            assert_eq!(lo, expect_lo, "bucket {i}");
            assert!(hi > lo);
            expect_lo = hi;
        }
    }

    #[test]
    fn quantiles_of_a_known_set() {
        // 1..=1000 microseconds: the p-th quantile is p * 1000 us.
        let mut h = Histogram::default();
        for us in 1..=1000u64 {
            h.record(us * 1000);
        }
        for (q, want) in [(0.5, 500e3), (0.9, 900e3), (0.99, 990e3)] {
            let got = h.quantile_ns(q);
            assert!((got - want).abs() <= want / 64.0, "q{q}: {got} vs {want}");
        }
        assert_eq!(h.quantile_ns(1.0), 1_000_000.0);
        assert_eq!(h.max_ns, 1_000_000);
        assert_eq!(h.mean_ns(), 500_500.0);
        assert_eq!(h.buckets().map(|b| b.2).sum::<u64>(), 1000);
    }

    proptest! {
        #[test]
        fn every_value_falls_in_its_bucket(v in any::<u64>()) {
            let (lo, hi) = bucket_range(bucket(v));
            prop_assert!(lo <= v && (v < hi || hi == u64::MAX), "{v} in [{lo}, {hi})");
            prop_assert!((hi - lo) as f64 <= (lo as f64 / SUB as f64).max(1.0) + 1.0);
        }
    }
}
