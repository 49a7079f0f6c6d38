//! SFRED: Stochastic Fair RED, a Bloom filter of adaptive RED bins (Feng, Kandlur,
//! Saha & Shin, INFOCOM 2001; seed 000, section III-A, the comparison scheme of
//! Table I and Fig. 3(c)).
//!
//! Not Scalable Fair RED over a Most-Recently-Used list (another qdisc). The paper
//! builds SFRED by "applying a Bloom filter to RED": as SFB keeps a BLUE `pm` per
//! bin, SFRED keeps "a per-bin max_p value ... updated according to the behavior of
//! flows which map into the bin", with Adaptive RED's rule (Floyd, Gummadi &
//! Shenker 2001). It is there to show why BLUE suits the job better: RED needs a
//! large buffer, and moderate congestion already drives max_p to 1, so RED cannot
//! tell a non-responsive flow from congestion.
//!
//! # How we read it
//!
//! Each of the `levels` x `bins` bins is a virtual RED queue over the shared FIFO:
//! it counts the packets of its flows in the queue, keeps RED's average of that
//! count ([`RedAverage`], updated when an arrival maps into the bin, decaying while
//! the bin is empty), and its own `max_p`, adapted every `adapt_interval` to keep
//! the bin's average inside the middle fifth of [`min_th`, `max_th`] (up by
//! min(0.01, max_p / 4), down by x0.9). An arrival is judged by the bin that
//! treats it most leniently (the Bloom filter's minimum, as SFB's pmin): the least
//! of its bins' RED probabilities ([`Curve::region`](crate::parts::red::Curve::region)), spaced by that bin's count
//! ([`spaced_probability`](crate::parts::red::spaced_probability)). A heavy flow fills all its bins, pushing their
//! averages and max_p up; a light flow with one clean bin is judged by that bin.
//!
//! Choices: thresholds are per bin, in packets. Adaptive RED bounds max_p to
//! [0.01, 0.5]; the paper says SFRED needs max_p up to 1 under moderate congestion,
//! so the ceiling is a parameter, `max_p_ceiling`, and max_p is clamped to
//! [0.01, ceiling]. Keys are fixed ([`flow_hash`](crate::parts::flow_hash)'s,
//! from `hash_seed` or, unset, the link's seed), so dequeue recomputes a packet's
//! bins from its flow id exactly; `cb` is not needed. Early drops become CE marks with
//! `ecn`; forced drops (avg above max_th in the most lenient bin) stay drops.
//!
//! Defaults: the SFB setup of 000 section III-B, which SFRED was compared in; the
//! per-queue RED thresholds of the paper's SFQ+RED comparison (2 KB and 8 KB at
//! 1000-byte packets, III-B); ns-2's RED otherwise; Adaptive RED's interval.

use crate::packet::{FlowId, Packet};
use crate::parts::fifo::{backlog_of, LimitedQueue};
use crate::parts::flow_hash::{check_bin_table, hash_seed, keyed_hash, level_key};
use crate::parts::red::{AdaptiveMaxP, Curve, MaxPBounds, RedAverage, RedCount, RedRegion};
use crate::parts::red_params::{red_params, RedBlock};
use crate::parts::red_queue::act_and_admit;
use crate::qdisc::{check, Ctx, LinkInfo, ParamError, Qdisc, QdiscParams, Verdict};
use crate::time::Dur;

red_params! {
    /// SFRED parameters: per-bin thresholds in packets, max_p per bin to start.
    pub struct SfredParams {
        // III-B: a 200-packet FIFO, and per bin the paper's per-queue RED.
        red_defaults: RedBlock::SFB_PAPER_PER_BIN.with_limit(200),
        /// Time between max_p adaptations of a bin (Adaptive RED).
        adapt_interval: Dur = Dur::from_millis(500),
        /// Hash levels (000 III-B).
        levels: u32 = 2,
        /// Bins per level (000 III-B).
        bins: u32 = 23,
        /// Highest max_p adaptation may reach (000 III-A: up to 1).
        max_p_ceiling: f64 = 1.0,
        /// GRED ramp from max_p to 1 between max_th and 2 max_th.
        gentle: bool = false,
        /// Seed of the hash keys; unset: the link's seed, derived from the run's.
        #[serde(skip_serializing_if = "Option::is_none")]
        hash_seed: Option<u64> = None,
    }
}

impl QdiscParams for SfredParams {
    type Qdisc = Sfred;
    fn validate(&self) -> Result<(), ParamError> {
        check::limit("limit", self.limit)?;
        check_bin_table(self.levels, self.bins)?;
        self.red().validate()?;
        if !(self.max_p_ceiling >= self.max_p && self.max_p_ceiling <= 1.0) {
            return Err(ParamError::new(
                "max_p_ceiling",
                self.max_p_ceiling,
                format!("must be in [max_p = {}, 1]", self.max_p),
            ));
        }
        if self.adapt_interval.is_zero() {
            return Err(ParamError::new(
                "adapt_interval",
                self.adapt_interval,
                "must be positive",
            ));
        }
        Ok(())
    }
    fn build(&self, link: &LinkInfo) -> Result<Sfred, ParamError> {
        Sfred::new(self.clone(), link)
    }
    fn property_configs() -> Vec<Self> {
        vec![SfredParams {
            limit: 10,
            levels: 3,
            bins: 4,
            min_th: 0.5,
            max_th: 2.0,
            w_q: 0.3,
            adapt_interval: Dur::from_millis(1),
            gentle: true,
            wait: false,
            ecn: true,
            ..Default::default()
        }]
    }
}

/// One virtual RED queue.
#[derive(Clone, Debug)]
struct RedBin {
    qlen: u32,
    average: RedAverage,
    adapt: AdaptiveMaxP,
    count: RedCount,
}

/// Index in the level-major bin table of `flow`'s bin at `level` (key `key`, `n`
/// bins per level).
#[inline(always)]
fn slot(level: usize, key: u64, n: u32, flow: FlowId) -> usize {
    level * n as usize + (keyed_hash(key, flow.0) % n) as usize
}

/// Orders RED outcomes by severity so the Bloom filter can take the least.
#[inline]
fn severity(r: RedRegion) -> f64 {
    match r {
        RedRegion::Below => 0.0,
        RedRegion::Early(p) => p,
        RedRegion::Forced => 2.0,
    }
}

#[derive(Debug, Clone)]
pub struct Sfred {
    params: SfredParams,
    curve: Curve,
    keys: Vec<u64>,
    /// Level-major: bin `b` of level `l` is `bins[l * n + b]`.
    bins: Vec<RedBin>,
    queue: LimitedQueue,
}

impl Sfred {
    pub fn new(params: SfredParams, link: &LinkInfo) -> Result<Self, ParamError> {
        params.validate()?;
        let bin = RedBin {
            qlen: 0,
            average: RedAverage::new(params.w_q, link, params.mean_pkt_size),
            adapt: AdaptiveMaxP::new(params.max_p, params.adapt_interval),
            count: RedCount::default(),
        };
        Ok(Sfred {
            curve: Curve::red(params.gentle),
            keys: (0..params.levels)
                .map(|l| level_key(hash_seed(params.hash_seed, link), 1, l))
                .collect(),
            bins: vec![bin; (params.levels * params.bins) as usize],
            queue: LimitedQueue::new(params.limit),
            params,
        })
    }

    /// `flow`'s bin at `level`.
    pub fn bin_of(&self, flow: FlowId, level: usize) -> usize {
        (keyed_hash(self.keys[level], flow.0) % self.params.bins) as usize
    }

    /// The current max_p of bin `bin` at `level`.
    pub fn max_p(&self, level: usize, bin: usize) -> f64 {
        self.bins[level * self.params.bins as usize + bin]
            .adapt
            .max_p
    }

    /// The average occupancy of bin `bin` at `level`, packets.
    pub fn avg(&self, level: usize, bin: usize) -> f64 {
        self.bins[level * self.params.bins as usize + bin]
            .average
            .avg
    }

    /// Packets counted over all bins (levels x queue length when consistent).
    pub fn counted_packets(&self) -> u64 {
        self.bins.iter().map(|b| b.qlen as u64).sum()
    }
}

impl Qdisc for Sfred {
    /// Every bin's idle decay follows the link's rate now.
    fn set_link_rate(&mut self, rate: crate::units::Rate) {
        for bin in &mut self.bins {
            bin.average.set_link_rate(rate);
        }
    }

    backlog_of!(queue);

    fn enqueue(&mut self, pkt: Packet, ctx: &mut Ctx<'_>) -> Verdict {
        let now = ctx.now;
        let p = &self.params;
        let bounds = MaxPBounds::Clamped {
            floor: 0.01,
            ceiling: p.max_p_ceiling,
        };
        let band = (p.min_th, p.max_th);
        let (flow, n) = (pkt.flow, p.bins);
        // Update every bin of the flow; keep the most lenient one.
        let mut best = (0, f64::INFINITY, RedRegion::Below);
        for l in 0..self.keys.len() {
            let i = slot(l, self.keys[l], n, flow);
            let bin = &mut self.bins[i];
            let avg = bin.average.update(bin.qlen as f64, now);
            bin.adapt.update(now, p.adapt_interval, avg, band, bounds);
            let region = self.curve.region(avg, p.min_th, p.max_th, bin.adapt.max_p);
            // ns-2's `qlen > 1` rule on the bin's own count of queued packets.
            let region = region.gated(p.qlen_gate, bin.qlen as u64);
            let s = severity(region);
            if s < best.1 {
                best = (i, s, region);
            }
        }
        let (i, _, region) = best;
        let count = &mut self.bins[i].count;
        let verdict = act_and_admit(count, &mut self.queue, region, pkt, (p.wait, p.ecn), ctx);
        if verdict == Verdict::Queued {
            for l in 0..self.keys.len() {
                self.bins[slot(l, self.keys[l], n, flow)].qlen += 1;
            }
        }
        verdict
    }

    fn dequeue(&mut self, ctx: &mut Ctx<'_>) -> Option<Packet> {
        let pkt = self.queue.pop_front()?;
        for l in 0..self.keys.len() {
            let i = slot(l, self.keys[l], self.params.bins, pkt.flow);
            let bin = &mut self.bins[i];
            debug_assert!(bin.qlen > 0, "bin {i} would go negative");
            bin.qlen = bin.qlen.saturating_sub(1);
            if bin.qlen == 0 {
                bin.average.set_idle(ctx.now);
            }
        }
        Some(pkt)
    }
}

impl crate::table_bytes::TableBytes for SfredParams {
    /// `levels` x `bins` bins and a key per level.
    fn table_bytes(&self, _: &LinkInfo) -> Option<crate::table_bytes::KeyedTable> {
        use crate::table_bytes::vec_bytes;
        let (l, n) = (u64::from(self.levels), u64::from(self.bins));
        Some(crate::table_bytes::KeyedTable {
            key: "bins",
            value: self.bins.to_string(),
            bytes: vec_bytes::<RedBin>(l.saturating_mul(n)).saturating_add(vec_bytes::<u64>(l)),
        })
    }
}

impl crate::early_drop::EarlyDropRule for SfredParams {
    fn early_drop(&self) -> crate::early_drop::EarlyDrop {
        use crate::early_drop::EarlyDrop;
        EarlyDrop::AboveMinTh(self.red())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{rejection, Harness};

    /// A flow sharing no bin with `heavy`.
    fn clean_of(q: &Sfred, heavy: u32) -> u32 {
        (100..)
            .find(|&f| (0..2).all(|l| q.bin_of(FlowId(f), l) != q.bin_of(FlowId(heavy), l)))
            .unwrap()
    }

    #[test]
    fn a_heavy_flow_raises_its_bins_max_p_and_a_light_flow_in_clean_bins_is_spared() {
        let params = SfredParams {
            w_q: 0.05,
            adapt_interval: Dur::from_millis(10),
            ..Default::default()
        };
        let mut h = Harness::build(params);
        let heavy = 3;
        let light = clean_of(h.q.qdisc(), heavy);
        let (mut offered, mut dropped) = ([0u64; 2], [0u64; 2]);
        // Every ms: the heavy flow offers 3 packets, the light one offers one every
        // 10 ms, and the link sends 2.
        for t in 0..20_000u32 {
            for (i, f, n) in [(0, heavy, 3), (1, light, u32::from(t % 10 == 0))] {
                for k in 0..n {
                    offered[i] += 1;
                    if h.offer(f, t * 4 + k) == Verdict::Dropped {
                        dropped[i] += 1;
                    }
                }
            }
            h.dequeue();
            h.dequeue();
            h.advance(Dur::from_millis(1));
        }
        let q = h.q.qdisc();
        for l in 0..2 {
            let hot = q.max_p(l, q.bin_of(FlowId(heavy), l));
            let clean = q.max_p(l, q.bin_of(FlowId(light), l));
            assert!(hot > 0.5, "level {l}: heavy bin max_p {hot}");
            assert!(clean < 0.1, "level {l}: clean bin max_p {clean}");
        }
        let heavy_rate = dropped[0] as f64 / offered[0] as f64;
        let light_rate = dropped[1] as f64 / offered[1] as f64;
        assert!(heavy_rate > 0.25, "heavy drop rate {heavy_rate}");
        assert!(light_rate < 0.01, "light drop rate {light_rate}");
    }

    #[test]
    fn bins_count_exactly() {
        let mut h = Harness::build(SfredParams {
            limit: 30,
            bins: 4,
            levels: 3,
            ..Default::default()
        });
        let mut r = crate::rng::stream(2, 2);
        for seq in 0..10_000 {
            if rand::Rng::gen_range(&mut r, 0..3) < 2 {
                h.offer(rand::Rng::gen_range(&mut r, 0..20), seq);
            } else {
                h.dequeue();
            }
            assert_eq!(h.q.qdisc().counted_packets(), 3 * h.q.len() as u64);
        }
        h.drain_seqs();
        assert_eq!(h.q.qdisc().counted_packets(), 0);
    }

    #[test]
    fn thresholds_out_of_order_are_rejected_by_name() {
        let e = rejection(SfredParams {
            min_th: 9.0,
            ..Default::default()
        });
        assert_eq!(e, "min_th = 9 must be below max_th = 8");
    }
}
