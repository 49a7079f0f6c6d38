//! RED: Random Early Detection (Floyd & Jacobson 1993), with gentle mode (GRED),
//! adaptive max_p (Floyd, Gummadi & Shenker 2001), byte mode and ECN.
//!
//! The average queue is an EWMA with weight `w_q`, updated on every arrival. While
//! the queue sits empty the average decays as if `m` small packets had arrived to an
//! empty queue, `m = idle time * link rate / (8 * mean_pkt_size)`; this is ns-2's
//! estimator exactly (`avg = avg * (1 - w_q)^(m+1) + w_q * q`).
//!
//! Between `min_th` and `max_th` the drop probability rises linearly to `max_p`;
//! `count` (packets since the last drop) spreads drops out: with `wait` (ns-2's and
//! ns-3's default) `p_a = p_b / (2 - count * p_b)` once `count * p_b >= 1` and no
//! drop before that, otherwise `p_a = p_b / (1 - count * p_b)`. Above `max_th` every
//! arrival is dropped; with `gentle` the probability instead rises from `max_p` to 1
//! between `max_th` and `2 max_th`. Early drops become CE marks for ECN-capable
//! packets when `ecn` is on; forced drops stay drops (ns-2; Linux marks there too
//! unless `harddrop`). A full queue always drops (`Overflow`).
//!
//! Byte mode (ns-2 `queue_in_bytes_`): the average tracks the backlog in bytes,
//! divided by `mean_pkt_size` so thresholds stay in (mean-sized) packets, and p_b is
//! scaled by `size / mean_pkt_size` so small packets are dropped less.
//!
//! The pieces other qdiscs reuse (CHOKe, BREATHe, NLRED, SFRED, MRUL use RED's
//! average and spacing) are public: [`RedAverage`], [`red_region`] and
//! [`spaced_probability`].
//!
//! Defaults follow ns-2 (`thresh_ = 5`, `maxthresh_ = 15`, `q_weight_ = 0.002`,
//! `linterm_ = 10` so max_p = 0.1, `mean_pktsize_ = 500`, `wait_ = true`), except
//! `limit`, which is Linux's 1000 packets.

use crate::drop_reason::DropReason;
use crate::fifo::PacketFifo;
use crate::packet::Packet;
use crate::qdisc::{check, Ctx, Limit, LinkInfo, ParamError, Qdisc, Verdict};
use crate::time::{Dur, Time};
use serde::{Deserialize, Serialize};

/// RED parameters. Thresholds are in packets (of `mean_pkt_size` in byte mode).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RedParams {
    /// Capacity in packets.
    pub limit: u32,
    pub min_th: f64,
    pub max_th: f64,
    /// Drop probability at `max_th` (the starting value when `adaptive`).
    pub max_p: f64,
    /// EWMA weight of the average queue.
    pub w_q: f64,
    /// GRED: rise from max_p to 1 between max_th and 2 max_th instead of jumping.
    pub gentle: bool,
    /// Adapt max_p every `adapt_interval` to keep avg between 40% and 60% of the band.
    pub adaptive: bool,
    pub adapt_interval: Dur,
    /// Measure the queue in bytes and scale p by packet size.
    pub byte_mode: bool,
    /// Packet size used for idle-time decay and byte mode, in bytes.
    pub mean_pkt_size: u32,
    /// Count-based spacing with ns-2's `wait` option.
    pub wait: bool,
    /// CE-mark ECN-capable packets instead of dropping them early.
    pub ecn: bool,
}

impl Default for RedParams {
    fn default() -> Self {
        RedParams {
            limit: 1000,
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.1,
            w_q: 0.002,
            gentle: false,
            adaptive: false,
            adapt_interval: Dur::from_millis(500),
            byte_mode: false,
            mean_pkt_size: 500,
            wait: true,
            ecn: false,
        }
    }
}

impl RedParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        check::at_least("limit", self.limit, 1)?;
        check::at_least("min_th", self.min_th, 0.0)?;
        check::below("min_th", self.min_th, "max_th", self.max_th)?;
        if !(self.max_p > 0.0 && self.max_p <= 1.0) {
            return Err(ParamError::new("max_p", self.max_p, "must be in (0, 1]"));
        }
        if !(self.w_q > 0.0 && self.w_q <= 1.0) {
            return Err(ParamError::new("w_q", self.w_q, "must be in (0, 1]"));
        }
        check::at_least("mean_pkt_size", self.mean_pkt_size, 1)?;
        if self.adaptive && self.adapt_interval.is_zero() {
            return Err(ParamError::new(
                "adapt_interval",
                self.adapt_interval,
                "must be positive",
            ));
        }
        Ok(())
    }
}

/// RED's average queue estimator with the idle-time correction.
#[derive(Debug, Clone)]
pub struct RedAverage {
    pub avg: f64,
    w_q: f64,
    /// Mean-sized packets the link sends per second: how fast an idle queue decays.
    packets_per_sec: f64,
    idle_since: Option<Time>,
}

impl RedAverage {
    pub fn new(w_q: f64, link: &LinkInfo, mean_pkt_size: u32) -> Self {
        RedAverage {
            avg: 0.0,
            w_q,
            packets_per_sec: link.rate.as_f64() / (8.0 * mean_pkt_size.max(1) as f64),
            idle_since: Some(Time::ZERO),
        }
    }

    /// Folds in the instantaneous queue `q` seen by an arrival at `now`.
    #[inline]
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
}

/// Where an average falls on RED's curve.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum RedRegion {
    /// Below min_th: no early drops.
    Below,
    /// Between the thresholds, with the base probability p_b.
    Early(f64),
    /// Above max_th (or 2 max_th when gentle): drop every arrival.
    Forced,
}

/// RED's piecewise-linear curve (with the gentle extension).
#[inline]
pub fn red_region(avg: f64, min_th: f64, max_th: f64, max_p: f64, gentle: bool) -> RedRegion {
    if avg < min_th {
        RedRegion::Below
    } else if avg < max_th {
        RedRegion::Early(max_p * (avg - min_th) / (max_th - min_th))
    } else if gentle && avg < 2.0 * max_th {
        RedRegion::Early(max_p + (1.0 - max_p) * (avg - max_th) / max_th)
    } else {
        RedRegion::Forced
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

/// Adaptive RED's max_p controller (Floyd, Gummadi & Shenker 2001, Fig. 5).
#[derive(Debug, Clone)]
pub struct AdaptiveMaxP {
    interval: Dur,
    next_update: Time,
}

impl AdaptiveMaxP {
    pub fn new(interval: Dur) -> Self {
        AdaptiveMaxP {
            interval,
            next_update: Time::ZERO + interval,
        }
    }
    /// Nudges `max_p` toward keeping `avg` in the middle fifth of [min_th, max_th].
    pub fn update(&mut self, now: Time, avg: f64, min_th: f64, max_th: f64, max_p: &mut f64) {
        if now < self.next_update {
            return;
        }
        self.next_update = now + self.interval;
        let band = max_th - min_th;
        if avg > min_th + 0.6 * band && *max_p <= 0.5 {
            *max_p += (*max_p / 4.0).min(0.01);
        } else if avg < min_th + 0.4 * band && *max_p >= 0.01 {
            *max_p *= 0.9;
        }
    }
}

#[derive(Debug, Clone)]
pub struct Red {
    params: RedParams,
    average: RedAverage,
    /// Packets since the last early drop; -1 below min_th (Floyd & Jacobson).
    count: i64,
    max_p: f64,
    adapt: AdaptiveMaxP,
    queue: PacketFifo,
}

impl Red {
    pub fn new(params: RedParams, link: &LinkInfo) -> Result<Self, ParamError> {
        params.validate()?;
        Ok(Red {
            average: RedAverage::new(params.w_q, link, params.mean_pkt_size),
            count: -1,
            max_p: params.max_p,
            adapt: AdaptiveMaxP::new(params.adapt_interval),
            queue: PacketFifo::new(),
            params,
        })
    }

    /// The current average queue, in packets.
    pub fn avg(&self) -> f64 {
        self.average.avg
    }

    /// The current max_p (changes only when adaptive).
    pub fn max_p(&self) -> f64 {
        self.max_p
    }

    fn instantaneous_queue(&self) -> f64 {
        if self.params.byte_mode {
            self.queue.bytes() as f64 / self.params.mean_pkt_size as f64
        } else {
            self.queue.len() as f64
        }
    }
}

impl Qdisc for Red {
    fn enqueue(&mut self, pkt: Packet, ctx: &mut Ctx<'_>) -> Verdict {
        let p = &self.params;
        let avg = self.average.update(self.instantaneous_queue(), ctx.now);
        if p.adaptive {
            self.adapt
                .update(ctx.now, avg, p.min_th, p.max_th, &mut self.max_p);
        }
        let mut pkt = pkt;
        match red_region(avg, p.min_th, p.max_th, self.max_p, p.gentle) {
            RedRegion::Below => self.count = -1,
            RedRegion::Early(mut p_b) => {
                self.count += 1;
                if p.byte_mode {
                    p_b = (p_b * pkt.size as f64 / p.mean_pkt_size as f64).min(1.0);
                }
                let p_a = spaced_probability(p_b, self.count, p.wait);
                if ctx.uniform() < p_a {
                    self.count = 0;
                    match ctx.mark_or_drop(pkt, p.ecn, DropReason::Early) {
                        Some(marked) => pkt = marked,
                        None => return Verdict::Dropped,
                    }
                }
            }
            RedRegion::Forced => {
                self.count = 0;
                ctx.drop(pkt, DropReason::Forced);
                return Verdict::Dropped;
            }
        }
        if self.queue.len() >= p.limit as usize {
            ctx.drop(pkt, DropReason::Overflow);
            return Verdict::Dropped;
        }
        self.queue.push_back(pkt);
        Verdict::Queued
    }

    fn dequeue(&mut self, ctx: &mut Ctx<'_>) -> Option<Packet> {
        let pkt = self.queue.pop_front();
        if pkt.is_none() {
            self.average.set_idle(ctx.now);
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
    use crate::units::Rate;

    const LINK: LinkInfo = LinkInfo::new(Rate::from_mbps(10));

    fn red(params: RedParams) -> Harness<Red> {
        Harness::new(Red::new(params, &LINK).unwrap())
    }

    /// Keeps `backlog` packets queued (one in, one out) for `n` arrivals and returns
    /// the number of early drops.
    fn hold_queue_at(h: &mut Harness<Red>, backlog: u32, n: u32) -> u64 {
        for seq in 0..backlog {
            h.offer(1, seq);
        }
        for seq in 0..n {
            h.offer(1, backlog + seq);
            while h.q.len() > backlog as usize {
                h.dequeue();
            }
        }
        h.drops(DropReason::Early)
    }

    #[test]
    fn no_early_drops_below_min_th() {
        let mut h = red(RedParams {
            min_th: 10.0,
            max_th: 30.0,
            w_q: 0.02,
            ..Default::default()
        });
        assert_eq!(hold_queue_at(&mut h, 8, 10_000), 0);
        assert!((h.q.qdisc().avg() - 8.0).abs() < 0.5);
    }

    #[test]
    fn average_converges_and_forced_drops_happen_above_max_th() {
        let mut h = red(RedParams {
            min_th: 5.0,
            max_th: 10.0,
            w_q: 0.05,
            limit: 100,
            ..Default::default()
        });
        hold_queue_at(&mut h, 40, 2_000);
        assert!(h.q.qdisc().avg() > 10.0);
        assert!(h.drops(DropReason::Forced) > 1_000, "{:?}", h.q.counts());
    }

    #[test]
    fn lower_max_th_gives_more_early_drops() {
        // ns-3's RED suite makes the same comparative check.
        let base = RedParams {
            min_th: 5.0,
            max_th: 40.0,
            w_q: 0.02,
            limit: 100,
            ..Default::default()
        };
        let mut wide = red(base.clone());
        let mut narrow = red(RedParams {
            max_th: 25.0,
            ..base
        });
        let wide_drops = hold_queue_at(&mut wide, 20, 20_000);
        let narrow_drops = hold_queue_at(&mut narrow, 20, 20_000);
        assert!(
            narrow_drops > wide_drops,
            "narrow {narrow_drops} wide {wide_drops}"
        );
    }

    #[test]
    fn early_drop_rate_matches_the_linear_curve() {
        // avg held at the middle of the band: p_b = max_p / 2 = 0.05. With `wait`
        // spacing, drops come on average every 1/p_b + 1/(2 p_b)-ish packets; without
        // it, the inter-drop gap is uniform on [1, 1/p_b], mean ~ 1/(2 p_b) + 1/2.
        let base = RedParams {
            min_th: 10.0,
            max_th: 30.0,
            w_q: 0.02,
            limit: 100,
            ..Default::default()
        };
        let mut h = red(RedParams {
            wait: false,
            ..base
        });
        let n = 200_000;
        let drops = hold_queue_at(&mut h, 20, n) as f64;
        let gap = n as f64 / drops;
        assert!((gap - 10.5).abs() < 1.0, "mean gap {gap}");
    }

    #[test]
    fn ecn_marks_instead_of_dropping_and_a_mark_is_not_a_drop() {
        let mut h = red(RedParams {
            min_th: 2.0,
            max_th: 50.0,
            w_q: 0.5,
            ecn: true,
            limit: 100,
            ..Default::default()
        });
        for seq in 0..1_000 {
            h.offer_ect(1, seq);
            while h.q.len() > 30 {
                h.dequeue();
            }
        }
        assert!(h.marks(DropReason::Early) > 0);
        assert_eq!(h.drops(DropReason::Early), 0);
        // Not ECN-capable: dropped instead.
        let mut h2 = red(RedParams {
            min_th: 2.0,
            max_th: 50.0,
            w_q: 0.5,
            ecn: true,
            limit: 100,
            ..Default::default()
        });
        for seq in 0..1_000 {
            h2.offer(1, seq);
            while h2.q.len() > 30 {
                h2.dequeue();
            }
        }
        assert!(h2.drops(DropReason::Early) > 0);
        assert_eq!(h2.marks(DropReason::Early), 0);
    }

    #[test]
    fn gentle_replaces_the_cliff_with_a_ramp() {
        assert_eq!(red_region(20.0, 5.0, 15.0, 0.1, false), RedRegion::Forced);
        match red_region(20.0, 5.0, 15.0, 0.1, true) {
            RedRegion::Early(p) => assert!((p - (0.1 + 0.9 * 5.0 / 15.0)).abs() < 1e-12),
            r => panic!("{r:?}"),
        }
        assert_eq!(red_region(30.0, 5.0, 15.0, 0.1, true), RedRegion::Forced);
    }

    #[test]
    fn idle_time_decays_the_average() {
        let mut h = red(RedParams {
            w_q: 0.1,
            ..Default::default()
        });
        hold_queue_at(&mut h, 10, 200);
        let before = h.q.qdisc().avg();
        while h.dequeue().is_some() {}
        h.dequeue(); // the link finds the queue empty: idle starts
        h.advance(Dur::from_millis(100)); // 250 mean-sized packet times at 10 Mbps
        h.offer(1, 99_999);
        let after = h.q.qdisc().avg();
        assert!(after < before * 0.001, "before {before} after {after}");
    }

    #[test]
    fn adaptive_raises_max_p_under_persistent_congestion() {
        let mut h = red(RedParams {
            adaptive: true,
            min_th: 5.0,
            max_th: 15.0,
            w_q: 0.05,
            limit: 100,
            ..Default::default()
        });
        for seq in 0..2_000 {
            h.offer(1, seq);
            while h.q.len() > 14 {
                h.dequeue();
            }
            h.advance(Dur::from_millis(10));
        }
        assert!(h.q.qdisc().max_p() > 0.1, "max_p {}", h.q.qdisc().max_p());
    }

    #[test]
    fn thresholds_out_of_order_are_rejected_by_name() {
        let e = Red::new(
            RedParams {
                min_th: 200.0,
                max_th: 100.0,
                ..Default::default()
            },
            &LINK,
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "min_th = 200 must be below max_th = 100");
    }
}
