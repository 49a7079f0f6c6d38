//! Scenario files: TOML in, a validated [`Scenario`] out.
//!
//! Every error names where it is: the key path (`topology.links[1].qdisc.limit`)
//! and, in a file, the line of that key (`place.rs` finds it), whether the parser
//! found it (a syntax error, a wrong type or unit, an unknown key) or a check made
//! later (`min_th > max_th`, a flow to a node that does not exist). The example in
//! the README is the contract for key names.

use crate::tcp::{Counting, Variant};
use crate::udp::Distribution;
use aqm::{Dur, QdiscSpec, Rate};
use serde::{Deserialize, Serialize};
use toml::Spanned;

mod monitor;
mod place;
mod qdisc_table;
mod validate;

pub use monitor::Monitor;

use place::{blame_qdisc_key, is_qdisc, line_at, value_at, Spans};
pub use place::{KeyPath, ScenarioError, Step};

/// A flow without an `aggregate` is an aggregate of its own: `OWN_AGGREGATE + id`,
/// apart from every id a scenario may give.
pub const OWN_AGGREGATE: u32 = 1 << 31;

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
    #[serde(default, deserialize_with = "qdisc_table::spanned")]
    pub qdisc: Option<Spanned<QdiscSpec>>,
    /// What to record besides the totals.
    #[serde(default)]
    pub monitor: Option<Spanned<Monitor>>,
    pub flows: Vec<Spanned<FlowSpec>>,
}

/// A link's rate and one-way propagation delay.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub rate: Rate,
    pub delay: Dur,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(
    tag = "kind",
    rename_all = "snake_case",
    deny_unknown_fields,
    try_from = "RawTopology"
)]
pub enum Topology {
    /// Each flow gets its own sender and receiver, on access links to two routers
    /// (`left`, `right`) joined by the bottleneck.
    Dumbbell {
        access: LinkSpec,
        bottleneck: LinkSpec,
        /// The bottleneck's reverse direction (ACKs); DropTail by default.
        #[serde(default, deserialize_with = "qdisc_table::plain")]
        reverse_qdisc: Option<QdiscSpec>,
    },
    /// Explicit nodes and links; flows name their end nodes.
    Graph {
        nodes: Vec<String>,
        links: Vec<GraphLink>,
    },
}

/// `[topology]` as written: every key of every kind, read as a plain struct.
/// serde reads an internally tagged enum by buffering the table first, which loses
/// where in the text each value was; read this way, a bad `access.rate` or
/// `links[2].delay` keeps its own line.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTopology {
    kind: TopologyKind,
    access: Option<LinkSpec>,
    bottleneck: Option<LinkSpec>,
    reverse_qdisc: Option<QdiscSpec>,
    nodes: Option<Vec<String>>,
    links: Option<Vec<GraphLink>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum TopologyKind {
    Dumbbell,
    Graph,
}

impl TryFrom<RawTopology> for Topology {
    type Error = String;

    fn try_from(raw: RawTopology) -> Result<Topology, String> {
        // Worded as serde words them, so the error finder puts them at the key.
        let not_here = |key: &str, kind: &str, keys: &str| {
            format!("unknown field `{key}` for kind = \"{kind}\" (it takes {keys})")
        };
        let missing = |key: &str| format!("missing field `{key}`");
        match raw.kind {
            TopologyKind::Dumbbell => {
                let keys = "access, bottleneck, reverse_qdisc";
                if raw.nodes.is_some() {
                    return Err(not_here("nodes", "dumbbell", keys));
                }
                if raw.links.is_some() {
                    return Err(not_here("links", "dumbbell", keys));
                }
                Ok(Topology::Dumbbell {
                    access: raw.access.ok_or_else(|| missing("access"))?,
                    bottleneck: raw.bottleneck.ok_or_else(|| missing("bottleneck"))?,
                    reverse_qdisc: raw.reverse_qdisc,
                })
            }
            TopologyKind::Graph => {
                let keys = "nodes, links";
                for (key, set) in [
                    ("access", raw.access.is_some()),
                    ("bottleneck", raw.bottleneck.is_some()),
                    ("reverse_qdisc", raw.reverse_qdisc.is_some()),
                ] {
                    if set {
                        return Err(not_here(key, "graph", keys));
                    }
                }
                Ok(Topology::Graph {
                    nodes: raw.nodes.ok_or_else(|| missing("nodes"))?,
                    links: raw.links.ok_or_else(|| missing("links"))?,
                })
            }
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GraphLink {
    pub from: String,
    pub to: String,
    pub rate: Rate,
    pub delay: Dur,
    /// Direction from -> to; defaults to the scenario's `[qdisc]`, else DropTail.
    #[serde(default, deserialize_with = "qdisc_table::plain")]
    pub qdisc: Option<QdiscSpec>,
    /// Direction to -> from; DropTail by default.
    #[serde(default, deserialize_with = "qdisc_table::plain")]
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
    /// The aggregate the group's flows belong to (aggregate scheduling); each
    /// flow is an aggregate of its own when absent. Below 2^31.
    pub aggregate: Option<u32>,
    /// Each flow's scheduling weight (fair queueing); 1 when absent.
    pub weight: Option<f64>,
    pub access_delay: Option<Dur>,
    pub access_rate: Option<Rate>,
    pub variant: Option<Variant>,
    pub max_window: Option<u32>,
    pub initial_window: Option<u32>,
    pub min_rto: Option<Dur>,
    pub delayed_ack: Option<bool>,
    /// How long a delayed ACK waits for a second packet; needs `delayed_ack`.
    pub delack_timeout: Option<Dur>,
    /// RFC 3042 limited transmit.
    pub limited_transmit: Option<bool>,
    /// ECN-capable: TCP reacts to CE marks; a UDP flow's packets are ECT and it
    /// ignores marks (an unresponsive flow a marking queue cannot slow down).
    pub ecn: Option<bool>,
    pub counting: Option<Counting>,
    /// `variant = "cubic"` only: HyStart++ (RFC 9406) in the first slow start.
    pub hystart: Option<bool>,
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

    /// Reads and parses a scenario file (a regular file of at most
    /// [`crate::source::MAX_FILE_BYTES`]).
    pub fn from_path(path: &std::path::Path) -> Result<Scenario, ScenarioError> {
        let origin = path.display().to_string();
        let text = crate::source::read_file(path).map_err(|message| ScenarioError {
            origin: origin.clone(),
            line: None,
            message,
        })?;
        Self::from_toml(&text, &origin)
    }

    fn parse(text: &str, origin: &str, lines_known: bool) -> Result<Scenario, ScenarioError> {
        let file: ScenarioFile = toml::from_str(text).map_err(|e| {
            let message = match e.message().trim() {
                // The toml parser describes some syntax errors (a control character in
                // a comment or a string) with no words at all.
                "" => "invalid TOML: a control character, or a character TOML does not \
                       allow here"
                    .to_string(),
                m => m.to_string(),
            };
            let (line, message) = match e.span() {
                Some(span) => Self::place_parse_error(text, span, message, lines_known),
                None => (None, message),
            };
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

    /// The line and the message of an error the parser reported at `span`: the
    /// key it is about, found in the document, named in the message and, in a
    /// file, by its line.
    fn place_parse_error(
        text: &str,
        span: std::ops::Range<usize>,
        message: String,
        lines_known: bool,
    ) -> (Option<usize>, String) {
        let spans = Spans::new(text);
        let mut path = spans.path_of(&span);
        if path.is_empty() {
            // A syntax error (the document does not parse) or a top-level key:
            // the parser's own place.
            let line = lines_known.then(|| line_at(text, span.start));
            return (line, message);
        }
        // The key the error is about, under the table `path` names.
        let mut table = path.clone();
        let named = message
            .strip_prefix("unknown field `")
            .and_then(|r| r.split('`').next())
            .map(str::to_string);
        if let Some(key) = named {
            if path.0.last() == Some(&Step::Key(key.clone())) {
                table.0.pop();
            } else {
                path = path.key(&key);
            }
        } else if is_qdisc(&path) {
            // serde read the qdisc table whole (its `kind` picks the type): find
            // the key by reading each alone.
            let key = toml::from_str::<toml::Table>(text).ok().and_then(|root| {
                match value_at(&root, &path) {
                    Some(toml::Value::Table(t)) => blame_qdisc_key(t, &message),
                    _ => None,
                }
            });
            if let Some(key) = key {
                path = path.key(&key);
                table = path.clone();
            }
        }
        let line = if lines_known {
            spans.locate(&path).map(|s| line_at(text, s.start))
        } else {
            None
        };
        let line = line.or_else(|| lines_known.then(|| line_at(text, span.start)));
        let message = if table.is_empty() {
            message
        } else {
            format!("{table}: {message}")
        };
        (line, message)
    }

    /// An error about the key at `path`, at its line in a file (or the line of
    /// the deepest table of `path` that is written, when the key is not). The
    /// message names the key itself.
    pub fn error_at(&self, path: &KeyPath, message: String) -> ScenarioError {
        let line = if self.lines_known {
            Spans::new(&self.source)
                .locate(path)
                .map(|s| line_at(&self.source, s.start))
        } else {
            None
        };
        ScenarioError {
            origin: self.origin.clone(),
            line,
            message,
        }
    }

    /// An error about the scenario as a whole (no one key).
    pub fn error(&self, message: String) -> ScenarioError {
        ScenarioError {
            origin: self.origin.clone(),
            line: None,
            message,
        }
    }

    /// What a run of this scenario simulates, as JSON: the scenario with its
    /// defaults filled in, less what changes no packet: the name and description
    /// (labels), the seed (a sweep gives each run its own), and a `[qdisc]` that no
    /// link uses (a graph whose links each set their own). Two scenarios with
    /// equal values simulate the same thing under the same seed, so a sweep axis
    /// whose values all give one value changes nothing.
    pub fn simulated(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(&self.file).expect("a scenario serializes");
        let unused_qdisc = match self.file.topology.get_ref() {
            Topology::Dumbbell { .. } => false,
            Topology::Graph { links, .. } => links.iter().all(|l| l.qdisc.is_some()),
        };
        if let Some(m) = v.as_object_mut() {
            for key in ["name", "description", "seed"] {
                m.remove(key);
            }
            if unused_qdisc {
                m.remove("qdisc");
            }
        }
        v
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
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = include_str!("../../../../scenarios/choke-fig3.toml");

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
    fn a_dicts_errors_name_the_key_path_instead_of_a_line() {
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
            e.starts_with("<dict>: qdisc: unknown field `candidates`"),
            "{e}"
        );
        let e = Scenario::from_json(&json(r#"{"kind": "red"}"#, "rat"))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("<dict>: flows[1]: unknown field `rat`"),
            "{e}"
        );
        let e = Scenario::from_json(&json(r#"{"kind": "red", "limit": -5}"#, "rate"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "<dict>: qdisc.limit: invalid value: integer `-5`, expected u32"
        );
    }

    /// A dumbbell and a graph written with every kind of table TOML has: standard,
    /// inline, arrays of tables, a table inside an array of tables, inline arrays.
    const DUMBBELL: &str = r#"name = "d"
duration = "10s"
warmup = "1s"
seed = 1

[topology]
kind = "dumbbell"
access = { rate = "10Mbps", delay = "1ms" }
bottleneck = { rate = "1Mbps", delay = "1ms" }
reverse_qdisc = { kind = "red", limit = 100 }

[qdisc]
kind = "red"
limit = 300
min_th = 100
max_th = 200

[monitor]
delays = true
links = ["bottleneck"]

[[flows]]
name = "tcp"
kind = "tcp"
count = 2
packet_size = 1000

[[flows]]
name = "udp"
kind = "cbr"
rate = "2Mbps"
schedule = [{ at = "1s", rate = "1Mbps" }, { at = "2s", rate = "3Mbps" }]
"#;

    const GRAPH: &str = r#"name = "g"
duration = "10s"

[topology]
kind = "graph"
nodes = ["a", "b", "c", "d"]

[[topology.links]]
from = "a"
to = "b"
rate = "10Mbps"
delay = "1ms"

[[topology.links]]
from = "b"
to = "c"
rate = "1Mbps"
delay = "1ms"

[topology.links.qdisc]
kind = "sfb"
bins = 16

[[topology.links]]
from = "c"
to = "d"
rate = "1Mbps"
delay = "1ms"
reverse_qdisc = { kind = "choke", limit = 100, min_th = 10, max_th = 50 }

[[flows]]
name = "x"
kind = "tcp"
from = "a"
to = "d"
"#;

    /// `base` with the first line that starts with `old` replaced by `new`; the
    /// error must name `key` and the line of `new` (its last, when it has several).
    #[track_caller]
    fn names_key_and_line(base: &str, old: &str, new: &str, key: &str) {
        let mut found = false;
        let text: String = base
            .lines()
            .map(|l| {
                if !found && l.starts_with(old) {
                    found = true;
                    format!("{new}\n")
                } else {
                    format!("{l}\n")
                }
            })
            .collect();
        assert!(found, "no line starts with {old:?}");
        // Some checks are made when the network is built (a qdisc's parameters).
        let e = match Scenario::from_toml(&text, "s.toml") {
            Err(e) => e.to_string(),
            Ok(s) => match crate::Simulation::new(&s) {
                Err(e) => e.to_string(),
                Ok(_) => panic!("{new}: no error"),
            },
        };
        let line: usize = e
            .strip_prefix("s.toml:")
            .and_then(|r| r.split(':').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{new}: no line in {e}"));
        assert_eq!(text.lines().nth(line - 1), new.lines().last(), "{e}");
        assert!(e.contains(key), "{new}: {e} does not name {key}");
    }

    #[test]
    fn every_error_names_its_key_and_its_line() {
        let d = DUMBBELL;
        // Types and units the parser refuses, in every kind of table.
        names_key_and_line(d, "seed", "seed = -1", "seed");
        names_key_and_line(d, "duration", "duration = \"10parsecs\"", "duration");
        names_key_and_line(d, "limit = 300", "limit = -5", "qdisc.limit");
        names_key_and_line(d, "max_th", "max_th = \"lots\"", "qdisc.max_th");
        names_key_and_line(d, "kind = \"red\"", "kind = \"reed\"", "qdisc.kind");
        names_key_and_line(
            d,
            "limit = 300",
            "limit = 300\nmax_thresh = 3",
            "max_thresh",
        );
        names_key_and_line(
            d,
            "access",
            "access = { rate = \"-10Mbps\", delay = \"1ms\" }",
            "topology.access.rate",
        );
        names_key_and_line(
            d,
            "access",
            "access = { rate = \"10Mbps\" }",
            "topology.access",
        );
        names_key_and_line(
            d,
            "reverse_qdisc",
            "reverse_qdisc = { kind = \"red\", limit = 1.5 }",
            "topology.reverse_qdisc.limit",
        );
        names_key_and_line(
            d,
            "kind = \"dumbbell\"",
            "kind = \"dumbbell\"\nnodes = []",
            "nodes",
        );
        names_key_and_line(d, "delays", "delays = 3", "monitor.delays");
        names_key_and_line(d, "count", "count = \"two\"", "flows[0].count");
        names_key_and_line(
            d,
            "schedule",
            "schedule = [{ at = \"1s\", rate = \"1Mbps\" }, { at = \"2s\", rate = 3 }]",
            "flows[1].schedule[1].rate",
        );
        // Checks made after parsing, including those across keys.
        names_key_and_line(d, "duration", "duration = \"0s\"", "duration");
        names_key_and_line(d, "warmup", "warmup = \"20s\"", "warmup");
        names_key_and_line(d, "min_th", "min_th = 250", "qdisc.min_th");
        names_key_and_line(
            d,
            "reverse_qdisc",
            "reverse_qdisc = { kind = \"red\", limit = 100, min_th = 90, max_th = 10 }",
            "topology.reverse_qdisc.min_th",
        );
        names_key_and_line(
            d,
            "bottleneck",
            "bottleneck = { rate = \"0Mbps\", delay = \"1ms\" }",
            "topology.bottleneck.rate",
        );
        names_key_and_line(d, "links", "links = [\"nowhere\"]", "monitor.links");
        names_key_and_line(d, "packet_size", "packet_size = 20", "packet_size");
        names_key_and_line(d, "count", "count = 0", "count");
        names_key_and_line(
            d,
            "schedule",
            "schedule = [{ at = \"2s\", rate = \"1Mbps\" }, { at = \"1s\", rate = \"3Mbps\" }]",
            "schedule",
        );

        let g = GRAPH;
        names_key_and_line(
            g,
            "rate = \"1Mbps\"",
            "rate = \"-1Mbps\"",
            "topology.links[1].rate",
        );
        names_key_and_line(
            g,
            "rate = \"1Mbps\"",
            "rate = \"0Mbps\"",
            "topology.links[1].rate",
        );
        names_key_and_line(g, "to = \"c\"", "to = \"e\"", "topology.links[1].to");
        names_key_and_line(g, "bins", "bins = -16", "topology.links[1].qdisc.bins");
        names_key_and_line(g, "bins", "bins = 0", "topology.links[1].qdisc.bins");
        names_key_and_line(
            g,
            "reverse_qdisc",
            "reverse_qdisc = { kind = \"choke\", limit = 100, min_th = 10, max_th = \"x\" }",
            "topology.links[2].reverse_qdisc.max_th",
        );
        names_key_and_line(
            g,
            "reverse_qdisc",
            "reverse_qdisc = { kind = \"choke\", limit = 100, min_th = 60, max_th = 50 }",
            "topology.links[2].reverse_qdisc.min_th",
        );
        names_key_and_line(
            g,
            "nodes",
            "nodes = [\"a\", \"b\", \"c\", \"a\"]",
            "topology.nodes",
        );
        names_key_and_line(g, "to = \"d\"", "to = \"z\"", "to = \"z\"");
        names_key_and_line(
            g,
            "kind = \"graph\"",
            "kind = \"graph\"\naccess = 1",
            "access",
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
    fn a_pareto_shape_must_be_finite_and_above_one() {
        let onoff = "kind = \"onoff\"\nrate = \"2Mbps\"\non = \"1s\"\noff = \"1s\"\ndistribution = \"pareto\"";
        for shape in ["inf", "nan", "1.0", "1e6"] {
            let text = EXAMPLE.replace(
                "kind = \"cbr\"\nrate = \"2Mbps\"",
                &format!("{onoff}\nshape = {shape}"),
            );
            let e = err(&text);
            assert!(e.contains("needs 1 < shape <= 1000"), "{shape}: {e}");
            let line: usize = e.split(':').nth(1).unwrap().parse().unwrap();
            assert!(
                text.lines().nth(line - 1).unwrap().starts_with("shape"),
                "{e}"
            );
        }
    }

    #[test]
    fn a_tcp_packet_must_have_room_for_data_after_its_headers() {
        // 40 bytes is IPv4 + TCP headers alone: no payload, sequence numbers that
        // never advance (a capture tshark calls inconsistent).
        let tcp = |size: u32| {
            EXAMPLE.replace(
                "packet_size = 1000\nmax",
                &format!("packet_size = {size}\nmax"),
            )
        };
        let e = err(&tcp(40));
        assert!(
            e.contains("packet_size = 40 must be between 41 and 65535 bytes"),
            "{e}"
        );
        assert!(e.contains("headers are 40 bytes"), "{e}");
        let line: usize = e.split(':').nth(1).unwrap().parse().unwrap();
        assert_eq!(tcp(40).lines().nth(line - 1), Some("packet_size = 40"));
        Scenario::from_toml(&tcp(41), "s.toml").unwrap();
        // A UDP datagram of 40 bytes still has room (its headers are 28).
        let udp = EXAMPLE.replace(
            "count = 1\npacket_size = 1000",
            "count = 1\npacket_size = 40",
        );
        assert_ne!(udp, EXAMPLE);
        Scenario::from_toml(&udp, "s.toml").unwrap();
    }

    #[test]
    fn names_that_would_escape_a_folder_or_reach_a_terminal_are_refused() {
        // A node's name becomes a pcap file name under --out; `../x` once wrote
        // outside it.
        for (node, rule) in [
            ("../x", "must not contain / or \\"),
            ("a\\\\b", "must not contain / or \\"),
            ("x->y", "must not contain ->"),
            ("", "must not be empty"),
            ("a\\u001b[31m", "control character U+001B"),
        ] {
            let text = GRAPH.replacen("\"d\"]", &format!("\"d\", \"{node}\"]"), 1);
            let e = err(&text);
            assert!(e.contains("topology.nodes[4] = "), "{node}: {e}");
            assert!(e.contains(rule), "{node}: {e}");
            assert!(e.starts_with("s.toml:6:"), "{e}");
        }
        // A group's or the scenario's name is printed in the text report.
        let text = DUMBBELL.replace("name = \"udp\"", "name = \"udp\\u001b]0;owned\\u0007\"");
        let e = err(&text);
        assert!(e.contains("flows[1].name = \"udp\\u{1b}]0;owned\\u{7}\" contains the control character U+001B"), "{e}");
        assert!(e.starts_with("s.toml:29:"), "{e}");
        let e = err(&DUMBBELL.replace("name = \"d\"", "name = \"d\\r\""));
        assert!(
            e.starts_with("s.toml:1: name = \"d\\r\" contains the control character U+000D"),
            "{e}"
        );
        // Names that are merely unusual stay allowed.
        Scenario::from_toml(&GRAPH.replace("\"d\"", "\"d .é\""), "s.toml").unwrap();
    }

    #[test]
    fn what_a_run_simulates_leaves_out_labels_the_seed_and_an_unused_qdisc() {
        let sim = |text: &str| Scenario::from_toml(text, "s.toml").unwrap().simulated();
        let renamed = DUMBBELL
            .replace("name = \"d\"", "name = \"e\"\ndescription = \"x\"")
            .replace("seed = 1", "seed = 7");
        assert_eq!(sim(DUMBBELL), sim(&renamed));
        // Defaults are filled in, so writing one out changes nothing.
        assert_eq!(
            sim(DUMBBELL),
            sim(&DUMBBELL.replace("max_th = 200", "max_th = 200\necn = false"))
        );
        // A dumbbell's [qdisc] is its bottleneck's.
        assert_ne!(
            sim(DUMBBELL),
            sim(&DUMBBELL.replace("kind = \"red\"", "kind = \"choke\""))
        );
        // In a graph, [qdisc] reaches the links without a qdisc of their own...
        let with = |kind: &str| format!("{GRAPH}\n[qdisc]\nkind = \"{kind}\"\n");
        assert_ne!(sim(&with("red")), sim(&with("choke")));
        // ...and none when every link has one.
        let own = GRAPH
            .replace(
                "delay = \"1ms\"\n\n[[topology.links]]\nfrom = \"b\"",
                "delay = \"1ms\"\nqdisc = { kind = \"blue\" }\n\n[[topology.links]]\nfrom = \"b\"",
            )
            .replace(
                "reverse_qdisc = {",
                "qdisc = { kind = \"pie\" }\nreverse_qdisc = {",
            );
        let with = |kind: &str| format!("{own}\n[qdisc]\nkind = \"{kind}\"\n");
        assert_eq!(sim(&with("red")), sim(&with("choke")));
        assert_ne!(sim(&own), sim(&own.replace("\"pie\"", "\"codel\"")));
    }

    #[test]
    fn every_syntax_error_says_something() {
        // Found by fuzzing: the toml parser gives a control character in a comment
        // an empty message.
        let e = err("# a\u{e}\n");
        assert!(e.starts_with("s.toml:1: invalid TOML"), "{e}");
    }

    #[test]
    fn a_qdisc_table_may_be_a_tc_line() {
        let red = "kind = \"red\"\nlimit = 300\nmin_th = 100\nmax_th = 200\n";
        assert!(EXAMPLE.contains(red));
        let line = "tc qdisc add dev eth0 root fq_codel limit 1000 target 2ms noecn";
        let text = EXAMPLE.replace(red, &format!("tc = \"{line}\"\n"));
        let s = Scenario::from_toml(&text, "s.toml").unwrap();
        let got = s.file.qdisc.unwrap().into_inner();
        assert_eq!(got, crate::tc::parse(line).unwrap().spec().unwrap());
        assert_eq!(got.kind(), "fq_codel");
        // The line's errors, and keys beside it, are errors at their line.
        let text = EXAMPLE.replace(red, "tc = \"tc qdisc add dev eth0 root codel fast\"\n");
        let e = err(&text);
        assert!(e.contains("codel has no option `fast`"), "{e}");
        assert!(e.starts_with("s.toml:"), "{e}");
        let text = EXAMPLE.replace(red, "tc = \"codel\"\nlimit = 5\n");
        let e = err(&text);
        assert!(e.contains("`limit` cannot stand beside it"), "{e}");
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
