//! Transport headers, kept beside the packet rather than in it.
//!
//! A qdisc sees only [`aqm::Packet`]; the engine keeps each packet's transport
//! header in a slab and names it by `Packet::tag`. Slots are recycled through a free
//! list, so after warm-up sending a packet allocates nothing.

use aqm::Time;

/// Up to three SACK blocks `[start, end)` in packet sequence numbers (RFC 2018
/// allows three beside timestamps).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct SackBlocks {
    pub n: u8,
    pub blocks: [(u32, u32); SACK_BLOCKS],
}

/// How many SACK blocks an ACK carries.
pub const SACK_BLOCKS: usize = 3;

impl SackBlocks {
    pub fn push(&mut self, b: (u32, u32)) {
        if (self.n as usize) < self.blocks.len() {
            self.blocks[self.n as usize] = b;
            self.n += 1;
        }
    }
    pub fn as_slice(&self) -> &[(u32, u32)] {
        &self.blocks[..self.n as usize]
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// TCP data, sender to receiver.
    Data,
    /// TCP acknowledgement, receiver to sender.
    Ack,
    /// A UDP datagram.
    Udp,
    /// A probe (an echo request), sender to receiver; `seq` numbers it.
    Probe,
    /// A probe's echo, receiver to sender; `sent_at` is the probe's.
    Echo,
}

pub const FLAG_CWR: u8 = 1;
pub const FLAG_ECE: u8 = 2;
/// Engine-internal: the packet is on its way to a link that cuts through, by the
/// normal path, and counted there (`engine::forward`); cleared when it enters it.
pub const FLAG_AWAITED: u8 = 4;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// Unique over the run, in send order (pcap and traces use it).
    pub uid: u64,
    pub flow: u32,
    /// Where in `Simulation::routes` the next link of the packet's route is.
    pub route_at: u32,
    pub kind: Kind,
    pub flags: u8,
    /// Data: the packet's sequence number (in packets); Ack: the timestamp it
    /// echoes (`tcp::timestamp` ticks, 0: none); Probe and Echo: the probe's number.
    pub seq: u32,
    /// Ack: the next sequence number expected.
    pub ack: u32,
    pub sack: SackBlocks,
    /// When the packet was sent; an echo carries its probe's (the RTT's start).
    pub sent_at: Time,
}

#[derive(Default)]
pub struct HeaderSlab {
    slots: Vec<Header>,
    free: Vec<u32>,
}

impl HeaderSlab {
    #[inline]
    pub fn alloc(&mut self, h: Header) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = h;
                i
            }
            None => {
                self.slots.push(h);
                (self.slots.len() - 1) as u32
            }
        }
    }
    #[inline]
    pub fn get(&self, i: u32) -> &Header {
        &self.slots[i as usize]
    }
    #[inline]
    pub fn get_mut(&mut self, i: u32) -> &mut Header {
        &mut self.slots[i as usize]
    }
    #[inline]
    pub fn free(&mut self, i: u32) {
        self.free.push(i);
    }
    /// Headers of packets still in the network.
    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}
