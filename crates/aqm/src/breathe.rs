//! BREATHe: throttling high-bandwidth flows with a heavy-hitter set (Chang & Lin,
//! EURASIP J. Wireless Comm. & Networking 2008; seed 001, section 3).
//!
//! RED's average and thresholds around a heavy-hitter set ψ of K counters
//! ([`HeavyHitters`], a part: the O(1) frequent-elements structure of Karp, Shenker &
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
//!   it by the rate it calls heavy, K = C / r_limit). A set that never evicted a
//!   flow says so through [`Qdisc::diagnostic`], which the run's results carry.
//! - Heavy-hitter drops are drops, never ECN marks: a mark would not throttle.
//!
//! Defaults: the paper's buffer and packets (section 4). It gives no thresholds;
//! its topology, buffer and link are CHOKe's (seed 002, section III-A), so they
//! are CHOKe's; max_p and w_q are ns-2's (the paper's simulator). K = 100 when
//! neither `rate_limit` nor `counters` is given (no value in the paper): flows
//! above 1% of the link are heavy hitters.

use crate::drop_reason::DropReason;
use crate::packet::Packet;
use crate::parts::heavy_hitters::HeavyHitters;
use crate::parts::red::{Curve, RedRegion};
use crate::parts::red_params::{red_params, RedBlock};
use crate::parts::red_queue::{red_queue_methods, RedQueue};
use crate::qdisc::{check, Ctx, LinkInfo, ParamError, Qdisc, QdiscParams, Verdict};
use crate::units::Rate;

/// The most counters a set may have: each costs memory once its flow is seen.
pub const MAX_COUNTERS: u64 = 1 << 22;

/// K when neither `rate_limit` nor `counters` is given.
pub const DEFAULT_COUNTERS: u32 = 100;

red_params! {
    /// BREATHe parameters. Thresholds are in packets.
    pub struct BreatheParams {
        // Section 4's buffer and packets are CHOKe's; so are the thresholds.
        red_defaults: RedBlock::CHOKE_SINGLE_LINK,
        /// r_limit: K = ceil(link rate / rate_limit). Exclusive with `counters`.
        #[serde(skip_serializing_if = "Option::is_none")]
        rate_limit: Option<Rate> = None,
        /// K directly. Exclusive with `rate_limit`; 100 when both are absent.
        #[serde(skip_serializing_if = "Option::is_none")]
        counters: Option<u32> = None,
    }
}

impl BreatheParams {
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

impl QdiscParams for BreatheParams {
    type Qdisc = Breathe;
    fn validate_on(&self, link: &LinkInfo) -> Result<(), ParamError> {
        self.validate()?;
        self.counters_for(link).map(|_| ())
    }
    fn validate(&self) -> Result<(), ParamError> {
        self.red().validate()?;
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
    fn build(&self, link: &LinkInfo) -> Result<Breathe, ParamError> {
        Breathe::new(self.clone(), link)
    }
    fn property_configs() -> Vec<Self> {
        let small = BreatheParams::default().with_red(RedBlock::TINY);
        vec![
            BreatheParams {
                counters: Some(3),
                ecn: true,
                ..small.clone()
            },
            BreatheParams {
                rate_limit: Some(Rate::from_mbps(2)),
                ..small
            },
        ]
    }
}

#[derive(Debug, Clone)]
pub struct Breathe {
    params: BreatheParams,
    heavy: HeavyHitters,
    queue: RedQueue,
}

impl Breathe {
    pub fn new(params: BreatheParams, link: &LinkInfo) -> Result<Self, ParamError> {
        params.validate()?;
        let k = params.counters_for(link)?;
        Ok(Breathe {
            heavy: HeavyHitters::new(k),
            queue: RedQueue::new(&params.red(), link),
            params,
        })
    }

    /// The current average queue, in packets.
    pub fn avg(&self) -> f64 {
        self.queue.average.avg
    }

    /// The heavy-hitter set ψ.
    pub fn heavy_hitters(&self) -> &HeavyHitters {
        &self.heavy
    }
}

impl Qdisc for Breathe {
    red_queue_methods!(queue);

    fn enqueue(&mut self, pkt: Packet, ctx: &mut Ctx<'_>) -> Verdict {
        let avg = self.queue.average_now(ctx.now);
        let p = &self.params;
        let region = self
            .queue
            .gate(Curve::Linear.region(avg, p.min_th, p.max_th, p.max_p));
        if matches!(region, RedRegion::Early(_)) && self.heavy.contains(pkt.flow) {
            ctx.drop(pkt, DropReason::HeavyHitter);
            return Verdict::Dropped;
        }
        // ψ counts admitted packets only.
        let flow = pkt.flow;
        let verdict = self.queue.admit(region, pkt, ctx);
        if verdict == Verdict::Queued {
            self.heavy.observe(flow);
        }
        verdict
    }

    /// A set that never evicted a flow (no decrement step: fewer flows than K
    /// ever arrived) holds every flow, so between the thresholds every arrival is
    /// dropped: a hard threshold at min_th, not a fairness mechanism. Algorithm 1
    /// to the letter, which a user should hear about.
    fn diagnostic(&self) -> Option<String> {
        let h = &self.heavy;
        if h.decrements() > 0 || h.is_empty() {
            return None;
        }
        Some(format!(
            "breathe: the heavy-hitter set never evicted a flow ({} flows seen, K = {} \
             counters): every flow holds a counter, so between min_th and max_th every \
             arrival is dropped and BREATHe throttles no flow more than another; give K \
             below the number of flows (rate_limit = the rate above which a flow is heavy, \
             K = link rate / rate_limit; docs/qdiscs.md, BREATHe)",
            h.len(),
            h.capacity()
        ))
    }
}

impl crate::table_bytes::TableBytes for BreatheParams {
    /// K counters: `counters`, or the link rate over `rate_limit`.
    fn table_bytes(&self, link: &LinkInfo) -> Option<crate::table_bytes::KeyedTable> {
        let k = self.counters_for(link).ok()? as u64;
        let (key, value) = match (self.counters, self.rate_limit) {
            (None, Some(r)) => ("rate_limit", r.to_string()),
            _ => ("counters", k.to_string()),
        };
        Some(crate::table_bytes::KeyedTable {
            key,
            value,
            bytes: crate::parts::heavy_hitters::HeavyHitters::bytes_at_most(k),
        })
    }
}

impl crate::early_drop::EarlyDropRule for BreatheParams {
    fn early_drop(&self) -> crate::early_drop::EarlyDrop {
        use crate::early_drop::EarlyDrop;
        EarlyDrop::AboveMinTh(self.red())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::FlowId;
    use crate::testing::{rejection, Harness};

    const LINK: LinkInfo = LinkInfo::new(Rate::from_mbps(1));

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
        let mut h = Harness::build(BreatheParams {
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
        let mut h = Harness::build(BreatheParams {
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
        let mut h = Harness::build(BreatheParams {
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
    fn a_set_that_never_evicts_says_so_and_one_that_evicts_does_not() {
        // 5 flows, K = 100: every flow keeps its counter.
        let few = |k: u32, flows: u32| {
            let mut h = Harness::build(BreatheParams {
                counters: Some(k),
                ..Default::default()
            });
            for seq in 0..3000 {
                h.offer(seq % flows, seq);
                h.dequeue();
            }
            h.q.qdisc().diagnostic()
        };
        let note = few(100, 5).expect("no diagnostic with 5 flows and K = 100");
        assert!(
            note.starts_with("breathe: the heavy-hitter set never evicted a flow (5 flows seen, K = 100 counters)"),
            "{note}"
        );
        // 300 flows, K = 100: the set is full and evicts.
        assert_eq!(few(100, 300), None);
        // No traffic, nothing to say.
        let h = Harness::build(BreatheParams::default());
        assert_eq!(h.q.qdisc().diagnostic(), None);
    }

    #[test]
    fn counters_and_rate_limit_together_are_rejected_by_name() {
        let e = rejection(BreatheParams {
            counters: Some(10),
            rate_limit: Some(Rate::from_kbps(10)),
            ..Default::default()
        });
        assert!(
            e.starts_with("counters = 10 must not be given together"),
            "{e}"
        );
        let e = rejection(BreatheParams {
            counters: Some(0),
            ..Default::default()
        });
        assert_eq!(e, "counters = 0 must be at least 1");
    }
}
