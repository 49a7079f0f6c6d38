use super::*;

fn table(text: &str) -> Table {
    toml::from_str(text).unwrap()
}

fn set(t: &mut Table, text: &str) -> Result<(), String> {
    apply(t, &parse(text)?)
}

#[test]
fn values_are_toml_or_the_text_itself() {
    assert_eq!(parse_value("300"), toml::Value::Integer(300));
    assert_eq!(parse_value("0.5"), toml::Value::Float(0.5));
    assert_eq!(parse_value("true"), toml::Value::Boolean(true));
    assert_eq!(parse_value("\"red\""), toml::Value::String("red".into()));
    assert_eq!(parse_value("red"), toml::Value::String("red".into()));
    assert_eq!(parse_value("2Mbps"), toml::Value::String("2Mbps".into()));
    let t = parse_value("{kind = \"red\", limit = 300}");
    assert_eq!(t.get("limit"), Some(&toml::Value::Integer(300)));
}

#[test]
fn keys_reach_tables_and_list_entries_by_name_or_index() {
    let mut t = table(
        "qdisc = { kind = \"red\" }\n\
         flows = [{ name = \"tcp\", count = 2 }, { name = \"udp\", rate = \"1Mbps\" }]",
    );
    set(&mut t, "qdisc.max_th=20").unwrap();
    set(&mut t, "flows.udp.rate=2Mbps").unwrap();
    set(&mut t, "flows.0.count=5").unwrap();
    set(&mut t, "topology.bottleneck.rate=10Mbps").unwrap();
    assert_eq!(t["qdisc"]["max_th"], serde_json::json!(20));
    assert_eq!(t["flows"][1]["rate"], serde_json::json!("2Mbps"));
    assert_eq!(t["flows"][0]["count"], serde_json::json!(5));
    assert_eq!(
        t["topology"]["bottleneck"]["rate"],
        serde_json::json!("10Mbps")
    );
}

#[test]
fn a_bad_key_is_an_error_naming_it() {
    let mut t = table("flows = [{ name = \"tcp\" }]\nseed = 1");
    let e = set(&mut t, "flows.web.rate=1Mbps").unwrap_err();
    assert!(
        e.starts_with("--set flows.web.rate: flows has no entry named 'web'"),
        "{e}"
    );
    assert!(e.contains("'tcp'"), "{e}");
    let e = set(&mut t, "seed.x=1").unwrap_err();
    assert!(e.starts_with("--set seed.x: seed is 1, not a table"), "{e}");
    assert!(parse("qdisc..kind=red").unwrap_err().contains("empty step"));
    assert!(parse("qdisc.kind")
        .unwrap_err()
        .contains("expected KEY=VALUE"));
    assert!(parse("qdisc.kind=")
        .unwrap_err()
        .contains("expected KEY=VALUE"));
    let e = parse("qdisc.kind=red,choke").unwrap_err();
    assert!(e.contains("one value per key"), "{e}");
    // A comma inside a table is one value.
    parse("qdisc={kind=\"droptail\", limit=300}").unwrap();
}

#[test]
fn an_unknown_key_is_the_scenarios_error_naming_the_set() {
    let o = Overrides::default();
    let sets = parse_all(&["qdisc.frobs=3".into()]).unwrap();
    let e = load(Some("choke-fig3"), &sets, &o).unwrap_err();
    assert!(e.contains("with --set qdisc.frobs=3"), "{e}");
    assert!(e.contains("frobs"), "{e}");
    let e = parse_all(&["seed=1".into(), "seed=2".into()]).unwrap_err();
    assert_eq!(e, "--set seed: given twice");
}

#[test]
fn a_set_changes_the_run_as_the_same_scenario_written_out_would() {
    let o = Overrides::default();
    let sets = parse_all(&["qdisc.kind=droptail".into()]).unwrap();
    let s = load(Some("choke-fig3"), &sets, &o).unwrap();
    assert_eq!(s.origin, "<built-in choke-fig3>");
    let plain = load(Some("choke-fig3"), &[], &o).unwrap();
    assert_ne!(s.simulated(), plain.simulated());
    // DropTail keeps the key it takes (limit) and drops RED's thresholds.
    let q = &s.simulated()["qdisc"];
    assert_eq!(q["kind"], "droptail");
    assert_eq!(q["limit"], 300);
    assert!(q.get("min_th").is_none(), "{q}");
}

/// The link keys are reached as any other: a table replaces a string, a key is added.
#[test]
fn set_reaches_the_link_keys() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/dumbbell-red.toml"
    );
    let t = table(&std::fs::read_to_string(path).unwrap());
    let sets = parse_all(&[
        "topology.bottleneck.loss={ gemodel = [0.01, 0.3] }".into(),
        "topology.bottleneck.rate={ trace = \"lte-driving\" }".into(),
        "topology.access.delay={ mean = \"5ms\", jitter = \"1ms\" }".into(),
    ])
    .unwrap();
    let s = with(t.clone(), &sets, path).unwrap();
    let links = s.links().unwrap();
    let (_, bottleneck, _) = &links[0];
    assert!(bottleneck.loss.is_some());
    assert!(matches!(
        bottleneck.rate,
        crate::link_model::LinkRate::Trace(_)
    ));
    assert!(links[1].1.jitter.is_some());
    let bad = parse_all(&["topology.bottleneck.loss=2".into()]).unwrap();
    let e = with(t, &bad, path).unwrap_err();
    assert!(e.contains("topology.bottleneck.loss"), "{e}");
}

/// A huge value is named, not repeated: the error stays a line long whether the
/// value fails itself (a 100 KB kind) or makes the scenario fail elsewhere.
#[test]
fn a_huge_value_is_shown_by_its_start_and_length() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/dumbbell-red.toml"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let mut refused = 0;
    for set_text in [
        format!("qdisc.kind={}", "x".repeat(100_000)),
        format!("topology={}", "[".repeat(10_000)),
        format!("description=\"{}\"", "a ".repeat(50_000)),
        format!("qdisc.limit={}", "9".repeat(5_000)),
    ] {
        let t = table(&text);
        let Ok(sets) = parse_all(std::slice::from_ref(&set_text)) else {
            continue;
        };
        let e = match with(t, &sets, path) {
            Ok(_) => continue,
            Err(e) => e,
        };
        assert!(e.len() < 1500, "{} bytes: {}", e.len(), &e[..300]);
        assert!(e.contains("characters)"), "{e}");
        let key = set_text.split('=').next().unwrap();
        assert!(e.contains(key), "{e}");
        refused += 1;
    }
    assert!(refused >= 3, "{refused} refused");
}
