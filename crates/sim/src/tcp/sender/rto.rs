//! The sender's retransmission timer (RFC 6298): the smoothed RTT and its
//! variance, the timeout with its exponential back-off, Karn's one timed packet
//! per window, and starting and stopping the timer. The state stays in
//! [`TcpSender`]'s fields, laid out with the rest (a sender must fit a 240-byte
//! allocation); the sender decides when to time a packet and when to restart or
//! stop the timer, and this file keeps the arithmetic.

use super::super::{Actions, TcpConfig, TimerCmd};
use super::TcpSender;
use crate::event::TimerKind;
use aqm::{Dur, Time};

impl TcpSender {
    /// The packet being timed and when it was sent, if one is.
    #[inline]
    pub(super) fn timed(&self) -> Option<(u32, Time)> {
        (self.timed_at != Time::MAX).then_some((self.timed_seq, self.timed_at))
    }

    #[inline]
    pub(super) fn set_timed(&mut self, t: Option<(u32, Time)>) {
        (self.timed_seq, self.timed_at) = t.unwrap_or((0, Time::MAX));
    }

    /// The current retransmission timeout, back-off included.
    pub fn rto(&self, cfg: &TcpConfig) -> Dur {
        self.rto_base
            .saturating_mul(self.backoff as u64)
            .min(cfg.max_rto)
    }

    /// Arms the timer: a tail loss probe first where the Linux profile sends
    /// one (`rack_tlp`), the retransmission timeout otherwise.
    pub(super) fn restart_rto(&mut self, now: Time, cfg: &TcpConfig, act: &mut Actions) {
        self.rto_running = true;
        let after = self.probe_timeout(cfg).unwrap_or_else(|| self.rto(cfg));
        act.timer(TimerKind::Rto, TimerCmd::Arm(now + after));
    }

    pub(super) fn stop_rto(&mut self, act: &mut Actions) {
        self.rto_running = false;
        act.timer(TimerKind::Rto, TimerCmd::Cancel);
    }

    pub(super) fn rtt_sample(&mut self, r: f64, cfg: &TcpConfig) {
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

    /// The timer expired: RFC 6298 (5.5) doubles the timeout until it reaches
    /// max_rto (ns-2 since 2002, `rfc2988_`; before, ns-2 stopped at 64 times).
    pub(super) fn back_off(&mut self, cfg: &TcpConfig) {
        if self.rto(cfg) < cfg.max_rto {
            self.backoff = self.backoff.saturating_mul(2);
        }
    }
}
