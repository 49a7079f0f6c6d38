//! Where a scenario error is: a key path (`topology.links[1].qdisc.limit`) and,
//! for a file, the line that key is written on.
//!
//! The serde deserializer reports a bad value at the span of the value it was
//! reading, and for a table read through an internally tagged enum (a `[qdisc]`,
//! whose `kind` picks the parameter type) that is the whole table: serde buffers
//! the table before it knows the type, and the span of the key is lost. So the
//! span of every error goes through one finder over the document ([`Spans`], a
//! second parse that keeps every key's span, done only when there is an error):
//! span -> key path -> the key's own line. A `[qdisc]` error at the table is
//! narrowed to its key by reading each key of the table alone ([`blame_qdisc_key`]).
//! Checks made after parsing name the key path themselves ([`KeyPath`]).
//!
//! A scenario given as a dict (Python) has no lines its author wrote; its errors
//! name the key path only.

use super::{FlowSpec, OnoffKeys, ProbeKeys, RateStep, TcpKeys, UdpKeys, WebKeys};
use aqm::QdiscSpec;
use serde::Deserialize;
use std::fmt;
use std::ops::Range;
use toml_edit::{ImDocument, Item, Value};

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
        let message = without_long_words(&self.message);
        match self.line {
            Some(l) => write!(f, "{}:{}: {message}", self.origin, l),
            None => write!(f, "{}: {message}", self.origin),
        }
    }
}

/// The longest word an error's message shows whole (longer than most paths); a
/// longer one (a 100 KB `--set` value quoted back, a bracket bomb) shows its
/// start and its length, so an error stays a line a terminal can show.
const LONGEST_WORD: usize = 256;

/// `text` with every word (a run without whitespace) longer than
/// [`LONGEST_WORD`] characters cut to its first 100 and its length.
pub(crate) fn without_long_words(text: &str) -> String {
    if text.len() <= LONGEST_WORD {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len().min(4096));
    let mut rest = text;
    while !rest.is_empty() {
        let word_end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let (word, after) = rest.split_at(word_end);
        let chars = word.chars().count();
        if chars > LONGEST_WORD {
            out.extend(word.chars().take(100));
            out.push_str(&format!("... ({chars} characters)"));
        } else {
            out.push_str(word);
        }
        let space_end = after
            .find(|c: char| !c.is_whitespace())
            .unwrap_or(after.len());
        out.push_str(&after[..space_end]);
        rest = &after[space_end..];
    }
    out
}

impl std::error::Error for ScenarioError {}

/// One step of a key path: a table's key, or an element of an array (of tables).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    Key(String),
    Index(usize),
}

/// A key's place in a scenario, as its author would write it:
/// `topology.links[1].rate`. The empty path is the document itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeyPath(pub Vec<Step>);

impl KeyPath {
    /// The path of a top-level key.
    pub fn top(key: &str) -> KeyPath {
        KeyPath(vec![Step::Key(key.to_string())])
    }
    /// This path, then `key`.
    pub fn key(&self, key: &str) -> KeyPath {
        let mut p = self.clone();
        p.0.push(Step::Key(key.to_string()));
        p
    }
    /// This path, then element `i`.
    pub fn index(&self, i: usize) -> KeyPath {
        let mut p = self.clone();
        p.0.push(Step::Index(i));
        p
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// The last step's key, if it is a key.
    fn last_key(&self) -> Option<&str> {
        match self.0.last() {
            Some(Step::Key(k)) => Some(k),
            _ => None,
        }
    }
}

impl fmt::Display for KeyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, step) in self.0.iter().enumerate() {
            match step {
                Step::Key(k) if i == 0 => f.write_str(k)?,
                Step::Key(k) => write!(f, ".{k}")?,
                Step::Index(n) => write!(f, "[{n}]")?,
            }
        }
        Ok(())
    }
}

/// 1-based line of byte offset `at` in `src`.
pub(crate) fn line_at(src: &str, at: usize) -> usize {
    src.as_bytes()[..at.min(src.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// The lines of a text, indexed once: the line of an offset is a binary search,
/// so placing one finding per flow group costs no scan of the text each.
pub(crate) struct LineStarts(Vec<usize>);

impl LineStarts {
    pub(crate) fn new(src: &str) -> LineStarts {
        let starts = std::iter::once(0)
            .chain(
                src.bytes()
                    .enumerate()
                    .filter(|&(_, b)| b == b'\n')
                    .map(|(i, _)| i + 1),
            )
            .collect();
        LineStarts(starts)
    }

    /// The 1-based line of byte `at`, as [`line_at`] counts it.
    pub(crate) fn line(&self, at: usize) -> usize {
        self.0.partition_point(|&start| start <= at)
    }
}

/// A node of the document, seen the same way whether the text wrote it as a
/// standard table, an inline table, an array of tables or an inline array.
#[derive(Clone)]
enum Node<'a> {
    Table(&'a toml_edit::Table),
    Tables(&'a toml_edit::ArrayOfTables),
    Inline(&'a toml_edit::InlineTable),
    Array(&'a toml_edit::Array),
    Leaf(Option<Range<usize>>),
}

/// A child of a node: its step, the span that names it (a key, or an element),
/// and the node.
type Child<'a> = (Step, Option<Range<usize>>, Node<'a>);

impl<'a> Node<'a> {
    fn of_item(item: &'a Item) -> Node<'a> {
        match item {
            Item::Table(t) => Node::Table(t),
            Item::ArrayOfTables(a) => Node::Tables(a),
            Item::Value(v) => Node::of_value(v),
            Item::None => Node::Leaf(None),
        }
    }

    fn of_value(v: &'a Value) -> Node<'a> {
        match v {
            Value::InlineTable(t) => Node::Inline(t),
            Value::Array(a) => Node::Array(a),
            other => Node::Leaf(other.span()),
        }
    }

    /// The node's own span (a standard table's is its `[header]`).
    fn span(&self) -> Option<Range<usize>> {
        match self {
            Node::Table(t) => t.span(),
            Node::Tables(a) => a.span(),
            Node::Inline(t) => t.span(),
            Node::Array(a) => a.span(),
            Node::Leaf(s) => s.clone(),
        }
    }

    fn children(&self) -> Vec<Child<'a>> {
        let key = |k: &toml_edit::Key, item: &'a Item| {
            (
                Step::Key(k.get().to_string()),
                k.span(),
                Node::of_item(item),
            )
        };
        match self {
            Node::Table(t) => t
                .iter()
                .filter_map(|(k, _)| t.get_key_value(k))
                .map(|(k, i)| key(k, i))
                .collect(),
            Node::Inline(t) => t
                .iter()
                .filter_map(|(k, _)| t.get_key_value(k))
                .map(|(k, i)| key(k, i))
                .collect(),
            Node::Tables(a) => a
                .iter()
                .enumerate()
                .map(|(i, t)| (Step::Index(i), t.span(), Node::Table(t)))
                .collect(),
            Node::Array(a) => a
                .iter()
                .enumerate()
                .map(|(i, v)| (Step::Index(i), v.span(), Node::of_value(v)))
                .collect(),
            Node::Leaf(_) => Vec::new(),
        }
    }

    fn child(&self, step: &Step) -> Option<Child<'a>> {
        match (self, step) {
            (Node::Table(t), Step::Key(k)) => t
                .get_key_value(k)
                .map(|(key, i)| (step.clone(), key.span(), Node::of_item(i))),
            (Node::Inline(t), Step::Key(k)) => t
                .get_key_value(k)
                .map(|(key, i)| (step.clone(), key.span(), Node::of_item(i))),
            (Node::Tables(a), Step::Index(i)) => {
                a.get(*i).map(|t| (step.clone(), t.span(), Node::Table(t)))
            }
            (Node::Array(a), Step::Index(i)) => a
                .get(*i)
                .map(|v| (step.clone(), v.span(), Node::of_value(v))),
            _ => None,
        }
    }
}

/// The span of every key and table of a TOML text.
pub(crate) struct Spans {
    doc: Option<ImDocument<String>>,
}

impl Spans {
    pub(crate) fn new(src: &str) -> Spans {
        Spans {
            doc: ImDocument::parse(src.to_string()).ok(),
        }
    }

    /// The span of the deepest step of `path` that is written in the text: a
    /// key's own span, an array element's span (an array of tables' element: its
    /// `[[header]]`). `None` when not even the first step is written.
    pub(crate) fn locate(&self, path: &KeyPath) -> Option<Range<usize>> {
        let doc = self.doc.as_ref()?;
        let mut node = Node::Table(doc.as_table());
        let mut best = None;
        for step in &path.0 {
            let Some((_, span, child)) = node.child(step) else {
                break;
            };
            best = span.or_else(|| child.span()).or(best);
            node = child;
        }
        best
    }

    /// The span of the value written at `path` (a leaf's own span), when the
    /// whole path is written.
    pub(crate) fn value_span(&self, path: &KeyPath) -> Option<Range<usize>> {
        let doc = self.doc.as_ref()?;
        let mut node = Node::Table(doc.as_table());
        for step in &path.0 {
            node = node.child(step)?.2;
        }
        node.span()
    }

    /// The key path of the value at `span` (a deserializer error's span): the
    /// deepest node whose own span or whose key's span is `span`, else the
    /// deepest value that contains it; the empty path if none does.
    pub(crate) fn path_of(&self, span: &Range<usize>) -> KeyPath {
        let Some(doc) = self.doc.as_ref() else {
            return KeyPath::default();
        };
        let mut exact: Option<KeyPath> = None;
        let mut inside: Option<KeyPath> = None;
        let deeper = |best: &Option<KeyPath>, p: &KeyPath| {
            best.as_ref().is_none_or(|b| p.0.len() > b.0.len())
        };
        let mut stack = vec![(KeyPath::default(), Node::Table(doc.as_table()))];
        while let Some((path, node)) = stack.pop() {
            for (step, key_span, child) in node.children() {
                let mut p = path.clone();
                p.0.push(step);
                let own = child.span();
                if own.as_ref() == Some(span) || key_span.as_ref() == Some(span) {
                    if deeper(&exact, &p) {
                        exact = Some(p.clone());
                    }
                } else if own
                    .as_ref()
                    .is_some_and(|o| o.start <= span.start && span.end <= o.end)
                    && deeper(&inside, &p)
                {
                    inside = Some(p.clone());
                }
                stack.push((p, child));
            }
        }
        exact.or(inside).unwrap_or_default()
    }
}

/// The key of a `[qdisc]` table (as plain TOML) whose value alone gives the error
/// `message`: each key is read with the table's `kind` and nothing else (every
/// qdisc parameter has a default). `None` when no single key does.
pub(crate) fn blame_qdisc_key(table: &toml::Table, message: &str) -> Option<String> {
    let kind = table.get("kind")?;
    let fails_alone = |alone: toml::Table| {
        QdiscSpec::deserialize(toml::Value::Table(alone))
            .is_err_and(|e| e.message().trim() == message)
    };
    // An unknown kind fails whatever keys stand beside it: blame the kind.
    if fails_alone(toml::Table::from_iter([("kind".to_string(), kind.clone())])) {
        return Some("kind".into());
    }
    table
        .iter()
        .filter(|(k, _)| k.as_str() != "kind")
        .find(|(k, v)| {
            let mut alone = toml::Table::new();
            alone.insert("kind".into(), kind.clone());
            alone.insert((*k).clone(), (*v).clone());
            QdiscSpec::deserialize(toml::Value::Table(alone))
                .is_err_and(|e| e.message().trim() == message)
        })
        .map(|(k, _)| k.clone())
}

/// The key of a flow group's table (as plain TOML) whose value alone gives the
/// error `message`: each key is read with the group's `name` and `kind` and
/// nothing else (every other key has a default or is checked later). `None`
/// when no single key does.
pub(crate) fn blame_flow_key(table: &toml::Table, message: &str) -> Option<String> {
    let base: toml::Table = ["name", "kind"]
        .iter()
        .filter_map(|k| Some((k.to_string(), table.get(*k)?.clone())))
        .collect();
    let fails_alone = |alone: toml::Table| {
        FlowSpec::deserialize(toml::Value::Table(alone))
            .is_err_and(|e| e.message().trim() == message)
    };
    if fails_alone(base.clone()) {
        return Some(
            if table.contains_key("kind") {
                "kind"
            } else {
                "name"
            }
            .into(),
        );
    }
    table
        .iter()
        .filter(|(k, _)| !base.contains_key(*k))
        .find(|(k, v)| {
            let mut alone = base.clone();
            alone.insert((*k).clone(), (*v).clone());
            fails_alone(alone)
        })
        .map(|(k, _)| k.clone())
}

/// A flow group's unknown `key`, reworded: a key of another kind does not apply
/// to this one; any other is unknown. Either way the kind's own keys are named.
pub(crate) fn unknown_flow_key(table: &toml::Table, key: &str) -> Option<String> {
    let kind = table.get("kind")?.as_str()?;
    let own: &[&str] = match kind {
        "tcp" => aqm::field_names::<TcpKeys>(),
        "web" => aqm::field_names::<WebKeys>(),
        "cbr" | "poisson" => aqm::field_names::<UdpKeys>(),
        "onoff" => aqm::field_names::<OnoffKeys>(),
        "probe" => aqm::field_names::<ProbeKeys>(),
        _ => return None,
    };
    let elsewhere = [
        aqm::field_names::<WebKeys>(),
        aqm::field_names::<OnoffKeys>(),
        aqm::field_names::<ProbeKeys>(),
    ]
    .iter()
    .any(|keys| keys.contains(&key));
    let takes = format!(
        "kind = \"{kind}\" takes {} besides the keys every group takes",
        own.join(", ")
    );
    Some(if elsewhere {
        format!(
            "{key} does not apply to kind = \"{kind}\" (its own keys: {})",
            own.join(", ")
        )
    } else {
        format!("unknown field `{key}` ({takes})")
    })
}

/// `path.key`, or deeper where the key's value is a `schedule` (an array of
/// tables read whole with the group): the step, and its key, that alone gives
/// `message`.
pub(crate) fn narrow_flow_key(
    path: KeyPath,
    key: &str,
    value: &toml::Value,
    message: &str,
) -> KeyPath {
    let path = path.key(key);
    let (Some(items), "schedule") = (value.as_array(), key) else {
        return path;
    };
    let fails = |r: Result<(), toml::de::Error>| r.is_err_and(|e| e.message().trim() == message);
    for (j, item) in items.iter().enumerate() {
        if !fails(RateStep::deserialize(item.clone()).map(drop)) {
            continue;
        }
        let step = item.as_table().and_then(|t| {
            t.iter().find_map(|(k, v)| {
                let bad = match k.as_str() {
                    "at" => fails(aqm::Dur::deserialize(v.clone()).map(drop)),
                    "rate" => fails(aqm::Rate::deserialize(v.clone()).map(drop)),
                    _ => false,
                };
                bad.then(|| k.clone())
            })
        });
        return match step {
            Some(k) => path.index(j).key(&k),
            None => path.index(j),
        };
    }
    path
}

/// Whether `path` names a flow group's table (`flows[i]`, read through `kind`).
pub(crate) fn is_flow(path: &KeyPath) -> bool {
    matches!(path.0.as_slice(), [Step::Key(k), Step::Index(_)] if k == "flows")
}

/// The value at `path` in a plain TOML table.
pub(crate) fn value_at<'a>(root: &'a toml::Table, path: &KeyPath) -> Option<&'a toml::Value> {
    let mut steps = path.0.iter();
    let Some(Step::Key(first)) = steps.next() else {
        return None;
    };
    let mut v = root.get(first)?;
    for step in steps {
        v = match (v, step) {
            (toml::Value::Table(t), Step::Key(k)) => t.get(k)?,
            (toml::Value::Array(a), Step::Index(i)) => a.get(*i)?,
            _ => return None,
        };
    }
    Some(v)
}

/// Whether `path` names a qdisc table (the ones serde reads through `kind`).
pub(crate) fn is_qdisc(path: &KeyPath) -> bool {
    matches!(path.last_key(), Some("qdisc" | "reverse_qdisc"))
}

/// The file line of line `n` (from 1) of a `tc` script written as the TOML string
/// at `span` of `src`: a multi-line string's first line is the one after its
/// opening quotes when a newline follows them (TOML drops that newline). `None`
/// where the script's lines are not the file's: a one-line string (its `\n`
/// escapes make lines the file does not have) or a basic multi-line string with
/// a line-ending backslash (TOML joins those lines).
fn script_line(src: &str, span: &Range<usize>, n: usize) -> Option<usize> {
    let raw = src.get(span.clone())?;
    let (quotes, basic) = if raw.starts_with("\"\"\"") {
        ("\"\"\"", true)
    } else if raw.starts_with("'''") {
        ("'''", false)
    } else {
        return None;
    };
    let body = &raw[quotes.len()..];
    if basic && body.lines().any(|l| l.trim_end().ends_with('\\')) {
        return None;
    }
    let first =
        line_at(src, span.start) + usize::from(body.starts_with('\n') || body.starts_with("\r\n"));
    Some(first + n - 1)
}

/// The file line of an error about the key at `path`: the key's own line, or for
/// a `tc` key whose error names a tree script's line (`tc script, line N: ...`),
/// the file line that script line is written on.
pub(crate) fn error_line(src: &str, spans: &Spans, path: &KeyPath, message: &str) -> Option<usize> {
    tc_script_line(src, spans, path, message)
        .or_else(|| spans.locate(path).map(|s| line_at(src, s.start)))
}

fn tc_script_line(src: &str, spans: &Spans, path: &KeyPath, message: &str) -> Option<usize> {
    if path.last_key() != Some("tc") {
        return None;
    }
    let rest = message.split("tc script, line ").nth(1)?;
    let n = rest.split(':').next()?.parse().ok()?;
    script_line(src, &spans.value_span(path)?, n)
}
