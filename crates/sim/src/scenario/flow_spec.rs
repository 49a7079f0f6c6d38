//! A flow group (`[[flows]]`): the keys every kind shares, and the kind's own
//! keys as a tagged enum ([`Traffic`]), so a key of another kind is an unknown
//! field of this one. Defaults are filled when the group is read; a key whose
//! meaning depends on another (`hystart` on `variant = "cubic"`) stays optional
//! so that validation can tell it was written.

use super::validate::MAX_WINDOW;
use super::{FlowKind, RateStep};
use crate::tcp::{Counting, NewRenoTimer, Profile, Recovery, TcpConfig, Variant};
use crate::udp::{Distribution, Pattern, UdpConfig};
use aqm::{Dscp, Dur, Ecn, Rate, Time};
use serde::{Deserialize, Serialize};

fn one() -> u32 {
    1
}
/// A probe's default size: a small ping, as Flent's RTT probes are (the
/// simulator counts a packet's bytes on the wire, headers included).
pub const PROBE_SIZE: u32 = 64;
fn start_spread() -> Dur {
    Dur::from_secs(1)
}
fn unit_weight() -> f64 {
    1.0
}

/// A group of identical flows: the keys every kind takes, then `kind` and its own.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlowSpec {
    pub name: String,
    /// Flows in the group. Default 1.
    #[serde(default = "one")]
    pub count: u32,
    /// A graph's end nodes.
    #[serde(default)]
    pub from: Option<String>,
    #[serde(default)]
    pub to: Option<String>,
    /// A graph's explicit route for the group's data, node by node from `from`
    /// to `to` (its ACKs take it backwards); the topology's `routing` otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<Vec<String>>,
    /// Bytes per packet, headers included. Default 1000, or [`PROBE_SIZE`] for
    /// `kind = "probe"` (filled when read: read it through [`FlowSpec::packet_size`]).
    #[serde(default)]
    pub packet_size: Option<u32>,
    #[serde(default)]
    pub start: Dur,
    /// Each flow starts at `start` plus a uniform draw below this. Default 1 s.
    #[serde(default = "start_spread")]
    pub start_spread: Dur,
    #[serde(default)]
    pub stop: Option<Dur>,
    /// The aggregate the group's flows belong to (aggregate scheduling); each
    /// flow is an aggregate of its own when absent. Below 2^31.
    #[serde(default)]
    pub aggregate: Option<u32>,
    /// The host the group's flows send from (per-host fairness: CAKE's host
    /// isolation, the `hosts` table). Flows of every group naming one host share
    /// it; without the key each flow is a host of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The host the group's flows send to, as `host` is the one they send from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receiver_host: Option<String>,
    /// Each flow's scheduling weight (fair queueing). Default 1.
    #[serde(default = "unit_weight")]
    pub weight: f64,
    /// A dumbbell's access links of this group; the topology's when absent.
    #[serde(default)]
    pub access_delay: Option<Dur>,
    #[serde(default)]
    pub access_rate: Option<Rate>,
    /// ECN-capable: TCP reacts to CE marks; a UDP flow's packets are ECT and it
    /// ignores marks (an unresponsive flow a marking queue cannot slow down).
    /// `true` is ECT(0), or ECT(1) for Prague; `"ect0"` and `"ect1"` choose the
    /// codepoint. Default off, but on for DCTCP and Prague (filled when read).
    #[serde(default, serialize_with = "ecn_or_off")]
    pub ecn: Option<EcnSetting>,
    /// The DiffServ codepoint of the group's packets (a number 0-63 or a name:
    /// `"EF"`, `"AF41"`, `"CS1"`, `"LE"`): what CAKE's tins and `prio`'s bands
    /// classify by. ACKs carry 0, as Linux's receivers send them. Default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dscp: Option<Dscp>,
    /// `kind` and the kind's own keys.
    #[serde(flatten)]
    pub traffic: Traffic,
}

/// A flow group's `ecn` key: `false`, `true` (the variant's codepoint: ECT(1)
/// for Prague, ECT(0) otherwise), `"ect0"` or `"ect1"`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum EcnSetting {
    Off,
    On,
    Ect0,
    Ect1,
}

impl EcnSetting {
    /// The codepoint a flow of `variant` (`None`: UDP) marks its packets with.
    pub fn codepoint(self, variant: Option<Variant>) -> Ecn {
        match self {
            EcnSetting::Off => Ecn::NotEct,
            EcnSetting::On if variant == Some(Variant::Prague) => Ecn::Ect1,
            EcnSetting::On | EcnSetting::Ect0 => Ecn::Ect,
            EcnSetting::Ect1 => Ecn::Ect1,
        }
    }
}

impl Serialize for EcnSetting {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            EcnSetting::Off => s.serialize_bool(false),
            EcnSetting::On => s.serialize_bool(true),
            EcnSetting::Ect0 => s.serialize_str("ect0"),
            EcnSetting::Ect1 => s.serialize_str("ect1"),
        }
    }
}

impl<'de> Deserialize<'de> for EcnSetting {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = EcnSetting;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("true, false, \"ect0\" or \"ect1\"")
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<EcnSetting, E> {
                Ok(if v { EcnSetting::On } else { EcnSetting::Off })
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<EcnSetting, E> {
                match v {
                    "ect0" => Ok(EcnSetting::Ect0),
                    "ect1" => Ok(EcnSetting::Ect1),
                    _ => Err(E::invalid_value(serde::de::Unexpected::Str(v), &self)),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// `ecn` as written back: off when not set (the defaults are filled when read).
fn ecn_or_off<S: serde::Serializer>(v: &Option<EcnSetting>, s: S) -> Result<S::Ok, S::Error> {
    v.unwrap_or(EcnSetting::Off).serialize(s)
}

/// What a group's flows send, by `kind`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Traffic {
    /// Bulk TCP (FTP).
    Tcp(TcpKeys),
    /// TCP sending objects of `object_size` packets, back to slow start each time.
    Web(WebKeys),
    /// Constant bit rate UDP.
    Cbr(UdpKeys),
    /// Poisson UDP.
    Poisson(UdpKeys),
    /// On/off UDP.
    Onoff(OnoffKeys),
    /// Small packets at a fixed interval, each echoed back: RTT under load.
    Probe(ProbeKeys),
}

/// The keys of a TCP kind, with TcpConfig's defaults, and `extra` keys of its own.
macro_rules! tcp_keys {
    ($(#[$doc:meta])* $name:ident { $($(#[$fdoc:meta])* $field:ident: $ty:ty = $default:expr,)* }) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields, default)]
        pub struct $name {
            pub variant: Variant,
            /// Whose defaults the keys below take: `"ns2"` (the papers') or
            /// `"linux"` (today's hosts); a key written here overrides it.
            pub profile: Profile,
            pub max_window: u32,
            /// The profile's unless written: 1 (ns-2), 10 (Linux).
            pub initial_window: Option<u32>,
            pub min_rto: Dur,
            /// The profile's unless written: off (ns-2), on (Linux).
            pub delayed_ack: Option<bool>,
            /// How long a delayed ACK waits for a second packet; needs `delayed_ack`.
            pub delack_timeout: Option<Dur>,
            /// RFC 3042 limited transmit; the profile's unless written.
            pub limited_transmit: Option<bool>,
            /// NewReno: restart the retransmission timer on the first partial ACK of
            /// a recovery only (`"impatient"`, the default) or on every one.
            pub newreno_timer: Option<NewRenoTimer>,
            /// Reno: no second fast retransmit within a window (ns-2's `bugFix_`;
            /// default on).
            pub reno_bugfix: Option<bool>,
            /// The ns-2 profile's window arithmetic (Linux counts whole segments).
            pub counting: Option<Counting>,
            /// `variant = "cubic"` only: HyStart++ (RFC 9406, ns-2 profile) or
            /// Linux's HyStart (Linux profile, on there by default).
            pub hystart: Option<bool>,
            /// Pace new packets at a multiple of cwnd / srtt; default on for
            /// Prague, off otherwise. BBR always paces, at its own rate.
            pub pacing: Option<bool>,
            /// SACK recovery (`sack`, `cubic`): proportional rate reduction
            /// (RFC 6937); the profile's unless written: off (ns-2), on (Linux).
            pub prr: Option<bool>,
            $( $(#[$fdoc])* pub $field: $ty, )*
        }

        impl Default for $name {
            fn default() -> Self {
                let d = TcpConfig::default();
                $name {
                    variant: d.variant,
                    profile: d.profile,
                    max_window: d.max_window,
                    initial_window: None,
                    min_rto: d.min_rto,
                    delayed_ack: None,
                    delack_timeout: None,
                    limited_transmit: None,
                    newreno_timer: None,
                    reno_bugfix: None,
                    counting: None,
                    hystart: None,
                    pacing: None,
                    prr: None,
                    $( $field: $default, )*
                }
            }
        }

        impl $name {
            /// The rules across these keys, as the key to blame and the message:
            /// keys of one variant, the delayed ACK's timeout, the windows.
            pub(super) fn rules(&self) -> Result<(), (&'static str, String)> {
                if self.variant.is_bbr() {
                    let name = self.variant.name();
                    if self.pacing == Some(false) {
                        let rule = format!("pacing = false: variant = \"{name}\" paces at its model's rate by design");
                        return Err(("pacing", rule));
                    }
                    if self.prr == Some(true) {
                        let rule = format!("prr = true: variant = \"{name}\" sets the window in recovery itself (packet conservation), as Linux's does");
                        return Err(("prr", rule));
                    }
                }
                if self.prr == Some(true) && self.variant.recovery() != Recovery::Sack {
                    let rule = "prr applies to SACK recovery (variant = \"sack\", \"cubic\", \"dctcp\" or \"prague\") only";
                    return Err(("prr", rule.into()));
                }
                if self.counting.is_some() && self.profile == Profile::Linux {
                    let rule = "counting applies to profile = \"ns2\" only: the Linux profile \
                                counts whole segments, as tcp_cong_avoid_ai does";
                    return Err(("counting", rule.into()));
                }
                tcp_rules(
                    self.variant,
                    [
                        ("hystart", self.hystart.is_some(), Variant::Cubic, "cubic"),
                        ("newreno_timer", self.newreno_timer.is_some(), Variant::NewReno, "newreno"),
                        ("reno_bugfix", self.reno_bugfix.is_some(), Variant::Reno, "reno"),
                    ],
                    self.delayed_ack.unwrap_or(self.profile == Profile::Linux),
                    self.delack_timeout,
                    [
                        ("max_window", self.max_window),
                        ("initial_window", self.initial_window.unwrap_or(1)),
                    ],
                )
            }

            /// The sender's configuration: these keys over TcpConfig's defaults.
            fn tcp_config(&self, packet_size: u32, ecn: Option<EcnSetting>) -> TcpConfig {
                let d = match self.profile {
                    Profile::Ns2 => TcpConfig { variant: self.variant, ..TcpConfig::default() },
                    Profile::Linux => TcpConfig::linux(self.variant),
                };
                let ecn = ecn.unwrap_or(EcnSetting::Off).codepoint(Some(self.variant));
                TcpConfig {
                    packet_size,
                    max_window: self.max_window,
                    initial_window: self.initial_window.unwrap_or(d.initial_window),
                    min_rto: self.min_rto,
                    delayed_ack: self.delayed_ack.unwrap_or(d.delayed_ack),
                    delack_timeout: self.delack_timeout.unwrap_or(d.delack_timeout),
                    limited_transmit: self.limited_transmit.unwrap_or(d.limited_transmit),
                    newreno_timer: self.newreno_timer.unwrap_or(d.newreno_timer),
                    reno_bugfix: self.reno_bugfix.unwrap_or(d.reno_bugfix),
                    ecn,
                    pacing: self
                        .pacing
                        .unwrap_or(self.variant == Variant::Prague || self.variant.is_bbr()),
                    counting: self.counting.unwrap_or(d.counting),
                    hystart: self.hystart.unwrap_or(d.hystart),
                    prr: self.prr.unwrap_or(d.prr),
                    ..d
                }
            }
        }
    };
}

/// The rules of a TCP group's keys ([`TcpKeys::rules`]): `of_variant` are keys
/// written (or not) that apply to one variant only.
fn tcp_rules(
    variant: Variant,
    of_variant: [(&'static str, bool, Variant, &str); 3],
    delayed_ack: bool,
    delack_timeout: Option<Dur>,
    windows: [(&'static str, u32); 2],
) -> Result<(), (&'static str, String)> {
    for (key, written, only, name) in of_variant {
        if written && variant != only {
            return Err((key, format!("{key} applies to variant = \"{name}\" only")));
        }
    }
    if let Some(d) = delack_timeout {
        if !delayed_ack {
            let key = "delack_timeout";
            return Err((key, "delack_timeout needs delayed_ack = true".into()));
        }
        // RFC 1122 (4.2.3.2) and RFC 5681 (4.2): under half a second.
        if d.is_zero() || d >= Dur::from_millis(500) {
            let rule = format!("delack_timeout = {d} must be above 0 and below 500ms");
            return Err(("delack_timeout", rule));
        }
    }
    for (key, w) in windows {
        if w == 0 || w > MAX_WINDOW {
            return Err((
                key,
                format!("{key} = {w} must be from 1 to {MAX_WINDOW} packets"),
            ));
        }
    }
    Ok(())
}

tcp_keys! {
    /// Bulk TCP's keys.
    TcpKeys {}
}

tcp_keys! {
    /// Web TCP's keys: TCP's, the object size and the think time.
    WebKeys {
        /// Packets per object; required.
        object_size: Option<u32> = None,
        /// Time between an object's last ACK and the next object.
        think: Dur = Dur::ZERO,
    }
}

/// A CBR or Poisson source's keys.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct UdpKeys {
    /// Required.
    pub rate: Option<Rate>,
    pub schedule: Option<Vec<RateStep>>,
}

/// An on/off source's keys.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OnoffKeys {
    /// Required.
    pub rate: Option<Rate>,
    pub schedule: Option<Vec<RateStep>>,
    /// Mean on and off durations; required.
    pub on: Option<Dur>,
    pub off: Option<Dur>,
    pub distribution: Distribution,
    /// Pareto's shape; `distribution = "pareto"` only (default 1.5 there).
    pub shape: Option<f64>,
}

/// A probe group's keys (the packet size is the shared `packet_size`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ProbeKeys {
    /// Time between a flow's probes. Default 100 ms.
    pub interval: Dur,
}

impl Default for ProbeKeys {
    fn default() -> Self {
        ProbeKeys {
            interval: Dur::from_millis(100),
        }
    }
}

impl FlowSpec {
    /// Bytes per packet, headers included (its default is filled when read).
    pub fn packet_size(&self) -> u32 {
        self.packet_size
            .unwrap_or_else(|| self.kind().packet_size())
    }

    /// A probe group's interval (`None` for the other kinds).
    pub fn probe_interval(&self) -> Option<Dur> {
        match &self.traffic {
            Traffic::Probe(k) => Some(k.interval),
            _ => None,
        }
    }

    pub fn kind(&self) -> FlowKind {
        match self.traffic {
            Traffic::Tcp(_) => FlowKind::Tcp,
            Traffic::Web(_) => FlowKind::Web,
            Traffic::Cbr(_) => FlowKind::Cbr,
            Traffic::Poisson(_) => FlowKind::Poisson,
            Traffic::Onoff(_) => FlowKind::Onoff,
            Traffic::Probe(_) => FlowKind::Probe,
        }
    }

    /// The TCP sender's configuration (for a UDP group, the defaults with the
    /// group's packet size; its codepoint is [`FlowSpec::codepoint`]).
    pub fn tcp_config(&self) -> TcpConfig {
        match &self.traffic {
            Traffic::Tcp(k) => k.tcp_config(self.packet_size(), self.ecn),
            Traffic::Web(k) => TcpConfig {
                object_size: k.object_size,
                think: k.think,
                ..k.tcp_config(self.packet_size(), self.ecn)
            },
            _ => TcpConfig {
                packet_size: self.packet_size(),
                ..TcpConfig::default()
            },
        }
    }

    /// A TCP group's variant (`None` for UDP).
    pub fn variant(&self) -> Option<Variant> {
        match &self.traffic {
            Traffic::Tcp(k) => Some(k.variant),
            Traffic::Web(k) => Some(k.variant),
            _ => None,
        }
    }

    /// The codepoint of the group's data packets (`Ecn::NotEct`: not ECN-capable).
    pub fn codepoint(&self) -> Ecn {
        self.ecn
            .unwrap_or(EcnSetting::Off)
            .codepoint(self.variant())
    }

    /// Fills the defaults that depend on other keys: `ecn` on for DCTCP and
    /// Prague, the packet size by kind.
    pub(super) fn fill_defaults(&mut self) {
        self.packet_size = Some(self.packet_size());
        if self.ecn.is_none() {
            let scalable = self.variant().is_some_and(Variant::is_scalable);
            self.ecn = Some(if scalable {
                EcnSetting::On
            } else {
                EcnSetting::Off
            });
        }
    }

    /// A UDP source's rate (`None` for TCP, or when not written).
    pub fn rate(&self) -> Option<Rate> {
        match &self.traffic {
            Traffic::Cbr(k) | Traffic::Poisson(k) => k.rate,
            Traffic::Onoff(k) => k.rate,
            _ => None,
        }
    }

    /// A UDP source's rate changes (none for TCP).
    pub fn schedule(&self) -> Option<&[RateStep]> {
        match &self.traffic {
            Traffic::Cbr(k) | Traffic::Poisson(k) => k.schedule.as_deref(),
            Traffic::Onoff(k) => k.schedule.as_deref(),
            _ => None,
        }
    }

    /// The UDP source's configuration; `None` for TCP and probes.
    pub fn udp_config(&self) -> Option<UdpConfig> {
        let pattern = match &self.traffic {
            Traffic::Tcp(_) | Traffic::Web(_) | Traffic::Probe(_) => return None,
            Traffic::Cbr(_) => Pattern::Cbr,
            Traffic::Poisson(_) => Pattern::Poisson,
            Traffic::Onoff(k) => Pattern::OnOff {
                on: k.on.expect("validated"),
                off: k.off.expect("validated"),
                dist: k.distribution,
                shape: k.shape.unwrap_or(1.5),
            },
        };
        Some(UdpConfig {
            pattern,
            packet_size: self.packet_size(),
            rate: self.rate().unwrap_or_default(),
            schedule: self
                .schedule()
                .unwrap_or_default()
                .iter()
                .map(|st| (Time::ZERO + st.at, st.rate))
                .collect(),
        })
    }
}

#[cfg(test)]
mod tests;
