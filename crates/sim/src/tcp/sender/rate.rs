//! Delivery-rate sampling (draft-cheng-iccrg-delivery-rate-estimation; Linux's
//! `tcp_rate.c`), for the congestion controls that model the path (BBR).
//!
//! When a packet leaves, it is stamped with what the flow had delivered so far
//! (`delivered`, and when the last delivery happened) and with the send time of
//! the packet that began the current send interval (`first_tx`). When an ACK
//! delivers packets (cumulatively, or by SACK: a SACKed packet counts as
//! delivered when SACKed, never again), the most recently sent of them gives the
//! sample: `delivered now - delivered then` packets over
//! `max(send interval, ACK interval)`, the longer of the two so that neither a
//! burst of sends nor a compressed burst of ACKs overestimates the rate. A sample
//! whose interval is below the path's minimum RTT is no estimate of the rate and
//! is dropped, as Linux drops it. The sample is application-limited when the
//! packet left while the sender had nothing to send (`app_limited` marks the
//! delivery count up to which that holds).
//!
//! Sequence numbers count packets here, so `delivered` counts packets, where
//! Linux counts segments (the same for one segment per packet). The records live
//! in the congestion control's own box ([`super::super::bbr`]), so a Reno or
//! CUBIC flow stores none.

use super::super::bbr::{BbrAck, CaState};
use super::super::TcpConfig;
use super::TcpSender;
use aqm::{Dur, Time};
use std::collections::VecDeque;

impl TcpSender {
    /// BBR: packet `seq` leaves now; stamp it for the rate sample.
    pub(super) fn bbr_sent(&mut self, seq: u32, now: Time) {
        let (outstanding, retx) = (self.snd_max - self.snd_una, seq < self.snd_max);
        // Only BBRv3 reads the flight a packet left into; v1 skips the count.
        let keeps = self
            .cc
            .bbr_ref()
            .is_some_and(|f| f.rate.keeps_lost_packets());
        let in_flight = if keeps { self.pipe() } else { 0 };
        if let Some(f) = self.cc.bbr() {
            f.rate.on_send(seq, now, outstanding, in_flight, retx);
        }
    }

    /// BBR on every ACK, after the sender's own processing (Linux's
    /// `tcp_cong_control` with `cong_control`): sample the delivery rate, then
    /// let the model set cwnd, from the window before this ACK (the sender's
    /// recovery arithmetic does not apply), and the pacing rate.
    pub(super) fn bbr_acked(
        &mut self,
        now: Time,
        ack: u32,
        blocks: &[(u32, u32)],
        ece: bool,
        (cwnd_before, pipe_before): (f64, u32),
        cfg: &TcpConfig,
    ) {
        let in_flight = self.pipe();
        let (in_recovery, una, recover, srtt) =
            (self.in_recovery, self.snd_una, self.recover, self.srtt);
        let idle = !self.has_new_data();
        let Some(f) = self.cc.bbr() else { return };
        if f.in_loss && una >= recover {
            f.in_loss = false;
        }
        let ca = if in_recovery {
            CaState::Recovery
        } else if f.in_loss {
            CaState::Loss
        } else {
            CaState::Open
        };
        let rs = f.rate.on_ack(now, ack, blocks, pipe_before);
        let a = BbrAck {
            now,
            in_flight,
            ca,
            srtt,
            packet_size: cfg.packet_size,
            cwnd_limited: !idle && pipe_before as f64 >= cwnd_before.floor(),
            ece,
        };
        let mut cwnd = cwnd_before;
        f.model.on_ack(&rs, &mut f.rate, &a, &mut cwnd);
        if idle && (in_flight as f64) < cwnd {
            f.rate.set_app_limited(in_flight);
        }
        self.ssthresh = f.model.ssthresh();
        self.cwnd = cwnd.min(cfg.max_window as f64);
    }

    /// BBRv3's model, for tests.
    #[cfg(test)]
    pub(crate) fn bbr3_model(&self) -> Option<&super::super::bbr3::Bbr3> {
        self.cc.bbr_ref().and_then(|f| match &f.model {
            super::super::bbr::BbrModel::V3(b) => Some(&**b),
            super::super::bbr::BbrModel::V1(_) => None,
        })
    }

    /// BBR's model, for tests.
    #[cfg(test)]
    pub(crate) fn bbr_model(&self) -> Option<&super::super::bbr::Bbr> {
        self.cc.bbr_ref().and_then(|f| match &f.model {
            super::super::bbr::BbrModel::V1(b) => Some(b),
            super::super::bbr::BbrModel::V3(_) => None,
        })
    }
}

/// What the flow knew when a packet (re)left.
#[derive(Copy, Clone, Debug)]
struct TxRecord {
    /// The flow's delivered count when it left, modulo 2^32 (the full count is
    /// the flow's less the difference; 40 bytes a record keep the ACK path fast).
    delivered: u32,
    delivered_time: Time,
    first_tx: Time,
    sent: Time,
    app_limited: bool,
    retx: bool,
    /// Delivered by a SACK already (a cumulative ACK then adds nothing).
    done: bool,
    /// Packets in flight once it left, itself included (Linux's `tx.in_flight`;
    /// stamped only for a sampler that keeps lost packets).
    tx_in_flight: u32,
    /// The flow's lost count when it left (Linux's `tx.lost`), modulo 2^32: only
    /// differences within one flight are read.
    lost: u32,
}

// Every ACK moves records; a larger one costs BBR about 2% of its run time.
const _: () = assert!(std::mem::size_of::<TxRecord>() == 40);

/// A packet an ACK showed lost, as BBRv3 reads it (draft-ietf-ccwg-bbr,
/// `BBRHandleLostPacket`): what the flow knew when it left.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct LostPacket {
    pub tx_in_flight: u32,
    /// Packets marked lost since it left, itself included.
    pub lost_since: u64,
    pub app_limited: bool,
}

/// One ACK's rate sample (Linux's `struct rate_sample`).
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct RateSample {
    /// Packets delivered over `interval`; `None` when the ACK delivered nothing
    /// that was stamped, or the interval was too short to trust.
    pub delivered: u64,
    pub interval: Option<Dur>,
    /// The flow's delivery count when the sampled packet left.
    pub prior_delivered: u64,
    /// The RTT of the most recently sent packet this ACK delivered, if it left once.
    pub rtt: Option<Dur>,
    pub app_limited: bool,
    /// Packets this ACK delivered (Linux's `acked_sacked`).
    pub acked: u32,
    /// Packets this ACK newly showed lost: holes below the highest SACKed packet.
    pub losses: u32,
    /// Packets in flight before the ACK.
    pub prior_in_flight: u32,
    /// Packets in flight when the sampled packet left, itself included.
    pub tx_in_flight: u32,
    /// Packets marked lost since the sampled packet left.
    pub lost: u64,
}

#[cfg(test)]
impl RateSample {
    /// The delivery rate, packets per second, when the sample is valid.
    pub fn rate(&self) -> Option<f64> {
        let i = self.interval?;
        (!i.is_zero()).then(|| self.delivered as f64 / i.as_secs_f64())
    }
}

/// The sampler's state: per-packet records from `base` (the first packet not
/// cumulatively acknowledged) and the flow's delivery counters.
#[derive(Clone, Debug, Default)]
pub struct RateSampler {
    pkts: VecDeque<TxRecord>,
    base: u32,
    /// Packets delivered so far (Linux's `tp->delivered`).
    pub delivered: u64,
    delivered_time: Time,
    first_tx: Time,
    /// Nonzero: the flow is application-limited until `delivered` passes this.
    app_limited: u64,
    /// Packets marked lost so far (Linux's `tp->lost`).
    pub lost: u64,
    high_sack: u32,
    min_rtt: Option<Dur>,
    /// Whether to list each lost packet and stamp each packet's flight (BBRv3
    /// reads them; v1 needs only counts).
    keep_lost: bool,
    /// The packets the last ACK showed lost, in order (kept to reuse its memory).
    newly_lost: Vec<LostPacket>,
    /// Retransmissions the sender found lost again since the last ACK's sample
    /// (their records, when lost packets are listed).
    relost: u32,
    relost_packets: Vec<LostPacket>,
}

impl RateSampler {
    /// A sampler that lists the packets each ACK shows lost ([`Self::newly_lost`]).
    pub fn keeping_lost_packets() -> Self {
        RateSampler {
            keep_lost: true,
            ..Default::default()
        }
    }

    /// Whether this sampler lists lost packets (and wants `in_flight` stamped).
    pub fn keeps_lost_packets(&self) -> bool {
        self.keep_lost
    }

    /// Packet `seq` leaves at `now`, with `outstanding` packets unacknowledged
    /// and `in_flight` in flight (the sender's `pipe`) before it.
    #[inline]
    pub fn on_send(&mut self, seq: u32, now: Time, outstanding: u32, in_flight: u32, retx: bool) {
        if outstanding == 0 {
            // A new send interval: nothing in flight to measure against.
            self.first_tx = now;
            self.delivered_time = now;
        }
        let rec = TxRecord {
            delivered: self.delivered as u32,
            delivered_time: self.delivered_time,
            first_tx: self.first_tx,
            sent: now,
            app_limited: self.app_limited != 0,
            retx,
            done: false,
            tx_in_flight: in_flight + 1,
            lost: self.lost as u32,
        };
        if self.pkts.is_empty() && seq >= self.base {
            self.base = seq;
        }
        match seq.checked_sub(self.base).map(|i| i as usize) {
            Some(i) if i < self.pkts.len() => self.pkts[i] = rec,
            Some(i) if i == self.pkts.len() => self.pkts.push_back(rec),
            _ => debug_assert!(false, "packet {seq} outside the sampler's records"),
        }
    }

    /// The flow has nothing more to send (or BBR's PROBE_RTT holds it back) with
    /// `in_flight` packets in flight: samples until this data is delivered are
    /// application-limited (Linux's `tcp_rate_check_app_limited`).
    pub fn set_app_limited(&mut self, in_flight: u32) {
        self.app_limited = (self.delivered + in_flight as u64).max(1);
    }

    /// The sender found retransmission `seq` lost again (RACK): the next
    /// sample counts it lost, as Linux counts it in `tp->lost` once more.
    pub fn retransmission_lost(&mut self, seq: u32) {
        self.relost += 1;
        if self.keep_lost {
            let rec = seq
                .checked_sub(self.base)
                .and_then(|i| self.pkts.get(i as usize));
            if let Some(rec) = rec {
                self.relost_packets.push(LostPacket {
                    tx_in_flight: rec.tx_in_flight,
                    lost_since: (self.lost as u32)
                        .wrapping_add(self.relost)
                        .wrapping_sub(rec.lost) as u64,
                    app_limited: rec.app_limited,
                });
            }
        }
    }

    /// An ACK at `now`: cumulative `ack` and SACK `blocks`, `prior_in_flight`
    /// packets in flight before it. Returns the rate sample.
    pub fn on_ack(
        &mut self,
        now: Time,
        ack: u32,
        blocks: &[(u32, u32)],
        prior_in_flight: u32,
    ) -> RateSample {
        let mut rs = RateSample {
            prior_in_flight,
            ..Default::default()
        };
        let mut newest: Option<(TxRecord, u32)> = None;
        let mut deliver = |rec: TxRecord, seq: u32, rs: &mut RateSample| {
            rs.acked += 1;
            // The most recently sent packet (by send time, then sequence) wins.
            if newest.is_none_or(|(n, s)| (rec.sent, seq) > (n.sent, s)) {
                newest = Some((rec, seq));
            }
        };
        while self.base < ack {
            let Some(rec) = self.pkts.pop_front() else {
                self.base = ack;
                break;
            };
            if !rec.done {
                deliver(rec, self.base, &mut rs);
            }
            self.base += 1;
        }
        let end = self.base + self.pkts.len() as u32;
        let mut high = self.high_sack.max(self.base);
        for &(start, stop) in blocks {
            let (lo, hi) = (start.max(self.base), stop.min(end));
            if lo >= hi {
                continue;
            }
            // Every ACK repeats its SACK blocks: walk them as slices, not by index.
            let span = (lo - self.base) as usize..(hi - self.base) as usize;
            for (seq, rec) in (lo..).zip(self.pkts.range_mut(span)) {
                if !rec.done {
                    rec.done = true;
                    deliver(*rec, seq, &mut rs);
                }
            }
            high = high.max(hi);
        }
        // Holes newly below the highest SACKed packet are lost (the sender's rule).
        let low = self.high_sack.max(self.base);
        let holes = (low - self.base) as usize..(high - self.base) as usize;
        rs.losses = self.pkts.range(holes.clone()).filter(|r| !r.done).count() as u32;
        self.newly_lost.clear();
        if self.keep_lost && rs.losses > 0 {
            let mut lost = self.lost as u32;
            for rec in self.pkts.range(holes) {
                if !rec.done {
                    lost = lost.wrapping_add(1);
                    self.newly_lost.push(LostPacket {
                        tx_in_flight: rec.tx_in_flight,
                        lost_since: lost.wrapping_sub(rec.lost) as u64,
                        app_limited: rec.app_limited,
                    });
                }
            }
        }
        if self.relost > 0 {
            rs.losses += std::mem::take(&mut self.relost);
            self.newly_lost.append(&mut self.relost_packets);
        }
        self.lost += rs.losses as u64;
        self.high_sack = self.high_sack.max(high);
        self.delivered += rs.acked as u64;
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        let Some((rec, _)) = newest else {
            return rs;
        };
        self.delivered_time = now;
        // The next send interval starts with this packet's send time.
        self.first_tx = rec.sent;
        rs.delivered = (self.delivered as u32).wrapping_sub(rec.delivered) as u64;
        rs.prior_delivered = self.delivered - rs.delivered;
        rs.app_limited = rec.app_limited;
        rs.tx_in_flight = rec.tx_in_flight;
        rs.lost = (self.lost as u32).wrapping_sub(rec.lost) as u64;
        if !rec.retx {
            let rtt = now.saturating_since(rec.sent);
            rs.rtt = Some(rtt);
            self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
        }
        let send_elapsed = rec.sent.saturating_since(rec.first_tx);
        let ack_elapsed = now.saturating_since(rec.delivered_time);
        let interval = send_elapsed.max(ack_elapsed);
        // Shorter than the minimum RTT: the ACKs were compressed or the packets
        // sent in a burst, and the ratio says nothing about the path.
        if self.min_rtt.is_none_or(|m| interval >= m) {
            rs.interval = Some(interval);
        }
        rs
    }

    /// When the last packet was delivered (Linux's `delivered_mstamp`).
    pub fn delivered_time(&self) -> Time {
        self.delivered_time
    }

    /// A timeout: the sender forgets its SACKs and resends from the first hole.
    /// Packets already delivered stay delivered (counted once); holes count as
    /// lost again once a SACK above them comes back.
    pub fn on_timeout(&mut self) {
        self.high_sack = self.base;
    }

    /// The packets the last ACK showed lost, oldest first (empty unless made
    /// by [`Self::keeping_lost_packets`]).
    pub fn newly_lost(&self) -> &[LostPacket] {
        &self.newly_lost
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> Time {
        Time::from_nanos(ms * 1_000_000)
    }

    /// A path that delivers one packet per millisecond, 20 ms of RTT, the sender
    /// paced at that rate with a full window: every sample after the first round
    /// is the path's rate, 1000 packets/s.
    #[test]
    fn a_paced_constant_rate_path_samples_its_rate() {
        let mut r = RateSampler::default();
        let rtt = 20;
        let mut rates = vec![];
        for seq in 0..200u32 {
            let t = seq as u64;
            if t >= rtt {
                let acked = seq - rtt as u32 + 1;
                let rs = r.on_ack(at(t), acked, &[], rtt as u32);
                if let Some(rate) = rs.rate() {
                    rates.push(rate);
                }
            }
            let outstanding = seq.saturating_sub((t.saturating_sub(rtt) as u32) + 1);
            let out = if t >= rtt { outstanding } else { seq };
            r.on_send(seq, at(t), out, out, false);
        }
        assert!(rates.len() > 150, "{}", rates.len());
        for rate in &rates[20..] {
            assert!((rate / 1000.0 - 1.0).abs() < 0.06, "{rate}");
        }
    }

    /// SACKed packets count when SACKed, and not again when the cumulative ACK
    /// covers them; the holes below them count as lost once.
    #[test]
    fn sacked_packets_are_delivered_once_and_holes_lost_once() {
        let mut r = RateSampler::default();
        for seq in 0..10 {
            r.on_send(seq, at(0), seq, seq, false);
        }
        let rs = r.on_ack(at(10), 0, &[(2, 5)], 10);
        assert_eq!((rs.acked, rs.losses), (3, 2));
        let rs = r.on_ack(at(11), 0, &[(2, 6)], 10);
        assert_eq!((rs.acked, rs.losses), (1, 0));
        let rs = r.on_ack(at(12), 6, &[], 10);
        assert_eq!((rs.acked, rs.losses), (2, 0));
        assert_eq!((r.delivered, r.lost), (6, 2));
    }

    /// A retransmission found lost again counts as lost once more, in the next
    /// sample and in the flow's total (Linux's `tp->lost`), and BBRv3 hears of it.
    #[test]
    fn a_retransmission_lost_again_counts_again() {
        let mut r = RateSampler::keeping_lost_packets();
        for seq in 0..10 {
            r.on_send(seq, at(0), seq, seq, false);
        }
        let rs = r.on_ack(at(10), 0, &[(2, 5)], 10);
        assert_eq!((rs.losses, r.lost), (2, 2));
        r.on_send(0, at(10), 10, 7, true);
        r.retransmission_lost(0);
        let rs = r.on_ack(at(20), 0, &[(2, 7)], 10);
        assert_eq!((rs.acked, rs.losses, r.lost), (2, 1, 3));
        assert_eq!(r.newly_lost().len(), 1);
        assert_eq!(r.newly_lost()[0].tx_in_flight, 8);
        let rs = r.on_ack(at(21), 0, &[(2, 8)], 10);
        assert_eq!((rs.losses, r.lost), (0, 3), "counted once");
    }

    /// Each packet an ACK shows lost carries the flight it left into and the
    /// losses since (itself included), and the sample carries its packet's:
    /// what BBRv3's loss-rate check divides.
    #[test]
    fn losses_carry_the_flight_they_left_into() {
        let mut r = RateSampler::keeping_lost_packets();
        for seq in 0..10 {
            r.on_send(seq, at(0), seq, seq, false);
        }
        let rs = r.on_ack(at(10), 0, &[(3, 5)], 10);
        let lost: Vec<_> = r
            .newly_lost()
            .iter()
            .map(|l| (l.tx_in_flight, l.lost_since))
            .collect();
        assert_eq!(lost, [(1, 1), (2, 2), (3, 3)]);
        // The sample is packet 4's: it left into a flight of 5, and 3 were lost since.
        assert_eq!((rs.tx_in_flight, rs.lost), (5, 3));
        let rs = r.on_ack(at(11), 0, &[(3, 6)], 10);
        assert!(r.newly_lost().is_empty());
        assert_eq!((rs.tx_in_flight, rs.lost), (6, 3));
    }

    /// A sample is application-limited when its packet left while the flow had
    /// nothing to send, until the data then in flight is delivered.
    #[test]
    fn app_limited_marks_samples_until_the_flight_is_delivered() {
        let mut r = RateSampler::default();
        r.on_send(0, at(0), 0, 0, false);
        r.set_app_limited(1);
        r.on_send(1, at(1), 1, 1, false);
        assert!(!r.on_ack(at(20), 1, &[], 2).app_limited);
        assert!(r.on_ack(at(21), 2, &[], 1).app_limited);
        r.on_send(2, at(22), 0, 0, false);
        assert!(!r.on_ack(at(42), 3, &[], 1).app_limited);
    }
}
