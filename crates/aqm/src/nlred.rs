//! NLRED: Nonlinear RED (Wang, Lin, Zhou, Xie & Li, IJCNS 2009; seed 004, section
//! 4), with the formula the seed text lost as DESIGN.md writes it out.
//!
//! RED unchanged except its drop curve: for min_th <= avg < max_th
//!
//! ```text
//! p_b = max_p' * ((avg - min_th) / (max_th - min_th))^2,   max_p' = 1.5 max_p
//! ```
//!
//! and p_b = 1 at and above max_th (section 4.2: NLRED deliberately has no gentle
//! ramp). With the same max_p, the factor 1.5 gives the quadratic the same area as
//! RED's line over [min_th, max_th] (section 4.1), so NLRED drops less than RED
//! below x = 2/3 of the band (1.5 x^2 = x) and more above it: gentler at light load,
//! more decisive as avg nears max_th. The factor is the parameter `max_p_scale`;
//! `max_p` is RED's ("equivalent") max_p, as the paper labels its curves.
//!
//! Everything else is RED's core ([`crate::parts::red`], the curve being
//! [`Curve::Quadratic`]): the same average with idle-time decay, the same count
//! spacing (`wait`), early drops become CE marks with `ecn`, forced drops stay
//! drops, a full queue drops (`Overflow`). A p_b above 1 (when max_p' > 1) is
//! capped at 1.
//!
//! GRED, the paper's comparison, is `kind = "red"` with `gentle = true`.
//!
//! Defaults: the paper's buffer, packets and max_p (section 5, Experiment 2) and
//! the 1.5 of section 4.1. The seed text lost section 5's thresholds and weight;
//! they are ns-2's RED defaults, as in section 3 of the same paper.

use crate::packet::Packet;
use crate::parts::red::{Curve, RedRegion};
use crate::parts::red_params::{red_params, RedBlock};
use crate::parts::red_queue::{red_queue_methods, RedQueue};
use crate::qdisc::{check, Ctx, LinkInfo, ParamError, Qdisc, QdiscParams, Verdict};

red_params! {
    /// NLRED parameters. Thresholds are in packets; `max_p` is RED's equivalent
    /// max_p (section 5): the curve peaks at `max_p_scale` max_p.
    pub struct NlredParams {
        // Section 5: a 120-packet buffer, 1000-byte packets; the rest ns-2's RED.
        red_defaults: RedBlock { limit: 120, mean_pkt_size: 1000, ..RedBlock::NS2 },
        /// max_p' / max_p (section 4.1: equal area with RED's line).
        max_p_scale: f64 = 1.5,
    }
}

impl QdiscParams for NlredParams {
    type Qdisc = Nlred;
    fn validate(&self) -> Result<(), ParamError> {
        self.red().validate()?;
        check::positive("max_p_scale", self.max_p_scale)
    }
    fn build(&self, link: &LinkInfo) -> Result<Nlred, ParamError> {
        Nlred::new(self.clone(), link)
    }
    fn property_configs() -> Vec<Self> {
        let tiny = RedBlock {
            max_p: 0.9, // max_p' = 1.35: p_b reaches its cap of 1
            ecn: true,
            ..RedBlock::TINY
        };
        vec![NlredParams::default().with_red(tiny)]
    }
}

#[derive(Debug, Clone)]
pub struct Nlred {
    params: NlredParams,
    curve: Curve,
    queue: RedQueue,
}

impl Nlred {
    pub fn new(params: NlredParams, link: &LinkInfo) -> Result<Self, ParamError> {
        params.validate()?;
        Ok(Nlred {
            curve: Curve::Quadratic {
                scale: params.max_p_scale,
            },
            queue: RedQueue::new(&params.red(), link),
            params,
        })
    }

    /// The current average queue, in packets.
    pub fn avg(&self) -> f64 {
        self.queue.average.avg
    }

    /// This qdisc's base drop probability p_b at average `avg`: 0 below min_th,
    /// the quadratic up to max_th (capped at 1), 1 at and above max_th.
    pub fn drop_probability(&self, avg: f64) -> f64 {
        match self.drop_region(avg) {
            RedRegion::Below => 0.0,
            RedRegion::Early(p_b) => p_b,
            RedRegion::Forced => 1.0,
        }
    }
}

impl Nlred {
    #[inline]
    fn drop_region(&self, avg: f64) -> RedRegion {
        let p = &self.params;
        self.curve.region(avg, p.min_th, p.max_th, p.max_p)
    }
}

impl Qdisc for Nlred {
    red_queue_methods!(queue);

    fn enqueue(&mut self, pkt: Packet, ctx: &mut Ctx<'_>) -> Verdict {
        let avg = self.queue.average_now(ctx.now);
        let region = self.queue.gate(self.drop_region(avg));
        self.queue.admit(region, pkt, ctx)
    }
}

impl crate::early_drop::EarlyDropRule for NlredParams {
    fn early_drop(&self) -> crate::early_drop::EarlyDrop {
        use crate::early_drop::EarlyDrop;
        EarlyDrop::AboveMinTh(self.red())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drop_reason::DropReason;
    use crate::parts::red::spaced_probability;
    use crate::testing::{rejection, Harness, TEST_LINK};

    fn red_p(avg: f64, min_th: f64, max_th: f64, max_p: f64) -> f64 {
        match Curve::Linear.region(avg, min_th, max_th, max_p) {
            RedRegion::Below => 0.0,
            RedRegion::Early(p) => p,
            RedRegion::Forced => 1.0,
        }
    }

    #[test]
    fn the_curve_is_below_reds_before_two_thirds_of_the_band_and_above_after() {
        let q = Nlred::new(
            NlredParams {
                min_th: 10.0,
                max_th: 40.0,
                max_p: 0.1,
                ..Default::default()
            },
            &TEST_LINK,
        )
        .unwrap();
        let crossing = 10.0 + 2.0 / 3.0 * 30.0; // 1.5 x^2 = x at x = 2/3
        assert!((q.drop_probability(crossing) - red_p(crossing, 10.0, 40.0, 0.1)).abs() < 1e-12);
        for i in 1..300 {
            let avg = 10.0 + 30.0 * i as f64 / 300.0;
            let (nl, red) = (q.drop_probability(avg), red_p(avg, 10.0, 40.0, 0.1));
            if avg < crossing - 1e-9 {
                assert!(nl < red, "avg {avg}: NLRED {nl} RED {red}");
            } else if avg > crossing + 1e-9 {
                assert!(nl > red, "avg {avg}: NLRED {nl} RED {red}");
            }
        }
        assert_eq!(q.drop_probability(9.99), 0.0);
        assert_eq!(q.drop_probability(10.0), 0.0);
        assert!((q.drop_probability(39.999) - 0.15).abs() < 1e-3); // 1.5 max_p
        assert_eq!(q.drop_probability(40.0), 1.0);
        // Equal area with RED's line: the mean of p over the band is max_p / 2.
        let n = 30_000;
        let mean: f64 = (0..n)
            .map(|i| q.drop_probability(10.0 + 30.0 * (i as f64 + 0.5) / n as f64))
            .sum::<f64>()
            / n as f64;
        assert!((mean - 0.05).abs() < 1e-6, "mean {mean}");
    }

    /// Mean arrivals between early drops at base probability `p_b`, with RED's
    /// spacing without `wait`, computed from the same `spaced_probability`.
    fn expected_gap(p_b: f64) -> f64 {
        let (mut survive, mut mean, mut count) = (1.0, 0.0, 1);
        while survive > 1e-12 {
            mean += survive;
            survive *= 1.0 - spaced_probability(p_b, count, false);
            count += 1;
        }
        mean
    }

    #[test]
    fn the_early_drop_rate_at_a_held_average_follows_the_quadratic() {
        // Queue held at 26 packets in [10, 40): x = 16/30, p_b = 0.15 x^2 ~ 0.0427.
        let mut h = Harness::new(
            Nlred::new(
                NlredParams {
                    limit: 100,
                    min_th: 10.0,
                    max_th: 40.0,
                    w_q: 0.02,
                    wait: false,
                    ..Default::default()
                },
                &TEST_LINK,
            )
            .unwrap(),
        );
        let hold = |h: &mut Harness<Nlred>, from: u32, n: u32| {
            for seq in from..from + n {
                h.offer(1, seq);
                while h.q.len() > 26 {
                    h.dequeue();
                }
            }
        };
        hold(&mut h, 0, 2_000); // warm-up: avg converges to 26
        assert!((h.q.qdisc().avg() - 26.0).abs() < 0.01);
        let before = h.drops(DropReason::Early);
        let n = 200_000;
        hold(&mut h, 2_000, n);
        let drops = (h.drops(DropReason::Early) - before) as f64;
        let p_b = h.q.qdisc().drop_probability(26.0);
        let gap = n as f64 / drops;
        let want = expected_gap(p_b);
        assert!(
            (gap / want - 1.0).abs() < 0.03,
            "mean gap {gap}, expected {want}"
        );
        // The same hold under RED's line (p_b = 0.1 * 16/30) drops more often.
        assert!(want > expected_gap(0.1 * 16.0 / 30.0));
    }

    #[test]
    fn at_and_above_max_th_every_arrival_is_dropped() {
        let mut h = Harness::new(
            Nlred::new(
                NlredParams {
                    limit: 50,
                    min_th: 2.0,
                    max_th: 5.0,
                    w_q: 1.0,
                    ..Default::default()
                },
                &TEST_LINK,
            )
            .unwrap(),
        );
        for seq in 0..5 {
            h.offer(1, seq);
        }
        for seq in 5..10 {
            assert_eq!(h.offer(1, seq), Verdict::Dropped);
        }
        assert_eq!(h.drops(DropReason::Forced), 5);
    }

    #[test]
    fn a_non_positive_scale_is_rejected_by_name() {
        let e = rejection(NlredParams {
            max_p_scale: 0.0,
            ..Default::default()
        });
        assert_eq!(e, "max_p_scale = 0 must be positive");
    }
}
