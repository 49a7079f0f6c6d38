//! One direction of a point-to-point link: an egress qdisc, a transmitter, and the
//! packets propagating on the wire.
//!
//! Physics decides the event count: the transmitter has at most one `TxDone`
//! pending, and because the delay is fixed, packets on the wire arrive in the order
//! they left, so the wire is a ring with at most one `Arrive` pending (htsim does the
//! same); the wires of all links share one slab (`wire.rs`). Back-to-back transmissions are timed from the cumulative bits of the busy
//! period, so per-packet rounding to nanoseconds never drifts.

use crate::wire::{Wire, WireSlab};
use aqm::{AnyQdisc, Dur, Monitored, Packet, QueueCounts, Rate, Rng, Time};

/// Counters of a link direction that only ever grow; a warm-up snapshot is
/// subtracted from them at the end.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkCounters {
    pub tx_packets: u64,
    pub tx_bytes: u64,
    /// Nanoseconds spent transmitting.
    pub busy_ns: u128,
    /// Integral of the backlog (packets) over time, packet-nanoseconds.
    pub queue_area: u128,
    pub queue: QueueCounts,
}

pub struct Link {
    pub from: u32,
    pub to: u32,
    pub rate: Rate,
    pub delay: Dur,
    pub qdisc: Monitored<AnyQdisc>,
    pub rng: Rng,
    /// The packet being serialized.
    pub current: Option<Packet>,
    /// Start of the current busy period and bits sent in it.
    busy_since: Time,
    busy_bits: u128,
    /// Packets on the wire with their arrival times, oldest first.
    pub wire: Wire,
    /// Index into the monitored links, if this one is monitored.
    pub monitor: Option<usize>,
    tx_packets: u64,
    tx_bytes: u64,
    busy_ns: u128,
    queue_area: u128,
    queue_changed: Time,
    pub max_queue: u32,
}

impl Link {
    pub fn new(from: u32, to: u32, rate: Rate, delay: Dur, qdisc: AnyQdisc, rng: Rng) -> Self {
        Link {
            from,
            to,
            rate,
            delay,
            qdisc: Monitored::new(qdisc),
            rng,
            current: None,
            busy_since: Time::ZERO,
            busy_bits: 0,
            wire: Wire::default(),
            monitor: None,
            tx_packets: 0,
            tx_bytes: 0,
            busy_ns: 0,
            queue_area: 0,
            queue_changed: Time::ZERO,
            max_queue: 0,
        }
    }

    pub fn is_busy(&self) -> bool {
        self.current.is_some()
    }

    /// Call before the backlog changes: accumulates the time-weighted backlog.
    #[inline]
    pub fn before_queue_change(&mut self, now: Time) {
        let dt = now.saturating_since(self.queue_changed).as_nanos() as u128;
        self.queue_area += dt * self.qdisc.len() as u128;
        self.queue_changed = now;
    }

    /// Call after the backlog changed.
    #[inline]
    pub fn after_queue_change(&mut self) {
        self.max_queue = self.max_queue.max(self.qdisc.len() as u32);
    }

    /// Starts serializing `pkt` at `now`; returns when the last bit leaves.
    #[inline]
    pub fn begin_tx(&mut self, pkt: Packet, now: Time) -> Time {
        if self.current.is_none() && self.busy_bits == 0 {
            self.busy_since = now;
        }
        self.busy_bits += pkt.size as u128 * 8;
        self.current = Some(pkt);
        let ns = (self.busy_bits * 1_000_000_000).div_ceil(self.rate.bps() as u128);
        self.busy_since + Dur::from_nanos(ns.min(u64::MAX as u128) as u64)
    }

    /// The current packet's last bit left at `now`; it goes on the wire. Returns the
    /// packet and whether an `Arrive` must be scheduled (the wire was empty).
    #[inline]
    pub fn end_tx(&mut self, now: Time, wires: &mut WireSlab) -> (Packet, bool) {
        let pkt = self
            .current
            .take()
            .expect("TxDone without a packet in transmission");
        self.tx_packets += 1;
        self.tx_bytes += pkt.size as u64;
        let was_empty = wires.push_back(&mut self.wire, now + self.delay, pkt);
        (pkt, was_empty)
    }

    /// Nothing more to send at `now`: the busy period ends.
    #[inline]
    pub fn go_idle(&mut self, now: Time) {
        self.busy_ns += now.saturating_since(self.busy_since).as_nanos() as u128;
        self.busy_bits = 0;
    }

    /// The counters as of `now` (busy time and queue area include the running part).
    pub fn counters(&self, now: Time) -> LinkCounters {
        let running_busy = if self.busy_bits > 0 {
            now.saturating_since(self.busy_since).as_nanos() as u128
        } else {
            0
        };
        let running_area =
            now.saturating_since(self.queue_changed).as_nanos() as u128 * self.qdisc.len() as u128;
        LinkCounters {
            tx_packets: self.tx_packets,
            tx_bytes: self.tx_bytes,
            busy_ns: self.busy_ns + running_busy,
            queue_area: self.queue_area + running_area,
            queue: self.qdisc.counts(),
        }
    }
}
