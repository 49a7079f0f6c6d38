//! What the data plane knows of each flow: its path (access links, aggregate,
//! protocol) and the sources it runs itself (UDP, probes).

use super::Access;
use crate::ipv4;
use aqm::Rng;
use sim::runner::ProbeEnd;
use sim::udp::{UdpConfig, UdpSource};
use std::collections::HashMap;

/// A UDP source the data plane runs: packets made here, on the scenario's
/// schedule, enter the forward path as if read from the senders' device.
pub struct UdpFlow {
    pub cfg: UdpConfig,
    pub source: UdpSource,
    pub rng: Rng,
    pub start_ns: u64,
    pub stop_ns: Option<u64>,
    /// The TOS byte its packets carry.
    pub tos: ipv4::Tos,
}

/// A probe flow the data plane runs: an ICMP echo request made here every
/// `interval_ns` enters the forward path as if read from the senders' device;
/// the receivers' kernel echoes it, and its reply, read back from their device,
/// ends at the senders' end of the reverse path, where its RTT is taken.
pub struct ProbeFlow {
    pub interval_ns: u64,
    pub start_ns: u64,
    pub stop_ns: Option<u64>,
    /// Bytes on the wire, headers included.
    pub size: u32,
    /// The TOS byte its probes carry.
    pub tos: ipv4::Tos,
    /// The counts and RTTs, as the simulator keeps them.
    pub end: ProbeEnd,
    /// The send time of each probe not yet echoed or lost, by its echo's
    /// sequence number (the probe's number modulo 2^16).
    pub outstanding: HashMap<u16, u64>,
}

impl ProbeFlow {
    pub fn new(
        interval_ns: u64,
        start_ns: u64,
        stop_ns: Option<u64>,
        size: u32,
        tos: ipv4::Tos,
    ) -> Self {
        ProbeFlow {
            interval_ns,
            start_ns,
            stop_ns,
            size,
            tos,
            end: ProbeEnd::default(),
            outstanding: HashMap::new(),
        }
    }
}

/// One flow's path: its access links, each direction apart, and its aggregate.
pub struct FlowPath {
    pub access: Access,
    pub aggregate: u32,
    pub tcp: bool,
    /// What to strip from the flow's SYN (a TCP flow whose SACK or ECN
    /// setting differs from the namespaces').
    pub syn_strip: ipv4::SynStrip,
    pub udp: Option<UdpFlow>,
    pub probe: Option<ProbeFlow>,
    /// A flow a user's program drives (`--app`): taken by one of its
    /// connections, with what it delivered so far.
    pub app: Option<crate::apps::Delivered>,
}

impl FlowPath {
    /// The IP protocol of the flow's packets.
    pub(super) fn proto(&self) -> u8 {
        if self.tcp {
            ipv4::PROTO_TCP
        } else if self.probe.is_some() {
            ipv4::PROTO_ICMP
        } else {
            ipv4::PROTO_UDP
        }
    }
}
