//! LRU-RED (Smitha & Reddy, *LRU-RED: An active queue management scheme to
//! contain high bandwidth flows at congested routers*, IEEE GLOBECOM 2001), the
//! scheme Scalable Fair RED builds on (seed 004, section 2.1): RED plus an LRU
//! cache of recently seen flows that singles out high-bandwidth flows and drops
//! their packets with a higher probability.
//!
//! A router sees packets of a fast flow more often than those of a slow one, so a
//! short list ordered by recency holds the fast flows, with state bounded by the
//! list rather than by the number of flows. On each arrival the flow's entry moves
//! to the front (created, evicting the least recently seen, when absent) and its
//! hit count h_i counts the packet; with H the hits over the listed flows and N_a
//! the entries, the mean h = H / N_a is the fair share of a listed flow. A flow
//! with h_i > (1 + alpha) h is high-bandwidth: RED's max_p is scaled by h_i / h for
//! its packet (capped at 1), an early drop reported as `heavy_hitter`. Every other
//! packet sees plain RED (`early`; `forced` above max_th; `overflow`).
//!
//! The GLOBECOM paper's text is not among the seeds. This is the scheme as seed
//! 004 describes it and as its own MRUL refines it: MRUL keeps the same list with
//! "more information" (drop counts, to find unresponsive flows, and protection of
//! slow flows); LRU-RED is the list of hit counts and the heavier drop for flows
//! above the mean alone, so it cannot tell an unresponsive flow from a fast TCP
//! (section 2.1's criticism). The threshold (1 + alpha) h and the scaling h_i / h
//! are MRUL's section 2.2 rule, so the two differ exactly by what 2.3 and 2.4 add.
//!
//! The list and its counters are [`crate::parts::recency_list`], shared with MRUL:
//! O(1) per packet, hit counts halving every `aging_period` so that the list
//! follows the current rates rather than all history.
//!
//! Defaults: the RED setting, buffer and packets of seed 004's section 3 (where
//! the paper compares the fairness schemes); `alpha` as MRUL's section 2.2; the
//! list size and aging period as MRUL's defaults, so the two compare like for like.

use crate::drop_reason::DropReason;
use crate::packet::{FlowId, Packet};
use crate::parts::recency_list::{check_period, check_size, FlowCounters, RecencyList};
use crate::parts::red::Curve;
use crate::parts::red_params::{red_params, RedBlock};
use crate::parts::red_queue::{apply_and_admit, red_queue_methods, RedQueue};
use crate::qdisc::{check, Ctx, LinkInfo, ParamError, Qdisc, QdiscParams, Verdict};
use crate::time::Dur;

red_params! {
    /// LRU-RED parameters. Thresholds are in packets; `max_p` is scaled by
    /// h_i / h for high-bandwidth flows.
    pub struct LruRedParams {
        // Seed 004 section 3: RED 5 / 15 / 0.1 / 0.002, a 50-packet buffer, 1 KB.
        red_defaults: RedBlock { limit: 50, mean_pkt_size: 1000, ..RedBlock::NS2 },
        /// High-bandwidth flow: h_i > (1 + alpha) h (as MRUL's section 2.2).
        alpha: f64 = 0.1,
        /// The most flows the cache holds (MRUL's default).
        list_size: u32 = 100,
        /// Hit counts halve every period (MRUL's default).
        aging_period: Dur = Dur::from_secs(1),
    }
}

impl QdiscParams for LruRedParams {
    type Qdisc = LruRed;
    fn validate(&self) -> Result<(), ParamError> {
        self.red().validate()?;
        check::finite("alpha", self.alpha)?;
        check::at_least("alpha", self.alpha, 0.0)?;
        check_size("list_size", self.list_size)?;
        check_period("aging_period", self.aging_period)
    }
    fn build(&self, link: &LinkInfo) -> Result<LruRed, ParamError> {
        LruRed::new(self.clone(), link)
    }
    fn property_configs() -> Vec<Self> {
        let small = LruRedParams::default().with_red(RedBlock::TINY);
        vec![
            LruRedParams {
                list_size: 3,
                aging_period: Dur::from_millis(5),
                ecn: true,
                ..small.clone()
            },
            LruRedParams {
                list_size: 30,
                alpha: 0.0,
                wait: false,
                ..small
            },
        ]
    }
}

#[derive(Debug, Clone)]
pub struct LruRed {
    params: LruRedParams,
    /// The LRU cache with hit counts (R_i in the part's terms) and their sum.
    flows: FlowCounters,
    queue: RedQueue,
}

impl LruRed {
    pub fn new(params: LruRedParams, link: &LinkInfo) -> Result<Self, ParamError> {
        params.validate()?;
        Ok(LruRed {
            flows: FlowCounters::new(params.list_size as usize, params.aging_period),
            queue: RedQueue::new(&params.red(), link),
            params,
        })
    }

    /// The current average queue, in packets.
    pub fn avg(&self) -> f64 {
        self.queue.average.avg
    }

    /// The cache (for tests and the queue lab).
    pub fn list(&self) -> &RecencyList {
        self.flows.list()
    }

    /// `flow`'s hit count as of its last packet, if cached.
    pub fn hits(&self, flow: FlowId) -> Option<u64> {
        self.flows.flow_stats(flow).map(|(hits, _)| hits)
    }

    /// The factor RED's max_p is scaled by for `flow` (h_i / h when it is
    /// high-bandwidth), or `None` when it is not high-bandwidth or not cached.
    pub fn penalty(&self, flow: FlowId) -> Option<f64> {
        self.scale(self.flows.list().get(flow)?)
    }

    fn scale(&self, e: u32) -> Option<f64> {
        let hits = self.flows.entry(e).received as f64;
        let (total, _) = self.flows.totals();
        let mean = total as f64 / self.flows.len().max(1) as f64;
        (mean > 0.0 && hits > (1.0 + self.params.alpha) * mean).then(|| hits / mean)
    }
}

impl Qdisc for LruRed {
    red_queue_methods!(queue);

    fn enqueue(&mut self, pkt: Packet, ctx: &mut Ctx<'_>) -> Verdict {
        self.flows.age(ctx.now);
        let e = self.flows.arrival(pkt.flow);
        let avg = self.queue.average_now(ctx.now);
        let p = &self.params;
        let (max_p, reason) = match self.scale(e) {
            Some(scale) => ((p.max_p * scale).min(1.0), DropReason::HeavyHitter),
            None => (p.max_p, DropReason::Early),
        };
        let region = self
            .queue
            .gate(Curve::Linear.region(avg, p.min_th, p.max_th, max_p));
        let action = self.queue.count.decide(region, p.wait, ctx);
        apply_and_admit(action, pkt, (p.ecn, reason), &mut self.queue.queue, ctx)
    }
}

impl crate::table_bytes::TableBytes for LruRedParams {
    /// The list of `list_size` flows.
    fn table_bytes(&self, _: &LinkInfo) -> Option<crate::table_bytes::KeyedTable> {
        Some(crate::table_bytes::KeyedTable {
            key: "list_size",
            value: self.list_size.to_string(),
            bytes: crate::parts::recency_list::RecencyList::bytes_at_most(u64::from(
                self.list_size,
            )),
        })
    }
}

impl crate::early_drop::EarlyDropRule for LruRedParams {
    fn early_drop(&self) -> crate::early_drop::EarlyDrop {
        use crate::early_drop::EarlyDrop;
        EarlyDrop::AboveMinTh(self.red())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{rejection, Harness};

    /// A congested queue: held at 10 packets, between min_th = 5 and max_th = 15.
    fn congested() -> LruRedParams {
        LruRedParams {
            w_q: 0.05,
            ..Default::default()
        }
    }

    /// Rounds in which flow 0 sends `heavy` packets and flows 1..=`light` one each,
    /// the queue held at 10; returns (heavy's drop ratio, the light flows').
    fn loss_ratios(h: &mut Harness<LruRed>, heavy: u32, light: u32, rounds: u32) -> (f64, f64) {
        let mut sent = [0u64; 2];
        let mut lost = [0u64; 2];
        let mut seq = 0;
        for _ in 0..rounds {
            for i in 0..heavy + light {
                let (flow, k) = if i < heavy {
                    (0, 0)
                } else {
                    (1 + i - heavy, 1)
                };
                sent[k] += 1;
                lost[k] += (h.offer(flow, seq) == Verdict::Dropped) as u64;
                seq += 1;
                while h.q.len() > 10 {
                    h.dequeue();
                }
            }
        }
        (
            lost[0] as f64 / sent[0] as f64,
            lost[1] as f64 / sent[1] as f64,
        )
    }

    #[test]
    fn a_flow_seen_more_often_than_the_mean_is_dropped_more_often() {
        // Flow 0 sends 5 packets per round, flows 1..=9 one each: the mean hit
        // count is 14/10 of a round, so flow 0 is high-bandwidth with max_p scaled
        // by 5 / 1.4 = 3.6 and loses several times the light flows' share.
        let mut h = Harness::build(congested());
        let (heavy, light) = loss_ratios(&mut h, 5, 9, 3_000);
        // With ns-2's `wait` spacing the heavy flow's frequent drops keep RED's
        // count below 1 / p_b, so the light flows lose nothing here (measured:
        // 20% against 0).
        assert!(
            heavy > 0.1 && heavy > 2.5 * light,
            "heavy {heavy}, light {light}"
        );
        let scale =
            h.q.qdisc()
                .penalty(FlowId(0))
                .expect("flow 0 is high-bandwidth");
        assert!((2.5..5.0).contains(&scale), "{scale}");
        assert_eq!(h.q.qdisc().penalty(FlowId(3)), None);
        assert!(h.drops(DropReason::HeavyHitter) > 0);
        // Plain RED (alpha so large that nobody qualifies) treats them alike.
        let mut h = Harness::build(LruRedParams {
            alpha: 1e9,
            ..congested()
        });
        let (heavy, light) = loss_ratios(&mut h, 5, 9, 3_000);
        assert!(
            heavy < 1.5 * light && light < 1.5 * heavy,
            "{heavy} {light}"
        );
        assert_eq!(h.drops(DropReason::HeavyHitter), 0);
    }

    #[test]
    fn flows_at_the_same_rate_are_not_singled_out_once_counted() {
        // At start-up the flow just seen is briefly above 1.1 times the mean (1
        // hit against 0.1); once the counts have grown, equal flows stay within
        // one hit of the mean and no flow is singled out again.
        let mut h = Harness::build(congested());
        loss_ratios(&mut h, 1, 9, 100);
        let early = h.drops(DropReason::HeavyHitter);
        let (a, b) = loss_ratios(&mut h, 1, 9, 3_000);
        assert!(a > 0.0 && b > 0.0);
        assert_eq!(h.drops(DropReason::HeavyHitter), early);
    }

    #[test]
    fn a_flow_that_drops_out_of_the_cache_loses_its_history() {
        // A 4-entry cache: flow 0 is heavy, then six other flows pass and evict it.
        let mut h = Harness::build(LruRedParams {
            list_size: 4,
            ..Default::default()
        });
        for i in 0..20 {
            h.offer(0, i);
        }
        h.offer(1, 0);
        assert_eq!(h.q.qdisc().hits(FlowId(0)), Some(20));
        for f in 1..7 {
            h.offer(f, 1);
        }
        assert_eq!(h.q.qdisc().hits(FlowId(0)), None);
        assert_eq!(h.q.qdisc().list().len(), 4);
        h.offer(0, 21);
        assert_eq!(h.q.qdisc().hits(FlowId(0)), Some(1));
    }

    #[test]
    fn ecn_marks_a_high_bandwidth_flows_early_drops() {
        let mut h = Harness::build(LruRedParams {
            ecn: true,
            ..congested()
        });
        let mut seq = 0;
        for _ in 0..3_000 {
            for i in 0..14 {
                let flow = if i < 5 { 0 } else { i - 4 };
                h.offer_ect(flow, seq);
                seq += 1;
                while h.q.len() > 10 {
                    h.dequeue();
                }
            }
        }
        assert!(h.marks(DropReason::HeavyHitter) > 0);
        assert_eq!(h.drops(DropReason::HeavyHitter), 0);
    }

    #[test]
    fn bad_parameters_are_rejected_by_name() {
        assert_eq!(
            rejection(LruRedParams {
                list_size: 0,
                ..Default::default()
            }),
            "list_size = 0 must be at least 1"
        );
        assert_eq!(
            rejection(LruRedParams {
                aging_period: Dur::ZERO,
                ..Default::default()
            }),
            "aging_period = 0ns must be positive"
        );
        assert_eq!(
            rejection(LruRedParams {
                alpha: -1.0,
                ..Default::default()
            }),
            "alpha = -1 must be at least 0"
        );
    }
}
