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
            // Not "kbps": tc reads that as kilobytes per second (see `parse_rate`).
            (1_000, "kbit"),
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
    /// tc's `kbps`, `mbps`, `gbps`: bytes per second to tc, bits to ns-3.
    #[error(
        "rate '{text}': '{unit}' is bytes per second to tc but bits per second to ns-3, \
         so it is not accepted; write '{bits}' for bits, or '{bytes_as_bits}' or '{bytes}' \
         for bytes per second"
    )]
    Ambiguous {
        text: String,
        unit: String,
        bits: String,
        bytes_as_bits: String,
        bytes: String,
    },
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

/// Rate units, with how many bits per second one of them is. Three families, so a
/// rate copied from `tc`, from ns-3 or from a paper reads as its author meant it:
///
/// - `bit`, `kbit`, `Mbit`, `Gbit` (tc's spellings, any case, `/s` optional);
/// - `bps`, `Kbps`, `Mbps`, `Gbps`, `b/s`, `kb/s`, `Mb/s`, `Gb/s`: bits, as ns-3
///   and this project write them (`Mbps` is megabits);
/// - `Bps`, `KBps`, `MBps`, `GBps`, `B/s`, `kB/s`, `MB/s`, `GB/s`: bytes, as ns-3
///   writes them.
///
/// tc reads its units without regard to case and takes `kbps`, `mbps`, `gbps` as
/// kilo-, mega- and gigabytes per second, where ns-3 takes `kbps` as kilobits: those
/// three lowercase spellings are rejected ([`UnitError::Ambiguous`]) rather than
/// read one way silently.
const RATE_UNITS: [(&str, f64); 23] = [
    ("bps", 1.0),
    ("b/s", 1.0),
    ("Kbps", 1e3),
    ("kb/s", 1e3),
    ("Kb/s", 1e3),
    ("Mbps", 1e6),
    ("Mb/s", 1e6),
    ("Gbps", 1e9),
    ("Gb/s", 1e9),
    ("Bps", 8.0),
    ("B/s", 8.0),
    ("kBps", 8e3),
    ("KBps", 8e3),
    ("kB/s", 8e3),
    ("KB/s", 8e3),
    ("MBps", 8e6),
    ("MB/s", 8e6),
    ("GBps", 8e9),
    ("GB/s", 8e9),
    // tc's: matched without regard to case, `/s` optional (see `rate_scale`).
    ("bit", 1.0),
    ("kbit", 1e3),
    ("mbit", 1e6),
    ("gbit", 1e9),
];

/// The units a rate may be written in, for error messages.
const RATE_KNOWN: &str = "bit, kbit, Mbit, Gbit (any case, /s optional), bps, Kbps, Mbps, Gbps, \
                          b/s, kb/s, Mb/s, Gb/s (bits); Bps, KBps, MBps, GBps, B/s, kB/s, MB/s, \
                          GB/s (bytes)";

/// Bits per second in one `unit`, or `None` for an unknown unit.
fn rate_scale(unit: &str) -> Option<f64> {
    let tc = unit.strip_suffix("/s").unwrap_or(unit).to_ascii_lowercase();
    RATE_UNITS.iter().find_map(|&(name, scale)| {
        let is_tc = name.ends_with("bit");
        (if is_tc { tc == name } else { unit == name }).then_some(scale)
    })
}

/// Parses a rate: a number and a unit of `RATE_UNITS`'s (SI prefixes, k = 1000,
/// as tc and ns-3 read them). `"10Mbps"`, `"10Mbit"`, `"10Mb/s"` and `"1.25MBps"`
/// are the same rate; `"10mbps"` is an error that says what to write.
pub fn parse_rate(text: &str) -> Result<Rate, UnitError> {
    const WHAT: &str = "rate";
    const EXAMPLE: &str = "\"10Mbps\" or \"500kbit\"";
    let (value, unit) = split_number(WHAT, text, EXAMPLE)?;
    let scale = match unit {
        "" => {
            return Err(UnitError::NoUnit {
                what: WHAT,
                text: text.to_string(),
                example: EXAMPLE,
            })
        }
        "kbps" | "mbps" | "gbps" => {
            let (bit, byte) = match unit {
                "kbps" => ("kbit", "KBps"),
                "mbps" => ("Mbit", "MBps"),
                _ => ("Gbit", "GBps"),
            };
            return Err(UnitError::Ambiguous {
                text: text.to_string(),
                unit: unit.to_string(),
                bits: format!("{value}{bit}"),
                bytes_as_bits: format!("{}{bit}", value * 8.0),
                bytes: format!("{value}{byte}"),
            });
        }
        other => rate_scale(other).ok_or_else(|| UnitError::UnknownUnit {
            what: WHAT,
            text: text.to_string(),
            unit: other.to_string(),
            known: RATE_KNOWN,
        })?,
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
        assert_eq!(parse_rate(" 500Kbps ").unwrap(), Rate::from_kbps(500));
        assert_eq!(parse_rate("1.5Gbps").unwrap().bps(), 1_500_000_000);
        assert_eq!(Rate::from_kbps(160).to_string(), "160kbit");
        assert_eq!(Rate::from_bps(1500).to_string(), "1.5kbit");
        // What Display writes parses back to the same rate.
        for bps in [
            1,
            999,
            1_000,
            160_000,
            1_234_567,
            45_000_000,
            10_000_000_000,
        ] {
            let r = Rate::from_bps(bps);
            assert_eq!(parse_rate(&r.to_string()).unwrap(), r, "{r}");
        }
    }

    #[test]
    fn tc_and_ns3_spellings_mean_what_those_tools_mean() {
        let bits = |t: &str| parse_rate(t).unwrap().bps();
        // tc: bit units in any case, "/s" optional.
        for t in [
            "8kbit", "8Kbit", "8KBIT", "8kbit/s", "8 kbit", "8kb/s", "8Kb/s", "8Kbps",
        ] {
            assert_eq!(bits(t), 8_000, "{t}");
        }
        for t in ["10Mbit", "10mbit", "10Mbit/s", "10Mb/s", "10Mbps"] {
            assert_eq!(bits(t), 10_000_000, "{t}");
        }
        for t in ["2Gbit", "2gbit", "2Gb/s", "2Gbps"] {
            assert_eq!(bits(t), 2_000_000_000, "{t}");
        }
        assert_eq!(bits("300bit"), 300);
        assert_eq!(bits("300b/s"), 300);
        // ns-3's byte rates.
        assert_eq!(bits("100Bps"), 800);
        assert_eq!(bits("100B/s"), 800);
        assert_eq!(bits("8KBps"), 64_000);
        assert_eq!(bits("8kBps"), 64_000);
        assert_eq!(bits("8kB/s"), 64_000);
        assert_eq!(bits("1.25MBps"), 10_000_000);
        assert_eq!(bits("10MB/s"), 80_000_000);
        assert_eq!(bits("1GBps"), 8_000_000_000);
    }

    #[test]
    fn tcs_lowercase_byte_rates_are_refused_with_what_to_write() {
        let e = parse_rate("8kbps").unwrap_err().to_string();
        assert_eq!(
            e,
            "rate '8kbps': 'kbps' is bytes per second to tc but bits per second to ns-3, \
             so it is not accepted; write '8kbit' for bits, or '64kbit' or '8KBps' for \
             bytes per second"
        );
        let e = parse_rate("1.5mbps").unwrap_err().to_string();
        assert!(
            e.contains("'1.5Mbit' for bits, or '12Mbit' or '1.5MBps'"),
            "{e}"
        );
        assert!(parse_rate("1gbps")
            .unwrap_err()
            .to_string()
            .contains("'1Gbit'"));
        // Unknown units list every accepted one.
        let e = parse_rate("3furlongs").unwrap_err().to_string();
        assert!(
            e.contains("unknown unit 'furlongs'") && e.contains("kbit"),
            "{e}"
        );
    }

    #[test]
    fn bad_rates_say_what_is_wrong() {
        let e = parse_rate("-1Mbps").unwrap_err().to_string();
        assert!(e.contains("must not be negative"), "{e}");
        let e = parse_rate("10").unwrap_err().to_string();
        assert!(e.contains("needs a unit"), "{e}");
        let e = parse_rate("10MiB/s").unwrap_err().to_string();
        assert!(e.contains("unknown unit 'MiB/s'"), "{e}");
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
