//! The event queue: a radix heap of 16-byte keys ordered by (time, insertion
//! sequence), and deferred `TxDone`s that hold their place in that order outside it.
//!
//! Events at the same instant pop in the order they were scheduled (FIFO), which is
//! what makes a run deterministic without any tie-breaking by address or hash.
//!
//! Why this shape: the event queue's `pop` was a third to 40% of a profile of the
//! 400-flow benchmark (BENCHMARKS.md). Each entry is one `u128` whose integer order
//! *is* the event order: the time in the high 64 bits, then a 32-bit insertion
//! sequence, then the event packed in 32 bits. A run only ever schedules at or
//! after the event it is running, so the keys only grow, which is what a radix heap
//! (`radix`) needs: a push is constant time and a pop costs a few moves of keys
//! between buckets read in order, where the 4-ary heap before it compared its way
//! down a tree. (A timing wheel of 65,536 slots of 4 us was tried: as
//! many instructions, and 15-70% more CPU time on the 400-flow benchmark: its slot
//! vectors spread over megabytes where a heap of a few thousand keys stays in cache.)
//!
//! The sequence is 32 bits; when it runs out (every 2^32 pushes) the pending events
//! are renumbered in their current order, which keeps FIFO among equal times.

mod radix;

use aqm::Time;
use radix::RadixHeap;

/// Which timer of a flow fired.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum TimerKind {
    /// The flow starts (or, for UDP, sends its next packet).
    Send = 0,
    /// TCP retransmission timeout.
    Rto = 1,
    /// TCP receiver's delayed-ACK timer.
    DelAck = 2,
    /// The flow's `stop` time: no new data after it.
    Stop = 3,
}

pub const TIMER_KINDS: usize = 4;

impl TimerKind {
    /// Every timer, in `repr` order.
    pub const ALL: [TimerKind; TIMER_KINDS] = [
        TimerKind::Send,
        TimerKind::Rto,
        TimerKind::DelAck,
        TimerKind::Stop,
    ];
}

/// A periodic observation.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Tick {
    /// Sample the monitored queues' lengths.
    Queue = 0,
    /// Close an interval of the per-flow series at monitored links.
    Series = 1,
    /// Sample every TCP sender's state.
    Tcp = 2,
}

impl Tick {
    const ALL: [Tick; 3] = [Tick::Queue, Tick::Series, Tick::Tcp];
}

/// What happens at an instant.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A link direction finished serializing the packet it was sending.
    TxDone(u32),
    /// The oldest packet in flight on a link direction reaches the far end.
    Arrive(u32),
    /// A flow's timer.
    Timer(u32, TimerKind),
    /// A periodic observation.
    Tick(Tick),
    /// The warm-up is over: snapshot every counter.
    MeasureStart,
    /// A packet that may overtake others (jitter with `reorder`) reaches the far
    /// end of its link: the wire-slab node holding it, on no wire.
    Jittered(u32),
    /// A link direction whose qdisc held its packets (a shaper, `Qdisc::wake_at`)
    /// asks it again if its transmitter is still idle.
    Wake(u32),
}

/// Bits of a packed event that carry its link or flow index.
const INDEX_BITS: u32 = 29;
const INDEX_MASK: u32 = (1 << INDEX_BITS) - 1;

/// The most link directions the queue can name: 2^29.
pub const MAX_LINKS: usize = 1 << INDEX_BITS;
/// The most flows the queue can name: a timer packs the flow with its kind, 2^27.
pub const MAX_FLOWS: usize = 1 << (INDEX_BITS - 2);

impl Event {
    /// 3 bits of variant, 29 of index (a timer's index is `flow << 2 | kind`).
    #[inline]
    fn pack(self) -> u32 {
        let (tag, index) = match self {
            Event::TxDone(l) => (0, l),
            Event::Arrive(l) => (1, l),
            Event::Timer(f, k) => (2, f << 2 | k as u32),
            Event::Tick(t) => (3, t as u32),
            Event::MeasureStart => (4, 0),
            Event::Jittered(node) => (5, node),
            Event::Wake(l) => (6, l),
        };
        debug_assert!(index <= INDEX_MASK, "{self:?} does not fit the event queue");
        tag << INDEX_BITS | index
    }

    #[inline]
    fn unpack(bits: u32) -> Event {
        let index = bits & INDEX_MASK;
        match bits >> INDEX_BITS {
            0 => Event::TxDone(index),
            1 => Event::Arrive(index),
            2 => Event::Timer(index >> 2, TimerKind::ALL[(index & 3) as usize]),
            3 => Event::Tick(Tick::ALL[index as usize]),
            4 => Event::MeasureStart,
            5 => Event::Jittered(index),
            _ => Event::Wake(index),
        }
    }
}

#[inline]
fn unkey(k: u128) -> (Time, Event) {
    (Time::from_nanos((k >> 64) as u64), Event::unpack(k as u32))
}

#[inline]
fn key(time: Time, seq: u32, event: Event) -> u128 {
    u128::from(time.as_nanos()) << 64 | u128::from(seq) << 32 | u128::from(event.pack())
}

/// A deferred `TxDone`'s place in the event order (see [`EventQueue::defer`]), kept
/// by its link beside the transmitter's state, where the engine looks anyway;
/// [`Deferred::NONE`] when there is none.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Deferred(u128);

impl Deferred {
    /// No real key is all ones: its event bits name no event.
    pub const NONE: Deferred = Deferred(u128::MAX);

    #[inline]
    pub fn is_some(self) -> bool {
        self != Deferred::NONE
    }

    /// When the transmitter finishes.
    #[inline]
    pub fn time(self) -> Time {
        Time::from_nanos((self.0 >> 64) as u64)
    }
}

/// Renumber this many pushes before the sequence runs out, at an event boundary
/// where the engine can hand over its deferred keys: no event pushes this many.
const RENUMBER_MARGIN: u32 = 1 << 24;

/// A min-queue of events by (time, insertion order).
pub struct EventQueue {
    heap: RadixHeap,
    /// The last key popped: where the run is in the event order.
    last: u128,
    next_seq: u32,
    /// When `next_seq` reaches this, renumber (`u32::MAX`; lower in tests).
    seq_limit: u32,
}

impl Default for EventQueue {
    fn default() -> Self {
        Self::new()
    }
}

impl EventQueue {
    pub fn new() -> Self {
        EventQueue {
            heap: RadixHeap::new(),
            last: 0,
            next_seq: 0,
            seq_limit: u32::MAX,
        }
    }

    #[inline]
    pub fn push(&mut self, time: Time, event: Event) {
        let k = self.key_for(time, event);
        self.insert(k);
    }

    /// The key `event` gets if pushed now: the next sequence number.
    #[inline]
    fn key_for(&mut self, time: Time, event: Event) -> u128 {
        if self.next_seq == self.seq_limit {
            // Only a caller that holds no deferred keys gets here (the engine
            // renumbers earlier, when `renumber_due`).
            self.renumber(std::iter::empty());
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        key(time, seq, event)
    }

    /// Takes a place in the order for `TxDone(link)` at `time`, exactly where
    /// [`EventQueue::push`] would put it, without putting it in the queue. The
    /// engine defers a transmitter's end when nothing waits behind the packet:
    /// the end then matters only if a packet arrives before it, and then
    /// [`EventQueue::materialize`] puts it in the queue under its reserved key, so
    /// the order of events is the same as if it had been pushed at once.
    #[inline]
    pub fn defer(&mut self, time: Time, link: u32) -> Deferred {
        Deferred(self.key_for(time, Event::TxDone(link)))
    }

    /// Whether the run has gone past `d`'s place in the order (the transmitter
    /// finished then, before the event now running).
    #[inline]
    pub fn passed(&self, d: Deferred) -> bool {
        debug_assert!(d.is_some());
        d.0 < self.last
    }

    /// Puts a deferred `TxDone` that has not passed into the queue under its key.
    #[inline]
    pub fn materialize(&mut self, d: Deferred) {
        debug_assert!(d.is_some() && d.0 > self.last);
        self.insert(d.0);
    }

    /// Whether the sequence is close to running out: the holder of deferred keys
    /// should call [`EventQueue::renumber`] with them before the next event.
    #[inline]
    pub fn renumber_due(&self) -> bool {
        self.next_seq
            >= self
                .seq_limit
                .saturating_sub(RENUMBER_MARGIN.min(self.seq_limit / 2))
    }

    #[inline]
    fn insert(&mut self, k: u128) {
        self.heap.push(k);
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        let k = self.heap.pop()?;
        self.last = k;
        Some(unkey(k))
    }

    /// The next event to pop, without popping it.
    #[inline]
    pub fn peek(&mut self) -> Option<(Time, Event)> {
        self.heap.peek().map(unkey)
    }

    /// The next event if the queue can tell it cheaply, without any work a pop
    /// would have to redo: for prefetching what it will touch.
    #[inline]
    pub fn peek_hint(&self) -> Option<Event> {
        self.heap.hint().map(|k| Event::unpack(k as u32))
    }

    #[inline]
    pub fn peek_time(&mut self) -> Option<Time> {
        self.heap.peek().map(|k| unkey(k).0)
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Gives the pending events the sequence numbers 0, 1, ... in the order they
    /// will pop, so the next push gets a number above all of them. The `deferred`
    /// keys (every one outstanding) and the last key popped are numbered with them,
    /// so each keeps its place in the order.
    #[cold]
    pub fn renumber<'a>(&mut self, deferred: impl Iterator<Item = &'a mut Deferred>) {
        #[derive(Copy, Clone, PartialEq)]
        enum Home {
            Queue,
            Deferred(usize),
            Last,
        }
        let mut keys: Vec<(u128, Home)> = (self.heap.take_all().into_iter())
            .map(|k| (k, Home::Queue))
            .collect();
        let mut homes: Vec<&mut Deferred> = deferred.filter(|d| d.is_some()).collect();
        for (i, d) in homes.iter().enumerate() {
            keys.push((d.0, Home::Deferred(i)));
        }
        keys.push((self.last, Home::Last));
        keys.sort_unstable_by_key(|&(k, _)| k);
        const SEQ_MASK: u128 = (u32::MAX as u128) << 32;
        self.next_seq = u32::try_from(keys.len()).expect("fewer than 2^32 pending events");
        assert!(
            self.next_seq < self.seq_limit,
            "more pending events than sequence numbers"
        );
        for (seq, (k, home)) in keys.into_iter().enumerate() {
            let k = (k & !SEQ_MASK) | (seq as u128) << 32;
            match home {
                Home::Queue => self.insert(k),
                Home::Last => self.last = k,
                Home::Deferred(i) => *homes[i] = Deferred(k),
            }
        }
    }

    /// A queue that renumbers after `limit` pushes, to test renumbering.
    #[cfg(test)]
    fn with_seq_limit(limit: u32) -> Self {
        EventQueue {
            seq_limit: limit,
            ..Self::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn pops_by_time_then_fifo_among_equal_times() {
        let mut q = EventQueue::new();
        q.push(Time::from_nanos(5), Event::Arrive(1));
        q.push(Time::from_nanos(3), Event::Arrive(2));
        q.push(Time::from_nanos(5), Event::Arrive(3));
        q.push(Time::from_nanos(5), Event::Tick(Tick::Queue));
        q.push(Time::from_nanos(3), Event::TxDone(4));
        let order: Vec<_> = std::iter::from_fn(|| q.pop())
            .map(|(t, e)| (t.as_nanos(), e))
            .collect();
        assert_eq!(
            order,
            vec![
                (3, Event::Arrive(2)),
                (3, Event::TxDone(4)),
                (5, Event::Arrive(1)),
                (5, Event::Arrive(3)),
                (5, Event::Tick(Tick::Queue)),
            ]
        );
    }

    #[test]
    fn every_event_survives_packing_at_the_index_limits() {
        let last_link = (MAX_LINKS - 1) as u32;
        let last_flow = (MAX_FLOWS - 1) as u32;
        let mut events = vec![
            Event::TxDone(0),
            Event::TxDone(last_link),
            Event::Arrive(last_link),
            Event::Tick(Tick::Queue),
            Event::Tick(Tick::Series),
            Event::Tick(Tick::Tcp),
            Event::MeasureStart,
        ];
        for k in TimerKind::ALL {
            events.push(Event::Timer(0, k));
            events.push(Event::Timer(last_flow, k));
        }
        for e in events {
            assert_eq!(Event::unpack(e.pack()), e);
        }
        let mut q = EventQueue::new();
        q.push(
            Time::from_nanos(u64::MAX),
            Event::Timer(last_flow, TimerKind::Stop),
        );
        assert_eq!(
            q.pop(),
            Some((
                Time::from_nanos(u64::MAX),
                Event::Timer(last_flow, TimerKind::Stop)
            ))
        );
    }

    /// The reference: a stable sort by time of everything pushed, interleaved with
    /// pops, must equal what the queue pops, including across renumbering.
    fn check_against_stable_sort(ops: &[(bool, u64)], seq_limit: u32) {
        check_with_peeks(ops, seq_limit, false);
        check_with_peeks(ops, seq_limit, true);
    }

    fn check_with_peeks(ops: &[(bool, u64)], seq_limit: u32, peek_first: bool) {
        let mut q = EventQueue::with_seq_limit(seq_limit);
        let mut reference: Vec<(u64, u32)> = Vec::new();
        for (i, &(is_pop, t)) in ops.iter().enumerate() {
            if is_pop {
                let want = (!reference.is_empty()).then(|| reference.remove(0));
                if peek_first {
                    assert_eq!(q.peek_time().map(|t| t.as_nanos()), want.map(|w| w.0));
                }
                let got = q.pop().map(|(t, e)| match e {
                    Event::Arrive(i) => (t.as_nanos(), i),
                    other => panic!("{other:?}"),
                });
                assert_eq!(got, want);
            } else {
                q.push(Time::from_nanos(t), Event::Arrive(i as u32));
                let at = reference.partition_point(|r| r.0 <= t);
                reference.insert(at, (t, i as u32));
            }
        }
        assert_eq!(q.len(), reference.len());
    }

    proptest! {
        #[test]
        fn pops_as_a_stable_sort_even_across_renumbering(
            // Pops outnumber pushes, so fewer than 64 events are ever pending
            // (renumbering needs fewer pending than sequence numbers).
            ops in proptest::collection::vec((proptest::bool::weighted(0.6), 0u64..20), 0..600),
            seq_limit in 64u32..128,
        ) {
            check_against_stable_sort(&ops, seq_limit);
            check_against_stable_sort(&ops, u32::MAX);
        }

        /// Times far apart and close together, pushed out of order.
        #[test]
        fn pops_as_a_stable_sort_at_every_scale(
            ops in proptest::collection::vec((
                proptest::bool::weighted(0.5),
                prop_oneof![0u64..20, 0u64..300_000, 0u64..1 << 30],
            ), 0..600),
            seq_limit in 300u32..400,
        ) {
            check_against_stable_sort(&ops, seq_limit);
        }
    }

    /// Deferred `TxDone`s: materialized ones pop exactly where a push at the time
    /// of deferral would have put them; the others report `passed` exactly when the
    /// run has gone beyond their place; renumbering keeps both.
    fn check_deferral(ops: &[(u8, u64)], seq_limit: u32) {
        const LINKS: usize = 4;
        let mut q = EventQueue::with_seq_limit(seq_limit);
        // Kept outside the queue, as the engine keeps them in its links.
        let mut deferred = [Deferred::NONE; LINKS];
        let passed_of = |q: &EventQueue, d: Deferred| d.is_some().then(|| q.passed(d));
        // (time, event, deferred link not yet materialized)
        let mut reference: Vec<(u64, Event, Option<usize>)> = Vec::new();
        let mut passed = [false; LINKS];
        let mut now = 0u64;
        for (i, &(op, dt)) in ops.iter().enumerate() {
            if q.renumber_due() {
                q.renumber(deferred.iter_mut());
            }
            let t = now + dt;
            let link = i % LINKS;
            match op % 4 {
                0 => {
                    q.push(Time::from_nanos(t), Event::Arrive(i as u32));
                    reference.push((t, Event::Arrive(i as u32), None));
                }
                1 => {
                    if !deferred[link].is_some() {
                        deferred[link] = q.defer(Time::from_nanos(t), link as u32);
                        reference.push((t, Event::TxDone(link as u32), Some(link)));
                        passed[link] = false;
                    }
                }
                2 => match passed_of(&q, deferred[link]) {
                    Some(false) => {
                        q.materialize(std::mem::replace(&mut deferred[link], Deferred::NONE));
                        for r in reference.iter_mut() {
                            if r.2 == Some(link) {
                                r.2 = None;
                            }
                        }
                    }
                    Some(true) => {
                        assert!(deferred[link].time().as_nanos() <= now);
                        deferred[link] = Deferred::NONE;
                    }
                    None => {}
                },
                _ => {
                    // The reference pops in (time, order of scheduling), skipping
                    // deferred events that were never materialized.
                    reference.sort_by_key(|r| r.0); // stable
                    let got = q.pop().map(|(t, e)| (t.as_nanos(), e));
                    // The first real event; the virtual ones before it have passed.
                    let want = reference.iter().position(|r| r.2.is_none()).map(|at| {
                        for r in reference.drain(..at) {
                            passed[r.2.expect("virtual")] = true;
                        }
                        let r = reference.remove(0);
                        (r.0, r.1)
                    });
                    assert_eq!(got, want);
                    if let Some((t, _)) = got {
                        now = t;
                    }
                }
            }
            for (link, &d) in deferred.iter().enumerate() {
                if let Some(p) = passed_of(&q, d) {
                    let still = reference.iter().any(|r| r.2 == Some(link));
                    assert_eq!(p, !still && passed[link], "link {link} at op {i}");
                }
            }
        }
    }

    proptest! {
        #[test]
        fn deferred_events_keep_their_place(
            ops in proptest::collection::vec((0u8..4, 0u64..30_000), 0..500),
            seq_limit in 100u32..200,
        ) {
            check_deferral(&ops, seq_limit);
            check_deferral(&ops, u32::MAX);
        }
    }
}
