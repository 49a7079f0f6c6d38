//! The sender's response to an ECN echo: RFC 3168's halving once per window of
//! data (with its one-packet rule), or DCTCP's and Prague's cut by alpha / 2
//! ([`super::super::dctcp`]).

use super::super::congestion::Signal;
use super::super::{Actions, ReductionCause, TcpConfig};
use super::TcpSender;
use aqm::Time;

impl TcpSender {
    /// An ACK `ack` carried ECN-Echo.
    pub(super) fn ecn_echo(
        &mut self,
        now: Time,
        ack: u32,
        object_ended: bool,
        cfg: &TcpConfig,
        act: &mut Actions,
    ) {
        // RFC 3168 (6.1.2). The ACK must cover a packet sent after the last reduction
        // (ack > ecn_recover: the ACK of the last packet of the old window still
        // carries ECE, since its CWR is yet to arrive). An object that just ended
        // takes its marks with it: the next starts over, as a new connection would.
        if !self.in_recovery
            && ack > self.ecn_recover
            && !object_ended
            && (self.snd_una < self.snd_max || self.has_new_data())
        {
            let slow_start = self.cwnd < self.ssthresh;
            let cwnd = self.cwnd.min(cfg.max_window as f64);
            if let Some(sc) = self.cc.scalable() {
                // RFC 8257 (3.3): cwnd (1 - alpha / 2), once per window of data
                // (Prague, when it declines within 25 ms, waits for the next).
                let target = sc.on_echo(now, cwnd, slow_start);
                self.ecn_recover = self.snd_max;
                self.cwr_pending = true;
                if let Some(target) = target {
                    self.ssthresh = target.max(2.0);
                    self.reduce(now, target, ReductionCause::Ecn);
                }
                return;
            }
            let target = self.cc.on_signal(self.cwnd, Signal::Ecn, cfg);
            self.ssthresh = target.max(2.0);
            self.ecn_recover = self.snd_max;
            self.cwr_pending = true;
            if self.cwnd < 2.0 {
                // The window is one packet already: halving would not slow the
                // flow, so the retransmission timer paces its next new packet.
                self.reduce(now, 1.0, ReductionCause::Ecn);
                self.ecn_hold = true;
                self.restart_rto(now, cfg, act);
            } else {
                self.reduce(now, target.max(1.0), ReductionCause::Ecn);
            }
        }
    }
}
