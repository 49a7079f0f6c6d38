//! What a monitored link direction records: its queue's counters (the one place
//! they are kept), transmissions, busy time, the time-weighted backlog, each flow's
//! share of both, and the observers that hang off a link (queue samples, per-flow
//! series, sojourn times).
//!
//! The engine calls these hooks only for links whose `monitor` is set, after each
//! qdisc call, with what the call put in the drop sink; an unmonitored link pays
//! nothing. The queue's counters are an [`aqm::QueueCounts`], whose arithmetic
//! and identities (checked after every call in debug builds) are `aqm`'s.

use super::delays::Delays;
use super::flow_series::SeriesAcc;
use super::flow_slots::FlowSlots;
use crate::link::Links;
use aqm::{Packet, QueueCounts, Time, VecSink, Verdict};

crate::delta::counters! {
    /// What a monitored link did for one flow.
    #[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
    pub struct LinkFlowCounters {
        /// Packets of the flow the link sent (counted as their last bit leaves),
        /// and bits (counted as they leave, so a packet in transmission at the
        /// warm-up's end is split between warm-up and measurement).
        pub packets: u64,
        pub bits: u64,
        /// The integral over time of the flow's packets in the queue, in packet-ns:
        /// divided by the measured time it is the flow's mean queue occupancy, the
        /// quantity of the CHOKe paper's Fig. 6.
        pub queue_area: u128,
    }
}

crate::delta::counters! {
    /// A link's counters that only grow; the warm-up snapshot is subtracted.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct LinkCounters {
        pub tx_packets: u64,
        /// Bits sent, counted as they leave (see `LinkFlowCounters::bits`): over
        /// any interval they never exceed what the rate allows.
        pub tx_bits: u64,
        /// Nanoseconds spent transmitting.
        pub busy_ns: u128,
        /// Integral of the backlog (packets) over time, packet-nanoseconds.
        pub queue_area: u128,
        pub queue: QueueCounts,
        /// Packets the link's random loss took before the queue (never the
        /// queue's: its counts do not see them).
        pub link_losses: u64,
        /// One per row of the link's [`FlowSlots`] (the flows its routes carry).
        pub per_flow: Vec<LinkFlowCounters>,
    }
}

/// The observer of one monitored link direction.
pub struct LinkStats {
    /// The link direction observed.
    pub link: u32,
    /// Which flows have a row in `counters.per_flow`, `queued` and the series.
    pub slots: FlowSlots,
    counters: LinkCounters,
    /// When the backlog last changed, and its length since then.
    queue_changed: Time,
    queue_len: u32,
    /// The largest backlog seen, warm-up included.
    pub max_queue: u32,
    /// Per row: packets of its flow in the queue now, and since when.
    queued: Vec<(u32, Time)>,
    /// Queue length samples `(t_s, packets, bytes)`, every `[monitor] queue_interval`.
    pub samples: Vec<(f64, u32, u64)>,
    /// Per-flow series across this link, when `[monitor] flow_series` is on.
    pub series: Option<SeriesAcc>,
    /// Sojourn-time distributions, when `[monitor] delays` is on.
    pub delays: Option<Delays>,
}

impl LinkStats {
    /// The observer of link direction `link`, with a row for each flow of `slots`.
    pub fn new(link: u32, slots: FlowSlots) -> Self {
        let rows = slots.rows();
        LinkStats {
            link,
            slots,
            counters: LinkCounters {
                per_flow: vec![LinkFlowCounters::default(); rows],
                ..LinkCounters::default()
            },
            queue_changed: Time::ZERO,
            queue_len: 0,
            max_queue: 0,
            queued: vec![(0, Time::ZERO); rows],
            samples: Vec::new(),
            series: None,
            delays: None,
        }
    }

    /// Call before the backlog changes: brings the backlog integral up to `now`.
    #[inline]
    fn advance(&mut self, now: Time) {
        let dt = now.saturating_since(self.queue_changed).as_nanos() as u128;
        self.counters.queue_area += dt * self.queue_len as u128;
        self.queue_changed = now;
    }

    /// The row of `pkt`'s flow.
    #[inline]
    fn row(&self, pkt: &Packet) -> usize {
        self.slots.row(pkt.flow.index())
    }

    /// The flow of `row` has `delta` more packets in the queue from `now` on.
    #[inline]
    fn occupancy_change(&mut self, row: usize, now: Time, delta: i32) {
        let (count, since) = &mut self.queued[row];
        self.counters.per_flow[row].queue_area +=
            u128::from(*count) * u128::from(now.saturating_since(*since).as_nanos());
        *count = count
            .checked_add_signed(delta)
            .expect("a flow's queued packets never go below zero");
        *since = now;
    }

    /// Takes the queued packets a qdisc call dropped (all its drops but `arrival`)
    /// out of the per-flow occupancy, and counts drops and marks by reason.
    fn settle(&mut self, now: Time, sink: &VecSink, arrival: Option<&Packet>) {
        for &(ref pkt, reason) in &sink.drops {
            self.counters.queue.count_drop(reason);
            let row = self.row(pkt);
            if arrival.is_none_or(|a| a.tag != pkt.tag) {
                self.occupancy_change(row, now, -1);
            }
            if let Some(s) = &mut self.series {
                s.drop(row);
            }
        }
        for &(ref pkt, reason) in &sink.marks {
            self.counters.queue.count_mark(reason);
            if let Some(s) = &mut self.series {
                s.mark(self.slots.row(pkt.flow.index()));
            }
        }
    }

    /// An arrival sent straight to the idle transmitter (see
    /// `Qdisc::passes_through_when_empty`): queued and dequeued at once.
    #[inline]
    pub fn on_pass_through(&mut self, pkt: &Packet) {
        self.counters.queue.count_pass_through(pkt.size);
        self.max_queue = self.max_queue.max(1);
        if let Some(d) = &mut self.delays {
            d.record(pkt.flow.index(), 0);
        }
    }

    /// After `enqueue` of `pkt` returned `verdict`, leaving `len` packets queued.
    pub fn on_enqueue(
        &mut self,
        now: Time,
        pkt: &Packet,
        verdict: Verdict,
        sink: &VecSink,
        len: usize,
    ) {
        self.advance(now);
        self.counters
            .queue
            .count_enqueue(verdict, sink.drops.len() as u64);
        if verdict == Verdict::Queued {
            self.occupancy_change(self.row(pkt), now, 1);
        }
        self.settle(now, sink, Some(pkt));
        self.queue_len = len as u32;
        self.max_queue = self.max_queue.max(self.queue_len);
        self.counters.queue.check(len);
    }

    /// After `dequeue` returned `pkt`, leaving `len` packets queued.
    pub fn on_dequeue(&mut self, now: Time, pkt: Option<&Packet>, sink: &VecSink, len: usize) {
        self.advance(now);
        self.counters
            .queue
            .count_dequeue(pkt.map(|p| p.size), sink.drops.len() as u64);
        if let Some(p) = pkt {
            self.occupancy_change(self.row(p), now, -1);
            if let Some(d) = &mut self.delays {
                d.record(
                    p.flow.index(),
                    now.saturating_since(p.enqueued_at).as_nanos(),
                );
            }
        }
        self.settle(now, sink, None);
        self.queue_len = len as u32;
        self.max_queue = self.max_queue.max(self.queue_len);
        self.counters.queue.check(len);
    }

    /// The link's random loss took a packet of `flow` before the queue.
    #[cold]
    pub fn on_link_loss(&mut self, flow: usize) {
        self.counters.link_losses += 1;
        if let Some(s) = &mut self.series {
            s.drop(flow);
        }
    }

    /// The link finished sending `pkt`.
    #[inline]
    pub fn on_tx_done(&mut self, pkt: &Packet) {
        let bits = pkt.size as u64 * 8;
        self.counters.tx_packets += 1;
        self.counters.tx_bits += bits;
        let row = self.row(pkt);
        let e = &mut self.counters.per_flow[row];
        e.packets += 1;
        e.bits += bits;
        if let Some(s) = &mut self.series {
            s.tx(row, pkt.size);
        }
    }

    /// The packet the link is serializing at `now`, and how many of its bits have
    /// left the transmitter by then.
    pub fn in_progress<'a>(&self, links: Links<'a>, now: Time) -> Option<(&'a Packet, u64)> {
        links.in_progress(self.link as usize, now)
    }

    /// A busy period of `busy_ns` ended.
    #[inline]
    pub fn on_idle(&mut self, busy_ns: u64) {
        self.counters.busy_ns += busy_ns as u128;
    }

    /// The counters as of `now`: the backlog integrals brought up to date, and the
    /// running busy period and the bits sent of the packet in transmission included.
    pub fn counters_at(&self, now: Time, links: Links<'_>) -> LinkCounters {
        self.brought_up_to(now, links, self.counters.clone())
    }

    /// [`LinkStats::counters_at`] for the last reading: the counters are moved
    /// out, not copied (the per-flow table is 32 bytes a flow), and this
    /// observer is left without them.
    pub fn take_counters_at(&mut self, now: Time, links: Links<'_>) -> LinkCounters {
        let c = std::mem::take(&mut self.counters);
        self.brought_up_to(now, links, c)
    }

    /// `c`, this link's counters, brought up to `now`.
    fn brought_up_to(&self, now: Time, links: Links<'_>, c: LinkCounters) -> LinkCounters {
        let busy_since = links.links[self.link as usize].busy_since();
        self.counters_with(now, self.in_progress(links, now), busy_since, c)
    }

    /// The counters as of `now` for a runner that keeps its transmitter apart
    /// (the emulator's data plane): `in_progress` is the packet it is sending and
    /// the bits of it that have left, `busy_since` when its busy period began.
    pub fn counters_now(
        &self,
        now: Time,
        in_progress: Option<(&Packet, u64)>,
        busy_since: Option<Time>,
    ) -> LinkCounters {
        self.counters_with(now, in_progress, busy_since, self.counters.clone())
    }

    fn counters_with(
        &self,
        now: Time,
        in_progress: Option<(&Packet, u64)>,
        busy_since: Option<Time>,
        mut c: LinkCounters,
    ) -> LinkCounters {
        if let Some((pkt, bits)) = in_progress {
            c.tx_bits += bits;
            c.per_flow[self.row(pkt)].bits += bits;
        }
        c.queue_area +=
            now.saturating_since(self.queue_changed).as_nanos() as u128 * self.queue_len as u128;
        if let Some(since) = busy_since {
            c.busy_ns += now.saturating_since(since).as_nanos() as u128;
        }
        for (f, &(count, since)) in c.per_flow.iter_mut().zip(&self.queued) {
            f.queue_area += u128::from(count) * u128::from(now.saturating_since(since).as_nanos());
        }
        c
    }
}
