//! A flow: its path through the network, its transport endpoints, its timers and
//! its counters.

use crate::event::TIMER_KINDS;
use crate::probe::ProbeEnd;
use crate::scenario::FlowKind;
use crate::tcp::{TcpReceiver, TcpSender};
use crate::udp::UdpSource;
use aqm::{DropReason, Ecn, ReasonCounts, Rng, Time};

/// A timer with lazy cancellation: at most one event is pending per timer; re-arming
/// later than the pending event only moves the deadline, and the event re-schedules
/// itself when it fires early. A TCP that restarts its RTO on every ACK therefore
/// costs one heap event per RTO period, not one per ACK.
///
/// 16 bytes: `Time::MAX` stands for "none" (584 years; a run ends before a timer
/// there could fire, and such a timer is never pushed).
#[derive(Copy, Clone, Debug)]
pub struct TimerSlot {
    deadline: Time,
    pending: Time,
}

impl Default for TimerSlot {
    fn default() -> Self {
        TimerSlot {
            deadline: Time::MAX,
            pending: Time::MAX,
        }
    }
}

fn some(t: Time) -> Option<Time> {
    (t != Time::MAX).then_some(t)
}

impl TimerSlot {
    /// Armed for `at`, with its event pending.
    pub fn armed(at: Time) -> Self {
        TimerSlot {
            deadline: at,
            pending: at,
        }
    }
    /// When the timer expires, if armed.
    #[inline]
    pub fn deadline(&self) -> Option<Time> {
        some(self.deadline)
    }
    /// When its pending event fires, if one is pending.
    #[inline]
    pub fn pending(&self) -> Option<Time> {
        some(self.pending)
    }
    #[inline]
    pub fn set_deadline(&mut self, t: Option<Time>) {
        self.deadline = t.unwrap_or(Time::MAX);
    }
    #[inline]
    pub fn set_pending(&mut self, t: Option<Time>) {
        self.pending = t.unwrap_or(Time::MAX);
    }
}

pub enum Endpoints {
    Tcp {
        sender: Box<TcpSender>,
        receiver: TcpReceiver,
    },
    /// Boxed: a UDP source and its random stream are larger than a TCP flow's
    /// inline part, and every flow's `Endpoints` is as large as the largest.
    Udp(Box<UdpEnd>),
    /// Boxed for the same reason; the echoing receiver has no state.
    Probe(Box<ProbeEnd>),
}

pub struct UdpEnd {
    pub source: UdpSource,
    pub received: u64,
    /// The source's random stream (Poisson gaps, on/off periods).
    pub rng: Rng,
}

crate::delta::counters! {
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

/// A flow's drops by reason, in 32 bytes instead of 80: nearly every flow is
/// dropped for at most two reasons (a DropTail's overflows; RED's early and
/// forced drops), counted here; a flow dropped for more keeps the others apart.
#[derive(Clone, Debug, Default)]
pub struct FlowDrops {
    reasons: [u8; 2],
    counts: [u64; 2],
    others: Option<Box<ReasonCounts>>,
}

impl FlowDrops {
    /// One more drop for `reason`.
    #[inline]
    pub fn add(&mut self, reason: DropReason) {
        // Reason indices start at 0, so a slot's reason is stored plus one (0: free).
        let r = reason.index() as u8 + 1;
        for i in 0..2 {
            if self.reasons[i] == r || self.reasons[i] == 0 {
                self.reasons[i] = r;
                self.counts[i] += 1;
                return;
            }
        }
        self.others.get_or_insert_with(Box::default)[reason.index()] += 1;
    }

    /// The counts of every reason.
    pub fn counts(&self) -> ReasonCounts {
        let mut c = self.others.as_deref().copied().unwrap_or_default();
        for (&r, &n) in self.reasons.iter().zip(&self.counts) {
            if r != 0 {
                c[r as usize - 1] += n;
            }
        }
        c
    }
}

const _: () = assert!(DropReason::COUNT < u8::MAX as usize);

pub struct Flow {
    pub group: u32,
    pub kind: FlowKind,
    pub aggregate: u32,
    pub packet_size: u32,
    /// The codepoint of the flow's data packets (`NotEct`: not ECN-capable).
    pub ecn: Ecn,
    /// The DiffServ codepoint of its data packets.
    pub dscp: u8,
    /// Where the routes of its data and of its ACKs start in the network's routes.
    pub fwd: u32,
    pub rev: u32,
    pub start: Time,
    pub started: bool,
    pub endpoints: Endpoints,
    pub timers: [TimerSlot; TIMER_KINDS],
    pub drops: FlowDrops,
    pub marks: u64,
}

impl Flow {
    /// The TCP sender, if this is a TCP flow.
    pub fn tcp_sender(&self) -> Option<&TcpSender> {
        match &self.endpoints {
            Endpoints::Tcp { sender, .. } => Some(sender),
            Endpoints::Udp(_) | Endpoints::Probe(_) => None,
        }
    }

    pub fn counters(&self) -> FlowCounters {
        let mut c = FlowCounters {
            drops: self.drops.counts(),
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
            Endpoints::Udp(u) => {
                c.sent = u.source.sent;
                c.delivered = u.received;
            }
            Endpoints::Probe(p) => {
                c.sent = p.sent_all;
                c.delivered = p.echoed_all;
            }
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops_count_every_reason_in_any_order() {
        let mut d = FlowDrops::default();
        let mut want = ReasonCounts::default();
        // Four reasons, interleaved: two fill the inline slots, two go apart.
        for (i, &r) in DropReason::ALL.iter().rev().cycle().take(40).enumerate() {
            if i % 3 == 0 || r.index() < 4 {
                continue;
            }
            d.add(r);
            want[r.index()] += 1;
        }
        assert!(want.iter().filter(|&&n| n > 0).count() > 2);
        assert_eq!(d.counts(), want);
        assert!(d.others.is_some());
        assert_eq!(FlowDrops::default().counts(), ReasonCounts::default());
        assert!(std::mem::size_of::<FlowDrops>() <= 32);
    }

    /// Every flow has one, in one array: 176 bytes since the receiver's
    /// out-of-order runs are boxed while there are any (192 before; BENCHMARKS.md,
    /// memory per flow).
    #[test]
    fn a_flow_is_176_bytes() {
        assert_eq!(std::mem::size_of::<Flow>(), 176);
    }
}
