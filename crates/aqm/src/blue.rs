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
//! Defaults: `increment = 0.0025`, `decrement = 0.00025` (the values the ns-3 SFB
//! port uses, reported as ns-2's BLUE defaults; the SFB paper states none),
//! `freeze_time = 100ms` (the BLUE report's order of magnitude; not checked against
//! its text here, which is not among the seeds), and
//! `limit = 200` packets: the SFB paper's 200 KB buffer (000 section III-B) at
//! 1000-byte packets.

use crate::drop_reason::DropReason;
use crate::fifo::PacketFifo;
use crate::packet::Packet;
use crate::qdisc::{check, Ctx, Limit, ParamError, Qdisc, Verdict};
use crate::time::{Dur, Time};
use serde::{Deserialize, Serialize};

/// BLUE parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BlueParams {
    /// Capacity in packets. Default 200: the SFB paper's 200 KB at 1000-byte packets.
    pub limit: u32,
    /// Step by which `p` rises on overflow. Default 0.0025 (ns-2 `Queue/Blue`).
    pub increment: f64,
    /// Step by which `p` falls when the link goes idle. Default 0.00025 (ns-2).
    pub decrement: f64,
    /// Least time between two changes of `p`. Default 100ms (BLUE report).
    pub freeze_time: Dur,
    /// CE-mark ECN-capable packets instead of dropping them early.
    pub ecn: bool,
}

impl Default for BlueParams {
    fn default() -> Self {
        BlueParams {
            limit: 200,
            increment: 0.0025,
            decrement: 0.00025,
            freeze_time: Dur::from_millis(100),
            ecn: false,
        }
    }
}

impl BlueParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        check::at_least("limit", self.limit, 1)?;
        check_step("increment", self.increment)?;
        check_step("decrement", self.decrement)
    }
}

/// A BLUE step must be in (0, 1]. Shared with SFB.
pub(crate) fn check_step(key: &'static str, v: f64) -> Result<(), ParamError> {
    if v > 0.0 && v <= 1.0 {
        Ok(())
    } else {
        Err(ParamError::new(key, v, "must be in (0, 1]"))
    }
}

/// A BLUE probability with its freeze clock: the state of a BLUE queue, and of
/// every SFB bin.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct BlueProbability {
    /// The marking probability, in [0, 1].
    pub p: f64,
    /// The earliest time `p` may change again.
    next_update: Time,
}

impl Default for BlueProbability {
    fn default() -> Self {
        BlueProbability {
            p: 0.0,
            next_update: Time::ZERO,
        }
    }
}

impl BlueProbability {
    /// Raises `p` by `step` unless it changed less than `freeze` ago. Returns
    /// whether it changed.
    #[inline]
    pub fn raise(&mut self, step: f64, now: Time, freeze: Dur) -> bool {
        if now < self.next_update {
            return false;
        }
        // Snap to 1 so that 1/step increments reach exactly 1 despite rounding.
        let p = self.p + step;
        self.p = if p > 1.0 - 1e-9 { 1.0 } else { p };
        self.next_update = now + freeze;
        true
    }

    /// Lowers `p` by `step` unless it changed less than `freeze` ago.
    #[inline]
    pub fn lower(&mut self, step: f64, now: Time, freeze: Dur) -> bool {
        if now < self.next_update {
            return false;
        }
        let p = self.p - step;
        self.p = if p < 1e-12 { 0.0 } else { p };
        self.next_update = now + freeze;
        true
    }
}

#[derive(Debug, Clone)]
pub struct Blue {
    params: BlueParams,
    prob: BlueProbability,
    queue: PacketFifo,
}

impl Blue {
    pub fn new(params: BlueParams) -> Result<Self, ParamError> {
        params.validate()?;
        Ok(Blue {
            prob: BlueProbability::default(),
            queue: PacketFifo::with_capacity(params.limit.min(4096) as usize),
            params,
        })
    }

    /// The current marking probability.
    pub fn p(&self) -> f64 {
        self.prob.p
    }
}

impl Qdisc for Blue {
    fn enqueue(&mut self, mut pkt: Packet, ctx: &mut Ctx<'_>) -> Verdict {
        let p = &self.params;
        if self.queue.len() >= p.limit as usize {
            self.prob.raise(p.increment, ctx.now, p.freeze_time);
            ctx.drop(pkt, DropReason::Overflow);
            return Verdict::Dropped;
        }
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

    fn len(&self) -> usize {
        self.queue.len()
    }
    fn bytes(&self) -> u64 {
        self.queue.bytes()
    }
    fn limit(&self) -> Limit {
        Limit::Packets(self.params.limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Harness;

    fn blue(params: BlueParams) -> Harness<Blue> {
        Harness::new(Blue::new(params).unwrap())
    }

    /// Offers `n` packets 1 ms apart to a queue that never drains.
    fn overload(h: &mut Harness<Blue>, n: u32) {
        for seq in 0..n {
            h.offer(1, seq);
            h.advance(Dur::from_millis(1));
        }
    }

    #[test]
    fn p_rises_under_sustained_overflow_once_per_freeze_time() {
        let mut h = blue(BlueParams {
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
        let mut h = blue(BlueParams {
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
        let mut h = blue(BlueParams {
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
        let mut h = blue(BlueParams {
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
        let e = Blue::new(BlueParams {
            increment: 0.0,
            ..Default::default()
        })
        .unwrap_err();
        assert_eq!(e.to_string(), "increment = 0 must be in (0, 1]");
        let e = Blue::new(BlueParams {
            limit: 0,
            ..Default::default()
        })
        .unwrap_err();
        assert_eq!(e.to_string(), "limit = 0 must be at least 1");
    }
}
