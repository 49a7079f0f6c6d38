//! The retransmission timer's expiry. Three timers share it, as in Linux
//! (`icsk_pending`): a tail loss probe or RACK's reordering timer first
//! (`rack_tlp`), the timeout last.
//!
//! After a timeout the `ns2` profile forgets the SACK scoreboard and goes back N
//! (RFC 2018: a receiver may renege), and reduces ssthresh on every timeout. The
//! Linux profile does what `tcp_enter_loss` does while the receiver has not
//! reneged: it reduces ssthresh once per window, keeps the SACKed segments, counts
//! every other one sent so far as lost (CA_Loss, until `snd_una` reaches
//! `lost_to`) and sends only those again, as the window opens. A retransmission
//! that RACK finds lost again starts a fast recovery there and then, as
//! `tcp_fastretrans_alert` does in CA_Loss, instead of waiting for a second,
//! backed-off timeout.

use super::super::{Actions, Recovery, ReductionCause, TcpConfig};
use super::{TcpSender, EVER_RETX, SACKED};
use crate::tcp::congestion::Signal;
use aqm::Time;

impl TcpSender {
    /// The retransmission timer expired.
    pub fn on_rto(&mut self, now: Time, cfg: &TcpConfig, act: &mut Actions) {
        self.rto_running = false;
        if self.probe_armed() && self.snd_una < self.snd_max {
            self.send_probe(now, cfg, act);
            return;
        }
        if self.take_reo_armed() {
            self.on_reo_timer(now, cfg, act);
            return;
        }
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
        let linux_sack = cfg.is_linux() && cfg.variant.recovery() == Recovery::Sack;
        // Linux reduces ssthresh once per window: not again for a timeout in a
        // recovery, or after another timeout, whose window is not yet repaired.
        let reduced = linux_sack && (self.in_recovery || self.in_loss());
        if !(reduced && self.cc.on_timeout_in_reduced_window()) {
            if linux_sack {
                self.init_undo();
            }
            self.ssthresh = self.reduced_ssthresh(Signal::Timeout, cfg);
        }
        if linux_sack {
            self.start_frto(self.backoff > 1, reduced);
        }
        self.reduce(now, 1.0, ReductionCause::Timeout);
        self.recover = self.snd_max;
        self.in_recovery = false;
        self.set_prr(None);
        self.dupacks = 0;
        self.back_off(cfg);
        self.set_timed(None);
        if linux_sack {
            self.enter_loss();
        } else {
            self.go_back_n();
        }
        self.restart_rto(now, cfg, act);
        self.send_allowed(now, cfg, act);
    }

    /// RFC 6298 after a timeout: the scoreboard forgotten, everything from
    /// `snd_una` sent again in order.
    fn go_back_n(&mut self) {
        for f in self.scoreboard.iter_mut() {
            *f = 0;
        }
        self.sacked = 0;
        self.retx_out = 0;
        self.high_sack = self.snd_una;
        self.hole_hint = self.snd_una;
        self.snd_nxt = self.snd_una;
    }

    /// Linux's CA_Loss: SACKs kept, every other segment sent so far lost,
    /// retransmissions in flight included.
    fn enter_loss(&mut self) {
        for f in self.scoreboard.iter_mut() {
            *f &= SACKED | EVER_RETX;
        }
        self.retx_out = 0;
        self.hole_hint = self.snd_una;
        let snd_max = self.snd_max;
        self.aside.get_or_insert_with(Box::default).lost_to = snd_max;
    }

    /// Whether the sender is in Linux's CA_Loss: repairing after a timeout,
    /// not (yet) in a fast recovery.
    pub(super) fn in_loss(&self) -> bool {
        !self.in_recovery && self.lost_to() > self.snd_una
    }

    /// One past the last segment a timeout counted lost (0: none).
    #[inline]
    pub(super) fn lost_to(&self) -> u32 {
        self.aside.as_deref().map_or(0, |a| a.lost_to)
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::{TcpConfig, Variant};
    use super::super::scripted::{at, first_lost, ns2};

    /// A recovery's retransmission is lost and the timer fires: Linux keeps
    /// the ssthresh the recovery set (the window was reduced once already);
    /// the `ns2` profile reduces it again, from the recovery's window.
    #[test]
    fn a_timeout_in_a_recovery_keeps_its_ssthresh_under_linux() {
        let ssthresh = |cfg: TcpConfig| {
            let (mut s, mut act) = first_lost(&cfg, 9);
            assert!(s.in_recovery());
            let in_recovery = s.ssthresh();
            s.on_rto(at(2_000), &cfg, &mut act);
            assert_eq!(s.stats.timeouts, 1);
            (in_recovery, s.ssthresh())
        };
        let (recovery, timeout) = ssthresh(TcpConfig {
            delayed_ack: false,
            limited_transmit: false,
            ..TcpConfig::linux(Variant::Cubic)
        });
        assert_eq!(timeout, recovery, "once per window");
        let (recovery, timeout) = ssthresh(ns2(10));
        assert!(timeout < recovery, "{timeout} against {recovery}");
    }
}
