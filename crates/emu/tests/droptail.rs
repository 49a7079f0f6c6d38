//! Real TCP through an emulated DropTail bottleneck.
mod common;

const RENO_4: &str = r#"
name = "reno-4"
duration = "6s"
warmup = "2s"
qdisc = { kind = "droptail", limit = 50 }
monitor = { delays = true }
flows = [{ name = "bulk", kind = "tcp", count = 4, variant = "reno", start_spread = "200ms" }]
[topology]
kind = "dumbbell"
access = { rate = "100Mbps", delay = "1ms" }
bottleneck = { rate = "10Mbps", delay = "10ms" }
"#;

/// Four Linux Reno flows fill a 10 Mbit/s DropTail link, and its queue samples
/// show the buffer filling (up to its limit of 50), with the drops that follow.
/// The queue's sojourn times are recorded as the simulator records them, and
/// agree with its mean backlog by Little's law.
#[test]
fn four_reno_flows_fill_a_droptail_bottleneck() {
    require_emulation!();
    let r = common::emulate_keeping_time(RENO_4);
    let e = r.emulation.as_ref().expect("an emulated run says so");
    eprintln!(
        "{}",
        serde_json::to_string_pretty(&r.summary_json()).unwrap()
    );
    let link = &r.links[0];
    assert_eq!(link.name, "left->right");
    assert!(link.utilization > 0.9, "utilization {}", link.utilization);
    let max = *link.queue.packets.iter().max().unwrap();
    assert!(max >= 40, "the queue samples peak at {max} of 50");
    assert!(link.drops["overflow"] > 0, "a full DropTail drops");
    // Each flow moved data, and the goodputs add up to about the link.
    let total: f64 = r.flows.iter().map(|f| f.goodput_bps).sum();
    assert!(total > 8.5e6 && total < 10.5e6, "goodput {total}");
    assert!(r.flows.iter().all(|f| f.goodput_bps > 0.5e6));
    assert!(e.lateness_p99_s < e.packet_time_s, "{e:?}");
    assert_eq!(e.tun_drops, 0);

    let delay = r
        .delays
        .iter()
        .find(|d| d.link == "left->right" && d.scope == "link")
        .expect("a delay row for the bottleneck");
    let seconds = r.duration_s - r.warmup_s;
    let little = link.mean_queue_packets / (link.tx_packets as f64 / seconds);
    assert!(
        (delay.mean_s - little).abs() < 0.15 * little,
        "mean sojourn {} s against Little's {little} s",
        delay.mean_s
    );
    assert!(delay.p99_s >= delay.p50_s && delay.p50_s > 0.0, "{delay:?}");
    let bulk = r.delays.iter().find(|d| d.group.as_deref() == Some("bulk"));
    assert_eq!(bulk.map(|d| d.count), Some(delay.count));
    assert!(r.delay_histogram.iter().any(|b| b.link == "left->right"));

    // One schema: every table of the emulated run has the columns, types and
    // order of the simulated run's, and the run table says which is which.
    let simulated = common::simulate(RENO_4);
    let emulated = sim::tables::tables(&r);
    let reference = sim::tables::tables(&simulated);
    assert_eq!(emulated.len(), reference.len());
    for ((name, a), (name_b, b)) in emulated.iter().zip(&reference) {
        assert_eq!(name, name_b);
        assert_eq!(a.schema(), b.schema(), "table {name}");
    }
    let flag = |t: &[(&str, arrow_array::RecordBatch)]| {
        let run = &t.iter().find(|(n, _)| *n == "run").unwrap().1;
        let col = run.column_by_name("emulated").unwrap();
        col.as_any()
            .downcast_ref::<arrow_array::BooleanArray>()
            .unwrap()
            .value(0)
    };
    assert!(flag(&emulated));
    assert!(!flag(&reference));
}
