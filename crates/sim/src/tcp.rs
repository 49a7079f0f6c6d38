//! One-way TCP in the style of ns-2/ns-3: a sender that always has data (or sends
//! web-like objects), a receiver that acknowledges, sequence numbers in packets.
//!
//! - Loss recovery: Reno (RFC 5681), NewReno (RFC 6582, "slow-but-steady": the RTO
//!   restarts on every partial ACK) and SACK (RFC 6675 style: a scoreboard, `pipe`
//!   and hole retransmission; a hole below the highest SACKed packet is lost, which
//!   is exact on the engine's FIFO paths where packets never reorder).
//! - Slow start and congestion avoidance with packet counting (ns-2's default: +1
//!   per ACK, +1/cwnd per ACK) or byte counting (RFC 3465, L = 2).
//! - RTO per RFC 6298 with Karn's rule (one timed packet per window, never a
//!   retransmitted one) and exponential back-off; `min_rto` defaults to ns-2's 0.2 s.
//! - ECN (RFC 3168 section 6.1.2): the receiver echoes ECE until it sees CWR. The
//!   sender halves cwnd and ssthresh at most once per window of data (a reduction
//!   for loss counts too), does not grow cwnd on an ACK that carries ECE, and sets
//!   CWR on its next new packet. cwnd may fall to one packet (ssthresh keeps RFC
//!   5681's floor of 2). An ECE when the window is already one packet (cwnd < 2:
//!   packet counting sends `floor(cwnd)`) reduces nothing further: it resets the
//!   retransmission timer, and the next new packet leaves only when that timer
//!   expires, so a flow marked at one packet sends one packet per RTO. ns-2 does the
//!   same by halving cwnd below 1 (`slowdown(CLOSE_CWND_HALF)`, an integer window
//!   of 0) and keeping its timer armed while `cwnd_ < 1` (`newtimer`); ns-2 also
//!   backs the timer off on a second such ECE in a row, which the RFC does not ask
//!   and we do not do. Linux instead keeps cwnd at its ssthresh floor of 2 on ECE.
//! - Optional delayed ACKs: every second in-order packet or after `delack_timeout`;
//!   out-of-order and hole-filling packets are acknowledged at once.
//!
//! The state machines do no I/O: they append [`Seg`]ments and timer commands to an
//! [`Actions`] buffer the engine applies, so they can be unit-tested alone.

use crate::event::{TimerKind, TIMER_KINDS};
use crate::header::SackBlocks;
use aqm::{Dur, Time};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Loss-recovery flavour.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    Reno,
    #[default]
    NewReno,
    Sack,
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
    pub delack_timeout: Dur,
    pub ecn: bool,
    pub counting: Counting,
    pub dupthresh: u32,
    /// Web-like flows: packets per object; `None` for bulk transfer.
    pub object_size: Option<u32>,
    /// Web-like flows: pause between objects.
    pub think: Dur,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            variant: Variant::NewReno,
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
            ecn: false,
            counting: Counting::Packet,
            dupthresh: 3,
            object_size: None,
            think: Dur::ZERO,
        }
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
    },
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
}

impl Actions {
    pub fn clear(&mut self) {
        self.segs.clear();
        self.timers = [None; TIMER_KINDS];
    }
    fn timer(&mut self, k: TimerKind, cmd: TimerCmd) {
        self.timers[k as usize] = Some(cmd);
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

const SACKED: u8 = 1;
const RETX: u8 = 2;

/// A congestion-window reduction, kept when tracing is on.
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
}

#[derive(Debug, Clone)]
pub struct TcpSender {
    snd_una: u32,
    snd_nxt: u32,
    snd_max: u32,
    cwnd: f64,
    ssthresh: f64,
    dupacks: u32,
    in_recovery: bool,
    /// One past the highest packet sent when recovery (or a timeout) began.
    recover: u32,
    srtt: f64,
    rttvar: f64,
    has_rtt: bool,
    rto_base: Dur,
    backoff: u32,
    /// Karn: the packet being timed and when it was sent.
    timed: Option<(u32, Time)>,
    /// Per outstanding packet (index seq - snd_una): SACKED and RETX flags.
    scoreboard: VecDeque<u8>,
    sacked: u32,
    retx_out: u32,
    high_sack: u32,
    hole_hint: u32,
    /// ECN responses wait until the ACK passes this (snd_max at the last reduction).
    ecn_recover: u32,
    cwr_pending: bool,
    /// RFC 3168 (6.1.2): an ECE arrived with a one-packet window; no new packet
    /// leaves until the retransmission timer, reset then, expires.
    ecn_hold: bool,
    /// Whether the retransmission timer runs. RFC 6298 (5.1): sending starts it only
    /// when it is not running; only new ACKs restart it. Restarting it on every
    /// send would postpone it for ever while a lost retransmission blocks snd_una
    /// and SACKed new data keeps flowing.
    rto_running: bool,
    /// One past the last packet of the current object (`u32::MAX`: bulk).
    object_end: u32,
    thinking: bool,
    stopped: bool,
    pub stats: TcpStats,
    /// Window reductions, when `trace` is on.
    pub trace: Option<Vec<Reduction>>,
}

impl TcpSender {
    pub fn new(cfg: &TcpConfig) -> Self {
        TcpSender {
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            cwnd: cfg.initial_window as f64,
            ssthresh: cfg.initial_ssthresh,
            dupacks: 0,
            in_recovery: false,
            recover: 0,
            srtt: 0.0,
            rttvar: 0.0,
            has_rtt: false,
            rto_base: cfg.initial_rto,
            backoff: 1,
            timed: None,
            scoreboard: VecDeque::new(),
            sacked: 0,
            retx_out: 0,
            high_sack: 0,
            hole_hint: 0,
            ecn_recover: 0,
            cwr_pending: false,
            ecn_hold: false,
            rto_running: false,
            object_end: cfg.object_size.unwrap_or(u32::MAX),
            thinking: false,
            stopped: false,
            stats: TcpStats::default(),
            trace: None,
        }
    }

    pub fn cwnd(&self) -> f64 {
        self.cwnd
    }
    pub fn ssthresh(&self) -> f64 {
        self.ssthresh
    }
    pub fn snd_una(&self) -> u32 {
        self.snd_una
    }
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }
    /// The current retransmission timeout, back-off included.
    pub fn rto(&self, cfg: &TcpConfig) -> Dur {
        self.rto_base
            .saturating_mul(self.backoff as u64)
            .min(cfg.max_rto)
    }

    /// Starts sending.
    pub fn start(&mut self, now: Time, cfg: &TcpConfig, act: &mut Actions) {
        self.send_allowed(now, cfg, act);
    }

    /// Stops sending new data (the flow's `stop` time); outstanding data still
    /// completes.
    pub fn stop(&mut self) {
        self.stopped = true;
    }

    fn has_new_data(&self) -> bool {
        !self.stopped && !self.thinking && self.snd_nxt < self.object_end
    }

    fn emit(&mut self, seq: u32, now: Time, cfg: &TcpConfig, act: &mut Actions) {
        if seq >= self.snd_max {
            debug_assert_eq!(seq, self.snd_max);
            self.snd_max = seq + 1;
            self.scoreboard.push_back(0);
            // Karn: time one packet per window, never during recovery, where a
            // cumulative ACK waits for the holes below it and would inflate the sample.
            if self.timed.is_none() && !self.in_recovery {
                self.timed = Some((seq, now));
            }
        } else {
            self.stats.retransmits += 1;
            if matches!(self.timed, Some((s, _)) if s == seq) {
                self.timed = None; // Karn: never time a retransmitted packet.
            }
        }
        self.stats.sent += 1;
        let cwr = std::mem::take(&mut self.cwr_pending);
        act.segs.push(Seg::Data { seq, cwr });
        if !self.rto_running {
            self.restart_rto(now, cfg, act);
        }
    }

    fn restart_rto(&mut self, now: Time, cfg: &TcpConfig, act: &mut Actions) {
        self.rto_running = true;
        act.timer(TimerKind::Rto, TimerCmd::Arm(now + self.rto(cfg)));
    }

    fn stop_rto(&mut self, act: &mut Actions) {
        self.rto_running = false;
        act.timer(TimerKind::Rto, TimerCmd::Cancel);
    }

    fn retransmit(&mut self, seq: u32, now: Time, cfg: &TcpConfig, act: &mut Actions) {
        let i = (seq - self.snd_una) as usize;
        if self.scoreboard[i] & RETX == 0 && self.scoreboard[i] & SACKED == 0 {
            self.retx_out += 1;
        }
        self.scoreboard[i] |= RETX;
        self.emit(seq, now, cfg, act);
    }

    /// RFC 6675's pipe with "lost" = below the highest SACKed packet.
    fn pipe(&self) -> u32 {
        (self.snd_max - self.high_sack) + self.retx_out
    }

    fn next_hole(&mut self) -> Option<u32> {
        let mut s = self.hole_hint.max(self.snd_una);
        while s < self.high_sack {
            if self.scoreboard[(s - self.snd_una) as usize] & (SACKED | RETX) == 0 {
                self.hole_hint = s;
                return Some(s);
            }
            s += 1;
        }
        self.hole_hint = s;
        None
    }

    fn send_allowed(&mut self, now: Time, cfg: &TcpConfig, act: &mut Actions) {
        if self.ecn_hold {
            return;
        }
        if cfg.variant == Variant::Sack && self.in_recovery {
            while (self.pipe() as f64) < self.cwnd.floor() {
                if let Some(hole) = self.next_hole() {
                    self.retransmit(hole, now, cfg, act);
                } else if self.has_new_data() && self.snd_nxt < self.snd_una + cfg.max_window {
                    let seq = self.snd_nxt;
                    self.snd_nxt += 1;
                    self.emit(seq, now, cfg, act);
                } else {
                    break;
                }
            }
            return;
        }
        let window = (self.cwnd.floor() as u32).max(1).min(cfg.max_window);
        while self.snd_nxt < self.snd_una.saturating_add(window)
            && (self.snd_nxt < self.snd_max || self.has_new_data())
        {
            let seq = self.snd_nxt;
            self.snd_nxt += 1;
            self.emit(seq, now, cfg, act);
        }
    }

    fn reduce(&mut self, now: Time, cwnd: f64, cause: ReductionCause) {
        if let Some(t) = &mut self.trace {
            t.push(Reduction {
                at: now,
                cwnd_before: self.cwnd,
                cwnd_after: cwnd,
                ssthresh: self.ssthresh,
                cause,
            });
        }
        self.cwnd = cwnd;
    }

    fn rtt_sample(&mut self, r: f64, cfg: &TcpConfig) {
        if self.has_rtt {
            self.rttvar = 0.75 * self.rttvar + 0.25 * (self.srtt - r).abs();
            self.srtt = 0.875 * self.srtt + 0.125 * r;
        } else {
            self.srtt = r;
            self.rttvar = r / 2.0;
            self.has_rtt = true;
        }
        let rto = self.srtt + (4.0 * self.rttvar).max(cfg.granularity.as_secs_f64());
        self.rto_base = Dur::from_secs_f64(rto).max(cfg.min_rto).min(cfg.max_rto);
        self.backoff = 1;
        self.stats.rtt_sum_s += r;
        self.stats.rtt_samples += 1;
    }

    fn mark_sacked(&mut self, blocks: &[(u32, u32)]) {
        for &(start, end) in blocks {
            let start = start.max(self.snd_una);
            let end = end.min(self.snd_max);
            for seq in start..end {
                let f = &mut self.scoreboard[(seq - self.snd_una) as usize];
                if *f & SACKED == 0 {
                    if *f & RETX != 0 {
                        self.retx_out -= 1;
                    }
                    *f |= SACKED;
                    self.sacked += 1;
                }
            }
            if end > self.high_sack {
                self.high_sack = end;
            }
        }
    }

    /// Half the window, as ns-2 (`slowdown(CLOSE_SSTHRESH_HALF)`) and Linux
    /// (`tcp_reno_ssthresh`) compute it. RFC 5681's FlightSize / 2 differs after a
    /// long NewReno recovery, when snd_max - snd_una counts thousands of packets that
    /// already reached the receiver out of order.
    fn half_window(&self, cfg: &TcpConfig) -> f64 {
        (self.cwnd.min(cfg.max_window as f64) / 2.0).max(2.0)
    }

    fn enter_recovery(&mut self, now: Time, cfg: &TcpConfig, act: &mut Actions) {
        self.ssthresh = self.half_window(cfg);
        self.recover = self.snd_max;
        // RFC 3168 (6.1.2): one reduction for the losses and marks of one window.
        self.ecn_recover = self.snd_max;
        self.ecn_hold = false;
        self.in_recovery = true;
        self.timed = None;
        self.stats.fast_recoveries += 1;
        let cwnd = match cfg.variant {
            Variant::Sack => self.ssthresh,
            Variant::Reno | Variant::NewReno => self.ssthresh + cfg.dupthresh as f64,
        };
        self.reduce(now, cwnd, ReductionCause::FastRetransmit);
        let una = self.snd_una;
        self.retransmit(una, now, cfg, act);
        self.restart_rto(now, cfg, act);
    }

    /// An ACK arrived: cumulative `ack`, SACK `blocks`, ECN-echo `ece`.
    pub fn on_ack(
        &mut self,
        now: Time,
        ack: u32,
        blocks: &[(u32, u32)],
        ece: bool,
        cfg: &TcpConfig,
        act: &mut Actions,
    ) {
        let ack = ack.min(self.snd_max);
        if cfg.variant == Variant::Sack {
            self.mark_sacked(blocks);
        }
        let mut object_ended = false;
        if ack > self.snd_una {
            let newly = ack - self.snd_una;
            if let Some((s, t)) = self.timed {
                if ack > s {
                    self.rtt_sample(now.saturating_since(t).as_secs_f64(), cfg);
                    self.timed = None;
                }
            }
            for _ in 0..newly {
                let f = self
                    .scoreboard
                    .pop_front()
                    .expect("scoreboard covers the window");
                if f & SACKED != 0 {
                    self.sacked -= 1;
                } else if f & RETX != 0 {
                    self.retx_out -= 1;
                }
            }
            self.snd_una = ack;
            self.snd_nxt = self.snd_nxt.max(ack);
            self.high_sack = self.high_sack.max(ack);
            if self.in_recovery {
                if ack >= self.recover {
                    self.in_recovery = false;
                    self.dupacks = 0;
                    self.cwnd = self.ssthresh;
                } else {
                    match cfg.variant {
                        Variant::Reno => {
                            self.in_recovery = false;
                            self.dupacks = 0;
                            self.cwnd = self.ssthresh;
                        }
                        Variant::NewReno => {
                            // Partial ACK: the next hole is lost too.
                            self.cwnd = (self.cwnd - newly as f64 + 1.0).max(1.0);
                            let una = self.snd_una;
                            self.retransmit(una, now, cfg, act);
                        }
                        Variant::Sack => {}
                    }
                }
            } else if cfg.ecn && ece {
                // RFC 3168 (6.1.2): no growth on an ACK that carries ECN-Echo.
                self.dupacks = 0;
            } else {
                self.dupacks = 0;
                let acked = newly as f64;
                if self.cwnd < self.ssthresh {
                    self.cwnd += match cfg.counting {
                        Counting::Packet => 1.0,
                        Counting::Byte => acked.min(2.0),
                    };
                } else {
                    self.cwnd += match cfg.counting {
                        Counting::Packet => 1.0,
                        Counting::Byte => acked,
                    } / self.cwnd;
                }
                self.cwnd = self.cwnd.min(cfg.max_window as f64);
            }
            if self.snd_una < self.snd_max {
                self.restart_rto(now, cfg, act);
            } else if !self.ecn_hold {
                self.stop_rto(act);
            }
            if self.snd_una >= self.object_end {
                object_ended = true;
                self.object_done(now, cfg, act);
            }
        } else if ack == self.snd_una && self.snd_una < self.snd_max {
            self.dupacks += 1;
            if !self.in_recovery {
                if self.dupacks == cfg.dupthresh
                    && (cfg.variant == Variant::Reno || ack >= self.recover)
                {
                    self.enter_recovery(now, cfg, act);
                }
            } else if cfg.variant != Variant::Sack {
                self.cwnd += 1.0; // window inflation: one packet left the network
            }
        }
        // RFC 3168 (6.1.2). The ACK must cover a packet sent after the last reduction
        // (ack > ecn_recover: the ACK of the last packet of the old window still
        // carries ECE, since its CWR is yet to arrive). An object that just ended
        // takes its marks with it: the next starts over, as a new connection would.
        if cfg.ecn
            && ece
            && !self.in_recovery
            && ack > self.ecn_recover
            && !object_ended
            && (self.snd_una < self.snd_max || self.has_new_data())
        {
            self.ssthresh = self.half_window(cfg);
            self.ecn_recover = self.snd_max;
            self.cwr_pending = true;
            if self.cwnd < 2.0 {
                // The window is one packet already: halving would not slow the
                // flow, so the retransmission timer paces its next new packet.
                self.reduce(now, 1.0, ReductionCause::Ecn);
                self.ecn_hold = true;
                self.restart_rto(now, cfg, act);
            } else {
                let half = (self.cwnd.min(cfg.max_window as f64) / 2.0).max(1.0);
                self.reduce(now, half, ReductionCause::Ecn);
            }
        }
        self.send_allowed(now, cfg, act);
    }

    fn object_done(&mut self, now: Time, cfg: &TcpConfig, act: &mut Actions) {
        let Some(size) = cfg.object_size else { return };
        self.stats.objects += 1;
        // The next object starts over in slow start, as a new connection would.
        self.cwnd = cfg.initial_window as f64;
        self.ssthresh = cfg.initial_ssthresh;
        if cfg.think.is_zero() {
            self.object_end = self.object_end.saturating_add(size);
        } else {
            self.thinking = true;
            act.timer(TimerKind::Send, TimerCmd::Arm(now + cfg.think));
        }
    }

    /// The think time between web objects is over.
    pub fn on_send_timer(&mut self, now: Time, cfg: &TcpConfig, act: &mut Actions) {
        if self.thinking {
            self.thinking = false;
            self.object_end = self.object_end.saturating_add(cfg.object_size.unwrap_or(0));
        }
        self.send_allowed(now, cfg, act);
    }

    /// The retransmission timer expired.
    pub fn on_rto(&mut self, now: Time, cfg: &TcpConfig, act: &mut Actions) {
        self.rto_running = false;
        let held = std::mem::take(&mut self.ecn_hold);
        if self.snd_una >= self.snd_max {
            if held {
                // RFC 3168 (6.1.2): the timer an ECE reset at one packet expired;
                // not a loss, so the one-packet window sends its next new packet.
                self.send_allowed(now, cfg, act);
            }
            return;
        }
        self.stats.timeouts += 1;
        self.ssthresh = self.half_window(cfg);
        self.reduce(now, 1.0, ReductionCause::Timeout);
        self.recover = self.snd_max;
        self.in_recovery = false;
        self.dupacks = 0;
        self.backoff = (self.backoff * 2).min(64);
        self.timed = None;
        for f in self.scoreboard.iter_mut() {
            *f = 0;
        }
        self.sacked = 0;
        self.retx_out = 0;
        self.high_sack = self.snd_una;
        self.hole_hint = self.snd_una;
        self.snd_nxt = self.snd_una;
        self.restart_rto(now, cfg, act);
        self.send_allowed(now, cfg, act);
    }
}

/// The receiving end: cumulative ACKs, SACK blocks, delayed ACKs, ECN echo.
#[derive(Debug, Clone, Default)]
pub struct TcpReceiver {
    rcv_nxt: u32,
    /// Out-of-order packets held, as sorted disjoint `[start, end)` runs.
    ooo: Vec<(u32, u32)>,
    unacked: u32,
    ece: bool,
    /// Packets delivered in order to the application.
    pub delivered: u64,
}

impl TcpReceiver {
    pub fn rcv_nxt(&self) -> u32 {
        self.rcv_nxt
    }

    pub fn on_data(
        &mut self,
        now: Time,
        seq: u32,
        ce: bool,
        cwr: bool,
        cfg: &TcpConfig,
        act: &mut Actions,
    ) {
        if cwr {
            self.ece = false;
        }
        if ce {
            self.ece = true;
        }
        if seq == self.rcv_nxt {
            let had_holes = !self.ooo.is_empty();
            self.rcv_nxt += 1;
            if let Some(&(start, end)) = self.ooo.first() {
                if start == self.rcv_nxt {
                    self.rcv_nxt = end;
                    self.ooo.remove(0);
                }
            }
            self.delivered += (self.rcv_nxt - seq) as u64;
            if cfg.delayed_ack && !had_holes {
                self.unacked += 1;
                if self.unacked >= 2 {
                    self.ack_now(None, act);
                } else {
                    act.timer(TimerKind::DelAck, TimerCmd::Arm(now + cfg.delack_timeout));
                }
            } else {
                self.ack_now(None, act);
            }
        } else if seq > self.rcv_nxt {
            self.insert_ooo(seq);
            self.ack_now(Some(seq), act);
        } else {
            self.ack_now(None, act);
        }
    }

    pub fn on_delack_timer(&mut self, act: &mut Actions) {
        if self.unacked > 0 {
            self.ack_now(None, act);
        }
    }

    fn insert_ooo(&mut self, seq: u32) {
        let i = self.ooo.partition_point(|&(_, end)| end < seq);
        if let Some(run) = self.ooo.get_mut(i) {
            if run.0 <= seq && seq < run.1 {
                return; // a duplicate
            }
            if run.1 == seq {
                run.1 += 1;
                if let Some(&(next_start, next_end)) = self.ooo.get(i + 1) {
                    if next_start == seq + 1 {
                        self.ooo[i].1 = next_end;
                        self.ooo.remove(i + 1);
                    }
                }
                return;
            }
            if run.0 == seq + 1 {
                run.0 = seq;
                return;
            }
        }
        self.ooo.insert(i, (seq, seq + 1));
    }

    fn ack_now(&mut self, latest: Option<u32>, act: &mut Actions) {
        let mut sack = SackBlocks::default();
        // RFC 2018: the first block holds the packet that triggered this ACK.
        let first = latest.and_then(|s| self.ooo.iter().position(|&(a, b)| a <= s && s < b));
        if let Some(i) = first {
            sack.push(self.ooo[i]);
        }
        for (i, &run) in self.ooo.iter().enumerate().rev() {
            if Some(i) != first {
                sack.push(run);
            }
        }
        act.segs.push(Seg::Ack {
            ack: self.rcv_nxt,
            sack,
            ece: self.ece,
        });
        self.unacked = 0;
        act.timer(TimerKind::DelAck, TimerCmd::Cancel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn datas(act: &Actions) -> Vec<u32> {
        act.segs
            .iter()
            .filter_map(|s| match s {
                Seg::Data { seq, .. } => Some(*seq),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn slow_start_doubles_per_round_trip() {
        let cfg = TcpConfig::default();
        let mut s = TcpSender::new(&cfg);
        let mut act = Actions::default();
        s.start(Time::ZERO, &cfg, &mut act);
        assert_eq!(datas(&act), vec![0]);
        let mut next_ack = 0;
        for round in 1..=4u32 {
            let sent: Vec<u32> = datas(&act);
            act.clear();
            for _ in &sent {
                next_ack += 1;
                s.on_ack(
                    Time::from_secs(round as u64),
                    next_ack,
                    &[],
                    false,
                    &cfg,
                    &mut act,
                );
            }
            assert_eq!(datas(&act).len() as u32, 2u32.pow(round), "round {round}");
        }
    }

    #[test]
    fn receiver_acks_cumulatively_and_sacks_the_latest_run_first() {
        let cfg = TcpConfig::default();
        let mut r = TcpReceiver::default();
        let mut act = Actions::default();
        for seq in [0, 1, 3, 4, 6] {
            r.on_data(Time::ZERO, seq, false, false, &cfg, &mut act);
        }
        let Seg::Ack { ack, sack, .. } = *act.segs.last().unwrap() else {
            panic!()
        };
        assert_eq!(ack, 2);
        assert_eq!(sack.as_slice(), &[(6, 7), (3, 5)]);
        act.clear();
        r.on_data(Time::ZERO, 2, false, false, &cfg, &mut act);
        let Seg::Ack { ack, .. } = act.segs[0] else {
            panic!()
        };
        assert_eq!(ack, 5, "filling the hole acknowledges the held run");
        assert_eq!(r.delivered, 5);
    }

    #[test]
    fn delayed_ack_acks_every_second_packet_or_on_timeout() {
        let cfg = TcpConfig {
            delayed_ack: true,
            ..Default::default()
        };
        let mut r = TcpReceiver::default();
        let mut act = Actions::default();
        r.on_data(Time::ZERO, 0, false, false, &cfg, &mut act);
        assert!(act.segs.is_empty());
        assert_eq!(
            act.timers[TimerKind::DelAck as usize],
            Some(TimerCmd::Arm(Time::from_nanos(100_000_000)))
        );
        r.on_data(Time::ZERO, 1, false, false, &cfg, &mut act);
        assert_eq!(act.segs.len(), 1);
        act.clear();
        r.on_data(Time::ZERO, 2, false, false, &cfg, &mut act);
        assert!(act.segs.is_empty());
        r.on_delack_timer(&mut act);
        assert_eq!(act.segs.len(), 1);
    }

    #[test]
    fn ecn_echo_halves_once_per_window_and_sets_cwr() {
        let cfg = TcpConfig {
            ecn: true,
            initial_window: 20,
            initial_ssthresh: 20.0,
            ..Default::default()
        };
        let mut s = TcpSender::new(&cfg);
        let mut act = Actions::default();
        s.start(Time::ZERO, &cfg, &mut act);
        act.clear();
        s.on_ack(Time::ZERO, 1, &[], true, &cfg, &mut act);
        let after_first = s.cwnd();
        assert!((after_first - 10.0).abs() < 0.1, "{after_first}");
        // More ECE within the same window of data: no further reduction.
        act.clear();
        for a in 2..12 {
            s.on_ack(Time::ZERO, a, &[], true, &cfg, &mut act);
        }
        assert!(s.cwnd() >= after_first - 1e-9, "{}", s.cwnd());
        // The first packet sent after the reduction carries CWR, the next ones do not.
        s.on_ack(Time::ZERO, 13, &[], false, &cfg, &mut act);
        let cwr: Vec<bool> = act
            .segs
            .iter()
            .filter_map(|g| match g {
                Seg::Data { cwr, .. } => Some(*cwr),
                _ => None,
            })
            .collect();
        assert_eq!(cwr.first(), Some(&true), "{:?}", act.segs);
        assert!(cwr[1..].iter().all(|c| !c));
    }

    /// Acknowledges, in order and one by one, every packet in flight at the call
    /// (`ece` on every ACK); returns the packets sent meanwhile, now in flight.
    #[track_caller]
    fn ack_round(
        s: &mut TcpSender,
        in_flight: &[u32],
        ece: bool,
        now: Time,
        cfg: &TcpConfig,
    ) -> Vec<u32> {
        let mut sent = Vec::new();
        let mut act = Actions::default();
        for &seq in in_flight {
            act.clear();
            s.on_ack(now, seq + 1, &[], ece, cfg, &mut act);
            sent.extend(datas(&act));
        }
        sent
    }

    fn ecn_cfg(window: u32) -> TcpConfig {
        TcpConfig {
            ecn: true,
            initial_window: window,
            initial_ssthresh: window as f64,
            ..Default::default()
        }
    }

    fn ecn_reductions(s: &TcpSender) -> Vec<f64> {
        s.trace
            .as_ref()
            .unwrap()
            .iter()
            .filter(|r| r.cause == ReductionCause::Ecn)
            .map(|r| r.cwnd_after)
            .collect()
    }

    #[test]
    fn ecn_echo_on_every_ack_of_a_window_halves_once_and_the_next_window_again() {
        let cfg = ecn_cfg(20);
        let mut s = TcpSender::new(&cfg);
        s.trace = Some(Vec::new());
        let mut act = Actions::default();
        s.start(Time::ZERO, &cfg, &mut act);
        let first: Vec<u32> = datas(&act);
        assert_eq!(first.len(), 20);
        // Every ACK of the window echoes ECE, the last one too (the receiver has not
        // seen CWR yet): one halving, and no growth on those ACKs (RFC 3168 6.1.2).
        let second = ack_round(&mut s, &first, true, Time::ZERO, &cfg);
        assert_eq!(ecn_reductions(&s), vec![10.0]);
        assert_eq!(s.cwnd(), 10.0);
        assert_eq!(s.ssthresh(), 10.0);
        assert_eq!(second, (20..30).collect::<Vec<u32>>());
        // The first ECE on a packet sent after the reduction halves again.
        let mut act = Actions::default();
        s.on_ack(Time::ZERO, 21, &[], true, &cfg, &mut act);
        assert_eq!(ecn_reductions(&s), vec![10.0, 5.0]);
        assert_eq!(s.ssthresh(), 5.0);
    }

    #[test]
    fn repeated_ecn_echo_walks_cwnd_down_to_one_packet_and_not_below() {
        let cfg = ecn_cfg(16);
        let mut s = TcpSender::new(&cfg);
        s.trace = Some(Vec::new());
        let mut act = Actions::default();
        s.start(Time::ZERO, &cfg, &mut act);
        let mut in_flight = datas(&act);
        for _ in 0..5 {
            in_flight = ack_round(&mut s, &in_flight, true, Time::ZERO, &cfg);
        }
        // 16 -> 8 -> 4 -> 2 -> 1, then the timer takes over (the next test).
        assert_eq!(ecn_reductions(&s), vec![8.0, 4.0, 2.0, 1.0, 1.0]);
        assert_eq!(s.cwnd(), 1.0);
        assert_eq!(s.ssthresh(), 2.0, "ssthresh keeps its floor of 2");
        assert!(in_flight.is_empty(), "held: {in_flight:?}");
        assert_eq!(s.stats.timeouts, 0);
    }

    #[test]
    fn ecn_echo_at_one_packet_sends_nothing_new_until_the_retransmission_timer() {
        let cfg = ecn_cfg(1);
        let mut s = TcpSender::new(&cfg);
        let mut act = Actions::default();
        s.start(Time::ZERO, &cfg, &mut act);
        assert_eq!(datas(&act), vec![0]);
        let mut now = Time::ZERO + Dur::from_millis(100);
        for seq in 1..=3u32 {
            // The ACK of the one packet in flight echoes ECE: nothing is sent, and
            // the retransmission timer is reset rather than stopped.
            act.clear();
            s.on_ack(now, seq, &[], true, &cfg, &mut act);
            assert_eq!(datas(&act), Vec::<u32>::new(), "ack {seq}");
            assert_eq!(s.cwnd(), 1.0);
            let fire = now + s.rto(&cfg);
            assert_eq!(
                act.timers[TimerKind::Rto as usize],
                Some(TimerCmd::Arm(fire))
            );
            // Later ACKs (duplicates here) release nothing either.
            act.clear();
            s.on_ack(now, seq, &[], true, &cfg, &mut act);
            assert!(act.segs.is_empty());
            // The timer's expiry sends exactly one new packet, with CWR; not a loss.
            act.clear();
            s.on_rto(fire, &cfg, &mut act);
            assert_eq!(act.segs, vec![Seg::Data { seq, cwr: true }]);
            assert_eq!(s.cwnd(), 1.0);
            assert_eq!(s.ssthresh(), 2.0);
            assert_eq!(s.stats.timeouts, 0);
            assert_eq!(s.stats.retransmits, 0);
            now = fire + Dur::from_millis(100);
        }
        // Unmarked again: the window grows and the flow sends on ACKs alone.
        act.clear();
        s.on_ack(now, 4, &[], false, &cfg, &mut act);
        assert_eq!(datas(&act), vec![4, 5]);
        assert_eq!(s.cwnd(), 2.0);
    }

    #[test]
    fn a_loss_still_floors_ssthresh_at_two_packets() {
        // Fast retransmit with a window of 3: ssthresh = max(3 / 2, 2).
        let cfg = TcpConfig {
            dupthresh: 2,
            ..ecn_cfg(3)
        };
        let mut s = TcpSender::new(&cfg);
        let mut act = Actions::default();
        s.start(Time::ZERO, &cfg, &mut act);
        s.on_ack(Time::ZERO, 0, &[], false, &cfg, &mut act);
        s.on_ack(Time::ZERO, 0, &[], false, &cfg, &mut act);
        assert!(s.in_recovery());
        assert_eq!(s.ssthresh(), 2.0);
        // A timeout at one packet: cwnd 1, ssthresh still 2.
        let cfg = ecn_cfg(1);
        let mut s = TcpSender::new(&cfg);
        s.start(Time::ZERO, &cfg, &mut act);
        s.on_rto(Time::from_secs(1), &cfg, &mut act);
        assert_eq!((s.cwnd(), s.ssthresh()), (1.0, 2.0));
        assert_eq!(s.stats.timeouts, 1);
        // Whereas an ECE at the same window of 3 takes cwnd below 2.
        let cfg = ecn_cfg(3);
        let mut s = TcpSender::new(&cfg);
        s.start(Time::ZERO, &cfg, &mut act);
        s.on_ack(Time::ZERO, 1, &[], true, &cfg, &mut act);
        assert_eq!((s.cwnd(), s.ssthresh()), (1.5, 2.0));
    }

    #[test]
    fn new_data_in_sack_recovery_does_not_postpone_the_retransmission_timer() {
        // Packet 0 is lost, then its retransmission too: only the RTO can repair
        // it. SACKed new data keeps flowing meanwhile, and must not keep pushing the
        // timer back (it did once, and such flows sent for ever without delivering).
        let cfg = TcpConfig {
            variant: Variant::Sack,
            initial_window: 10,
            initial_ssthresh: 10.0,
            ..Default::default()
        };
        let mut s = TcpSender::new(&cfg);
        let mut act = Actions::default();
        s.start(Time::ZERO, &cfg, &mut act);
        for k in 1..=3u32 {
            act.clear();
            s.on_ack(
                Time::from_nanos(k as u64),
                0,
                &[(1, 1 + k)],
                false,
                &cfg,
                &mut act,
            );
        }
        assert!(s.in_recovery());
        let armed = act.timers[TimerKind::Rto as usize];
        assert!(
            matches!(armed, Some(TimerCmd::Arm(_))),
            "entering recovery restarts the timer"
        );
        for k in 4..=5u32 {
            s.on_ack(
                Time::from_nanos(k as u64),
                0,
                &[(1, 1 + k)],
                false,
                &cfg,
                &mut act,
            );
        }
        for k in 6..=9u32 {
            act.clear();
            s.on_ack(
                Time::from_nanos(k as u64),
                0,
                &[(1, 1 + k)],
                false,
                &cfg,
                &mut act,
            );
            assert!(
                datas(&act).iter().any(|&q| q >= 10),
                "new data flows in recovery"
            );
            assert_eq!(
                act.timers[TimerKind::Rto as usize],
                None,
                "sending must not restart a running timer"
            );
        }
        act.clear();
        s.on_rto(Time::from_secs(2), &cfg, &mut act);
        assert_eq!(datas(&act), vec![0], "the timeout resends the lost packet");
        assert_eq!(s.stats.timeouts, 1);
    }
}
