//! Pacing (`pacing = true`; Prague's default): after each packet the sender
//! waits `srtt / (factor x cwnd)` before the next one, the packet size over Linux's
//! pacing rate, on the flow's `Send` timer (one pending event per flow; the
//! think time of web flows uses the same timer, and no packet is paced while a
//! flow thinks). Before the first RTT sample nothing is paced (Linux's rate is
//! unbounded then). The new data and SACK retransmissions that `send_allowed`
//! sends wait for the timer; a fast retransmit, NewReno's partial-ACK
//! retransmissions and a timeout's first packet leave at once.
//!
//! BBR sets its own pacing rate (`congestion::Congestion::pacing_rate`), and
//! paces from its first packet: the gap is one packet at that rate.

use super::super::{Actions, TcpConfig, TimerCmd, Variant};
use super::TcpSender;
use crate::event::TimerKind;
use aqm::{Dur, Time};

impl TcpSender {
    /// A packet just left: the next waits for the pacing timer.
    #[inline]
    pub(super) fn pace(&mut self, now: Time, cfg: &TcpConfig, act: &mut Actions) {
        if cfg.pacing && (self.has_rtt || cfg.variant.is_bbr()) {
            self.pace_wait = true;
            act.timer(TimerKind::Send, TimerCmd::Arm(now + self.pacing_gap(cfg)));
        }
    }

    /// The rate `pace` sends at, packets per second: none when it does not.
    pub(super) fn pacing_rate_pps(&self, cfg: &TcpConfig) -> Option<f64> {
        (cfg.pacing && (self.has_rtt || cfg.variant.is_bbr()))
            .then(|| 1.0 / self.pacing_gap(cfg).as_secs_f64())
    }

    /// The time between two paced packets: `srtt / (factor x cwnd)`, the packet
    /// size over Linux's pacing rate `factor x cwnd x size / srtt` (tcp_output.c,
    /// `tcp_update_pacing_rate`): factor 2 while cwnd is below half ssthresh
    /// (`tcp_pacing_ss_ratio`), 1.2 after (`tcp_pacing_ca_ratio`); Prague paces at
    /// 1 after slow start (`prague_update_pacing_rate`).
    pub fn pacing_gap(&self, cfg: &TcpConfig) -> Dur {
        if let Some(rate) = self.cc.pacing_rate() {
            return Dur::from_secs_f64(1.0 / rate); // BBR's rate, packets per second
        }
        let factor = if self.cwnd < self.ssthresh / 2.0 {
            2.0
        } else if cfg.variant == Variant::Prague {
            1.0
        } else {
            1.2
        };
        Dur::from_secs_f64(self.srtt / (factor * self.cwnd.max(1.0)))
    }
}

#[cfg(test)]
mod tests;
