//! The SACK scoreboard (RFC 6675): marking SACKed packets, `pipe`, and the next
//! hole to retransmit, over the sender's per-packet flags.

use super::{TcpSender, EVER_RETX, RETX, SACKED};

/// What one ACK's SACK blocks did to the scoreboard.
pub(super) struct Sacked {
    /// The first and last packet newly SACKed, if any.
    pub(super) newly: Option<(u32, u32)>,
    /// A packet never sent twice was newly SACKed below the highest SACKed
    /// before: it came late, after others sent later (reordering).
    pub(super) late_original: bool,
}

impl TcpSender {
    /// RFC 6675's pipe with "lost" = below the highest SACKed packet, or below
    /// what a timeout counted lost (the Linux profile's CA_Loss), or, in a
    /// recovery on a path seen to reorder, below RACK's edge (`reordering`):
    /// the holes above it are in flight.
    pub(super) fn pipe(&self) -> u32 {
        let edge = self.lost_edge();
        let holes_in_flight = if edge < self.high_sack {
            let first = (edge - self.snd_una) as usize;
            let last = (self.high_sack - self.snd_una) as usize;
            let held = self.scoreboard.range(first..last);
            held.filter(|&&f| f & (SACKED | RETX) == 0).count() as u32
        } else {
            0
        };
        (self.snd_max - edge.max(self.high_sack)) + holes_in_flight + self.retx_out
    }

    /// One past the last segment counted lost if not SACKed.
    #[inline]
    fn lost_edge(&self) -> u32 {
        let sacked_to = match self.rack_edge() {
            Some(edge) => edge.min(self.high_sack),
            None => self.high_sack,
        };
        sacked_to.max(self.lost_to())
    }

    pub(super) fn next_hole(&mut self) -> Option<u32> {
        let mut s = self.hole_hint.max(self.snd_una);
        let edge = self.lost_edge();
        while s < edge {
            if self.scoreboard[(s - self.snd_una) as usize] & (SACKED | RETX) == 0 {
                self.hole_hint = s;
                return Some(s);
            }
            s += 1;
        }
        self.hole_hint = s;
        None
    }

    /// Marks the blocks' packets SACKed.
    pub(super) fn mark_sacked(&mut self, blocks: &[(u32, u32)]) -> Sacked {
        let mut newly: Option<(u32, u32)> = None;
        let prior_high = self.high_sack;
        let mut late_original = false;
        for &(start, end) in blocks {
            let start = start.max(self.snd_una);
            let end = end.min(self.snd_max);
            for seq in start..end {
                let f = &mut self.scoreboard[(seq - self.snd_una) as usize];
                if *f & SACKED == 0 {
                    if *f & RETX != 0 {
                        self.retx_out -= 1;
                    }
                    late_original |= *f & EVER_RETX == 0 && seq < prior_high;
                    *f |= SACKED;
                    self.sacked += 1;
                    newly = Some(match newly {
                        Some((lo, hi)) => (lo.min(seq), hi.max(seq)),
                        None => (seq, seq),
                    });
                }
            }
            if end > self.high_sack {
                self.high_sack = end;
            }
        }
        Sacked {
            newly,
            late_original,
        }
    }
}
