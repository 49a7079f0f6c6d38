//! The observers of `[monitor]`, tested for what they measure: a CBR flow's series
//! is its rate, a link's flow series add up to its throughput, a queue whose
//! sojourn times are known gives those quantiles, TCP traces follow the sender, web
//! objects take as long as their packets need, and the drop log matches the counts.

use sim::{run_scenario, RunResult, Scenario};

#[track_caller]
fn run(text: &str) -> RunResult {
    let s = Scenario::from_toml(text, "test.toml").unwrap_or_else(|e| panic!("{e}"));
    run_scenario(&s, &mut |_| {}).unwrap()
}

/// A dumbbell with `monitor` as its `[monitor]` table and `flows` as its groups.
fn dumbbell(bottleneck: &str, qdisc: &str, monitor: &str, flows: &str) -> String {
    format!(
        r#"
name = "obs"
duration = "10s"
warmup = "2s"
[topology]
kind = "dumbbell"
access = {{ rate = "100Mbps", delay = "1ms" }}
bottleneck = {{ rate = "{bottleneck}", delay = "5ms" }}
[qdisc]
{qdisc}
[monitor]
{monitor}
{flows}
"#
    )
}

const CBR: &str = r#"
[[flows]]
name = "cbr"
kind = "cbr"
rate = "2Mbps"
start_spread = "0s"
"#;

#[test]
fn a_cbr_flows_series_equals_its_rate_in_every_interval() {
    let r = run(&dumbbell(
        "10Mbps",
        "kind = \"droptail\"",
        "flow_series = \"500ms\"",
        CBR,
    ));
    let rows: Vec<_> = r
        .flow_series
        .iter()
        .filter(|x| x.link == "left->right")
        .collect();
    assert_eq!(rows.len(), 20, "one row per interval of 10 s");
    for (k, row) in rows.iter().enumerate() {
        assert_eq!(row.t_s, k as f64 * 0.5);
        assert_eq!(row.dt_s, 0.5);
        assert_eq!(row.flow, 0);
        // 2 Mbit/s of 1000-byte packets: 125 per 0.5 s, give or take the one in
        // transmission at an interval's edge.
        assert!((124..=126).contains(&row.packets), "{row:?}");
        let err = (row.throughput_bps - 2e6).abs() / 2e6;
        assert!(err <= 0.01, "{row:?}");
        assert_eq!((row.drops, row.marks), (0, 0));
    }
}

#[test]
fn a_links_flow_series_add_up_to_its_throughput_and_drops() {
    let flows = r#"
[[flows]]
name = "tcp"
kind = "tcp"
count = 5
[[flows]]
name = "udp"
kind = "cbr"
rate = "1Mbps"
"#;
    let r = run(&dumbbell(
        "2Mbps",
        "kind = \"red\"\nlimit = 40\nmin_th = 5\nmax_th = 15",
        "flow_series = \"1s\"",
        flows,
    ));
    let link = &r.links[0];
    // Over the measured interval [2 s, 10 s), whose edges are interval edges.
    let measured = r
        .flow_series
        .iter()
        .filter(|x| x.link == link.name && x.t_s >= 2.0);
    let (mut bytes, mut drops) = (0.0, 0u64);
    for x in measured {
        bytes += x.bytes;
        drops += x.drops as u64;
    }
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
    assert!(
        close(bytes * 8.0 / 8.0, link.throughput_bps),
        "{bytes} {link:?}"
    );
    assert_eq!(drops, link.drops_total);
    // And per flow, the series sums to the flow's throughput across the link.
    for lf in r.link_flows.iter().filter(|x| x.link == link.name) {
        let b: f64 = r
            .flow_series
            .iter()
            .filter(|x| x.link == link.name && x.flow == lf.flow && x.t_s >= 2.0)
            .map(|x| x.bytes)
            .sum();
        assert!(close(b * 8.0 / 8.0, lf.throughput_bps), "flow {}", lf.flow);
    }
}

#[test]
fn delay_quantiles_of_a_queue_whose_sojourns_are_known() {
    // A 4 Mbit/s CBR into a 2 Mbit/s DropTail of 100 packets: after it fills
    // (within the warm-up), every packet waits behind a full queue of 1000-byte
    // packets at 4 ms each: about 100 x 4 ms = 0.4 s; 99 or 100 packets ahead.
    let flows = r#"
[[flows]]
name = "cbr"
kind = "cbr"
rate = "4Mbps"
start_spread = "0s"
"#;
    let r = run(&dumbbell(
        "2Mbps",
        "kind = \"droptail\"\nlimit = 100",
        "delays = true",
        flows,
    ));
    let all = r
        .delays
        .iter()
        .find(|d| d.link == "left->right" && d.group.is_none())
        .unwrap();
    // 8 s at 250 packets/s, give or take one.
    assert!((1999..=2001).contains(&all.count), "{all:?}");
    for q in [all.p50_s, all.p90_s, all.p99_s, all.max_s, all.mean_s] {
        assert!((0.395..=0.401).contains(&q), "{all:?}");
    }
    let group = r
        .delays
        .iter()
        .find(|d| d.link == "left->right" && d.group.as_deref() == Some("cbr"))
        .unwrap();
    assert_eq!(group.count, all.count);
    let total: u64 = r
        .delay_histogram
        .iter()
        .filter(|b| b.link == "left->right" && b.group.is_none())
        .map(|b| b.count)
        .sum();
    assert_eq!(total, all.count);
    // The ACK-free reverse direction carried nothing.
    let rev = r
        .delays
        .iter()
        .find(|d| d.link == "right->left" && d.group.is_none())
        .unwrap();
    assert_eq!(rev.count, 0);
}

#[test]
fn delays_of_an_uncongested_link_are_serialization_free_zeros() {
    // Idle DropTail: each packet passes straight to the transmitter.
    let r = run(&dumbbell(
        "10Mbps",
        "kind = \"droptail\"",
        "delays = true",
        CBR,
    ));
    let all = r.delays.iter().find(|d| d.group.is_none()).unwrap();
    assert!(all.count > 1000);
    assert_eq!((all.p99_s, all.max_s), (0.0, 0.0));
}

/// A group of TCP flows (`keys` besides a window of 40) traced every 100 ms
/// through a 1 Mbit/s bottleneck of 20 packets, for 10 s.
fn traced(keys: &str) -> RunResult {
    let flows = format!("[[flows]]\nname = \"tcp\"\nkind = \"tcp\"\nmax_window = 40\n{keys}\n");
    let qdisc = "kind = \"droptail\"\nlimit = 20";
    run(&dumbbell("1Mbps", qdisc, "tcp_trace = \"100ms\"", &flows))
}

#[test]
fn the_tcp_trace_follows_the_senders_window() {
    let r = traced("count = 2");
    assert_eq!(r.tcp_trace.len(), 2 * 100, "two flows, 100 samples of 10 s");
    let f0: Vec<_> = r.tcp_trace.iter().filter(|s| s.flow == 0).collect();
    assert!(f0.windows(2).all(|w| w[1].t_s > w[0].t_s));
    assert!(f0.iter().all(|s| s.cwnd >= 1.0 && s.cwnd <= 40.0));
    // A window that never shrinks would be no congestion control at all.
    assert!(
        f0.windows(2).any(|w| w[1].cwnd < w[0].cwnd),
        "cwnd never fell"
    );
    let late = f0.last().unwrap();
    assert!(late.ssthresh.is_finite() && late.srtt_s > 0.01 && late.rto_s >= 0.2);
    assert!(late.in_flight as f64 <= late.cwnd.ceil() + 3.0, "{late:?}");
    assert!(
        r.tcp_trace.iter().all(|s| s.pacing_rate_pps.is_none()),
        "not paced"
    );
    assert!(r
        .tcp_trace
        .iter()
        .all(|s| s.bbr_bw_pps.is_none() && s.bbr_min_rtt_s.is_none()));
}

/// The trace's pacing rate is the one the sender paces at: after slow start,
/// Linux's 1.2 x cwnd / srtt (`tcp_update_pacing_rate`).
#[test]
fn the_tcp_trace_records_the_pacing_rate() {
    let r = traced("variant = \"cubic\"\npacing = true");
    let late = r.tcp_trace.last().unwrap();
    assert!(late.cwnd >= late.ssthresh / 2.0, "{late:?}");
    let expected = 1.2 * late.cwnd / late.srtt_s;
    let rate = late.pacing_rate_pps.expect("a paced flow has a rate");
    // The gap between packets is whole nanoseconds.
    assert!(
        (rate / expected - 1.0).abs() < 1e-6,
        "{rate} against {expected}"
    );
}

#[test]
fn web_objects_take_the_time_their_packets_need() {
    let flows = r#"
[[flows]]
name = "web"
kind = "web"
object_size = 10
think = "500ms"
start_spread = "0s"
"#;
    let r = run(&dumbbell(
        "10Mbps",
        "kind = \"droptail\"",
        "objects = true",
        flows,
    ));
    assert!(!r.objects.is_empty());
    // Alone on the path: slow start from one packet needs four round trips
    // (1 + 2 + 4 + 3 packets) of about 14 ms each; think time separates objects.
    for o in &r.objects {
        assert!(o.start_s >= 2.0, "warm-up objects are left out: {o:?}");
        assert_eq!(o.packets, 10);
        assert!((0.04..=0.08).contains(&o.transfer_s), "{o:?}");
    }
    for w in r.objects.windows(2) {
        assert!((w[1].start_s - w[0].end_s - 0.5).abs() < 1e-9, "{w:?}");
    }
}

#[test]
fn the_event_log_holds_every_drop_and_mark() {
    let flows = r#"
[[flows]]
name = "tcp"
kind = "tcp"
count = 4
ecn = true
[[flows]]
name = "udp"
kind = "cbr"
rate = "1.5Mbps"
"#;
    let r = run(&dumbbell(
        "1Mbps",
        "kind = \"red\"\nlimit = 30\nmin_th = 3\nmax_th = 10\necn = true",
        "events = true",
        flows,
    ));
    let link = &r.links[0];
    let measured = |mark: bool| {
        r.queue_events
            .iter()
            .filter(|e| e.link == link.name && e.mark == mark && e.t_s >= 2.0)
            .count() as u64
    };
    assert_eq!(measured(false), link.drops_total);
    assert_eq!(measured(true), link.marks_total);
    assert!(link.marks_total > 0 && link.drops_total > 0);
    assert_eq!(r.queue_events_missed, 0);
    // The log is capped when asked.
    let r = run(&dumbbell(
        "1Mbps",
        "kind = \"red\"\nlimit = 30\nmin_th = 3\nmax_th = 10\necn = true",
        "events = true\nmax_events = 10",
        flows,
    ));
    assert_eq!(r.queue_events.len(), 10);
    assert!(r.queue_events_missed > 0);
}

#[test]
fn observers_left_off_change_nothing() {
    let flows = r#"
[[flows]]
name = "tcp"
kind = "tcp"
count = 3
"#;
    let plain = run(&dumbbell("1Mbps", "kind = \"red\"", "", flows));
    let observed = run(&dumbbell(
        "1Mbps",
        "kind = \"red\"",
        "flow_series = \"1s\"\ntcp_trace = \"1s\"\ndelays = true\nevents = true\nobjects = true",
        flows,
    ));
    assert_eq!(plain.flows, observed.flows);
    assert_eq!(plain.links, observed.links);
    assert!(plain.flow_series.is_empty() && plain.delays.is_empty());
}

#[test]
fn monitor_errors_name_the_key() {
    let e = Scenario::from_toml(
        &dumbbell("1Mbps", "kind = \"red\"", "queue_interval = \"1ns\"", CBR),
        "s.toml",
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("monitor.queue_interval = 1ns gives 10000000000 samples"),
        "{e}"
    );
    assert!(e.starts_with("s.toml:12:"), "{e}");
    // Found when the scenario is read, not first when the network is built.
    let e = Scenario::from_toml(
        &dumbbell(
            "1Mbps",
            "kind = \"red\"",
            "links = [\"left->nowhere\"]",
            CBR,
        ),
        "s.toml",
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("monitor.links names \"left->nowhere\", which is not a monitored link direction (monitored: left->right, right->left)"),
        "{e}"
    );
}

#[test]
fn utilization_counts_only_transmission_when_an_idle_link_drops_arrivals() {
    // A 3 Mbit/s CBR drives RED's average far above max_th; the queue drains while
    // the average stays high, and arrivals that find the link idle and empty are
    // dropped. The link then sends nothing, so it must not count as busy.
    let text = r#"
name = "idle-drops"
duration = "10s"
warmup = "1s"
[topology]
kind = "dumbbell"
access = { rate = "100Mbps", delay = "1ms" }
bottleneck = { rate = "1Mbps", delay = "5ms" }
[monitor]
queue_interval = "0s"
[qdisc]
kind = "red"
limit = 100
min_th = 5
max_th = 15
[[flows]]
name = "burst"
kind = "cbr"
rate = "3Mbps"
schedule = [{ at = "5s", rate = "0.1Mbps" }]
start_spread = "0s"
"#;
    let r = run(text);
    let link = &r.links[0];
    let sent_share = link.throughput_bps / link.rate_bps as f64;
    assert!(link.drops_total > 0, "RED drops the trickle: {link:?}");
    assert!(
        (link.utilization - sent_share).abs() <= 0.01,
        "utilization {} but the link sent {sent_share} of its rate",
        link.utilization
    );
}

#[test]
fn a_saturated_links_throughput_never_exceeds_its_rate() {
    // Warm-up ends while a packet is in transmission (1000-byte packets take 8 ms
    // at 1 Mbit/s; 2.0035 s is mid-packet): its bits are split between warm-up and
    // measurement, in the link's totals and in the per-flow series alike.
    let text = dumbbell(
        "1Mbps",
        "kind = \"droptail\"\nlimit = 50",
        "flow_series = \"1s\"",
        CBR,
    )
    .replace("warmup = \"2s\"", "warmup = \"2003500us\"");
    let r = run(&text);
    let link = &r.links[0];
    assert!(link.throughput_bps <= 1e6, "{}", link.throughput_bps);
    assert!(link.throughput_bps > 0.999e6, "{}", link.throughput_bps);
    for row in &r.flow_series {
        assert!(row.throughput_bps <= 1e6 * (1.0 + 1e-12), "{row:?}");
    }
}

/// `into_report` frees the links before making the flows' rows; what it reports
/// must be `report`'s, every observer on.
#[test]
fn into_report_reports_what_report_does() {
    let text = dumbbell(
        "10Mbps",
        "kind = \"red\"",
        "flow_series = \"1s\"\ntcp_trace = \"500ms\"\ndelays = true\nevents = true\nobjects = true",
        "[[flows]]\nname = \"t\"\nkind = \"tcp\"\nvariant = \"cubic\"\ncount = 6\n\
         [[flows]]\nname = \"u\"\nkind = \"poisson\"\nrate = \"2Mbps\"\n",
    );
    let s = Scenario::from_toml(&text, "test.toml").unwrap_or_else(|e| panic!("{e}"));
    let mut sim = sim::Simulation::new(&s).unwrap();
    sim.run(&mut |_| {});
    let kept = sim.report(0.0);
    let freed = sim.into_report(0.0);
    assert!(!kept.link_flows.is_empty() && !kept.flow_series.is_empty());
    assert!(!kept.delays.is_empty() && !kept.queue_events.is_empty());
    assert_eq!(kept, freed);
}
