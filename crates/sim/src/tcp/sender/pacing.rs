//! Pacing (`pacing = true`; Prague's default): after each packet the sender
//! waits `srtt / (factor x cwnd)` before the next one, the packet size over Linux's
//! pacing rate, on the flow's `Send` timer (one pending event per flow; the
//! think time of web flows uses the same timer, and no packet is paced while a
//! flow thinks). Before the first RTT sample nothing is paced (Linux's rate is
//! unbounded then). The new data and SACK retransmissions that `send_allowed`
//! sends wait for the timer; a fast retransmit, NewReno's partial-ACK
//! retransmissions and a timeout's first packet leave at once.
//!
//! BBR sets its own pacing rate (`congestion::Congestion::pacing_rate`), and
//! paces from its first packet: the gap is one packet at that rate.
//!
//! Under the Linux profile the sender paces as Linux's TCP does: in TSO bursts
//! (`tcp_tso_autosize`: 1 ms of the pacing rate, at least 2 packets, BBR 1 below
//! 1.2 Mbit/s) sent back to back, each burst charged its length at the pacing
//! rate from the earliest departure time (`tcp_wstamp_ns`), less up to half of it
//! when the burst left late (`tcp_update_skb_after_send`), and the first 10
//! packets not charged. A burst cut short (the window closed) is charged what it
//! sent, and the next waits for that.

use super::super::{Actions, TcpConfig, TimerCmd, Variant};
use super::TcpSender;
use crate::event::TimerKind;
use aqm::{Dur, Time};

impl TcpSender {
    /// A packet just left: the next waits for the pacing timer.
    #[inline]
    pub(super) fn pace(&mut self, now: Time, cfg: &TcpConfig, act: &mut Actions) {
        if cfg.pacing && (self.has_rtt || cfg.variant.is_bbr()) {
            let next = if cfg.is_linux() {
                self.pace_burst(now, cfg)
            } else {
                now + self.pacing_gap(cfg)
            };
            self.pace_wait = true;
            act.timer(TimerKind::Send, TimerCmd::Arm(next));
        }
    }

    /// Whether pacing holds the next packet back at `now`: the gap since the
    /// last is not over, and it does not continue the Linux profile's burst.
    #[inline]
    pub(super) fn pace_holds(&self, now: Time) -> bool {
        self.pace_wait
            && !self
                .aside
                .as_deref()
                .is_some_and(|a| a.burst.continues_at(now))
    }

    /// The Linux profile: the packet that just left joins the burst leaving now,
    /// or starts one; returns when the next burst may leave.
    fn pace_burst(&mut self, now: Time, cfg: &TcpConfig) -> Time {
        let gap = self.pacing_gap(cfg);
        let charged = self.stats.sent >= UNPACED_PACKETS;
        let open = self
            .aside
            .as_deref()
            .is_some_and(|a| a.burst.continues_at(now));
        let segs = if open { 0 } else { self.tso_segs(gap, cfg) };
        let b = &mut self.aside.get_or_insert_with(Box::default).burst;
        if !open {
            b.start(now, segs);
        }
        b.add(gap, charged).max(now)
    }

    /// Linux's `tcp_tso_segs`: packets per burst, 1 ms of the pacing rate
    /// (`sk_pacing_shift` 10), plus 64 KB halved per 512 us of minimum RTT
    /// (`tcp_tso_rtt_log` 9), at most 64 KB, at least the congestion control's
    /// minimum.
    fn tso_segs(&self, gap: Dur, cfg: &TcpConfig) -> u32 {
        let size = cfg.packet_size.max(1) as u64;
        let bytes_per_s = size as f64 / gap.as_secs_f64().max(1e-12);
        let mut bytes = (bytes_per_s / 1024.0).min(GSO_MAX_BYTES as f64) as u64;
        let min_rtt_us = self.min_rtt_us();
        if min_rtt_us > 0 && (min_rtt_us >> 9) < 32 {
            bytes += GSO_MAX_BYTES >> (min_rtt_us >> 9);
        }
        let bytes = bytes.min(GSO_MAX_BYTES);
        // BBR sends single packets below 1.2 Mbit/s (`bbr_min_tso_segs`); the
        // others at least `tcp_min_tso_segs`, 2.
        let min = if cfg.variant.is_bbr() && bytes_per_s * 8.0 < 1.2e6 {
            1
        } else {
            2
        };
        ((bytes / size) as u32).max(min)
    }

    /// The rate `pace` sends at, packets per second: none when it does not.
    pub(super) fn pacing_rate_pps(&self, cfg: &TcpConfig) -> Option<f64> {
        (cfg.pacing && (self.has_rtt || cfg.variant.is_bbr()))
            .then(|| 1.0 / self.pacing_gap(cfg).as_secs_f64())
    }

    /// The time between two paced packets: `srtt / (factor x cwnd)`, the packet
    /// size over Linux's pacing rate `factor x cwnd x size / srtt` (tcp_output.c,
    /// `tcp_update_pacing_rate`): factor 2 while cwnd is below half ssthresh
    /// (`tcp_pacing_ss_ratio`), 1.2 after (`tcp_pacing_ca_ratio`); Prague paces at
    /// 1 after slow start (`prague_update_pacing_rate`).
    pub fn pacing_gap(&self, cfg: &TcpConfig) -> Dur {
        if let Some(rate) = self.cc.pacing_rate() {
            return Dur::from_secs_f64(1.0 / rate); // BBR's rate, packets per second
        }
        let factor = if self.cwnd < self.ssthresh / 2.0 {
            2.0
        } else if cfg.variant == Variant::Prague {
            1.0
        } else {
            1.2
        };
        Dur::from_secs_f64(self.srtt / (factor * self.cwnd.max(1.0)))
    }
}

/// A TSO burst's most bytes: the devices' `gso_max_size`, 64 KB.
const GSO_MAX_BYTES: u64 = 65_536;
/// Linux charges no pacing time for a flow's first 10 packets (`data_segs_out`).
const UNPACED_PACKETS: u64 = 10;

/// The Linux profile's pacing state: when the next burst may leave (Linux's
/// `tcp_wstamp_ns`) and the burst leaving now.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Burst {
    /// The earliest departure of the next burst.
    next: Time,
    /// When the open burst left, its packets so far and its size.
    at: Time,
    sent: u32,
    segs: u32,
    /// Where its charge starts (`next`, or its departure if that is later) and
    /// how late it left: Linux forgives up to half a burst's time of lateness.
    base: Time,
    late: Dur,
}

impl Burst {
    /// Whether a packet at `now` joins the open burst.
    #[inline]
    fn continues_at(&self, now: Time) -> bool {
        self.at == now && self.sent > 0 && self.sent < self.segs
    }

    fn start(&mut self, now: Time, segs: u32) {
        self.late = now.saturating_since(self.next);
        self.base = self.next.max(now);
        self.at = now;
        self.sent = 0;
        self.segs = segs;
    }

    /// A packet joins the burst; returns the next burst's earliest departure.
    fn add(&mut self, gap: Dur, charged: bool) -> Time {
        self.sent += 1;
        if charged {
            let len = gap.as_nanos().saturating_mul(self.sent as u64);
            let forgiven = (len / 2).min(self.late.as_nanos());
            self.next = self.base + Dur::from_nanos(len - forgiven);
        }
        self.next
    }
}

#[cfg(test)]
mod tests;
