//! Which BBR a flow runs (v1 or v3), and its whole state boxed apart from the
//! sender: the model and the delivery-rate sampler's per-packet records.

use super::{Bbr, BbrAck, CaState};
use crate::tcp::bbr3::Bbr3;
use crate::tcp::sender::rate::{RateSample, RateSampler};
use crate::tcp::Variant;
use aqm::Dur;

/// Which BBR a flow runs. v1 is held inline: the whole `BbrFlow` is boxed
/// already, and a second box would cost v1 an indirection on every ACK.
#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant)]
pub enum BbrModel {
    V1(Bbr),
    V3(Box<Bbr3>),
}

impl BbrModel {
    pub fn new(variant: Variant, initial_window: f64, seed: u64) -> Self {
        if variant == Variant::Bbr3 {
            BbrModel::V3(Box::new(Bbr3::new(initial_window, seed)))
        } else {
            BbrModel::V1(Bbr::new(initial_window, seed))
        }
    }

    /// The model's update on one ACK: the window and the pacing rate.
    #[inline]
    pub fn on_ack(&mut self, rs: &RateSample, r: &mut RateSampler, a: &BbrAck, cwnd: &mut f64) {
        match self {
            BbrModel::V1(b) => b.on_ack(rs, r, a, cwnd),
            BbrModel::V3(b) => b.on_ack(rs, r, a, cwnd),
        }
    }

    /// A loss or an ECN echo starts a recovery: the window to restore after it.
    pub fn on_recovery(&mut self, cwnd: f64) {
        match self {
            BbrModel::V1(b) => b.save_cwnd(cwnd),
            BbrModel::V3(b) => b.save_cwnd(cwnd),
        }
    }

    /// A timeout, after the sampler has forgotten its SACKs.
    pub fn on_timeout(&mut self, cwnd: f64, r: &RateSampler, packet_size: u32) {
        match self {
            BbrModel::V1(b) => b.on_timeout(cwnd, r, packet_size),
            BbrModel::V3(b) => b.on_timeout(cwnd),
        }
    }

    /// A reduction undone as spurious.
    pub fn on_undo(&mut self, r: &RateSampler) {
        match self {
            BbrModel::V1(b) => b.on_undo(r),
            // v3's `bbr_undo_cwnd`: the full-bandwidth detector only.
            BbrModel::V3(b) => b.reset_full_bw(),
        }
    }

    /// The model's path estimates, for the TCP trace: its bandwidth (packets
    /// per second) and minimum RTT.
    pub fn estimates(&self) -> (f64, Option<Dur>) {
        match self {
            BbrModel::V1(b) => (b.bw(), b.min_rtt()),
            BbrModel::V3(b) => (b.bw(), b.min_rtt()),
        }
    }

    /// Packets per second.
    #[inline]
    pub fn pacing_rate(&self) -> f64 {
        match self {
            BbrModel::V1(b) => b.pacing_rate,
            BbrModel::V3(b) => b.pacing_rate,
        }
    }

    /// BBR never lowers ssthresh itself; v1 sets it once, on leaving STARTUP.
    pub fn ssthresh(&self) -> f64 {
        match self {
            BbrModel::V1(b) => b.ssthresh,
            BbrModel::V3(b) => b.ssthresh,
        }
    }

    /// A seed for the next connection's BBR (web objects), from this one's stream.
    pub fn next_seed(&mut self) -> u64 {
        match self {
            BbrModel::V1(b) => b.next_seed(),
            BbrModel::V3(b) => b.next_seed(),
        }
    }
}

/// A BBR flow's whole state, boxed apart from the sender: the model and the
/// delivery-rate sampler's per-packet records.
#[derive(Clone, Debug)]
pub struct BbrFlow {
    pub model: BbrModel,
    pub rate: RateSampler,
    /// A timeout's loss state lasts until the ACK reaches the sender's `recover`.
    pub in_loss: bool,
}

impl BbrFlow {
    pub fn new(variant: Variant, initial_window: f64, seed: u64) -> Self {
        let rate = if variant == Variant::Bbr3 {
            RateSampler::keeping_lost_packets()
        } else {
            RateSampler::default()
        };
        BbrFlow {
            model: BbrModel::new(variant, initial_window, seed),
            rate,
            in_loss: false,
        }
    }
}

/// The window BBR restores after recovery or ProbeRTT (Linux's `bbr_save_cwnd`,
/// the draft's `BBRSaveCwnd`): the window now when neither is under way,
/// otherwise the larger of it and the one saved before.
pub(crate) fn saved_cwnd(prior: f64, cwnd: f64, prev_ca: CaState, in_probe_rtt: bool) -> f64 {
    if prev_ca < CaState::Recovery && !in_probe_rtt {
        cwnd
    } else {
        prior.max(cwnd)
    }
}
