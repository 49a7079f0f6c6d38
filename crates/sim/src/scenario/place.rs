//! Where a scenario error is: the line of a key in a file, or for a scenario given
//! as a dict (whose lines mean nothing to its author) the table's name.

use std::collections::HashMap;
use std::fmt;
use std::ops::Range;

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

/// 1-based line of byte offset `at` in `src`.
pub(crate) fn line_at(src: &str, at: usize) -> usize {
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
pub(crate) fn place(
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
