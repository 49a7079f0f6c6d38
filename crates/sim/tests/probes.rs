//! `kind = "probe"`: echoed probes measure the round trip as Flent's ping does.
//! On an idle link a probe's RTT is exactly the propagation both ways plus the
//! probe's and its echo's transmission; behind a bulk TCP flow a big DropTail
//! buffer adds its standing queue while FQ-CoDel keeps the sparse probes near
//! the base RTT; every probe sent is echoed, lost or in flight at the end.

use sim::{run_scenario, RunResult, Scenario};

fn run(text: &str) -> RunResult {
    let s = Scenario::from_toml(text, "t.toml").unwrap_or_else(|e| panic!("{e}"));
    run_scenario(&s, &mut |_| {}).unwrap()
}

fn err(text: &str) -> String {
    Scenario::from_toml(text, "t.toml").unwrap_err().to_string()
}

const IDLE: &str = r#"
name = "idle"
duration = "2s"
[topology]
kind = "graph"
nodes = ["a", "b"]
links = [{ from = "a", to = "b", rate = "1Mbps", delay = "10ms" }]
[[flows]]
name = "ping"
kind = "probe"
from = "a"
to = "b"
start_spread = "0s"
"#;

#[test]
fn on_an_idle_link_a_probe_rtt_is_the_propagation_and_two_transmissions() {
    let r = run(IDLE);
    let f = &r.flows[0];
    let p = f.probe.as_ref().unwrap();
    // 10 ms each way, and 64 bytes at 1 Mbit/s (512 us) for the probe and its echo.
    let want = 2.0 * 0.010 + 2.0 * 64.0 * 8.0 / 1e6;
    assert_eq!(f.base_rtt_s, 0.020);
    for x in [
        p.rtt_mean_s,
        p.rtt_p50_s,
        p.rtt_p95_s,
        p.rtt_p99_s,
        p.rtt_max_s,
    ] {
        assert!((x.unwrap() - want).abs() < 1e-12, "{x:?} vs {want}: {p:?}");
    }
    // One probe every 100 ms over 2 s; each back 21 ms later, before the end.
    assert_eq!((p.sent, p.echoed, p.lost), (20, 20, 0));
    assert_eq!((f.sent, f.delivered), (20, 20));
    assert_eq!(r.groups["ping"].probe.as_ref(), Some(p));
    assert_eq!(r.groups["ping"].kind, "probe");
}

#[test]
fn probes_sent_are_the_duration_over_the_interval_and_size_counts_on_the_wire() {
    let text = IDLE.replace(
        "start_spread = \"0s\"",
        "start_spread = \"0s\"\ninterval = \"20ms\"\npacket_size = 200",
    );
    let r = run(&text);
    let p = r.flows[0].probe.as_ref().unwrap();
    assert_eq!(p.sent, 2000 / 20);
    let want = 0.020 + 2.0 * 200.0 * 8.0 / 1e6;
    assert!((p.rtt_max_s.unwrap() - want).abs() < 1e-12, "{p:?}");
    // A warm-up leaves out the probes sent during it.
    let r = run(&text.replace("duration = \"2s\"", "duration = \"2s\"\nwarmup = \"1s\""));
    assert_eq!(r.flows[0].probe.as_ref().unwrap().sent, 1000 / 20);
}

/// A bulk TCP flow and a probe group through one bottleneck under `qdisc`.
fn loaded(qdisc: &str) -> RunResult {
    run(&format!(
        r#"
name = "rrul"
duration = "20s"
warmup = "5s"
seed = 3
qdisc = {qdisc}
[monitor]
delays = true
[topology]
kind = "dumbbell"
access = {{ rate = "100Mbps", delay = "1ms" }}
bottleneck = {{ rate = "10Mbps", delay = "10ms" }}
[[flows]]
name = "bulk"
kind = "tcp"
variant = "cubic"
max_window = 10000
[[flows]]
name = "voip"
kind = "probe"
interval = "20ms"
count = 2
"#
    ))
}

#[test]
fn a_big_droptail_buffer_delays_probes_by_its_queue_and_fq_codel_isolates_them() {
    let drop_tail = loaded(r#"{ kind = "droptail", limit = 1000 }"#);
    let fq = loaded(r#"{ kind = "fq_codel" }"#);
    let base = drop_tail.flows[1].base_rtt_s;
    assert_eq!(base, 2.0 * (0.001 + 0.010 + 0.001));
    let p99 = |r: &RunResult| r.groups["voip"].probe.as_ref().unwrap().rtt_p99_s.unwrap();
    // The bottleneck's queueing delay of every packet, at its 99th percentile.
    let queue_p99 = |r: &RunResult| {
        r.delays
            .iter()
            .find(|d| d.link == "left->right" && d.group.is_none())
            .unwrap()
            .p99_s
    };
    let (dt, q) = (p99(&drop_tail), queue_p99(&drop_tail));
    assert!(q > 0.1, "a standing queue of over 100 ms: {q}");
    // The probe waits behind the standing queue: its RTT above the base is about
    // the queue's delay (and a few transmissions).
    assert!(
        ((dt - base) - q).abs() < 0.15 * q,
        "p99 {dt} - base {base} vs queue p99 {q}"
    );
    // FQ-CoDel serves the sparse probes first: a packet time or two at most.
    let f = p99(&fq);
    assert!(f < base + 0.003, "fq_codel p99 {f} vs base {base}");
    for r in [&drop_tail, &fq] {
        let p = r.groups["voip"].probe.as_ref().unwrap();
        assert_eq!(p.sent, 2 * 15_000 / 20, "{p:?}");
        // The rest were in flight at the end: per flow (two), at most one per
        // interval of the longest RTT.
        let in_flight = p.sent - p.echoed - p.lost;
        let most = 2.0 * ((p.rtt_max_s.unwrap() / 0.020).ceil() + 1.0);
        assert!(in_flight as f64 <= most, "{p:?}");
        // Probes are left out of the fairness over all flows and the fair shares.
        assert_eq!(r.fairness.all.n, 1);
        assert!(r
            .flows
            .iter()
            .filter(|f| f.kind == "probe")
            .all(|f| f.fair_share_bps == 0.0));
        assert!(r.flows[0].fair_share_bps > 9.9e6);
    }
}

#[test]
fn lost_probes_are_the_probe_flows_drops_and_not_rtts() {
    // A five-packet buffer behind a bulk flow drops probes and echoes alike
    // (the echoes share the reverse bottleneck with the ACKs).
    let r = run(r#"
name = "lossy"
duration = "10s"
seed = 1
qdisc = { kind = "droptail", limit = 5 }
[topology]
kind = "dumbbell"
access = { rate = "100Mbps", delay = "1ms" }
bottleneck = { rate = "2Mbps", delay = "10ms" }
[[flows]]
name = "bulk"
kind = "tcp"
count = 4
max_window = 1000
[[flows]]
name = "ping"
kind = "probe"
interval = "10ms"
"#);
    let f = r.flows.iter().find(|f| f.kind == "probe").unwrap();
    let p = f.probe.as_ref().unwrap();
    assert!(p.lost > 0, "{p:?}");
    // No warm-up: every drop of the flow's packets is a lost probe.
    assert_eq!(p.lost, f.drops_total);
    assert_eq!(f.sent, p.sent);
    assert_eq!(f.delivered, p.echoed);
    let in_flight = p.sent - p.echoed - p.lost;
    assert!(in_flight <= 5, "{p:?}");
}

#[test]
fn the_same_seed_gives_the_same_probes_bit_for_bit() {
    let a = loaded(r#"{ kind = "droptail", limit = 100 }"#);
    let b = loaded(r#"{ kind = "droptail", limit = 100 }"#);
    let json = |r: &RunResult| {
        let mut v = serde_json::to_value(r).unwrap();
        v.as_object_mut().unwrap().remove("wall_seconds");
        v
    };
    assert_eq!(json(&a), json(&b));
    assert!(a.flows[1].probe.is_some());
}

#[test]
fn bad_probe_keys_name_the_key_and_its_line() {
    let at = |text: &str, key: &str| {
        let line = text.lines().position(|l| l.starts_with(key)).unwrap() + 1;
        format!("t.toml:{line}:")
    };
    let zero = IDLE.replace("start_spread", "interval = \"0s\"\nstart_spread");
    let e = err(&zero);
    assert!(e.starts_with(&at(&zero, "interval")), "{e}");
    assert!(
        e.contains("interval = 0s: probes need a positive interval"),
        "{e}"
    );

    let negative = IDLE.replace("start_spread", "interval = \"-5ms\"\nstart_spread");
    let e = err(&negative);
    assert!(e.starts_with(&at(&negative, "interval")), "{e}");
    assert!(e.contains("must not be negative"), "{e}");

    let small = IDLE.replace("start_spread", "packet_size = 20\nstart_spread");
    let e = err(&small);
    assert!(e.starts_with(&at(&small, "packet_size")), "{e}");
    assert!(
        e.contains(
            "packet_size = 20 must be between 28 and 65535 bytes (a probe is an echo request"
        ),
        "{e}"
    );

    let tcp = IDLE.replace("kind = \"probe\"", "kind = \"tcp\"\ninterval = \"20ms\"");
    let e = err(&tcp);
    assert!(e.starts_with(&at(&tcp, "interval")), "{e}");
    assert!(
        e.contains("interval does not apply to kind = \"tcp\""),
        "{e}"
    );

    let rate = IDLE.replace("start_spread", "rate = \"1Mbps\"\nstart_spread");
    let e = err(&rate);
    assert!(e.starts_with(&at(&rate, "rate")), "{e}");
    assert!(
        e.contains("rate does not apply to kind = \"probe\" (its own keys: interval)"),
        "{e}"
    );
}
