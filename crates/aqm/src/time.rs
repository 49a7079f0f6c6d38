//! Simulated time: integer nanoseconds, never floats.
//!
//! `Time` is an instant since the start of a run; `Dur` is a span. Both are `u64`
//! newtypes with `const fn` constructors, so `Dur::from_millis(20)` can stand in a
//! `const`. Arithmetic saturates at the edges rather than wrapping: a run that lasts
//! 584 years is not a use case, a silent wrap-around would be a bug.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// An instant of simulated time, in nanoseconds since the start of the run.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(u64);

/// A span of simulated time, in nanoseconds.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Dur(u64);

impl Time {
    pub const ZERO: Time = Time(0);
    pub const MAX: Time = Time(u64::MAX);

    pub const fn from_nanos(ns: u64) -> Self {
        Time(ns)
    }
    pub const fn from_secs(s: u64) -> Self {
        Time(s * 1_000_000_000)
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    /// The span from `earlier` to `self`, or zero if `earlier` is later.
    pub const fn saturating_since(self, earlier: Time) -> Dur {
        Dur(self.0.saturating_sub(earlier.0))
    }
}

impl Dur {
    pub const ZERO: Dur = Dur(0);
    pub const MAX: Dur = Dur(u64::MAX);

    pub const fn from_nanos(ns: u64) -> Self {
        Dur(ns)
    }
    pub const fn from_micros(us: u64) -> Self {
        Dur(us * 1_000)
    }
    pub const fn from_millis(ms: u64) -> Self {
        Dur(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> Self {
        Dur(s * 1_000_000_000)
    }
    /// Rounds to the nearest nanosecond; negative and NaN inputs give zero.
    pub fn from_secs_f64(s: f64) -> Self {
        if s.is_nan() || s <= 0.0 {
            Dur(0)
        } else if s >= u64::MAX as f64 * 1e-9 {
            Dur(u64::MAX)
        } else {
            Dur((s * 1e9).round() as u64)
        }
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }
    pub const fn saturating_mul(self, k: u64) -> Dur {
        Dur(self.0.saturating_mul(k))
    }
}

impl Add<Dur> for Time {
    type Output = Time;
    fn add(self, d: Dur) -> Time {
        Time(self.0.saturating_add(d.0))
    }
}
impl AddAssign<Dur> for Time {
    fn add_assign(&mut self, d: Dur) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Add for Dur {
    type Output = Dur;
    fn add(self, d: Dur) -> Dur {
        Dur(self.0.saturating_add(d.0))
    }
}
impl Sub for Dur {
    type Output = Dur;
    fn sub(self, d: Dur) -> Dur {
        Dur(self.0.saturating_sub(d.0))
    }
}

/// Prints the largest unit that keeps the number at or above one: `1.5s`, `20ms`.
fn fmt_nanos(ns: u64, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    const UNITS: [(u64, &str); 4] = [
        (1_000_000_000, "s"),
        (1_000_000, "ms"),
        (1_000, "us"),
        (1, "ns"),
    ];
    for (scale, unit) in UNITS {
        if ns >= scale || scale == 1 {
            if ns.is_multiple_of(scale) {
                return write!(f, "{}{unit}", ns / scale);
            }
            let v = ns as f64 / scale as f64;
            // Up to 9 decimals is exact for nanoseconds; trim the trailing zeros.
            let s = format!("{v:.9}");
            let s = s.trim_end_matches('0').trim_end_matches('.');
            return write!(f, "{s}{unit}");
        }
    }
    unreachable!("the ns unit always matches")
}

impl fmt::Display for Dur {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_nanos(self.0, f)
    }
}
impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_nanos(self.0, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_picks_the_largest_whole_unit() {
        assert_eq!(Dur::from_millis(20).to_string(), "20ms");
        assert_eq!(Dur::from_millis(1500).to_string(), "1.5s");
        assert_eq!(Dur::from_nanos(7).to_string(), "7ns");
        assert_eq!(Dur::ZERO.to_string(), "0ns");
        assert_eq!(Time::from_secs(3).to_string(), "3s");
    }

    #[test]
    fn arithmetic_saturates_instead_of_wrapping() {
        assert_eq!(Time::MAX + Dur::from_secs(1), Time::MAX);
        assert_eq!(Time::ZERO.saturating_since(Time::from_secs(1)), Dur::ZERO);
        assert_eq!(Dur::from_secs_f64(-1.0), Dur::ZERO);
        assert_eq!(Dur::from_secs_f64(0.25), Dur::from_millis(250));
    }
}
