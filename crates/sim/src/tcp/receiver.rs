//! The receiving end: cumulative ACKs, SACK blocks, delayed ACKs, ECN echo (RFC
//! 3168's latched ECE, or DCTCP's per-packet CE state, RFC 8257 section 3.2);
//! under the Linux profile also timestamps (RFC 7323's `TS.Recent`, echoed on
//! every ACK) and DSACK (RFC 2883: a duplicate segment is reported in the first
//! SACK block), which the sender's undo reads.

use super::{Actions, Seg, TcpConfig, TimerCmd};
use crate::event::TimerKind;
use crate::header::{SackBlocks, SACK_BLOCKS};
use aqm::Time;

/// The receiving end: cumulative ACKs, SACK blocks, delayed ACKs, ECN echo.
#[derive(Debug, Clone, Default)]
pub struct TcpReceiver {
    rcv_nxt: u32,
    /// Out-of-order packets held, as sorted disjoint `[start, end)` runs; boxed
    /// and freed when the last hole fills: every flow has a receiver, few hold
    /// packets out of order at once (8 bytes instead of 24 and the buffer).
    #[allow(clippy::box_collection)] // the box is the point: 8 bytes, not 24
    ooo: Option<Box<Vec<(u32, u32)>>>,
    unacked: u32,
    /// The Linux profile's quick-ACK mode: ACKs still to send at once
    /// (`icsk_ack.quick`), whatever the delayed-ACK rule.
    quick: u8,
    ece: bool,
    /// The timestamp the next ACK echoes (RFC 7323's `TS.Recent`; 0: none).
    ts_recent: u32,
    /// Packets delivered in order to the application.
    pub delivered: u64,
}

impl TcpReceiver {
    pub fn rcv_nxt(&self) -> u32 {
        self.rcv_nxt
    }

    /// The out-of-order runs.
    #[inline]
    fn runs(&self) -> &[(u32, u32)] {
        self.ooo.as_deref().map_or(&[], Vec::as_slice)
    }

    /// A data segment `seq` arrived, sent with timestamp `tsval` (0: none).
    #[allow(clippy::too_many_arguments)]
    pub fn on_data(
        &mut self,
        now: Time,
        seq: u32,
        tsval: u32,
        ce: bool,
        cwr: bool,
        cfg: &TcpConfig,
        act: &mut Actions,
    ) {
        // The ACK of this packet goes at once (DCTCP's CE state changed).
        let mut now_ack = false;
        if cfg.is_linux() {
            now_ack = self.linux_quick_ack(seq, ce, cfg);
            // RFC 7323 (4.3), as `tcp_replace_ts_recent`: a segment at the
            // left edge the last ACK reported (`rcv_wup`) sets what is echoed,
            // so a delayed ACK echoes the first of its segments, an ACK of an
            // out-of-order segment the last in-order one, and the ACK of a
            // hole filled the segment that filled it.
            let rcv_wup = self.rcv_nxt - self.unacked;
            if tsval != 0 && seq <= rcv_wup && seq + 1 >= rcv_wup {
                self.ts_recent = tsval;
            }
        }
        if cfg.variant.is_scalable() {
            // RFC 8257 (3.2), as Linux's `dctcp_ece_ack_update`: ECE is the CE
            // state of the last packet. When it changes, a delayed ACK of the
            // packets before this one goes first with the old state, and this
            // packet's ACK at once with the new, so each ACK's ECE covers exactly
            // the packets it acknowledges.
            if ce != self.ece {
                if self.unacked > 0 {
                    self.ack_now(None, act);
                }
                self.ece = ce;
                now_ack = true;
            }
        } else {
            if cwr {
                self.ece = false;
            }
            if ce {
                self.ece = true;
            }
        }
        if seq == self.rcv_nxt {
            let had_holes = self.ooo.is_some();
            self.rcv_nxt += 1;
            if let Some(runs) = &mut self.ooo {
                let (start, end) = runs[0];
                if start == self.rcv_nxt {
                    self.rcv_nxt = end;
                    runs.remove(0);
                    if runs.is_empty() {
                        self.ooo = None;
                    }
                }
            }
            self.delivered += (self.rcv_nxt - seq) as u64;
            if cfg.delayed_ack && !had_holes && !now_ack {
                self.unacked += 1;
                if self.unacked >= 2 {
                    self.ack_now(None, act);
                } else {
                    act.timer(TimerKind::DelAck, TimerCmd::Arm(now + cfg.delack_timeout));
                }
            } else {
                self.ack_now(None, act);
            }
        } else if seq > self.rcv_nxt {
            let duplicate = !self.insert_ooo(seq);
            let dsack = (duplicate && cfg.is_linux()).then_some(seq);
            self.ack_now_reporting(Some(seq), dsack, act);
        } else {
            // A segment received before: Linux reports it (`tcp_dsack_set`).
            let dsack = cfg.is_linux().then_some(seq);
            self.ack_now_reporting(None, dsack, act);
        }
    }

    /// Linux's quick-ACK mode (`tcp_incr_quickack`, `tcp_enter_quickack_mode`):
    /// the first 16 packets of a connection, a packet below `rcv_nxt` (a
    /// retransmission the sender need not have sent: 16 more) and a CE mark on
    /// a classic flow (2 more) are acknowledged at once. Says whether this one is.
    fn linux_quick_ack(&mut self, seq: u32, ce: bool, cfg: &TcpConfig) -> bool {
        const MAX_QUICKACKS: u8 = 16;
        if self.delivered == 0 && self.rcv_nxt == 0 && self.ooo.is_none() {
            self.quick = self.quick.max(MAX_QUICKACKS);
        }
        if seq < self.rcv_nxt {
            self.quick = MAX_QUICKACKS;
        }
        if ce && !cfg.variant.is_scalable() {
            self.quick = self.quick.max(2);
        }
        if self.quick > 0 {
            self.quick -= 1;
            true
        } else {
            false
        }
    }

    pub fn on_delack_timer(&mut self, act: &mut Actions) {
        if self.unacked > 0 {
            self.ack_now(None, act);
        }
    }

    /// Holds an out-of-order segment; false if it was held already.
    fn insert_ooo(&mut self, seq: u32) -> bool {
        let ooo = self.ooo.get_or_insert_with(Box::default);
        let i = ooo.partition_point(|&(_, end)| end < seq);
        if let Some(run) = ooo.get_mut(i) {
            if run.0 <= seq && seq < run.1 {
                return false;
            }
            if run.1 == seq {
                run.1 += 1;
                if let Some(&(next_start, next_end)) = ooo.get(i + 1) {
                    if next_start == seq + 1 {
                        ooo[i].1 = next_end;
                        ooo.remove(i + 1);
                    }
                }
                return true;
            }
            if run.0 == seq + 1 {
                run.0 = seq;
                return true;
            }
        }
        ooo.insert(i, (seq, seq + 1));
        true
    }

    fn ack_now(&mut self, latest: Option<u32>, act: &mut Actions) {
        self.ack_now_reporting(latest, None, act);
    }

    /// An ACK now; `dsack`, a duplicate segment, goes in the first block.
    fn ack_now_reporting(&mut self, latest: Option<u32>, dsack: Option<u32>, act: &mut Actions) {
        let mut sack = SackBlocks::default();
        if let Some(seq) = dsack {
            sack.push((seq, seq + 1));
        }
        // RFC 2018: the first block holds the packet that triggered this ACK, then
        // the highest runs. Both are found without reading every run: a window of
        // thousands of packets after a burst of losses holds hundreds of them.
        let runs = self.runs();
        let first = latest.and_then(|s| {
            let i = runs.partition_point(|&(_, end)| end <= s);
            (runs.get(i).is_some_and(|&(start, _)| start <= s)).then_some(i)
        });
        if let Some(i) = first {
            sack.push(runs[i]);
        }
        let highest = runs.iter().enumerate().rev();
        for (_, &run) in highest.filter(|&(i, _)| Some(i) != first).take(SACK_BLOCKS) {
            sack.push(run);
        }
        act.segs.push(Seg::Ack {
            ack: self.rcv_nxt,
            sack,
            ece: self.ece,
            tsecr: self.ts_recent,
        });
        self.unacked = 0;
        act.timer(TimerKind::DelAck, TimerCmd::Cancel);
    }
}
