//! Each flow's `base_rtt_s`: the propagation delays of its routes both ways, as
//! README's scenario section says a dumbbell's and a graph's are made.

use sim::{run_scenario, Scenario};

fn run(text: &str) -> sim::RunResult {
    let s = Scenario::from_toml(text, "t.toml").unwrap();
    run_scenario(&s, &mut |_| {}).unwrap()
}

#[test]
fn a_dumbbell_flows_base_rtt_is_twice_its_access_delays_and_the_bottlenecks() {
    let r = run(r#"
name = "d"
duration = "2s"
[topology]
kind = "dumbbell"
access = { rate = "100Mbps", delay = "1ms" }
bottleneck = { rate = "10Mbps", delay = "3ms" }
[[flows]]
name = "near"
kind = "tcp"
count = 2
[[flows]]
name = "far"
kind = "cbr"
rate = "1Mbps"
access_delay = "20ms"
"#);
    let rtt = |group: &str| -> Vec<f64> {
        r.flows
            .iter()
            .filter(|f| f.group == group)
            .map(|f| f.base_rtt_s)
            .collect()
    };
    let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
    // 2 x (sender access + bottleneck + receiver access).
    assert!(rtt("near")
        .iter()
        .all(|&x| close(x, 2.0 * (0.001 + 0.003 + 0.001))));
    assert!(rtt("far")
        .iter()
        .all(|&x| close(x, 2.0 * (0.020 + 0.003 + 0.020))));
    // The summary gives each group's.
    let text = sim::text::summary(&r);
    assert!(text.contains("10 ms") && text.contains("86 ms"), "{text}");
}

#[test]
fn a_graph_flows_base_rtt_is_its_routes_delays_both_ways() {
    let r = run(r#"
name = "g"
duration = "2s"
[topology]
kind = "graph"
nodes = ["a", "b", "c"]
links = [
  { from = "a", to = "b", rate = "10Mbps", delay = "2ms" },
  { from = "b", to = "c", rate = "10Mbps", delay = "5ms" },
]
[[flows]]
name = "ac"
kind = "tcp"
from = "a"
to = "c"
[[flows]]
name = "cb"
kind = "tcp"
from = "c"
to = "b"
"#);
    assert!(
        (r.flows[0].base_rtt_s - 2.0 * 0.007).abs() < 1e-12,
        "{:?}",
        r.flows[0]
    );
    assert!(
        (r.flows[1].base_rtt_s - 2.0 * 0.005).abs() < 1e-12,
        "{:?}",
        r.flows[1]
    );
}
