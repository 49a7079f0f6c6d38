//! The fair-queueing family: per-flow or per-aggregate queues in one shared buffer,
//! a scheduler that decides who sends (`wfq`, `drr`) and a buffer manager that
//! decides who is dropped (Sun & Shin, *TCP Performance under Aggregate Fair
//! Queueing*, seed 003; Suter et al., INFOCOM 1998).
//!
//! ## Map
//! - [`FairQueue`]: the qdisc, generic over its [`Scheduler`]; it owns the class
//!   table and the buffer manager and carries out their decisions. `wfq::Wfq` and
//!   `drr::Drr` are `FairQueue`s of the two schedulers.
//! - [`FqParams`]: the parameters both kinds share (`classify`, `weights`, `limit`,
//!   `buffer` and the buffer managers' keys, DRR's `quantum`), validated per kind.
//! - [`classes`]: the class table (classification, weights from the announced
//!   flows, the queues, the backlogged weight that fair shares divide by).
//! - [`manager`]: the scheduler / buffer-manager interface ([`manager::Admit`],
//!   [`manager::BufferManager`]), which every manager implements.
//! - [`buffer`]: the `buffer` key and [`buffer::Buffer`], the static dispatch
//!   over the managers (it names them; they name only [`manager`]).
//! - Buffer managers, one file each: [`droptail`], [`dropfront`], [`lqd`],
//!   [`alqd`], [`alqd_plus`].
//! - Parts: [`heap`] (an indexed 4-ary heap: WFQ's tags, LQD's lengths) and
//!   [`register`] (ALQD's longest-queue register, shared by ALQD and ALQD+).

pub mod alqd;
pub mod alqd_plus;
pub mod buffer;
pub mod classes;
pub mod dropfront;
pub mod droptail;
pub mod heap;
pub mod lqd;
pub mod manager;
pub mod register;

use crate::packet::Packet;
use crate::qdisc::{check, Ctx, Limit, LinkInfo, ParamError, Qdisc, Verdict};
use crate::time::{Dur, Time};
use alqd_plus::AlqdPlusConfig;
use buffer::{Buffer, BufferKind};
use classes::{ClassId, Classes, Classify};
use manager::{Admit, BufferManager};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Parameters of `kind = "wfq"` and `kind = "drr"`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FqParams {
    /// One queue per flow or per aggregate. Default `"flow"`.
    pub classify: Classify,
    /// Aggregate id -> weight, replacing the sum of the aggregate's flows' weights
    /// (`classify = "aggregate"` only). Default empty.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub weights: BTreeMap<String, f64>,
    /// The shared buffer, in packets. Default 1000 (as `droptail`).
    pub limit: u32,
    /// The buffer manager. Default `"lqd"` (Suter et al.'s choice for FQ).
    pub buffer: BufferKind,
    /// DRR's bytes per round at weight 1 (`drr` only). Default 1514 (Linux).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quantum: Option<u32>,
    /// `dropfront` only: WFQ tags only the head and a dropped head keeps the
    /// queue's start time (Sun & Shin III). Default true.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub livelock_fix: Option<bool>,
    /// `alqd_plus`: early drops need the buffer above a% of B... Default 25.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub a: Option<f64>,
    /// `alqd_plus`: ... and the queue above b% of its share. Default 25.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub b: Option<f64>,
    /// `alqd_plus`: or, with probability d_k, the queue above c% of its share.
    /// Default 25.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub c: Option<f64>,
    /// `alqd_plus`: BLUE's delta on loss. Default 0.01 (Sun & Shin V).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub increment: Option<f64>,
    /// `alqd_plus`: BLUE's delta on an emptied queue. Default 0.01 (Sun & Shin V).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decrement: Option<f64>,
    /// `alqd_plus`: least time between two changes of d_k. Default 50ms (V).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub freeze_time: Option<Dur>,
}

impl Default for FqParams {
    fn default() -> Self {
        FqParams {
            classify: Classify::Flow,
            weights: BTreeMap::new(),
            limit: 1000,
            buffer: BufferKind::Lqd,
            quantum: None,
            livelock_fix: None,
            a: None,
            b: None,
            c: None,
            increment: None,
            decrement: None,
            freeze_time: None,
        }
    }
}

/// Defaults of the optional keys, in one place.
pub const DEFAULT_QUANTUM: u32 = 1514;
pub const DEFAULT_ABC: f64 = 25.0;
pub const DEFAULT_DELTA: f64 = 0.01;
pub const DEFAULT_FREEZE: Dur = Dur::from_millis(50);

/// Which scheduler the parameters are for: some keys belong to one only.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SchedulerKind {
    Wfq,
    Drr,
}

impl SchedulerKind {
    pub const fn name(self) -> &'static str {
        match self {
            SchedulerKind::Wfq => "wfq",
            SchedulerKind::Drr => "drr",
        }
    }
}

/// Small configurations of `kind` for the property tests: every buffer manager,
/// per flow and per aggregate, weights that differ from the flow counts, and the
/// keys that belong to one scheduler only.
pub fn property_configs(kind: SchedulerKind) -> Vec<FqParams> {
    let small = |classify, buffer| FqParams {
        classify,
        buffer,
        limit: 8,
        ..FqParams::default()
    };
    let weights = |pairs: &[(&str, f64)]| {
        pairs
            .iter()
            .map(|(k, w)| (k.to_string(), *w))
            .collect::<BTreeMap<_, _>>()
    };
    let alqd_plus = FqParams {
        limit: 10,
        freeze_time: Some(Dur::from_millis(1)),
        increment: Some(0.2),
        ..small(Classify::Aggregate, BufferKind::AlqdPlus)
    };
    match kind {
        SchedulerKind::Wfq => vec![
            small(Classify::Flow, BufferKind::Droptail),
            FqParams {
                livelock_fix: Some(false),
                ..small(Classify::Flow, BufferKind::Dropfront)
            },
            small(Classify::Aggregate, BufferKind::Dropfront),
            FqParams {
                weights: weights(&[("1", 0.5), ("3", 4.0)]),
                ..small(Classify::Aggregate, BufferKind::Lqd)
            },
            small(Classify::Flow, BufferKind::Alqd),
            alqd_plus,
        ],
        SchedulerKind::Drr => vec![
            FqParams {
                quantum: Some(300),
                ..small(Classify::Flow, BufferKind::Droptail)
            },
            FqParams {
                quantum: Some(500),
                ..small(Classify::Aggregate, BufferKind::Dropfront)
            },
            small(Classify::Aggregate, BufferKind::Lqd),
            FqParams {
                quantum: Some(100),
                ..small(Classify::Flow, BufferKind::Alqd)
            },
            FqParams {
                weights: weights(&[("0", 3.0)]),
                a: Some(10.0),
                b: Some(50.0),
                c: Some(0.0),
                decrement: Some(0.1),
                increment: Some(0.5),
                ..alqd_plus
            },
        ],
    }
}

/// What validation derives from [`FqParams`].
#[derive(Clone, Debug)]
pub struct Validated {
    /// The `weights` table, keys parsed, in key order.
    pub overrides: Vec<(u32, f64)>,
    pub alqd_plus: AlqdPlusConfig,
}

fn percent(key: &'static str, v: f64, at_most_100: bool) -> Result<f64, ParamError> {
    if !(v >= 0.0 && v.is_finite()) {
        return Err(ParamError::new(key, v, "must be a percentage, 0 or more"));
    }
    if at_most_100 && v > 100.0 {
        return Err(ParamError::new(
            key,
            v,
            "must be at most 100 (a percentage of the buffer)",
        ));
    }
    Ok(v / 100.0)
}

fn step(key: &'static str, v: f64) -> Result<f64, ParamError> {
    if v > 0.0 && v <= 1.0 {
        Ok(v)
    } else {
        Err(ParamError::new(key, v, "must be in (0, 1]"))
    }
}

impl FqParams {
    /// Whether WFQ should tag every packet at arrival (the livelock of Sun & Shin
    /// III): only for `buffer = "dropfront"` with `livelock_fix = false`.
    pub fn tags_every_packet(&self) -> bool {
        self.buffer == BufferKind::Dropfront && self.livelock_fix == Some(false)
    }

    /// DRR's quantum at weight 1.
    pub fn quantum(&self) -> u32 {
        self.quantum.unwrap_or(DEFAULT_QUANTUM)
    }

    pub fn validate(&self, kind: SchedulerKind) -> Result<Validated, ParamError> {
        check::limit("limit", self.limit)?;
        match (kind, self.quantum) {
            (SchedulerKind::Wfq, Some(q)) => {
                return Err(ParamError::new(
                    "quantum",
                    q,
                    "applies to kind = \"drr\" only (wfq has no quantum)",
                ))
            }
            (SchedulerKind::Drr, Some(q)) => check::at_least("quantum", q, 1)?,
            _ => {}
        }
        let overrides = self.parse_weights()?;
        let buffer = self.buffer.name();
        let only = |key: &'static str, set: bool, owner: BufferKind| {
            if set && self.buffer != owner {
                Err(ParamError::new(
                    key,
                    "(set)",
                    format!(
                        "applies to buffer = \"{}\" only, not buffer = \"{buffer}\"",
                        owner.name()
                    ),
                ))
            } else {
                Ok(())
            }
        };
        only(
            "livelock_fix",
            self.livelock_fix.is_some(),
            BufferKind::Dropfront,
        )?;
        if let (SchedulerKind::Drr, Some(fix)) = (kind, self.livelock_fix) {
            return Err(ParamError::new(
                "livelock_fix",
                fix,
                "applies to kind = \"wfq\" only: the livelock is in WFQ's virtual-time \
                 tags, and drr has none",
            ));
        }
        let p = BufferKind::AlqdPlus;
        only("a", self.a.is_some(), p)?;
        only("b", self.b.is_some(), p)?;
        only("c", self.c.is_some(), p)?;
        only("increment", self.increment.is_some(), p)?;
        only("decrement", self.decrement.is_some(), p)?;
        only("freeze_time", self.freeze_time.is_some(), p)?;
        let freeze_time = self.freeze_time.unwrap_or(DEFAULT_FREEZE);
        if freeze_time.is_zero() {
            return Err(ParamError::new(
                "freeze_time",
                freeze_time,
                "must be positive (Table I divides by it)",
            ));
        }
        let alqd_plus = AlqdPlusConfig {
            a: percent("a", self.a.unwrap_or(DEFAULT_ABC), true)?,
            b: percent("b", self.b.unwrap_or(DEFAULT_ABC), false)?,
            c: percent("c", self.c.unwrap_or(DEFAULT_ABC), false)?,
            increment: step("increment", self.increment.unwrap_or(DEFAULT_DELTA))?,
            decrement: step("decrement", self.decrement.unwrap_or(DEFAULT_DELTA))?,
            freeze_time,
        };
        Ok(Validated {
            overrides,
            alqd_plus,
        })
    }

    fn parse_weights(&self) -> Result<Vec<(u32, f64)>, ParamError> {
        if self.weights.is_empty() {
            return Ok(Vec::new());
        }
        let shown = || {
            let items: Vec<String> = self
                .weights
                .iter()
                .map(|(k, v)| format!("{k:?} = {v}"))
                .collect();
            format!("{{ {} }}", items.join(", "))
        };
        if self.classify != Classify::Aggregate {
            return Err(ParamError::new(
                "weights",
                shown(),
                "applies to classify = \"aggregate\" only (a flow's weight is its flow \
                 group's `weight`)",
            ));
        }
        let mut out = Vec::with_capacity(self.weights.len());
        for (k, &w) in &self.weights {
            let Ok(id) = k.trim().parse::<u32>() else {
                return Err(ParamError::new(
                    "weights",
                    shown(),
                    format!("has key {k:?}, which must be an aggregate id (a whole number)"),
                ));
            };
            if let Err(rule) = classes::weight_ok(w) {
                return Err(ParamError::new(
                    "weights",
                    shown(),
                    format!("gives aggregate {id} a weight that {rule}"),
                ));
            }
            if out.iter().any(|&(o, _)| o == id) {
                return Err(ParamError::new(
                    "weights",
                    shown(),
                    format!("names aggregate {id} twice"),
                ));
            }
            out.push((id, w));
        }
        Ok(out)
    }
}

/// A packet scheduler over the class table: what `wfq.rs` and `drr.rs` implement.
///
/// The [`FairQueue`] calls the hooks around every change it makes to a class's
/// queue, so a scheduler never touches the queues itself.
pub trait Scheduler: Sized {
    const KIND: SchedulerKind;
    fn new(params: &FqParams, link: &LinkInfo<'_>) -> Result<Self, ParamError>;
    /// What `new` requires of the link (WFQ: a positive rate).
    fn check_link(_link: &LinkInfo<'_>) -> Result<(), ParamError> {
        Ok(())
    }
    /// Class `c` was just created (perhaps in a reused slot): reset its state.
    fn created(&mut self, c: ClassId, classes: &Classes);
    /// Brings the scheduler's clock to `now` (WFQ's virtual time); called first in
    /// every enqueue and dequeue.
    fn advance(&mut self, _now: Time, _classes: &Classes) {}
    /// The link's rate is now `rate` (a varying link; WFQ's virtual time runs at
    /// it from the next `advance` on).
    fn set_link_rate(&mut self, _rate: crate::units::Rate) {}
    /// `pkt` is about to join class `c` (still at its old length).
    fn arrived(&mut self, c: ClassId, pkt: &mut Packet, classes: &Classes);
    /// Class `c`'s head `head` was just dropped, not sent; `replaced` when the
    /// arrival that caused it is about to join the same class.
    fn head_dropped(&mut self, c: ClassId, head: &Packet, replaced: bool, classes: &Classes);
    /// The class whose head is sent next.
    fn select(&mut self, classes: &Classes) -> Option<ClassId>;
    /// Class `c`'s head `pkt` was just taken to be sent.
    fn served(&mut self, c: ClassId, pkt: &Packet, classes: &Classes);
    /// Does the scheduler keep nothing for class `c` (empty) any more?
    fn idle(&self, c: ClassId) -> bool;
    /// A class that may have become idle since the last call (WFQ: left GPS).
    fn idle_candidate(&mut self) -> Option<ClassId> {
        None
    }
}

/// A fair queue: per-class queues in one buffer, a scheduler and a buffer manager.
#[derive(Debug, Clone)]
pub struct FairQueue<S> {
    params: FqParams,
    classes: Classes,
    buffer: Buffer,
    sched: S,
}

impl<S: Scheduler> FairQueue<S> {
    /// Every check `new` makes, without building: the parameters for this
    /// scheduler and what it requires of the link.
    pub fn validate(params: &FqParams, link: &LinkInfo<'_>) -> Result<(), ParamError> {
        params.validate(S::KIND)?;
        S::check_link(link)
    }

    pub fn new(params: FqParams, link: &LinkInfo<'_>) -> Result<Self, ParamError> {
        let v = params.validate(S::KIND)?;
        let classes = Classes::new(params.classify, params.limit, link, &v.overrides)?;
        Ok(FairQueue {
            buffer: Buffer::new(params.buffer, v.alqd_plus),
            sched: S::new(&params, link)?,
            classes,
            params,
        })
    }

    pub fn params(&self) -> &FqParams {
        &self.params
    }
    pub fn classes(&self) -> &Classes {
        &self.classes
    }
    pub fn buffer(&self) -> &Buffer {
        &self.buffer
    }
    pub fn scheduler(&self) -> &S {
        &self.sched
    }

    /// Packets queued for the class of `key` (a flow or aggregate id).
    pub fn class_len(&self, key: u32) -> usize {
        self.classes.find(key).map_or(0, |c| self.classes.len_of(c))
    }

    /// Gives class `c`'s slot back if it is empty and nobody keeps state for it.
    fn release_if_idle(&mut self, c: ClassId) {
        if self.classes.is_live(c)
            && self.classes.len_of(c) == 0
            && self.sched.idle(c)
            && !self.buffer.keeps(c)
        {
            self.buffer.released(c);
            self.classes.release(c);
        }
    }

    fn release_candidates(&mut self) {
        while let Some(c) = self.sched.idle_candidate() {
            self.release_if_idle(c);
        }
    }
}

impl<S: Scheduler> Qdisc for FairQueue<S> {
    fn set_link_rate(&mut self, rate: crate::units::Rate) {
        self.sched.set_link_rate(rate);
    }

    fn enqueue(&mut self, mut pkt: Packet, ctx: &mut Ctx<'_>) -> Verdict {
        self.sched.advance(ctx.now, &self.classes);
        self.release_candidates();
        let (k, created) = self.classes.lookup_or_create(&pkt);
        if created {
            self.sched.created(k, &self.classes);
            self.buffer.created(k, ctx.now);
        }
        match self.buffer.admit(&self.classes, k, &pkt, ctx) {
            Admit::Accept => {}
            Admit::DropArrival(reason) => {
                ctx.drop(pkt, reason);
                self.release_if_idle(k);
                self.release_candidates();
                return Verdict::Dropped;
            }
            Admit::DropHead { victim, reason } => {
                let Some(head) = self.classes.pop_front(victim) else {
                    debug_assert!(false, "buffer manager named an empty class");
                    ctx.drop(pkt, reason);
                    return Verdict::Dropped;
                };
                self.sched
                    .head_dropped(victim, &head, victim == k, &self.classes);
                self.buffer.changed(&self.classes, victim);
                ctx.drop(head, reason);
                if victim != k {
                    self.release_if_idle(victim);
                }
            }
        }
        self.sched.arrived(k, &mut pkt, &self.classes);
        self.classes.push(k, pkt);
        self.buffer.changed(&self.classes, k);
        self.release_candidates();
        Verdict::Queued
    }

    fn dequeue(&mut self, ctx: &mut Ctx<'_>) -> Option<Packet> {
        self.sched.advance(ctx.now, &self.classes);
        self.release_candidates();
        let c = self.sched.select(&self.classes)?;
        let pkt = self.classes.pop_front(c)?;
        self.sched.served(c, &pkt, &self.classes);
        self.buffer.changed(&self.classes, c);
        if self.classes.len_of(c) == 0 {
            self.buffer.emptied(c, ctx.now);
            self.release_if_idle(c);
        }
        self.release_candidates();
        Some(pkt)
    }

    fn len(&self) -> usize {
        self.classes.len()
    }
    fn bytes(&self) -> u64 {
        self.classes.bytes()
    }
    fn limit(&self) -> Limit {
        Limit::Packets(self.params.limit)
    }
}

#[cfg(test)]
pub(crate) mod testkit;
#[cfg(test)]
mod tests;
