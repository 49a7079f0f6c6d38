//! `docs/qdiscs.md` against the code: every kind has a section whose parameter
//! table lists exactly the keys the code accepts, and every default in a table is
//! the code's. A table row is
//!
//! ```text
//! | `key` | `toml value` unit or remark | source |
//! ```
//!
//! with the default written as a scenario would write it (`1000`, `"500ms"`,
//! `"tail"`), or `unset` for an optional key. A row's default is checked by
//! parsing `kind = "..."` plus `key = value` and comparing with the kind's
//! defaults, so docs and code cannot drift apart.

use aqm::QdiscSpec;
use std::collections::BTreeMap;

const DOC: &str = include_str!("../../../docs/qdiscs.md");

/// Each kind's table rows: key -> (default cell's TOML value or `None` for unset,
/// line number).
fn tables() -> BTreeMap<String, BTreeMap<String, (Option<String>, usize)>> {
    let mut out: BTreeMap<String, BTreeMap<String, (Option<String>, usize)>> = BTreeMap::new();
    // The kinds of the current section: every `kind = "..."` of its first line
    // that names one (the fair queues' section names two, sharing one table).
    let mut kinds: Vec<String> = Vec::new();
    for (i, line) in DOC.lines().enumerate() {
        let n = i + 1;
        if line.starts_with("## ") {
            kinds.clear();
            continue;
        }
        if kinds.is_empty() {
            kinds = line
                .split("`kind = \"")
                .skip(1)
                .filter_map(|rest| rest.find('"').map(|end| rest[..end].to_string()))
                .collect();
            continue;
        }
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 4 || !cells[1].starts_with('`') {
            continue;
        }
        let key = cells[1].trim_matches('`');
        assert!(
            key.chars()
                .all(|c| c.is_ascii_lowercase() || c == '_' || c.is_ascii_digit()),
            "docs/qdiscs.md:{n}: one key per row, in backticks: {line}"
        );
        let default = if cells[2].starts_with("unset") {
            None
        } else {
            let value = cells[2]
                .strip_prefix('`')
                .and_then(|v| v.split('`').next())
                .unwrap_or_else(|| {
                    panic!("docs/qdiscs.md:{n}: the default must start with a `value` or `unset`")
                });
            Some(value.to_string())
        };
        for k in &kinds {
            let previous = out
                .entry(k.clone())
                .or_default()
                .insert(key.to_string(), (default.clone(), n));
            assert!(
                previous.is_none(),
                "docs/qdiscs.md:{n}: `{key}` is listed twice for {k}"
            );
        }
    }
    out
}

fn default_spec(kind: &str) -> QdiscSpec {
    toml::from_str(&format!("kind = \"{kind}\"")).unwrap()
}

#[test]
fn every_key_of_every_kind_is_documented_with_the_codes_default() {
    let tables = tables();
    for kind in QdiscSpec::KINDS {
        let rows = tables
            .get(*kind)
            .unwrap_or_else(|| panic!("docs/qdiscs.md has no table for kind = \"{kind}\""));
        let keys = QdiscSpec::keys(kind).unwrap();
        for key in keys {
            assert!(
                rows.contains_key(*key),
                "docs/qdiscs.md: `{key}` of kind = \"{kind}\" is not in its table"
            );
        }
        let defaults = default_spec(kind);
        let serialized = toml::to_string(&defaults).unwrap();
        for (key, (value, line)) in rows {
            assert!(
                keys.contains(&key.as_str()),
                "docs/qdiscs.md:{line}: kind = \"{kind}\" has no key `{key}`"
            );
            match value {
                Some(v) => {
                    let text = format!("kind = \"{kind}\"\n{key} = {v}");
                    let spec: QdiscSpec = toml::from_str(&text).unwrap_or_else(|e| {
                        panic!("docs/qdiscs.md:{line}: `{key} = {v}` does not parse: {e}")
                    });
                    assert_eq!(
                        spec, defaults,
                        "docs/qdiscs.md:{line}: the default of `{key}` is not {v}"
                    );
                }
                None => assert!(
                    !serialized
                        .lines()
                        .any(|l| l.starts_with(&format!("{key} ="))),
                    "docs/qdiscs.md:{line}: `{key}` is documented unset but has a default"
                ),
            }
        }
    }
}
