//! The Linux profile's RTT samples and retransmission timer: a sample on every
//! ACK that delivers data (timestamps make retransmissions unambiguous, so Karn's
//! one timed packet per window does not apply), and Linux's estimator
//! (`tcp_rtt_estimator`, `tcp_set_rto`): `mdev` weighs a falling RTT by 1/32,
//! `rttvar` is the window's largest `mdev` and never below `rto_min`, and the
//! timeout is `srtt + rttvar` rounded up to a jiffy, so it is at least `srtt +
//! rto_min` where RFC 6298's is at least `rto_min`.
//!
//! Which segment gives the sample follows `tcp_clean_rtx_queue`: the estimator
//! takes the oldest segment the ACK newly acknowledges without a SACK before
//! it, or else the oldest it newly SACKs; CUBIC takes the newest of either
//! (`ca_rtt`). A segment ever sent twice gives none (Karn: which copy arrived
//! is unknown); an ACK that advances with no other sample takes one from the
//! timestamp it echoes, in the timestamp's milliseconds (`tcp_ack_update_rtt`).
//! RACK takes the newest send time delivered, but not that of a retransmission
//! delivered sooner than the minimum RTT after it left (`tcp_rack_advance`:
//! the original may be what arrived).

use super::super::congestion::linux::{self, Round};
use super::super::{timestamp, TcpConfig};
use super::{TcpSender, EVER_RETX, SACKED};
use aqm::{Dur, Time};

/// `tcp_sock`'s estimator state, microseconds as the kernel keeps them.
#[derive(Debug, Clone, Default)]
pub(super) struct LinuxRtt {
    /// Smoothed RTT, times 8 (`srtt_us`).
    srtt8: u32,
    /// Mean deviation, times 4 (`mdev_us`).
    mdev: u32,
    /// The largest `mdev` of the current window (`mdev_max_us`).
    mdev_max: u32,
    /// What the timeout adds to srtt (`rttvar_us`), at least rto_min.
    rttvar: u32,
    /// The window ends when snd_una passes this (`rtt_seq`).
    rtt_seq: u32,
    /// The smallest sample (RACK's reordering window is a quarter of it).
    min_rtt: u32,
}

/// The samples one ACK gives: for the estimator, and for the congestion control.
#[derive(Copy, Clone, Debug, Default)]
pub(super) struct Samples {
    pub(super) seq_rtt: Option<Dur>,
    pub(super) ca_rtt: Option<Dur>,
    /// When the most recently sent of the segments this ACK delivered left
    /// (RACK's `rack.mstamp`).
    pub(super) newest_sent: Option<Time>,
}

impl TcpSender {
    /// When segment `seq` was last sent, if the sender keeps it.
    pub(super) fn sent_at(&self, seq: u32) -> Option<Time> {
        let a = self.aside.as_deref()?;
        let i = seq.checked_sub(a.base)?;
        a.times.get(i as usize).copied()
    }

    /// A retransmission of `seq` left at `now`: its timestamp is the new one,
    /// and it joins RACK's retransmissions in send order.
    pub(super) fn resent_at(&mut self, seq: u32, now: Time) {
        if let Some(a) = self.aside.as_deref_mut() {
            if let Some(t) = seq
                .checked_sub(a.base)
                .and_then(|i| a.times.get_mut(i as usize))
            {
                *t = now;
                // Those acknowledged since are of no more use (bounds the queue).
                while a.tlp.resent.front().is_some_and(|&(s, _)| s < a.base) {
                    a.tlp.resent.pop_front();
                }
                a.tlp.resent.push_back((seq, now));
            }
        }
    }

    /// The samples of an ACK to `ack` that newly SACKed `sacked` (first and
    /// last segment) and echoed timestamp `tsecr`, read before the scoreboard
    /// moves past them.
    pub(super) fn linux_samples(
        &self,
        now: Time,
        ack: u32,
        sacked: Option<(u32, u32)>,
        tsecr: u32,
    ) -> Samples {
        let flags = |seq: u32| self.scoreboard[(seq - self.snd_una) as usize];
        let once = |seq: &u32| flags(*seq) & (SACKED | EVER_RETX) == 0;
        let acked = self.snd_una..ack.max(self.snd_una);
        let first = acked.clone().find(once);
        let last = acked.clone().rev().find(once);
        let since = |seq: Option<u32>| {
            seq.and_then(|s| self.sent_at(s))
                .map(|t| now.saturating_since(t))
        };
        let sent_once = |seq: u32| flags(seq) & EVER_RETX == 0;
        let (sack_first, sack_last) = match sacked {
            Some((lo, hi)) => (
                since(Some(lo).filter(|&s| sent_once(s))),
                since(Some(hi).filter(|&s| sent_once(s))),
            ),
            None => (None, None),
        };
        let mut seq_rtt = since(first).or(sack_first);
        let mut ca_rtt = sack_last.or(since(last));
        if seq_rtt.is_none() && tsecr != 0 && ack > self.snd_una {
            let ms = timestamp(now).wrapping_sub(tsecr).max(1);
            if ms < i32::MAX as u32 / 1_000 {
                seq_rtt = Some(Dur::from_millis(ms as u64));
                ca_rtt = seq_rtt;
            }
        }
        // The newest segment delivered: the last acknowledged (SACKed
        // before or not) or the last newly SACKed.
        let acked_last = acked.rev().find(|&s| flags(s) & SACKED == 0);
        let min_rtt = Dur::from_micros(self.min_rtt_us() as u64);
        let newest = sacked.map(|(_, hi)| hi).into_iter().chain(acked_last);
        let newest_sent = newest
            .filter_map(|s| {
                let t = self.sent_at(s)?;
                let ambiguous = !sent_once(s) && now.saturating_since(t) < min_rtt;
                (!ambiguous).then_some(t)
            })
            .max();
        Samples {
            seq_rtt,
            ca_rtt,
            newest_sent,
        }
    }

    /// Feeds an ACK's samples to the estimator and to the congestion control
    /// (CUBIC's minimum delay, HyStart); HyStart may end slow start.
    pub(super) fn linux_feed(&mut self, s: Samples, now: Time, cfg: &TcpConfig) {
        if let Some(r) = s.seq_rtt {
            self.linux_estimate(r, cfg);
        }
        let Some(r) = s.ca_rtt else { return };
        let round = Round {
            now,
            cwnd: linux::segments(self.cwnd),
            ssthresh: linux::segments(self.ssthresh),
            snd_una: self.snd_una,
            snd_nxt: self.snd_max,
            pacing_rate: if self.srtt > 0.0 {
                2.0 * self.cwnd * cfg.packet_size as f64 / self.srtt
            } else {
                0.0
            },
        };
        if let Some(ssthresh) = self.cc.on_linux_rtt(r, &round) {
            self.ssthresh = ssthresh;
        }
    }

    /// The smallest RTT sample, seconds (0 before one).
    pub(super) fn min_rtt(&self) -> f64 {
        self.min_rtt_us() as f64 / 1e6
    }

    /// The smallest RTT sample, microseconds (0 before one).
    pub(super) fn min_rtt_us(&self) -> u32 {
        let l = self.aside.as_deref().and_then(|a| a.linux.as_ref());
        l.map_or(0, |l| l.min_rtt)
    }

    /// `tcp_rtt_estimator` and `tcp_set_rto` on a sample `r`.
    fn linux_estimate(&mut self, r: Dur, cfg: &TcpConfig) {
        let rto_min = (cfg.min_rto.as_nanos() / 1_000) as u32;
        let (snd_una, snd_max) = (self.snd_una, self.snd_max);
        let a = self.aside.get_or_insert_with(Box::default);
        let l = a.linux.get_or_insert_with(LinuxRtt::default);
        let m = ((r.as_nanos() / 1_000) as i64).max(1);
        l.min_rtt = if l.min_rtt == 0 {
            m as u32
        } else {
            l.min_rtt.min(m as u32)
        };
        if l.srtt8 != 0 {
            let mut m = m - (l.srtt8 >> 3) as i64;
            let srtt8 = l.srtt8 as i64 + m;
            if m < 0 {
                // A falling RTT moves mdev by a 1/32 weight only.
                m = -m - (l.mdev >> 2) as i64;
                if m > 0 {
                    m >>= 3;
                }
            } else {
                m -= (l.mdev >> 2) as i64;
            }
            l.mdev = (l.mdev as i64 + m).max(0) as u32;
            if l.mdev > l.mdev_max {
                l.mdev_max = l.mdev;
                l.rttvar = l.rttvar.max(l.mdev_max);
            }
            if snd_una > l.rtt_seq {
                // A window ended: rttvar decays toward its largest mdev.
                if l.mdev_max < l.rttvar {
                    l.rttvar -= (l.rttvar - l.mdev_max) >> 2;
                }
                l.rtt_seq = snd_max;
                l.mdev_max = rto_min;
            }
            l.srtt8 = srtt8.max(1) as u32;
        } else {
            l.srtt8 = (m << 3) as u32;
            l.mdev = (m << 1) as u32;
            l.rttvar = l.mdev.max(rto_min);
            l.mdev_max = l.rttvar;
            l.rtt_seq = snd_max;
        }
        let rto_us = (l.srtt8 >> 3) as u64 + l.rttvar as u64;
        let jiffy_us = 1_000_000 / linux::HZ;
        let rto = Dur::from_micros(rto_us.div_ceil(jiffy_us) * jiffy_us);
        self.srtt = (l.srtt8 >> 3) as f64 / 1e6;
        self.rttvar = l.rttvar as f64 / 1e6;
        self.has_rtt = true;
        self.rto_base = rto.min(cfg.max_rto);
        self.backoff = 1;
        self.stats.rtt_sum_s += r.as_secs_f64();
        self.stats.rtt_samples += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::{timestamp, Actions, TcpConfig, TcpSender, Variant};
    use super::super::scripted::{at, first_lost, linux};
    use aqm::{Dur, Time};

    /// Segment 0 is resent at 50 ms, and the ACK that covers it comes 1 ms
    /// later, for the original (it was delayed): Karn forbids a sample from
    /// the retransmission's send time (1 ms), and the timestamp echoed gives
    /// the original's, 51 ms, so the minimum RTT stays the path's.
    #[test]
    fn a_retransmission_gives_no_sample_but_its_echo_does() {
        let cfg = linux(10);
        let (mut s, mut act) = first_lost(&cfg, 3);
        assert!(s.in_recovery());
        act.clear();
        s.on_ack_echoing(at(51), 10, &[], false, timestamp(at(0)), &cfg, &mut act);
        assert_eq!(s.min_rtt(), 0.050, "the SACKs' samples at 50 ms");
        assert!(s.srtt() > 0.049, "srtt {}", s.srtt());
    }

    /// The first sample sets srtt and an RTO of srtt + rto_min; a steady RTT then
    /// lets rttvar decay to rto_min, never below: the timeout stays above
    /// srtt + 200 ms where RFC 6298's would settle at 200 ms.
    #[test]
    fn the_timeout_is_srtt_plus_at_least_rto_min() {
        let cfg = TcpConfig::linux(Variant::Sack);
        let mut s = TcpSender::new(&cfg);
        let mut act = Actions::default();
        s.start(Time::ZERO, &cfg, &mut act);
        assert_eq!(s.rto(&cfg), Dur::from_secs(1), "before a sample");
        let rtt = Dur::from_millis(50);
        let mut now = Time::ZERO;
        let mut ack = 0;
        for round in 0..40 {
            now += rtt;
            let out = s.outstanding();
            for _ in 0..out {
                ack += 1;
                s.on_ack(now, ack, &[], false, &cfg, &mut act);
            }
            if round == 0 {
                // srtt 50 ms, rttvar max(2 x 50, 200) ms: 250 ms.
                assert_eq!(s.rto(&cfg), Dur::from_millis(252));
            }
        }
        let rto = s.rto(&cfg);
        assert!(
            rto >= Dur::from_millis(250) && rto <= Dur::from_millis(256),
            "steady RTO {rto}"
        );
    }
}
