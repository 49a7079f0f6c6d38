//! Counting a queue, once: [`QueueCounts`] holds what every wrapper of a qdisc
//! counts (the wrapper of tests and the queue lab, [`crate::Monitored`]; the
//! simulator's link observer; the simulator's every queue in debug builds), the
//! arithmetic of each call, and ns-3's identities that check it:
//!
//! - received = arrivals dropped + arrivals queued
//! - backlog = queued - dequeued - victims (queued packets dropped later)
//!
//! and, where the qdisc is at hand, that the backlog is within its limit.

use crate::drop_reason::{DropReason, ReasonCounts};
use crate::qdisc::{Limit, Verdict};

/// A queue's counters; all are totals since it was built.
#[derive(Debug, Default, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct QueueCounts {
    pub received: u64,
    pub queued: u64,
    pub dequeued: u64,
    pub dequeued_bytes: u64,
    pub arrivals_dropped: u64,
    /// Packets dropped after they had been queued (CHOKe victims, push-outs, ...).
    pub victims: u64,
    pub drops: ReasonCounts,
    pub marks: ReasonCounts,
}

impl QueueCounts {
    pub fn total_drops(&self) -> u64 {
        self.drops.iter().sum()
    }
    pub fn total_marks(&self) -> u64 {
        self.marks.iter().sum()
    }

    /// What happened since `earlier`, a reading of the same counters.
    pub fn since(&self, earlier: &QueueCounts) -> QueueCounts {
        let minus = |a: &ReasonCounts, b: &ReasonCounts| std::array::from_fn(|i| a[i] - b[i]);
        QueueCounts {
            received: self.received - earlier.received,
            queued: self.queued - earlier.queued,
            dequeued: self.dequeued - earlier.dequeued,
            dequeued_bytes: self.dequeued_bytes - earlier.dequeued_bytes,
            arrivals_dropped: self.arrivals_dropped - earlier.arrivals_dropped,
            victims: self.victims - earlier.victims,
            drops: minus(&self.drops, &earlier.drops),
            marks: minus(&self.marks, &earlier.marks),
        }
    }

    /// An arrival of `size` bytes that left at once, never stored (an idle
    /// FIFO's pass-through): counted as an `enqueue` and a `dequeue` at one
    /// instant would count it.
    #[inline]
    pub fn count_pass_through(&mut self, size: u32) {
        self.received += 1;
        self.queued += 1;
        self.dequeued += 1;
        self.dequeued_bytes += u64::from(size);
    }

    /// An `enqueue` returned `verdict` after putting `drops` packets in the drop
    /// sink: the arrival itself when it was dropped, the rest queued packets.
    #[inline]
    pub fn count_enqueue(&mut self, verdict: Verdict, drops: u64) {
        self.received += 1;
        match verdict {
            Verdict::Queued => {
                self.queued += 1;
                self.victims += drops;
            }
            Verdict::Dropped => {
                debug_assert!(drops >= 1, "a dropped arrival must reach the sink");
                self.arrivals_dropped += 1;
                self.victims += drops - 1;
            }
        }
    }

    /// A `dequeue` returned a packet of `sent` bytes (or none) after dropping
    /// `drops` queued packets.
    #[inline]
    pub fn count_dequeue(&mut self, sent: Option<u32>, drops: u64) {
        self.victims += drops;
        if let Some(size) = sent {
            self.dequeued += 1;
            self.dequeued_bytes += u64::from(size);
        }
    }

    /// A drop for `reason` (counted in [`QueueCounts::count_enqueue`] or
    /// [`QueueCounts::count_dequeue`] too, as one of their `drops`).
    #[inline]
    pub fn count_drop(&mut self, reason: DropReason) {
        self.drops[reason.index()] += 1;
    }

    /// A CE mark for `reason`: never a drop.
    #[inline]
    pub fn count_mark(&mut self, reason: DropReason) {
        self.marks[reason.index()] += 1;
    }

    /// Checks ns-3's two identities (debug builds) against the qdisc's backlog
    /// now, `len` packets.
    #[inline]
    #[track_caller]
    pub fn check(&self, len: usize) {
        debug_assert_eq!(
            self.received,
            self.arrivals_dropped + self.queued,
            "received = dropped + queued"
        );
        debug_assert_eq!(
            len as u64,
            self.queued - self.dequeued - self.victims,
            "backlog = queued - dequeued - victims"
        );
    }

    /// [`QueueCounts::check`], and that the backlog of `len` packets and `bytes`
    /// bytes is within the qdisc's `limit`.
    #[inline]
    #[track_caller]
    pub fn check_within(&self, len: usize, bytes: u64, limit: Limit) {
        self.check(len);
        debug_assert!(
            limit.admits(len, bytes),
            "backlog {len} packets / {bytes} bytes exceeds {limit:?}"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The arithmetic of each call, as ns-3's QueueDisc counts it: a dropped
    /// arrival is one arrival dropped and the rest of the call's drops victims; a
    /// dequeue's drops are all victims; a pass-through is an arrival in and out.
    #[test]
    fn each_call_counts_as_ns3_does() {
        let mut c = QueueCounts::default();
        c.count_enqueue(Verdict::Queued, 0);
        c.count_enqueue(Verdict::Queued, 1); // a CHOKe-like victim
        c.count_enqueue(Verdict::Dropped, 2); // the arrival and a victim
        c.count_dequeue(None, 0);
        c.count_pass_through(100);
        assert_eq!(
            (c.received, c.queued, c.arrivals_dropped, c.victims),
            (4, 3, 1, 2)
        );
        assert_eq!((c.dequeued, c.dequeued_bytes), (1, 100));
        // 3 queued - 1 dequeued - 2 victims: the backlog is empty.
        c.check_within(0, 0, Limit::Packets(1));
        c.count_enqueue(Verdict::Queued, 0);
        c.count_dequeue(Some(1000), 0);
        c.count_drop(DropReason::ALL[0]);
        c.count_mark(DropReason::ALL[0]);
        assert_eq!((c.total_drops(), c.total_marks()), (1, 1));
        c.check_within(0, 0, Limit::Packets(1));
    }

    /// The identities catch a miscount (debug builds, where they are checked).
    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "backlog = queued - dequeued - victims")]
    fn a_lost_victim_fails_the_check() {
        let mut c = QueueCounts::default();
        c.count_enqueue(Verdict::Queued, 0);
        c.count_enqueue(Verdict::Queued, 0);
        c.count_dequeue(None, 0); // one was dropped, but not counted
        c.check(1);
    }
}
