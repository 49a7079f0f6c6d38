//! BBR v1 (`variant = "bbr"`) as Linux's `net/ipv4/tcp_bbr.c` runs it, so that the
//! emulator, which runs the kernel's, can check it. docs/tcp.md ("BBR") gives
//! every rule with its constant; this file follows `bbr_main` function by function.
//!
//! - The model: bandwidth is the windowed maximum of the delivery-rate samples
//!   ([`super::sender::rate`]) over 10 rounds, the minimum RTT the lowest sample
//!   of 10 s; a detected policer's rate replaces the bandwidth ([`long_term`]).
//! - The states: STARTUP (gain 2/ln 2 until 3 rounds grow the bandwidth by less
//!   than 25%), DRAIN, PROBE_BW (gains 5/4, 3/4, then 1 six times, starting at a
//!   random phase drawn from the flow's own stream), PROBE_RTT (4 packets for
//!   200 ms and a round when the min-RTT estimate is 10 s old).
//! - cwnd = gain x BDP + the ACK-aggregation allowance ([`ack_aggregation`]) + 3
//!   TSO goals (computed in segments as Linux does, though the simulator sends
//!   one packet per event: the budget keeps Linux's windows, and so its queues),
//!   rounded up to even; packet conservation for the first round of a recovery,
//!   the window before restored after it. PRR is not used (Linux's
//!   `cong_control` replaces it).
//!
//! Not modelled: the restart from idle (bulk flows are never idle; web objects
//! start a new BBR, as a new connection would). Rates are floating-point packets
//! per second, where Linux uses fixed point (2^-24 packets per microsecond); the
//! gains are Linux's in 1/256ths.

mod ack_aggregation;
mod flow;
mod long_term;

use ack_aggregation::AckAggregation;
use long_term::{LongTermBw, Progress, Verdict};

use super::minmax::MaxFilter;
use super::sender::rate::{RateSample, RateSampler};
use aqm::{rng, Dur, Time};
pub(super) use flow::saved_cwnd;
pub use flow::BbrFlow;
#[cfg(test)]
pub use flow::BbrModel;

/// Linux's BBR_UNIT: gains are in 1/256ths.
const UNIT: f64 = 256.0;
/// 2/ln 2, as Linux writes it: `BBR_UNIT * 2885 / 1000 + 1`.
pub const HIGH_GAIN: f64 = ((256 * 2885 / 1000 + 1) as f64) / UNIT;
/// `BBR_UNIT * 1000 / 2885`.
pub const DRAIN_GAIN: f64 = ((256 * 1000 / 2885) as f64) / UNIT;
pub const CWND_GAIN: f64 = 2.0;
/// The PROBE_BW cycle's pacing gains.
pub const PACING_GAIN: [f64; CYCLE_LEN] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
const CYCLE_LEN: usize = 8;
/// Phases a new PROBE_BW may start from after the random draw (all but 3/4).
const CYCLE_RAND: u64 = 7;
/// The bandwidth filter's window, rounds.
pub const BW_ROUNDS: u32 = CYCLE_LEN as u32 + 2;
pub const MIN_RTT_WIN: Dur = Dur::from_secs(10);
pub const PROBE_RTT_TIME: Dur = Dur::from_millis(200);
/// The smallest window, and PROBE_RTT's.
pub const MIN_CWND: f64 = 4.0;
/// Growth that counts as "still growing" in STARTUP, and the rounds without it.
const FULL_BW_THRESH: f64 = 1.25;
const FULL_BW_ROUNDS: u32 = 3;
/// Linux's TCP_INIT_CWND: the BDP before any RTT sample.
const INIT_CWND: f64 = 10.0;
const PACING_MARGIN: f64 = 0.99;
/// Below this rate (bit/s) the TSO goal is one segment, above it two.
const MIN_TSO_RATE: f64 = 1_200_000.0;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// Linux's congestion-avoidance states, as far as BBR looks at them.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    Open,
    Recovery,
    /// After a timeout, until the data then outstanding is acknowledged.
    Loss,
}

/// What the sender tells BBR on each ACK.
#[derive(Copy, Clone, Debug)]
pub struct BbrAck {
    pub now: Time,
    /// Packets in flight after the ACK (the sender's `pipe`).
    pub in_flight: u32,
    pub ca: CaState,
    /// Smoothed RTT, seconds (0 before the first sample).
    pub srtt: f64,
    /// Bytes per packet (for the TSO goal's 1.2 Mbit/s threshold).
    pub packet_size: u32,
    /// The window, not the pacing rate or the data, held the flight back
    /// (Linux's `tcp_is_cwnd_limited`): the flight before the ACK had reached it.
    pub cwnd_limited: bool,
    /// The ACK echoed a CE mark (ECE), on a flow that negotiated ECN.
    pub ece: bool,
}

/// BBR v1's state (Linux's `struct bbr`).
#[derive(Clone, Debug)]
pub struct Bbr {
    pub mode: Mode,
    bw: MaxFilter,
    min_rtt: Option<Dur>,
    min_rtt_stamp: Time,
    probe_rtt_done: Option<Time>,
    probe_rtt_round_done: bool,
    rtt_cnt: u32,
    next_rtt_delivered: u64,
    round_start: bool,
    packet_conservation: bool,
    prev_ca: CaState,
    prior_cwnd: f64,
    full_bw: f64,
    full_bw_cnt: u32,
    full_bw_reached: bool,
    pub cycle_idx: usize,
    cycle_stamp: Time,
    pub pacing_gain: f64,
    pub cwnd_gain: f64,
    /// Packets per second; before any sample, from the initial window.
    pub pacing_rate: f64,
    has_seen_rtt: bool,
    pub ssthresh: f64,
    rng: u64,
    long_term: LongTermBw,
    aggregation: AckAggregation,
}

impl Bbr {
    pub fn new(initial_window: f64, seed: u64) -> Self {
        Bbr {
            mode: Mode::Startup,
            bw: MaxFilter::default(),
            min_rtt: None,
            min_rtt_stamp: Time::ZERO,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            round_start: false,
            packet_conservation: false,
            prev_ca: CaState::Open,
            prior_cwnd: 0.0,
            full_bw: 0.0,
            full_bw_cnt: 0,
            full_bw_reached: false,
            cycle_idx: 0,
            cycle_stamp: Time::ZERO,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            // Linux: high_gain x cwnd per 1 ms until srtt is known.
            pacing_rate: HIGH_GAIN * initial_window * 1000.0 * PACING_MARGIN,
            has_seen_rtt: false,
            ssthresh: f64::INFINITY,
            rng: seed,
            long_term: LongTermBw::default(),
            aggregation: AckAggregation::new(Time::ZERO),
        }
    }

    /// The bandwidth filter's estimate, packets per second.
    pub fn max_bw(&self) -> f64 {
        self.bw.get()
    }

    /// The path's bandwidth as BBR paces and sizes its window by it (Linux's
    /// `bbr_bw`): a detected policer's rate, otherwise the filter's.
    pub fn bw(&self) -> f64 {
        self.long_term.bw().unwrap_or_else(|| self.max_bw())
    }

    pub fn min_rtt(&self) -> Option<Dur> {
        self.min_rtt
    }

    /// A policer's rate is in use (Linux's `lt_use_bw`).
    #[cfg(test)]
    pub fn policed(&self) -> bool {
        self.long_term.use_bw
    }

    #[cfg(test)]
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }

    #[cfg(test)]
    pub fn rounds(&self) -> u32 {
        self.rtt_cnt
    }

    /// A seed for the next connection's BBR (web objects), from this one's stream.
    pub fn next_seed(&mut self) -> u64 {
        self.rng = rng::mix64(self.rng);
        self.rng
    }

    fn draw(&mut self, n: u64) -> u64 {
        self.rng = rng::mix64(self.rng);
        self.rng % n
    }

    /// `gain` x the estimated BDP, rounded up; Linux's 10 before any RTT sample.
    fn bdp(&self, bw: f64, gain: f64) -> f64 {
        match self.min_rtt {
            None => INIT_CWND,
            Some(rtt) => (bw * rtt.as_secs_f64() * gain - 1e-9).ceil().max(0.0),
        }
    }

    /// Linux's `bbr_tso_segs_goal` in packets: 1 ms of the pacing rate.
    fn tso_segs_goal(&self, packet_size: u32) -> f64 {
        let min = if self.pacing_rate * packet_size as f64 * 8.0 < MIN_TSO_RATE {
            1.0
        } else {
            2.0
        };
        (self.pacing_rate / 1024.0).floor().max(min).min(127.0)
    }

    /// `bbr_quantization_budget`: room for the packets the pacing quantum holds.
    fn quantization_budget(&self, cwnd: f64, packet_size: u32) -> f64 {
        let mut cwnd = cwnd + 3.0 * self.tso_segs_goal(packet_size);
        cwnd = (cwnd / 2.0).ceil() * 2.0;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2.0;
        }
        cwnd
    }

    /// `bbr_inflight`: the flight `gain` x bw calls for.
    pub fn inflight(&self, bw: f64, gain: f64, packet_size: u32) -> f64 {
        self.quantization_budget(self.bdp(bw, gain), packet_size)
    }

    /// `bbr_packets_in_net_at_edt`: departures are immediate here, so only the
    /// packet a probing phase is about to add counts beyond the flight.
    fn in_net_at_edt(&self, in_flight: u32, packet_size: u32) -> f64 {
        let mut n = in_flight as f64;
        if self.pacing_gain > 1.0 {
            n += self.tso_segs_goal(packet_size);
        }
        n
    }

    /// Linux's `bbr_save_cwnd`: the window to restore after recovery or PROBE_RTT.
    pub fn save_cwnd(&mut self, cwnd: f64) {
        self.prior_cwnd = saved_cwnd(
            self.prior_cwnd,
            cwnd,
            self.prev_ca,
            self.mode == Mode::ProbeRtt,
        );
    }

    /// A timeout (Linux's `bbr_set_state(TCP_CA_Loss)` after `bbr_ssthresh`),
    /// read by the policer detector as one loss ending a round.
    pub fn on_timeout(&mut self, cwnd: f64, r: &RateSampler, packet_size: u32) {
        self.save_cwnd(cwnd);
        self.prev_ca = CaState::Loss;
        self.full_bw = 0.0;
        self.round_start = true;
        let sample = long_term::Sample {
            losses: 1,
            app_limited: false,
            round_start: true,
            mode: self.mode,
            packet_size,
        };
        self.long_term_sample(&sample, r, r.delivered_time());
    }

    /// A reduction undone as spurious (`bbr_undo_cwnd`): the full-bandwidth
    /// detector and the policer detector start over; the window stays.
    pub fn on_undo(&mut self, r: &RateSampler) {
        self.full_bw = 0.0;
        self.full_bw_cnt = 0;
        self.long_term.reset(Progress {
            delivered: r.delivered,
            lost: r.lost,
            at: r.delivered_time(),
        });
    }

    /// Linux's `bbr_main` on one ACK: updates the model, the pacing rate, and
    /// `cwnd`.
    pub fn on_ack(&mut self, rs: &RateSample, r: &mut RateSampler, a: &BbrAck, cwnd: &mut f64) {
        self.update_bw(rs, r, a);
        if rs.acked > 0 && rs.interval.is_some_and(|i| !i.is_zero()) {
            let bw = self.bw();
            let delivered_at = r.delivered_time();
            self.aggregation
                .update(self.round_start, rs.acked, delivered_at, bw, *cwnd);
        }
        self.update_cycle_phase(rs, a);
        self.check_full_bw_reached(rs);
        self.check_drain(a);
        self.update_min_rtt(rs, r, a, cwnd);
        self.update_gains();
        let bw = self.bw();
        self.set_pacing_rate(bw, a.srtt, *cwnd);
        self.set_cwnd(rs, r.delivered, a, bw, cwnd);
    }

    fn update_bw(&mut self, rs: &RateSample, r: &RateSampler, a: &BbrAck) {
        self.round_start = false;
        let Some(interval) = rs.interval else { return };
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = r.delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        let sample = long_term::Sample {
            losses: rs.losses,
            app_limited: rs.app_limited,
            round_start: self.round_start,
            mode: self.mode,
            packet_size: a.packet_size,
        };
        self.long_term_sample(&sample, r, a.now);
        if interval.is_zero() {
            return;
        }
        let bw = rs.delivered as f64 / interval.as_secs_f64();
        if !rs.app_limited || bw >= self.max_bw() {
            self.bw.update(BW_ROUNDS, self.rtt_cnt, bw);
        }
    }

    /// The policer detector's sample, and what it asks of the gains.
    fn long_term_sample(&mut self, s: &long_term::Sample, r: &RateSampler, now: Time) {
        let progress = Progress {
            delivered: r.delivered,
            lost: r.lost,
            at: r.delivered_time(),
        };
        match self.long_term.sample(s, progress) {
            Verdict::Keep => {}
            Verdict::Policed => self.pacing_gain = 1.0,
            Verdict::Expired => self.reset_probe_bw_mode(now),
        }
    }

    fn update_cycle_phase(&mut self, rs: &RateSample, a: &BbrAck) {
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(rs, a) {
            self.advance_cycle_phase(a.now);
        }
    }

    fn is_next_cycle_phase(&self, rs: &RateSample, a: &BbrAck) -> bool {
        let full_length = self
            .min_rtt
            .is_some_and(|m| a.now.saturating_since(self.cycle_stamp) > m);
        if self.pacing_gain == 1.0 {
            return full_length;
        }
        let inflight = self.in_net_at_edt(rs.prior_in_flight, a.packet_size);
        let bw = self.max_bw();
        if self.pacing_gain > 1.0 {
            return full_length
                && (rs.losses > 0
                    || inflight >= self.inflight(bw, self.pacing_gain, a.packet_size));
        }
        full_length || inflight <= self.inflight(bw, 1.0, a.packet_size)
    }

    fn advance_cycle_phase(&mut self, now: Time) {
        self.cycle_idx = (self.cycle_idx + 1) % CYCLE_LEN;
        self.cycle_stamp = now;
    }

    fn reset_probe_bw_mode(&mut self, now: Time) {
        self.mode = Mode::ProbeBw;
        self.cycle_idx = CYCLE_LEN - 1 - self.draw(CYCLE_RAND) as usize;
        self.advance_cycle_phase(now);
    }

    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.app_limited {
            return;
        }
        if self.max_bw() >= self.full_bw * FULL_BW_THRESH {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_ROUNDS;
    }

    fn check_drain(&mut self, a: &BbrAck) {
        let bw = self.max_bw();
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            self.ssthresh = self.inflight(bw, 1.0, a.packet_size);
        }
        if self.mode == Mode::Drain
            && self.in_net_at_edt(a.in_flight, a.packet_size)
                <= self.inflight(bw, 1.0, a.packet_size)
        {
            self.reset_probe_bw_mode(a.now);
        }
    }

    fn update_min_rtt(&mut self, rs: &RateSample, r: &mut RateSampler, a: &BbrAck, cwnd: &mut f64) {
        let expired = a.now > self.min_rtt_stamp + MIN_RTT_WIN;
        if let Some(rtt) = rs.rtt {
            if self.min_rtt.is_none_or(|m| rtt < m) || expired {
                self.min_rtt = Some(rtt);
                self.min_rtt_stamp = a.now;
            }
        }
        if expired && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(*cwnd);
            self.probe_rtt_done = None;
        }
        if self.mode == Mode::ProbeRtt {
            // No bandwidth sample of this quiet period may lower the estimate.
            r.set_app_limited(a.in_flight);
            match self.probe_rtt_done {
                None if a.in_flight as f64 <= MIN_CWND => {
                    self.probe_rtt_done = Some(a.now + PROBE_RTT_TIME);
                    self.probe_rtt_round_done = false;
                    self.next_rtt_delivered = r.delivered;
                }
                None => {}
                Some(done) => {
                    if self.round_start {
                        self.probe_rtt_round_done = true;
                    }
                    if self.probe_rtt_round_done && a.now > done {
                        self.min_rtt_stamp = a.now;
                        *cwnd = cwnd.max(self.prior_cwnd);
                        if self.full_bw_reached {
                            self.reset_probe_bw_mode(a.now);
                        } else {
                            self.mode = Mode::Startup;
                        }
                    }
                }
            }
        }
    }

    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw if self.long_term.use_bw => (1.0, CWND_GAIN),
            Mode::ProbeBw => (PACING_GAIN[self.cycle_idx], CWND_GAIN),
            Mode::ProbeRtt => (1.0, 1.0),
        };
    }

    fn set_pacing_rate(&mut self, bw: f64, srtt: f64, cwnd: f64) {
        if !self.has_seen_rtt && srtt > 0.0 {
            self.has_seen_rtt = true;
            self.pacing_rate = HIGH_GAIN * cwnd / srtt * PACING_MARGIN;
        }
        let rate = self.pacing_gain * bw * PACING_MARGIN;
        if rate > 0.0 && (self.full_bw_reached || rate > self.pacing_rate) {
            self.pacing_rate = rate;
        }
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: true when packet conservation
    /// decides the window.
    fn recover_or_restore(
        &mut self,
        rs: &RateSample,
        delivered: u64,
        a: &BbrAck,
        cwnd: &mut f64,
    ) -> bool {
        let mut w = *cwnd;
        if rs.losses > 0 {
            w = (w - rs.losses as f64).max(1.0);
        }
        if a.ca == CaState::Recovery && self.prev_ca != CaState::Recovery {
            self.packet_conservation = true;
            self.next_rtt_delivered = delivered; // a round starts now
            w = (a.in_flight + rs.acked) as f64;
        } else if self.prev_ca >= CaState::Recovery && a.ca < CaState::Recovery {
            w = w.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca = a.ca;
        if self.packet_conservation {
            *cwnd = w.max((a.in_flight + rs.acked) as f64);
            return true;
        }
        *cwnd = w;
        false
    }

    fn set_cwnd(&mut self, rs: &RateSample, delivered: u64, a: &BbrAck, bw: f64, cwnd: &mut f64) {
        if rs.acked > 0 && !self.recover_or_restore(rs, delivered, a, cwnd) {
            let mut target = self.bdp(bw, self.cwnd_gain);
            if self.full_bw_reached {
                target += self.aggregation.cwnd(bw);
            }
            let target = self.quantization_budget(target, a.packet_size);
            let acked = rs.acked as f64;
            if self.full_bw_reached {
                *cwnd = (*cwnd + acked).min(target);
            } else if *cwnd < target || (delivered as f64) < INIT_CWND {
                *cwnd += acked;
            }
            *cwnd = cwnd.max(MIN_CWND);
        }
        if self.mode == Mode::ProbeRtt {
            *cwnd = cwnd.min(MIN_CWND);
        }
    }
}

#[cfg(test)]
mod tests;
