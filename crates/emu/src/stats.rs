//! What the data plane counts besides what each bottleneck direction's observer
//! (the simulator's `LinkStats`) counts: per flow, and how well time was kept.

use aqm::ReasonCounts;

/// Per flow, over the measured interval: drops and marks at any queue (either
/// direction), packets the emulator itself sent (UDP); for a flow a user's
/// program drives (`--app`), what the data plane saw of it.
#[derive(Clone, Debug, Default)]
pub struct FlowCounters {
    pub drops: ReasonCounts,
    pub marks: u64,
    pub udp_sent: u64,
    pub app: AppCounters,
}

/// A program's connection, counted where the data plane sees it: packets sent
/// forward into the sender's access link; packets delivered past the
/// bottleneck that carried new data (for TCP, beyond the highest sequence
/// delivered before; every UDP datagram), and their bytes on the wire; TCP
/// segments delivered again.
#[derive(Copy, Clone, Debug, Default)]
pub struct AppCounters {
    pub sent: u64,
    pub delivered: u64,
    pub delivered_bytes: u64,
    pub retransmits: u64,
}

/// A histogram of lateness (when a write began minus its logical departure): 1 us
/// buckets to 1 ms, then 100 us buckets to 100 ms, the maximum kept exactly.
#[derive(Clone, Debug)]
pub struct Lateness {
    fine: Vec<u64>,
    coarse: Vec<u64>,
    over: u64,
    pub count: u64,
    pub max_ns: u64,
}

impl Default for Lateness {
    fn default() -> Self {
        Lateness {
            fine: vec![0; 1000],
            coarse: vec![0; 1000],
            over: 0,
            count: 0,
            max_ns: 0,
        }
    }
}

impl Lateness {
    pub fn add(&mut self, ns: u64) {
        self.count += 1;
        self.max_ns = self.max_ns.max(ns);
        let us = ns / 1000;
        if us < 1000 {
            self.fine[us as usize] += 1;
        } else if us < 100_000 {
            self.coarse[(us / 100) as usize] += 1;
        } else {
            self.over += 1;
        }
    }

    /// The share of the writes later than `ns`, counting the buckets wholly
    /// above it (so at most one bucket's writes short).
    pub fn share_later_than(&self, ns: u64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let us = ns.div_ceil(1000);
        let later = if us < 1000 {
            let coarse: u64 = self.coarse[10..].iter().sum();
            self.fine[us as usize..].iter().sum::<u64>() + coarse + self.over
        } else if us < 100_000 {
            self.coarse[us.div_ceil(100) as usize..].iter().sum::<u64>() + self.over
        } else {
            self.over
        };
        later as f64 / self.count as f64
    }

    /// Adds `other`'s writes to these.
    pub fn merge(&mut self, other: &Lateness) {
        for (a, b) in self.fine.iter_mut().zip(&other.fine) {
            *a += b;
        }
        for (a, b) in self.coarse.iter_mut().zip(&other.coarse) {
            *a += b;
        }
        self.over += other.over;
        self.count += other.count;
        self.max_ns = self.max_ns.max(other.max_ns);
    }

    /// The `q` quantile, seconds (a bucket's upper edge; the maximum beyond the
    /// histogram).
    pub fn quantile(&self, q: f64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (i, n) in self.fine.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return ((i + 1) as f64 * 1e-6).min(self.max_ns as f64 * 1e-9);
            }
        }
        for (i, n) in self.coarse.iter().enumerate().skip(10) {
            seen += n;
            if seen >= rank {
                return ((i + 1) as f64 * 1e-4).min(self.max_ns as f64 * 1e-9);
            }
        }
        self.max_ns as f64 * 1e-9
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lateness_quantiles_come_from_the_right_buckets() {
        let mut l = Lateness::default();
        for _ in 0..98 {
            l.add(3_500); // 3.5 us
        }
        l.add(2_000_000); // 2 ms
        l.add(250_000_000); // 250 ms, beyond the histogram
        assert!((l.quantile(0.5) - 4e-6).abs() < 1e-12);
        assert!(
            (l.quantile(0.99) - 2.1e-3).abs() < 1e-9,
            "{}",
            l.quantile(0.99)
        );
        assert_eq!(l.quantile(1.0), 0.25);
        assert_eq!(l.max_ns, 250_000_000);
    }

    /// The share later than a packet time counts every write past it, in every
    /// part of the histogram, and none at or before the bucket it falls in.
    #[test]
    fn the_late_share_counts_the_writes_past_the_threshold() {
        let mut l = Lateness::default();
        for ns in [500, 119_000, 121_500, 5_000_000, 300_000_000] {
            l.add(ns);
        }
        assert_eq!(l.share_later_than(120_000), 3.0 / 5.0);
        assert_eq!(l.share_later_than(1_200_000), 2.0 / 5.0);
        assert_eq!(l.share_later_than(200_000_000), 1.0 / 5.0);
        assert_eq!(l.share_later_than(0), 1.0);
        assert_eq!(Lateness::default().share_later_than(1), 0.0);
    }
}
