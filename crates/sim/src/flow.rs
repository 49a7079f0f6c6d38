//! A flow: its path through the network, its transport endpoints, its timers and
//! its counters.

use crate::event::TIMER_KINDS;
use crate::scenario::FlowKind;
use crate::tcp::{TcpReceiver, TcpSender};
use crate::udp::UdpSource;
use aqm::{ReasonCounts, Rng, Time};

/// A timer with lazy cancellation: at most one event is pending per timer; re-arming
/// later than the pending event only moves the deadline, and the event re-schedules
/// itself when it fires early. A TCP that restarts its RTO on every ACK therefore
/// costs one heap event per RTO period, not one per ACK.
#[derive(Copy, Clone, Debug, Default)]
pub struct TimerSlot {
    pub deadline: Option<Time>,
    pub pending: Option<Time>,
}

pub enum Endpoints {
    Tcp {
        sender: Box<TcpSender>,
        receiver: TcpReceiver,
    },
    Udp {
        source: UdpSource,
        received: u64,
    },
}

crate::counters! {
    /// Counters of a flow that only ever grow (a warm-up snapshot is subtracted).
    #[derive(Copy, Clone, Debug, Default, PartialEq)]
    pub struct FlowCounters {
        pub sent: u64,
        pub delivered: u64,
        pub drops: ReasonCounts,
        pub marks: u64,
        pub retransmits: u64,
        pub timeouts: u64,
        pub fast_recoveries: u64,
        pub rtt_sum_s: f64,
        pub rtt_samples: u64,
    }
}

pub struct Flow {
    pub group: u32,
    pub kind: FlowKind,
    pub aggregate: u32,
    /// Scheduling weight (fair queueing).
    pub weight: f64,
    pub packet_size: u32,
    pub ecn_capable: bool,
    /// Where the routes of its data and of its ACKs start in the network's routes.
    pub fwd: u32,
    pub rev: u32,
    pub start: Time,
    pub stop: Option<Time>,
    pub started: bool,
    pub endpoints: Endpoints,
    pub timers: [TimerSlot; TIMER_KINDS],
    pub drops: ReasonCounts,
    pub marks: u64,
    pub rng: Rng,
}

impl Flow {
    /// The TCP sender, if this is a TCP flow.
    pub fn tcp_sender(&self) -> Option<&TcpSender> {
        match &self.endpoints {
            Endpoints::Tcp { sender, .. } => Some(sender),
            Endpoints::Udp { .. } => None,
        }
    }

    pub fn counters(&self) -> FlowCounters {
        let mut c = FlowCounters {
            drops: self.drops,
            marks: self.marks,
            ..Default::default()
        };
        match &self.endpoints {
            Endpoints::Tcp { sender, receiver } => {
                let s = &sender.stats;
                c.sent = s.sent;
                c.delivered = receiver.delivered;
                c.retransmits = s.retransmits;
                c.timeouts = s.timeouts;
                c.fast_recoveries = s.fast_recoveries;
                c.rtt_sum_s = s.rtt_sum_s;
                c.rtt_samples = s.rtt_samples;
            }
            Endpoints::Udp { source, received } => {
                c.sent = source.sent;
                c.delivered = *received;
            }
        }
        c
    }
}
