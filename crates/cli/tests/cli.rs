//! The `aqmlab` command as a user meets it: exit codes, one-line errors, output files.

use std::path::Path;
use std::process::{Command, Output};

fn aqmlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_aqmlab"))
        .args(args)
        .output()
        .expect("aqmlab runs")
}

const EXAMPLE: &str = include_str!("../../../scenarios/choke-fig3.toml");

/// Writes `text` as a scenario file in `dir` and returns its path.
fn scenario_file(dir: &Path, text: &str) -> String {
    let p = dir.join("s.toml");
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

/// Runs a broken scenario: exit status 2 and exactly one line on stderr naming `needle`.
#[track_caller]
fn rejects(text: &str, needle: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = scenario_file(dir.path(), text);
    let out = aqmlab(&["run", &path]);
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(err.contains(needle), "{err:?} should mention {needle:?}");
    assert!(out.stdout.is_empty());
    err
}

#[test]
fn the_default_scenario_runs_and_prints_a_summary() {
    let out = aqmlab(&["run", "--duration", "21s", "--quiet"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("choke (seed 1)"), "{text}");
    assert!(text.contains("choke"), "the default runs CHOKe");
    assert!(text.contains("left->right"));
}

#[test]
fn json_has_the_documented_keys() {
    let out = aqmlab(&["run", "--json", "--duration", "30s", "--seed", "3"]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for key in [
        "events",
        "wall_seconds",
        "sim_seconds",
        "flows",
        "groups",
        "links",
        "fairness",
    ] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    assert_eq!(v["seed"], 3);
    assert_eq!(v["sim_seconds"], 30.0);
    let flow = &v["flows"][0];
    for key in ["id", "group", "kind", "goodput_bps", "drops"] {
        assert!(flow.get(key).is_some(), "flow missing {key}");
    }
    assert_eq!(v["groups"]["tcp"]["count"], 32);
    assert!(v["groups"]["udp"]["goodput_bps"].as_f64().unwrap() > 0.0);
    assert!(v["events"].as_u64().unwrap() > 10_000);
}

#[test]
fn same_seed_same_json_but_wall_time() {
    let run = || {
        let out = aqmlab(&["run", "--json", "--duration", "25s"]);
        let mut v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v.as_object_mut().unwrap().remove("wall_seconds");
        serde_json::to_string(&v).unwrap()
    };
    assert_eq!(run(), run());
}

#[test]
fn an_unknown_key_is_named_with_its_line() {
    let text = EXAMPLE.replace("max_th = 200", "max_th = 200\nmax_thresh = 3");
    let line = text.lines().position(|l| l == "max_thresh = 3").unwrap() + 1;
    let err = rejects(&text, "unknown field `max_thresh`");
    assert!(err.contains(&format!("s.toml:{line}:")), "{err}");
}

#[test]
fn a_negative_rate_is_rejected() {
    rejects(
        &EXAMPLE.replace("rate = \"2Mbps\"", "rate = \"-2Mbps\""),
        "rate '-2Mbps' must not be negative",
    );
}

#[test]
fn thresholds_out_of_order_are_rejected_at_their_line() {
    let text = EXAMPLE.replace("min_th = 100", "min_th = 250");
    let line = text.lines().position(|l| l == "min_th = 250").unwrap() + 1;
    let err = rejects(&text, "qdisc.min_th = 250 must be below max_th = 200");
    assert!(err.contains(&format!("s.toml:{line}:")), "{err}");
}

#[test]
fn a_flow_to_a_missing_node_is_rejected() {
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
to = "nowhere"
"#;
    rejects(text, "to = \"nowhere\" is not a node of the topology");
}

#[test]
fn a_missing_file_is_rejected() {
    let out = aqmlab(&["run", "no/such/scenario.toml"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("no/such/scenario.toml: cannot read scenario file"),
        "{err}"
    );
}

#[test]
fn warmup_overrides_the_scenarios_and_a_duration_inside_it_names_warmup() {
    let out = aqmlab(&["run", "choke-fig3", "--duration", "10s", "--quiet"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        err,
        "error: --duration 10s is not longer than the scenario's warm-up (20s), after which a \
         run is measured: give a shorter --warmup too, e.g. --warmup 2s\n"
    );
    let out = aqmlab(&[
        "run",
        "choke-fig3",
        "--duration",
        "10s",
        "--warmup",
        "2s",
        "--json",
        "-q",
    ]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["warmup_s"], 2.0);
}

#[test]
fn bad_flags_exit_2() {
    assert_eq!(aqmlab(&["run", "--duration", "ten"]).status.code(), Some(2));
    assert_eq!(aqmlab(&["run", "--seed", "-1"]).status.code(), Some(2));
    let out = aqmlab(&["run", "--pcap", "nowhere->else", "--duration", "21s"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("--pcap: no link direction named \"nowhere->else\""));
    assert_eq!(aqmlab(&["frobnicate"]).status.code(), Some(2));
}

#[test]
fn out_writes_whole_tables_and_the_summary_last() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("results");
    let out = aqmlab(&[
        "run",
        "--duration",
        "21s",
        "--quiet",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let mut names: Vec<String> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    let mut want: Vec<String> = sim::tables::TABLES
        .iter()
        .map(|(n, _)| format!("{n}.parquet"))
        .chain(["summary.json".to_string(), ".aqmlab-files".to_string()])
        .collect();
    want.sort();
    assert_eq!(names, want);
    for n in &names {
        if n.ends_with(".parquet") {
            let bytes = std::fs::read(out_dir.join(n)).unwrap();
            assert!(
                bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"),
                "{n} is a whole Parquet file"
            );
        }
    }
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out_dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["flows"].as_array().unwrap().len(), 33);

    // The same folder again, as CSV: the Parquet tables of the first run and a
    // killed writer's temporary file go; a file that is no table stays, and so
    // does a temporary file of a writer that may be running (process 1).
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    let dead = gone.id();
    gone.wait().unwrap();
    let killed = format!(".flows.partial-{}-{dead}.csv", host.trim());
    std::fs::write(out_dir.join(&killed), "half").unwrap();
    std::fs::write(out_dir.join(".flows.partial-1.csv"), "live").unwrap();
    std::fs::write(out_dir.join("notes.txt"), "mine").unwrap();
    let out = aqmlab(&[
        "run",
        "--duration",
        "22s",
        "--quiet",
        "--format",
        "csv",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let mut names: Vec<String> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    let mut want: Vec<String> = sim::tables::TABLES
        .iter()
        .map(|(n, _)| format!("{n}.csv"))
        .chain([
            "notes.txt".to_string(),
            "summary.json".to_string(),
            ".aqmlab-files".to_string(),
            ".flows.partial-1.csv".to_string(),
        ])
        .collect();
    want.sort();
    assert_eq!(names, want);
    let run = std::fs::read_to_string(out_dir.join("run.csv")).unwrap();
    assert!(
        run.starts_with("scenario,seed,duration_s,warmup_s,"),
        "{run}"
    );
    let links = std::fs::read_to_string(out_dir.join("links.csv")).unwrap();
    assert!(links.lines().next().unwrap().contains("marks_choke_match"));
}

#[test]
fn a_run_that_fails_leaves_no_summary_of_an_earlier_one_behind_it() {
    // An unwritable table: the folder must not keep the earlier run's mark.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let ok = aqmlab(&["run", "--duration", "21s", "--quiet", "--out", d]);
    assert!(ok.status.success());
    std::fs::remove_file(dir.path().join("flows.parquet")).unwrap();
    std::fs::create_dir(dir.path().join("flows.parquet")).unwrap(); // rename onto a folder fails
    let out = aqmlab(&["run", "--duration", "21s", "--quiet", "--out", d]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!dir.path().join("summary.json").exists());
    let partial = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name().into_string().unwrap();
            name.contains(".partial-")
        })
        .count();
    assert_eq!(partial, 0, "a temporary file was left behind");
}

#[test]
fn pcap_of_the_bottleneck_is_readable() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let out = aqmlab(&[
        "run",
        "--duration",
        "21s",
        "--quiet",
        "--pcap",
        "bottleneck",
        "--out",
        d,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pcap = dir.path().join("bottleneck.pcap");
    let bytes = std::fs::read(&pcap).unwrap();
    assert_eq!(
        &bytes[..4],
        &0xa1b2_3c4du32.to_le_bytes(),
        "nanosecond pcap magic"
    );
    assert!(bytes.len() > 24 + 1000 * 56, "{} bytes", bytes.len());
    // tshark, where installed (CI installs it), must decode it as TCP and UDP over IPv4.
    match Command::new("tshark")
        .args([
            "-r",
            pcap.to_str().unwrap(),
            "-c",
            "400",
            "-T",
            "fields",
            "-e",
            "ip.proto",
        ])
        .output()
    {
        Ok(t) => {
            assert!(t.status.success(), "{}", String::from_utf8_lossy(&t.stderr));
            let protos = String::from_utf8(t.stdout).unwrap();
            assert!(
                protos.lines().any(|l| l == "6") && protos.lines().any(|l| l == "17"),
                "{protos}"
            );
        }
        Err(_) if std::env::var_os("CI").is_none() => {
            eprintln!("tshark not installed: pcap decoding not checked")
        }
        Err(e) => panic!("CI must have tshark: {e}"),
    }
}

#[test]
fn scenarios_lists_the_builtins() {
    let out = aqmlab(&["scenarios"]);
    let text = String::from_utf8(out.stdout).unwrap();
    // The default's entry (its line and the lines its description wraps onto)
    // ends with the mark.
    let entry: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("choke "))
        .enumerate()
        .take_while(|(i, l)| *i == 0 || l.starts_with(' '))
        .map(|(_, l)| l)
        .collect();
    assert!(text.contains("choke-fig3"), "{text}");
    assert!(
        entry.last().is_some_and(|l| l.ends_with("(default)")),
        "{text}"
    );
    let out = aqmlab(&["qdiscs"]);
    let text = String::from_utf8(out.stdout).unwrap();
    for k in [
        "droptail", "red", "choke", "sfb", "breathe", "mrul", "nlred", "blue", "sfred", "sfq",
    ] {
        assert!(text.lines().any(|l| l == k), "{k}");
    }
}

#[test]
fn a_stdout_that_cannot_be_written_is_an_error_not_a_silent_success() {
    // A full disk: `aqmlab run --json > file` must not exit 0 with an empty file.
    if Path::new("/dev/full").exists() {
        for args in [
            &["run", "--duration", "21s", "--quiet", "--json"][..],
            &["scenarios"][..],
        ] {
            let out = Command::new(env!("CARGO_BIN_EXE_aqmlab"))
                .args(args)
                .stdout(std::fs::File::create("/dev/full").unwrap())
                .output()
                .unwrap();
            let err = String::from_utf8(out.stderr).unwrap();
            assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
            assert_eq!(
                err.trim_end(),
                "error: writing to standard output: No space left on device (os error 28)"
            );
        }
    }
    // A reader that went away (`| head -c1` once it has its byte): the pipe's
    // read end is closed before the run prints.
    let mut child = Command::new(env!("CARGO_BIN_EXE_aqmlab"))
        .args(["run", "--duration", "21s", "--quiet"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.starts_with("error: writing to standard output: Broken pipe"),
        "{err}"
    );
}

#[test]
fn an_out_that_names_a_file_is_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("results.txt");
    std::fs::write(&file, "keep me").unwrap();
    let f = file.to_str().unwrap();
    // A duration that would take minutes: the refusal must come first.
    for (out_arg, needle) in [
        (f.to_string(), "is a file, not a folder".to_string()),
        (
            format!("{f}/sub"),
            format!("{f} is a file, so the folder cannot be made"),
        ),
    ] {
        let started = std::time::Instant::now();
        let out = aqmlab(&["run", "--duration", "100000s", "--quiet", "--out", &out_arg]);
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(&needle), "{err}");
        assert!(started.elapsed().as_secs() < 60, "it ran first");
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep me");
}

#[test]
fn tc_prints_a_qdisc_table_a_scenario_runs_and_refuses_unknown_options() {
    let line = "tc qdisc add dev eth0 root fq_codel limit 1000 target 2ms noecn";
    let out = aqmlab(&["tc", line]);
    assert_eq!(out.status.code(), Some(0));
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.starts_with(&format!("# {line}\n")), "{table}");
    assert!(table.contains("[qdisc]\nkind = \"fq_codel\"\n"), "{table}");
    assert!(table.contains("target = \"2ms\"\n") && table.contains("ecn = false\n"));
    // The printed table, pasted into a scenario in place of its [qdisc], runs.
    let start = EXAMPLE.find("[qdisc]").unwrap();
    let end = start + EXAMPLE[start..].find("\n\n").unwrap();
    let text = format!("{}{}{}", &EXAMPLE[..start], table, &EXAMPLE[end..])
        .replace("duration = \"100s\"", "duration = \"3s\"")
        .replace("warmup = \"20s\"", "warmup = \"1s\"");
    let dir = tempfile::tempdir().unwrap();
    let path = scenario_file(dir.path(), &text);
    let out = aqmlab(&["run", &path, "--json", "-q"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8(out.stdout).unwrap().contains("fq_codel"));
    // Unknown options: one line, exit 2.
    let out = aqmlab(&["tc", "tc qdisc add dev eth0 root pie quick"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("pie has no option `quick`"), "{err}");
}

#[test]
fn tc_prints_a_trees_nested_table_and_refuses_a_bad_line_by_its_number() {
    let script = "tc qdisc add dev eth0 root handle 1: htb default 20
tc class add dev eth0 parent 1: classid 1:10 htb rate 2mbit
tc class add dev eth0 parent 1: classid 1:20 htb rate 6mbit ceil 8mbit
tc qdisc add dev eth0 parent 1:20 fq_codel";
    let out = aqmlab(&["tc", script]);
    assert_eq!(out.status.code(), Some(0));
    let table = String::from_utf8(out.stdout).unwrap();
    // Every line echoed as a comment, then the tree.
    assert!(table.starts_with("# tc qdisc add dev eth0 root handle 1: htb default 20\n"));
    assert_eq!(table.matches("[[qdisc.class]]").count(), 2, "{table}");
    assert!(table.contains("[qdisc.class.qdisc]\n"), "{table}");
    assert!(table.contains("[qdisc]\n"), "{table}");
    assert!(table.contains("kind = \"htb\"\n") && table.contains("default = \"1:20\"\n"));
    let bad = script.replace("parent 1: classid 1:20", "parent 1:5 classid 1:20");
    let out = aqmlab(&["tc", &bad]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("tc script, line 3: class 1:20: parent 1:5 does not exist"),
        "{err}"
    );
}
