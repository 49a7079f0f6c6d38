//! CUBIC (RFC 9438) against its curve, fast convergence, the Reno-friendly
//! region and ECN; HyStart leaving slow start on a rising RTT.

use super::*;
use aqm::Dur;
use std::collections::VecDeque;

/// A window-limited sender with an ideal ACK clock: every packet is
/// acknowledged `rtt(sent)` after it left, in order, one ACK per packet.
struct Clock {
    cc: Congestion,
    cfg: TcpConfig,
    cwnd: f64,
    ssthresh: f64,
    now: Time,
    ack: u32,
    in_flight: VecDeque<(Time, Time)>,
    srtt: f64,
}

impl Clock {
    fn new(cfg: TcpConfig, cwnd: f64, ssthresh: f64) -> Self {
        Clock {
            cc: Congestion::new(&cfg),
            cfg,
            cwnd,
            ssthresh,
            now: Time::ZERO,
            ack: 0,
            in_flight: VecDeque::new(),
            srtt: 0.0,
        }
    }

    fn snd_max(&self) -> u32 {
        self.ack + self.in_flight.len() as u32
    }

    fn fill(&mut self, rtt: f64) {
        while (self.in_flight.len() as f64) < self.cwnd.floor() {
            let back = self.now + Dur::from_secs_f64(rtt);
            self.in_flight.push_back((self.now, back));
        }
    }

    /// Runs the clock until `until`, with the RTT a function of the send time.
    fn run(&mut self, until: Time, rtt: impl Fn(Time) -> f64, mut each: impl FnMut(&Self)) {
        self.fill(rtt(self.now));
        while let Some(&(sent, back)) = self.in_flight.front() {
            if back > until {
                break;
            }
            self.in_flight.pop_front();
            self.now = back;
            self.ack += 1;
            let sample = back.saturating_since(sent).as_secs_f64();
            self.srtt = if self.srtt == 0.0 {
                sample
            } else {
                0.875 * self.srtt + 0.125 * sample
            };
            let info = AckInfo {
                now: self.now,
                acked: 1,
                ack: self.ack,
                snd_max: self.snd_max(),
                srtt: self.srtt,
                rtt: Some(sample),
                ece: false,
            };
            self.cc
                .on_ack(&mut self.cwnd, &mut self.ssthresh, &info, &self.cfg);
            each(self);
            self.fill(rtt(self.now));
        }
        self.now = until;
    }

    /// A loss (or mark) now: the window falls as the sender would set it.
    fn signal(&mut self, signal: Signal) {
        let w = self.cc.on_signal(self.cwnd, signal, &self.cfg);
        self.ssthresh = w.max(2.0);
        self.cwnd = if signal == Signal::Timeout { 1.0 } else { w };
        self.in_flight.clear();
    }
}

fn cubic() -> TcpConfig {
    TcpConfig {
        variant: Variant::Cubic,
        max_window: 100_000,
        ..Default::default()
    }
}

fn w_cubic(t: f64, k: f64, w_max: f64) -> f64 {
    C_CUBIC * (t - k).powi(3) + w_max
}

fn secs(s: f64) -> Time {
    Time::ZERO + Dur::from_secs_f64(s)
}

/// One congestion-avoidance stage as RFC 9438 defines it: the curve through
/// `w0` at its start, and the Reno-friendly estimate from `w0`, which grows
/// alpha_cubic per RTT up to `prior` (the window before the reduction) and
/// one packet per RTT after. The window is the larger of the two.
struct Stage {
    k: f64,
    w_max: f64,
    w0: f64,
    prior: f64,
    rtt: f64,
}

impl Stage {
    fn curve(&self, t: f64) -> f64 {
        w_cubic(t, self.k, self.w_max)
    }
    fn reno(&self, t: f64) -> f64 {
        let rounds = t / self.rtt;
        let to_prior = (self.prior - self.w0) / ALPHA_CUBIC;
        if rounds <= to_prior {
            self.w0 + ALPHA_CUBIC * rounds
        } else {
            self.prior + (rounds - to_prior)
        }
    }
}

/// Checks the window once per RTT from the stage's first ACK (one RTT after
/// the reduction at `from`) until `to`, and counts the RTTs where the curve,
/// and where the Reno-friendly estimate, was the larger. Each ACK chases the
/// curve one RTT ahead (`W_cubic(t + RTT)`), so the window lies between the
/// curve now and the curve an RTT later; tolerance one packet (ACKs move it
/// in 1/cwnd steps).
#[track_caller]
fn assert_follows(c: &mut Clock, s: &Stage, from: f64, to: f64) -> (u32, u32) {
    let t0 = from + s.rtt;
    let (mut curve_led, mut reno_led) = (0, 0);
    let mut t = t0 + s.rtt;
    while t < to {
        c.run(secs(t), |_| s.rtt, |_| {});
        let (curve, reno) = (s.curve(t - t0), s.reno(t - t0));
        if curve >= reno {
            curve_led += 1;
        } else {
            reno_led += 1;
        }
        let ahead = s.curve(t - t0 + s.rtt);
        let (lo, hi) = (curve.max(reno) - 1.0, ahead.max(reno) + 1.0);
        assert!(
            lo <= c.cwnd && c.cwnd <= hi,
            "t - t_epoch = {:.2}: cwnd {:.2}, W_cubic {curve:.2} (an RTT later \
                 {ahead:.2}), W_est {reno:.2}",
            t - t0,
            c.cwnd
        );
        t += s.rtt;
    }
    (curve_led, reno_led)
}

#[test]
fn cubic_reduces_by_beta_and_then_follows_the_cubic_curve() {
    let rtt = 0.1;
    let mut c = Clock::new(cubic(), 100.0, 100.0);
    c.signal(Signal::Loss);
    assert!((c.cwnd - 70.0).abs() < 1e-9);
    assert!((c.ssthresh - 70.0).abs() < 1e-9);
    // K = cbrt((W_max - cwnd_epoch) / C) = cbrt(30 / 0.4) = 4.2 s: concave
    // below W_max until K, a plateau at W_max, convex above it after K,
    // until the Reno-friendly estimate (at W_max after 57 RTTs, then one
    // packet per RTT) overtakes the slow start of the convex part.
    let s = Stage {
        k: (30.0f64 / 0.4).cbrt(),
        w_max: 100.0,
        w0: 70.0,
        prior: 100.0,
        rtt,
    };
    let (curve_led, reno_led) = assert_follows(&mut c, &s, 0.0, 8.0);
    assert!(curve_led > 40, "{curve_led}");
    assert!(reno_led > 10);
    assert!(c.cwnd > 110.0, "{}", c.cwnd);
    // With a longer RTT the curve leads throughout, well into the convex part.
    let rtt = 0.4;
    let mut c = Clock::new(cubic(), 100.0, 100.0);
    c.signal(Signal::Loss);
    let s = Stage { rtt, ..s };
    let (curve_led, reno_led) = assert_follows(&mut c, &s, 0.0, 8.0);
    assert!(curve_led > 15 && reno_led == 0, "{curve_led} {reno_led}");
    assert!(c.cwnd > 110.0, "{}", c.cwnd);
}

#[test]
fn fast_convergence_lowers_w_max_when_a_loss_comes_below_the_last_one() {
    let rtt = 0.2;
    let mut c = Clock::new(cubic(), 100.0, 100.0);
    c.signal(Signal::Loss);
    c.run(secs(2.0), |_| rtt, |_| {});
    let w = c.cwnd;
    assert!(w < 100.0 && w > 85.0, "{w}");
    c.signal(Signal::Loss);
    // W_max = w (1 + beta) / 2 rather than w; the stage starts at 0.7 w.
    let w_max = w * (1.0 + BETA_CUBIC) / 2.0;
    let s = Stage {
        k: ((w_max - BETA_CUBIC * w) / C_CUBIC).cbrt(),
        w_max,
        w0: BETA_CUBIC * w,
        prior: w,
        rtt,
    };
    let (curve_led, _) = assert_follows(&mut c, &s, 2.0, 2.0 + s.k + 2.0);
    assert!(curve_led > 10, "{curve_led}");
}

#[test]
fn after_a_timeout_the_curve_starts_at_k_zero() {
    let rtt = 0.1;
    let mut c = Clock::new(cubic(), 100.0, 100.0);
    c.signal(Signal::Loss);
    c.run(secs(1.0), |_| rtt, |_| {});
    let prior = c.cwnd;
    c.signal(Signal::Timeout);
    assert!((c.ssthresh - BETA_CUBIC * prior).abs() < 1e-9);
    // Slow start back to ssthresh, then a stage that begins with W_max =
    // cwnd_epoch and K = 0: only convex growth, W_max + C t^3.
    while c.cwnd < c.ssthresh {
        let next = c.now + Dur::from_millis(1);
        c.run(next, |_| rtt, |_| {});
    }
    let (t0, w0) = (c.now, c.cwnd);
    let s = Stage {
        k: 0.0,
        w_max: w0,
        w0,
        prior,
        rtt,
    };
    // The ACK that takes cwnd to ssthresh ends slow start; the stage starts
    // with the next ACK, within a millisecond.
    let from = t0.saturating_since(Time::ZERO).as_secs_f64() - rtt;
    let (curve_led, reno_led) = assert_follows(&mut c, &s, from, 9.0);
    assert!(curve_led > 5 && reno_led > 5, "{curve_led} {reno_led}");
}

#[test]
fn at_short_rtts_cubic_grows_like_reno_in_the_reno_friendly_region() {
    // W_max = 20 and RTT = 5 ms: the cubic curve barely moves in a few RTTs,
    // the Reno-friendly estimate grows alpha_cubic per RTT up to cwnd_prior
    // and then one packet per RTT, and cwnd follows it.
    let rtt = 0.005;
    let mut c = Clock::new(cubic(), 20.0, 20.0);
    c.signal(Signal::Loss);
    assert_eq!(c.cwnd, 14.0);
    let mut rounds = 0.0;
    let mut est: f64 = 14.0;
    let mut t = rtt;
    while est < 30.0 {
        c.run(secs(t), |_| rtt, |_| {});
        rounds += 1.0;
        est += if est >= 20.0 { 1.0 } else { ALPHA_CUBIC };
        let k = (6.0f64 / C_CUBIC).cbrt();
        assert!(w_cubic(t, k, 20.0) < c.cwnd, "round {rounds}: on the curve");
        assert!(
            (c.cwnd - est).abs() <= 0.5,
            "round {rounds}: cwnd {} vs W_est {est}",
            c.cwnd
        );
        t += rtt;
    }
}

#[test]
fn an_ecn_echo_reduces_by_beta_like_a_loss() {
    let mut cc = Congestion::new(&cubic());
    assert!((cc.on_signal(50.0, Signal::Ecn, &cubic()) - 35.0).abs() < 1e-9);
    let mut reno = Congestion::new(&TcpConfig::default());
    assert_eq!(
        reno.on_signal(50.0, Signal::Ecn, &TcpConfig::default()),
        25.0
    );
}

fn hystart() -> TcpConfig {
    TcpConfig {
        hystart: true,
        ..cubic()
    }
}

#[test]
fn hystart_leaves_slow_start_without_a_loss_when_the_rtt_rises() {
    // 40 ms until 0.3 s, then 60 ms: a rise above clamp(40 / 8, 4, 16) = 5 ms.
    let rtt = |sent: Time| if sent < secs(0.3) { 0.04 } else { 0.06 };
    let mut c = Clock::new(hystart(), 1.0, f64::INFINITY);
    let mut css_growth = Vec::new();
    c.run(secs(0.3), rtt, |_| {});
    let before = c.cwnd;
    assert!(c.ssthresh.is_infinite());
    c.run(secs(3.0), rtt, |c| css_growth.push(c.cwnd));
    assert!(c.ssthresh.is_finite(), "slow start never ended");
    assert!(!c.cc.wants_rtt_samples(), "HyStart++ is over for good");
    // Conservative slow start grows a quarter packet per ACK, from where
    // the RTT rise was seen, for five rounds: x 1.25 per round, where slow
    // start would have doubled.
    let quarter: Vec<usize> = (1..css_growth.len())
        .filter(|&i| (css_growth[i] - css_growth[i - 1] - 0.25).abs() < 1e-9)
        .collect();
    let w_css = css_growth[quarter[0] - 1];
    assert!(w_css > before, "{w_css} {before}");
    let growth = c.ssthresh / w_css;
    assert!(
        (1.25f64.powi(4)..=1.25f64.powi(5) * 1.01).contains(&growth),
        "{w_css} -> {}: x {growth}",
        c.ssthresh
    );
    assert_eq!(
        quarter.len(),
        ((c.ssthresh - w_css) * 4.0).round() as usize,
        "every step between is a quarter"
    );
}

#[test]
fn hystart_ignores_rtt_rises_below_its_threshold_and_plain_cubic_has_none() {
    // A 3 ms rise is below the 4 ms floor.
    let rtt = |sent: Time| if sent < secs(0.1) { 0.02 } else { 0.023 };
    let mut c = Clock::new(hystart(), 1.0, f64::INFINITY);
    c.run(secs(0.25), rtt, |_| {});
    assert!(c.ssthresh.is_infinite());
    assert!(c.cc.wants_rtt_samples());
    let mut plain = Clock::new(cubic(), 1.0, f64::INFINITY);
    plain.run(
        secs(0.3),
        |s| if s < secs(0.1) { 0.02 } else { 0.1 },
        |_| {},
    );
    assert!(plain.ssthresh.is_infinite());
    assert!(!plain.cc.wants_rtt_samples());
}
