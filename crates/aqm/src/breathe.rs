//! BREATHe: throttling high-bandwidth flows with a heavy-hitter set (Chang & Lin,
//! EURASIP J. Wireless Comm. & Networking 2008; seed 001, section 3).
//!
//! RED's average and thresholds around a heavy-hitter set ψ of K counters
//! ([`HeavyHitters`], the O(1) frequent-elements structure of Karp, Shenker &
//! Papadimitriou that section 3.1 cites). Below `min_th` every arrival is queued.
//! Between `min_th` and `max_th` an arrival of a flow in ψ is dropped
//! (`HeavyHitter`); any other arrival gets RED's probability (`Early`, or a CE mark
//! with `ecn`). Above `max_th` every arrival is dropped (`Forced`). A full queue
//! drops (`Overflow`). "The flows with heavy traffic will be blocked until other
//! flows have comparable throughput": the small flows get a chance to breathe.
//!
//! K = C / r_limit (Algorithm 1): a flow whose throughput exceeds r_limit of a link
//! of rate C has more than 1/K of the packets, and the set holds every such flow.
//! Give `rate_limit` (K = ceil(C / r_limit) from the [`LinkInfo`], at least 1) or
//! `counters` (K directly), not both; with neither, K = 100.
//!
//! Readings where the paper is silent or ambiguous:
//! - ψ counts **admitted** packets: Algorithm 1 runs over "P: the admitted packet",
//!   and ψ records "the majority flows which have been served by the router". A
//!   packet dropped for any reason is not counted; a CE-marked one is (it is
//!   queued). So a blocked flow stops growing its counter while other flows'
//!   admissions wear it down, and it is let through again once it drops out: the
//!   "breathing" of section 3.
//! - Membership is tested before the arrival is counted.
//! - With fewer than K active flows every flow can hold a counter, so between the
//!   thresholds *every* arrival of a flow seen since its counter last emptied is
//!   dropped; K should not exceed the number of flows you expect (the paper sizes
//!   it by the fairness wanted).
//! - Heavy-hitter drops are drops, never ECN marks: a mark would not throttle.
//!
//! Defaults: `limit = 300` and 1000-byte packets (section 4). The paper gives no
//! thresholds; its topology, buffer and link are CHOKe's (seed 002, section III-A),
//! so we take CHOKe's `min_th = 100`, `max_th = 200`; `max_p = 0.1` and
//! `w_q = 0.002` are ns-2's defaults (the paper's simulator). K = 100 (no value in
//! the paper): flows above 1% of the link are heavy hitters.

use crate::drop_reason::DropReason;
use crate::fifo::PacketFifo;
use crate::heavy_hitters::HeavyHitters;
use crate::packet::Packet;
use crate::qdisc::{check, Ctx, Limit, LinkInfo, ParamError, Qdisc, Verdict};
use crate::red::{red_region, RedAverage, RedRegion};
use crate::red_core::{validate_red_core, RedCount};
use crate::units::Rate;
use serde::{Deserialize, Serialize};

/// The most counters a set may have (memory is allocated up front).
pub const MAX_COUNTERS: u64 = 1 << 22;

/// K when neither `rate_limit` nor `counters` is given.
pub const DEFAULT_COUNTERS: u32 = 100;

/// BREATHe parameters. Thresholds are in packets.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BreatheParams {
    /// Capacity in packets (300, section 4).
    pub limit: u32,
    /// Below it no drops (100: CHOKe's setting on the same topology).
    pub min_th: f64,
    /// Above it every arrival is dropped (200: CHOKe's setting).
    pub max_th: f64,
    /// RED's drop probability at max_th for flows not in the set (0.1, ns-2).
    pub max_p: f64,
    /// EWMA weight of the average (0.002, ns-2).
    pub w_q: f64,
    /// Packet size for the idle-time decay (1000 B, section 4).
    pub mean_pkt_size: u32,
    /// RED's count spacing with ns-2's `wait` (true).
    pub wait: bool,
    /// CE-mark ECN-capable packets instead of RED's early drops (false).
    pub ecn: bool,
    /// r_limit: K = ceil(link rate / rate_limit). Exclusive with `counters`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_limit: Option<Rate>,
    /// K directly. Exclusive with `rate_limit`; 100 when both are absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counters: Option<u32>,
}

impl Default for BreatheParams {
    fn default() -> Self {
        BreatheParams {
            limit: 300,
            min_th: 100.0,
            max_th: 200.0,
            max_p: 0.1,
            w_q: 0.002,
            mean_pkt_size: 1000,
            wait: true,
            ecn: false,
            rate_limit: None,
            counters: None,
        }
    }
}

impl BreatheParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        validate_red_core(
            self.limit,
            self.min_th,
            self.max_th,
            self.max_p,
            self.w_q,
            self.mean_pkt_size,
        )?;
        if let Some(c) = self.counters {
            check::at_least("counters", c, 1)?;
            if self.rate_limit.is_some() {
                return Err(ParamError::new(
                    "counters",
                    c,
                    "must not be given together with rate_limit (K = link rate / rate_limit)",
                ));
            }
        }
        if let Some(r) = self.rate_limit {
            if r.bps() == 0 {
                return Err(ParamError::new("rate_limit", r, "must be positive"));
            }
        }
        Ok(())
    }

    /// K for a link: from `counters`, from `rate_limit`, or the default.
    pub fn counters_for(&self, link: &LinkInfo) -> Result<usize, ParamError> {
        let k = match (self.counters, self.rate_limit) {
            (Some(k), _) => k as u64,
            (None, Some(r)) => link.rate.bps().div_ceil(r.bps().max(1)).max(1),
            (None, None) => DEFAULT_COUNTERS as u64,
        };
        if k > MAX_COUNTERS {
            return Err(ParamError::new(
                if self.counters.is_some() {
                    "counters"
                } else {
                    "rate_limit"
                },
                match self.rate_limit {
                    Some(r) if self.counters.is_none() => r.to_string(),
                    _ => k.to_string(),
                },
                format!("gives K = {k} counters, more than {MAX_COUNTERS}"),
            ));
        }
        Ok(k as usize)
    }
}

#[derive(Debug, Clone)]
pub struct Breathe {
    params: BreatheParams,
    average: RedAverage,
    count: RedCount,
    heavy: HeavyHitters,
    queue: PacketFifo,
}

impl Breathe {
    pub fn new(params: BreatheParams, link: &LinkInfo) -> Result<Self, ParamError> {
        params.validate()?;
        let k = params.counters_for(link)?;
        Ok(Breathe {
            average: RedAverage::new(params.w_q, link, params.mean_pkt_size),
            count: RedCount::default(),
            heavy: HeavyHitters::new(k),
            queue: PacketFifo::with_capacity(params.limit.min(4096) as usize),
            params,
        })
    }

    /// The current average queue, in packets.
    pub fn avg(&self) -> f64 {
        self.average.avg
    }

    /// The heavy-hitter set ψ.
    pub fn heavy_hitters(&self) -> &HeavyHitters {
        &self.heavy
    }

    /// Queues `pkt` (if there is room) and counts it in ψ.
    #[inline]
    fn admit(&mut self, pkt: Packet, ctx: &mut Ctx<'_>) -> Verdict {
        if self.queue.len() >= self.params.limit as usize {
            ctx.drop(pkt, DropReason::Overflow);
            return Verdict::Dropped;
        }
        self.heavy.observe(pkt.flow);
        self.queue.push_back(pkt);
        Verdict::Queued
    }
}

impl Qdisc for Breathe {
    fn enqueue(&mut self, pkt: Packet, ctx: &mut Ctx<'_>) -> Verdict {
        let avg = self.average.update(self.queue.len() as f64, ctx.now);
        let p = &self.params;
        let mut pkt = pkt;
        match red_region(avg, p.min_th, p.max_th, p.max_p, false) {
            RedRegion::Below => self.count.below(),
            RedRegion::Early(p_b) => {
                if self.heavy.contains(pkt.flow) {
                    ctx.drop(pkt, DropReason::HeavyHitter);
                    return Verdict::Dropped;
                }
                if self.count.early(p_b, p.wait, ctx.uniform()) {
                    match ctx.mark_or_drop(pkt, p.ecn, DropReason::Early) {
                        Some(marked) => pkt = marked,
                        None => return Verdict::Dropped,
                    }
                }
            }
            RedRegion::Forced => {
                self.count.forced();
                ctx.drop(pkt, DropReason::Forced);
                return Verdict::Dropped;
            }
        }
        self.admit(pkt, ctx)
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
    use crate::packet::FlowId;
    use crate::testing::Harness;

    const LINK: LinkInfo = LinkInfo::new(Rate::from_mbps(1));

    fn breathe(params: BreatheParams) -> Harness<Breathe> {
        Harness::new(Breathe::new(params, &LINK).unwrap())
    }

    /// Drops of `flow`'s packets for `reason`, from the sink.
    fn drops_of(h: &Harness<Breathe>, pred: impl Fn(u32) -> bool, reason: DropReason) -> usize {
        h.sink
            .drops
            .iter()
            .filter(|(p, r)| *r == reason && pred(p.flow.0))
            .count()
    }

    #[test]
    fn a_heavy_flow_is_dropped_between_thresholds_and_light_flows_only_at_reds_rate() {
        // Flow 0 sends half the packets; every other packet is a new flow. The queue
        // is held at 20 packets, between min_th = 10 and max_th = 30.
        let max_p = 0.1;
        let mut h = breathe(BreatheParams {
            limit: 100,
            min_th: 10.0,
            max_th: 30.0,
            w_q: 0.05,
            max_p,
            counters: Some(4),
            ..Default::default()
        });
        let n = 40_000u32;
        for seq in 0..n {
            let flow = if seq % 2 == 0 { 0 } else { 1 + seq };
            h.offer(flow, seq);
            while h.q.len() > 20 {
                h.dequeue();
            }
        }
        let heavy_hh = drops_of(&h, |f| f == 0, DropReason::HeavyHitter);
        let light_hh = drops_of(&h, |f| f != 0, DropReason::HeavyHitter);
        let light_early = drops_of(&h, |f| f != 0, DropReason::Early);
        assert_eq!(light_hh, 0, "a light flow was treated as heavy");
        assert!(
            heavy_hh as f64 > 0.3 * (n / 2) as f64,
            "heavy flow lost only {heavy_hh} of {} to the set",
            n / 2
        );
        // Light flows see at most RED's curve at the held average (p_b <= max_p / 2
        // at avg = 20, spaced drops average no more than p_b).
        assert!(
            (light_early as f64) < 0.06 * (n / 2) as f64,
            "light flows lost {light_early}"
        );
        assert_eq!(h.drops(DropReason::Forced), 0);
    }

    #[test]
    fn below_min_th_nothing_is_dropped_and_everything_is_counted() {
        let mut h = breathe(BreatheParams {
            counters: Some(2),
            ..Default::default()
        });
        for seq in 0..50 {
            assert_eq!(h.offer(7, seq), Verdict::Queued);
        }
        assert_eq!(h.q.qdisc().heavy_hitters().count(FlowId(7)), 50);
        assert_eq!(h.q.counts().total_drops(), 0);
    }

    #[test]
    fn above_max_th_every_arrival_is_forced_out() {
        let mut h = breathe(BreatheParams {
            limit: 50,
            min_th: 2.0,
            max_th: 5.0,
            w_q: 1.0,
            counters: Some(8),
            ..Default::default()
        });
        for seq in 0..5 {
            h.offer(100 + seq, seq);
        }
        // avg = 5 = max_th: forced, even for a flow never seen.
        assert_eq!(h.offer(999, 9), Verdict::Dropped);
        assert_eq!(h.dropped_seqs(DropReason::Forced), vec![9]);
    }

    #[test]
    fn k_comes_from_the_link_rate_and_rate_limit() {
        let p = BreatheParams {
            rate_limit: Some(Rate::from_kbps(10)),
            ..Default::default()
        };
        assert_eq!(p.counters_for(&LINK).unwrap(), 100);
        let p = BreatheParams {
            rate_limit: Some(Rate::from_kbps(300)),
            ..Default::default()
        };
        assert_eq!(p.counters_for(&LINK).unwrap(), 4); // ceil(1000 / 300)
        assert_eq!(
            BreatheParams::default().counters_for(&LINK).unwrap(),
            DEFAULT_COUNTERS as usize
        );
        let spec: crate::QdiscSpec =
            toml::from_str("kind = \"breathe\"\nrate_limit = \"0.16Mbps\"").unwrap();
        assert!(spec.build(&LINK).is_ok());
    }

    #[test]
    fn counters_and_rate_limit_together_are_rejected_by_name() {
        let e = Breathe::new(
            BreatheParams {
                counters: Some(10),
                rate_limit: Some(Rate::from_kbps(10)),
                ..Default::default()
            },
            &LINK,
        )
        .unwrap_err();
        assert_eq!(e.key, "counters");
        let e = Breathe::new(
            BreatheParams {
                counters: Some(0),
                ..Default::default()
            },
            &LINK,
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "counters = 0 must be at least 1");
    }
}
