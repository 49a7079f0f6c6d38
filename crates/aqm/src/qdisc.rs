//! The contract between a queueing discipline and whoever drives it.
//!
//! After ns-3's `QueueDisc` and Linux's `Qdisc_ops`: a qdisc decides, the caller
//! counts. Every entry point gets a [`Ctx`] with the current time, the qdisc's own
//! random stream and a [`DropSink`]; a qdisc has no clock and no global RNG.
//!
//! Drops of *any* packet, the arrival or one already queued (a CHOKe victim, an LQD
//! push-out, a front drop), go to the sink with a [`DropReason`]. ECN marks go there
//! too, as marks, and are never counted as drops. [`Verdict`] only says whether the
//! arrival itself was queued.

use crate::drop_reason::DropReason;
use crate::packet::{Ecn, FlowId, Packet};
use crate::time::Time;
use crate::units::Rate;
use crate::Rng;

/// Receives every packet a qdisc drops and every packet it marks.
pub trait DropSink {
    /// `pkt` leaves the system here. Called for arrivals and for queued victims.
    fn drop(&mut self, pkt: Packet, reason: DropReason);
    /// `pkt` was CE-marked and stays in (or enters) the queue.
    fn mark(&mut self, pkt: &Packet, reason: DropReason);
}

/// A sink that only remembers: handy for tests and the queue lab.
#[derive(Debug, Default, Clone)]
pub struct VecSink {
    pub drops: Vec<(Packet, DropReason)>,
    pub marks: Vec<(Packet, DropReason)>,
}

impl DropSink for VecSink {
    fn drop(&mut self, pkt: Packet, reason: DropReason) {
        self.drops.push((pkt, reason));
    }
    fn mark(&mut self, pkt: &Packet, reason: DropReason) {
        self.marks.push((*pkt, reason));
    }
}

/// Everything a qdisc may consult besides its own state.
pub struct Ctx<'a> {
    pub now: Time,
    pub rng: &'a mut Rng,
    pub sink: &'a mut dyn DropSink,
}

impl<'a> Ctx<'a> {
    pub fn new(now: Time, rng: &'a mut Rng, sink: &'a mut dyn DropSink) -> Self {
        Ctx { now, rng, sink }
    }

    /// Hands `pkt` to the sink as dropped for `reason`.
    #[inline]
    pub fn drop(&mut self, pkt: Packet, reason: DropReason) {
        self.sink.drop(pkt, reason);
    }

    /// The one place that chooses between a CE mark and a drop: an ECN-capable
    /// packet is marked when `ecn` is on and comes back to be queued; anything else
    /// is dropped and `None` comes back.
    #[inline]
    pub fn mark_or_drop(
        &mut self,
        mut pkt: Packet,
        ecn: bool,
        reason: DropReason,
    ) -> Option<Packet> {
        if ecn && pkt.ecn.is_capable() {
            pkt.ecn = Ecn::Ce;
            self.sink.mark(&pkt, reason);
            Some(pkt)
        } else {
            self.sink.drop(pkt, reason);
            None
        }
    }

    /// A uniform draw in [0, 1).
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        rand::Rng::gen::<f64>(self.rng)
    }
}

/// What became of an arriving packet.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The arrival is in the queue (possibly CE-marked, possibly after victims were
    /// dropped to make room).
    Queued,
    /// The arrival was dropped; the sink has it.
    Dropped,
}

/// The most a qdisc will hold; a backlog above it is a bug.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Limit {
    Packets(u32),
    Bytes(u64),
}

impl Limit {
    /// Does a backlog of `packets` and `bytes` fit?
    pub const fn admits(self, packets: usize, bytes: u64) -> bool {
        match self {
            Limit::Packets(n) => packets <= n as usize,
            Limit::Bytes(b) => bytes <= b,
        }
    }
}

/// One flow routed over a link, as the engine announces it to the link's qdisc: the
/// flow, the aggregate it belongs to, its scheduling weight, and the hosts its
/// packets on this link come from and go to. Fair queueing per flow or per
/// aggregate (`wfq`, `drr`) reads weights from these, CAKE's host isolation hosts.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct FlowClass {
    pub flow: FlowId,
    /// The aggregate id, as `Packet::aggregate` carries it.
    pub aggregate: u32,
    /// The flow's weight: 1 unless its flow group sets one.
    pub weight: f64,
    /// The host the packets come from (a source address): the flow's own id
    /// unless its group names a host. A flow's ACKs come from its receiver's.
    pub src_host: u32,
    /// The host the packets go to, as `src_host` is the one they come from.
    pub dst_host: u32,
    /// The index of the flow's group in the scenario (what a qdisc tree's
    /// filters match by name); 0 unless the caller says.
    pub group: u32,
}

impl FlowClass {
    /// `flow` in `aggregate` with `weight`, a host of its own at both ends.
    pub const fn new(flow: FlowId, aggregate: u32, weight: f64) -> Self {
        FlowClass {
            flow,
            aggregate,
            weight,
            src_host: flow.0,
            dst_host: flow.0,
            group: 0,
        }
    }
}

/// What a qdisc may know about the link it feeds, to derive its constants (RED's
/// packet time while idle, BREATHe's K = C / r_limit), to key its hashes, and the
/// flows a fair queue will see with their weights.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct LinkInfo<'a> {
    pub rate: Rate,
    /// The seed a hashed qdisc (SFB, SFRED, SFQ, FQ-CoDel) keys its hashes with
    /// unless the scenario pins `hash_seed`: the engine derives one per link from
    /// the run's seed, so that a run's seed varies the hash placement as it varies
    /// every other random choice. 0 from [`LinkInfo::new`].
    pub seed: u64,
    /// The flows routed over the link; empty unless the caller announces them.
    pub flows: &'a [FlowClass],
    /// The scenario's flow group names, indexed by [`FlowClass::group`]: what a
    /// qdisc tree's filters name. Empty unless the caller announces them.
    pub groups: &'a [String],
}

impl LinkInfo<'static> {
    /// A link of `rate` with seed 0 and no flows announced.
    pub const fn new(rate: Rate) -> Self {
        LinkInfo {
            rate,
            seed: 0,
            flows: &[],
            groups: &[],
        }
    }

    /// A link of `rate` whose hashed qdiscs are keyed by `seed` unless pinned.
    pub const fn with_seed(rate: Rate, seed: u64) -> Self {
        LinkInfo {
            rate,
            seed,
            flows: &[],
            groups: &[],
        }
    }
}

impl<'a> LinkInfo<'a> {
    /// The same link with `flows` announced (the engine's flow table for this link).
    pub const fn with_flows<'b>(self, flows: &'b [FlowClass]) -> LinkInfo<'b>
    where
        'a: 'b,
    {
        LinkInfo {
            rate: self.rate,
            seed: self.seed,
            flows,
            groups: self.groups,
        }
    }

    /// The same link with the scenario's group names announced.
    pub const fn with_groups<'b>(self, groups: &'b [String]) -> LinkInfo<'b>
    where
        'a: 'b,
    {
        LinkInfo {
            rate: self.rate,
            seed: self.seed,
            flows: self.flows,
            groups,
        }
    }
}

/// A queueing discipline.
///
/// Enqueue and dequeue cannot fail: invariants are `debug_assert!`s, and parameter
/// errors were caught when the qdisc was built.
pub trait Qdisc {
    /// Offers an arriving packet. Any packet dropped or marked along the way,
    /// including the arrival, is reported to `ctx.sink`.
    fn enqueue(&mut self, pkt: Packet, ctx: &mut Ctx<'_>) -> Verdict;
    /// Takes the next packet to transmit, if any. May drop packets (CoDel) through
    /// the sink before returning one.
    fn dequeue(&mut self, ctx: &mut Ctx<'_>) -> Option<Packet>;
    /// Packets queued.
    fn len(&self) -> usize;
    /// Bytes queued.
    fn bytes(&self) -> u64;
    /// The backlog bound that enqueue enforces.
    fn limit(&self) -> Limit;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// True when an arrival at this qdisc, empty now, followed at once by a dequeue
    /// would return that same packet and change nothing but the counters: the engine
    /// may then send it straight to an idle transmitter without queueing it (see
    /// `Monitored::pass_through`). Only a plain FIFO can say so; an AQM that updates
    /// an average or a clock on every arrival must not. False unless overridden.
    fn passes_through_when_empty(&self) -> bool {
        false
    }
    /// A note for the run's results when the qdisc, as configured, did not do
    /// what its parameters suggest (BREATHe whose heavy-hitter set never evicted a
    /// flow). Read once, when results are reported; `None` unless overridden.
    fn diagnostic(&self) -> Option<String> {
        None
    }
    /// After a `dequeue` that returned `None` with packets queued (a shaper
    /// holding them for their time, as CAKE's): when to ask again. A
    /// work-conserving qdisc never does that and keeps the default `None`.
    fn wake_at(&self) -> Option<Time> {
        None
    }
    /// The link's rate is now `rate` (a link whose rate varies; `LinkInfo::rate`
    /// was its rate when the qdisc was built). A qdisc that derived a constant
    /// from the rate may follow it (RED's idle-time decay); ignored unless
    /// overridden.
    fn set_link_rate(&mut self, rate: Rate) {
        let _ = rate;
    }
}

/// What the registry needs of a qdisc's parameters besides serde and `Default`.
pub trait QdiscParams: Sized {
    /// The qdisc these parameters build.
    type Qdisc: Qdisc;
    /// Every check [`QdiscParams::build`] makes of the parameters alone, without
    /// building anything (a scenario's validation calls it through the registry).
    fn validate(&self) -> Result<(), ParamError>;
    /// The checks that need the link as well (BREATHe's K = link rate /
    /// `rate_limit`): when this passes, `build` on a link of the same rate
    /// succeeds. The parameters' own checks unless overridden.
    fn validate_on(&self, _link: &LinkInfo) -> Result<(), ParamError> {
        self.validate()
    }
    /// Validates the parameters and builds the qdisc for a link.
    fn build(&self, link: &LinkInfo) -> Result<Self::Qdisc, ParamError>;
    /// Configurations for the property tests (`tests/properties.rs`) besides the
    /// defaults, which are always run: small ones that overflow often and reach
    /// every option, so conservation, bounds and replay are checked on every path.
    fn property_configs() -> Vec<Self>;
}

/// A parameter that failed validation: names the key, the value and the rule, as in
/// `min_th = 200 must be below max_th = 100`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamError {
    pub key: &'static str,
    pub value: String,
    pub rule: String,
}

impl ParamError {
    pub fn new(key: &'static str, value: impl ToString, rule: impl Into<String>) -> Self {
        ParamError {
            key,
            value: value.to_string(),
            rule: rule.into(),
        }
    }
}

impl std::fmt::Display for ParamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} = {} {}", self.key, self.value, self.rule)
    }
}

impl std::error::Error for ParamError {}

/// Checks shared by many `Params::validate`s.
pub mod check {
    use super::ParamError;

    /// The most packets a queue may be given room for, 2^24: queued packets are
    /// held in memory (about 40 bytes each, so a full queue of this size takes
    /// 640 MiB), and a typo such as `limit = 4294967295` must be an error, not an
    /// abort when the memory runs out.
    pub const MAX_LIMIT: u32 = 1 << 24;

    /// A queue's capacity in packets: at least 1, at most [`MAX_LIMIT`].
    pub fn limit(key: &'static str, v: u32) -> Result<(), ParamError> {
        at_least(key, v, 1)?;
        if v > MAX_LIMIT {
            return Err(ParamError::new(
                key,
                v,
                format!(
                    "must be at most {MAX_LIMIT} packets (2^24): queued packets are held in \
                     memory, about 40 bytes each"
                ),
            ));
        }
        Ok(())
    }

    /// A number, not NaN or infinite (TOML accepts `nan` and `inf`).
    pub fn finite(key: &'static str, v: f64) -> Result<(), ParamError> {
        if v.is_finite() {
            Ok(())
        } else {
            Err(ParamError::new(key, v, "must be a finite number"))
        }
    }

    pub fn positive(key: &'static str, v: f64) -> Result<(), ParamError> {
        finite(key, v)?;
        if v > 0.0 {
            Ok(())
        } else {
            Err(ParamError::new(key, v, "must be positive"))
        }
    }
    pub fn probability(key: &'static str, v: f64) -> Result<(), ParamError> {
        if (0.0..=1.0).contains(&v) {
            Ok(())
        } else {
            Err(ParamError::new(key, v, "must be a probability in [0, 1]"))
        }
    }
    pub fn at_least<T: PartialOrd + std::fmt::Display>(
        key: &'static str,
        v: T,
        min: T,
    ) -> Result<(), ParamError> {
        if v >= min {
            Ok(())
        } else {
            Err(ParamError::new(key, &v, format!("must be at least {min}")))
        }
    }
    pub fn below(key: &'static str, v: f64, other_key: &str, other: f64) -> Result<(), ParamError> {
        if v < other {
            Ok(())
        } else {
            Err(ParamError::new(
                key,
                v,
                format!("must be below {other_key} = {other}"),
            ))
        }
    }
}
