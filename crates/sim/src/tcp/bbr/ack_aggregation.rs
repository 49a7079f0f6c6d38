//! BBR v1's allowance for ACK aggregation (Linux's `extra_acked`): how many
//! more packets the ACKs delivered than the bandwidth estimate expected since
//! an epoch began, max-filtered over 5 to 10 rounds and added to the window's
//! target, so a flow keeps sending through the silences between bunched ACKs.
//! Delayed ACKs alone (one per two packets) make it a packet or two.

use aqm::Time;

/// Rounds each of the two windows of the max filter lasts.
const WINDOW_ROUNDS: u32 = 5;
/// An epoch that has counted this many packets starts again.
const EPOCH_RESET: u64 = 1 << 20;
/// The allowance is at most this long at the estimated bandwidth (seconds).
const MAX_SECONDS: f64 = 0.1;

#[derive(Clone, Debug, Default)]
pub(super) struct AckAggregation {
    epoch_start: Time,
    epoch_acked: u64,
    window_rounds: u32,
    window: usize,
    extra: [u64; 2],
}

impl AckAggregation {
    pub fn new(now: Time) -> Self {
        AckAggregation {
            epoch_start: now,
            ..Default::default()
        }
    }

    /// `bbr_update_ack_aggregation`, for an ACK with a valid rate sample that
    /// delivered `acked` packets at `delivered_time`; `bw` in packets per second.
    pub fn update(
        &mut self,
        round_start: bool,
        acked: u32,
        delivered_time: Time,
        bw: f64,
        cwnd: f64,
    ) {
        if round_start {
            self.window_rounds = (self.window_rounds + 1).min(0x1f);
            if self.window_rounds >= WINDOW_ROUNDS {
                self.window_rounds = 0;
                self.window = 1 - self.window;
                self.extra[self.window] = 0;
            }
        }
        let epoch = delivered_time.saturating_since(self.epoch_start);
        // Linux: packets per microsecond in fixed point, times whole microseconds.
        let mut expected = (bw * (epoch.as_nanos() / 1000) as f64 / 1e6) as u64;
        if self.epoch_acked <= expected || self.epoch_acked + acked as u64 >= EPOCH_RESET {
            self.epoch_acked = 0;
            self.epoch_start = delivered_time;
            expected = 0;
        }
        self.epoch_acked = (self.epoch_acked + acked as u64).min(0xfffff);
        let extra = (self.epoch_acked - expected).min(cwnd as u64);
        if extra > self.extra[self.window] {
            self.extra[self.window] = extra;
        }
    }

    /// `bbr_ack_aggregation_cwnd`: packets to add to the target window.
    pub fn cwnd(&self, bw: f64) -> f64 {
        let max = (bw * MAX_SECONDS).floor();
        (self.extra[0].max(self.extra[1]) as f64).min(max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at_ms(ms: u64) -> Time {
        Time::from_nanos(ms * 1_000_000)
    }

    /// ACKs arriving `burst` packets at a time every `burst` ms, at an estimate
    /// of 1000 packets per second: the allowance after one second.
    fn allowance(burst: u64) -> f64 {
        let mut agg = AckAggregation::new(Time::ZERO);
        for k in 1..=1000 / burst {
            agg.update(false, burst as u32, at_ms(k * burst), 1000.0, 1000.0);
        }
        agg.cwnd(1000.0)
    }

    /// A burst of ACKs brings its whole size beyond what the rate expected;
    /// an ACK per packet, one.
    #[test]
    fn the_allowance_is_the_burst() {
        assert_eq!(allowance(1), 1.0);
        assert_eq!(allowance(2), 2.0);
        assert_eq!(allowance(20), 20.0);
    }

    /// At most 100 ms of the bandwidth, and at most the window.
    #[test]
    fn the_allowance_is_capped() {
        let mut agg = AckAggregation::new(Time::ZERO);
        agg.update(false, 500, at_ms(1), 1000.0, 10_000.0);
        assert_eq!(agg.cwnd(1000.0), 100.0);
        let mut agg = AckAggregation::new(Time::ZERO);
        agg.update(false, 500, at_ms(1), 1000.0, 40.0);
        assert_eq!(agg.cwnd(1000.0), 40.0);
    }

    /// The max filter forgets a burst 5 to 10 rounds later: a burst of 30, a
    /// silence that ends its epoch, then an ACK per packet at the rate, ten
    /// rounds of ten.
    #[test]
    fn a_burst_is_forgotten_after_two_windows() {
        let mut agg = AckAggregation::new(Time::ZERO);
        agg.update(false, 30, at_ms(1), 1000.0, 1000.0);
        let mut after = vec![];
        for round in 0..10 {
            for k in 0..10 {
                let ms = 101 + round * 10 + k;
                agg.update(k == 0, 1, at_ms(ms), 1000.0, 1000.0);
            }
            after.push(agg.cwnd(1000.0));
        }
        assert_eq!(after[3], 30.0);
        assert_eq!(after[9], 1.0);
    }
}
