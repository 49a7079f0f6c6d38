//! Quantities with units, as users write them: `"10Mbps"`, `"20ms"`.
//!
//! Parsing lives here (not in the engine) because qdisc parameters use the same
//! units (`freeze_time = "100ms"`, `rate_limit = "0.16Mbps"`). Rates are integer
//! bits per second; decimal prefixes are SI (k = 1000), as `tc` and ns-3 use them.

use crate::time::Dur;
use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// A link or sending rate in bits per second.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rate(u64);

impl Rate {
    pub const fn from_bps(bps: u64) -> Self {
        Rate(bps)
    }
    pub const fn from_kbps(k: u64) -> Self {
        Rate(k * 1_000)
    }
    pub const fn from_mbps(m: u64) -> Self {
        Rate(m * 1_000_000)
    }
    pub const fn bps(self) -> u64 {
        self.0
    }
    pub fn as_f64(self) -> f64 {
        self.0 as f64
    }
    /// Time to serialize `bytes` at this rate, rounded up to the next nanosecond.
    /// A zero rate never finishes: `Dur::MAX`.
    pub fn tx_time(self, bytes: u64) -> Dur {
        if self.0 == 0 {
            return Dur::MAX;
        }
        let bits = bytes as u128 * 8 * 1_000_000_000;
        let ns = bits.div_ceil(self.0 as u128);
        Dur::from_nanos(ns.min(u64::MAX as u128) as u64)
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [(u64, &str); 4] = [
            (1_000_000_000, "Gbps"),
            (1_000_000, "Mbps"),
            (1_000, "kbps"),
            (1, "bps"),
        ];
        for (scale, unit) in UNITS {
            if self.0 >= scale || scale == 1 {
                if self.0.is_multiple_of(scale) {
                    return write!(f, "{}{unit}", self.0 / scale);
                }
                let s = format!("{:.6}", self.0 as f64 / scale as f64);
                return write!(f, "{}{unit}", s.trim_end_matches('0').trim_end_matches('.'));
            }
        }
        unreachable!()
    }
}

/// Why a quantity did not parse; the message names the text and the rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    #[error("{what} '{text}' has no number (write it like {example})")]
    NoNumber {
        what: &'static str,
        text: String,
        example: &'static str,
    },
    #[error("{what} '{text}' must not be negative")]
    Negative { what: &'static str, text: String },
    #[error("{what} '{text}' has unknown unit '{unit}' (use one of {known})")]
    UnknownUnit {
        what: &'static str,
        text: String,
        unit: String,
        known: &'static str,
    },
    #[error("{what} '{text}' needs a unit (write it like {example})")]
    NoUnit {
        what: &'static str,
        text: String,
        example: &'static str,
    },
    #[error("{what} '{text}' is too large")]
    TooLarge { what: &'static str, text: String },
}

/// Splits `"1.5Mbps"` into `(1.5, "Mbps")`.
fn split_number<'a>(
    what: &'static str,
    text: &'a str,
    example: &'static str,
) -> Result<(f64, &'a str), UnitError> {
    let t = text.trim();
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '-' | '+')))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(end);
    let value: f64 = num.parse().map_err(|_| UnitError::NoNumber {
        what,
        text: text.to_string(),
        example,
    })?;
    if value < 0.0 || num.starts_with('-') {
        return Err(UnitError::Negative {
            what,
            text: text.to_string(),
        });
    }
    if !value.is_finite() {
        return Err(UnitError::TooLarge {
            what,
            text: text.to_string(),
        });
    }
    Ok((value, unit.trim()))
}

/// Parses a duration: a number and one of `ns`, `us`, `ms`, `s`, `min`.
pub fn parse_dur(text: &str) -> Result<Dur, UnitError> {
    const WHAT: &str = "duration";
    const EXAMPLE: &str = "\"20ms\" or \"1.5s\"";
    let (value, unit) = split_number(WHAT, text, EXAMPLE)?;
    let scale = match unit {
        "ns" => 1e-9,
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        "min" => 60.0,
        "" => {
            return Err(UnitError::NoUnit {
                what: WHAT,
                text: text.to_string(),
                example: EXAMPLE,
            })
        }
        other => {
            return Err(UnitError::UnknownUnit {
                what: WHAT,
                text: text.to_string(),
                unit: other.to_string(),
                known: "ns, us, ms, s, min",
            })
        }
    };
    let secs = value * scale;
    if secs * 1e9 >= u64::MAX as f64 {
        return Err(UnitError::TooLarge {
            what: WHAT,
            text: text.to_string(),
        });
    }
    Ok(Dur::from_secs_f64(secs))
}

/// Parses a rate: a number and one of `bps`, `kbps`, `Mbps`, `Gbps` (bits per second).
pub fn parse_rate(text: &str) -> Result<Rate, UnitError> {
    const WHAT: &str = "rate";
    const EXAMPLE: &str = "\"10Mbps\" or \"500kbps\"";
    let (value, unit) = split_number(WHAT, text, EXAMPLE)?;
    let scale = match unit {
        "bps" => 1.0,
        "kbps" | "Kbps" => 1e3,
        "Mbps" => 1e6,
        "Gbps" => 1e9,
        "" => {
            return Err(UnitError::NoUnit {
                what: WHAT,
                text: text.to_string(),
                example: EXAMPLE,
            })
        }
        other => {
            return Err(UnitError::UnknownUnit {
                what: WHAT,
                text: text.to_string(),
                unit: other.to_string(),
                known: "bps, kbps, Mbps, Gbps",
            })
        }
    };
    let bps = value * scale;
    if bps >= u64::MAX as f64 {
        return Err(UnitError::TooLarge {
            what: WHAT,
            text: text.to_string(),
        });
    }
    Ok(Rate(bps.round() as u64))
}

impl Serialize for Dur {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}
impl<'de> Deserialize<'de> for Dur {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(UnitVisitor {
            what: "a duration with a unit, like \"20ms\"",
            parse: parse_dur,
        })
    }
}
impl Serialize for Rate {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}
impl<'de> Deserialize<'de> for Rate {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(UnitVisitor {
            what: "a rate with a unit, like \"10Mbps\"",
            parse: parse_rate,
        })
    }
}

/// Accepts only strings: a bare number is ambiguous (seconds? milliseconds?), so it is
/// an error that says which unit-bearing form to write.
struct UnitVisitor<T> {
    what: &'static str,
    parse: fn(&str) -> Result<T, UnitError>,
}

impl<T> de::Visitor<'_> for UnitVisitor<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.what)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        (self.parse)(v).map_err(E::custom)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        Err(E::custom(format_args!(
            "{v} has no unit: expected {}",
            self.what
        )))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        Err(E::custom(format_args!(
            "{v} has no unit: expected {}",
            self.what
        )))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
        Err(E::custom(format_args!(
            "{v} has no unit: expected {}",
            self.what
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_parse_with_si_prefixes() {
        assert_eq!(parse_rate("10Mbps").unwrap(), Rate::from_mbps(10));
        assert_eq!(parse_rate("0.16Mbps").unwrap(), Rate::from_kbps(160));
        assert_eq!(parse_rate(" 500kbps ").unwrap(), Rate::from_kbps(500));
        assert_eq!(parse_rate("1.5Gbps").unwrap().bps(), 1_500_000_000);
        assert_eq!(Rate::from_kbps(160).to_string(), "160kbps");
    }

    #[test]
    fn bad_rates_say_what_is_wrong() {
        let e = parse_rate("-1Mbps").unwrap_err().to_string();
        assert!(e.contains("must not be negative"), "{e}");
        let e = parse_rate("10").unwrap_err().to_string();
        assert!(e.contains("needs a unit"), "{e}");
        let e = parse_rate("10MB/s").unwrap_err().to_string();
        assert!(e.contains("unknown unit 'MB/s'"), "{e}");
        assert!(parse_rate("fast").is_err());
    }

    #[test]
    fn durations_parse() {
        assert_eq!(parse_dur("20ms").unwrap(), Dur::from_millis(20));
        assert_eq!(parse_dur("1.5s").unwrap(), Dur::from_millis(1500));
        assert_eq!(parse_dur("100us").unwrap(), Dur::from_micros(100));
        assert_eq!(parse_dur("2min").unwrap(), Dur::from_secs(120));
        assert!(parse_dur("5 parsecs").is_err());
    }

    #[test]
    fn tx_time_rounds_up_and_is_exact_for_whole_ns() {
        // 1000 bytes at 1 Mbps = 8 ms exactly.
        assert_eq!(Rate::from_mbps(1).tx_time(1000), Dur::from_millis(8));
        // 1 byte at 3 bps = 2.666..s, rounded up.
        assert_eq!(Rate::from_bps(3).tx_time(1).as_nanos(), 2_666_666_667);
        assert_eq!(Rate::from_bps(0).tx_time(1), Dur::MAX);
    }
}
