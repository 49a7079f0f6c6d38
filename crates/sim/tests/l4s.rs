//! Whole-run tests of the scalable congestion controls: Prague's RTT
//! independence, against DCTCP's RTT dependence on the same path.

use sim::{run_scenario, Scenario};

/// Two flows of `variant` on ECT(1) through DualPI2 at 40 Mbit/s, with base RTTs
/// of 4 ms and 20 ms (both below Prague's 25 ms reference); their goodputs, the
/// short flow's first.
fn two_rtts(variant: &str, seed: u64) -> (f64, f64) {
    let text = format!(
        r#"
name = "rtt-{variant}"
duration = "40s"
warmup = "15s"
seed = {seed}
[topology]
kind = "dumbbell"
access = {{ rate = "1Gbps", delay = "0.5ms" }}
bottleneck = {{ rate = "40Mbps", delay = "1ms" }}
[qdisc]
kind = "dualpi2"
[[flows]]
name = "short"
kind = "tcp"
variant = "{variant}"
ecn = "ect1"
max_window = 5000
[[flows]]
name = "long"
kind = "tcp"
variant = "{variant}"
ecn = "ect1"
access_delay = "4.5ms"
max_window = 5000
"#
    );
    let s = Scenario::from_toml(&text, "rtt.toml").unwrap_or_else(|e| panic!("{e}"));
    let r = run_scenario(&s, &mut |_| {}).unwrap();
    let rate = |name: &str| {
        r.flows
            .iter()
            .find(|f| f.group == name)
            .map(|f| f.goodput_bps)
            .unwrap()
    };
    (rate("short"), rate("long"))
}

#[test]
fn prague_shares_within_1_5_across_4ms_and_20ms_where_dctcp_does_not() {
    // The bound, fixed before running: the short flow gets at most 1.5 times the
    // long one's rate (a window-based flow with equal windows would get 5 times).
    let (short, long) = two_rtts("prague", 1);
    let ratio = short / long;
    assert!(
        (1.0 / 1.5..=1.5).contains(&ratio),
        "Prague: {short} / {long} = {ratio}"
    );
    // DCTCP, the same path and marks: its rate falls with its RTT.
    let (short, long) = two_rtts("dctcp", 1);
    assert!(short / long > 3.0, "DCTCP: {short} / {long}");
}
