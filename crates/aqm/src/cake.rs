//! CAKE: Common Applications Kept Enhanced (Høiland-Jørgensen, Täht & Morton,
//! "Piece of CAKE: A Comprehensive Queue Management Solution for Home
//! Gateways", LANCS 2018), as Linux's `net/sched/sch_cake.c` runs it.
//!
//! - **DiffServ tins** (section 4.5, `cake/tins.rs`): by `diffserv` mode a
//!   packet's DSCP picks a tin (default `diffserv3`: bulk, best effort, latency
//!   sensitive), each with its own queues, COBALT constants and a threshold rate.
//!   Shaped, the highest tin within its threshold goes first, else the tin
//!   whose threshold schedule is earliest; unshaped, the tins share by DRR.
//!   Everything below happens within a tin, except the shaper and overflow.
//! - **Flow isolation** (section 4.1): 1024 queues, found by an 8-way
//!   set-associative hash so that flows rarely share one (`cake/hash.rs`), served
//!   by DRR++: a queue that becomes active is *sparse* and served first with a
//!   fresh quantum; once its quantum is spent it joins the *bulk* rotation. A
//!   queue that empties stays scheduled as *decaying* until its COBALT state has
//!   decayed to rest, so a flow cannot regain priority by pausing briefly.
//! - **Host isolation** (4.2): under `dual-srchost`, `dual-dsthost` and
//!   `triple-isolate` each flow's quantum is divided by the number of bulk flows
//!   of its source (destination; the larger of both) host, so hosts share first
//!   and their flows share what their host gets.
//! - **COBALT** (4.4, [`crate::parts::cobalt`]) in each queue: CoDel's control
//!   law, ECN-marking when it can, and BLUE for flows that do not respond.
//! - **Overflow** (4.1): past the byte budget (or `limit` packets), packets are
//!   dropped from the head of the queue with the most bytes in any tin; each such drop
//!   raises that queue's BLUE probability.
//! - **The shaper** (4.3, `cake/shaper.rs`): deficit mode at `bandwidth`, with
//!   framing compensation (`overhead`, `mpu`, ATM / PTM cells). In `ingress`
//!   mode drops are charged to the shaper too, since the upstream link already
//!   carried them, and COBALT counts two MTU times per bulk flow as no queue.
//!
//! A shaped CAKE is not work-conserving: `dequeue` returns `None` while packets
//! wait for their time, and [`Qdisc::wake_at`] tells the caller when to ask
//! again (Linux arms a watchdog timer).
//!
//! Where aqmlab differs from Linux (no `autorate-ingress`, no `ack-filter`, no
//! `fwmark` or priority override of the tin, hosts of each flow, the byte budget
//! in packet bytes rather than socket-buffer truesize) and the defaults' sources:
//! `docs/qdiscs.md`, "CAKE".

mod hash;
mod queues;
mod shaper;
mod tins;

use crate::drop_reason::DropReason;
use crate::packet::{FlowId, Packet};
use crate::parts::cobalt::{CobaltParams, CobaltVars};
use crate::parts::flow_hash::{hash_seed, keyed_hash};
use crate::parts::params::qdisc_params;
use crate::qdisc::{check, Ctx, Limit, LinkInfo, ParamError, Qdisc, QdiscParams, Verdict};
use crate::time::{Dur, Time};
use crate::units::Rate;
use hash::mode_hashes;
use queues::{Flow, FlowSet, Host, Tin};
pub use shaper::Cells;
use shaper::{Framing, Shaper};
pub use tins::Diffserv;

/// Linux's `CAKE_QUEUES`: flow queues (and host slots) per tin.
pub const QUEUES: usize = 1024;
/// Linux's `CAKE_SET_WAYS`.
pub const WAYS: usize = 8;
/// `psched_mtu` of an Ethernet device, which CAKE's rate constants use.
const MTU: u32 = 1514;

/// What separates flows from one another (tc's isolation keywords).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Isolation {
    /// One queue for everything.
    Flowblind,
    /// A queue per source host.
    Srchost,
    /// A queue per destination host.
    Dsthost,
    /// A queue per pair of hosts.
    Hosts,
    /// A queue per flow.
    Flows,
    /// Per flow, with fairness first between source hosts.
    DualSrchost,
    /// Per flow, with fairness first between destination hosts.
    DualDsthost,
    /// Per flow, with fairness between source hosts and between destination
    /// hosts (Linux's default).
    #[default]
    TripleIsolate,
}

qdisc_params! {
    /// CAKE parameters (tc-cake(8); defaults Linux's unless said).
    pub struct CakeParams {
        /// Packets the qdisc may hold. Default 10240 (Linux's `sch->limit`;
        /// Linux bounds only bytes, this caps the byte budget at limit x 1514).
        limit: u32 = 10240,
        /// The shaper's rate; none for unlimited (tc's default).
        #[serde(skip_serializing_if = "Option::is_none")]
        bandwidth: Option<Rate> = None,
        /// The RTT CoDel's interval is set for. Default 100 ms (`internet`).
        rtt: Dur = Dur::from_millis(100),
        /// CoDel's target. Default 5 ms (`internet`; tc's `rtt TIME` sets rtt / 20).
        target: Dur = Dur::from_millis(5),
        /// How flows are told apart. Default `triple-isolate`.
        isolation: Isolation = Isolation::TripleIsolate,
        /// The tin mode: `besteffort`, `precedence`, `diffserv3`, `diffserv4`
        /// or `diffserv8`. Default `diffserv3`.
        diffserv: Diffserv = Diffserv::Diffserv3,
        /// Clear each packet's DSCP once its tin is chosen (tc's `wash`).
        wash: bool = false,
        /// Bytes added to each packet for the shaper, -64..=256. Default 0.
        overhead: i32 = 0,
        /// The least bytes a packet is charged, 0..=256. Default 0.
        mpu: u32 = 0,
        /// The link's cell framing: `none`, `atm` or `ptm`. Default none.
        framing: Cells = Cells::None,
        /// Ingress mode: drops count as sent for the shaper. Default false.
        ingress: bool = false,
        /// The byte budget; none derives it from the rate as Linux does.
        #[serde(skip_serializing_if = "Option::is_none")]
        memlimit: Option<u64> = None,
        /// Seed of the flow and host hashes; the link's seed unless pinned.
        #[serde(skip_serializing_if = "Option::is_none")]
        hash_seed: Option<u64> = None,
    }
}

impl QdiscParams for CakeParams {
    type Qdisc = Cake;
    fn validate(&self) -> Result<(), ParamError> {
        check::limit("limit", self.limit)?;
        if !(-64..=256).contains(&self.overhead) {
            return Err(ParamError::new(
                "overhead",
                self.overhead,
                "must be from -64 to 256 (Linux's range)",
            ));
        }
        if self.mpu > 256 {
            return Err(ParamError::new("mpu", self.mpu, "must be from 0 to 256"));
        }
        if self.rtt.is_zero() {
            return Err(ParamError::new("rtt", self.rtt, "must be positive"));
        }
        if self.rtt > Dur::from_secs(3600) {
            return Err(ParamError::new("rtt", self.rtt, "must be at most 3600s"));
        }
        if self.target.is_zero() || self.target > self.rtt {
            return Err(ParamError::new(
                "target",
                self.target,
                format!("must be positive and at most rtt = {}", self.rtt),
            ));
        }
        if let Some(b) = self.bandwidth {
            check::at_least("bandwidth", b.bps(), 8)?;
        }
        if let Some(m) = self.memlimit {
            // A budget under one MTU would drop every full-sized packet.
            check::at_least("memlimit", m, MTU as u64)?;
        }
        Ok(())
    }
    fn build(&self, link: &LinkInfo) -> Result<Cake, ParamError> {
        Cake::new(self.clone(), link)
    }
    fn property_configs() -> Vec<Self> {
        let ms = Dur::from_millis;
        vec![
            CakeParams {
                limit: 12,
                bandwidth: Some(Rate::from_mbps(2)),
                rtt: ms(4),
                target: ms(1),
                isolation: Isolation::DualSrchost,
                overhead: 18,
                mpu: 64,
                ..Default::default()
            },
            CakeParams {
                limit: 20,
                memlimit: Some(6000),
                isolation: Isolation::Flows,
                bandwidth: Some(Rate::from_mbps(1)),
                framing: Cells::Atm,
                overhead: -4,
                ingress: true,
                rtt: ms(2),
                target: ms(1),
                hash_seed: Some(5),
                ..Default::default()
            },
            CakeParams {
                limit: 8,
                isolation: Isolation::Flowblind,
                rtt: ms(3),
                target: ms(1),
                ..Default::default()
            },
            CakeParams {
                limit: 10,
                isolation: Isolation::Hosts,
                framing: Cells::Ptm,
                bandwidth: Some(Rate::from_mbps(5)),
                ..Default::default()
            },
            // Tins (the properties give each flow its own DSCP).
            CakeParams {
                limit: 16,
                diffserv: Diffserv::Diffserv4,
                bandwidth: Some(Rate::from_mbps(3)),
                isolation: Isolation::Flows,
                wash: true,
                rtt: ms(3),
                target: ms(1),
                ..Default::default()
            },
            CakeParams {
                limit: 12,
                diffserv: Diffserv::Diffserv8,
                ingress: true,
                bandwidth: Some(Rate::from_mbps(2)),
                ..Default::default()
            },
            CakeParams {
                limit: 12,
                diffserv: Diffserv::Precedence,
                rtt: ms(2),
                target: ms(1),
                ..Default::default()
            },
        ]
    }
}

#[derive(Debug, Clone)]
pub struct Cake {
    params: CakeParams,
    framing: Framing,
    shaper: Option<Shaper>,
    /// As many as the mode has, in Linux's order (tin 0 is best effort, or in
    /// `precedence` and `diffserv8` the lowest class).
    tins: Vec<Tin>,
    /// Each DSCP's tin under the mode (`Diffserv::tin`, tabulated).
    tin_of: [u8; 64],
    /// The tin unshaped DRR is serving.
    cur_tin: usize,
    /// Unshaped: every tin but `cur_tin` is idle with a positive DRR deficit.
    /// Only a packet for another tin (which may make it active) or the DRR
    /// loop (which moves `cur_tin` and tops deficits up) can make it false: a
    /// tin's deficit is otherwise charged only when it is served, and its
    /// sparse and bulk counts rise only on an arrival.
    lone: bool,
    len: usize,
    bytes: u64,
    buffer_limit: u64,
    keys: [u64; 3],
    /// Source and destination host of each flow given one, by flow id; the
    /// others are their own hosts. Only the flows given one are held (a flow id
    /// indexes the caller's table of every flow, most of which may never cross
    /// this link).
    hosts: Vec<(FlowId, u32, u32)>,
    wake: Option<Time>,
}

impl Cake {
    pub fn new(params: CakeParams, link: &LinkInfo) -> Result<Self, ParamError> {
        params.validate()?;
        let bytes_per_sec = params.bandwidth.map(|b| b.bps() / 8);
        let target = params.target.as_nanos();
        let rtt = params.rtt.as_nanos();
        // Unshaped, Linux configures every tin at rate 0: no thresholds.
        let tins = params
            .diffserv
            .layout(bytes_per_sec.unwrap_or(0))
            .into_iter()
            .map(|c| Tin::new(c, target, rtt))
            .collect();
        // Linux: the configured budget, else four intervals at the rate (at least
        // 4 MiB), capped at limit MTUs unless configured larger.
        let derived = match (params.memlimit, bytes_per_sec) {
            (Some(m), _) => m,
            (None, Some(r)) => (r as u128 * (rtt / 1000) as u128 / 250_000)
                .max(4 << 20)
                .min(u64::MAX as u128) as u64,
            (None, None) => u64::MAX,
        };
        let cap = (params.limit as u64 * MTU as u64).max(params.memlimit.unwrap_or(0));
        let seed = hash_seed(params.hash_seed, link);
        let key = |salt: u64| crate::rng::mix64(seed ^ salt);
        let mut cake = Cake {
            framing: Framing {
                overhead: params.overhead,
                mpu: params.mpu,
                cells: params.framing,
            },
            // The global shaper runs at tin 0's rate, which is the full rate.
            shaper: bytes_per_sec.map(Shaper::new),
            tins,
            tin_of: std::array::from_fn(|d| params.diffserv.tin(d as u8) as u8),
            cur_tin: 0,
            lone: false,
            len: 0,
            bytes: 0,
            buffer_limit: derived.min(cap),
            keys: [
                key(0x63616b65_666c6f77),
                key(0x63616b65_73726368),
                key(0x63616b65_64737468),
            ],
            hosts: Vec::new(),
            wake: None,
            params,
        };
        // The hosts the engine announced; a flow it did not is a host of its own.
        cake.hosts = link
            .flows
            .iter()
            .filter(|c| (c.src_host, c.dst_host) != (c.flow.0, c.flow.0))
            .map(|c| (c.flow, c.src_host, c.dst_host))
            .collect();
        cake.hosts.sort_unstable_by_key(|h| h.0);
        cake.hosts.dedup_by_key(|h| h.0);
        Ok(cake)
    }

    /// Declares `flow`'s source and destination hosts (by default each flow is
    /// its own source and its own destination host).
    pub fn set_hosts(&mut self, flow: FlowId, src: u32, dst: u32) {
        match self.hosts.binary_search_by_key(&flow, |h| h.0) {
            Ok(i) => self.hosts[i] = (flow, src, dst),
            Err(i) => self.hosts.insert(i, (flow, src, dst)),
        }
    }

    /// COBALT's constants of tin 0 (best effort, at the full rate).
    pub fn cobalt_params(&self) -> &CobaltParams {
        &self.tins[0].cobalt
    }

    /// How many tins the mode has.
    pub fn tin_count(&self) -> usize {
        self.tins.len()
    }

    /// Tin `tin`'s COBALT constants.
    pub fn tin_cobalt_params(&self, tin: usize) -> &CobaltParams {
        &self.tins[tin].cobalt
    }

    /// Tin `tin`'s threshold rate in bytes per second (0 when unshaped), its
    /// flow quantum and its DRR weight.
    pub fn tin_config(&self, tin: usize) -> (u64, u32, u16) {
        let b = &self.tins[tin];
        (b.threshold, b.flow_quantum, b.quantum)
    }

    /// The byte budget past which the fattest queue loses packets.
    pub fn buffer_limit(&self) -> u64 {
        self.buffer_limit
    }

    /// The DRR quantum of a tin-0 queue whose host has one bulk flow.
    pub fn flow_quantum(&self) -> u32 {
        self.tins[0].flow_quantum
    }

    /// The tin-0 queue `flow`'s next DSCP-0 packet would join (classifying
    /// allocates it).
    pub fn queue_of(&mut self, flow: FlowId) -> usize {
        let h = self.hashes(flow);
        self.tins[0].t.classify(self.params.isolation, h)
    }

    /// Tin 0's queue `q`'s COBALT state.
    pub fn cobalt_vars(&self, q: usize) -> &CobaltVars {
        &self.tins[0].t.flows[q].cobalt
    }

    /// Queues whose BLUE is active (Linux's `unresponsive_flow_count`), all tins.
    pub fn unresponsive_flows(&self) -> u32 {
        self.tins.iter().map(|b| b.unresponsive_count).sum()
    }

    /// Sparse, bulk and decaying queues, all tins.
    pub fn flow_counts(&self) -> (u32, u32, u32) {
        self.tins.iter().fold((0, 0, 0), |(s, b, d), t| {
            (s + t.sparse_count, b + t.bulk_count, d + t.decaying_count)
        })
    }

    /// Bytes queued in tin `tin`.
    pub fn tin_bytes(&self, tin: usize) -> u64 {
        self.tins[tin].bytes
    }

    /// Set-associative lookups, all tins: tagged hits, idle queues taken, collisions.
    pub fn way_counts(&self) -> (u64, u64, u64) {
        self.tins.iter().fold((0, 0, 0), |(h, m, c), b| {
            (h + b.t.way_hits, m + b.t.way_misses, c + b.t.way_collisions)
        })
    }

    /// The hosts `flow` was given, if any. Out of line: the per-packet path of a
    /// run that names no host stays as small as before.
    #[inline(never)]
    fn named_hosts(&self, flow: FlowId) -> Option<(u32, u32)> {
        let i = self.hosts.binary_search_by_key(&flow, |h| h.0).ok()?;
        Some((self.hosts[i].1, self.hosts[i].2))
    }

    fn hashes(&self, flow: FlowId) -> hash::Hashes {
        let own = (flow.0, flow.0);
        let (src, dst) = if self.hosts.is_empty() {
            own
        } else {
            self.named_hosts(flow).unwrap_or(own)
        };
        mode_hashes(
            self.params.isolation,
            keyed_hash(self.keys[0], flow.0),
            keyed_hash(self.keys[1], src),
            keyed_hash(self.keys[2], dst),
        )
    }

    /// `cake_drop`: one packet from the head of the queue with the most bytes,
    /// in any tin. Returns whether it was the arrival (the last packet of queue
    /// `arrival` of tin `arrival_tin`).
    fn drop_from_fattest(&mut self, arrival_tin: usize, arrival: usize, ctx: &mut Ctx<'_>) -> bool {
        // Ties go to the lowest tin and queue (Linux's heap breaks them by its
        // own layout).
        let (mut tin, mut fattest, mut most) = (0, 0, 0);
        for (t, b) in self.tins.iter().enumerate() {
            if b.bytes <= most {
                continue;
            }
            // The tin's fattest queue (the first of equals), then across tins.
            let (mut i_most, mut b_most) = (0, most);
            for (i, f) in b.t.flows.iter().enumerate() {
                if f.queue.bytes() > b_most {
                    b_most = f.queue.bytes();
                    i_most = i;
                }
            }
            if b_most > most {
                (tin, fattest, most) = (t, i_most, b_most);
            }
        }
        let now = ctx.now;
        let b = &mut self.tins[tin];
        let flow = &mut b.t.flows[fattest];
        let pkt = flow.queue.pop_front().expect("a non-empty queue");
        let is_arrival = (tin, fattest) == (arrival_tin, arrival) && flow.queue.is_empty();
        if flow.cobalt.queue_full(&b.cobalt, now) {
            b.unresponsive_count += 1;
        }
        b.bytes -= pkt.size as u64;
        self.len -= 1;
        self.bytes -= pkt.size as u64;
        if self.params.ingress && self.shaper.is_some() {
            let len = self.framing.adjusted_len(pkt.size);
            let b = &mut self.tins[tin];
            b.advance(len, now);
            if let Some(s) = &mut self.shaper {
                s.advance(len, true);
            }
        }
        let reason = if is_arrival {
            DropReason::Overflow
        } else {
            DropReason::PushOut
        };
        ctx.drop(pkt, reason);
        is_arrival
    }

    /// The tin to serve, as `cake_dequeue` chooses it; none if no tin has a
    /// queue to serve.
    fn choose_tin(&mut self, now: Time) -> Option<usize> {
        if self.shaper.is_none() {
            // Unshaped: DRR over the tins by their weights.
            let cur = self.cur_tin;
            let b = &self.tins[cur];
            if b.active() {
                if b.deficit >= 0 {
                    return Some(cur);
                }
                // Fast path, exact: when every other tin is idle with a positive
                // deficit (`lone`), the loop below changes none of them (it tops
                // up only deficits <= 0 and serves only active tins) and comes
                // back round to this tin, adding its quantum each time, until
                // its deficit is >= 0 (the quantum is at least 1), leaving
                // `cur_tin` where it is.
                if self.lone {
                    let b = &mut self.tins[cur];
                    while b.deficit < 0 {
                        b.deficit += b.quantum as i32;
                    }
                    return Some(cur);
                }
            }
            let n = self.tins.len();
            let (mut wrapped, mut empty) = (false, true);
            loop {
                let b = &mut self.tins[self.cur_tin];
                if b.deficit >= 0 && b.active() {
                    let cur = self.cur_tin;
                    self.lone = self
                        .tins
                        .iter()
                        .enumerate()
                        .all(|(t, o)| t == cur || (o.deficit > 0 && !o.active()));
                    return Some(cur);
                }
                if b.deficit <= 0 {
                    b.deficit += b.quantum as i32;
                }
                if b.active() {
                    empty = false;
                }
                self.cur_tin += 1;
                if self.cur_tin >= n {
                    self.cur_tin = 0;
                    if wrapped && empty {
                        self.lone = false;
                        return None;
                    }
                    wrapped = true;
                }
            }
        }
        // Shaped: the highest tin within its threshold, else the tin that
        // will be soonest (the later tin on a tie).
        let mut best: Option<(usize, Time)> = None;
        for (t, b) in self.tins.iter().enumerate() {
            if !b.active() {
                continue;
            }
            match best {
                Some((_, at)) if b.time_next > now && b.time_next > at => {}
                _ => best = Some((t, b.time_next.max(now))),
            }
        }
        let (tin, _) = best?;
        self.cur_tin = tin;
        Some(tin)
    }
}

impl Qdisc for Cake {
    fn enqueue(&mut self, mut pkt: Packet, ctx: &mut Ctx<'_>) -> Verdict {
        let mode = self.params.isolation;
        let tin = self.tin_of[(pkt.dscp & 63) as usize] as usize;
        if self.params.wash {
            pkt.dscp = 0;
        }
        let h = self.hashes(pkt.flow);
        let now = ctx.now;
        if self.len == 0 {
            if let Some(s) = &mut self.shaper {
                s.restart_if_stale(now);
            }
        }
        if tin != self.cur_tin {
            self.lone = false;
        }
        let shaped = self.shaper.is_some();
        let b = &mut self.tins[tin];
        let q = b.t.classify(mode, h);
        // An idle tin's threshold schedule restarts from now (only a shaper
        // reads it).
        if shaped && b.bytes == 0 && b.time_next < now {
            b.time_next = now;
        }
        b.t.flows[q].queue.push_back(pkt);
        b.bytes += pkt.size as u64;
        self.len += 1;
        self.bytes += pkt.size as u64;
        match b.t.flows[q].set {
            FlowSet::None | FlowSet::Decaying => {
                if b.t.flows[q].set == FlowSet::None {
                    b.new_flows.push_back(q as u16);
                } else {
                    b.decaying_count -= 1;
                    let at = b.decaying_flows.iter().position(|&x| x as usize == q);
                    // A decaying queue may sit on the old list (served once).
                    match at {
                        Some(i) => {
                            b.decaying_flows.remove(i);
                        }
                        None => {
                            let i = b.old_flows.iter().position(|&x| x as usize == q);
                            b.old_flows.remove(i.expect("a scheduled queue"));
                        }
                    }
                    b.new_flows.push_back(q as u16);
                }
                b.t.flows[q].set = FlowSet::Sparse;
                b.sparse_count += 1;
                b.t.flows[q].deficit = b.quantum(mode, q, ctx);
            }
            FlowSet::SparseWait => {
                b.t.flows[q].set = FlowSet::Bulk;
                b.sparse_count -= 1;
                b.bulk_count += 1;
                b.t.bulk_inc(mode, q);
            }
            FlowSet::Sparse | FlowSet::Bulk => {}
        }
        let mut arrival_dropped = false;
        while self.bytes > self.buffer_limit || self.len > self.params.limit as usize {
            arrival_dropped |= self.drop_from_fattest(tin, q, ctx);
        }
        if arrival_dropped {
            Verdict::Dropped
        } else {
            Verdict::Queued
        }
    }

    fn dequeue(&mut self, ctx: &mut Ctx<'_>) -> Option<Packet> {
        let now = ctx.now;
        let mode = self.params.isolation;
        let mut first = true;
        self.wake = None;
        'begin: loop {
            if self.len == 0 {
                return None;
            }
            if let Some(at) = self.shaper.as_ref().and_then(|s| s.throttled(now)) {
                self.wake = Some(at);
                return None;
            }
            let Some(tin) = self.choose_tin(now) else {
                debug_assert!(false, "packets queued but no tin active");
                return None;
            };
            'retry: loop {
                let Some((from, q)) = self.tins[tin].next_queue(mode, &mut first, ctx) else {
                    debug_assert!(false, "packets queued but no queue scheduled");
                    return None;
                };
                // One borrow of the tin and the fields the loop needs, so the
                // per-packet path indexes the tin once.
                let Cake {
                    tins,
                    len: held,
                    bytes: held_bytes,
                    shaper,
                    framing,
                    params,
                    ..
                } = self;
                let b = &mut tins[tin];
                loop {
                    let flow = &mut b.t.flows[q];
                    let Some(mut pkt) = flow.queue.pop_front() else {
                        b.on_empty(mode, q, from, now);
                        // 'begin, exactly, without its set-up: nothing queued
                        // returns none; unshaped, `choose_tin` returns this
                        // tin, changing nothing, while it is active with a
                        // deficit >= 0 (and `first` is already false).
                        if *held == 0 {
                            return None;
                        }
                        if shaper.is_none() && b.active() && b.deficit >= 0 {
                            continue 'retry;
                        }
                        continue 'begin;
                    };
                    b.bytes -= pkt.size as u64;
                    *held -= 1;
                    *held_bytes -= pkt.size as u64;
                    let bulk = if params.ingress { b.bulk_count } else { 0 };
                    let reason = flow.cobalt_verdict(&b.cobalt, &mut pkt, bulk, ctx);
                    let len = framing.adjusted_len(pkt.size);
                    let Some(reason) = reason else {
                        flow.deficit -= len as i32;
                        b.charge(shaper, len, false, now);
                        return Some(pkt);
                    };
                    if params.ingress {
                        flow.deficit -= len as i32;
                        b.charge(shaper, len, true, now);
                        ctx.drop(pkt, reason);
                        continue 'retry;
                    }
                    ctx.drop(pkt, reason);
                }
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
    fn wake_at(&self) -> Option<Time> {
        self.wake
    }
}

impl crate::table_bytes::TableBytes for CakeParams {
    /// 1024 flow queues, their tags and 1024 host slots per tin: fixed, as
    /// Linux's (which allocates all eight tins whatever the mode).
    fn table_bytes(&self, _: &LinkInfo) -> Option<crate::table_bytes::KeyedTable> {
        use crate::table_bytes::vec_bytes;
        let n = QUEUES as u64;
        let tins = self.diffserv.tins() as u64;
        Some(crate::table_bytes::KeyedTable {
            key: "kind",
            value: format!("cake ({tins} tins of 1024 queues and host slots, fixed)"),
            bytes: tins * (vec_bytes::<Flow>(n) + vec_bytes::<u32>(n) + vec_bytes::<Host>(n)),
        })
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tin_tests;
