//! Scenario files: what parses, and that every error names its key and its line.

use super::*;

const EXAMPLE: &str = include_str!("../../../../scenarios/choke-fig3.toml");

fn err(text: &str) -> String {
    Scenario::from_toml(text, "s.toml").unwrap_err().to_string()
}

#[test]
fn the_readme_example_parses() {
    let s = Scenario::from_toml(EXAMPLE, "choke-fig3.toml").unwrap();
    assert_eq!(s.file.flows.len(), 2);
    assert_eq!(s.file.duration, Dur::from_secs(100));
}

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

/// A dumbbell and a graph written with every kind of table TOML has: standard,
/// inline, arrays of tables, a table inside an array of tables, inline arrays.
const DUMBBELL: &str = r#"name = "d"
duration = "10s"
warmup = "1s"
seed = 1

[topology]
kind = "dumbbell"
access = { rate = "10Mbps", delay = "1ms" }
bottleneck = { rate = "1Mbps", delay = "1ms" }
reverse_qdisc = { kind = "red", limit = 100 }

[qdisc]
kind = "red"
limit = 300
min_th = 100
max_th = 200

[monitor]
delays = true
links = ["bottleneck"]

[[flows]]
name = "tcp"
kind = "tcp"
count = 2
packet_size = 1000

[[flows]]
name = "udp"
kind = "cbr"
rate = "2Mbps"
schedule = [{ at = "1s", rate = "1Mbps" }, { at = "2s", rate = "3Mbps" }]
"#;

const GRAPH: &str = r#"name = "g"
duration = "10s"

[topology]
kind = "graph"
nodes = ["a", "b", "c", "d"]

[[topology.links]]
from = "a"
to = "b"
rate = "10Mbps"
delay = "1ms"

[[topology.links]]
from = "b"
to = "c"
rate = "1Mbps"
delay = "1ms"

[topology.links.qdisc]
kind = "sfb"
bins = 16

[[topology.links]]
from = "c"
to = "d"
rate = "1Mbps"
delay = "1ms"
reverse_qdisc = { kind = "choke", limit = 100, min_th = 10, max_th = 50 }

[[flows]]
name = "x"
kind = "tcp"
from = "a"
to = "d"
"#;

/// `base` with the first line that starts with `old` replaced by `new`; the
/// error must name `key` and the line of `new` (its last, when it has several).
#[track_caller]
fn names_key_and_line(base: &str, old: &str, new: &str, key: &str) {
    let mut found = false;
    let text: String = base
        .lines()
        .map(|l| {
            if !found && l.starts_with(old) {
                found = true;
                format!("{new}\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    assert!(found, "no line starts with {old:?}");
    // Every check is made when the scenario is read, a qdisc's parameters
    // included: a scenario that validates builds.
    let e = match Scenario::from_toml(&text, "s.toml") {
        Err(e) => e.to_string(),
        Ok(_) => panic!("{new}: validates"),
    };
    let line: usize = e
        .strip_prefix("s.toml:")
        .and_then(|r| r.split(':').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{new}: no line in {e}"));
    assert_eq!(text.lines().nth(line - 1), new.lines().last(), "{e}");
    assert!(e.contains(key), "{new}: {e} does not name {key}");
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
fn negative_rates_are_errors_with_a_line() {
    let e = err(&EXAMPLE.replace("rate = \"2Mbps\"", "rate = \"-2Mbps\""));
    assert!(e.contains("must not be negative"), "{e}");
    assert!(e.starts_with("s.toml:"), "{e}");
}

#[test]
fn a_pareto_shape_must_be_finite_and_above_one() {
    let onoff =
        "kind = \"onoff\"\nrate = \"2Mbps\"\non = \"1s\"\noff = \"1s\"\ndistribution = \"pareto\"";
    for shape in ["inf", "nan", "1.0", "1e6"] {
        let text = EXAMPLE.replace(
            "kind = \"cbr\"\nrate = \"2Mbps\"",
            &format!("{onoff}\nshape = {shape}"),
        );
        let e = err(&text);
        assert!(e.contains("needs 1 < shape <= 1000"), "{shape}: {e}");
        let line: usize = e.split(':').nth(1).unwrap().parse().unwrap();
        assert!(
            text.lines().nth(line - 1).unwrap().starts_with("shape"),
            "{e}"
        );
    }
}

#[test]
fn a_tcp_packet_must_have_room_for_data_after_its_headers() {
    // 40 bytes is IPv4 + TCP headers alone: no payload, sequence numbers that
    // never advance (a capture tshark calls inconsistent).
    let tcp = |size: u32| {
        EXAMPLE.replace(
            "packet_size = 1000\nmax",
            &format!("packet_size = {size}\nmax"),
        )
    };
    let e = err(&tcp(40));
    assert!(
        e.contains("packet_size = 40 must be between 41 and 65535 bytes"),
        "{e}"
    );
    assert!(e.contains("headers are 40 bytes"), "{e}");
    let line: usize = e.split(':').nth(1).unwrap().parse().unwrap();
    assert_eq!(tcp(40).lines().nth(line - 1), Some("packet_size = 40"));
    Scenario::from_toml(&tcp(41), "s.toml").unwrap();
    // A UDP datagram of 40 bytes still has room (its headers are 28).
    let udp = EXAMPLE.replace(
        "count = 1\npacket_size = 1000",
        "count = 1\npacket_size = 40",
    );
    assert_ne!(udp, EXAMPLE);
    Scenario::from_toml(&udp, "s.toml").unwrap();
}

#[test]
fn names_that_would_escape_a_folder_or_reach_a_terminal_are_refused() {
    // A node's name becomes a pcap file name under --out; `../x` once wrote
    // outside it.
    for (node, rule) in [
        ("../x", "must not contain / or \\"),
        ("a\\\\b", "must not contain / or \\"),
        ("x->y", "must not contain ->"),
        ("", "must not be empty"),
        ("a\\u001b[31m", "control character U+001B"),
    ] {
        let text = GRAPH.replacen("\"d\"]", &format!("\"d\", \"{node}\"]"), 1);
        let e = err(&text);
        assert!(e.contains("topology.nodes[4] = "), "{node}: {e}");
        assert!(e.contains(rule), "{node}: {e}");
        assert!(e.starts_with("s.toml:6:"), "{e}");
    }
    // A group's or the scenario's name is printed in the text report.
    let text = DUMBBELL.replace("name = \"udp\"", "name = \"udp\\u001b]0;owned\\u0007\"");
    let e = err(&text);
    assert!(
        e.contains(
            "flows[1].name = \"udp\\u{1b}]0;owned\\u{7}\" contains the control character U+001B"
        ),
        "{e}"
    );
    assert!(e.starts_with("s.toml:29:"), "{e}");
    let e = err(&DUMBBELL.replace("name = \"d\"", "name = \"d\\r\""));
    assert!(
        e.starts_with("s.toml:1: name = \"d\\r\" contains the control character U+000D"),
        "{e}"
    );
    // Names that are merely unusual stay allowed.
    Scenario::from_toml(&GRAPH.replace("\"d\"", "\"d .é\""), "s.toml").unwrap();
}

#[test]
fn what_a_run_simulates_leaves_out_labels_the_seed_and_an_unused_qdisc() {
    let sim = |text: &str| Scenario::from_toml(text, "s.toml").unwrap().simulated();
    let renamed = DUMBBELL
        .replace("name = \"d\"", "name = \"e\"\ndescription = \"x\"")
        .replace("seed = 1", "seed = 7");
    assert_eq!(sim(DUMBBELL), sim(&renamed));
    // Defaults are filled in, so writing one out changes nothing.
    assert_eq!(
        sim(DUMBBELL),
        sim(&DUMBBELL.replace("max_th = 200", "max_th = 200\necn = false"))
    );
    // A dumbbell's [qdisc] is its bottleneck's.
    assert_ne!(
        sim(DUMBBELL),
        sim(&DUMBBELL.replace("kind = \"red\"\nlimit", "kind = \"choke\"\nlimit"))
    );
    // In a graph, [qdisc] reaches the links without a qdisc of their own...
    let with = |kind: &str| format!("{GRAPH}\n[qdisc]\nkind = \"{kind}\"\n");
    assert_ne!(sim(&with("red")), sim(&with("choke")));
    // ...and none when every link has one.
    let own = GRAPH
        .replace(
            "delay = \"1ms\"\n\n[[topology.links]]\nfrom = \"b\"",
            "delay = \"1ms\"\nqdisc = { kind = \"blue\" }\n\n[[topology.links]]\nfrom = \"b\"",
        )
        .replace(
            "reverse_qdisc = {",
            "qdisc = { kind = \"pie\" }\nreverse_qdisc = {",
        );
    let with = |kind: &str| format!("{own}\n[qdisc]\nkind = \"{kind}\"\n");
    assert_eq!(sim(&with("red")), sim(&with("choke")));
    assert_ne!(sim(&own), sim(&own.replace("\"pie\"", "\"codel\"")));
}

#[test]
fn every_syntax_error_says_something() {
    // Found by fuzzing: the toml parser gives a control character in a comment
    // an empty message.
    let e = err("# a\u{e}\n");
    assert!(e.starts_with("s.toml:1: invalid TOML"), "{e}");
}

#[test]
fn a_qdisc_table_may_be_a_tc_line() {
    let red = "kind = \"red\"\nlimit = 300\nmin_th = 100\nmax_th = 200\n";
    assert!(EXAMPLE.contains(red));
    let line = "tc qdisc add dev eth0 root fq_codel limit 1000 target 2ms noecn";
    let text = EXAMPLE.replace(red, &format!("tc = \"{line}\"\n"));
    let s = Scenario::from_toml(&text, "s.toml").unwrap();
    let got = s.file.qdisc.unwrap().into_inner();
    assert_eq!(got, crate::tc::parse(line).unwrap().spec().unwrap());
    assert_eq!(got.kind(), "fq_codel");
    // The line's errors, and keys beside it, are errors at their line.
    let text = EXAMPLE.replace(red, "tc = \"tc qdisc add dev eth0 root codel fast\"\n");
    let e = err(&text);
    assert!(e.contains("codel has no option `fast`"), "{e}");
    assert!(e.starts_with("s.toml:"), "{e}");
    let text = EXAMPLE.replace(red, "tc = \"codel\"\nlimit = 5\n");
    let e = err(&text);
    assert!(e.contains("`limit` cannot stand beside it"), "{e}");
}

#[test]
fn keys_of_another_kind_are_rejected() {
    let e = err(&EXAMPLE.replace("rate = \"2Mbps\"", "rate = \"2Mbps\"\nvariant = \"reno\""));
    assert!(
        e.contains(
            "flows[1]: variant does not apply to kind = \"cbr\" (its own keys: rate, schedule)"
        ),
        "{e}"
    );
}

#[test]
fn graph_flows_must_name_existing_nodes() {
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
to = "c"
"#;
    let e = err(text);
    assert!(e.contains("to = \"c\" is not a node"), "{e}");
    assert!(e.starts_with("s.toml:12:"), "{e}");
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
fn parallel_links_are_refused_with_their_key_and_line() {
    let text = GRAPH.replacen("[[topology.links]]", "[[topology.links]]\nfrom = \"b\"\nto = \"a\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\n\n[[topology.links]]", 1);
    let e = Scenario::from_toml(&text, "s.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("parallel links are not supported"), "{e}");
    assert!(
        e.contains("topology.links[1]") && e.contains("topology.links[0]"),
        "{e}"
    );
    assert!(e.starts_with("s.toml:"), "{e}");
}

#[test]
fn windows_are_bounded_and_shape_is_for_pareto_only() {
    let d = DUMBBELL;
    names_key_and_line(
        d,
        "packet_size = 1000",
        "max_window = 1000000000",
        "max_window = 1000000000 must be from 1 to",
    );
    names_key_and_line(
        d,
        "packet_size = 1000",
        "initial_window = 4294967295",
        "initial_window",
    );
    let onoff = d.replace(
        "kind = \"cbr\"\nrate = \"2Mbps\"\n",
        "kind = \"onoff\"\nrate = \"2Mbps\"\non = \"1ms\"\noff = \"1ms\"\nshape = 2.0\n",
    );
    names_key_and_line(
        &onoff,
        "shape",
        "shape = -5",
        "shape applies to distribution = \"pareto\" only",
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

#[test]
fn a_flow_total_over_the_bound_is_refused_at_the_count_that_passes_it() {
    names_key_and_line(
        DUMBBELL,
        "count",
        "count = 4000000000",
        "flows[0] (tcp): count = 4000000000 brings the flows in all to 4000000000; at most",
    );
}

#[test]
fn a_flow_without_a_route_is_refused_when_read() {
    let text = GRAPH
        .replace(
            "nodes = [\"a\", \"b\", \"c\", \"d\"]",
            "nodes = [\"a\", \"b\", \"c\", \"d\", \"e\"]",
        )
        .replace("from = \"a\"\nto = \"d\"\n\"#", "");
    let text = format!(
        "{}from = \"a\"\nto = \"e\"\n",
        text.trim_end_matches("from = \"a\"\nto = \"d\"\n")
    );
    let e = err(&text);
    let line: usize = e.split(':').nth(1).unwrap().parse().unwrap();
    assert_eq!(text.lines().nth(line - 1), Some("to = \"e\""), "{e}");
    assert!(
        e.contains("flows[0] (x): no route from \"a\" to \"e\""),
        "{e}"
    );
}
