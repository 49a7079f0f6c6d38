//! Qdisc trees on a scenario's link: HTB's classes take their flow groups'
//! packets (a filter by group) and hold each to its rate, and `prio` serves the
//! band a DSCP filter picks ahead of the rest. The groups' `dscp` is on their
//! packets, so a filter by DSCP reaches them.

use sim::{run_scenario, RunResult, Scenario};

fn run(qdisc: &str, flows: &str) -> RunResult {
    let text = format!(
        r#"
name = "trees"
duration = "14s"
warmup = "4s"
[topology]
kind = "dumbbell"
access = {{ rate = "100Mbps", delay = "2ms" }}
bottleneck = {{ rate = "10Mbps", delay = "10ms" }}
[qdisc]
{qdisc}
{flows}
"#
    );
    let s = Scenario::from_toml(&text, "trees.toml").unwrap();
    run_scenario(&s, &mut |_| {}).unwrap()
}

const TWO_GROUPS: &str = r#"
[[flows]]
name = "a"
kind = "tcp"
variant = "cubic"
profile = "linux"
count = 4
packet_size = 1500
[[flows]]
name = "b"
kind = "tcp"
variant = "cubic"
profile = "linux"
count = 4
packet_size = 1500
"#;

#[test]
fn htb_holds_each_group_to_its_class_rate_and_lends_what_one_leaves() {
    // Group a to 1:10 (2 Mbit/s, no borrowing), the rest by default to 1:20
    // (6 Mbit/s, may borrow to 8): the link is 10 Mbit/s, so the shaper decides.
    let tree = r#"
tc = """
tc qdisc add dev eth0 root handle 1: htb default 20
tc class add dev eth0 parent 1: classid 1:1 htb rate 8mbit
tc class add dev eth0 parent 1:1 classid 1:10 htb rate 2mbit ceil 2mbit
tc class add dev eth0 parent 1:1 classid 1:20 htb rate 6mbit ceil 8mbit
tc qdisc add dev eth0 parent 1:20 fq_codel
tc filter add dev eth0 parent 1: group a flowid 1:10
"""
"#;
    let r = run(tree, TWO_GROUPS);
    // The simulator's goodput counts the packets' bytes, as the shaper does.
    let wire = |g: &str| r.groups[g].goodput_bps / 1e6;
    let (a, b) = (wire("a"), wire("b"));
    // Within Linux's own tolerance for HTB's rates, 5%, and above only by a burst
    // at the edges of the measured interval (0.5%).
    assert!((1.9..=2.01).contains(&a), "a at its 2 Mbit/s ceil: {a}");
    assert!((5.7..=6.03).contains(&b), "b at 1:1's 8 less a's 2: {b}");
    // Without group a, b borrows up to its ceil.
    let idle_a = TWO_GROUPS.replacen("count = 4", "count = 4\nstop = \"2s\"", 1);
    let alone = run(tree, &idle_a);
    let b = alone.groups["b"].goodput_bps / 1e6;
    assert!(
        (7.6..=8.04).contains(&b),
        "b alone, at its 8 Mbit/s ceil: {b}"
    );
}

#[test]
fn prio_serves_the_band_a_dscp_filter_picks_before_the_bulk() {
    // Eight bulk flows fill band 1's pfifo; EF probes go to band 0.
    let flows = |probe_dscp: &str| {
        format!(
            r#"
[[flows]]
name = "bulk"
kind = "tcp"
variant = "cubic"
count = 8
packet_size = 1500
[[flows]]
name = "ping"
kind = "probe"
interval = "100ms"
dscp = {probe_dscp}
"#
        )
    };
    let tree = r#"
kind = "prio"
[[qdisc.class]]
classid = "1:1"
filter = { dscp = ["EF"] }
[[qdisc.class]]
classid = "1:2"
qdisc = { kind = "droptail", limit = 200 }
"#;
    let ef = run(tree, &flows("\"EF\""));
    let be = run(tree, &flows("0"));
    let rtt = |r: &RunResult| r.groups["ping"].probe.as_ref().unwrap().rtt_mean_s.unwrap();
    let base = ef
        .flows
        .iter()
        .find(|f| f.group == "ping")
        .unwrap()
        .base_rtt_s;
    // One bulk packet in service at most ahead of an EF probe: 1.2 ms.
    assert!(
        rtt(&ef) < base + 0.002,
        "EF probe {} against base {base}",
        rtt(&ef)
    );
    // Behind 200 packets of 1500 bytes at 10 Mbit/s: up to 240 ms.
    assert!(rtt(&be) > base + 0.1, "best-effort probe {}", rtt(&be));
}
