//! BBRv3's states (draft-ietf-ccwg-bbr): STARTUP, DRAIN, the four ProbeBW
//! phases and ProbeRTT, and the pacing and cwnd gains each runs at.

use super::{
    DEFAULT_CWND_GAIN, DOWN_PACING_GAIN, DRAIN_PACING_GAIN, PROBE_RTT_CWND_GAIN,
    STARTUP_PACING_GAIN, UP_CWND_GAIN, UP_PACING_GAIN,
};

/// Where the model is in its cycle.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum State {
    Startup,
    Drain,
    Down,
    Cruise,
    Refill,
    Up,
    ProbeRtt,
}

impl State {
    pub(super) fn pacing_gain(self) -> f64 {
        match self {
            State::Startup => STARTUP_PACING_GAIN,
            State::Drain => DRAIN_PACING_GAIN,
            State::Down => DOWN_PACING_GAIN,
            State::Cruise | State::Refill | State::ProbeRtt => 1.0,
            State::Up => UP_PACING_GAIN,
        }
    }

    pub(super) fn cwnd_gain(self) -> f64 {
        match self {
            State::Up => UP_CWND_GAIN,
            State::ProbeRtt => PROBE_RTT_CWND_GAIN,
            _ => DEFAULT_CWND_GAIN,
        }
    }

    pub(super) fn is_probe_bw(self) -> bool {
        matches!(
            self,
            State::Down | State::Cruise | State::Refill | State::Up
        )
    }

    /// Probing for bandwidth: the short-term bounds are not cut.
    pub(super) fn is_probing(self) -> bool {
        matches!(self, State::Startup | State::Refill | State::Up)
    }
}
