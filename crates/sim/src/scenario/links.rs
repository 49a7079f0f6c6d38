//! A link's keys resolved into what each of its directions does: a trace read,
//! a netem line expanded, the reverse direction's own keys or the link's; every
//! error names the key at fault and its line.

use super::link_keys::{DelayKey, LinkKeys, LossKey, RateKey};
use super::{KeyPath, Scenario, ScenarioError};
use crate::link_model::{
    synthetic, DeliveryTrace, Distribution, JitterSpec, LinkRate, LossSpec, RateSchedule,
};
use crate::tc::netem;
use aqm::{Dur, Rate, Time};
use std::sync::Arc;

/// One link direction as its keys describe it, resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct Direction {
    pub rate: LinkRate,
    /// The propagation delay (the mean, with jitter).
    pub delay: Dur,
    pub jitter: Option<JitterSpec>,
    pub loss: Option<LossSpec>,
}

impl Direction {
    /// A direction of a constant rate and delay, without loss: the engine's plain link.
    pub fn is_plain(&self) -> bool {
        matches!(self.rate, LinkRate::Constant(_)) && self.jitter.is_none() && self.loss.is_none()
    }

    /// The rate a qdisc is built with and the results report: the constant, a
    /// schedule's first rate, a trace's mean.
    pub fn nominal_rate(&self) -> Rate {
        match &self.rate {
            LinkRate::Constant(r) => *r,
            LinkRate::Schedule(s) => s.rate_at(Time::ZERO),
            LinkRate::Trace(t) => t.mean_rate(),
        }
    }

    /// The highest rate the direction reaches: the constant, a schedule's
    /// highest step, a trace's most opportunities in any
    /// [`TRACE_RATE_WINDOW`](crate::link_model::rate::TRACE_RATE_WINDOW) (what a
    /// guard on how fast a link may be must read, not the nominal rate).
    pub fn peak_rate(&self) -> Rate {
        match &self.rate {
            LinkRate::Constant(r) => *r,
            LinkRate::Schedule(s) => s.max_rate(),
            LinkRate::Trace(t) => t.peak_rate(crate::link_model::rate::TRACE_RATE_WINDOW),
        }
    }

    /// Bytes of the tables the direction keeps (a trace's opportunities).
    pub fn table_bytes(&self) -> u64 {
        match &self.rate {
            LinkRate::Trace(t) => 8 * t.len() as u64,
            _ => 0,
        }
    }
}

/// Which of a link's directions.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Side {
    Forward,
    Reverse,
}

/// What one side's keys (or its netem line) set.
#[derive(Default)]
struct SideKeys {
    rate: Option<LinkRate>,
    delay: Option<(Dur, Option<JitterSpec>)>,
    loss: Option<LossSpec>,
    netem: bool,
}

/// What a netem line sets, as the keys it stands for.
struct FromNetem {
    rate: Option<Rate>,
    delay: Option<(Dur, Option<JitterSpec>)>,
    loss: Option<LossSpec>,
}

impl Scenario {
    /// Direction `side` of the link whose keys are under `at` (`topology.bottleneck`,
    /// `topology.links[2]`), resolved: a trace read, a netem line expanded; every
    /// error names the key at fault and its line.
    pub fn direction(
        &self,
        at: &KeyPath,
        keys: &LinkKeys<'_>,
        side: Side,
    ) -> Result<Direction, ScenarioError> {
        let fwd = self.side_keys(
            at,
            ["rate", "delay", "loss", "netem"],
            (keys.rate, keys.delay, keys.loss, keys.netem),
        )?;
        let missing = |key: &str| self.error_at(at, format!("{at}: missing field `{key}`"));
        let rate = fwd.rate.clone().ok_or_else(|| missing("rate"))?;
        // A netem line without a delay: netem's, none.
        let delay = match fwd.delay {
            Some(d) => d,
            None if fwd.netem => (Dur::ZERO, None),
            None => return Err(missing("delay")),
        };
        if side == Side::Forward {
            return Ok(Direction {
                rate,
                delay: delay.0,
                jitter: delay.1,
                loss: fwd.loss,
            });
        }
        let rev = self.side_keys(
            at,
            [
                "reverse_rate",
                "reverse_delay",
                "reverse_loss",
                "reverse_netem",
            ],
            (
                keys.reverse_rate,
                keys.reverse_delay,
                keys.reverse_loss,
                keys.reverse_netem,
            ),
        )?;
        let delay = rev.delay.unwrap_or(delay);
        // A trace records one direction (a cellular downlink): the other is not
        // shaped by it unless asked, and runs at the trace's mean rate.
        let rate = match rate {
            LinkRate::Trace(trace) => LinkRate::Constant(trace.mean_rate()),
            rate => rate,
        };
        Ok(Direction {
            rate: rev.rate.unwrap_or(rate),
            delay: delay.0,
            jitter: delay.1,
            loss: rev.loss,
        })
    }

    /// One side's keys, named `names` (rate, delay, loss, netem), and its netem
    /// line's, which may not set a key the side sets.
    fn side_keys(
        &self,
        at: &KeyPath,
        names: [&str; 4],
        (rate, delay, loss, line): (
            &Option<RateKey>,
            &Option<DelayKey>,
            &Option<LossKey>,
            &Option<String>,
        ),
    ) -> Result<SideKeys, ScenarioError> {
        let mut out = SideKeys::default();
        if let Some(k) = rate {
            out.rate = Some(self.read_rate(&at.key(names[0]), k)?);
        }
        if let Some(k) = delay {
            out.delay = Some(self.read_delay(&at.key(names[1]), k)?);
        }
        if let Some(k) = loss {
            out.loss = self.read_loss(&at.key(names[2]), k)?;
        }
        let Some(line) = line else {
            return Ok(out);
        };
        let n = self.read_netem(&at.key(names[3]), line)?;
        out.netem = true;
        let conflict = |key: &str, what: &str| {
            self.error_at(
                &at.key(key),
                format!(
                    "{at}.{key} and the {what} of {at}.{} both set it: give one",
                    names[3]
                ),
            )
        };
        if let Some(r) = n.rate {
            if out.rate.is_some() {
                return Err(conflict(names[0], "rate"));
            }
            out.rate = Some(LinkRate::Constant(r));
        }
        if let Some(d) = n.delay {
            if out.delay.is_some() {
                return Err(conflict(names[1], "delay"));
            }
            out.delay = Some(d);
        }
        if let Some(l) = n.loss {
            if loss.is_some() {
                return Err(conflict(names[2], "loss"));
            }
            out.loss = (l.loss_rate() > 0.0).then_some(l);
        }
        Ok(out)
    }

    /// Every link the scenario writes, resolved: its keys' place, its forward
    /// direction and its reverse. A dumbbell's are the bottleneck (left to right
    /// forward) and the access links (host to router forward: the data's way).
    pub fn links(&self) -> Result<Vec<(KeyPath, Direction, Direction)>, ScenarioError> {
        let top = KeyPath::top("topology");
        let written: Vec<(KeyPath, LinkKeys<'_>)> = match self.file.topology.get_ref() {
            super::Topology::Dumbbell {
                access, bottleneck, ..
            } => vec![
                (top.key("bottleneck"), bottleneck.keys()),
                (top.key("access"), access.keys()),
            ],
            super::Topology::Graph { links, .. } => links
                .iter()
                .enumerate()
                .map(|(i, l)| (top.key("links").index(i), l.keys()))
                .collect(),
        };
        written
            .into_iter()
            .map(|(at, keys)| {
                let fwd = self.direction(&at, &keys, Side::Forward)?;
                let rev = self.direction(&at, &keys, Side::Reverse)?;
                Ok((at, fwd, rev))
            })
            .collect()
    }

    fn read_netem(&self, path: &KeyPath, line: &str) -> Result<FromNetem, ScenarioError> {
        let n = netem::parse(line).map_err(|e| self.error_at(path, format!("{path}: {e}")))?;
        if line.split_whitespace().any(|w| w == "limit") {
            return Err(self.error_at(
                path,
                format!(
                    "{path}: netem's `limit` is the length of netem's own queue; on a link \
                     the queue is the link's qdisc: set its `limit` instead"
                ),
            ));
        }
        let delay = (!n.delay.is_zero() || !n.jitter.is_zero()).then(|| {
            let jitter = (!n.jitter.is_zero()).then_some(JitterSpec {
                mean: n.delay,
                jitter: n.jitter,
                distribution: n.distribution.unwrap_or(Distribution::Uniform),
                reorder: n.reorder,
            });
            (n.delay, jitter)
        });
        Ok(FromNetem {
            rate: n.rate,
            delay,
            loss: n.loss,
        })
    }

    fn read_rate(&self, path: &KeyPath, key: &RateKey) -> Result<LinkRate, ScenarioError> {
        let err = |m: String| self.error_at(path, format!("{path}: {m}"));
        match key {
            RateKey::Constant(r) if r.bps() == 0 => {
                Err(self.error_at(path, format!("{path} must be positive")))
            }
            RateKey::Constant(r) => Ok(LinkRate::Constant(*r)),
            RateKey::Schedule(steps) => {
                let steps = steps
                    .iter()
                    .map(|s| (Time::ZERO + s.at, s.rate))
                    .collect::<Vec<_>>();
                if steps.iter().all(|s| s.1.bps() == 0) {
                    return Err(err("a schedule's rates cannot all be 0".into()));
                }
                RateSchedule::new(steps)
                    .map(|s| LinkRate::Schedule(Arc::new(s)))
                    .map_err(err)
            }
            RateKey::Trace(name) => {
                let trace = self.read_trace(name).map_err(err)?;
                Ok(LinkRate::Trace(trace))
            }
        }
    }

    /// A shipped trace by name, or a file relative to the scenario file's
    /// directory (the current directory for a scenario that is not a file).
    fn read_trace(&self, name: &str) -> Result<Arc<DeliveryTrace>, String> {
        let (text, origin) = match synthetic::builtin(name) {
            Some(text) => (text.to_string(), name.to_string()),
            None => {
                let path = match &self.dir {
                    Some(dir) => dir.join(name),
                    None => std::path::PathBuf::from(name),
                };
                let text = super::read_text(&path, "trace file").map_err(|e| {
                    let names: Vec<&str> = synthetic::SHIPPED.iter().map(|(n, _)| *n).collect();
                    format!(
                        "trace \"{name}\" ({}): {e} (a trace is a file, relative to the \
                         scenario's directory, or one of {})",
                        path.display(),
                        names.join(", ")
                    )
                })?;
                (text, path.display().to_string())
            }
        };
        DeliveryTrace::parse(&text)
            .map(Arc::new)
            .map_err(|e| format!("trace {origin}: {e}"))
    }

    fn read_delay(
        &self,
        path: &KeyPath,
        key: &DelayKey,
    ) -> Result<(Dur, Option<JitterSpec>), ScenarioError> {
        match key {
            DelayKey::Fixed(d) => Ok((*d, None)),
            DelayKey::Jittered(j) => {
                let spec = (!j.jitter.is_zero()).then_some(JitterSpec {
                    mean: j.mean,
                    jitter: j.jitter,
                    distribution: j.distribution,
                    reorder: j.reorder,
                });
                if j.jitter.is_zero() && j.distribution != Distribution::Uniform {
                    return Err(self.error_at(
                        &path.key("distribution"),
                        format!("{path}.distribution needs a jitter above 0 (as netem's does)"),
                    ));
                }
                Ok((j.mean, spec))
            }
        }
    }

    fn read_loss(&self, path: &KeyPath, key: &LossKey) -> Result<Option<LossSpec>, ScenarioError> {
        let spec = match key {
            LossKey::Bernoulli(p) => LossSpec::Bernoulli { p: *p },
            LossKey::GeModel(g) => {
                if g.is_empty() || g.len() > 4 {
                    return Err(self.error_at(
                        &path.key("gemodel"),
                        format!(
                            "{path}.gemodel takes 1 to 4 probabilities [p, r, 1-h, 1-k], not {}",
                            g.len()
                        ),
                    ));
                }
                LossSpec::gemodel(
                    g[0],
                    g.get(1).copied(),
                    g.get(2).copied(),
                    g.get(3).copied(),
                )
            }
        };
        spec.check()
            .map_err(|e| self.error_at(path, format!("{path}: {e}")))?;
        Ok(match spec {
            LossSpec::Bernoulli { p: 0.0 } => None,
            s => Some(s),
        })
    }
}

#[cfg(test)]
mod tests;
