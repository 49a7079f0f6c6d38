//! The checks a scenario passes before anything is built: every error names the
//! key and its line.

use super::{FlowKind, Scenario, ScenarioError, Topology};
use crate::udp::Distribution;

impl Scenario {
    pub(super) fn validate(&self) -> Result<(), ScenarioError> {
        let f = &self.file;
        if f.duration.is_zero() {
            return Err(self.error("duration must be positive".into()));
        }
        if f.warmup >= f.duration {
            return Err(self.error(format!(
                "warmup = {} must be shorter than duration = {}",
                f.warmup, f.duration
            )));
        }
        if f.flows.is_empty() {
            return Err(self.error("a scenario needs at least one [[flows]] group".into()));
        }
        let topo_span = f.topology.span();
        let node_names: Option<Vec<&str>> = match f.topology.get_ref() {
            Topology::Dumbbell {
                access, bottleneck, ..
            } => {
                for (k, l) in [("access", access), ("bottleneck", bottleneck)] {
                    if l.rate.bps() == 0 {
                        return Err(self.error_in(
                            Some(topo_span.clone()),
                            Some(k),
                            format!("topology.{k}.rate must be positive"),
                        ));
                    }
                }
                None
            }
            Topology::Graph { nodes, links } => {
                let mut sorted: Vec<&str> = nodes.iter().map(String::as_str).collect();
                sorted.sort_unstable();
                if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
                    return Err(self.error_in(
                        Some(topo_span.clone()),
                        Some("nodes"),
                        format!("topology.nodes names \"{}\" twice", w[0]),
                    ));
                }
                for (i, l) in links.iter().enumerate() {
                    for end in [&l.from, &l.to] {
                        if !nodes.contains(end) {
                            return Err(self.error_in(
                                Some(topo_span.clone()),
                                Some("links"),
                                format!("topology.links[{i}] joins node \"{end}\", which is not in topology.nodes"),
                            ));
                        }
                    }
                    if l.from == l.to {
                        return Err(self.error_in(
                            Some(topo_span.clone()),
                            Some("links"),
                            format!("topology.links[{i}] joins \"{}\" to itself", l.from),
                        ));
                    }
                    if l.rate.bps() == 0 {
                        return Err(self.error_in(
                            Some(topo_span.clone()),
                            Some("links"),
                            format!("topology.links[{i}].rate must be positive"),
                        ));
                    }
                }
                Some(nodes.iter().map(String::as_str).collect())
            }
        };
        let mut names: Vec<&str> = Vec::new();
        for (i, g) in f.flows.iter().enumerate() {
            let span = g.span();
            let spec = g.get_ref();
            let at = |key: &str, msg: String| {
                self.error_in(
                    Some(span.clone()),
                    Some(key),
                    format!("flows[{i}] ({}): {msg}", spec.name),
                )
            };
            if spec.name.is_empty() {
                return Err(self.error_in(
                    Some(span.clone()),
                    Some("name"),
                    format!("flows[{i}] needs a non-empty name"),
                ));
            }
            if names.contains(&spec.name.as_str()) {
                return Err(at(
                    "name",
                    format!("the group name \"{}\" is used twice", spec.name),
                ));
            }
            names.push(&spec.name);
            let Some(kind) = spec.kind else {
                return Err(at(
                    "name",
                    "needs kind = \"tcp\", \"web\", \"cbr\", \"poisson\" or \"onoff\"".into(),
                ));
            };
            if spec.count == Some(0) {
                return Err(at("count", "count = 0 must be at least 1".into()));
            }
            if let Some(ps) = spec.packet_size {
                if !(40..=65_535).contains(&ps) {
                    return Err(at(
                        "packet_size",
                        format!("packet_size = {ps} must be between 40 and 65535 bytes"),
                    ));
                }
            }
            // Keys that belong to other kinds are mistakes, not silently ignored.
            let tcp_keys = [
                ("variant", spec.variant.is_some()),
                ("max_window", spec.max_window.is_some()),
                ("initial_window", spec.initial_window.is_some()),
                ("min_rto", spec.min_rto.is_some()),
                ("delayed_ack", spec.delayed_ack.is_some()),
                ("counting", spec.counting.is_some()),
            ];
            let web_keys = [
                ("object_size", spec.object_size.is_some()),
                ("think", spec.think.is_some()),
            ];
            let udp_keys = [
                ("rate", spec.rate.is_some()),
                ("schedule", spec.schedule.is_some()),
            ];
            let onoff_keys = [
                ("on", spec.on.is_some()),
                ("off", spec.off.is_some()),
                ("distribution", spec.distribution.is_some()),
                ("shape", spec.shape.is_some()),
            ];
            let allowed = |group: &[(&str, bool)], ok: bool| -> Result<(), ScenarioError> {
                match group.iter().find(|(_, set)| *set) {
                    Some((key, _)) if !ok => Err(at(
                        key,
                        format!("{key} does not apply to kind = \"{}\"", kind.name()),
                    )),
                    _ => Ok(()),
                }
            };
            allowed(&tcp_keys, kind.is_tcp())?;
            allowed(&web_keys, kind == FlowKind::Web)?;
            allowed(&udp_keys, !kind.is_tcp())?;
            allowed(&onoff_keys, kind == FlowKind::Onoff)?;
            if !kind.is_tcp() {
                match spec.rate {
                    None => {
                        return Err(at(
                            "name",
                            format!("kind = \"{}\" needs a rate", kind.name()),
                        ))
                    }
                    Some(r) if r.bps() == 0 && spec.schedule.is_none() => {
                        return Err(at("rate", "rate must be positive".into()));
                    }
                    _ => {}
                }
            }
            if let Some(steps) = &spec.schedule {
                if steps.windows(2).any(|w| w[0].at >= w[1].at) {
                    return Err(at("schedule", "schedule times must increase".into()));
                }
            }
            if kind == FlowKind::Web && spec.object_size.is_none() {
                return Err(at(
                    "name",
                    "kind = \"web\" needs object_size (packets per object)".into(),
                ));
            }
            if spec.object_size == Some(0) {
                return Err(at(
                    "object_size",
                    "object_size = 0 must be at least 1".into(),
                ));
            }
            if matches!(spec.max_window, Some(0)) {
                return Err(at("max_window", "max_window = 0 must be at least 1".into()));
            }
            if matches!(spec.initial_window, Some(0)) {
                return Err(at(
                    "initial_window",
                    "initial_window = 0 must be at least 1".into(),
                ));
            }
            if kind == FlowKind::Onoff {
                if spec.on.is_none_or(|d| d.is_zero()) || spec.off.is_none_or(|d| d.is_zero()) {
                    return Err(at(
                        "name",
                        "kind = \"onoff\" needs positive on and off mean durations".into(),
                    ));
                }
                if spec.distribution == Some(Distribution::Pareto)
                    && spec.shape.is_none_or(|s| s.is_nan() || s <= 1.0)
                {
                    return Err(at("shape", "a Pareto on/off source needs shape > 1".into()));
                }
            }
            if let (Some(start), Some(stop)) = (spec.start, spec.stop) {
                if stop <= start {
                    return Err(at(
                        "stop",
                        format!("stop = {stop} must be after start = {start}"),
                    ));
                }
            }
            match &node_names {
                None => {
                    for (key, set) in [("from", spec.from.is_some()), ("to", spec.to.is_some())] {
                        if set {
                            return Err(at(key, format!("{key} does not apply to a dumbbell (each flow has its own hosts)")));
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
                                    "name",
                                    format!("a flow in a graph needs `{key}` (a node name)"),
                                ))
                            }
                            Some(n) if !nodes.contains(&n.as_str()) => {
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
        }
        self.validate_monitor()
    }
}
