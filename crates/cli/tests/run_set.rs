//! `aqmlab run --set KEY=VALUE` and the labels of a single run's tables.

use std::path::Path;
use std::process::Command;

fn aqmlab(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_aqmlab"))
        .args(args)
        .output()
        .expect("aqmlab runs");
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn header(dir: &Path, table: &str) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join(format!("{table}.csv"))).unwrap();
    let first = text.lines().next().unwrap();
    first.split(',').map(str::to_string).collect()
}

fn column(dir: &Path, table: &str, name: &str) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join(format!("{table}.csv"))).unwrap();
    let mut lines = text.lines();
    let i = lines
        .next()
        .unwrap()
        .split(',')
        .position(|c| c == name)
        .unwrap_or_else(|| panic!("{table} has no column {name}"));
    lines
        .map(|l| l.split(',').nth(i).unwrap().to_string())
        .collect()
}

const SHORT: [&str; 6] = ["run", "choke-fig3", "--duration", "3s", "--warmup", "1s"];

#[test]
fn set_changes_the_run_and_labels_every_table() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("red");
    let (code, json, err) = aqmlab(
        &[
            &SHORT[..],
            &[
                "--set",
                "qdisc.kind=droptail",
                "--set",
                "flows.udp.count=2",
                "--seed",
                "7",
                "--json",
                "-q",
                "--format",
                "csv",
                "--out",
                out.to_str().unwrap(),
            ],
        ]
        .concat(),
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(json.contains("\"droptail\""), "the qdisc was set");
    for table in ["run", "flows", "groups", "links", "fairness"] {
        assert_eq!(
            header(&out, table)[..4],
            ["scenario", "qdisc.kind", "flows.udp.count", "seed"],
            "{table}"
        );
        for v in column(&out, table, "qdisc.kind") {
            assert_eq!(v, "droptail");
        }
        for v in column(&out, table, "seed") {
            assert_eq!(v, "7");
        }
    }
    assert_eq!(column(&out, "groups", "flows.udp.count"), ["2", "2"]);
    // The links table's own `qdisc` column says what ran.
    assert!(column(&out, "links", "qdisc").contains(&"droptail".to_string()));
}

#[test]
fn without_set_the_tables_carry_the_scenario_and_the_seed() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("plain");
    let (code, _, err) = aqmlab(
        &[
            &SHORT[..],
            &["-q", "--format", "csv", "--out", out.to_str().unwrap()],
        ]
        .concat(),
    );
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(header(&out, "flows")[..3], ["scenario", "seed", "id"]);
    assert_eq!(header(&out, "run")[..3], ["scenario", "seed", "duration_s"]);
}

#[test]
fn a_key_that_clashes_with_a_column_is_named_as_a_sweep_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("named");
    let (code, _, err) = aqmlab(
        &[
            &SHORT[..],
            &[
                "--set",
                "name=mine",
                "-q",
                "--format",
                "csv",
                "--out",
                out.to_str().unwrap(),
            ],
        ]
        .concat(),
    );
    assert_eq!(code, Some(0), "{err}");
    // `name` is a column of the links table: the key's column is `set.name`.
    assert_eq!(header(&out, "links")[..3], ["scenario", "set.name", "seed"]);
    assert_eq!(column(&out, "links", "scenario")[0], "mine");
}

#[test]
fn a_bad_set_is_one_line_naming_the_key() {
    let cases = [
        (
            "flows.web.rate=1Mbps",
            "--set flows.web.rate: flows has no entry named 'web'",
        ),
        (
            "qdisc.kind=red,sfb",
            "--set qdisc.kind=red,sfb: one value per key",
        ),
        ("qdisc.frobs=3", "with --set qdisc.frobs=3"),
        ("qdisc.kind", "--set \"qdisc.kind\": expected KEY=VALUE"),
    ];
    for (set, expected) in cases {
        let (code, out, err) = aqmlab(&[&SHORT[..], &["--set", set]].concat());
        assert_eq!(code, Some(2), "{set}");
        assert!(out.is_empty());
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("error: "), "{err}");
        assert!(err.contains(expected), "{set}: {err}");
    }
}
