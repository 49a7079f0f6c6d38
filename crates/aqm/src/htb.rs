//! HTB (Devera; Linux's sch_htb): a tree of classes, each with a rate and a
//! ceil token bucket. A leaf under its rate sends; over it, it borrows from
//! the nearest ancestor under its own rate, never past any ceil on the path.
//! Leaves are served from the lowest level (leaves sending at their own rate
//! first, then borrowers from the nearest ancestor) and by `prio` within a
//! level, with DRR by `quantum` among leaves of one level and prio.
//!
//! Only leaves hold packets, each in a qdisc of any kind; packets no filter
//! and no `default` place go to the direct queue, sent ahead of every class
//! and unshaped, as Linux does. Not work-conserving: with packets waiting and
//! no class allowed to send, `dequeue` returns `None` and [`Qdisc::wake_at`]
//! says when one may.
//!
//! Modes are computed from the buckets at each dequeue rather than kept in
//! Linux's event queue and feed trees: the same modes at the same instants,
//! found by a scan over the classes (trees have tens). Where aqmlab differs
//! from Linux (no hysteresis, one DRR round per level and prio rather than one
//! per inner class, no `mpu`/`overhead`): `docs/qdiscs.md`, "HTB".

use crate::any::QdiscSpec;
use crate::drop_reason::DropReason;
use crate::packet::Packet;
use crate::parts::fifo::PacketFifo;
use crate::parts::params::qdisc_params;
use crate::parts::tree::{
    self, build_leaf, leaf_link, leaf_spec, parse_class, parse_classid, parse_handle,
    validate_leaf, ClassId, CompiledFilter, Filter, FlowGroups,
};
use crate::qdisc::{check, Ctx, Limit, LinkInfo, ParamError, Qdisc, QdiscParams, Verdict};
use crate::time::{Dur, Time};
use crate::units::Rate;
use crate::AnyQdisc;
use serde::{Deserialize, Serialize};

/// Linux's `TC_HTB_MAXDEPTH`: levels 0 (leaves) to 7 (classes at the root).
pub const MAXDEPTH: usize = 8;
/// Linux's `TC_HTB_NUMPRIO`: `prio` 0..=7.
pub const NUMPRIO: usize = 8;
/// `mtu` that tc adds to the default burst (q_htb.c: `mtu = 1600`).
const TC_MTU: u64 = 1600;
/// `get_hz()` on a kernel with high-resolution timers: /proc/net/psched's
/// fourth field, NSEC_PER_SEC / hrtimer_resolution = 10^9, so the default
/// burst is `rate / 10^9 + 1600` bytes.
const TC_HZ: u64 = 1_000_000_000;
/// Linux's `cl->mbuffer`: how far below zero a bucket may go, and the longest
/// idle time credited (60 s).
const MBUFFER: i64 = 60_000_000_000;

qdisc_params! {
    /// HTB parameters: the qdisc's keys and its classes.
    pub struct HtbParams {
        /// The qdisc's handle `M:`; every classid is `M:N`.
        handle: String = "1:".into(),
        /// The leaf class unclassified packets go to; absent: the direct queue.
        #[serde(skip_serializing_if = "Option::is_none")]
        default: Option<String> = None,
        /// A class's default quantum is its rate in bytes/s over this (Linux: 10).
        r2q: u32 = 10,
        /// The direct queue's capacity and the default leaf pfifo's limit
        /// (Linux: the device's txqueuelen, 1000).
        direct_qlen: u32 = 1000,
        /// The most packets the whole tree holds (aqmlab's, not Linux's: the
        /// registry needs every kind's bound; an arrival past it is dropped).
        limit: u32 = 10_000,
        /// The classes, in the order their filters are tried.
        class: Vec<HtbClass> = Vec::new(),
    }
}

/// One HTB class, as `tc class add ... htb` describes it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HtbClass {
    /// `M:N`, M the qdisc's major.
    pub classid: String,
    /// The parent class; absent or the qdisc's handle: a class at the root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// The rate the class is guaranteed.
    pub rate: Rate,
    /// The most it may send, borrowing included; default `rate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ceil: Option<Rate>,
    /// Bytes the rate bucket holds; default as tc: rate / get_hz() + 1600.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst: Option<u64>,
    /// Bytes the ceil bucket holds; default likewise from `ceil`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cburst: Option<u64>,
    /// 0..=7, lower is served first.
    #[serde(default)]
    pub prio: u8,
    /// DRR quantum in bytes; default rate(bytes/s) / r2q within 1000..=200000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantum: Option<u32>,
    /// The leaf's qdisc; absent: pfifo of `direct_qlen` packets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qdisc: Option<Box<QdiscSpec>>,
    /// Which packets the class takes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<Filter>,
}

impl HtbClass {
    /// A class of `rate` (ceil the same) at the root, everything else default.
    pub fn new(classid: &str, rate: Rate) -> Self {
        HtbClass {
            classid: classid.into(),
            parent: None,
            rate,
            ceil: None,
            burst: None,
            cburst: None,
            prio: 0,
            quantum: None,
            qdisc: None,
            filter: None,
        }
    }
    fn ceil(&self) -> Rate {
        self.ceil.unwrap_or(self.rate)
    }
    fn burst(&self) -> u64 {
        self.burst.unwrap_or(self.rate.bps() / 8 / TC_HZ + TC_MTU)
    }
    fn cburst(&self) -> u64 {
        self.cburst
            .unwrap_or(self.ceil().bps() / 8 / TC_HZ + TC_MTU)
    }
    /// sch_htb's `htb_change_class`: rate / r2q, raised to 1000 and cut to
    /// 200000 when not given.
    fn quantum(&self, r2q: u32) -> u32 {
        self.quantum.unwrap_or_else(|| {
            let q = self.rate.bps() / 8 / r2q as u64;
            q.clamp(1000, 200_000) as u32
        })
    }
}

/// The tree as indices: each class's parent, depth and whether it has children.
struct Shape {
    ids: Vec<ClassId>,
    parent: Vec<Option<usize>>,
    depth: Vec<usize>,
    inner: Vec<bool>,
    default: Option<usize>,
}

impl HtbParams {
    /// Parses the ids and links the tree, with every structural check.
    fn shape(&self) -> Result<Shape, ParamError> {
        let major = parse_handle(&self.handle)?;
        let mut ids = Vec::with_capacity(self.class.len());
        for c in &self.class {
            let id = parse_class(&c.classid, major)?;
            if ids.contains(&id) {
                return Err(ParamError::new("classid", &c.classid, "is given twice"));
            }
            ids.push(id);
        }
        let mut parent = Vec::with_capacity(ids.len());
        for c in &self.class {
            let p = match c.parent.as_deref() {
                None => None,
                Some(text) => match parse_classid(text) {
                    Some(id) if id == major << 16 => None,
                    Some(id) if ids.contains(&id) => ids.iter().position(|&i| i == id),
                    _ => {
                        return Err(ParamError::new(
                            "parent",
                            text,
                            format!("(class {}) does not exist", c.classid),
                        ))
                    }
                },
            };
            parent.push(p);
        }
        let n = ids.len();
        let mut inner = vec![false; n];
        let mut depth = Vec::with_capacity(n);
        for (i, c) in self.class.iter().enumerate() {
            let (mut at, mut d) = (i, 0);
            while let Some(p) = parent[at] {
                inner[p] = true;
                d += 1;
                at = p;
                if d > n {
                    return Err(ParamError::new(
                        "parent",
                        c.parent.as_deref().unwrap_or_default(),
                        format!("(class {}) makes a cycle", c.classid),
                    ));
                }
            }
            if d >= MAXDEPTH {
                return Err(ParamError::new(
                    "parent",
                    c.parent.as_deref().unwrap_or_default(),
                    format!(
                        "(class {}) is deeper than HTB's {MAXDEPTH} levels (TC_HTB_MAXDEPTH)",
                        c.classid
                    ),
                ));
            }
            depth.push(d);
        }
        let default = match &self.default {
            None => None,
            Some(text) => {
                let at = parse_classid(text).and_then(|id| ids.iter().position(|&i| i == id));
                match at {
                    Some(i) if !inner[i] => Some(i),
                    _ => {
                        return Err(ParamError::new("default", text, "names no leaf class"));
                    }
                }
            }
        };
        Ok(Shape {
            ids,
            parent,
            depth,
            inner,
            default,
        })
    }

    /// Legal trees that do not do what they seem to: children whose rates sum
    /// above their parent's ceil (Linux accepts them; the rates cannot all be
    /// met). Empty when the tree does not link.
    pub fn warnings(&self) -> Vec<String> {
        let Ok(shape) = self.shape() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (i, c) in self.class.iter().enumerate() {
            let sum: u64 = (0..self.class.len())
                .filter(|&j| shape.parent[j] == Some(i))
                .map(|j| self.class[j].rate.bps())
                .sum();
            if shape.inner[i] && sum > c.ceil().bps() {
                out.push(format!(
                    "class {}: children's rates ({}) exceed its ceil ({})",
                    c.classid,
                    Rate::from_bps(sum),
                    c.ceil()
                ));
            }
        }
        out
    }
}

impl QdiscParams for HtbParams {
    type Qdisc = Htb;
    fn validate(&self) -> Result<(), ParamError> {
        check::limit("limit", self.limit)?;
        check::limit("direct_qlen", self.direct_qlen)?;
        check::at_least("r2q", self.r2q, 1)?;
        let shape = self.shape()?;
        for (i, c) in self.class.iter().enumerate() {
            let at = |rule: &str| format!("(class {}) {rule}", c.classid);
            if c.rate.bps() == 0 {
                return Err(ParamError::new("rate", c.rate, at("must be positive")));
            }
            if c.ceil() < c.rate {
                return Err(ParamError::new(
                    "ceil",
                    c.ceil(),
                    at(&format!("must be at least rate = {}", c.rate)),
                ));
            }
            if c.prio as usize >= NUMPRIO {
                return Err(ParamError::new("prio", c.prio, at("must be 0..=7")));
            }
            if c.burst() == 0 {
                return Err(ParamError::new("burst", 0, at("must be positive")));
            }
            if c.cburst() == 0 {
                return Err(ParamError::new("cburst", 0, at("must be positive")));
            }
            if c.quantum == Some(0) {
                return Err(ParamError::new("quantum", 0, at("must be positive")));
            }
            if shape.inner[i] {
                let rule = at("is on a class with children: only leaves hold packets");
                if let Some(q) = &c.qdisc {
                    return Err(ParamError::new("qdisc", q.kind(), rule));
                }
                if c.filter.is_some() {
                    return Err(ParamError::new("filter", "{...}", rule));
                }
            }
            if let Some(f) = &c.filter {
                f.validate(&c.classid)?;
            }
            if let Some(q) = &c.qdisc {
                validate_leaf(q, c.ceil(), &c.classid)?;
            }
        }
        Ok(())
    }

    fn validate_on(&self, link: &LinkInfo) -> Result<(), ParamError> {
        self.validate()?;
        for c in &self.class {
            // The group names are checked where the caller knows them (a
            // scenario's link); a tc line alone does not.
            if let Some(f) = c.filter.as_ref().filter(|_| !link.groups.is_empty()) {
                f.compile(&c.classid, link.groups)?;
            }
        }
        Ok(())
    }

    fn build(&self, link: &LinkInfo) -> Result<Htb, ParamError> {
        self.validate_on(link)?;
        let shape = self.shape()?;
        let mut nodes = Vec::with_capacity(self.class.len());
        let mut leaves = Vec::new();
        let mut filters = Vec::new();
        let mut default = None;
        for (i, c) in self.class.iter().enumerate() {
            let level = if shape.inner[i] {
                (MAXDEPTH - 1 - shape.depth[i]) as u8
            } else {
                0
            };
            let (buffer, cbuffer) = (nanos(c.rate, c.burst()), nanos(c.ceil(), c.cburst()));
            nodes.push(Node {
                parent: shape.parent[i],
                level,
                rate: c.rate,
                ceil: c.ceil(),
                buffer,
                cbuffer,
                tokens: buffer,
                ctokens: cbuffer,
                t_c: Time::ZERO,
                prio: c.prio,
            });
            if shape.inner[i] {
                continue;
            }
            let spec = leaf_spec(c.qdisc.as_deref(), self.direct_qlen);
            let q = build_leaf(&spec, &leaf_link(link, c.ceil(), shape.ids[i]), &c.classid)?;
            if let Some(f) = &c.filter {
                filters.push((leaves.len(), f.compile(&c.classid, link.groups)?));
            }
            if shape.default == Some(i) {
                default = Some(leaves.len());
            }
            leaves.push(Leaf {
                class: i,
                q,
                quantum: c.quantum(self.r2q) as i64,
                deficit: [0; MAXDEPTH],
            });
        }
        let n = leaves.len();
        Ok(Htb {
            modes: vec![Mode::CanSend; nodes.len()],
            nodes,
            served: vec![None; n],
            leaves,
            filters,
            default,
            groups: FlowGroups::new(link),
            direct: PacketFifo::new(),
            direct_qlen: self.direct_qlen as usize,
            limit: self.limit,
            len: 0,
            bytes: 0,
            rr: [0; MAXDEPTH * NUMPRIO],
            wake: None,
        })
    }

    fn property_configs() -> Vec<Self> {
        examples::property_configs()
    }
}

/// `bytes` at `rate` in nanoseconds (Linux's `psched_l2t_ns`).
fn nanos(rate: Rate, bytes: u64) -> i64 {
    rate.tx_time(bytes).as_nanos().min(i64::MAX as u64) as i64
}

/// sch_htb's `enum htb_cmode`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Mode {
    /// Over its ceil: neither sends nor borrows.
    CantSend,
    /// Over its rate, under its ceil: may borrow from an ancestor.
    MayBorrow,
    /// Under its rate.
    CanSend,
}

/// A class's buckets, in nanoseconds of its rate and ceil as Linux keeps them.
#[derive(Clone, Debug)]
struct Node {
    parent: Option<usize>,
    /// 0 for leaves; inner classes MAXDEPTH - 1 - depth (7 at the root).
    level: u8,
    rate: Rate,
    ceil: Rate,
    buffer: i64,
    cbuffer: i64,
    tokens: i64,
    ctokens: i64,
    /// When the buckets were last brought up to date.
    t_c: Time,
    prio: u8,
}

impl Node {
    /// The time credited since `t_c`, at most `mbuffer`.
    fn diff(&self, now: Time) -> i64 {
        (now.saturating_since(self.t_c).as_nanos() as i64).min(MBUFFER)
    }

    /// `htb_class_mode` with `htb_hysteresis` off (Linux's default).
    fn mode(&self, now: Time) -> Mode {
        let diff = self.diff(now);
        if self.ctokens + diff < 0 {
            Mode::CantSend
        } else if self.tokens + diff >= 0 {
            Mode::CanSend
        } else {
            Mode::MayBorrow
        }
    }

    /// How long from `now` until the class stops being `CantSend`, and until
    /// it is `CanSend` (0: already).
    fn waits(&self, now: Time) -> (i64, i64) {
        let diff = self.diff(now);
        (
            (-(self.ctokens + diff)).max(0),
            (-(self.tokens + diff)).max(0),
        )
    }
}

/// `htb_accnt_tokens`: credit `toks` (already with the idle time) up to
/// `buffer`, take the packet's time, go no lower than `1 - mbuffer`.
fn account(toks: i64, buffer: i64, cost: i64) -> i64 {
    let t = toks.min(buffer) - cost;
    if t <= -MBUFFER {
        1 - MBUFFER
    } else {
        t
    }
}

/// A leaf class: its qdisc and DRR state (Linux keeps a deficit per level,
/// for the level it is served at).
#[derive(Clone, Debug)]
struct Leaf {
    class: usize,
    q: AnyQdisc,
    quantum: i64,
    deficit: [i64; MAXDEPTH],
}

/// Linux's HTB over leaves of any kind.
#[derive(Clone, Debug)]
pub struct Htb {
    nodes: Vec<Node>,
    leaves: Vec<Leaf>,
    /// Leaves with a filter, in the order written.
    filters: Vec<(usize, CompiledFilter)>,
    default: Option<usize>,
    groups: FlowGroups,
    direct: PacketFifo,
    direct_qlen: usize,
    limit: u32,
    /// Packets and bytes in the leaves and the direct queue.
    len: usize,
    bytes: u64,
    /// Scratch for a dequeue: each class's mode, each leaf's serving level.
    modes: Vec<Mode>,
    served: Vec<Option<u8>>,
    /// The DRR pointer of each (level, prio): the leaf served next.
    rr: [usize; MAXDEPTH * NUMPRIO],
    wake: Option<Time>,
}

impl Htb {
    /// The leaf a packet goes to; `None`: the direct queue.
    fn classify(&self, pkt: &Packet) -> Option<usize> {
        let group = if self.filters.is_empty() {
            None
        } else {
            self.groups.of(pkt)
        };
        self.filters
            .iter()
            .find(|(_, f)| f.matches(group, pkt.dscp))
            .map(|&(leaf, _)| leaf)
            .or(self.default)
    }

    /// The level a leaf may be served at now: its own when it can send, that
    /// of the nearest ancestor that can, through classes that may borrow.
    fn serving_level(&self, class: usize) -> Option<u8> {
        let mut at = class;
        loop {
            match self.modes[at] {
                Mode::CantSend => return None,
                Mode::CanSend => return Some(self.nodes[at].level),
                Mode::MayBorrow => at = self.nodes[at].parent?,
            }
        }
    }

    /// `htb_charge_class`: ceil tokens on the whole path; rate tokens from the
    /// lending `level` up, while the borrowers below only move their clock.
    fn charge(&mut self, class: usize, level: u8, bytes: u64, now: Time) {
        let mut at = Some(class);
        while let Some(i) = at {
            let n = &mut self.nodes[i];
            let diff = n.diff(now);
            if n.level >= level {
                n.tokens = account(n.tokens + diff, n.buffer, nanos(n.rate, bytes));
            } else {
                n.tokens += diff;
            }
            n.ctokens = account(n.ctokens + diff, n.cbuffer, nanos(n.ceil, bytes));
            n.t_c = now;
            at = n.parent;
        }
    }

    /// When a waiting leaf may next send: the earliest instant some class on
    /// its path can send with none below it over its ceil; for a leaf the tree
    /// lets send now, its own qdisc's wake-up (a shaper in the leaf).
    fn next_wake(&self, now: Time) -> Option<Time> {
        let mut best: Option<Time> = None;
        for leaf in self.leaves.iter().filter(|l| !l.q.is_empty()) {
            let (mut ceil_wait, mut wait) = (0i64, i64::MAX);
            let mut at = Some(leaf.class);
            while let Some(i) = at {
                let (c, r) = self.nodes[i].waits(now);
                ceil_wait = ceil_wait.max(c);
                wait = wait.min(ceil_wait.max(r));
                at = self.nodes[i].parent;
            }
            let t = if wait == 0 {
                match leaf.q.wake_at() {
                    Some(t) => t,
                    None => continue,
                }
            } else {
                now + Dur::from_nanos(wait as u64)
            };
            let t = t.max(now + Dur::from_nanos(1));
            best = Some(best.map_or(t, |b| b.min(t)));
        }
        best
    }

    /// Runs `op` on leaf `l`, keeping the tree's counts.
    fn on_leaf<R>(&mut self, l: usize, op: impl FnOnce(&mut AnyQdisc) -> R) -> R {
        let q = &mut self.leaves[l].q;
        let (len, bytes) = (q.len(), q.bytes());
        let r = op(q);
        self.len = self.len - len + q.len();
        self.bytes = self.bytes - bytes + q.bytes();
        r
    }
}

impl Qdisc for Htb {
    fn enqueue(&mut self, pkt: Packet, ctx: &mut Ctx<'_>) -> Verdict {
        if self.len >= self.limit as usize {
            ctx.drop(pkt, DropReason::Overflow);
            return Verdict::Dropped;
        }
        match self.classify(&pkt) {
            Some(l) => self.on_leaf(l, |q| q.enqueue(pkt, ctx)),
            None if self.direct.len() < self.direct_qlen => {
                self.len += 1;
                self.bytes += pkt.size as u64;
                self.direct.push_back(pkt);
                Verdict::Queued
            }
            None => {
                ctx.drop(pkt, DropReason::Overflow);
                Verdict::Dropped
            }
        }
    }

    fn dequeue(&mut self, ctx: &mut Ctx<'_>) -> Option<Packet> {
        self.wake = None;
        if let Some(pkt) = self.direct.pop_front() {
            self.len -= 1;
            self.bytes -= pkt.size as u64;
            return Some(pkt);
        }
        if self.len == 0 {
            return None;
        }
        let now = ctx.now;
        for (m, n) in self.modes.iter_mut().zip(&self.nodes) {
            *m = n.mode(now);
        }
        // Which (level, prio) rows have a leaf to serve, lowest first.
        let mut rows = 0u64;
        for l in 0..self.leaves.len() {
            let leaf = &self.leaves[l];
            self.served[l] = if leaf.q.is_empty() {
                None
            } else {
                self.serving_level(leaf.class)
            };
            if let Some(level) = self.served[l] {
                rows |= 1 << (level as usize * NUMPRIO + self.nodes[leaf.class].prio as usize);
            }
        }
        let n = self.leaves.len();
        while rows != 0 {
            let row = rows.trailing_zeros() as usize;
            rows &= rows - 1;
            let (level, prio) = ((row / NUMPRIO) as u8, (row % NUMPRIO) as u8);
            let start = self.rr[row];
            for k in 0..n {
                let l = (start + k) % n;
                let class = self.leaves[l].class;
                if self.served[l] != Some(level) || self.nodes[class].prio != prio {
                    continue;
                }
                let Some(pkt) = self.on_leaf(l, |q| q.dequeue(ctx)) else {
                    // A leaf that holds its packets (a shaper's): the next one.
                    self.rr[row] = (l + 1) % n;
                    continue;
                };
                let leaf = &mut self.leaves[l];
                let deficit = &mut leaf.deficit[level as usize];
                *deficit -= pkt.size as i64;
                self.rr[row] = l;
                if *deficit < 0 {
                    *deficit += leaf.quantum;
                    self.rr[row] = (l + 1) % n;
                }
                self.charge(class, level, pkt.size as u64, now);
                return Some(pkt);
            }
        }
        self.wake = self.next_wake(now);
        None
    }

    fn len(&self) -> usize {
        self.len
    }

    fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The tree's own bound: the leaves' limits may be in packets or bytes
    /// and do not add up to one `Limit`, so the tree enforces `limit` itself.
    fn limit(&self) -> Limit {
        Limit::Packets(self.limit)
    }

    fn wake_at(&self) -> Option<Time> {
        self.wake
    }

    // The leaves' rates are their classes' ceils, not the link's: nothing to
    // forward. HTB itself shapes by its classes, whatever the link does.
}

impl crate::table_bytes::TableBytes for HtbParams {
    /// The leaves' keyed tables, added up.
    fn table_bytes(&self, link: &LinkInfo) -> Option<crate::table_bytes::KeyedTable> {
        let leaves = (self.class.iter()).filter_map(|c| Some((c.qdisc.as_deref()?, c.ceil())));
        tree::leaves_table_bytes(leaves, link, "the leaves' qdiscs")
    }
}

/// Whether a tree reads the flow table: a filter by group, or a leaf that does.
pub(crate) fn uses_flow_table(p: &HtbParams) -> bool {
    tree::reads_flow_table(
        p.class
            .iter()
            .map(|c| (c.filter.as_ref(), c.qdisc.as_deref())),
    )
}

mod examples;
#[cfg(test)]
mod tests;
