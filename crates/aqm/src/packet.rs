//! What a qdisc sees of a packet: a small `Copy` struct, no payload.
//!
//! The engine keeps transport headers (sequence numbers, SACK blocks) elsewhere and
//! names them by `tag`; a qdisc never reads the tag, so nothing in this crate knows
//! about TCP. `cb` is the qdisc's own scratch, carried with the packet so that
//! dequeue can undo exactly what enqueue did (as Linux's `skb->cb`).

use crate::time::Time;
use serde::{Deserialize, Serialize};

/// A flow's identity: an index into the caller's flow table.
#[derive(
    Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct FlowId(pub u32);

impl FlowId {
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

/// The two ECN bits of the IP header (RFC 3168; ECT(1) as the L4S identifier, RFC 9331).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Ecn {
    /// Not ECN-capable: congestion can only be signalled by a drop.
    #[default]
    NotEct = 0b00,
    /// ECN-capable transport, ECT(0): classic ECN (RFC 3168).
    Ect = 0b10,
    /// ECN-capable transport, ECT(1): the L4S identifier (RFC 9331), which
    /// DualPI2 steers into its low-latency queue. Every other ECN-marking qdisc
    /// treats it as ECT(0).
    Ect1 = 0b01,
    /// Congestion experienced: marked by a queue.
    Ce = 0b11,
}

impl Ecn {
    pub const fn is_capable(self) -> bool {
        !matches!(self, Ecn::NotEct)
    }

    /// ECT(0) or ECT(1): capable and not yet marked.
    pub const fn is_ect(self) -> bool {
        matches!(self, Ecn::Ect | Ecn::Ect1)
    }

    /// The codepoint of the IP header's two ECN bits.
    pub const fn from_bits(bits: u8) -> Ecn {
        match bits & 0b11 {
            0b00 => Ecn::NotEct,
            0b01 => Ecn::Ect1,
            0b10 => Ecn::Ect,
            _ => Ecn::Ce,
        }
    }

    /// The IP header's two ECN bits.
    pub const fn bits(self) -> u8 {
        self as u8
    }
}

/// A packet as queues see it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Packet {
    /// The flow it belongs to (what per-flow fairness is about).
    pub flow: FlowId,
    /// The aggregate (a group of flows, e.g. an edge router) for aggregate scheduling.
    pub aggregate: u32,
    /// Size on the wire, in bytes.
    pub size: u32,
    pub ecn: Ecn,
    /// The IP header's DiffServ codepoint (the six bits above ECN's two), 0 to
    /// 63: what CAKE's tins and `prio`'s bands classify by.
    pub dscp: u8,
    /// When the packet entered the current queue; set by the wrapper that counts.
    pub enqueued_at: Time,
    /// Scratch for the qdisc holding the packet (bin indices, a cached hash, ...).
    pub cb: u64,
    /// The caller's handle for its own per-packet data. Qdiscs must not read it.
    pub tag: u32,
}

impl Packet {
    /// A packet of `flow` with `size` bytes and everything else zero.
    pub const fn new(flow: FlowId, size: u32) -> Self {
        Packet {
            flow,
            aggregate: 0,
            size,
            ecn: Ecn::NotEct,
            dscp: 0,
            enqueued_at: Time::ZERO,
            cb: 0,
            tag: 0,
        }
    }
}
