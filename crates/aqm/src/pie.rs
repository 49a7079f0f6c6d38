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
    fn validate(&self) -> Result<(), ParamError> {
        check::limit("limit", self.limit)?;
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

impl crate::early_drop::EarlyDropRule for PieParams {
    fn early_drop(&self) -> crate::early_drop::EarlyDrop {
        use crate::early_drop::EarlyDrop;
        EarlyDrop::After(vec![
            ("tupdate", self.tupdate),
            ("max_burst", self.max_burst),
        ])
    }
}

#[cfg(test)]
mod tests;
