//! PIE: Proportional Integral controller Enhanced (Pan, Natarajan, Baker & White,
//! RFC 8033), with the RFC's optional elements: ECN, derandomization, the cap on
//! probability growth, the dequeue-rate estimator and byte mode. Linux
//! `net/sched/sch_pie.c` and ns-3 `pie-queue-disc.cc` are the other references.
//!
//! Arrivals are dropped at random with probability `p`, which a PI controller
//! recomputes every `tupdate` from the queueing delay `qdelay` (RFC 8033 4.2):
//!
//! `p += alpha * (qdelay - target) + beta * (qdelay - qdelay_old)`
//!
//! with alpha and beta (per second) divided by 2 while p < 10%, by 8 while p < 1%,
//! by 32, 128, 512 and 2048 below 0.1%, 0.01%, 0.001% and 0.0001% (the RFC's
//! auto-tuning, so a light load is not hit by the full gain), the increase capped
//! at 2% per update once p >= 10% (`cap_drop_adjustment`, RFC 5.5), and p decayed
//! by 2% per update while both delays are 0. `qdelay` is the sojourn of the last
//! packet dequeued (0 once the queue empties), or with `dq_rate_estimator` the
//! backlog divided by the measured drain rate (RFC 4.3, 5.2).
//!
//! The RFC's state machine: a burst allowance of `max_burst` lets everything in
//! at first; every update takes `tupdate` off it; it is refilled when p = 0 and
//! both the current and the previous delay are below `target / 2` (RFC 4.4).
//! While it lasts, or while `qdelay_old < target / 2` and p < 20%, or while at
//! most two `mtu`-sized packets are queued, nothing is dropped early (RFC 4.1).
//! With `derandomize` (RFC 5.4) the probabilities of successive arrivals
//! accumulate: no drop before the sum reaches 0.85, a sure drop at 8.5. With `ecn`
//! an ECN-capable arrival is CE-marked instead of dropped while p <
//! `mark_ecn_threshold` (RFC 5.1).
//!
//! The controller runs on the `now` of each enqueue and dequeue, as Linux's timer
//! would have: updates due at t_k = k * `tupdate` run, in order, before the call
//! that comes after them. Between calls the queue does not change, so that is
//! what a timer would compute; an update due at the very instant of a call runs
//! after it, as in ns-3 where the packets' events were scheduled first. After a
//! long idle spell the updates stop as soon as they no longer change anything.
//!
//! Where Linux and ns-3 differ and what aqmlab does, and the defaults' sources:
//! `docs/qdiscs.md`.

use crate::drop_reason::DropReason;
use crate::packet::Packet;
use crate::parts::fifo::PacketFifo;
use crate::qdisc::{check, Ctx, Limit, LinkInfo, ParamError, Qdisc, QdiscParams, Verdict};
use crate::time::{Dur, Time};
use serde::{Deserialize, Serialize};

/// PIE parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PieParams {
    /// Capacity in packets. Default 1000 (Linux).
    pub limit: u32,
    /// Target queueing delay. Default 15 ms (RFC 8033, Linux).
    pub target: Dur,
    /// Time between probability updates. Default 15 ms (RFC 8033, Linux).
    #[serde(alias = "t_update")]
    pub tupdate: Dur,
    /// Weight of the delay's distance from target, per second. Default 0.125.
    pub alpha: f64,
    /// Weight of the delay's change since the last update, per second. Default 1.25.
    pub beta: f64,
    /// Burst allowance: no early drops for this long at first and after each
    /// quiet spell. Default 150 ms (RFC 8033, Linux).
    pub max_burst: Dur,
    /// CE-mark ECN-capable arrivals instead of dropping them while p is below
    /// `mark_ecn_threshold`. Default false (Linux).
    pub ecn: bool,
    /// Above this drop probability ECN-capable packets are dropped too. Default
    /// 0.1 (RFC 8033 5.1, Linux).
    pub mark_ecn_threshold: f64,
    /// Estimate the delay from the drain rate (Little's law) instead of the
    /// packets' timestamps. Default false (Linux).
    pub dq_rate_estimator: bool,
    /// Bytes per drain-rate measurement. Default 16384 (RFC 8033 DQ_THRESHOLD).
    pub dq_threshold: u32,
    /// RFC 8033 5.4 derandomization of drops. Default true (Linux).
    pub derandomize: bool,
    /// RFC 8033 5.5: the probability rises at most 2% per update once at 10%.
    /// Default true (Linux, ns-3).
    pub cap_drop_adjustment: bool,
    /// Scale each arrival's probability by size / mtu. Default false (Linux).
    pub bytemode: bool,
    /// Typical packet size: no early drop while at most 2 mtu are queued; the unit
    /// of `bytemode`. Default 1514 (Linux's psched_mtu).
    pub mtu: u32,
}

impl Default for PieParams {
    fn default() -> Self {
        PieParams {
            limit: 1000,
            target: Dur::from_millis(15),
            tupdate: Dur::from_millis(15),
            alpha: 0.125,
            beta: 1.25,
            max_burst: Dur::from_millis(150),
            ecn: false,
            mark_ecn_threshold: 0.1,
            dq_rate_estimator: false,
            dq_threshold: 16384,
            derandomize: true,
            cap_drop_adjustment: true,
            bytemode: false,
            mtu: 1514,
        }
    }
}

impl QdiscParams for PieParams {
    type Qdisc = Pie;
    fn build(&self, _link: &LinkInfo) -> Result<Pie, ParamError> {
        Pie::new(self.clone())
    }
    fn property_configs() -> Vec<Self> {
        let ms = Dur::from_millis;
        vec![
            PieParams {
                limit: 8,
                target: ms(1),
                tupdate: ms(2),
                max_burst: ms(0),
                ecn: true,
                mtu: 100,
                dq_rate_estimator: true,
                dq_threshold: 2000,
                bytemode: true,
                ..Default::default()
            },
            PieParams {
                limit: 10,
                target: ms(2),
                tupdate: ms(1),
                max_burst: ms(5),
                derandomize: false,
                cap_drop_adjustment: false,
                mtu: 200,
                alpha: 2.0,
                beta: 20.0,
                ..Default::default()
            },
        ]
    }
}

impl PieParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        check::at_least("limit", self.limit, 1)?;
        if self.target.is_zero() {
            return Err(ParamError::new("target", self.target, "must be positive"));
        }
        // Linux's timer cannot fire faster than a jiffy; below a microsecond the
        // catch-up after a busy spell would cost more than it models.
        if self.tupdate < Dur::from_micros(1) {
            return Err(ParamError::new(
                "tupdate",
                self.tupdate,
                "must be at least 1us",
            ));
        }
        for (key, v) in [("alpha", self.alpha), ("beta", self.beta)] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(ParamError::new(key, v, "must be a finite number >= 0"));
            }
        }
        check::probability("mark_ecn_threshold", self.mark_ecn_threshold)?;
        check::at_least("dq_threshold", self.dq_threshold, 1)?;
        check::at_least("mtu", self.mtu, 1)
    }
}

#[derive(Debug, Clone)]
pub struct Pie {
    params: PieParams,
    queue: PacketFifo,
    /// The drop probability.
    prob: f64,
    /// Accumulated probability for derandomization.
    accu_prob: f64,
    /// The current queueing delay estimate.
    qdelay: Dur,
    /// `qdelay` at the previous update.
    qdelay_old: Dur,
    burst_allowance: Dur,
    /// When the next probability update is due.
    next_update: Time,
    /// Drain-rate measurement in progress, its start and bytes so far.
    in_measurement: bool,
    measurement_start: Time,
    dq_count: u64,
    /// Average time to dequeue `dq_threshold` bytes, seconds; 0 = no estimate yet.
    avg_dq_time: f64,
}

/// The RFC's gain reduction for small probabilities (RFC 8033 4.2).
fn gain_divisor(prob: f64) -> f64 {
    const STEPS: [(f64, f64); 6] = [
        (0.000_001, 2048.0),
        (0.000_01, 512.0),
        (0.000_1, 128.0),
        (0.001, 32.0),
        (0.01, 8.0),
        (0.1, 2.0),
    ];
    STEPS
        .iter()
        .find(|(below, _)| prob < *below)
        .map_or(1.0, |&(_, d)| d)
}

impl Pie {
    pub fn new(params: PieParams) -> Result<Self, ParamError> {
        params.validate()?;
        Ok(Pie {
            queue: PacketFifo::new(),
            prob: 0.0,
            accu_prob: 0.0,
            qdelay: Dur::ZERO,
            qdelay_old: Dur::ZERO,
            burst_allowance: params.max_burst,
            next_update: Time::ZERO + params.tupdate,
            in_measurement: false,
            measurement_start: Time::ZERO,
            dq_count: 0,
            avg_dq_time: 0.0,
            params,
        })
    }

    /// The drop probability.
    pub fn prob(&self) -> f64 {
        self.prob
    }

    /// The current queueing delay estimate and the one at the previous update.
    pub fn qdelay(&self) -> (Dur, Dur) {
        (self.qdelay, self.qdelay_old)
    }

    /// What is left of the burst allowance.
    pub fn burst_allowance(&self) -> Dur {
        self.burst_allowance
    }

    /// The accumulated probability of derandomization.
    pub fn accu_prob(&self) -> f64 {
        self.accu_prob
    }

    /// The drain-rate estimate, bytes per second (0 before the first measurement).
    pub fn dq_rate(&self) -> f64 {
        if self.avg_dq_time > 0.0 {
            self.params.dq_threshold as f64 / self.avg_dq_time
        } else {
            0.0
        }
    }

    /// Runs the probability updates due before `now`. Stops early once an update
    /// changes nothing: with the queue unchanged the rest would not either.
    fn advance_clock(&mut self, now: Time) {
        let period = self.params.tupdate;
        while self.next_update < now {
            if self.prob == 0.0
                && self.qdelay.is_zero()
                && self.qdelay_old.is_zero()
                && (!self.params.dq_rate_estimator || self.queue.is_empty())
            {
                // Quiet: each update would only take tupdate off the burst
                // allowance; do them all at once.
                let k = now
                    .saturating_since(self.next_update)
                    .as_nanos()
                    .div_ceil(period.as_nanos());
                self.burst_allowance = self.burst_allowance - period.saturating_mul(k);
                self.next_update += period.saturating_mul(k);
                break;
            }
            let before = (self.prob, self.qdelay_old, self.burst_allowance);
            self.update_probability();
            self.next_update += period;
            if before == (self.prob, self.qdelay_old, self.burst_allowance) {
                let behind = now.saturating_since(self.next_update).as_nanos();
                let skip = behind.div_ceil(period.as_nanos());
                self.next_update += period.saturating_mul(skip);
                break;
            }
        }
    }

    /// One run of the PI controller (RFC 8033 4.2, with 4.3 and 5.5).
    fn update_probability(&mut self) {
        let p = &self.params;
        if p.dq_rate_estimator {
            self.qdelay = if self.avg_dq_time > 0.0 {
                Dur::from_secs_f64(
                    self.queue.bytes() as f64 * self.avg_dq_time / p.dq_threshold as f64,
                )
            } else {
                Dur::ZERO
            };
        }
        let (now, old, target) = (
            self.qdelay.as_secs_f64(),
            self.qdelay_old.as_secs_f64(),
            p.target.as_secs_f64(),
        );
        let mut delta = (p.alpha * (now - target) + p.beta * (now - old)) / gain_divisor(self.prob);
        if p.cap_drop_adjustment && self.prob >= 0.1 && delta > 0.02 {
            delta = 0.02;
        }
        let mut prob = self.prob + delta;
        if self.qdelay.is_zero() && self.qdelay_old.is_zero() {
            prob *= 0.98;
        }
        self.prob = prob.clamp(0.0, 1.0);
        self.qdelay_old = self.qdelay;
        self.burst_allowance = self.burst_allowance - p.tupdate;
    }

    /// Whether the arrival of `size` bytes is to be dropped (or marked) early
    /// (RFC 8033 4.1 and 5.4). `u` draws a uniform number when one is needed.
    fn drop_early(&mut self, size: u32, ctx: &mut Ctx<'_>) -> bool {
        let p = &self.params;
        let half_target = p.target.as_nanos() / 2;
        // Safeguards: PIE stays work-conserving at low load.
        if (self.qdelay_old.as_nanos() < half_target && self.prob < 0.2)
            || self.queue.bytes() <= 2 * p.mtu as u64
        {
            return false;
        }
        let mut prob = self.prob;
        if p.bytemode {
            prob = (prob * size as f64 / p.mtu as f64).min(1.0);
        }
        if p.derandomize {
            if self.prob == 0.0 {
                self.accu_prob = 0.0;
            }
            self.accu_prob += prob;
            if self.accu_prob < 0.85 {
                return false;
            }
            if self.accu_prob >= 8.5 {
                return true;
            }
        }
        ctx.uniform() < prob
    }

    /// The RFC's drain-rate measurement, at each dequeue (RFC 8033 Appendix B).
    fn measure_drain(&mut self, size: u32, now: Time) {
        let threshold = self.params.dq_threshold as u64;
        if self.in_measurement {
            self.dq_count += size as u64;
            if self.dq_count >= threshold {
                // The time per dq_threshold bytes, from the bytes actually counted
                // (the RFC takes dq_count for dq_threshold, up to a packet more).
                let dq_time = now.saturating_since(self.measurement_start).as_secs_f64()
                    * threshold as f64
                    / self.dq_count as f64;
                self.avg_dq_time = if self.avg_dq_time == 0.0 {
                    dq_time
                } else {
                    // Weight DQ_THRESHOLD / 2^16 = 1/4 on the new sample.
                    0.25 * dq_time + 0.75 * self.avg_dq_time
                };
                self.in_measurement = false;
            }
        }
        if !self.in_measurement && self.queue.bytes() >= threshold {
            self.in_measurement = true;
            self.measurement_start = now;
            self.dq_count = 0;
        }
    }
}

impl Qdisc for Pie {
    fn enqueue(&mut self, pkt: Packet, ctx: &mut Ctx<'_>) -> Verdict {
        self.advance_clock(ctx.now);
        if self.queue.len() >= self.params.limit as usize {
            self.accu_prob = 0.0;
            ctx.drop(pkt, DropReason::Overflow);
            return Verdict::Dropped;
        }
        let half_target = self.params.target.as_nanos() / 2;
        if self.prob == 0.0
            && self.qdelay.as_nanos() < half_target
            && self.qdelay_old.as_nanos() < half_target
        {
            // Congestion is gone: a full burst allowance again (RFC 8033 4.4).
            self.burst_allowance = self.params.max_burst;
        }
        let mut pkt = pkt;
        if self.burst_allowance.is_zero() && self.drop_early(pkt.size, ctx) {
            self.accu_prob = 0.0;
            let ecn = self.params.ecn && self.prob < self.params.mark_ecn_threshold;
            match ctx.mark_or_drop(pkt, ecn, DropReason::Early) {
                Some(marked) => pkt = marked,
                None => return Verdict::Dropped,
            }
        }
        self.queue.push_back(pkt);
        Verdict::Queued
    }

    fn dequeue(&mut self, ctx: &mut Ctx<'_>) -> Option<Packet> {
        self.advance_clock(ctx.now);
        let pkt = self.queue.pop_front()?;
        if self.params.dq_rate_estimator {
            self.measure_drain(pkt.size, ctx.now);
        } else if self.queue.is_empty() {
            self.qdelay = Dur::ZERO;
        } else {
            self.qdelay = ctx.now.saturating_since(pkt.enqueued_at);
        }
        Some(pkt)
    }

    fn len(&self) -> usize {
        self.queue.len()
    }
    fn bytes(&self) -> u64 {
        self.queue.bytes()
    }
    fn limit(&self) -> Limit {
        Limit::Packets(self.params.limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Ecn, FlowId};
    use crate::qdisc::VecSink;
    use crate::{rng, Rng};

    /// Drives a `Pie` directly, so a test can look at (and, as ns-3's tests do,
    /// set) its internals between calls.
    struct Driver {
        q: Pie,
        now: Time,
        rng: Rng,
        sink: VecSink,
        size: u32,
        ect: bool,
        seq: u32,
    }

    impl Driver {
        fn new(params: PieParams) -> Self {
            Driver {
                q: Pie::new(params).unwrap(),
                now: Time::ZERO,
                rng: rng::stream(1, 0),
                sink: VecSink::default(),
                size: 1000,
                ect: false,
                seq: 0,
            }
        }
        fn at(&mut self, t: Dur) {
            self.now = Time::ZERO + t;
        }
        fn enqueue(&mut self) -> Verdict {
            let mut p = Packet::new(FlowId(0), self.size);
            p.tag = self.seq;
            self.seq += 1;
            p.enqueued_at = self.now;
            if self.ect {
                p.ecn = Ecn::Ect;
            }
            let mut ctx = Ctx::new(self.now, &mut self.rng, &mut self.sink);
            self.q.enqueue(p, &mut ctx)
        }
        fn dequeue(&mut self) -> Option<Packet> {
            let mut ctx = Ctx::new(self.now, &mut self.rng, &mut self.sink);
            self.q.dequeue(&mut ctx)
        }
        /// Runs the controller up to now without a packet (what a call would do
        /// first).
        fn tick(&mut self) {
            self.q.advance_clock(self.now);
        }
        fn count(&self, reason: DropReason) -> usize {
            self.sink.drops.iter().filter(|(_, r)| *r == reason).count()
        }
        fn marks(&self) -> usize {
            self.sink.marks.len()
        }
    }

    /// What ns-3's PIE cases observe at each enqueue.
    #[derive(Default)]
    struct Watch {
        /// Largest rise of p between enqueues once p > 0.1, and the largest p.
        check_prob: bool,
        max_rise: f64,
        max_prob: f64,
        prev_prob: f64,
        /// Derandomization: accu_prob's error against prev + p (ns-3 keeps the last).
        check_accu: bool,
        last_accu_error: f64,
        every_accu_error: f64,
        prev_accu: f64,
        /// Values to set before each enqueue, as ns-3's test does.
        set_accu: Option<f64>,
        set_prob: Option<f64>,
        expected_drops: usize,
    }

    /// ns-3's scenario: 400 arrivals 10 ms apart and 400 departures `every`
    /// apart, both starting one period in; runs to 8 s.
    fn ns3_scenario(params: PieParams, every: Dur, ect: bool, w: &mut Watch) -> Driver {
        ns3_scenario_seeded(params, every, ect, w, 1)
    }

    fn ns3_scenario_seeded(
        params: PieParams,
        every: Dur,
        ect: bool,
        w: &mut Watch,
        seed: u64,
    ) -> Driver {
        let mut d = Driver::new(params);
        d.rng = rng::stream(seed, 0);
        d.ect = ect;
        let arrivals = (1..=400u64).map(|i| (Dur::from_millis(10).saturating_mul(i), true));
        let departures = (1..=400u64).map(|i| (every.saturating_mul(i), false));
        let mut events: Vec<(Dur, bool)> = arrivals.chain(departures).collect();
        // Same instant: ns-3 scheduled all arrivals before all departures.
        events.sort_by_key(|&(t, dep)| (t, dep));
        for (t, arrival) in events {
            d.at(t);
            if !arrival {
                d.dequeue();
                continue;
            }
            if w.set_accu.is_some() || w.set_prob.is_some() {
                d.tick();
                if let Some(a) = w.set_accu {
                    d.q.accu_prob = a;
                }
                if let Some(p) = w.set_prob {
                    d.q.prob = p;
                    if d.q.queue.len() > 2 {
                        w.expected_drops += 1;
                    }
                }
            }
            d.enqueue();
            let prob = d.q.prob;
            if w.check_prob {
                w.max_prob = w.max_prob.max(prob);
                if w.prev_prob > 0.1 {
                    w.max_rise = w.max_rise.max(prob - w.prev_prob);
                }
                w.prev_prob = prob;
            }
            if w.check_accu {
                let accu = d.q.accu_prob;
                if accu != 0.0 {
                    w.last_accu_error = accu - (w.prev_accu + prob);
                    if accu != w.prev_accu {
                        w.every_accu_error =
                            w.every_accu_error.max((accu - (w.prev_accu + prob)).abs());
                    }
                }
                w.prev_accu = accu;
            }
        }
        d
    }

    /// ns-3's test PIE: 300 packets, its mean packet size of 1000 bytes standing
    /// for the MTU, and ns-3's defaults where they differ from Linux's.
    fn ns3_params() -> PieParams {
        PieParams {
            limit: 300,
            mtu: 1000,
            derandomize: false,
            ..Default::default()
        }
    }

    /// ns-3 `PieQueueDiscTestCase` (pie-queue-disc-test-suite.cc), run in packet
    /// mode; its byte mode repeats it with 1000-byte packets and a 300 KB limit,
    /// which is the same queue here.
    #[test]
    fn ns3_pie_queue_disc_test_case() {
        // Eight packets in, eight out in order, then nothing.
        let mut d = Driver::new(ns3_params());
        for _ in 0..8 {
            d.enqueue();
        }
        assert_eq!(d.q.len(), 8);
        let out: Vec<u32> = std::iter::from_fn(|| d.dequeue().map(|p| p.tag)).collect();
        assert_eq!(out, (0..8).collect::<Vec<_>>());

        let early = |d: &Driver| d.count(DropReason::Early);
        let forced = |d: &Driver| d.count(DropReason::Overflow);
        let ms = Dur::from_millis;
        let run = |p: PieParams, every: Dur| ns3_scenario(p, every, false, &mut Watch::default());
        let tuned = |tupdate, target| PieParams {
            tupdate: ms(tupdate),
            target: ms(target),
            max_burst: ms(100),
            dq_threshold: 10_000,
            ..ns3_params()
        };
        // ns-3 compares single runs; their drop counts differ by a few packets
        // (most drops are the excess load, which any AQM must drop), so here each
        // side is the mean of 10 seeds and no seed was chosen.
        let mean_early = |p: PieParams, every: Dur| -> f64 {
            let runs: Vec<Driver> = (1..=10)
                .map(|seed| {
                    ns3_scenario_seeded(p.clone(), every, false, &mut Watch::default(), seed)
                })
                .collect();
            assert!(runs.iter().all(|d| forced(d) == 0));
            runs.iter().map(|d| early(d) as f64).sum::<f64>() / 10.0
        };
        // Test 2: departures every 12 ms cannot keep up: some early drops.
        let d2 = run(tuned(30, 20), ms(12));
        assert!(early(&d2) > 0);
        assert_eq!(forced(&d2), 0);
        let test2 = mean_early(tuned(30, 20), ms(12));
        // Test 3: a larger target: fewer drops.
        let test3 = mean_early(tuned(30, 80), ms(12));
        assert!(test3 < test2, "{test3} vs {test2}");
        // Test 4: slower departures (15 ms): more drops.
        let test4 = mean_early(tuned(30, 20), ms(15));
        assert!(test4 > test2, "{test4} vs {test2}");
        // Test 5: updates every 90 ms instead of 30: fewer drops than test 4.
        let test5 = mean_early(tuned(90, 20), ms(15));
        assert!(test5 < test4, "{test5} vs {test4}");
        // Test 6: the dequeue-rate estimator.
        let d6 = run(
            PieParams {
                dq_rate_estimator: true,
                ..ns3_params()
            },
            ms(14),
        );
        assert!(early(&d6) > 0);
        assert_eq!(forced(&d6), 0);
        // Tests 7 and 8: without the cap p rises by more than 0.02 in a step once
        // above 0.1; with it, by 0.02 at most.
        for cap in [false, true] {
            let mut w = Watch {
                check_prob: true,
                ..Default::default()
            };
            let d = ns3_scenario(
                PieParams {
                    cap_drop_adjustment: cap,
                    ..ns3_params()
                },
                ms(14),
                false,
                &mut w,
            );
            assert!(early(&d) > 0);
            assert_eq!(forced(&d), 0);
            if cap {
                assert!(w.max_rise < 0.020_000_000_000_000_1, "{}", w.max_rise);
            } else {
                assert!(w.max_rise > 0.02, "{}", w.max_rise);
            }
        }
        // Tests 9-11: ECN with mark_ecn_threshold 0.3.
        let ecn = |on, ect, w: &mut Watch| {
            ns3_scenario(
                PieParams {
                    ecn: on,
                    mark_ecn_threshold: 0.3,
                    ..ns3_params()
                },
                ms(14),
                ect,
                w,
            )
        };
        let d9 = ecn(true, false, &mut Watch::default());
        assert_eq!(d9.marks(), 0);
        assert!(early(&d9) > 0);
        assert_eq!(forced(&d9), 0);
        let d10 = ecn(false, true, &mut Watch::default());
        assert_eq!(d10.marks(), 0);
        assert!(early(&d10) > 0);
        assert_eq!(forced(&d10), 0);
        let mut w = Watch {
            check_prob: true,
            ..Default::default()
        };
        let d11 = ecn(true, true, &mut w);
        assert!(d11.marks() > 0);
        assert!(early(&d11) > 0);
        assert!(w.max_prob > 0.3, "{}", w.max_prob);
        assert_eq!(forced(&d11), 0);
        // Test 12: derandomization keeps accu_prob = previous + p (ns-3 checks the
        // last enqueue; every one where it moved is checked here too).
        let derand = PieParams {
            derandomize: true,
            ..ns3_params()
        };
        let mut w = Watch {
            check_accu: true,
            ..Default::default()
        };
        let d12 = ns3_scenario(derand.clone(), ms(14), false, &mut w);
        assert!(early(&d12) > 0);
        assert_eq!(forced(&d12), 0);
        assert_eq!(w.last_accu_error, 0.0);
        assert!(w.every_accu_error < 1e-12, "{}", w.every_accu_error);
        // Test 13: accu_prob held at -0.16 never reaches 0.85: no drops.
        let mut w = Watch {
            set_accu: Some(-0.16),
            ..Default::default()
        };
        let d13 = ns3_scenario(derand.clone(), ms(14), false, &mut w);
        assert_eq!(early(&d13), 0);
        assert_eq!(forced(&d13), 0);
        // Test 14: accu_prob held at 8.6 (p = 0.001, no burst allowance): every
        // arrival that finds more than two packets queued is dropped.
        let mut w = Watch {
            set_accu: Some(8.6),
            set_prob: Some(0.001),
            ..Default::default()
        };
        let d14 = ns3_scenario(
            PieParams {
                max_burst: Dur::ZERO,
                ..derand
            },
            ms(14),
            false,
            &mut w,
        );
        assert_eq!(early(&d14), w.expected_drops);
        assert!(w.expected_drops > 0);
        assert_eq!(forced(&d14), 0);
    }

    /// Holds the queueing delay at `delay_ms`: one arrival and one departure per
    /// millisecond through `enqueue`/`dequeue`, `delay_ms` packets queued, and an
    /// arrival PIE drops replaced behind its back so the depth stays. Starts by
    /// trimming the queue to its newest `delay_ms` packets (or filling an empty
    /// one). Returns p after each update.
    fn hold_delay(d: &mut Driver, from: Dur, dur: Dur, delay_ms: u64) -> Vec<f64> {
        let stamped = |t: Time| {
            let mut p = Packet::new(FlowId(0), 1000);
            p.enqueued_at = t;
            p
        };
        let depth = delay_ms as usize;
        while d.q.queue.len() > depth {
            d.q.queue.pop_front();
        }
        if d.q.queue.is_empty() {
            for k in (1..=delay_ms).rev() {
                let t = Time::ZERO + (from - Dur::from_millis(k));
                d.q.queue.push_back(stamped(t));
            }
        }
        assert_eq!(d.q.queue.len(), depth);
        let mut probs = Vec::new();
        let mut t = from;
        while t < from + dur {
            d.at(t);
            let before = d.q.next_update;
            if d.enqueue() == Verdict::Dropped {
                d.q.queue.push_back(stamped(d.now));
            }
            let p = d.dequeue().unwrap();
            assert_eq!(
                d.now.saturating_since(p.enqueued_at),
                Dur::from_millis(delay_ms)
            );
            if d.q.next_update != before {
                probs.push(d.q.prob);
            }
            t = t + Dur::from_millis(1);
        }
        probs
    }

    #[test]
    fn p_rises_while_the_delay_is_above_target_and_falls_below() {
        let mut d = Driver::new(PieParams::default());
        let s = Dur::from_secs;
        let up = hold_delay(&mut d, s(1), s(3), 40);
        assert!(up.windows(2).all(|w| w[1] > w[0]), "{up:?}");
        assert!(*up.last().unwrap() > 0.1, "{up:?}");
        let top = d.q.prob;
        let down = hold_delay(&mut d, s(4), s(12), 5);
        assert!(down.windows(2).all(|w| w[1] <= w[0]), "{down:?}");
        assert!(down[0] < top);
        assert_eq!(*down.last().unwrap(), 0.0);
    }

    #[test]
    fn one_update_follows_the_rfc_formula_with_its_auto_tuning() {
        let mut d = Driver::new(PieParams {
            max_burst: Dur::ZERO,
            ..Default::default()
        });
        let step = |d: &mut Driver, qdelay_ms: u64| {
            d.q.qdelay = Dur::from_millis(qdelay_ms);
            d.q.update_probability();
            d.q.prob
        };
        // qdelay 35 ms twice: alpha * 20 ms = 0.0025, beta term 0 the second time.
        let p1 = step(&mut d, 35);
        let beta_part = 1.25 * 0.035;
        assert!((p1 - (0.0025 + beta_part) / 2048.0).abs() < 1e-15, "{p1}");
        // p1 ~ 2.25e-5 is in [1e-5, 1e-4): gain / 128.
        let p2 = step(&mut d, 35);
        assert!((p2 - (p1 + 0.0025 / 128.0)).abs() < 1e-15, "{p2}");
        // Once p >= 10% a large step is capped at 2%.
        d.q.prob = 0.5;
        let p3 = step(&mut d, 400);
        assert!((p3 - 0.52).abs() < 1e-12, "{p3}");
        // Below 10% it is not capped (but halved).
        d.q.prob = 0.05;
        d.q.qdelay_old = Dur::from_millis(400);
        let p4 = step(&mut d, 400);
        assert!((p4 - (0.05 + 0.125 * 0.385 / 2.0)).abs() < 1e-12, "{p4}");
        // Both delays zero: p loses 2% beyond the (negative) controller step.
        d.q.prob = 0.5;
        d.q.qdelay_old = Dur::ZERO;
        let p5 = step(&mut d, 0);
        assert!((p5 - (0.5 - 0.125 * 0.015) * 0.98).abs() < 1e-12, "{p5}");
    }

    #[test]
    fn the_burst_allowance_is_spent_by_updates_and_refilled_when_quiet() {
        let mut d = Driver::new(PieParams::default());
        let ms = Dur::from_millis;
        // A standing queue of 60 ms from t = 1 s: no early drop while the 150 ms
        // allowance lasts, whatever p says; the allowance loses 15 ms per update.
        let probs = hold_delay(&mut d, ms(1000), ms(150), 60);
        assert!(probs.len() >= 9);
        assert!(d.q.prob() > 0.0);
        assert_eq!(d.count(DropReason::Early), 0);
        assert!(d.q.burst_allowance() <= ms(15));
        hold_delay(&mut d, ms(1150), ms(2000), 60);
        assert!(d.count(DropReason::Early) > 0);
        assert_eq!(d.q.burst_allowance(), Dur::ZERO);
        // Quiet again: once p is back to 0 and both delays are below 7.5 ms, the
        // next arrival finds a full allowance.
        hold_delay(&mut d, ms(3150), ms(15000), 2);
        assert_eq!(d.q.prob(), 0.0);
        d.enqueue();
        assert_eq!(d.q.burst_allowance(), ms(150));
    }

    #[test]
    fn no_early_drops_at_low_delay_or_with_two_packets_queued() {
        // p is high but the last delay was below target / 2: work-conserving.
        let mut d = Driver::new(PieParams {
            max_burst: Dur::ZERO,
            ..Default::default()
        });
        for _ in 0..10 {
            d.enqueue();
        }
        d.q.prob = 0.15;
        d.q.qdelay_old = Dur::from_millis(7);
        d.q.accu_prob = 5.0;
        for _ in 0..1000 {
            d.enqueue();
            d.q.queue.pop_back();
        }
        assert_eq!(d.count(DropReason::Early), 0);
        // Delay high and p = 0.9: with three MTUs queued arrivals are dropped...
        let mut d = Driver::new(PieParams {
            max_burst: Dur::ZERO,
            derandomize: false,
            ..Default::default()
        });
        d.q.prob = 0.9;
        d.q.qdelay_old = Dur::from_millis(100);
        d.size = 1514;
        for _ in 0..1000 {
            while d.q.len() < 3 {
                d.q.queue.push_back(Packet::new(FlowId(0), 1514));
            }
            if d.enqueue() == Verdict::Queued {
                d.q.queue.pop_back();
            }
        }
        let dropped = d.count(DropReason::Early);
        assert!(dropped > 800, "{dropped}");
        // ...but not one while at most two are.
        for _ in 0..1000 {
            while d.q.len() > 2 {
                d.q.queue.pop_back();
            }
            d.enqueue();
        }
        assert_eq!(d.count(DropReason::Early), dropped);
    }

    #[test]
    fn derandomization_spaces_drops_between_085_and_85() {
        // With p fixed at 0.1 the accumulated probability reaches 0.85 at the
        // ninth arrival after a drop; none comes earlier, and one comes once it
        // reaches 8.5 (the 86th: 85 x 0.1 falls a hair short in floating point).
        let mut d = Driver::new(PieParams {
            max_burst: Dur::ZERO,
            tupdate: Dur::from_secs(1_000_000),
            ..Default::default()
        });
        for _ in 0..5 {
            d.enqueue();
        }
        d.q.qdelay_old = Dur::from_millis(100);
        let mut since = 0;
        let mut gaps = Vec::new();
        for _ in 0..20_000 {
            d.q.prob = 0.1;
            since += 1;
            if d.enqueue() == Verdict::Dropped {
                gaps.push(since);
                since = 0;
            } else {
                d.q.queue.pop_back();
            }
        }
        assert!(gaps.len() > 500);
        assert!(gaps.iter().all(|&g| (9..=86).contains(&g)), "{gaps:?}");
        // Without derandomization gaps of 1 happen.
        let mut d = Driver::new(PieParams {
            max_burst: Dur::ZERO,
            derandomize: false,
            tupdate: Dur::from_secs(1_000_000),
            ..Default::default()
        });
        for _ in 0..5 {
            d.enqueue();
        }
        d.q.qdelay_old = Dur::from_millis(100);
        let mut last = false;
        let mut back_to_back = 0;
        for _ in 0..20_000 {
            d.q.prob = 0.1;
            let dropped = d.enqueue() == Verdict::Dropped;
            if !dropped {
                d.q.queue.pop_back();
            }
            back_to_back += (dropped && last) as u32;
            last = dropped;
        }
        assert!(back_to_back > 50, "{back_to_back}");
    }

    #[test]
    fn ecn_marks_below_the_threshold_and_drops_above() {
        for (prob, marks) in [(0.05, true), (0.2, false)] {
            let mut d = Driver::new(PieParams {
                max_burst: Dur::ZERO,
                ecn: true,
                derandomize: false,
                tupdate: Dur::from_secs(1_000_000),
                ..Default::default()
            });
            d.ect = true;
            for _ in 0..5 {
                d.enqueue();
            }
            d.q.qdelay_old = Dur::from_millis(100);
            for _ in 0..5000 {
                d.q.prob = prob;
                if d.enqueue() == Verdict::Queued {
                    d.q.queue.pop_back();
                }
            }
            if marks {
                assert!(d.marks() > 100 && d.count(DropReason::Early) == 0);
            } else {
                assert!(d.marks() == 0 && d.count(DropReason::Early) > 100);
            }
        }
    }

    #[test]
    fn the_drain_rate_estimator_gives_backlog_over_rate() {
        // 1000-byte packets leave every millisecond: 1 MB/s. With 50 packets
        // queued the estimated delay is 50 ms.
        let mut d = Driver::new(PieParams {
            dq_rate_estimator: true,
            ..Default::default()
        });
        for _ in 0..50 {
            d.enqueue();
        }
        for ms in 1..=2000u64 {
            d.at(Dur::from_millis(ms));
            d.enqueue();
            d.dequeue();
        }
        assert!((d.q.dq_rate() - 1e6).abs() < 1e3, "{}", d.q.dq_rate());
        d.tick();
        d.at(Dur::from_millis(2016));
        d.tick();
        let (qdelay, _) = d.q.qdelay();
        assert!(
            (qdelay.as_secs_f64() - d.q.len() as f64 * 1e-3).abs() < 1e-4,
            "{qdelay} for {} packets",
            d.q.len()
        );
    }

    #[test]
    fn idle_periods_cost_nothing_and_change_nothing_once_quiet() {
        let mut d = Driver::new(PieParams::default());
        d.enqueue();
        d.dequeue();
        // A year later (two billion updates): the quiet updates, which only spend
        // the burst allowance, are done at once.
        d.at(Dur::from_secs(365 * 86_400));
        d.tick();
        assert_eq!(d.q.prob(), 0.0);
        assert!(d.q.next_update >= d.now);
        assert!(d.q.next_update <= d.now + Dur::from_millis(15));
        assert_eq!(d.q.burst_allowance(), Dur::ZERO);
        // The arrival finds congestion long gone: a full allowance again.
        d.enqueue();
        assert_eq!(d.q.burst_allowance(), Dur::from_millis(150));
    }

    #[test]
    fn catching_up_at_once_equals_updating_on_time() {
        // After a congested spell the queue drains; then 20 s pass. Running the
        // controller every millisecond and running it once at the end agree.
        let mut a = Driver::new(PieParams::default());
        hold_delay(&mut a, Dur::from_secs(1), Dur::from_secs(2), 40);
        while a.dequeue().is_some() {}
        assert!(a.q.prob() > 0.0);
        let mut b = Driver::new(PieParams::default());
        b.q = a.q.clone();
        let end = Dur::from_secs(23);
        let mut t = Dur::from_secs(3);
        while t < end {
            a.at(t);
            a.tick();
            t = t + Dur::from_millis(1);
        }
        a.at(end);
        a.tick();
        b.at(end);
        b.tick();
        let state = |q: &Pie| {
            (
                q.prob,
                q.qdelay,
                q.qdelay_old,
                q.burst_allowance,
                q.next_update,
            )
        };
        assert_eq!(state(&a.q), state(&b.q));
        assert_eq!(a.q.prob(), 0.0);
    }

    /// 20 window-based senders (additive increase of one packet per RTT, halving
    /// at most once per RTT on a loss, as Reno in congestion avoidance) share a
    /// 10 Mbps link through `params`; 40 ms of propagation RTT. Returns the mean
    /// queueing delay of the packets sent from 10 s to 40 s, and the link's use.
    fn aimd_through(params: PieParams) -> (f64, f64) {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        const FLOWS: usize = 20;
        let tx = Dur::from_micros(800); // 1000 bytes at 10 Mbps
        let rtt = Dur::from_millis(40);
        let mut d = Driver::new(params);
        let mut cwnd = [2.0f64; FLOWS];
        let mut inflight = [0u32; FLOWS];
        let mut last_cut = [Time::ZERO; FLOWS];
        // (time, flow, lost): an ACK (or a loss signal) reaching flow's sender.
        let mut feedback: BinaryHeap<Reverse<(Time, usize, bool)>> = BinaryHeap::new();
        let (mut delay_sum, mut sent, mut busy) = (0.0, 0u64, 0u64);
        let (from, to) = (Time::from_secs(10), Time::from_secs(40));
        let mut now = Time::ZERO;
        while now < to {
            // Feedback due by now; then each sender fills its window.
            while let Some(&Reverse((t, f, lost))) = feedback.peek() {
                if t > now {
                    break;
                }
                feedback.pop();
                inflight[f] -= 1;
                if lost {
                    if t.saturating_since(last_cut[f]) > rtt {
                        cwnd[f] = (cwnd[f] / 2.0).max(1.0);
                        last_cut[f] = t;
                    }
                } else {
                    cwnd[f] += 1.0 / cwnd[f];
                }
            }
            d.now = now;
            for f in 0..FLOWS {
                while (inflight[f] as f64) < cwnd[f].floor() {
                    inflight[f] += 1;
                    let mut p = Packet::new(FlowId(f as u32), 1000);
                    p.enqueued_at = now;
                    let mut ctx = Ctx::new(now, &mut d.rng, &mut d.sink);
                    if d.q.enqueue(p, &mut ctx) == Verdict::Dropped {
                        feedback.push(Reverse((now + rtt, f, true)));
                    }
                }
            }
            // The link sends one packet per transmission time.
            if let Some(p) = d.dequeue() {
                if now >= from {
                    delay_sum += now.saturating_since(p.enqueued_at).as_secs_f64();
                    sent += 1;
                    busy += 1;
                }
                feedback.push(Reverse((now + tx + rtt, p.flow.index(), false)));
            }
            now += tx;
        }
        let slots = (to.as_nanos() - from.as_nanos()) / tx.as_nanos();
        (delay_sum / sent as f64, busy as f64 / slots as f64)
    }

    #[test]
    fn under_steady_window_based_load_the_delay_settles_near_target() {
        let (delay, utilization) = aimd_through(PieParams::default());
        // Within 20% of the 15 ms target (it comes out at 14.9 ms).
        assert!((0.012..0.018).contains(&delay), "mean delay {delay}");
        assert!(utilization > 0.95, "utilization {utilization}");
        // The same senders through the same buffer with the controller off
        // (alpha = beta = 0: p stays 0, only the 1000-packet limit drops) fill it.
        let (delay, _) = aimd_through(PieParams {
            alpha: 0.0,
            beta: 0.0,
            ..Default::default()
        });
        assert!(delay > 0.2, "mean delay without the controller {delay}");
    }

    #[test]
    fn bad_parameters_are_rejected_by_name() {
        let err = |p: PieParams| Pie::new(p).unwrap_err().to_string();
        assert_eq!(
            err(PieParams {
                tupdate: Dur::ZERO,
                ..Default::default()
            }),
            "tupdate = 0ns must be at least 1us"
        );
        assert_eq!(
            err(PieParams {
                alpha: f64::NAN,
                ..Default::default()
            }),
            "alpha = NaN must be a finite number >= 0"
        );
        assert_eq!(
            err(PieParams {
                mark_ecn_threshold: 1.5,
                ..Default::default()
            }),
            "mark_ecn_threshold = 1.5 must be a probability in [0, 1]"
        );
        assert_eq!(
            err(PieParams {
                target: Dur::ZERO,
                ..Default::default()
            }),
            "target = 0ns must be positive"
        );
        let p: PieParams = toml::from_str("t_update = \"30ms\"").unwrap();
        assert_eq!(p.tupdate, Dur::from_millis(30));
    }
}
