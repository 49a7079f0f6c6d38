//! SFB: Stochastic Fair BLUE (Feng, Kandlur, Saha & Shin, INFOCOM 2001; seed 000,
//! section III, Fig. 1; moving hashes in section III-D).
//!
//! A FIFO with `levels` x `bins` BLUE bins beside it (a Bloom filter). Each level
//! hashes the flow id with its own key into one of its bins. A bin counts the
//! packets of its flows in the queue and keeps a BLUE probability `pm`
//! ([`BlueProbability`], a part): an arrival that finds the bin at `bin_size`
//! raises it by `increment`; a departure that empties the bin lowers it by
//! `decrement` (at most once per `freeze_time`). The arrival is marked or dropped
//! with `pmin`, the least `pm` of its bins. A flow at `pmin = 1` is judged
//! non-responsive and rate-limited by one [`TokenBucket`] shared by all such flows
//! (Linux's `penalty_rate`; the paper's 0.16-0.21 Mbps for 1, 4 and 8 such flows
//! together, Figs. 3(a), 5, 6(b)); drops there report `RateLimit`.
//!
//! Choices where the paper leaves room (docs/qdiscs.md gives the evidence):
//! - Bins count packets, as Fig. 1 and Linux; a bin at `>= bin_size` raises pm.
//! - The arrival is dropped (`Overflow`) only when *all* its bins are full (Linux's
//!   `minqlen >= max`): Fig. 1's "any bin" caps a flow by its sharers and then
//!   never identifies it. A flow at `pmin = 1` is left to the rate limiter alone.
//! - pm falls when a departure empties a bin (the paper's text, BLUE, Apple XNU),
//!   not when an arrival finds it empty (Fig. 1, Linux): with that rule a
//!   rate-limited flow's own dropped arrivals free it from the penalty box.
//! - `freeze_time = 0` (Fig. 1 and Linux have none): 400 steps with a 100 ms
//!   freeze take 40 s, but the paper re-learns within part of a 2 s period.
//! - Moving hash: new keys and zeroed bins every `rehash_period`; queued packets
//!   are then counted in no bin. Double-buffered: during the last `warmup` of a
//!   period a second set keyed by the next keys is fed too (arrivals at
//!   `pmin = 1` raise their warm bins, "the marking probabilities of the
//!   corresponding bins in the warmup set are updated"), and becomes active at the
//!   period's end. Linux raises a warm bin only when it is full.
//! - Keys are [`level_key`]`(seed, generation, level)`, the seed being `hash_seed`
//!   or, unset, the link's (from the run's seed). `Packet.cb` holds the
//!   generations of the (at most two) sets a packet was counted in, so dequeue
//!   undoes exactly what enqueue did across rehashes and swaps.
//! - The clock (rehash, warm-up, swap) advances on enqueue and dequeue.
//!
//! Defaults are section III-B's (200 KB buffer at 1000-byte packets, 2 x 23 bins,
//! "13" per bin, 0.16 Mbps), ns-2 BLUE's steps, III-D's period, Linux's burst, and
//! a `warmup` of half a period (not in the paper; enough for a flow of >= 400
//! arrivals/s to carry pm from 0 to 1 into the next set).

use crate::drop_reason::DropReason;
use crate::packet::{FlowId, Packet};
use crate::parts::blue_probability::{check_step, BlueProbability};
use crate::parts::fifo::{backlog_of, overflow, LimitedQueue};
use crate::parts::flow_hash::{check_bin_table, hash_seed, keyed_hash, level_key};
use crate::parts::params::qdisc_params;
use crate::parts::token_bucket::TokenBucket;
use crate::qdisc::{check, Ctx, LinkInfo, ParamError, Qdisc, QdiscParams, Verdict};
use crate::time::{Dur, Time};
use crate::units::Rate;
use serde::{Deserialize, Serialize};

/// How the bins' hash functions change over time.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HashMode {
    /// One set of keys for the whole run (000 section III-A).
    #[default]
    Fixed,
    /// New keys and reset bins every `rehash_period` (000 section III-D).
    Moving,
    /// Moving, with the next set of bins warmed up during the last `warmup` of each
    /// period (000 section III-D, Fig. 6(b)).
    DoubleBuffered,
}

qdisc_params! {
    /// SFB parameters.
    pub struct SfbParams {
        /// Capacity of the shared FIFO in packets (III-B: 200 KB at 1000 B).
        limit: u32 = 200,
        /// L, the number of hash levels (III-B).
        levels: u32 = 2,
        /// N, bins per level (III-B).
        bins: u32 = 23,
        /// Packets a bin may hold (III-B's "13": 1.5 x 200 KB / 23 at 1000 B).
        bin_size: u32 = 13,
        /// BLUE step up of a bin's pm (ns-2 BLUE).
        increment: f64 = 0.0025,
        /// BLUE step down of a bin's pm (ns-2 BLUE).
        decrement: f64 = 0.00025,
        /// Least time between two changes of one bin's pm (Fig. 1 has none).
        freeze_time: Dur = Dur::ZERO,
        /// Rate allowed to all `pmin = 1` traffic together (III-B).
        rate_limit: Rate = Rate::from_kbps(160),
        /// Depth of the rate limiter's token bucket, bytes (Linux: 20 packets).
        rate_limit_burst: u64 = 20_000,
        /// Fixed, moving or double-buffered moving hash (III-A; III-D).
        hash: HashMode = HashMode::Fixed,
        /// Time between re-keys for the moving hashes (III-D).
        rehash_period: Dur = Dur::from_secs(2),
        /// How long before a re-key the next bins are fed (double-buffered).
        warmup: Dur = Dur::from_secs(1),
        /// Seed of the hash keys; unset: the link's seed, derived from the run's.
        #[serde(skip_serializing_if = "Option::is_none")]
        hash_seed: Option<u64> = None,
        /// CE-mark ECN-capable packets instead of dropping them with pmin.
        ecn: bool = false,
    }
}

impl QdiscParams for SfbParams {
    type Qdisc = Sfb;
    fn validate(&self) -> Result<(), ParamError> {
        check::limit("limit", self.limit)?;
        check_bin_table(self.levels, self.bins)?;
        check::at_least("bin_size", self.bin_size, 1)?;
        check_step("increment", self.increment)?;
        check_step("decrement", self.decrement)?;
        if self.hash != HashMode::Fixed && self.rehash_period.is_zero() {
            return Err(ParamError::new(
                "rehash_period",
                self.rehash_period,
                "must be positive with a moving hash",
            ));
        }
        // A warm-up as long as the period is legal, as in Linux: the next set
        // is then fed from the moment the previous swap happens.
        if self.hash == HashMode::DoubleBuffered && self.warmup.is_zero() {
            return Err(ParamError::new(
                "warmup",
                self.warmup,
                "must be positive with a double-buffered hash",
            ));
        }
        Ok(())
    }
    fn build(&self, link: &LinkInfo) -> Result<Sfb, ParamError> {
        Sfb::new(self.clone(), link)
    }
    fn property_configs() -> Vec<Self> {
        vec![
            SfbParams {
                limit: 10,
                levels: 3,
                bins: 4,
                bin_size: 3,
                increment: 0.2,
                decrement: 0.05,
                rate_limit: Rate::from_mbps(1),
                rate_limit_burst: 3000,
                hash: HashMode::Moving,
                rehash_period: Dur::from_millis(20),
                ecn: true,
                ..Default::default()
            },
            SfbParams {
                limit: 10,
                levels: 2,
                bins: 3,
                bin_size: 2,
                increment: 0.5,
                decrement: 0.1,
                freeze_time: Dur::from_millis(1),
                hash: HashMode::DoubleBuffered,
                rehash_period: Dur::from_millis(20),
                warmup: Dur::from_millis(5),
                ..Default::default()
            },
        ]
    }
}

/// One accounting bin: packets of its flows in the queue, and a BLUE probability.
#[derive(Copy, Clone, Debug, Default)]
struct Bin {
    qlen: u32,
    pm: BlueProbability,
}

/// A full L x N set of bins with the keys that map flows into it.
#[derive(Clone, Debug)]
struct BinSet {
    /// Key generation; 0 = inactive (counts nothing).
    generation: u32,
    keys: Vec<u64>,
    /// Level-major: bin `b` of level `l` is `bins[l * n + b]`.
    bins: Vec<Bin>,
}

impl BinSet {
    fn new(levels: u32, bins: u32) -> Self {
        BinSet {
            generation: 0,
            keys: vec![0; levels as usize],
            bins: vec![Bin::default(); (levels * bins) as usize],
        }
    }

    /// Gives the set generation `generation`'s keys and empties every bin.
    fn reset(&mut self, hash_seed: u64, generation: u32) {
        self.generation = generation;
        for (l, k) in self.keys.iter_mut().enumerate() {
            *k = level_key(hash_seed, generation, l as u32);
        }
        self.bins.fill(Bin::default());
    }

    /// Takes the set out of use: it counts nothing until the next `reset`.
    fn retire(&mut self) {
        self.generation = 0;
        self.bins.fill(Bin::default());
    }

    /// Index in `bins` of `flow`'s bin at `level`.
    #[inline]
    fn index(&self, level: usize, n: u32, flow: FlowId) -> usize {
        level * n as usize + (keyed_hash(self.keys[level], flow.0) % n) as usize
    }

    #[inline]
    fn pmin(&self, n: u32, flow: FlowId) -> f64 {
        (0..self.keys.len())
            .map(|l| self.bins[self.index(l, n, flow)].pm.p)
            .fold(1.0, f64::min)
    }

    #[inline]
    fn count(&mut self, n: u32, flow: FlowId) {
        for l in 0..self.keys.len() {
            let i = self.index(l, n, flow);
            self.bins[i].qlen += 1;
        }
    }

    /// Takes a departing packet of `flow` out of its bins; a bin whose count drops
    /// to zero lowers its pm by `decrement` (at most once per `freeze`).
    #[inline]
    fn uncount(&mut self, n: u32, flow: FlowId, decrement: f64, now: Time, freeze: Dur) {
        for l in 0..self.keys.len() {
            let i = self.index(l, n, flow);
            let bin = &mut self.bins[i];
            debug_assert!(bin.qlen > 0, "bin {i} would go negative");
            bin.qlen = bin.qlen.saturating_sub(1);
            if bin.qlen == 0 {
                bin.pm.lower(decrement, now, freeze);
            }
        }
    }
}

#[derive(Debug, Clone)]
pub struct Sfb {
    params: SfbParams,
    /// The seed of the hash keys (`hash_seed`, or the link's).
    seed: u64,
    /// Two sets: the active one and (double-buffered) the warm one.
    sets: [BinSet; 2],
    active: usize,
    warming: bool,
    /// The next key generation to hand out (never 0).
    next_generation: u32,
    next_rehash: Time,
    bucket: TokenBucket,
    queue: LimitedQueue,
}

/// `cb` layout: the generations of the sets a packet was counted in.
#[inline]
fn cb_pack(a: u32, b: u32) -> u64 {
    a as u64 | (b as u64) << 32
}

impl Sfb {
    pub fn new(params: SfbParams, link: &LinkInfo) -> Result<Self, ParamError> {
        params.validate()?;
        let (l, n) = (params.levels, params.bins);
        let mut sfb = Sfb {
            seed: hash_seed(params.hash_seed, link),
            sets: [BinSet::new(l, n), BinSet::new(l, n)],
            active: 0,
            warming: false,
            next_generation: 1,
            next_rehash: Time::ZERO + params.rehash_period,
            bucket: TokenBucket::new(params.rate_limit, params.rate_limit_burst),
            queue: LimitedQueue::new(params.limit),
            params,
        };
        sfb.reset_set(0);
        Ok(sfb)
    }

    /// Gives set `s` fresh keys and empty bins.
    fn reset_set(&mut self, s: usize) {
        let g = self.next_generation;
        self.next_generation = self.next_generation.wrapping_add(1).max(1);
        self.sets[s].reset(self.seed, g);
    }

    /// Re-keys the active bins now (and drops any warm set), as a moving hash does
    /// at the end of a period.
    pub fn rekey(&mut self) {
        self.reset_set(self.active);
        self.sets[1 - self.active].retire();
        self.warming = false;
    }

    /// Advances rehash, warm-up and swap to `now`.
    fn advance_clock(&mut self, now: Time) {
        let p = &self.params;
        if p.hash == HashMode::Fixed {
            return;
        }
        if now >= self.next_rehash {
            let period = p.rehash_period.as_nanos();
            let periods = now.saturating_since(self.next_rehash).as_nanos() / period + 1;
            if self.warming && periods == 1 {
                // The warm set becomes active; the old one is retired.
                self.sets[self.active].retire();
                self.active = 1 - self.active;
                self.warming = false;
            } else {
                // No warm set (plain moving hash), or whole periods passed without
                // traffic: start from fresh bins.
                self.rekey();
            }
            self.next_rehash += Dur::from_nanos(period.saturating_mul(periods));
        }
        let p = &self.params;
        if p.hash == HashMode::DoubleBuffered
            && !self.warming
            && now.as_nanos() + p.warmup.as_nanos() >= self.next_rehash.as_nanos()
        {
            self.reset_set(1 - self.active);
            self.warming = true;
        }
    }

    /// Fig. 1's per-level update of `flow`'s bins in set `s` on an arrival: a full
    /// bin raises its pm. (Bins are lowered when they empty, in `uncount`.) Returns
    /// whether every bin was full.
    fn update_bins(&mut self, s: usize, flow: FlowId, now: Time) -> bool {
        let p = &self.params;
        let set = &mut self.sets[s];
        let mut full = true;
        for l in 0..set.keys.len() {
            let i = set.index(l, p.bins, flow);
            let bin = &mut set.bins[i];
            if bin.qlen >= p.bin_size {
                bin.pm.raise(p.increment, now, p.freeze_time);
            } else {
                full = false;
            }
        }
        full
    }

    /// The paper's warm-up rule: a flow classified non-responsive raises its bins
    /// in the warm set.
    fn raise_warm_bins(&mut self, flow: FlowId, now: Time) {
        let p = &self.params;
        let set = &mut self.sets[1 - self.active];
        for l in 0..set.keys.len() {
            let i = set.index(l, p.bins, flow);
            set.bins[i].pm.raise(p.increment, now, p.freeze_time);
        }
    }

    /// pmin of `flow` in the active bins.
    pub fn pmin(&self, flow: FlowId) -> f64 {
        self.sets[self.active].pmin(self.params.bins, flow)
    }

    /// Is `flow` in the penalty box: are all its active bins at pm = 1?
    pub fn is_rate_limited(&self, flow: FlowId) -> bool {
        self.pmin(flow) >= 1.0
    }

    /// The active bins at pm = 1 ("polluted"), per level.
    pub fn polluted_bins(&self) -> Vec<Vec<usize>> {
        let set = &self.sets[self.active];
        let n = self.params.bins as usize;
        set.bins
            .chunks(n)
            .map(|level| {
                level
                    .iter()
                    .enumerate()
                    .filter(|(_, b)| b.pm.p >= 1.0)
                    .map(|(i, _)| i)
                    .collect()
            })
            .collect()
    }

    /// `flow`'s bin at `level` in the active set.
    pub fn bin_of(&self, flow: FlowId, level: usize) -> usize {
        let set = &self.sets[self.active];
        set.index(level, self.params.bins, flow) - level * self.params.bins as usize
    }

    /// pm of bin `bin` of `level` in the active set.
    pub fn pm(&self, level: usize, bin: usize) -> f64 {
        self.sets[self.active].bins[level * self.params.bins as usize + bin]
            .pm
            .p
    }

    /// Packets counted in each set's bins: (active, warm), summed over all bins.
    pub fn counted_packets(&self) -> (u64, u64) {
        let sum = |s: &BinSet| s.bins.iter().map(|b| b.qlen as u64).sum();
        (
            sum(&self.sets[self.active]),
            sum(&self.sets[1 - self.active]),
        )
    }

    /// Is the warm set being fed (double-buffered hash, last `warmup` of a period)?
    pub fn is_warming(&self) -> bool {
        self.warming
    }
}

impl Qdisc for Sfb {
    backlog_of!(queue);

    fn enqueue(&mut self, mut pkt: Packet, ctx: &mut Ctx<'_>) -> Verdict {
        let now = ctx.now;
        self.advance_clock(now);
        let flow = pkt.flow;
        let n = self.params.bins;
        let bin_full = self.update_bins(self.active, flow, now);
        let pmin = self.pmin(flow);
        if self.warming {
            if pmin >= 1.0 {
                self.raise_warm_bins(flow, now);
            } else {
                self.update_bins(1 - self.active, flow, now);
            }
        }
        if pmin >= 1.0 {
            // The penalty box: the rate limiter, not the bins, decides.
            if !self.bucket.take(pkt.size, now) {
                ctx.drop(pkt, DropReason::RateLimit);
                return Verdict::Dropped;
            }
        } else if bin_full {
            ctx.drop(pkt, DropReason::Overflow);
            return Verdict::Dropped;
        } else if pmin > 0.0 && ctx.uniform() < pmin {
            match ctx.mark_or_drop(pkt, self.params.ecn, DropReason::Early) {
                Some(marked) => pkt = marked,
                None => return Verdict::Dropped,
            }
        }
        if self.queue.is_full() {
            return overflow(pkt, ctx);
        }
        let active = self.active;
        self.sets[active].count(n, flow);
        let mut warm_generation = 0;
        if self.warming {
            self.sets[1 - active].count(n, flow);
            warm_generation = self.sets[1 - active].generation;
        }
        pkt.cb = cb_pack(self.sets[active].generation, warm_generation);
        self.queue.push_back(pkt);
        Verdict::Queued
    }

    fn dequeue(&mut self, ctx: &mut Ctx<'_>) -> Option<Packet> {
        self.advance_clock(ctx.now);
        let pkt = self.queue.pop_front()?;
        let (a, b) = (pkt.cb as u32, (pkt.cb >> 32) as u32);
        let p = &self.params;
        for set in &mut self.sets {
            let g = set.generation;
            if g != 0 && (g == a || g == b) {
                set.uncount(p.bins, pkt.flow, p.decrement, ctx.now, p.freeze_time);
            }
        }
        Some(pkt)
    }
}

impl crate::table_bytes::TableBytes for SfbParams {
    /// Two sets (the current and the warming one) of `levels` x `bins` bins and
    /// a key per level.
    fn table_bytes(&self, _: &LinkInfo) -> Option<crate::table_bytes::KeyedTable> {
        use crate::table_bytes::vec_bytes;
        let (l, n) = (u64::from(self.levels), u64::from(self.bins));
        let set = vec_bytes::<Bin>(l.saturating_mul(n)).saturating_add(vec_bytes::<u64>(l));
        Some(crate::table_bytes::KeyedTable {
            key: "bins",
            value: self.bins.to_string(),
            bytes: set.saturating_mul(2),
        })
    }
}

#[cfg(test)]
mod tests;
