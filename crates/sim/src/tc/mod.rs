//! `tc` command lines as input: `tc qdisc add dev eth0 root sfb limit 1000 max 25`
//! becomes the `[qdisc]` table that configures the same qdisc in aqmlab.
//!
//! Operators configure Linux with `tc`; pasting their line is the shortest way to
//! simulate what they run. The parser reads `pfifo`, `bfifo`, `red`, `sfb`,
//! `choke`, `sfq`, `codel`, `fq_codel`, `pie`, `dualpi2`, `cake` and `fq` as iproute2's `tc/q_*.c` do: the
//! same option names, the same units (sizes in bytes with `k`/`kb` = 1024,
//! `kbit` = 128 bytes; times in microseconds unless `s`, `ms` or `us` follow;
//! rates in bits per second unless suffixed, `kbit`/`mbit` bits, `kbps`/`mbps`
//! kilo/megabytes per second), the same defaults for what the line leaves out
//! (tc's, or the kernel's where tc sends nothing), and the same derived values
//! (RED's EWMA weight from `burst`, its thresholds from `limit`). Unknown options
//! are errors that name them.
//!
//! The table is built as TOML keys and deserialized into [`QdiscSpec`], so the
//! qdisc's own checks and defaults apply as for a hand-written table. Where
//! aqmlab's model of the Linux qdisc differs, [`TcQdisc::notes`] says how (and
//! `docs/qdiscs.md`, "tc lines"): quantities Linux keeps in bytes or packets per
//! second are converted with `avpkt` when the line has one, otherwise with
//! [`PACKET_SIZE`].

mod cake;
mod dualpi2;
mod fq;
pub mod netem;
mod qdiscs;
mod tree;

use aqm::{Dur, LinkInfo, QdiscSpec, Rate};
use cake::cake;
use dualpi2::dualpi2;
use fq::fq;
use qdiscs::{bfifo, choke, codel, fq_codel, pfifo, pie, red, sfb, sfq};
use serde::Deserialize;
use std::fmt;
use toml::Value;

/// The packet size that converts byte and packet-rate quantities where the tc
/// line gives no `avpkt`: aqmlab's default `packet_size`.
pub const PACKET_SIZE: u64 = 1000;
/// A Linux Ethernet device's `tx_queue_len`, the limit of qdiscs given none.
const TXQUEUELEN: u64 = 1000;
/// `psched_mtu` of an Ethernet device: 1500 bytes of MTU plus a 14-byte header.
const PSCHED_MTU: u64 = 1514;

/// Why a tc line was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TcError {
    /// The line is not `tc qdisc add|replace|change ... KIND [options]`.
    Syntax(String),
    /// A qdisc kind the parser does not read.
    UnknownKind(String),
    /// An option the qdisc does not have.
    UnknownOption { kind: &'static str, option: String },
    /// An option without its value.
    MissingValue { option: String },
    /// A value that does not parse or breaks tc's rule.
    BadValue {
        option: String,
        value: String,
        rule: String,
    },
    /// An option tc requires.
    Required { kind: &'static str, option: String },
    /// A valid tc option whose behaviour aqmlab does not model.
    Unsupported { option: String, why: String },
    /// The table the line maps to fails the qdisc's own checks.
    Spec(String),
    /// A line of a tree script (numbered from 1) was refused.
    InScript { line: usize, error: Box<TcError> },
}

impl fmt::Display for TcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TcError::Syntax(m) => write!(f, "tc line: {m}"),
            TcError::UnknownKind(k) => write!(
                f,
                "tc line: qdisc `{k}` is not one aqmlab reads (pfifo, bfifo, red, sfb, \
                 choke, sfq, codel, fq_codel, pie, dualpi2, cake, fq; htb and prio as trees)"
            ),
            TcError::UnknownOption { kind, option } => {
                write!(f, "tc line: {kind} has no option `{option}`")
            }
            TcError::MissingValue { option } => {
                write!(f, "tc line: option `{option}` needs a value")
            }
            TcError::BadValue {
                option,
                value,
                rule,
            } => write!(f, "tc line: {option} `{value}`: {rule}"),
            TcError::Required { kind, option } => {
                write!(f, "tc line: {kind} needs `{option}` (tc requires it)")
            }
            TcError::Unsupported { option, why } => {
                write!(f, "tc line: option `{option}` is not modelled: {why}")
            }
            TcError::Spec(m) => write!(f, "tc line: {m}"),
            TcError::InScript { line, error } => {
                let e = error.to_string();
                let e = e.strip_prefix("tc line: ").unwrap_or(&e);
                write!(f, "tc script, line {line}: {e}")
            }
        }
    }
}

impl std::error::Error for TcError {}

/// A parsed tc line: the `[qdisc]` keys in the order printed, and notes on where
/// aqmlab's model differs from what Linux would run.
#[derive(Debug, Clone, PartialEq)]
pub struct TcQdisc {
    pub line: String,
    pub keys: Vec<(String, Value)>,
    pub notes: Vec<String>,
}

impl TcQdisc {
    /// The qdisc spec (the same checks as a hand-written `[qdisc]` table).
    pub fn spec(&self) -> Result<QdiscSpec, TcError> {
        let table: toml::Table = self.keys.iter().cloned().collect();
        QdiscSpec::deserialize(Value::Table(table)).map_err(|e| TcError::Spec(e.to_string()))
    }

    /// The `[qdisc]` table as TOML, the line (a tree's lines) and the notes as
    /// comments above it.
    pub fn to_toml(&self) -> String {
        let mut out = String::new();
        for l in self.line.lines() {
            out.push_str(&format!("# {l}\n"));
        }
        for n in &self.notes {
            out.push_str(&format!("# note: {n}\n"));
        }
        if self.keys.iter().any(|(_, v)| v.is_table() || v.is_array()) {
            // A tree: its classes as `[[qdisc.class]]` tables, leaves within.
            let mut root = toml::Table::new();
            root.insert(
                "qdisc".into(),
                Value::Table(self.keys.iter().cloned().collect()),
            );
            out.push_str(&toml::to_string(&root).expect("a TOML table serializes"));
            return out;
        }
        out.push_str("[qdisc]\n");
        for (k, v) in &self.keys {
            out.push_str(&format!("{k} = {v}\n"));
        }
        out
    }
}

/// Parses a tc line into the qdisc it configures; checks the result as a spec.
pub fn parse(line: &str) -> Result<TcQdisc, TcError> {
    let tokens: Vec<&str> = line.split_whitespace().collect();
    let (kind, options) = split_header(&tokens)?;
    let mut p = Parser {
        kind,
        args: options,
        at: 0,
        out: TcQdisc {
            // The words only, so the echo stays one comment line; a control
            // character (no TOML comment may hold one) is written escaped.
            line: tokens
                .iter()
                .map(|w| {
                    w.chars()
                        .map(|c| {
                            if c.is_control() {
                                c.escape_unicode().to_string()
                            } else {
                                c.to_string()
                            }
                        })
                        .collect::<String>()
                })
                .collect::<Vec<_>>()
                .join(" "),
            keys: Vec::new(),
            notes: Vec::new(),
        },
    };
    match kind {
        "pfifo" => pfifo(&mut p)?,
        "bfifo" => bfifo(&mut p)?,
        "red" => red(&mut p)?,
        "sfb" => sfb(&mut p)?,
        "choke" => choke(&mut p)?,
        "sfq" => sfq(&mut p)?,
        "codel" => codel(&mut p)?,
        "fq_codel" => fq_codel(&mut p)?,
        "pie" => pie(&mut p)?,
        "dualpi2" => dualpi2(&mut p)?,
        "cake" => cake(&mut p)?,
        "fq" => fq(&mut p)?,
        _ => unreachable!("split_header checks the kind"),
    }
    // The qdisc's own checks, on a nominal link (none depends on its rate).
    p.out
        .spec()?
        .build(&LinkInfo::new(Rate::from_mbps(10)))
        .map_err(|e| TcError::Spec(e.to_string()))?;
    Ok(p.out)
}

/// Parses one qdisc line, or a tree script (several lines: an htb or prio root,
/// its classes, leaves and filters).
pub fn parse_any(text: &str) -> Result<TcQdisc, TcError> {
    if tree::is_script(text) {
        tree::parse_script(text)
    } else {
        parse(text)
    }
}

/// What `aqmlab tc LINE` prints: a qdisc's `[qdisc]` table (a tree script's
/// nested one), or for a netem line the link keys it becomes.
pub fn describe(line: &str) -> Result<String, TcError> {
    if !tree::is_script(line) && line.split_whitespace().any(|w| w == "netem") {
        return netem::parse(line).map(|n| n.to_toml());
    }
    parse_any(line).map(|q| q.to_toml())
}

const KINDS: [&str; 12] = [
    "pfifo", "bfifo", "red", "sfb", "choke", "sfq", "codel", "fq_codel", "pie", "dualpi2", "cake",
    "fq",
];

/// Finds the kind after `tc qdisc add dev X root|parent P [handle H]`; a line may
/// also start at the kind.
fn split_header<'a>(t: &'a [&'a str]) -> Result<(&'static str, &'a [&'a str]), TcError> {
    let mut i = 0;
    if t.first()
        .is_some_and(|w| *w == "tc" || w.ends_with("/tc") || *w == "$TC")
    {
        i += 1;
    }
    let known = |w: &str| KINDS.iter().find(|k| **k == w).copied();
    if let Some(k) = t.get(i).and_then(|w| known(w)) {
        return Ok((k, &t[i + 1..]));
    }
    if t.get(i) != Some(&"qdisc") {
        return Err(TcError::Syntax(
            "expected `tc qdisc add dev DEV root KIND [options]`".into(),
        ));
    }
    i += 1;
    match t.get(i) {
        Some(&("add" | "replace" | "change")) => i += 1,
        Some(v) => {
            return Err(TcError::Syntax(format!(
                "`{v}`: only `qdisc add`, `replace` or `change` configure a qdisc"
            )))
        }
        None => return Err(TcError::Syntax("the line ends after `qdisc`".into())),
    }
    while let Some(&w) = t.get(i) {
        match w {
            "dev" | "parent" | "handle" => {
                if t.get(i + 1).is_none() {
                    return Err(TcError::MissingValue { option: w.into() });
                }
                i += 2;
            }
            "root" => i += 1,
            "ingress" | "clsact" | "estimator" | "stab" => {
                return Err(TcError::Unsupported {
                    option: w.into(),
                    why: "aqmlab's qdiscs sit on a link's egress, one per direction".into(),
                })
            }
            _ => {
                return known(w)
                    .map(|k| (k, &t[i + 1..]))
                    .ok_or_else(|| TcError::UnknownKind(w.into()))
            }
        }
    }
    Err(TcError::Syntax("no qdisc kind on the line".into()))
}

struct Parser<'a> {
    kind: &'static str,
    args: &'a [&'a str],
    at: usize,
    out: TcQdisc,
}

impl<'a> Parser<'a> {
    /// The next option word, if any.
    fn next(&mut self) -> Option<&'a str> {
        let w = self.args.get(self.at).copied();
        self.at += 1;
        w
    }

    fn value(&mut self, option: &str) -> Result<&'a str, TcError> {
        self.next().ok_or_else(|| TcError::MissingValue {
            option: option.into(),
        })
    }

    fn unknown(&self, option: &str) -> TcError {
        TcError::UnknownOption {
            kind: self.kind,
            option: option.into(),
        }
    }

    fn set(&mut self, key: &str, v: impl Into<Value>) {
        let v = v.into();
        match self.out.keys.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = v,
            None => self.out.keys.push((key.into(), v)),
        }
    }

    /// Takes a key back (an option that replaces another spelling of itself).
    fn unset(&mut self, key: &str) {
        self.out.keys.retain(|(k, _)| k != key);
    }

    fn note(&mut self, n: String) {
        self.out.notes.push(n);
    }

    /// tc's `get_unsigned`/`get_u32`: a 32-bit unsigned number.
    fn uint(&mut self, option: &str) -> Result<u64, TcError> {
        let v = self.value(option)?;
        parse_uint(v)
            .filter(|&n| n <= u32::MAX as u64)
            .ok_or_else(|| bad(option, v, "must be a whole number below 2^32"))
    }
    fn size(&mut self, option: &str) -> Result<u64, TcError> {
        let v = self.value(option)?;
        parse_size(v).ok_or_else(|| {
            bad(
                option,
                v,
                "must be a size in bytes (suffixes b, k or kb, m or mb, g or gb, kbit, \
                 mbit, gbit)",
            )
        })
    }
    fn time(&mut self, option: &str) -> Result<Dur, TcError> {
        let v = self.value(option)?;
        parse_time(v).ok_or_else(|| {
            bad(
                option,
                v,
                "must be a time (microseconds, or with s, ms or us)",
            )
        })
    }
    fn rate(&mut self, option: &str) -> Result<Rate, TcError> {
        let v = self.value(option)?;
        parse_rate(v).map_err(|e| {
            bad(
                option,
                v,
                e.rule(
                    "must be a rate (bit/s, or with kbit, mbit, gbit, bps, kbps = kilobytes/s, \
                     mbps, gbps)",
                ),
            )
        })
    }
    fn prob(&mut self, option: &str) -> Result<f64, TcError> {
        let v = self.value(option)?;
        v.parse::<f64>()
            .ok()
            .filter(|p| (0.0..=1.0).contains(p))
            .ok_or_else(|| bad(option, v, "must be a probability between 0 and 1"))
    }
}

fn bad(option: &str, value: &str, rule: &str) -> TcError {
    TcError::BadValue {
        option: option.into(),
        value: value.into(),
        rule: rule.into(),
    }
}

/// A duration as the scenario files write it.
fn dur(d: Dur) -> Value {
    let ns = d.as_nanos();
    Value::String(if ns.is_multiple_of(1_000_000_000) {
        format!("{}s", ns / 1_000_000_000)
    } else if ns.is_multiple_of(1_000_000) {
        format!("{}ms", ns / 1_000_000)
    } else if ns.is_multiple_of(1_000) {
        format!("{}us", ns / 1_000)
    } else {
        format!("{ns}ns")
    })
}

fn int(v: u64) -> Value {
    Value::Integer(v.min(i64::MAX as u64) as i64)
}

/// tc's `get_unsigned`: decimal, or hexadecimal with 0x, or octal with 0.
fn parse_uint(s: &str) -> Option<u64> {
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else if s.len() > 1 && s.starts_with('0') {
        u64::from_str_radix(&s[1..], 8).ok()
    } else {
        s.parse().ok()
    }
}

/// Splits "1.5ms" into 1.5 and "ms"; None for no number or a negative one.
fn number_unit(s: &str) -> Option<(f64, &str)> {
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' || c == '+'))
        .unwrap_or(s.len());
    // An "e" that starts a unit is not an exponent.
    let (num, unit) = s.split_at(end);
    let v: f64 = num.parse().ok()?;
    (v >= 0.0 && v.is_finite()).then_some((v, unit))
}

/// tc's `get_size`: bytes; k/kb = 1024, m/mb = 1024^2, g/gb = 1024^3, and the
/// bit sizes kbit = 1024/8, mbit = 1024^2/8, gbit = 1024^3/8 bytes.
fn parse_size(s: &str) -> Option<u64> {
    let (v, unit) = number_unit(s)?;
    let scale = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1024.0,
        "m" | "mb" => 1024.0 * 1024.0,
        "g" | "gb" => 1024.0 * 1024.0 * 1024.0,
        "kbit" => 1024.0 / 8.0,
        "mbit" => 1024.0 * 1024.0 / 8.0,
        "gbit" => 1024.0 * 1024.0 * 1024.0 / 8.0,
        _ => return None,
    };
    let bytes = v * scale;
    (bytes.fract() == 0.0 && bytes <= u32::MAX as f64).then_some(bytes as u64)
}

/// tc's `get_time`: microseconds unless s/sec/secs, ms/msec/msecs, us/usec/usecs.
fn parse_time(s: &str) -> Option<Dur> {
    let (v, unit) = number_unit(s)?;
    let ns_per = match unit.to_ascii_lowercase().as_str() {
        "s" | "sec" | "secs" => 1e9,
        "ms" | "msec" | "msecs" => 1e6,
        "" | "us" | "usec" | "usecs" => 1e3,
        _ => return None,
    };
    // tc keeps whole microseconds.
    let us = (v * ns_per / 1e3).trunc();
    (us <= u32::MAX as f64).then(|| Dur::from_nanos(us as u64 * 1000))
}

/// Why a tc rate was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RateRefused {
    /// Not a number with a known unit.
    Syntax,
    /// Below 1 bit/s once rounded: a link of rate 0 never sends.
    Zero,
    /// Not below 2^64 bit/s, the most a rate holds (the scenario's `rate` refuses
    /// it as well).
    TooLarge,
}

impl RateRefused {
    /// The rule broken; `syntax` is the caller's own words for a malformed rate.
    fn rule(self, syntax: &str) -> &str {
        match self {
            RateRefused::Syntax => syntax,
            RateRefused::Zero => "must be at least 1 bit/s: a link of rate 0 never sends",
            RateRefused::TooLarge => "must be below 2^64 bit/s (18 Ebit/s)",
        }
    }
}

/// tc's `get_rate`: bits per second unless suffixed; the suffixes compare without
/// case, so `kbps` is tc's `KBps`, kilobytes per second. A rate is at least 1 bit/s
/// and below 2^64 bit/s, so no link of rate 0 (or a saturated one) is built.
fn parse_rate(s: &str) -> Result<Rate, RateRefused> {
    let (v, unit) = number_unit(s).ok_or(RateRefused::Syntax)?;
    const SUFFIXES: [(&str, f64); 19] = [
        ("", 1.0),
        ("bit", 1.0),
        ("kibit", 1024.0),
        ("kbit", 1e3),
        ("mibit", 1024.0 * 1024.0),
        ("mbit", 1e6),
        ("gibit", 1024.0 * 1024.0 * 1024.0),
        ("gbit", 1e9),
        ("tibit", 1024.0 * 1024.0 * 1024.0 * 1024.0),
        ("tbit", 1e12),
        ("bps", 8.0),
        ("kibps", 8.0 * 1024.0),
        ("kbps", 8e3),
        ("mibps", 8.0 * 1024.0 * 1024.0),
        ("mbps", 8e6),
        ("gibps", 8.0 * 1024.0 * 1024.0 * 1024.0),
        ("gbps", 8e9),
        ("tibps", 8.0 * 1024.0 * 1024.0 * 1024.0 * 1024.0),
        ("tbps", 8e12),
    ];
    let unit = unit.to_ascii_lowercase();
    let scale = SUFFIXES
        .iter()
        .find(|(u, _)| *u == unit)
        .ok_or(RateRefused::Syntax)?
        .1;
    let bps = (v * scale).round();
    if bps < 1.0 {
        Err(RateRefused::Zero)
    } else if bps >= u64::MAX as f64 {
        Err(RateRefused::TooLarge)
    } else {
        Ok(Rate::from_bps(bps as u64))
    }
}

#[cfg(test)]
mod tests;
