//! The Linux profile's RACK-TLP (RFC 8985, Linux's `tcp_recovery.c` and
//! `tcp_send_loss_probe`), on SACK recovery:
//!
//! - **Loss by time.** A segment is lost once a segment sent at least a
//!   reordering window after it has been delivered; the window is a quarter of
//!   the minimum RTT before recovery (no reordering is ever seen on the engine's
//!   paths) and 0 in it, as Linux sets it until reordering is seen. Before
//!   recovery this starts a fast recovery with fewer than three duplicate ACKs;
//!   in it, it finds lost retransmissions, which RFC 6675 leaves to the timer.
//!   Linux also arms a timer for a loss that is not yet due; the model checks on
//!   each ACK only.
//! - **Tail loss probe.** Outside recovery the retransmission timer first fires
//!   as a probe, two smoothed RTTs after the last send (plus 200 ms with one
//!   segment out; never later than the RTO): one new segment, or the last one
//!   again, so that a lost tail brings SACKs and a fast recovery instead of a
//!   timeout. One probe until everything sent before it is acknowledged.

use super::super::{Actions, Recovery, TcpConfig, TimerCmd};
use super::{TcpSender, RETX, SACKED};
use crate::event::TimerKind;
use aqm::{Dur, Time};

/// TLP's state: a probe armed on the retransmission timer, and the highest
/// segment sent when the last probe left (`tlp_high_seq`; 0: none out).
#[derive(Debug, Clone, Default)]
pub(super) struct Tlp {
    armed: bool,
    high: u32,
}

impl TcpSender {
    /// The probe timeout, when the timer should fire as a tail loss probe.
    pub(super) fn probe_timeout(&mut self, cfg: &TcpConfig) -> Option<Dur> {
        if !cfg.is_linux() || cfg.variant.recovery() != Recovery::Sack {
            return None;
        }
        let open = !self.in_recovery && self.snd_una >= self.recover && self.has_rtt;
        let snd_una = self.snd_una;
        let tlp = &mut self.aside.get_or_insert_with(Box::default).tlp;
        if tlp.high > snd_una {
            tlp.armed = false;
            return None;
        }
        tlp.high = 0;
        tlp.armed = open;
        if !open {
            return None;
        }
        let extra = if self.outstanding() == 1 {
            Dur::from_millis(200)
        } else {
            Dur::from_millis(8) // two jiffies
        };
        Some((Dur::from_secs_f64(2.0 * self.srtt) + extra).min(self.rto(cfg)))
    }

    /// Whether the retransmission timer is armed as a probe.
    pub(super) fn probe_armed(&self) -> bool {
        self.aside.as_deref().is_some_and(|a| a.tlp.armed)
    }

    /// The timer fired as a probe: one new segment if the receiver's window
    /// takes it, else the last segment again; then the real timer.
    pub(super) fn send_probe(&mut self, now: Time, cfg: &TcpConfig, act: &mut Actions) {
        let high = self.snd_max;
        if let Some(a) = self.aside.as_deref_mut() {
            a.tlp = Tlp {
                armed: false,
                high: high + 1,
            };
        }
        if self.has_new_data()
            && self.snd_nxt == self.snd_max
            && self.snd_nxt < self.snd_una + cfg.max_window
        {
            let seq = self.snd_nxt;
            self.snd_nxt += 1;
            self.emit(seq, now, cfg, act);
        } else {
            let last = self.snd_max - 1;
            if self.scoreboard[(last - self.snd_una) as usize] & SACKED == 0 {
                self.retransmit(last, now, cfg, act);
            }
        }
        if let Some(a) = self.aside.as_deref_mut() {
            a.tlp.high = self.snd_max;
        }
        self.rto_running = true;
        act.timer(TimerKind::Rto, TimerCmd::Arm(now + self.rto(cfg)));
    }

    /// RACK before recovery: whether the first segment not yet delivered was
    /// sent a reordering window (a quarter of the minimum RTT) or more before
    /// `newest_sent`, the send time of the newest segment delivered.
    pub(super) fn rack_lost_head(&self, newest_sent: Time) -> bool {
        if self.high_sack <= self.snd_una || self.scoreboard[0] & (SACKED | RETX) != 0 {
            return false;
        }
        let reo_wnd = Dur::from_secs_f64(self.min_rtt() / 4.0);
        self.sent_at(self.snd_una)
            .is_some_and(|t| t + reo_wnd <= newest_sent)
    }

    /// RACK in recovery: a retransmission sent before a segment now delivered
    /// was lost too, and is sent again at once instead of waiting for the timer.
    pub(super) fn rack_lost_retransmissions(&mut self, newest_sent: Time) {
        if self.retx_out == 0 {
            return;
        }
        for seq in self.snd_una..self.high_sack {
            let i = (seq - self.snd_una) as usize;
            if self.scoreboard[i] & (RETX | SACKED) == RETX
                && self.sent_at(seq).is_some_and(|t| t < newest_sent)
            {
                self.scoreboard[i] &= !RETX;
                self.retx_out -= 1;
                self.hole_hint = self.hole_hint.min(seq);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::{Actions, TcpConfig, TcpSender, TimerCmd, Variant};
    use crate::event::TimerKind;
    use aqm::{Dur, Time};

    fn timer(act: &Actions) -> Option<Time> {
        match act.timers[TimerKind::Rto as usize] {
            Some(TimerCmd::Arm(t)) => Some(t),
            _ => None,
        }
    }

    fn at(ms: u64) -> Time {
        Time::ZERO + Dur::from_millis(ms)
    }

    /// A flow's first window of 10 at 0, ACKed one by one 50 ms later but for
    /// the last `lost` segments.
    fn tail_lost(lost: u32) -> (TcpSender, TcpConfig, Actions) {
        let cfg = TcpConfig {
            delayed_ack: false,
            ..TcpConfig::linux(Variant::Cubic)
        };
        let mut s = TcpSender::new(&cfg);
        let mut act = Actions::default();
        s.start(at(0), &cfg, &mut act);
        for ack in 1..=10 - lost {
            act.clear();
            s.on_ack(at(50), ack, &[], false, &cfg, &mut act);
        }
        (s, cfg, act)
    }

    /// The last two segments of a window are lost: the timer fires two RTTs
    /// later as a probe (a new segment), whose SACK starts a fast recovery of the
    /// tail; no timeout.
    #[test]
    fn a_lost_tail_is_repaired_by_a_probe_and_a_fast_recovery() {
        let (mut s, cfg, mut act) = tail_lost(2);
        let outstanding = s.outstanding();
        let pto = timer(&act).expect("armed");
        assert!(pto < at(50) + s.rto(&cfg), "the probe comes before the RTO");
        assert_eq!(pto, at(50) + Dur::from_millis(108), "2 srtt + 2 jiffies");
        act.clear();
        s.on_rto(pto, &cfg, &mut act);
        let probe = act.data_seqs();
        assert_eq!(probe, vec![8 + outstanding], "one new segment");
        assert_eq!(s.stats.timeouts, 0);
        // Its SACK: the tail (8, 9) was sent 158 ms before it: lost by RACK.
        act.clear();
        let p = probe[0];
        s.on_ack(
            pto + Dur::from_millis(50),
            8,
            &[(p, p + 1)],
            false,
            &cfg,
            &mut act,
        );
        assert!(s.in_recovery());
        assert_eq!(s.stats.fast_recoveries, 1);
        assert_eq!(
            act.data_seqs()[0],
            8,
            "the first lost segment again at once"
        );
    }

    /// In recovery, a retransmission that is lost again is found when a segment
    /// sent after it is delivered, and sent a third time without the timer.
    #[test]
    fn a_lost_retransmission_is_sent_again_without_a_timeout() {
        let cfg = TcpConfig {
            delayed_ack: false,
            initial_window: 20,
            ..TcpConfig::linux(Variant::Sack)
        };
        let mut s = TcpSender::new(&cfg);
        let mut act = Actions::default();
        s.start(at(0), &cfg, &mut act);
        s.on_ack(at(50), 1, &[], false, &cfg, &mut act);
        // Segment 1 is lost; 2, 3 and 4 are SACKed: recovery, 1 sent again.
        for k in 2..=4u32 {
            act.clear();
            s.on_ack(
                at(50) + Dur::from_micros(k as u64),
                1,
                &[(2, k + 1)],
                false,
                &cfg,
                &mut act,
            );
        }
        assert!(s.in_recovery());
        assert!(act.data_seqs().contains(&1));
        let retransmitted_at = at(50) + Dur::from_micros(4);
        // Segments sent after the retransmission are SACKed, 1 still is not.
        let mut third = false;
        for k in 5..=30u32 {
            act.clear();
            let now = retransmitted_at + Dur::from_millis(50) + Dur::from_micros(k as u64);
            s.on_ack(now, 1, &[(2, k + 1)], false, &cfg, &mut act);
            third |= act.data_seqs().contains(&1);
        }
        // Segments up to 20 left at 0 and at 50 ms; those above, after the
        // retransmission: their SACKs show it lost.
        assert!(third, "the lost retransmission is sent again");
        assert_eq!(s.stats.timeouts, 0);
        assert_eq!(s.stats.fast_recoveries, 1);
    }
}
