//! Dotted-key assignments to a scenario: `aqmlab run --set qdisc.kind=red`
//! (`aqmlab.run(..., set={...})` in Python), one value per key.
//!
//! The one implementation of these rules: `aqmlab sweep` and Python's sweep
//! grids make each point with [`apply_all`] (`_aqmlab.assign`). A key is a
//! dotted path into the scenario as its TOML spells it (`qdisc.max_th`,
//! `topology.bottleneck.rate`);
//! a step into a list (`flows`) names an element by its `name` or its index; a
//! missing key is added. A value is a TOML value (`300`, `0.02`, `true`,
//! `{kind = "red"}`), or the text itself when it is not one (`red`, `2Mbps`).
//! Setting `qdisc.kind` to another kind keeps the `[qdisc]` keys the new kind
//! takes and drops the others, unless a `--set` gave them.
//!
//! The scenario is first parsed as written, so its own errors name its file and
//! line; an error after the assignments names them.

use crate::front::overrides::Overrides;
use crate::front::source;
use crate::scenario::Scenario;
use serde_json::Value;
use std::fmt::Write;

/// A scenario as a table of JSON values: what a file's TOML and a Python dict
/// both become (JSON holds every integer a scenario may, TOML not those above
/// 2^63).
pub type Table = serde_json::Map<String, Value>;

/// One `KEY=VALUE`, parsed.
#[derive(Clone, Debug, PartialEq)]
pub struct Assignment {
    /// The dotted key, as given.
    pub key: String,
    /// The value, as TOML.
    pub value: toml::Value,
}

/// The value `text` means: a TOML value, or the text itself when it is not one.
pub fn parse_value(text: &str) -> toml::Value {
    match toml::from_str::<toml::Table>(&format!("v = {text}")) {
        Ok(mut t) => t
            .remove("v")
            .unwrap_or_else(|| toml::Value::String(text.into())),
        Err(_) => toml::Value::String(text.into()),
    }
}

/// Whether `text` holds a comma outside quotes, brackets and braces: several
/// values, as a sweep takes them.
fn several(text: &str) -> bool {
    let (mut depth, mut quote) = (0i32, None);
    for ch in text.chars() {
        match (quote, ch) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(ch),
            (None, '[' | '{') => depth += 1,
            (None, ']' | '}') => depth -= 1,
            (None, ',') if depth == 0 => return true,
            _ => {}
        }
    }
    false
}

/// Parses `KEY=VALUE` (the text of one `--set`).
pub fn parse(text: &str) -> Result<Assignment, String> {
    let (key, value) = text.split_once('=').unwrap_or((text, ""));
    let (key, value) = (key.trim(), value.trim());
    if key.is_empty() || !text.contains('=') || value.is_empty() {
        return Err(format!(
            "--set {text:?}: expected KEY=VALUE, e.g. qdisc.kind=red or flows.udp.rate=2Mbps"
        ));
    }
    check_key(key)?;
    if several(value) {
        return Err(format!(
            "--set {key}={value}: one value per key (`aqmlab sweep --set` runs several; \
             quote a text with a comma: {key}='\"{value}\"')"
        ));
    }
    Ok(Assignment {
        key: key.to_string(),
        value: parse_value(value),
    })
}

/// Checks a dotted key's form: no empty step.
pub fn check_key(key: &str) -> Result<(), String> {
    if key.is_empty() || key.split('.').any(str::is_empty) {
        return Err(format!(
            "--set {key}: the key has an empty step (keys look like qdisc.kind or flows.udp.rate)"
        ));
    }
    Ok(())
}

/// Checks that no key of `sets` is given twice.
pub fn check_unique(sets: &[Assignment]) -> Result<(), String> {
    for (i, a) in sets.iter().enumerate() {
        if sets[..i].iter().any(|b| b.key == a.key) {
            return Err(format!("--set {}: given twice", a.key));
        }
    }
    Ok(())
}

/// Sets `a.key` in `table` to `a.value`.
pub fn apply(table: &mut Table, a: &Assignment) -> Result<(), String> {
    let steps: Vec<&str> = a.key.split('.').collect();
    let value = serde_json::to_value(&a.value).map_err(|e| format!("--set {}: {e}", a.key))?;
    let mut root = Value::Object(std::mem::take(table));
    let done = set(&mut root, &steps, 0, &a.key, &value);
    if let Value::Object(t) = root {
        *table = t;
    }
    done
}

fn set(
    node: &mut Value,
    steps: &[&str],
    depth: usize,
    key: &str,
    value: &Value,
) -> Result<(), String> {
    let (step, last) = (steps[depth], depth + 1 == steps.len());
    let where_ = if depth == 0 {
        "the scenario".to_string()
    } else {
        steps[..depth].join(".")
    };
    match node {
        Value::Object(t) if last => {
            t.insert(step.to_string(), value.clone());
            Ok(())
        }
        Value::Object(t) => {
            let next = t
                .entry(step.to_string())
                .or_insert_with(|| Value::Object(Table::new()));
            set(next, steps, depth + 1, key, value)
        }
        Value::Array(items) => {
            let i = index(items, step, key, &where_)?;
            if last {
                items[i] = value.clone();
                Ok(())
            } else {
                set(&mut items[i], steps, depth + 1, key, value)
            }
        }
        other => Err(format!("--set {key}: {where_} is {other}, not a table")),
    }
}

/// The index of the element of `items` named `step` (its `name`), or `step` as an
/// index.
fn index(items: &[Value], step: &str, key: &str, list: &str) -> Result<usize, String> {
    let names: Vec<&str> = items
        .iter()
        .filter_map(|i| i.get("name").and_then(Value::as_str))
        .collect();
    if let Some(i) = items
        .iter()
        .position(|i| i.get("name").and_then(Value::as_str) == Some(step))
    {
        return Ok(i);
    }
    match step.parse::<usize>() {
        Ok(i) if i < items.len() => Ok(i),
        _ => {
            let mut known = String::new();
            for (n, name) in names.iter().enumerate() {
                let _ = write!(known, "{}'{name}'", if n > 0 { ", " } else { "" });
            }
            if known.is_empty() {
                known = "none named".into();
            }
            Err(format!(
                "--set {key}: {list} has no entry named '{step}' (entries: {known})"
            ))
        }
    }
}

/// After `qdisc.kind` changed: drops the `[qdisc]` keys the new kind does not
/// take, except those a `--set` gave.
fn keep_what_the_kind_takes(table: &mut Table, base_kind: Option<&str>, sets: &[Assignment]) {
    let Some(Value::Object(q)) = table.get_mut("qdisc") else {
        return;
    };
    let kind = q.get("kind").and_then(Value::as_str).map(str::to_string);
    let Some(kind) = kind else { return };
    if Some(kind.as_str()) == base_kind {
        return;
    }
    let Some(takes) = aqm::QdiscSpec::keys(&kind) else {
        return; // an unknown kind: the scenario's own error names it
    };
    let given: Vec<&str> = sets
        .iter()
        .filter_map(|a| a.key.strip_prefix("qdisc."))
        .collect();
    q.retain(|k, _| {
        let k = k.as_str();
        k == "kind" || takes.contains(&k) || given.contains(&k)
    });
}

/// Parses the texts of the `--set`s (each `KEY=VALUE`); a key given twice is
/// an error.
pub fn parse_all(texts: &[String]) -> Result<Vec<Assignment>, String> {
    let assignments = texts
        .iter()
        .map(|t| parse(t))
        .collect::<Result<Vec<_>, _>>()?;
    check_unique(&assignments)?;
    Ok(assignments)
}

/// Loads the scenario `arg` (a file or a built-in name, as `aqmlab run` resolves
/// it), applies `sets` and the overrides `o`. Errors are the one line the command
/// prints.
pub fn load<A: AsRef<std::ffi::OsStr> + ?Sized>(
    arg: Option<&A>,
    sets: &[Assignment],
    o: &Overrides<'_>,
) -> Result<Scenario, String> {
    let src = source::resolve(arg).map_err(|e| e.to_string())?;
    let mut s = Scenario::from_toml(&src.text, &src.origin).map_err(|e| e.to_string())?;
    if !sets.is_empty() {
        let table: Table = toml::from_str(&src.text).map_err(|e| e.to_string())?;
        s = with(table, sets, &src.origin)?;
    }
    o.apply(&mut s).map_err(|e| e.to_string())?;
    Ok(s)
}

/// Applies `assignments` to `table` in order; when they change `qdisc.kind`, the
/// `[qdisc]` keys the new kind does not take go, unless an assignment gave them.
/// The one rule set of `run --set`, `sweep --set` and Python's sweep grids.
pub fn apply_all(table: &mut Table, assignments: &[Assignment]) -> Result<(), String> {
    let base_kind = table
        .get("qdisc")
        .and_then(|q| q.get("kind"))
        .and_then(Value::as_str)
        .map(str::to_string);
    for a in assignments {
        apply(table, a)?;
    }
    if assignments.iter().any(|a| a.key == "qdisc.kind") {
        keep_what_the_kind_takes(table, base_kind.as_deref(), assignments);
    }
    Ok(())
}

/// The scenario `table` (from `origin`) with `assignments` applied.
pub fn with(
    mut table: Table,
    assignments: &[Assignment],
    origin: &str,
) -> Result<Scenario, String> {
    apply_all(&mut table, assignments)?;
    // Each assignment as given, a long value by its start and length (the error
    // quotes it once, where it failed, if at all).
    let shown: Vec<String> = assignments
        .iter()
        .map(|a| {
            let value = a.value.to_string();
            let chars = value.chars().count();
            if chars > 80 {
                let head: String = value.chars().take(40).collect();
                format!("{}={head}... ({chars} characters)", a.key)
            } else {
                format!("{}={value}", a.key)
            }
        })
        .collect();
    let mut s = Scenario::from_table_beside(table, origin).map_err(|mut e| {
        e.origin = format!("{origin} with --set {}", shown.join(" --set "));
        e.to_string()
    })?;
    s.origin = origin.to_string();
    Ok(s)
}

#[cfg(test)]
mod tests;
