//! Packet storage and the admit tail: [`PacketFifo`], the ring most qdiscs keep
//! packets in; [`LimitedQueue`], a store with a packet limit and the
//! admit-or-overflow step that ends nearly every enqueue; and `backlog_of!`,
//! which answers `Qdisc::len`, `bytes` and `limit` from a `LimitedQueue` field.
//!
//! A `VecDeque` is a growable power-of-two ring: it starts empty and grows with the
//! backlog, so a qdisc allocates nothing in proportion to its `limit` before
//! packets arrive, and after warm-up no operation allocates.

use crate::drop_reason::DropReason;
use crate::packet::Packet;
use crate::qdisc::{Ctx, Limit, Verdict};
use std::collections::VecDeque;

/// A FIFO of packets held by value, with a byte count.
#[derive(Debug, Default, Clone)]
pub struct PacketFifo {
    packets: VecDeque<Packet>,
    bytes: u64,
}

impl PacketFifo {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn with_capacity(n: usize) -> Self {
        PacketFifo {
            packets: VecDeque::with_capacity(n),
            bytes: 0,
        }
    }
    #[inline]
    pub fn push_back(&mut self, pkt: Packet) {
        self.bytes += pkt.size as u64;
        self.packets.push_back(pkt);
    }
    #[inline]
    pub fn pop_front(&mut self) -> Option<Packet> {
        let pkt = self.packets.pop_front()?;
        self.bytes -= pkt.size as u64;
        Some(pkt)
    }
    #[inline]
    pub fn pop_back(&mut self) -> Option<Packet> {
        let pkt = self.packets.pop_back()?;
        self.bytes -= pkt.size as u64;
        Some(pkt)
    }
    /// Random access by position from the head (0 = next to leave).
    #[inline]
    pub fn get(&self, i: usize) -> Option<&Packet> {
        self.packets.get(i)
    }
    /// Removes the packet at position `i`: O(min(i, len - i)).
    pub fn remove(&mut self, i: usize) -> Option<Packet> {
        let pkt = self.packets.remove(i)?;
        self.bytes -= pkt.size as u64;
        Some(pkt)
    }
    #[inline]
    pub fn front(&self) -> Option<&Packet> {
        self.packets.front()
    }
    #[inline]
    pub fn len(&self) -> usize {
        self.packets.len()
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }
    #[inline]
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
    pub fn iter(&self) -> impl Iterator<Item = &Packet> {
        self.packets.iter()
    }
}

/// Drops an arrival that found the queue full. Out of line: a drop calls into the
/// sink, and keeping that call off the common path spares it the register saves.
#[cold]
#[inline(never)]
pub fn overflow(pkt: Packet, ctx: &mut Ctx<'_>) -> Verdict {
    ctx.drop(pkt, DropReason::Overflow);
    Verdict::Dropped
}

/// What [`LimitedQueue`] needs of the storage under it: a FIFO of real packets
/// (CHOKe's ring with holes counts only the packets).
pub trait PacketStore {
    fn push_back(&mut self, pkt: Packet);
    fn pop_front(&mut self) -> Option<Packet>;
    /// Packets held.
    fn len(&self) -> usize;
    /// Bytes of the packets held.
    fn bytes(&self) -> u64;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl PacketStore for PacketFifo {
    #[inline]
    fn push_back(&mut self, pkt: Packet) {
        PacketFifo::push_back(self, pkt)
    }
    #[inline]
    fn pop_front(&mut self) -> Option<Packet> {
        PacketFifo::pop_front(self)
    }
    #[inline]
    fn len(&self) -> usize {
        PacketFifo::len(self)
    }
    #[inline]
    fn bytes(&self) -> u64 {
        PacketFifo::bytes(self)
    }
}

/// A store of at most `limit` packets: the queue of every single-FIFO qdisc.
#[derive(Debug, Clone)]
pub struct LimitedQueue<S = PacketFifo> {
    store: S,
    limit: u32,
}

impl<S: PacketStore + Default> LimitedQueue<S> {
    /// An empty queue of at most `limit` packets; nothing is allocated yet.
    pub fn new(limit: u32) -> Self {
        LimitedQueue {
            store: S::default(),
            limit,
        }
    }
}

impl<S: PacketStore> LimitedQueue<S> {
    /// A queue of at most `limit` packets over `store` (empty).
    pub fn with_store(store: S, limit: u32) -> Self {
        debug_assert_eq!(store.len(), 0);
        LimitedQueue { store, limit }
    }

    /// Is there no room for one more packet?
    #[inline]
    pub fn is_full(&self) -> bool {
        self.store.len() >= self.limit as usize
    }

    /// The admit tail: queues `pkt` if there is room, else drops it as `Overflow`.
    #[inline(always)]
    pub fn admit(&mut self, pkt: Packet, ctx: &mut Ctx<'_>) -> Verdict {
        if self.is_full() {
            return overflow(pkt, ctx);
        }
        self.store.push_back(pkt);
        Verdict::Queued
    }

    /// Queues `pkt`; the caller checked that there is room.
    #[inline]
    pub fn push_back(&mut self, pkt: Packet) {
        debug_assert!(!self.is_full(), "push into a full queue");
        self.store.push_back(pkt);
    }

    #[inline]
    pub fn pop_front(&mut self) -> Option<Packet> {
        self.store.pop_front()
    }
    #[inline]
    pub fn len(&self) -> usize {
        self.store.len()
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.store.len() == 0
    }
    #[inline]
    pub fn bytes(&self) -> u64 {
        self.store.bytes()
    }
    /// The bound, as `Qdisc::limit` reports it.
    #[inline]
    pub fn limit(&self) -> Limit {
        Limit::Packets(self.limit)
    }
    /// The storage, for what only it can do (CHOKe's candidates, a front drop).
    #[inline]
    pub fn store(&self) -> &S {
        &self.store
    }
    #[inline]
    pub fn store_mut(&mut self) -> &mut S {
        &mut self.store
    }
}

/// `Qdisc::len`, `bytes` and `limit` for a qdisc whose whole backlog is the
/// [`LimitedQueue`] in field `$field`: `backlog_of!(queue);` inside `impl Qdisc`.
macro_rules! backlog_of {
    ($field:ident) => {
        #[inline]
        fn len(&self) -> usize {
            self.$field.len()
        }
        #[inline]
        fn bytes(&self) -> u64 {
            self.$field.bytes()
        }
        fn limit(&self) -> $crate::qdisc::Limit {
            self.$field.limit()
        }
    };
}
pub(crate) use backlog_of;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::FlowId;
    use crate::qdisc::VecSink;

    #[test]
    fn the_admit_tail_drops_as_overflow_only_when_full() {
        let mut q: LimitedQueue = LimitedQueue::new(2);
        let (mut rng, mut sink) = (crate::rng::stream(1, 0), VecSink::default());
        let mut ctx = Ctx::new(crate::Time::ZERO, &mut rng, &mut sink);
        let verdicts: Vec<Verdict> = (0..3)
            .map(|i| q.admit(Packet::new(FlowId(i), 100 + i), &mut ctx))
            .collect();
        assert_eq!(
            verdicts,
            [Verdict::Queued, Verdict::Queued, Verdict::Dropped]
        );
        assert_eq!((q.len(), q.bytes(), q.limit()), (2, 201, Limit::Packets(2)));
        assert_eq!(sink.drops[0].1, DropReason::Overflow);
        assert_eq!(sink.drops[0].0.flow, FlowId(2));
    }
}
