//! Every qdisc kind of the registry runs emulated: its defaults on the
//! bottleneck, real TCP and a CBR flow through it for a second; and with UDP
//! alone it decides as the simulator does, packet for packet.
mod common;

/// A dumbbell (10 Mbit/s, 5 ms bottleneck) with `qdisc` and `flows`.
fn dumbbell(
    name: String,
    duration: &str,
    qdisc: serde_json::Value,
    flows: serde_json::Value,
) -> sim::Scenario {
    let json = serde_json::json!({
        "name": name,
        "duration": duration,
        "warmup": "500ms",
        "qdisc": qdisc,
        "topology": {
            "kind": "dumbbell",
            "access": { "rate": "100Mbps", "delay": "1ms" },
            "bottleneck": { "rate": "10Mbps", "delay": "5ms" },
        },
        "flows": flows,
    });
    sim::Scenario::from_json(&json.to_string()).unwrap()
}

/// Runs `s` simulated and emulated and checks that the bottleneck decided the
/// same on the same arrivals: drops and marks by reason, packets sent, and
/// each flow's drops. Returns (simulated, emulated).
fn decides_as_simulated(s: &sim::Scenario) -> (sim::RunResult, sim::RunResult) {
    let what = &s.file.name;
    let simulated = sim::run_scenario(s, &mut |_| {}).unwrap();
    let emulated = common::emulate_scenario(s).unwrap_or_else(|e| panic!("{what}: {e}"));
    let (a, b) = (&simulated.links[0], &emulated.links[0]);
    eprintln!(
        "{what:>16}: arrivals {} / {}, drops {} / {}, marks {} / {}",
        a.arrivals, b.arrivals, a.drops_total, b.drops_total, a.marks_total, b.marks_total
    );
    assert_eq!(a.arrivals, b.arrivals, "{what}: arrivals");
    assert_eq!(a.drops, b.drops, "{what}: drops by reason");
    assert_eq!(a.marks, b.marks, "{what}: marks by reason");
    assert_eq!(a.tx_packets, b.tx_packets, "{what}: packets sent");
    for (f, g) in simulated.flows.iter().zip(&emulated.flows) {
        assert_eq!(
            (f.drops, f.marks),
            (g.drops, g.marks),
            "{what}: flow {} drops and marks",
            f.id
        );
    }
    (simulated, emulated)
}

#[test]
fn every_qdisc_kind_forwards_real_tcp() {
    require_emulation!();
    for kind in aqm::QdiscSpec::KINDS {
        let s = dumbbell(
            format!("every-{kind}"),
            "1500ms",
            serde_json::json!({ "kind": kind }),
            serde_json::json!([
                { "name": "tcp", "kind": "tcp", "count": 2, "variant": "cubic",
                  "start_spread": "0s" },
                { "name": "udp", "kind": "cbr", "rate": "3Mbps" },
            ]),
        );
        let r = common::emulate_scenario(&s).unwrap_or_else(|e| panic!("{kind}: {e}"));
        let link = &r.links[0];
        eprintln!(
            "{kind:>10}: util {:.3} tcp {:.2} Mb/s udp {:.2} Mb/s drops {} marks {}",
            link.utilization,
            r.groups["tcp"].goodput_bps / 1e6,
            r.groups["udp"].goodput_bps / 1e6,
            link.drops_total,
            link.marks_total
        );
        assert_eq!(link.qdisc, *kind);
        assert!(
            r.flows.iter().all(|f| f.delivered > 0),
            "{kind}: a flow delivered nothing"
        );
        assert!(
            link.utilization > 0.5,
            "{kind}: utilization {}",
            link.utilization
        );
    }
}

/// The data plane is the simulator's link: with only UDP sources (made by the
/// plane on the scenario's schedule, as the simulator makes them) every qdisc
/// kind sees the same arrivals at the same logical times, so it must make the
/// same decisions, packet for packet. Poisson traffic just above the link's
/// rate, of two sizes, some of it ECN-capable, reaches the qdiscs' drop, mark
/// and sojourn paths. (Poisson, because two events at the same nanosecond are
/// ordered by when each was scheduled, which the two engines do differently;
/// constant-rate sources make such ties.)
#[test]
fn every_qdisc_kind_decides_as_in_simulation_on_the_same_arrivals() {
    require_emulation!();
    for kind in aqm::QdiscSpec::KINDS {
        // Marking too, where the kind can mark.
        let mut qdisc = serde_json::json!({ "kind": kind });
        if aqm::QdiscSpec::keys(kind).is_some_and(|k| k.contains(&"ecn")) {
            qdisc["ecn"] = true.into();
        }
        let s = dumbbell(
            format!("same-{kind}"),
            "2s",
            qdisc,
            serde_json::json!([
                { "name": "poisson", "kind": "poisson", "count": 3, "rate": "2.5Mbps" },
                { "name": "small", "kind": "poisson", "count": 2, "rate": "1.5Mbps",
                  "packet_size": 500, "ecn": true },
            ]),
        );
        let (simulated, emulated) = decides_as_simulated(&s);
        let (a, b) = (&simulated.links[0], &emulated.links[0]);
        for (f, g) in simulated.flows.iter().zip(&emulated.flows) {
            // Delivered is what the receiving socket read by the end: a packet
            // written in the last instant may be read after it.
            assert!(
                f.delivered.abs_diff(g.delivered) <= 2,
                "{kind}: flow {} delivered {} / {}",
                f.id,
                f.delivered,
                g.delivered
            );
        }
        let (qa, qb) = (a.mean_queue_packets, b.mean_queue_packets);
        assert!(
            (qa - qb).abs() <= 0.01 * qa.max(1.0),
            "{kind}: mean queue {qa} / {qb}"
        );
    }
}

/// A qdisc that holds packets for their time (CAKE's shaper, fq's pacing) is
/// asked again when it says (`Qdisc::wake_at`): emulated, the bottleneck
/// carries the shaped rate and never stalls with packets queued.
#[test]
fn a_shaped_cake_and_a_paced_fq_are_woken_in_emulation() {
    require_emulation!();
    for (qdisc, want) in [
        (
            serde_json::json!({ "kind": "cake", "bandwidth": "6Mbps" }),
            6e6,
        ),
        // Three flows paced at 2 Mbit/s each.
        (serde_json::json!({ "kind": "fq", "maxrate": "2Mbps" }), 6e6),
    ] {
        let kind = qdisc["kind"].as_str().unwrap().to_string();
        let s = dumbbell(
            format!("shaped-{kind}"),
            "2s",
            qdisc,
            serde_json::json!([
                { "name": "tcp", "kind": "tcp", "count": 2, "variant": "cubic",
                  "start_spread": "0s" },
                { "name": "udp", "kind": "cbr", "rate": "3Mbps" },
            ]),
        );
        let r = common::emulate_scenario(&s).unwrap_or_else(|e| panic!("{kind}: {e}"));
        let got = r.links[0].throughput_bps;
        eprintln!("{kind}: {:.2} Mb/s through the bottleneck", got / 1e6);
        assert!(
            (got - want).abs() < 0.1 * want,
            "{kind}: {got} bit/s, shaped to {want}"
        );
    }
}

/// Hosts reach the qdisc emulated as simulated: CAKE isolating source hosts
/// splits the link evenly between a host of three Poisson flows and a host of
/// one, dropping the same packets in both, and the two hosts tables agree.
#[test]
fn cakes_host_isolation_decides_as_in_simulation() {
    require_emulation!();
    let s = dumbbell(
        "hosts-cake".into(),
        "2s",
        serde_json::json!({ "kind": "cake", "isolation": "dual-srchost" }),
        serde_json::json!([
            { "name": "many", "host": "a", "kind": "poisson", "count": 3, "rate": "4Mbps" },
            { "name": "one", "host": "b", "kind": "poisson", "rate": "8Mbps" },
        ]),
    );
    let (simulated, emulated) = decides_as_simulated(&s);
    for r in [&simulated, &emulated] {
        let rows: Vec<(&str, &str, u32)> = r
            .hosts
            .iter()
            .map(|h| (h.host.as_str(), h.role.as_str(), h.flows))
            .collect();
        assert_eq!(rows, [("a", "sender", 3), ("b", "sender", 1)]);
        for h in &r.hosts {
            assert!(
                (h.share - 0.5).abs() < 0.05,
                "{}: share {}",
                h.host,
                h.share
            );
        }
    }
}

/// DualPI2's queue protection decides emulated as simulated: an ECT(1) Poisson
/// flood above the link's rate beside a light ECT(1) flow, the same packets
/// sanctioned (redirected to the C queue, where they are dropped or sent) and
/// the same drops and marks in both.
#[test]
fn dualpi2s_queue_protection_decides_as_in_simulation() {
    require_emulation!();
    let s = dumbbell(
        "qprot".into(),
        "2s",
        serde_json::json!({ "kind": "dualpi2", "queue_protection": true }),
        serde_json::json!([
            { "name": "flood", "kind": "poisson", "rate": "12Mbps", "ecn": "ect1" },
            { "name": "light", "kind": "poisson", "rate": "1Mbps", "ecn": "ect1",
              "packet_size": 300 },
        ]),
    );
    let (simulated, _) = decides_as_simulated(&s);
    let a = &simulated.links[0];
    assert!(a.drops_total > 0 && a.marks_total > 0, "{a:?}");
}

/// A qdisc tree decides emulated as simulated: an HTB whose classes take a flow
/// group (a filter by group) and EF packets (a filter by DSCP, read from the
/// real packets' TOS byte), the rest by default, each class shaped below the
/// link. The same packets are dropped in both, and each group gets its class's
/// rate.
#[test]
fn an_htb_tree_classifies_by_group_and_dscp_as_in_simulation() {
    require_emulation!();
    let tree = "tc qdisc add dev eth0 root handle 1: htb default 30
tc class add dev eth0 parent 1: classid 1:10 htb rate 1mbit ceil 1mbit
tc class add dev eth0 parent 1: classid 1:20 htb rate 2mbit ceil 2mbit
tc class add dev eth0 parent 1: classid 1:30 htb rate 4mbit ceil 4mbit
tc qdisc add dev eth0 parent 1:10 pfifo limit 20
tc qdisc add dev eth0 parent 1:20 pfifo limit 20
tc qdisc add dev eth0 parent 1:30 fq_codel
tc filter add dev eth0 parent 1: u32 match ip dsfield 0xb8 0xfc flowid 1:10
tc filter add dev eth0 parent 1: group web flowid 1:20";
    let s = dumbbell(
        "tree-htb".into(),
        "3s",
        serde_json::json!({ "tc": tree }),
        serde_json::json!([
            { "name": "voice", "kind": "poisson", "rate": "2Mbps", "dscp": "EF",
              "start_spread": "0s" },
            { "name": "web", "kind": "poisson", "count": 2, "rate": "2Mbps",
              "start_spread": "0s" },
            { "name": "bulk", "kind": "poisson", "count": 2, "rate": "3Mbps",
              "start_spread": "0s" },
        ]),
    );
    let (simulated, emulated) = decides_as_simulated(&s);
    for r in [&simulated, &emulated] {
        for (group, rate) in [("voice", 1e6), ("web", 2e6), ("bulk", 4e6)] {
            let got = r.groups[group].goodput_bps;
            assert!(
                (got / rate - 1.0).abs() < 0.05,
                "{group}: {got} against its class's {rate}"
            );
        }
    }
}

/// CAKE's tins decide emulated as simulated: the tin of each real packet is
/// read from its TOS byte (voice EF, bulk CS1, the rest best effort) under
/// diffserv4 shaped below the link, the same packets dropped in both.
#[test]
fn cakes_diffserv_tins_decide_as_in_simulation() {
    require_emulation!();
    let s = dumbbell(
        "tins-cake".into(),
        "2s",
        serde_json::json!({ "kind": "cake", "diffserv": "diffserv4", "bandwidth": "8Mbit" }),
        serde_json::json!([
            { "name": "voice", "kind": "poisson", "rate": "3Mbps", "dscp": "EF" },
            { "name": "bulk", "kind": "poisson", "count": 2, "rate": "3Mbps", "dscp": "CS1" },
            { "name": "web", "kind": "poisson", "count": 2, "rate": "2Mbps" },
        ]),
    );
    let (_, emulated) = decides_as_simulated(&s);
    // The tins differ: bulk (CS1) is held to its threshold share while best
    // effort is backlogged, so it loses more of what it offers than voice.
    let loss = |g: &str| {
        let (d, s): (u64, u64) = emulated
            .flows
            .iter()
            .filter(|f| f.group == g)
            .fold((0, 0), |(d, s), f| (d + f.drops_total, s + f.sent));
        d as f64 / s.max(1) as f64
    };
    assert!(
        loss("bulk") > loss("voice"),
        "bulk {} voice {}",
        loss("bulk"),
        loss("voice")
    );
}
