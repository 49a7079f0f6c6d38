//! Fast recovery: entering it on duplicate ACKs (or RACK's loss by time),
//! limited transmit before it, and what a new ACK does inside it (Reno's end,
//! NewReno's partial ACK, SACK's `recover`).

use super::super::congestion::Signal;
use super::super::{Actions, NewRenoTimer, Recovery, ReductionCause, TcpConfig, Variant};
use super::linux_rtt::Samples as LinuxSamples;
use super::prr::Prr;
use super::{TcpSender, RETX};
use aqm::Time;

impl TcpSender {
    pub(super) fn enter_recovery(&mut self, now: Time, cfg: &TcpConfig, act: &mut Actions) {
        self.start_recovery(now, cfg);
        // A head resent and still out starts a recovery but is not sent a
        // third time (`tcp_xmit_retransmit_queue` skips it).
        if cfg.is_linux() && self.scoreboard.front().is_some_and(|&b| b & RETX != 0) {
            return;
        }
        let una = self.snd_una;
        self.retransmit(una, now, cfg, act);
        self.restart_rto(now, cfg, act);
    }

    /// A fast recovery's state and window; what it sends is the caller's.
    pub(super) fn start_recovery(&mut self, now: Time, cfg: &TcpConfig) {
        if cfg.is_linux() && cfg.variant.recovery() == Recovery::Sack {
            self.init_undo();
            self.stop_frto();
            self.reset_rack_edge();
        }
        self.ssthresh = self.reduced_ssthresh(Signal::Loss, cfg);
        self.recover = self.snd_max;
        // RFC 3168 (6.1.2): one reduction for the losses and marks of one window.
        self.ecn_recover = self.snd_max;
        self.ecn_hold = false;
        self.in_recovery = true;
        self.partial_acked = false;
        self.set_timed(None);
        self.stats.fast_recoveries += 1;
        if cfg.prr && cfg.variant.recovery() == Recovery::Sack {
            self.set_prr(Some(Prr::new(self.cwnd)));
        }
        let cwnd = match cfg.variant.recovery() {
            Recovery::Sack => self.ssthresh,
            Recovery::Reno | Recovery::NewReno => self.ssthresh + cfg.dupthresh as f64,
        };
        self.reduce(now, cwnd, ReductionCause::FastRetransmit);
    }

    /// What a new ACK does to recovery: ends it at `recover` (Reno: at any
    /// new ACK), or, for NewReno, a partial ACK retransmits the next hole.
    /// Returns whether the window may grow on this ACK and whether the
    /// retransmission timer restarts.
    #[inline]
    pub(super) fn recovery_on_new_ack(
        &mut self,
        now: Time,
        ack: u32,
        newly: u32,
        cfg: &TcpConfig,
        act: &mut Actions,
    ) -> (bool, bool) {
        if !self.in_recovery {
            return (true, true);
        }
        // The ACK that ends recovery deflates the window to ssthresh and then
        // opens it as any new ACK does (ns-2's `recv_newack_helper`, ns-3's
        // `ProcessAck`): a window halved to 2 reaches 4 packets one ACK sooner.
        // CUBIC, whose reference is RFC 9438 and not ns-2, starts its curve on
        // the next ACK as before.
        let exit_grows = cfg.is_linux() || cfg.variant != Variant::Cubic;
        let recovery = cfg.variant.recovery();
        if ack >= self.recover || recovery == Recovery::Reno {
            self.in_recovery = false;
            if ack >= self.recover {
                self.set_prr(None);
            }
            self.dupacks = 0;
            self.cwnd = self.ssthresh;
            return (exit_grows, true);
        }
        if recovery == Recovery::NewReno {
            // Partial ACK: the next hole is lost too.
            let restart = cfg.newreno_timer == NewRenoTimer::SlowButSteady || !self.partial_acked;
            self.partial_acked = true;
            self.cwnd = (self.cwnd - newly as f64 + 1.0).max(1.0);
            let una = self.snd_una;
            self.retransmit(una, now, cfg, act);
            return (false, restart);
        }
        (false, true)
    }

    /// A duplicate ACK (`ack` at `snd_una` with data outstanding): counted,
    /// and fast retransmit (or RACK's time-based loss) or limited transmit
    /// outside recovery; NewReno's window inflation inside it.
    #[inline]
    pub(super) fn on_dup_ack(
        &mut self,
        now: Time,
        ack: u32,
        samples: LinuxSamples,
        cfg: &TcpConfig,
        act: &mut Actions,
    ) {
        let linux = cfg.is_linux();
        let recovery = cfg.variant.recovery();
        if linux {
            self.linux_feed(samples, now, cfg);
        }
        self.dupacks += 1;
        if !self.in_recovery {
            let linux_sack = linux && recovery == Recovery::Sack;
            let rack = linux_sack && samples.newest_sent.is_some_and(|t| self.rack_lost_head(t));
            // Once the path has reordered, Linux leaves loss detection to
            // RACK's widened window alone (`tcp_time_to_recover`).
            let dupthresh =
                self.dupacks == cfg.dupthresh && !(linux_sack && self.reordering_seen());
            if (dupthresh || rack) && self.may_fast_retransmit(ack, cfg) {
                self.enter_recovery(now, cfg, act);
            } else if cfg.limited_transmit && self.dupacks < cfg.dupthresh.min(3) {
                self.limited_transmit(now, cfg, act);
            }
        } else if recovery != Recovery::Sack {
            self.cwnd += 1.0; // window inflation: one packet left the network
        }
    }

    /// Whether duplicate ACKs for `ack` may start a fast retransmit: only when `ack`
    /// is above `recover`, i.e. acknowledges a packet sent after the last loss
    /// (RFC 6582's "careful" variant; ns-2's `bugFix_`, `highest_ack_ > recover_`),
    /// so that one window's losses, or a timeout's go-back-N duplicates, trigger
    /// one reduction. Reno without `reno_bugfix` may fast-retransmit at any time.
    /// Linux with SACK needs only the window acknowledged (`tcp_try_undo_recovery`:
    /// "SACK TCP is safe"), so a loss of the first packet after it is repaired
    /// by a fast recovery, where the careful rule leaves it to the timeout.
    pub(super) fn may_fast_retransmit(&self, ack: u32, cfg: &TcpConfig) -> bool {
        let sack_linux = cfg.is_linux() && cfg.variant.recovery() == Recovery::Sack;
        (cfg.variant.recovery() == Recovery::Reno && !cfg.reno_bugfix)
            || self.recover == 0
            || ack > self.recover
            || (sack_linux && ack == self.recover)
    }

    /// RFC 3042: a duplicate ACK (the first or second) says a packet left the
    /// network, so one new packet may follow it: at most cwnd + 2 outstanding,
    /// never beyond the receiver's window, never a retransmission, cwnd unchanged.
    pub(super) fn limited_transmit(&mut self, now: Time, cfg: &TcpConfig, act: &mut Actions) {
        let allowance = self.cwnd.floor() as u32 + self.dupacks;
        if self.ecn_hold
            || self.pace_holds(now)
            || self.snd_nxt != self.snd_max
            || !self.has_new_data()
            || self.outstanding() >= allowance.min(cfg.max_window)
        {
            return;
        }
        let seq = self.snd_nxt;
        self.snd_nxt += 1;
        self.emit(seq, now, cfg, act);
    }
}
