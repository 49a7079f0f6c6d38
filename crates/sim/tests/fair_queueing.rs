//! Fair queueing through the engine: the flows a link carries, their aggregates and
//! weights reach its qdisc, so bandwidth follows weights.

use sim::{run_scenario, RunResult, Scenario};

fn run(qdisc: &str, flows: &str) -> RunResult {
    let text = format!(
        r#"
name = "fq"
duration = "40s"
warmup = "10s"
[topology]
kind = "dumbbell"
access = {{ rate = "10Mbps", delay = "1ms" }}
bottleneck = {{ rate = "2Mbps", delay = "10ms" }}
[qdisc]
{qdisc}
{flows}
"#
    );
    let s = Scenario::from_toml(&text, "fq.toml").unwrap_or_else(|e| panic!("{e}"));
    run_scenario(&s, &mut |_| {}).unwrap()
}

const TWO_AGGREGATES: &str = r#"
[[flows]]
name = "three"
kind = "tcp"
count = 3
aggregate = 1
[[flows]]
name = "one"
kind = "tcp"
count = 1
aggregate = 2
"#;

#[test]
fn an_aggregates_weight_is_its_number_of_flows_by_default() {
    for kind in ["wfq", "drr"] {
        let r = run(
            &format!("kind = \"{kind}\"\nclassify = \"aggregate\"\nlimit = 100"),
            TWO_AGGREGATES,
        );
        let (three, one) = (r.groups["three"].goodput_bps, r.groups["one"].goodput_bps);
        let ratio = three / one;
        assert!(
            (2.6..=3.4).contains(&ratio),
            "{kind}: {three} / {one} = {ratio}"
        );
    }
}

#[test]
fn the_weights_table_overrides_the_flow_counts() {
    let r = run(
        "kind = \"wfq\"\nclassify = \"aggregate\"\nlimit = 100\nweights = { \"1\" = 1, \"2\" = 1 }",
        TWO_AGGREGATES,
    );
    let ratio = r.groups["three"].goodput_bps / r.groups["one"].goodput_bps;
    assert!((0.85..=1.15).contains(&ratio), "{ratio}");
}

#[test]
fn per_flow_a_cbr_of_weight_ten_gets_at_most_its_weighted_share() {
    // 10 TCP flows of weight 1 and a 2 Mbit/s CBR of weight 10: the CBR's share is
    // 10 / 20 of the link, the TCP flows split the other half.
    let flows = r#"
[[flows]]
name = "tcp"
kind = "tcp"
count = 10
[[flows]]
name = "udp"
kind = "cbr"
rate = "2Mbps"
weight = 10
"#;
    let r = run("kind = \"wfq\"\nlimit = 100", flows);
    let udp = r.groups["udp"].goodput_bps / 2e6;
    assert!((0.45..=0.52).contains(&udp), "udp share {udp}");
    assert!(r.groups["tcp"].jain > 0.95, "{}", r.groups["tcp"].jain);
}

#[test]
fn weights_and_aggregates_are_checked() {
    for (key, value, rule) in [
        ("weight", "0", "weight = 0 must be positive"),
        ("weight", "-1", "weight = -1 must be positive"),
        ("aggregate", "2147483648", "must be below 2^31"),
    ] {
        let text = format!(
            "name = \"x\"\nduration = \"1s\"\n[topology]\nkind = \"dumbbell\"\n\
             access = {{ rate = \"1Mbps\", delay = \"1ms\" }}\n\
             bottleneck = {{ rate = \"1Mbps\", delay = \"1ms\" }}\n\
             [[flows]]\nname = \"a\"\nkind = \"tcp\"\n{key} = {value}\n"
        );
        let e = Scenario::from_toml(&text, "x.toml")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("x.toml:10:") && e.contains(rule), "{e}");
    }
}
