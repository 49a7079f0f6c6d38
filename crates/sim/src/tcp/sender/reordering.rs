//! RACK's reordering window as the Linux profile adapts it (`tcp_rack_reo_wnd`,
//! `tcp_rack_update_reo_wnd`, `tcp_check_sack_reordering`).
//!
//! Until the path has been seen to reorder, RACK is as eager as three duplicate
//! ACKs: no window in a recovery or once three segments are SACKed, else a
//! quarter of the minimum RTT. Reordering is seen when an original segment
//! below the highest SACKed one is delivered (it came late, it was not lost).
//! From then on the window is a quarter of the minimum RTT times `steps`,
//! never above the smoothed RTT, in recovery too; each round trip with a DSACK
//! (a retransmission that was not needed) adds a step, and sixteen recoveries
//! without one bring it back to one. In a recovery a hole is then lost only
//! once a segment sent a window after it has been delivered (`rack_edge`),
//! not because a segment above it was SACKed: the holes above the edge are
//! in flight, and are not resent.

use super::{TcpSender, EVER_RETX, SACKED};
use aqm::{Dur, Time};

/// Recoveries a widened window outlives without a DSACK
/// (`TCP_RACK_RECOVERY_THRESH`).
const RECOVERY_THRESH: u8 = 16;

/// Segments SACKed that stand for three duplicate ACKs while no reordering has
/// been seen (Linux's initial `tp->reordering`).
const DUPTHRESH: u32 = 3;

#[derive(Debug, Clone)]
pub(super) struct Reordering {
    /// The path has reordered (`reord_seen`).
    seen: bool,
    /// The window in quarters of the minimum RTT (`reo_wnd_steps`).
    steps: u8,
    /// A DSACK came and waits to widen the window (`dsack_seen`).
    dsack: bool,
    /// Recoveries left before the window narrows again (`reo_wnd_persist`).
    persist: u8,
    /// `snd_max` when the window last widened: a DSACK for what was sent
    /// before is of the same round trip (`last_delivered`).
    widened_at: u32,
    /// In a recovery, once reordering is seen: the holes below it are lost.
    edge: u32,
    /// The send time of the newest segment delivered (`rack.mstamp`).
    newest_sent: Time,
}

impl Default for Reordering {
    fn default() -> Self {
        Reordering {
            seen: false,
            steps: 1,
            dsack: false,
            persist: 0,
            widened_at: 0,
            edge: 0,
            newest_sent: Time::ZERO,
        }
    }
}

impl TcpSender {
    fn reordering(&self) -> Option<&Reordering> {
        self.aside.as_deref().map(|a| &a.reordering)
    }

    fn reordering_mut(&mut self) -> &mut Reordering {
        &mut self.aside.get_or_insert_with(Box::default).reordering
    }

    /// Whether the path has been seen to reorder.
    pub(super) fn reordering_seen(&self) -> bool {
        self.reordering().is_some_and(|r| r.seen)
    }

    /// RACK's reordering window now.
    pub(super) fn reo_wnd(&self) -> Dur {
        let (seen, steps) = self.reordering().map_or((false, 1), |r| (r.seen, r.steps));
        if !seen && (self.in_recovery || self.in_loss() || self.sacked >= DUPTHRESH) {
            return Dur::ZERO;
        }
        let quarters = self.min_rtt() / 4.0 * steps as f64;
        Dur::from_secs_f64(quarters.min(self.srtt))
    }

    /// In a recovery on a path seen to reorder: one past the last hole RACK
    /// has marked lost (the holes from it up to the highest SACK are in
    /// flight). `None` otherwise: every hole below the highest SACK is lost.
    #[inline]
    pub(super) fn rack_edge(&self) -> Option<u32> {
        if !self.in_recovery {
            return None;
        }
        let r = self.reordering().filter(|r| r.seen)?;
        Some(r.edge.max(self.snd_una))
    }

    /// A recovery starts: no hole is lost by RACK's clock yet.
    pub(super) fn reset_rack_edge(&mut self) {
        let snd_una = self.snd_una;
        if let Some(r) = self.aside.as_deref_mut().map(|a| &mut a.reordering) {
            r.edge = snd_una;
        }
    }

    /// RACK in a recovery, a segment sent at `newest_sent` delivered: the
    /// holes sent a reordering window or more before the newest segment ever
    /// delivered are lost (`tcp_rack_detect_loss`); the edge moves past them
    /// and past what is SACKed or was sent twice (RACK's other rules).
    pub(super) fn advance_rack_edge(&mut self, newest_sent: Time) {
        let reo_wnd = self.reo_wnd();
        let (snd_una, high_sack) = (self.snd_una, self.high_sack);
        let r = self.reordering_mut();
        r.newest_sent = r.newest_sent.max(newest_sent);
        let (mut edge, newest) = (r.edge.max(snd_una), r.newest_sent);
        while edge < high_sack {
            let f = self.scoreboard[(edge - snd_una) as usize];
            let due = f & (SACKED | EVER_RETX) != 0
                || self.sent_at(edge).is_none_or(|t| t + reo_wnd <= newest);
            if !due {
                break;
            }
            edge += 1;
        }
        self.reordering_mut().edge = edge;
    }

    /// An original segment below the highest SACKed one was delivered.
    pub(super) fn note_reordering(&mut self) {
        self.reordering_mut().seen = true;
    }

    /// A DSACK came (`tcp_dsack_seen`).
    pub(super) fn note_dsack(&mut self) {
        self.reordering_mut().dsack = true;
    }

    /// On every ACK to `ack`, after the DSACKs it carries
    /// (`tcp_rack_update_reo_wnd`): a DSACK a round trip after the last
    /// widening widens the window by a step; without one, once the widened
    /// window has outlived its recoveries, it is one step again.
    pub(super) fn update_reo_wnd(&mut self, ack: u32) {
        let snd_max = self.snd_max;
        let r = self.reordering_mut();
        if r.dsack && ack < r.widened_at {
            r.dsack = false;
        }
        if r.dsack {
            r.steps = r.steps.saturating_add(1);
            r.dsack = false;
            r.widened_at = snd_max;
            r.persist = RECOVERY_THRESH;
        } else if r.persist == 0 {
            r.steps = 1;
        }
    }

    /// A recovery ended without an undo: one fewer for the window to outlive.
    pub(super) fn reo_wnd_recovery_ended(&mut self) {
        let r = self.reordering_mut();
        r.persist = r.persist.saturating_sub(1);
    }

    /// A recovery undone by DSACKs: the widened window lasts one more.
    pub(super) fn reo_wnd_dsack_undo(&mut self) {
        let r = self.reordering_mut();
        r.persist = (r.persist + 1).min(RECOVERY_THRESH);
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::{Actions, TcpSender};
    use super::super::scripted::{at, linux};
    use aqm::Dur;

    /// A first window of 10 at 0; at 50 ms segment 1 is SACKed before 0 is
    /// acknowledged: 0 came late. Then 2 to 4 are SACKed.
    fn reordered() -> (TcpSender, Actions) {
        let cfg = linux(10);
        let mut s = TcpSender::new(&cfg);
        let mut act = Actions::default();
        s.start(at(0), &cfg, &mut act);
        s.on_ack(at(50), 0, &[(1, 2)], false, &cfg, &mut act);
        assert!(!s.reordering_seen());
        s.on_ack(at(50), 2, &[], false, &cfg, &mut act);
        assert!(s.reordering_seen(), "an original delivered below a SACK");
        s.on_ack(at(51), 2, &[(3, 6)], false, &cfg, &mut act);
        (s, act)
    }

    /// Three SACKed segments leave no window until the path has reordered;
    /// after, a quarter of the minimum RTT (50 ms) however many are SACKed,
    /// and no recovery starts on three duplicate ACKs alone.
    #[test]
    fn reordering_seen_keeps_a_quarter_of_the_minimum_rtt() {
        let (s, _) = reordered();
        assert_eq!(s.reo_wnd(), Dur::from_micros(12_500));
        assert!(
            !s.in_recovery(),
            "three SACKs within the window are no loss"
        );
        let cfg = linux(10);
        let mut fresh = TcpSender::new(&cfg);
        let mut act = Actions::default();
        fresh.start(at(0), &cfg, &mut act);
        fresh.on_ack(at(50), 0, &[(1, 4)], false, &cfg, &mut act);
        assert_eq!(fresh.reo_wnd(), Dur::ZERO);
        assert!(fresh.in_recovery());
    }

    /// On a path seen to reorder, a recovery resends only the holes RACK has
    /// marked lost, those sent a window before the newest segment delivered;
    /// a hole sent with that segment is in flight, not lost, even below a
    /// SACK (RFC 6675's rule would resend it).
    #[test]
    fn a_recovery_on_a_reordering_path_resends_only_what_rack_marks_lost() {
        let cfg = linux(30);
        let mut s = TcpSender::new(&cfg);
        let mut act = Actions::default();
        s.start(at(0), &cfg, &mut act);
        s.on_ack(at(50), 0, &[(1, 2)], false, &cfg, &mut act);
        s.on_ack(at(50), 2, &[], false, &cfg, &mut act);
        assert!(s.reordering_seen());
        // 0 to 29 left at 0, 30 to 32 at 50 ms.
        assert_eq!(s.snd_max, 33);
        act.clear();
        // At 200 ms: 2 to 5 acknowledged, 12 to 29 and 32 SACKed. 6 to 11
        // left 50 ms before 32: lost. 30 and 31 left with it.
        s.on_ack(at(200), 6, &[(32, 33), (12, 30)], false, &cfg, &mut act);
        assert!(s.in_recovery());
        let resent: Vec<u32> = act.data_seqs().into_iter().filter(|&q| q < 33).collect();
        assert_eq!(resent, vec![6, 7, 8, 9, 10, 11], "30 and 31 are in flight");
    }

    /// A DSACK widens the window by a quarter of the minimum RTT, once per
    /// round trip; sixteen recoveries without one narrow it again.
    #[test]
    fn dsacks_widen_the_window_a_step_per_round_trip() {
        let (mut s, _) = reordered();
        s.note_dsack();
        s.update_reo_wnd(2);
        assert_eq!(s.reo_wnd(), Dur::from_micros(25_000));
        // Another in the same round trip (for a segment sent before the
        // widening): no further step.
        s.note_dsack();
        s.update_reo_wnd(5);
        assert_eq!(s.reo_wnd(), Dur::from_micros(25_000));
        let next_round = s.snd_max;
        s.note_dsack();
        s.update_reo_wnd(next_round);
        assert_eq!(s.reo_wnd(), Dur::from_micros(37_500));
        for _ in 0..15 {
            s.reo_wnd_recovery_ended();
            s.update_reo_wnd(next_round);
        }
        assert_eq!(s.reo_wnd(), Dur::from_micros(37_500), "one recovery left");
        s.reo_wnd_recovery_ended();
        s.update_reo_wnd(next_round);
        assert_eq!(s.reo_wnd(), Dur::from_micros(12_500));
    }
}
