//! FQ's defining properties: byte fairness by deficit round robin, the new
//! list's priority, `flow_limit` and `limit` drops, and pacing at `maxrate`.

use super::*;
use crate::packet::FlowId;
use crate::testing::{rejection, Harness};

/// Drains FQ at `rate` while `flows` (id, size) keep `keep` packets queued;
/// bytes each delivered in `secs` seconds after half a second of warm-up.
fn run(mut h: Harness<Fq>, flows: &[(u32, u32)], rate: Rate, secs: u64, keep: u32) -> Vec<u64> {
    let index = |f: FlowId| flows.iter().position(|&(id, _)| id == f.0).unwrap();
    let mut queued = vec![0u32; flows.len()];
    let mut sent = vec![0u64; flows.len()];
    let warm = Time::from_nanos(500_000_000);
    let end = warm + Dur::from_secs(secs);
    let mut seq = 0;
    while h.now < end {
        for (i, &(f, size)) in flows.iter().enumerate() {
            while queued[i] < keep {
                let mut p = Packet::new(FlowId(f), size);
                p.tag = seq;
                seq += 1;
                assert_eq!(h.offer_pkt(p), Verdict::Queued);
                queued[i] += 1;
            }
        }
        match h.dequeue() {
            Some(p) => {
                queued[index(p.flow)] -= 1;
                if h.now >= warm {
                    sent[index(p.flow)] += p.size as u64;
                }
                h.now += rate.tx_time(p.size as u64);
            }
            None => {
                let at = h.q.wake_at().expect("a paced FQ with packets says when");
                assert!(at > h.now);
                h.now = at;
            }
        }
    }
    sent
}

#[test]
fn backlogged_flows_share_bytes_equally_by_round_robin() {
    let flows = [(1, 1500), (2, 600), (3, 64)];
    let sent = run(
        Harness::build(FqParams::default()),
        &flows,
        Rate::from_mbps(10),
        2,
        30,
    );
    let total: u64 = sent.iter().sum();
    for s in &sent {
        let share = *s as f64 / total as f64;
        assert!((share - 1.0 / 3.0).abs() < 0.01, "{sent:?}");
    }
}

#[test]
fn a_new_flow_goes_first_with_its_initial_quantum() {
    let mut h = Harness::build(FqParams::default());
    for seq in 0..60 {
        h.offer(1, seq);
    }
    for _ in 0..30 {
        assert_eq!(h.dequeue().unwrap().flow, FlowId(1));
    }
    // Flow 2's first packets all go before flow 1's next: 15140 bytes of
    // credit, 16 packets of 1000 bytes (the last one overdraws).
    for seq in 0..20 {
        h.offer(2, 100 + seq);
    }
    let next: Vec<u32> = (0..17).map(|_| h.dequeue().unwrap().flow.0).collect();
    assert_eq!(next[..16], [2; 16], "{next:?}");
    assert_eq!(next[16], 1, "credit spent: behind flow 1 on the old list");
}

#[test]
fn flow_limit_drops_only_the_flow_over_it() {
    let mut h = Harness::build(FqParams {
        flow_limit: 10,
        limit: 25,
        ..Default::default()
    });
    for seq in 0..30 {
        h.offer(1, seq);
    }
    assert_eq!(h.q.len(), 10);
    assert_eq!(
        h.dropped_seqs(DropReason::Overflow),
        (10..30).collect::<Vec<_>>()
    );
    assert_eq!(h.q.qdisc().flow_limit_drops(), 20);
    for seq in 0..10 {
        assert_eq!(h.offer(2, 100 + seq), Verdict::Queued);
    }
    // The qdisc's limit: 25 in all.
    for seq in 0..10 {
        h.offer(3, 200 + seq);
    }
    assert_eq!(h.q.len(), 25);
    assert_eq!(
        h.q.qdisc().flow_limit_drops(),
        20,
        "limit drops are not flow_limit's"
    );
}

#[test]
fn maxrate_paces_each_flow_within_five_percent() {
    for (mbit, size) in [(5, 1000), (2, 1500), (20, 300)] {
        let p = FqParams {
            maxrate: Some(Rate::from_mbps(mbit)),
            ..Default::default()
        };
        let flows = [(1, size), (2, size)];
        let sent = run(Harness::build(p), &flows, Rate::from_mbps(100), 2, 10);
        for s in sent {
            let rate = s as f64 * 8.0 / 2.0;
            let want = mbit as f64 * 1e6;
            assert!((rate - want).abs() < 0.05 * want, "{rate} vs {want}");
        }
    }
    // Below low_rate_threshold every packet waits its own time.
    let mut h = Harness::build(FqParams {
        maxrate: Some(Rate::from_kbps(400)),
        ..Default::default()
    });
    h.offer(1, 0);
    h.offer(1, 1);
    assert!(h.dequeue().is_some());
    assert!(h.dequeue().is_none());
    assert_eq!(
        h.q.wake_at(),
        Some(Time::from_nanos(20_000_000)),
        "1000 B at 50 kB/s"
    );
    // nopacing: maxrate is ignored.
    let mut h = Harness::build(FqParams {
        maxrate: Some(Rate::from_kbps(400)),
        pacing: false,
        ..Default::default()
    });
    h.offer(1, 0);
    h.offer(1, 1);
    assert!(h.dequeue().is_some() && h.dequeue().is_some());
}

#[test]
fn parameters_are_checked_by_name() {
    assert!(rejection(FqParams {
        flow_limit: 0,
        ..Default::default()
    })
    .starts_with("flow_limit = 0"));
    assert!(rejection(FqParams {
        quantum: 0,
        ..Default::default()
    })
    .starts_with("quantum = 0"));
    assert!(rejection(FqParams {
        maxrate: Some(Rate::from_bps(1)),
        ..Default::default()
    })
    .starts_with("maxrate = 1"));
}
