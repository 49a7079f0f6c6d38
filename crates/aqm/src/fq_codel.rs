//! FQ-CoDel: Flow Queue CoDel (Hoeiland-Joergensen et al., RFC 8290), as Linux
//! `net/sched/sch_fq_codel.c` runs it, with ns-3's set-associative hash as an
//! option.
//!
//! A keyed hash of the flow id picks one of `flows` queues. Each queue is a FIFO
//! with its own CoDel state ([`crate::parts::codel`], the same control law as
//! `codel`). Queues with packets are served by deficit round robin over two
//! lists: a queue that becomes active joins the *new* list with `quantum` bytes
//! of credit; the scheduler serves the head of the new list, else the head of the
//! old list; a queue whose credit is spent gets `quantum` more and moves to the end
//! of the old list; a queue found empty leaves (a new one passes through the old
//! list first if that list is not empty, so it cannot starve the old ones). So a
//! sparse flow (one packet now and then) is served ahead of the backlogged ones
//! and sees no queue, and backlogged flows share the link equally in bytes.
//!
//! When an arrival takes the qdisc over `limit` packets or `memory_limit` bytes,
//! the fattest queue (most bytes; the lowest index on a tie, as Linux's scan)
//! loses packets from its head until half its bytes or `drop_batch_size` packets
//! are gone, and its CoDel `count` grows by as many (Linux: "tell codel to
//! increase its signal strength also"). Those victims report `push_out`; if the
//! arrival itself goes (its queue was the fattest and is emptied) it reports
//! `overflow` and the arrival counts as dropped. CoDel's drops report `sojourn`.
//!
//! The hash, the set-associative option, the `mtu` rule, memory and quantum, and
//! where Linux and ns-3 differ: `docs/qdiscs.md`, with the defaults' sources.

use crate::drop_reason::DropReason;
use crate::packet::{FlowId, Packet};
use crate::parts::codel::{self as codel_core, CodelConfig, CodelQueue, CodelStats, CodelVars};
use crate::parts::fifo::PacketFifo;
use crate::parts::flow_hash::{hash_seed, keyed_hash};
use crate::qdisc::{check, Ctx, Limit, LinkInfo, ParamError, Qdisc, QdiscParams, Verdict};
use crate::rng;
use crate::time::Dur;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// FQ-CoDel parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FqCodelParams {
    /// Packets all queues together may hold. Default 10240 (Linux).
    pub limit: u32,
    /// Number of flow queues. Default 1024 (Linux, RFC 8290).
    pub flows: u32,
    /// Bytes of credit a queue gets per round. Default 1514 (Linux: the MTU plus
    /// the Ethernet header).
    pub quantum: u32,
    /// CoDel's target sojourn, per queue. Default 5 ms.
    pub target: Dur,
    /// CoDel's interval, per queue. Default 100 ms.
    pub interval: Dur,
    /// CE-mark ECN-capable packets instead of dropping them. Default true (Linux).
    pub ecn: bool,
    /// CE-mark ECN-capable packets whose sojourn exceeds this. Default off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ce_threshold: Option<Dur>,
    /// Bytes all queues together may hold. Default 32 MiB (Linux).
    pub memory_limit: u64,
    /// Most packets one overflow drops from the fattest queue. Default 64 (Linux).
    #[serde(alias = "drop_batch")]
    pub drop_batch_size: u32,
    /// No CoDel drop while the backlog is at most this many bytes. Default 1514.
    pub mtu: u32,
    /// Apply `mtu` to each flow queue's backlog (ns-3) instead of the qdisc's
    /// (Linux). Default false.
    pub per_flow_mtu: bool,
    /// Use the 8-way set-associative hash (RFC 8290 5.3). Default false (Linux).
    pub set_associative_hash: bool,
    /// Queues per set of the set-associative hash. Default 8 (RFC 8290, ns-3).
    pub set_ways: u32,
    /// Seed of the flow hash; the link's seed when the engine provides one, else 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hash_seed: Option<u64>,
}

impl Default for FqCodelParams {
    fn default() -> Self {
        FqCodelParams {
            limit: 10240,
            flows: 1024,
            quantum: 1514,
            target: Dur::from_millis(5),
            interval: Dur::from_millis(100),
            ecn: true,
            ce_threshold: None,
            memory_limit: 32 << 20,
            drop_batch_size: 64,
            mtu: 1514,
            per_flow_mtu: false,
            set_associative_hash: false,
            set_ways: 8,
            hash_seed: None,
        }
    }
}

/// The most flow queues an FQ-CoDel may have (Linux's largest `flows`).
const MAX_FLOWS: u32 = 1 << 16;

impl QdiscParams for FqCodelParams {
    type Qdisc = FqCodel;
    fn build(&self, link: &LinkInfo) -> Result<FqCodel, ParamError> {
        FqCodel::new(self.clone(), link)
    }
    fn property_configs() -> Vec<Self> {
        let ms = Dur::from_millis;
        vec![
            FqCodelParams {
                limit: 8,
                flows: 4,
                quantum: 300,
                target: ms(1),
                interval: ms(5),
                memory_limit: 5000,
                drop_batch_size: 3,
                ce_threshold: Some(ms(1)),
                mtu: 0,
                ..Default::default()
            },
            FqCodelParams {
                limit: 10,
                flows: 16,
                set_associative_hash: true,
                set_ways: 4,
                ecn: false,
                per_flow_mtu: true,
                mtu: 100,
                target: ms(1),
                interval: ms(4),
                hash_seed: Some(3),
                ..Default::default()
            },
        ]
    }
}

impl FqCodelParams {
    /// The control law's view of these parameters, the same for every queue.
    pub fn config(&self) -> CodelConfig {
        CodelConfig {
            target: self.target,
            interval: self.interval,
            ce_threshold: self.ce_threshold,
            mtu: self.mtu as u64,
            ecn: self.ecn,
        }
    }

    pub fn validate(&self) -> Result<(), ParamError> {
        check::at_least("limit", self.limit, 1)?;
        check::at_least("flows", self.flows, 1)?;
        if self.flows > MAX_FLOWS {
            return Err(ParamError::new(
                "flows",
                self.flows,
                format!("must be at most {MAX_FLOWS}"),
            ));
        }
        check::at_least("quantum", self.quantum, 1)?;
        check::at_least("memory_limit", self.memory_limit, 1)?;
        check::at_least("drop_batch_size", self.drop_batch_size, 1)?;
        if self.set_associative_hash {
            check::at_least("set_ways", self.set_ways, 1)?;
            if !self.flows.is_multiple_of(self.set_ways) {
                return Err(ParamError::new(
                    "set_ways",
                    self.set_ways,
                    format!("must divide flows = {}", self.flows),
                ));
            }
        }
        self.config().validate()
    }
}

/// Which of the scheduler's lists a queue is on.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum FlowList {
    /// On no list: empty and not scheduled.
    #[default]
    Inactive,
    /// On the new list (became active recently; served first).
    New,
    /// On the old list.
    Old,
}

/// One flow queue: its packets, its DRR credit and its CoDel state.
#[derive(Clone, Debug, Default)]
struct Flow {
    queue: PacketFifo,
    deficit: i64,
    list: FlowList,
    vars: CodelVars,
}

/// The 32-bit flow hash the queues are chosen by. One place to repoint to the
/// shared flow-hashing part.
#[inline]
fn flow_hash(key: u64, flow: FlowId) -> u32 {
    keyed_hash(key, flow.0)
}

/// The hash key for a seed (distinct from other qdiscs' keys for the same seed).
fn hash_key(seed: u64) -> u64 {
    rng::mix64(seed ^ 0x6671_5f63_6f64_656c)
}

/// A flow queue as CoDel sees it: popping updates the qdisc's totals, and the
/// `mtu` rule looks at the qdisc's backlog (Linux) or the queue's (ns-3).
struct FlowQueue<'a> {
    queue: &'a mut PacketFifo,
    len: &'a mut usize,
    bytes: &'a mut u64,
    per_flow_mtu: bool,
}

impl CodelQueue for FlowQueue<'_> {
    #[inline]
    fn pop(&mut self) -> Option<Packet> {
        let pkt = self.queue.pop_front()?;
        *self.len -= 1;
        *self.bytes -= pkt.size as u64;
        Some(pkt)
    }
    #[inline]
    fn backlog(&self) -> u64 {
        if self.per_flow_mtu {
            self.queue.bytes()
        } else {
            *self.bytes
        }
    }
}

#[derive(Debug, Clone)]
pub struct FqCodel {
    params: FqCodelParams,
    config: CodelConfig,
    flows: Vec<Flow>,
    /// Set-associative hash tags: the flow hash each queue was last given to.
    tags: Vec<Option<u32>>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    key: u64,
    len: usize,
    bytes: u64,
    stats: CodelStats,
    new_flow_count: u64,
    drop_overlimit: u64,
    drop_overmemory: u64,
}

impl FqCodel {
    pub fn new(params: FqCodelParams, link: &LinkInfo) -> Result<Self, ParamError> {
        params.validate()?;
        let n = params.flows as usize;
        Ok(FqCodel {
            config: params.config(),
            flows: vec![Flow::default(); n],
            tags: if params.set_associative_hash {
                vec![None; n]
            } else {
                Vec::new()
            },
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            key: hash_key(hash_seed(params.hash_seed, link)),
            len: 0,
            bytes: 0,
            stats: CodelStats::default(),
            new_flow_count: 0,
            drop_overlimit: 0,
            drop_overmemory: 0,
            params,
        })
    }

    /// The queue `flow` hashes to without the set-associative probing (its set's
    /// first queue when probing is on).
    pub fn bucket_of(&self, flow: FlowId) -> usize {
        self.bucket(flow_hash(self.key, flow))
    }

    fn bucket(&self, hash: u32) -> usize {
        let h = (hash % self.params.flows) as usize;
        if self.params.set_associative_hash {
            h - h % self.params.set_ways as usize
        } else {
            h
        }
    }

    /// The queue a packet with flow hash `hash` goes to (and, with the
    /// set-associative hash, the tag it leaves there).
    fn classify(&mut self, hash: u32) -> usize {
        let h = self.bucket(hash);
        if !self.params.set_associative_hash {
            return h;
        }
        let set = h..h + self.params.set_ways as usize;
        let chosen = set
            .clone()
            .find(|&i| self.tags[i] == Some(hash))
            .or_else(|| {
                set.clone()
                    .find(|&i| self.flows[i].list == FlowList::Inactive)
            })
            .unwrap_or(h);
        self.tags[chosen] = Some(hash);
        chosen
    }

    /// Packets in queue `i`.
    pub fn queue_len(&self, i: usize) -> usize {
        self.flows[i].queue.len()
    }

    /// DRR credit of queue `i`, bytes.
    pub fn deficit(&self, i: usize) -> i64 {
        self.flows[i].deficit
    }

    /// The list queue `i` is on.
    pub fn list_of(&self, i: usize) -> FlowList {
        self.flows[i].list
    }

    /// CoDel state of queue `i`.
    pub fn codel_vars(&self, i: usize) -> &CodelVars {
        &self.flows[i].vars
    }

    /// CoDel statistics over all queues (Linux keeps one set per qdisc).
    pub fn stats(&self) -> &CodelStats {
        &self.stats
    }

    /// Queues that became active since the start (Linux `new_flow_count`).
    pub fn new_flow_count(&self) -> u64 {
        self.new_flow_count
    }

    /// Packets dropped by the overflow rule, and those of them while over
    /// `memory_limit` (Linux `drop_overlimit`, `drop_overmemory`).
    pub fn overflow_drops(&self) -> (u64, u64) {
        (self.drop_overlimit, self.drop_overmemory)
    }

    /// Takes the head off the list the scheduler is serving.
    fn pop_list(&mut self, from_new: bool) {
        if from_new {
            self.new_flows.pop_front();
        } else {
            self.old_flows.pop_front();
        }
    }

    fn enqueue_hashed(&mut self, pkt: Packet, hash: u32, ctx: &mut Ctx<'_>) -> Verdict {
        let i = self.classify(hash);
        let quantum = self.params.quantum as i64;
        let flow = &mut self.flows[i];
        self.len += 1;
        self.bytes += pkt.size as u64;
        flow.queue.push_back(pkt);
        if flow.list == FlowList::Inactive {
            flow.list = FlowList::New;
            flow.deficit = quantum;
            self.new_flows.push_back(i as u32);
            self.new_flow_count += 1;
        }
        let over_memory = self.bytes > self.params.memory_limit;
        if self.len <= self.params.limit as usize && !over_memory {
            return Verdict::Queued;
        }
        let (dropped, arrival_dropped) = self.drop_from_fattest(i, ctx);
        self.drop_overlimit += dropped;
        if over_memory {
            self.drop_overmemory += dropped;
        }
        if arrival_dropped {
            Verdict::Dropped
        } else {
            Verdict::Queued
        }
    }

    /// Drops from the head of the queue with the most bytes until half of them or
    /// `drop_batch_size` packets are gone (Linux `fq_codel_drop`). Returns the
    /// number dropped and whether the arrival, last in queue `arrival`, was one.
    fn drop_from_fattest(&mut self, arrival: usize, ctx: &mut Ctx<'_>) -> (u64, bool) {
        let mut fattest = 0;
        let mut most = 0;
        for (i, f) in self.flows.iter().enumerate() {
            if f.queue.bytes() > most {
                most = f.queue.bytes();
                fattest = i;
            }
        }
        let threshold = most / 2;
        let flow = &mut self.flows[fattest];
        let (mut gone, mut n, mut arrival_dropped) = (0u64, 0u32, false);
        while let Some(pkt) = flow.queue.pop_front() {
            gone += pkt.size as u64;
            n += 1;
            self.len -= 1;
            self.bytes -= pkt.size as u64;
            // The arrival is the tail of its queue: it goes only if the queue empties.
            let is_arrival = fattest == arrival && flow.queue.is_empty();
            arrival_dropped |= is_arrival;
            let reason = if is_arrival {
                DropReason::Overflow
            } else {
                DropReason::PushOut
            };
            ctx.drop(pkt, reason);
            if n >= self.params.drop_batch_size || gone >= threshold {
                break;
            }
        }
        flow.vars.count = flow.vars.count.wrapping_add(n);
        (n as u64, arrival_dropped)
    }
}

impl Qdisc for FqCodel {
    fn enqueue(&mut self, pkt: Packet, ctx: &mut Ctx<'_>) -> Verdict {
        let hash = flow_hash(self.key, pkt.flow);
        self.enqueue_hashed(pkt, hash, ctx)
    }

    fn dequeue(&mut self, ctx: &mut Ctx<'_>) -> Option<Packet> {
        let quantum = self.params.quantum as i64;
        loop {
            let (from_new, i) = match self.new_flows.front() {
                Some(&i) => (true, i as usize),
                None => (false, *self.old_flows.front()? as usize),
            };
            if self.flows[i].deficit <= 0 {
                // Credit spent: more credit, and to the end of the old list.
                self.pop_list(from_new);
                let flow = &mut self.flows[i];
                flow.deficit += quantum;
                flow.list = FlowList::Old;
                self.old_flows.push_back(i as u32);
                continue;
            }
            let flow = &mut self.flows[i];
            let mut queue = FlowQueue {
                queue: &mut flow.queue,
                len: &mut self.len,
                bytes: &mut self.bytes,
                per_flow_mtu: self.params.per_flow_mtu,
            };
            let pkt = codel_core::dequeue(
                &mut queue,
                &self.config,
                &mut flow.vars,
                &mut self.stats,
                ctx,
            );
            if let Some(pkt) = pkt {
                flow.deficit -= pkt.size as i64;
                return Some(pkt);
            }
            self.pop_list(from_new);
            // A new queue found empty passes through the old list once, so that
            // new queues cannot starve the old ones.
            if from_new && !self.old_flows.is_empty() {
                self.flows[i].list = FlowList::Old;
                self.old_flows.push_back(i as u32);
            } else {
                self.flows[i].list = FlowList::Inactive;
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn fq_codel(params: FqCodelParams) -> Result<FqCodel, ParamError> {
        FqCodel::new(params, &LinkInfo::new(crate::units::Rate::from_mbps(10)))
    }
    use crate::packet::Ecn;
    use crate::qdisc::VecSink;
    use crate::testing::Harness;
    use crate::time::Time;

    fn fq(params: FqCodelParams) -> Harness<FqCodel> {
        Harness::new(fq_codel(params).unwrap())
    }

    /// `n` flows (from 1 up) that hash into `n` distinct queues.
    fn distinct_flows(q: &FqCodel, n: usize) -> Vec<u32> {
        let mut seen = Vec::new();
        let mut flows = Vec::new();
        for f in 1.. {
            let b = q.bucket_of(FlowId(f));
            if !seen.contains(&b) {
                seen.push(b);
                flows.push(f);
                if flows.len() == n {
                    break;
                }
            }
        }
        flows
    }

    #[track_caller]
    fn offer_sized(h: &mut Harness<FqCodel>, flow: u32, size: u32, ect: bool) -> Verdict {
        let mut p = Packet::new(FlowId(flow), size);
        p.tag = h.q.counts().received as u32;
        if ect {
            p.ecn = Ecn::Ect;
        }
        h.offer_pkt(p)
    }

    fn qlen(h: &Harness<FqCodel>, flow: u32) -> usize {
        let q = h.q.qdisc();
        q.queue_len(q.bucket_of(FlowId(flow)))
    }

    /// ns-3's test packets: 100 bytes of payload behind a 20-byte IPv4 header.
    const NS3_PKT: u32 = 120;

    /// ns-3 `FqCoDelQueueDiscIPFlowsSeparationAndPacketLimit`: two IP flows, a
    /// 4-packet limit; the fifth packet makes the fattest queue lose half its
    /// bytes from its head.
    #[test]
    fn ns3_fq_codel_queue_disc_ip_flows_separation_and_packet_limit() {
        let mut h = fq(FqCodelParams {
            limit: 4,
            quantum: 1500,
            ..Default::default()
        });
        let f = distinct_flows(h.q.qdisc(), 2);
        for _ in 0..3 {
            offer_sized(&mut h, f[0], NS3_PKT, false);
        }
        assert_eq!((h.q.len(), qlen(&h, f[0])), (3, 3));
        offer_sized(&mut h, f[1], NS3_PKT, false);
        assert_eq!((h.q.len(), qlen(&h, f[0]), qlen(&h, f[1])), (4, 3, 1));
        assert_eq!(offer_sized(&mut h, f[1], NS3_PKT, false), Verdict::Queued);
        assert_eq!((h.q.len(), qlen(&h, f[0]), qlen(&h, f[1])), (3, 1, 2));
        // The two oldest packets of the fat flow, as push-outs.
        assert_eq!(h.dropped_seqs(DropReason::PushOut), vec![0, 1]);
    }

    /// ns-3 `FqCoDelQueueDiscDeficit`: quantum 90 and 120-byte packets, the credit
    /// and list of each queue after every step.
    #[test]
    fn ns3_fq_codel_queue_disc_deficit() {
        use FlowList::*;
        let mut h = fq(FqCodelParams {
            quantum: 90,
            ..Default::default()
        });
        let f = distinct_flows(h.q.qdisc(), 2);
        let (b1, b2) = (
            h.q.qdisc().bucket_of(FlowId(f[0])),
            h.q.qdisc().bucket_of(FlowId(f[1])),
        );
        let state = |h: &Harness<FqCodel>| {
            let q = h.q.qdisc();
            (
                (q.queue_len(b1), q.deficit(b1), q.list_of(b1)),
                (q.queue_len(b2), q.deficit(b2), q.list_of(b2)),
            )
        };
        offer_sized(&mut h, f[0], NS3_PKT, false);
        assert_eq!(state(&h).0, (1, 90, New));
        h.dequeue().unwrap();
        assert_eq!(state(&h).0, (0, -30, New));
        offer_sized(&mut h, f[0], NS3_PKT, false);
        offer_sized(&mut h, f[0], NS3_PKT, false);
        assert_eq!(state(&h).0, (2, -30, New));
        offer_sized(&mut h, f[1], NS3_PKT, false);
        offer_sized(&mut h, f[1], NS3_PKT, false);
        assert_eq!(state(&h), ((2, -30, New), (2, 90, New)));
        h.dequeue().unwrap();
        assert_eq!(state(&h), ((2, 60, Old), (1, -30, New)));
        h.dequeue().unwrap();
        assert_eq!(state(&h), ((1, -60, Old), (1, 60, Old)));
        h.dequeue().unwrap();
        assert_eq!(state(&h), ((1, 30, Old), (0, -60, Old)));
        h.dequeue().unwrap();
        assert_eq!(state(&h), ((0, -90, Old), (0, 30, Old)));
        assert!(h.dequeue().is_none());
        assert_eq!(state(&h), ((0, 90, Inactive), (0, 30, Inactive)));
    }

    /// ns-3 `FqCoDelQueueDiscTCPFlowsSeparation` and `...UDPFlowsSeparation`: four
    /// 5-tuples (ports 7->27, 8->27, 8->28, 7->28) go to four queues. A flow id
    /// stands for a 5-tuple in aqmlab.
    #[test]
    fn ns3_fq_codel_queue_disc_tcp_and_udp_flows_separation() {
        let mut h = fq(FqCodelParams {
            limit: 10,
            quantum: 1500,
            ..Default::default()
        });
        let f = distinct_flows(h.q.qdisc(), 4);
        for _ in 0..3 {
            offer_sized(&mut h, f[0], NS3_PKT, false);
        }
        assert_eq!((h.q.len(), qlen(&h, f[0])), (3, 3));
        offer_sized(&mut h, f[1], NS3_PKT, false);
        assert_eq!((h.q.len(), qlen(&h, f[1])), (4, 1));
        offer_sized(&mut h, f[2], NS3_PKT, false);
        assert_eq!((h.q.len(), qlen(&h, f[2])), (5, 1));
        offer_sized(&mut h, f[3], NS3_PKT, false);
        offer_sized(&mut h, f[3], NS3_PKT, false);
        let lens: Vec<usize> = f.iter().map(|&x| qlen(&h, x)).collect();
        assert_eq!((h.q.len(), lens), (7, vec![3, 1, 1, 2]));
    }

    /// The ECN-marking scenario of ns-3: five flows of 20 packets at t = 0, three
    /// ECT(0) and two Not-ECT, then 60 dequeues `every` apart. Returns, per flow,
    /// (queued, sojourn drops, marks).
    fn ns3_ecn_scenario(params: FqCodelParams, every: Dur) -> Vec<(usize, u64, u64)> {
        let mut h = fq(params);
        let f = distinct_flows(h.q.qdisc(), 5);
        for (k, &flow) in f.iter().enumerate() {
            for _ in 0..20 {
                offer_sized(&mut h, flow, NS3_PKT, k < 3);
            }
            assert_eq!(h.q.len(), 20 * (k + 1));
        }
        for _ in 0..60 {
            h.advance(every);
            h.dequeue();
        }
        // Every queue still holds packets, and the ECT queues' next one is ECT.
        for (k, &flow) in f.iter().enumerate() {
            let q = h.q.qdisc();
            let b = q.bucket_of(FlowId(flow));
            assert!(q.queue_len(b) > 0, "flow {k} drained");
            if k < 3 {
                assert!(q.flows[b].queue.front().unwrap().ecn.is_capable());
            }
        }
        f.iter()
            .map(|&flow| {
                let count = |v: &Vec<(Packet, DropReason)>| {
                    v.iter()
                        .filter(|(p, r)| p.flow.0 == flow && *r == DropReason::Sojourn)
                        .count() as u64
                };
                (qlen(&h, flow), count(&h.sink.drops), count(&h.sink.marks))
            })
            .collect()
    }

    /// ns-3's CoDel queues do not drop while *their own* backlog is below
    /// `MinBytes` = 1500 bytes.
    fn ns3_ecn_params() -> FqCodelParams {
        FqCodelParams {
            quantum: 1514,
            per_flow_mtu: true,
            mtu: 1499,
            ..Default::default()
        }
    }

    /// ns-3 `FqCoDelQueueDiscECNMarking`, its three sub-cases.
    #[test]
    fn ns3_fq_codel_queue_disc_ecn_marking() {
        let every = Dur::from_millis(110);
        // 1) No ce_threshold: 6 control-law marks in each ECT queue, 4 drops in
        //    each Not-ECT one.
        let r = ns3_ecn_scenario(ns3_ecn_params(), every);
        for (k, &(_, drops, marks)) in r.iter().enumerate() {
            let want = if k < 3 { (0, 6) } else { (4, 0) };
            assert_eq!((drops, marks), want, "flow {k}: {r:?}");
        }

        // 2) ce_threshold 2 ms, dequeues 0.1 ms apart: the first queue leaves
        //    before 2 ms, the second is marked from 2.1 ms on (6 packets), the
        //    third throughout (13); no control-law activity yet.
        let r = ns3_ecn_scenario(
            FqCodelParams {
                ce_threshold: Some(Dur::from_millis(2)),
                ..ns3_ecn_params()
            },
            Dur::from_micros(100),
        );
        let marks: Vec<u64> = r.iter().map(|x| x.2).collect();
        assert_eq!(marks, vec![0, 6, 13, 0, 0], "{r:?}");
        assert!(r.iter().all(|x| x.1 == 0), "{r:?}");

        // 3) ce_threshold 2 ms, 110 ms apart: every packet sent from an ECT queue
        //    is marked, for one reason or the other; the Not-ECT ones lose 4.
        let r = ns3_ecn_scenario(
            FqCodelParams {
                ce_threshold: Some(Dur::from_millis(2)),
                ..ns3_ecn_params()
            },
            every,
        );
        for (k, &(queued, drops, marks)) in r.iter().enumerate() {
            if k < 3 {
                assert_eq!((drops, marks), (0, 20 - queued as u64), "flow {k}: {r:?}");
            } else {
                assert_eq!((drops, marks), (4, 0), "flow {k}: {r:?}");
            }
        }
    }

    #[test]
    fn linux_mtu_rule_looks_at_the_whole_qdisc() {
        // The scenario of ns-3's first ECN case under Linux's rule: the Not-ECT
        // queues keep being dropped from while other queues hold packets, so they
        // lose more than the 4 of ns-3's per-queue rule.
        let r = ns3_ecn_scenario_linux();
        assert!(r[3].1 > 4 && r[4].1 > 4, "{r:?}");
    }

    fn ns3_ecn_scenario_linux() -> Vec<(u64, u64)> {
        let mut h = fq(FqCodelParams::default());
        let f = distinct_flows(h.q.qdisc(), 5);
        for (k, &flow) in f.iter().enumerate() {
            for _ in 0..20 {
                offer_sized(&mut h, flow, NS3_PKT, k < 3);
            }
        }
        for _ in 0..60 {
            h.advance(Dur::from_millis(110));
            h.dequeue();
        }
        f.iter()
            .map(|&flow| {
                let drops = h
                    .sink
                    .drops
                    .iter()
                    .filter(|(p, _)| p.flow.0 == flow)
                    .count() as u64;
                (qlen(&h, flow) as u64, drops)
            })
            .collect()
    }

    /// ns-3 `FqCoDelQueueDiscSetLinearProbing`: flow hashes 0..7 (1 and 4 twice),
    /// then 1024 and 1025 (all in the first set of 8), then 10 (the second set).
    #[test]
    fn ns3_fq_codel_queue_disc_set_linear_probing() {
        let mut q = fq_codel(FqCodelParams {
            set_associative_hash: true,
            quantum: 90,
            ..Default::default()
        })
        .unwrap();
        let (mut rng, mut sink) = (rng::stream(1, 0), VecSink::default());
        let mut ctx = Ctx::new(Time::ZERO, &mut rng, &mut sink);
        let mut offer = |q: &mut FqCodel, hash: u32| {
            q.enqueue_hashed(Packet::new(FlowId(0), NS3_PKT), hash, &mut ctx);
        };
        for hash in [0, 1, 1, 2, 3, 4, 4, 5, 6, 7, 1024] {
            offer(&mut q, hash);
        }
        assert_eq!(q.len(), 11);
        let lens: Vec<usize> = (0..8).map(|i| q.queue_len(i)).collect();
        assert_eq!(lens, vec![2, 2, 1, 1, 2, 1, 1, 1]);
        offer(&mut q, 1025);
        assert_eq!(q.queue_len(0), 3);
        offer(&mut q, 10);
        assert_eq!(q.queue_len(8), 1);
    }

    #[test]
    fn a_sparse_flow_sees_no_queue_behind_a_bulk_flow() {
        // The link sends one packet per millisecond. A bulk flow keeps 100 packets
        // queued; a sparse flow sends one packet every 50 ms. Each sparse packet
        // leaves at the next departure (its queue is new: served first).
        let mut h = fq(FqCodelParams {
            ecn: false,
            ..Default::default()
        });
        let f = distinct_flows(h.q.qdisc(), 2);
        let (bulk, sparse) = (f[0], f[1]);
        let mut waits = Vec::new();
        for t in 0..20_000u64 {
            while qlen(&h, bulk) < 100 {
                offer_sized(&mut h, bulk, 1500, false);
            }
            // (From 25 ms on: at t = 0 both queues are new and the bulk one came first.)
            if t % 50 == 25 {
                offer_sized(&mut h, sparse, 200, false);
            }
            let p = h.dequeue().unwrap();
            if p.flow.0 == sparse {
                waits.push(h.now.saturating_since(p.enqueued_at));
            }
            h.advance(Dur::from_millis(1));
        }
        assert_eq!(waits.len(), 400);
        assert!(waits.iter().all(|w| w.is_zero()), "{waits:?}");
        // Meanwhile the bulk flow's packets wait ~100 ms and CoDel drops them.
        assert!(h.drops(DropReason::Sojourn) > 100);
        assert!(h.sink.drops.iter().all(|(p, _)| p.flow.0 == bulk));
    }

    #[test]
    fn backlogged_flows_share_the_link_equally_in_bytes() {
        let mut h = fq(FqCodelParams::default());
        let f = distinct_flows(h.q.qdisc(), 3);
        let sizes = [200u32, 700, 1500];
        let (mut bytes, mut packets) = ([0u64; 3], [0u64; 3]);
        for _ in 0..30_000 {
            for (i, &flow) in f.iter().enumerate() {
                while qlen(&h, flow) < 20 {
                    offer_sized(&mut h, flow, sizes[i], false);
                }
            }
            let p = h.dequeue().unwrap();
            let i = f.iter().position(|&x| x == p.flow.0).unwrap();
            bytes[i] += p.size as u64;
            packets[i] += 1;
        }
        let mean = bytes.iter().sum::<u64>() as f64 / 3.0;
        for b in bytes {
            assert!(
                (b as f64 - mean).abs() < 0.005 * mean,
                "bytes {bytes:?} packets {packets:?}"
            );
        }
        // Equal bytes, not equal packets: 7.5 small packets per large one.
        let ratio = packets[0] as f64 / packets[2] as f64;
        assert!((ratio - 7.5).abs() < 0.1, "packets {packets:?}");
        assert_eq!(h.q.counts().total_drops(), 0);
    }

    #[test]
    fn overflow_drops_a_batch_from_the_head_of_the_fattest_queue() {
        let mut h = fq(FqCodelParams {
            limit: 100,
            drop_batch_size: 8,
            ..Default::default()
        });
        let f = distinct_flows(h.q.qdisc(), 3);
        // Fat: 40 packets of 1000 B (tags 0..40); medium: 50 of 500 B (more
        // packets, fewer bytes); thin: 10 of 100 B. 100 packets: full.
        for _ in 0..40 {
            offer_sized(&mut h, f[0], 1000, false);
        }
        for _ in 0..50 {
            offer_sized(&mut h, f[1], 500, false);
        }
        for _ in 0..10 {
            offer_sized(&mut h, f[2], 100, false);
        }
        assert_eq!(h.drops(DropReason::PushOut), 0);
        // The thin flow's arrival is queued; the fat flow loses its 8 oldest
        // packets (the batch limit comes before half of its 40 KB).
        assert_eq!(offer_sized(&mut h, f[2], 100, false), Verdict::Queued);
        assert_eq!(
            h.dropped_seqs(DropReason::PushOut),
            (0..8).collect::<Vec<_>>()
        );
        assert_eq!(
            (qlen(&h, f[0]), qlen(&h, f[1]), qlen(&h, f[2])),
            (32, 50, 11)
        );
        // CoDel of the fat queue is told: its count grew by the batch.
        let q = h.q.qdisc();
        assert_eq!(q.codel_vars(q.bucket_of(FlowId(f[0]))).count, 8);
        assert_eq!(q.overflow_drops(), (8, 0));

        // Half the bytes when that comes first: one queue and a limit of 6. The
        // seventh 1000-byte arrival makes it drop from the head until 3.5 KB of
        // its 7 KB are gone: 4 packets.
        let mut h = fq(FqCodelParams {
            limit: 6,
            ..Default::default()
        });
        for _ in 0..7 {
            offer_sized(&mut h, 1, 1000, false);
        }
        assert_eq!(h.dropped_seqs(DropReason::PushOut), vec![0, 1, 2, 3]);
        assert_eq!(h.q.len(), 3);
    }

    #[test]
    fn an_arrival_that_is_its_fattest_queue_alone_is_dropped() {
        // Every queue holds one packet and the limit is reached: an arrival to a
        // fresh queue is the fattest (largest packet) and goes itself.
        let mut h = fq(FqCodelParams {
            limit: 3,
            ..Default::default()
        });
        let f = distinct_flows(h.q.qdisc(), 4);
        for &x in &f[..3] {
            offer_sized(&mut h, x, 100, false);
        }
        assert_eq!(offer_sized(&mut h, f[3], 1500, false), Verdict::Dropped);
        assert_eq!(h.dropped_seqs(DropReason::Overflow), vec![3]);
        assert_eq!(h.q.len(), 3);
    }

    #[test]
    fn the_memory_limit_bounds_bytes() {
        let mut h = fq(FqCodelParams {
            memory_limit: 10_000,
            ..Default::default()
        });
        for _ in 0..20 {
            offer_sized(&mut h, 1, 1000, false);
        }
        assert!(h.q.bytes() <= 10_000);
        let (over_limit, over_memory) = h.q.qdisc().overflow_drops();
        assert!(over_memory > 0 && over_memory == over_limit);
    }

    #[test]
    fn codel_runs_in_each_queue_on_its_own() {
        // A flow with a standing queue gets CoDel drops; a flow that never queues
        // more than a packet or two gets none, though both share the link.
        let mut h = fq(FqCodelParams {
            ecn: false,
            ..Default::default()
        });
        let f = distinct_flows(h.q.qdisc(), 2);
        for t in 0..10_000u64 {
            offer_sized(&mut h, f[0], 1000, false);
            offer_sized(&mut h, f[0], 1000, false);
            if t % 4 == 0 {
                offer_sized(&mut h, f[1], 1000, false);
            }
            h.dequeue();
            h.advance(Dur::from_millis(1));
        }
        let drops: Vec<u32> = h.sink.drops.iter().map(|(p, _)| p.flow.0).collect();
        assert!(drops.len() > 100, "{} drops", drops.len());
        assert!(drops.iter().all(|&x| x == f[0]));
    }

    #[test]
    fn the_flow_to_queue_map_is_a_function_of_the_seed() {
        let map = |seed| {
            let q = fq_codel(FqCodelParams {
                hash_seed: Some(seed),
                ..Default::default()
            })
            .unwrap();
            (0..256).map(|x| q.bucket_of(FlowId(x))).collect::<Vec<_>>()
        };
        assert_eq!(map(7), map(7));
        let (a, b) = (map(7), map(8));
        let moved = a.iter().zip(&b).filter(|(x, y)| x != y).count();
        assert!(moved > 240, "{moved}");
        // The default (no seed) is seed 0.
        let q = fq_codel(FqCodelParams::default()).unwrap();
        assert_eq!(
            (0..256).map(|x| q.bucket_of(FlowId(x))).collect::<Vec<_>>(),
            map(0)
        );
    }

    #[test]
    fn bad_parameters_are_rejected_by_name() {
        let err = |p: FqCodelParams| fq_codel(p).unwrap_err().to_string();
        assert_eq!(
            err(FqCodelParams {
                flows: 0,
                ..Default::default()
            }),
            "flows = 0 must be at least 1"
        );
        assert_eq!(
            err(FqCodelParams {
                flows: 1 << 20,
                ..Default::default()
            }),
            "flows = 1048576 must be at most 65536"
        );
        assert_eq!(
            err(FqCodelParams {
                set_associative_hash: true,
                set_ways: 7,
                ..Default::default()
            }),
            "set_ways = 7 must divide flows = 1024"
        );
        assert_eq!(
            err(FqCodelParams {
                drop_batch_size: 0,
                ..Default::default()
            }),
            "drop_batch_size = 0 must be at least 1"
        );
        assert_eq!(
            err(FqCodelParams {
                interval: Dur::from_millis(4),
                ..Default::default()
            }),
            "target = 5ms must not exceed interval = 4ms"
        );
        let p: FqCodelParams = toml::from_str("drop_batch = 32").unwrap();
        assert_eq!(p.drop_batch_size, 32);
    }
}
