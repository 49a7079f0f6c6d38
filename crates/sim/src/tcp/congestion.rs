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
//!   the state). The Linux profile's undo of a spurious reduction is the sender's
//!   (`sender/undo.rs`); the window it returns to is `undo_cwnd`'s.
//! - HyStart++ (RFC 9406), an option for CUBIC (`hystart = true`), as RFC 9438
//!   section 4.10 recommends: during the first slow start (ssthresh still
//!   infinite) the minimum RTT of each round (8 samples at least) is compared
//!   with the previous round's; a rise of `clamp(min_rtt / 8, 4 ms, 16 ms)`
//!   enters Conservative Slow Start (growth / 4), which either ends after 5
//!   rounds (ssthresh = cwnd: congestion avoidance without a loss) or returns to
//!   slow start when the RTT falls back below the baseline. Linux runs the older
//!   HyStart (ACK trains and delay, Ha and Rhee 2011) instead.

use super::bbr::BbrFlow;
use super::dctcp::Scalable;
use super::{Counting, TcpConfig, Variant};
use aqm::{Dur, Time};

pub mod linux;

use linux::{segments, LinuxCubic, Round, Segments};

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
    /// Packets this ACK newly delivered: acknowledged or SACKed by it, each
    /// counted once (a packet SACKed earlier is not credited again).
    pub acked: u32,
    /// The cumulative ACK (one past the highest packet acknowledged).
    pub ack: u32,
    /// One past the highest packet sent.
    pub snd_max: u32,
    /// The smoothed RTT, seconds (0 before the first sample).
    pub srtt: f64,
    /// This ACK's own RTT sample, when it acknowledges a packet sent once.
    pub rtt: Option<f64>,
    /// The ACK carried ECN-Echo (Prague does not grow on it).
    pub ece: bool,
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
    /// Boxed: CUBIC's state is 100-odd bytes every Reno sender would otherwise
    /// carry; one box for every other algorithm keeps this 8 bytes (the sender
    /// fits its allocation, `a_sender_fits_a_240_byte_allocation`).
    Boxed(Box<Boxed>),
}

/// The algorithms with state of their own.
#[derive(Debug, Clone)]
pub enum Boxed {
    Cubic(Cubic),
    /// Reno under the Linux profile: its segment count (`snd_cwnd_cnt`).
    LinuxReno(Segments),
    /// CUBIC under the Linux profile, as `tcp_cubic.c` ([`linux`]).
    LinuxCubic(LinuxCubic),
    /// DCTCP and Prague ([`super::dctcp`]).
    Scalable(Scalable),
    /// BBR ([`super::bbr`]), boxed again: its state is larger than CUBIC's and
    /// would grow every CUBIC flow's box.
    Bbr(Box<BbrFlow>),
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
        if cfg.is_linux() && !cfg.variant.is_bbr() {
            return Congestion::Boxed(Box::new(match cfg.variant {
                Variant::Cubic => Boxed::LinuxCubic(LinuxCubic::new(cfg.hystart)),
                Variant::Dctcp | Variant::Prague => Boxed::Scalable(Scalable::new(cfg.variant)),
                // BBR is the same under either profile (below).
                Variant::Reno | Variant::NewReno | Variant::Sack | Variant::Bbr | Variant::Bbr3 => {
                    Boxed::LinuxReno(Segments::default())
                }
            }));
        }
        match cfg.variant {
            Variant::Cubic => Congestion::Boxed(Box::new(Boxed::Cubic(Cubic::new(cfg)))),
            Variant::Dctcp | Variant::Prague => {
                Congestion::Boxed(Box::new(Boxed::Scalable(Scalable::new(cfg.variant))))
            }
            Variant::Bbr | Variant::Bbr3 => Congestion::Boxed(Box::new(Boxed::Bbr(Box::new(
                BbrFlow::new(cfg.variant, cfg.initial_window as f64, 0),
            )))),
            Variant::Reno | Variant::NewReno | Variant::Sack => Congestion::Reno,
        }
    }

    /// Whether the sender should time every packet (HyStart++ wants an RTT
    /// sample per ACK during the first slow start).
    pub fn wants_rtt_samples(&self) -> bool {
        matches!(self, Congestion::Boxed(b) if matches!(&**b, Boxed::Cubic(c) if c.hystart.is_some_and(|h| !h.done)))
    }

    /// An RTT sample of the Linux profile (the newest segment an ACK delivered,
    /// `cubictcp_acked`): CUBIC's minimum delay and HyStart. Returns the new
    /// ssthresh when HyStart ends slow start.
    pub fn on_linux_rtt(&mut self, rtt: Dur, round: &Round) -> Option<f64> {
        match self {
            Congestion::Boxed(b) => match &mut **b {
                Boxed::LinuxCubic(c) => c.on_rtt(rtt, round).map(|s| s as f64),
                _ => None,
            },
            Congestion::Reno => None,
        }
    }

    /// DCTCP's or Prague's alpha.
    pub fn alpha(&self) -> Option<f64> {
        match self {
            Congestion::Boxed(b) => match &**b {
                Boxed::Scalable(s) => Some(s.alpha()),
                Boxed::Cubic(_) | Boxed::LinuxReno(_) | Boxed::LinuxCubic(_) | Boxed::Bbr(_) => {
                    None
                }
            },
            Congestion::Reno => None,
        }
    }

    /// DCTCP's or Prague's state.
    #[inline]
    pub fn scalable(&mut self) -> Option<&mut Scalable> {
        match self {
            Congestion::Boxed(b) => match &mut **b {
                Boxed::Scalable(s) => Some(s),
                Boxed::Cubic(_) | Boxed::LinuxReno(_) | Boxed::LinuxCubic(_) | Boxed::Bbr(_) => {
                    None
                }
            },
            Congestion::Reno => None,
        }
    }

    /// BBR's state: it sets the window and the pacing rate itself on every ACK
    /// (the sender calls it), as Linux's `cong_control` does.
    #[inline]
    pub fn bbr(&mut self) -> Option<&mut BbrFlow> {
        match self {
            Congestion::Boxed(b) => match &mut **b {
                Boxed::Bbr(f) => Some(f),
                _ => None,
            },
            Congestion::Reno => None,
        }
    }

    /// BBR's state, to read.
    #[inline]
    pub fn bbr_ref(&self) -> Option<&BbrFlow> {
        match self {
            Congestion::Boxed(b) => match &**b {
                Boxed::Bbr(f) => Some(f),
                _ => None,
            },
            Congestion::Reno => None,
        }
    }

    /// The pacing rate a model-based control sets, packets per second.
    #[inline]
    pub fn pacing_rate(&self) -> Option<f64> {
        match self {
            Congestion::Boxed(b) => match &**b {
                Boxed::Bbr(f) => Some(f.model.pacing_rate()),
                _ => None,
            },
            Congestion::Reno => None,
        }
    }

    /// Seeds the algorithm's own randomness (BBR's PROBE_BW start phase).
    pub fn seed(&mut self, seed: u64, cfg: &TcpConfig) {
        if let Some(f) = self.bbr() {
            *f = BbrFlow::new(cfg.variant, cfg.initial_window as f64, seed);
        }
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
            Congestion::Boxed(b) => match &mut **b {
                Boxed::Scalable(s) => {
                    let prague_marked = s.is_prague() && info.ece;
                    if prague_marked {
                        *cwnd // Prague grows by the packets acknowledged unmarked
                    } else if *cwnd < *ssthresh {
                        *cwnd + slow_start
                    } else {
                        *cwnd + s.avoid(*cwnd, per_ack, info.ece, info.srtt)
                    }
                }
                Boxed::LinuxReno(seg) => {
                    seg.reno(segments(*cwnd), segments(*ssthresh), info.acked) as f64
                }
                Boxed::LinuxCubic(c) => {
                    c.on_ack(segments(*cwnd), segments(*ssthresh), info.acked, info.now) as f64
                }
                // BBR sets the window after the sender's own processing.
                Boxed::Bbr(_) => *cwnd,
                Boxed::Cubic(c) => {
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
            },
        };
        *cwnd = grown.min(cfg.max_window as f64);
    }

    /// A timeout in a window whose ssthresh was already reduced (Linux's
    /// `tcp_enter_loss` inside a recovery or after another timeout): ssthresh
    /// stays, but CUBIC starts over as on any entry to the loss state
    /// (`bictcp_reset`). Returns whether the algorithm takes it so; the others
    /// (BBR, the scalable ones, the `ns2` profile's) treat it as any timeout.
    pub fn on_timeout_in_reduced_window(&mut self) -> bool {
        let Congestion::Boxed(b) = self else {
            return false;
        };
        match &mut **b {
            Boxed::LinuxReno(seg) => seg.clear(),
            Boxed::LinuxCubic(c) => *c = LinuxCubic::new(c.has_hystart()),
            _ => return false,
        }
        true
    }

    /// The window a congestion signal at window `cwnd` leads to, before any floor
    /// (ssthresh is never below 2 packets; cwnd after an ECN echo never below 1).
    #[inline]
    pub fn on_signal(&mut self, cwnd: f64, signal: Signal, cfg: &TcpConfig) -> f64 {
        let cwnd = cwnd.min(cfg.max_window as f64);
        match self {
            Congestion::Reno => cwnd / 2.0,
            Congestion::Boxed(b) => match &mut **b {
                Boxed::Cubic(c) => c.on_signal(cwnd, signal),
                Boxed::LinuxReno(seg) => {
                    seg.clear();
                    linux::reno_ssthresh(segments(cwnd)) as f64
                }
                Boxed::LinuxCubic(c) => {
                    c.on_signal(segments(cwnd), signal == Signal::Timeout) as f64
                }
                // Loss and timeouts as Reno; echoes through `Scalable::on_echo`.
                Boxed::Scalable(_) => cwnd / 2.0,
                // BBR keeps ssthresh (Linux's `bbr_ssthresh`) and saves the window
                // it will restore.
                Boxed::Bbr(f) => {
                    if signal == Signal::Timeout {
                        f.rate.on_timeout();
                        f.model.on_timeout(cwnd, &f.rate, cfg.packet_size);
                        f.in_loss = true;
                    } else {
                        f.model.on_recovery(cwnd);
                    }
                    f.model.ssthresh()
                }
            },
        }
    }

    /// The window after undoing a reduction that was not needed, `prior` the
    /// window before it (the `undo_cwnd` of Linux's algorithms): Reno's and
    /// CUBIC's return to it (`tcp_reno_undo_cwnd`); BBR keeps its own window
    /// and restarts its full-bandwidth detector.
    pub fn undo_cwnd(&mut self, cwnd: f64, prior: f64) -> f64 {
        match self.bbr() {
            Some(f) => {
                f.model.on_undo(&f.rate);
                cwnd
            }
            None => cwnd.max(prior),
        }
    }

    /// A web object ended: the next starts as a new connection would.
    pub fn reset(&mut self, cfg: &TcpConfig) {
        let seed = self.bbr().map(|f| f.model.next_seed());
        *self = Congestion::new(cfg);
        if let Some(seed) = seed {
            self.seed(seed, cfg);
        }
    }
}

#[cfg(test)]
mod tests;
