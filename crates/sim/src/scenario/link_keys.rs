//! A link's keys beyond a constant rate and delay, as the scenario spells them:
//! `rate` from a Mahimahi trace or a schedule, `loss`, `delay` with jitter, and a
//! `netem` line standing for them (docs/links.md).
//!
//! `rate` and `delay` apply to both directions of a link unless `reverse_rate` or
//! `reverse_delay` gives the reverse its own, as before; `loss` applies to the
//! forward direction, as `qdisc` does, and `reverse_loss` to the reverse. A
//! `netem` line stands for the keys it sets (`rate`, `delay`, `loss`), and
//! `reverse_netem` for the reverse ones. The keys are read loosely here (a string
//! or a table, each type error at its line); what they mean is checked when they
//! are resolved (`links.rs`).

use super::RateStep;
use crate::link_model::Distribution;
use aqm::{Dur, Rate};
use serde::de::{self, value::MapAccessDeserializer, IntoDeserializer, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// `rate`: a constant, a delivery trace (a file, or a shipped trace's name), or
/// a piecewise-constant schedule in the UDP flows' `schedule` spelling.
#[derive(Clone, Debug, PartialEq)]
pub enum RateKey {
    Constant(Rate),
    Trace(String),
    Schedule(Vec<RateStep>),
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct VaryingRate {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    trace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    schedule: Option<Vec<RateStep>>,
}

impl Serialize for RateKey {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RateKey::Constant(r) => r.serialize(s),
            RateKey::Trace(t) => VaryingRate {
                trace: Some(t.clone()),
                schedule: None,
            }
            .serialize(s),
            RateKey::Schedule(steps) => VaryingRate {
                trace: None,
                schedule: Some(steps.clone()),
            }
            .serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for RateKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RateKey;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "a rate with a unit, like \"10Mbps\", { trace = \"file.up\" } or \
                     { schedule = [{ at = \"0s\", rate = \"10Mbps\" }, ...] }",
                )
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RateKey, E> {
                Rate::deserialize(v.into_deserializer()).map(RateKey::Constant)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RateKey, E> {
                Rate::deserialize(v.into_deserializer()).map(RateKey::Constant)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RateKey, E> {
                Rate::deserialize(v.into_deserializer()).map(RateKey::Constant)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<RateKey, E> {
                Rate::deserialize(v.into_deserializer()).map(RateKey::Constant)
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<RateKey, A::Error> {
                let v = VaryingRate::deserialize(MapAccessDeserializer::new(map))?;
                match (v.trace, v.schedule) {
                    (Some(t), None) => Ok(RateKey::Trace(t)),
                    (None, Some(s)) => Ok(RateKey::Schedule(s)),
                    _ => Err(de::Error::custom(
                        "a varying rate takes one of `trace` and `schedule`",
                    )),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// `loss`: a probability (Bernoulli), or netem's `gemodel` parameters.
#[derive(Clone, Debug, PartialEq)]
pub enum LossKey {
    Bernoulli(f64),
    GeModel(Vec<f64>),
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct GeModel {
    gemodel: Vec<f64>,
}

impl Serialize for LossKey {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            LossKey::Bernoulli(p) => s.serialize_f64(*p),
            LossKey::GeModel(g) => GeModel { gemodel: g.clone() }.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for LossKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LossKey;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a probability like 0.01, or { gemodel = [p, r, 1-h, 1-k] }")
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<LossKey, E> {
                Ok(LossKey::Bernoulli(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<LossKey, E> {
                Ok(LossKey::Bernoulli(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<LossKey, E> {
                Ok(LossKey::Bernoulli(v as f64))
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<LossKey, A::Error> {
                let g = GeModel::deserialize(MapAccessDeserializer::new(map))?;
                Ok(LossKey::GeModel(g.gemodel))
            }
        }
        d.deserialize_any(V)
    }
}

/// `delay`: a constant, or a mean with netem's jitter.
#[derive(Clone, Debug, PartialEq)]
pub enum DelayKey {
    Fixed(Dur),
    Jittered(JitterKeys),
}

/// `delay = { mean, jitter, distribution, reorder }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JitterKeys {
    pub mean: Dur,
    #[serde(default)]
    pub jitter: Dur,
    /// netem's default: uniform on `[mean - jitter, mean + jitter)`.
    #[serde(default = "uniform")]
    pub distribution: Distribution,
    /// Whether a packet may overtake the one before it (netem's sorted queue).
    #[serde(default)]
    pub reorder: bool,
}

fn uniform() -> Distribution {
    Distribution::Uniform
}

impl Serialize for DelayKey {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            DelayKey::Fixed(d) => d.serialize(s),
            DelayKey::Jittered(j) => j.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for DelayKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = DelayKey;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "a duration with a unit, like \"20ms\", or { mean = \"20ms\", \
                     jitter = \"5ms\", distribution = \"normal\" }",
                )
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<DelayKey, E> {
                Dur::deserialize(v.into_deserializer()).map(DelayKey::Fixed)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<DelayKey, E> {
                Dur::deserialize(v.into_deserializer()).map(DelayKey::Fixed)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<DelayKey, E> {
                Dur::deserialize(v.into_deserializer()).map(DelayKey::Fixed)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<DelayKey, E> {
                Dur::deserialize(v.into_deserializer()).map(DelayKey::Fixed)
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<DelayKey, A::Error> {
                JitterKeys::deserialize(MapAccessDeserializer::new(map)).map(DelayKey::Jittered)
            }
        }
        d.deserialize_any(V)
    }
}

/// A link's keys that describe its two directions, borrowed from a dumbbell's
/// `access` or `bottleneck` or a graph's link.
pub struct LinkKeys<'a> {
    pub rate: &'a Option<RateKey>,
    pub delay: &'a Option<DelayKey>,
    pub loss: &'a Option<LossKey>,
    pub netem: &'a Option<String>,
    pub reverse_rate: &'a Option<RateKey>,
    pub reverse_delay: &'a Option<DelayKey>,
    pub reverse_loss: &'a Option<LossKey>,
    pub reverse_netem: &'a Option<String>,
}

/// Declares a scenario struct holding the eight keys of [`LinkKeys`] between
/// its own fields, with `keys()` to borrow them: the one list a dumbbell's links
/// and a graph's share. (serde's `flatten` would do it without a macro, but it
/// cannot deny unknown keys, and it loses the line a bad key is on.)
macro_rules! with_link_keys {
    (
        $(#[$attr:meta])*
        pub struct $name:ident {
            $($(#[$a:meta])* pub $before:ident: $before_ty:ty,)*
            ..link_keys,
            $($(#[$b:meta])* pub $after:ident: $after_ty:ty,)*
        }
    ) => {
        $(#[$attr])*
        pub struct $name {
            $($(#[$a])* pub $before: $before_ty,)*
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub rate: Option<RateKey>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub delay: Option<DelayKey>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub loss: Option<LossKey>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub netem: Option<String>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub reverse_rate: Option<RateKey>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub reverse_delay: Option<DelayKey>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub reverse_loss: Option<LossKey>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub reverse_netem: Option<String>,
            $($(#[$b])* pub $after: $after_ty,)*
        }

        impl $name {
            /// The keys that describe the link's two directions.
            pub fn keys(&self) -> LinkKeys<'_> {
                LinkKeys {
                    rate: &self.rate,
                    delay: &self.delay,
                    loss: &self.loss,
                    netem: &self.netem,
                    reverse_rate: &self.reverse_rate,
                    reverse_delay: &self.reverse_delay,
                    reverse_loss: &self.reverse_loss,
                    reverse_netem: &self.reverse_netem,
                }
            }
        }
    };
}
pub(super) use with_link_keys;

with_link_keys! {
    /// A link's rate and one-way propagation delay, and what else its directions
    /// do (`link_keys.rs`).
    #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct LinkSpec {
        ..link_keys,
    }
}

impl LinkSpec {
    /// A link of a constant rate and delay both ways.
    pub fn constant(rate: Rate, delay: Dur) -> Self {
        LinkSpec {
            rate: Some(RateKey::Constant(rate)),
            delay: Some(DelayKey::Fixed(delay)),
            ..LinkSpec::default()
        }
    }
}
