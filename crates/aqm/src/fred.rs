//! FRED: Flow Random Early Drop (Lin & Morris, *Dynamics of Random Early
//! Detection*, SIGCOMM 1997), the classic fair-RED baseline.
//!
//! A FIFO with RED's average queue `avg` and thresholds, plus per-active-flow
//! accounting: for each flow with packets queued, its queue count `qlen_i` and
//! `strike_i`, the times it tried to exceed its share. From them FRED derives
//! `avgcq = avg / Nactive`, the average per-flow queue. On each arrival of flow i
//! (the paper's pseudocode, blocks in order):
//!
//! 1. `maxq = min_th`, or 2 when `avg >= max_th` (close to full).
//! 2. *Non-adaptive flows*: if `qlen_i >= maxq`, or `avg >= max_th` and `qlen_i >
//!    2 avgcq`, or `qlen_i >= avgcq` and `strike_i > 1`, the arrival is dropped
//!    and `strike_i` grows (reason `unresponsive`). A flow that keeps pushing past
//!    its share is thus held to the average share from then on.
//! 3. *Random drop mode* (`min_th <= avg < max_th`): `count` grows; only a flow
//!    holding at least `max(minq, avgcq)` packets (a "robust" flow) is dropped,
//!    with RED's probability `p_a = p_b / (1 - count p_b)`, `p_b = max_p (avg -
//!    min_th) / (max_th - min_th)` (reason `early`; a CE mark with `ecn`). Flows
//!    below `minq` packets ("fragile" ones) are never dropped early.
//! 4. Below `min_th` nothing is dropped (`count = -1`); at or above `max_th` every
//!    arrival is (drop-tail mode, reason `forced`).
//!
//! `avg` is RED's EWMA with weight `w_q`, sampled at every *departure* and, on an
//! arrival to an empty queue, decayed for the idle time as if `m = idle time x
//! link rate / (8 mean_pkt_size)` packets had left (the paper computes avg at
//! departures as well as arrivals so that it follows the queue; the arrival-time
//! computation only applies the idle correction). Flow state exists only while a
//! flow has packets queued: it is made at the flow's first queued packet and
//! deleted, strikes and all, when its last one leaves.
//!
//! Sources (the paper's pseudocode, checked against J-Sim's `FRED.java`), where
//! they differ, and the defaults: `docs/qdiscs.md`.

use crate::drop_reason::DropReason;
use crate::packet::{FlowId, Packet};
use crate::parts::fifo::PacketFifo;
use crate::parts::red_params::RedBlock;
use crate::qdisc::{check, Ctx, Limit, LinkInfo, ParamError, Qdisc, QdiscParams, Verdict};
use crate::rng::mix64;
use crate::time::Time;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// FRED parameters. Thresholds are in packets.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FredParams {
    /// Capacity in packets. Default 1000 (as `red`).
    pub limit: u32,
    /// RED's lower threshold, and each flow's buffer cap below `max_th`.
    /// Default 5 (ns-2 RED).
    pub min_th: f64,
    /// RED's upper threshold. Default 15 (ns-2 RED).
    pub max_th: f64,
    /// RED's drop probability at `max_th`. Default 0.02 (the paper).
    pub max_p: f64,
    /// EWMA weight of the average queue. Default 0.002.
    pub w_q: f64,
    /// Flows holding fewer packets are never dropped early. Default 2 (the paper,
    /// for small buffers; 4 for large ones).
    pub minq: u32,
    /// Packet size for the idle-time decay, bytes. Default 500 (ns-2 RED).
    pub mean_pkt_size: u32,
    /// CE-mark ECN-capable packets instead of dropping them early.
    pub ecn: bool,
}

impl Default for FredParams {
    fn default() -> Self {
        FredParams {
            limit: 1000,
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.02,
            w_q: 0.002,
            minq: 2,
            mean_pkt_size: 500,
            ecn: false,
        }
    }
}

impl QdiscParams for FredParams {
    type Qdisc = Fred;
    fn validate(&self) -> Result<(), ParamError> {
        RedBlock {
            limit: self.limit,
            min_th: self.min_th,
            max_th: self.max_th,
            max_p: self.max_p,
            w_q: self.w_q,
            mean_pkt_size: self.mean_pkt_size,
            wait: true,
            ecn: self.ecn,
            qlen_gate: false,
        }
        .validate()?;
        // maxq = min_th: below one packet no flow could queue anything.
        check::at_least("min_th", self.min_th, 1.0)
    }
    fn build(&self, link: &LinkInfo) -> Result<Fred, ParamError> {
        Fred::new(self.clone(), link)
    }
    fn property_configs() -> Vec<Self> {
        vec![FredParams {
            limit: 10,
            min_th: 2.0,
            max_th: 6.0,
            w_q: 0.3,
            minq: 1,
            max_p: 0.5,
            ecn: true,
            ..Default::default()
        }]
    }
}

/// RED's average queue: an EWMA sampled at departures, decayed over idle time.
/// One small type to repoint to the shared RED part.
#[derive(Debug, Clone)]
struct Average {
    avg: f64,
    w_q: f64,
    /// Mean-sized packets the link sends per second: how fast an idle queue decays.
    packets_per_sec: f64,
    /// When the queue went empty, until the next arrival.
    idle_since: Option<Time>,
}

impl Average {
    fn new(w_q: f64, link: &LinkInfo, mean_pkt_size: u32) -> Self {
        Average {
            avg: 0.0,
            w_q,
            packets_per_sec: link.rate.as_f64() / (8.0 * mean_pkt_size as f64),
            idle_since: Some(Time::ZERO),
        }
    }

    /// Folds in the queue length `q`.
    fn sample(&mut self, q: usize) {
        self.avg = (1.0 - self.w_q) * self.avg + self.w_q * q as f64;
    }

    /// An arrival to an empty queue: decay for the time it sat idle.
    fn end_idle(&mut self, now: Time) {
        if let Some(since) = self.idle_since.take() {
            let m = now.saturating_since(since).as_secs_f64() * self.packets_per_sec;
            self.avg *= (1.0 - self.w_q).powf(m);
        }
    }

    fn start_idle(&mut self, now: Time) {
        self.idle_since = Some(now);
    }

    fn start_idle_if_busy(&mut self, now: Time) {
        if self.idle_since.is_none() {
            self.idle_since = Some(now);
        }
    }
}

/// A flow with packets queued (the paper's per-flow variables).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct FlowState {
    /// Packets of the flow in the queue.
    pub qlen: u32,
    /// Times the flow was dropped for exceeding its share.
    pub strike: u32,
}

/// Hashes a flow id with SplitMix64: deterministic (no random keys; the table is
/// only looked up, never iterated) and fast.
#[derive(Default)]
struct FlowIdHasher(u64);

impl Hasher for FlowIdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = mix64(self.0 ^ b as u64);
        }
    }
    fn write_u32(&mut self, x: u32) {
        self.0 = mix64(self.0 ^ x as u64);
    }
}

type FlowTable = HashMap<FlowId, FlowState, BuildHasherDefault<FlowIdHasher>>;

/// RED's spacing of early drops: `p_b / (1 - count p_b)`, certain once
/// `count p_b >= 1`.
fn spaced(p_b: f64, count: i64) -> f64 {
    let cp = count as f64 * p_b;
    if cp < 1.0 {
        p_b / (1.0 - cp)
    } else {
        1.0
    }
}

#[derive(Debug, Clone)]
pub struct Fred {
    params: FredParams,
    queue: PacketFifo,
    average: Average,
    /// Arrivals since the last early drop; -1 below min_th.
    count: i64,
    flows: FlowTable,
    /// avg / Nactive, held at 1 or more.
    avgcq: f64,
}

impl Fred {
    pub fn new(params: FredParams, link: &LinkInfo) -> Result<Self, ParamError> {
        params.validate()?;
        Ok(Fred {
            average: Average::new(params.w_q, link, params.mean_pkt_size),
            queue: PacketFifo::new(),
            count: -1,
            flows: FlowTable::default(),
            avgcq: 1.0,
            params,
        })
    }

    /// RED's average queue, packets.
    pub fn avg(&self) -> f64 {
        self.average.avg
    }

    /// The average per-flow queue, packets.
    pub fn avgcq(&self) -> f64 {
        self.avgcq
    }

    /// Flows with packets queued (the paper's Nactive).
    pub fn active_flows(&self) -> usize {
        self.flows.len()
    }

    /// The state of `flow`, if it has packets queued.
    pub fn flow(&self, flow: FlowId) -> Option<FlowState> {
        self.flows.get(&flow).copied()
    }

    fn update_avgcq(&mut self) {
        let n = self.flows.len();
        let avgcq = if n > 0 {
            self.average.avg / n as f64
        } else {
            self.average.avg
        };
        self.avgcq = avgcq.max(1.0);
    }
}

impl Qdisc for Fred {
    fn enqueue(&mut self, pkt: Packet, ctx: &mut Ctx<'_>) -> Verdict {
        let p = &self.params;
        if self.queue.is_empty() {
            self.average.end_idle(ctx.now);
        }
        let avg = self.average.avg;
        let state = self.flows.get(&pkt.flow).copied().unwrap_or_default();
        let qlen = state.qlen as f64;
        // Close to full: every flow is held to two packets.
        let maxq = if avg >= p.max_th { 2.0 } else { p.min_th };
        // Identify and manage non-adaptive flows.
        if qlen >= maxq
            || (avg >= p.max_th && qlen > 2.0 * self.avgcq)
            || (qlen >= self.avgcq && state.strike > 1)
        {
            if let Some(s) = self.flows.get_mut(&pkt.flow) {
                s.strike += 1;
            }
            ctx.drop(pkt, DropReason::Unresponsive);
            return Verdict::Dropped;
        }
        let mut pkt = pkt;
        if avg >= p.min_th && avg < p.max_th {
            // Random drop mode, for robust flows only.
            self.count += 1;
            if qlen >= (p.minq as f64).max(self.avgcq) {
                let p_b = p.max_p * (avg - p.min_th) / (p.max_th - p.min_th);
                if ctx.uniform() < spaced(p_b, self.count) {
                    self.count = 0;
                    match ctx.mark_or_drop(pkt, p.ecn, DropReason::Early) {
                        Some(marked) => pkt = marked,
                        None => return Verdict::Dropped,
                    }
                }
            }
        } else if avg < p.min_th {
            self.count = -1;
        } else {
            // Drop-tail mode.
            self.count = 0;
            ctx.drop(pkt, DropReason::Forced);
            return Verdict::Dropped;
        }
        if self.queue.len() >= p.limit as usize {
            ctx.drop(pkt, DropReason::Overflow);
            return Verdict::Dropped;
        }
        self.flows.entry(pkt.flow).or_default().qlen += 1;
        self.update_avgcq();
        self.queue.push_back(pkt);
        Verdict::Queued
    }

    fn dequeue(&mut self, ctx: &mut Ctx<'_>) -> Option<Packet> {
        let Some(pkt) = self.queue.pop_front() else {
            // Nothing to send: the queue is idle from now (again, if an arrival it
            // dropped ended the last idle period).
            self.average.start_idle_if_busy(ctx.now);
            return None;
        };
        if self.queue.is_empty() {
            self.average.start_idle(ctx.now);
        } else {
            self.average.sample(self.queue.len());
        }
        if let Some(s) = self.flows.get_mut(&pkt.flow) {
            s.qlen -= 1;
            if s.qlen == 0 {
                // The flow has nothing queued: forget it, strikes included.
                self.flows.remove(&pkt.flow);
            }
        } else {
            debug_assert!(false, "flow {:?} dequeued without state", pkt.flow);
        }
        self.update_avgcq();
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

impl crate::table_bytes::TableBytes for FredParams {
    /// A flow's state while it has packets queued: at most `limit` flows.
    fn table_bytes(&self, _: &LinkInfo) -> Option<crate::table_bytes::KeyedTable> {
        Some(crate::table_bytes::KeyedTable {
            key: "limit",
            value: self.limit.to_string(),
            bytes: crate::table_bytes::map_bytes::<FlowId, FlowState>(u64::from(self.limit)),
        })
    }
}

#[cfg(test)]
mod tests;
