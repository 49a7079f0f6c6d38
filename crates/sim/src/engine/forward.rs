//! Links: a packet enters a link direction's qdisc, is serialized, propagates, and
//! is forwarded to the next link of its route or delivered. This is the hot path;
//! observers are called only for monitored links.
//!
//! The three shortcuts that keep events off the queue (send-ahead, the deferred
//! `TxDone`, cut-through) are in [`super::ahead`], which owns their invariants.

use super::Simulation;
use crate::event::Event;
use crate::flow::Endpoints;
use crate::header::FLAG_AWAITED;
use crate::link::NO_MODEL;
use crate::net::routes::ROUTE_END;
use crate::observe::event_log::QueueEvent;
use crate::observe::pcap::Addresses;
use aqm::{Packet, Time};

impl Simulation {
    pub(super) fn enqueue_on(&mut self, l: usize, mut pkt: Packet) {
        let now = self.now;
        pkt.enqueued_at = now;
        self.settle_passed_end(l);
        // A run without modelled links never looks up the pipe here.
        if !self.net.models.is_empty() {
            let m = self.net.pipe(l).model;
            if m != NO_MODEL && self.lost_on_link(l, m, pkt) {
                return;
            }
        }
        let link = &mut self.net.links[l];
        if !link.is_busy() && link.qdisc.passes_through_when_empty() {
            // Straight to the idle transmitter: the same counts, occupancy and
            // timing as queueing and dequeueing it at this instant.
            link.qdisc.passed_through(&pkt);
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
        let busy = link.is_busy();
        if busy && !link.qdisc.is_empty() {
            self.queue_deferred_end(l);
        }
        self.settle_sink(l);
        if !busy {
            self.start_next(l);
        }
    }

    /// Starts sending `pkt` on the idle transmitter of `l`; with nothing queued
    /// behind it on a link that sends ahead, it goes on the wire now (`ahead`).
    fn transmit(&mut self, l: usize, pkt: Packet) {
        let now = self.now;
        let link = &mut self.net.links[l];
        let pipe = *self.net.pipes.get(link.pipe);
        if pipe.model != NO_MODEL {
            let done = self.begin_varying(l, pipe.model, pkt);
            self.events.push(done, Event::TxDone(l as u32));
            return;
        }
        let done = link.begin_tx(pkt, now, pipe.rate, &mut self.wires);
        if pipe.send_ahead && link.qdisc.is_empty() {
            self.send_ahead(l, pkt, done, pipe);
        } else {
            self.events.push(done, Event::TxDone(l as u32));
        }
    }

    /// The transmitter of `l` is free: send the next packet or go idle.
    pub(super) fn start_next(&mut self, l: usize) {
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
                // A shaper holding packets for their time: ask again then.
                if let Some(at) = link.qdisc.wake_at().filter(|_| !link.qdisc.is_empty()) {
                    self.events.push(at.max(now), Event::Wake(l as u32));
                }
            }
        }
        self.settle_sink(l);
    }

    /// A qdisc's wake-up: the transmitter, if still idle (no arrival started it
    /// in between), asks the qdisc again.
    pub(super) fn on_wake(&mut self, l: usize) {
        if !self.net.links[l].is_busy() {
            self.start_next(l);
        }
    }

    pub(super) fn on_tx_done(&mut self, l: usize) {
        let now = self.now;
        let link = &mut self.net.links[l];
        if link.sent_ahead() {
            self.end_queued_deferred(l);
            self.start_next(l);
            return;
        }
        let pipe = *self.net.pipes.get(link.pipe);
        let mut at = now + pipe.delay;
        let node = link.end_tx();
        let pkt = *self.wires.parked(node);
        if let Some(m) = link.monitor() {
            self.obs.links[m as usize].on_tx_done(&pkt);
        }
        if self.obs.pcap.as_ref().is_some_and(|tap| tap.link == l) {
            self.record_capture(now, &pkt);
        }
        if pipe.model != NO_MODEL {
            match self.propagate_varying(pipe.model, node, pipe.delay) {
                Some(t) => at = t,
                None => {
                    self.start_next(l);
                    return;
                }
            }
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
            // Dropping the tap removes its unfinished file.
            self.obs.pcap = None;
            self.obs.pcap_error = Some(e);
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
                h.flags &= !FLAG_AWAITED;
                self.awaited_arrived(l as usize);
            }
            self.enqueue_on(l as usize, pkt);
        }
    }

    /// Accounts to their flows what the last qdisc call of link `l` dropped or
    /// marked, and frees the dropped packets' headers.
    pub(super) fn settle_sink(&mut self, l: usize) {
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
                let flow = &mut self.flows[pkt.flow.index()];
                flow.drops.add(reason);
                if let Endpoints::Probe(p) = &mut flow.endpoints {
                    // The probe or its echo: either way the probe is lost.
                    p.lost(self.headers.get(pkt.tag).sent_at, self.warmup_end);
                }
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
