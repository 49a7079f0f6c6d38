//! FQ: Linux's per-flow fair queueing and pacing qdisc, `net/sched/sch_fq.c`
//! (Dumazet, 2013) with `tc-fq(8)`, in its classic single-band form. The kind
//! is `fq`; the file is `linux_fq.rs` because `fq/` holds the fair-queue family
//! of `wfq` and `drr`.
//!
//! Every flow has its own queue (Linux keys flows by socket, exactly; here by
//! flow id, so there are no collisions and `buckets` has nothing to size). A
//! flow that becomes active joins the *new* list, with `initial_quantum` bytes
//! of credit the first time and at least `quantum` if it rested longer than
//! `refill_delay`; the scheduler serves the head of the new list, else of the
//! old list; a flow whose credit is spent gets `quantum` more and goes to the
//! tail of the old list; a flow found empty leaves (from the new list it passes
//! through the old list first if that is not empty). An arrival beyond `limit`
//! packets, or beyond `flow_limit` packets of its flow, is dropped (`overflow`).
//!
//! With `maxrate`, each flow is paced: once its credit is spent, its next packet
//! waits `max(packet, quantum) / maxrate` (less the lateness of this dequeue, at
//! most half) and the flow sits in a throttled set ordered by that time; below
//! `low_rate_threshold` every packet waits. FQ is then not work-conserving:
//! `dequeue` returns nothing while every backlogged flow is throttled, and
//! [`Qdisc::wake_at`] says when the first is due (Linux arms a watchdog).
//! `ce_threshold` CE-marks ECN-capable packets that leave later than that after
//! their due time.
//!
//! Differences from Linux (no socket pacing rates or departure timestamps, so
//! no `horizon`; one band; no garbage collection of idle flows) and the
//! defaults' sources: `docs/qdiscs.md`, "FQ".

use crate::drop_reason::DropReason;
use crate::packet::{Ecn, Packet};
use crate::parts::fifo::PacketFifo;
use crate::parts::flow_hash::FlowMap;
use crate::parts::params::qdisc_params;
use crate::qdisc::{check, Ctx, Limit, LinkInfo, ParamError, Qdisc, QdiscParams, Verdict};
use crate::time::{Dur, Time};
use crate::units::Rate;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

qdisc_params! {
    /// FQ parameters (tc-fq(8); defaults Linux's).
    pub struct FqParams {
        /// Packets all flows together may hold. Default 10000 (Linux).
        limit: u32 = 10000,
        /// Packets one flow may hold. Default 100 (Linux).
        flow_limit: u32 = 100,
        /// Bytes of credit per round. Default 3028 (Linux: 2 x psched_mtu).
        quantum: u32 = 3028,
        /// Credit of a flow seen for the first time. Default 15140 (10 x 1514).
        initial_quantum: u32 = 15140,
        /// Each flow's pacing rate; none for unpaced (Linux's default).
        #[serde(skip_serializing_if = "Option::is_none")]
        maxrate: Option<Rate> = None,
        /// Pace at all (tc's `pacing` / `nopacing`). Default true.
        pacing: bool = true,
        /// A flow idle this long gets at least `quantum` back. Default 40 ms.
        refill_delay: Dur = Dur::from_millis(40),
        /// At or below this rate every packet is paced. Default 550 kbit/s.
        low_rate_threshold: Rate = Rate::from_kbps(550),
        /// CE-mark ECN-capable packets leaving this late. Default off.
        #[serde(skip_serializing_if = "Option::is_none")]
        ce_threshold: Option<Dur> = None,
    }
}

impl QdiscParams for FqParams {
    type Qdisc = Fq;
    fn validate(&self) -> Result<(), ParamError> {
        check::limit("limit", self.limit)?;
        check::at_least("flow_limit", self.flow_limit, 1)?;
        check::at_least("quantum", self.quantum, 1)?;
        if self.quantum > 1 << 20 {
            return Err(ParamError::new(
                "quantum",
                self.quantum,
                "must be at most 1048576 (Linux)",
            ));
        }
        if let Some(r) = self.maxrate {
            check::at_least("maxrate", r.bps(), 8)?;
        }
        Ok(())
    }
    fn build(&self, _link: &LinkInfo) -> Result<Fq, ParamError> {
        Fq::new(self.clone())
    }
    fn property_configs() -> Vec<Self> {
        vec![
            FqParams {
                limit: 12,
                flow_limit: 4,
                quantum: 600,
                initial_quantum: 1000,
                maxrate: Some(Rate::from_mbps(2)),
                ce_threshold: Some(Dur::from_micros(500)),
                ..Default::default()
            },
            FqParams {
                limit: 10,
                flow_limit: 6,
                quantum: 300,
                maxrate: Some(Rate::from_kbps(400)),
                refill_delay: Dur::ZERO,
                ..Default::default()
            },
            FqParams {
                limit: 8,
                maxrate: Some(Rate::from_kbps(100)),
                pacing: false,
                ..Default::default()
            },
        ]
    }
}

/// Where a flow is (Linux: detached, on a list, or in the throttled tree).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum State {
    Detached,
    Listed,
    Throttled,
}

#[derive(Clone, Debug)]
struct Flow {
    queue: PacketFifo,
    credit: i64,
    /// When it was last detached.
    age: Time,
    /// When its next packet may leave (0: never paced yet).
    next: u64,
    state: State,
}

#[derive(Debug, Clone)]
pub struct Fq {
    params: FqParams,
    /// Bytes per second of `maxrate` when pacing applies.
    rate: Option<u64>,
    flows: Vec<Flow>,
    index: FlowMap<u32>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    throttled: BinaryHeap<Reverse<(u64, u32)>>,
    len: usize,
    bytes: u64,
    wake: Option<Time>,
    flow_limit_drops: u64,
    throttle_count: u64,
}

impl Fq {
    pub fn new(params: FqParams) -> Result<Self, ParamError> {
        params.validate()?;
        Ok(Fq {
            rate: params
                .maxrate
                .filter(|_| params.pacing)
                .map(|r| (r.bps() / 8).max(1)),
            flows: Vec::new(),
            index: FlowMap::default(),
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            throttled: BinaryHeap::new(),
            len: 0,
            bytes: 0,
            wake: None,
            flow_limit_drops: 0,
            throttle_count: 0,
            params,
        })
    }

    /// Arrivals dropped by `flow_limit` (Linux's `flows_plimit`).
    pub fn flow_limit_drops(&self) -> u64 {
        self.flow_limit_drops
    }

    /// Times a flow was throttled by pacing (Linux's `throttled`).
    pub fn throttle_count(&self) -> u64 {
        self.throttle_count
    }

    /// Flows released from the throttled set whose time has come go to the
    /// tail of the old list (`fq_check_throttled`).
    fn release_throttled(&mut self, now: u64) {
        while let Some(&Reverse((at, f))) = self.throttled.peek() {
            if at > now {
                break;
            }
            self.throttled.pop();
            self.flows[f as usize].state = State::Listed;
            self.old_flows.push_back(f);
        }
    }

    /// Pacing after `f` sent a packet of `len` bytes at `now` (sch_fq's tail of
    /// `fq_dequeue`).
    fn pace(&mut self, f: usize, len: u32, now: u64) {
        let Some(rate) = self.rate else { return };
        let low = self.params.low_rate_threshold.bps() / 8;
        let flow = &mut self.flows[f];
        let mut plen = len as u64;
        if rate <= low {
            flow.credit = 0;
        } else {
            plen = plen.max(self.params.quantum as u64);
            if flow.credit > 0 {
                return;
            }
        }
        let mut delay = (plen * 1_000_000_000 / rate).min(1_000_000_000);
        if flow.next != 0 {
            delay -= (delay / 2).min(now.saturating_sub(flow.next));
        }
        flow.next = now + delay;
    }
}

impl Qdisc for Fq {
    fn enqueue(&mut self, pkt: Packet, ctx: &mut Ctx<'_>) -> Verdict {
        if self.len >= self.params.limit as usize {
            ctx.drop(pkt, DropReason::Overflow);
            return Verdict::Dropped;
        }
        let initial = self.params.initial_quantum as i64;
        let f = *self.index.entry(pkt.flow).or_insert_with(|| {
            self.flows.push(Flow {
                queue: PacketFifo::new(),
                credit: initial,
                age: Time::ZERO,
                next: 0,
                state: State::Detached,
            });
            (self.flows.len() - 1) as u32
        });
        let flow = &mut self.flows[f as usize];
        if flow.queue.len() >= self.params.flow_limit as usize {
            self.flow_limit_drops += 1;
            ctx.drop(pkt, DropReason::Overflow);
            return Verdict::Dropped;
        }
        if flow.state == State::Detached {
            flow.state = State::Listed;
            self.new_flows.push_back(f);
            if ctx.now.saturating_since(flow.age) > self.params.refill_delay {
                flow.credit = flow.credit.max(self.params.quantum as i64);
            }
        }
        flow.queue.push_back(pkt);
        self.len += 1;
        self.bytes += pkt.size as u64;
        Verdict::Queued
    }

    fn dequeue(&mut self, ctx: &mut Ctx<'_>) -> Option<Packet> {
        let now = ctx.now.as_nanos();
        self.wake = None;
        self.release_throttled(now);
        loop {
            let from_new = !self.new_flows.is_empty();
            let head = if from_new {
                self.new_flows.front()
            } else {
                self.old_flows.front()
            };
            let Some(&f) = head else {
                self.wake = self
                    .throttled
                    .peek()
                    .map(|&Reverse((at, _))| Time::from_nanos(at));
                return None;
            };
            let list = if from_new {
                &mut self.new_flows
            } else {
                &mut self.old_flows
            };
            let flow = &mut self.flows[f as usize];
            if flow.credit <= 0 {
                flow.credit += self.params.quantum as i64;
                list.pop_front();
                self.old_flows.push_back(f);
                continue;
            }
            if flow.queue.is_empty() {
                list.pop_front();
                if from_new && !self.old_flows.is_empty() {
                    self.old_flows.push_back(f);
                } else {
                    flow.state = State::Detached;
                    flow.age = ctx.now;
                }
                continue;
            }
            if self.rate.is_some() && now < flow.next {
                list.pop_front();
                flow.state = State::Throttled;
                self.throttled.push(Reverse((flow.next, f)));
                self.throttle_count += 1;
                continue;
            }
            let mut pkt = flow.queue.pop_front().expect("non-empty");
            let late = now.saturating_sub(flow.next);
            if let Some(ce) = self.params.ce_threshold {
                if late > ce.as_nanos() && pkt.ecn.is_ect() {
                    pkt.ecn = Ecn::Ce;
                    ctx.sink.mark(&pkt, DropReason::Sojourn);
                }
            }
            flow.credit -= pkt.size as i64;
            self.len -= 1;
            self.bytes -= pkt.size as u64;
            self.pace(f as usize, pkt.size, now);
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
    fn wake_at(&self) -> Option<Time> {
        self.wake
    }
}

#[cfg(test)]
mod tests;
