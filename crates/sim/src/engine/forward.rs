//! Links: a packet enters a link direction's qdisc, is serialized, propagates, and
//! is forwarded to the next link of its route or delivered. This is the hot path;
//! observers are called only for monitored links.
//!
//! Two shortcuts keep events off the queue, each without changing what any link
//! sees. Send-ahead: on an idle link that passes packets through when empty (a
//! DropTail), a packet goes on the wire as its transmission starts and the
//! `TxDone` is deferred (`transmit`); an observer hears of the end when the next
//! arrival finds it passed, or before it is read (`Simulation::settle_observed`),
//! keeping a copy of the packet meanwhile. Cut-through: a packet whose next link
//! `out` is fed by this link alone skips the `Arrive` at the far end when `out`
//! will be idle then; it is sent on `out` at once, its transmission starting at
//! the arrival time (`cut_through`). So a dumbbell's data packet costs an `Arrive`
//! at the left router, the bottleneck's `TxDone` and an `Arrive` at the receiver,
//! and its ACK an `Arrive` at the right router and at the sender: 5 events for the
//! two, 7 with send-ahead alone, 12 with neither.
//!
//! Why cut-through is exact: `out` has one input, `in`, whose wire is a FIFO of
//! fixed delay, so every packet `out` will receive before time `t1` is on `in`'s
//! wire or already handed on when this one leaves `in` at `t0 <= t1`. If none of
//! those is still on its way by the normal path (`cut[out] == 0`: the count of
//! such packets), `out`'s state at `t1` is its state now, run forward: its
//! transmitter's end is known (`deferred`) and nothing can enter its queue before
//! `t1`. When `out` would be busy at `t1` the packet takes the normal path and is
//! counted (`FLAG_AWAITED`) until it enters `out`; meanwhile later packets follow
//! it by the same path, so `out` sees every packet in arrival order. Unobserved and
//! send-ahead, `out` is watched by nothing between `t0` and `t1`. What changes is
//! only the order among events of one nanosecond: the final `Arrive` and the
//! deferred `TxDone` take their sequence numbers at `t0` instead of `t1` (and the
//! `Arrive` of a packet behind it on `in`'s wire may be scheduled sooner, the wire
//! being empty without it). BENCHMARKS.md (issue #17, session 4) shows the results
//! this changes: ties of an RTO timer with an ACK's arrival.

use super::Simulation;
use crate::event::{Deferred, Event};
use crate::header::FLAG_AWAITED;
use crate::net::routes::ROUTE_END;
use crate::observe::event_log::QueueEvent;
use crate::observe::pcap::Addresses;
use aqm::{Packet, Time};

/// `Simulation::cut` of a link that never cuts through: it has several inputs, is
/// a first hop, is observed or does not send ahead.
pub(super) const NO_CUT: u32 = u32::MAX;

impl Simulation {
    pub(super) fn enqueue_on(&mut self, l: usize, mut pkt: Packet) {
        let now = self.now;
        let link = &mut self.net.links[l];
        pkt.enqueued_at = now;
        if link.sent_ahead() && link.deferred.is_some() && self.events.passed(link.deferred) {
            self.idle_from_deferred_end(l);
        }
        let link = &mut self.net.links[l];
        if !link.is_busy() && link.qdisc.passes_through_when_empty() {
            // Straight to the idle transmitter: the same counts, occupancy and
            // timing as queueing and dequeueing it at this instant.
            if let Some(m) = link.monitor() {
                self.obs.links[m as usize].on_pass_through(&pkt);
            }
            self.transmit(l, pkt);
            return;
        }
        let verdict = link
            .qdisc
            .enqueue(pkt, now, &mut self.sink, &mut self.queues);
        if let Some(m) = link.monitor() {
            let len = link.qdisc.len();
            self.obs.links[m as usize].on_enqueue(now, &pkt, verdict, &self.sink, len);
        }
        debug_assert!(link
            .qdisc
            .limit()
            .admits(link.qdisc.len(), link.qdisc.bytes()));
        let busy = link.is_busy();
        if busy && link.deferred.is_some() && !link.qdisc.is_empty() {
            // A packet waits: the transmitter's end matters now.
            self.events
                .materialize(std::mem::replace(&mut link.deferred, Deferred::NONE));
        }
        self.settle_sink(l);
        if !busy {
            self.start_next(l);
        }
    }

    /// Starts sending `pkt` on the idle transmitter of `l`. With nothing queued
    /// behind it on a link that sends ahead, the packet goes on the wire now and
    /// the `TxDone` is deferred: it takes its place in the event order but enters
    /// the queue only if a packet arrives before it (`enqueue_on`). Results are
    /// those of queueing it at once; the event count is lower.
    fn transmit(&mut self, l: usize, pkt: Packet) {
        let now = self.now;
        let link = &mut self.net.links[l];
        let pipe = *self.net.pipes.get(link.pipe);
        let done = link.begin_tx(pkt, now, pipe.rate, &mut self.wires);
        if pipe.send_ahead && link.qdisc.is_empty() {
            if let Some(m) = link.monitor() {
                self.obs.links[m as usize].hold_sent_ahead(pkt);
            }
            link.deferred = self.events.defer(done, l as u32);
            let node = link.send_ahead();
            self.put_on_wire(l, done + pipe.delay, node, pipe.feeds_cut);
        } else {
            self.events.push(done, Event::TxDone(l as u32));
        }
    }

    /// The last bit of the packet in wire-slab `node` has left (or, sent ahead,
    /// will leave) the transmitter of `l`; it reaches the far end at `at`. Puts it
    /// on the wire, or, as long as the next link can take it then
    /// (`cut_through`), on that link's wire. `may_cut`: `l` feeds a link that
    /// cuts through (`Pipe::feeds_cut`).
    #[inline]
    fn put_on_wire(&mut self, mut l: usize, mut at: Time, node: u32, mut may_cut: bool) {
        while may_cut {
            match self.cut_through(at, node) {
                Some((next, next_at, feeds)) => (l, at, may_cut) = (next, next_at, feeds),
                None => break,
            }
        }
        let link = &mut self.net.links[l];
        if self.wires.push_parked(&mut link.wire, node, at) {
            self.events.push(at, Event::Arrive(l as u32));
        }
    }

    /// Sends the packet in wire-slab `node`, which will arrive at `at` at the node
    /// where its next link starts, on that link from `at` if the link cuts through
    /// and will be idle with nothing queued then (module comment); returns the link,
    /// when the packet reaches its far end, and whether that link feeds one that
    /// cuts through. Otherwise the packet takes the normal path, counted as awaited
    /// by a link that cuts through. Decided from the state now.
    #[inline]
    fn cut_through(&mut self, at: Time, node: u32) -> Option<(usize, Time, bool)> {
        let pkt = self.wires.parked_mut(node);
        let h = self.headers.get_mut(pkt.tag);
        let next = self.net.routes.hop(h.route_at);
        if next == ROUTE_END {
            return None;
        }
        let awaited = &mut self.cut[next as usize];
        if *awaited == NO_CUT {
            return None;
        }
        let out = &mut self.net.links[next as usize];
        debug_assert!(out.monitor().is_none(), "observed links do not cut through");
        let idle = *awaited == 0 && out.qdisc.is_empty() && out.free_before(at);
        #[cfg(test)]
        self.probe.on_cut(h.uid, idle, at <= self.end);
        if !idle {
            *awaited += 1;
            h.flags |= FLAG_AWAITED;
            return None;
        }
        h.route_at += 1;
        pkt.enqueued_at = at;
        let size = pkt.size;
        if out.sent_ahead() {
            // As `enqueue_on` does when the deferred end has passed.
            self.idle_from_deferred_end(next as usize);
        }
        let out = &mut self.net.links[next as usize];
        let pipe = self.net.pipes.get(out.pipe);
        let done = out.begin_tx_ahead(size, at, pipe.rate);
        out.deferred = self.events.defer(done, next);
        Some((next as usize, done + pipe.delay, pipe.feeds_cut))
    }

    /// The transmitter of `l` is free: send the next packet or go idle.
    fn start_next(&mut self, l: usize) {
        let now = self.now;
        let link = &mut self.net.links[l];
        let next = link.qdisc.dequeue(now, &mut self.sink, &mut self.queues);
        if let Some(m) = link.monitor() {
            let len = link.qdisc.len();
            self.obs.links[m as usize].on_dequeue(now, next.as_ref(), &self.sink, len);
        }
        match next {
            Some(pkt) => self.transmit(l, pkt),
            None => {
                let busy = link.go_idle(now);
                if let Some(m) = link.monitor() {
                    self.obs.links[m as usize].on_idle(busy.as_nanos());
                }
            }
        }
        self.settle_sink(l);
    }

    /// The deferred end of the transmission `l` sent ahead has passed without a
    /// packet arriving before it (or, for a link cut through to, will have when
    /// the packet gets there): the link went idle then, as its `TxDone` would have
    /// found nothing to send, and its observer hears what that would have told it.
    #[inline(always)]
    pub(super) fn idle_from_deferred_end(&mut self, l: usize) {
        let link = &mut self.net.links[l];
        link.end_sent_ahead();
        let done = std::mem::replace(&mut link.deferred, Deferred::NONE).time();
        let busy = link.go_idle(done);
        if let Some(m) = link.monitor() {
            self.obs.links[m as usize].on_sent_ahead_idle(busy.as_nanos());
        }
    }

    pub(super) fn on_tx_done(&mut self, l: usize) {
        let now = self.now;
        let link = &mut self.net.links[l];
        if link.sent_ahead() {
            // A deferred end, put in the queue: the packet is on the wire already.
            link.end_sent_ahead();
            if let Some(m) = link.monitor() {
                self.obs.links[m as usize].on_sent_ahead_done();
            }
            self.start_next(l);
            return;
        }
        let pipe = *self.net.pipes.get(link.pipe);
        let at = now + pipe.delay;
        let node = link.end_tx();
        let pkt = *self.wires.parked(node);
        if let Some(m) = link.monitor() {
            self.obs.links[m as usize].on_tx_done(&pkt);
        }
        if self.obs.pcap.as_ref().is_some_and(|tap| tap.link == l) {
            self.record_capture(now, &pkt);
        }
        self.put_on_wire(l, at, node, pipe.feeds_cut);
        self.start_next(l);
    }

    /// Writes `pkt` to the pcap tap.
    #[cold]
    fn record_capture(&mut self, now: Time, pkt: &Packet) {
        let h = *self.headers.get(pkt.tag);
        let f = &self.flows[h.flow as usize];
        let (src_node, dst_node) = self.net.flow_ends(f.fwd);
        let payload = if f.kind.is_tcp() {
            f.packet_size.saturating_sub(40).max(1)
        } else {
            1
        };
        let addr = Addresses {
            src_node,
            dst_node,
            port: 1024 + (h.flow % 60_000) as u16,
        };
        let tap = self.obs.pcap.as_mut().expect("capturing");
        if let Err(e) = tap.record(now, pkt, &h, addr, payload) {
            eprintln!("pcap: stopped writing: {e}");
            self.obs.pcap = None;
        }
    }

    pub(super) fn on_arrive(&mut self, l: usize) {
        let wire = &mut self.net.links[l].wire;
        let (t, pkt) = self
            .wires
            .pop_front(wire)
            .expect("Arrive with an empty wire");
        debug_assert_eq!(t, self.now);
        if let Some(next) = self.wires.front_arrival(wire) {
            self.events.push(next, Event::Arrive(l as u32));
        }
        self.forward(pkt);
    }

    /// Sends `pkt` over the next link of its route, or delivers it.
    pub(super) fn forward(&mut self, pkt: Packet) {
        let h = self.headers.get_mut(pkt.tag);
        let l = self.net.routes.hop(h.route_at);
        if l == ROUTE_END {
            self.deliver(pkt);
        } else {
            h.route_at += 1;
            if h.flags & FLAG_AWAITED != 0 {
                // It has come by the normal path to a link that cuts through.
                h.flags &= !FLAG_AWAITED;
                let awaited = &mut self.cut[l as usize];
                if *awaited != NO_CUT {
                    *awaited -= 1;
                }
            }
            self.enqueue_on(l as usize, pkt);
        }
    }

    /// Accounts to their flows what the last qdisc call of link `l` dropped or
    /// marked, and frees the dropped packets' headers.
    fn settle_sink(&mut self, l: usize) {
        if let Some(log) = &mut self.obs.events {
            let at = self.now;
            let drops = self.sink.drops.iter().map(|(p, r)| (p, r, false));
            for (pkt, &reason, mark) in
                drops.chain(self.sink.marks.iter().map(|(p, r)| (p, r, true)))
            {
                log.push(QueueEvent {
                    at,
                    link: l as u32,
                    flow: pkt.flow.0,
                    reason,
                    mark,
                });
            }
        }
        if !self.sink.drops.is_empty() {
            for (pkt, reason) in self.sink.drops.drain(..) {
                let flow = pkt.flow.index();
                self.flows[flow].drops.add(reason);
                self.headers.free(pkt.tag);
            }
        }
        if !self.sink.marks.is_empty() {
            for (pkt, _) in self.sink.marks.drain(..) {
                self.flows[pkt.flow.index()].marks += 1;
            }
        }
    }
}
