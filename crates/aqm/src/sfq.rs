//! SFQ: Stochastic Fair Queueing (McKenney, INFOCOM 1990), with optional RED per
//! bin (the "SFQ with RED" of the SFB paper, seed 000 section III-B, Table I and
//! Fig. 3(d)). Linux `net/sched/sch_sfq.c` is the reference for the parameter
//! names and the behaviour.
//!
//! A keyed hash of the flow id picks one of `divisor` bins; each bin is its own
//! FIFO of at most `depth` packets, and the bins share `limit` packets. Active
//! bins are served by deficit round robin: a bin that becomes active joins the end
//! of the round with `quantum` bytes of allowance, sends while it is positive, and
//! goes to the end again with `quantum` more. Backlogged bins share the link
//! equally *in bytes*, and a flow cannot take more than its bin's share.
//!
//! Choices, and where Linux differs:
//! - **One queue per bin** (Linux with `flows = divisor`), as McKenney's SFQ and
//!   the SFB paper's "46 distinct queues"; Linux maps buckets onto 128 slots.
//! - **Full buffer** (`drop = "longest"`): the arrival is queued and the tail of
//!   the longest bin (in packets, counting the arrival) dropped, as `sfq_drop`;
//!   if that is the arrival's own bin (ties too) the arrival goes (`overflow`),
//!   else the victim reports `push_out`. `drop = "tail"` drops the arrival.
//! - **Bin depth**: an arrival to a full bin is dropped (`overflow`), or with
//!   `headdrop` the bin's head is (`front_drop`), as Linux's `headdrop`.
//! - **RED per bin** (`red = true`): each bin runs RED's core on its own length
//!   (bytes / `mean_pkt_size` with `byte_mode`), before the depth check as Linux.
//!   `early` / `forced` drops (CE marks with `ecn`), with `headdrop` taken from the
//!   bin's head. Linux keeps the average in bytes, without idle decay, and resets
//!   it when a slot is freed; we keep it across idle periods with RED's idle
//!   decay, so a bin congested a moment ago is still judged so.
//! - **Perturbation**: every `perturb_period` the key changes (generation
//!   g = 1 + now / period, key `level_key(seed, g, 0)`, the seed being
//!   `hash_seed` or, unset, the link's), so the map depends on the seed and the
//!   time only. As Linux since 3.3 (`sfq_rehash`), queued packets move to their
//!   new bins, keeping each flow's order; one that finds its new bin at `depth`
//!   is dropped (`overflow`). Linux then deals every bin a fresh quantum; we keep
//!   the round: a new bin takes the turn (place, allowance) and RED state of the
//!   bin its flow left, so a re-key that merges no flows changes no departure
//!   (with fresh quanta, a key changed every packet time left the head bin the
//!   link). The clock advances on enqueue and dequeue.
//!
//! Defaults are Linux's (`tc qdisc add ... sfq`); RED's, when on, are the SFB
//! paper's per-queue 2 KB / 8 KB at its 1000-byte packets and ns-2's RED otherwise.

use crate::drop_reason::DropReason;
use crate::packet::{FlowId, Packet};
use crate::parts::fifo::PacketFifo;
use crate::parts::flow_hash::{hash_seed, keyed_hash, level_key};
use crate::parts::red::{Curve, RedAction, RedAverage, RedCount};
use crate::parts::red_params::{red_params, RedBlock};
use crate::qdisc::{check, Ctx, Limit, LinkInfo, ParamError, Qdisc, QdiscParams, Verdict};
use crate::time::Dur;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// What a full buffer gives up.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SfqDrop {
    /// The tail packet of the longest bin (Linux `sfq_drop`).
    #[default]
    Longest,
    /// The arrival.
    Tail,
}

red_params! {
    /// SFQ parameters. `limit` is the packets all bins together may hold; RED's
    /// thresholds are per bin, in packets.
    pub struct SfqParams {
        // Linux's limit of 127 packets; the SFB paper's per-queue RED.
        red_defaults: RedBlock::SFB_PAPER_PER_BIN.with_limit(127),
        /// Packets one bin may hold (Linux).
        depth: u32 = 127,
        /// Number of bins, each its own queue (Linux).
        divisor: u32 = 1024,
        /// Bytes a bin may send per round-robin turn (Linux: the MTU plus 14).
        quantum: u32 = 1514,
        /// Time between re-keys of the hash; 0 = never (Linux).
        perturb_period: Dur = Dur::ZERO,
        /// Seed of the hash keys; unset: the link's seed, derived from the run's.
        #[serde(skip_serializing_if = "Option::is_none")]
        hash_seed: Option<u64> = None,
        /// What a full buffer drops (Linux: the longest bin's tail).
        drop: SfqDrop = SfqDrop::Longest,
        /// Drop a full bin's head rather than the arrival (Linux).
        headdrop: bool = false,
        /// Run RED in every bin.
        red: bool = false,
        /// GRED ramp from max_p to 1 between max_th and 2 max_th.
        gentle: bool = false,
        /// Bins' averages track bytes / mean_pkt_size; p_b scales with size.
        byte_mode: bool = false,
    }
}

/// The most bins an SFQ may have (Linux's largest `divisor`).
const MAX_DIVISOR: u32 = 1 << 16;

impl QdiscParams for SfqParams {
    type Qdisc = Sfq;
    fn validate(&self) -> Result<(), ParamError> {
        check::limit("limit", self.limit)?;
        check::at_least("depth", self.depth, 1)?;
        check::at_least("divisor", self.divisor, 1)?;
        if self.divisor > MAX_DIVISOR {
            return Err(ParamError::new(
                "divisor",
                self.divisor,
                format!("must be at most {MAX_DIVISOR}"),
            ));
        }
        check::at_least("quantum", self.quantum, 1)?;
        self.red().validate()?;
        if self.red && !self.byte_mode && self.min_th >= self.depth as f64 {
            return Err(ParamError::new(
                "min_th",
                self.min_th,
                format!(
                    "must be below depth = {} with red on (a bin never holds more)",
                    self.depth
                ),
            ));
        }
        Ok(())
    }
    fn build(&self, link: &LinkInfo) -> Result<Sfq, ParamError> {
        Sfq::new(self.clone(), link)
    }
    fn property_configs() -> Vec<Self> {
        vec![
            SfqParams {
                limit: 10,
                depth: 4,
                divisor: 5,
                quantum: 300,
                perturb_period: Dur::from_millis(20),
                ..Default::default()
            },
            SfqParams {
                limit: 10,
                depth: 6,
                divisor: 3,
                drop: SfqDrop::Tail,
                headdrop: true,
                red: true,
                min_th: 1.0,
                max_th: 3.0,
                w_q: 0.3,
                gentle: true,
                ecn: true,
                perturb_period: Dur::from_millis(5),
                ..Default::default()
            },
            SfqParams {
                limit: 12,
                depth: 12,
                divisor: 4,
                quantum: 100,
                red: true,
                min_th: 1.0,
                max_th: 2.0,
                w_q: 0.5,
                byte_mode: true,
                mean_pkt_size: 500,
                wait: false,
                ..Default::default()
            },
        ]
    }
}

/// One bin: its queue, its DRR allowance and its RED state.
#[derive(Clone, Debug)]
struct Bin {
    queue: PacketFifo,
    /// Bytes the bin may still send in its turn (Linux `allot`).
    allot: i64,
    /// In the round-robin ring (non-empty).
    active: bool,
    average: RedAverage,
    count: RedCount,
}

#[derive(Debug, Clone)]
pub struct Sfq {
    params: SfqParams,
    bins: Vec<Bin>,
    /// Active bins in round-robin order; the front is served next.
    ring: VecDeque<u32>,
    /// The seed of the hash keys (`hash_seed`, or the link's).
    seed: u64,
    key: u64,
    generation: u32,
    len: usize,
    bytes: u64,
    curve: Curve,
    /// A bin's RED state when it starts afresh.
    fresh_average: RedAverage,
    /// Reused by `rehash`: the queued packets in round order, and each active
    /// bin's turn.
    scratch: Vec<Packet>,
    turns: Vec<Turn>,
}

/// An active bin's turn in the round when the key changes: where its packets end
/// in `Sfq::scratch`, its DRR allowance and its RED state.
#[derive(Clone, Debug)]
struct Turn {
    end: usize,
    allot: i64,
    average: RedAverage,
    count: RedCount,
}

impl Sfq {
    pub fn new(params: SfqParams, link: &LinkInfo) -> Result<Self, ParamError> {
        params.validate()?;
        let fresh_average = RedAverage::new(params.w_q, link, params.mean_pkt_size);
        let bin = Bin {
            queue: PacketFifo::new(),
            allot: 0,
            active: false,
            average: fresh_average.clone(),
            count: RedCount::default(),
        };
        Ok(Sfq {
            bins: vec![bin; params.divisor as usize],
            ring: VecDeque::new(),
            seed: hash_seed(params.hash_seed, link),
            key: level_key(hash_seed(params.hash_seed, link), 1, 0),
            generation: 1,
            len: 0,
            bytes: 0,
            curve: Curve::red(params.gentle),
            fresh_average,
            scratch: Vec::new(),
            turns: Vec::new(),
            params,
        })
    }

    /// `flow`'s bin under the current key.
    #[inline]
    pub fn bin_of(&self, flow: FlowId) -> usize {
        (keyed_hash(self.key, flow.0) % self.params.divisor) as usize
    }

    /// Packets in bin `bin`.
    pub fn bin_len(&self, bin: usize) -> usize {
        self.bins[bin].queue.len()
    }

    /// RED's average of bin `bin` (packets; 0 unless `red`).
    pub fn bin_avg(&self, bin: usize) -> f64 {
        self.bins[bin].average.avg
    }

    /// The current key generation (1 + perturbations so far).
    pub fn generation(&self) -> u32 {
        self.generation
    }

    /// Appends `pkt` to bin `b`, which joins the end of the round with a
    /// quantum to send if it was idle.
    #[inline]
    fn push(&mut self, b: usize, pkt: Packet) {
        let bin = &mut self.bins[b];
        self.len += 1;
        self.bytes += pkt.size as u64;
        bin.queue.push_back(pkt);
        if !bin.active {
            bin.active = true;
            bin.allot = self.params.quantum as i64;
            self.ring.push_back(b as u32);
        }
    }

    /// Takes bin `b` out of the round (it just emptied).
    fn deactivate(&mut self, b: usize, ctx: &Ctx<'_>) {
        let bin = &mut self.bins[b];
        bin.active = false;
        bin.average.set_idle(ctx.now);
        if let Some(i) = self.ring.iter().position(|&x| x as usize == b) {
            self.ring.remove(i);
        }
    }

    /// Drops the tail packet of bin `b` as `reason`.
    fn drop_tail_of(&mut self, b: usize, reason: DropReason, ctx: &mut Ctx<'_>) {
        let Some(pkt) = self.bins[b].queue.pop_back() else {
            debug_assert!(false, "bin {b} is empty");
            return;
        };
        self.len -= 1;
        self.bytes -= pkt.size as u64;
        if self.bins[b].queue.is_empty() {
            self.deactivate(b, ctx);
        }
        ctx.drop(pkt, reason);
    }

    /// A congestion drop for an arrival to bin `b`: the arrival (`reason`), or with
    /// `headdrop` the bin's head (`head_reason`) while the arrival takes its place.
    fn congestion_drop(
        &mut self,
        b: usize,
        pkt: Packet,
        reason: DropReason,
        head_reason: DropReason,
        ctx: &mut Ctx<'_>,
    ) -> Verdict {
        if self.params.headdrop {
            let bin = &mut self.bins[b];
            if let Some(head) = bin.queue.pop_front() {
                self.bytes = self.bytes - head.size as u64 + pkt.size as u64;
                bin.queue.push_back(pkt);
                ctx.drop(head, head_reason);
                return Verdict::Queued;
            }
        }
        ctx.drop(pkt, reason);
        Verdict::Dropped
    }

    /// Per-bin RED on an arrival to bin `b`: `Err(verdict)` when the arrival's fate
    /// is decided (dropped, or queued after a head drop), else the packet to queue
    /// (CE-marked, perhaps).
    fn red(&mut self, b: usize, mut pkt: Packet, ctx: &mut Ctx<'_>) -> Result<Packet, Verdict> {
        let p = &self.params;
        let bin = &mut self.bins[b];
        let q = if p.byte_mode {
            bin.queue.bytes() as f64 / p.mean_pkt_size as f64
        } else {
            bin.queue.len() as f64
        };
        let avg = bin.average.update(q, ctx.now);
        let mut region = self.curve.region(avg, p.min_th, p.max_th, p.max_p);
        if p.byte_mode {
            region = region.scaled(pkt.size, p.mean_pkt_size);
        }
        let queued = if p.byte_mode {
            bin.queue.bytes()
        } else {
            bin.queue.len() as u64
        };
        let region = region.gated(p.qlen_gate, queued);
        match bin.count.decide(region, p.wait, ctx) {
            RedAction::Pass => {}
            RedAction::Early => {
                let marks = p.ecn && pkt.ecn.is_capable();
                if !marks && p.headdrop && !bin.queue.is_empty() {
                    let e = DropReason::Early;
                    return Err(self.congestion_drop(b, pkt, e, e, ctx));
                }
                match ctx.mark_or_drop(pkt, p.ecn, DropReason::Early) {
                    Some(marked) => pkt = marked,
                    None => return Err(Verdict::Dropped),
                }
            }
            RedAction::Forced => {
                let f = DropReason::Forced;
                return Err(self.congestion_drop(b, pkt, f, f, ctx));
            }
        }
        Ok(pkt)
    }

    /// The longest active bin other than `b`, and its length.
    fn longest_other(&self, b: usize) -> Option<(usize, usize)> {
        self.ring
            .iter()
            .map(|&x| x as usize)
            .filter(|&x| x != b)
            .map(|x| (x, self.bins[x].queue.len()))
            .max_by_key(|&(x, n)| (n, std::cmp::Reverse(x)))
    }

    /// Re-keys the hash if a perturbation period has ended.
    fn advance_clock(&mut self, ctx: &mut Ctx<'_>) {
        let period = self.params.perturb_period.as_nanos();
        if period == 0 {
            return;
        }
        let g = (1 + ctx.now.as_nanos() / period) as u32;
        if g != self.generation {
            self.generation = g;
            self.key = level_key(self.seed, g, 0);
            self.rehash(ctx);
        }
    }

    /// Moves every queued packet to its bin under the current key (Linux
    /// `sfq_rehash`), keeping the round: the active bins are emptied in
    /// round-robin order, and a bin that receives a flow's packets takes over the
    /// turn (place in the round, DRR allowance) and the RED state of the first
    /// bin they came from. A rehash that separates and merges no flows then
    /// changes no departure; giving every bin a fresh quantum in the old order
    /// instead let the bin at the head of the round keep the link whenever the
    /// key changed every packet time or faster (issue #16).
    fn rehash(&mut self, ctx: &mut Ctx<'_>) {
        let mut moved = std::mem::take(&mut self.scratch);
        let mut turns = std::mem::take(&mut self.turns);
        while let Some(b) = self.ring.pop_front() {
            let bin = &mut self.bins[b as usize];
            while let Some(pkt) = bin.queue.pop_front() {
                moved.push(pkt);
            }
            turns.push(Turn {
                end: moved.len(),
                allot: bin.allot,
                average: bin.average.clone(),
                count: bin.count.clone(),
            });
        }
        // Idle bins hold other flows now: their RED history does not carry over.
        for bin in &mut self.bins {
            bin.active = false;
            bin.average = self.fresh_average.clone();
            bin.average.set_idle(ctx.now);
            bin.count = RedCount::default();
        }
        self.len = 0;
        self.bytes = 0;
        let mut start = 0;
        for turn in turns.drain(..) {
            for &pkt in &moved[start..turn.end] {
                let b = self.bin_of(pkt.flow);
                let bin = &mut self.bins[b];
                if bin.queue.len() >= self.params.depth as usize {
                    ctx.drop(pkt, DropReason::Overflow);
                    continue;
                }
                let fresh = !bin.active;
                if fresh {
                    bin.average = turn.average.clone();
                    bin.count = turn.count.clone();
                }
                self.push(b, pkt);
                if fresh {
                    self.bins[b].allot = turn.allot;
                }
            }
            start = turn.end;
        }
        moved.clear();
        self.scratch = moved;
        self.turns = turns;
    }
}

impl Qdisc for Sfq {
    /// Every bin's RED average (and a fresh bin's) decays while idle as fast as
    /// the link would now send.
    fn set_link_rate(&mut self, rate: crate::units::Rate) {
        self.fresh_average.set_link_rate(rate);
        for bin in &mut self.bins {
            bin.average.set_link_rate(rate);
        }
    }

    fn enqueue(&mut self, pkt: Packet, ctx: &mut Ctx<'_>) -> Verdict {
        self.advance_clock(ctx);
        let b = self.bin_of(pkt.flow);
        let pkt = if self.params.red {
            match self.red(b, pkt, ctx) {
                Ok(pkt) => pkt,
                Err(verdict) => return verdict,
            }
        } else {
            pkt
        };
        if self.bins[b].queue.len() >= self.params.depth as usize {
            let (o, f) = (DropReason::Overflow, DropReason::FrontDrop);
            return self.congestion_drop(b, pkt, o, f, ctx);
        }
        if self.len >= self.params.limit as usize {
            let victim = match self.params.drop {
                SfqDrop::Tail => None,
                SfqDrop::Longest => self
                    .longest_other(b)
                    .filter(|&(_, n)| n > self.bins[b].queue.len() + 1),
            };
            match victim {
                Some((v, _)) => self.drop_tail_of(v, DropReason::PushOut, ctx),
                None => {
                    ctx.drop(pkt, DropReason::Overflow);
                    return Verdict::Dropped;
                }
            }
        }
        self.push(b, pkt);
        Verdict::Queued
    }

    fn dequeue(&mut self, ctx: &mut Ctx<'_>) -> Option<Packet> {
        self.advance_clock(ctx);
        let quantum = self.params.quantum as i64;
        loop {
            let b = *self.ring.front()? as usize;
            let bin = &mut self.bins[b];
            if bin.allot <= 0 {
                // Turn over: the bin goes to the end of the round with more allowance.
                bin.allot += quantum;
                self.ring.pop_front();
                self.ring.push_back(b as u32);
                continue;
            }
            let Some(pkt) = bin.queue.pop_front() else {
                debug_assert!(false, "active bin {b} is empty");
                self.ring.pop_front();
                bin.active = false;
                continue;
            };
            self.len -= 1;
            self.bytes -= pkt.size as u64;
            if bin.queue.is_empty() {
                bin.active = false;
                bin.average.set_idle(ctx.now);
                self.ring.pop_front();
            } else {
                bin.allot -= pkt.size as i64;
            }
            return Some(pkt);
        }
    }

    fn len(&self) -> usize {
        self.len
    }
    fn bytes(&self) -> u64 {
        self.bytes
    }
    fn limit(&self) -> Limit {
        Limit::Packets(self.params.limit)
    }
}

impl crate::table_bytes::TableBytes for SfqParams {
    /// A bin per `divisor`.
    fn table_bytes(&self, _: &LinkInfo) -> Option<crate::table_bytes::KeyedTable> {
        Some(crate::table_bytes::KeyedTable {
            key: "divisor",
            value: self.divisor.to_string(),
            bytes: crate::table_bytes::vec_bytes::<Bin>(u64::from(self.divisor)),
        })
    }
}

impl crate::early_drop::EarlyDropRule for SfqParams {
    /// Only with per-bin RED, and not in byte mode (whose average counts mean-size
    /// packets and may exceed `limit`).
    fn early_drop(&self) -> crate::early_drop::EarlyDrop {
        use crate::early_drop::EarlyDrop;
        if !self.red || self.byte_mode {
            EarlyDrop::Unchecked
        } else {
            EarlyDrop::AboveMinTh(self.red())
        }
    }
}

#[cfg(test)]
mod tests;
