//! The Linux profile's undo of reductions that were not needed (`tcp_input.c`:
//! `tcp_init_undo`, `tcp_may_undo`, the `tcp_try_undo_*` family and
//! `tcp_process_loss`), on SACK recovery. An episode (a fast recovery, or a
//! timeout's loss state) keeps the window and ssthresh from before it; it is
//! undone when one of three signs says no segment was lost:
//!
//! - **Timestamps.** Every ACK echoes the timestamp of the segment that moved
//!   the receiver's left edge (`receiver`). An ACK that advances, echoing a
//!   timestamp older than the episode's first retransmission, was sent for an
//!   original that was only delayed (`tcp_packet_delayed`).
//! - **DSACK.** Every retransmission of the episode is counted; a DSACK for one
//!   (RFC 2883) says the receiver had it already. When none is left, the
//!   episode was spurious, undone even after it ended (`tcp_try_undo_dsack`).
//! - **F-RTO** (RFC 5682, SACK-enhanced, as Linux runs it). After a timeout the
//!   first ACK that advances sends new data instead of more retransmissions;
//!   if a later ACK (S)ACKs a segment never sent twice, the timeout was spurious.
//!
//! Undoing returns the window to the congestion control's `undo_cwnd` (Reno's
//! and CUBIC's: the window before; BBR keeps its own), restores ssthresh if it
//! was higher, forgets a timeout's loss marks and leaves the episode. Not
//! modelled: a partial ACK that shows a delayed original while retransmissions
//! are still out makes Linux stop retransmitting; here the recovery goes on.
//! The DSACKs also widen RACK's reordering window (`reordering`).

use super::super::{timestamp, Actions, ReductionCause, TcpConfig};
use super::{TcpSender, RETX, SACKED};
use aqm::Time;

/// Set on a segment ever sent twice (Linux's `TCPCB_EVER_RETRANS`): a timeout
/// forgets `RETX`, F-RTO still needs to know.
pub(super) const EVER_RETX: u8 = 4;

/// The undo state (`undo_marker` and the rest), kept with the sender's
/// occasional state.
#[derive(Debug, Clone, Default)]
pub(super) struct Undo {
    episode: Option<Episode>,
    /// When the episode's first retransmission left (`retrans_stamp`,
    /// timestamp ticks; 0: none since the sender was last open).
    retrans_stamp: u32,
    /// F-RTO after a timeout: the highest segment sent when it began
    /// (`high_seq`); 0 when not running.
    frto_high: u32,
    /// Reductions undone so far.
    undone: u32,
}

/// An episode that may still be undone.
#[derive(Debug, Clone)]
struct Episode {
    /// `snd_una` when it began (`undo_marker`).
    marker: u32,
    /// Its retransmissions not yet shown unnecessary by a DSACK
    /// (`undo_retrans`; -1: none sent yet).
    retrans: i32,
    prior_cwnd: f64,
    /// ssthresh before it (`prior_ssthresh`; 0: the window is not restored).
    prior_ssthresh: f64,
}

/// What one ACK showed, for the undo rules.
#[derive(Copy, Clone, Debug, Default)]
pub(super) struct Seen {
    pub(super) tsecr: u32,
    pub(super) dsack: bool,
    pub(super) advanced: bool,
    pub(super) dup: bool,
    pub(super) sacked_new: bool,
    /// It (S)ACKed a segment never sent twice, below F-RTO's `high_seq`
    /// (`FLAG_ORIG_SACK_ACKED`).
    pub(super) orig: bool,
    pub(super) was_recovery: bool,
    /// In Linux's CA_Loss before it: a timeout's losses not all repaired, or
    /// F-RTO running.
    pub(super) was_loss: bool,
    /// Where that loss state ends (`high_seq`).
    pub(super) loss_high: u32,
}

/// A SACK block `[start, end)`.
type Block = (u32, u32);

/// `before(a, b)` on 32-bit timestamps that wrap.
fn ts_before(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

/// The first SACK block if it is a DSACK (RFC 2883, section 4: below the
/// cumulative ACK, or inside the second block), and the blocks without it.
fn split_dsack(ack: u32, blocks: &[Block]) -> (Option<Block>, &[Block]) {
    match blocks {
        [first, rest @ ..]
            if first.0 < ack
                || rest
                    .first()
                    .is_some_and(|b| b.0 <= first.0 && first.1 <= b.1) =>
        {
            (Some(*first), rest)
        }
        _ => (None, blocks),
    }
}

impl TcpSender {
    fn undo_state(&mut self) -> &mut Undo {
        &mut self.aside.get_or_insert_with(Box::default).undo
    }

    fn episode(&self) -> Option<&Episode> {
        self.aside.as_deref().and_then(|a| a.undo.episode.as_ref())
    }

    /// F-RTO's `high_seq` while it runs, else 0.
    pub(super) fn frto_high(&self) -> u32 {
        self.aside.as_deref().map_or(0, |a| a.undo.frto_high)
    }

    /// ssthresh as an undo restores it (`tcp_current_ssthresh`): in a
    /// reduction, ssthresh; otherwise at least three quarters of the window.
    fn current_ssthresh(&self) -> f64 {
        if self.in_recovery {
            return self.ssthresh;
        }
        let c = self.cwnd.floor() as u64;
        self.ssthresh.max(((c >> 1) + (c >> 2)) as f64)
    }

    /// An episode begins, before its reduction (`tcp_init_undo`, with
    /// `prior_cwnd` and `prior_ssthresh`).
    pub(super) fn init_undo(&mut self) {
        let episode = Episode {
            marker: self.snd_una,
            retrans: if self.retx_out > 0 {
                self.retx_out as i32
            } else {
                -1
            },
            prior_cwnd: self.cwnd,
            prior_ssthresh: self.current_ssthresh(),
        };
        self.undo_state().episode = Some(episode);
    }

    /// A timeout starts F-RTO (`tcp_enter_loss`): on a first timeout outside
    /// a recovery, or on a timeout after another with no ACK between.
    pub(super) fn start_frto(&mut self, recurring: bool, was_reducing: bool) {
        let high = if !was_reducing || recurring {
            self.snd_max
        } else {
            0
        };
        self.undo_state().frto_high = high;
    }

    /// A recovery begins from a timeout's loss state: F-RTO has no more say.
    pub(super) fn stop_frto(&mut self) {
        if let Some(a) = self.aside.as_deref_mut() {
            a.undo.frto_high = 0;
        }
    }

    /// A segment left again at `now` (`tcp_retransmit_skb`).
    pub(super) fn undo_count_retransmission(&mut self, now: Time) {
        let u = self.undo_state();
        if u.retrans_stamp == 0 {
            u.retrans_stamp = timestamp(now);
        }
        if let Some(e) = &mut u.episode {
            e.retrans = e.retrans.max(0) + 1;
        }
    }

    /// A DSACK for `(start, end)` on an ACK that found `snd_una` at
    /// `prior_una`: a retransmission of the episode was not needed
    /// (`tcp_check_dsack`, `tcp_sacktag_one`).
    pub(super) fn undo_count_dsack(&mut self, (start, end): (u32, u32), prior_una: u32) {
        let snd_una = self.snd_una;
        let mut dup = 0;
        for seq in start..end {
            let resent_above = seq
                .checked_sub(snd_una)
                .and_then(|k| self.scoreboard.get(k as usize))
                .is_some_and(|f| f & EVER_RETX != 0);
            if seq < prior_una || resent_above {
                dup += 1;
            }
        }
        let Some(e) = self
            .aside
            .as_deref_mut()
            .and_then(|a| a.undo.episode.as_mut())
        else {
            return;
        };
        if e.retrans > 0 && end > e.marker {
            e.retrans = (e.retrans - dup).max(0);
        }
    }

    /// Whether the ACK being taken (S)ACKs a segment below F-RTO's `high_seq`
    /// never sent twice and not SACKed before: the cumulative ACK to `ack`
    /// or the SACK `blocks` (read before the scoreboard takes them).
    pub(super) fn frto_orig_delivered(&self, ack: u32, blocks: &[(u32, u32)]) -> bool {
        let high = self.frto_high();
        let fresh = |seq: u32| {
            let f = self.scoreboard[(seq - self.snd_una) as usize];
            f & (SACKED | RETX | EVER_RETX) == 0
        };
        let acked = self.snd_una..ack.min(high).max(self.snd_una);
        acked.clone().any(fresh)
            || blocks.iter().any(|&(s, e)| {
                let lo = s.max(self.snd_una);
                let hi = e.min(high).min(self.snd_max);
                (lo..hi.max(lo)).any(fresh)
            })
    }

    /// Whether this ACK was sent for an original segment sent before the
    /// episode's first retransmission (`tcp_packet_delayed`).
    fn packet_delayed(&self, tsecr: u32) -> bool {
        let stamp = self.aside.as_deref().map_or(0, |a| a.undo.retrans_stamp);
        stamp != 0 && tsecr != 0 && ts_before(tsecr, stamp)
    }

    /// What an ACK to `ack` echoing `tsecr` shows before the scoreboard takes
    /// its `blocks`: its DSACK (counted, and returned apart from the other
    /// blocks) and whether it delivers an original F-RTO waits for.
    pub(super) fn undo_before_ack<'b>(
        &mut self,
        ack: u32,
        blocks: &'b [Block],
        tsecr: u32,
    ) -> (Seen, &'b [Block]) {
        let (dsack, blocks) = split_dsack(ack, blocks);
        if let Some(d) = dsack {
            self.undo_count_dsack(d, self.snd_una);
            self.note_dsack();
        }
        let frto = self.frto_high() != 0;
        let seen = Seen {
            tsecr,
            dsack: dsack.is_some(),
            orig: frto && self.frto_orig_delivered(ack, blocks),
            was_recovery: self.in_recovery,
            was_loss: self.in_loss() || frto,
            loss_high: self.lost_to(),
            ..Seen::default()
        };
        (seen, blocks)
    }

    /// The undo rules once the scoreboard and the window have taken the ACK
    /// to `ack`, which found `snd_una` at `prior_una` (`sacked_new`: it
    /// SACKed new segments). Returns whether F-RTO wants new data sent now instead of
    /// retransmissions.
    pub(super) fn undo_after_ack(
        &mut self,
        now: Time,
        s: &mut Seen,
        (prior_una, ack): (u32, u32),
        sacked_new: bool,
        cfg: &TcpConfig,
    ) -> bool {
        self.update_reo_wnd(ack);
        s.advanced = self.snd_una > prior_una;
        s.dup = !s.advanced && ack == prior_una && prior_una < self.snd_max;
        s.sacked_new = sacked_new;
        self.undo_on_ack(now, s, cfg)
    }

    /// The undo rules on one ACK, after the scoreboard and the window have
    /// taken it (`tcp_fastretrans_alert`'s undo steps). Returns whether F-RTO
    /// wants new data sent now instead of retransmissions.
    fn undo_on_ack(&mut self, now: Time, s: &Seen, cfg: &TcpConfig) -> bool {
        let delayed = self.packet_delayed(s.tsecr);
        let may_undo = self.episode().is_some_and(|e| e.retrans == 0 || delayed);
        let all_dsacked = self.episode().is_some_and(|e| e.retrans == 0);
        let rexmit_new = if s.was_loss {
            self.undo_in_loss(now, s, may_undo, cfg)
        } else {
            if s.was_recovery && self.in_recovery {
                // A partial ACK for a delayed original with nothing resent
                // still out (`tcp_try_undo_partial`), or every retransmission
                // DSACKed (`tcp_try_undo_dsack`).
                let partial =
                    s.advanced && delayed && self.episode().is_some() && self.retx_out == 0;
                if partial || all_dsacked {
                    self.undo_reduction(now, partial);
                }
                if all_dsacked && !partial {
                    self.reo_wnd_dsack_undo();
                }
            } else if s.was_recovery {
                // The ACK that ended the recovery (`tcp_try_undo_recovery`).
                if may_undo {
                    self.undo_reduction(now, false);
                } else {
                    self.reo_wnd_recovery_ended();
                }
            } else if s.dsack && all_dsacked {
                // A late DSACK undoes an episode already over.
                self.undo_reduction(now, false);
                self.reo_wnd_dsack_undo();
            }
            false
        };
        if !self.in_recovery && !self.in_loss() && self.frto_high() == 0 && self.retx_out == 0 {
            // Open again with nothing resent in flight: the next
            // retransmission starts the stamp afresh.
            if let Some(a) = self.aside.as_deref_mut() {
                a.undo.retrans_stamp = 0;
            }
        }
        rexmit_new
    }

    /// `tcp_process_loss`: the timestamp or DSACK undo on an ACK that
    /// advances, F-RTO's steps 2 and 3, and the undo when the losses are all
    /// repaired.
    fn undo_in_loss(&mut self, now: Time, s: &Seen, may_undo: bool, cfg: &TcpConfig) -> bool {
        if s.advanced && may_undo {
            self.undo_reduction(now, true);
            return false;
        }
        let high = self.frto_high();
        if high != 0 {
            if s.orig {
                // Step 3.b: not all was lost, the timeout was spurious.
                self.undo_reduction(now, true);
                return false;
            }
            if self.snd_max > high {
                if s.sacked_new || s.dup {
                    self.stop_frto(); // step 3.a: the loss was real
                }
            } else if s.advanced && self.snd_una < high {
                // Step 2.b: new data now, if there is any to send.
                if self.has_new_data() && self.snd_nxt < self.snd_una + cfg.max_window {
                    return true;
                }
                self.stop_frto();
            }
        }
        if self.snd_una >= s.loss_high.max(self.frto_high()) {
            if may_undo {
                self.undo_reduction(now, false);
            } else {
                self.reo_wnd_recovery_ended();
            }
            self.stop_frto();
        }
        false
    }

    /// F-RTO's step 2: new data as the window allows, no retransmission.
    pub(super) fn send_new_data(&mut self, now: Time, cfg: &TcpConfig, act: &mut Actions) {
        while (self.pipe() as f64) < self.cwnd.floor()
            && !self.pace_holds(now)
            && self.has_new_data()
            && self.snd_nxt < self.snd_una + cfg.max_window
        {
            let seq = self.snd_nxt;
            self.snd_nxt += 1;
            self.emit(seq, now, cfg, act);
        }
    }

    /// `tcp_undo_cwnd_reduction`, and the sender open again.
    fn undo_reduction(&mut self, now: Time, unmark_loss: bool) {
        let Some(a) = self.aside.as_deref_mut() else {
            return;
        };
        let Some(e) = a.undo.episode.take() else {
            return;
        };
        a.undo.frto_high = 0;
        if unmark_loss {
            a.lost_to = 0;
            self.hole_hint = self.snd_una;
        }
        if e.prior_ssthresh > 0.0 {
            // Recorded with the reductions it undoes, when tracing.
            let cwnd = self.cc.undo_cwnd(self.cwnd, e.prior_cwnd);
            self.reduce(now, cwnd, ReductionCause::Undo);
            if e.prior_ssthresh > self.ssthresh {
                self.ssthresh = e.prior_ssthresh;
                self.cwr_pending = false; // `tcp_ecn_withdraw_cwr`
            }
        }
        self.in_recovery = false;
        self.set_prr(None);
        self.dupacks = 0;
        // The episode is over: a loss from here on starts a recovery.
        self.recover = self.snd_una;
        if let Some(a) = self.aside.as_deref_mut() {
            a.undo.undone += 1;
        }
    }

    /// Reductions undone as spurious so far (kept beside the sender's
    /// counters: a sender must fit its allocation).
    pub fn undos(&self) -> u32 {
        self.aside.as_deref().map_or(0, |a| a.undo.undone)
    }
}

#[cfg(test)]
mod tests;
