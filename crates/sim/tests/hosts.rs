//! Hosts: flow groups that name the host they send from (or to) share it. CAKE's
//! host isolation reads the hosts the engine announces, so a host's share does not
//! grow with its number of flows; the `hosts` table and the fairness between hosts
//! sum the flows by host.

use sim::{run_scenario, RunResult, Scenario};

/// 30 TCP flows from host "many", one from host "one", an unresponsive 10 Mbit/s
/// CBR from host "udp", through a 20 Mbit/s bottleneck under `qdisc`.
fn three_hosts(qdisc: &str, extra: &str) -> RunResult {
    let text = format!(
        r#"
name = "hosts"
duration = "16s"
warmup = "6s"
[topology]
kind = "dumbbell"
access = {{ rate = "100Mbps", delay = "2ms" }}
bottleneck = {{ rate = "20Mbps", delay = "10ms" }}
[qdisc]
{qdisc}
[[flows]]
name = "many"
host = "many"
kind = "tcp"
variant = "cubic"
profile = "linux"
count = 30
packet_size = 1500
max_window = 2000
{extra}
[[flows]]
name = "one"
host = "one"
kind = "tcp"
variant = "cubic"
profile = "linux"
packet_size = 1500
max_window = 2000
[[flows]]
name = "udp"
host = "udp"
kind = "cbr"
rate = "10Mbps"
packet_size = 1500
"#
    );
    let s = Scenario::from_toml(&text, "hosts.toml").unwrap_or_else(|e| panic!("{e}"));
    run_scenario(&s, &mut |_| {}).unwrap()
}

/// Each sending host's share of all hosts' goodput.
fn shares(r: &RunResult) -> [f64; 3] {
    let share = |name: &str| {
        let h = r
            .hosts
            .iter()
            .find(|h| h.host == name && h.role == "sender");
        h.unwrap_or_else(|| panic!("no host {name}: {:?}", r.hosts))
            .share
    };
    [share("many"), share("one"), share("udp")]
}

#[test]
fn cakes_host_isolation_gives_each_host_its_third_whatever_its_flows() {
    for isolation in ["dual-srchost", "triple-isolate", "srchost"] {
        let r = three_hosts(&format!("kind = \"cake\"\nisolation = \"{isolation}\""), "");
        for (host, share) in ["many", "one", "udp"].iter().zip(shares(&r)) {
            assert!(
                (share - 1.0 / 3.0).abs() < 0.05,
                "{isolation}: {host} has {share}"
            );
        }
        let between = r.fairness.hosts.as_ref().expect("hosts are named");
        assert!(between.jain > 0.98, "{isolation}: {between:?}");
    }
}

#[test]
fn per_flow_fairness_gives_the_busy_host_a_share_per_flow() {
    // 32 flows with a share each: 30 of them are host "many"'s.
    for qdisc in [
        "kind = \"cake\"\nisolation = \"flows\"",
        "kind = \"fq_codel\"",
    ] {
        let r = three_hosts(qdisc, "");
        let [many, one, udp] = shares(&r);
        assert!(many > 0.88, "{qdisc}: many {many}");
        assert!(one < 0.06 && udp < 0.06, "{qdisc}: one {one}, udp {udp}");
    }
}

#[test]
fn the_hosts_table_sums_its_flows_and_names_the_unnamed_ones() {
    // The busy host's flows go to one server; the others name no receiver, so
    // each is a receiving host of its own, named after its group.
    let r = three_hosts(
        "kind = \"droptail\"\nlimit = 100",
        "receiver_host = \"server\"",
    );
    let sender = |name: &str| {
        r.hosts
            .iter()
            .find(|h| h.host == name && h.role == "sender")
            .unwrap()
    };
    let many = sender("many");
    assert_eq!(many.flows, 30);
    let sum: f64 = r
        .flows
        .iter()
        .filter(|f| f.group == "many")
        .map(|f| f.goodput_bps)
        .sum();
    assert!((many.goodput_bps - sum).abs() < 1e-6 * sum);
    assert_eq!(
        many.drops_total, r.groups["many"].drops_total,
        "a host's drops are its flows'"
    );
    let receivers: Vec<(&str, u32)> = r
        .hosts
        .iter()
        .filter(|h| h.role == "receiver")
        .map(|h| (h.host.as_str(), h.flows))
        .collect();
    assert_eq!(receivers, [("server", 30), ("one#0", 1), ("udp#0", 1)]);
    let total: f64 = r
        .hosts
        .iter()
        .filter(|h| h.role == "sender")
        .map(|h| h.share)
        .sum();
    assert!((total - 1.0).abs() < 1e-9, "{total}");
    assert!(r.fairness.hosts.is_some() && r.fairness.receiver_hosts.is_some());
}

#[test]
fn without_named_hosts_there_is_no_hosts_table() {
    let text = r#"
name = "x"
duration = "3s"
[topology]
kind = "dumbbell"
access = { rate = "10Mbps", delay = "1ms" }
bottleneck = { rate = "2Mbps", delay = "10ms" }
[qdisc]
kind = "cake"
[[flows]]
name = "a"
kind = "tcp"
count = 3
"#;
    let r = run_scenario(&Scenario::from_toml(text, "x.toml").unwrap(), &mut |_| {}).unwrap();
    assert!(r.hosts.is_empty());
    assert!(r.fairness.hosts.is_none() && r.fairness.receiver_hosts.is_none());
    let json = serde_json::to_value(r.summary()).unwrap();
    assert!(json.get("hosts").is_none() && json["fairness"].get("hosts").is_none());
}

#[test]
fn a_host_name_is_checked_with_its_key_and_line() {
    for (key, value, rule) in [
        ("host", "\"\"", "host = \"\" must be a non-empty name"),
        (
            "receiver_host",
            "\"a#1\"",
            "receiver_host = \"a#1\" must be",
        ),
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
