//! BLUE: one marking probability learned from loss and idleness (Feng, Kandlur,
//! Saha & Shin, U. Michigan CSE-TR-387-99, 1999; summarised in the SFB paper, 000
//! section II).
//!
//! BLUE does not look at the queue length. It keeps a single probability `p` and
//! marks (or drops) every arrival with it. When the buffer overflows (an arrival
//! finds the queue at `limit`), `p` rises by `increment`; when the link goes idle
//! (a dequeue finds the queue empty), `p` falls by `decrement`. Either change
//! happens at most once per `freeze_time`, so `p` moves in steps that leave the
//! senders time to react. `decrement` is much smaller than `increment` so BLUE
//! reacts fast to congestion and relaxes slowly.
//!
//! Arrivals dropped with probability `p` report [`DropReason::Early`] (CE marks
//! instead when `ecn` is on and the packet is ECN-capable, through
//! [`Ctx::mark_or_drop`]); arrivals that find the queue full report
//! [`DropReason::Overflow`].
//!
//! Where others differ: Linux has no standalone BLUE qdisc (only SFB, whose bins are
//! BLUE queues and which has no freeze time). The BLUE report also allows raising `p`
//! when the queue passes a threshold below the buffer size (`L` in its Fig. 2); we
//! raise it on overflow only, as the SFB paper's summary describes. The link-idle
//! event is "a dequeue finds the queue empty": the qdisc has no clock of its own.
//!
//! Defaults: the steps the ns-3 SFB port uses, reported as ns-2's BLUE defaults
//! (the SFB paper states none); a freeze time of the BLUE report's order of
//! magnitude (its text is not among the seeds: unverified); the SFB paper's 200 KB
//! buffer (000 section III-B) at 1000-byte packets.

use crate::drop_reason::DropReason;
use crate::packet::Packet;
use crate::parts::blue_probability::{check_step, BlueProbability};
use crate::parts::fifo::{backlog_of, LimitedQueue};
use crate::parts::params::qdisc_params;
use crate::qdisc::{check, Ctx, LinkInfo, ParamError, Qdisc, QdiscParams, Verdict};
use crate::time::Dur;

qdisc_params! {
    /// BLUE parameters.
    pub struct BlueParams {
        /// Capacity in packets (the SFB paper's 200 KB at 1000-byte packets).
        limit: u32 = 200,
        /// Step by which `p` rises on overflow (ns-2 `Queue/Blue`).
        increment: f64 = 0.0025,
        /// Step by which `p` falls when the link goes idle (ns-2).
        decrement: f64 = 0.00025,
        /// Least time between two changes of `p` (BLUE report).
        freeze_time: Dur = Dur::from_millis(100),
        /// CE-mark ECN-capable packets instead of dropping them early.
        ecn: bool = false,
    }
}

impl QdiscParams for BlueParams {
    type Qdisc = Blue;
    fn validate(&self) -> Result<(), ParamError> {
        check::limit("limit", self.limit)?;
        check_step("increment", self.increment)?;
        check_step("decrement", self.decrement)
    }
    fn build(&self, _link: &LinkInfo) -> Result<Blue, ParamError> {
        Blue::new(self.clone())
    }
    fn property_configs() -> Vec<Self> {
        vec![BlueParams {
            limit: 6,
            increment: 0.2,
            decrement: 0.05,
            freeze_time: Dur::from_millis(1),
            ecn: true,
        }]
    }
}

#[derive(Debug, Clone)]
pub struct Blue {
    params: BlueParams,
    prob: BlueProbability,
    queue: LimitedQueue,
}

impl Blue {
    pub fn new(params: BlueParams) -> Result<Self, ParamError> {
        params.validate()?;
        Ok(Blue {
            prob: BlueProbability::default(),
            queue: LimitedQueue::new(params.limit),
            params,
        })
    }

    /// The current marking probability.
    pub fn p(&self) -> f64 {
        self.prob.p
    }
}

impl Blue {
    /// The buffer overflowed: `p` rises, the arrival is dropped. Out of line, to
    /// keep the common path light.
    #[cold]
    #[inline(never)]
    fn overflow(&mut self, pkt: Packet, ctx: &mut Ctx<'_>) -> Verdict {
        let p = &self.params;
        self.prob.raise(p.increment, ctx.now, p.freeze_time);
        ctx.drop(pkt, DropReason::Overflow);
        Verdict::Dropped
    }
}

impl Qdisc for Blue {
    backlog_of!(queue);

    fn enqueue(&mut self, mut pkt: Packet, ctx: &mut Ctx<'_>) -> Verdict {
        if self.queue.is_full() {
            return self.overflow(pkt, ctx);
        }
        let p = &self.params;
        if self.prob.p > 0.0 && ctx.uniform() < self.prob.p {
            match ctx.mark_or_drop(pkt, p.ecn, DropReason::Early) {
                Some(marked) => pkt = marked,
                None => return Verdict::Dropped,
            }
        }
        self.queue.push_back(pkt);
        Verdict::Queued
    }

    fn dequeue(&mut self, ctx: &mut Ctx<'_>) -> Option<Packet> {
        let pkt = self.queue.pop_front();
        if pkt.is_none() {
            let p = &self.params;
            self.prob.lower(p.decrement, ctx.now, p.freeze_time);
        }
        pkt
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{rejection, Harness};

    /// Offers `n` packets 1 ms apart to a queue that never drains.
    fn overload(h: &mut Harness<Blue>, n: u32) {
        for seq in 0..n {
            h.offer(1, seq);
            h.advance(Dur::from_millis(1));
        }
    }

    #[test]
    fn p_rises_under_sustained_overflow_once_per_freeze_time() {
        let mut h = Harness::build(BlueParams {
            limit: 10,
            ..Default::default()
        });
        // 10 ms fill the queue; then 1990 ms of overflow, one arrival per ms. With
        // a 100 ms freeze, p rises 20 times (at the first overflow and every 100 ms
        // after), not once per overflow (1990 times).
        overload(&mut h, 2_000);
        assert!(h.drops(DropReason::Overflow) > 1_000);
        let p = h.q.qdisc().p();
        assert!((p - 20.0 * 0.0025).abs() < 1e-9, "p = {p}");
    }

    #[test]
    fn p_falls_when_the_link_goes_idle_once_per_freeze_time() {
        let mut h = Harness::build(BlueParams {
            limit: 10,
            ..Default::default()
        });
        overload(&mut h, 2_000);
        let high = h.q.qdisc().p();
        h.drain_seqs();
        // The link polls an empty queue every ms for one second: ten decrements.
        h.advance(Dur::from_millis(100));
        for _ in 0..1_000 {
            h.dequeue();
            h.advance(Dur::from_millis(1));
        }
        let low = h.q.qdisc().p();
        assert!(
            (high - low - 10.0 * 0.00025).abs() < 1e-9,
            "high {high} low {low}"
        );
    }

    #[test]
    fn a_zero_freeze_time_moves_p_on_every_event() {
        let mut h = Harness::build(BlueParams {
            limit: 5,
            freeze_time: Dur::ZERO,
            ..Default::default()
        });
        for seq in 0..15 {
            h.offer(1, seq);
        }
        // 10 overflows: p = 10 * increment (no early drops happen while p is 0
        // and the first five fill the queue).
        let overflows = h.drops(DropReason::Overflow) as f64;
        assert!((h.q.qdisc().p() - overflows * 0.0025).abs() < 1e-9);
        assert!(overflows >= 9.0);
    }

    #[test]
    fn arrivals_are_dropped_or_marked_with_probability_p() {
        // Drive p up, then hold the queue short so there is no overflow and count.
        let mut h = Harness::build(BlueParams {
            limit: 2,
            freeze_time: Dur::ZERO,
            increment: 0.1,
            ecn: true,
            ..Default::default()
        });
        for seq in 0..5 {
            h.offer(1, seq); // 2 queued, 3 overflows: p = 0.3
        }
        let p = h.q.qdisc().p();
        assert!((p - 0.3).abs() < 1e-9, "{p}");
        h.drain_seqs();
        let n = 20_000;
        for seq in 0..n {
            h.offer_ect(1, 10 + seq);
            h.dequeue();
        }
        let marks = h.marks(DropReason::Early) as f64 / n as f64;
        assert!((marks - 0.3).abs() < 0.02, "mark rate {marks}");
        assert_eq!(
            h.drops(DropReason::Early),
            0,
            "ECN-capable: marked, not dropped"
        );
    }

    #[test]
    fn bad_steps_are_rejected_by_name() {
        let bad = |p: BlueParams| rejection(p);
        assert_eq!(
            bad(BlueParams {
                increment: 0.0,
                ..Default::default()
            }),
            "increment = 0 must be in (0, 1]"
        );
        assert_eq!(
            bad(BlueParams {
                limit: 0,
                ..Default::default()
            }),
            "limit = 0 must be at least 1"
        );
    }
}
