//! The engine's three speed shortcuts, each keeping events off the queue without
//! changing what any link or endpoint sees; this module owns their state and
//! their invariants, and the rest of the engine calls them at named points.
//!
//! Send-ahead: on an idle link that passes packets through when empty (a
//! DropTail), a packet goes on the wire as its transmission starts and the
//! `TxDone` is deferred (`send_ahead`); an observer hears of the end when the next
//! arrival finds it passed, or before it is read (`Simulation::settle_observed`).
//! Cut-through: a packet whose next link `out` is fed by this link alone skips the
//! `Arrive` at the far end when `out` will be idle then; it is sent on `out` at
//! once, its transmission starting at the arrival time (`cut_through`). A
//! dumbbell's data packet and its ACK cost 5 events, 7 with send-ahead alone, 12
//! with neither.
//!
//! Why cut-through is exact: `out` has one input, `in`, whose wire is a FIFO of
//! fixed delay, so every packet `out` will receive before time `t1` is on `in`'s
//! wire or already handed on when this one leaves `in` at `t0 <= t1`. If none of
//! those is still on its way by the normal path (`cut[out] == 0`: the count of
//! such packets), `out`'s state at `t1` is its state now, run forward: its
//! transmitter's end is known (`deferred`) and nothing can enter its queue before
//! `t1`. When `out` would be busy at `t1` the packet takes the normal path and is
//! counted (`FLAG_AWAITED`) until it enters `out`; meanwhile later packets follow
//! it by the same path, so `out` sees every packet in arrival order; unobserved,
//! nothing watches it between `t0` and `t1`. Only the order among events of one
//! nanosecond changes: the final `Arrive` and the deferred `TxDone` take their
//! sequence numbers at `t0` instead of `t1` (BENCHMARKS.md, "Events per packet").
//!
//! Invariants, each checked where it is relied on:
//! - a link sends ahead only if its qdisc passes packets through when empty, no
//!   link model (varying rate, loss, jitter) and no pcap tap (`plan`, `capture`);
//!   a link whose input has a link model never cuts through (`plan`);
//! - a link cuts through only if it sends ahead, is unobserved and has one input
//!   over all routes (`plan`); `cut[l]` counts the packets awaited by the normal
//!   path, `NO_CUT` for the others;
//! - a deferred `TxDone` is reserved (`Link::deferred`) or queued, never both;
//!   queued once a packet waits behind it (`queue_deferred_end`), its end told to
//!   the link's observer before the observers are read (`settle_observed`);
//! - the copy of a packet sent ahead on an observed link lives in the link's
//!   queue (`link::Queue::hold`) until that end is told, so the observer reads the
//!   packet in transmission as on any other link.

use super::Simulation;
use crate::event::{Deferred, Event};
use crate::header::FLAG_AWAITED;
use crate::link::{Pipe, NO_MODEL};
use crate::net::routes::ROUTE_END;
use crate::net::Network;
use aqm::{Packet, Time};

/// `Simulation::cut` of a link that never cuts through: it has several inputs, is
/// a first hop, is observed or does not send ahead.
pub(super) const NO_CUT: u32 = u32::MAX;

/// Decides which links send ahead and which cut through, once the observers are
/// attached; returns `Simulation::cut`.
pub(super) fn plan(net: &mut Network) -> Vec<u32> {
    // A modelled link (a rate that varies, loss, jitter) takes none of the
    // shortcuts: its transmitter's timing is its model's, and its wire's delay
    // is not fixed, which cut-through at the link after it relies on.
    let plain = |net: &Network, l: usize| net.pipe(l).model == NO_MODEL;
    for l in 0..net.links.len() {
        let on = net.links[l].qdisc.passes_through_when_empty() && plain(net, l);
        net.set_send_ahead(l, on);
    }
    let sole_inputs = net.routes.sole_inputs(net.links.len());
    let mut cut = vec![NO_CUT; net.links.len()];
    for (l, input) in sole_inputs.into_iter().enumerate() {
        // An observed link hears each arrival as it happens: it never cuts through.
        let eligible = net.pipe(l).send_ahead && net.links[l].monitor().is_none();
        let input = input.filter(|&i| plain(net, i as usize));
        if let Some(input) = input.filter(|_| eligible) {
            cut[l] = 0;
            net.set_feeds_cut(input as usize, true);
        }
    }
    cut
}

impl Simulation {
    /// `pkt`, just begun on `l` (of `pipe`) with nothing queued behind it, goes on
    /// the wire now; its `TxDone`, due at `done`, takes its place in the event
    /// order but enters the queue only if a packet arrives before it
    /// (`enqueue_on`). Results are those of queueing it at once.
    #[inline]
    pub(super) fn send_ahead(&mut self, l: usize, pkt: Packet, done: Time, pipe: Pipe) {
        let link = &mut self.net.links[l];
        if link.monitor().is_some() {
            link.qdisc.hold(pkt);
        }
        link.deferred = self.events.defer(done, l as u32);
        let node = link.send_ahead();
        self.put_on_wire(l, done + pipe.delay, node, pipe.feeds_cut);
    }

    /// Before a packet enters `l`: a deferred end that has passed means the link
    /// went idle then.
    #[inline(always)]
    pub(super) fn settle_passed_end(&mut self, l: usize) {
        let link = &self.net.links[l];
        if link.sent_ahead() && link.deferred.is_some() && self.events.passed(link.deferred) {
            self.idle_from_deferred_end(l);
        }
    }

    /// A packet waits behind the busy transmitter of `l`: its end matters now, so
    /// a deferred `TxDone` enters the queue.
    #[inline]
    pub(super) fn queue_deferred_end(&mut self, l: usize) {
        let link = &mut self.net.links[l];
        if link.deferred.is_some() {
            self.events
                .materialize(std::mem::replace(&mut link.deferred, Deferred::NONE));
        }
    }

    /// A queued deferred `TxDone` of `l` ran: the packet is on the wire already;
    /// the transmitter is free.
    #[inline]
    pub(super) fn end_queued_deferred(&mut self, l: usize) {
        let link = &mut self.net.links[l];
        link.end_sent_ahead();
        if let Some(m) = link.monitor() {
            self.tell_sent_ahead_end(l, m, None);
        }
    }

    /// Tells observer `m` of link `l` that the transmission sent ahead ended
    /// (with the busy period of `busy_ns`, if the link went idle then).
    #[inline(never)]
    fn tell_sent_ahead_end(&mut self, l: usize, m: u32, busy_ns: Option<u64>) {
        let pkt = self.net.links[l]
            .qdisc
            .take_held()
            .expect("a packet sent ahead");
        let stats = &mut self.obs.links[m as usize];
        stats.on_tx_done(&pkt);
        if let Some(busy) = busy_ns {
            stats.on_idle(busy);
        }
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
            self.tell_sent_ahead_end(l, m, Some(busy.as_nanos()));
        }
    }

    /// The last bit of the packet in wire-slab `node` has left (or, sent ahead,
    /// will leave) the transmitter of `l`; it reaches the far end at `at`. Puts it
    /// on the wire, or, as long as the next link can take it then
    /// (`cut_through`), on that link's wire. `may_cut`: `l` feeds a link that
    /// cuts through (`Pipe::feeds_cut`).
    #[inline]
    pub(super) fn put_on_wire(&mut self, mut l: usize, mut at: Time, node: u32, mut may_cut: bool) {
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

    /// A packet awaited by `l` (it took the normal path to a link that cuts
    /// through) has arrived.
    #[inline]
    pub(super) fn awaited_arrived(&mut self, l: usize) {
        let awaited = &mut self.cut[l];
        if *awaited != NO_CUT {
            *awaited -= 1;
        }
    }

    /// Tells the observers of links that sent ahead the ends of transmissions
    /// that have passed, before they are read: those before the event now
    /// running, or (`through_now`) all up to `now`.
    pub(super) fn settle_observed(&mut self, through_now: bool) {
        for k in 0..self.obs.links.len() {
            let l = self.obs.links[k].link as usize;
            let link = &self.net.links[l];
            if link.sent_ahead()
                && link.deferred.is_some()
                && (self.events.passed(link.deferred)
                    || through_now && link.deferred.time() <= self.now)
            {
                self.idle_from_deferred_end(l);
            }
        }
    }

    /// The event queue renumbers its sequence numbers: the reserved ones too.
    #[inline]
    pub(super) fn renumber_deferred(&mut self) {
        let deferred = self.net.links.iter_mut().map(|l| &mut l.deferred);
        self.events.renumber(deferred);
    }

    /// Link `l` neither sends ahead nor cuts through (a pcap tap records each
    /// transmission's end as it happens).
    pub(super) fn no_shortcuts_on(&mut self, l: usize) {
        self.net.set_send_ahead(l, false);
        self.cut[l] = NO_CUT;
    }

    /// Turns cut-through off (tests: it must change nothing but the event count
    /// and the order of events at one instant).
    #[cfg(test)]
    pub(crate) fn no_cut_through(&mut self) {
        self.cut.fill(NO_CUT);
    }

    /// Stops observed links from sending ahead (tests: it must change nothing but
    /// the event count and the order of events at one instant).
    #[cfg(test)]
    pub(crate) fn no_observed_send_ahead(&mut self) {
        for l in 0..self.net.links.len() {
            if self.net.links[l].monitor().is_some() {
                self.net.set_send_ahead(l, false);
            }
        }
    }
}
