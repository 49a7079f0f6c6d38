//! Scenario files: TOML in, a validated [`Scenario`] out.
//!
//! Every error names where it is: a TOML syntax error or an unknown key carries the
//! line and column the parser saw; a bad value found later (`min_th > max_th`, a
//! flow to a node that does not exist) names the table, the key and its line. The
//! example in the README is the contract for key names.

use crate::tcp::{Counting, Variant};
use crate::udp::Distribution;
use aqm::{Dur, QdiscSpec, Rate};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fmt;
use std::ops::Range;
use toml::Spanned;

/// A scenario problem, with where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    /// The file path, or `<dict>` for a scenario given as a Python dict.
    pub origin: String,
    /// 1-based line, when known.
    pub line: Option<usize>,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{}: {}", self.origin, l, self.message),
            None => write!(f, "{}: {}", self.origin, self.message),
        }
    }
}

impl std::error::Error for ScenarioError {}

fn one() -> u64 {
    1
}
fn yes() -> bool {
    true
}

/// One scenario: what to simulate, for how long, with which seed.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Simulated time.
    pub duration: Dur,
    /// Discarded from every measurement.
    #[serde(default)]
    pub warmup: Dur,
    #[serde(default = "one")]
    pub seed: u64,
    pub topology: Spanned<Topology>,
    /// The bottleneck's forward direction (dumbbell), or the default for every
    /// link's forward direction (graph).
    #[serde(default)]
    pub qdisc: Option<Spanned<QdiscSpec>>,
    #[serde(default)]
    pub monitor: Monitor,
    pub flows: Vec<Spanned<FlowSpec>>,
}

/// What to record besides the totals.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Monitor {
    /// Period of the queue-length samples of monitored links (0: none).
    pub queue_interval: Dur,
}

impl Default for Monitor {
    fn default() -> Self {
        Monitor {
            queue_interval: Dur::from_millis(100),
        }
    }
}

/// A link's rate and one-way propagation delay.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub rate: Rate,
    pub delay: Dur,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Topology {
    /// Each flow gets its own sender and receiver, on access links to two routers
    /// (`left`, `right`) joined by the bottleneck.
    Dumbbell {
        access: LinkSpec,
        bottleneck: LinkSpec,
        /// The bottleneck's reverse direction (ACKs); DropTail by default.
        #[serde(default)]
        reverse_qdisc: Option<QdiscSpec>,
    },
    /// Explicit nodes and links; flows name their end nodes.
    Graph {
        nodes: Vec<String>,
        links: Vec<GraphLink>,
    },
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GraphLink {
    pub from: String,
    pub to: String,
    pub rate: Rate,
    pub delay: Dur,
    /// Direction from -> to; defaults to the scenario's `[qdisc]`, else DropTail.
    #[serde(default)]
    pub qdisc: Option<QdiscSpec>,
    /// Direction to -> from; DropTail by default.
    #[serde(default)]
    pub reverse_qdisc: Option<QdiscSpec>,
    /// Report this link's queues and per-flow throughput.
    #[serde(default = "yes")]
    pub monitor: bool,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FlowKind {
    /// Bulk TCP (FTP).
    Tcp,
    /// TCP sending objects of `object_size` packets, back to slow start each time.
    Web,
    /// Constant bit rate UDP.
    Cbr,
    /// Poisson UDP.
    Poisson,
    /// On/off UDP.
    Onoff,
}

impl FlowKind {
    pub fn name(self) -> &'static str {
        match self {
            FlowKind::Tcp => "tcp",
            FlowKind::Web => "web",
            FlowKind::Cbr => "cbr",
            FlowKind::Poisson => "poisson",
            FlowKind::Onoff => "onoff",
        }
    }
    pub fn is_tcp(self) -> bool {
        matches!(self, FlowKind::Tcp | FlowKind::Web)
    }
}

/// A rate change of a UDP source.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateStep {
    pub at: Dur,
    pub rate: Rate,
}

/// A group of identical flows (`[[flows]]`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    pub name: String,
    pub kind: Option<FlowKind>,
    pub count: Option<u32>,
    pub from: Option<String>,
    pub to: Option<String>,
    pub packet_size: Option<u32>,
    pub start: Option<Dur>,
    pub start_spread: Option<Dur>,
    pub stop: Option<Dur>,
    pub aggregate: Option<u32>,
    pub access_delay: Option<Dur>,
    pub access_rate: Option<Rate>,
    pub variant: Option<Variant>,
    pub max_window: Option<u32>,
    pub initial_window: Option<u32>,
    pub min_rto: Option<Dur>,
    pub delayed_ack: Option<bool>,
    /// ECN-capable: TCP reacts to CE marks; a UDP flow's packets are ECT and it
    /// ignores marks (an unresponsive flow a marking queue cannot slow down).
    pub ecn: Option<bool>,
    pub counting: Option<Counting>,
    pub object_size: Option<u32>,
    pub think: Option<Dur>,
    pub rate: Option<Rate>,
    pub schedule: Option<Vec<RateStep>>,
    pub on: Option<Dur>,
    pub off: Option<Dur>,
    pub distribution: Option<Distribution>,
    pub shape: Option<f64>,
}

/// A parsed scenario and the text it came from (for error lines).
#[derive(Clone, Debug)]
pub struct Scenario {
    pub file: ScenarioFile,
    pub origin: String,
    source: String,
    lines_known: bool,
}

/// 1-based line of byte offset `at` in `src`.
fn line_at(src: &str, at: usize) -> usize {
    src[..at.min(src.len())]
        .bytes()
        .filter(|&b| b == b'\n')
        .count()
        + 1
}

/// The line of `key = ...` inside `span` of `src`, or the span's first line.
fn key_line(src: &str, span: Range<usize>, key: Option<&str>) -> usize {
    let start = span.start.min(src.len());
    let end = span.end.min(src.len());
    let mut offset = start;
    if let Some(key) = key {
        let mut pos = start;
        for l in src[start..end].split_inclusive('\n') {
            let t = l.trim_start();
            if t.starts_with(key) && t[key.len()..].trim_start().starts_with('=') {
                offset = pos;
                break;
            }
            pos += l.len();
        }
    }
    line_at(src, offset)
}

/// Where `offset` falls in TOML text written by `toml::to_string` (a dict's
/// scenario): the table around it as a Python user would name it, `qdisc`,
/// `topology.access` or `flows[1]`; `None` at the top level.
fn table_path(src: &str, offset: usize) -> Option<String> {
    let mut current: Option<String> = None;
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut pos = 0;
    for l in src.split_inclusive('\n') {
        if pos > offset {
            break;
        }
        let t = l.trim();
        if let Some(name) = t.strip_prefix("[[").and_then(|r| r.strip_suffix("]]")) {
            let n = seen.entry(name.to_string()).or_insert(0);
            current = Some(format!("{name}[{n}]"));
            *n += 1;
        } else if let Some(name) = t.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            current = Some(name.to_string());
        }
        pos += l.len();
    }
    current
}

/// An error's place: the line of `key` (or of its table) in a file, or for a
/// dict, whose lines mean nothing to its author, the table's name in the message.
fn place(
    src: &str,
    span: Option<Range<usize>>,
    key: Option<&str>,
    lines_known: bool,
    message: String,
) -> (Option<usize>, String) {
    match span {
        Some(span) if lines_known => (Some(key_line(src, span, key)), message),
        Some(span) => match table_path(src, span.start.min(src.len())) {
            // Checks of a table's values already name it ("qdisc.min_th = ...").
            Some(table) if message.starts_with(table.split('[').next().unwrap_or("")) => {
                (None, message)
            }
            Some(table) => (None, format!("in {table}: {message}")),
            None => (None, message),
        },
        None => (None, message),
    }
}

impl Scenario {
    /// Parses a scenario from TOML text. `origin` names it in errors.
    pub fn from_toml(text: &str, origin: &str) -> Result<Scenario, ScenarioError> {
        Self::parse(text, origin, true)
    }

    /// Parses a scenario given as a JSON object (what the Python bindings pass for a
    /// dict): the same keys and checks as TOML, errors without line numbers.
    pub fn from_json(json: &str) -> Result<Scenario, ScenarioError> {
        let origin = "<dict>";
        let value: toml::Value = serde_json::from_str(json).map_err(|e| ScenarioError {
            origin: origin.into(),
            line: None,
            message: e.to_string(),
        })?;
        let text = toml::to_string(&value).map_err(|e| ScenarioError {
            origin: origin.into(),
            line: None,
            message: e.to_string(),
        })?;
        Self::parse(&text, origin, false)
    }

    /// Reads and parses a scenario file.
    pub fn from_path(path: &std::path::Path) -> Result<Scenario, ScenarioError> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
            origin: origin.clone(),
            line: None,
            message: format!("cannot read scenario file: {e}"),
        })?;
        Self::from_toml(&text, &origin)
    }

    fn parse(text: &str, origin: &str, lines_known: bool) -> Result<Scenario, ScenarioError> {
        let file: ScenarioFile = toml::from_str(text).map_err(|e| {
            let message = e.message().trim().to_string();
            // serde reports an unknown key inside a tagged table at the table; point
            // at the key itself.
            let key = message
                .strip_prefix("unknown field `")
                .and_then(|r| r.split('`').next())
                .map(str::to_string);
            let (line, message) = place(text, e.span(), key.as_deref(), lines_known, message);
            ScenarioError {
                origin: origin.to_string(),
                line,
                message,
            }
        })?;
        let s = Scenario {
            file,
            origin: origin.to_string(),
            source: text.to_string(),
            lines_known,
        };
        s.validate()?;
        Ok(s)
    }

    /// An error at the line of `key` inside the table at `span` (or the table's own
    /// line when the key is not written there).
    pub fn error_in(
        &self,
        span: Option<Range<usize>>,
        key: Option<&str>,
        message: String,
    ) -> ScenarioError {
        let (line, message) = place(&self.source, span, key, self.lines_known, message);
        ScenarioError {
            origin: self.origin.clone(),
            line,
            message,
        }
    }

    pub fn error(&self, message: String) -> ScenarioError {
        ScenarioError {
            origin: self.origin.clone(),
            line: None,
            message,
        }
    }

    /// Sets the seed (the CLI's `--seed`).
    pub fn set_seed(&mut self, seed: u64) {
        self.file.seed = seed;
    }

    /// Sets the duration and the warm-up together (`--duration`, `--warmup`), then
    /// re-checks the scenario.
    pub fn set_times(&mut self, duration: Dur, warmup: Dur) -> Result<(), ScenarioError> {
        self.file.duration = duration;
        self.file.warmup = warmup;
        self.validate()
    }

    /// Sets the duration (the CLI's `--duration`), re-checking the warm-up.
    pub fn set_duration(&mut self, d: Dur) -> Result<(), ScenarioError> {
        self.file.duration = d;
        self.validate()
    }

    fn validate(&self) -> Result<(), ScenarioError> {
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
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = include_str!("../../../scenarios/choke-fig3.toml");

    fn err(text: &str) -> String {
        Scenario::from_toml(text, "s.toml").unwrap_err().to_string()
    }

    #[test]
    fn the_readme_example_parses() {
        let s = Scenario::from_toml(EXAMPLE, "choke-fig3.toml").unwrap();
        assert_eq!(s.file.flows.len(), 2);
        assert_eq!(s.file.duration, Dur::from_secs(100));
    }

    #[test]
    fn a_dicts_errors_name_the_table_instead_of_a_line() {
        let json = |qdisc: &str, rate_key: &str| {
            format!(
                r#"{{"name": "d", "duration": "10s", "warmup": "1s",
                "topology": {{"kind": "dumbbell", "access": {{"rate": "10Mbps", "delay": "1ms"}},
                              "bottleneck": {{"rate": "1Mbps", "delay": "1ms"}}}},
                "qdisc": {qdisc},
                "flows": [{{"name": "a", "kind": "tcp"}}, {{"name": "b", "kind": "cbr", "{rate_key}": "1Mbps"}}]}}"#
            )
        };
        let e = Scenario::from_json(&json(r#"{"kind": "red", "candidates": 2}"#, "rate"))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("<dict>: in qdisc: unknown field `candidates`"),
            "{e}"
        );
        let e = Scenario::from_json(&json(r#"{"kind": "red"}"#, "rat"))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("<dict>: in flows[1]: unknown field `rat`"),
            "{e}"
        );
    }

    #[test]
    fn unknown_keys_are_named_with_their_line() {
        let text = EXAMPLE.replace("max_th = 200", "max_th = 200\nmax_thresh = 3");
        let e = err(&text);
        assert!(e.starts_with("s.toml:"), "{e}");
        assert!(e.contains("unknown field `max_thresh`"), "{e}");
        let line: usize = e.split(':').nth(1).unwrap().parse().unwrap();
        assert_eq!(text.lines().nth(line - 1).unwrap(), "max_thresh = 3");
    }

    #[test]
    fn negative_rates_are_errors_with_a_line() {
        let e = err(&EXAMPLE.replace("rate = \"2Mbps\"", "rate = \"-2Mbps\""));
        assert!(e.contains("must not be negative"), "{e}");
        assert!(e.starts_with("s.toml:"), "{e}");
    }

    #[test]
    fn keys_of_another_kind_are_rejected() {
        let e = err(&EXAMPLE.replace("rate = \"2Mbps\"", "rate = \"2Mbps\"\nvariant = \"reno\""));
        assert!(
            e.contains("flows[1] (udp): variant does not apply to kind = \"cbr\""),
            "{e}"
        );
    }

    #[test]
    fn graph_flows_must_name_existing_nodes() {
        let text = r#"
name = "g"
duration = "1s"
[topology]
kind = "graph"
nodes = ["a", "b"]
links = [{ from = "a", to = "b", rate = "1Mbps", delay = "1ms" }]
[[flows]]
name = "x"
kind = "tcp"
from = "a"
to = "c"
"#;
        let e = err(text);
        assert!(e.contains("to = \"c\" is not a node"), "{e}");
        assert!(e.starts_with("s.toml:12:"), "{e}");
    }
}
