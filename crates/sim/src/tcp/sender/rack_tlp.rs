//! The Linux profile's RACK-TLP (RFC 8985, Linux's `tcp_recovery.c` and
//! `tcp_send_loss_probe`), on SACK recovery:
//!
//! - **Loss by time.** A segment is lost once a segment sent at least a
//!   reordering window after it has been delivered (`reordering`: none in
//!   recovery or once three segments are SACKed until the path is seen to
//!   reorder, else a quarter of the minimum RTT, widened by DSACKs). Before
//!   recovery this starts a fast recovery with fewer than three duplicate
//!   ACKs; a loss
//!   not yet due arms the reordering timer, which starts the recovery when it
//!   fires (`tcp_rack_reo_timeout`): a window of two or three segments with one
//!   lost is repaired in a fraction of an RTT, not by a timeout. In recovery,
//!   and after a timeout, it finds lost retransmissions.
//! - **Tail loss probe.** Outside recovery the retransmission timer first fires
//!   as a probe, two smoothed RTTs after the last send (plus 200 ms with one
//!   segment out; never later than the RTO): one new segment, or the last one
//!   again, so that a lost tail brings SACKs and a fast recovery instead of a
//!   timeout. One probe until everything sent before it is acknowledged.

use super::super::congestion::linux::HZ;
use super::super::{Actions, Recovery, TcpConfig, TimerCmd};
use super::{TcpSender, RETX, SACKED};
use crate::event::TimerKind;
use aqm::{Dur, Time};
use std::collections::VecDeque;

/// What the retransmission timer is armed as (a probe, RACK's reordering
/// timer, or neither: the timeout), the highest segment sent when the last
/// probe left (`tlp_high_seq`; 0: none out), and the retransmissions in the
/// order they left (Linux's `tsorted_sent_queue`), for RACK to find the lost
/// ones without walking the window.
#[derive(Debug, Clone, Default)]
pub(super) struct Tlp {
    armed: bool,
    reo: bool,
    high: u32,
    pub(super) resent: VecDeque<(u32, Time)>,
}

/// Two jiffies, the least Linux waits on its reordering timer beyond the
/// reordering window (`TCP_TIMEOUT_MIN`).
const TIMEOUT_MIN: Dur = Dur::from_nanos(2 * 1_000_000_000 / HZ);

impl TcpSender {
    /// The probe timeout, when the timer should fire as a tail loss probe.
    pub(super) fn probe_timeout(&mut self, cfg: &TcpConfig) -> Option<Dur> {
        if !cfg.is_linux() || cfg.variant.recovery() != Recovery::Sack {
            return None;
        }
        let open = !self.in_recovery && self.snd_una >= self.recover && self.has_rtt;
        let snd_una = self.snd_una;
        let tlp = &mut self.aside.get_or_insert_with(Box::default).tlp;
        tlp.reo = false;
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
            TIMEOUT_MIN
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
            (a.tlp.armed, a.tlp.reo, a.tlp.high) = (false, false, high + 1);
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
    /// sent a reordering window or more before `newest_sent`, the send time of
    /// the newest segment delivered.
    pub(super) fn rack_lost_head(&self, newest_sent: Time) -> bool {
        if self.high_sack <= self.snd_una || self.scoreboard[0] & SACKED != 0 {
            return false;
        }
        // Sent again and not yet delivered: marked lost already, and Linux's
        // `lost_out` keeps it so until it is (`tcp_time_to_recover`).
        if self.scoreboard[0] & RETX != 0 {
            return true;
        }
        let reo_wnd = self.reo_wnd();
        self.sent_at(self.snd_una)
            .is_some_and(|t| t + reo_wnd <= newest_sent)
    }

    /// RACK on an ACK that delivered a segment sent at `newest_sent`: lost
    /// retransmissions in recovery and after a timeout (where one starts a
    /// fast recovery); before recovery, a loss that starts one, or the
    /// reordering timer for one not yet due.
    pub(super) fn rack_on_ack(
        &mut self,
        now: Time,
        newest_sent: Time,
        cfg: &TcpConfig,
        act: &mut Actions,
    ) {
        if self.in_recovery {
            self.rack_lost_retransmissions(newest_sent);
            if self.reordering_seen() {
                self.advance_rack_edge(newest_sent);
            }
        } else if self.in_loss() {
            // A retransmission lost again: a fast recovery starts, its window
            // reduced from the one the timeout's slow start has reached.
            if self.rack_lost_retransmissions(newest_sent) {
                self.start_recovery(now, cfg);
            }
        } else if self.sacked > 0 && self.may_fast_retransmit(self.snd_una, cfg) {
            // Any ACK, not only a duplicate: one that advances `snd_una` with
            // SACKed segments above it (the one that ends a recovery, too)
            // starts the next recovery on the spot, as `tcp_fastretrans_alert`
            // does, so a congestion control sees the recoveries chained.
            if self.rack_lost_head(newest_sent) {
                self.enter_recovery(now, cfg, act);
                if self.reordering_seen() {
                    self.advance_rack_edge(newest_sent);
                }
            } else {
                self.arm_reo_timer(now, newest_sent, cfg, act);
            }
        }
    }

    /// Arms the reordering timer for the segments not yet delivered, sent
    /// before `newest_sent`, whose reordering window has not yet passed: it
    /// fires when the last of them is due, rounded up to a jiffy, plus two
    /// jiffies, never after the RTO (`tcp_rack_mark_lost`).
    fn arm_reo_timer(&mut self, now: Time, newest_sent: Time, cfg: &TcpConfig, act: &mut Actions) {
        let reo_wnd = self.reo_wnd();
        // Outside recovery segments leave in order: the last one sent before
        // `newest_sent` waits longest.
        let last = (self.snd_una..self.high_sack).rev().find_map(|seq| {
            let fresh = self.scoreboard[(seq - self.snd_una) as usize] & (SACKED | RETX) == 0;
            let sent = self.sent_at(seq).filter(|&t| fresh && t <= newest_sent);
            sent.map(|t| (t + reo_wnd).saturating_since(newest_sent))
        });
        let Some(wait) = last.filter(|w| !w.is_zero()) else {
            return;
        };
        let jiffy = TIMEOUT_MIN.as_nanos() / 2;
        let wait = Dur::from_nanos(wait.as_nanos().div_ceil(jiffy) * jiffy);
        let after = (wait + TIMEOUT_MIN).min(self.rto(cfg));
        let tlp = &mut self.aside.get_or_insert_with(Box::default).tlp;
        tlp.armed = false;
        tlp.reo = true;
        self.rto_running = true;
        act.timer(TimerKind::Rto, TimerCmd::Arm(now + after));
    }

    /// Whether the timer is armed as the reordering timer.
    pub(super) fn reo_armed(&self) -> bool {
        self.aside.as_deref().is_some_and(|a| a.tlp.reo)
    }

    /// Whether the timer that fired was the reordering timer (and forgets it).
    pub(super) fn take_reo_armed(&mut self) -> bool {
        self.aside
            .as_deref_mut()
            .is_some_and(|a| std::mem::take(&mut a.tlp.reo))
    }

    /// The reordering timer fired: the first segment not yet delivered is
    /// lost now (no SACK came to move the timer), and a fast recovery starts;
    /// otherwise the timeout is armed again.
    pub(super) fn on_reo_timer(&mut self, now: Time, cfg: &TcpConfig, act: &mut Actions) {
        let head_waits = self
            .scoreboard
            .front()
            .is_some_and(|f| f & (SACKED | RETX) == 0);
        if !self.in_recovery
            && !self.in_loss()
            && self.sacked > 0
            && head_waits
            && self.may_fast_retransmit(self.snd_una, cfg)
        {
            // PRR lets one segment out for the one delivery a timer stands
            // for: the retransmission (`tcp_cwnd_reduction` with one newly
            // SACKed); the ACKs that follow set the window.
            self.enter_recovery(now, cfg, act);
            self.cwnd = self.pipe() as f64;
        } else {
            self.restart_rto(now, cfg, act);
        }
    }

    /// RACK in recovery or after a timeout: a retransmission sent before a
    /// segment now delivered was lost too, and is sent again at once instead
    /// of waiting for the timer. Returns whether it found one.
    pub(super) fn rack_lost_retransmissions(&mut self, newest_sent: Time) -> bool {
        let Some(a) = self.aside.as_deref_mut() else {
            return false;
        };
        if self.retx_out == 0 {
            a.tlp.resent.clear(); // every entry is delivered or lost already
            return false;
        }
        // The queue is in send order: it is read up to the first
        // retransmission sent after `newest_sent`. An entry is dropped once
        // its segment is delivered, SACKed, no longer counted a retransmission
        // or sent again since (a later entry stands for it).
        let mut lowest: Option<u32> = None;
        let mut i = 0;
        while let Some(&(seq, at)) = a.tlp.resent.get(i) {
            let flag = seq
                .checked_sub(self.snd_una)
                .and_then(|k| self.scoreboard.get(k as usize));
            let last_send = seq
                .checked_sub(a.base)
                .and_then(|k| a.times.get(k as usize));
            if flag.is_none_or(|f| f & (RETX | SACKED) != RETX) || last_send != Some(&at) {
                a.tlp.resent.remove(i);
                continue;
            }
            if at >= newest_sent {
                break;
            }
            if seq < self.high_sack {
                self.scoreboard[(seq - self.snd_una) as usize] &= !RETX;
                self.retx_out -= 1;
                lowest = Some(lowest.map_or(seq, |l| l.min(seq)));
                a.tlp.resent.remove(i);
                // Linux counts a retransmission lost again in `tp->lost`,
                // which BBR's rate sample reads (`tcp_mark_skb_lost`).
                if let Some(f) = self.cc.bbr() {
                    f.rate.retransmission_lost(seq);
                }
                continue;
            }
            i += 1;
        }
        if let Some(seq) = lowest {
            self.hole_hint = self.hole_hint.min(seq);
        }
        lowest.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::{Actions, TcpConfig, TcpSender, TimerCmd, Variant};
    use super::super::scripted::{at, first_lost, linux, ns2};
    use crate::event::TimerKind;
    use aqm::{Dur, Time};

    fn timer(act: &Actions) -> Option<Time> {
        match act.timers[TimerKind::Rto as usize] {
            Some(TimerCmd::Arm(t)) => Some(t),
            _ => None,
        }
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
    /// sent after it is delivered, and sent a third time without the timer,
    /// which starts again then (`tcp_xmit_retransmit_queue`).
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
            if act.data_seqs().contains(&1) {
                third = true;
                // Sending the first segment again restarts the timer.
                assert_eq!(timer(&act), Some(now + s.rto(&cfg)));
            }
        }
        // Segments up to 20 left at 0 and at 50 ms; those above, after the
        // retransmission: their SACKs show it lost.
        assert!(third, "the lost retransmission is sent again");
        assert_eq!(s.stats.timeouts, 0);
        assert_eq!(s.stats.fast_recoveries, 1);
    }

    /// BBR hears of a retransmission lost again as of a loss (Linux counts it
    /// in `tp->lost` once more): the rate sampler's losses count the hole
    /// twice, once when it was found lost and once when its retransmission was.
    #[test]
    fn bbr_counts_a_lost_retransmission_as_a_loss_again() {
        let cfg = TcpConfig {
            delayed_ack: false,
            initial_window: 20,
            ..TcpConfig::linux(Variant::Bbr)
        };
        let mut s = TcpSender::new(&cfg);
        let mut act = Actions::default();
        s.start(at(0), &cfg, &mut act);
        s.on_ack(at(50), 1, &[], false, &cfg, &mut act);
        let lost = |s: &TcpSender| s.cc.bbr_ref().map(|f| f.rate.lost);
        for k in 2..=4u32 {
            act.clear();
            let now = at(50) + Dur::from_micros(k as u64);
            s.on_ack(now, 1, &[(2, k + 1)], false, &cfg, &mut act);
        }
        assert!(s.in_recovery());
        assert_eq!(lost(&s), Some(1), "segment 1, once");
        let mut resent = 0;
        for k in 5..=30u32 {
            act.clear();
            let now = at(100) + Dur::from_micros(k as u64);
            s.on_ack(now, 1, &[(2, k + 1)], false, &cfg, &mut act);
            resent += act.data_seqs().iter().filter(|&&q| q == 1).count();
        }
        assert_eq!(resent, 1, "sent a third time");
        assert_eq!(lost(&s), Some(2), "its retransmission lost too");
    }

    /// A window of three whose first segment is lost: the two SACKs that come
    /// back are too few for three duplicate ACKs, and the segment was sent with
    /// the others, inside the reordering window. The reordering timer fires a
    /// window later (rounded up to a jiffy, plus two) and starts a fast
    /// recovery; no timeout.
    #[test]
    fn a_small_window_with_one_loss_recovers_on_the_reordering_timer() {
        let cfg = linux(3);
        let (mut s, mut act) = first_lost(&cfg, 2);
        assert!(!s.in_recovery(), "two SACKs are not yet a loss");
        // srtt and min_rtt 50 ms: a window of a quarter of the minimum RTT
        // (never above srtt) = 12.5 ms, four jiffies of 4 ms rounded up, and
        // two more.
        let reo = timer(&act).expect("the reordering timer is armed");
        assert_eq!(reo, at(50 + 24));
        act.clear();
        s.on_rto(reo, &cfg, &mut act);
        assert!(s.in_recovery());
        assert_eq!(act.data_seqs(), vec![0], "the lost segment again");
        assert_eq!((s.stats.timeouts, s.stats.fast_recoveries), (0, 1));
    }

    /// Three SACKs leave no reordering window: the first segment is lost at
    /// once, on the ACK that SACKs the third, whatever the duplicate ACKs
    /// counted (one ACK here covers all three).
    #[test]
    fn three_segments_sacked_mark_the_head_lost_at_once() {
        let cfg = linux(4);
        let mut s = TcpSender::new(&cfg);
        let mut act = Actions::default();
        s.start(at(0), &cfg, &mut act);
        act.clear();
        s.on_ack(at(50), 0, &[(1, 4)], false, &cfg, &mut act);
        assert!(s.in_recovery());
        assert_eq!(act.data_seqs()[0], 0);
    }

    /// After a timeout the Linux profile keeps the SACKed segments and sends
    /// again only the others; the `ns2` profile goes back N over all of them.
    #[test]
    fn a_timeout_resends_only_what_was_not_sacked() {
        let after_timeout = |cfg: TcpConfig| {
            let mut s = TcpSender::new(&cfg);
            let mut act = Actions::default();
            s.start(at(0), &cfg, &mut act);
            // 0 and 2 lost, 1 and 3 SACKed; then every retransmission is lost
            // until the timeout (the Linux profile recovers first, on its
            // reordering timer).
            s.on_ack(at(50), 0, &[(1, 2), (3, 4)], false, &cfg, &mut act);
            let mut now = at(50);
            while s.stats.timeouts == 0 {
                now += Dur::from_secs(1);
                act.clear();
                s.on_rto(now, &cfg, &mut act);
            }
            assert_eq!(act.data_seqs(), vec![0], "a window of one: the first hole");
            // 0 arrives: the receiver has 0, 1 and 3.
            act.clear();
            s.on_ack(
                now + Dur::from_millis(50),
                2,
                &[(3, 4)],
                false,
                &cfg,
                &mut act,
            );
            act.data_seqs()
        };
        assert_eq!(
            after_timeout(linux(4)),
            vec![2, 4],
            "the hole, then new data"
        );
        assert_eq!(after_timeout(ns2(4)), vec![2, 3], "go-back-N");
    }

    /// The first segment after a recovery's window is lost: with SACK, Linux
    /// starts another fast recovery on its SACKs; RFC 6582's careful rule (the
    /// `ns2` profile) waits for an ACK above the old window, so only the
    /// timeout repairs it.
    #[test]
    fn a_loss_right_after_a_recovery_starts_another_under_linux() {
        let next_recovery = |cfg: TcpConfig| {
            // 0 lost, 1-7 SACKed: a recovery; its window is 0-7 (`recover` 8).
            let (mut s, mut act) = first_lost(&cfg, 7);
            assert!(s.in_recovery());
            // The retransmission arrives: the window is acknowledged, and the
            // recovery ends with nothing above it delivered yet.
            s.on_ack(at(100), 8, &[], false, &cfg, &mut act);
            assert!(!s.in_recovery());
            assert!(s.snd_max >= 12, "segments 8-11 are out ({})", s.snd_max);
            // 8 lost; 9-11 SACKed.
            for k in 10..=12 {
                s.on_ack(at(150), 8, &[(9, k)], false, &cfg, &mut act);
            }
            s.in_recovery()
        };
        assert!(next_recovery(linux(8)));
        assert!(!next_recovery(ns2(8)));
    }

    /// The ACK that ends a recovery also SACKs three segments above a new
    /// hole: under Linux the next recovery starts on that same ACK (BBR never
    /// sees the open state between the two); the `ns2` profile waits for
    /// duplicate ACKs.
    #[test]
    fn the_ack_ending_a_recovery_starts_the_next_under_linux() {
        let chained = |cfg: TcpConfig| {
            let (mut s, mut act) = first_lost(&cfg, 11);
            assert!(s.in_recovery());
            let sent = s.snd_max;
            assert!(sent >= 16, "segments 12-15 left in the recovery ({sent})");
            // 0's retransmission and 13-15 arrive, 12 does not.
            s.on_ack(at(100), 12, &[(13, 16)], false, &cfg, &mut act);
            (s.in_recovery(), s.stats.fast_recoveries)
        };
        assert_eq!(chained(linux(12)), (true, 2));
        assert_eq!(chained(ns2(12)), (false, 1));
    }

    /// A loss in the next window, found and sent again inside a recovery, is
    /// still outstanding when the recovery ends: Linux keeps it marked lost
    /// (`lost_out`), so the ACK that ends the recovery starts the next one,
    /// without sending it a third time.
    #[test]
    fn a_resent_loss_outstanding_at_a_recoverys_end_starts_the_next() {
        let cfg = linux(12);
        let (mut s, mut act) = first_lost(&cfg, 11);
        assert!(s.in_recovery());
        assert!(s.snd_max >= 16, "segments 12-15 left in the recovery");
        // 13-15 are SACKed, 12 is not: RACK marks it lost and it is sent again.
        act.clear();
        s.on_ack(at(99), 0, &[(1, 12), (13, 16)], false, &cfg, &mut act);
        assert!(act.data_seqs().contains(&12), "{:?}", act.data_seqs());
        // 0's retransmission arrives: the recovery's window is acknowledged.
        act.clear();
        s.on_ack(at(100), 12, &[(13, 16)], false, &cfg, &mut act);
        assert!(s.in_recovery(), "the next recovery starts on the same ACK");
        assert_eq!(s.stats.fast_recoveries, 2);
        assert!(!act.data_seqs().contains(&12), "12 is on its way already");
    }
}
