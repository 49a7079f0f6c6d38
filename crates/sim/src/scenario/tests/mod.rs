//! Scenario files: what parses, and that every error names its key and its line.

use super::*;

mod lines;
mod network;
mod qdisc;
mod values;

const EXAMPLE: &str = include_str!("../../../../../scenarios/choke-fig3.toml");

fn err(text: &str) -> String {
    Scenario::from_toml(text, "s.toml").unwrap_err().to_string()
}

#[test]
fn the_readme_example_parses() {
    let s = Scenario::from_toml(EXAMPLE, "choke-fig3.toml").unwrap();
    assert_eq!(s.file.flows.len(), 2);
    assert_eq!(s.file.duration, Dur::from_secs(100));
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
