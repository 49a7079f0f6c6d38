//! Unresponsive sources: constant bit rate, Poisson, on/off, and rates that follow
//! a schedule (the SFB paper's oscillating flow).
//!
//! A source is a state machine woken by its flow's `Send` timer: each wake-up it may
//! send one packet and says when to wake next. A rate change (schedule entry) or an
//! on/off boundary is a wake-up of its own, so a source never sleeps through one.

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

#[derive(Clone, Debug)]
pub struct UdpSource {
    rate: Rate,
    next_change: usize,
    /// On/off: whether on, and when the current period ends.
    on: bool,
    period_end: Time,
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
            period_end: Time::ZERO,
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

    /// When a new phase (a rate change, an on period) that begins at `now` sends
    /// its first packet: at once, unless that would follow the last packet closer
    /// than one packet time at the current rate. Without this, on and off periods
    /// shorter than a packet time, or rate steps as short, would send faster than
    /// the rate they were given.
    fn restart(&self, now: Time, cfg: &UdpConfig) -> Time {
        match self.last_sent {
            Some(last) if self.rate.bps() > 0 => {
                now.max(last + self.rate.tx_time(cfg.packet_size as u64))
            }
            _ => now,
        }
    }

    fn period(mean: Dur, dist: Distribution, shape: f64, rng: &mut Rng) -> Dur {
        let u: f64 = 1.0 - rng.gen::<f64>(); // (0, 1]
        let m = mean.as_secs_f64();
        Dur::from_secs_f64(match dist {
            Distribution::Exponential => -u.ln() * m,
            Distribution::Pareto => m * (shape - 1.0) / shape / u.powf(1.0 / shape),
        })
    }

    /// Wakes the source at `now`: applies due rate changes and period boundaries,
    /// sends if a packet is due, and says when to wake next.
    pub fn wake(&mut self, now: Time, cfg: &UdpConfig, rng: &mut Rng) -> Wake {
        while let Some(&(at, rate)) = cfg.schedule.get(self.next_change) {
            if at > now {
                break;
            }
            self.rate = rate;
            self.next_change += 1;
            self.due = Some(self.restart(now, cfg)); // a new rate starts a new phase
        }
        if let Pattern::OnOff {
            on,
            off,
            dist,
            shape,
        } = cfg.pattern
        {
            while now >= self.period_end {
                self.on = !self.on;
                let mean = if self.on { on } else { off };
                self.period_end += Self::period(mean, dist, shape, rng).max(Dur::from_nanos(1));
                if self.on {
                    self.due = Some(self.restart(now, cfg));
                }
            }
        } else {
            self.on = true;
        }
        let due = *self.due.get_or_insert(now);
        let mut send = false;
        if self.on && self.rate.bps() > 0 && due <= now {
            send = true;
            self.sent += 1;
            self.last_sent = Some(now);
            self.due = self.gap(cfg, rng).map(|g| now + g);
        } else if self.rate.bps() == 0 {
            self.due = None;
        }
        let mut next = if self.on { self.due } else { None };
        let mut consider = |t: Time| {
            if t > now {
                next = Some(next.map_or(t, |n: Time| n.min(t)));
            }
        };
        if let Some(&(at, _)) = cfg.schedule.get(self.next_change) {
            consider(at);
        }
        if matches!(cfg.pattern, Pattern::OnOff { .. }) {
            consider(self.period_end);
        }
        Wake { send, next }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(cfg: &UdpConfig, until: Time) -> Vec<Time> {
        let mut src = UdpSource::new(cfg);
        let mut rng = aqm::rng::stream(1, 1);
        let mut t = Time::ZERO;
        let mut sends = vec![];
        loop {
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
}
