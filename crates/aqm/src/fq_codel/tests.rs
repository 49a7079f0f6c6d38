//! FQ-CoDel against ns-3's FqCoDelQueueDisc test suite and RFC 8290: flow
//! separation, the deficit scheduler, ECN, new flows first, byte fairness, the
//! fattest-queue overflow drop and the seeded flow-to-queue map.

use super::*;

fn fq_codel(params: FqCodelParams) -> Result<FqCodel, ParamError> {
    FqCodel::new(params, &LinkInfo::new(crate::units::Rate::from_mbps(10)))
}
use crate::packet::Ecn;
use crate::qdisc::VecSink;
use crate::testing::{self, Harness};
use crate::time::Time;

fn fq(params: FqCodelParams) -> Harness<FqCodel> {
    Harness::new(fq_codel(params).unwrap())
}

/// `n` flows (from 1 up) that hash into `n` distinct queues.
fn distinct_flows(q: &FqCodel, n: usize) -> Vec<u32> {
    let mut seen = Vec::new();
    let mut flows = Vec::new();
    for f in 1.. {
        let b = q.bucket_of(FlowId(f));
        if !seen.contains(&b) {
            seen.push(b);
            flows.push(f);
            if flows.len() == n {
                break;
            }
        }
    }
    flows
}

#[track_caller]
fn offer_sized(h: &mut Harness<FqCodel>, flow: u32, size: u32, ect: bool) -> Verdict {
    let mut p = Packet::new(FlowId(flow), size);
    p.tag = h.q.counts().received as u32;
    if ect {
        p.ecn = Ecn::Ect;
    }
    h.offer_pkt(p)
}

fn qlen(h: &Harness<FqCodel>, flow: u32) -> usize {
    let q = h.q.qdisc();
    q.queue_len(q.bucket_of(FlowId(flow)))
}

/// ns-3's test packets: 100 bytes of payload behind a 20-byte IPv4 header.
const NS3_PKT: u32 = 120;

/// ns-3 `FqCoDelQueueDiscIPFlowsSeparationAndPacketLimit`: two IP flows, a
/// 4-packet limit; the fifth packet makes the fattest queue lose half its
/// bytes from its head.
#[test]
fn ns3_fq_codel_queue_disc_ip_flows_separation_and_packet_limit() {
    let mut h = fq(FqCodelParams {
        limit: 4,
        quantum: 1500,
        ..Default::default()
    });
    let f = distinct_flows(h.q.qdisc(), 2);
    for _ in 0..3 {
        offer_sized(&mut h, f[0], NS3_PKT, false);
    }
    assert_eq!((h.q.len(), qlen(&h, f[0])), (3, 3));
    offer_sized(&mut h, f[1], NS3_PKT, false);
    assert_eq!((h.q.len(), qlen(&h, f[0]), qlen(&h, f[1])), (4, 3, 1));
    assert_eq!(offer_sized(&mut h, f[1], NS3_PKT, false), Verdict::Queued);
    assert_eq!((h.q.len(), qlen(&h, f[0]), qlen(&h, f[1])), (3, 1, 2));
    // The two oldest packets of the fat flow, as push-outs.
    assert_eq!(h.dropped_seqs(DropReason::PushOut), vec![0, 1]);
}

/// ns-3 `FqCoDelQueueDiscDeficit`: quantum 90 and 120-byte packets, the credit
/// and list of each queue after every step.
#[test]
fn ns3_fq_codel_queue_disc_deficit() {
    use FlowList::*;
    let mut h = fq(FqCodelParams {
        quantum: 90,
        ..Default::default()
    });
    let f = distinct_flows(h.q.qdisc(), 2);
    let (b1, b2) = (
        h.q.qdisc().bucket_of(FlowId(f[0])),
        h.q.qdisc().bucket_of(FlowId(f[1])),
    );
    let state = |h: &Harness<FqCodel>| {
        let q = h.q.qdisc();
        (
            (q.queue_len(b1), q.deficit(b1), q.list_of(b1)),
            (q.queue_len(b2), q.deficit(b2), q.list_of(b2)),
        )
    };
    offer_sized(&mut h, f[0], NS3_PKT, false);
    assert_eq!(state(&h).0, (1, 90, New));
    h.dequeue().unwrap();
    assert_eq!(state(&h).0, (0, -30, New));
    offer_sized(&mut h, f[0], NS3_PKT, false);
    offer_sized(&mut h, f[0], NS3_PKT, false);
    assert_eq!(state(&h).0, (2, -30, New));
    offer_sized(&mut h, f[1], NS3_PKT, false);
    offer_sized(&mut h, f[1], NS3_PKT, false);
    assert_eq!(state(&h), ((2, -30, New), (2, 90, New)));
    h.dequeue().unwrap();
    assert_eq!(state(&h), ((2, 60, Old), (1, -30, New)));
    h.dequeue().unwrap();
    assert_eq!(state(&h), ((1, -60, Old), (1, 60, Old)));
    h.dequeue().unwrap();
    assert_eq!(state(&h), ((1, 30, Old), (0, -60, Old)));
    h.dequeue().unwrap();
    assert_eq!(state(&h), ((0, -90, Old), (0, 30, Old)));
    assert!(h.dequeue().is_none());
    assert_eq!(state(&h), ((0, 90, Inactive), (0, 30, Inactive)));
}

/// ns-3 `FqCoDelQueueDiscTCPFlowsSeparation` and `...UDPFlowsSeparation`: four
/// 5-tuples (ports 7->27, 8->27, 8->28, 7->28) go to four queues. A flow id
/// stands for a 5-tuple in aqmlab.
#[test]
fn ns3_fq_codel_queue_disc_tcp_and_udp_flows_separation() {
    let mut h = fq(FqCodelParams {
        limit: 10,
        quantum: 1500,
        ..Default::default()
    });
    let f = distinct_flows(h.q.qdisc(), 4);
    for _ in 0..3 {
        offer_sized(&mut h, f[0], NS3_PKT, false);
    }
    assert_eq!((h.q.len(), qlen(&h, f[0])), (3, 3));
    offer_sized(&mut h, f[1], NS3_PKT, false);
    assert_eq!((h.q.len(), qlen(&h, f[1])), (4, 1));
    offer_sized(&mut h, f[2], NS3_PKT, false);
    assert_eq!((h.q.len(), qlen(&h, f[2])), (5, 1));
    offer_sized(&mut h, f[3], NS3_PKT, false);
    offer_sized(&mut h, f[3], NS3_PKT, false);
    let lens: Vec<usize> = f.iter().map(|&x| qlen(&h, x)).collect();
    assert_eq!((h.q.len(), lens), (7, vec![3, 1, 1, 2]));
}

/// The ECN-marking scenario of ns-3: five flows of 20 packets at t = 0, three
/// ECT(0) and two Not-ECT, then 60 dequeues `every` apart. Returns, per flow,
/// (queued, sojourn drops, marks).
fn ns3_ecn_scenario(params: FqCodelParams, every: Dur) -> Vec<(usize, u64, u64)> {
    let mut h = fq(params);
    let f = distinct_flows(h.q.qdisc(), 5);
    for (k, &flow) in f.iter().enumerate() {
        for _ in 0..20 {
            offer_sized(&mut h, flow, NS3_PKT, k < 3);
        }
        assert_eq!(h.q.len(), 20 * (k + 1));
    }
    for _ in 0..60 {
        h.advance(every);
        h.dequeue();
    }
    // Every queue still holds packets, and the ECT queues' next one is ECT.
    for (k, &flow) in f.iter().enumerate() {
        let q = h.q.qdisc();
        let b = q.bucket_of(FlowId(flow));
        assert!(q.queue_len(b) > 0, "flow {k} drained");
        if k < 3 {
            assert!(q.flows[b].queue.front().unwrap().ecn.is_capable());
        }
    }
    f.iter()
        .map(|&flow| {
            let count = |v: &Vec<(Packet, DropReason)>| {
                v.iter()
                    .filter(|(p, r)| p.flow.0 == flow && *r == DropReason::Sojourn)
                    .count() as u64
            };
            (qlen(&h, flow), count(&h.sink.drops), count(&h.sink.marks))
        })
        .collect()
}

/// ns-3's CoDel queues do not drop while *their own* backlog is below
/// `MinBytes` = 1500 bytes.
fn ns3_ecn_params() -> FqCodelParams {
    FqCodelParams {
        quantum: 1514,
        per_flow_mtu: true,
        mtu: 1499,
        ..Default::default()
    }
}

/// ns-3 `FqCoDelQueueDiscECNMarking`, its three sub-cases.
#[test]
fn ns3_fq_codel_queue_disc_ecn_marking() {
    let every = Dur::from_millis(110);
    // 1) No ce_threshold: 6 control-law marks in each ECT queue, 4 drops in
    //    each Not-ECT one.
    let r = ns3_ecn_scenario(ns3_ecn_params(), every);
    for (k, &(_, drops, marks)) in r.iter().enumerate() {
        let want = if k < 3 { (0, 6) } else { (4, 0) };
        assert_eq!((drops, marks), want, "flow {k}: {r:?}");
    }

    // 2) ce_threshold 2 ms, dequeues 0.1 ms apart: the first queue leaves
    //    before 2 ms, the second is marked from 2.1 ms on (6 packets), the
    //    third throughout (13); no control-law activity yet.
    let r = ns3_ecn_scenario(
        FqCodelParams {
            ce_threshold: Some(Dur::from_millis(2)),
            ..ns3_ecn_params()
        },
        Dur::from_micros(100),
    );
    let marks: Vec<u64> = r.iter().map(|x| x.2).collect();
    assert_eq!(marks, vec![0, 6, 13, 0, 0], "{r:?}");
    assert!(r.iter().all(|x| x.1 == 0), "{r:?}");

    // 3) ce_threshold 2 ms, 110 ms apart: every packet sent from an ECT queue
    //    is marked, for one reason or the other; the Not-ECT ones lose 4.
    let r = ns3_ecn_scenario(
        FqCodelParams {
            ce_threshold: Some(Dur::from_millis(2)),
            ..ns3_ecn_params()
        },
        every,
    );
    for (k, &(queued, drops, marks)) in r.iter().enumerate() {
        if k < 3 {
            assert_eq!((drops, marks), (0, 20 - queued as u64), "flow {k}: {r:?}");
        } else {
            assert_eq!((drops, marks), (4, 0), "flow {k}: {r:?}");
        }
    }
}

#[test]
fn linux_mtu_rule_looks_at_the_whole_qdisc() {
    // The scenario of ns-3's first ECN case under Linux's rule: the Not-ECT
    // queues keep being dropped from while other queues hold packets, so they
    // lose more than the 4 of ns-3's per-queue rule.
    let r = ns3_ecn_scenario_linux();
    assert!(r[3].1 > 4 && r[4].1 > 4, "{r:?}");
}

fn ns3_ecn_scenario_linux() -> Vec<(u64, u64)> {
    let mut h = fq(FqCodelParams::default());
    let f = distinct_flows(h.q.qdisc(), 5);
    for (k, &flow) in f.iter().enumerate() {
        for _ in 0..20 {
            offer_sized(&mut h, flow, NS3_PKT, k < 3);
        }
    }
    for _ in 0..60 {
        h.advance(Dur::from_millis(110));
        h.dequeue();
    }
    f.iter()
        .map(|&flow| {
            let drops = h
                .sink
                .drops
                .iter()
                .filter(|(p, _)| p.flow.0 == flow)
                .count() as u64;
            (qlen(&h, flow) as u64, drops)
        })
        .collect()
}

/// ns-3 `FqCoDelQueueDiscSetLinearProbing`: flow hashes 0..7 (1 and 4 twice),
/// then 1024 and 1025 (all in the first set of 8), then 10 (the second set).
#[test]
fn ns3_fq_codel_queue_disc_set_linear_probing() {
    let mut q = fq_codel(FqCodelParams {
        set_associative_hash: true,
        quantum: 90,
        ..Default::default()
    })
    .unwrap();
    let (mut rng, mut sink) = (rng::stream(1, 0), VecSink::default());
    let mut ctx = Ctx::new(Time::ZERO, &mut rng, &mut sink);
    let mut offer = |q: &mut FqCodel, hash: u32| {
        q.enqueue_hashed(Packet::new(FlowId(0), NS3_PKT), hash, &mut ctx);
    };
    for hash in [0, 1, 1, 2, 3, 4, 4, 5, 6, 7, 1024] {
        offer(&mut q, hash);
    }
    assert_eq!(q.len(), 11);
    let lens: Vec<usize> = (0..8).map(|i| q.queue_len(i)).collect();
    assert_eq!(lens, vec![2, 2, 1, 1, 2, 1, 1, 1]);
    offer(&mut q, 1025);
    assert_eq!(q.queue_len(0), 3);
    offer(&mut q, 10);
    assert_eq!(q.queue_len(8), 1);
}

#[test]
fn a_sparse_flow_sees_no_queue_behind_a_bulk_flow() {
    // The link sends one packet per millisecond. A bulk flow keeps 100 packets
    // queued; a sparse flow sends one packet every 50 ms. Each sparse packet
    // leaves at the next departure (its queue is new: served first).
    let mut h = fq(FqCodelParams {
        ecn: false,
        ..Default::default()
    });
    let f = distinct_flows(h.q.qdisc(), 2);
    let (bulk, sparse) = (f[0], f[1]);
    let mut waits = Vec::new();
    for t in 0..20_000u64 {
        while qlen(&h, bulk) < 100 {
            offer_sized(&mut h, bulk, 1500, false);
        }
        // (From 25 ms on: at t = 0 both queues are new and the bulk one came first.)
        if t % 50 == 25 {
            offer_sized(&mut h, sparse, 200, false);
        }
        let p = h.dequeue().unwrap();
        if p.flow.0 == sparse {
            waits.push(h.now.saturating_since(p.enqueued_at));
        }
        h.advance(Dur::from_millis(1));
    }
    assert_eq!(waits.len(), 400);
    assert!(waits.iter().all(|w| w.is_zero()), "{waits:?}");
    // Meanwhile the bulk flow's packets wait ~100 ms and CoDel drops them.
    assert!(h.drops(DropReason::Sojourn) > 100);
    assert!(h.sink.drops.iter().all(|(p, _)| p.flow.0 == bulk));
}

#[test]
fn backlogged_flows_share_the_link_equally_in_bytes() {
    let mut h = fq(FqCodelParams::default());
    let f = distinct_flows(h.q.qdisc(), 3);
    testing::assert_backlogged_flows_share_bytes(&mut h, &f, |q, flow| {
        q.queue_len(q.bucket_of(FlowId(flow)))
    });
}

#[test]
fn overflow_drops_a_batch_from_the_head_of_the_fattest_queue() {
    let mut h = fq(FqCodelParams {
        limit: 100,
        drop_batch_size: 8,
        ..Default::default()
    });
    let f = distinct_flows(h.q.qdisc(), 3);
    // Fat: 40 packets of 1000 B (tags 0..40); medium: 50 of 500 B (more
    // packets, fewer bytes); thin: 10 of 100 B. 100 packets: full.
    for _ in 0..40 {
        offer_sized(&mut h, f[0], 1000, false);
    }
    for _ in 0..50 {
        offer_sized(&mut h, f[1], 500, false);
    }
    for _ in 0..10 {
        offer_sized(&mut h, f[2], 100, false);
    }
    assert_eq!(h.drops(DropReason::PushOut), 0);
    // The thin flow's arrival is queued; the fat flow loses its 8 oldest
    // packets (the batch limit comes before half of its 40 KB).
    assert_eq!(offer_sized(&mut h, f[2], 100, false), Verdict::Queued);
    assert_eq!(
        h.dropped_seqs(DropReason::PushOut),
        (0..8).collect::<Vec<_>>()
    );
    assert_eq!(
        (qlen(&h, f[0]), qlen(&h, f[1]), qlen(&h, f[2])),
        (32, 50, 11)
    );
    // CoDel of the fat queue is told: its count grew by the batch.
    let q = h.q.qdisc();
    assert_eq!(q.codel_vars(q.bucket_of(FlowId(f[0]))).count, 8);
    assert_eq!(q.overflow_drops(), (8, 0));

    // Half the bytes when that comes first: one queue and a limit of 6. The
    // seventh 1000-byte arrival makes it drop from the head until 3.5 KB of
    // its 7 KB are gone: 4 packets.
    let mut h = fq(FqCodelParams {
        limit: 6,
        ..Default::default()
    });
    for _ in 0..7 {
        offer_sized(&mut h, 1, 1000, false);
    }
    assert_eq!(h.dropped_seqs(DropReason::PushOut), vec![0, 1, 2, 3]);
    assert_eq!(h.q.len(), 3);
}

#[test]
fn an_arrival_that_is_its_fattest_queue_alone_is_dropped() {
    // Every queue holds one packet and the limit is reached: an arrival to a
    // fresh queue is the fattest (largest packet) and goes itself.
    let mut h = fq(FqCodelParams {
        limit: 3,
        ..Default::default()
    });
    let f = distinct_flows(h.q.qdisc(), 4);
    for &x in &f[..3] {
        offer_sized(&mut h, x, 100, false);
    }
    assert_eq!(offer_sized(&mut h, f[3], 1500, false), Verdict::Dropped);
    assert_eq!(h.dropped_seqs(DropReason::Overflow), vec![3]);
    assert_eq!(h.q.len(), 3);
}

#[test]
fn the_memory_limit_bounds_bytes() {
    let mut h = fq(FqCodelParams {
        memory_limit: 10_000,
        ..Default::default()
    });
    for _ in 0..20 {
        offer_sized(&mut h, 1, 1000, false);
    }
    assert!(h.q.bytes() <= 10_000);
    let (over_limit, over_memory) = h.q.qdisc().overflow_drops();
    assert!(over_memory > 0 && over_memory == over_limit);
}

#[test]
fn codel_runs_in_each_queue_on_its_own() {
    // A flow with a standing queue gets CoDel drops; a flow that never queues
    // more than a packet or two gets none, though both share the link.
    let mut h = fq(FqCodelParams {
        ecn: false,
        ..Default::default()
    });
    let f = distinct_flows(h.q.qdisc(), 2);
    for t in 0..10_000u64 {
        offer_sized(&mut h, f[0], 1000, false);
        offer_sized(&mut h, f[0], 1000, false);
        if t % 4 == 0 {
            offer_sized(&mut h, f[1], 1000, false);
        }
        h.dequeue();
        h.advance(Dur::from_millis(1));
    }
    let drops: Vec<u32> = h.sink.drops.iter().map(|(p, _)| p.flow.0).collect();
    assert!(drops.len() > 100, "{} drops", drops.len());
    assert!(drops.iter().all(|&x| x == f[0]));
}

#[test]
fn the_flow_to_queue_map_is_a_function_of_the_seed() {
    let map = |seed| {
        let q = fq_codel(FqCodelParams {
            hash_seed: Some(seed),
            ..Default::default()
        })
        .unwrap();
        (0..256).map(|x| q.bucket_of(FlowId(x))).collect::<Vec<_>>()
    };
    assert_eq!(map(7), map(7));
    let (a, b) = (map(7), map(8));
    let moved = a.iter().zip(&b).filter(|(x, y)| x != y).count();
    assert!(moved > 240, "{moved}");
    // The default (no seed) is seed 0.
    let q = fq_codel(FqCodelParams::default()).unwrap();
    assert_eq!(
        (0..256).map(|x| q.bucket_of(FlowId(x))).collect::<Vec<_>>(),
        map(0)
    );
}

#[test]
fn bad_parameters_are_rejected_by_name() {
    let err = |p: FqCodelParams| fq_codel(p).unwrap_err().to_string();
    assert_eq!(
        err(FqCodelParams {
            flows: 0,
            ..Default::default()
        }),
        "flows = 0 must be at least 1"
    );
    assert_eq!(
        err(FqCodelParams {
            flows: 1 << 20,
            ..Default::default()
        }),
        "flows = 1048576 must be at most 65536"
    );
    assert_eq!(
        err(FqCodelParams {
            set_associative_hash: true,
            set_ways: 7,
            ..Default::default()
        }),
        "set_ways = 7 must divide flows = 1024"
    );
    assert_eq!(
        err(FqCodelParams {
            drop_batch_size: 0,
            ..Default::default()
        }),
        "drop_batch_size = 0 must be at least 1"
    );
    assert_eq!(
        err(FqCodelParams {
            interval: Dur::from_millis(4),
            ..Default::default()
        }),
        "target = 5ms must not exceed interval = 4ms"
    );
    let p: FqCodelParams = toml::from_str("drop_batch = 32").unwrap();
    assert_eq!(p.drop_batch_size, 32);
}
