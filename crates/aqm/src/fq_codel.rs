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
    fn validate(&self) -> Result<(), ParamError> {
        check::limit("limit", self.limit)?;
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

impl crate::table_bytes::TableBytes for FqCodelParams {
    /// A flow queue per `flows`, and its hash tag when set-associative.
    fn table_bytes(&self, _: &LinkInfo) -> Option<crate::table_bytes::KeyedTable> {
        use crate::table_bytes::vec_bytes;
        let n = u64::from(self.flows);
        let tags = if self.set_associative_hash {
            vec_bytes::<Option<u32>>(n)
        } else {
            0
        };
        Some(crate::table_bytes::KeyedTable {
            key: "flows",
            value: self.flows.to_string(),
            bytes: vec_bytes::<Flow>(n).saturating_add(tags),
        })
    }
}

impl crate::early_drop::EarlyDropRule for FqCodelParams {
    fn early_drop(&self) -> crate::early_drop::EarlyDrop {
        use crate::early_drop::EarlyDrop;
        EarlyDrop::After(vec![("interval", self.interval)])
    }
}

#[cfg(test)]
mod tests;
