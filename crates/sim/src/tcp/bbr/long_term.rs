//! BBR v1's long-term bandwidth (Linux's `lt_bw`): a policer detector. Two
//! sampling intervals of 4 to 16 rounds, each ended by a loss, each losing at
//! least 50/256 of what it delivered, at rates within 1/8 (or 4 kbit/s) of each
//! other, say a token bucket holds the flow: BBR then paces at their mean with
//! gain 1 for 48 rounds, instead of probing into the policer's drops.

use super::Mode;
use aqm::Time;

/// Rounds an interval lasts at least (Linux's `bbr_lt_intvl_min_rtts`); four
/// times as many and it is abandoned.
const MIN_ROUNDS: u32 = 4;
/// Lost over delivered, in 1/256ths, that makes an interval lossy.
const LOSS_THRESH: u64 = 50;
/// Rounds a detected policer's rate is used.
const MAX_ROUNDS: u32 = 48;
/// Two intervals' rates are consistent within 1/8 of the older...
const BW_RATIO: f64 = 1.0 / 8.0;
/// ...or within 4 kbit/s (Linux's `bbr_lt_bw_diff`, bytes per second).
const BW_DIFF_BYTES: f64 = 500.0;

/// What one sample asks of BBR's mode.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    Keep,
    /// A policer was found: pace at gain 1 now.
    Policed,
    /// The policer's rate has been used for its 48 rounds: gain cycling restarts.
    Expired,
}

#[derive(Clone, Debug, Default)]
pub(super) struct LongTermBw {
    /// Packets per second; 0 before a first interval ends.
    bw: f64,
    pub use_bw: bool,
    sampling: bool,
    rounds: u32,
    /// The interval's start, whole milliseconds of the last delivery, as Linux.
    start_ms: u64,
    start_delivered: u64,
    start_lost: u64,
}

/// The flow's delivery so far (Linux's `tp->delivered`, `tp->lost`,
/// `tp->delivered_mstamp`).
#[derive(Copy, Clone, Debug)]
pub(super) struct Progress {
    pub delivered: u64,
    pub lost: u64,
    pub at: Time,
}

/// What a sample reads of the flow and of the ACK.
pub(super) struct Sample {
    pub losses: u32,
    pub app_limited: bool,
    pub round_start: bool,
    pub mode: Mode,
    pub packet_size: u32,
}

fn millis(t: Time) -> u64 {
    t.as_nanos() / 1_000_000
}

impl LongTermBw {
    /// The policer's rate, packets per second, while it is in use.
    pub fn bw(&self) -> Option<f64> {
        self.use_bw.then_some(self.bw)
    }

    fn reset_interval(&mut self, r: Progress) {
        self.start_ms = millis(r.at);
        self.start_delivered = r.delivered;
        self.start_lost = r.lost;
        self.rounds = 0;
    }

    /// `bbr_reset_lt_bw_sampling`.
    pub fn reset(&mut self, r: Progress) {
        self.bw = 0.0;
        self.use_bw = false;
        self.sampling = false;
        self.reset_interval(r);
    }

    /// `bbr_lt_bw_sampling` on one ACK (or on a timeout, as one loss).
    pub fn sample(&mut self, s: &Sample, r: Progress) -> Verdict {
        if self.use_bw {
            if s.mode == Mode::ProbeBw && s.round_start {
                self.rounds += 1;
                if self.rounds >= MAX_ROUNDS {
                    self.reset(r);
                    return Verdict::Expired;
                }
            }
            return Verdict::Keep;
        }
        // The first loss starts an interval: the policer's tokens are spent.
        if !self.sampling {
            if s.losses == 0 {
                return Verdict::Keep;
            }
            self.reset_interval(r);
            self.sampling = true;
        }
        if s.app_limited {
            self.reset(r);
            return Verdict::Keep;
        }
        if s.round_start {
            self.rounds += 1;
        }
        if self.rounds < MIN_ROUNDS {
            return Verdict::Keep;
        }
        if self.rounds > 4 * MIN_ROUNDS {
            self.reset(r);
            return Verdict::Keep;
        }
        if s.losses == 0 {
            return Verdict::Keep;
        }
        let lost = r.lost - self.start_lost;
        let delivered = r.delivered - self.start_delivered;
        if delivered == 0 || (lost << 8) < LOSS_THRESH * delivered {
            return Verdict::Keep;
        }
        let ms = millis(r.at).saturating_sub(self.start_ms);
        if ms < 1 {
            return Verdict::Keep;
        }
        let bw = delivered as f64 / (ms as f64 / 1000.0);
        self.interval_done(bw, s.packet_size, r)
    }

    /// `bbr_lt_bw_interval_done`: a second consistent interval means a policer.
    fn interval_done(&mut self, bw: f64, packet_size: u32, r: Progress) -> Verdict {
        if self.bw > 0.0 {
            let diff = (bw - self.bw).abs();
            let diff_bytes = diff * packet_size as f64 * super::PACING_MARGIN;
            if diff <= BW_RATIO * self.bw || diff_bytes <= BW_DIFF_BYTES {
                self.bw = (bw + self.bw) / 2.0;
                self.use_bw = true;
                self.rounds = 0;
                return Verdict::Policed;
            }
        }
        self.bw = bw;
        self.reset_interval(r);
        Verdict::Keep
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A flow held to `pps` packets per second, losing `loss` of what it sends,
    /// one ACK per millisecond and one round per `round_ms`; returns the first
    /// verdict other than Keep and the millisecond it came at.
    fn policed_flow(pps: f64, loss: f64, round_ms: u64, until_ms: u64) -> Option<(Verdict, u64)> {
        let mut lt = LongTermBw::default();
        let (mut delivered, mut lost) = (0.0_f64, 0.0_f64);
        for ms in 1..=until_ms {
            delivered += pps / 1000.0;
            let lost_before = lost.floor();
            lost += pps / 1000.0 * loss / (1.0 - loss);
            let s = Sample {
                losses: (lost.floor() - lost_before) as u32,
                app_limited: false,
                round_start: ms % round_ms == 0,
                mode: Mode::ProbeBw,
                packet_size: 1500,
            };
            let progress = Progress {
                delivered: delivered.floor() as u64,
                lost: lost.floor() as u64,
                at: Time::from_nanos(ms * 1_000_000),
            };
            match lt.sample(&s, progress) {
                Verdict::Keep => {}
                v => return Some((v, ms)),
            }
        }
        None
    }

    /// Two lossy intervals (25% > 50/256) of at least 4 rounds each at one rate:
    /// a policer, its rate the intervals' mean, after 8 rounds and the loss that
    /// ends the second interval.
    #[test]
    fn two_lossy_intervals_at_one_rate_find_a_policer() {
        let (verdict, ms) = policed_flow(1000.0, 0.25, 20, 2000).unwrap();
        assert_eq!(verdict, Verdict::Policed);
        assert!((160..200).contains(&ms), "found at {ms} ms");
    }

    /// Loss under the threshold (15% < 19.5%) never makes a policer.
    #[test]
    fn light_loss_is_not_a_policer() {
        assert_eq!(policed_flow(1000.0, 0.15, 20, 5000), None);
    }

    /// A found policer's rate is used for 48 rounds in PROBE_BW, then dropped.
    #[test]
    fn a_policer_rate_lasts_48_rounds() {
        let mut lt = LongTermBw {
            bw: 1000.0,
            use_bw: true,
            ..Default::default()
        };
        let progress = Progress {
            delivered: 0,
            lost: 0,
            at: Time::ZERO,
        };
        let round = |mode| Sample {
            losses: 0,
            app_limited: false,
            round_start: true,
            mode,
            packet_size: 1500,
        };
        assert_eq!(lt.sample(&round(Mode::ProbeRtt), progress), Verdict::Keep);
        for _ in 0..47 {
            assert_eq!(lt.sample(&round(Mode::ProbeBw), progress), Verdict::Keep);
        }
        assert_eq!(lt.bw(), Some(1000.0));
        assert_eq!(lt.sample(&round(Mode::ProbeBw), progress), Verdict::Expired);
        assert_eq!(lt.bw(), None);
    }

    /// Rates 1/8 apart agree; further apart, the newer interval starts over.
    #[test]
    fn consistent_means_within_an_eighth() {
        let progress = Progress {
            delivered: 0,
            lost: 0,
            at: Time::ZERO,
        };
        let mut lt = LongTermBw {
            bw: 1000.0,
            ..Default::default()
        };
        assert_eq!(lt.interval_done(1125.0, 1500, progress), Verdict::Policed);
        assert_eq!(lt.bw(), Some(1062.5));
        let mut lt = LongTermBw {
            bw: 1000.0,
            ..Default::default()
        };
        assert_eq!(lt.interval_done(1130.0, 1500, progress), Verdict::Keep);
        assert_eq!((lt.bw, lt.use_bw), (1130.0, false));
    }
}
