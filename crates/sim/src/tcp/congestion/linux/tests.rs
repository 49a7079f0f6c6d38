//! The Linux profile's arithmetic against the kernel's integer results.

use super::*;
use aqm::Dur;

#[test]
fn cubic_root_rounds_as_the_kernel_and_stays_within_its_error() {
    // Small arguments come from the table alone.
    for (a, root) in [(0u64, 0u32), (1, 1), (8, 2), (27, 3), (63, 4)] {
        assert_eq!(cubic_root(a), root, "cbrt({a})");
    }
    // 1000: table 156 for the top bits, one Newton step, x 341 >> 10: 10.
    assert_eq!(cubic_root(1000), 10);
    // Integer rounding: never more than one off.
    for a in 64..100_000u64 {
        let exact = (a as f64).cbrt();
        assert!((cubic_root(a) as f64 - exact).abs() < 1.0, "cbrt({a})");
    }
    // What CUBIC takes roots of (CUBE_FACTOR x the gap below W_max, from 2^31):
    // under 1% off, about 0.2% on average, as the kernel's comment says.
    let (mut a, mut sum, mut n) = (CUBE_FACTOR, 0.0, 0.0);
    while a < 1 << 60 {
        let exact = (a as f64).cbrt();
        let err = (cubic_root(a) as f64 - exact).abs() / exact;
        assert!(err < 0.01, "cbrt({a}) = {}, {exact}", cubic_root(a));
        sum += err;
        n += 1.0;
        a = a * 9 / 8 + 7;
    }
    assert!(sum / n < 0.004, "mean error {}", sum / n);
}

#[test]
fn slow_start_grows_by_segments_acked_and_passes_the_rest_to_avoidance() {
    let mut s = Segments::default();
    // 10 -> ssthresh 12 takes 2 of the 4 segments; 2 go to avoidance (w = 12).
    assert_eq!(s.reno(10, 12, 4), 12);
    let mut cwnd = 12;
    // Ten more single-segment ACKs: the count reaches 12 and cwnd grows by one.
    for k in 0..10 {
        cwnd = s.reno(cwnd, 12, 1);
        assert_eq!(cwnd, if k < 9 { 12 } else { 13 }, "ACK {k}");
    }
    // One segment per window of ACKs after that, exactly.
    for _ in 0..13 {
        cwnd = s.reno(cwnd, 12, 1);
    }
    assert_eq!(cwnd, 14);
    assert_eq!(reno_ssthresh(15), 7);
    assert_eq!(reno_ssthresh(3), 2);
}

#[test]
fn a_loss_sets_ssthresh_to_717_1024_and_fast_convergence_lowers_w_max() {
    let mut c = LinuxCubic::new(false);
    assert_eq!(c.on_signal(100, false), 70); // 100 x 717 / 1024 = 70.02
    assert_eq!(c.last_max_cwnd, 100);
    // A loss below the last maximum: W_max = cwnd (1 + beta) / 2 = 90 x 1741 / 2048.
    assert_eq!(c.on_signal(90, false), 63);
    assert_eq!(c.last_max_cwnd, 76);
    assert_eq!(c.on_signal(2, false), 2, "never below two segments");
    // A timeout forgets the maximum: the next curve starts capped at 5% per RTT.
    c.on_signal(50, true);
    assert_eq!(c.last_max_cwnd, 0);
    assert_eq!(c.delay_min_us, 0);
}

/// A window-limited flow at a fixed RTT, each round's ACKs spread evenly over
/// it, one segment each; returns cwnd after each round.
fn rounds(c: &mut LinuxCubic, cwnd: u32, ssthresh: u32, rtt: Dur, n: u32) -> Vec<u32> {
    let mut now = Time::ZERO + Dur::from_secs(10);
    let mut cwnd = cwnd;
    let mut out = vec![];
    for _ in 0..n {
        let acks = cwnd;
        let gap = Dur::from_nanos(rtt.as_nanos() / acks as u64);
        for _ in 0..acks {
            now += gap;
            let r = Round {
                now,
                cwnd,
                ssthresh,
                snd_una: 0,
                snd_nxt: 0,
                pacing_rate: 0.0,
            };
            c.on_rtt(rtt, &r);
            cwnd = c.on_ack(cwnd, ssthresh, 1, now);
        }
        out.push(cwnd);
    }
    out
}

#[test]
fn the_curve_returns_to_w_max_about_k_seconds_after_a_loss() {
    let mut c = LinuxCubic::new(false);
    let ssthresh = c.on_signal(143, false); // W_max 143, cwnd 100
    assert_eq!(ssthresh, 100);
    // K = cbrt((143 - 100) / 0.4) = 4.75 s. Each round's window lies on the
    // curve W(t) = 0.4 (t - K)^3 + 143 at its end (aimed one minimum RTT ahead,
    // it gets there as the round ends), within
    // the two segments that integer `cnt` and the jiffy clock round away:
    // concave up to W_max, the plateau, convex beyond.
    let w = rounds(&mut c, ssthresh, ssthresh, Dur::from_millis(100), 80);
    for (i, &got) in w.iter().enumerate() {
        let t = (i + 1) as f64 * 0.1;
        let curve = 0.4 * (t - 4.75f64).powi(3) + 143.0;
        assert!(
            (got as f64 - curve).abs() <= 2.0,
            "round {i}: cwnd {got}, curve {curve:.1}: {w:?}"
        );
    }
    assert!(
        w[30..60].iter().all(|&x| (142..=144).contains(&x)),
        "plateau: {w:?}"
    );
}

#[test]
fn the_friendly_region_grows_eight_fifteenths_of_a_segment_per_round_trip() {
    let mut c = LinuxCubic::new(false);
    let ssthresh = c.on_signal(143, false);
    // At 10 ms the curve is nearly flat for the first 0.3 s (0.27 segments per
    // round trip); the TCP-friendly estimate, 8/15 per round trip, leads.
    let w = rounds(&mut c, ssthresh, ssthresh, Dur::from_millis(10), 30);
    let grown = w[29] - 100;
    assert!(
        (14..=17).contains(&grown),
        "{grown} segments in 30 RTTs: {w:?}"
    );
}

#[test]
fn hystart_leaves_slow_start_when_the_delay_rises_by_its_clamped_threshold() {
    let mut c = LinuxCubic::new(true);
    let base = Dur::from_millis(40);
    let mut now = Time::ZERO;
    let mut cwnd = 10u32;
    let mut snd_nxt = 10u32;
    let mut una = 0u32;
    let mut exit = None;
    // Slow start rounds: each round's ACKs 1 ms apart (no train spanning half
    // the RTT), RTT rising 1 ms per round after cwnd 32, so a rise above 4 ms
    // (delay_min / 8 = 5 ms, within [4, 16] ms) ends slow start.
    'rounds: for round in 0..20u32 {
        let rtt = base + Dur::from_millis(if cwnd >= 32 { round as u64 * 2 } else { 0 });
        let acks = cwnd;
        let round_start = now + base;
        for i in 0..acks {
            now = round_start + Dur::from_micros(i as u64 * 50);
            una += 1;
            let r = Round {
                now,
                cwnd,
                ssthresh: u32::MAX,
                snd_una: una,
                snd_nxt,
                pacing_rate: 0.0,
            };
            if let Some(s) = c.on_rtt(rtt, &r) {
                exit = Some((round, s, rtt));
                break 'rounds;
            }
            cwnd = c.on_ack(cwnd, u32::MAX, 1, now);
            snd_nxt += 2;
        }
    }
    let (round, ssthresh, rtt) = exit.expect("HyStart ends slow start");
    assert!(ssthresh >= 32, "{round} {ssthresh}");
    assert!(rtt > base + Dur::from_millis(5), "rtt {rtt} at the exit");
    assert!(!c.hystart_active());
}

#[test]
fn hystart_ack_train_ends_slow_start_at_half_the_minimum_rtt() {
    let mut c = LinuxCubic::new(true);
    let rtt = Dur::from_millis(40);
    let mut cwnd = 16u32;
    // The round ends beyond these 40 ACKs.
    let mut snd_nxt = 100u32;
    // ACKs 1 ms apart, back to back: the train spans 20 ms (half of 40 ms)
    // after 20 ACKs of one round.
    let start = Time::ZERO + Dur::from_secs(1);
    let mut found = None;
    for i in 0..40u32 {
        let now = start + Dur::from_millis(i as u64);
        let r = Round {
            now,
            cwnd,
            ssthresh: u32::MAX,
            snd_una: i + 1,
            snd_nxt,
            pacing_rate: 0.0,
        };
        if let Some(s) = c.on_rtt(rtt, &r) {
            found = Some((i, s));
            break;
        }
        cwnd = c.on_ack(cwnd, u32::MAX, 1, now);
        snd_nxt += 2;
    }
    let (i, ssthresh) = found.expect("the ACK train ends slow start");
    // The first ACK opened the round at 1 s; the train passes 20 ms at ACK 21.
    assert_eq!(i, 21);
    assert_eq!(ssthresh, 16 + 21);
}
