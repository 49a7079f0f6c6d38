//! Test helpers: one sender driven ACK by ACK, under the Linux profile (no
//! delayed ACKs or limited transmit, so each ACK is one step) and under the
//! `ns2` profile, with SACK.

use super::super::{Actions, TcpConfig, TcpSender, Variant};
use aqm::{Dur, Time};

pub(super) fn at(ms: u64) -> Time {
    Time::ZERO + Dur::from_millis(ms)
}

/// Linux's SACK TCP with a first window of `initial_window`.
pub(super) fn linux(initial_window: u32) -> TcpConfig {
    TcpConfig {
        delayed_ack: false,
        limited_transmit: false,
        initial_window,
        ..TcpConfig::linux(Variant::Sack)
    }
}

/// The `ns2` profile's SACK TCP with a first window of `initial_window`.
pub(super) fn ns2(initial_window: u32) -> TcpConfig {
    TcpConfig {
        variant: Variant::Sack,
        initial_window,
        ..TcpConfig::default()
    }
}

/// A sender whose first window left at 0 and whose segment 0 was lost: at
/// 50 ms one duplicate ACK each SACKs segments 1 to `sacked`, one more at a
/// time.
pub(super) fn first_lost(cfg: &TcpConfig, sacked: u32) -> (TcpSender, Actions) {
    let mut s = TcpSender::new(cfg);
    let mut act = Actions::default();
    s.start(at(0), cfg, &mut act);
    for k in 1..=sacked {
        act.clear();
        s.on_ack(at(50), 0, &[(1, k + 1)], false, cfg, &mut act);
    }
    (s, act)
}
