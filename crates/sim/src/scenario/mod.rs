//! Scenario files: TOML in, a validated [`Scenario`] out.
//!
//! Every error names where it is: the key path (`topology.links[1].qdisc.limit`)
//! and, in a file, the line of that key (`place.rs` finds it), whether the parser
//! found it (a syntax error, a wrong type or unit, an unknown key) or a check made
//! later (`min_th > max_th`, a flow to a node that does not exist). The example in
//! the README is the contract for key names.

use aqm::{Dur, QdiscSpec, Rate};
use serde::{Deserialize, Serialize};
use toml::Spanned;

mod fat_tree;
mod file;
mod flow_spec;
mod link_keys;
mod links;
mod monitor;
mod no_ops;
mod place;
mod shape;

/// A parser's message fit for one line of a terminal: control characters (an
/// escape sequence in an unknown key) escaped, and a quoted name longer than 80
/// characters cut short, saying how long it was.
fn printable(message: &str) -> String {
    let escaped: String = message
        .chars()
        .flat_map(|c| {
            let e: Vec<char> = if c.is_control() {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            e
        })
        .collect();
    escaped
        .split('`')
        .enumerate()
        .map(|(i, part)| {
            let chars = part.chars().count();
            if i % 2 == 1 && chars > 80 {
                let head: String = part.chars().take(60).collect();
                format!("{head}... ({chars} characters)")
            } else {
                part.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("`")
}

/// The qdisc keys read under a second name (`#[serde(alias)]` in `aqm`): a
/// rule broken by one names it as the user wrote it.
const ALIASES: [(&str, &str); 2] = [("drop_batch_size", "drop_batch"), ("tupdate", "t_update")];
mod qdisc_table;
mod validate;
mod validate_net;

pub use fat_tree::FatTree;
pub use file::{read_file, read_text, MAX_FILE_BYTES};
pub use flow_spec::{
    EcnSetting, FlowSpec, OnoffKeys, ProbeKeys, TcpKeys, Traffic, UdpKeys, WebKeys, PROBE_SIZE,
};
pub use link_keys::{DelayKey, JitterKeys, LinkKeys, LinkSpec, LossKey, RateKey};
pub use links::{Direction, Side};
pub use monitor::Monitor;

use place::{
    blame_flow_key, blame_qdisc_key, is_flow, is_qdisc, line_at, narrow_flow_key, unknown_flow_key,
    value_at, Spans,
};
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

// One per scenario: the dumbbell's two link tables (every link key, each an
// Option) being larger than the graph's vectors costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
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
    /// Explicit nodes and links; flows name their end nodes. A fat tree is read
    /// into this form (`fat_tree.rs`), so everything after reading is shared.
    Graph {
        nodes: Vec<String>,
        links: Vec<GraphLink>,
        /// How flows without a `path` are routed.
        #[serde(default, skip_serializing_if = "Routing::is_shortest")]
        routing: Routing,
        /// The fat tree's keys, when the graph is one: errors about its ports
        /// and what a run simulates name them, not its thousands of links.
        #[serde(skip)]
        fat_tree: Option<Box<FatTree>>,
    },
}

/// How a graph routes a flow over its fewest-hop paths.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Routing {
    /// One path per flow group: the first a breadth-first search from the
    /// source finds, ties to the lower link index.
    #[default]
    Shortest,
    /// Each flow hashed over the equal-cost paths at every hop, keyed by the
    /// flow and the run's seed, as switches hash a flow's 5-tuple.
    Ecmp,
}

impl Routing {
    pub fn is_shortest(&self) -> bool {
        *self == Routing::Shortest
    }
    pub fn name(self) -> &'static str {
        match self {
            Routing::Shortest => "shortest",
            Routing::Ecmp => "ecmp",
        }
    }
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
    routing: Option<Routing>,
    k: Option<u32>,
    hosts_per_edge: Option<u32>,
    rate: Option<Rate>,
    delay: Option<Dur>,
    host_rate: Option<Rate>,
    #[serde(default, deserialize_with = "qdisc_table::plain")]
    qdisc: Option<QdiscSpec>,
    monitor: Option<bool>,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum TopologyKind {
    Dumbbell,
    Graph,
    FatTree,
}

impl TryFrom<RawTopology> for Topology {
    type Error = String;

    fn try_from(raw: RawTopology) -> Result<Topology, String> {
        // Worded as serde words them, so the error finder puts them at the key.
        let not_here = |key: &str, kind: &str, keys: &str| {
            format!("unknown field `{key}` for kind = \"{kind}\" (it takes {keys})")
        };
        let missing = |key: &str| format!("missing field `{key}`");
        // The keys given that `kind` does not take, in the order written above.
        let refuse = |kind: &str, keys: &str| {
            let given = [
                ("access", raw.access.is_some()),
                ("bottleneck", raw.bottleneck.is_some()),
                ("reverse_qdisc", raw.reverse_qdisc.is_some()),
                ("nodes", raw.nodes.is_some()),
                ("links", raw.links.is_some()),
                ("routing", raw.routing.is_some()),
                ("k", raw.k.is_some()),
                ("hosts_per_edge", raw.hosts_per_edge.is_some()),
                ("rate", raw.rate.is_some()),
                ("delay", raw.delay.is_some()),
                ("host_rate", raw.host_rate.is_some()),
                ("qdisc", raw.qdisc.is_some()),
                ("monitor", raw.monitor.is_some()),
            ];
            match given
                .iter()
                .find(|(k, set)| *set && !keys.split(", ").any(|t| t == *k))
            {
                Some((k, _)) => Err(not_here(k, kind, keys)),
                None => Ok(()),
            }
        };
        match raw.kind {
            TopologyKind::Dumbbell => {
                refuse("dumbbell", "access, bottleneck, reverse_qdisc")?;
                Ok(Topology::Dumbbell {
                    access: raw.access.ok_or_else(|| missing("access"))?,
                    bottleneck: raw.bottleneck.ok_or_else(|| missing("bottleneck"))?,
                    reverse_qdisc: raw.reverse_qdisc,
                })
            }
            TopologyKind::Graph => {
                refuse("graph", "nodes, links, routing")?;
                Ok(Topology::Graph {
                    nodes: raw.nodes.ok_or_else(|| missing("nodes"))?,
                    links: raw.links.ok_or_else(|| missing("links"))?,
                    routing: raw.routing.unwrap_or_default(),
                    fat_tree: None,
                })
            }
            TopologyKind::FatTree => {
                refuse(
                    "fat_tree",
                    "k, hosts_per_edge, rate, delay, host_rate, qdisc, routing, monitor",
                )?;
                // Its nodes and links are made once its keys are checked, each
                // error at its line (`Scenario::expand_fat_tree`).
                let fat = FatTree {
                    k: raw.k.ok_or_else(|| missing("k"))?,
                    hosts_per_edge: raw.hosts_per_edge,
                    rate: raw.rate.ok_or_else(|| missing("rate"))?,
                    delay: raw.delay.ok_or_else(|| missing("delay"))?,
                    host_rate: raw.host_rate,
                    qdisc: raw.qdisc,
                    monitor: raw.monitor.unwrap_or(false),
                };
                Ok(Topology::Graph {
                    nodes: Vec::new(),
                    links: Vec::new(),
                    routing: raw.routing.unwrap_or(Routing::Ecmp),
                    fat_tree: Some(Box::new(fat)),
                })
            }
        }
    }
}

link_keys::with_link_keys! {
    /// A graph's link: its two nodes, the keys of its two directions, and each
    /// direction's qdisc.
    #[derive(Clone, Debug, Default, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct GraphLink {
        pub from: String,
        pub to: String,
        ..link_keys,
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
    /// Echoed probes at a fixed interval (latency under load).
    Probe,
}

impl FlowKind {
    pub fn name(self) -> &'static str {
        match self {
            FlowKind::Tcp => "tcp",
            FlowKind::Web => "web",
            FlowKind::Cbr => "cbr",
            FlowKind::Poisson => "poisson",
            FlowKind::Onoff => "onoff",
            FlowKind::Probe => "probe",
        }
    }
    /// The packet size a group of this kind has when `packet_size` is not written.
    pub fn packet_size(self) -> u32 {
        match self {
            FlowKind::Probe => flow_spec::PROBE_SIZE,
            _ => crate::tcp::TcpConfig::default().packet_size,
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

/// A parsed scenario and the text it came from (for error lines).
#[derive(Clone, Debug)]
pub struct Scenario {
    pub file: ScenarioFile,
    pub origin: String,
    source: String,
    lines_known: bool,
    /// Where a relative path in the scenario (a link's trace) is read from: the
    /// scenario file's directory; the current directory when it is not a file.
    dir: Option<std::path::PathBuf>,
}

/// The directory of `origin` when it names a file.
fn dir_of(origin: &str) -> Option<std::path::PathBuf> {
    let path = std::path::Path::new(origin);
    path.is_file()
        .then(|| path.parent().map(|d| d.to_path_buf()))
        .flatten()
}

impl Scenario {
    /// Parses a scenario from TOML text. `origin` names it in errors.
    pub fn from_toml(text: &str, origin: &str) -> Result<Scenario, ScenarioError> {
        Self::parse(text, origin, true, dir_of(origin))
    }

    /// A scenario as a table of JSON values (`assign::Table`) that came from the
    /// file `file` (changed by `--set`): its relative paths are read beside that
    /// file.
    pub fn from_table_beside(
        table: serde_json::Map<String, serde_json::Value>,
        file: &str,
    ) -> Result<Scenario, ScenarioError> {
        Self::json(serde_json::Value::Object(table), dir_of(file))
    }

    /// Parses a scenario given as a JSON object (what the Python bindings pass for a
    /// dict): the same keys and checks as TOML, errors without line numbers.
    pub fn from_json(json: &str) -> Result<Scenario, ScenarioError> {
        let json = serde_json::from_str(json).map_err(|e| ScenarioError {
            origin: "<dict>".into(),
            line: None,
            message: e.to_string(),
        })?;
        Self::json(json, None)
    }

    /// Parses a JSON value through the TOML reader, so that both hold the same
    /// keys to the same checks.
    fn json(
        json: serde_json::Value,
        dir: Option<std::path::PathBuf>,
    ) -> Result<Scenario, ScenarioError> {
        let origin = "<dict>";
        let error = |message: String| ScenarioError {
            origin: origin.into(),
            line: None,
            message,
        };
        if let Some(message) = shape::json_integer_too_large(&json, KeyPath::default()) {
            return Err(error(message));
        }
        let value: toml::Value = serde_json::from_value(json).map_err(|e| error(e.to_string()))?;
        let text = toml::to_string(&value).map_err(|e| ScenarioError {
            origin: origin.into(),
            line: None,
            message: e.to_string(),
        })?;
        Self::parse(&text, origin, false, dir)
    }

    /// Reads and parses a scenario file (a regular file of at most
    /// [`MAX_FILE_BYTES`]).
    pub fn from_path(path: &std::path::Path) -> Result<Scenario, ScenarioError> {
        let origin = path.display().to_string();
        let text = read_file(path).map_err(|message| ScenarioError {
            origin: origin.clone(),
            line: None,
            message,
        })?;
        Self::from_toml(&text, &origin)
    }

    fn parse(
        text: &str,
        origin: &str,
        lines_known: bool,
        dir: Option<std::path::PathBuf>,
    ) -> Result<Scenario, ScenarioError> {
        let mut file: ScenarioFile = toml::from_str(text).map_err(|e| {
            let message = match e.message().trim() {
                // The toml parser describes some syntax errors (a control character in
                // a comment or a string) with no words at all.
                "" => "invalid TOML: a control character, or a character TOML does not \
                       allow here"
                    .to_string(),
                m => m.to_string(),
            };
            let (line, message) = match e.span() {
                Some(span) if message.contains("number too large to fit in target type") => (
                    lines_known.then(|| line_at(text, span.start)),
                    shape::integer_too_large(text, span.start).unwrap_or(message),
                ),
                Some(span) => Self::place_parse_error(text, span, message, lines_known),
                None => (None, message),
            };
            ScenarioError {
                origin: origin.to_string(),
                line,
                message: printable(&message),
            }
        })?;
        for g in &mut file.flows {
            g.get_mut().fill_defaults();
        }
        let mut s = Scenario {
            file,
            origin: origin.to_string(),
            source: text.to_string(),
            lines_known,
            dir,
        };
        s.refuse_arrays_for_tables()?;
        s.expand_fat_tree()?;
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
        let root = || toml::from_str::<toml::Table>(text).ok();
        let mut message = message;
        if let Some(key) = named {
            if path.0.last() == Some(&Step::Key(key.clone())) {
                table.0.pop();
            } else {
                if is_flow(&path) {
                    let root = root();
                    let group = root.as_ref().and_then(|r| value_at(r, &path)?.as_table());
                    if let Some(m) = group.and_then(|t| unknown_flow_key(t, &key)) {
                        message = m;
                    }
                }
                path = path.key(&key);
            }
        } else if is_flow(&path) {
            // serde read the group's own keys whole (its `kind` picks them).
            let root = root();
            let group = root.as_ref().and_then(|r| value_at(r, &path)?.as_table());
            if let Some((key, value)) = group.and_then(|t| {
                let key = blame_flow_key(t, &message)?;
                Some((key.clone(), t.get(&key)?.clone()))
            }) {
                path = narrow_flow_key(path, &key, &value, &message);
                table = path.clone();
            }
        } else if is_qdisc(&path) {
            // serde read the qdisc table whole (its `kind` picks the type): find
            // the key by reading each alone.
            let key = toml::from_str::<toml::Table>(text).ok().and_then(|root| {
                match value_at(&root, &path) {
                    // `tc = "..."`: the line is the key at fault, or the key
                    // written beside it.
                    Some(toml::Value::Table(t)) if t.contains_key("tc") => Some(
                        message
                            .split('`')
                            .nth(1)
                            .filter(|k| t.contains_key(*k))
                            .unwrap_or("tc")
                            .to_string(),
                    ),
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
            place::error_line(text, &spans, &path, &message)
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
        self.errors_at(std::iter::once((path.clone(), message)))
            .pop()
            .expect("one error for one message")
    }

    /// [`Scenario::error_at`] for many keys: the text is parsed and its lines
    /// indexed once, not once per error (a warning per flow group of 150,000).
    pub(crate) fn errors_at(
        &self,
        found: impl IntoIterator<Item = (KeyPath, String)>,
    ) -> Vec<ScenarioError> {
        let index = self.lines_known.then(|| {
            (
                Spans::new(&self.source),
                place::LineStarts::new(&self.source),
            )
        });
        found
            .into_iter()
            .map(|(path, message)| ScenarioError {
                origin: self.origin.clone(),
                line: index
                    .as_ref()
                    .and_then(|(spans, lines)| Some(lines.line(spans.locate(&path)?.start))),
                message,
            })
            .collect()
    }

    /// An error of the parameters of the qdisc table at `path`, blamed on a key
    /// the user wrote, at its line: the key the rule names when it is written
    /// (under the name written: an alias such as `t_update` for `tupdate`), else
    /// the first written key the rule mentions (`max_th = 0` breaks "min_th must
    /// be below max_th" when `min_th` is the default), else the table.
    pub fn qdisc_error(&self, path: &KeyPath, e: &aqm::ParamError) -> ScenarioError {
        let root = toml::from_str::<toml::Table>(&self.source).ok();
        let table = root
            .as_ref()
            .and_then(|r| value_at(r, path))
            .and_then(|v| v.as_table());
        let written = |k: &str| table.and_then(|t| t.get(k));
        let text = e.to_string();
        if written(e.key).is_some() {
            return self.error_at(&path.key(e.key), format!("{path}.{text}"));
        }
        if let Some(alias) = ALIASES
            .iter()
            .find(|(k, a)| *k == e.key && written(a).is_some())
            .map(|(_, a)| *a)
        {
            let rest = text.strip_prefix(e.key).unwrap_or(&text);
            return self.error_at(&path.key(alias), format!("{path}.{alias}{rest}"));
        }
        let other = text
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .find(|w| *w != "kind" && *w != e.key && written(w).is_some());
        match other.and_then(|k| Some((k, written(k)?))) {
            Some((k, v)) => self.error_at(
                &path.key(k),
                format!(
                    "{path}.{k} = {}: {} = {} (the default) {}",
                    v.to_string().trim(),
                    e.key,
                    e.value,
                    e.rule
                ),
            ),
            None => self.error_at(&path.key(e.key), format!("{path}.{text}")),
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
        let (unused_qdisc, fat_tree) = match self.file.topology.get_ref() {
            Topology::Dumbbell { .. } => (false, None),
            Topology::Graph {
                fat_tree: Some(fat),
                routing,
                ..
            } => (fat.qdisc.is_some(), Some(fat.simulated(*routing))),
            Topology::Graph { links, .. } => (links.iter().all(|l| l.qdisc.is_some()), None),
        };
        if let Some(m) = v.as_object_mut() {
            for key in ["name", "description", "seed"] {
                m.remove(key);
            }
            if unused_qdisc {
                m.remove("qdisc");
            }
            // A fat tree as its keys, not its expansion.
            if let Some(t) = fat_tree {
                m.insert("topology".into(), t);
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
mod tests;
