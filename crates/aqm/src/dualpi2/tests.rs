use super::*;
use crate::packet::FlowId;
use crate::qdisc::VecSink;
use crate::rng::stream;

fn pkt(ecn: Ecn, size: u32) -> Packet {
    let mut p = Packet::new(FlowId(0), size);
    p.ecn = ecn;
    p
}

fn ms(v: u64) -> Time {
    Time::from_nanos(v * 1_000_000)
}

struct Bench {
    q: DualPi2,
    rng: crate::Rng,
    sink: VecSink,
}

impl Bench {
    fn new(params: DualPi2Params) -> Self {
        Bench {
            q: DualPi2::new(params, &crate::testing::TEST_LINK).unwrap(),
            rng: stream(1, 1),
            sink: VecSink::default(),
        }
    }
    fn enqueue(&mut self, p: Packet, now: Time) -> Verdict {
        let mut ctx = Ctx::new(now, &mut self.rng, &mut self.sink);
        self.q.enqueue(p, &mut ctx)
    }
    fn dequeue(&mut self, now: Time) -> Option<Packet> {
        let mut ctx = Ctx::new(now, &mut self.rng, &mut self.sink);
        self.q.dequeue(&mut ctx)
    }
}

#[test]
fn ect1_and_ce_go_to_the_l_queue_the_rest_to_the_c_queue() {
    let mut b = Bench::new(DualPi2Params::default());
    for ecn in [Ecn::Ect1, Ecn::Ce, Ecn::Ect, Ecn::NotEct] {
        b.enqueue(pkt(ecn, 1000), Time::ZERO);
    }
    assert_eq!(b.q.lens(), (2, 2));
    let mut b = Bench::new(DualPi2Params {
        any_ect: true,
        ..Default::default()
    });
    for ecn in [Ecn::Ect1, Ecn::Ce, Ecn::Ect, Ecn::NotEct] {
        b.enqueue(pkt(ecn, 1000), Time::ZERO);
    }
    assert_eq!(b.q.lens(), (3, 1));
}

/// Under a fixed base probability p', C packets are signalled with p'^2 and L
/// packets with k p' (RFC 9332's coupling).
#[test]
fn the_classic_probability_is_the_square_and_the_l4s_one_k_times_the_base() {
    for (p, k) in [(0.1, 2u8), (0.3, 2), (0.2, 3)] {
        let mut b = Bench::new(DualPi2Params {
            step_thresh: Some(Dur::from_secs(4)), // the PI's marks only
            coupling_factor: k,
            tupdate: Dur::from_secs(4),
            ..Default::default()
        });
        b.q.prob = (p * MAX_PROB as f64) as u32;
        let n = 40_000;
        let (mut c_marked, mut l_marked) = (0, 0);
        for i in 0..n {
            // Both queues stay backlogged well above two MTUs.
            while b.q.lens().0 < 4 {
                b.enqueue(pkt(Ecn::Ect1, 1000), Time::ZERO);
            }
            while b.q.lens().1 < 4 {
                b.enqueue(pkt(Ecn::Ect, 1000), Time::ZERO);
            }
            let out = b.dequeue(Time::from_nanos(i)).unwrap();
            let marked = out.ecn == Ecn::Ce;
            match b.sink.marks.last() {
                _ if !marked => {}
                _ if b.q.l.len() < 4 => l_marked += 1,
                _ => c_marked += 1,
            }
        }
        // The WRR serves 90% L, 10% C.
        let (l_sent, c_sent) = (0.9 * n as f64, 0.1 * n as f64);
        let (pc, pl) = (c_marked as f64 / c_sent, l_marked as f64 / l_sent);
        let want_l = (k as f64 * p).min(1.0);
        assert!(
            (pc - p * p).abs() < 0.15 * p * p + 0.005,
            "p {p}: p_C {pc} vs {}",
            p * p
        );
        assert!(
            (pl - want_l).abs() < 0.05 * want_l,
            "p {p} k {k}: p_L {pl} vs {want_l}"
        );
        assert!(
            b.sink.drops.is_empty(),
            "ECN-capable packets are marked, not dropped"
        );
    }
}

/// The PI controller: p' moves by alpha (qdelay - target) + beta (qdelay -
/// qdelay_old) every tupdate, qdelay the larger head sojourn.
#[test]
fn the_base_probability_follows_the_pi_recurrence() {
    let params = DualPi2Params::default();
    let mut b = Bench::new(params.clone());
    // A classic backlog that never drains: its head sojourn grows with time.
    for _ in 0..50 {
        b.enqueue(pkt(Ecn::NotEct, 1500), Time::ZERO);
    }
    let (alpha, beta, target) = (41.0 / 256.0, 819.0 / 256.0, 0.015);
    let (mut p, mut old) = (0.0f64, 0.0f64);
    for k in 1..=40u64 {
        let t = params.tupdate.as_secs_f64() * k as f64;
        p = (p + alpha * (t - target) + beta * (t - old)).clamp(0.0, 1.0);
        old = t;
    }
    // Updates due before 641 ms: the 40 at 16 ms, 32 ms, ..., 640 ms.
    b.q.advance_clock(ms(641));
    assert!(
        (b.q.base_prob() - p).abs() < 1e-6,
        "{} vs {p}",
        b.q.base_prob()
    );
}

/// An L packet arriving while the C queue is backlogged waits behind at most
/// one classic packet (the WRR gives C 10%: one packet in ten at most).
#[test]
fn l4s_packets_never_wait_behind_more_than_one_classic_packet() {
    let mut b = Bench::new(DualPi2Params::default());
    for _ in 0..500 {
        b.enqueue(pkt(Ecn::NotEct, 1500), Time::ZERO);
    }
    let mut worst = 0;
    for i in 0..200u64 {
        let t = Time::from_nanos(i * 1000);
        b.enqueue(pkt(Ecn::Ect1, 1500), t);
        let mut classic_before = 0;
        loop {
            let out = b.dequeue(t).unwrap();
            if out.ecn == Ecn::Ect1 || out.ecn == Ecn::Ce {
                break;
            }
            classic_before += 1;
        }
        worst = worst.max(classic_before);
    }
    assert!(
        worst <= 1,
        "an L packet waited behind {worst} classic packets"
    );
    // And the classic queue is not starved: it got its share.
    assert!(
        b.q.lens().1 < 500 - 15,
        "C sent {} packets",
        500 - b.q.lens().1
    );
}

/// With no classic traffic and p' = 0, the L queue marks exactly the packets
/// whose sojourn exceeds the step threshold.
#[test]
fn the_l_queue_marks_at_its_step_threshold() {
    let mut b = Bench::new(DualPi2Params::default());
    for _ in 0..20 {
        b.enqueue(pkt(Ecn::Ect1, 1000), Time::ZERO);
    }
    let mut marked = vec![];
    for i in 1..=20u64 {
        let out = b.dequeue(Time::from_nanos(i * 200_000)).unwrap();
        marked.push(out.ecn == Ecn::Ce);
    }
    // Sojourns 0.2 ms, 0.4 ms, ...: above 1 ms from the sixth packet on.
    let want: Vec<bool> = (1..=20u64).map(|i| i * 200_000 > 1_000_000).collect();
    assert_eq!(marked, want);
    assert_eq!(b.q.step_marks(), 15);
    assert_eq!(b.q.base_prob(), 0.0);

    // In packets: marks while more than 3 are left behind.
    let mut b = Bench::new(DualPi2Params {
        step_thresh_packets: Some(3),
        ..Default::default()
    });
    for _ in 0..8 {
        b.enqueue(pkt(Ecn::Ect1, 1000), Time::ZERO);
    }
    let marked: Vec<bool> = (0..8)
        .map(|_| b.dequeue(Time::ZERO).unwrap().ecn == Ecn::Ce)
        .collect();
    assert_eq!(marked, [true, true, true, true, false, false, false, false]);
}

#[test]
fn nothing_is_signalled_under_two_mtus() {
    let mut b = Bench::new(DualPi2Params {
        step_thresh: Some(Dur::from_secs(4)),
        ..Default::default()
    });
    b.q.prob = MAX_PROB / 2;
    for i in 0..1000u64 {
        b.enqueue(pkt(Ecn::Ect, 1000), Time::from_nanos(i));
        b.enqueue(pkt(Ecn::Ect1, 1000), Time::from_nanos(i));
        // Two 1000-byte packets queued: at dequeue 1000 bytes remain, under 3028.
        assert!(b.dequeue(Time::from_nanos(i)).is_some());
        assert!(b.dequeue(Time::from_nanos(i)).is_some());
    }
    assert!(b.sink.marks.is_empty() && b.sink.drops.is_empty());
}

#[test]
fn overload_drops_l4s_packets_like_classic_ones_or_caps_the_probability() {
    let fill = |b: &mut Bench| {
        while b.q.lens().0 < 40 {
            b.enqueue(pkt(Ecn::Ect1, 1000), Time::ZERO);
        }
    };
    // k p' = 1.6 > 1: overload. L packets dropped with p'^2 = 0.64, else marked.
    let mut b = Bench::new(DualPi2Params {
        tupdate: Dur::from_secs(4),
        step_thresh: Some(Dur::from_secs(4)),
        ..Default::default()
    });
    b.q.prob = (0.8 * MAX_PROB as f64) as u32;
    let mut kept = 0;
    for _ in 0..10_000 {
        fill(&mut b);
        if let Some(p) = b.dequeue(Time::ZERO) {
            assert_eq!(p.ecn, Ecn::Ce, "every L packet kept in overload is marked");
            kept += 1;
        }
    }
    let dropped = b.sink.drops.len() as f64 / (b.sink.drops.len() + kept) as f64;
    assert!((dropped - 0.64).abs() < 0.02, "{dropped}");

    // Without drop_on_overload: never a drop, and p' is capped at 1/k.
    let mut b = Bench::new(DualPi2Params {
        drop_on_overload: false,
        ..Default::default()
    });
    for _ in 0..200 {
        b.enqueue(pkt(Ecn::Ect1, 1500), Time::ZERO);
    }
    b.q.advance_clock(Time::from_secs(3));
    assert!(b.q.base_prob() <= 0.5 + 1e-9, "{}", b.q.base_prob());
    for i in 0..150 {
        b.dequeue(Time::from_secs(3) + Dur::from_nanos(i));
    }
    assert!(b.sink.drops.is_empty());
}

#[test]
fn bad_parameters_name_their_key() {
    for (params, key) in [
        (
            DualPi2Params {
                coupling_factor: 0,
                ..Default::default()
            },
            "coupling_factor",
        ),
        (
            DualPi2Params {
                classic_protection: 101,
                ..Default::default()
            },
            "classic_protection",
        ),
        (
            DualPi2Params {
                alpha: 0.0,
                ..Default::default()
            },
            "alpha",
        ),
        (
            DualPi2Params {
                beta: f64::NAN,
                ..Default::default()
            },
            "beta",
        ),
        (
            DualPi2Params {
                limit: 0,
                ..Default::default()
            },
            "limit",
        ),
        (
            DualPi2Params {
                step_thresh_packets: Some(0),
                ..Default::default()
            },
            "step_thresh_packets",
        ),
    ] {
        assert_eq!(
            DualPi2::new(params, &crate::testing::TEST_LINK)
                .unwrap_err()
                .key,
            key
        );
    }
}

#[test]
fn gains_scale_as_linux_scales_them() {
    // tc's defaults: 41 and 819 steps of 1/256 Hz.
    assert_eq!(
        scale_gain(0.16),
        ((41 * MAX_PROB as u64) >> 2) / 1_000_000_000
    );
    assert_eq!(
        scale_gain(3.2),
        ((819 * MAX_PROB as u64) >> 2) / 1_000_000_000
    );
}

/// Two spellings of the step at once (even a time equal to the default), or an
/// mtu no packet can have, are refused.
#[test]
fn one_step_threshold_and_a_packet_sized_mtu() {
    for t in [Dur::from_micros(500), Dur::from_millis(1)] {
        let e = DualPi2Params {
            step_thresh: Some(t),
            step_thresh_packets: Some(5),
            ..Default::default()
        }
        .validate()
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("step_thresh_packets") && e.contains("step_thresh ="),
            "{e}"
        );
    }
    for mtu in [u32::MAX, 65_536] {
        let e = DualPi2Params {
            mtu,
            ..Default::default()
        }
        .validate()
        .unwrap_err()
        .to_string();
        assert!(e.contains("mtu") && e.contains("65535"), "{e}");
    }
    for ok in [
        DualPi2Params {
            step_thresh_packets: Some(5),
            ..Default::default()
        },
        DualPi2Params {
            mtu: 9000,
            ..Default::default()
        },
    ] {
        ok.validate().unwrap();
    }
}

mod queue_protection;
