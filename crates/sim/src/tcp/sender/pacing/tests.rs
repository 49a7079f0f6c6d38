//! Pacing against the sender alone, on a path of fixed round-trip time.

use super::super::super::{Actions, Seg, TcpConfig, TcpSender, TimerCmd, Variant};
use crate::event::TimerKind;
use aqm::{Dur, Time};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Runs one sender for `until` over a path that returns each packet's ACK `rtt`
/// after it left, never losing one; each new packet's send time and the pacing
/// gap in force just after it left.
fn departures(cfg: &TcpConfig, rtt: Dur, until: Time) -> Vec<(Time, Dur)> {
    let mut s = TcpSender::new(cfg);
    let mut act = Actions::default();
    let mut acks = BinaryHeap::new(); // (time, seq + 1)
    let mut timer: Option<Time> = None;
    let mut out = Vec::new();
    let mut now = Time::ZERO;
    s.start(now, cfg, &mut act);
    loop {
        for seg in &act.segs {
            if let Seg::Data { seq, .. } = *seg {
                out.push((now, s.pacing_gap(cfg)));
                acks.push(Reverse((now + rtt, seq + 1)));
            }
        }
        match act.timers[TimerKind::Send as usize] {
            Some(TimerCmd::Arm(t)) => timer = Some(t),
            Some(TimerCmd::Cancel) => timer = None,
            None => {}
        }
        act.clear();
        let next_ack = acks.peek().map(|Reverse((t, _))| *t);
        match (next_ack, timer) {
            (Some(a), Some(t)) if t <= a => {
                now = t;
                timer = None;
                s.on_send_timer(now, cfg, &mut act);
            }
            (Some(a), _) => {
                now = a;
                let Reverse((_, ack)) = acks.pop().unwrap();
                s.on_ack(now, ack, &[], false, cfg, &mut act);
            }
            (None, Some(t)) => {
                now = t;
                timer = None;
                s.on_send_timer(now, cfg, &mut act);
            }
            (None, None) => break,
        }
        if now > until {
            break;
        }
    }
    out
}

#[test]
fn paced_packets_leave_no_closer_than_size_over_the_pacing_rate() {
    let rtt = Dur::from_millis(50);
    for variant in [Variant::NewReno, Variant::Cubic, Variant::Prague] {
        let cfg = TcpConfig {
            variant,
            pacing: true,
            initial_window: 10,
            max_window: 200,
            ..Default::default()
        };
        let sent = departures(&cfg, rtt, Time::from_secs(2));
        // The first window leaves at once (no RTT sample yet); after it, every
        // gap is at least the one in force when the earlier packet left: the
        // packet size over factor x cwnd x size / srtt.
        assert!(sent.len() > 500, "{variant:?}: {} packets", sent.len());
        let first = sent.iter().position(|&(t, _)| t > Time::ZERO).unwrap();
        for w in sent[first..].windows(2) {
            let ((t0, gap), (t1, _)) = (w[0], w[1]);
            assert!(
                t1.saturating_since(t0) >= gap,
                "{variant:?}: {t0} then {t1}, gap {gap}"
            );
            assert!(!gap.is_zero());
        }
    }
}

#[test]
fn without_pacing_a_window_leaves_in_bursts() {
    // The comparison that makes the test above mean something: the same sender
    // unpaced sends two packets per ACK at one instant in slow start.
    let cfg = TcpConfig {
        initial_window: 10,
        max_window: 200,
        ..Default::default()
    };
    let sent = departures(&cfg, Dur::from_millis(50), Time::from_secs(2));
    let bursts = sent.windows(2).filter(|w| w[0].0 == w[1].0).count();
    assert!(bursts > 100, "{bursts}");
}

#[test]
fn pacing_runs_at_twice_cwnd_per_rtt_in_slow_start_and_1_2_after() {
    let cfg = TcpConfig {
        pacing: true,
        ..Default::default()
    };
    let mut s = TcpSender::new(&cfg);
    let mut act = Actions::default();
    s.start(Time::ZERO, &cfg, &mut act);
    s.on_ack(
        Time::ZERO + Dur::from_millis(100),
        1,
        &[],
        false,
        &cfg,
        &mut act,
    );
    // srtt 100 ms, cwnd 2, slow start: 100 ms / (2 x 2).
    assert_eq!(s.pacing_gap(&cfg), Dur::from_millis(25));
    s.ssthresh = 2.0;
    assert_eq!(s.pacing_gap(&cfg), Dur::from_secs_f64(0.1 / 2.4));
    let prague = TcpConfig {
        variant: Variant::Prague,
        ..cfg
    };
    assert_eq!(s.pacing_gap(&prague), Dur::from_millis(50));
}
