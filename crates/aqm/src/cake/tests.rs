//! CAKE's defining properties: flows share bytes equally and a sparse flow goes
//! first (DRR++), hosts share before their flows do (dual and triple isolation),
//! the shaper sends at its rate, overflow takes from the fattest queue and wakes
//! BLUE, and the parameters are checked by name.

use super::*;
use crate::packet::Ecn;
use crate::qdisc::FlowClass;
use crate::testing::{rejection, Harness};

/// A link of `rate` draining CAKE while `flows` (id, packet size) are kept with
/// `keep` packets each queued; returns the bytes each delivered in `secs`
/// seconds after one second of warm-up, and the harness.
fn run(
    mut h: Harness<Cake>,
    flows: &[(u32, u32)],
    rate: Rate,
    secs: u64,
    keep: u32,
) -> (Vec<u64>, Harness<Cake>) {
    let index = |f: FlowId| flows.iter().position(|&(id, _)| id == f.0).unwrap();
    let mut queued = vec![0u32; flows.len()];
    let mut sent = vec![0u64; flows.len()];
    let mut seen_drops = 0;
    let warm = Time::from_secs(1);
    let end = Time::from_secs(1 + secs);
    let mut seq = 0;
    while h.now < end {
        for (i, &(f, size)) in flows.iter().enumerate() {
            while queued[i] < keep {
                let mut p = Packet::new(FlowId(f), size);
                p.ecn = Ecn::Ect;
                p.tag = seq;
                seq += 1;
                h.offer_pkt(p);
                queued[i] += 1;
            }
        }
        match h.dequeue() {
            Some(p) => {
                let i = index(p.flow);
                queued[i] -= 1;
                if h.now >= warm {
                    sent[i] += p.size as u64;
                }
                h.now += rate.tx_time(p.size as u64);
            }
            None => {
                let at = h.q.wake_at().expect("a shaped CAKE with packets says when");
                assert!(at > h.now);
                h.now = at;
            }
        }
        for (p, _) in &h.sink.drops[seen_drops..] {
            queued[index(p.flow)] -= 1;
        }
        seen_drops = h.sink.drops.len();
    }
    (sent, h)
}

fn cake(p: CakeParams) -> Harness<Cake> {
    Harness::build(p)
}

#[track_caller]
fn assert_near(got: f64, want: f64, tol: f64, what: &str) {
    assert!(
        (got - want).abs() <= tol * want,
        "{what}: {got:.0} vs {want:.0} (±{:.0}%)",
        tol * 100.0
    );
}

#[test]
fn backlogged_flows_share_bytes_equally_whatever_their_packet_sizes() {
    let flows = [(1, 1500), (2, 500), (3, 100)];
    let (sent, h) = run(
        cake(CakeParams::default()),
        &flows,
        Rate::from_mbps(10),
        2,
        20,
    );
    let total: u64 = sent.iter().sum();
    for s in &sent {
        assert_near(*s as f64, total as f64 / 3.0, 0.03, "a flow's bytes");
    }
    assert_eq!(
        h.sink.drops.len(),
        0,
        "marks, not drops: the packets are ECT"
    );
    assert!(
        !h.sink.marks.is_empty(),
        "COBALT marked the standing queues"
    );
}

#[test]
fn a_sparse_flow_is_served_before_the_bulk_ones() {
    let mut h = cake(CakeParams::default());
    for seq in 0..200 {
        h.offer(1, seq);
        h.offer(2, 1000 + seq);
    }
    for _ in 0..50 {
        h.dequeue().unwrap();
        h.advance(Dur::from_micros(800));
    }
    assert_eq!(h.q.qdisc().flow_counts().1, 2, "two bulk flows");
    h.offer(3, 5000);
    let next = h.dequeue().unwrap();
    assert_eq!(
        (next.flow, next.tag),
        (FlowId(3), 5000),
        "the new flow goes first"
    );
}

/// Host A sends `n` flows, host B one; the bytes each host gets.
fn two_hosts(isolation: Isolation, n: u32, by_destination: bool) -> (u64, u64) {
    let mut h = cake(CakeParams {
        isolation,
        ..Default::default()
    });
    let q = h.q.qdisc_mut();
    for f in 0..=n {
        let host = if f < n { 7 } else { 9 };
        if by_destination {
            q.set_hosts(FlowId(f), 100 + f, host);
        } else {
            q.set_hosts(FlowId(f), host, 100 + f);
        }
    }
    let flows: Vec<(u32, u32)> = (0..=n).map(|f| (f, 1000)).collect();
    let (sent, _) = run(h, &flows, Rate::from_mbps(20), 2, 4);
    let a: u64 = sent[..n as usize].iter().sum();
    (a, sent[n as usize])
}

#[test]
fn host_isolation_shares_between_hosts_first_then_between_their_flows() {
    // dual-srchost: a host with 30 flows gets what a host with one gets.
    let (a, b) = two_hosts(Isolation::DualSrchost, 30, false);
    assert_near(
        a as f64,
        b as f64,
        0.05,
        "dual-srchost: 30-flow host vs 1-flow host",
    );
    // triple-isolate does the same by source ...
    let (a, b) = two_hosts(Isolation::TripleIsolate, 30, false);
    assert_near(a as f64, b as f64, 0.05, "triple-isolate by source");
    // ... and by destination; dual-dsthost by destination only.
    let (a, b) = two_hosts(Isolation::TripleIsolate, 30, true);
    assert_near(a as f64, b as f64, 0.05, "triple-isolate by destination");
    let (a, b) = two_hosts(Isolation::DualDsthost, 30, true);
    assert_near(a as f64, b as f64, 0.05, "dual-dsthost");
    let (a, b) = two_hosts(Isolation::DualSrchost, 30, true);
    assert_near(
        a as f64,
        30.0 * b as f64,
        0.05,
        "dual-srchost ignores destinations",
    );
    // Per-flow isolation: the 30-flow host gets 30 shares of 31.
    let (a, b) = two_hosts(Isolation::Flows, 30, false);
    assert_near(a as f64, 30.0 * b as f64, 0.05, "flows");
}

#[test]
fn the_hosts_the_engine_announces_are_the_ones_isolated() {
    // Flows 0..30 from host 7, flow 30 from host 9, each to a host of its own,
    // announced with the link's flows as the engine announces them.
    let table: Vec<FlowClass> = (0..=30)
        .map(|f| FlowClass {
            src_host: if f < 30 { 7 } else { 9 },
            dst_host: 100 + f,
            ..FlowClass::new(FlowId(f), 0, 1.0)
        })
        .collect();
    let params = CakeParams {
        isolation: Isolation::DualSrchost,
        ..Default::default()
    };
    let h = Harness::build_for(params, &crate::testing::TEST_LINK.with_flows(&table));
    let flows: Vec<(u32, u32)> = (0..=30).map(|f| (f, 1000)).collect();
    let (sent, _) = run(h, &flows, Rate::from_mbps(20), 2, 4);
    let many: u64 = sent[..30].iter().sum();
    assert_near(many as f64, sent[30] as f64, 0.05, "announced hosts");
}

#[test]
fn the_shaper_sends_at_its_bandwidth_on_a_faster_link() {
    for (bw, overhead, framing) in [
        (20, 0, Cells::None),
        (7, 18, Cells::None),
        (3, 8, Cells::Atm),
    ] {
        let p = CakeParams {
            bandwidth: Some(Rate::from_mbps(bw)),
            overhead,
            framing,
            ..Default::default()
        };
        let framing_of = Framing {
            overhead,
            mpu: 0,
            cells: framing,
        };
        let flows = [(1, 1000), (2, 400)];
        let (sent, _) = run(cake(p), &flows, Rate::from_mbps(100), 2, 10);
        // What the shaper charged: the packets' bytes with their framing.
        let charged: f64 = flows
            .iter()
            .zip(&sent)
            .map(|(&(_, size), &b)| (b / size as u64 * framing_of.adjusted_len(size) as u64) as f64)
            .sum();
        let rate = charged * 8.0 / 2.0;
        assert_near(rate, bw as f64 * 1e6, 0.05, "shaped rate (with framing)");
    }
    assert_eq!(
        Framing {
            overhead: 8,
            mpu: 0,
            cells: Cells::Atm
        }
        .adjusted_len(100),
        3 * 53
    );
    assert_eq!(
        Framing {
            overhead: 0,
            mpu: 64,
            cells: Cells::Ptm
        }
        .adjusted_len(40),
        65
    );
}

#[test]
fn ingress_mode_charges_drops_to_the_shaper() {
    // An unresponsive flood (non-ECT, so CoDel drops) through a 5 Mbit/s shaper:
    // in ingress mode what is delivered plus what is dropped at dequeue is the
    // shaped rate; in egress mode the delivered bytes alone are.
    let mut delivered = Vec::new();
    for ingress in [false, true] {
        let mut h = cake(CakeParams {
            bandwidth: Some(Rate::from_mbps(5)),
            memlimit: Some(100_000),
            ingress,
            ..Default::default()
        });
        let mut sent = 0u64;
        let mut seq = 0;
        while h.now < Time::from_secs(3) {
            // 10 Mbit/s offered: 1000 bytes every 800 us.
            h.offer(1, seq);
            seq += 1;
            let until = h.now + Dur::from_micros(800);
            while h.now < until {
                match h.dequeue() {
                    Some(p) => {
                        sent += p.size as u64;
                        h.now += Rate::from_mbps(100).tx_time(p.size as u64);
                    }
                    None => h.now = h.q.wake_at().unwrap_or(until).min(until),
                }
            }
        }
        delivered.push(sent as f64 * 8.0 / 3.0);
    }
    assert_near(delivered[0], 5e6, 0.05, "egress delivers the shaped rate");
    assert!(
        delivered[1] < 0.9 * delivered[0],
        "ingress: drops use the rate too ({delivered:?})"
    );
}

#[test]
fn overflow_drops_from_the_fattest_queue_and_raises_its_blue() {
    let mut h = cake(CakeParams {
        limit: 50,
        ..Default::default()
    });
    for seq in 0..10 {
        h.offer(1, seq);
    }
    for seq in 0..100 {
        h.offer(2, 100 + seq);
        h.advance(Dur::from_millis(1));
    }
    assert_eq!(h.q.len(), 50);
    assert!(h.sink.drops.iter().all(|(p, _)| p.flow == FlowId(2)));
    assert!(h.dropped_seqs(DropReason::PushOut).len() == 60);
    let q = h.q.qdisc_mut().queue_of(FlowId(2));
    let blue = h.q.qdisc().cobalt_vars(q).p_drop();
    assert!(blue > 0.03, "BLUE rose on overflow: {blue}");
    assert_eq!(h.q.qdisc().unresponsive_flows(), 1);
    let q1 = h.q.qdisc_mut().queue_of(FlowId(1));
    assert_eq!(
        h.q.qdisc().cobalt_vars(q1).p_drop,
        0,
        "the thin flow is untouched"
    );
}

#[test]
fn blue_drops_an_unresponsive_flow_and_decays_once_it_stops() {
    // A flood at twice a 2 Mbit/s shaper overflows a small budget; BLUE drops
    // its packets at dequeue (`unresponsive`), and decays after it stops.
    let mut h = cake(CakeParams {
        bandwidth: Some(Rate::from_mbps(2)),
        memlimit: Some(30_000),
        ..Default::default()
    });
    let mut seq = 0;
    let serve = |h: &mut Harness<Cake>, until: Time| {
        while h.now < until {
            match h.dequeue() {
                Some(_) => h.advance(Dur::from_micros(100)),
                None => h.now = h.q.wake_at().unwrap_or(until).min(until),
            }
        }
    };
    while h.now < Time::from_secs(2) {
        h.offer(1, seq);
        seq += 1;
        let until = h.now + Dur::from_micros(2000);
        serve(&mut h, until);
    }
    let blue = h.dropped_seqs(DropReason::Unresponsive).len();
    assert!(blue > 20, "{blue} BLUE drops");
    let q = h.q.qdisc_mut().queue_of(FlowId(1));
    assert!(h.q.qdisc().cobalt_vars(q).p_drop > 0);
    // The flood stops. Another flow keeps the qdisc busy, so the empty queue
    // is looked at (as decaying) and BLUE loses 1/4096 per target (about 9 ms
    // at this rate): from at most 1, all of it within 40 s.
    let until = h.now + Dur::from_secs(40);
    while h.now < until {
        if h.q.len() < 2 {
            h.offer(2, seq);
            seq += 1;
        }
        match h.dequeue() {
            Some(_) => h.advance(Dur::from_micros(100)),
            None => h.now = h.q.wake_at().unwrap_or(h.now + Dur::from_millis(1)),
        }
    }
    assert_eq!(h.q.qdisc().cobalt_vars(q).p_drop, 0, "BLUE decayed");
}

#[test]
fn flows_rarely_share_a_queue_thanks_to_the_ways() {
    let mut h = cake(CakeParams {
        isolation: Isolation::Flows,
        ..Default::default()
    });
    for f in 0..200 {
        h.offer(f, f);
    }
    let (_, misses, collisions) = h.q.qdisc().way_counts();
    assert_eq!((misses, collisions), (200, 0));
    let mut queues: Vec<usize> = (0..200)
        .map(|f| h.q.qdisc_mut().queue_of(FlowId(f)))
        .collect();
    queues.sort_unstable();
    queues.dedup();
    assert_eq!(queues.len(), 200);
    // flowblind: one queue for all.
    let mut h = cake(CakeParams {
        isolation: Isolation::Flowblind,
        ..Default::default()
    });
    let q = h.q.qdisc_mut().queue_of(FlowId(1));
    assert_eq!(h.q.qdisc_mut().queue_of(FlowId(99)), q);
}

#[test]
fn constants_follow_linuxs_cake_set_rate() {
    let h = cake(CakeParams::default());
    let c = h.q.qdisc().cobalt_params();
    assert_eq!(
        (c.target, c.interval, c.mtu_time),
        (5_000_000, 100_000_000, 0)
    );
    assert_eq!(h.q.qdisc().flow_quantum(), 1514);
    // 1 Mbit/s: an MTU takes 12.1 ms, so target = 1.5 of it, interval grows by
    // as much; quantum = 125000 >> 12 = 30, raised to 300.
    let h = cake(CakeParams {
        bandwidth: Some(Rate::from_mbps(1)),
        ..Default::default()
    });
    let c = h.q.qdisc().cobalt_params();
    assert!(
        (12_100_000..12_120_000).contains(&c.mtu_time),
        "{}",
        c.mtu_time
    );
    assert_eq!(c.target, c.mtu_time * 3 / 2);
    assert_eq!(c.interval, 100_000_000 + c.target - 5_000_000);
    assert_eq!(h.q.qdisc().flow_quantum(), 300);
    assert_eq!(
        h.q.qdisc().buffer_limit(),
        4 << 20,
        "4 MiB, under 10240 MTUs"
    );
    // 1 Gbit/s: four 100 ms intervals at 125 MB/s = 50 MB, capped at 10240 MTUs.
    let h = cake(CakeParams {
        bandwidth: Some(Rate::from_mbps(1000)),
        ..Default::default()
    });
    assert_eq!(h.q.qdisc().buffer_limit(), 10240 * 1514);
}

#[test]
fn parameters_are_checked_by_name() {
    let e = rejection(CakeParams {
        overhead: 257,
        ..Default::default()
    });
    assert!(
        e.starts_with("overhead = 257 must be from -64 to 256"),
        "{e}"
    );
    assert!(rejection(CakeParams {
        overhead: -65,
        ..Default::default()
    })
    .starts_with("overhead = -65"));
    assert!(rejection(CakeParams {
        mpu: 300,
        ..Default::default()
    })
    .starts_with("mpu = 300"));
    assert!(rejection(CakeParams {
        rtt: Dur::ZERO,
        ..Default::default()
    })
    .starts_with("rtt = "));
    assert!(rejection(CakeParams {
        target: Dur::from_millis(200),
        ..Default::default()
    })
    .starts_with("target = 200ms must be positive and at most rtt = 100ms"));
    let p: CakeParams = toml::from_str("isolation = \"dual-srchost\"\nframing = \"atm\"").unwrap();
    assert_eq!(
        (p.isolation, p.framing),
        (Isolation::DualSrchost, Cells::Atm)
    );
    assert!(toml::from_str::<CakeParams>("isolation = \"triple\"").is_err());
}
