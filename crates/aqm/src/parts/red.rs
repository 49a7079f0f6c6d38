//! RED's core, shared by every RED-based qdisc, as Linux keeps it in
//! `include/net/red.h` apart from `sch_red.c`, `sch_choke.c` and `sch_sfq.c`.
//!
//! - [`RedAverage`]: the EWMA of the queue (Floyd & Jacobson 1993, section 4) with
//!   ns-2's idle-time correction: after an idle period the average decays as if
//!   `m = idle time x link rate / (8 mean_pkt_size)` packets had found the queue
//!   empty, `avg = avg (1 - w_q)^(m+1) + w_q q`.
//! - [`Curve`]: where an average falls ([`RedRegion`]): RED's line from 0 at
//!   `min_th` to `max_p` at `max_th` and forced drops above; the gentle ramp (GRED)
//!   from `max_p` to 1 between `max_th` and `2 max_th`; and NLRED's quadratic
//!   `scale max_p x^2` (seed 004 section 4.1), forced at and above `max_th`.
//! - [`RedCount`]: `count`, arrivals since the last early drop, -1 below `min_th`,
//!   and the spacing it gives ([`spaced_probability`]): with ns-2's `wait`, no drop
//!   before `count p_b >= 1`, then `p_b / (2 - count p_b)`; without it
//!   `p_b / (1 - count p_b)`. [`RedCount::decide`] is Linux's `red_action`;
//!   [`red_queue`](crate::parts::red_queue) carries it out.
//! - [`AdaptiveMaxP`]: Adaptive RED's max_p controller (Floyd, Gummadi & Shenker
//!   2001, Fig. 5), with the paper's bounds or a clamped ceiling (SFRED).
//!
//! - [`RedRegion::gated`]: ns-2's `qlen > 1` rule, no drop by the average while at
//!   most one packet is queued ahead of the arrival.
//!
//! Byte mode (ns-2 `queue_in_bytes_`) is [`RedRegion::scaled`]: p_b times
//! `size / mean_pkt_size`, capped at 1.

use crate::packet::Packet;
use crate::qdisc::{Ctx, LinkInfo};
use crate::time::{Dur, Time};

/// RED's average queue estimator with the idle-time correction.
#[derive(Debug, Clone)]
pub struct RedAverage {
    pub avg: f64,
    w_q: f64,
    /// Mean-sized packets the link sends per second: how fast an idle queue decays.
    packets_per_sec: f64,
    mean_pkt_bits: f64,
    idle_since: Option<Time>,
}

impl RedAverage {
    pub fn new(w_q: f64, link: &LinkInfo, mean_pkt_size: u32) -> Self {
        let mean_pkt_bits = 8.0 * mean_pkt_size.max(1) as f64;
        RedAverage {
            avg: 0.0,
            w_q,
            packets_per_sec: link.rate.as_f64() / mean_pkt_bits,
            mean_pkt_bits,
            idle_since: Some(Time::ZERO),
        }
    }

    /// The link's rate changed (a varying link): an idle queue decays as fast as
    /// the link would now send.
    #[inline]
    pub fn set_link_rate(&mut self, rate: crate::units::Rate) {
        self.packets_per_sec = rate.as_f64() / self.mean_pkt_bits;
    }

    /// Folds in the instantaneous queue `q` seen by an arrival at `now`.
    #[inline(always)]
    pub fn update(&mut self, q: f64, now: Time) -> f64 {
        let m = match self.idle_since.take() {
            Some(since) => {
                (now.saturating_since(since).as_secs_f64() * self.packets_per_sec) as i32
            }
            None => 0,
        };
        self.avg = self.avg * (1.0 - self.w_q).powi(m.saturating_add(1)) + self.w_q * q;
        self.avg
    }

    /// The queue went empty at `now`: start the idle clock.
    #[inline]
    pub fn set_idle(&mut self, now: Time) {
        if self.idle_since.is_none() {
            self.idle_since = Some(now);
        }
    }

    /// Passes a dequeue's result through, starting the idle clock when the dequeue
    /// found the queue empty (the link goes idle).
    #[inline(always)]
    pub fn dequeued(&mut self, pkt: Option<Packet>, now: Time) -> Option<Packet> {
        if pkt.is_none() {
            self.set_idle(now);
        }
        pkt
    }
}

/// Where an average falls on a drop curve.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum RedRegion {
    /// Below min_th: no early drops.
    Below,
    /// In the early region, with the base probability p_b.
    Early(f64),
    /// Past the curve's end: drop every arrival.
    Forced,
}

impl RedRegion {
    /// Byte mode: p_b scaled by `size / mean_pkt_size` (capped at 1), so small
    /// packets are dropped less.
    #[inline]
    pub fn scaled(self, size: u32, mean_pkt_size: u32) -> RedRegion {
        match self {
            RedRegion::Early(p_b) => {
                RedRegion::Early((p_b * size as f64 / mean_pkt_size as f64).min(1.0))
            }
            r => r,
        }
    }

    /// ns-2's `qlen > 1` rule (`queue/red.cc`, `REDQueue::enque`): with `gate` on,
    /// an arrival that finds at most one unit queued ahead of it (`queued <= 1`,
    /// the packet on the wire not counted) is judged as if the average were below
    /// min_th: no early drop, no forced drop by the average (a full buffer still
    /// drops), and `count` restarts, as ns-2 clears `old` there. `queued` is in
    /// packets, or in bytes where the queue is measured in bytes (ns-2's
    /// `queue_in_bytes_`, where the rule reads "the queue is empty"). Without it a
    /// lone packet after an idle period can be dropped by an average still high
    /// from the last busy one, which ns-2's RED, the papers' simulator, never did.
    #[inline(always)]
    pub fn gated(self, gate: bool, queued: u64) -> RedRegion {
        if gate && queued <= 1 {
            RedRegion::Below
        } else {
            self
        }
    }
}

/// The drop curves of the RED family.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Curve {
    /// RED: 0 at min_th rising linearly to max_p at max_th, forced above.
    Linear,
    /// GRED: Linear, then from max_p to 1 between max_th and 2 max_th.
    Gentle,
    /// NLRED: `scale max_p x^2` with `x = (avg - min_th) / (max_th - min_th)`,
    /// capped at 1, forced at and above max_th.
    Quadratic { scale: f64 },
}

impl Curve {
    /// RED's curve, or GRED's when `gentle`.
    pub const fn red(gentle: bool) -> Curve {
        if gentle {
            Curve::Gentle
        } else {
            Curve::Linear
        }
    }

    /// The region of average `avg`.
    #[inline(always)]
    pub fn region(self, avg: f64, min_th: f64, max_th: f64, max_p: f64) -> RedRegion {
        if avg < min_th {
            return RedRegion::Below;
        }
        match self {
            Curve::Quadratic { scale } => {
                if avg < max_th {
                    let x = (avg - min_th) / (max_th - min_th);
                    RedRegion::Early((scale * max_p * x * x).min(1.0))
                } else {
                    RedRegion::Forced
                }
            }
            _ if avg < max_th => RedRegion::Early(max_p * (avg - min_th) / (max_th - min_th)),
            Curve::Gentle if avg < 2.0 * max_th => {
                RedRegion::Early(max_p + (1.0 - max_p) * (avg - max_th) / max_th)
            }
            _ => RedRegion::Forced,
        }
    }
}

/// RED's count-based spacing of drops: the probability actually applied to an
/// arrival that is `count` packets past the last drop.
#[inline]
pub fn spaced_probability(p_b: f64, count: i64, wait: bool) -> f64 {
    let cp = count as f64 * p_b;
    if wait {
        if cp < 1.0 {
            0.0
        } else if cp < 2.0 {
            p_b / (2.0 - cp)
        } else {
            1.0
        }
    } else if cp < 1.0 {
        p_b / (1.0 - cp)
    } else {
        1.0
    }
}

/// What RED does with an arrival (Linux's `RED_DONT_MARK`, `RED_PROB_MARK`,
/// `RED_HARD_MARK`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RedAction {
    /// Let it through.
    Pass,
    /// A probabilistic early drop (or CE mark).
    Early,
    /// A forced drop.
    Forced,
}

/// RED's `count`: arrivals since the last early drop, -1 while the average is
/// below `min_th` (Floyd & Jacobson 1993).
#[derive(Debug, Clone)]
pub struct RedCount {
    count: i64,
}

impl Default for RedCount {
    fn default() -> Self {
        RedCount { count: -1 }
    }
}

impl RedCount {
    /// The average is below `min_th`.
    #[inline]
    pub fn below(&mut self) {
        self.count = -1;
    }

    /// A forced (or otherwise certain) drop restarts the spacing.
    #[inline]
    pub fn forced(&mut self) {
        self.count = 0;
    }

    /// One arrival in the early region with base probability `p_b`; `u` is a
    /// uniform draw in [0, 1). Returns whether RED drops (or marks) it.
    #[inline]
    pub fn early(&mut self, p_b: f64, wait: bool, u: f64) -> bool {
        self.count += 1;
        if u < spaced_probability(p_b, self.count, wait) {
            self.count = 0;
            true
        } else {
            false
        }
    }

    /// RED's decision for an arrival in `region` (Linux `red_action`). Draws one
    /// uniform number in the early region and none elsewhere.
    #[inline(always)]
    pub fn decide(&mut self, region: RedRegion, wait: bool, ctx: &mut Ctx<'_>) -> RedAction {
        match region {
            RedRegion::Below => {
                self.below();
                RedAction::Pass
            }
            RedRegion::Early(p_b) => {
                if self.early(p_b, wait, ctx.uniform()) {
                    RedAction::Early
                } else {
                    RedAction::Pass
                }
            }
            RedRegion::Forced => {
                self.forced();
                RedAction::Forced
            }
        }
    }
}

/// How far Adaptive RED may move max_p.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum MaxPBounds {
    /// The paper's rule: raise while max_p <= 0.5, lower while max_p >= 0.01, no
    /// clamping (so max_p may end a step past either bound).
    Paper,
    /// Raise up to and lower down to these bounds, clamped (SFRED's per-bin max_p,
    /// which the SFB paper says must reach 1).
    Clamped { floor: f64, ceiling: f64 },
}

/// Adaptive RED's max_p controller (Floyd, Gummadi & Shenker 2001, Fig. 5): every
/// `interval`, at the first arrival due, max_p rises by min(0.01, max_p / 4) when
/// the average is above 60% of [min_th, max_th] and falls by x0.9 below 40%.
#[derive(Debug, Clone)]
pub struct AdaptiveMaxP {
    /// The current max_p.
    pub max_p: f64,
    next_update: Time,
}

impl AdaptiveMaxP {
    /// Starts at `max_p`; the first update is due at `interval`.
    pub fn new(max_p: f64, interval: Dur) -> Self {
        AdaptiveMaxP {
            max_p,
            next_update: Time::ZERO + interval,
        }
    }

    /// Nudges max_p toward keeping `avg` in the middle fifth of the band, if an
    /// update is due at `now`. (The check is inline; the update, once per
    /// interval, is not.)
    #[inline(always)]
    pub fn update(
        &mut self,
        now: Time,
        interval: Dur,
        avg: f64,
        band: (f64, f64),
        bounds: MaxPBounds,
    ) {
        if now >= self.next_update {
            self.adapt(now, interval, avg, band, bounds);
        }
    }

    #[cold]
    #[inline(never)]
    fn adapt(
        &mut self,
        now: Time,
        interval: Dur,
        avg: f64,
        (min_th, max_th): (f64, f64),
        bounds: MaxPBounds,
    ) {
        self.next_update = now + interval;
        let band = max_th - min_th;
        let (floor, ceiling) = match bounds {
            MaxPBounds::Paper => (0.01, 0.5),
            MaxPBounds::Clamped { floor, ceiling } => (floor, ceiling),
        };
        let max_p = &mut self.max_p;
        if avg > min_th + 0.6 * band && *max_p <= ceiling {
            *max_p += (*max_p / 4.0).min(0.01);
            if let MaxPBounds::Clamped { ceiling, .. } = bounds {
                *max_p = max_p.min(ceiling);
            }
        } else if avg < min_th + 0.4 * band && *max_p >= floor {
            *max_p *= 0.9;
            if let MaxPBounds::Clamped { floor, .. } = bounds {
                *max_p = max_p.max(floor);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Rate;

    #[test]
    fn count_spacing_without_wait_drops_within_one_over_p() {
        // p_b = 0.25 without wait: the fourth arrival after a drop is dropped surely.
        let mut c = RedCount::default();
        let drops: Vec<bool> = (0..4).map(|_| c.early(0.25, false, 0.999)).collect();
        assert_eq!(drops, vec![false, false, false, true]);
    }

    #[test]
    fn with_wait_nothing_is_dropped_before_count_reaches_one_over_p() {
        let mut c = RedCount::default();
        // count runs 0, 1, 2, 3 (count p_b < 1: never), then 4: p = 0.25 / (2 - 1).
        let drops: Vec<bool> = (0..6).map(|_| c.early(0.25, true, 0.0)).collect();
        assert_eq!(drops, vec![false, false, false, false, true, false]);
    }

    #[test]
    fn the_curves_meet_where_the_papers_say() {
        let (lo, hi, p) = (5.0, 15.0, 0.1);
        assert_eq!(Curve::Linear.region(4.9, lo, hi, p), RedRegion::Below);
        assert_eq!(
            Curve::Linear.region(10.0, lo, hi, p),
            RedRegion::Early(0.05)
        );
        assert_eq!(Curve::Linear.region(20.0, lo, hi, p), RedRegion::Forced);
        match Curve::Gentle.region(20.0, lo, hi, p) {
            RedRegion::Early(q) => assert!((q - (0.1 + 0.9 * 5.0 / 15.0)).abs() < 1e-12),
            r => panic!("{r:?}"),
        }
        assert_eq!(Curve::Gentle.region(30.0, lo, hi, p), RedRegion::Forced);
        // NLRED: 1.5 x^2 meets the line at x = 2/3, and is forced from max_th on.
        let nl = Curve::Quadratic { scale: 1.5 };
        let at = |c: Curve, avg| match c.region(avg, lo, hi, p) {
            RedRegion::Early(q) => q,
            r => panic!("{r:?}"),
        };
        let cross = lo + 2.0 / 3.0 * (hi - lo);
        assert!((at(nl, cross) - at(Curve::Linear, cross)).abs() < 1e-12);
        assert!(at(nl, 7.0) < at(Curve::Linear, 7.0));
        assert!(at(nl, 14.0) > at(Curve::Linear, 14.0));
        assert_eq!(nl.region(15.0, lo, hi, p), RedRegion::Forced);
        assert_eq!(
            RedRegion::Early(0.5).scaled(250, 500),
            RedRegion::Early(0.25)
        );
        assert_eq!(
            RedRegion::Early(0.5).scaled(5000, 500),
            RedRegion::Early(1.0)
        );
    }

    #[test]
    fn the_average_decays_over_idle_time_at_the_links_packet_rate() {
        // 10 Mbps, 500-byte packets: 2500 packet times per second.
        let link = LinkInfo::new(Rate::from_mbps(10));
        let mut a = RedAverage::new(0.5, &link, 500);
        a.update(8.0, Time::ZERO);
        assert_eq!(a.avg, 4.0);
        a.set_idle(Time::ZERO);
        // 1 ms idle = 2.5 -> 2 packet times, plus the arrival: (1/2)^3.
        a.update(0.0, Time::from_nanos(1_000_000));
        assert_eq!(a.avg, 0.5);
    }

    /// On a link whose rate changed, the idle decay follows the new rate.
    #[test]
    fn the_idle_decay_follows_a_link_rate_change() {
        let link = LinkInfo::new(Rate::from_mbps(10));
        let mut a = RedAverage::new(0.5, &link, 500);
        a.update(8.0, Time::ZERO);
        // 2 Mbps: 500 packet times per second, so 4 ms idle is 2 of them.
        a.set_link_rate(Rate::from_mbps(2));
        a.set_idle(Time::ZERO);
        a.update(0.0, Time::from_nanos(4_000_000));
        assert_eq!(a.avg, 0.5);
    }

    #[test]
    fn adaptive_max_p_moves_once_per_interval_within_its_bounds() {
        let band = (10.0, 20.0);
        let mut a = AdaptiveMaxP::new(0.1, Dur::from_millis(500));
        a.update(
            Time::ZERO,
            Dur::from_millis(500),
            19.0,
            band,
            MaxPBounds::Paper,
        );
        assert_eq!(a.max_p, 0.1, "not due yet");
        let at = |ms: u64| Time::from_nanos(ms * 1_000_000);
        a.update(
            at(500),
            Dur::from_millis(500),
            19.0,
            band,
            MaxPBounds::Paper,
        );
        assert!((a.max_p - 0.11).abs() < 1e-12);
        a.update(
            at(600),
            Dur::from_millis(500),
            19.0,
            band,
            MaxPBounds::Paper,
        );
        assert!((a.max_p - 0.11).abs() < 1e-12, "next due at 1 s");
        let clamped = MaxPBounds::Clamped {
            floor: 0.01,
            ceiling: 0.115,
        };
        a.update(at(1000), Dur::from_millis(500), 19.0, band, clamped);
        assert_eq!(a.max_p, 0.115);
        a.update(at(1500), Dur::from_millis(500), 11.0, band, clamped);
        assert!((a.max_p - 0.1035).abs() < 1e-12);
    }
}
