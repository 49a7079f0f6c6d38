//! Synthetic delivery traces, from a documented model, so that users have traces
//! to run at once without third-party files whose licence is unknown.
//!
//! The model is a two-state Markov-modulated capacity, the simplest process
//! that reproduces what cellular traces show: long stretches of good capacity,
//! shorter fades. The link stays in a state for an exponentially distributed
//! time of the state's mean, then switches; within a state, each millisecond
//! holds a Poisson number of 1,500-byte opportunities of the state's mean rate.
//! The shipped traces (`traces/`) are this generator's output with the
//! parameters of [`BUILTIN`]; a test holds them equal.

use super::rate::OPPORTUNITY_BYTES;
use aqm::rng::stream;
use aqm::Rate;
use rand_distr::{Distribution as _, Exp, Poisson};

/// One state of the capacity process.
#[derive(Clone, Copy, Debug)]
pub struct State {
    pub rate: Rate,
    /// Mean time in the state, milliseconds.
    pub mean_stay_ms: f64,
}

/// A two-state trace's parameters.
#[derive(Clone, Copy, Debug)]
pub struct TwoState {
    pub good: State,
    pub fade: State,
    pub period_ms: u64,
    pub seed: u64,
}

/// The shipped traces: name, description, parameters.
pub const BUILTIN: [(&str, &str, TwoState); 2] = [
    (
        "lte-driving",
        "LTE-like, driving: 12 Mbit/s for 2 s on average, fades to 1.5 Mbit/s of 0.8 s",
        TwoState {
            good: State {
                rate: Rate::from_kbps(12_000),
                mean_stay_ms: 2000.0,
            },
            fade: State {
                rate: Rate::from_kbps(1_500),
                mean_stay_ms: 800.0,
            },
            period_ms: 60_000,
            seed: 1,
        },
    ),
    (
        "lte-stationary",
        "LTE-like, standing still: 20 Mbit/s for 5 s on average, dips to 8 Mbit/s of 1 s",
        TwoState {
            good: State {
                rate: Rate::from_kbps(20_000),
                mean_stay_ms: 5000.0,
            },
            fade: State {
                rate: Rate::from_kbps(8_000),
                mean_stay_ms: 1000.0,
            },
            period_ms: 60_000,
            seed: 2,
        },
    ),
];

impl TwoState {
    /// The trace in Mahimahi's format: a line per opportunity, the period's
    /// millisecond last (so the trace repeats after exactly `period_ms`).
    pub fn generate(&self) -> String {
        let mut rng = stream(self.seed, 0);
        let state = |fade: bool| if fade { self.fade } else { self.good };
        let stay =
            |fade: bool| Exp::new(1.0 / state(fade).mean_stay_ms).expect("a positive mean stay");
        let mut out = String::new();
        let mut fade = false;
        let mut switch_at = stay(fade).sample(&mut rng);
        for ms in 1..=self.period_ms {
            while ms as f64 > switch_at {
                fade = !fade;
                switch_at += stay(fade).sample(&mut rng);
            }
            let state = state(fade);
            let per_ms = state.rate.as_f64() / 1000.0 / (OPPORTUNITY_BYTES * 8) as f64;
            let n = if per_ms > 0.0 {
                Poisson::new(per_ms)
                    .expect("a positive rate")
                    .sample(&mut rng) as u64
            } else {
                0
            };
            // The last millisecond always holds one: it is the period.
            let n = if ms == self.period_ms { n.max(1) } else { n };
            for _ in 0..n {
                out.push_str(&ms.to_string());
                out.push('\n');
            }
        }
        out
    }
}

/// A shipped trace's text by name.
pub fn builtin(name: &str) -> Option<&'static str> {
    SHIPPED
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
}

/// The files in `traces/`, as the binary carries them.
pub const SHIPPED: [(&str, &str); 2] = [
    (
        "lte-driving",
        include_str!("../../../../traces/lte-driving.up"),
    ),
    (
        "lte-stationary",
        include_str!("../../../../traces/lte-stationary.up"),
    ),
];

#[cfg(test)]
mod tests;
