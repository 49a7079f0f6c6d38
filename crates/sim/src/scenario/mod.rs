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
use std::ops::Range;
use toml::Spanned;

mod monitor;
mod place;
mod qdisc_table;
mod validate;

pub use monitor::Monitor;

use place::place;
pub use place::ScenarioError;

/// A flow without an `aggregate` is an aggregate of its own: `OWN_AGGREGATE + id`,
/// apart from every id a scenario may give.
pub const OWN_AGGREGATE: u32 = 1 << 31;

/// Where in a scenario's text a table is, for error lines.
pub type FileSpan = Option<Range<usize>>;

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
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
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
            let message = match e.message().trim() {
                // The toml parser describes some syntax errors (a control character in
                // a comment or a string) with no words at all.
                "" => "invalid TOML: a control character, or a character TOML does not \
                       allow here"
                    .to_string(),
                m => m.to_string(),
            };
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
