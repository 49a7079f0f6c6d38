//! A link rate that changes over time: a piecewise-constant schedule, or a
//! Mahimahi delivery trace.
//!
//! A Mahimahi trace lists, one a line, the millisecond of each delivery
//! opportunity: 1,500 bytes may leave then. Several lines with one timestamp are
//! several opportunities; the trace repeats with the period of its last
//! timestamp. As in Mahimahi's link queue, a packet larger than what an
//! opportunity has left continues at the next, and the bytes of an opportunity no
//! packet is waiting for are lost, so a backlogged link sends exactly the trace's
//! opportunities times 1,500 bytes.

use aqm::{Dur, Rate, Time};
use std::sync::Arc;

/// The bytes one delivery opportunity of a trace carries.
pub const OPPORTUNITY_BYTES: u64 = 1500;

/// The largest timestamp a trace holds: its period in nanoseconds, and a few
/// periods of it, fit a u64.
const MAX_TIMESTAMP_MS: u64 = u64::MAX / 1_000_000 / 4;

/// Why a trace file was refused: the line (1-based) and what is wrong there.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct TraceError {
    pub line: usize,
    pub message: String,
}

/// What is wrong with a trace line that is not a timestamp, told without quoting
/// it: a path may name any file (`/etc/shadow`, `/proc/self/environ`), and an
/// error must not print what such a file holds, nor pass its bytes to a terminal.
fn not_a_timestamp(line: &str) -> &'static str {
    if line.bytes().all(|b| b.is_ascii_digit()) {
        "the timestamp is too large for a whole number of milliseconds"
    } else if line
        .strip_prefix('-')
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    {
        "a timestamp cannot be negative"
    } else if line.parse::<f64>().is_ok() {
        "a timestamp is a whole number of milliseconds, without a fraction or exponent"
    } else {
        "not a whole number of milliseconds (a trace line holds one timestamp and nothing \
         else; the line is not shown)"
    }
}

/// A Mahimahi trace: the opportunities of one period, in milliseconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryTrace {
    millis: Vec<u64>,
    period_ms: u64,
}

impl DeliveryTrace {
    /// Reads Mahimahi's format: one whole number of milliseconds a line, never
    /// decreasing; blank lines are skipped; the last timestamp, the period, above 0.
    pub fn parse(text: &str) -> Result<Self, TraceError> {
        let mut millis = Vec::new();
        let mut last_line = 0;
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() {
                continue;
            }
            let err = |message: String| TraceError {
                line: i + 1,
                message,
            };
            let ms: u64 = line
                .parse()
                .map_err(|_| err(not_a_timestamp(line).into()))?;
            if ms > MAX_TIMESTAMP_MS {
                return Err(err(format!(
                    "{ms} ms is beyond the last timestamp a trace may hold, \
                     {MAX_TIMESTAMP_MS} ms (about 146 years)"
                )));
            }
            if let Some(&previous) = millis.last() {
                if ms < previous {
                    return Err(err(format!(
                        "{ms} ms comes before the line above ({previous} ms): timestamps never decrease"
                    )));
                }
            }
            millis.push(ms);
            last_line = i + 1;
        }
        let period_ms = *millis.last().ok_or(TraceError {
            line: 1,
            message: "the trace has no delivery opportunity".into(),
        })?;
        if period_ms == 0 {
            return Err(TraceError {
                line: last_line,
                message: "the last timestamp, the trace's period, must be above 0 ms".into(),
            });
        }
        let trace = DeliveryTrace { millis, period_ms };
        // A link's rate is at least 1 bit/s whatever spells it: a mean of 0 would
        // be a link that never sends, and the nominal rate divides.
        if trace.mean_rate().bps() == 0 {
            return Err(TraceError {
                line: last_line,
                message: format!(
                    "{} opportunities every {period_ms} ms is a mean rate below 1 bit/s \
                     (a link's rate is at least 1 bit/s)",
                    trace.millis.len()
                ),
            });
        }
        Ok(trace)
    }

    /// The trace's period.
    pub fn period(&self) -> Dur {
        Dur::from_millis(self.period_ms)
    }

    /// Opportunities per period.
    pub fn len(&self) -> usize {
        self.millis.len()
    }

    pub fn is_empty(&self) -> bool {
        self.millis.is_empty()
    }

    /// The mean rate over a period.
    pub fn mean_rate(&self) -> Rate {
        let bits = self.millis.len() as u128 * OPPORTUNITY_BYTES as u128 * 8 * 1000;
        Rate::from_bps((bits / self.period_ms as u128) as u64)
    }

    /// The highest rate over any `window` (at least 1 ms) that starts at an
    /// opportunity: its opportunities' bytes over the window. At least the mean.
    pub fn peak_rate(&self, window: Dur) -> Rate {
        let window = window.max(Dur::from_millis(1));
        let most = (0..self.millis.len() as u64)
            .map(|k| {
                let from = self.at(k);
                self.count(from, from + window)
            })
            .max()
            .unwrap_or(0);
        let bits = most as u128 * OPPORTUNITY_BYTES as u128 * 8 * 1_000_000_000;
        let peak = (bits / window.as_nanos() as u128).min(u64::MAX as u128) as u64;
        Rate::from_bps(peak.max(self.mean_rate().bps()))
    }

    /// The time of opportunity `k` (counted from the start, over every period).
    pub fn at(&self, k: u64) -> Time {
        let n = self.millis.len() as u64;
        let ms = (k / n) * self.period_ms + self.millis[(k % n) as usize];
        Time::from_nanos(ms.saturating_mul(1_000_000))
    }

    /// The first opportunity at or after `t`.
    pub fn first_from(&self, t: Time) -> u64 {
        let period_ns = self.period_ms * 1_000_000;
        let n = self.millis.len() as u64;
        // Offsets in (0, period]: the period's own instant is its last timestamp's.
        let (cycle, offset) = match t.as_nanos() {
            0 => (0, 0),
            ns => ((ns - 1) / period_ns, (ns - 1) % period_ns + 1),
        };
        let i = self.millis.partition_point(|&ms| ms * 1_000_000 < offset) as u64;
        cycle * n + i
    }

    /// Opportunities in `[from, to)`.
    pub fn count(&self, from: Time, to: Time) -> u64 {
        self.first_from(to).saturating_sub(self.first_from(from))
    }
}

/// A piecewise-constant rate: `rate` from each `at` until the next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RateSchedule {
    steps: Vec<(Time, Rate)>,
}

impl RateSchedule {
    /// Steps in time order, the first at 0 (the rate before any change).
    pub fn new(steps: Vec<(Time, Rate)>) -> Result<Self, String> {
        match steps.first() {
            None => return Err("a schedule needs at least one step".into()),
            Some((t, _)) if *t != Time::ZERO => {
                return Err("a schedule's first step must be at 0 s".into())
            }
            _ => {}
        }
        if let Some(w) = steps.windows(2).find(|w| w[1].0 <= w[0].0) {
            return Err(format!(
                "steps at {} s and {} s: each step must come after the one before",
                w[0].0.as_secs_f64(),
                w[1].0.as_secs_f64()
            ));
        }
        Ok(RateSchedule { steps })
    }

    /// The step in force at `t`.
    fn index(&self, t: Time) -> usize {
        self.steps.partition_point(|&(at, _)| at <= t) - 1
    }

    pub fn rate_at(&self, t: Time) -> Rate {
        self.steps[self.index(t)].1
    }

    /// The highest rate of any step.
    pub fn max_rate(&self) -> Rate {
        self.steps
            .iter()
            .map(|s| s.1)
            .max_by_key(|r| r.bps())
            .unwrap_or_default()
    }

    /// The steps, the first at 0.
    pub fn steps(&self) -> &[(Time, Rate)] {
        &self.steps
    }

    /// When `bytes` started at `start` have been sent, the rate changing under
    /// them (exact: work is counted in bit-nanoseconds). `Time::MAX` if the rate
    /// stays 0 for ever before they are.
    pub fn finish(&self, start: Time, bytes: u64) -> Time {
        // bits * 1e9: what a rate of r bit/s sends in d ns is r * d of it.
        let mut left = bytes as u128 * 8 * 1_000_000_000;
        let mut t = start;
        for i in self.index(start)..self.steps.len() {
            let r = self.steps[i].1.bps() as u128;
            let end = self.steps.get(i + 1).map(|s| s.0);
            let span = end.map(|e| e.as_nanos() as u128 - t.as_nanos() as u128);
            match span {
                Some(d) if r * d < left => {
                    left -= r * d;
                    t = end.unwrap();
                }
                _ if r == 0 => return Time::MAX,
                _ => {
                    let ns = left.div_ceil(r).min(u64::MAX as u128) as u64;
                    return t + Dur::from_nanos(ns);
                }
            }
        }
        unreachable!("the last step lasts for ever")
    }
}

/// A link direction's rate over time.
#[derive(Debug, Clone, PartialEq)]
pub enum LinkRate {
    Constant(Rate),
    Schedule(Arc<RateSchedule>),
    Trace(Arc<DeliveryTrace>),
}

/// A link direction's transmitter: when each packet finishes, given the rate
/// over time and, for a trace, what the last opportunity has left.
#[derive(Debug, Clone)]
pub struct Transmitter {
    rate: LinkRate,
    /// Trace: the next unused opportunity, and the bytes left in the one before it.
    next: u64,
    left: u64,
}

/// The window over which a trace's current rate is measured for the qdisc.
pub const TRACE_RATE_WINDOW: Dur = Dur::from_millis(100);

impl Transmitter {
    pub fn new(rate: LinkRate) -> Self {
        Transmitter {
            rate,
            next: 0,
            left: 0,
        }
    }

    pub fn rate(&self) -> &LinkRate {
        &self.rate
    }

    /// When a packet of `bytes` that starts at `start` has left.
    pub fn finish(&mut self, start: Time, bytes: u64) -> Time {
        match &self.rate {
            LinkRate::Constant(r) => start + r.tx_time(bytes),
            LinkRate::Schedule(s) => s.finish(start, bytes),
            LinkRate::Trace(trace) => {
                let mut need = bytes;
                // What the last opportunity left, if it is not past.
                if self.left > 0 && self.next > 0 && trace.at(self.next - 1) >= start {
                    let used = self.left.min(need);
                    self.left -= used;
                    need -= used;
                    if need == 0 {
                        return trace.at(self.next - 1);
                    }
                }
                let first = self.next.max(trace.first_from(start));
                let m = need.div_ceil(OPPORTUNITY_BYTES);
                self.next = first + m;
                self.left = m * OPPORTUNITY_BYTES - need;
                trace.at(first + m - 1)
            }
        }
    }

    /// The rate a qdisc sees at `t`: the constant or scheduled rate, or a trace's
    /// opportunities over the last [`TRACE_RATE_WINDOW`] (the first window at the start).
    pub fn rate_at(&self, t: Time) -> Rate {
        match &self.rate {
            LinkRate::Constant(r) => *r,
            LinkRate::Schedule(s) => s.rate_at(t),
            LinkRate::Trace(trace) => {
                let w = TRACE_RATE_WINDOW;
                let from = Time::from_nanos(t.as_nanos().saturating_sub(w.as_nanos()));
                let to = from + w;
                let bits = trace.count(from, to) as u128 * OPPORTUNITY_BYTES as u128 * 8;
                Rate::from_bps((bits * 1_000_000_000 / w.as_nanos() as u128) as u64)
            }
        }
    }
}

#[cfg(test)]
mod tests;
