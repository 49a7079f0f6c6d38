//! `aqmlab model ...` and `aqmlab queue-lab` as a user runs them.

use std::process::{Command, Output};

fn aqmlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_aqmlab"))
        .args(args)
        .output()
        .expect("run aqmlab")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

#[track_caller]
fn ok_json(args: &[&str]) -> serde_json::Value {
    let o = aqmlab(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    serde_json::from_str(&stdout(&o)).expect("one JSON object")
}

#[track_caller]
fn usage_error(args: &[&str]) -> String {
    let o = aqmlab(args);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    assert!(o.stdout.is_empty());
    let e = stderr(&o);
    assert_eq!(e.lines().count(), 1, "one line, got {e:?}");
    e
}

#[test]
fn sfb_misclass_prints_eq_1() {
    let o = aqmlab(&[
        "model",
        "sfb-misclass",
        "--levels",
        "2",
        "--bins",
        "23",
        "--nonresponsive",
        "4",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let p: f64 = out
        .trim()
        .strip_prefix("p = ")
        .expect(&out)
        .parse()
        .unwrap();
    let want = (1.0 - (22.0f64 / 23.0).powi(4)).powi(2);
    assert!((p - want).abs() < 1e-15, "{p} vs {want}");
    assert_eq!((p * 1e4).round(), 265.0, "2.65% in the SFB paper");
}

#[test]
fn sfb_misclass_json_is_one_object() {
    let v = ok_json(&[
        "model",
        "sfb-misclass",
        "--levels",
        "1",
        "--bins",
        "10",
        "--nonresponsive",
        "3",
        "--json",
    ]);
    assert_eq!(v["levels"], 1);
    assert_eq!(v["bins"], 10);
    assert_eq!(v["nonresponsive"], 3);
    assert!((v["p"].as_f64().unwrap() - 0.271).abs() < 1e-12);
}

#[test]
fn a_bad_model_argument_exits_2_naming_the_flag() {
    let e = usage_error(&[
        "model",
        "sfb-misclass",
        "--levels",
        "2",
        "--bins",
        "0",
        "--nonresponsive",
        "4",
    ]);
    assert_eq!(e, "error: --bins = 0 must be at least 1\n");
    let e = usage_error(&["model", "choke-back", "--memory", "2", "--rates", "1,1"]);
    assert_eq!(
        e,
        "error: --memory = 2 must be below the number of flows (2)\n"
    );
    let e = usage_error(&["model", "choke-front", "--mu", "1", "--rates", "1,0"]);
    assert_eq!(
        e,
        "error: --rates: flow 2's rate 0 must be a positive number\n"
    );
    let e = usage_error(&["model", "choke-front", "--mu", "1", "--rates", "5,5,5"]);
    assert!(e.contains("unstable"), "{e}");
}

#[test]
fn choke_front_gives_table_ii() {
    let v = ok_json(&[
        "model",
        "choke-front",
        "--mu",
        "1",
        "--rates",
        "0.3,0.6,0.9",
        "--json",
    ]);
    let r3 = |x: &serde_json::Value| (x.as_f64().unwrap() * 1000.0 + 1e-9).round() / 1000.0;
    assert_eq!(r3(&v["p0"]), 0.218);
    let t: Vec<f64> = v["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| r3(&f["throughput"]))
        .collect();
    assert_eq!(t, vec![0.188, 0.273, 0.321]);
    let o = aqmlab(&["model", "choke-front", "--mu", "1", "--rates", "0.5,1"]);
    assert!(stdout(&o).contains("P0 = 0.4167"), "{}", stdout(&o));
}

#[test]
fn choke_back_gives_table_iii() {
    let v = ok_json(&[
        "model",
        "choke-back",
        "--memory",
        "2",
        "--rates",
        "1,1,1,7",
        "--json",
    ]);
    let r4 = |x: &serde_json::Value| (x.as_f64().unwrap() * 1e4).round() / 1e4;
    let t: Vec<f64> = v["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| r4(&f["share"]))
        .collect();
    assert_eq!(t, vec![0.2273, 0.2273, 0.2273, 0.3182]);
    assert_eq!(v["stable"], serde_json::Value::Null);
    let v = ok_json(&[
        "model",
        "choke-back",
        "--memory",
        "1",
        "--rates",
        "0.1,0.2,0.3,0.4",
        "--mu",
        "1",
        "--json",
    ]);
    assert_eq!(v["stable"], true);
    assert!((v["p0"].as_f64().unwrap() - 0.3).abs() < 1e-12);
}

#[test]
fn queue_lab_runs_the_real_choke_and_reports_the_model_beside_it() {
    let v = ok_json(&[
        "queue-lab",
        "--qdisc",
        "choke",
        "--candidate",
        "front",
        "--mu",
        "1",
        "--rates",
        "0.5,1",
        "--packets",
        "20000",
        "--seed",
        "3",
        "--json",
    ]);
    assert_eq!(v["qdisc"], "choke");
    assert_eq!(v["candidate"], "front");
    assert_eq!(v["flows"].as_array().unwrap().len(), 2);
    let p0 = v["p0"].as_f64().unwrap();
    assert!((p0 - 0.4167).abs() < 0.03, "P0 {p0}");
    assert!((v["theory"]["p0"].as_f64().unwrap() - 5.0 / 12.0).abs() < 1e-12);
    assert!(v["drops_by_reason"]["choke_match"].as_u64().unwrap() > 0);
    let o = aqmlab(&[
        "queue-lab",
        "--rates",
        "0.5,1",
        "--packets",
        "5000",
        "--candidate",
        "random",
    ]);
    assert!(o.status.success());
    assert!(stdout(&o).contains("P0 (empty queue)"), "{}", stdout(&o));
}

#[test]
fn a_bad_queue_lab_flag_exits_2() {
    let e = usage_error(&["queue-lab", "--rates", "0.5,-1", "--packets", "10"]);
    assert_eq!(
        e,
        "error: --rates: flow 2's rate -1 must be a positive number\n"
    );
    let e = usage_error(&[
        "queue-lab",
        "--qdisc",
        "mloc",
        "--memory",
        "3",
        "--rates",
        "1,2",
    ]);
    assert_eq!(
        e,
        "error: --memory = 3 must be below the number of flows (2)\n"
    );
    // A value clap cannot parse also exits 2.
    let o = aqmlab(&["queue-lab", "--rates", "0.5", "--candidate", "middle"]);
    assert_eq!(o.status.code(), Some(2));
}
