//! One-way TCP in the style of ns-2/ns-3: a sender that always has data (or sends
//! web-like objects), a receiver that acknowledges, sequence numbers in packets.
//!
//! - Loss recovery: Reno (RFC 5681), NewReno (RFC 6582; the RTO restarts on the
//!   first partial ACK of a recovery only, "impatient", or on every one with
//!   [`NewRenoTimer::SlowButSteady`]) and SACK (RFC 6675 style: a scoreboard, `pipe`
//!   and hole retransmission; a hole below the highest SACKed packet is lost, which
//!   is exact on the engine's FIFO paths where packets never reorder). A fast
//!   retransmit needs an ACK above `recover`, the highest packet sent at the last
//!   loss (RFC 6582's "careful" rule, ns-2's `bugFix_`): one per window of data, and
//!   none for the duplicate ACKs a timeout's go-back-N retransmissions cause; Reno
//!   skips the check with `reno_bugfix = false`.
//! - Slow start and congestion avoidance with packet counting (ns-2's default: +1
//!   per ACK, +1/cwnd per ACK) or byte counting (RFC 3465, L = 2); Reno's window
//!   arithmetic, or CUBIC's (RFC 9438, with HyStart++ as an option) in
//!   `congestion`.
//! - RTO per RFC 6298 with Karn's rule (one timed packet per window, never a
//!   retransmitted one) and exponential back-off, doubling until the timeout reaches
//!   `max_rto` (RFC 6298 5.5, ns-2 since 2002); `min_rto` defaults to ns-2's 0.2 s.
//! - ECN (RFC 3168 section 6.1.2): the receiver echoes ECE until it sees CWR; the
//!   sender halves cwnd and ssthresh at most once per window of data, does not grow
//!   on an ECE, and sets CWR on its next new packet. At a one-packet window an ECE
//!   only resets the retransmission timer (as ns-2; docs/tcp.md, "ECN at one packet").
//! - DCTCP and Prague ([`dctcp`]): the receiver echoes the CE state of each
//!   packet (RFC 8257 section 3.2: with delayed ACKs, an ACK at once when the state
//!   changes), the sender keeps alpha, the fraction of packets marked (g = 1/16,
//!   once per window of data), and cuts cwnd by alpha / 2 at most once per window.
//! - BBR (`bbr`): a delivery-rate sampler (`sender/rate.rs`) feeds a model of
//!   the path that sets cwnd and the pacing rate on every ACK, as Linux's
//!   `tcp_bbr.c`; BBRv3 (`bbr3`) adds bounds from loss to the same model, after
//!   draft-ietf-ccwg-bbr.
//! - Optional pacing: the next new packet leaves `srtt / (factor x cwnd)` after the
//!   last, as Linux's internal pacing does (factor 2 in slow start, 1.2 after; 1
//!   for Prague in congestion avoidance), with one timer per flow (the `Send` timer).
//! - Optional delayed ACKs: every second in-order packet or after `delack_timeout`
//!   (100 ms by default, ns-2's `delay_ack_` interval); out-of-order and
//!   hole-filling packets are acknowledged at once.
//! - Optional limited transmit (RFC 3042: the first two duplicate ACKs each send a
//!   new packet) and proportional rate reduction in SACK recovery (RFC 6937).
//!
//! The state machines do no I/O: they append [`Seg`]ments and timer commands to an
//! [`Actions`] buffer the engine applies, so they can be unit-tested alone.

use crate::event::{TimerKind, TIMER_KINDS};
use crate::header::SackBlocks;
use aqm::{Dur, Ecn, Time};
use serde::{Deserialize, Serialize};

mod bbr;
mod bbr3;
mod congestion;
pub mod dctcp;
mod minmax;
#[cfg(test)]
mod packetdrill_tests;
mod receiver;
mod sender;
#[cfg(test)]
mod test_path;
#[cfg(test)]
mod tests;

pub use receiver::TcpReceiver;
pub use sender::TcpSender;

/// The TCP flavour: loss recovery and congestion control together.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    Reno,
    #[default]
    NewReno,
    Sack,
    /// CUBIC congestion control (RFC 9438) with SACK recovery, as Linux runs it.
    Cubic,
    /// BBR v1 as Linux's `tcp_bbr.c` (`bbr`), with SACK recovery, always paced;
    /// `aqmlab emulate` runs the kernel's.
    Bbr,
    /// BBRv3 after draft-ietf-ccwg-bbr (`bbr3`): BBR's model with loss and
    /// in-flight bounds; simulated only (the kernel has no module for it).
    Bbr3,
    /// DCTCP (RFC 8257): the window falls by alpha / 2 per window of marked data,
    /// alpha the fraction of packets marked, with SACK recovery and Reno's
    /// response to loss ([`dctcp`]).
    Dctcp,
    /// TCP Prague (draft-briscoe-iccrg-prague-congestion-control): DCTCP's
    /// response on ECT(1), Reno's on loss, RTT independence toward 25 ms, paced.
    Prague,
}

/// Whose TCP a group runs: one key for a stack's defaults, each of which a group
/// may still set itself (docs/tcp.md, "Profiles").
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// The papers' simulator: IW 1, an ACK per packet, ns-2's recovery and RFC
    /// 6298's timer, window arithmetic by `counting`, CUBIC as RFC 9438.
    #[default]
    Ns2,
    /// Today's Linux hosts: IW 10, delayed ACKs with quick-ACK mode, limited
    /// transmit, PRR, an RTT sample per ACK with Linux's RTO estimator, window
    /// arithmetic in whole segments (`tcp_cong_avoid_ai`), CUBIC as `tcp_cubic.c`
    /// with its HyStart.
    Linux,
}

/// How a sender repairs losses.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Recovery {
    Reno,
    NewReno,
    Sack,
}

impl Variant {
    pub fn recovery(self) -> Recovery {
        match self {
            Variant::Reno => Recovery::Reno,
            Variant::NewReno => Recovery::NewReno,
            Variant::Sack
            | Variant::Cubic
            | Variant::Bbr
            | Variant::Bbr3
            | Variant::Dctcp
            | Variant::Prague => Recovery::Sack,
        }
    }

    /// A scalable congestion control (DCTCP, Prague): the receiver echoes each
    /// packet's CE mark (RFC 8257 section 3.2) instead of latching ECE until CWR.
    pub fn is_scalable(self) -> bool {
        matches!(self, Variant::Dctcp | Variant::Prague)
    }

    /// The name a scenario writes (`variant = "..."`).
    pub fn name(self) -> &'static str {
        match self {
            Variant::Reno => "reno",
            Variant::NewReno => "newreno",
            Variant::Sack => "sack",
            Variant::Cubic => "cubic",
            Variant::Bbr => "bbr",
            Variant::Bbr3 => "bbr3",
            Variant::Dctcp => "dctcp",
            Variant::Prague => "prague",
        }
    }

    /// A model-based congestion control (BBR): it sets the window and the pacing
    /// rate on every ACK from its estimates of the path.
    pub fn is_bbr(self) -> bool {
        matches!(self, Variant::Bbr | Variant::Bbr3)
    }
}

/// When NewReno restarts the retransmission timer during fast recovery (RFC 6582,
/// section 4).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NewRenoTimer {
    /// On the first partial ACK only (RFC 6582 step 5; ns-2's default since 2003,
    /// `newreno_changes1_ 1`): when many packets of a window are lost, the timer
    /// expires and slow start repairs the rest, instead of one packet per RTT.
    #[default]
    Impatient,
    /// On every partial ACK (ns-2 before 2003, `newreno_changes1_ 0`): one lost
    /// packet repaired per RTT, however many there are.
    SlowButSteady,
}

/// How the congestion window grows per ACK.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Counting {
    /// +1 per ACK in slow start, +1/cwnd in congestion avoidance (ns-2).
    #[default]
    Packet,
    /// By packets acknowledged (RFC 3465 with L = 2).
    Byte,
}

/// A TCP flow's configuration (shared by every flow of a group).
#[derive(Clone, Debug, PartialEq)]
pub struct TcpConfig {
    pub variant: Variant,
    /// Whose stack: decides the window arithmetic, the RTT estimator and the
    /// receiver's ACK policy; the other keys take its defaults in the scenario.
    pub profile: Profile,
    /// Data packet size on the wire, bytes.
    pub packet_size: u32,
    pub ack_size: u32,
    /// Receiver's advertised window, packets: the most ever in flight. The default
    /// is ns-3's 128 KiB receive buffer in 1000-byte packets.
    pub max_window: u32,
    pub initial_window: u32,
    pub initial_ssthresh: f64,
    pub min_rto: Dur,
    pub max_rto: Dur,
    pub initial_rto: Dur,
    pub granularity: Dur,
    pub delayed_ack: bool,
    /// How long a delayed ACK waits for a second packet (ns-2's 100 ms default;
    /// ns-3 200 ms, Linux 40 ms at least).
    pub delack_timeout: Dur,
    /// RFC 3042: the first two duplicate ACKs each release one new packet.
    pub limited_transmit: bool,
    /// The codepoint of the data packets: ECT(0), or ECT(1) for L4S (RFC
    /// 9331), makes the sender ECN-capable (it responds to echoes); `NotEct`
    /// leaves congestion to drops.
    pub ecn: Ecn,
    /// Pace new data at a multiple of cwnd / srtt (the sender's pacing); off by
    /// default but for Prague.
    pub pacing: bool,
    pub counting: Counting,
    /// CUBIC only: a slow start that ends before the first loss: HyStart++ (RFC
    /// 9406) under the ns-2 profile, Linux's HyStart (ACK trains and delay) under
    /// Linux's.
    pub hystart: bool,
    pub dupthresh: u32,
    /// NewReno only: which partial ACKs restart the retransmission timer.
    pub newreno_timer: NewRenoTimer,
    /// Reno only: no fast retransmit unless the ACK is above `recover` (ns-2's
    /// `bugFix_`, on by default there and here); false lets Reno fast-retransmit
    /// again within one window, as BSD Reno did.
    pub reno_bugfix: bool,
    /// SACK recovery: proportional rate reduction (RFC 6937) as Linux runs it,
    /// instead of RFC 6675's silence until pipe falls below ssthresh.
    pub prr: bool,
    /// Web-like flows: packets per object; `None` for bulk transfer.
    pub object_size: Option<u32>,
    /// Web-like flows: pause between objects.
    pub think: Dur,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            variant: Variant::NewReno,
            profile: Profile::Ns2,
            packet_size: 1000,
            ack_size: 40,
            max_window: 131,
            initial_window: 1,
            initial_ssthresh: f64::INFINITY,
            min_rto: Dur::from_millis(200),
            max_rto: Dur::from_secs(60),
            initial_rto: Dur::from_secs(1),
            granularity: Dur::from_millis(1),
            delayed_ack: false,
            delack_timeout: Dur::from_millis(100),
            limited_transmit: false,
            ecn: Ecn::NotEct,
            pacing: false,
            counting: Counting::Packet,
            hystart: false,
            dupthresh: 3,
            newreno_timer: NewRenoTimer::Impatient,
            reno_bugfix: true,
            prr: false,
            object_size: None,
            think: Dur::ZERO,
        }
    }
}

impl TcpConfig {
    /// The Linux profile's defaults over ns-2's: what `profile = "linux"` sets
    /// before a group's own keys.
    pub fn linux(variant: Variant) -> TcpConfig {
        TcpConfig {
            variant,
            profile: Profile::Linux,
            initial_window: 10,
            delayed_ack: true,
            delack_timeout: Dur::from_millis(40),
            limited_transmit: true,
            // TCP_RTO_MAX.
            max_rto: Dur::from_secs(120),
            // BBR sets its window in recovery itself (packet conservation).
            prr: variant.recovery() == Recovery::Sack && !variant.is_bbr(),
            hystart: variant == Variant::Cubic,
            ..TcpConfig::default()
        }
    }

    /// Whether the window arithmetic and the RTT estimator are Linux's.
    #[inline]
    pub fn is_linux(&self) -> bool {
        self.profile == Profile::Linux
    }

    /// Whether the sender is ECN-capable: it sends ECT and answers echoes.
    #[inline]
    pub fn ecn_capable(&self) -> bool {
        self.ecn.is_ect()
    }
}

/// A segment a TCP endpoint wants sent.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Seg {
    Data {
        seq: u32,
        cwr: bool,
    },
    Ack {
        ack: u32,
        sack: SackBlocks,
        ece: bool,
        /// The timestamp echoed (TSecr, [`timestamp`] ticks; 0: none, as
        /// under the `ns2` profile).
        tsecr: u32,
    },
}

/// The TCP timestamp clock of the Linux profile: milliseconds, as Linux's
/// `tcp_time_stamp_ts` counts them by default, never 0 (0 is "no timestamp").
#[inline]
pub fn timestamp(t: Time) -> u32 {
    ((t.as_nanos() / 1_000_000) as u32).wrapping_add(1).max(1)
}

/// What a timer should do.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TimerCmd {
    Arm(Time),
    Cancel,
}

/// Output of one call into a TCP state machine, applied by the engine.
#[derive(Default, Debug)]
pub struct Actions {
    pub segs: Vec<Seg>,
    pub timers: [Option<TimerCmd>; TIMER_KINDS],
    /// A web object was acknowledged in full: when it could start, and its packets.
    pub object_done: Option<(Time, u32)>,
}

impl Actions {
    pub fn clear(&mut self) {
        self.segs.clear();
        self.timers = [None; TIMER_KINDS];
        self.object_done = None;
    }
    fn timer(&mut self, k: TimerKind, cmd: TimerCmd) {
        self.timers[k as usize] = Some(cmd);
    }

    /// The sequence numbers of the data segments to send, in order.
    #[cfg(test)]
    pub(crate) fn data_seqs(&self) -> Vec<u32> {
        self.segs
            .iter()
            .filter_map(|s| match s {
                Seg::Data { seq, .. } => Some(*seq),
                Seg::Ack { .. } => None,
            })
            .collect()
    }
}

/// Counters a sender keeps (totals; the engine subtracts a warm-up snapshot).
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct TcpStats {
    pub sent: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub fast_recoveries: u64,
    pub rtt_sum_s: f64,
    pub rtt_samples: u64,
    pub objects: u64,
}

/// A congestion-window reduction, or the undo of one, kept when tracing is on.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Reduction {
    pub at: Time,
    pub cwnd_before: f64,
    pub cwnd_after: f64,
    pub ssthresh: f64,
    pub cause: ReductionCause,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ReductionCause {
    FastRetransmit,
    Timeout,
    Ecn,
    /// Not a reduction: one undone as spurious (the Linux profile), the window
    /// back to the one before it.
    Undo,
}

/// One sample of one TCP sender (what `[monitor] tcp_trace` records per interval).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct TcpSample {
    pub at: Time,
    pub flow: u32,
    /// Packets.
    pub cwnd: f64,
    /// Packets; infinite until the first loss.
    pub ssthresh: f64,
    /// Seconds; 0 before the first RTT sample.
    pub srtt_s: f64,
    pub rto_s: f64,
    /// Packets sent and not yet acknowledged.
    pub in_flight: u32,
    /// The rate the sender paces at, packets per second (BBR's, or the
    /// window's as Linux computes it for `pacing`); none for a flow that does
    /// not pace or has no RTT sample yet.
    pub pacing_rate_pps: Option<f64>,
    /// BBR's bandwidth estimate (packets per second) and minimum RTT
    /// (seconds); none for other variants, or before a first sample.
    pub bbr_bw_pps: Option<f64>,
    pub bbr_min_rtt_s: Option<f64>,
}
