//! BBR v1's state machine: scripted rate samples against its rules, and a sender
//! over an ideal bottleneck (a FIFO of fixed rate, no loss, a fixed base RTT)
//! for the phases over time.

use super::*;
use crate::tcp::test_path::{self, Path};
use crate::tcp::{TcpConfig, TcpSender, Variant};

fn ms(n: u64) -> Dur {
    Dur::from_millis(n)
}

fn at(d: Dur) -> Time {
    Time::ZERO + d
}

fn ack(now: Time, in_flight: u32) -> BbrAck {
    BbrAck {
        now,
        in_flight,
        ca: CaState::Open,
        srtt: 0.04,
        packet_size: 1500,
        cwnd_limited: true,
        ece: false,
    }
}

/// One ACK's sample: `delivered` packets over `interval`, the round's first
/// packet delivered when `prior_delivered` reaches the round's end.
fn sample(delivered: u64, interval: Dur, prior_delivered: u64, rtt: Dur) -> RateSample {
    RateSample {
        delivered,
        interval: Some(interval),
        prior_delivered,
        rtt: Some(rtt),
        app_limited: false,
        acked: 1,
        losses: 0,
        prior_in_flight: 10,
        ..Default::default()
    }
}

/// Feeds one ACK per round, each a round start: `bw` packets per second in
/// round `k`. Returns the round at which the pipe was found full.
#[track_caller]
fn rounds_to_full_pipe(bw: impl Fn(u32) -> f64) -> Option<u32> {
    let mut b = Bbr::new(10.0, 1);
    let mut r = RateSampler::default();
    let mut cwnd = 10.0;
    for k in 0..20u32 {
        r.delivered = 100 * (k as u64 + 1);
        let rate = bw(k);
        let rs = sample((rate / 100.0) as u64, ms(10), 100 * k as u64, ms(40));
        b.on_ack(&rs, &mut r, &ack(at(ms(40 * k as u64)), 1000), &mut cwnd);
        if b.full_bw_reached() {
            return Some(k);
        }
    }
    None
}

/// STARTUP ends after three rounds in which the bandwidth grew by less than 25%,
/// and not while it grows by more.
#[test]
fn startup_ends_after_three_rounds_without_25_percent_growth() {
    // Round 0 sets full_bw; rounds 1, 2, 3 add nothing: full at round 3.
    assert_eq!(rounds_to_full_pipe(|_| 10_000.0), Some(3));
    // Growth of 30% a round for 6 rounds, then flat: full three rounds later.
    let grow = |k: u32| 10_000.0 * 1.3f64.powi(k.min(6) as i32);
    assert_eq!(rounds_to_full_pipe(grow), Some(9));
    // A 10% rise is not growth: full at round 3 all the same.
    let bump = |k: u32| if k == 0 { 10_000.0 } else { 11_000.0 };
    assert_eq!(rounds_to_full_pipe(bump), Some(3));
    // Growth is counted against the last round that grew: 20% then 20% more is
    // 44%, growth again, so full only three rounds after that.
    let slow = |k: u32| 10_000.0 * 1.2f64.powi(k.min(2) as i32);
    assert_eq!(rounds_to_full_pipe(slow), Some(5));
}

/// DRAIN lasts while more than one BDP (plus the quantization budget) is in
/// flight, and hands over to PROBE_BW once the flight is down to it.
#[test]
fn drain_ends_when_the_flight_is_down_to_one_bdp() {
    let mut b = Bbr::new(10.0, 1);
    b.min_rtt = Some(ms(40));
    b.bw.reset(1, 1000.0); // 1000 packets/s x 40 ms: a BDP of 40
    b.full_bw_reached = true;
    b.pacing_rate = 990.0; // a TSO goal of 2 packets
    let limit = b.inflight(1000.0, 1.0, 1500);
    assert_eq!(limit, 46.0, "40 + 3 x 2, even");
    b.check_drain(&ack(at(ms(0)), 100));
    assert_eq!(b.mode, Mode::Drain);
    assert_eq!(b.ssthresh, limit, "Linux sets ssthresh on entering DRAIN");
    b.update_gains();
    assert_eq!(b.pacing_gain, DRAIN_GAIN);
    b.check_drain(&ack(at(ms(10)), limit as u32 + 1));
    assert_eq!(b.mode, Mode::Drain);
    b.check_drain(&ack(at(ms(20)), limit as u32));
    assert_eq!(b.mode, Mode::ProbeBw);
}

/// PROBE_BW starts at a random phase, never the 3/4 one, from the flow's stream:
/// the same seed gives the same phase.
#[test]
fn probe_bw_never_starts_in_the_draining_phase() {
    let mut seen = [0u32; CYCLE_LEN];
    for seed in 0..700 {
        let mut b = Bbr::new(10.0, seed);
        b.reset_probe_bw_mode(Time::ZERO);
        seen[b.cycle_idx] += 1;
        let mut again = Bbr::new(10.0, seed);
        again.reset_probe_bw_mode(Time::ZERO);
        assert_eq!(again.cycle_idx, b.cycle_idx);
    }
    assert_eq!(seen[1], 0, "{seen:?}");
    assert!(
        seen.iter().enumerate().all(|(i, &n)| i == 1 || n > 60),
        "{seen:?}"
    );
}

/// The min-RTT estimate keeps its lowest sample for 10 s; a higher sample
/// replaces it only once it expired, and the expiry starts PROBE_RTT.
#[test]
fn min_rtt_lasts_ten_seconds() {
    let mut b = Bbr::new(10.0, 1);
    let mut r = RateSampler::default();
    let mut cwnd = 20.0;
    b.mode = Mode::ProbeBw;
    let mut feed = |b: &mut Bbr, t: Dur, rtt: Dur| {
        let mut rs = sample(0, ms(50), 0, rtt);
        rs.interval = None;
        b.update_min_rtt(&rs, &mut r, &ack(at(t), 20), &mut cwnd);
    };
    feed(&mut b, ms(0), ms(50));
    feed(&mut b, ms(9_000), ms(80));
    assert_eq!((b.min_rtt, b.mode), (Some(ms(50)), Mode::ProbeBw));
    feed(&mut b, ms(10_001), ms(80));
    assert_eq!((b.min_rtt, b.mode), (Some(ms(80)), Mode::ProbeRtt));
}

/// A paced BBR v1 sender of 1500-byte packets with a window of 10 to 10,000.
fn bbr_config() -> TcpConfig {
    TcpConfig {
        variant: Variant::Bbr,
        packet_size: 1500,
        initial_window: 10,
        max_window: 10_000,
        pacing: true,
        min_rto: Dur::from_secs(5),
        ..Default::default()
    }
}

/// A sender over an ideal path: a bottleneck of `pps` packets per second and
/// a base RTT `rtt`, never a loss. Calls `see` after every ACK.
fn drive(seed: u64, pps: f64, rtt: Dur, until: Time, see: impl FnMut(Time, &TcpSender)) {
    let cfg = bbr_config();
    let path = Path {
        pps,
        rtt,
        buffer: None,
    };
    assert_eq!(test_path::drive(&cfg, seed, &path, until, see), 0);
}

/// Over 1000 packets/s and 40 ms: STARTUP, DRAIN, then PROBE_BW, in that order;
/// the bandwidth estimate is the bottleneck's, the min-RTT the base RTT.
#[test]
fn a_flow_starts_up_drains_and_probes() {
    let mut modes = vec![];
    let mut last = None;
    drive(3, 1000.0, ms(40), at(ms(3000)), |_, s| {
        let b = s.bbr_model().unwrap();
        if modes.last() != Some(&b.mode) {
            modes.push(b.mode);
        }
        last = Some((b.max_bw(), b.min_rtt(), b.rounds()));
    });
    assert_eq!(modes, [Mode::Startup, Mode::Drain, Mode::ProbeBw]);
    let (bw, rtt, rounds) = last.unwrap();
    assert!((bw / 1000.0 - 1.0).abs() < 0.03, "{bw}");
    assert!(rtt.unwrap() >= ms(40) && rtt.unwrap() < ms(42), "{rtt:?}");
    assert!(rounds > 40, "{rounds}");
}

/// PROBE_BW cycles 5/4, 3/4, then 1 six times, in that order, each phase of
/// gain 1 one min-RTT long (5/4 lasts until 5/4 BDP is in flight, 3/4 may end
/// early, once the flight is down to one BDP).
#[test]
fn probe_bw_cycles_its_gains_in_order() {
    let mut phases: Vec<(Time, usize)> = vec![];
    drive(5, 1000.0, ms(40), at(ms(4000)), |now, s| {
        let b = s.bbr_model().unwrap();
        if b.mode == Mode::ProbeBw && phases.last().map(|p| p.1) != Some(b.cycle_idx) {
            phases.push((now, b.cycle_idx));
            assert_eq!(b.pacing_gain, PACING_GAIN[b.cycle_idx]);
        }
    });
    assert!(phases.len() > 40, "{}", phases.len());
    for w in phases.windows(2) {
        assert_eq!(w[1].1, (w[0].1 + 1) % CYCLE_LEN, "{phases:?}");
    }
    for w in phases[1..].windows(2) {
        let len = w[1].0.saturating_since(w[0].0);
        match w[0].1 {
            0 => assert!(len > ms(40), "phase 0 lasted {len}"),
            1 => {}
            i => assert!(len > ms(40) && len < ms(50), "phase {i} lasted {len}"),
        }
    }
}

/// PROBE_RTT comes every 10 s when the RTT never falls below its minimum, holds
/// the window at 4 packets, and lasts 200 ms and a round.
#[test]
fn probe_rtt_every_ten_seconds_at_four_packets() {
    let mut spans: Vec<(Time, Time)> = vec![];
    drive(9, 1000.0, ms(40), at(Dur::from_secs(32)), |now, s| {
        let b = s.bbr_model().unwrap();
        if b.mode == Mode::ProbeRtt {
            assert!(s.cwnd() <= MIN_CWND, "{}", s.cwnd());
            match spans.last_mut() {
                Some((_, end)) if now.saturating_since(*end) < ms(100) => *end = now,
                _ => spans.push((now, now)),
            }
        }
    });
    assert_eq!(spans.len(), 3, "{spans:?}");
    for (start, end) in &spans {
        let len = end.saturating_since(*start);
        assert!(len >= ms(200) && len < ms(300), "{len}");
    }
    for w in spans.windows(2) {
        let gap = w[1].0.saturating_since(w[0].1);
        assert!(gap > ms(9_900) && gap < ms(10_200), "{gap}");
    }
}

/// The same seed gives the same run.
#[test]
fn runs_are_deterministic() {
    let trace = |seed| {
        let mut v = vec![];
        drive(seed, 1000.0, ms(40), at(ms(2000)), |now, s| {
            v.push((now, s.cwnd()))
        });
        v
    };
    assert_eq!(trace(4), trace(4));
}

/// A bottleneck that queues nothing (a policer with a one-packet bucket):
/// probing at 5/4 loses a fifth and more of what it sends, interval after
/// interval at the same rate, so BBR finds the policer and paces at its rate
/// with gain 1; over an ideal path it never does.
#[test]
fn a_policer_is_found_and_an_ideal_path_is_not() {
    let cfg = TcpConfig {
        min_rto: Dur::from_secs(1),
        ..bbr_config()
    };
    let policed = |buffer| {
        let path = Path {
            pps: 1000.0,
            rtt: ms(40),
            buffer,
        };
        let (mut found, mut gains) = (false, vec![]);
        test_path::drive(&cfg, 5, &path, at(ms(20_000)), |_, s| {
            let b = s.bbr_model().unwrap();
            if b.policed() {
                found = true;
                gains.push(b.pacing_gain);
            }
        });
        (found, gains)
    };
    let (found, gains) = policed(Some(0));
    assert!(found);
    assert!(gains.iter().all(|&g| g == 1.0), "{gains:?}");
    assert!(!policed(None).0);
}
