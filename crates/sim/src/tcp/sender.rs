//! The sending end: window, loss recovery (Reno, NewReno, SACK), RTO, ECN response
//! (RFC 3168's, or DCTCP's and Prague's through [`super::dctcp`]), pacing.

use super::congestion::{AckInfo, Congestion, Signal};
use super::dctcp::Acked;
use super::{
    Actions, Recovery, Reduction, ReductionCause, Seg, TcpConfig, TcpSample, TcpStats, TimerCmd,
    Variant,
};
use crate::event::TimerKind;
use aqm::{Dur, Time};
use std::collections::VecDeque;

mod ecn;
mod linux_rtt;
mod pacing;
mod prr;
mod rack_tlp;
pub(super) mod rate;
mod recovery;
mod reordering;
mod rto;
mod sack;
#[cfg(test)]
mod scripted;
mod timeout;
mod undo;

use linux_rtt::{LinuxRtt, Samples as LinuxSamples};
use prr::Prr;
use rack_tlp::Tlp;
use reordering::Reordering;
use undo::{Undo, EVER_RETX};

/// The sender before an ACK: what the ACK's effects are measured from.
struct Before {
    una: u32,
    sacked: u32,
    cwnd: f64,
    pipe: u32,
    high_sack: u32,
}

const SACKED: u8 = 1;
const RETX: u8 = 2;

#[derive(Debug, Clone)]
pub struct TcpSender {
    snd_una: u32,
    snd_nxt: u32,
    snd_max: u32,
    cwnd: f64,
    ssthresh: f64,
    dupacks: u32,
    in_recovery: bool,
    /// A partial ACK has come in the current recovery (NewReno's impatient timer
    /// restarts only on the first; ns-2's `firstpartial_`).
    partial_acked: bool,
    /// One past the highest packet sent when recovery (or a timeout) began; 0
    /// before any loss (RFC 6582 starts it at the initial sequence number, below
    /// the first packet).
    recover: u32,
    srtt: f64,
    rttvar: f64,
    has_rtt: bool,
    rto_base: Dur,
    backoff: u32,
    /// Karn: the packet being timed and when it was sent (`Time::MAX`: none).
    /// Two fields, not an `Option` of a pair: that was 24 bytes, this 12, and
    /// every flow has one (BENCHMARKS.md, "Memory per flow").
    timed_seq: u32,
    timed_at: Time,
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
    /// When the current object could start (web flows).
    object_start: Time,
    thinking: bool,
    stopped: bool,
    /// Pacing: no packet but the rest of a Linux TSO burst leaves before the `Send` timer.
    pace_wait: bool,
    cc: Congestion,
    /// What a sender keeps only for a while, boxed, as it spends most of its life
    /// without: send times and PRR's state (a sender must fit 232 bytes).
    /// `None` is the same as an empty one.
    aside: Option<Box<Aside>>,
    pub stats: TcpStats,
    /// Window reductions, when `trace` is on (boxed: the sender is a run's largest
    /// per-flow structure, and tracing is rare).
    pub trace: Option<Box<Vec<Reduction>>>,
}

#[derive(Debug, Clone, Default)]
struct Aside {
    /// Send times of packets `base..base + times.len()` from the first not yet
    /// acknowledged, kept while the congestion control wants an RTT sample per
    /// ACK (HyStart++ in the first slow start) and always under the Linux
    /// profile (each packet's last transmission).
    times: VecDeque<Time>,
    base: u32,
    /// Proportional rate reduction's state during a SACK recovery, when `prr` is on.
    prr: Option<Prr>,
    /// The Linux profile's RTT estimator.
    linux: Option<LinuxRtt>,
    /// The Linux profile's tail loss probe.
    tlp: Tlp,
    /// The Linux profile after a timeout: one past the last segment it
    /// counted lost (0: none; `timeout`).
    lost_to: u32,
    /// The Linux profile's undo of spurious reductions (`undo`), RACK
    /// reordering window (`reordering`) and paced TSO bursts (`pacing`).
    undo: Undo,
    reordering: Reordering,
    burst: pacing::Burst,
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
            partial_acked: false,
            recover: 0,
            srtt: 0.0,
            rttvar: 0.0,
            has_rtt: false,
            rto_base: cfg.initial_rto,
            backoff: 1,
            timed_seq: 0,
            timed_at: Time::MAX,
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
            object_start: Time::ZERO,
            thinking: false,
            stopped: false,
            pace_wait: false,
            cc: Congestion::new(cfg),
            aside: None,
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
    /// DCTCP's or Prague's congestion estimate.
    pub fn alpha(&self) -> Option<f64> {
        self.cc.alpha()
    }
    /// The smoothed RTT, seconds (0 before the first sample).
    pub fn srtt(&self) -> f64 {
        self.srtt
    }
    /// Packets sent and not yet cumulatively acknowledged.
    pub fn outstanding(&self) -> u32 {
        self.snd_max - self.snd_una
    }
    /// The sender's state now, for the TCP trace.
    pub fn sample(&self, now: Time, flow: u32, cfg: &TcpConfig) -> TcpSample {
        let bbr = self.cc.bbr_ref().map(|f| f.model.estimates());
        TcpSample {
            at: now,
            flow,
            cwnd: self.cwnd,
            ssthresh: self.ssthresh,
            srtt_s: self.srtt,
            rto_s: self.rto(cfg).as_secs_f64(),
            in_flight: self.outstanding(),
            pacing_rate_pps: self.pacing_rate_pps(cfg),
            bbr_bw_pps: bbr.map(|(bw, _)| bw).filter(|&bw| bw > 0.0),
            bbr_min_rtt_s: bbr.and_then(|(_, m)| m).map(|m| m.as_secs_f64()),
        }
    }

    /// Seeds the congestion control's own randomness (BBR's), from the flow's stream.
    pub fn seed(&mut self, seed: u64, cfg: &TcpConfig) {
        self.cc.seed(seed, cfg);
    }

    /// Starts sending.
    pub fn start(&mut self, now: Time, cfg: &TcpConfig, act: &mut Actions) {
        self.object_start = now;
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
        let head_again = cfg.is_linux() && seq == self.snd_una && seq < self.snd_max;
        if cfg.variant.is_bbr() {
            self.bbr_sent(seq, now);
        }
        if let Some(prr) = self.aside.as_mut().and_then(|a| a.prr.as_mut()) {
            prr.sent(1);
        }
        if seq >= self.snd_max {
            debug_assert_eq!(seq, self.snd_max);
            self.snd_max = seq + 1;
            self.scoreboard.push_back(0);
            if cfg.is_linux() || self.cc.wants_rtt_samples() {
                let s = self.aside.get_or_insert_with(Box::default);
                if s.times.is_empty() {
                    s.base = seq;
                }
                s.times.push_back(now);
            }
            // Karn: time one packet per window, never during recovery, where a
            // cumulative ACK waits for the holes below it and would inflate the
            // sample. The Linux profile samples every ACK instead (timestamps).
            if self.timed().is_none() && !self.in_recovery && !cfg.is_linux() {
                self.set_timed(Some((seq, now)));
            }
        } else {
            self.stats.retransmits += 1;
            if cfg.is_linux() {
                self.resent_at(seq, now);
                if cfg.variant.recovery() == Recovery::Sack {
                    self.undo_count_retransmission(now);
                }
            }
            if matches!(self.timed(), Some((s, _)) if s == seq) {
                self.set_timed(None); // Karn: never time a retransmitted packet.
            }
        }
        self.stats.sent += 1;
        let cwr = std::mem::take(&mut self.cwr_pending);
        act.segs.push(Seg::Data { seq, cwr });
        // A probe armed moves with every send (`tcp_schedule_loss_probe`);
        // Linux also restarts the timer when it sends the first segment again
        // (`tcp_xmit_retransmit_queue`), so the timeout waits a whole RTO for
        // that retransmission, not from the last ACK that advanced.
        if !self.rto_running || self.probe_armed() || (head_again && !self.reo_armed()) {
            self.restart_rto(now, cfg, act);
        }
        self.pace(now, cfg, act);
    }

    fn retransmit(&mut self, seq: u32, now: Time, cfg: &TcpConfig, act: &mut Actions) {
        let i = (seq - self.snd_una) as usize;
        if self.scoreboard[i] & RETX == 0 && self.scoreboard[i] & SACKED == 0 {
            self.retx_out += 1;
        }
        self.scoreboard[i] |= RETX | EVER_RETX;
        self.emit(seq, now, cfg, act);
    }

    fn send_allowed(&mut self, now: Time, cfg: &TcpConfig, act: &mut Actions) {
        if self.ecn_hold {
            return;
        }
        if cfg.variant.recovery() == Recovery::Sack && (self.in_recovery || self.in_loss()) {
            while (self.pipe() as f64) < self.cwnd.floor() && !self.pace_holds(now) {
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
            && !self.pace_holds(now)
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

    fn forget_send_times(&mut self) {
        match &mut self.aside {
            Some(a) if a.prr.is_some() || a.linux.is_some() => a.times.clear(),
            _ => self.aside = None,
        }
    }

    /// Forgets the send times of packets below `ack`.
    fn drain_send_times(&mut self, ack: u32) {
        if let Some(s) = self.aside.as_deref_mut() {
            let covered = (ack.saturating_sub(s.base) as usize).min(s.times.len());
            s.times.drain(..covered);
            s.base += covered as u32;
        }
    }

    /// The RTT sample of a new cumulative ACK `ack` (of the packet just below it,
    /// if it was sent once), and forgets the send times it covers.
    fn ack_rtt(&mut self, ack: u32, now: Time) -> Option<f64> {
        if !self.cc.wants_rtt_samples() {
            self.forget_send_times();
            return None;
        }
        let s = self.aside.as_deref_mut()?;
        let last = ack - 1;
        let sample = (last >= s.base)
            .then(|| s.times.get((last - s.base) as usize))
            .flatten()
            .filter(|_| self.scoreboard[(last - self.snd_una) as usize] & RETX == 0)
            .map(|&t| now.saturating_since(t).as_secs_f64());
        self.drain_send_times(ack);
        sample
    }

    /// ssthresh after a congestion signal: the algorithm's reduced window, at
    /// least two packets (RFC 5681).
    fn reduced_ssthresh(&mut self, signal: Signal, cfg: &TcpConfig) -> f64 {
        self.cc.on_signal(self.cwnd, signal, cfg).max(2.0)
    }

    /// An ACK arrived: cumulative `ack`, SACK `blocks`, ECN-echo `ece`, no
    /// timestamp.
    pub fn on_ack(
        &mut self,
        now: Time,
        ack: u32,
        blocks: &[(u32, u32)],
        ece: bool,
        cfg: &TcpConfig,
        act: &mut Actions,
    ) {
        self.on_ack_echoing(now, ack, blocks, ece, 0, cfg, act);
    }

    /// An ACK arrived echoing timestamp `tsecr` (`super::timestamp` ticks;
    /// 0: none), which the Linux profile's undo reads.
    #[allow(clippy::too_many_arguments)]
    pub fn on_ack_echoing(
        &mut self,
        now: Time,
        ack: u32,
        blocks: &[(u32, u32)],
        ece: bool,
        tsecr: u32,
        cfg: &TcpConfig,
        act: &mut Actions,
    ) {
        let ack = ack.min(self.snd_max);
        let recovery = cfg.variant.recovery();
        let linux = cfg.is_linux();
        let before = Before {
            una: self.snd_una,
            sacked: self.sacked,
            cwnd: self.cwnd,
            pipe: self.pipe(),
            high_sack: self.high_sack,
        };
        // The Linux profile's undo (`undo`); the `ns2` profile's ACKs never
        // take it.
        let undo = linux && recovery == Recovery::Sack;
        let (mut seen, blocks) = if undo {
            let (seen, rest) = self.undo_before_ack(ack, blocks, tsecr);
            (Some(seen), rest)
        } else {
            (None, blocks)
        };
        let newly_sacked = if recovery == Recovery::Sack {
            let sacked = self.mark_sacked(blocks);
            if undo && sacked.late_original {
                self.note_reordering();
            }
            sacked.newly
        } else {
            None
        };
        let samples = if linux {
            self.linux_samples(now, ack, newly_sacked, tsecr)
        } else {
            Default::default()
        };
        let mut object_ended = false;
        if ack > self.snd_una {
            object_ended = self.on_new_ack(now, ack, ece, &before, samples, cfg, act);
        } else if ack == self.snd_una && self.snd_una < self.snd_max {
            self.on_dup_ack(now, ack, samples, cfg, act);
        }
        if ece && cfg.ecn_capable() {
            self.ecn_echo(now, ack, object_ended, cfg, act);
        }
        let rexmit_new = match &mut seen {
            Some(seen) => {
                self.undo_after_ack(now, seen, (before.una, ack), newly_sacked.is_some(), cfg)
            }
            None => false,
        };
        if let Some(t) = samples
            .newest_sent
            .filter(|_| linux && recovery == Recovery::Sack)
        {
            self.rack_on_ack(now, t, cfg, act);
        }
        if self.in_recovery {
            self.prr_window(&before);
        }
        if cfg.variant.is_bbr() {
            self.bbr_acked(
                now,
                ack,
                blocks,
                ece && cfg.ecn_capable(),
                (before.cwnd, before.pipe),
                cfg,
            );
        }
        if rexmit_new {
            self.send_new_data(now, cfg, act);
        } else {
            self.send_allowed(now, cfg, act);
        }
    }

    /// An ACK that acknowledges new data, `ack` above `snd_una`: RTT samples,
    /// the scoreboard, recovery's end or its partial ACK, the window's growth,
    /// the timer. Returns whether the ACK ended the current object.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn on_new_ack(
        &mut self,
        now: Time,
        ack: u32,
        ece: bool,
        before: &Before,
        samples: LinuxSamples,
        cfg: &TcpConfig,
        act: &mut Actions,
    ) -> bool {
        let linux = cfg.is_linux();
        let newly = ack - self.snd_una;
        if let Some((s, t)) = self.timed() {
            if ack > s {
                self.rtt_sample(now.saturating_since(t).as_secs_f64(), cfg);
                self.set_timed(None);
            }
        }
        let rtt = if linux { None } else { self.ack_rtt(ack, now) };
        let slow_start = self.cwnd < self.ssthresh;
        let snd_max = self.snd_max;
        if let Some(sc) = self.cc.scalable() {
            sc.on_ack(&Acked {
                now,
                newly,
                ece,
                ack,
                snd_max,
                slow_start,
            });
        }
        // Segments below the highest SACKed before this ACK: one never sent
        // twice among them came late (reordering, for the Linux profile).
        let below_sacked = before.high_sack.min(ack).saturating_sub(self.snd_una);
        let mut late_original = false;
        for k in 0..newly {
            let f = self
                .scoreboard
                .pop_front()
                .expect("scoreboard covers the window");
            if f & SACKED != 0 {
                self.sacked -= 1;
            } else if f & RETX != 0 {
                self.retx_out -= 1;
            } else if k < below_sacked && f & EVER_RETX == 0 {
                late_original = true;
            }
        }
        if late_original && linux && cfg.variant.recovery() == Recovery::Sack {
            self.note_reordering();
        }
        self.snd_una = ack;
        self.snd_nxt = self.snd_nxt.max(ack);
        self.high_sack = self.high_sack.max(ack);
        if linux {
            self.linux_feed(samples, now, cfg);
            self.drain_send_times(ack);
        }
        // RFC 6298 (5.3): a new ACK restarts the timer; an impatient NewReno's
        // partial ACKs after the first do not (RFC 6582, step 5).
        let (grow, restart) = self.recovery_on_new_ack(now, ack, newly, cfg, act);
        let scalable = cfg.variant.is_scalable();
        if grow && ece && cfg.ecn_capable() && !scalable {
            // RFC 3168 (6.1.2): no growth on an ACK that carries ECN-Echo.
            self.dupacks = 0;
        } else if grow && cfg.variant == Variant::Dctcp && ack < self.ecn_recover {
            // DCTCP: the window after a reduction only falls (Linux's CWR state).
            self.dupacks = 0;
        } else if grow {
            self.dupacks = 0;
            // Each packet credited once (Linux's `tp->delivered`): those
            // newly acknowledged or SACKed by this ACK, not those SACKed
            // before, which the ACK that ends a SACK recovery also covers.
            let delivered = (ack - before.una + self.sacked).saturating_sub(before.sacked);
            let info = AckInfo {
                now,
                acked: delivered,
                ack,
                snd_max: self.snd_max,
                srtt: self.srtt,
                rtt,
                ece: ece && cfg.ecn_capable(),
            };
            self.cc
                .on_ack(&mut self.cwnd, &mut self.ssthresh, &info, cfg);
        }
        if self.snd_una < self.snd_max {
            if restart {
                self.restart_rto(now, cfg, act);
            }
        } else if !self.ecn_hold {
            self.stop_rto(act);
        }
        if self.snd_una >= self.object_end {
            self.object_done(now, cfg, act);
            return true;
        }
        false
    }

    fn object_done(&mut self, now: Time, cfg: &TcpConfig, act: &mut Actions) {
        let Some(size) = cfg.object_size else { return };
        self.stats.objects += 1;
        act.object_done = Some((self.object_start, size));
        self.object_start = now;
        // The next object starts over in slow start, as a new connection would.
        self.cc.reset(cfg);
        self.forget_send_times();
        self.cwnd = cfg.initial_window as f64;
        self.ssthresh = cfg.initial_ssthresh;
        if cfg.think.is_zero() {
            self.object_end = self.object_end.saturating_add(size);
        } else {
            self.thinking = true;
            act.timer(TimerKind::Send, TimerCmd::Arm(now + cfg.think));
        }
    }

    /// The `Send` timer fired: the think time between web objects is over, or the
    /// pacing gap since the last packet.
    pub fn on_send_timer(&mut self, now: Time, cfg: &TcpConfig, act: &mut Actions) {
        self.pace_wait = false;
        if self.thinking {
            self.thinking = false;
            self.object_start = now;
            self.object_end = self.object_end.saturating_add(cfg.object_size.unwrap_or(0));
        }
        self.send_allowed(now, cfg, act);
    }
}
