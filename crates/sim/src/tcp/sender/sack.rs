//! The SACK scoreboard (RFC 6675): marking SACKed packets, `pipe`, and the next
//! hole to retransmit, over the sender's per-packet flags.

use super::{TcpSender, RETX, SACKED};

impl TcpSender {
    /// RFC 6675's pipe with "lost" = below the highest SACKed packet.
    pub(super) fn pipe(&self) -> u32 {
        (self.snd_max - self.high_sack) + self.retx_out
    }

    pub(super) fn next_hole(&mut self) -> Option<u32> {
        let mut s = self.hole_hint.max(self.snd_una);
        while s < self.high_sack {
            if self.scoreboard[(s - self.snd_una) as usize] & (SACKED | RETX) == 0 {
                self.hole_hint = s;
                return Some(s);
            }
            s += 1;
        }
        self.hole_hint = s;
        None
    }

    pub(super) fn mark_sacked(&mut self, blocks: &[(u32, u32)]) {
        for &(start, end) in blocks {
            let start = start.max(self.snd_una);
            let end = end.min(self.snd_max);
            for seq in start..end {
                let f = &mut self.scoreboard[(seq - self.snd_una) as usize];
                if *f & SACKED == 0 {
                    if *f & RETX != 0 {
                        self.retx_out -= 1;
                    }
                    *f |= SACKED;
                    self.sacked += 1;
                }
            }
            if end > self.high_sack {
                self.high_sack = end;
            }
        }
    }
}
