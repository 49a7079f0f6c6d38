//! The sender's retransmission timer (RFC 6298): the smoothed RTT and its
//! variance, the timeout with its exponential back-off, Karn's one timed packet
//! per window, and whether the timer runs. The sender decides when to time a
//! packet and when to restart or stop the timer; this file keeps the arithmetic.

use super::{Actions, TcpConfig, TimerCmd};
use crate::event::TimerKind;
use aqm::{Dur, Time};

/// The retransmission timer's state.
#[derive(Debug, Clone)]
pub(super) struct Rto {
    pub srtt: f64,
    rttvar: f64,
    has_rtt: bool,
    base: Dur,
    backoff: u32,
    /// Karn: the packet being timed and when it was sent (`Time::MAX`: none).
    /// Two fields, not an `Option` of a pair: that was 24 bytes, this 12, and
    /// every flow has one (BENCHMARKS.md, "Memory per flow").
    timed_seq: u32,
    timed_at: Time,
    /// Whether the retransmission timer runs. RFC 6298 (5.1): sending starts it only
    /// when it is not running; only new ACKs restart it. Restarting it on every
    /// send would postpone it for ever while a lost retransmission blocks snd_una
    /// and SACKed new data keeps flowing.
    pub running: bool,
}

impl Rto {
    pub fn new(cfg: &TcpConfig) -> Self {
        Rto {
            srtt: 0.0,
            rttvar: 0.0,
            has_rtt: false,
            base: cfg.initial_rto,
            backoff: 1,
            timed_seq: 0,
            timed_at: Time::MAX,
            running: false,
        }
    }

    /// The packet being timed and when it was sent, if one is.
    #[inline]
    pub fn timed(&self) -> Option<(u32, Time)> {
        (self.timed_at != Time::MAX).then_some((self.timed_seq, self.timed_at))
    }

    #[inline]
    pub fn set_timed(&mut self, t: Option<(u32, Time)>) {
        (self.timed_seq, self.timed_at) = t.unwrap_or((0, Time::MAX));
    }

    /// The current retransmission timeout, back-off included.
    pub fn timeout(&self, cfg: &TcpConfig) -> Dur {
        self.base
            .saturating_mul(self.backoff as u64)
            .min(cfg.max_rto)
    }

    /// Takes the RTT sample `r` (seconds): the smoothed RTT, its variance and the
    /// timeout follow (RFC 6298, 2.2-2.4), and the back-off ends.
    pub fn sample(&mut self, r: f64, cfg: &TcpConfig) {
        if self.has_rtt {
            self.rttvar = 0.75 * self.rttvar + 0.25 * (self.srtt - r).abs();
            self.srtt = 0.875 * self.srtt + 0.125 * r;
        } else {
            self.srtt = r;
            self.rttvar = r / 2.0;
            self.has_rtt = true;
        }
        let rto = self.srtt + (4.0 * self.rttvar).max(cfg.granularity.as_secs_f64());
        self.base = Dur::from_secs_f64(rto).max(cfg.min_rto).min(cfg.max_rto);
        self.backoff = 1;
    }

    /// The timer expired: RFC 6298 (5.5) doubles the timeout until it reaches
    /// max_rto (ns-2 since 2002, `rfc2988_`; before, ns-2 stopped at 64 times).
    pub fn back_off(&mut self, cfg: &TcpConfig) {
        if self.timeout(cfg) < cfg.max_rto {
            self.backoff = self.backoff.saturating_mul(2);
        }
    }

    /// (Re)starts the timer at `now`.
    pub fn restart(&mut self, now: Time, cfg: &TcpConfig, act: &mut Actions) {
        self.running = true;
        act.timer(TimerKind::Rto, TimerCmd::Arm(now + self.timeout(cfg)));
    }

    /// Stops the timer.
    pub fn stop(&mut self, act: &mut Actions) {
        self.running = false;
        act.timer(TimerKind::Rto, TimerCmd::Cancel);
    }
}
