//! CHOKe: the match drop of arrival and candidate, back and self-adjusting
//! variants, and the ring that keeps the queue's order through holes.

use super::*;
use crate::testing::{rejection, Harness, TEST_LINK};

/// The average equals the instantaneous queue (w_q = 1) and RED's early drops
/// cannot happen for many arrivals (tiny max_p with `wait`), so only matches drop.
fn scripted(min_th: f64, candidate: Candidate) -> ChokeParams {
    ChokeParams {
        limit: 50,
        min_th,
        max_th: 40.0,
        max_p: 1e-6,
        w_q: 1.0,
        candidate,
        ..Default::default()
    }
}

#[test]
fn a_match_drops_the_arrival_and_the_front_candidate_and_nothing_else() {
    let mut h = Harness::build(scripted(2.0, Candidate::Front));
    h.offer(1, 0); // q = 0: below min_th
    h.offer(2, 1); // q = 1: below
    h.offer(3, 2); // q = 2: compared with the head (flow 1): no match
    assert_eq!(h.offer(1, 3), Verdict::Dropped); // head is flow 1: both go
    assert_eq!(h.dropped_seqs(DropReason::ChokeMatch), vec![0, 3]);
    assert_eq!(h.q.counts().total_drops(), 2);
    assert_eq!(h.drain_seqs(), vec![1, 2]);
}

#[test]
fn back_choke_compares_with_the_most_recently_admitted_packet() {
    let mut h = Harness::build(scripted(2.0, Candidate::Back));
    h.offer(1, 0);
    h.offer(2, 1);
    h.offer(1, 2); // compared with seq 1 (flow 2): admitted
    h.offer(2, 3); // compared with seq 2 (flow 1): admitted
    assert_eq!(h.offer(2, 4), Verdict::Dropped); // tail is seq 3, flow 2
    assert_eq!(h.dropped_seqs(DropReason::ChokeMatch), vec![3, 4]);
    assert_eq!(h.q.counts().total_drops(), 2);
    assert_eq!(h.drain_seqs(), vec![0, 1, 2]);
}

#[test]
fn a_middle_victim_leaves_a_hole_that_len_bytes_and_dequeue_skip() {
    let mut h = Harness::build(ChokeParams {
        candidates: 3,
        ..scripted(3.0, Candidate::Front)
    });
    for (seq, flow) in [1, 2, 3, 4].into_iter().enumerate() {
        h.offer(flow, seq as u32);
    }
    // Compared with the three head packets (flows 1, 2, 3): seq 1 matches.
    assert_eq!(h.offer(2, 9), Verdict::Dropped);
    assert_eq!(h.dropped_seqs(DropReason::ChokeMatch), vec![1, 9]);
    assert_eq!(h.q.qdisc().holes(), 1);
    assert_eq!(h.q.len(), 3);
    assert_eq!(h.q.bytes(), 3 * 1000);
    assert_eq!(h.drain_seqs(), vec![0, 2, 3]);
    assert_eq!(h.q.qdisc().holes(), 0);
}

#[test]
fn with_the_queue_full_of_one_flow_every_arrival_of_it_is_dropped() {
    // A slow average (w_q = 0.01) stays above min_th while the queue, all of
    // flow 1, shrinks: every candidate matches, so every arrival is dropped
    // with exactly one victim, until one packet is left, which ns-2's `qlen > 1`
    // rule (`qlen_gate`) spares from comparisons.
    let mut h = Harness::build(ChokeParams {
        limit: 300,
        min_th: 5.0,
        max_th: 400.0,
        w_q: 0.01,
        ..Default::default()
    });
    let mut seq = 0;
    while h.q.qdisc().avg() < 5.0 {
        h.offer(1, seq);
        seq += 1;
    }
    let mut checked = 0;
    while h.q.qdisc().avg() >= 5.0 && h.q.len() > 1 {
        let before = h.q.len();
        assert_eq!(h.offer(1, seq), Verdict::Dropped, "arrival {seq}");
        assert_eq!(h.q.len(), before - 1);
        seq += 1;
        checked += 1;
    }
    assert!(checked > 20, "only {checked} arrivals checked");
    assert!(h.q.qdisc().avg() >= 5.0);
    assert_eq!(h.offer(1, seq), Verdict::Queued, "one packet queued");
    assert_eq!(h.drops(DropReason::Early), 0);
    assert_eq!(h.drops(DropReason::ChokeMatch) % 2, 0);
}

#[test]
fn self_adjusting_m_grows_with_the_region() {
    // k = 3 regions of [10, 40): m = 2, 4, 6; 6 at and above max_th.
    let ms: Vec<u32> = [10.0, 19.9, 20.0, 29.9, 30.0, 39.9, 40.0, 100.0]
        .iter()
        .map(|&avg| adaptive_candidates(avg, 10.0, 40.0, 3))
        .collect();
    assert_eq!(ms, vec![2, 2, 4, 4, 6, 6, 6, 6]);
    let q = Choke::new(
        ChokeParams {
            min_th: 10.0,
            max_th: 40.0,
            adaptive_candidates: true,
            regions: 3,
            ..Default::default()
        },
        &TEST_LINK,
    )
    .unwrap();
    assert_eq!(q.candidates_at(25.0), 4);
    // Behaviour, with front candidates and w_q = 1 (avg = queue): regions of
    // [3, 9) are [3, 5) m = 2, [5, 7) m = 4, [7, 9) m = 6. Eight distinct flows
    // are queued; an arrival of the sixth one matches only when m reaches 6.
    let run = |adaptive_candidates: bool| {
        let mut h = Harness::build(ChokeParams {
            max_th: 9.0,
            adaptive_candidates,
            regions: 3,
            candidates: 2,
            ..scripted(3.0, Candidate::Front)
        });
        for (seq, flow) in [100, 101, 102, 200, 201, 202, 203, 204]
            .into_iter()
            .enumerate()
        {
            assert_eq!(h.offer(flow, seq as u32), Verdict::Queued);
        }
        h.offer(202, 8)
    };
    assert_eq!(run(true), Verdict::Dropped);
    assert_eq!(run(false), Verdict::Queued);
}

#[test]
fn more_candidates_catch_more_of_a_heavy_flow() {
    // One flow sends half the arrivals; the rest are distinct flows.
    let run = |candidates: u32| {
        let mut h = Harness::build(ChokeParams {
            limit: 100,
            min_th: 10.0,
            max_th: 60.0,
            w_q: 0.02,
            candidates,
            ..Default::default()
        });
        for seq in 0..40_000u32 {
            let flow = if seq % 2 == 0 { 0 } else { seq };
            h.offer(flow, seq);
            if seq % 4 != 0 {
                h.dequeue();
            }
        }
        h.drops(DropReason::ChokeMatch)
    };
    let (one, three) = (run(1), run(3));
    assert!(three > one, "m=1: {one}, m=3: {three}");
}

#[test]
fn the_ring_compacts_and_keeps_order() {
    let mut r = HoleyRing::new();
    for i in 0..8 {
        let mut p = Packet::new(FlowId(i), 100 + i);
        p.tag = i;
        r.push_back(p);
    }
    let h = r.head();
    for k in [2, 3, 5] {
        r.remove_at(h + k);
    }
    assert_eq!((r.len(), r.holes(), r.span()), (5, 3, 8));
    assert_eq!(r.bytes(), (100 + 101 + 104 + 106 + 107) as u64);
    r.remove_at(h + 7); // at the tail: trimmed at once
    assert_eq!((r.len(), r.holes(), r.span()), (4, 3, 7));
    r.compact();
    assert_eq!((r.holes(), r.span()), (0, 4));
    let tags: Vec<u32> = std::iter::from_fn(|| r.pop_front().map(|p| p.tag)).collect();
    assert_eq!(tags, vec![0, 1, 4, 6]);
    assert_eq!(r.bytes(), 0);
}

#[test]
fn the_ring_grows_with_the_backlog_and_keeps_positions() {
    let mut r = HoleyRing::new();
    assert_eq!(r.capacity(), 0);
    for i in 0..40 {
        let mut p = Packet::new(FlowId(i), 100);
        p.tag = i;
        r.push_back(p);
        if i == 5 {
            // A hole made before two growths stays a hole at its position.
            r.remove_at(r.head() + 3);
        }
    }
    assert_eq!((r.len(), r.holes(), r.capacity()), (39, 1, 64));
    let h = r.head();
    assert_eq!(r.at(h + 3), None);
    assert_eq!(r.at(h + 20).map(|p| p.tag), Some(20));
    let tags: Vec<u32> = std::iter::from_fn(|| r.pop_front().map(|p| p.tag)).collect();
    let want: Vec<u32> = (0..40).filter(|&t| t != 3).collect();
    assert_eq!(tags, want);
}

#[test]
fn candidates_beyond_the_queue_and_too_many_regions_are_rejected_by_name() {
    let e = rejection(ChokeParams {
        candidates: u32::MAX,
        ..Default::default()
    });
    assert!(e.starts_with("candidates = 4294967295 must be at most limit = 300"));
    let e = rejection(ChokeParams {
        regions: 5000,
        ..Default::default()
    });
    assert!(e.starts_with("regions = 5000 must be at most 1024"), "{e}");
}

#[test]
fn zero_candidates_is_rejected_by_name() {
    let e = rejection(ChokeParams {
        candidates: 0,
        ..Default::default()
    });
    assert_eq!(e, "candidates = 0 must be at least 1");
}
