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

/// Two Prague flows (base RTT 4 ms) beside an unresponsive ECT(1) CBR flow at
/// 48 Mbit/s on a 40 Mbit/s DualPI2 bottleneck, with and without RFC 9957's
/// queue protection: the Prague flows' mean RTT above their base RTT (their
/// queueing delay, seconds), their goodput and the UDP flow's, bit/s.
fn prague_beside_unresponsive_ect1(queue_protection: bool) -> (f64, f64, f64) {
    let text = format!(
        r#"
name = "qprot-{queue_protection}"
duration = "12s"
warmup = "4s"
seed = 3
[topology]
kind = "dumbbell"
access = {{ rate = "1Gbps", delay = "0.5ms" }}
bottleneck = {{ rate = "40Mbps", delay = "1ms" }}
[qdisc]
kind = "dualpi2"
queue_protection = {queue_protection}
[[flows]]
name = "prague"
kind = "tcp"
variant = "prague"
ecn = "ect1"
count = 2
[[flows]]
name = "udp"
kind = "cbr"
rate = "48Mbps"
ecn = "ect1"
"#
    );
    let s = Scenario::from_toml(&text, "qprot.toml").unwrap_or_else(|e| panic!("{e}"));
    let r = run_scenario(&s, &mut |_| {}).unwrap();
    let prague: Vec<_> = r.flows.iter().filter(|f| f.group == "prague").collect();
    let queueing = prague
        .iter()
        .map(|f| f.rtt_mean_s.unwrap() - f.base_rtt_s)
        .fold(0.0, f64::max);
    let prague_bps = prague.iter().map(|f| f.goodput_bps).sum();
    let udp = r.flows.iter().find(|f| f.group == "udp").unwrap();
    (queueing, prague_bps, udp.goodput_bps)
}

#[test]
fn queue_protection_keeps_pragues_delay_low_beside_an_unresponsive_ect1_flow() {
    // Either way the UDP flow takes most of the link: above the link's rate it
    // drives the PI controller into overload (redirected, it fills the C queue),
    // so p_L = k p' marks every Prague packet. What queue protection changes is
    // the delay of the L queue, which is what it protects.
    let (with_qp, prague_with, udp_with) = prague_beside_unresponsive_ect1(true);
    let (without, prague_without, udp_without) = prague_beside_unresponsive_ect1(false);
    eprintln!(
        "Prague's queueing delay: {:.2} ms with queue protection, {:.2} ms without; \
         Prague goodput {:.2} / {:.2} Mbit/s; UDP goodput {:.1} / {:.1} Mbit/s",
        with_qp * 1e3,
        without * 1e3,
        prague_with / 1e6,
        prague_without / 1e6,
        udp_with / 1e6,
        udp_without / 1e6
    );
    assert!(with_qp < 0.003, "with queue protection: {with_qp}");
    assert!(without > 0.010, "without queue protection: {without}");
}

/// Four Prague flows alone on a 40 Mbit/s DualPI2 bottleneck (base RTTs 4 and
/// 20 ms): their total goodput and largest mean RTT above base, with or without
/// queue protection.
fn prague_alone(queue_protection: bool) -> (f64, f64) {
    let text = format!(
        r#"
name = "qprot-prague-{queue_protection}"
duration = "20s"
warmup = "5s"
seed = 4
[topology]
kind = "dumbbell"
access = {{ rate = "1Gbps", delay = "0.5ms" }}
bottleneck = {{ rate = "40Mbps", delay = "1ms" }}
[qdisc]
kind = "dualpi2"
queue_protection = {queue_protection}
[[flows]]
name = "short"
kind = "tcp"
variant = "prague"
ecn = "ect1"
count = 2
[[flows]]
name = "long"
kind = "tcp"
variant = "prague"
ecn = "ect1"
count = 2
access_delay = "4.5ms"
"#
    );
    let s = Scenario::from_toml(&text, "qprot.toml").unwrap_or_else(|e| panic!("{e}"));
    let r = run_scenario(&s, &mut |_| {}).unwrap();
    let goodput = r.flows.iter().map(|f| f.goodput_bps).sum();
    let queueing = r
        .flows
        .iter()
        .map(|f| f.rtt_mean_s.unwrap() - f.base_rtt_s)
        .fold(0.0, f64::max);
    (goodput, queueing)
}

/// Queue protection leaves well-behaved Prague flows alone: with it on they get
/// the same goodput and queueing delay as with it off (a sanctioned Prague packet
/// would wait in the C queue, at its 15 ms target).
#[test]
fn queue_protection_leaves_prague_flows_alone() {
    let (on, on_delay) = prague_alone(true);
    let (off, off_delay) = prague_alone(false);
    eprintln!(
        "Prague alone: {:.2} / {:.2} Mbit/s, queueing {:.2} / {:.2} ms (on / off)",
        on / 1e6,
        off / 1e6,
        on_delay * 1e3,
        off_delay * 1e3
    );
    assert!(on > 0.97 * off, "{on} vs {off}");
    assert!(on_delay < off_delay + 0.0005, "{on_delay} vs {off_delay}");
}
