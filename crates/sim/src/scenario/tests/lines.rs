//! Every error names its key and its own line: in every kind of table, for
//! unknown keys, syntax errors, rules across keys, and values TOML cannot hold.

use super::*;

#[test]
fn a_dicts_errors_name_the_key_path_instead_of_a_line() {
    let json = |qdisc: &str, rate_key: &str| {
        format!(
            r#"{{"name": "d", "duration": "10s", "warmup": "1s",
                "topology": {{"kind": "dumbbell", "access": {{"rate": "10Mbps", "delay": "1ms"}},
                              "bottleneck": {{"rate": "1Mbps", "delay": "1ms"}}}},
                "qdisc": {qdisc},
                "flows": [{{"name": "a", "kind": "tcp"}}, {{"name": "b", "kind": "cbr", "{rate_key}": "1Mbps"}}]}}"#
        )
    };
    let e = Scenario::from_json(&json(r#"{"kind": "red", "candidates": 2}"#, "rate"))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("<dict>: qdisc: unknown field `candidates`"),
        "{e}"
    );
    let e = Scenario::from_json(&json(r#"{"kind": "red"}"#, "rat"))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("<dict>: flows[1]: unknown field `rat`"),
        "{e}"
    );
    let e = Scenario::from_json(&json(r#"{"kind": "red", "limit": -5}"#, "rate"))
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "<dict>: qdisc.limit: invalid value: integer `-5`, expected u32"
    );
}

#[test]
fn every_error_names_its_key_and_its_line() {
    let d = DUMBBELL;
    // Types and units the parser refuses, in every kind of table.
    names_key_and_line(d, "seed", "seed = -1", "seed");
    names_key_and_line(d, "duration", "duration = \"10parsecs\"", "duration");
    names_key_and_line(d, "limit = 300", "limit = -5", "qdisc.limit");
    names_key_and_line(d, "max_th", "max_th = \"lots\"", "qdisc.max_th");
    names_key_and_line(d, "kind = \"red\"", "kind = \"reed\"", "qdisc.kind");
    names_key_and_line(
        d,
        "limit = 300",
        "limit = 300\nmax_thresh = 3",
        "max_thresh",
    );
    names_key_and_line(
        d,
        "access",
        "access = { rate = \"-10Mbps\", delay = \"1ms\" }",
        "topology.access.rate",
    );
    names_key_and_line(
        d,
        "access",
        "access = { rate = \"10Mbps\" }",
        "topology.access",
    );
    names_key_and_line(
        d,
        "reverse_qdisc",
        "reverse_qdisc = { kind = \"red\", limit = 1.5 }",
        "topology.reverse_qdisc.limit",
    );
    names_key_and_line(
        d,
        "kind = \"dumbbell\"",
        "kind = \"dumbbell\"\nnodes = []",
        "nodes",
    );
    names_key_and_line(d, "delays", "delays = 3", "monitor.delays");
    names_key_and_line(d, "count", "count = \"two\"", "flows[0].count");
    names_key_and_line(
        d,
        "schedule",
        "schedule = [{ at = \"1s\", rate = \"1Mbps\" }, { at = \"2s\", rate = 3 }]",
        "flows[1].schedule[1].rate",
    );
    // Checks made after parsing, including those across keys.
    names_key_and_line(d, "duration", "duration = \"0s\"", "duration");
    names_key_and_line(d, "warmup", "warmup = \"20s\"", "warmup");
    names_key_and_line(d, "min_th", "min_th = 250", "qdisc.min_th");
    names_key_and_line(
        d,
        "reverse_qdisc",
        "reverse_qdisc = { kind = \"red\", limit = 100, min_th = 90, max_th = 10 }",
        "topology.reverse_qdisc.min_th",
    );
    names_key_and_line(
        d,
        "bottleneck",
        "bottleneck = { rate = \"0Mbps\", delay = \"1ms\" }",
        "topology.bottleneck.rate",
    );
    names_key_and_line(d, "links", "links = [\"nowhere\"]", "monitor.links");
    names_key_and_line(d, "packet_size", "packet_size = 20", "packet_size");
    names_key_and_line(d, "count", "count = 0", "count");
    names_key_and_line(
        d,
        "schedule",
        "schedule = [{ at = \"2s\", rate = \"1Mbps\" }, { at = \"1s\", rate = \"3Mbps\" }]",
        "schedule",
    );

    let g = GRAPH;
    names_key_and_line(
        g,
        "rate = \"1Mbps\"",
        "rate = \"-1Mbps\"",
        "topology.links[1].rate",
    );
    names_key_and_line(
        g,
        "rate = \"1Mbps\"",
        "rate = \"0Mbps\"",
        "topology.links[1].rate",
    );
    names_key_and_line(g, "to = \"c\"", "to = \"e\"", "topology.links[1].to");
    names_key_and_line(g, "bins", "bins = -16", "topology.links[1].qdisc.bins");
    names_key_and_line(g, "bins", "bins = 0", "topology.links[1].qdisc.bins");
    names_key_and_line(
        g,
        "reverse_qdisc",
        "reverse_qdisc = { kind = \"choke\", limit = 100, min_th = 10, max_th = \"x\" }",
        "topology.links[2].reverse_qdisc.max_th",
    );
    names_key_and_line(
        g,
        "reverse_qdisc",
        "reverse_qdisc = { kind = \"choke\", limit = 100, min_th = 60, max_th = 50 }",
        "topology.links[2].reverse_qdisc.min_th",
    );
    names_key_and_line(
        g,
        "nodes",
        "nodes = [\"a\", \"b\", \"c\", \"a\"]",
        "topology.nodes",
    );
    names_key_and_line(g, "to = \"d\"", "to = \"z\"", "to = \"z\"");
    names_key_and_line(
        g,
        "kind = \"graph\"",
        "kind = \"graph\"\naccess = 1",
        "access",
    );
}

#[test]
fn unknown_keys_are_named_with_their_line() {
    let text = EXAMPLE.replace("max_th = 200", "max_th = 200\nmax_thresh = 3");
    let e = err(&text);
    assert!(e.starts_with("s.toml:"), "{e}");
    assert!(e.contains("unknown field `max_thresh`"), "{e}");
    let line: usize = e.split(':').nth(1).unwrap().parse().unwrap();
    assert_eq!(text.lines().nth(line - 1).unwrap(), "max_thresh = 3");
}

#[test]
fn every_syntax_error_says_something() {
    // Found by fuzzing: the toml parser gives a control character in a comment
    // an empty message.
    let e = err("# a\u{e}\n");
    assert!(e.starts_with("s.toml:1: invalid TOML"), "{e}");
}

#[test]
fn a_rule_across_keys_blames_the_key_the_user_wrote() {
    // `max_th = 0` beside a default `min_th`: the rule "min_th must be below
    // max_th" is broken by the key written, at its line.
    let base = DUMBBELL.replace("min_th = 100\nmax_th = 200\n", "max_th = 200\n");
    names_key_and_line(&base, "max_th", "max_th = 0", "qdisc.max_th = 0: min_th = ");
    // An alias is named as written.
    let fq = DUMBBELL.replace(
        "kind = \"red\"\nlimit = 300\nmin_th = 100\nmax_th = 200\n",
        "kind = \"fq_codel\"\ndrop_batch = 64\n",
    );
    names_key_and_line(&fq, "drop_batch", "drop_batch = 0", "qdisc.drop_batch = 0");
    // `tc = "..."`: the key, not the table's header.
    let tc = DUMBBELL.replace(
        "kind = \"red\"\nlimit = 300\nmin_th = 100\nmax_th = 200\n",
        "tc = \"tc qdisc add dev eth0 root red\"\n",
    );
    names_key_and_line(
        &tc,
        "tc = ",
        "tc = \"tc qdisc add dev eth0 root nonsense\"",
        "qdisc",
    );
}

#[test]
fn an_unknown_key_is_echoed_printable_and_short() {
    let escape = DUMBBELL.replace("delays = true", "\"\\u001b[2Jx\" = 1");
    let e = Scenario::from_toml(&escape, "s.toml")
        .unwrap_err()
        .to_string();
    assert!(!e.chars().any(char::is_control), "{e:?}");
    assert!(e.contains("\\u{1b}[2Jx"), "{e}");
    let long = DUMBBELL.replace("delays = true", &format!("{} = 1", "k".repeat(1 << 20)));
    let e = Scenario::from_toml(&long, "s.toml")
        .unwrap_err()
        .to_string();
    assert!(e.len() < 2000, "{} bytes", e.len());
    assert!(e.contains("(1048576 characters)"), "{e}");
}

#[test]
fn an_array_where_a_table_belongs_is_refused_at_its_key() {
    let d = DUMBBELL;
    let bottleneck = d.lines().find(|l| l.starts_with("bottleneck")).unwrap();
    names_key_and_line(
        d,
        bottleneck,
        "bottleneck = [\"1Mbps\", \"1ms\"]",
        "topology.bottleneck = [\"1Mbps\", \"1ms\"] must be a table",
    );
    let e = Scenario::from_json(
        r#"{"name": "d", "duration": "10s",
            "topology": {"kind": "dumbbell", "access": {"rate": "10Mbps", "delay": "1ms"},
                         "bottleneck": ["1Mbps", "1ms"]},
            "flows": [{"name": "a", "kind": "tcp"}]}"#,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.starts_with("<dict>: topology.bottleneck = [\"1Mbps\", \"1ms\"] must be a table"),
        "{e}"
    );
}

#[test]
fn an_integer_above_what_toml_writes_names_its_key() {
    names_key_and_line(
        DUMBBELL,
        "seed",
        "seed = 18446744073709551615",
        "seed = 18446744073709551615 is too large: TOML integers are at most 9223372036854775807",
    );
    let g = GRAPH;
    let bins = g.lines().find(|l| l.starts_with("bins")).unwrap();
    names_key_and_line(
        g,
        bins,
        "hash_seed = 9223372036854775808",
        "hash_seed = 9223372036854775808 is too large",
    );
    let e = Scenario::from_json(r#"{"name": "d", "seed": 18446744073709551615}"#)
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "<dict>: seed = 18446744073709551615 is too large: scenario integers are at most \
         9223372036854775807 (2^63 - 1)"
    );
}
