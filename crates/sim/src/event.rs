//! The event queue: a binary heap ordered by (time, insertion sequence).
//!
//! Events at the same instant pop in the order they were scheduled (FIFO), which is
//! what makes a run deterministic without any tie-breaking by address or hash.
//! Payloads are small `Copy` enums: no boxes, no allocation per event once the heap
//! has grown.

use aqm::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

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

/// What happens at an instant.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A link direction finished serializing the packet it was sending.
    TxDone(u32),
    /// The oldest packet in flight on a link direction reaches the far end.
    Arrive(u32),
    /// A flow's timer.
    Timer(u32, TimerKind),
    /// Sample the monitored queues.
    Sample,
    /// The warm-up is over: snapshot every counter.
    MeasureStart,
}

#[derive(Copy, Clone, Debug)]
struct Entry {
    time: Time,
    seq: u64,
    event: Event,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    /// Reversed, so the max-heap pops the earliest (time, seq).
    fn cmp(&self, o: &Self) -> Ordering {
        (o.time, o.seq).cmp(&(self.time, self.seq))
    }
}

/// A min-queue of events by (time, insertion order).
#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    next_seq: u64,
}

impl EventQueue {
    pub fn new() -> Self {
        Self::default()
    }
    #[inline]
    pub fn push(&mut self, time: Time, event: Event) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry { time, seq, event });
    }
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        self.heap.pop().map(|e| (e.time, e.event))
    }
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| e.time)
    }
    pub fn len(&self) -> usize {
        self.heap.len()
    }
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_by_time_then_fifo_among_equal_times() {
        let mut q = EventQueue::new();
        q.push(Time::from_nanos(5), Event::Arrive(1));
        q.push(Time::from_nanos(3), Event::Arrive(2));
        q.push(Time::from_nanos(5), Event::Arrive(3));
        q.push(Time::from_nanos(5), Event::Sample);
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
                (5, Event::Sample),
            ]
        );
    }
}
