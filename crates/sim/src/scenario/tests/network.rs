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

/// A k = 4 fat tree (16 hosts, `h0`..`h15`) and one flow across it.
const FAT_TREE: &str = r#"name = "ft"
duration = "1s"

[topology]
kind = "fat_tree"
k = 4
rate = "10Gbps"
delay = "1us"
qdisc = { kind = "droptail", limit = 200 }

[[flows]]
name = "x"
kind = "tcp"
from = "h0"
to = "h15"
"#;

#[test]
fn a_fat_tree_is_read_into_its_hosts_switches_and_links() {
    let s = Scenario::from_toml(FAT_TREE, "s.toml").unwrap();
    let Topology::Graph {
        nodes,
        links,
        routing,
        ..
    } = s.file.topology.get_ref()
    else {
        panic!("a fat tree is a graph")
    };
    // 16 hosts, 8 edge, 8 aggregation and 4 core switches; 16 + 16 + 16 links.
    assert_eq!(nodes.len(), 36);
    assert_eq!(links.len(), 48);
    assert_eq!(*routing, Routing::Ecmp, "ECMP by default on a fat tree");
    assert!(links
        .iter()
        .all(|l| !l.monitor && l.reverse_qdisc.is_some()));
    // What a run simulates names the fat tree's keys, not its links.
    let v = s.simulated();
    assert_eq!(v["topology"]["kind"], "fat_tree");
    assert_eq!(v["topology"]["k"], 4);
    assert!(v["topology"].get("links").is_none());
    let hosts = FAT_TREE.replace(
        "k = 4\n",
        "k = 4\nhosts_per_edge = 1\nrouting = \"shortest\"\n",
    );
    let s = Scenario::from_toml(&hosts.replace("h15", "h7"), "s.toml").unwrap();
    let Topology::Graph { nodes, routing, .. } = s.file.topology.get_ref() else {
        panic!()
    };
    assert_eq!((nodes.len(), *routing), (28, Routing::Shortest));
}

#[test]
fn a_fat_tree_with_a_bad_k_or_host_is_refused_at_its_key_and_line() {
    for (new, key) in [
        ("k = 3", "topology.k = 3 must be even"),
        ("k = 0", "topology.k = 0 must be even and at least 2"),
        ("k = 100000", "at most"),
        ("k = 4294967294", "at most"),
    ] {
        names_key_and_line(FAT_TREE, "k = 4", new, key);
    }
    names_key_and_line(
        FAT_TREE,
        "k = 4",
        "k = 4\nhosts_per_edge = 4294967295",
        "topology.hosts_per_edge",
    );
    names_key_and_line(
        FAT_TREE,
        "to = \"h15\"",
        "to = \"h16\"",
        "flows[0] (x): to = \"h16\" is not a node",
    );
    names_key_and_line(
        FAT_TREE,
        "qdisc =",
        "qdisc = { kind = \"red\", min_th = 50, max_th = 10 }",
        "topology.qdisc",
    );
    names_key_and_line(
        FAT_TREE,
        "delay",
        "nodes = [\"a\"]",
        "unknown field `nodes` for kind = \"fat_tree\"",
    );
}

#[test]
fn routing_is_a_graphs_key_and_names_its_line_elsewhere() {
    names_key_and_line(
        DUMBBELL,
        "kind = \"dumbbell\"",
        "kind = \"dumbbell\"\nrouting = \"ecmp\"",
        "unknown field `routing` for kind = \"dumbbell\"",
    );
    names_key_and_line(
        GRAPH,
        "kind = \"graph\"",
        "kind = \"graph\"\nrouting = \"spray\"",
        "routing",
    );
    let s = Scenario::from_toml(
        &GRAPH.replace("kind = \"graph\"", "kind = \"graph\"\nrouting = \"ecmp\""),
        "s.toml",
    )
    .unwrap();
    assert!(matches!(
        s.file.topology.get_ref(),
        Topology::Graph {
            routing: Routing::Ecmp,
            ..
        }
    ));
    // Not written, it is `shortest`, and what a run simulates is as before.
    let plain = Scenario::from_toml(GRAPH, "s.toml").unwrap().simulated();
    assert!(plain["topology"].get("routing").is_none());
}

#[test]
fn a_path_that_is_not_a_walk_from_from_to_to_is_refused_at_its_line() {
    let with = |path: &str| format!("{GRAPH}path = {path}\n");
    for (path, says) in [
        (
            r#"["a", "c", "d"]"#,
            r#"path[0] = "a" and path[1] = "c" are not linked"#,
        ),
        (
            r#"["b", "c", "d"]"#,
            r#"path must start at from = "a" and end at to = "d""#,
        ),
        (
            r#"["a", "b", "c"]"#,
            r#"path must start at from = "a" and end at to = "d""#,
        ),
        (r#"["a", "x", "d"]"#, r#"path[1] = "x" is not a node"#),
        (
            r#"["a", "b", "a", "b", "c", "d"]"#,
            r#"path visits "a" twice"#,
        ),
    ] {
        let text = with(path);
        let e = err(&text);
        assert!(e.contains(&format!("flows[0] (x): {says}")), "{e}");
        let line: usize = e.split(':').nth(1).unwrap().parse().unwrap();
        assert!(
            text.lines().nth(line - 1).unwrap().starts_with("path = "),
            "{e}"
        );
    }
    assert!(Scenario::from_toml(&with(r#"["a", "b", "c", "d"]"#), "s.toml").is_ok());
    names_key_and_line(
        DUMBBELL,
        "count = 2",
        "count = 2\npath = [\"left\", \"right\"]",
        "path does not apply to a dumbbell",
    );
}
