//! Unresponsive sources: constant bit rate, Poisson, on/off, and rates that follow
//! a schedule (the SFB paper's oscillating flow).
//!
//! A source is a state machine woken by its flow's `Send` timer: each wake-up it may
//! send one packet and says when to wake next. A rate change (schedule entry) is a
//! wake-up of its own, so a source never sleeps through one.
//!
//! An on/off source is a bucket one packet deep, filled at the rate during on
//! periods only: a packet leaves when the bucket holds one. Its mean rate is the
//! rate times `on / (on + off)` for any period lengths, shorter than a packet
//! time or not, and nothing saved up in an off period leaves as a burst. Period
//! boundaries are no events: a wake-up draws the periods up to the next packet
//! (in seconds, as `f64`, so nanosecond rounding biases no period). When a mean
//! on+off cycle is shorter than 1/64 of a packet time (`FLUID_CYCLES`), the
//! periods are not drawn at all: a packet then spans so many cycles that the
//! source sends evenly at the mean rate, and `on = off = "1ns"` costs an event a
//! packet, not one a nanosecond.

use aqm::{Dur, Rate, Rng, Time};
use rand::Rng as _;
use serde::{Deserialize, Serialize};

#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Distribution {
    #[default]
    Exponential,
    Pareto,
}

/// How packets are spaced.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Pattern {
    /// Evenly, at the current rate.
    Cbr,
    /// Exponential gaps with the current rate as mean.
    Poisson,
    /// Constant rate during "on" periods, silent during "off" periods; period
    /// lengths drawn from `dist` with the given means (Pareto `shape` > 1).
    OnOff {
        on: Dur,
        off: Dur,
        dist: Distribution,
        shape: f64,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct UdpConfig {
    pub pattern: Pattern,
    pub packet_size: u32,
    /// Rate from the start.
    pub rate: Rate,
    /// Later rates: `(at, rate)` sorted by time.
    pub schedule: Vec<(Time, Rate)>,
}

/// What a wake-up did.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Wake {
    pub send: bool,
    pub next: Option<Time>,
}

/// Mean on+off cycles a packet time must span before an on/off source sends
/// evenly at its mean rate instead of drawing each period.
pub const FLUID_CYCLES: f64 = 64.0;

#[derive(Clone, Debug)]
pub struct UdpSource {
    rate: Rate,
    next_change: usize,
    /// On/off: whether on, and the seconds left of the current period (`None`
    /// until drawn, and while the periods are too short to draw).
    on: bool,
    period_left: Option<f64>,
    /// On/off: bits still to be earned (at the rate, during on periods) before
    /// the next packet leaves; at most a few millionths of a bit below zero.
    owed: f64,
    /// When the next packet is due (`None` until the first wake-up).
    due: Option<Time>,
    /// When the last packet left.
    last_sent: Option<Time>,
    pub sent: u64,
}

impl UdpSource {
    pub fn new(cfg: &UdpConfig) -> Self {
        UdpSource {
            rate: cfg.rate,
            next_change: 0,
            on: false,
            period_left: None,
            owed: 0.0,
            due: None,
            last_sent: None,
            sent: 0,
        }
    }

    fn gap(&self, cfg: &UdpConfig, rng: &mut Rng) -> Option<Dur> {
        if self.rate.bps() == 0 {
            return None;
        }
        let mean = self.rate.tx_time(cfg.packet_size as u64);
        Some(match cfg.pattern {
            Pattern::Poisson => {
                let u: f64 = rng.gen::<f64>();
                Dur::from_secs_f64(-(1.0 - u).ln() * mean.as_secs_f64())
            }
            Pattern::Cbr | Pattern::OnOff { .. } => mean,
        })
    }

    /// When a new phase (a rate change) that begins at `now` sends its first
    /// packet: at once, unless that would follow the last packet closer than one
    /// packet time at the current rate. Without this, rate steps shorter than a
    /// packet time would send faster than the rate they were given.
    fn restart(&self, now: Time, cfg: &UdpConfig) -> Time {
        match self.last_sent {
            Some(last) if self.rate.bps() > 0 => {
                now.max(last + self.rate.tx_time(cfg.packet_size as u64))
            }
            _ => now,
        }
    }

    /// A period's length in seconds, with mean `mean` seconds.
    fn period(mean: f64, dist: Distribution, shape: f64, rng: &mut Rng) -> f64 {
        let u: f64 = 1.0 - rng.gen::<f64>(); // (0, 1]
        match dist {
            Distribution::Exponential => -u.ln() * mean,
            Distribution::Pareto => mean * (shape - 1.0) / shape / u.powf(1.0 / shape),
        }
    }

    /// Advances an on/off source by at most `budget` seconds at `rate` bits per
    /// second, earning bits during on periods; stops early, when `stop`, at the
    /// moment nothing more is owed. Returns the seconds advanced.
    fn advance(
        &mut self,
        budget: f64,
        stop: bool,
        rate: f64,
        cfg: &UdpConfig,
        rng: &mut Rng,
    ) -> f64 {
        let Pattern::OnOff {
            on,
            off,
            dist,
            shape,
        } = cfg.pattern
        else {
            return 0.0;
        };
        let (on, off) = (on.as_secs_f64(), off.as_secs_f64());
        let packet = 8.0 * cfg.packet_size as f64;
        if rate <= 0.0 || (on + off) * rate * FLUID_CYCLES < packet {
            // Periods far shorter than a packet time (or no rate): the mean rate.
            self.period_left = None;
            let mean = rate * on / (on + off);
            let need = if stop && mean > 0.0 {
                self.owed.max(0.0) / mean
            } else {
                f64::INFINITY
            };
            let step = budget.min(need);
            self.owed -= step * mean;
            return step;
        }
        let mut used = 0.0;
        loop {
            let period = match self.period_left {
                Some(p) => p,
                None => {
                    // Fresh periods (the start, or after the mean rate): on with
                    // the on-time fraction's odds, so the mean stays exact.
                    self.on = rng.gen::<f64>() * (on + off) < on;
                    Self::period(if self.on { on } else { off }, dist, shape, rng)
                }
            };
            let need = if self.on && stop {
                self.owed.max(0.0) / rate
            } else {
                f64::INFINITY
            };
            let rest = budget - used;
            let step = period.min(rest).min(need);
            if self.on {
                self.owed -= step * rate;
            }
            used += step;
            if step < period {
                self.period_left = Some(period - step);
                // All of the budget, exactly, when it ran out first.
                return if step == rest { budget } else { used };
            }
            self.on = !self.on;
            self.period_left = Some(Self::period(
                if self.on { on } else { off },
                dist,
                shape,
                rng,
            ));
            if step == rest {
                return budget;
            }
        }
    }

    /// An on/off source's wake-up (the bucket of the module header).
    fn wake_on_off(&mut self, now: Time, cfg: &UdpConfig, rng: &mut Rng) -> Wake {
        if self.due.is_none() {
            // The first wake-up (the flow's start): an on period begins.
            self.due = Some(now);
            if let Pattern::OnOff {
                on, dist, shape, ..
            } = cfg.pattern
            {
                self.on = true;
                self.period_left = Some(Self::period(on.as_secs_f64(), dist, shape, rng));
            }
        }
        let packet = 8.0 * cfg.packet_size as f64;
        let send = self.rate.bps() > 0 && self.owed <= packet * 1e-9;
        if send {
            self.sent += 1;
            self.last_sent = Some(now);
            self.owed += packet;
        }
        let change = cfg.schedule.get(self.next_change).map(|&(at, _)| at);
        let rate = self.rate.as_f64();
        let until_change =
            change.map_or(f64::INFINITY, |at| at.saturating_since(now).as_secs_f64());
        if rate <= 0.0 {
            // Nothing to send until the rate changes, if it does.
            if change.is_some() {
                self.advance(until_change, false, rate, cfg, rng);
            }
            return Wake { send, next: change };
        }
        let step = self.advance(until_change, true, rate, cfg, rng);
        if step >= until_change {
            return Wake { send, next: change };
        }
        // The packet is due `step` seconds on; wake at the next whole nanosecond
        // (at least one on) and earn what that remainder earns.
        let wait = Dur::from_nanos(((step * 1e9).ceil() as u64).max(1));
        let wait = change.map_or(wait, |at| wait.min(at.saturating_since(now)));
        let rest = wait.as_secs_f64() - step;
        if rest > 0.0 {
            self.advance(rest, false, rate, cfg, rng);
        }
        Wake {
            send,
            next: Some(now + wait),
        }
    }

    /// Wakes the source at `now`: applies due rate changes, sends if a packet is
    /// due, and says when to wake next.
    pub fn wake(&mut self, now: Time, cfg: &UdpConfig, rng: &mut Rng) -> Wake {
        let on_off = matches!(cfg.pattern, Pattern::OnOff { .. });
        while let Some(&(at, rate)) = cfg.schedule.get(self.next_change) {
            if at > now {
                break;
            }
            self.rate = rate;
            // On/off: what is owed is in bits, and a new rate earns them at its
            // own pace. Otherwise a new rate starts a new phase.
            if !on_off {
                self.due = Some(self.restart(now, cfg));
            }
            self.next_change += 1;
        }
        if on_off {
            return self.wake_on_off(now, cfg, rng);
        }
        let due = *self.due.get_or_insert(now);
        let mut send = false;
        if self.rate.bps() > 0 && due <= now {
            send = true;
            self.sent += 1;
            self.last_sent = Some(now);
            self.due = self.gap(cfg, rng).map(|g| now + g);
        } else if self.rate.bps() == 0 {
            self.due = None;
        }
        let mut next = self.due;
        if let Some(&(at, _)) = cfg.schedule.get(self.next_change) {
            if at > now {
                next = Some(next.map_or(at, |n: Time| n.min(at)));
            }
        }
        Wake { send, next }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(cfg: &UdpConfig, until: Time) -> Vec<Time> {
        run_counting(cfg, until, &mut 0)
    }

    /// The send times until `until`, and in `wakes` how many wake-ups it took.
    fn run_counting(cfg: &UdpConfig, until: Time, wakes: &mut u64) -> Vec<Time> {
        let mut src = UdpSource::new(cfg);
        let mut rng = aqm::rng::stream(1, 1);
        let mut t = Time::ZERO;
        let mut sends = vec![];
        loop {
            *wakes += 1;
            let w = src.wake(t, cfg, &mut rng);
            if w.send {
                sends.push(t);
            }
            match w.next {
                Some(n) if n < until => {
                    assert!(n > t, "time must advance");
                    t = n
                }
                _ => break,
            }
        }
        sends
    }

    #[test]
    fn cbr_sends_evenly_at_its_rate() {
        let cfg = UdpConfig {
            pattern: Pattern::Cbr,
            packet_size: 1000,
            rate: Rate::from_mbps(2),
            schedule: vec![],
        };
        let sends = run(&cfg, Time::from_secs(1));
        assert_eq!(sends.len(), 250);
        assert_eq!(sends[1].as_nanos() - sends[0].as_nanos(), 4_000_000);
    }

    #[test]
    fn poisson_mean_rate_is_right() {
        let cfg = UdpConfig {
            pattern: Pattern::Poisson,
            packet_size: 1000,
            rate: Rate::from_mbps(1),
            schedule: vec![],
        };
        let n = run(&cfg, Time::from_secs(100)).len() as f64;
        assert!((n - 12_500.0).abs() < 400.0, "{n}");
    }

    #[test]
    fn schedule_switches_rates_at_the_given_times() {
        // 0.1 Mbps, 5 Mbps from 10 s to 30 s, 0.1 Mbps after: the SFB oscillating flow.
        let cfg = UdpConfig {
            pattern: Pattern::Cbr,
            packet_size: 1000,
            rate: Rate::from_kbps(100),
            schedule: vec![
                (Time::from_secs(10), Rate::from_mbps(5)),
                (Time::from_secs(30), Rate::from_kbps(100)),
            ],
        };
        let sends = run(&cfg, Time::from_secs(40));
        let count = |a: u64, b: u64| {
            sends
                .iter()
                .filter(|t| **t >= Time::from_secs(a) && **t < Time::from_secs(b))
                .count()
        };
        assert!((count(0, 10) as i64 - 125).abs() <= 1);
        assert!((count(10, 30) as i64 - 12_500).abs() <= 1);
        assert!((count(30, 40) as i64 - 125).abs() <= 1);
    }

    #[test]
    fn neither_short_periods_nor_fast_steps_exceed_the_rate() {
        // On and off periods of a microsecond around a 1 Mbit/s rate (8 ms per
        // packet), and a schedule that steps every 100 us: at most the rate.
        let mut cfg = UdpConfig {
            pattern: Pattern::OnOff {
                on: Dur::from_micros(1),
                off: Dur::from_micros(1),
                dist: Distribution::Exponential,
                shape: 1.5,
            },
            packet_size: 1000,
            rate: Rate::from_mbps(1),
            schedule: vec![],
        };
        let sends = run(&cfg, Time::from_secs(1));
        assert!(sends.len() <= 126, "{} packets in 1 s", sends.len());
        cfg.pattern = Pattern::Cbr;
        cfg.schedule = (1..10_000u64)
            .map(|k| (Time::from_nanos(100_000 * k), Rate::from_mbps(1 + k % 2)))
            .collect();
        let sends = run(&cfg, Time::from_secs(1));
        assert!(sends.len() <= 251, "{} packets in 1 s", sends.len());
        assert!(sends
            .windows(2)
            .all(|w| w[1].as_nanos() - w[0].as_nanos() >= 4_000_000));
    }

    #[test]
    fn on_off_averages_the_duty_cycle() {
        let cfg = UdpConfig {
            pattern: Pattern::OnOff {
                on: Dur::from_millis(500),
                off: Dur::from_millis(500),
                dist: Distribution::Exponential,
                shape: 1.5,
            },
            packet_size: 1000,
            rate: Rate::from_mbps(1),
            schedule: vec![],
        };
        let n = run(&cfg, Time::from_secs(400)).len() as f64;
        let expected = 125.0 * 400.0 / 2.0;
        assert!((n / expected - 1.0).abs() < 0.1, "{n} vs {expected}");
    }

    fn on_off(on: Dur, off: Dur, dist: Distribution, shape: f64, rate: Rate) -> UdpConfig {
        UdpConfig {
            pattern: Pattern::OnOff {
                on,
                off,
                dist,
                shape,
            },
            packet_size: 1000,
            rate,
            schedule: vec![],
        }
    }

    #[test]
    fn on_off_mean_rate_is_exact_for_any_period() {
        // The mean rate is rate * on / (on + off) whether the periods are far
        // shorter than the 8 ms packet time or far longer. The tolerance is the
        // sampling error of the on-time fraction over the run, not a fit: over a
        // time D, exponential periods of mean m (on = off) leave a relative
        // standard deviation of sqrt(m / D) (Pareto of shape 3: 0.87 of it), so
        // four of those plus two packets of rounding.
        for (dist, shape) in [
            (Distribution::Exponential, 1.5),
            (Distribution::Pareto, 3.0),
        ] {
            for exp in 0..=6 {
                let m = 1e-6 * 10f64.powi(exp); // 1 us .. 1 s
                let period = Dur::from_secs_f64(m);
                let secs = (20_000.0 * m).max(200.0);
                let cfg = on_off(period, period, dist, shape, Rate::from_mbps(1));
                let n = run(&cfg, Time::ZERO + Dur::from_secs_f64(secs)).len() as f64;
                let expected = 125.0 * secs / 2.0;
                let tolerance = 4.0 * (m / secs).sqrt() + 2.0 / expected;
                assert!(
                    (n / expected - 1.0).abs() < tolerance,
                    "{dist:?} on = off = {period}: {n} packets, {expected} expected"
                );
            }
        }
        // Unequal periods: a quarter of the time on, at periods around a packet time.
        for ms in [1, 8, 30] {
            let cfg = on_off(
                Dur::from_millis(ms),
                Dur::from_millis(3 * ms),
                Distribution::Exponential,
                1.5,
                Rate::from_mbps(1),
            );
            let secs = 4000.0;
            let n = run(&cfg, Time::ZERO + Dur::from_secs_f64(secs)).len() as f64;
            let expected = 125.0 * secs / 4.0;
            // sqrt(m_on m_off (m_on^2 + m_off^2) / (m_on + m_off)^3 / D) / 0.25, as above.
            let (a, b) = (ms as f64 * 1e-3, 3.0 * ms as f64 * 1e-3);
            let sd = (a * a * b * b * 2.0 / (a + b).powi(3) / secs).sqrt() / 0.25;
            assert!(
                (n / expected - 1.0).abs() < 4.0 * sd + 2.0 / expected,
                "on {ms} ms, off {} ms: {n} vs {expected}",
                3 * ms
            );
        }
    }

    #[test]
    fn on_off_periods_cost_no_events() {
        // A nanosecond on and off at 1 Mbit/s: half the rate, with a wake-up per
        // packet and none per period (a billion periods in this second).
        let cfg = on_off(
            Dur::from_nanos(1),
            Dur::from_nanos(1),
            Distribution::Exponential,
            1.5,
            Rate::from_mbps(1),
        );
        let mut wakes = 0;
        let sends = run_counting(&cfg, Time::from_secs(1), &mut wakes);
        assert!((62..=63).contains(&sends.len()), "{}", sends.len());
        assert!(wakes <= sends.len() as u64 + 1, "{wakes} wake-ups");
        // Periods drawn one by one (longer than 1/64 packet time): still a
        // bounded number of wake-ups per packet, whatever the number of periods.
        let cfg = on_off(
            Dur::from_micros(200),
            Dur::from_micros(200),
            Distribution::Pareto,
            1.5,
            Rate::from_mbps(1),
        );
        let mut wakes = 0;
        let sends = run_counting(&cfg, Time::from_secs(10), &mut wakes);
        assert!(wakes <= sends.len() as u64 + 1, "{wakes} wake-ups");
    }

    #[test]
    fn on_off_sends_nothing_saved_up_in_an_off_period() {
        // 1 s on, 1 s off at 1 Mbit/s: no two packets closer than a packet time.
        let cfg = on_off(
            Dur::from_secs(1),
            Dur::from_secs(1),
            Distribution::Exponential,
            1.5,
            Rate::from_mbps(1),
        );
        let sends = run(&cfg, Time::from_secs(200));
        assert!(sends
            .windows(2)
            .all(|w| w[1].as_nanos() - w[0].as_nanos() >= 8_000_000 - 1));
    }
}
