//! One direction of a point-to-point link: an egress qdisc, a transmitter, and the
//! packets propagating on the wire. Physics only: what is counted about a link is
//! kept by its observer (`observe::LinkStats`), and only for monitored links.
//!
//! Physics decides the event count: the transmitter has at most one `TxDone`
//! pending, and because the delay is fixed, packets on the wire arrive in the order
//! they left, so the wire is a ring with at most one `Arrive` pending (htsim does the
//! same); the wires of all links share one slab (`wire.rs`). Back-to-back
//! transmissions are timed from the cumulative bits of the busy period, so
//! per-packet rounding to nanoseconds never drifts. When nothing waits behind a
//! packet on an unobserved link, it goes on the wire as its transmission starts and
//! its `TxDone` is deferred: most access links never need one; and a packet bound
//! for an idle link fed by this one alone goes on that link's wire instead, with no
//! `Arrive` between (cut-through; both in `engine::forward`).

use crate::event::Deferred;
use crate::wire::Wire;
use aqm::droptail::{DropTail, DropTailParams};
use aqm::{AnyQdisc, Ctx, Dur, Limit, Packet, Qdisc, Rate, Rng, Time, VecSink, Verdict};

/// A link direction: 128 bytes, two cache lines, for every one of the four access
/// link directions a dumbbell has per flow (issue #17: memory per flow). What only
/// some links use is behind one pointer (`Queue`).
pub struct Link {
    /// The deferred `TxDone`'s place in the event order, if it is not queued.
    pub deferred: Deferred,
    pub from: u32,
    pub to: u32,
    pub rate: Rate,
    pub delay: Dur,
    pub qdisc: Queue,
    /// The packet being serialized.
    pub current: Option<Packet>,
    /// Start of the current busy period and bits sent in it (0: idle). In u64: 2^64
    /// bits are 3.6e16 packets of 64 bytes in one busy period, more than any run
    /// can send.
    busy_since: Time,
    busy_bits: u64,
    /// Packets on the wire with their arrival times, oldest first.
    pub wire: Wire,
    /// Index of this link's observer (`NO_MONITOR`: not monitored).
    monitor: u32,
    /// Whether a packet may go on the wire when its transmission starts, its
    /// `TxDone` deferred (unobserved links whose qdisc passes packets through when
    /// empty: nothing watches the transmitter's end, and an idle dequeue does
    /// nothing). Set by the engine.
    pub send_ahead: bool,
    /// The packet being serialized is already on the wire; its `TxDone` is
    /// deferred (`deferred`) or queued (see `engine::forward`).
    pub sent_ahead: bool,
}

const NO_MONITOR: u32 = u32::MAX;

/// A link's qdisc and its random stream, out of line: 8 bytes in the link instead
/// of 88. A dumbbell's access links (a default DropTail each) have one only while
/// packets wait in it: it is taken from a pool when a packet has to wait and goes
/// back when the last one leaves (an empty DropTail holds nothing else), so their
/// memory follows the links with a backlog, not the number of links, and no
/// packet allocates. Without one it answers as the empty DropTail it stands for.
pub struct Queue(Option<Box<QueueState>>);

/// The empty default DropTails that access links borrow while packets wait.
/// Boxed in the pool too: a link holds the same box, handed back and forth.
#[derive(Default)]
#[allow(clippy::vec_box)]
pub struct QueuePool(Vec<Box<QueueState>>);

struct QueueState {
    qdisc: AnyQdisc,
    rng: Rng,
    /// A default DropTail standing for `Queue(None)`: freed when empty.
    lazy: bool,
}

/// The random stream of a lazily built DropTail. DropTail never draws (a FIFO has
/// no random choice), so no other stream is shifted by it and no result depends on it.
const DROPTAIL_STREAM: u64 = 0;

impl Queue {
    /// `qdisc`, drawing from `rng`.
    pub fn new(qdisc: AnyQdisc, rng: Rng) -> Self {
        Queue(Some(Box::new(QueueState {
            qdisc,
            rng,
            lazy: false,
        })))
    }

    /// A DropTail of the default parameters, built while packets wait in it.
    pub fn lazy_droptail() -> Self {
        Queue(None)
    }

    fn droptail() -> AnyQdisc {
        AnyQdisc::DropTail(DropTail::new(DropTailParams::default()).expect("valid defaults"))
    }

    /// The qdisc's `kind`.
    pub fn kind(&self) -> &'static str {
        match &self.0 {
            Some(q) => q.qdisc.kind(),
            None => Self::droptail().kind(),
        }
    }

    /// Replaces the qdisc, keeping the random stream (a rebuild with the flow table).
    pub fn rebuild(&mut self, qdisc: AnyQdisc) {
        self.0
            .as_mut()
            .expect("only built qdiscs are rebuilt")
            .qdisc = qdisc;
    }

    /// Enqueues `pkt` at `now`; a lazy DropTail takes one from `pool` first.
    #[inline]
    pub fn enqueue(
        &mut self,
        pkt: Packet,
        now: Time,
        sink: &mut VecSink,
        pool: &mut QueuePool,
    ) -> Verdict {
        let q = self.0.get_or_insert_with(|| {
            pool.0.pop().unwrap_or_else(|| {
                Box::new(QueueState {
                    qdisc: Self::droptail(),
                    rng: aqm::rng::stream(0, DROPTAIL_STREAM),
                    lazy: true,
                })
            })
        });
        q.qdisc.enqueue(pkt, &mut Ctx::new(now, &mut q.rng, sink))
    }

    /// Dequeues at `now`; a lazy DropTail left empty goes back to `pool`.
    #[inline]
    pub fn dequeue(
        &mut self,
        now: Time,
        sink: &mut VecSink,
        pool: &mut QueuePool,
    ) -> Option<Packet> {
        let q = self.0.as_deref_mut()?;
        let pkt = q.qdisc.dequeue(&mut Ctx::new(now, &mut q.rng, sink));
        if q.lazy && q.qdisc.is_empty() {
            pool.0.extend(self.0.take());
        }
        pkt
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |q| q.qdisc.len())
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn bytes(&self) -> u64 {
        self.0.as_ref().map_or(0, |q| q.qdisc.bytes())
    }

    pub fn limit(&self) -> Limit {
        match &self.0 {
            Some(q) => q.qdisc.limit(),
            None => Self::droptail().limit(),
        }
    }

    #[inline]
    pub fn passes_through_when_empty(&self) -> bool {
        self.0
            .as_ref()
            .is_none_or(|q| q.qdisc.passes_through_when_empty())
    }

    pub fn diagnostic(&self) -> Option<String> {
        self.0.as_ref().and_then(|q| q.qdisc.diagnostic())
    }
}

/// Nanoseconds to send `bits` at `bps`, rounded up (saturating). In u64 when the
/// product fits, which is every busy period below 18 Gbit: a u128 division is a
/// call to `__udivti3`, 2% of a run's profile. The result is the same.
#[inline]
fn ceil_ns(bits: u64, bps: u64) -> u64 {
    match bits.checked_mul(1_000_000_000) {
        Some(x) => x.div_ceil(bps),
        None => (u128::from(bits) * 1_000_000_000)
            .div_ceil(u128::from(bps))
            .min(u64::MAX as u128) as u64,
    }
}

impl Link {
    pub fn new(from: u32, to: u32, rate: Rate, delay: Dur, qdisc: Queue) -> Self {
        Link {
            deferred: Deferred::NONE,
            from,
            to,
            rate,
            delay,
            qdisc,
            current: None,
            busy_since: Time::ZERO,
            busy_bits: 0,
            wire: Wire::default(),
            monitor: NO_MONITOR,
            send_ahead: false,
            sent_ahead: false,
        }
    }

    /// Index of this link's observer, if it is monitored.
    #[inline]
    pub fn monitor(&self) -> Option<u32> {
        (self.monitor != NO_MONITOR).then_some(self.monitor)
    }

    pub fn set_monitor(&mut self, k: u32) {
        assert!(k != NO_MONITOR, "fewer than 2^32 - 1 monitored links");
        self.monitor = k;
    }

    #[inline]
    pub fn is_busy(&self) -> bool {
        self.current.is_some() || self.sent_ahead
    }

    /// When the running busy period began, if the transmitter is in one.
    pub fn busy_since(&self) -> Option<Time> {
        (self.busy_bits > 0).then_some(self.busy_since)
    }

    /// The packet being serialized at `now`, and how many of its bits have left
    /// the transmitter by then.
    pub fn in_progress(&self, now: Time) -> Option<(&Packet, u64)> {
        let pkt = self.current.as_ref()?;
        let size = pkt.size as u128 * 8;
        let rate = self.rate.bps() as u128;
        let start = self.busy_since
            + Dur::from_nanos(
                ((u128::from(self.busy_bits) - size) * 1_000_000_000).div_ceil(rate) as u64,
            );
        let elapsed = now.saturating_since(start).as_nanos() as u128;
        Some((pkt, (elapsed * rate / 1_000_000_000).min(size) as u64))
    }

    /// Starts serializing `pkt` at `now`; returns when the last bit leaves.
    #[inline]
    pub fn begin_tx(&mut self, pkt: Packet, now: Time) -> Time {
        if self.current.is_none() && self.busy_bits == 0 {
            self.busy_since = now;
        }
        self.busy_bits += u64::from(pkt.size) * 8;
        self.current = Some(pkt);
        self.busy_since + Dur::from_nanos(ceil_ns(self.busy_bits, self.rate.bps()))
    }

    /// Nothing more to send at `now`: the busy period, if one was running, ends.
    /// Returns its length (zero when the link was idle already: an arrival it
    /// dropped found nothing to send).
    #[inline]
    pub fn go_idle(&mut self, now: Time) -> Dur {
        if self.busy_bits == 0 {
            return Dur::ZERO;
        }
        self.busy_bits = 0;
        now.saturating_since(self.busy_since)
    }
}

#[cfg(test)]
mod tests {
    use super::{ceil_ns, Link, Queue, QueuePool};
    use aqm::{FlowId, Packet, Time, VecSink};
    use proptest::prelude::*;

    /// An access link's DropTail exists only while packets wait in it, and behaves
    /// as a DropTail throughout: FIFO order, counts, an empty one passes through.
    #[test]
    fn a_lazy_droptail_is_built_while_packets_wait_and_freed_after() {
        let (mut q, mut sink, t) = (Queue::lazy_droptail(), VecSink::default(), Time::ZERO);
        let mut pool = QueuePool::default();
        assert!(q.0.is_none() && q.is_empty() && q.passes_through_when_empty());
        assert_eq!(q.kind(), "droptail");
        assert!(q.dequeue(t, &mut sink, &mut pool).is_none());
        for round in 0..2 {
            for i in 0..3 {
                q.enqueue(Packet::new(FlowId(i), 1000), t, &mut sink, &mut pool);
            }
            assert_eq!((q.len(), q.bytes()), (3, 3000), "round {round}");
            assert!(q.0.is_some() && pool.0.is_empty(), "taken from the pool");
            for i in 0..3 {
                let got = q.dequeue(t, &mut sink, &mut pool).map(|p| p.flow);
                assert_eq!(got, Some(FlowId(i)));
                assert_eq!(q.0.is_none(), i == 2, "returned only when empty");
            }
            assert_eq!(pool.0.len(), 1);
        }
        assert!(sink.drops.is_empty());
    }

    /// Two cache lines: the size the engine's prefetch and the memory estimate
    /// (BENCHMARKS.md, cost per flow) count on.
    #[test]
    fn a_link_is_two_cache_lines() {
        assert_eq!(std::mem::size_of::<Link>(), 128);
    }

    proptest! {
        /// The u64 path rounds exactly as the u128 one, on both sides of its limit.
        #[test]
        fn ceil_ns_matches_u128_arithmetic(
            bits in prop_oneof![0u64..1 << 40, 0u64..=u64::MAX],
            bps in 1u64..=u64::MAX,
        ) {
            let want = (u128::from(bits) * 1_000_000_000).div_ceil(u128::from(bps)).min(u64::MAX as u128) as u64;
            prop_assert_eq!(ceil_ns(bits, bps), want);
        }
    }
}
