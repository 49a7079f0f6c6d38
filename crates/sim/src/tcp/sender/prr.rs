//! Proportional rate reduction (RFC 6937), as Linux runs it in SACK recovery
//! (`tcp_cwnd_reduction`): while more than ssthresh is in flight, the sender
//! sends ssthresh/prior_cwnd packets per packet delivered, instead of falling
//! silent until pipe drops below ssthresh; below ssthresh it slow-starts back up
//! to it (the "SSRB" bound, one packet more than delivered when snd_una advances).

use super::{Aside, Before, TcpSender};

/// The state of one recovery.
#[derive(Debug, Clone)]
pub(super) struct Prr {
    /// Packets delivered (cumulatively acknowledged or SACKed) since recovery began.
    delivered: u32,
    /// Packets sent since recovery began.
    out: u32,
    /// The window when recovery began (RFC 6937's RecoverFS, as Linux sets it).
    prior_cwnd: u32,
}

impl Prr {
    pub(super) fn new(prior_cwnd: f64) -> Self {
        Prr {
            delivered: 0,
            out: 0,
            prior_cwnd: (prior_cwnd.floor() as u32).max(1),
        }
    }

    /// How many packets may leave on an ACK that delivered `delivered` packets,
    /// with `pipe` in flight and `ssthresh` the target window.
    pub(super) fn sndcnt(
        &mut self,
        delivered: u32,
        pipe: u32,
        ssthresh: u32,
        una_advanced: bool,
    ) -> u32 {
        self.delivered += delivered;
        let count = if pipe > ssthresh {
            let due = (ssthresh as u64 * self.delivered as u64).div_ceil(self.prior_cwnd as u64);
            (due as u32).saturating_sub(self.out)
        } else {
            let bound =
                self.delivered.saturating_sub(self.out).max(delivered) + una_advanced as u32;
            bound.min(ssthresh - pipe)
        };
        // The first ACK of a recovery always lets the fast retransmission out.
        count.max((self.out == 0) as u32)
    }

    pub(super) fn sent(&mut self, n: u32) {
        self.out += n;
    }
}

impl TcpSender {
    /// Starts (`Some`) or ends (`None`) a recovery's PRR state, boxing it
    /// aside only while something is there.
    pub(super) fn set_prr(&mut self, prr: Option<Prr>) {
        match (&mut self.aside, prr) {
            (Some(a), prr) => {
                a.prr = prr;
                if a.prr.is_none() && a.times.is_empty() && a.linux.is_none() {
                    self.aside = None;
                }
            }
            (None, Some(prr)) => {
                self.aside = Some(Box::new(Aside {
                    prr: Some(prr),
                    ..Default::default()
                }))
            }
            (None, None) => {}
        }
    }

    /// Inside recovery with PRR (RFC 6937): the window is what is in flight
    /// plus what PRR lets out for what this ACK delivered.
    #[inline]
    pub(super) fn prr_window(&mut self, before: &Before) {
        let delivered = (self.snd_una - before.una + self.sacked).saturating_sub(before.sacked);
        let (pipe, ssthresh) = (self.pipe(), self.ssthresh.floor() as u32);
        let advanced = self.snd_una > before.una;
        if let Some(prr) = self.aside.as_mut().and_then(|a| a.prr.as_mut()) {
            self.cwnd = (pipe + prr.sndcnt(delivered, pipe, ssthresh, advanced)) as f64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::{Actions, Seg, TcpConfig, TcpSender, Variant};
    use super::Prr;
    use aqm::Time;

    /// While more than ssthresh is in flight, packets leave in proportion to
    /// those delivered: after k deliveries, ceil(k x ssthresh / prior_cwnd) in all.
    #[test]
    fn sends_in_proportion_to_deliveries_above_ssthresh() {
        for (prior, ssthresh) in [(20u32, 10u32), (10, 7), (31, 15)] {
            let mut prr = Prr::new(prior as f64);
            let mut out = 0;
            for k in 1..prior - ssthresh {
                let pipe = prior - k; // each delivery leaves the network
                let n = prr.sndcnt(1, pipe + out, ssthresh, false);
                prr.sent(n);
                out += n;
                let due = (k * ssthresh).div_ceil(prior);
                assert_eq!(out, due, "prior {prior}, ssthresh {ssthresh}, k {k}");
            }
        }
    }

    /// At or below ssthresh it grows back toward ssthresh by at most one packet
    /// more than was delivered (RFC 6937's slow-start reduction bound), never past it.
    #[test]
    fn below_ssthresh_grows_back_no_faster_than_slow_start() {
        let mut prr = Prr::new(20.0);
        prr.sent(1); // the fast retransmission
        assert_eq!(prr.sndcnt(1, 4, 10, true), 2, "delivered 1, plus one");
        assert_eq!(prr.sndcnt(3, 9, 10, true), 1, "capped at ssthresh - pipe");
        assert_eq!(prr.sndcnt(1, 10, 10, false), 0);
    }

    fn new_data(act: &Actions, above: u32) -> usize {
        act.segs
            .iter()
            .filter(|s| matches!(s, Seg::Data { seq, .. } if *seq >= above))
            .count()
    }

    /// One loss in a window of 20: the sender's new packets during recovery, per
    /// duplicate ACK. With PRR they leave spread over the recovery (every other
    /// ACK); with RFC 6675 alone none leaves until half the ACKs have come back.
    fn new_packets_per_dupack(prr: bool) -> Vec<usize> {
        let cfg = TcpConfig {
            variant: Variant::Sack,
            initial_window: 20,
            max_window: 100,
            prr,
            ..Default::default()
        };
        let mut s = TcpSender::new(&cfg);
        let mut act = Actions::default();
        s.start(Time::ZERO, &cfg, &mut act);
        (1..20u32)
            .map(|k| {
                act.clear();
                let at = Time::from_nanos(100_000_000 + k as u64 * 1_000_000);
                s.on_ack(at, 0, &[(1, k + 1)], false, &cfg, &mut act);
                new_data(&act, 20)
            })
            .collect()
    }

    #[test]
    fn recovery_spreads_the_reduction_over_the_round_trip() {
        let with = new_packets_per_dupack(true);
        let without = new_packets_per_dupack(false);
        assert_eq!(with.iter().sum::<usize>(), without.iter().sum::<usize>());
        assert!(without[..9].iter().all(|&n| n == 0), "{without:?}");
        let early: usize = with[3..11].iter().sum();
        assert!((3..=5).contains(&early), "{with:?}");
        assert!(with.windows(2).all(|w| w[0] + w[1] <= 2), "{with:?}");
    }
}
