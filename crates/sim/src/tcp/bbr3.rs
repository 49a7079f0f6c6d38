//! BBRv3 (`variant = "bbr3"`) after draft-ietf-ccwg-bbr-06, the IETF's BBR: v1's
//! model of the path ([`super::bbr`]) bounded by what loss says about it.
//!
//! - Model: the bandwidth is the maximum delivery rate over the current and the
//!   last ProbeBW cycle (two slots); the minimum RTT the lowest sample of 10 s.
//!   Two bounds sit on it. The long-term `inflight_longterm` is the flight at
//!   which a probe saw more than 2% of its packets lost (per lost packet, at
//!   the point inside it where the rate crossed 2%), raised again by each probe
//!   that does not: +1, 2, 4... packets a round. The short-term `bw_shortterm`
//!   and `inflight_shortterm` fall to 0.7 of themselves (never below what the
//!   last round delivered) once per round that saw a loss or an ECN echo, when
//!   the flow is not probing, and are forgotten when a probe starts.
//! - STARTUP: pacing gain 2.77 (4 ln 2), cwnd gain 2. It ends after 3 rounds
//!   with less than 25% growth, or, in recovery, after a round with 6 lossy ACKs
//!   and more than 2% lost (then `inflight_longterm` is the BDP, or what the
//!   round delivered if more). DRAIN: pacing gain 0.5 until the flight is one
//!   BDP, or 3 rounds.
//! - ProbeBW: DOWN (pacing 0.9) until the flight fits the BDP and 85% of
//!   `inflight_longterm`, CRUISE (1.0) until 2-3 s from DOWN (drawn from the
//!   flow's stream) or as many rounds as Reno would take to grow by the BDP
//!   (at most 63), REFILL (1.0) for one round, UP (1.25, cwnd gain 2.25) until
//!   the bandwidth stops growing for 3 rounds, the flight reaches the long-term
//!   bound after a probe that lost too much, or a probe loses too much.
//! - ProbeRTT: 5 s after the last new minimum, cwnd half the BDP (at least 4)
//!   for 200 ms and a round; then back to CRUISE with the window it had.
//! - cwnd = gain x BDP + the ACK aggregation seen over 10 rounds, at least 3
//!   send quanta (1 ms of the pacing rate, 2 packets to 64 KB) and 4 packets,
//!   plus 2 in UP; grows by the packets each ACK delivers; capped by
//!   `inflight_longterm` (85% of it in CRUISE and ProbeRTT) and
//!   `inflight_shortterm`. Pacing = gain x bw x 99%.
//! - Loss recovery keeps the model's window (no packet conservation in -06);
//!   the window from before is restored when recovery ends.
//!
//! Sizes are packets (the draft's SMSS is one packet). Not modelled: the undo
//! of the short-term bounds (an undo restarts only the full-bandwidth
//! detector), the restart after idle (bulk flows are never idle; a web object
//! starts a new BBR), and Linux v3's optional DCTCP-style ECN response; the
//! draft gives none and asks only that CE count as congestion, which here it
//! does as a loss does for the short-term bounds.

use super::bbr::{BbrAck, CaState};
use super::minmax::MaxFilter;
use super::sender::rate::{LostPacket, RateSample, RateSampler};
use aqm::{rng, Dur, Time};
pub use state::State;

mod state;

pub const STARTUP_PACING_GAIN: f64 = 2.77;
const DEFAULT_CWND_GAIN: f64 = 2.0;
pub const DRAIN_PACING_GAIN: f64 = 0.5;
pub const DOWN_PACING_GAIN: f64 = 0.9;
pub const UP_PACING_GAIN: f64 = 1.25;
const UP_CWND_GAIN: f64 = 2.25;
const PROBE_RTT_CWND_GAIN: f64 = 0.5;
const PACING_MARGIN: f64 = 0.99;
/// The loss rate a probe may cause, per round.
pub const LOSS_THRESH: f64 = 0.02;
/// The short-term bounds' cut per lossy round, and the long-term bound's floor.
pub const BETA: f64 = 0.7;
/// The share of `inflight_longterm` left free while cruising.
pub const HEADROOM: f64 = 0.15;
pub const MIN_PIPE_CWND: f64 = 4.0;
const EXTRA_ACKED_ROUNDS: u32 = 10;
const MIN_RTT_WIN: Dur = Dur::from_secs(10);
pub const PROBE_RTT_INTERVAL: Dur = Dur::from_secs(5);
pub const PROBE_RTT_DURATION: Dur = Dur::from_millis(200);
const FULL_BW_THRESH: f64 = 1.25;
const FULL_BW_ROUNDS: u32 = 3;
/// ACKs with new losses in one round that may end STARTUP (Linux saturates at 15).
const STARTUP_FULL_LOSS_CNT: u32 = 6;
const DRAIN_MAX_ROUNDS: u32 = 3;
/// The Reno-coexistence bound on the rounds between probes.
const RENO_MAX_ROUNDS: f64 = 63.0;
const PROBE_UP_MAX_ROUNDS: u32 = 30;
const MAX_SEND_QUANTUM_BYTES: f64 = 65536.0;

/// Where the ACKs stand relative to a bandwidth probe.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum AckPhase {
    Init,
    Refilling,
    ProbeStarting,
    ProbeFeedback,
    ProbeStopping,
}

/// What the connection looks like on this ACK.
#[derive(Copy, Clone, Debug)]
struct Conn {
    now: Time,
    delivered: u64,
    in_flight: f64,
    cwnd: f64,
    cwnd_limited: bool,
    packet_size: u32,
}

/// BBRv3's state (the draft's `BBR.` variables, in packets and packets/s).
#[derive(Clone, Debug)]
pub struct Bbr3 {
    pub state: State,
    c: Conn,
    /// The maximum delivery rate of the last ProbeBW cycle and of this one.
    bw_hi: [f64; 2],
    /// The rate the model uses: `max_bw` bounded by `bw_shortterm`.
    bw: f64,
    pub bw_shortterm: f64,
    pub inflight_shortterm: f64,
    pub inflight_longterm: f64,
    bw_latest: f64,
    inflight_latest: f64,
    loss_round_delivered: u64,
    loss_round_start: bool,
    loss_in_round: bool,
    loss_events_in_round: u32,
    next_round_delivered: u64,
    round_start: bool,
    round_count: u32,
    rounds_since_probe_up: u32,
    full_bw: f64,
    full_bw_count: u32,
    full_bw_now: bool,
    full_bw_reached: bool,
    drain_start_round: u32,
    min_rtt: Option<Dur>,
    min_rtt_stamp: Time,
    probe_rtt_min_delay: Option<Dur>,
    probe_rtt_min_stamp: Time,
    probe_rtt_expired: bool,
    probe_rtt_done: Option<Time>,
    probe_rtt_round_done: bool,
    prior_cwnd: f64,
    prev_ca: CaState,
    cycle_stamp: Time,
    bw_probe_wait: Dur,
    ack_phase: AckPhase,
    bw_probe_samples: bool,
    prev_probe_too_high: bool,
    prev_probe_precautionary: bool,
    probe_up_acked_per_inc: f64,
    bw_probe_up_acked: f64,
    bw_probe_up_rounds: u32,
    extra_acked: MaxFilter,
    extra_acked_start: Time,
    extra_acked_delivered: f64,
    /// Packets per second.
    pub pacing_rate: f64,
    has_seen_rtt: bool,
    initial_window: f64,
    /// Set once, on leaving STARTUP, as Linux's BBR does.
    pub ssthresh: f64,
    rng: u64,
}

impl Bbr3 {
    pub fn new(initial_window: f64, seed: u64) -> Self {
        Bbr3 {
            state: State::Startup,
            c: Conn {
                now: Time::ZERO,
                delivered: 0,
                in_flight: 0.0,
                cwnd: initial_window,
                cwnd_limited: false,
                packet_size: 1500,
            },
            bw_hi: [0.0; 2],
            bw: 0.0,
            bw_shortterm: f64::INFINITY,
            inflight_shortterm: f64::INFINITY,
            inflight_longterm: f64::INFINITY,
            bw_latest: 0.0,
            inflight_latest: 0.0,
            loss_round_delivered: 0,
            loss_round_start: false,
            loss_in_round: false,
            loss_events_in_round: 0,
            next_round_delivered: 0,
            round_start: false,
            round_count: 0,
            rounds_since_probe_up: 0,
            full_bw: 0.0,
            full_bw_count: 0,
            full_bw_now: false,
            full_bw_reached: false,
            drain_start_round: 0,
            min_rtt: None,
            min_rtt_stamp: Time::ZERO,
            probe_rtt_min_delay: None,
            probe_rtt_min_stamp: Time::ZERO,
            probe_rtt_expired: false,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            prior_cwnd: 0.0,
            prev_ca: CaState::Open,
            cycle_stamp: Time::ZERO,
            bw_probe_wait: Dur::ZERO,
            ack_phase: AckPhase::Init,
            bw_probe_samples: false,
            prev_probe_too_high: false,
            prev_probe_precautionary: false,
            probe_up_acked_per_inc: f64::INFINITY,
            bw_probe_up_acked: 0.0,
            bw_probe_up_rounds: 0,
            extra_acked: MaxFilter::default(),
            extra_acked_start: Time::ZERO,
            extra_acked_delivered: 0.0,
            // 2.77 x the initial window per 1 ms until srtt is known.
            pacing_rate: STARTUP_PACING_GAIN * initial_window * 1000.0,
            has_seen_rtt: false,
            initial_window,
            ssthresh: f64::INFINITY,
            rng: seed,
        }
    }

    pub fn max_bw(&self) -> f64 {
        self.bw_hi[0].max(self.bw_hi[1])
    }

    /// The bandwidth it paces and sizes its window by (the draft's `BBR.bw`).
    pub fn bw(&self) -> f64 {
        self.bw
    }

    pub fn min_rtt(&self) -> Option<Dur> {
        self.min_rtt
    }

    pub fn next_seed(&mut self) -> u64 {
        self.rng = rng::mix64(self.rng);
        self.rng
    }

    /// A uniform draw in [0, 1) from the flow's stream.
    fn uniform(&mut self) -> f64 {
        (self.next_seed() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// `BBRSaveCwnd`: the window to restore after recovery or ProbeRTT.
    pub fn save_cwnd(&mut self, cwnd: f64) {
        self.prior_cwnd = super::bbr::saved_cwnd(
            self.prior_cwnd,
            cwnd,
            self.prev_ca,
            self.state == State::ProbeRtt,
        );
    }

    /// `BBROnEnterRTO` (the sender drops the window to what is in flight + 1).
    pub fn on_timeout(&mut self, cwnd: f64) {
        self.save_cwnd(cwnd);
        self.prev_ca = CaState::Loss;
    }

    /// One ACK (`BBRUpdateOnACK`): the lost packets it shows, the model, the
    /// state, then the pacing rate and `cwnd`.
    pub fn on_ack(&mut self, rs: &RateSample, r: &mut RateSampler, a: &BbrAck, cwnd: &mut f64) {
        self.c = Conn {
            now: a.now,
            delivered: r.delivered,
            in_flight: a.in_flight as f64,
            cwnd: *cwnd,
            cwnd_limited: a.cwnd_limited,
            packet_size: a.packet_size,
        };
        for p in r.newly_lost() {
            self.handle_lost_packet(p);
        }
        if a.ece {
            self.note_loss();
        }
        let rate = delivery_rate(rs);
        self.update_latest_delivery_signals(rs, rate);
        self.update_congestion_signals(rs, rate);
        self.update_ack_aggregation(rs);
        self.check_full_bw_reached(rs, rate);
        self.check_startup_done(rs, a);
        self.check_drain_done();
        self.update_probe_bw_cycle_phase(rs, rate);
        self.update_min_rtt(rs);
        self.check_probe_rtt(r);
        self.advance_latest_delivery_signals(rs, rate);
        self.bw = self.max_bw().min(self.bw_shortterm);
        self.set_pacing_rate(a.srtt);
        self.set_cwnd(rs, a);
        *cwnd = self.c.cwnd;
    }

    // --- Loss -----------------------------------------------------------------

    fn is_inflight_too_high(lost: u64, tx_in_flight: f64) -> bool {
        lost as f64 > LOSS_THRESH * tx_in_flight
    }

    /// `BBRNoteLoss`: a loss round starts at the first loss of a round.
    fn note_loss(&mut self) {
        if !self.loss_in_round {
            self.loss_round_delivered = self.c.delivered;
        }
        self.loss_in_round = true;
    }

    /// `BBRHandleLostPacket`: a packet of a probe's feedback lost beyond 2%
    /// sets the long-term bound where inside it the rate crossed 2%.
    fn handle_lost_packet(&mut self, p: &LostPacket) {
        self.note_loss();
        if !self.bw_probe_samples {
            return;
        }
        let tx_in_flight = p.tx_in_flight as f64;
        if Self::is_inflight_too_high(p.lost_since, tx_in_flight) {
            let inflight_prev = tx_in_flight - 1.0;
            let lost_prev = p.lost_since as f64 - 1.0;
            let lost_prefix = (LOSS_THRESH * inflight_prev - lost_prev) / (1.0 - LOSS_THRESH);
            self.handle_inflight_too_high(inflight_prev + lost_prefix, p.app_limited);
        }
    }

    fn handle_inflight_too_high(&mut self, tx_in_flight: f64, app_limited: bool) {
        self.prev_probe_too_high = true;
        self.bw_probe_samples = false;
        if !app_limited {
            self.inflight_longterm = tx_in_flight.max(BETA * self.target_inflight());
        }
        if self.state == State::Up {
            self.start_probe_bw_down();
        }
    }

    // --- The model ------------------------------------------------------------

    fn update_latest_delivery_signals(&mut self, rs: &RateSample, rate: f64) {
        self.loss_round_start = false;
        self.bw_latest = self.bw_latest.max(rate);
        self.inflight_latest = self.inflight_latest.max(rs.delivered as f64);
        if rs.delivered > 0 && rs.prior_delivered >= self.loss_round_delivered {
            self.loss_round_delivered = self.c.delivered;
            self.loss_round_start = true;
        }
    }

    fn update_congestion_signals(&mut self, rs: &RateSample, rate: f64) {
        self.update_round(rs);
        if rate > 0.0 && (rate >= self.max_bw() || !rs.app_limited) {
            self.bw_hi[1] = self.bw_hi[1].max(rate);
        }
        if !self.loss_round_start {
            return;
        }
        if !self.state.is_probing() && self.loss_in_round {
            // `BBRInitLowerBounds`, then `BBRLossLowerBounds`.
            if self.bw_shortterm.is_infinite() {
                self.bw_shortterm = self.max_bw();
            }
            if self.inflight_shortterm.is_infinite() {
                self.inflight_shortterm = self.c.cwnd;
            }
            self.bw_shortterm = self.bw_latest.max(BETA * self.bw_shortterm);
            self.inflight_shortterm = self.inflight_latest.max(BETA * self.inflight_shortterm);
        }
        self.loss_in_round = false;
    }

    fn update_round(&mut self, rs: &RateSample) {
        self.round_start = rs.delivered > 0 && rs.prior_delivered >= self.next_round_delivered;
        if self.round_start {
            self.next_round_delivered = self.c.delivered;
            self.round_count += 1;
            self.rounds_since_probe_up += 1;
        }
    }

    fn start_round(&mut self) {
        self.next_round_delivered = self.c.delivered;
    }

    /// One ProbeBW cycle done: the older slot of the bandwidth filter retires.
    fn advance_max_bw_filter(&mut self) {
        if self.bw_hi[1] > 0.0 {
            self.bw_hi = [self.bw_hi[1], 0.0];
        }
    }

    /// `BBRUpdateACKAggregation`: how far the ACKs ran ahead of `bw`.
    fn update_ack_aggregation(&mut self, rs: &RateSample) {
        let interval = self.c.now.saturating_since(self.extra_acked_start);
        let mut expected = self.bw * interval.as_secs_f64();
        if self.extra_acked_delivered <= expected {
            self.extra_acked_delivered = 0.0;
            self.extra_acked_start = self.c.now;
            expected = 0.0;
        }
        self.extra_acked_delivered += rs.acked as f64;
        let extra = (self.extra_acked_delivered - expected).min(self.c.cwnd);
        let win = if self.full_bw_reached {
            EXTRA_ACKED_ROUNDS
        } else {
            1
        };
        self.extra_acked.update(win, self.round_count, extra);
    }

    fn advance_latest_delivery_signals(&mut self, rs: &RateSample, rate: f64) {
        if self.loss_round_start {
            self.bw_latest = rate;
            self.inflight_latest = rs.delivered as f64;
        }
    }

    fn reset_congestion_signals(&mut self) {
        self.loss_in_round = false;
        self.bw_latest = 0.0;
        self.inflight_latest = 0.0;
    }

    fn reset_short_term_model(&mut self) {
        self.bw_shortterm = f64::INFINITY;
        self.inflight_shortterm = f64::INFINITY;
    }

    fn update_min_rtt(&mut self, rs: &RateSample) {
        let now = self.c.now;
        self.probe_rtt_expired = now > self.probe_rtt_min_stamp + PROBE_RTT_INTERVAL;
        if let Some(rtt) = rs.rtt {
            if self.probe_rtt_min_delay.is_none_or(|m| rtt < m) || self.probe_rtt_expired {
                self.probe_rtt_min_delay = Some(rtt);
                self.probe_rtt_min_stamp = now;
            }
        }
        let Some(delay) = self.probe_rtt_min_delay else {
            return;
        };
        if self.min_rtt.is_none_or(|m| delay < m) || now > self.min_rtt_stamp + MIN_RTT_WIN {
            self.min_rtt = Some(delay);
            self.min_rtt_stamp = self.probe_rtt_min_stamp;
        }
    }

    // --- STARTUP and DRAIN ----------------------------------------------------

    pub(crate) fn reset_full_bw(&mut self) {
        self.full_bw = 0.0;
        self.full_bw_count = 0;
        self.full_bw_now = false;
    }

    /// Three rounds without 25% growth (STARTUP, and UP's plateau).
    fn check_full_bw_reached(&mut self, rs: &RateSample, rate: f64) {
        if self.full_bw_now || !self.round_start || rs.app_limited {
            return;
        }
        if rate >= self.full_bw * FULL_BW_THRESH {
            self.reset_full_bw();
            self.full_bw = rate;
            return;
        }
        self.full_bw_count += 1;
        self.full_bw_now = self.full_bw_count >= FULL_BW_ROUNDS;
        if self.full_bw_now {
            self.full_bw_reached = true;
        }
    }

    fn check_startup_done(&mut self, rs: &RateSample, a: &BbrAck) {
        self.check_startup_high_loss(rs, a);
        if self.state == State::Startup && self.full_bw_reached {
            self.state = State::Drain;
            self.drain_start_round = self.round_count;
            self.ssthresh = self.inflight(self.max_bw(), 1.0);
        }
    }

    /// The draft says it in prose; this is Linux v3's rule: a round in recovery
    /// with 6 lossy ACKs and more than 2% of its flight lost ends STARTUP.
    fn check_startup_high_loss(&mut self, rs: &RateSample, a: &BbrAck) {
        if self.full_bw_reached {
            return;
        }
        if rs.losses > 0 {
            self.loss_events_in_round = (self.loss_events_in_round + 1).min(15);
        }
        if self.loss_round_start
            && a.ca == CaState::Recovery
            && self.loss_events_in_round >= STARTUP_FULL_LOSS_CNT
            && Self::is_inflight_too_high(rs.lost, rs.tx_in_flight as f64)
        {
            self.full_bw_reached = true;
            self.inflight_longterm = self.inflight(self.max_bw(), 1.0).max(self.inflight_latest);
        }
        if self.loss_round_start {
            self.loss_events_in_round = 0;
        }
    }

    fn check_drain_done(&mut self) {
        if self.state == State::Drain
            && (self.c.in_flight <= self.inflight(self.bw, 1.0)
                || self.round_count > self.drain_start_round + DRAIN_MAX_ROUNDS)
        {
            self.start_probe_bw_down();
        }
    }

    // --- ProbeBW --------------------------------------------------------------

    fn start_probe_bw_down(&mut self) {
        self.reset_congestion_signals();
        self.probe_up_acked_per_inc = f64::INFINITY;
        self.rounds_since_probe_up = (self.next_seed() % 2) as u32;
        self.bw_probe_wait = Dur::from_secs_f64(2.0 + self.uniform());
        self.cycle_stamp = self.c.now;
        self.ack_phase = AckPhase::ProbeStopping;
        self.start_round();
        self.state = State::Down;
    }

    fn start_probe_bw_refill(&mut self) {
        self.reset_short_term_model();
        self.bw_probe_up_rounds = 0;
        self.bw_probe_up_acked = 0.0;
        self.prev_probe_precautionary = false;
        self.ack_phase = AckPhase::Refilling;
        self.start_round();
        self.state = State::Refill;
    }

    fn start_probe_bw_up(&mut self, rate: f64) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.start_round();
        self.reset_full_bw();
        self.full_bw = rate;
        self.state = State::Up;
        self.raise_inflight_longterm_slope();
    }

    fn update_probe_bw_cycle_phase(&mut self, rs: &RateSample, rate: f64) {
        if !self.full_bw_reached || self.adapt_long_term_model(rs) || !self.state.is_probe_bw() {
            return;
        }
        match self.state {
            State::Down => {
                if !self.is_time_to_probe_bw() && self.is_time_to_cruise() {
                    self.state = State::Cruise;
                }
            }
            State::Cruise => {
                self.is_time_to_probe_bw();
            }
            State::Refill => {
                if self.round_start {
                    self.bw_probe_samples = true;
                    self.start_probe_bw_up(rate);
                }
            }
            State::Up => {
                if self.is_time_to_go_down(rate) {
                    self.prev_probe_too_high = false;
                    self.start_probe_bw_down();
                }
            }
            State::Startup | State::Drain | State::ProbeRtt => {}
        }
    }

    /// DOWN or CRUISE to REFILL, after the wall-clock wait or Reno's rounds.
    fn is_time_to_probe_bw(&mut self) -> bool {
        let reno_rounds = self.target_inflight().min(RENO_MAX_ROUNDS);
        if self.c.now > self.cycle_stamp + self.bw_probe_wait
            || self.rounds_since_probe_up as f64 >= reno_rounds
        {
            self.start_probe_bw_refill();
            return true;
        }
        false
    }

    fn is_time_to_cruise(&self) -> bool {
        self.c.in_flight <= self.inflight_with_headroom()
            && self.c.in_flight <= self.inflight(self.max_bw(), 1.0)
    }

    fn is_time_to_go_down(&mut self, rate: f64) -> bool {
        if self.prev_probe_too_high && self.c.in_flight >= self.inflight_longterm {
            self.prev_probe_precautionary = true;
            return true;
        }
        if self.c.cwnd_limited && self.c.cwnd >= self.inflight_longterm {
            // Held by the long-term bound, not by the path: no plateau yet.
            self.reset_full_bw();
            self.full_bw = rate;
        } else if self.full_bw_now {
            return true;
        }
        false
    }

    /// `BBRAdaptLongTermModel`; true when it changed the state.
    fn adapt_long_term_model(&mut self, rs: &RateSample) -> bool {
        if self.ack_phase == AckPhase::ProbeStarting && self.round_start {
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.round_start {
            self.bw_probe_samples = false;
            self.ack_phase = AckPhase::Init;
            if self.state.is_probe_bw() && !rs.app_limited {
                self.advance_max_bw_filter();
            }
            if self.state.is_probe_bw()
                && self.prev_probe_precautionary
                && !self.prev_probe_too_high
            {
                self.start_probe_bw_refill();
                return true;
            }
        }
        if Self::is_inflight_too_high(rs.lost, rs.tx_in_flight as f64)
            || self.inflight_longterm.is_infinite()
        {
            return false;
        }
        self.inflight_longterm = self.inflight_longterm.max(rs.tx_in_flight as f64);
        if self.state == State::Up {
            self.probe_inflight_longterm_upward(rs);
        }
        false
    }

    /// Each UP round doubles the long-term bound's growth: 1, 2, 4... a round.
    fn raise_inflight_longterm_slope(&mut self) {
        let growth = (1u64 << self.bw_probe_up_rounds) as f64;
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(PROBE_UP_MAX_ROUNDS);
        self.probe_up_acked_per_inc = (self.c.cwnd / growth).max(1.0);
    }

    fn probe_inflight_longterm_upward(&mut self, rs: &RateSample) {
        if !self.c.cwnd_limited || self.c.cwnd < self.inflight_longterm {
            return;
        }
        self.bw_probe_up_acked += rs.acked as f64;
        if self.bw_probe_up_acked >= self.probe_up_acked_per_inc {
            let delta = (self.bw_probe_up_acked / self.probe_up_acked_per_inc).floor();
            self.bw_probe_up_acked -= delta * self.probe_up_acked_per_inc;
            self.inflight_longterm += delta;
        }
        if self.round_start {
            self.raise_inflight_longterm_slope();
        }
    }

    // --- ProbeRTT -------------------------------------------------------------

    fn check_probe_rtt(&mut self, r: &mut RateSampler) {
        if self.state != State::ProbeRtt && self.probe_rtt_expired {
            self.save_cwnd(self.c.cwnd);
            self.state = State::ProbeRtt;
            self.probe_rtt_done = None;
            self.ack_phase = AckPhase::ProbeStopping;
            self.start_round();
        }
        if self.state != State::ProbeRtt {
            return;
        }
        // No bandwidth sample of this quiet period may lower the estimate.
        r.set_app_limited(self.c.in_flight as u32);
        match self.probe_rtt_done {
            None if self.c.in_flight <= self.probe_rtt_cwnd() => {
                self.probe_rtt_done = Some(self.c.now + PROBE_RTT_DURATION);
                self.probe_rtt_round_done = false;
                self.start_round();
            }
            None => {}
            Some(done) => {
                self.probe_rtt_round_done |= self.round_start;
                if self.probe_rtt_round_done && self.c.now > done {
                    self.probe_rtt_min_stamp = self.c.now;
                    self.c.cwnd = self.c.cwnd.max(self.prior_cwnd);
                    self.reset_short_term_model();
                    if self.full_bw_reached {
                        self.start_probe_bw_down();
                        self.state = State::Cruise;
                    } else {
                        self.state = State::Startup;
                    }
                }
            }
        }
    }

    fn probe_rtt_cwnd(&self) -> f64 {
        self.bdp_multiple(self.bw, PROBE_RTT_CWND_GAIN)
            .max(MIN_PIPE_CWND)
    }

    // --- Pacing and cwnd ------------------------------------------------------

    fn set_pacing_rate(&mut self, srtt: f64) {
        if !self.has_seen_rtt && srtt > 0.0 {
            self.has_seen_rtt = true;
            self.pacing_rate = STARTUP_PACING_GAIN * self.initial_window / srtt;
        }
        let rate = self.state.pacing_gain() * self.bw * PACING_MARGIN;
        if rate > 0.0 && (self.full_bw_reached || rate > self.pacing_rate) {
            self.pacing_rate = rate;
        }
    }

    /// 1 ms of the pacing rate, 2 packets to 64 KB.
    fn send_quantum(&self) -> f64 {
        let max = (MAX_SEND_QUANTUM_BYTES / self.c.packet_size.max(1) as f64).max(2.0);
        (self.pacing_rate / 1000.0).clamp(2.0, max)
    }

    fn quantization_budget(&self, inflight: f64) -> f64 {
        // The draft's offload budget for TCP: three send quanta.
        let mut x = inflight.max(3.0 * self.send_quantum()).max(MIN_PIPE_CWND);
        if self.state == State::Up {
            x += 2.0;
        }
        x
    }

    fn bdp_multiple(&self, bw: f64, gain: f64) -> f64 {
        match self.min_rtt {
            None => self.initial_window,
            Some(rtt) => gain * bw * rtt.as_secs_f64(),
        }
    }

    /// `BBRInflight`: the flight `gain` x `bw` calls for.
    fn inflight(&self, bw: f64, gain: f64) -> f64 {
        self.quantization_budget(self.bdp_multiple(bw, gain))
    }

    fn target_inflight(&self) -> f64 {
        self.bdp_multiple(self.bw, 1.0).min(self.c.cwnd)
    }

    fn inflight_with_headroom(&self) -> f64 {
        if self.inflight_longterm.is_infinite() {
            return f64::INFINITY;
        }
        let headroom = (HEADROOM * self.inflight_longterm).max(1.0);
        (self.inflight_longterm - headroom).max(MIN_PIPE_CWND)
    }

    fn set_cwnd(&mut self, rs: &RateSample, a: &BbrAck) {
        if self.prev_ca >= CaState::Recovery && a.ca == CaState::Open {
            self.c.cwnd = self.c.cwnd.max(self.prior_cwnd);
        }
        self.prev_ca = a.ca;
        let extra = self.extra_acked.get();
        let max_inflight =
            self.quantization_budget(self.bdp_multiple(self.bw, self.state.cwnd_gain()) + extra);
        let acked = rs.acked as f64;
        let mut cwnd = self.c.cwnd;
        if self.full_bw_reached {
            cwnd = (cwnd + acked).min(max_inflight);
        } else if cwnd < max_inflight || (self.c.delivered as f64) < self.initial_window {
            cwnd += acked;
        }
        cwnd = cwnd.max(MIN_PIPE_CWND);
        if self.state == State::ProbeRtt {
            cwnd = cwnd.min(self.probe_rtt_cwnd());
        }
        // `BBRBoundCwndForModel`.
        let cap = match self.state {
            State::Down | State::Refill | State::Up => self.inflight_longterm,
            State::Cruise | State::ProbeRtt => self.inflight_with_headroom(),
            State::Startup | State::Drain => f64::INFINITY,
        };
        let cap = cap.min(self.inflight_shortterm).max(MIN_PIPE_CWND);
        self.c.cwnd = cwnd.min(cap);
    }
}

/// The sample's delivery rate, packets per second; 0 when it is no estimate.
fn delivery_rate(rs: &RateSample) -> f64 {
    match rs.interval {
        Some(i) if !i.is_zero() => rs.delivered as f64 / i.as_secs_f64(),
        _ => 0.0,
    }
}

#[cfg(test)]
mod tests;
