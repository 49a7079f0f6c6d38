//! One direction of a point-to-point link: an egress qdisc, a transmitter, and the
//! packets propagating on the wire. Physics only: what is counted about a link is
//! kept by its observer (`observe::LinkStats`), and only for monitored links.
//!
//! Physics decides the event count: the transmitter has at most one `TxDone`
//! pending, and because the delay is fixed, packets on the wire arrive in the order
//! they left, so the wire is a ring with at most one `Arrive` pending (htsim does the
//! same); the wires of all links share one slab (`wire.rs`). Back-to-back
//! transmissions are timed from the cumulative bits of the busy period, so
//! per-packet rounding to nanoseconds never drifts. When nothing waits behind a
//! packet on a DropTail, it goes on the wire as its transmission starts and its
//! `TxDone` is deferred: most access links and a reverse bottleneck never need
//! one; and a packet bound for an idle link fed by this one alone goes on that
//! link's wire instead, with no `Arrive` between (cut-through; both in
//! `engine::forward`).

use crate::event::Deferred;
use crate::wire::{Wire, WireSlab};
use aqm::droptail::{DropTail, DropTailParams};
use aqm::{AnyQdisc, Ctx, Dur, Limit, Packet, Qdisc, Rate, Rng, Time, VecSink, Verdict};
use std::collections::HashMap;

/// A link direction: 64 bytes, one cache line, for every one of the four access
/// link directions a dumbbell has per flow (BENCHMARKS.md, "Memory per flow"). What
/// many links share (rate, delay, sending ahead) is a `Pipe` in a table; what only
/// some links use (a qdisc that holds packets, an observer) is behind one pointer
/// (`Queue`); the packet being serialized waits in the wire slab.
#[repr(align(64))]
pub struct Link {
    /// The deferred `TxDone`'s place in the event order, if it is not queued.
    pub deferred: Deferred,
    /// Start of the current busy period and bits sent in it (0: idle). In u64: 2^64
    /// bits are 3.6e16 packets of 64 bytes in one busy period, more than any run
    /// can send.
    busy_since: Time,
    busy_bits: u64,
    pub qdisc: Queue,
    /// Packets on the wire with their arrival times, oldest first.
    pub wire: Wire,
    pub from: u32,
    pub to: u32,
    /// Index of this link's `Pipe` in the network's table.
    pub pipe: u32,
    /// The transmitter: `IDLE`; `SENT_AHEAD` (the packet being serialized is on
    /// the wire already, its `TxDone` deferred in `deferred` or queued: see
    /// `engine::forward`); or the wire-slab node holding the packet being
    /// serialized, to be linked onto the wire when its last bit leaves.
    current: u32,
}

const IDLE: u32 = u32::MAX;
const SENT_AHEAD: u32 = u32::MAX - 1;

/// What links share: a dumbbell's access links take their rate and delay from
/// their group, so a handful of these serve millions of links.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Pipe {
    pub rate: Rate,
    pub delay: Dur,
    /// Whether a packet may go on the wire when its transmission starts, its
    /// `TxDone` deferred (links whose qdisc passes packets through when empty: an
    /// idle dequeue does nothing, and an observer is told the end later, as it
    /// would have been then). Set by the engine.
    pub send_ahead: bool,
    /// Whether a link that cuts through has this one as its only input, so a
    /// packet leaving it may be handed on (`engine::forward`). Set by the engine;
    /// the other links skip the look at the next hop.
    pub feeds_cut: bool,
    /// The link direction's `link_model::LinkModel` in the network's table (a rate that
    /// varies, loss, jitter), or `NO_MODEL`: a constant rate and delay, `rate` and
    /// `delay` above. A modelled link has a pipe of its own.
    pub model: u32,
}

/// `Pipe::model` of a link of constant rate and delay.
pub const NO_MODEL: u32 = u32::MAX;

/// The table of distinct pipes, each stored once.
#[derive(Default)]
pub struct Pipes {
    table: Vec<Pipe>,
    index: HashMap<Pipe, u32>,
}

impl Pipes {
    /// The index of `pipe`, added if new.
    pub fn intern(&mut self, pipe: Pipe) -> u32 {
        *self.index.entry(pipe).or_insert_with(|| {
            self.table.push(pipe);
            u32::try_from(self.table.len() - 1).expect("fewer than 2^32 pipes")
        })
    }

    #[inline]
    pub fn get(&self, i: u32) -> &Pipe {
        &self.table[i as usize]
    }
}

/// What observers read of the link directions: the links, what they share, and
/// the wire slab holding the packets being serialized.
#[derive(Copy, Clone)]
pub struct Links<'a> {
    pub links: &'a [Link],
    pub pipes: &'a Pipes,
    pub wires: &'a WireSlab,
}

impl<'a> Links<'a> {
    /// The packet link `l` is serializing at `now`, and how many of its bits have
    /// left the transmitter by then. On a modelled link (a rate that varies) none
    /// until it has left: a trace's packet leaves whole at its opportunity.
    pub fn in_progress(&self, l: usize, now: Time) -> Option<(&'a Packet, u64)> {
        let link = &self.links[l];
        let pipe = self.pipes.get(link.pipe);
        let (pkt, bits) = link.in_progress(now, pipe.rate, self.wires)?;
        Some((pkt, if pipe.model == NO_MODEL { bits } else { 0 }))
    }
}

/// A link's qdisc and its random stream, out of line: 8 bytes in the link instead
/// of 88. A dumbbell's access links (a default DropTail each) have one only while
/// packets wait in it: it is taken from a pool when a packet has to wait and goes
/// back when the last one leaves (an empty DropTail holds nothing else), so their
/// memory follows the links with a backlog, not the number of links, and no
/// packet allocates. Without one it answers as the empty DropTail it stands for.
pub struct Queue(Option<Box<QueueState>>);

/// The empty default DropTails that access links borrow while packets wait.
/// Boxed in the pool too: a link holds the same box, handed back and forth.
#[derive(Default)]
#[allow(clippy::vec_box)]
pub struct QueuePool(Vec<Box<QueueState>>);

struct QueueState {
    qdisc: AnyQdisc,
    rng: Rng,
    /// A default DropTail standing for `Queue(None)`: freed when empty.
    lazy: bool,
    /// Index of the link's observer (`NO_MONITOR`: not monitored). Here, not in
    /// the link: a monitored link keeps its queue.
    monitor: u32,
    /// Debug builds count every queue, observed or not, and check ns-3's
    /// identities after each call (the observer counts in release builds too).
    #[cfg(debug_assertions)]
    counts: aqm::QueueCounts,
    /// On a monitored link that sent its packet ahead, a copy of it until its
    /// transmission's end is told to the observer (the packet itself is on a
    /// wire, perhaps delivered already): the packet being serialized, as
    /// [`Link::in_progress`] reads it.
    held: Option<Packet>,
}

impl QueueState {
    fn new(qdisc: AnyQdisc, rng: Rng, lazy: bool) -> Box<Self> {
        Box::new(QueueState {
            qdisc,
            rng,
            lazy,
            monitor: NO_MONITOR,
            #[cfg(debug_assertions)]
            counts: aqm::QueueCounts::default(),
            held: None,
        })
    }

    /// Checks the counts after a call (debug builds).
    #[inline]
    #[track_caller]
    fn check(&self) {
        #[cfg(debug_assertions)]
        {
            let q = &self.qdisc;
            self.counts.check_within(q.len(), q.bytes(), q.limit());
        }
    }
}

const NO_MONITOR: u32 = u32::MAX;

/// The random stream of a lazily built DropTail. DropTail never draws (a FIFO has
/// no random choice), so no other stream is shifted by it and no result depends on it.
const DROPTAIL_STREAM: u64 = 0;

impl Queue {
    /// `qdisc`, drawing from `rng`.
    pub fn new(qdisc: AnyQdisc, rng: Rng) -> Self {
        Queue(Some(QueueState::new(qdisc, rng, false)))
    }

    /// A DropTail of the default parameters, built while packets wait in it.
    pub fn lazy_droptail() -> Self {
        Queue(None)
    }

    fn droptail() -> AnyQdisc {
        AnyQdisc::DropTail(DropTail::new(DropTailParams::default()).expect("valid defaults"))
    }

    /// Index of the link's observer, if it is monitored.
    #[inline]
    pub fn monitor(&self) -> Option<u32> {
        self.0
            .as_ref()
            .and_then(|q| (q.monitor != NO_MONITOR).then_some(q.monitor))
    }

    /// Monitors the link by observer `k`. A lazy DropTail becomes a kept one (the
    /// same DropTail: it never draws from its stream), so a monitored link's queue
    /// is never handed back to the pool.
    pub fn set_monitor(&mut self, k: u32) {
        assert!(k != NO_MONITOR, "fewer than 2^32 - 1 monitored links");
        let q = self.0.get_or_insert_with(|| {
            QueueState::new(
                Self::droptail(),
                aqm::rng::stream(0, DROPTAIL_STREAM),
                false,
            )
        });
        q.lazy = false;
        q.monitor = k;
    }

    /// The qdisc's `kind`.
    pub fn kind(&self) -> &'static str {
        match &self.0 {
            Some(q) => q.qdisc.kind(),
            None => Self::droptail().kind(),
        }
    }

    /// Replaces the qdisc, keeping the random stream (a rebuild with the flow table).
    pub fn rebuild(&mut self, qdisc: AnyQdisc) {
        self.0
            .as_mut()
            .expect("only built qdiscs are rebuilt")
            .qdisc = qdisc;
    }

    /// Enqueues `pkt` at `now`, stamping `enqueued_at` (the sojourn CoDel, PIE
    /// and DualPI2 read) so every caller, the engine and the emulator alike, gets
    /// it; a lazy DropTail takes one from `pool` first.
    #[inline]
    pub fn enqueue(
        &mut self,
        mut pkt: Packet,
        now: Time,
        sink: &mut VecSink,
        pool: &mut QueuePool,
    ) -> Verdict {
        let q = self.0.get_or_insert_with(|| {
            pool.0.pop().unwrap_or_else(|| {
                QueueState::new(Self::droptail(), aqm::rng::stream(0, DROPTAIL_STREAM), true)
            })
        });
        pkt.enqueued_at = now;
        #[cfg(debug_assertions)]
        let before = sink.drops.len();
        let verdict = q.qdisc.enqueue(pkt, &mut Ctx::new(now, &mut q.rng, sink));
        #[cfg(debug_assertions)]
        q.counts
            .count_enqueue(verdict, (sink.drops.len() - before) as u64);
        q.check();
        verdict
    }

    /// An arrival the engine sent straight to the idle transmitter
    /// (`passes_through_when_empty`), counted as the qdisc would have (debug
    /// builds; a lazy DropTail not taken keeps no counts).
    #[inline]
    pub fn passed_through(&mut self, pkt: &Packet) {
        #[cfg(debug_assertions)]
        if let Some(q) = &mut self.0 {
            q.counts.count_pass_through(pkt.size);
            q.check();
        }
        let _ = pkt;
    }

    /// Dequeues at `now`; a lazy DropTail left empty goes back to `pool`.
    #[inline]
    pub fn dequeue(
        &mut self,
        now: Time,
        sink: &mut VecSink,
        pool: &mut QueuePool,
    ) -> Option<Packet> {
        let q = self.0.as_deref_mut()?;
        #[cfg(debug_assertions)]
        let before = sink.drops.len();
        let pkt = q.qdisc.dequeue(&mut Ctx::new(now, &mut q.rng, sink));
        #[cfg(debug_assertions)]
        q.counts.count_dequeue(
            pkt.as_ref().map(|p| p.size),
            (sink.drops.len() - before) as u64,
        );
        q.check();
        if q.lazy && q.qdisc.is_empty() {
            pool.0.extend(self.0.take());
        }
        pkt
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |q| q.qdisc.len())
    }

    /// When a qdisc that returned nothing while holding packets (a shaper)
    /// wants to be asked again (`Qdisc::wake_at`).
    #[inline]
    pub fn wake_at(&self) -> Option<Time> {
        self.0.as_ref().and_then(|q| q.qdisc.wake_at())
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn bytes(&self) -> u64 {
        self.0.as_ref().map_or(0, |q| q.qdisc.bytes())
    }

    pub fn limit(&self) -> Limit {
        match &self.0 {
            Some(q) => q.qdisc.limit(),
            None => Self::droptail().limit(),
        }
    }

    #[inline]
    pub fn passes_through_when_empty(&self) -> bool {
        self.0
            .as_ref()
            .is_none_or(|q| q.qdisc.passes_through_when_empty())
    }

    /// Keeps a copy of `pkt`, sent ahead on a monitored link (which always has
    /// its queue), until [`Queue::take_held`].
    #[inline]
    pub fn hold(&mut self, pkt: Packet) {
        let q = self.0.as_mut().expect("a monitored link keeps its queue");
        debug_assert!(q.held.is_none(), "one packet sent ahead at a time");
        q.held = Some(pkt);
    }

    /// The copy [`Queue::hold`] kept: its transmission has ended.
    #[inline]
    pub fn take_held(&mut self) -> Option<Packet> {
        self.0.as_mut().and_then(|q| q.held.take())
    }

    fn held(&self) -> Option<&Packet> {
        self.0.as_ref().and_then(|q| q.held.as_ref())
    }

    pub fn diagnostic(&self) -> Option<String> {
        self.0.as_ref().and_then(|q| q.qdisc.diagnostic())
    }

    /// Tells the qdisc its link's rate changed (a lazy DropTail reads none).
    pub fn set_link_rate(&mut self, rate: Rate) {
        if let Some(q) = &mut self.0 {
            q.qdisc.set_link_rate(rate);
        }
    }
}

/// Nanoseconds to send `bits` at `bps`, rounded up (saturating). In u64 when the
/// product fits, which is every busy period below 18 Gbit: a u128 division is a
/// call to `__udivti3`, 2% of a run's profile. The result is the same.
///
/// Validation builds no link of rate 0 (every spelling of a rate is at least
/// 1 bit/s); should one exist anyway it sends at 1 bit/s rather than panic.
#[inline]
fn ceil_ns(bits: u64, bps: u64) -> u64 {
    let bps = bps.max(1);
    match bits.checked_mul(1_000_000_000) {
        Some(x) => x.div_ceil(bps),
        None => (u128::from(bits) * 1_000_000_000)
            .div_ceil(u128::from(bps))
            .min(u64::MAX as u128) as u64,
    }
}

impl Link {
    pub fn new(from: u32, to: u32, pipe: u32, qdisc: Queue) -> Self {
        Link {
            deferred: Deferred::NONE,
            busy_since: Time::ZERO,
            busy_bits: 0,
            qdisc,
            wire: Wire::default(),
            from,
            to,
            pipe,
            current: IDLE,
        }
    }

    /// Index of this link's observer, if it is monitored.
    #[inline]
    pub fn monitor(&self) -> Option<u32> {
        self.qdisc.monitor()
    }

    pub fn set_monitor(&mut self, k: u32) {
        self.qdisc.set_monitor(k);
    }

    #[inline]
    pub fn is_busy(&self) -> bool {
        self.current != IDLE
    }

    /// Whether the packet being serialized is on the wire already (its `TxDone`
    /// deferred or queued).
    #[inline]
    pub fn sent_ahead(&self) -> bool {
        self.current == SENT_AHEAD
    }

    /// The sent-ahead packet's transmission has ended: the transmitter is free.
    #[inline]
    pub fn end_sent_ahead(&mut self) {
        debug_assert!(self.sent_ahead());
        self.current = IDLE;
    }

    /// When the running busy period began, if the transmitter is in one.
    pub fn busy_since(&self) -> Option<Time> {
        (self.busy_bits > 0).then_some(self.busy_since)
    }

    /// The packet being serialized at `now` on this link of `rate` (kept in
    /// `wires`, or sent ahead and held for the observer), and how many of its
    /// bits have left the transmitter by then. A packet sent ahead on an
    /// unmonitored link is on a wire, unread: `None`.
    pub fn in_progress<'a>(
        &'a self,
        now: Time,
        rate: Rate,
        wires: &'a WireSlab,
    ) -> Option<(&'a Packet, u64)> {
        let pkt = match self.current {
            IDLE => return None,
            SENT_AHEAD => self.qdisc.held()?,
            node => wires.parked(node),
        };
        Some((pkt, self.bits_sent(now, rate, pkt.size)))
    }

    /// How many bits of the packet of `size` bytes being serialized (the last of
    /// the busy period, parked or sent ahead) have left at `now`, at `rate`.
    pub fn bits_sent(&self, now: Time, rate: Rate, size: u32) -> u64 {
        debug_assert!(self.current != IDLE);
        let size = size as u128 * 8;
        // At least 1 bit/s, as `ceil_ns` reads a rate of 0.
        let rate = rate.bps().max(1) as u128;
        let start = self.busy_since
            + Dur::from_nanos(
                ((u128::from(self.busy_bits) - size) * 1_000_000_000).div_ceil(rate) as u64,
            );
        let elapsed = now.saturating_since(start).as_nanos() as u128;
        (elapsed * rate / 1_000_000_000).min(size) as u64
    }

    /// Starts serializing `pkt` at `now` at `rate` (the transmitter is idle); the
    /// packet waits in `wires`. Returns when the last bit leaves.
    #[inline]
    pub fn begin_tx(&mut self, pkt: Packet, now: Time, rate: Rate, wires: &mut WireSlab) -> Time {
        debug_assert!(!self.is_busy());
        if self.busy_bits == 0 {
            self.busy_since = now;
        }
        self.busy_bits += u64::from(pkt.size) * 8;
        self.current = wires.park(pkt);
        self.busy_since + Dur::from_nanos(ceil_ns(self.busy_bits, rate.bps()))
    }

    /// Starts serializing `pkt` at `now` on a link whose `link_model::LinkModel`'s
    /// transmitter times it (a rate that varies); the packet waits in `wires`.
    /// The busy period is kept as [`Link::begin_tx`] keeps it.
    #[inline]
    pub fn begin_tx_varying(&mut self, pkt: Packet, now: Time, wires: &mut WireSlab) {
        debug_assert!(!self.is_busy());
        if self.busy_bits == 0 {
            self.busy_since = now;
        }
        self.busy_bits += u64::from(pkt.size) * 8;
        self.current = wires.park(pkt);
    }

    /// Starts serializing at `at`, at `rate`, a packet of `size` bytes that goes
    /// on a wire at once (cut-through, `engine::forward`: it is on its way here and
    /// the transmitter is free by then); its end is deferred. Returns when its last
    /// bit leaves.
    #[inline]
    pub fn begin_tx_ahead(&mut self, size: u32, at: Time, rate: Rate) -> Time {
        debug_assert!(!self.is_busy());
        if self.busy_bits == 0 {
            self.busy_since = at;
        }
        self.busy_bits += u64::from(size) * 8;
        self.current = SENT_AHEAD;
        self.busy_since + Dur::from_nanos(ceil_ns(self.busy_bits, rate.bps()))
    }

    /// Whether the transmitter will be free at `at`, later than now, if no packet
    /// comes before: idle, or sending ahead with its deferred end strictly before
    /// `at` (at `at` itself the order of two events would decide).
    #[inline]
    pub fn free_before(&self, at: Time) -> bool {
        self.current == IDLE
            || (self.current == SENT_AHEAD && self.deferred.is_some() && self.deferred.time() < at)
    }

    /// The packet just begun goes on a wire now; its transmission's end is
    /// deferred. Returns its node in the wire slab, for the caller to put on a wire.
    #[inline]
    pub fn send_ahead(&mut self) -> u32 {
        let node = std::mem::replace(&mut self.current, SENT_AHEAD);
        debug_assert!(node != IDLE && node != SENT_AHEAD);
        node
    }

    /// The current packet's last bit left. Returns its node in the wire slab, for
    /// the caller to put on a wire.
    #[inline]
    pub fn end_tx(&mut self) -> u32 {
        let node = std::mem::replace(&mut self.current, IDLE);
        assert!(
            node != IDLE && node != SENT_AHEAD,
            "TxDone without a packet in transmission"
        );
        node
    }

    /// Nothing more to send at `now`: the busy period, if one was running, ends.
    /// Returns its length (zero when the link was idle already: an arrival it
    /// dropped found nothing to send).
    #[inline]
    pub fn go_idle(&mut self, now: Time) -> Dur {
        if self.busy_bits == 0 {
            return Dur::ZERO;
        }
        self.busy_bits = 0;
        now.saturating_since(self.busy_since)
    }
}

#[cfg(test)]
mod tests;
