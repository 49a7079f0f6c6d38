//! Links as users describe them, through whole runs: a saturated link sends its
//! trace's opportunities, random loss matches its model (Bernoulli within a
//! binomial interval, Gilbert-Elliott's loss rate and burst length their closed
//! forms), jitter has the configured mean and spread and overtakes nothing unless
//! asked, and a qdisc is told a varying link's rate.

use aqm::{Dur, Time};
use sim::link_model::{DeliveryTrace, Distribution, LossSpec};
use sim::{run_scenario, RunResult, Scenario, Simulation};
use std::path::PathBuf;

#[track_caller]
fn run(text: &str) -> RunResult {
    let s = Scenario::from_toml(text, "links.toml").unwrap_or_else(|e| panic!("{e}"));
    run_scenario(&s, &mut |_| {}).unwrap()
}

/// A dumbbell of one CBR flow of `packet` bytes at `rate` over a bottleneck
/// whose keys are `bottleneck`.
fn cbr(
    bottleneck: &str,
    rate: &str,
    packet: u32,
    seconds: u32,
    seed: u64,
    monitor: &str,
) -> String {
    format!(
        r#"
name = "links"
duration = "{seconds}s"
seed = {seed}
[topology]
kind = "dumbbell"
access = {{ rate = "100Mbps", delay = "1ms" }}
[topology.bottleneck]
{bottleneck}
[monitor]
{monitor}
[[flows]]
name = "cbr"
kind = "cbr"
rate = "{rate}"
packet_size = {packet}
start_spread = "0s"
"#
    )
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("aqmlab-links-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Over each second, a backlogged FIFO on a trace sends exactly the trace's
/// opportunities in that second times 1,500 bytes. The trace repeats every
/// 2,999 ms, and no opportunity falls on a second's edge (where the series'
/// tick and a transmission's end would share an instant).
#[test]
fn a_saturated_link_sends_its_traces_opportunities_each_second() {
    let mut text = String::new();
    for ms in 1..=2999u64 {
        if (0..4).any(|cycle| (cycle * 2999 + ms) % 1000 == 0) {
            continue;
        }
        for _ in 0..(ms * 7 % 3) {
            text.push_str(&format!("{ms}\n"));
        }
    }
    let trace = DeliveryTrace::parse(&text).unwrap();
    assert_eq!(trace.period(), Dur::from_millis(2999));
    std::fs::write(temp("t.up"), &text).unwrap();
    let scenario = temp("trace.toml");
    std::fs::write(
        &scenario,
        cbr(
            "rate = { trace = \"t.up\" }\ndelay = \"5ms\"",
            "50Mbps",
            1500,
            10,
            1,
            "flow_series = \"1s\"",
        ),
    )
    .unwrap();
    let s = Scenario::from_path(&scenario).unwrap();
    let r = run_scenario(&s, &mut |_| {}).unwrap();
    let rows: Vec<_> = r
        .flow_series
        .iter()
        .filter(|x| x.link == "left->right" && x.t_s >= 1.0)
        .collect();
    assert_eq!(rows.len(), 9);
    for row in rows {
        let from = Time::from_secs(row.t_s as u64);
        let want = trace.count(from, from + Dur::from_secs(1)) * 1500;
        assert_eq!(row.bytes, want as f64, "second {}", row.t_s);
    }
}

/// On a trace link, utilization is the bits sent over the bits the trace's
/// opportunities offered in the measured interval: 1 when backlogged, the
/// offered share when not (a packet waiting for its opportunity is not the link
/// at work, though the transmitter holds it).
#[test]
fn a_trace_links_utilization_is_its_throughput_over_the_opportunities() {
    // Two opportunities every 2 ms (12 Mbit/s), in bursts: a packet arriving
    // between them waits up to 2 ms for one.
    let text: String = (1..=1000u64)
        .map(|k| format!("{}\n{}\n", 2 * k, 2 * k))
        .collect();
    std::fs::write(temp("burst.up"), &text).unwrap();
    for (offered, want) in [("30Mbps", 1.0), ("3Mbps", 0.25)] {
        let scenario = temp(&format!("burst-{offered}.toml"));
        std::fs::write(
            &scenario,
            cbr(
                "rate = { trace = \"burst.up\" }\ndelay = \"5ms\"",
                offered,
                1500,
                10,
                1,
                "",
            ),
        )
        .unwrap();
        let s = Scenario::from_path(&scenario).unwrap();
        let r = run_scenario(&s, &mut |_| {}).unwrap();
        let link = &r.links[0];
        let capacity = 12e6;
        assert!(
            (link.utilization - link.throughput_bps / capacity).abs() < 0.01,
            "{offered}: utilization {} against throughput {}",
            link.utilization,
            link.throughput_bps
        );
        assert!(
            (link.utilization - want).abs() < 0.02,
            "{offered}: {}",
            link.utilization
        );
    }
}

/// The link's `link_loss` count of each run, checked against the flow's.
fn link_losses(r: &RunResult) -> u64 {
    let link = &r.links[0];
    assert_eq!(link.name, "left->right");
    assert_eq!(link.drops["link_loss"], r.flows[0].drops["link_loss"]);
    // Lost before the queue: the queue saw none of them (the flow's packets
    // but those still on the access link at the end), and dropped none.
    let reached = link.arrivals + link.drops["link_loss"];
    assert!(reached <= r.flows[0].sent && r.flows[0].sent - reached <= 4);
    assert_eq!(link.drops_total, link.drops["link_loss"]);
    link.drops["link_loss"]
}

/// A CBR flow's losses over 20 seeds fall within 4 standard deviations of the
/// binomial's mean, in each run and in all.
#[test]
fn bernoulli_loss_is_binomial_over_seeds() {
    let p = 0.02;
    let (mut lost, mut sent) = (0u64, 0u64);
    for seed in 1..=20 {
        let r = run(&cbr(
            &format!("rate = \"10Mbps\"\ndelay = \"5ms\"\nloss = {p}"),
            "1Mbps",
            1000,
            10,
            seed,
            "",
        ));
        let (k, n) = (link_losses(&r), r.flows[0].sent);
        let sd = (n as f64 * p * (1.0 - p)).sqrt();
        assert!(
            (k as f64 - n as f64 * p).abs() <= 4.0 * sd,
            "seed {seed}: {k} of {n}"
        );
        lost += k;
        sent += n;
    }
    let sd = (sent as f64 * p * (1.0 - p)).sqrt();
    assert!(
        (lost as f64 - sent as f64 * p).abs() <= 4.0 * sd,
        "{lost} of {sent}"
    );
}

/// Gilbert-Elliott: the loss rate and the mean length of a run of consecutive
/// losses are the model's closed forms (`LossSpec::loss_rate`, `mean_burst`),
/// read off the drop log of a CBR flow whose packets reach the link 0.5 ms apart.
#[test]
fn gilbert_elliott_loses_at_its_rate_in_bursts_of_its_mean_length() {
    let spec = LossSpec::gemodel(0.05, Some(0.3), Some(0.8), Some(0.01));
    let (mut lost, mut sent, mut bursts) = (0u64, 0u64, 0u64);
    for seed in 1..=3 {
        let r = run(&cbr(
            "rate = \"100Mbps\"\ndelay = \"5ms\"\nloss = { gemodel = [0.05, 0.3, 0.8, 0.01] }",
            "16Mbps",
            1000,
            30,
            seed,
            "events = true\nmax_events = 1000000",
        ));
        lost += link_losses(&r);
        sent += r.flows[0].sent;
        let times: Vec<f64> = r
            .queue_events
            .iter()
            .filter(|e| e.reason == "link_loss")
            .map(|e| e.t_s)
            .collect();
        assert_eq!(times.len() as u64, r.links[0].drops["link_loss"]);
        // A burst starts at every loss that does not follow the packet before.
        bursts += 1 + times.windows(2).filter(|w| w[1] - w[0] > 0.75e-3).count() as u64;
    }
    // 270,000 packets, correlated over runs of about 1/r = 3 packets: the
    // estimates' relative standard errors are below 1.5%; 4 of them allowed.
    let rate = lost as f64 / sent as f64;
    assert!(
        (rate / spec.loss_rate() - 1.0).abs() < 0.06,
        "loss rate {rate}, model {}",
        spec.loss_rate()
    );
    let burst = lost as f64 / bursts as f64;
    assert!(
        (burst / spec.mean_burst() - 1.0).abs() < 0.06,
        "mean burst {burst}, model {}",
        spec.mean_burst()
    );
}

/// When each UDP packet (by its IP id) finished on the link `link`, in order,
/// from a capture of a run of `text`.
fn captured(text: &str, link: &str) -> Vec<(u16, u64)> {
    let s = Scenario::from_toml(text, "links.toml").unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Simulation::new(&s).unwrap();
    let path = temp(&format!("{link}-{}.pcap", text.len()));
    sim.capture(sim.find_link(link).unwrap(), &path).unwrap();
    sim.run(&mut |_| {});
    sim.finish_capture().unwrap();
    let bytes = std::fs::read(&path).unwrap();
    std::fs::remove_file(&path).ok();
    let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap());
    let mut out = Vec::new();
    let mut i = 24;
    while i + 16 <= bytes.len() {
        let t = u32_at(i) as u64 * 1_000_000_000 + u32_at(i + 4) as u64;
        let len = u32_at(i + 8) as usize;
        let ip = &bytes[i + 16..i + 16 + len];
        out.push((u16::from_be_bytes([ip[4], ip[5]]), t));
        i += 16 + len;
    }
    out
}

/// The drawn delays of a normal jitter: a CBR flow's packets 50 ms apart (more
/// than the jitter's range, so none waits for the one before) reach the far end
/// later than with the mean delay alone by the draw; their mean and standard
/// deviation are the distribution's (netem's table), within 4 standard errors.
#[test]
fn jitter_has_the_configured_mean_and_spread() {
    let text = |delay: &str| {
        cbr(
            &format!("rate = \"10Mbps\"\ndelay = {delay}"),
            "160kbit",
            1000,
            100,
            1,
            "",
        )
    };
    let plain = captured(&text("\"20ms\""), "right->r0");
    let jittered = captured(
        &text("{ mean = \"20ms\", jitter = \"5ms\", distribution = \"normal\" }"),
        "right->r0",
    );
    let at: std::collections::HashMap<u16, u64> = plain.into_iter().collect();
    let delays: Vec<f64> = jittered
        .iter()
        .map(|(id, t)| (*t as f64 - at[id] as f64) * 1e-9 + 0.020)
        .collect();
    let n = delays.len() as f64;
    assert!(n > 1900.0, "{n} packets");
    let mean = delays.iter().sum::<f64>() / n;
    let sd = (delays.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    let (m, s) = Distribution::Normal.moments();
    let (want_mean, want_sd) = (0.020 + 0.005 * m, 0.005 * s);
    assert!(
        (mean - want_mean).abs() < 4.0 * want_sd / n.sqrt(),
        "mean {mean}, want {want_mean}"
    );
    assert!(
        (sd - want_sd).abs() < 4.0 * want_sd / (2.0 * n).sqrt(),
        "sd {sd}, want {want_sd}"
    );
}

/// Packets 1 ms apart with 5 ms of jitter: without `reorder` none overtakes the
/// one before it (netem's rule for a link with a rate); with it, some do.
#[test]
fn jitter_overtakes_only_when_asked() {
    let order = |reorder: bool| {
        let text = cbr(
            &format!(
                "rate = \"100Mbps\"\ndelay = {{ mean = \"20ms\", jitter = \"5ms\", reorder = {reorder} }}"
            ),
            "8Mbps",
            1000,
            5,
            1,
            "",
        );
        let ids: Vec<u16> = captured(&text, "right->r0").iter().map(|x| x.0).collect();
        assert!(ids.len() > 4000);
        ids.windows(2).filter(|w| w[1] < w[0]).count()
    };
    assert_eq!(order(false), 0);
    assert!(order(true) > 100);
}

/// The engine tells a qdisc its link's new rate: a link whose schedule drops
/// from 10 to 2 Mbit/s a microsecond in (before anything arrives) gives every
/// qdisc that derives something from the rate (RED's idle decay, REM's capacity,
/// WFQ's virtual time, the bins of SFQ and SFRED, FRED) the same decisions as a
/// constant 2 Mbit/s link. Built for 10 Mbit/s and never told, REM's capacity
/// alone would be five times too large.
#[test]
fn a_qdisc_on_a_varying_link_is_told_its_rate() {
    let text = |qdisc: &str, rate: &str| {
        format!(
            r#"
name = "told"
duration = "10s"
warmup = "2s"
qdisc = {{ kind = "{qdisc}" }}
[topology]
kind = "dumbbell"
access = {{ rate = "100Mbps", delay = "1ms" }}
bottleneck = {{ rate = {rate}, delay = "10ms" }}
[[flows]]
name = "tcp"
kind = "tcp"
count = 4
"#
        )
    };
    let schedule =
        r#"{ schedule = [{ at = "0s", rate = "10Mbps" }, { at = "1us", rate = "2Mbps" }] }"#;
    for qdisc in ["red", "rem", "wfq", "sfq", "sfred", "fred"] {
        let constant = run(&text(qdisc, "\"2Mbps\""));
        let varying = run(&text(qdisc, schedule));
        let (a, b) = (&constant.links[0], &varying.links[0]);
        assert_eq!(a.drops, b.drops, "{qdisc}: drops");
        assert_eq!(a.tx_packets, b.tx_packets, "{qdisc}: packets sent");
        for (f, g) in constant.flows.iter().zip(&varying.flows) {
            assert_eq!(f.delivered, g.delivered, "{qdisc}: flow {}", f.id);
        }
        let (qa, qb) = (a.mean_queue_packets, b.mean_queue_packets);
        assert!(
            (qa - qb).abs() <= 1e-3 * qa,
            "{qdisc}: mean queue {qa} / {qb}"
        );
    }
}
