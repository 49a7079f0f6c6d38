//! The wrapper that counts, so the algorithms only decide: for tests, benches and
//! the queue lab (the simulator's links count in their observer, with the same
//! [`QueueCounts`]).
//!
//! `Monitored<Q>` stamps `enqueued_at`, forwards every drop and mark to the caller's
//! sink while counting them by reason, and after every call checks ns-3's identities
//! ([`QueueCounts::check`]) with `debug_assert!`.

use crate::drop_reason::DropReason;
use crate::packet::Packet;
use crate::qdisc::{Ctx, DropSink, Limit, Qdisc, Verdict};
use crate::queue_counts::QueueCounts;
use crate::time::Time;
use crate::Rng;

/// The sink a monitored qdisc's calls see: counts each drop and mark by reason,
/// and the drops of this call, before passing them on.
struct Counting<'a> {
    outer: &'a mut dyn DropSink,
    counts: &'a mut QueueCounts,
    drops: u64,
}

impl DropSink for Counting<'_> {
    #[inline]
    fn drop(&mut self, pkt: Packet, reason: DropReason) {
        self.drops += 1;
        self.counts.count_drop(reason);
        self.outer.drop(pkt, reason);
    }
    #[inline]
    fn mark(&mut self, pkt: &Packet, reason: DropReason) {
        self.counts.count_mark(reason);
        self.outer.mark(pkt, reason);
    }
}

/// A qdisc with its counters.
#[derive(Debug, Clone)]
pub struct Monitored<Q> {
    qdisc: Q,
    counts: QueueCounts,
}

impl<Q: Qdisc> Monitored<Q> {
    pub fn new(qdisc: Q) -> Self {
        Monitored {
            qdisc,
            counts: QueueCounts::default(),
        }
    }
    pub fn qdisc(&self) -> &Q {
        &self.qdisc
    }
    /// The qdisc itself, to configure it before traffic (CAKE's hosts) or to
    /// look up its state in a test; nothing done through it is counted.
    pub fn qdisc_mut(&mut self) -> &mut Q {
        &mut self.qdisc
    }
    /// The link's rate changed (`Qdisc::set_link_rate`).
    pub fn set_link_rate(&mut self, rate: crate::units::Rate) {
        self.qdisc.set_link_rate(rate);
    }
    /// The counters so far.
    pub fn counts(&self) -> QueueCounts {
        self.counts.clone()
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
    /// When a qdisc holding packets it would not send yet wants to be asked
    /// again (`Qdisc::wake_at`).
    pub fn wake_at(&self) -> Option<Time> {
        self.qdisc.wake_at()
    }

    /// Whether [`Monitored::pass_through`] may be used now.
    #[inline]
    pub fn passes_through(&self) -> bool {
        self.qdisc.passes_through_when_empty()
    }

    /// An arrival that leaves at once: counted as queued and dequeued, exactly as an
    /// `enqueue` followed by a `dequeue` would count it, but without touching the
    /// qdisc's storage (as the simulator's idle links send). Only when
    /// [`Monitored::passes_through`] is true.
    #[inline]
    pub fn pass_through(&mut self, mut pkt: Packet, now: Time) -> Packet {
        debug_assert!(self.passes_through());
        pkt.enqueued_at = now;
        self.counts.count_pass_through(pkt.size);
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
        let mut counting = Counting {
            outer: sink,
            counts: &mut self.counts,
            drops: 0,
        };
        let verdict = self
            .qdisc
            .enqueue(pkt, &mut Ctx::new(now, rng, &mut counting));
        let drops = counting.drops;
        self.counts.count_enqueue(verdict, drops);
        self.check();
        verdict
    }

    pub fn dequeue(&mut self, now: Time, rng: &mut Rng, sink: &mut dyn DropSink) -> Option<Packet> {
        let mut counting = Counting {
            outer: sink,
            counts: &mut self.counts,
            drops: 0,
        };
        let pkt = self.qdisc.dequeue(&mut Ctx::new(now, rng, &mut counting));
        let drops = counting.drops;
        self.counts
            .count_dequeue(pkt.as_ref().map(|p| p.size), drops);
        self.check();
        pkt
    }

    #[inline]
    fn check(&self) {
        let q = &self.qdisc;
        self.counts.check_within(q.len(), q.bytes(), q.limit());
    }
}
