//! BBRv3's rules: scripted losses against its bounds, and a sender over one
//! bottleneck (`tcp::test_path`) for its states over time.

use super::*;
use crate::tcp::test_path::{self, Path};
use crate::tcp::{TcpConfig, TcpSender, Variant};

fn ms(n: u64) -> Dur {
    Dur::from_millis(n)
}

fn at(d: Dur) -> Time {
    Time::ZERO + d
}

fn cfg(variant: Variant) -> TcpConfig {
    TcpConfig {
        variant,
        packet_size: 1500,
        initial_window: 10,
        max_window: 10_000,
        pacing: true,
        ..Default::default()
    }
}

fn path(pps: f64, buffer: Option<usize>) -> Path {
    Path {
        pps,
        rtt: ms(40),
        buffer,
    }
}

/// Runs a BBRv3 flow for `secs`, calling `see` with its model after every ACK.
fn drive(seed: u64, p: &Path, secs: u64, mut see: impl FnMut(Time, &Bbr3, &TcpSender)) -> u64 {
    let until = at(Dur::from_secs(secs));
    test_path::drive(&cfg(Variant::Bbr3), seed, p, until, |now, s| {
        see(now, s.bbr3_model().unwrap(), s)
    })
}

/// The state changes of a run, with when each began.
fn states(seed: u64, p: &Path, secs: u64) -> Vec<(Time, State)> {
    let mut v: Vec<(Time, State)> = vec![];
    drive(seed, p, secs, |now, b, _| {
        if v.last().map(|x| x.1) != Some(b.state) {
            v.push((now, b.state));
        }
    });
    v
}

/// After STARTUP and DRAIN, ProbeBW goes DOWN, CRUISE, REFILL, UP and back to
/// DOWN, in that order (DOWN may end on the ACK that began it); ProbeRTT
/// returns to CRUISE. Each state paces at its gain x bw x 99%, and REFILL
/// lasts one round.
#[test]
fn probe_bw_goes_down_cruise_refill_up_in_order() {
    let mut seen = vec![];
    drive(3, &path(1000.0, None), 20, |now, b, _| {
        if b.full_bw_reached && b.bw > 0.0 {
            let want = b.state.pacing_gain() * b.bw * PACING_MARGIN;
            assert!(
                (b.pacing_rate / want - 1.0).abs() < 1e-9,
                "{:?} {}",
                b.state,
                b.pacing_rate
            );
        }
        if seen.last().map(|x: &(Time, State)| x.1) != Some(b.state) {
            seen.push((now, b.state));
        }
    });
    assert_eq!(
        seen[..2].iter().map(|x| x.1).collect::<Vec<_>>(),
        [State::Startup, State::Drain]
    );
    let mut ups = 0;
    for w in seen[1..].windows(2) {
        let ok = match (w[0].1, w[1].1) {
            (State::Drain, State::Down | State::Cruise) => true,
            (State::Down, State::Cruise | State::Refill) => true,
            (State::Cruise, State::Refill) => true,
            (State::Refill, State::Up) => {
                let len = w[1].0.saturating_since(w[0].0);
                assert!(len >= ms(40) && len < ms(45), "REFILL lasted {len}");
                true
            }
            (State::Up, State::Down) => {
                ups += 1;
                true
            }
            (State::Down | State::Cruise | State::Refill | State::Up, State::ProbeRtt) => true,
            (State::ProbeRtt, State::Cruise) => true,
            _ => false,
        };
        assert!(ok, "{:?} then {:?}: {seen:?}", w[0].1, w[1].1);
    }
    assert!(ups >= 7, "{ups} probes in 20 s: {seen:?}");
}

/// A probe comes 2 to 3 s after DOWN began (drawn per cycle), or sooner once
/// as many rounds have passed as Reno takes to grow by the BDP, at most 63: at
/// 1000 packets/s and 40 ms (a BDP of 40) always after 40 rounds, under 2 s; at
/// 10,000 packets/s (a BDP of 400) after 63 rounds or the wait, whichever ends
/// first.
#[test]
fn a_probe_waits_2_to_3_seconds_or_renos_rounds() {
    for pps in [1000.0, 10_000.0] {
        let mut probes = vec![];
        let mut prev = State::Startup;
        drive(7, &path(pps, None), 30, |now, b, _| {
            if b.state == State::Refill && matches!(prev, State::Down | State::Cruise) {
                let elapsed = now.saturating_since(b.cycle_stamp);
                let reno = b.target_inflight().min(RENO_MAX_ROUNDS).ceil() as u32;
                probes.push((elapsed, b.bw_probe_wait, b.rounds_since_probe_up, reno));
            }
            prev = b.state;
        });
        assert!(probes.len() >= 6, "{probes:?}");
        for &(elapsed, wait, rounds, reno) in &probes {
            assert!(wait >= ms(2000) && wait < ms(3000), "{wait}");
            let bdp = pps * 0.04;
            assert!(reno as f64 >= bdp.min(63.0) && reno as f64 <= (bdp * 1.06).min(63.0));
            let by_rounds = rounds == reno;
            let by_wait = elapsed > wait && elapsed < wait + ms(50);
            assert!(by_rounds || by_wait, "{pps} pps: {probes:?}");
            if pps < 5000.0 {
                assert!(by_rounds && elapsed < ms(2000), "{probes:?}");
            }
        }
    }
}

/// ProbeRTT comes 5 s after the last new minimum (here: 5 s after the last
/// ProbeRTT), holds cwnd at half the BDP, and lasts 200 ms and a round.
#[test]
fn probe_rtt_every_five_seconds_at_half_the_bdp() {
    let mut spans: Vec<(Time, Time)> = vec![];
    drive(9, &path(1000.0, None), 32, |now, b, s| {
        if b.state == State::ProbeRtt {
            let half_bdp = 0.5 * b.bw * b.min_rtt.unwrap().as_secs_f64();
            assert!(half_bdp > 19.0 && half_bdp < 21.0, "{half_bdp}");
            assert!(s.cwnd() <= half_bdp + 1e-9, "{}", s.cwnd());
            match spans.last_mut() {
                Some((_, end)) if now.saturating_since(*end) < ms(100) => *end = now,
                _ => spans.push((now, now)),
            }
        }
    });
    assert_eq!(spans.len(), 6, "{spans:?}");
    for (start, end) in &spans {
        let len = end.saturating_since(*start);
        assert!(len >= ms(200) && len < ms(300), "{len}");
    }
    for w in spans.windows(2) {
        let gap = w[1].0.saturating_since(w[0].1);
        assert!(gap > ms(4_900) && gap < ms(5_100), "{gap}");
    }
}

/// A model in UP with a probe's samples in flight, at 1000 packets/s and 40 ms.
fn probing() -> Bbr3 {
    let mut b = Bbr3::new(10.0, 1);
    b.full_bw_reached = true;
    b.state = State::Up;
    b.bw_probe_samples = true;
    b.bw_hi = [1000.0, 0.0];
    b.bw = 1000.0;
    b.min_rtt = Some(ms(40));
    b.c.cwnd = 100.0;
    b
}

/// A packet lost beyond 2% of the flight it left into sets the long-term bound
/// where inside that packet the loss rate crossed 2%, and ends the probe; at
/// or under 2% it sets nothing.
#[test]
fn a_probe_that_loses_too_much_sets_the_bound_where_loss_crossed_2_percent() {
    let mut b = probing();
    b.handle_lost_packet(&LostPacket {
        tx_in_flight: 100,
        lost_since: 2,
        app_limited: false,
    });
    assert_eq!((b.state, b.inflight_longterm), (State::Up, f64::INFINITY));
    b.handle_lost_packet(&LostPacket {
        tx_in_flight: 150,
        lost_since: 4,
        app_limited: false,
    });
    // 149 packets before it, 3 of them lost: 2% of 149 is crossed 0.0 packets in.
    let want = 149.0 + (0.02 * 149.0 - 3.0) / 0.98;
    assert!(
        (b.inflight_longterm - want).abs() < 1e-9,
        "{}",
        b.inflight_longterm
    );
    assert_eq!(b.state, State::Down);
    assert!(!b.bw_probe_samples && b.prev_probe_too_high);
    // Never below 0.7 of the BDP: a probe lost early says little.
    let mut b = probing();
    b.handle_lost_packet(&LostPacket {
        tx_in_flight: 10,
        lost_since: 3,
        app_limited: false,
    });
    assert!(
        (b.inflight_longterm - BETA * 40.0).abs() < 1e-9,
        "{}",
        b.inflight_longterm
    );
}

/// One ACK that starts a round, delivering at `rate` packets/s, application-
/// limited (so that the bandwidth filter keeps 1000 packets/s).
fn round_ack(b: &mut Bbr3, r: &mut RateSampler, now: Time, rate: f64, ece: bool) {
    r.delivered += 10;
    let rs = RateSample {
        delivered: 10,
        interval: Some(Dur::from_secs_f64(10.0 / rate)),
        prior_delivered: b.next_round_delivered,
        rtt: Some(ms(40)),
        acked: 1,
        tx_in_flight: 40,
        app_limited: true,
        ..Default::default()
    };
    let a = BbrAck {
        now,
        in_flight: 40,
        ca: CaState::Open,
        srtt: 0.04,
        packet_size: 1500,
        cwnd_limited: false,
        ece,
    };
    let mut cwnd = 80.0;
    b.on_ack(&rs, r, &a, &mut cwnd);
}

/// Outside a probe, each round with a congestion signal (here an ECN echo)
/// cuts the short-term bounds to 0.7 of themselves, never below what the last
/// round delivered, and a round without one leaves them; a probe forgets them.
#[test]
fn short_term_bounds_fall_by_beta_per_round_with_congestion() {
    let mut b = probing();
    b.start_probe_bw_down();
    b.state = State::Cruise;
    b.cycle_stamp = Time::ZERO;
    b.bw_probe_wait = Dur::from_secs(100);
    let mut r = RateSampler::default();
    let mut t = ms(1000);
    let mut step = |b: &mut Bbr3, ece: bool| {
        t = t + ms(40);
        round_ack(b, &mut r, at(t), 300.0, ece);
    };
    step(&mut b, false);
    assert!(b.bw_shortterm.is_infinite());
    step(&mut b, true); // marks in this round...
    step(&mut b, false); // ...cut at the next round's start
    assert!((b.bw_shortterm - 700.0).abs() < 1e-9, "{}", b.bw_shortterm);
    step(&mut b, true);
    step(&mut b, false);
    assert!((b.bw_shortterm - 490.0).abs() < 1e-9, "{}", b.bw_shortterm);
    step(&mut b, false);
    assert!((b.bw_shortterm - 490.0).abs() < 1e-9, "{}", b.bw_shortterm);
    assert!(
        (b.bw - 490.0).abs() < 1e-9,
        "the model's rate is the bound's"
    );
    for _ in 0..2 {
        step(&mut b, true);
        step(&mut b, false);
    }
    // 0.7^4 of 1000 would be 240: the 300 packets/s delivered is the floor.
    assert!((b.bw_shortterm - 300.0).abs() < 1e-3, "{}", b.bw_shortterm);
    b.start_probe_bw_refill();
    assert!(b.bw_shortterm.is_infinite() && b.inflight_shortterm.is_infinite());
}

/// On a buffer of a fifth of the BDP, STARTUP ends on loss (not three flat
/// rounds) with the long-term bound set at about the path's BDP plus buffer,
/// and the flow loses a sixth of BBR v1's packets for the same goodput: what
/// the bounds from loss are for.
#[test]
fn a_shallow_buffer_bounds_the_flight_and_loses_far_less_than_v1() {
    let p = path(1000.0, Some(8));
    let mut at_drain = None;
    let mut delivered3 = 0;
    let drops3 = drive(3, &p, 20, |_, b, s| {
        if b.state == State::Drain && at_drain.is_none() {
            at_drain = Some(b.inflight_longterm);
        }
        delivered3 = s.snd_una();
    });
    let bound = at_drain.unwrap();
    assert!(
        (40.0..=60.0).contains(&bound),
        "inflight_longterm {bound} on leaving STARTUP"
    );
    let mut delivered1 = 0;
    let until = at(Dur::from_secs(20));
    let drops1 = test_path::drive(&cfg(Variant::Bbr), 3, &p, until, |_, s| {
        delivered1 = s.snd_una()
    });
    assert!(drops3 * 4 < drops1, "drops: v3 {drops3}, v1 {drops1}");
    assert!(
        delivered3 as f64 > 0.97 * delivered1 as f64,
        "{delivered3} / {delivered1}"
    );
}

/// The probe waits are drawn from the flow's stream: the same seed gives the
/// same run, another seed another.
#[test]
fn runs_are_deterministic() {
    let p = path(1000.0, Some(20));
    assert_eq!(states(4, &p, 12), states(4, &p, 12));
    assert_ne!(states(4, &p, 12), states(5, &p, 12));
}
