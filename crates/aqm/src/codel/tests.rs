//! CoDel as sch_codel: ns-3's test cases, the control law on a backlog, re-entry
//! and the fixed-point spacing of the first drops.

use super::*;
use crate::parts::codel::{control_law, newton_step, REC_INV_SQRT_ONE};
use crate::testing::Harness;
use crate::time::Time;

mod linux;

fn codel(params: CodelParams) -> Harness<Codel> {
    Harness::new(Codel::new(params).unwrap())
}

/// ns-3's `MinBytes = m` ("no drop while fewer than m bytes remain") is
/// Linux's `mtu = m - 1` ("no drop while at most mtu bytes remain").
const fn mtu_for_ns3_min_bytes(m: u32) -> u32 {
    m - 1
}

/// ns-3's default CoDel as the translated cases configure it.
fn ns3_defaults() -> CodelParams {
    CodelParams {
        mtu: mtu_for_ns3_min_bytes(1500),
        ..Default::default()
    }
}

#[track_caller]
fn at(h: &mut Harness<Codel>, ms: u64) -> Option<Packet> {
    h.now = Time::from_nanos(Dur::from_millis(ms).as_nanos());
    h.dequeue()
}

fn offer_n(h: &mut Harness<Codel>, n: u32, ect: bool) {
    for _ in 0..n {
        let seq = h.q.counts().received as u32;
        if ect {
            h.offer_ect(0, seq);
        } else {
            h.offer(0, seq);
        }
    }
}

/// ns-3 `CoDelQueueDiscBasicEnqueueDequeue` (packet and byte modes: every
/// packet is 1000 bytes, so aqmlab's packet limit covers both).
#[test]
fn ns3_codel_queue_disc_basic_enqueue_dequeue() {
    let mut h = codel(CodelParams {
        mtu: mtu_for_ns3_min_bytes(1000),
        interval: Dur::from_millis(50),
        target: Dur::from_millis(4),
        limit: 1500,
        ..Default::default()
    });
    for i in 0..6 {
        assert_eq!(h.q.len(), i as usize);
        h.offer(0, i);
    }
    assert_eq!(h.q.len(), 6);
    assert_eq!(h.drops(DropReason::Overflow), 0);
    for i in 0..6 {
        assert_eq!(h.dequeue().unwrap().tag, i, "FIFO order");
        assert_eq!(h.q.len(), 5 - i as usize);
    }
    assert!(h.dequeue().is_none());
    assert_eq!(h.drops(DropReason::Sojourn), 0);
}

/// ns-3 `CoDelQueueDiscBasicOverflow`: 503 packets into a 500-packet CoDel.
#[test]
fn ns3_codel_queue_disc_basic_overflow() {
    let mut h = codel(CodelParams {
        limit: 500,
        mtu: mtu_for_ns3_min_bytes(1000),
        ..Default::default()
    });
    offer_n(&mut h, 503, false);
    assert_eq!(h.q.len(), 500);
    assert_eq!(h.drops(DropReason::Overflow), 3);
}

/// ns-3 `CoDelQueueDiscBasicDrop`: 20 packets at t = 0, dequeues at 10 ms
/// (above target, not yet for an interval: no drop), 210 ms (enter the dropping
/// state: drop one and send the next), 210 ms again (not time for the next
/// drop) and 420 ms (every drop due by then: as many drops as the control law
/// advanced the next-drop time, plus the packet sent).
#[test]
fn ns3_codel_queue_disc_basic_drop() {
    let mut h = codel(CodelParams {
        limit: 500,
        ..ns3_defaults()
    });
    offer_n(&mut h, 20, false);
    assert_eq!(h.q.len(), 20);

    at(&mut h, 10).unwrap();
    assert_eq!((h.q.len(), h.drops(DropReason::Sojourn)), (19, 0));

    at(&mut h, 210).unwrap();
    assert_eq!((h.q.len(), h.drops(DropReason::Sojourn)), (17, 1));
    assert!(h.q.qdisc().vars().dropping);

    at(&mut h, 210).unwrap();
    assert_eq!((h.q.len(), h.drops(DropReason::Sojourn)), (16, 1));

    let count_before = h.q.qdisc().vars().count;
    at(&mut h, 420).unwrap();
    let advanced = h.q.qdisc().vars().count - count_before;
    assert_eq!(h.drops(DropReason::Sojourn), 1 + advanced as u64);
    assert_eq!(h.q.len(), 16 - (advanced as usize + 1));
    // Linux's arithmetic puts the drops due by 420 ms at 310, 360 and 416.25 ms
    // (spacing 100 ms x 0xffff, 0x8001, 0x9000 / 2^16); the next at 465.03 ms.
    assert_eq!(advanced, 3);
    assert_eq!(h.q.qdisc().vars().drop_next.as_nanos() / 10_000, 46_502);
}

/// ns-3 `CoDelQueueDiscBasicMark`, its four sub-cases (ECN on throughout).
#[test]
fn ns3_codel_queue_disc_basic_mark() {
    let params = CodelParams {
        limit: 500,
        ecn: true,
        ..ns3_defaults()
    };
    let sojourn = DropReason::Sojourn;

    // 1) Not-ECT packets are dropped, not marked.
    let mut h = codel(params.clone());
    offer_n(&mut h, 20, false);
    at(&mut h, 10);
    let before_first_drop = h.q.len();
    at(&mut h, 210);
    assert_eq!((h.drops(sojourn), h.marks(sojourn)), (1, 0));

    // 2) ECT packets are marked where case 1 dropped, at the same point.
    let mut h = codel(params.clone());
    offer_n(&mut h, 20, true);
    at(&mut h, 10);
    assert_eq!((h.q.len(), h.marks(sojourn)), (19, 0));
    let before_first_mark = h.q.len();
    at(&mut h, 210);
    assert_eq!((h.q.len(), h.drops(sojourn), h.marks(sojourn)), (18, 0, 1));
    assert_eq!(before_first_drop, before_first_mark);
    at(&mut h, 210);
    assert_eq!((h.q.len(), h.marks(sojourn)), (17, 1));
    at(&mut h, 420);
    assert_eq!((h.q.len(), h.drops(sojourn), h.marks(sojourn)), (16, 0, 2));
    assert_eq!(h.q.qdisc().stats().ce_mark, 0);

    // 3) Three ECT packets then Not-ECT ones, ce_threshold 2 ms.
    let mut h = codel(CodelParams {
        ce_threshold: Some(Dur::from_millis(2)),
        ..params.clone()
    });
    offer_n(&mut h, 3, true);
    offer_n(&mut h, 17, false);
    let stats = |h: &Harness<Codel>| {
        let s = h.q.qdisc().stats();
        (h.drops(sojourn), s.ecn_mark, s.ce_mark)
    };
    at(&mut h, 10);
    assert_eq!((h.q.len(), stats(&h)), (19, (0, 0, 1)));
    at(&mut h, 210);
    assert_eq!((h.q.len(), stats(&h)), (18, (0, 1, 1)));
    at(&mut h, 210);
    assert_eq!((h.q.len(), stats(&h)), (17, (0, 1, 2)));
    let count_before = h.q.qdisc().vars().count;
    at(&mut h, 420);
    let advanced = (h.q.qdisc().vars().count - count_before) as u64;
    assert_eq!(h.q.len() as u64, 17 - (advanced + 1));
    assert_eq!(stats(&h), (advanced, 1, 2));
    assert!(advanced >= 1);

    // 4) ECT packets, ce_threshold 2 ms: marks from 3 ms on, below target too.
    let mut h = codel(CodelParams {
        ce_threshold: Some(Dur::from_millis(2)),
        ..params
    });
    offer_n(&mut h, 20, true);
    at(&mut h, 1);
    assert_eq!((h.q.len(), stats(&h)), (19, (0, 0, 0)));
    at(&mut h, 3);
    assert_eq!((h.q.len(), stats(&h)), (18, (0, 0, 1)));
    at(&mut h, 10);
    assert_eq!((h.q.len(), stats(&h)), (17, (0, 0, 2)));
    // (ns-3 asserts nothing at 210 ms.) The control law marks; the packet is
    // not marked twice.
    at(&mut h, 210);
    assert_eq!((h.q.len(), stats(&h)), (16, (0, 1, 2)));
    assert_eq!(h.marks(sojourn), 3);
}

/// Drives a link that sends one packet every `tick` with `per_tick` arrivals
/// per tick (ECN-capable if `ect`), from `from` to `to`; returns the times of
/// the drops and marks it saw.
fn drive(
    h: &mut Harness<Codel>,
    from: Time,
    to: Time,
    tick: Dur,
    per_tick: u32,
    ect: bool,
) -> Vec<Time> {
    let mut signals = Vec::new();
    h.now = from;
    while h.now < to {
        offer_n(h, per_tick, ect);
        let before = h.sink.drops.len() + h.sink.marks.len();
        h.dequeue();
        for _ in before..h.sink.drops.len() + h.sink.marks.len() {
            signals.push(h.now);
        }
        h.advance(tick);
    }
    signals
}

#[test]
fn a_queue_whose_sojourn_stays_below_target_is_left_alone() {
    // A standing queue of 4 packets served every millisecond: every packet
    // waits 4 ms < 5 ms, for a minute.
    let mut h = codel(CodelParams::default());
    offer_n(&mut h, 4, false);
    let signals = drive(
        &mut h,
        Time::ZERO,
        Time::from_secs(60),
        Dur::from_millis(1),
        1,
        false,
    );
    assert!(signals.is_empty(), "{} drops", signals.len());
    assert!(!h.q.qdisc().vars().dropping);
    // A sojourn above target with at most one MTU queued: not a standing queue.
    let mut h = codel(CodelParams::default());
    h.size = 1500;
    h.offer(0, 0);
    let signals = drive(
        &mut h,
        Time::from_secs(1),
        Time::from_secs(60),
        Dur::from_millis(20),
        1,
        false,
    );
    assert!(signals.is_empty(), "{} drops below one MTU", signals.len());
}

#[test]
fn while_the_sojourn_stays_above_target_drops_come_faster_as_interval_over_sqrt_count() {
    // Two arrivals per departure: the sojourn only grows. The link sends every
    // 50 us, so drop times are seen to within 50 us.
    let mut h = codel(CodelParams {
        limit: 100_000,
        ..Default::default()
    });
    let tick = Dur::from_micros(50);
    let drops = drive(&mut h, Time::ZERO, Time::from_secs(4), tick, 2, false);
    assert!(drops.len() > 300, "{} drops", drops.len());
    assert_eq!(h.q.qdisc().vars().count as usize, drops.len());
    // Nothing before the sojourn has been above 5 ms for 100 ms.
    assert!(drops[0] >= Time::from_nanos(Dur::from_millis(105).as_nanos()));
    let interval = 100e-3;
    for k in 1..drops.len() {
        let spacing = (drops[k].as_nanos() - drops[k - 1].as_nanos()) as f64 * 1e-9;
        // The k-th spacing is interval x rec_inv_sqrt(count = k) (Linux's Newton
        // estimate of 1/sqrt, within 1% once count >= 16).
        let ideal = interval / (k as f64).sqrt();
        if k >= 16 {
            assert!(
                (spacing - ideal).abs() < 0.01 * ideal + 50e-6,
                "spacing {k}: {spacing} vs {ideal}"
            );
        }
    }
    // Drop rate over successive seconds: rising like sqrt(t).
    let per_second: Vec<usize> = (0..4)
        .map(|s| {
            drops
                .iter()
                .filter(|t| t.as_nanos() / 1_000_000_000 == s)
                .count()
        })
        .collect();
    assert!(per_second.windows(2).all(|w| w[1] > w[0]), "{per_second:?}");
}

#[test]
fn ecn_marks_replace_drops_and_follow_the_same_law() {
    let params = CodelParams {
        limit: 100_000,
        ecn: true,
        ..Default::default()
    };
    let tick = Dur::from_micros(50);
    let mut marking = codel(params.clone());
    let marks = drive(&mut marking, Time::ZERO, Time::from_secs(2), tick, 2, true);
    assert_eq!(marking.drops(DropReason::Sojourn), 0);
    assert_eq!(marking.marks(DropReason::Sojourn) as usize, marks.len());
    // Marked packets stay, so the queue differs; the law of the signal times
    // does not: spacing interval / sqrt(count).
    let k = marks.len() - 1;
    let spacing = (marks[k].as_nanos() - marks[k - 1].as_nanos()) as f64 * 1e-9;
    let ideal = 0.1 / (k as f64).sqrt();
    assert!((spacing - ideal).abs() < 0.01 * ideal + 50e-6);
}

#[test]
fn re_entering_the_dropping_state_soon_reuses_the_last_drop_rate() {
    // Phase 1: a sojourn above target long enough for 10 drops; then the queue
    // drains; then it builds again. Entering again within 16 intervals of the
    // last drop time starts from count - lastcount (Linux), not from 1.
    let run = |gap: Dur| -> (u32, u32) {
        let mut h = codel(CodelParams {
            limit: 100_000,
            ..Default::default()
        });
        let tick = Dur::from_micros(100);
        let mut t = Time::ZERO;
        h.now = t;
        while h.q.qdisc().vars().count < 10 || !h.q.qdisc().vars().dropping {
            offer_n(&mut h, 2, false);
            h.dequeue();
            h.advance(tick);
        }
        let first = *h.q.qdisc().vars();
        assert_eq!((first.count, first.lastcount), (10, 1));
        // Drain: the sojourn falls below target and the state is left.
        while h.dequeue().is_some() {}
        assert!(!h.q.qdisc().vars().dropping);
        t = h.now + gap;
        // Build again until the state is re-entered.
        h.now = t;
        while !h.q.qdisc().vars().dropping {
            offer_n(&mut h, 2, false);
            h.dequeue();
            h.advance(tick);
        }
        let v = *h.q.qdisc().vars();
        (v.count, v.lastcount)
    };
    // Soon: count = 10 - 1.
    assert_eq!(run(Dur::from_millis(200)), (9, 9));
    // Long after (more than 16 intervals past the last drop): count = 1.
    assert_eq!(run(Dur::from_secs(3)), (1, 1));
}

#[test]
fn the_first_drops_follow_linux_fixed_point_spacing() {
    // The drop times of one episode equal the chain drop_next += interval *
    // rec_inv_sqrt(count) with Linux's Newton step, not the exact square root:
    // after the first drop the spacing is 50.00 ms (0x8001), not 70.7 ms.
    let mut h = codel(CodelParams {
        limit: 100_000,
        ..Default::default()
    });
    let tick = Dur::from_micros(10);
    let drops = drive(
        &mut h,
        Time::ZERO,
        Time::from_nanos(700_000_000),
        tick,
        2,
        false,
    );
    let interval = Dur::from_millis(100).as_nanos();
    let mut next = control_law(drops[0].as_nanos(), interval, REC_INV_SQRT_ONE);
    let mut rec = REC_INV_SQRT_ONE;
    for (k, t) in drops.iter().enumerate().skip(1) {
        // Each drop happens at the first departure at or after its due time.
        assert!(
            t.as_nanos() >= next && t.as_nanos() < next + tick.as_nanos(),
            "drop {k}"
        );
        rec = newton_step(rec, k as u32 + 1);
        next = control_law(next, interval, rec);
    }
    let second = drops[2].as_nanos() - drops[1].as_nanos();
    assert!((second as i64 - 50_000_000).abs() < 20_000, "{second}");
}

#[test]
fn bad_parameters_are_rejected_by_name() {
    let err = |p: CodelParams| Codel::new(p).unwrap_err().to_string();
    assert_eq!(
        err(CodelParams {
            interval: Dur::ZERO,
            ..Default::default()
        }),
        "interval = 0ns must be positive"
    );
    assert_eq!(
        err(CodelParams {
            target: Dur::from_millis(200),
            ..Default::default()
        }),
        "target = 200ms must not exceed interval = 100ms"
    );
    assert_eq!(
        err(CodelParams {
            limit: 0,
            ..Default::default()
        }),
        "limit = 0 must be at least 1"
    );
    let e = toml::from_str::<CodelParams>("target = 5")
        .unwrap_err()
        .to_string();
    assert!(e.contains("has no unit"), "{e}");
    let e = toml::from_str::<CodelParams>("target = \"NaNms\"")
        .unwrap_err()
        .to_string();
    assert!(e.contains("target"), "{e}");
}
