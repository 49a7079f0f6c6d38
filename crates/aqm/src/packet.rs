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

/// A DiffServ codepoint, 0 to 63, as a scenario writes it: a number or one of
/// the names of RFC 2474, 2597, 3246, 5865 and 8622 (`"EF"`, `"AF41"`, `"CS1"`,
/// `"LE"`, ...). Written back as its number.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(into = "u8")]
pub struct Dscp(pub u8);

impl Dscp {
    /// The named codepoints: class selectors, assured forwarding, expedited
    /// forwarding, voice-admit and lower effort.
    pub const NAMES: [(&'static str, u8); 26] = [
        ("BE", 0),
        ("DF", 0),
        ("CS0", 0),
        ("CS1", 8),
        ("CS2", 16),
        ("CS3", 24),
        ("CS4", 32),
        ("CS5", 40),
        ("CS6", 48),
        ("CS7", 56),
        ("AF11", 10),
        ("AF12", 12),
        ("AF13", 14),
        ("AF21", 18),
        ("AF22", 20),
        ("AF23", 22),
        ("AF31", 26),
        ("AF32", 28),
        ("AF33", 30),
        ("AF41", 34),
        ("AF42", 36),
        ("AF43", 38),
        ("EF", 46),
        ("VA", 44),
        ("LE", 1),
        ("NQB", 45),
    ];

    /// A codepoint by number (0 to 63) or name (any case).
    pub fn parse(s: &str) -> Result<Dscp, String> {
        if let Ok(n) = s.parse::<u64>() {
            return Dscp::try_from(n);
        }
        Dscp::NAMES
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(s))
            .map(|&(_, v)| Dscp(v))
            .ok_or_else(|| {
                format!(
                    "`{s}` is not a DSCP: a number from 0 to 63 or a name (EF, AF41, CS1, LE, ...)"
                )
            })
    }
}

impl TryFrom<u64> for Dscp {
    type Error = String;
    fn try_from(n: u64) -> Result<Dscp, String> {
        if n < 64 {
            Ok(Dscp(n as u8))
        } else {
            Err(format!("{n} is not a DSCP: it has six bits, 0 to 63"))
        }
    }
}

impl From<Dscp> for u8 {
    fn from(d: Dscp) -> u8 {
        d.0
    }
}

impl<'de> Deserialize<'de> for Dscp {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Dscp;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a DSCP: a number from 0 to 63 or a name such as \"EF\" or \"AF41\"")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Dscp, E> {
                Dscp::try_from(v).map_err(E::custom)
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Dscp, E> {
                u64::try_from(v)
                    .map_err(|_| E::custom(format!("{v} is not a DSCP: 0 to 63")))
                    .and_then(|v| Dscp::try_from(v).map_err(E::custom))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Dscp, E> {
                Dscp::parse(v).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod dscp_tests {
    use super::Dscp;

    #[test]
    fn names_and_numbers_parse_and_out_of_range_is_refused() {
        assert_eq!(Dscp::parse("EF"), Ok(Dscp(46)));
        assert_eq!(Dscp::parse("af41"), Ok(Dscp(34)));
        assert_eq!(Dscp::parse("CS1"), Ok(Dscp(8)));
        assert_eq!(Dscp::parse("63"), Ok(Dscp(63)));
        assert!(Dscp::parse("64").unwrap_err().contains("0 to 63"));
        assert!(Dscp::parse("AF5").unwrap_err().contains("not a DSCP"));
        // AFxy = 8x + 2y.
        for (name, v) in Dscp::NAMES.iter().filter(|(n, _)| n.starts_with("AF")) {
            let b = name.as_bytes();
            assert_eq!(*v, 8 * (b[2] - b'0') + 2 * (b[3] - b'0'), "{name}");
        }
    }
}
