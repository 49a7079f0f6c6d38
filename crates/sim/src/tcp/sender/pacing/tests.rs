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

/// Departures grouped by instant: (time, packets, the gap in force after the last).
fn bursts(sent: &[(Time, Dur)]) -> Vec<(Time, u64, Dur)> {
    let mut out: Vec<(Time, u64, Dur)> = Vec::new();
    for &(t, gap) in sent {
        match out.last_mut() {
            Some((at, n, g)) if *at == t => {
                *n += 1;
                *g = gap;
            }
            _ => out.push((t, 1, gap)),
        }
    }
    out
}

#[test]
fn the_linux_profile_paces_in_tso_bursts_charged_at_the_pacing_rate() {
    let cfg = TcpConfig {
        pacing: true,
        max_window: 400,
        ..TcpConfig::linux(Variant::Bbr)
    };
    let sent = departures(&cfg, Dur::from_millis(50), Time::from_secs(3));
    let bursts = bursts(&sent[10..]); // Linux charges nothing for the first 10
    assert!(bursts.len() > 200, "{} bursts", bursts.len());
    let mut on_time = 0;
    for w in bursts.windows(2) {
        let ((t0, n, gap), (t1, _, _)) = (w[0], w[1]);
        // A burst is 1 ms of the pacing rate, at least 2 packets
        // (`tcp_tso_autosize`); the next leaves its length at the pacing rate
        // later, or up to half of that sooner when it left late.
        let rate = 1.0 / gap.as_secs_f64();
        let bytes = rate * cfg.packet_size as f64;
        let min = if bytes * 8.0 < 1.2e6 { 1 } else { 2 }; // BBR's below 1.2 Mbit/s
        let segs = ((bytes / 1024.0) as u64 / cfg.packet_size as u64).max(min);
        assert!(
            n <= segs,
            "{n} packets at {t0}, at most {segs} at {rate:.0} packets/s"
        );
        let charge = gap.as_nanos() * n;
        let since = t1.saturating_since(t0).as_nanos();
        assert!(
            since + 1 >= charge / 2,
            "{n} packets at {t0}, the next at {t1}, gap {gap}"
        );
        on_time += (since + 1 >= charge) as usize;
    }
    assert!(
        on_time * 10 >= bursts.len() * 9,
        "{on_time} of {}",
        bursts.len()
    );
    // Bursts, not single packets: most packets leave with another.
    let paired: u64 = bursts.iter().filter(|b| b.1 > 1).map(|b| b.1).sum();
    assert!(
        paired * 10 >= (sent.len() as u64 - 10) * 9,
        "{paired} of {}",
        sent.len()
    );
    // And bursts of more than two once 1 ms of the rate holds more.
    assert!(bursts.iter().any(|b| b.1 > 2), "no burst above 2 packets");
}

#[test]
fn the_ns2_profile_paces_one_packet_per_gap() {
    let cfg = TcpConfig {
        variant: Variant::Cubic,
        pacing: true,
        initial_window: 10,
        max_window: 400,
        ..Default::default()
    };
    let sent = departures(&cfg, Dur::from_millis(50), Time::from_secs(3));
    let first = sent.iter().position(|&(t, _)| t > Time::ZERO).unwrap();
    assert!(bursts(&sent[first..]).iter().all(|b| b.1 == 1));
}

#[test]
fn a_burst_is_charged_what_it_sent_less_half_its_lateness() {
    use super::Burst;
    let ms = |m: u64| Time::ZERO + Dur::from_millis(m);
    let gap = Dur::from_millis(2);
    let mut b = Burst {
        next: ms(100),
        ..Burst::default()
    };
    // Cut short by the window: one packet of four is charged one gap.
    b.start(ms(100), 4);
    assert_eq!(b.add(gap, true), ms(102));
    assert!(
        !b.continues_at(ms(101)),
        "a later packet starts a new burst"
    );
    // On time: a whole burst is charged four gaps.
    b.start(ms(102), 4);
    for _ in 0..3 {
        b.add(gap, true);
        assert!(b.continues_at(ms(102)));
    }
    assert_eq!(b.add(gap, true), ms(110));
    assert!(!b.continues_at(ms(110)));
    // 3 ms late: forgiven up to half of its 8 ms, so 5 ms.
    b.start(ms(113), 4);
    for _ in 0..4 {
        b.add(gap, true);
    }
    assert_eq!(b.next, ms(118));
    // Very late: at most half is forgiven.
    b.start(ms(200), 2);
    b.add(gap, true);
    assert_eq!(b.add(gap, true), ms(202));
}
