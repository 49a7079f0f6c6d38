//! The wrapper that counts, so the algorithms only decide.
//!
//! `Monitored<Q>` stamps `enqueued_at`, forwards every drop and mark to the caller's
//! sink while counting them by reason, and after every call checks ns-3's identities
//! with `debug_assert!`:
//!
//! - received = arrivals dropped + arrivals queued
//! - backlog = queued - dequeued - victims (queued packets dropped later)
//! - backlog within the qdisc's limit

use crate::drop_reason::{DropReason, ReasonCounts};
use crate::packet::Packet;
use crate::qdisc::{Ctx, DropSink, Limit, Qdisc, Verdict};
use crate::time::Time;
use crate::Rng;

/// Counters a monitored qdisc keeps; all are totals since it was built.
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
}

/// What `Monitored` stores: `QueueCounts` with the two per-reason arrays boxed and
/// allocated at the first drop or mark. Most links of a large run (access links)
/// never drop, and the arrays are 160 of `QueueCounts`' 208 bytes.
#[derive(Debug, Default, Clone)]
struct Counters {
    received: u64,
    queued: u64,
    dequeued: u64,
    dequeued_bytes: u64,
    arrivals_dropped: u64,
    victims: u64,
    /// The sum of the drops by reason, kept so the hot path never sums the array.
    drops_total: u64,
    /// Drops and marks by reason.
    by_reason: Option<Box<[ReasonCounts; 2]>>,
}

impl Counters {
    #[inline]
    fn by_reason(&mut self) -> &mut [ReasonCounts; 2] {
        self.by_reason.get_or_insert_with(Default::default)
    }
}

struct Counting<'a> {
    outer: &'a mut dyn DropSink,
    counts: &'a mut Counters,
}

impl DropSink for Counting<'_> {
    #[inline]
    fn drop(&mut self, pkt: Packet, reason: DropReason) {
        self.counts.drops_total += 1;
        self.counts.by_reason()[0][reason.index()] += 1;
        self.outer.drop(pkt, reason);
    }
    #[inline]
    fn mark(&mut self, pkt: &Packet, reason: DropReason) {
        self.counts.by_reason()[1][reason.index()] += 1;
        self.outer.mark(pkt, reason);
    }
}

/// A qdisc with its counters.
#[derive(Debug, Clone)]
pub struct Monitored<Q> {
    qdisc: Q,
    counts: Counters,
}

impl<Q: Qdisc> Monitored<Q> {
    pub fn new(qdisc: Q) -> Self {
        Monitored {
            qdisc,
            counts: Counters::default(),
        }
    }
    pub fn qdisc(&self) -> &Q {
        &self.qdisc
    }
    /// The counters so far.
    pub fn counts(&self) -> QueueCounts {
        let c = &self.counts;
        let [drops, marks] = c.by_reason.as_deref().copied().unwrap_or_default();
        QueueCounts {
            received: c.received,
            queued: c.queued,
            dequeued: c.dequeued,
            dequeued_bytes: c.dequeued_bytes,
            arrivals_dropped: c.arrivals_dropped,
            victims: c.victims,
            drops,
            marks,
        }
    }
    pub fn len(&self) -> usize {
        self.qdisc.len()
    }
    pub fn is_empty(&self) -> bool {
        self.qdisc.is_empty()
    }
    pub fn bytes(&self) -> u64 {
        self.qdisc.bytes()
    }
    pub fn limit(&self) -> Limit {
        self.qdisc.limit()
    }

    /// Whether [`Monitored::pass_through`] may be used now.
    #[inline]
    pub fn passes_through(&self) -> bool {
        self.qdisc.passes_through_when_empty()
    }

    /// An arrival that leaves at once: counted as queued and dequeued, exactly as an
    /// `enqueue` followed by a `dequeue` would count it, but without touching the
    /// qdisc's storage. Only when [`Monitored::passes_through`] is true: most links
    /// of a large run (access links) never hold a packet, and then never allocate a
    /// queue.
    #[inline]
    pub fn pass_through(&mut self, mut pkt: Packet, now: Time) -> Packet {
        debug_assert!(self.passes_through());
        pkt.enqueued_at = now;
        let c = &mut self.counts;
        c.received += 1;
        c.queued += 1;
        c.dequeued += 1;
        c.dequeued_bytes += pkt.size as u64;
        pkt
    }

    pub fn enqueue(
        &mut self,
        mut pkt: Packet,
        now: Time,
        rng: &mut Rng,
        sink: &mut dyn DropSink,
    ) -> Verdict {
        pkt.enqueued_at = now;
        let drops_before = self.counts.drops_total;
        let verdict = {
            let mut counting = Counting {
                outer: sink,
                counts: &mut self.counts,
            };
            let mut ctx = Ctx::new(now, rng, &mut counting);
            self.qdisc.enqueue(pkt, &mut ctx)
        };
        self.counts.received += 1;
        let new_drops = self.counts.drops_total - drops_before;
        match verdict {
            Verdict::Queued => {
                self.counts.queued += 1;
                self.counts.victims += new_drops;
            }
            Verdict::Dropped => {
                debug_assert!(new_drops >= 1, "a dropped arrival must reach the sink");
                self.counts.arrivals_dropped += 1;
                self.counts.victims += new_drops - 1;
            }
        }
        self.check();
        verdict
    }

    pub fn dequeue(&mut self, now: Time, rng: &mut Rng, sink: &mut dyn DropSink) -> Option<Packet> {
        let drops_before = self.counts.drops_total;
        let pkt = {
            let mut counting = Counting {
                outer: sink,
                counts: &mut self.counts,
            };
            let mut ctx = Ctx::new(now, rng, &mut counting);
            self.qdisc.dequeue(&mut ctx)
        };
        self.counts.victims += self.counts.drops_total - drops_before;
        if let Some(p) = &pkt {
            self.counts.dequeued += 1;
            self.counts.dequeued_bytes += p.size as u64;
        }
        self.check();
        pkt
    }

    #[inline]
    fn check(&self) {
        let c = &self.counts;
        debug_assert_eq!(
            c.received,
            c.arrivals_dropped + c.queued,
            "received = dropped + queued"
        );
        debug_assert_eq!(
            self.qdisc.len() as u64,
            c.queued - c.dequeued - c.victims,
            "backlog = queued - dequeued - victims"
        );
        debug_assert!(
            self.qdisc
                .limit()
                .admits(self.qdisc.len(), self.qdisc.bytes()),
            "backlog {} packets / {} bytes exceeds {:?}",
            self.qdisc.len(),
            self.qdisc.bytes(),
            self.qdisc.limit()
        );
    }
}
