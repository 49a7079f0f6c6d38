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
//! of its bins' RED probabilities ([`red_region`]), spaced by that bin's count
//! ([`spaced_probability`]). A heavy flow fills all its bins, pushing their
//! averages and max_p up; a light flow with one clean bin is judged by that bin.
//!
//! Choices: thresholds are per bin, in packets. Adaptive RED bounds max_p to
//! [0.01, 0.5]; the paper says SFRED needs max_p up to 1 under moderate congestion,
//! so the ceiling is a parameter, `max_p_ceiling`, default 1. Keys are fixed
//! (`hash_seed`, as SFB's `level_key`), so dequeue recomputes a packet's bins from
//! its flow id exactly; `cb` is not needed. Early drops become CE marks with `ecn`;
//! forced drops (avg above max_th in the most lenient bin) stay drops.
//!
//! Defaults: `limit = 200`, `levels = 2`, `bins = 23` (the SFB setup of 000 section
//! III-B, which SFRED was compared in); `min_th = 2`, `max_th = 8` packets per bin
//! (the per-queue RED thresholds of the paper's SFQ+RED comparison, 2 KB and 8 KB at
//! 1000-byte packets, III-B); `max_p = 0.1`, `w_q = 0.002`, `wait = true` (ns-2
//! RED); `adapt_interval = 500ms` (Adaptive RED); `mean_pkt_size = 1000` (the
//! paper's packets).

use crate::drop_reason::DropReason;
use crate::fifo::PacketFifo;
use crate::packet::{FlowId, Packet};
use crate::qdisc::{check, Ctx, Limit, LinkInfo, ParamError, Qdisc, Verdict};
use crate::red::{red_region, spaced_probability, RedAverage, RedRegion};
use crate::rng::keyed_hash;
use crate::sfb::level_key;
use crate::time::{Dur, Time};
use serde::{Deserialize, Serialize};

/// SFRED parameters. Thresholds are per bin, in packets.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SfredParams {
    /// Capacity of the shared FIFO in packets. Default 200 (000 III-B).
    pub limit: u32,
    /// Hash levels. Default 2 (000 III-B).
    pub levels: u32,
    /// Bins per level. Default 23 (000 III-B).
    pub bins: u32,
    /// Per-bin RED min_th, packets. Default 2 (000 III-B, SFQ+RED: 2 KB).
    pub min_th: f64,
    /// Per-bin RED max_th, packets. Default 8 (000 III-B, SFQ+RED: 8 KB).
    pub max_th: f64,
    /// Starting max_p of every bin. Default 0.1 (ns-2 RED).
    pub max_p: f64,
    /// Highest max_p adaptation may reach. Default 1 (000 III-A).
    pub max_p_ceiling: f64,
    /// EWMA weight of each bin's average. Default 0.002 (ns-2 RED).
    pub w_q: f64,
    /// Time between max_p adaptations of a bin. Default 500ms (Adaptive RED).
    pub adapt_interval: Dur,
    /// GRED ramp from max_p to 1 between max_th and 2 max_th.
    pub gentle: bool,
    /// ns-2's `wait` spacing of drops. Default true.
    pub wait: bool,
    /// Packet size for the idle decay of bin averages, bytes. Default 1000.
    pub mean_pkt_size: u32,
    /// Seed of the hash keys.
    pub hash_seed: u64,
    /// CE-mark ECN-capable packets instead of dropping them early.
    pub ecn: bool,
}

impl Default for SfredParams {
    fn default() -> Self {
        SfredParams {
            limit: 200,
            levels: 2,
            bins: 23,
            min_th: 2.0,
            max_th: 8.0,
            max_p: 0.1,
            max_p_ceiling: 1.0,
            w_q: 0.002,
            adapt_interval: Dur::from_millis(500),
            gentle: false,
            wait: true,
            mean_pkt_size: 1000,
            hash_seed: 0,
            ecn: false,
        }
    }
}

impl SfredParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        check::at_least("limit", self.limit, 1)?;
        check::at_least("levels", self.levels, 1)?;
        check::at_least("bins", self.bins, 1)?;
        if self.levels.saturating_mul(self.bins) > 1 << 20 {
            return Err(ParamError::new(
                "bins",
                self.bins,
                format!("times levels = {} must be at most {}", self.levels, 1 << 20),
            ));
        }
        check::at_least("min_th", self.min_th, 0.0)?;
        check::below("min_th", self.min_th, "max_th", self.max_th)?;
        if !(self.max_p > 0.0 && self.max_p <= 1.0) {
            return Err(ParamError::new("max_p", self.max_p, "must be in (0, 1]"));
        }
        if !(self.max_p_ceiling >= self.max_p && self.max_p_ceiling <= 1.0) {
            return Err(ParamError::new(
                "max_p_ceiling",
                self.max_p_ceiling,
                format!("must be in [max_p = {}, 1]", self.max_p),
            ));
        }
        if !(self.w_q > 0.0 && self.w_q <= 1.0) {
            return Err(ParamError::new("w_q", self.w_q, "must be in (0, 1]"));
        }
        if self.adapt_interval.is_zero() {
            return Err(ParamError::new(
                "adapt_interval",
                self.adapt_interval,
                "must be positive",
            ));
        }
        check::at_least("mean_pkt_size", self.mean_pkt_size, 1)
    }
}

/// One virtual RED queue.
#[derive(Clone, Debug)]
struct RedBin {
    qlen: u32,
    average: RedAverage,
    max_p: f64,
    next_adapt: Time,
    /// Packets since this bin last caused a drop; -1 below min_th.
    count: i64,
}

/// Adaptive RED's max_p step (Floyd, Gummadi & Shenker 2001, Fig. 5), with a
/// configurable ceiling instead of 0.5.
#[inline]
fn adapt_max_p(max_p: &mut f64, avg: f64, min_th: f64, max_th: f64, ceiling: f64) {
    let band = max_th - min_th;
    if avg > min_th + 0.6 * band && *max_p < ceiling {
        *max_p = (*max_p + (*max_p / 4.0).min(0.01)).min(ceiling);
    } else if avg < min_th + 0.4 * band && *max_p > 0.01 {
        *max_p = (*max_p * 0.9).max(0.01);
    }
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
    keys: Vec<u64>,
    /// Level-major: bin `b` of level `l` is `bins[l * n + b]`.
    bins: Vec<RedBin>,
    queue: PacketFifo,
}

impl Sfred {
    pub fn new(params: SfredParams, link: &LinkInfo) -> Result<Self, ParamError> {
        params.validate()?;
        let bin = RedBin {
            qlen: 0,
            average: RedAverage::new(params.w_q, link, params.mean_pkt_size),
            max_p: params.max_p,
            next_adapt: Time::ZERO + params.adapt_interval,
            count: -1,
        };
        Ok(Sfred {
            keys: (0..params.levels)
                .map(|l| level_key(params.hash_seed, 1, l))
                .collect(),
            bins: vec![bin; (params.levels * params.bins) as usize],
            queue: PacketFifo::with_capacity(params.limit.min(4096) as usize),
            params,
        })
    }

    #[inline]
    fn index(&self, level: usize, flow: FlowId) -> usize {
        let n = self.params.bins;
        level * n as usize + (keyed_hash(self.keys[level], flow.0) % n) as usize
    }

    /// `flow`'s bin at `level`.
    pub fn bin_of(&self, flow: FlowId, level: usize) -> usize {
        self.index(level, flow) - level * self.params.bins as usize
    }

    /// The current max_p of bin `bin` at `level`.
    pub fn max_p(&self, level: usize, bin: usize) -> f64 {
        self.bins[level * self.params.bins as usize + bin].max_p
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
    fn enqueue(&mut self, mut pkt: Packet, ctx: &mut Ctx<'_>) -> Verdict {
        let now = ctx.now;
        let p = &self.params;
        // Update every bin of the flow; keep the most lenient one.
        let mut best = (usize::MAX, f64::INFINITY, RedRegion::Below);
        for l in 0..self.keys.len() {
            let i = self.index(l, pkt.flow);
            let bin = &mut self.bins[i];
            let avg = bin.average.update(bin.qlen as f64, now);
            if now >= bin.next_adapt {
                bin.next_adapt = now + p.adapt_interval;
                adapt_max_p(&mut bin.max_p, avg, p.min_th, p.max_th, p.max_p_ceiling);
            }
            let region = red_region(avg, p.min_th, p.max_th, bin.max_p, p.gentle);
            let s = severity(region);
            if s < best.1 {
                best = (i, s, region);
            }
        }
        let (i, _, region) = best;
        match region {
            RedRegion::Below => self.bins[i].count = -1,
            RedRegion::Early(p_b) => {
                let bin = &mut self.bins[i];
                bin.count += 1;
                if ctx.uniform() < spaced_probability(p_b, bin.count, p.wait) {
                    bin.count = 0;
                    match ctx.mark_or_drop(pkt, p.ecn, DropReason::Early) {
                        Some(marked) => pkt = marked,
                        None => return Verdict::Dropped,
                    }
                }
            }
            RedRegion::Forced => {
                self.bins[i].count = 0;
                ctx.drop(pkt, DropReason::Forced);
                return Verdict::Dropped;
            }
        }
        if self.queue.len() >= p.limit as usize {
            ctx.drop(pkt, DropReason::Overflow);
            return Verdict::Dropped;
        }
        for l in 0..self.keys.len() {
            let i = self.index(l, pkt.flow);
            self.bins[i].qlen += 1;
        }
        self.queue.push_back(pkt);
        Verdict::Queued
    }

    fn dequeue(&mut self, ctx: &mut Ctx<'_>) -> Option<Packet> {
        let pkt = self.queue.pop_front()?;
        for l in 0..self.keys.len() {
            let i = self.index(l, pkt.flow);
            let bin = &mut self.bins[i];
            debug_assert!(bin.qlen > 0, "bin {i} would go negative");
            bin.qlen = bin.qlen.saturating_sub(1);
            if bin.qlen == 0 {
                bin.average.set_idle(ctx.now);
            }
        }
        Some(pkt)
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

    fn sfred(params: SfredParams) -> Harness<Sfred> {
        Harness::new(Sfred::new(params, &LINK).unwrap())
    }

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
        let mut h = sfred(params);
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
        let mut h = sfred(SfredParams {
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
        let e = Sfred::new(
            SfredParams {
                min_th: 9.0,
                ..Default::default()
            },
            &LINK,
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "min_th = 9 must be below max_th = 8");
    }
}
