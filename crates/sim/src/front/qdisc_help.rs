//! What `aqmlab qdiscs KIND` prints: a qdisc's keys with their defaults, units and
//! sources.
//!
//! The keys and defaults are the code's ([`QdiscSpec::keys`] and the kind's
//! default parameters, written as a scenario writes them); the unit and the source
//! of each default are the parameter table of the kind's section in
//! `docs/qdiscs.md`, compiled in (`crates/aqm/tests/docs.rs` holds every table to
//! the code's keys and defaults, so the two cannot disagree).

use aqm::QdiscSpec;
use std::fmt::Write as _;

const DOC: &str = include_str!("../../../../docs/qdiscs.md");

/// One parameter row of the docs: key, the remark after the default (a unit),
/// the source.
struct Row<'a> {
    key: &'a str,
    remark: &'a str,
    source: &'a str,
}

/// The title of `kind`'s section in `docs/qdiscs.md` and its table rows.
fn section(kind: &str) -> (Option<&'static str>, Vec<Row<'static>>) {
    let tag = format!("`kind = \"{kind}\"`");
    let mut title = None;
    let mut current: Option<&str> = None;
    let mut rows = Vec::new();
    let mut ours = false;
    for line in DOC.lines() {
        if let Some(t) = line.strip_prefix("## ") {
            current = Some(t);
            ours = false;
            continue;
        }
        if !ours && current.is_some() && line.contains(&tag) && title.is_none() {
            title = current;
            ours = true;
            continue;
        }
        if !ours {
            continue;
        }
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 4 || !cells[1].starts_with('`') {
            continue;
        }
        let remark = cells[2]
            .strip_prefix('`')
            .and_then(|v| v.split_once('`'))
            .map_or("", |(_, rest)| rest.trim());
        rows.push(Row {
            key: cells[1].trim_matches('`'),
            remark,
            source: cells[3],
        });
    }
    (title, rows)
}

/// `kind`'s default parameters as TOML values, by key.
fn defaults(kind: &str) -> Option<toml::Table> {
    let spec: QdiscSpec = toml::from_str(&format!("kind = \"{kind}\"")).ok()?;
    toml::Table::try_from(&spec).ok()
}

/// What `aqmlab qdiscs KIND` prints, or `None` for an unknown kind.
pub fn describe(kind: &str) -> Option<String> {
    let keys = QdiscSpec::keys(kind)?;
    let defaults = defaults(kind)?;
    let (title, rows) = section(kind);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{kind}: {} (docs/qdiscs.md)\n",
        title.unwrap_or("see docs/qdiscs.md")
    );
    let cells: Vec<[String; 3]> = keys
        .iter()
        .map(|key| {
            let row = rows.iter().find(|r| r.key == *key);
            let value = defaults.get(*key).map_or_else(
                || "unset".to_string(),
                // As the docs write it: a whole-number threshold without `.0`.
                |v| match v {
                    toml::Value::Float(f) if f.fract() == 0.0 && f.abs() < 1e15 => {
                        format!("{f:.0}")
                    }
                    v => v.to_string(),
                },
            );
            let remark = row.map_or("", |r| r.remark);
            let default = if remark.is_empty() || remark.starts_with("unset") {
                value
            } else {
                format!("{value} {remark}")
            };
            let source = row.map_or("", |r| r.source).replace('`', "");
            [key.to_string(), default, source]
        })
        .collect();
    let width = |i: usize, head: &str| {
        cells
            .iter()
            .map(|c| c[i].chars().count())
            .chain([head.len()])
            .max()
            .unwrap_or(0)
    };
    let (wk, wd) = (width(0, "key"), width(1, "default"));
    let _ = writeln!(out, "{:<wk$}  {:<wd$}  source", "key", "default");
    for [k, d, s] in &cells {
        let line = format!("{k:<wk$}  {d:<wd$}  {s}");
        let _ = writeln!(out, "{}", line.trim_end());
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_prints_every_key_with_the_codes_default_and_its_source() {
        for kind in QdiscSpec::KINDS {
            let text = describe(kind).unwrap();
            let keys = QdiscSpec::keys(kind).unwrap();
            let lines: Vec<&str> = text.lines().skip(3).collect();
            assert_eq!(lines.len(), keys.len(), "{kind}:\n{text}");
            for (line, key) in lines.iter().zip(keys) {
                assert!(line.starts_with(&format!("{key} ")), "{kind}: {line}");
            }
            assert!(
                !text.contains("see docs/qdiscs.md"),
                "{kind} has no section"
            );
        }
        let red = describe("red").unwrap();
        assert!(
            red.starts_with("red: RED (and GRED, Adaptive RED)"),
            "{red}"
        );
        assert!(red.contains("min_th"), "{red}");
        let min_th = red.lines().find(|l| l.starts_with("min_th ")).unwrap();
        assert!(
            min_th.contains("5 packets") && min_th.ends_with("ns-2 thresh_"),
            "{min_th}"
        );
        let interval = red
            .lines()
            .find(|l| l.starts_with("adapt_interval "))
            .unwrap();
        assert!(interval.contains("\"500ms\""), "{interval}");
        assert_eq!(describe("fq_magic"), None);
    }
}
