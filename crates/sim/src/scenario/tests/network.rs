//! The network a scenario describes: flows between existing nodes, no parallel
//! links, the total of flows bounded, and a route for every flow.

use super::*;

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
