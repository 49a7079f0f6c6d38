//! What serde lets through that a scenario's author would not mean: an array
//! where a table belongs (`bottleneck = ["1Mbps", "1ms"]`, which serde reads into
//! a struct field by field, in order), and an integer above what TOML can write
//! (the parser says only "number too large to fit in target type").

use super::{KeyPath, Scenario, ScenarioError, Step};

/// The tables of a scenario, as key paths with `[]` for every element of an
/// array: each must be written as a table (`[x]`, `[[x]]` or `{ ... }`).
const TABLES: &[&str] = &[
    "topology",
    "topology.access",
    "topology.bottleneck",
    "topology.reverse_qdisc",
    "topology.links[]",
    "topology.links[].qdisc",
    "topology.links[].reverse_qdisc",
    "qdisc",
    "monitor",
    "flows[]",
    "flows[].schedule[]",
];

/// The largest integer TOML can write: a signed 64-bit one.
const TOML_MAX_INTEGER: &str = "9223372036854775807";

impl Scenario {
    /// An error for the first value written as an array where a table belongs,
    /// at its line.
    pub(super) fn refuse_arrays_for_tables(&self) -> Result<(), ScenarioError> {
        let Ok(root) = toml::from_str::<toml::Table>(&self.source) else {
            return Ok(());
        };
        let root = toml::Value::Table(root);
        for pattern in TABLES {
            let mut found = Vec::new();
            arrays_at(&root, pattern, KeyPath::default(), &mut found);
            if let Some((path, shown)) = found.into_iter().next() {
                return Err(self.error_at(
                    &path,
                    format!(
                        "{path} = {shown} must be a table (written {path} = {{ key = value, ... }} \
                         or as [{table}]), not an array",
                        table = pattern.replace("[]", "")
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// The values at `pattern` below `v` (at `path`) that are arrays, each with its
/// path and a short rendering.
fn arrays_at(v: &toml::Value, pattern: &str, path: KeyPath, found: &mut Vec<(KeyPath, String)>) {
    if pattern.is_empty() {
        if let toml::Value::Array(a) = v {
            let mut shown = toml::Value::Array(a.clone()).to_string();
            if shown.chars().count() > 60 {
                shown = shown.chars().take(57).collect::<String>() + "...";
            }
            found.push((path, shown));
        }
        return;
    }
    let (step, rest) = match pattern.find(['.', '[']) {
        Some(0) => {
            // `[]`: every element of the array here.
            let rest = pattern[2..].trim_start_matches('.');
            if let toml::Value::Array(items) = v {
                for (i, item) in items.iter().enumerate() {
                    arrays_at(item, rest, path.index(i), found);
                }
            }
            return;
        }
        Some(n) => (&pattern[..n], pattern[n..].trim_start_matches('.')),
        None => (pattern, ""),
    };
    if let Some(child) = v.as_table().and_then(|t| t.get(step)) {
        arrays_at(child, rest, path.key(step), found);
    }
}

/// A parser's "number too large" at `at` in `text`, reworded to name the key
/// written before it (`hash_seed`) under its table, when one is found.
pub(super) fn integer_too_large(text: &str, at: usize) -> Option<String> {
    let before = &text[..at.min(text.len())];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    // `key = 18446744073709551616`, or the same inside an inline table.
    let head = before[line_start..]
        .trim_end()
        .strip_suffix('=')?
        .trim_end();
    let key: String = head
        .chars()
        .rev()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    if key.is_empty() {
        return None;
    }
    let digits: String = text[at.min(text.len())..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '+' || *c == '-')
        .collect();
    // The table the line is in: the last `[header]` before it.
    let table = before[..line_start]
        .lines()
        .rev()
        .find_map(|l| {
            let l = l.trim();
            l.starts_with('[')
                .then(|| l.trim_matches(|c| c == '[' || c == ']').trim().to_string())
        })
        .unwrap_or_default();
    let path = KeyPath(
        table
            .split('.')
            .filter(|s| !s.is_empty())
            .map(|s| Step::Key(s.trim().to_string()))
            .chain([Step::Key(key)])
            .collect(),
    );
    Some(format!(
        "{path} = {digits} is too large: TOML integers are at most {TOML_MAX_INTEGER} (2^63 - 1)"
    ))
}

/// The first integer of a JSON scenario (a Python dict) above what TOML can
/// write, as an error naming its key path.
pub(super) fn json_integer_too_large(v: &serde_json::Value, path: KeyPath) -> Option<String> {
    match v {
        serde_json::Value::Number(n) if n.as_u64().is_some_and(|u| u > i64::MAX as u64) => {
            Some(format!(
                "{path} = {n} is too large: scenario integers are at most {TOML_MAX_INTEGER} \
                 (2^63 - 1)"
            ))
        }
        serde_json::Value::Object(m) => m
            .iter()
            .find_map(|(k, v)| json_integer_too_large(v, path.key(k))),
        serde_json::Value::Array(a) => a
            .iter()
            .enumerate()
            .find_map(|(i, v)| json_integer_too_large(v, path.index(i))),
        _ => None,
    }
}
