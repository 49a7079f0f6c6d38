//! The scalable congestion controls: DCTCP (RFC 8257) and TCP Prague
//! (draft-briscoe-iccrg-prague-congestion-control; Linux's `tcp_prague.c`).
//!
//! - The congestion estimate alpha (RFC 8257 section 3.3): the packets newly
//!   acknowledged and those of them acknowledged with ECE are counted over a round
//!   (a window of data: it ends when the ACK passes the highest packet sent when
//!   it began), then `alpha = (1 - g) alpha + g F` with `F` the round's fraction
//!   marked and `g = 1/16`. alpha starts at 1 (RFC 8257 and Linux), so the first
//!   echo halves the window as classic ECN would.
//! - The response to an echo, at most once per window of data (as RFC 3168's):
//!   `cwnd <- cwnd (1 - alpha / 2)`, never below 2 packets (Linux's floor for both).
//!   Loss and timeouts halve the window as Reno does; recovery is SACK's.
//! - DCTCP grows the window as Reno does, except in the window after a reduction
//!   (Linux's CWR state, where the window only falls).
//! - Prague grows on every ACK outside loss recovery, by the packets acknowledged
//!   without a mark (Linux `prague_update_cwnd`), and is RTT-independent toward a
//!   25 ms reference (Linux's default `RTT_CONTROL_RATE`): a flow whose smoothed
//!   RTT `R` is below 25 ms adds `(R / 25 ms)^2` packets per RTT instead of 1, so its
//!   rate grows as a 25 ms flow's would; and outside slow start it updates alpha
//!   and reduces at most once per 25 ms, so that flows of different RTTs see the
//!   same number of reductions per second. Linux turns this on 500 rounds after
//!   slow start (`prague_rtt_transition`); here it applies from the first
//!   congestion-avoidance round. alpha stays at 1 until the first mark, as Linux
//!   waits for proof of an AQM on the path (`saw_ce`).
//!
//! The echo is DCTCP's (one ECE bit per ACK, exact with its receiver's state
//! machine); Linux's Prague needs AccECN, which carries the same count.

use super::Variant;
use aqm::{Dur, Time};

/// RFC 8257 section 3.3 (and Linux): g = 1/16.
pub const G: f64 = 1.0 / 16.0;
/// Prague's RTT reference (Linux `prague_rtt_target`, 25 ms).
pub const PRAGUE_RTT_TARGET: Dur = Dur::from_millis(25);
/// The smallest window after an echo (Linux DCTCP and Prague: 2 packets).
pub const MIN_CWND: f64 = 2.0;

/// A scalable congestion control's state.
#[derive(Debug, Clone)]
pub struct Scalable {
    prague: bool,
    alpha: f64,
    /// The round ends when an ACK passes this (one past the highest packet sent
    /// when it began).
    window_end: u32,
    acked: u32,
    marked: u32,
    /// Prague: a mark was seen (alpha is frozen at 1 until then).
    saw_ce: bool,
    /// Prague: when alpha was last updated, and the last reduction.
    alpha_at: Time,
    cwr_at: Option<Time>,
}

/// What [`Scalable::on_ack`] learns from one new ACK.
#[derive(Copy, Clone, Debug)]
pub struct Acked {
    pub now: Time,
    /// Packets this ACK newly acknowledged.
    pub newly: u32,
    pub ece: bool,
    /// The cumulative ACK.
    pub ack: u32,
    /// One past the highest packet sent.
    pub snd_max: u32,
    /// Whether the sender is in slow start (cwnd below ssthresh).
    pub slow_start: bool,
}

impl Scalable {
    pub fn new(variant: Variant) -> Self {
        Scalable {
            prague: variant == Variant::Prague,
            alpha: 1.0,
            window_end: 0,
            acked: 0,
            marked: 0,
            saw_ce: false,
            alpha_at: Time::ZERO,
            cwr_at: None,
        }
    }

    /// The congestion estimate, from 0 to 1.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    pub fn is_prague(&self) -> bool {
        self.prague
    }

    /// Prague outside slow start: RTT-independent pacing of its updates.
    fn rtt_independent(&self, slow_start: bool) -> bool {
        self.prague && !slow_start
    }

    /// Counts a new ACK's packets and ends the round when the ACK passes its end.
    pub fn on_ack(&mut self, a: &Acked) {
        self.acked += a.newly;
        if a.ece {
            self.marked += a.newly;
            self.saw_ce = true;
        }
        if a.ack <= self.window_end {
            return;
        }
        if self.rtt_independent(a.slow_start)
            && a.now.saturating_since(self.alpha_at) < PRAGUE_RTT_TARGET
        {
            return; // the round goes on until 25 ms have passed
        }
        if !self.prague || self.saw_ce {
            let f = if self.acked == 0 {
                0.0
            } else {
                self.marked as f64 / self.acked as f64
            };
            self.alpha = (1.0 - G) * self.alpha + G * f;
        }
        self.alpha_at = a.now;
        self.window_end = a.snd_max;
        self.acked = 0;
        self.marked = 0;
    }

    /// The window after an echo at window `cwnd`, or `None` when Prague has
    /// reduced within the last 25 ms.
    pub fn on_echo(&mut self, now: Time, cwnd: f64, slow_start: bool) -> Option<f64> {
        if self.rtt_independent(slow_start)
            && self
                .cwr_at
                .is_some_and(|t| now.saturating_since(t) < PRAGUE_RTT_TARGET)
        {
            return None;
        }
        self.cwr_at = Some(now);
        Some((cwnd * (1.0 - self.alpha / 2.0)).max(MIN_CWND.min(cwnd)))
    }

    /// Congestion avoidance's growth per ACK of `acked` packets (of which
    /// `marked` were echoed, Prague's unmarked count) at window `cwnd` and
    /// smoothed RTT `srtt` seconds.
    pub fn avoid(&self, cwnd: f64, acked: f64, ece: bool, srtt: f64) -> f64 {
        if !self.prague {
            return acked / cwnd;
        }
        if ece {
            return 0.0; // Linux: the marked packets do not count toward growth
        }
        let target = PRAGUE_RTT_TARGET.as_secs_f64();
        let ai = if srtt > 0.0 && srtt < target {
            (srtt / target).powi(2)
        } else {
            1.0
        };
        acked * ai / cwnd
    }
}

#[cfg(test)]
mod tests;
