//! FRED: per-flow minq/maxq accounting, the average share a flow is held to, and
//! per-flow state only while a flow has packets queued.

use super::*;
use crate::testing::Harness;
use crate::time::Dur;
use crate::units::Rate;

const LINK: LinkInfo = LinkInfo::new(Rate::from_mbps(10));

fn fred(params: FredParams) -> Harness<Fred> {
    Harness::new(Fred::new(params, &LINK).unwrap())
}

fn flow_qlen(h: &Harness<Fred>, flow: u32) -> u32 {
    h.q.qdisc().flow(FlowId(flow)).map_or(0, |s| s.qlen)
}

fn dropped_flows(h: &Harness<Fred>, reason: DropReason) -> Vec<u32> {
    h.sink
        .drops
        .iter()
        .filter(|(_, r)| *r == reason)
        .map(|(p, _)| p.flow.0)
        .collect()
}

#[test]
fn a_flow_at_maxq_is_dropped_and_then_held_to_the_average_share() {
    // avg is still ~0 (nothing has left yet): maxq = min_th = 5 packets.
    let mut h = fred(FredParams::default());
    for seq in 0..20 {
        h.offer(1, seq);
    }
    assert_eq!(flow_qlen(&h, 1), 5);
    assert_eq!(
        h.dropped_seqs(DropReason::Unresponsive),
        (5..20).collect::<Vec<_>>()
    );
    assert_eq!(h.q.qdisc().flow(FlowId(1)).unwrap().strike, 15);
    // Another flow is not affected by the first one's strikes.
    for seq in 20..25 {
        h.offer(2, seq);
    }
    assert_eq!(flow_qlen(&h, 2), 5);
    // Once its strikes exceed 1, flow 1 may hold no more than avgcq (>= 1):
    // after two departures it has 3 queued and is still refused.
    h.dequeue();
    h.dequeue();
    assert_eq!(flow_qlen(&h, 1), 3);
    assert_eq!(h.offer(1, 30), Verdict::Dropped);
    // When its last packet leaves its state, strikes included, is forgotten.
    for _ in 0..3 {
        h.dequeue();
    }
    assert_eq!(h.q.qdisc().flow(FlowId(1)), None);
    assert_eq!(h.offer(1, 31), Verdict::Queued);
    assert_eq!(
        h.q.qdisc().flow(FlowId(1)).unwrap(),
        FlowState { qlen: 1, strike: 0 }
    );
}

#[test]
fn close_to_full_every_flow_is_held_to_two_packets() {
    let mut h = fred(FredParams {
        w_q: 0.5,
        min_th: 5.0,
        max_th: 10.0,
        ..Default::default()
    });
    // Build avg above max_th with many flows of two packets each.
    for f in 0..20 {
        h.offer(f, 2 * f);
        h.offer(f, 2 * f + 1);
    }
    for _ in 0..3 {
        h.dequeue();
    }
    assert!(h.q.qdisc().avg() >= 10.0, "avg {}", h.q.qdisc().avg());
    // Drop-tail mode for everyone while avg >= max_th; a flow already at two
    // packets is also refused as non-adaptive (maxq = 2).
    assert_eq!(h.offer(19, 100), Verdict::Dropped);
    assert_eq!(h.dropped_seqs(DropReason::Unresponsive), vec![100]);
    assert_eq!(h.offer(50, 101), Verdict::Dropped);
    assert_eq!(h.dropped_seqs(DropReason::Forced), vec![101]);
}

#[test]
fn a_flow_under_minq_is_never_dropped_early() {
    // Four robust flows offer one packet per round each and fill their share
    // (maxq = 5); a fragile flow sends one packet every 10 rounds and never
    // holds more than one. Three packets leave per round. avg sits between
    // the thresholds, so random drops happen, all to the robust flows.
    let mut h = fred(FredParams {
        min_th: 5.0,
        max_th: 30.0,
        max_p: 0.5,
        w_q: 0.05,
        ..Default::default()
    });
    let fragile = 9;
    let mut seq = 0;
    for round in 0..20_000 {
        for f in 1..=4 {
            seq += 1;
            h.offer(f, seq);
        }
        if round % 10 == 0 {
            seq += 1;
            h.offer(fragile, seq);
        }
        for _ in 0..3 {
            h.dequeue();
        }
        assert!(flow_qlen(&h, fragile) <= 1);
    }
    let avg = h.q.qdisc().avg();
    assert!((5.0..30.0).contains(&avg), "avg {avg}");
    let early = dropped_flows(&h, DropReason::Early);
    assert!(early.len() > 100, "{} early drops", early.len());
    let all: Vec<u32> = h.sink.drops.iter().map(|(p, _)| p.flow.0).collect();
    assert!(!all.contains(&fragile), "the fragile flow lost a packet");
}

#[test]
fn a_flow_sending_ten_times_its_share_is_held_near_it() {
    // One flow offers 10x its share of a link that sends one packet per tick;
    // three others offer their share. FRED caps the heavy flow's buffer use,
    // and with it its share of the link.
    let mut h = fred(FredParams {
        min_th: 5.0,
        max_th: 15.0,
        w_q: 0.02,
        ..Default::default()
    });
    let mut departed = [0u64; 4];
    let mut seq = 0;
    let ticks = 40_000;
    for t in 0..ticks {
        for _ in 0..(2 + t % 2) {
            seq += 1;
            h.offer(0, seq);
        }
        for f in 1..4u32 {
            if t % 4 == f {
                seq += 1;
                h.offer(f, seq);
            }
        }
        if let Some(p) = h.dequeue() {
            departed[p.flow.0 as usize] += 1;
        }
        h.advance(Dur::from_micros(800));
    }
    let shares: Vec<f64> = departed.iter().map(|&d| d as f64 / ticks as f64).collect();
    // Each light flow gets (almost) all it offers, 1/4 of the link...
    for s in &shares[1..] {
        assert!(*s > 0.24, "shares {shares:?}");
    }
    // ...and the heavy one the rest, not the 77% a FIFO would give it.
    assert!(shares[0] < 0.3, "shares {shares:?}");
    // The light flows' packets are rarely dropped (random drops may hit one
    // holding two packets, at or above avgcq).
    let light_drops = h.sink.drops.iter().filter(|(p, _)| p.flow.0 != 0).count();
    assert!(
        light_drops < 300,
        "{light_drops} of 30000 light packets dropped"
    );
}

#[test]
fn flow_state_exists_only_for_flows_with_packets_queued() {
    let mut h = fred(FredParams::default());
    for f in 0..50 {
        h.offer(f, f);
    }
    assert_eq!(h.q.qdisc().active_flows(), 50);
    // A dropped arrival of a flow with nothing queued leaves no state.
    let mut h2 = fred(FredParams {
        limit: 1,
        ..Default::default()
    });
    h2.offer(1, 0);
    assert_eq!(h2.offer(2, 1), Verdict::Dropped);
    assert_eq!(h2.q.qdisc().flow(FlowId(2)), None);
    assert_eq!(h2.q.qdisc().active_flows(), 1);
    while h.dequeue().is_some() {}
    assert_eq!(h.q.qdisc().active_flows(), 0);
}

#[test]
fn avg_follows_departures_and_decays_while_idle() {
    let mut h = fred(FredParams {
        w_q: 0.1,
        limit: 100,
        min_th: 50.0,
        max_th: 90.0,
        ..Default::default()
    });
    for f in 0..40 {
        h.offer(f, f);
    }
    // Arrivals to a non-empty queue do not move avg; departures do.
    assert_eq!(h.q.qdisc().avg(), 0.0);
    h.dequeue();
    assert!((h.q.qdisc().avg() - 3.9).abs() < 1e-9);
    while h.dequeue().is_some() {}
    let before = h.q.qdisc().avg();
    // 1 s idle at 10 Mbps = 2500 mean-sized packets: decayed to ~0.
    h.advance(Dur::from_secs(1));
    h.offer(1, 100);
    assert!(h.q.qdisc().avg() < before * 1e-6);
    // avgcq = avg / Nactive, held at 1 or more.
    assert_eq!(h.q.qdisc().avgcq(), 1.0);
}

#[test]
fn arrivals_dropped_at_an_empty_queue_do_not_freeze_the_average() {
    // Drive avg far above max_th, drain the queue, then offer one packet every
    // 10 ms, each followed by the dequeue a link makes when it is idle. The
    // first arrivals find avg high and are dropped with the queue still empty;
    // the idle time after each must still count, or avg never falls again and
    // every later arrival is dropped too (what a closed-loop run showed).
    let mut h = fred(FredParams {
        w_q: 0.02,
        min_th: 5.0,
        max_th: 10.0,
        limit: 100,
        ..Default::default()
    });
    for f in 0..40 {
        h.offer(f, f);
    }
    for k in 0..300 {
        h.dequeue();
        h.offer(40 + k % 60, 1000 + k);
    }
    while h.dequeue().is_some() {}
    assert!(h.q.qdisc().avg() >= 10.0, "avg {}", h.q.qdisc().avg());
    let mut admitted = 0;
    for k in 0..200 {
        h.advance(Dur::from_millis(10));
        if h.offer(1000, 100 + k) == Verdict::Queued {
            admitted += 1;
        }
        while h.dequeue().is_some() {}
    }
    assert!(admitted > 150, "only {admitted} of 200 admitted");
}

#[test]
fn bad_parameters_are_rejected_by_name() {
    let err = |p: FredParams| Fred::new(p, &LINK).unwrap_err().to_string();
    assert_eq!(
        err(FredParams {
            min_th: 20.0,
            ..Default::default()
        }),
        "min_th = 20 must be below max_th = 15"
    );
    assert_eq!(
        err(FredParams {
            min_th: 0.5,
            ..Default::default()
        }),
        "min_th = 0.5 must be at least 1"
    );
    assert_eq!(
        err(FredParams {
            w_q: f64::NAN,
            ..Default::default()
        }),
        "w_q = NaN must be in (0, 1]"
    );
    assert_eq!(
        err(FredParams {
            max_p: 0.0,
            ..Default::default()
        }),
        "max_p = 0 must be in (0, 1]"
    );
}
