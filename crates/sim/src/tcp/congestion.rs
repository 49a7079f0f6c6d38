//! Congestion control: how the window grows on an ACK and how far it falls on a
//! congestion signal (a loss, an ECN echo, a timeout). Loss recovery (which packet
//! to resend, when recovery ends) stays in the sender; this is only the window
//! arithmetic, so a new algorithm is one variant here.
//!
//! - Reno: slow start (+1 per ACK, or up to 2 packets per ACK with byte counting,
//!   RFC 3465 L = 2) below ssthresh, +1/cwnd per ACK above; a signal halves the
//!   window, as ns-2 (`slowdown(CLOSE_SSTHRESH_HALF)`) and Linux
//!   (`tcp_reno_ssthresh`) compute it. RFC 5681's FlightSize / 2 differs after a
//!   long NewReno recovery, when snd_max - snd_una counts thousands of packets that
//!   already reached the receiver out of order.
//! - CUBIC (RFC 9438): in congestion avoidance the window follows
//!   `W_cubic(t) = C (t - K)^3 + W_max` (C = 0.4 packets/s^3), `t` the time since
//!   the avoidance stage began and `K = cbrt((W_max - cwnd_epoch) / C)`, so the
//!   curve starts at the window the stage began with and reaches `W_max` at `t = K`.
//!   Each ACK moves cwnd by `(target - cwnd) / cwnd` toward `target =
//!   W_cubic(t + srtt)` clamped to `[cwnd, 1.5 cwnd]` (section 4.2), unless the
//!   Reno-friendly estimate `W_est` (grown by `alpha_cubic` per window of ACKs,
//!   `alpha_cubic = 3 (1 - beta) / (1 + beta)` until `W_est` reaches the window
//!   before the last reduction, then 1) is above the curve, when cwnd = `W_est`
//!   (section 4.3). A signal multiplies the window by `beta_cubic = 0.7`; fast
//!   convergence lowers `W_max` to `cwnd (1 + beta) / 2` when a loss comes below
//!   the previous `W_max` (4.7). After a timeout, or when no signal has ever set
//!   `W_max`, the next stage starts with `K = 0` and `W_max` = its first window
//!   (4.8, 4.10). Like Reno here (and Linux's `bictcp_recalc_ssthresh`) the
//!   reduction is of cwnd, not of RFC 9438's flight size. Per-ACK growth follows
//!   `counting`: one ACK's worth with packet counting (ns-2), the packets it
//!   acknowledges with byte counting (Linux), so the Reno-friendly region is
//!   friendly to this simulator's Reno under either setting. Not modelled: the
//!   application-limited rule (bulk flows are never limited; web objects restart
//!   the state) and spurious-congestion undo (the sender has no undo).
//! - HyStart++ (RFC 9406), an option for CUBIC (`hystart = true`), as RFC 9438
//!   section 4.10 recommends: during the first slow start (ssthresh still
//!   infinite) the minimum RTT of each round (8 samples at least) is compared
//!   with the previous round's; a rise of `clamp(min_rtt / 8, 4 ms, 16 ms)`
//!   enters Conservative Slow Start (growth / 4), which either ends after 5
//!   rounds (ssthresh = cwnd: congestion avoidance without a loss) or returns to
//!   slow start when the RTT falls back below the baseline. Linux runs the older
//!   HyStart (ACK trains and delay, Ha and Rhee 2011) instead.

use super::{Counting, TcpConfig, Variant};
use aqm::Time;

/// RFC 9438 section 4.1.
const BETA_CUBIC: f64 = 0.7;
const C_CUBIC: f64 = 0.4;
const ALPHA_CUBIC: f64 = 3.0 * (1.0 - BETA_CUBIC) / (1.0 + BETA_CUBIC);

/// RFC 9406 section 4.2 (an unpaced sender's L = 8 is above what `counting`
/// lets one ACK add, so it never binds here).
const HS_MIN_RTT_THRESH: f64 = 0.004;
const HS_MAX_RTT_THRESH: f64 = 0.016;
const HS_MIN_RTT_DIVISOR: f64 = 8.0;
const HS_N_RTT_SAMPLE: u32 = 8;
const HS_CSS_GROWTH_DIVISOR: f64 = 4.0;
const HS_CSS_ROUNDS: u32 = 5;

/// What a congestion-control algorithm learns from one new ACK outside recovery.
#[derive(Copy, Clone, Debug)]
pub struct AckInfo {
    pub now: Time,
    /// Packets this ACK newly acknowledged.
    pub acked: u32,
    /// The cumulative ACK (one past the highest packet acknowledged).
    pub ack: u32,
    /// One past the highest packet sent.
    pub snd_max: u32,
    /// The smoothed RTT, seconds (0 before the first sample).
    pub srtt: f64,
    /// This ACK's own RTT sample, when it acknowledges a packet sent once.
    pub rtt: Option<f64>,
}

/// The kind of congestion signal.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Signal {
    /// Three duplicate ACKs (fast retransmit).
    Loss,
    /// An ECN echo.
    Ecn,
    /// The retransmission timer expired.
    Timeout,
}

/// A congestion-control algorithm and its state.
#[derive(Debug, Clone)]
pub enum Congestion {
    Reno,
    /// Boxed: CUBIC's state is 100-odd bytes every Reno sender would otherwise carry.
    Cubic(Box<Cubic>),
}

/// CUBIC's state (RFC 9438 section 4.1's variables).
#[derive(Debug, Clone)]
pub struct Cubic {
    /// The window before the last reduction, after fast convergence; `None` when
    /// no congestion event has set it or a timeout cleared it.
    w_max: Option<f64>,
    /// cwnd when ssthresh was last set (the Reno-friendly estimate's switch point).
    cwnd_prior: f64,
    /// The current congestion-avoidance stage; `None` until its first ACK.
    epoch: Option<Epoch>,
    hystart: Option<HyStart>,
}

#[derive(Debug, Clone, Copy)]
struct Epoch {
    start: Time,
    k: f64,
    w_max: f64,
    w_est: f64,
}

/// RFC 9406's state.
#[derive(Debug, Clone, Copy)]
struct HyStart {
    /// The round ends when the ACK reaches this (SND.NXT at its start).
    window_end: u32,
    last_round_min: f64,
    current_round_min: f64,
    samples: u32,
    /// In Conservative Slow Start: the baseline RTT and the rounds done there.
    css: Option<(f64, u32)>,
    /// Off for good once the first slow start ended.
    done: bool,
}

impl HyStart {
    fn new() -> Self {
        HyStart {
            window_end: 0,
            last_round_min: f64::INFINITY,
            current_round_min: f64::INFINITY,
            samples: 0,
            css: None,
            done: false,
        }
    }
}

impl Cubic {
    fn new(cfg: &TcpConfig) -> Self {
        Cubic {
            w_max: None,
            cwnd_prior: 0.0,
            epoch: None,
            hystart: cfg.hystart.then(HyStart::new),
        }
    }

    /// `W_cubic(t)` of the current stage, `t` seconds after it began.
    fn w_cubic(e: &Epoch, t: f64) -> f64 {
        C_CUBIC * (t - e.k).powi(3) + e.w_max
    }

    fn avoid(&mut self, cwnd: f64, info: &AckInfo, per_ack: f64) -> f64 {
        let e = self.epoch.get_or_insert_with(|| {
            // A new stage: the curve passes through today's window at t = 0.
            let (w_max, k) = match self.w_max {
                Some(w) => (w, ((w - cwnd) / C_CUBIC).cbrt()),
                None => (cwnd, 0.0),
            };
            Epoch {
                start: info.now,
                k,
                w_max,
                w_est: cwnd,
            }
        });
        if self.w_max.is_none() {
            self.w_max = Some(e.w_max);
        }
        let t = info.now.saturating_since(e.start).as_secs_f64();
        let target = Self::w_cubic(e, t + info.srtt).clamp(cwnd, 1.5 * cwnd);
        let alpha = if e.w_est >= self.cwnd_prior {
            1.0
        } else {
            ALPHA_CUBIC
        };
        e.w_est += alpha * per_ack / cwnd;
        if Self::w_cubic(e, t) < e.w_est {
            e.w_est
        } else {
            cwnd + (target - cwnd) / cwnd * per_ack
        }
    }

    fn on_signal(&mut self, cwnd: f64, signal: Signal) -> f64 {
        self.epoch = None;
        self.cwnd_prior = cwnd;
        if let Some(h) = &mut self.hystart {
            h.done = true;
        }
        if signal == Signal::Timeout {
            // RFC 9438 4.8: the next stage starts its own curve (K = 0).
            self.w_max = None;
        } else {
            self.w_max = Some(match self.w_max {
                // Fast convergence: a flow losing below its last maximum is
                // probably meeting a newcomer, so it yields some more.
                Some(w) if cwnd < w => cwnd * (1.0 + BETA_CUBIC) / 2.0,
                _ => cwnd,
            });
        }
        cwnd * BETA_CUBIC
    }

    /// HyStart++ per ACK in slow start: the growth divisor to use, and whether
    /// slow start ends here (ssthresh = cwnd).
    fn hystart(&mut self, info: &AckInfo) -> (f64, bool) {
        let Some(h) = &mut self.hystart else {
            return (1.0, false);
        };
        if h.done {
            return (1.0, false);
        }
        if let Some(r) = info.rtt {
            h.current_round_min = h.current_round_min.min(r);
            h.samples += 1;
        }
        let mut end = false;
        match h.css {
            None => {
                if h.samples >= HS_N_RTT_SAMPLE
                    && h.current_round_min.is_finite()
                    && h.last_round_min.is_finite()
                {
                    let thresh = (h.last_round_min / HS_MIN_RTT_DIVISOR)
                        .clamp(HS_MIN_RTT_THRESH, HS_MAX_RTT_THRESH);
                    if h.current_round_min >= h.last_round_min + thresh {
                        h.css = Some((h.current_round_min, 0));
                    }
                }
            }
            Some((baseline, _)) => {
                if h.samples >= HS_N_RTT_SAMPLE && h.current_round_min < baseline {
                    h.css = None; // a false alarm: back to slow start
                }
            }
        }
        if info.ack > h.window_end {
            // The first packet of the round is acknowledged: a round ended, and
            // the next ends with the first packet not yet sent.
            h.window_end = info.snd_max;
            h.last_round_min = h.current_round_min;
            h.current_round_min = f64::INFINITY;
            h.samples = 0;
            if let Some((_, rounds)) = &mut h.css {
                *rounds += 1;
                if *rounds >= HS_CSS_ROUNDS {
                    end = true;
                }
            }
        }
        let divisor = if h.css.is_some() {
            HS_CSS_GROWTH_DIVISOR
        } else {
            1.0
        };
        if end {
            h.done = true;
            h.css = None;
        }
        (divisor, end)
    }
}

impl Congestion {
    pub fn new(cfg: &TcpConfig) -> Self {
        match cfg.variant {
            Variant::Cubic => Congestion::Cubic(Box::new(Cubic::new(cfg))),
            Variant::Reno | Variant::NewReno | Variant::Sack => Congestion::Reno,
        }
    }

    /// Whether the sender should time every packet (HyStart++ wants an RTT
    /// sample per ACK during the first slow start).
    pub fn wants_rtt_samples(&self) -> bool {
        matches!(self, Congestion::Cubic(c) if c.hystart.is_some_and(|h| !h.done))
    }

    /// Grows `cwnd` (and may end slow start by setting `ssthresh`) on a new ACK
    /// outside recovery; capped at the receiver's window.
    #[inline]
    pub fn on_ack(&mut self, cwnd: &mut f64, ssthresh: &mut f64, info: &AckInfo, cfg: &TcpConfig) {
        let acked = info.acked as f64;
        let per_ack = match cfg.counting {
            Counting::Packet => 1.0,
            Counting::Byte => acked,
        };
        let slow_start = match cfg.counting {
            Counting::Packet => 1.0,
            Counting::Byte => acked.min(2.0),
        };
        let grown = match self {
            Congestion::Reno => {
                if *cwnd < *ssthresh {
                    *cwnd + slow_start
                } else {
                    *cwnd + per_ack / *cwnd
                }
            }
            Congestion::Cubic(c) => {
                if *cwnd < *ssthresh {
                    let (divisor, end) = c.hystart(info);
                    let w = *cwnd + slow_start / divisor;
                    if end {
                        // RFC 9438 4.10: W_max is undefined; the stage starts at K = 0.
                        *ssthresh = w;
                        c.cwnd_prior = w;
                        c.epoch = None;
                    }
                    w
                } else {
                    c.avoid(*cwnd, info, per_ack)
                }
            }
        };
        *cwnd = grown.min(cfg.max_window as f64);
    }

    /// The window a congestion signal at window `cwnd` leads to, before any floor
    /// (ssthresh is never below 2 packets; cwnd after an ECN echo never below 1).
    #[inline]
    pub fn on_signal(&mut self, cwnd: f64, signal: Signal, cfg: &TcpConfig) -> f64 {
        let cwnd = cwnd.min(cfg.max_window as f64);
        match self {
            Congestion::Reno => cwnd / 2.0,
            Congestion::Cubic(c) => c.on_signal(cwnd, signal),
        }
    }

    /// A web object ended: the next starts as a new connection would.
    pub fn reset(&mut self, cfg: &TcpConfig) {
        *self = Congestion::new(cfg);
    }
}

#[cfg(test)]
mod tests {
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
}
