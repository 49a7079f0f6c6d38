//! Modelled links (`link::LinkModel`): a rate that varies over time, random loss
//! before the queue, and jitter on the propagation delay. A link of constant rate
//! and delay never comes here (`Pipe::model` is `NO_MODEL`), so it keeps the plain
//! path and its speed; a modelled one takes none of `ahead`'s shortcuts. What the
//! link does is `LinkModel`'s (`arrive`, `tx_end`, `far_end`), the same calls the
//! emulator makes on its clock; here is only how the engine schedules and counts.

use super::Simulation;
use crate::event::Event;
use aqm::{DropReason, Packet, Time};

impl Simulation {
    /// `pkt` arrives at link `l` of model `m`: the qdisc is told the link's rate
    /// if it changed since it was last told (`Qdisc::set_link_rate`); returns
    /// whether the link's loss takes the packet, before the queue. A lost packet
    /// is counted as `link_loss` for its flow and the link's observer, never as
    /// the qdisc's.
    #[inline(never)]
    pub(super) fn lost_on_link(&mut self, l: usize, m: u32, pkt: Packet) -> bool {
        let queue = &mut self.net.links[l].qdisc;
        if !self.net.models[m as usize].arrive(self.now, queue) {
            return false;
        }
        if let Some(k) = self.net.links[l].monitor() {
            self.obs.links[k as usize].on_link_loss(pkt.flow.index());
        }
        self.sink.drops.push((pkt, DropReason::LinkLoss));
        self.settle_sink(l);
        true
    }

    /// When a packet of `size` bytes that starts now on modelled link `l`
    /// (model `m`) has left its transmitter.
    #[inline(never)]
    pub(super) fn begin_varying(&mut self, l: usize, m: u32, pkt: Packet) -> Time {
        let now = self.now;
        self.net.links[l].begin_tx_varying(pkt, now, &mut self.wires);
        self.net.models[m as usize].tx_end(now, pkt.size)
    }

    /// The packet in wire-slab node `node`, which left modelled link `l` (model
    /// `m`) now, propagates: with jitter, its drawn delay, after the packet before
    /// it unless it may overtake (then it arrives by an event of its own).
    /// Returns its arrival on the wire, `None` when it travels alone.
    #[inline(never)]
    pub(super) fn propagate_varying(&mut self, m: u32, node: u32, delay: aqm::Dur) -> Option<Time> {
        let now = self.now;
        let model = &mut self.net.models[m as usize];
        let at = model.far_end(now, delay);
        if !model.reorders() {
            return Some(at);
        }
        assert!(
            node < crate::event::MAX_LINKS as u32,
            "fewer than 2^29 packets in flight on links that reorder"
        );
        self.events.push(at, Event::Jittered(node));
        None
    }

    /// A packet that may overtake others reaches the far end of its link.
    pub(super) fn on_jittered(&mut self, node: u32) {
        let pkt = self.wires.take_parked(node);
        self.forward(pkt);
    }
}
