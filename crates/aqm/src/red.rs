//! RED: Random Early Detection (Floyd & Jacobson 1993), with gentle mode (GRED),
//! adaptive max_p (Floyd, Gummadi & Shenker 2001), byte mode and ECN.
//!
//! RED's core is a part, [`crate::parts::red`], shared with every RED-based
//! qdisc: the average with ns-2's idle-time correction, the curves, `count`
//! spacing and adaptive max_p. This file is the plain RED queue around it: one
//! FIFO, the average of its length updated on every arrival, RED's curve
//! (GRED's with `gentle`), and the admit tail.
//!
//! Early drops become CE marks for ECN-capable packets when `ecn` is on; forced
//! drops stay drops (ns-2; Linux marks there too unless `harddrop`). A full queue
//! always drops (`Overflow`). Byte mode (ns-2 `queue_in_bytes_`): the average
//! tracks the backlog in bytes divided by `mean_pkt_size`, so thresholds stay in
//! (mean-sized) packets, and p_b is scaled by `size / mean_pkt_size`.
//!
//! `step = K` is DCTCP's marking (RFC 8257 section 3.1; Alizadeh et al., SIGCOMM
//! 2010, who configure RED with min_th = max_th = K on the instantaneous queue):
//! an ECN-capable arrival that finds more than K packets queued is CE-marked
//! (reason `sojourn`, as CoDel's `ce_threshold`) and queued if there is room,
//! RED's curve not consulted (a packet is marked once); below K, and for packets
//! that are not ECN-capable, RED decides as usual, so its curve keeps working on
//! classic traffic. Linux RED has no step; min = max = K with w_q = 1 does this
//! for ECN-capable packets there.
//!
//! Defaults are ns-2's ([`RedBlock::NS2`]), except `limit`, Linux's 1000 packets.

use crate::drop_reason::DropReason;
use crate::packet::Packet;
use crate::parts::red::{AdaptiveMaxP, Curve, MaxPBounds};
use crate::parts::red_params::{red_params, RedBlock};
use crate::parts::red_queue::{red_queue_methods, RedQueue};
use crate::qdisc::{Ctx, LinkInfo, ParamError, Qdisc, QdiscParams, Verdict};
use crate::time::Dur;

red_params! {
    /// RED parameters. Thresholds are in packets (of `mean_pkt_size` in byte mode).
    pub struct RedParams {
        red_defaults: RedBlock::NS2,
        /// GRED: rise from max_p to 1 between max_th and 2 max_th instead of jumping.
        gentle: bool = false,
        /// Adapt max_p every `adapt_interval` to keep avg between 40% and 60% of the band.
        adaptive: bool = false,
        /// Time between adaptations of max_p (Adaptive RED).
        adapt_interval: Dur = Dur::from_millis(500),
        /// Measure the queue in bytes and scale p by packet size.
        byte_mode: bool = false,
        /// Step marking (DCTCP's RED, RFC 8257 section 3.1): CE-mark every
        /// ECN-capable packet that arrives to more than this many packets queued
        /// (of `mean_pkt_size` in byte mode), whatever the average; off when absent.
        #[serde(skip_serializing_if = "Option::is_none")]
        step: Option<f64> = None,
    }
}

impl QdiscParams for RedParams {
    type Qdisc = Red;
    fn validate(&self) -> Result<(), ParamError> {
        self.red().validate()?;
        if let Some(k) = self.step {
            if !(k.is_finite() && k >= 0.0) {
                return Err(ParamError::new(
                    "step",
                    k,
                    "must be a number of packets, 0 or more",
                ));
            }
            // A queue never holds more than `limit`: a step above it never marks.
            let limit = self.red().limit;
            if k > f64::from(limit) {
                return Err(ParamError::new(
                    "step",
                    k,
                    format!(
                        "must be at most limit = {limit}: the queue never exceeds it, so \
                         the step would never mark"
                    ),
                ));
            }
        }
        if self.adaptive && self.adapt_interval.is_zero() {
            return Err(ParamError::new(
                "adapt_interval",
                self.adapt_interval,
                "must be positive",
            ));
        }
        Ok(())
    }
    fn build(&self, link: &LinkInfo) -> Result<Red, ParamError> {
        Red::new(self.clone(), link)
    }
    fn property_configs() -> Vec<Self> {
        let small = RedParams::default().with_red(RedBlock::TINY);
        vec![
            small.clone(),
            RedParams {
                gentle: true,
                ecn: true,
                adaptive: true,
                ..small.clone()
            },
            RedParams {
                byte_mode: true,
                wait: false,
                qlen_gate: false,
                step: Some(2.0),
                ..small.clone()
            },
            // DCTCP's configuration: a step at K and RED's curve out of the way.
            RedParams {
                step: Some(3.0),
                min_th: 8.0,
                max_th: 10.0,
                ..small
            },
        ]
    }
}

#[derive(Debug, Clone)]
pub struct Red {
    params: RedParams,
    curve: Curve,
    /// max_p, adapted when `adaptive`.
    adapt: AdaptiveMaxP,
    queue: RedQueue,
}

impl Red {
    pub fn new(params: RedParams, link: &LinkInfo) -> Result<Self, ParamError> {
        params.validate()?;
        Ok(Red {
            curve: Curve::red(params.gentle),
            adapt: AdaptiveMaxP::new(params.max_p, params.adapt_interval),
            queue: RedQueue::new(&params.red(), link),
            params,
        })
    }

    /// The current average queue, in packets.
    pub fn avg(&self) -> f64 {
        self.queue.average.avg
    }

    /// The current max_p (changes only when adaptive).
    pub fn max_p(&self) -> f64 {
        self.adapt.max_p
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
    red_queue_methods!(queue);

    fn enqueue(&mut self, pkt: Packet, ctx: &mut Ctx<'_>) -> Verdict {
        let instantaneous = self.instantaneous_queue();
        let avg = self.queue.average.update(instantaneous, ctx.now);
        if let Some(k) = self.params.step {
            if pkt.ecn.is_ect() && instantaneous > k {
                // The step's mark stands for RED's decision: only a full queue
                // drops the packet now.
                return match ctx.mark_or_drop(pkt, true, DropReason::Sojourn) {
                    Some(marked) => self.queue.queue.admit(marked, ctx),
                    None => Verdict::Dropped,
                };
            }
        }
        let p = &self.params;
        let band = (p.min_th, p.max_th);
        if p.adaptive {
            let bounds = MaxPBounds::Paper;
            self.adapt
                .update(ctx.now, p.adapt_interval, avg, band, bounds);
        }
        let mut region = self.curve.region(avg, p.min_th, p.max_th, self.adapt.max_p);
        if p.byte_mode {
            region = region.scaled(pkt.size, p.mean_pkt_size);
        }
        // ns-2 applies `qlen > 1` to the queue as it measures it: bytes in byte mode.
        let queued = if p.byte_mode {
            self.queue.bytes()
        } else {
            self.queue.len() as u64
        };
        let region = region.gated(p.qlen_gate, queued);
        self.queue.admit(region, pkt, ctx)
    }
}

impl crate::early_drop::EarlyDropRule for RedParams {
    /// In byte mode the average counts mean-size packets and may exceed `limit`,
    /// so `limit` does not keep it below `min_th`.
    fn early_drop(&self) -> crate::early_drop::EarlyDrop {
        use crate::early_drop::EarlyDrop;
        if self.byte_mode {
            EarlyDrop::Unchecked
        } else {
            EarlyDrop::AboveMinTh(self.red())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drop_reason::DropReason;
    use crate::testing::{rejection, Harness};

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

    /// A step the queue can never reach is refused, not taken as "never mark".
    #[test]
    fn a_step_beyond_the_limit_is_refused() {
        for step in [1e30, 101.0, 1e9] {
            let e = RedParams {
                limit: 100,
                step: Some(step),
                ..Default::default()
            }
            .validate()
            .unwrap_err()
            .to_string();
            assert!(e.contains("step") && e.contains("limit = 100"), "{e}");
        }
        RedParams {
            limit: 100,
            step: Some(100.0),
            ..Default::default()
        }
        .validate()
        .unwrap();
    }

    #[test]
    fn no_early_drops_below_min_th() {
        let mut h = Harness::build(RedParams {
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
        let mut h = Harness::build(RedParams {
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
        let mut wide = Harness::build(base.clone());
        let mut narrow = Harness::build(RedParams {
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
        let mut h = Harness::build(RedParams {
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
        // ECN-capable packets are marked, never dropped early; others are dropped.
        for ect in [true, false] {
            let mut h = Harness::build(RedParams {
                min_th: 2.0,
                max_th: 50.0,
                w_q: 0.5,
                ecn: true,
                limit: 100,
                ..Default::default()
            });
            for seq in 0..1_000 {
                if ect {
                    h.offer_ect(1, seq);
                } else {
                    h.offer(1, seq);
                }
                while h.q.len() > 30 {
                    h.dequeue();
                }
            }
            let (marks, drops) = (h.marks(DropReason::Early), h.drops(DropReason::Early));
            if ect {
                assert!(marks > 0 && drops == 0, "marks {marks} drops {drops}");
            } else {
                assert!(drops > 0 && marks == 0, "marks {marks} drops {drops}");
            }
        }
    }

    #[test]
    fn gentle_replaces_the_cliff_with_a_ramp() {
        // w_q = 1: the average is the queue. An undrained queue stops growing at
        // max_th = 15 without gentle (every arrival there is forced out); with it,
        // arrivals between 15 and 30 still get in with probability below 1, so
        // the queue climbs to 2 max_th = 30 and stops there.
        let fill = |gentle| {
            let mut h = Harness::build(RedParams {
                w_q: 1.0,
                limit: 100,
                gentle,
                ..Default::default()
            });
            (0..2_000).for_each(|seq| {
                h.offer(1, seq);
            });
            (h.q.len(), h.drops(DropReason::Forced) > 1_000)
        };
        assert_eq!(fill(false), (15, true));
        assert_eq!(fill(true), (30, true));
    }

    #[test]
    fn idle_time_decays_the_average() {
        let mut h = Harness::build(RedParams {
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
        let mut h = Harness::build(RedParams {
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
    fn step_marks_exactly_the_ect_arrivals_above_k() {
        // RED's curve out of reach (average over 1000 arrivals from an empty
        // queue stays low): only the step acts.
        let step = |k: Option<f64>, ect: bool| {
            let mut h = Harness::build(RedParams {
                step: k,
                limit: 100,
                ..Default::default()
            });
            for seq in 0..30 {
                // Arrival `seq` finds `seq` packets queued.
                if ect {
                    h.offer_ect(1, seq);
                } else {
                    h.offer(1, seq);
                }
            }
            (h.marks(DropReason::Sojourn), h.q.counts().total_marks())
        };
        // Arrivals 6..30 find more than 5 queued: 24 marks, and no others.
        assert_eq!(step(Some(5.0), true), (24, 24));
        assert_eq!(step(Some(0.0), true), (29, 29));
        assert_eq!(step(None, true), (0, 0));
        // Packets that are not ECN-capable are never marked, by the step or RED.
        assert_eq!(step(Some(5.0), false), (0, 0));
    }

    #[test]
    fn step_marks_ect1_as_ect0_and_leaves_the_rest_to_red() {
        let mut h = Harness::build(RedParams {
            step: Some(2.0),
            w_q: 1.0,
            min_th: 10.0,
            max_th: 20.0,
            limit: 100,
            ..Default::default()
        });
        for seq in 0..5 {
            let mut p = Packet::new(crate::packet::FlowId(1), 1000);
            p.ecn = crate::packet::Ecn::Ect1;
            p.tag = seq;
            h.offer_pkt(p);
        }
        assert_eq!(h.marks(DropReason::Sojourn), 2);
        // Classic packets above max_th meet RED's forced drops, not the step.
        for seq in 5..40 {
            h.offer(2, seq);
        }
        assert!(h.drops(DropReason::Forced) > 0);
        assert_eq!(h.marks(DropReason::Sojourn), 2);
    }

    #[test]
    fn a_negative_step_is_rejected_by_name() {
        let e = rejection(RedParams {
            step: Some(-1.0),
            ..Default::default()
        });
        assert_eq!(e, "step = -1 must be a number of packets, 0 or more");
    }

    #[test]
    fn thresholds_out_of_order_are_rejected_by_name() {
        let e = rejection(RedParams {
            min_th: 200.0,
            max_th: 100.0,
            ..Default::default()
        });
        assert_eq!(e, "min_th = 200 must be below max_th = 100");
    }

    #[test]
    fn in_byte_mode_the_qlen_rule_spares_only_arrivals_to_an_empty_queue() {
        // ns-2 reads `qlen > 1` in bytes when it measures the queue in bytes: one
        // packet queued is already more than one byte.
        let mut h = Harness::build(RedParams {
            byte_mode: true,
            min_th: 2.0,
            max_th: 4.0,
            w_q: 0.05,
            limit: 100,
            ..Default::default()
        });
        for seq in 0..300 {
            h.offer(1, seq);
        }
        while h.q.len() > 1 {
            h.dequeue();
        }
        assert!(h.q.qdisc().avg() > 8.0, "avg {}", h.q.qdisc().avg());
        assert_eq!(h.offer(1, 1_000), Verdict::Dropped, "1000 bytes queued");
        h.dequeue();
        assert_eq!(h.offer(1, 1_001), Verdict::Queued, "nothing queued");
    }
}
