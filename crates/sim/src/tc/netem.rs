//! netem lines as input: `tc qdisc add dev eth0 root netem delay 20ms 5ms
//! distribution normal loss 1% rate 10mbit limit 500` becomes a link's delay,
//! jitter, loss and rate (netem is a link emulator, not an AQM: it configures the
//! link, not its qdisc).
//!
//! Read as iproute2's `tc/q_netem.c` reads it: `delay`/`latency TIME [JITTER]`,
//! `distribution NAME` (needs a jitter), `loss [random] PERCENT`, `loss gemodel
//! p [r [1-h [1-k]]]` with netem's defaults (`r = 1 - p`, `1-h = 100%`, `1-k =
//! 0`), `rate RATE`, `limit PACKETS` (default 1000). A percentage is a number with
//! or without `%` (`loss 1` is 1%, as in tc). netem keeps its queue sorted by
//! departure time, so jitter reorders packets unless `rate` is set (then each
//! packet leaves after the one before): the link's `reorder` follows that rule.
//! What aqmlab does not model is an error naming it: correlation, `duplicate`,
//! `corrupt`, `reorder`/`gap`, `slot`, `ecn`, the 4-state `loss state` model,
//! `seed` (the run's seed seeds the link), a rate's overhead or cell size.

use super::{bad, parse_rate, parse_time, TcError};
use crate::link_model::{Distribution, LossSpec};
use aqm::{Dur, Rate};

/// What a netem line configures on a link direction.
#[derive(Debug, Clone, PartialEq)]
pub struct Netem {
    pub line: String,
    pub delay: Dur,
    pub jitter: Dur,
    /// None: netem's default, uniform.
    pub distribution: Option<Distribution>,
    /// Whether jitter may reorder packets (netem: when no rate is set).
    pub reorder: bool,
    pub loss: Option<LossSpec>,
    pub rate: Option<Rate>,
    pub limit: u64,
}

/// netem's `limit` when the line gives none.
pub const DEFAULT_LIMIT: u64 = 1000;

fn unsupported(option: &str, why: &str) -> TcError {
    TcError::Unsupported {
        option: option.into(),
        why: why.into(),
    }
}

/// iproute2's `parse_percent`: a number of percent, `%` optional, 0 to 100.
fn percent(option: &str, v: &str) -> Result<f64, TcError> {
    let num = v.strip_suffix('%').unwrap_or(v);
    num.parse::<f64>()
        .ok()
        .filter(|p| (0.0..=100.0).contains(p))
        .map(|p| p / 100.0)
        .ok_or_else(|| {
            bad(
                option,
                v,
                "must be a percentage between 0 and 100 (`1%` or `1`)",
            )
        })
}

/// Whether a word is a number (netem's `NEXT_IS_NUMBER`: optional values).
fn is_number(w: Option<&&str>) -> bool {
    w.is_some_and(|w| w.starts_with(|c: char| c.is_ascii_digit() || c == '.'))
}

/// The words after `netem`, read left to right.
struct Words<'a> {
    args: &'a [&'a str],
    i: usize,
}

impl<'a> Words<'a> {
    /// The next word, as the value `option` needs.
    fn value(&mut self, option: &str) -> Result<&'a str, TcError> {
        let v = self.args.get(self.i).copied();
        self.i += 1;
        v.ok_or_else(|| TcError::MissingValue {
            option: option.into(),
        })
    }

    /// The next word when it is a number (netem's optional values).
    fn number(&mut self) -> Option<&'a str> {
        let v = is_number(self.args.get(self.i)).then(|| self.args[self.i]);
        self.i += usize::from(v.is_some());
        v
    }
}

fn time(v: &str, option: &str) -> Result<Dur, TcError> {
    parse_time(v).ok_or_else(|| {
        bad(
            option,
            v,
            "must be a time (microseconds, or with s, ms or us)",
        )
    })
}

/// Parses the options after `netem` (the words of `tc qdisc add ... netem`, or
/// the options alone).
pub fn parse(line: &str) -> Result<Netem, TcError> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let start = words
        .iter()
        .position(|w| *w == "netem")
        .map_or(0, |i| i + 1);
    if start == 0 && words.first().is_some_and(|w| *w == "tc" || *w == "qdisc") {
        return Err(TcError::Syntax("no `netem` on the line".into()));
    }
    let mut out = Netem {
        line: words.join(" "),
        delay: Dur::ZERO,
        jitter: Dur::ZERO,
        distribution: None,
        reorder: false,
        loss: None,
        rate: None,
        limit: DEFAULT_LIMIT,
    };
    let mut w = Words {
        args: &words[start..],
        i: 0,
    };
    while let Some(&o) = w.args.get(w.i) {
        w.i += 1;
        match o {
            "delay" | "latency" => delay(&mut w, o, &mut out)?,
            "distribution" => {
                let v = w.value(o)?;
                out.distribution = Some(Distribution::from_name(v).ok_or_else(|| {
                    bad(o, v, "must be one of uniform, normal, pareto, paretonormal")
                })?);
            }
            "loss" | "drop" => loss(&mut w, o, &mut out)?,
            "rate" => rate(&mut w, o, &mut out)?,
            "limit" => {
                let v = w.value(o)?;
                out.limit = v
                    .parse::<u64>()
                    .ok()
                    .filter(|&n| (1..=u32::MAX as u64).contains(&n))
                    .ok_or_else(|| bad(o, v, "must be a number of packets from 1 to 2^32 - 1"))?;
            }
            _ => return Err(not_modelled(o)),
        }
    }
    if out.distribution.is_some() && (out.delay.is_zero() || out.jitter.is_zero()) {
        return Err(TcError::Syntax(
            "distribution specified but no delay and jitter values (tc refuses it)".into(),
        ));
    }
    if let Some(loss) = &out.loss {
        loss.check()
            .map_err(|e| TcError::Spec(format!("netem loss: {e}")))?;
    }
    out.reorder = !out.jitter.is_zero() && out.rate.is_none();
    Ok(out)
}

/// `delay TIME [JITTER]`; a correlation after them is refused.
fn delay(w: &mut Words, o: &str, out: &mut Netem) -> Result<(), TcError> {
    out.delay = time(w.value(o)?, o)?;
    if let Some(jitter) = w.number() {
        out.jitter = time(jitter, "jitter")?;
        if w.number().is_some() {
            return Err(unsupported(
                "delay correlation",
                "netem's correlated draws are not modelled (and skew the distribution)",
            ));
        }
    }
    Ok(())
}

/// `loss [random] PERCENT` or `loss gemodel p [r [1-h [1-k]]]`.
fn loss(w: &mut Words, o: &str, out: &mut Netem) -> Result<(), TcError> {
    if out.loss.is_some() {
        let v = w.value(o)?;
        return Err(bad(o, v, "the line gives a loss twice"));
    }
    match w.value(o)? {
        "gemodel" => {
            let p = percent("loss gemodel p", w.value("loss gemodel")?)?;
            let mut rest = [None; 3];
            for (slot, name) in rest.iter_mut().zip(["r", "1-h", "1-k"]) {
                let Some(v) = w.number() else { break };
                *slot = Some(percent(&format!("loss gemodel {name}"), v)?);
            }
            out.loss = Some(LossSpec::gemodel(p, rest[0], rest[1], rest[2]));
        }
        "state" => {
            return Err(unsupported(
                "loss state",
                "the 4-state loss model is not modelled; use gemodel or a random loss",
            ))
        }
        v => {
            let v = if v == "random" {
                w.value("loss random")?
            } else {
                v
            };
            out.loss = Some(LossSpec::Bernoulli { p: percent(o, v)? });
            if w.number().is_some() {
                return Err(unsupported(
                    "loss correlation",
                    "netem's correlated loss is not modelled; use gemodel for bursts",
                ));
            }
        }
    }
    Ok(())
}

/// `rate RATE`; a share of the device's speed, an overhead or cells are refused.
fn rate(w: &mut Words, o: &str, out: &mut Netem) -> Result<(), TcError> {
    let v = w.value(o)?;
    if v.contains('%') {
        return Err(unsupported(
            "rate",
            "a rate as a share of the device's speed",
        ));
    }
    out.rate = Some(parse_rate(v).map_err(|e| {
        bad(
            o,
            v,
            e.rule("must be a rate (bit/s, or with kbit, mbit, gbit, bps = bytes/s, ...)"),
        )
    })?);
    if w.args.get(w.i).is_some_and(|x| x.parse::<i64>().is_ok()) {
        return Err(unsupported(
            "rate overhead",
            "packet overhead and cell sizes are not modelled",
        ));
    }
    Ok(())
}

/// A netem option aqmlab does not model, or no netem option at all.
fn not_modelled(o: &str) -> TcError {
    let why = match o {
        "duplicate" => "aqmlab never duplicates a packet",
        "corrupt" => "aqmlab's packets carry no bytes to corrupt",
        "reorder" | "gap" => {
            "netem's reordering by probability is not modelled (jitter reorders: \
             `reorder = true` on the link's delay)"
        }
        "slot" => "netem's slotting (Wi-Fi, DOCSIS) is not modelled; a trace can describe it",
        "ecn" => "netem marks instead of losing; aqmlab's link loss never marks",
        "seed" => "the run's seed seeds every draw of the link",
        _ => {
            return TcError::UnknownOption {
                kind: "netem",
                option: o.into(),
            }
        }
    };
    unsupported(o, why)
}

impl Netem {
    /// The link keys the line configures, as TOML for a `[[topology.links]]` table
    /// or `[topology.bottleneck]`, the line as a comment above them (its `limit` as
    /// a comment too: on a link the queue is the link's qdisc).
    pub fn to_toml(&self) -> String {
        let mut out = format!("# {}\n", self.line);
        let time = |d: Dur| super::dur(d).to_string();
        if self.jitter.is_zero() {
            out.push_str(&format!("delay = {}\n", time(self.delay)));
        } else {
            out.push_str(&format!(
                "delay = {{ mean = {}, jitter = {}, distribution = \"{}\", reorder = {} }}\n",
                time(self.delay),
                time(self.jitter),
                Distribution::NAMES[self.distribution.unwrap_or(Distribution::Uniform) as usize],
                self.reorder
            ));
        }
        match self.loss {
            None => {}
            Some(LossSpec::Bernoulli { p }) => out.push_str(&format!("loss = {p}\n")),
            Some(LossSpec::GilbertElliott {
                p,
                r,
                loss_bad,
                loss_good,
            }) => out.push_str(&format!(
                "loss = {{ gemodel = [{p}, {r}, {loss_bad}, {loss_good}] }}\n"
            )),
        }
        if let Some(r) = self.rate {
            out.push_str(&format!("rate = \"{}bps\"\n", r.bps()));
        }
        out.push_str(&format!(
            "# netem's queue of {} packets: on a link the queue is its qdisc \
             (qdisc = {{ kind = \"droptail\", limit = {} }})\n",
            self.limit, self.limit
        ));
        out
    }
}

#[cfg(test)]
mod tests;
