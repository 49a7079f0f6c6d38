//! A link direction whole, for a runner that drives it one packet at a time on a
//! clock of its own (the emulator's data plane, on its logical wall clock): its
//! queue, its model and its delay together. The engine drives the same
//! [`LinkModel`] operations over its shared tables on simulated time
//! (`engine/varying.rs`); only its plain path for links of constant rate (busy
//! periods timed from cumulative bits, sending ahead, cut-through) is its own,
//! since a link must stay 64 bytes there.

use super::LinkModel;
use crate::link::Queue;
use aqm::{Dur, Time};

/// A link direction's queue, model and propagation delay. A link the scenario
/// does not model has a [`LinkModel::constant`] one, so a runner has one path for
/// both.
pub struct LinkRuntime {
    pub queue: Queue,
    pub model: LinkModel,
    pub delay: Dur,
    /// Whether the scenario gives the link a constant rate and nothing else
    /// (`model` is then `LinkModel::constant`).
    pub constant: bool,
}

impl LinkRuntime {
    /// A packet arrives at `now`: the qdisc is told the rate if it changed, and
    /// the link's loss is drawn. Returns whether the loss takes it, before the
    /// queue ([`LinkModel::arrive`]).
    #[inline]
    pub fn arrive(&mut self, now: Time) -> bool {
        self.model.arrive(now, &mut self.queue)
    }

    /// When a packet of `bytes` whose transmission starts at `start` has left.
    #[inline]
    pub fn tx_end(&mut self, start: Time, bytes: u32) -> Time {
        self.model.tx_end(start, bytes)
    }

    /// When a packet that left at `left` reaches the far end (delay and jitter).
    #[inline]
    pub fn far_end(&mut self, left: Time) -> Time {
        self.model.far_end(left, self.delay)
    }

    /// How many bits of a packet of `bytes` in transmission over `span` (when it
    /// started, when it will have left) count as sent at `now`, as the simulator
    /// counts them: as they leave on a link of constant rate; on a link the
    /// scenario models, when the packet has left (a trace's packet waits for its
    /// opportunity, it is not being sent).
    pub fn bits_sent(&self, bytes: u32, (start, done): (Time, Time), now: Time) -> u64 {
        let bits = u64::from(bytes) * 8;
        if now >= done {
            return bits;
        }
        if !self.constant {
            return 0;
        }
        let elapsed = u128::from(now.saturating_since(start).as_nanos());
        let length = u128::from(done.saturating_since(start).as_nanos()).max(1);
        (u128::from(bits) * elapsed / length) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::LinkRuntime;
    use crate::link::Queue;
    use crate::link_model::LinkModel;
    use aqm::{Dur, Rate, Time};

    /// A link the scenario does not model loses nothing, times each packet as
    /// its rate does (rounded up to the nanosecond) and delivers it its delay
    /// later: what the emulator's plain bottleneck computed by hand before.
    #[test]
    fn a_constant_link_times_packets_by_its_rate_and_delay() {
        let rate = Rate::from_bps(3_000_000);
        let mut link = LinkRuntime {
            queue: Queue::lazy_droptail(),
            model: LinkModel::constant(rate),
            delay: Dur::from_millis(7),
            constant: true,
        };
        let t = Time::from_nanos(123);
        for bytes in [40u32, 1500, 9001] {
            assert!(!link.arrive(t));
            let done = link.tx_end(t, bytes);
            let by_hand = (u64::from(bytes) * 8 * 1_000_000_000).div_ceil(3_000_000);
            assert_eq!(done, t + Dur::from_nanos(by_hand));
            assert_eq!(link.far_end(done), done + Dur::from_millis(7));
            // Its bits count as they leave: half of them half way.
            let half = t + Dur::from_nanos(by_hand / 2);
            let sent = link.bits_sent(bytes, (t, done), half);
            assert!(sent.abs_diff(u64::from(bytes) * 4) <= 1, "{sent}");
            assert_eq!(link.bits_sent(bytes, (t, done), done), u64::from(bytes) * 8);
        }
        // A modelled link counts a packet's bits when it has left.
        link.constant = false;
        let done = link.tx_end(t, 1500);
        assert_eq!(link.bits_sent(1500, (t, done), t + Dur::from_nanos(1)), 0);
    }
}
