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
        };
        let t = Time::from_nanos(123);
        for bytes in [40u32, 1500, 9001] {
            assert!(!link.arrive(t));
            let done = link.tx_end(t, bytes);
            let by_hand = (u64::from(bytes) * 8 * 1_000_000_000).div_ceil(3_000_000);
            assert_eq!(done, t + Dur::from_nanos(by_hand));
            assert_eq!(link.far_end(done), done + Dur::from_millis(7));
        }
    }
}
