//! Probes (`kind = "probe"`): small packets at a fixed interval, each echoed by
//! the receiver at once, so that the sender measures the round trip under load
//! as Flent's ping and VoIP-like streams do. A probe is unresponsive: it ignores
//! drops and marks, and its next one leaves on time whatever happened.
//!
//! A probe counts in the interval it was sent in: one sent during the warm-up
//! is not measured even if its echo comes back after. Each measured probe ends
//! echoed (its RTT recorded), lost (the probe or its echo dropped anywhere) or
//! still in flight when the run ends, so `sent - echoed - lost` of them were.

use crate::results::ProbeStats;
use aqm::Time;

/// A probe flow's two ends: the sender's numbering and what it measured. The
/// echoing receiver keeps no state (it returns each probe as it arrives).
#[derive(Clone, Debug, Default)]
pub struct ProbeEnd {
    /// The next probe's number (its header's `seq`).
    pub next_seq: u32,
    /// Every probe sent and echo received, warm-up included: the flow's counters.
    pub sent_all: u64,
    pub echoed_all: u64,
    /// The probes sent in the measured interval, and what became of them.
    pub measured: ProbeCounts,
    /// Their RTTs (send to echo arrival), nanoseconds, in arrival order.
    pub rtts: Vec<u64>,
}

#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct ProbeCounts {
    pub sent: u64,
    pub echoed: u64,
    pub lost: u64,
}

impl ProbeCounts {
    fn add(self, o: ProbeCounts) -> ProbeCounts {
        ProbeCounts {
            sent: self.sent + o.sent,
            echoed: self.echoed + o.echoed,
            lost: self.lost + o.lost,
        }
    }
}

impl ProbeEnd {
    /// A probe leaves at `now`: its number, counted as measured from `measured_from`.
    pub fn send(&mut self, now: Time, measured_from: Time) -> u32 {
        let seq = self.next_seq;
        self.next_seq = self.next_seq.wrapping_add(1);
        self.sent_all += 1;
        if now >= measured_from {
            self.measured.sent += 1;
        }
        seq
    }

    /// The echo of a probe sent at `sent_at` arrived at `now`.
    pub fn echoed(&mut self, sent_at: Time, now: Time, measured_from: Time) {
        self.echoed_all += 1;
        if sent_at >= measured_from {
            self.measured.echoed += 1;
            self.rtts.push(now.saturating_since(sent_at).as_nanos());
        }
    }

    /// A probe sent at `sent_at`, or its echo, was dropped.
    pub fn lost(&mut self, sent_at: Time, measured_from: Time) {
        if sent_at >= measured_from {
            self.measured.lost += 1;
        }
    }
}

/// The statistics of probe ends pooled (one flow's, or a group's): their counts
/// summed, and the mean and nearest-rank quantiles of all their RTTs (the
/// `ceil(q n)`-th smallest; exact, not binned). The RTT fields are `None` when
/// no probe was echoed.
pub fn stats<'a>(ends: impl IntoIterator<Item = &'a ProbeEnd>) -> ProbeStats {
    let mut counts = ProbeCounts::default();
    let mut rtts = Vec::new();
    for e in ends {
        counts = counts.add(e.measured);
        rtts.extend_from_slice(&e.rtts);
    }
    rtts.sort_unstable();
    let n = rtts.len();
    let secs = |ns: u64| ns as f64 * 1e-9;
    let quantile = |q: f64| {
        (n > 0).then(|| {
            let rank = ((q * n as f64).ceil() as usize).clamp(1, n);
            secs(rtts[rank - 1])
        })
    };
    ProbeStats {
        sent: counts.sent,
        echoed: counts.echoed,
        lost: counts.lost,
        rtt_mean_s: (n > 0).then(|| rtts.iter().map(|&x| x as f64).sum::<f64>() / n as f64 * 1e-9),
        rtt_p50_s: quantile(0.5),
        rtt_p95_s: quantile(0.95),
        rtt_p99_s: quantile(0.99),
        rtt_max_s: rtts.last().map(|&x| secs(x)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aqm::Dur;

    #[test]
    fn only_probes_sent_after_the_warmup_count_and_quantiles_are_nearest_rank() {
        let t = |ms: u64| Time::ZERO + Dur::from_millis(ms);
        let mut e = ProbeEnd::default();
        assert_eq!(e.send(t(0), t(100)), 0);
        // Sent in the warm-up, echoed after it: not measured.
        e.echoed(t(0), t(150), t(100));
        for (i, rtt) in (1..=100).enumerate() {
            let sent = t(100 + i as u64);
            e.send(sent, t(100));
            e.echoed(sent, sent + Dur::from_millis(rtt), t(100));
        }
        e.send(t(300), t(100));
        e.lost(t(300), t(100));
        e.lost(t(0), t(100));
        let s = stats([&e]);
        assert_eq!((s.sent, s.echoed, s.lost), (101, 100, 1));
        assert_eq!(e.sent_all, 102);
        assert_eq!(s.rtt_p50_s, Some(0.050));
        assert_eq!(s.rtt_p95_s, Some(0.095));
        assert_eq!(s.rtt_p99_s, Some(0.099));
        assert_eq!(s.rtt_max_s, Some(0.100));
        assert!((s.rtt_mean_s.unwrap() - 0.0505).abs() < 1e-12);
        let none = stats([&ProbeEnd::default()]);
        assert_eq!((none.rtt_mean_s, none.rtt_p99_s), (None, None));
    }
}
