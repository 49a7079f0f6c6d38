//! Comparisons between qdiscs, which no qdisc's own file may make (an algorithm
//! file never imports another): each checks a property that defines one qdisc
//! against another run on the same scripted traffic.

use aqm::choke::{Choke, ChokeParams};
use aqm::droptail::{DropTail, DropTailParams};
use aqm::red::{Red, RedParams};
use aqm::sfq::{Sfq, SfqParams};
use aqm::testing::Harness;
use aqm::{DropReason, FlowId, LinkInfo, Qdisc, Rate};

const LINK: LinkInfo = LinkInfo::new(Rate::from_mbps(10));

/// Holds `backlog` packets of distinct flows (one in, one out) for `n` arrivals.
fn hold_distinct_flows<Q: Qdisc>(h: &mut Harness<Q>, backlog: u32, n: u32) {
    for seq in 0..backlog + n {
        h.offer(seq, seq);
        while h.q.len() > backlog as usize {
            h.dequeue();
        }
    }
}

/// CHOKe without matches is RED: with every arrival of a new flow nothing can
/// match, and its early drops are RED's with the same parameters.
#[test]
fn choke_arrivals_that_match_nobody_see_only_reds_early_drops() {
    let (min_th, max_th, w_q) = (10.0, 30.0, 0.02);
    let mut c = Harness::new(
        Choke::new(
            ChokeParams {
                limit: 100,
                min_th,
                max_th,
                w_q,
                wait: false,
                candidates: 4,
                ..Default::default()
            },
            &LINK,
        )
        .unwrap(),
    );
    let mut r = Harness::new(
        Red::new(
            RedParams {
                limit: 100,
                min_th,
                max_th,
                w_q,
                wait: false,
                ..Default::default()
            },
            &LINK,
        )
        .unwrap(),
    );
    hold_distinct_flows(&mut c, 20, 100_000);
    hold_distinct_flows(&mut r, 20, 100_000);
    assert_eq!(c.drops(DropReason::ChokeMatch), 0);
    let (ce, re) = (
        c.drops(DropReason::Early) as f64,
        r.drops(DropReason::Early) as f64,
    );
    assert!(re > 1000.0, "RED dropped only {re}");
    assert!((ce - re).abs() < 0.1 * re, "CHOKe {ce} RED {re}");
}

/// One flow offers 10x its share of a link that sends one packet per tick; three
/// others offer their share. Returns each flow's share of the departures.
fn ten_times_its_share<Q: Qdisc>(mut h: Harness<Q>, flows: &[u32]) -> Vec<f64> {
    let mut departed = vec![0u64; flows.len()];
    let mut seq = 0;
    let ticks = 40_000;
    for t in 0..ticks {
        // The heavy flow: 2.5 packets per tick = 10 x 1/4 of the link.
        for _ in 0..(2 + t % 2) {
            seq += 1;
            h.offer(flows[0], seq);
        }
        // The others: one packet every 4 ticks each, staggered.
        for (i, &f) in flows.iter().enumerate().skip(1) {
            if t % 4 == i as u32 {
                seq += 1;
                h.offer(f, seq);
            }
        }
        if let Some(p) = h.dequeue() {
            departed[flows.iter().position(|&f| f == p.flow.0).unwrap()] += 1;
        }
    }
    departed.iter().map(|&d| d as f64 / ticks as f64).collect()
}

/// SFQ holds a flow sending ten times its share near its share, where a FIFO of
/// the same size gives it most of the link.
#[test]
fn sfq_holds_a_ten_times_flow_to_its_share_where_droptail_does_not() {
    let sfq = Sfq::new(SfqParams::default(), &LINK).unwrap();
    let mut bins = Vec::new();
    let flows: Vec<u32> = (1..)
        .filter(|&f| {
            let b = sfq.bin_of(FlowId(f));
            let fresh = !bins.contains(&b);
            bins.push(b);
            fresh
        })
        .take(4)
        .collect();
    let shares = ten_times_its_share(Harness::new(sfq), &flows);
    assert!(shares[0] < 0.26, "shares {shares:?}");
    for s in &shares[1..] {
        assert!(*s > 0.245, "shares {shares:?}");
    }
    let fifo = DropTail::new(DropTailParams {
        limit: 127,
        ..Default::default()
    })
    .unwrap();
    let shares = ten_times_its_share(Harness::new(fifo), &flows);
    assert!(shares[0] > 0.7, "droptail shares {shares:?}");
}
