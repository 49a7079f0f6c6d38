//! Scalable Fair RED over a Most-Recently-Used List (SFRED/MRUL; Wang, Lin, Zhou,
//! Xie & Li, IJCNS 2009; seed 004, section 2), in packet mode, with the formulas the
//! seed text lost as DESIGN.md writes them out.
//!
//! A list of the N (`list_size`) most recently seen flows keeps, per flow, packets
//! received R_i and dropped D_i; the qdisc keeps R, D and the number of active flows
//! N_a (2.1). An arrival moves its flow's entry to the front (creating it, and
//! evicting the least recent entry when full) and counts in R_i and R. With fair
//! share f = R / N_a (2.2) the flow is:
//! - **slow** (2.4): R_i < D_w and D_i = 0: RED with both thresholds raised by D_w,
//!   an allowance that shields a new (slow-start) flow;
//! - **unresponsive fast** (2.3): R_i > (1 + alpha) f and D_i / R_i >
//!   (1 + beta) D / R: dropped with probability 1 (`Unresponsive`);
//! - **fast** (2.2): R_i > (1 + alpha) f: RED with max_p scaled by R_i / f (capped
//!   at 1), its early drops reported as `HeavyHitter` ("judged a fast flow");
//! - otherwise plain RED (`Early`; `Forced` above max_th).
//!
//! Every drop of the arrival, overflow included, counts in D_i and D. The list and
//! its counters are a part shared with LRU-RED, [`crate::parts::recency_list`]:
//! lookup, move-to-front and eviction are O(1). Aging: every `aging_period` all
//! counters halve (DESIGN.md), lazily: R and D halve when a period ends, an entry
//! by the periods it missed when next touched.
//!
//! Readings where the paper is silent or ambiguous:
//! - N_a is the number of listed entries and R, D the sums of their counters (an
//!   evicted entry's leave them), so f is the mean count of the flows compared.
//!   Lazy halving may leave R one packet per entry per period above the exact sum.
//! - The slow test comes first: a new flow is protected even when momentarily
//!   above the fair share (as every flow is at start-up).
//! - The unresponsive penalty applies only while avg >= `min_th`, unless
//!   `penalty_below_min_th` (the literal "all the subsequent packets from the flow
//!   are dropped": its own drops then keep it blocked after congestion ends).
//! - Early drops may be CE marks with `ecn`; unresponsive and forced drops are drops.
//!
//! Defaults: section 3's RED setting, buffer and packets; alpha, beta and D_w from
//! 2.2-2.4. The paper gives no list size or aging period: twice the buffer (every
//! flow with a packet queued fits) and 1 s (several RTTs of its topology) are ours.

use crate::drop_reason::DropReason;
use crate::packet::{FlowId, Packet};
use crate::parts::recency_list::{check_period, check_size, FlowCounters, RecencyList};
use crate::parts::red::{Curve, RedAction};
use crate::parts::red_params::{red_params, RedBlock};
use crate::parts::red_queue::{apply_and_admit, red_queue_methods, RedQueue};
use crate::qdisc::{check, Ctx, LinkInfo, ParamError, Qdisc, QdiscParams, Verdict};
use crate::time::Dur;

red_params! {
    /// SFRED over MRUL parameters. Thresholds are in packets; `max_p` is scaled
    /// by R_i / f for fast flows.
    pub struct MrulParams {
        // Section 3: RED 5 / 15 / 0.1 / 0.002, a 50-packet buffer, 1 KB packets.
        red_defaults: RedBlock { limit: 50, mean_pkt_size: 1000, ..RedBlock::NS2 },
        /// Fast flow: R_i > (1 + alpha) f (section 2.2).
        alpha: f64 = 0.1,
        /// Unresponsive: D_i / R_i > (1 + beta) D / R (section 2.3).
        beta: f64 = 0.1,
        /// Slow flow: R_i < d_w and D_i = 0; its thresholds rise by d_w (2.4, 3).
        d_w: u32 = 10,
        /// N, the most flows the list holds (not in the paper).
        list_size: u32 = 100,
        /// Counters halve every period (not in the paper; DESIGN.md asks for aging).
        aging_period: Dur = Dur::from_secs(1),
        /// Drop unresponsive flows even while avg < min_th.
        penalty_below_min_th: bool = false,
    }
}

impl QdiscParams for MrulParams {
    type Qdisc = Mrul;
    fn validate(&self) -> Result<(), ParamError> {
        self.red().validate()?;
        check::finite("alpha", self.alpha)?;
        check::at_least("alpha", self.alpha, 0.0)?;
        check::finite("beta", self.beta)?;
        check::at_least("beta", self.beta, 0.0)?;
        check_size("list_size", self.list_size)?;
        check_period("aging_period", self.aging_period)
    }
    fn build(&self, link: &LinkInfo) -> Result<Mrul, ParamError> {
        Mrul::new(self.clone(), link)
    }
    fn property_configs() -> Vec<Self> {
        let small = MrulParams::default().with_red(RedBlock::TINY);
        vec![
            MrulParams {
                list_size: 4,
                d_w: 2,
                aging_period: Dur::from_millis(5),
                ecn: true,
                ..small.clone()
            },
            MrulParams {
                list_size: 30,
                penalty_below_min_th: true,
                wait: false,
                ..small
            },
        ]
    }
}

/// How SFRED treats a flow's next packet.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum FlowClass {
    /// Fewer than D_w packets and no drop: thresholds raised by D_w.
    Slow,
    /// Above the fair share: RED with max_p scaled by this factor (R_i / f).
    Fast(f64),
    /// Fast and losing more than the average: dropped with probability 1.
    Unresponsive,
    /// Plain RED.
    Normal,
}

#[derive(Debug, Clone)]
pub struct Mrul {
    params: MrulParams,
    /// The MRU list with R_i, D_i, R and D (aged).
    flows: FlowCounters,
    queue: RedQueue,
}

impl Mrul {
    pub fn new(params: MrulParams, link: &LinkInfo) -> Result<Self, ParamError> {
        params.validate()?;
        Ok(Mrul {
            flows: FlowCounters::new(params.list_size as usize, params.aging_period),
            queue: RedQueue::new(&params.red(), link),
            params,
        })
    }

    /// The current average queue, in packets.
    pub fn avg(&self) -> f64 {
        self.queue.average.avg
    }

    /// The list (for tests and the queue lab).
    pub fn list(&self) -> &RecencyList {
        self.flows.list()
    }

    /// R and D, the aggregate received and dropped over the listed flows.
    pub fn totals(&self) -> (u64, u64) {
        self.flows.totals()
    }

    /// `flow`'s (R_i, D_i) as of its last packet, if listed.
    pub fn flow_stats(&self, flow: FlowId) -> Option<(u64, u64)> {
        self.flows.flow_stats(flow)
    }

    /// How `flow` is classified with its current counters, if listed.
    pub fn flow_class(&self, flow: FlowId) -> Option<FlowClass> {
        let e = self.flows.list().get(flow)?;
        Some(self.classify(e))
    }

    fn classify(&self, e: u32) -> FlowClass {
        let p = &self.params;
        let entry = self.flows.entry(e);
        let (r_i, d_i) = (entry.received as f64, entry.dropped as f64);
        let (received, dropped) = self.flows.totals();
        if entry.received < p.d_w as u64 && entry.dropped == 0 {
            return FlowClass::Slow;
        }
        let n_a = self.flows.len().max(1) as f64;
        let fair = received as f64 / n_a;
        if fair > 0.0 && r_i > (1.0 + p.alpha) * fair {
            let avg_loss = if received > 0 {
                dropped as f64 / received as f64
            } else {
                0.0
            };
            if r_i > 0.0 && d_i / r_i > (1.0 + p.beta) * avg_loss {
                return FlowClass::Unresponsive;
            }
            return FlowClass::Fast(r_i / fair);
        }
        FlowClass::Normal
    }

    /// RED's decision with the class's thresholds and max_p, and the reason an
    /// early drop reports.
    fn decide(&mut self, class: FlowClass, avg: f64, ctx: &mut Ctx<'_>) -> Decision {
        let p = &self.params;
        let (shift, max_p, reason) = match class {
            FlowClass::Slow => (p.d_w as f64, p.max_p, DropReason::Early),
            FlowClass::Fast(scale) => (0.0, (p.max_p * scale).min(1.0), DropReason::HeavyHitter),
            FlowClass::Unresponsive => {
                if p.penalty_below_min_th || avg >= p.min_th {
                    self.queue.count.forced();
                    return Decision::Unresponsive;
                }
                (0.0, p.max_p, DropReason::Early)
            }
            FlowClass::Normal => (0.0, p.max_p, DropReason::Early),
        };
        let region = Curve::Linear.region(avg, p.min_th + shift, p.max_th + shift, max_p);
        let region = self.queue.gate(region);
        Decision::Red(self.queue.count.decide(region, p.wait, ctx), reason)
    }
}

/// What [`Mrul::decide`] concluded for an arrival.
enum Decision {
    /// Dropped outright as unresponsive.
    Unresponsive,
    /// RED's action, and the reason an early drop reports.
    Red(RedAction, DropReason),
}

impl Qdisc for Mrul {
    red_queue_methods!(queue);

    fn enqueue(&mut self, pkt: Packet, ctx: &mut Ctx<'_>) -> Verdict {
        self.flows.age(ctx.now);
        let e = self.flows.arrival(pkt.flow);
        let avg = self.queue.average_now(ctx.now);
        let class = self.classify(e);
        let verdict = match self.decide(class, avg, ctx) {
            Decision::Unresponsive => {
                ctx.drop(pkt, DropReason::Unresponsive);
                Verdict::Dropped
            }
            Decision::Red(action, reason) => {
                let (ecn, queue) = (self.params.ecn, &mut self.queue.queue);
                apply_and_admit(action, pkt, (ecn, reason), queue, ctx)
            }
        };
        if verdict == Verdict::Dropped {
            // Every drop of the arrival, overflow included, counts in D_i and D.
            self.flows.dropped(e);
        }
        verdict
    }
}

impl crate::table_bytes::TableBytes for MrulParams {
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

impl crate::early_drop::EarlyDropRule for MrulParams {
    /// Its penalty below `min_th` acts on a queue that a short `limit` keeps below
    /// `min_th`, so MRUL is then still more than a DropTail.
    fn early_drop(&self) -> crate::early_drop::EarlyDrop {
        use crate::early_drop::EarlyDrop;
        if self.penalty_below_min_th {
            EarlyDrop::Unchecked
        } else {
            EarlyDrop::AboveMinTh(self.red())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{rejection, Harness};

    /// A congested queue: held at 10 packets, between min_th = 5 and max_th = 15.
    fn congested() -> MrulParams {
        MrulParams {
            w_q: 0.05,
            ..Default::default()
        }
    }

    /// One round: flow 0 sends `heavy` packets, flows 1..=`light` one each; the
    /// queue is held at `backlog`.
    fn round(h: &mut Harness<Mrul>, seq: &mut u32, heavy: u32, light: u32, backlog: usize) {
        for i in 0..heavy + light {
            let flow = if i < heavy { 0 } else { 1 + i - heavy };
            h.offer(flow, *seq);
            *seq += 1;
            while h.q.len() > backlog {
                h.dequeue();
            }
        }
    }

    #[test]
    fn a_cbr_flow_at_five_times_the_fair_rate_is_judged_unresponsive() {
        // Flow 0 sends 5 packets per round, flows 1..=9 one each: f = 14/10 per
        // round, so flow 0 is fast (R_0 / f = 3.6), its max_p scales up, its loss
        // ratio climbs above the average and it is then dropped outright.
        let mut h = Harness::build(congested());
        let mut seq = 0;
        let mut judged_at = None;
        for r in 0..2_000 {
            round(&mut h, &mut seq, 5, 9, 10);
            if judged_at.is_none()
                && h.q.qdisc().flow_class(FlowId(0)) == Some(FlowClass::Unresponsive)
            {
                judged_at = Some(r);
            }
        }
        let r = judged_at.expect("flow 0 was never judged unresponsive");
        assert!(h.drops(DropReason::Unresponsive) > 0);
        let unresp: Vec<_> = h
            .sink
            .drops
            .iter()
            .filter(|(_, why)| *why == DropReason::Unresponsive)
            .map(|(p, _)| p.flow)
            .collect();
        assert!(unresp.iter().all(|f| *f == FlowId(0)), "{unresp:?}");
        // Before the verdict, its loss ratio had to exceed the average by beta.
        let (ri, di) = h.q.qdisc().flow_stats(FlowId(0)).unwrap();
        let (rr, dd) = h.q.qdisc().totals();
        assert!(di as f64 / ri as f64 > 1.1 * dd as f64 / rr as f64);
        // A light flow stays normal: at the fair share, losing at RED's rate.
        assert!(matches!(
            h.q.qdisc().flow_class(FlowId(3)),
            Some(FlowClass::Normal)
        ));
        assert!(r < 1_000, "judged only after {r} rounds");
    }

    #[test]
    fn a_new_flow_under_d_w_packets_is_slow_and_protected() {
        let mut h = Harness::build(congested());
        let mut seq = 0;
        for _ in 0..500 {
            round(&mut h, &mut seq, 0, 10, 10);
        }
        assert!(h.q.qdisc().avg() > 8.0, "avg {}", h.q.qdisc().avg());
        // avg ~ 10 is inside [5, 15) for everyone but below 5 + D_w for a new flow.
        for k in 0..9 {
            assert_eq!(h.offer(99, 1_000_000 + k), Verdict::Queued);
            assert_eq!(h.q.qdisc().flow_class(FlowId(99)), Some(FlowClass::Slow));
            h.dequeue();
        }
        h.offer(99, 2_000_000);
        assert_ne!(h.q.qdisc().flow_class(FlowId(99)), Some(FlowClass::Slow));
        // Old flows did get early drops at this average.
        assert!(h.drops(DropReason::Early) > 0);
    }

    #[test]
    fn a_full_list_evicts_the_least_recently_seen_flow() {
        let mut h = Harness::build(MrulParams {
            list_size: 3,
            ..Default::default()
        });
        for (seq, flow) in [1, 2, 3, 1, 4].into_iter().enumerate() {
            h.offer(flow, seq as u32);
        }
        let order = h.q.qdisc().list().recency_order();
        assert_eq!(order, vec![FlowId(4), FlowId(1), FlowId(3)]);
        assert_eq!(h.q.qdisc().flow_stats(FlowId(2)), None);
        assert_eq!(h.q.qdisc().flow_stats(FlowId(1)), Some((2, 0)));
        // R and D follow the listed flows only: 2 (flow 1) + 1 + 1.
        assert_eq!(h.q.qdisc().totals(), (4, 0));
    }

    #[test]
    fn aging_halves_the_counters_every_period() {
        let mut h = Harness::build(MrulParams {
            aging_period: Dur::from_millis(100),
            ..Default::default()
        });
        for seq in 0..8 {
            h.offer(1, seq);
            h.dequeue();
        }
        for seq in 8..12 {
            h.offer(2, seq);
            h.dequeue();
        }
        assert_eq!(h.q.qdisc().totals(), (12, 0));
        h.advance(Dur::from_millis(100));
        h.offer(2, 99); // flow 2: 4 -> 2, + 1
        assert_eq!(h.q.qdisc().flow_stats(FlowId(2)), Some((3, 0)));
        assert_eq!(h.q.qdisc().totals(), (7, 0)); // 12 -> 6, + 1
        h.advance(Dur::from_millis(200)); // two more periods
        h.offer(1, 100); // flow 1: 8 -> 1 over three periods, + 1
        assert_eq!(h.q.qdisc().flow_stats(FlowId(1)), Some((2, 0)));
        assert_eq!(h.q.qdisc().totals(), (2, 0)); // 7 -> 1, + 1
    }

    #[test]
    fn bad_parameters_are_rejected_by_name() {
        let e = rejection(MrulParams {
            list_size: 0,
            ..Default::default()
        });
        assert_eq!(e, "list_size = 0 must be at least 1");
        let e = rejection(MrulParams {
            aging_period: Dur::from_nanos(0),
            ..Default::default()
        });
        assert_eq!(e, "aging_period = 0ns must be positive");
    }
}
