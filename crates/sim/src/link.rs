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
//! its `TxDone` is deferred: most access links never need one (`engine::forward`).

use crate::event::Deferred;
use crate::wire::{Wire, WireSlab};
use aqm::{AnyQdisc, Dur, Packet, Rate, Rng, Time};

pub struct Link {
    pub from: u32,
    pub to: u32,
    pub rate: Rate,
    pub delay: Dur,
    pub qdisc: AnyQdisc,
    pub rng: Rng,
    /// The packet being serialized.
    pub current: Option<Packet>,
    /// Start of the current busy period and bits sent in it (0: idle).
    busy_since: Time,
    busy_bits: u128,
    /// Packets on the wire with their arrival times, oldest first.
    pub wire: Wire,
    /// Index of this link's observer, if it is monitored.
    pub monitor: Option<u32>,
    /// Whether a packet may go on the wire when its transmission starts, its
    /// `TxDone` deferred (unobserved links whose qdisc passes packets through when
    /// empty: nothing watches the transmitter's end, and an idle dequeue does
    /// nothing). Set by the engine.
    pub send_ahead: bool,
    /// The packet being serialized is already on the wire; its `TxDone` is
    /// deferred (`deferred`) or queued (see `engine::forward`).
    pub sent_ahead: bool,
    /// The deferred `TxDone`'s place in the event order, if it is not queued.
    pub deferred: Deferred,
}

/// Nanoseconds to send `bits` at `bps`, rounded up (saturating). In u64 when the
/// product fits, which is every busy period below 18 Gbit: a u128 division is a
/// call to `__udivti3`, 2% of a run's profile. The result is the same.
#[inline]
fn ceil_ns(bits: u128, bps: u64) -> u64 {
    match u64::try_from(bits)
        .ok()
        .and_then(|b| b.checked_mul(1_000_000_000))
    {
        Some(x) => x.div_ceil(bps),
        None => (bits * 1_000_000_000)
            .div_ceil(u128::from(bps))
            .min(u64::MAX as u128) as u64,
    }
}

impl Link {
    pub fn new(from: u32, to: u32, rate: Rate, delay: Dur, qdisc: AnyQdisc, rng: Rng) -> Self {
        Link {
            from,
            to,
            rate,
            delay,
            qdisc,
            rng,
            current: None,
            busy_since: Time::ZERO,
            busy_bits: 0,
            wire: Wire::default(),
            monitor: None,
            send_ahead: false,
            sent_ahead: false,
            deferred: Deferred::NONE,
        }
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
            + Dur::from_nanos(((self.busy_bits - size) * 1_000_000_000).div_ceil(rate) as u64);
        let elapsed = now.saturating_since(start).as_nanos() as u128;
        Some((pkt, (elapsed * rate / 1_000_000_000).min(size) as u64))
    }

    /// Starts serializing `pkt` at `now`; returns when the last bit leaves.
    #[inline]
    pub fn begin_tx(&mut self, pkt: Packet, now: Time) -> Time {
        if self.current.is_none() && self.busy_bits == 0 {
            self.busy_since = now;
        }
        self.busy_bits += pkt.size as u128 * 8;
        self.current = Some(pkt);
        self.busy_since + Dur::from_nanos(ceil_ns(self.busy_bits, self.rate.bps()))
    }

    /// The current packet's last bit left at `now`; it goes on the wire. Returns the
    /// packet and whether an `Arrive` must be scheduled (the wire was empty).
    #[inline]
    pub fn end_tx(&mut self, now: Time, wires: &mut WireSlab) -> (Packet, bool) {
        let pkt = self
            .current
            .take()
            .expect("TxDone without a packet in transmission");
        let was_empty = wires.push_back(&mut self.wire, now + self.delay, pkt);
        (pkt, was_empty)
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
    use super::ceil_ns;
    use proptest::prelude::*;

    proptest! {
        /// The u64 path rounds exactly as the u128 one, on both sides of its limit.
        #[test]
        fn ceil_ns_matches_u128_arithmetic(
            bits in prop_oneof![0u128..1 << 40, 0u128..1 << 80],
            bps in 1u64..=u64::MAX,
        ) {
            let want = (bits * 1_000_000_000).div_ceil(u128::from(bps)).min(u64::MAX as u128) as u64;
            prop_assert_eq!(ceil_ns(bits, bps), want);
        }
    }
}
