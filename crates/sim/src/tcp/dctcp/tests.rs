//! DCTCP's and Prague's defining properties, against the state machines alone.

use super::super::{Actions, ReductionCause, Seg, TcpConfig, TcpReceiver, TcpSender, Variant};
use super::*;
use aqm::Ecn;

fn cfg(variant: Variant) -> TcpConfig {
    TcpConfig {
        variant,
        ecn: if variant == Variant::Prague {
            Ecn::Ect1
        } else {
            Ecn::Ect
        },
        max_window: 10_000,
        initial_window: 10,
        ..Default::default()
    }
}

fn datas(act: &Actions) -> Vec<u32> {
    act.data_seqs()
}

/// Whether packet `seq` is marked when a fraction `f` of packets is, spread
/// evenly (the marks of a step AQM in steady state, without its burstiness).
fn marked(seq: u32, f: f64) -> bool {
    ((seq + 1) as f64 * f).floor() > (seq as f64 * f).floor()
}

/// Per round trip of `rtt`, every packet in flight acknowledged one by one, the
/// echo set on the ACKs of marked packets; returns alpha after each ACK that
/// reduced the window, and alpha after each round.
fn run(s: &mut TcpSender, c: &TcpConfig, f: f64, rtt: Dur, rounds: u32) -> (Vec<f64>, Vec<f64>) {
    let mut act = Actions::default();
    s.start(Time::ZERO, c, &mut act);
    let mut flight = datas(&act);
    let (mut at_cut, mut per_round) = (Vec::new(), Vec::new());
    for round in 1..=rounds {
        let now = Time::ZERO + rtt.saturating_mul(round as u64);
        let mut next = Vec::new();
        for &seq in &flight {
            act.clear();
            let cuts = s.trace.as_ref().unwrap().len();
            s.on_ack(now, seq + 1, &[], marked(seq, f), c, &mut act);
            if s.trace.as_ref().unwrap().len() > cuts {
                at_cut.push(s.alpha().unwrap());
            }
            next.extend(datas(&act));
        }
        per_round.push(s.alpha().unwrap());
        flight = next;
    }
    (at_cut, per_round)
}

#[test]
fn dctcp_alpha_tracks_the_marked_fraction_and_each_cut_is_w_alpha_over_2() {
    for f in [0.02, 1.0 / 16.0, 0.2] {
        let c = cfg(Variant::Dctcp);
        let mut s = TcpSender::new(&c);
        s.trace = Some(Box::default());
        let (at_cut, per_round) = run(&mut s, &c, f, Dur::from_millis(10), 600);
        let tail = &per_round[300..];
        let mean = tail.iter().sum::<f64>() / tail.len() as f64;
        assert!(
            (mean - f).abs() < 0.2 * f,
            "F = {f}: alpha's mean over the last 300 rounds is {mean}"
        );
        let cuts: Vec<_> = s.trace.as_ref().unwrap().to_vec();
        assert!(cuts.len() > 20, "F = {f}: {} cuts", cuts.len());
        assert_eq!(cuts.len(), at_cut.len());
        for (r, alpha) in cuts.iter().zip(&at_cut) {
            assert_eq!(r.cause, ReductionCause::Ecn);
            // RFC 8257 (3.3): cwnd <- cwnd (1 - alpha / 2), floor 2 packets.
            let want = (r.cwnd_before * (1.0 - alpha / 2.0)).max(2.0);
            assert!(
                (r.cwnd_after - want).abs() < 1e-9,
                "F = {f}: {} -> {} at alpha {alpha}, want {want}",
                r.cwnd_before,
                r.cwnd_after
            );
        }
        // At most one cut per window of data: never two in one round trip.
        let mut times: Vec<_> = cuts.iter().map(|r| r.at).collect();
        times.dedup();
        assert_eq!(times.len(), cuts.len(), "F = {f}: two cuts in one round");
    }
}

#[test]
fn dctcp_without_marks_keeps_alpha_decaying_and_grows_as_reno() {
    let c = cfg(Variant::Dctcp);
    let mut s = TcpSender::new(&c);
    s.trace = Some(Box::default());
    let (_, per_round) = run(&mut s, &c, 0.0, Dur::from_millis(10), 40);
    // alpha starts at 1 and decays by (1 - g) per round.
    let want = (1.0 - G).powi(per_round.len() as i32 - 1);
    assert!((per_round.last().unwrap() / want - 1.0).abs() < 0.1);
    assert!(s.trace.as_ref().unwrap().is_empty());
}

#[test]
fn dctcp_reduces_by_alpha_over_2_where_classic_ecn_halves() {
    // One marked window after alpha settled at F: DCTCP cuts by F / 2.
    let mut sc = Scalable::new(Variant::Dctcp);
    sc.alpha = 0.1;
    let w = sc.on_echo(Time::ZERO, 100.0, false).unwrap();
    assert!((w - 95.0).abs() < 1e-12, "{w}");
    // Never below two packets, never above the window it had.
    sc.alpha = 1.0;
    assert_eq!(sc.on_echo(Time::ZERO, 3.0, false), Some(2.0));
    assert_eq!(sc.on_echo(Time::ZERO, 1.0, false), Some(1.0));
}

fn acks(act: &Actions) -> Vec<(u32, bool)> {
    act.segs
        .iter()
        .filter_map(|s| match s {
            Seg::Ack { ack, ece, .. } => Some((*ack, *ece)),
            _ => None,
        })
        .collect()
}

/// Feeds packets `0..` with the CE marks `ce` to a delayed-ACK receiver; the
/// ACKs it sent, in order.
fn receive(variant: Variant, ce: &[bool]) -> Vec<(u32, bool)> {
    let c = TcpConfig {
        delayed_ack: true,
        ..cfg(variant)
    };
    let mut r = TcpReceiver::default();
    let mut all = Vec::new();
    for (seq, &m) in ce.iter().enumerate() {
        let mut act = Actions::default();
        r.on_data(Time::ZERO, seq as u32, 0, m, false, &c, &mut act);
        all.extend(acks(&act));
    }
    all
}

#[test]
fn dctcp_receiver_delays_acks_while_the_ce_state_holds() {
    // Every second packet acknowledged, ECE as the state.
    assert_eq!(
        receive(Variant::Dctcp, &[false, false, false, false]),
        vec![(2, false), (4, false)]
    );
    assert_eq!(
        receive(Variant::Dctcp, &[true, true, true, true, true]),
        // The first CE changes the state: acknowledged at once.
        vec![(1, true), (3, true), (5, true)]
    );
}

#[test]
fn dctcp_receiver_acks_at_once_when_the_ce_state_changes() {
    // 0 unmarked (delayed), 1 marked: the delayed ACK of 0 goes with ECE = 0,
    // then 1's at once with ECE = 1; 2 marked (delayed), 3 unmarked: the delayed
    // ACK of 2 with ECE = 1, then 3's at once with ECE = 0.
    assert_eq!(
        receive(Variant::Dctcp, &[false, true, true, false]),
        vec![(1, false), (2, true), (3, true), (4, false)]
    );
    // Each packet's mark is echoed exactly: the packets an ACK with ECE
    // acknowledges are the marked ones.
    let ce = [
        false, true, false, false, true, true, true, false, true, false, false,
    ];
    let mut last = 0;
    let mut echoed = vec![false; ce.len()];
    for (ack, ece) in receive(Variant::Dctcp, &ce) {
        for e in &mut echoed[last as usize..ack as usize] {
            *e = ece;
        }
        last = ack;
    }
    assert_eq!(&echoed[..last as usize], &ce[..last as usize]);
}

#[test]
fn a_classic_receiver_latches_ece_until_cwr() {
    // RFC 3168: ECE from the first CE on, whatever the later packets carry.
    assert_eq!(
        receive(Variant::NewReno, &[false, true, false, false]),
        vec![(2, true), (4, true)]
    );
}

#[test]
fn prague_scales_its_increase_toward_a_25ms_round_trip() {
    let sc = Scalable::new(Variant::Prague);
    // At 5 ms, (5/25)^2 of Reno's 1/cwnd per ACK: a window grows by 0.04 packets
    // per round trip, five times a second: its rate as fast as a 25 ms flow's.
    assert!((sc.avoid(10.0, 1.0, false, 0.005) - 0.004).abs() < 1e-12);
    assert_eq!(sc.avoid(10.0, 1.0, false, 0.05), 0.1);
    assert_eq!(sc.avoid(10.0, 1.0, true, 0.005), 0.0);
    let d = Scalable::new(Variant::Dctcp);
    assert_eq!(d.avoid(10.0, 1.0, false, 0.005), 0.1);
}

#[test]
fn prague_cuts_at_most_once_per_25ms_after_slow_start() {
    let mut sc = Scalable::new(Variant::Prague);
    let t = |ms| Time::ZERO + Dur::from_millis(ms);
    assert!(sc.on_echo(t(0), 100.0, false).is_some());
    assert!(sc.on_echo(t(10), 100.0, false).is_none());
    assert!(sc.on_echo(t(24), 100.0, false).is_none());
    assert!(sc.on_echo(t(25), 100.0, false).is_some());
    // In slow start it responds at once, as DCTCP does.
    assert!(sc.on_echo(t(26), 100.0, true).is_some());
}
