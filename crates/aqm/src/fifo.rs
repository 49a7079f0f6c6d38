//! A FIFO of packets held by value, with a byte count: the storage most qdiscs
//! build on. A `VecDeque` is a growable power-of-two ring, so after warm-up no
//! operation allocates.

use crate::packet::Packet;
use std::collections::VecDeque;

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
