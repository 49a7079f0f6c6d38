//! The checks a scenario passes before anything is built: every error names the
//! key and its line.

use super::{
    EcnSetting, FlowKind, KeyPath, Scenario, ScenarioError, Topology, Traffic, OWN_AGGREGATE,
};
use crate::tcp::Variant;
use crate::udp::Distribution;
use std::collections::{HashMap, HashSet};

/// IPv4 and TCP headers without options, in bytes (a TCP ACK's size).
const TCP_HEADERS: u32 = 40;
/// IPv4 and ICMP echo headers, in bytes: the smallest probe.
pub const PROBE_HEADERS: u32 = 28;
/// The largest TCP window (`max_window`, `initial_window`), in packets: above the
/// 2^30 bytes TCP window scaling allows at any packet size over 1 KiB, and what
/// the sender keeps per packet in flight is counted in the memory estimate.
pub const MAX_WINDOW: u32 = 1 << 20;

impl Scenario {
    pub(super) fn validate(&self) -> Result<(), ScenarioError> {
        let f = &self.file;
        if f.duration.is_zero() {
            return Err(self.error_at(
                &KeyPath::top("duration"),
                "duration must be positive".into(),
            ));
        }
        if f.warmup >= f.duration {
            // At the warm-up's line; at the duration's when the warm-up is the default.
            let at = if f.warmup.is_zero() {
                "duration"
            } else {
                "warmup"
            };
            return Err(self.error_at(
                &KeyPath::top(at),
                format!(
                    "warmup = {} must be shorter than duration = {}",
                    f.warmup, f.duration
                ),
            ));
        }
        if f.flows.is_empty() {
            return Err(self.error_at(
                &KeyPath::top("flows"),
                "a scenario needs at least one [[flows]] group".into(),
            ));
        }
        self.check_name(&KeyPath::top("name"), "name", &f.name, false)?;
        let nodes = self.validate_topology()?;
        let mut names = HashSet::with_capacity(f.flows.len());
        for i in 0..f.flows.len() {
            self.validate_flow(i, nodes.as_ref(), &mut names)?;
        }
        self.validate_monitor()?;
        self.validate_network()?;
        self.refuse_no_ops()
    }

    /// The topology's own checks; for a graph, its node names.
    fn validate_topology(&self) -> Result<Option<HashSet<&str>>, ScenarioError> {
        let f = &self.file;
        let topo = KeyPath::top("topology");
        let nodes = match f.topology.get_ref() {
            Topology::Dumbbell {
                access, bottleneck, ..
            } => {
                let _ = (access, bottleneck);
                self.links()?;
                None
            }
            Topology::Graph { nodes, links, .. } => {
                for (j, n) in nodes.iter().enumerate() {
                    let path = topo.key("nodes").index(j);
                    self.check_name(&path, &format!("topology.nodes[{j}]"), n, true)?;
                }
                let mut set = HashSet::with_capacity(nodes.len());
                if let Some((j, twice)) = nodes
                    .iter()
                    .enumerate()
                    .find(|(_, n)| !set.insert(n.as_str()))
                {
                    return Err(self.error_at(
                        &topo.key("nodes").index(j),
                        format!("topology.nodes names \"{twice}\" twice"),
                    ));
                }
                // A link's directions are named `from->to` and `to->from` in every
                // table, `--pcap`, `[monitor] links` and `plot --link`: two links
                // between one pair of nodes could not be told apart.
                let mut pairs: HashMap<(&str, &str), usize> = HashMap::with_capacity(links.len());
                for (i, l) in links.iter().enumerate() {
                    let link = topo.key("links").index(i);
                    let pair = if l.from <= l.to {
                        (l.from.as_str(), l.to.as_str())
                    } else {
                        (l.to.as_str(), l.from.as_str())
                    };
                    if let Some(first) = pairs.insert(pair, i) {
                        return Err(self.error_at(
                            &link.key("to"),
                            format!(
                                "topology.links[{i}] joins \"{}\" and \"{}\", as topology.links[{first}] does: \
                                 parallel links are not supported (their directions would share \
                                 the names \"{}->{}\" and \"{}->{}\"); give the pair one link",
                                l.from, l.to, l.from, l.to, l.to, l.from
                            ),
                        ));
                    }
                    for (key, end) in [("from", &l.from), ("to", &l.to)] {
                        if !set.contains(end.as_str()) {
                            return Err(self.error_at(
                                &link.key(key),
                                format!("topology.links[{i}].{key} = \"{end}\" is not in topology.nodes"),
                            ));
                        }
                    }
                    if l.from == l.to {
                        return Err(self.error_at(
                            &link.key("to"),
                            format!("topology.links[{i}] joins \"{}\" to itself", l.from),
                        ));
                    }
                }
                self.links()?;
                Some(set)
            }
        };
        Ok(nodes)
    }

    /// The checks of flow group `i`; `nodes` are a graph's node names, `names` the
    /// group names seen so far.
    fn validate_flow<'a>(
        &'a self,
        i: usize,
        nodes: Option<&HashSet<&str>>,
        names: &mut HashSet<&'a str>,
    ) -> Result<(), ScenarioError> {
        let spec = self.file.flows[i].get_ref();
        let at = |key: &str, msg: String| self.flow_error(i, key, msg);
        if spec.name.is_empty() {
            return Err(self.error_at(
                &KeyPath::top("flows").index(i).key("name"),
                format!("flows[{i}] needs a non-empty name"),
            ));
        }
        let name_path = KeyPath::top("flows").index(i).key("name");
        self.check_name(&name_path, &format!("flows[{i}].name"), &spec.name, false)?;
        if !names.insert(spec.name.as_str()) {
            return Err(at(
                "name",
                format!("the group name \"{}\" is used twice", spec.name),
            ));
        }
        let kind = spec.kind();
        if spec.count == 0 {
            return Err(at("count", "count = 0 must be at least 1".into()));
        }
        {
            let ps = spec.packet_size();
            // A TCP segment of 40 bytes is all headers (IPv4 20 + TCP 20): it would
            // carry no data, and its sequence numbers (in bytes) would not advance.
            let (least, why) = if kind.is_tcp() {
                (
                    TCP_HEADERS + 1,
                    " (the TCP/IP headers are 40 bytes; a segment carries at least 1 byte of data)",
                )
            } else if kind == FlowKind::Probe {
                (
                    PROBE_HEADERS,
                    " (a probe is an echo request: IPv4 20 + ICMP 8 bytes of headers)",
                )
            } else {
                (40, "")
            };
            if !(least..=65_535).contains(&ps) {
                return Err(at(
                    "packet_size",
                    format!("packet_size = {ps} must be between {least} and 65535 bytes{why}"),
                ));
            }
        }
        self.validate_flow_keys(i)?;
        self.validate_flow_ends(i, nodes)
    }

    /// A name the results print (a scenario's, a flow group's) or, for a node
    /// (`file`), one that also becomes part of a file name (`a-b.pcap`) and of a
    /// link's name (`a->b`): no control characters, which would reach a terminal
    /// as escape sequences; for a node also no path separator and no `->`.
    fn check_name(
        &self,
        path: &KeyPath,
        what: &str,
        name: &str,
        file: bool,
    ) -> Result<(), ScenarioError> {
        if let Some(c) = name.chars().find(|c| c.is_control()) {
            return Err(self.error_at(
                path,
                format!(
                    "{what} = {name:?} contains the control character U+{:04X}; names are \
                     printed in reports",
                    c as u32
                ),
            ));
        }
        if file {
            let bad = if name.is_empty() {
                Some("must not be empty")
            } else if name.contains(['/', '\\']) {
                Some("must not contain / or \\ (node names become file names, as in a-b.pcap)")
            } else if name.contains("->") {
                Some("must not contain -> (link directions are named a->b)")
            } else {
                None
            };
            if let Some(rule) = bad {
                return Err(self.error_at(path, format!("{what} = {name:?} {rule}")));
            }
        }
        Ok(())
    }

    /// An error about `key` of flow group `i`, at its line (the group's when the
    /// key is not written).
    pub(crate) fn flow_error(&self, i: usize, key: &str, msg: String) -> ScenarioError {
        let name = &self.file.flows[i].get_ref().name;
        self.error_at(
            &KeyPath::top("flows").index(i).key(key),
            format!("flows[{i}] ({name}): {msg}"),
        )
    }

    /// The keys of flow group `i`: its kind's own, then those every kind takes.
    fn validate_flow_keys(&self, i: usize) -> Result<(), ScenarioError> {
        let spec = self.file.flows[i].get_ref();
        ecn_rules(spec)
            .and_then(|()| traffic_rules(&spec.traffic))
            .and_then(|()| sending_rules(spec))
            .map_err(|(key, msg)| self.flow_error(i, key, msg))
    }

    /// Flow group `i`'s ends: a graph's nodes, or nothing in a dumbbell.
    fn validate_flow_ends(
        &self,
        i: usize,
        nodes: Option<&HashSet<&str>>,
    ) -> Result<(), ScenarioError> {
        let spec = self.file.flows[i].get_ref();
        let at = |key: &str, msg: String| self.flow_error(i, key, msg);
        match nodes {
            None => {
                for (key, set) in [
                    ("from", spec.from.is_some()),
                    ("to", spec.to.is_some()),
                    ("path", spec.path.is_some()),
                ] {
                    if set {
                        return Err(at(
                            key,
                            format!(
                                "{key} does not apply to a dumbbell (each flow has its own hosts)"
                            ),
                        ));
                    }
                }
                if spec.access_rate.is_some_and(|r| r.bps() == 0) {
                    return Err(at("access_rate", "access_rate must be positive".into()));
                }
            }
            Some(nodes) => {
                for (key, end) in [("from", &spec.from), ("to", &spec.to)] {
                    match end {
                        None => {
                            return Err(at(
                                key,
                                format!("a flow in a graph needs `{key}` (a node name)"),
                            ))
                        }
                        Some(n) if !nodes.contains(n.as_str()) => {
                            return Err(at(
                                key,
                                format!("{key} = \"{n}\" is not a node of the topology"),
                            ));
                        }
                        _ => {}
                    }
                }
                if spec.from == spec.to {
                    return Err(at("to", "from and to are the same node".into()));
                }
                for (key, set) in [
                    ("access_delay", spec.access_delay.is_some()),
                    ("access_rate", spec.access_rate.is_some()),
                ] {
                    if set {
                        return Err(at(
                            key,
                            format!("{key} applies to dumbbell topologies only"),
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}

/// A group's `host` and `receiver_host`: names, without `#` (kept for the
/// hosts of flows that name none, `group#i`); the key and why, if not.
fn host_names(spec: &super::FlowSpec) -> Result<(), (&'static str, String)> {
    for (key, host) in [("host", &spec.host), ("receiver_host", &spec.receiver_host)] {
        if let Some(h) = host.as_ref().filter(|h| h.is_empty() || h.contains('#')) {
            return Err((
                key,
                format!(
                    "{key} = {h:?} must be a non-empty name without '#' (a flow \
                     that names no host is reported as the host \"group#i\")"
                ),
            ));
        }
    }
    Ok(())
}

/// A flow group's ECN against its variant: DCTCP and Prague need it, BBR is no
/// L4S sender.
fn ecn_rules(spec: &super::FlowSpec) -> Result<(), (&'static str, String)> {
    if let Some(v) = spec.variant().filter(|v| v.is_scalable()) {
        if spec.ecn == Some(EcnSetting::Off) {
            let name = if v == Variant::Dctcp {
                "dctcp"
            } else {
                "prague"
            };
            return Err((
                "ecn",
                format!(
                    "ecn = false: variant = \"{name}\" responds to ECN marks and needs \
                     ecn (true, \"ect0\" or \"ect1\"; on when not written)"
                ),
            ));
        }
    }
    if let Some(v) = spec.variant().filter(|v| v.is_bbr()) {
        if spec.ecn == Some(EcnSetting::Ect1) {
            return Err((
                "ecn",
                format!(
                    "ecn = \"ect1\": variant = \"{}\" does not respond to marks as \
                     L4S (RFC 9331) requires of ECT(1) senders; use ect0 or false",
                    v.name()
                ),
            ));
        }
    }
    Ok(())
}

/// The keys of a group's own kind of traffic.
fn traffic_rules(traffic: &Traffic) -> Result<(), (&'static str, String)> {
    match traffic {
        Traffic::Tcp(k) => k.rules()?,
        Traffic::Web(k) => {
            k.rules()?;
            match k.object_size {
                None => {
                    return Err((
                        "object_size",
                        "kind = \"web\" needs object_size (packets per object)".into(),
                    ))
                }
                Some(0) => {
                    return Err(("object_size", "object_size = 0 must be at least 1".into()))
                }
                _ => {}
            }
        }
        Traffic::Cbr(_) | Traffic::Poisson(_) => {}
        Traffic::Probe(k) => {
            if k.interval.is_zero() {
                return Err((
                    "interval",
                    "interval = 0s: probes need a positive interval".into(),
                ));
            }
        }
        Traffic::Onoff(k) => {
            for (key, d) in [("on", k.on), ("off", k.off)] {
                if d.is_none_or(|d| d.is_zero()) {
                    return Err((
                        key,
                        "kind = \"onoff\" needs positive on and off mean durations".into(),
                    ));
                }
            }
            if k.distribution != Distribution::Pareto && k.shape.is_some() {
                return Err((
                    "shape",
                    "shape applies to distribution = \"pareto\" only".into(),
                ));
            }
            if k.distribution == Distribution::Pareto
                && k.shape.is_none_or(|s| !(s > 1.0 && s <= 1000.0))
            {
                return Err((
                    "shape",
                    "a Pareto on/off source needs 1 < shape <= 1000".into(),
                ));
            }
        }
    }
    Ok(())
}

/// What every kind takes: a sending rate and its schedule (open-loop kinds),
/// the aggregate, the hosts, the weight, and start and stop.
fn sending_rules(spec: &super::FlowSpec) -> Result<(), (&'static str, String)> {
    let kind = spec.kind();
    if !kind.is_tcp() && kind != FlowKind::Probe {
        match spec.rate() {
            None => return Err(("rate", format!("kind = \"{}\" needs a rate", kind.name()))),
            Some(r) if r.bps() == 0 && spec.schedule().is_none() => {
                return Err(("rate", "rate must be positive".into()));
            }
            _ => {}
        }
    }
    if let Some(steps) = spec.schedule() {
        if steps.windows(2).any(|w| w[0].at >= w[1].at) {
            return Err(("schedule", "schedule times must increase".into()));
        }
    }
    if let Some(a) = spec.aggregate {
        if a >= OWN_AGGREGATE {
            return Err((
                "aggregate",
                format!("aggregate = {a} must be below 2^31 (2147483648)"),
            ));
        }
    }
    host_names(spec)?;
    let w = spec.weight;
    if !(w > 0.0 && w <= 1e9) {
        return Err((
            "weight",
            format!("weight = {w} must be positive and at most 1e9"),
        ));
    }
    if let Some(stop) = spec.stop {
        let start = spec.start;
        if stop <= start {
            return Err((
                "stop",
                format!("stop = {stop} must be after start = {start}"),
            ));
        }
    }
    Ok(())
}
