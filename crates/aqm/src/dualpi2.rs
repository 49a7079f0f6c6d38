//! DualPI2 (RFC 9332, Linux `net/sched/sch_dualpi2.c`): two queues coupled so that
//! scalable congestion controls (DCTCP, TCP Prague) and classic ones (Reno, CUBIC)
//! get roughly equal rates while the scalable ones see about a millisecond of
//! queue, with no per-flow state.
//!
//! Packets whose ECN field is ECT(1) or CE (the L4S identifier; with `any_ect`,
//! ECT(0) too) go to the L queue, the rest to the C queue. A PI controller updates
//! a base probability p' every `tupdate` from the larger of the two queues' head
//! sojourn times against `target`:
//!
//! `p' += alpha * (qdelay - target) + beta * (qdelay - qdelay_old)`
//!
//! C packets are dropped (or, if ECT(0), marked) with p_C = p'^2, which a classic
//! sender's 1/sqrt(p) response turns into the same rate as an L sender's 1/p
//! response to p_L = k p' (k = `coupling_factor`, 2). The L queue also marks every
//! packet whose sojourn exceeds `step_thresh` (1 ms; or a length in packets), its
//! native AQM. Nothing is marked or dropped while the whole backlog is under two
//! `mtu`. When k p' exceeds 1 the qdisc is overloaded: L packets are then treated
//! like C ones (dropped with p'^2) if `drop_on_overload`, else only marked and p'
//! capped at 1/k. The dequeue serves the L queue first, but a weighted round robin
//! credit gives the C queue `classic_protection` percent of the link when both
//! are backlogged.
//!
//! As Linux, the probability is a 32-bit integer, alpha and beta are scaled the way
//! `tc` scales them, and marking and dropping happen at dequeue unless
//! `drop_enqueue`. What aqmlab leaves out: Linux's `memory_limit` in bytes (the
//! queues are bounded by `limit` packets), tc filters that classify into the L
//! queue without marking, and GSO splitting (aqmlab's packets are MTU-sized).
//! The controller runs on the `now` of each call, as PIE's does (`pie.rs`).
//!
//! Optionally (`queue_protection`, off by default; Linux has no such option),
//! RFC 9957's DOCSIS queue protection scores every L arrival's flow and
//! sanctions the packets of flows that build the L queue past `qp_critical_delay`:
//! they go to the C queue (or, with `qp_sanction = "drop"`, are dropped as
//! `unresponsive`). The algorithm is in `parts/queue_protection.rs`; here it is
//! fed the L queue's delay as its backlog at the link rate (the RFC's estimate)
//! and the native L probability of Linux's step, 1 above `step_thresh` and 0
//! below it, where DOCSIS's native AQM is a ramp.

use crate::drop_reason::DropReason;
use crate::packet::{Ecn, Packet};
use crate::parts::fifo::PacketFifo;
use crate::parts::flow_hash::{hash_seed, level_key};
use crate::parts::queue_protection::{QpConfig, QueueProtection, PROB_ONE};
use crate::qdisc::{check, Ctx, Limit, LinkInfo, ParamError, Qdisc, QdiscParams, Verdict};
use crate::time::{Dur, Time};
use crate::units::Rate;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// DualPI2 parameters, with `tc-dualpi2(8)`'s defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DualPi2Params {
    /// Packets both queues may hold together. Default 10000.
    pub limit: u32,
    /// The PI controller's target queueing delay. Default 15 ms.
    pub target: Dur,
    /// Time between probability updates. Default 16 ms.
    pub tupdate: Dur,
    /// Integral gain, per second (tc takes it in 1/256 Hz steps). Default 0.16.
    pub alpha: f64,
    /// Proportional gain, per second. Default 3.2.
    pub beta: f64,
    /// The L queue's step threshold as a sojourn time. Default (unset) 1 ms; it
    /// is an option so that giving it beside `step_thresh_packets`, even as
    /// "1ms", is told apart from leaving it out.
    pub step_thresh: Option<Dur>,
    /// The step threshold as an L queue length in packets instead of a time.
    pub step_thresh_packets: Option<u32>,
    /// The step marks only packets that arrive to an L queue at least this long.
    /// Default 0: always.
    pub min_qlen_step: u32,
    /// k, the coupling between the queues: p_L = k p'. Default 2.
    pub coupling_factor: u8,
    /// On overload (k p' > 1) drop L packets like classic ones; if false, keep
    /// marking them and cap p' at 1/k. Default true.
    pub drop_on_overload: bool,
    /// Drop or mark at enqueue instead of at dequeue. Default false.
    pub drop_enqueue: bool,
    /// The C queue's share of the scheduler when both queues are backlogged,
    /// percent. Default 10.
    pub classic_protection: u8,
    /// Steer ECT(0) into the L queue too (tc's `any_ect`). Default false.
    pub any_ect: bool,
    /// The device MTU (psched_mtu): no marks or drops under two of them, and the
    /// unit of the scheduler's credit. Default 1514.
    pub mtu: u32,
    /// RFC 9957's queue protection (QPROTECT_ON) for the L queue. Default false
    /// (DOCSIS's default is on; Linux's sch_dualpi2 has none).
    pub queue_protection: bool,
    /// CRITICALqL: no packet is sanctioned while the L queue's delay is at most
    /// this. Default (unset) the step threshold's time, else 1 ms (the RFC's
    /// default is the native AQM's MAXTH, 1 ms).
    pub qp_critical_delay: Option<Dur>,
    /// CRITICALqLSCORE: a flow's queuing score that gets it sanctioned with the
    /// L queue's delay just over `qp_critical_delay`. Default 4 ms.
    pub qp_critical_score: Dur,
    /// LG_AGING: scores drain at 2^qp_lg_aging bytes of natively marked traffic
    /// per 2^30 ns (about a second). Default 19: 3.9 Mb/s (the RFC's nominal
    /// 2^19 B/s, 4.2 Mb/s, less its 7% from taking 2^30 ns for a second).
    pub qp_lg_aging: u8,
    /// BI_SIZE: 2^qp_bucket_bits per-flow buckets, plus a shared default one.
    /// Default 5 (32).
    pub qp_bucket_bits: u8,
    /// ATTEMPTS: hash slices tried for a flow's bucket. Default 2.
    pub qp_attempts: u8,
    /// qLSCORE_MAX: the largest score. Default 5 s.
    pub qp_max_score: Dur,
    /// What happens to a sanctioned packet: `"redirect"` to the C queue (the
    /// RFC's) or `"drop"`. Default redirect.
    pub qp_sanction: QpSanction,
    /// Pins the key of the queue protection's flow hash; unset, the link's seed.
    pub hash_seed: Option<u64>,
}

/// What queue protection does to a sanctioned L packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QpSanction {
    /// Enqueue it in the C queue instead (RFC 9957).
    #[default]
    Redirect,
    /// Drop it, as `DropReason::Unresponsive`.
    Drop,
}

impl Default for DualPi2Params {
    fn default() -> Self {
        DualPi2Params {
            limit: 10_000,
            target: Dur::from_millis(15),
            tupdate: Dur::from_millis(16),
            alpha: 0.16,
            beta: 3.2,
            step_thresh: None,
            step_thresh_packets: None,
            min_qlen_step: 0,
            coupling_factor: 2,
            drop_on_overload: true,
            drop_enqueue: false,
            classic_protection: 10,
            any_ect: false,
            mtu: 1514,
            queue_protection: false,
            qp_critical_delay: None,
            qp_critical_score: Dur::from_millis(4),
            qp_lg_aging: 19,
            qp_bucket_bits: 5,
            qp_attempts: 2,
            qp_max_score: Dur::from_secs(5),
            qp_sanction: QpSanction::Redirect,
            hash_seed: None,
        }
    }
}

impl DualPi2Params {
    /// The queue protection's parameters, defaults filled in.
    pub fn qp_config(&self) -> QpConfig {
        let critical = self
            .qp_critical_delay
            .unwrap_or(match self.step_thresh_packets {
                Some(_) => Dur::from_millis(1),
                None => self.step_thresh.unwrap_or(Dur::from_millis(1)),
            });
        QpConfig {
            critical_delay: critical,
            critical_score: self.qp_critical_score,
            lg_aging: self.qp_lg_aging,
            bucket_bits: self.qp_bucket_bits,
            attempts: self.qp_attempts,
            max_score: self.qp_max_score,
        }
    }

    /// Refuses a `qp_*` key set away from its default while `queue_protection`
    /// is off: it would do nothing.
    fn check_qp_keys_unused(&self) -> Result<(), ParamError> {
        let d = DualPi2Params::default();
        let s = |v: &dyn std::fmt::Display| v.to_string();
        let set = [
            (
                "qp_critical_delay",
                self.qp_critical_delay != d.qp_critical_delay,
                self.qp_critical_delay.map_or_else(String::new, |v| s(&v)),
            ),
            (
                "qp_critical_score",
                self.qp_critical_score != d.qp_critical_score,
                s(&self.qp_critical_score),
            ),
            (
                "qp_lg_aging",
                self.qp_lg_aging != d.qp_lg_aging,
                s(&self.qp_lg_aging),
            ),
            (
                "qp_bucket_bits",
                self.qp_bucket_bits != d.qp_bucket_bits,
                s(&self.qp_bucket_bits),
            ),
            (
                "qp_attempts",
                self.qp_attempts != d.qp_attempts,
                s(&self.qp_attempts),
            ),
            (
                "qp_max_score",
                self.qp_max_score != d.qp_max_score,
                s(&self.qp_max_score),
            ),
            (
                "qp_sanction",
                self.qp_sanction != d.qp_sanction,
                format!("{:?}", self.qp_sanction).to_lowercase(),
            ),
            (
                "hash_seed",
                self.hash_seed != d.hash_seed,
                self.hash_seed.map_or_else(String::new, |v| s(&v)),
            ),
        ];
        match set.into_iter().find(|(_, changed, _)| *changed) {
            Some((key, _, value)) => Err(ParamError::new(
                key,
                value,
                "has no effect unless queue_protection = true",
            )),
            None => Ok(()),
        }
    }
}

/// The largest `mtu`: IPv4's largest packet.
const MAX_MTU: u32 = 65_535;

impl QdiscParams for DualPi2Params {
    type Qdisc = DualPi2;
    fn validate(&self) -> Result<(), ParamError> {
        check::limit("limit", self.limit)?;
        // Linux keeps the delay error times alpha in 64 bits: 4.2 s at most.
        if self.target > Dur::from_secs(4) {
            return Err(ParamError::new("target", self.target, "must be at most 4s"));
        }
        if self.tupdate < Dur::from_micros(1) || self.tupdate > Dur::from_secs(4) {
            return Err(ParamError::new(
                "tupdate",
                self.tupdate,
                "must be from 1us to 4s",
            ));
        }
        for (key, v) in [("alpha", self.alpha), ("beta", self.beta)] {
            // tc: 1 to 2^23 - 1 steps of 1/256 Hz.
            let steps = (v * 256.0).round();
            if !(v.is_finite() && (1.0..=((1u64 << 23) - 1) as f64).contains(&steps)) {
                return Err(ParamError::new(
                    key,
                    v,
                    "must be from 1/256 to 32767 per second",
                ));
            }
        }
        if let Some(n) = self.step_thresh_packets {
            check::at_least("step_thresh_packets", n, 1)?;
            // One threshold applies: a time one set beside it would be ignored.
            if let Some(t) = self.step_thresh {
                return Err(ParamError::new(
                    "step_thresh_packets",
                    n,
                    format!(
                        "cannot be given with step_thresh = {t}: the L4S step is a \
                         sojourn time or a queue length, not both (as tc's step_thresh)"
                    ),
                ));
            }
        }
        check::at_least("coupling_factor", self.coupling_factor, 1)?;
        if self.classic_protection > 100 {
            return Err(ParamError::new(
                "classic_protection",
                self.classic_protection,
                "must be a percentage from 0 to 100",
            ));
        }
        check::at_least("mtu", self.mtu, 1)?;
        // Packets are at most 65,535 bytes (IPv4's total length); an mtu above
        // it only shifts the thresholds the MTU sets.
        if self.mtu > MAX_MTU {
            return Err(ParamError::new(
                "mtu",
                self.mtu,
                format!("must be at most {MAX_MTU} bytes (the largest IPv4 packet)"),
            ));
        }
        if self.queue_protection {
            self.qp_config().validate()
        } else {
            self.check_qp_keys_unused()
        }
    }
    fn build(&self, link: &LinkInfo) -> Result<DualPi2, ParamError> {
        DualPi2::new(self.clone(), link)
    }
    fn property_configs() -> Vec<Self> {
        let ms = Dur::from_millis;
        vec![
            DualPi2Params {
                limit: 8,
                target: ms(1),
                tupdate: ms(1),
                step_thresh_packets: Some(2),
                min_qlen_step: 1,
                drop_on_overload: false,
                drop_enqueue: true,
                any_ect: true,
                mtu: 100,
                alpha: 20.0,
                beta: 100.0,
                ..Default::default()
            },
            DualPi2Params {
                limit: 12,
                target: ms(2),
                tupdate: ms(2),
                step_thresh: Some(Dur::from_micros(200)),
                coupling_factor: 4,
                classic_protection: 50,
                mtu: 200,
                alpha: 10.0,
                beta: 50.0,
                ..Default::default()
            },
            DualPi2Params {
                limit: 10,
                target: ms(1),
                tupdate: ms(1),
                step_thresh: Some(Dur::from_micros(300)),
                mtu: 100,
                alpha: 20.0,
                beta: 100.0,
                queue_protection: true,
                qp_critical_delay: Some(Dur::from_micros(200)),
                qp_critical_score: Dur::from_micros(100),
                qp_bucket_bits: 1,
                qp_attempts: 1,
                ..Default::default()
            },
            DualPi2Params {
                limit: 10,
                step_thresh_packets: Some(2),
                mtu: 100,
                drop_enqueue: true,
                queue_protection: true,
                qp_sanction: QpSanction::Drop,
                qp_critical_delay: Some(Dur::from_micros(100)),
                qp_critical_score: Dur::from_micros(50),
                ..Default::default()
            },
        ]
    }
}

/// The probability's scale: Linux's `MAX_PROB`.
const MAX_PROB: u32 = u32::MAX;

/// alpha or beta per second as Linux keeps it: steps of 1/256 Hz scaled so that
/// (delay in ns) x gain / 64 is a change of probability in units of 1/MAX_PROB.
fn scale_gain(per_second: f64) -> u64 {
    let steps = (per_second * 256.0).round() as u64;
    ((steps * MAX_PROB as u64) >> 2) / 1_000_000_000
}

#[derive(Debug, Clone)]
pub struct DualPi2 {
    params: DualPi2Params,
    l: PacketFifo,
    /// Per L packet, whether the step may mark it (`min_qlen_step`).
    l_step: VecDeque<bool>,
    c: PacketFifo,
    /// p', in units of 1/MAX_PROB.
    prob: u32,
    last_qdelay: Dur,
    next_update: Time,
    alpha: u64,
    beta: u64,
    /// The WRR credit: L is served while it is <= 0 (or C is empty).
    credit: i64,
    credit_init: i64,
    step_marks: u64,
    /// The sojourn step threshold in force (`step_thresh` or its default).
    step_thresh: Dur,
    /// RFC 9957's queue protection, if on.
    qp: Option<QueueProtection>,
    /// The link's rate, which turns the L backlog into queue protection's delay.
    rate: Rate,
}

impl DualPi2 {
    pub fn new(params: DualPi2Params, link: &LinkInfo) -> Result<Self, ParamError> {
        params.validate()?;
        let qp = params.queue_protection.then(|| {
            let key = level_key(hash_seed(params.hash_seed, link), 1, 0);
            QueueProtection::new(params.qp_config(), key)
        });
        let wc = params.classic_protection as i64;
        let credit_init = params.mtu as i64 * (wc - (100 - wc));
        Ok(DualPi2 {
            l: PacketFifo::new(),
            l_step: VecDeque::new(),
            c: PacketFifo::new(),
            prob: 0,
            last_qdelay: Dur::ZERO,
            next_update: Time::ZERO + params.tupdate,
            alpha: scale_gain(params.alpha),
            beta: scale_gain(params.beta),
            credit: credit_init,
            credit_init,
            step_marks: 0,
            step_thresh: params.step_thresh.unwrap_or(Dur::from_millis(1)),
            qp,
            rate: link.rate,
            params,
        })
    }

    /// p', the base probability, in [0, 1].
    pub fn base_prob(&self) -> f64 {
        self.prob as f64 / MAX_PROB as f64
    }

    /// p_C = p'^2, the classic queue's drop or mark probability.
    pub fn classic_prob(&self) -> f64 {
        self.base_prob().powi(2)
    }

    /// p_L = min(k p', 1), the L queue's coupled marking probability.
    pub fn l4s_prob(&self) -> f64 {
        (self.params.coupling_factor as f64 * self.base_prob()).min(1.0)
    }

    /// Packets in the L queue and in the C queue.
    pub fn lens(&self) -> (usize, usize) {
        (self.l.len(), self.c.len())
    }

    /// CE marks by the L queue's step.
    pub fn step_marks(&self) -> u64 {
        self.step_marks
    }

    /// L packets queue protection sanctioned (redirected to the C queue or
    /// dropped); 0 when it is off.
    pub fn sanctioned(&self) -> u64 {
        self.qp.as_ref().map_or(0, QueueProtection::sanctioned)
    }

    /// The queue protection's state (scores, default bucket use), if it is on.
    pub fn queue_protection(&self) -> Option<&QueueProtection> {
        self.qp.as_ref()
    }

    /// The L queue's delay as queue protection sees it: its backlog at the link
    /// rate (RFC 9957 and DOCSIS estimate it so; a rate of 0 reads as no delay).
    fn l_backlog_delay(&self) -> Dur {
        match self.rate.bps() {
            0 => Dur::ZERO,
            _ => self.rate.tx_time(self.l.bytes()),
        }
    }

    /// The native L AQM's marking probability for an arrival now, of
    /// [`PROB_ONE`]: Linux's step, so 1 over the threshold and 0 under it.
    fn prob_native(&self, qdelay: Dur) -> u64 {
        let over = match self.params.step_thresh_packets {
            Some(n) => self.l.len() > n as usize,
            None => qdelay > self.step_thresh,
        };
        let may_mark = self.l.len() >= self.params.min_qlen_step as usize;
        if over && may_mark {
            PROB_ONE
        } else {
            0
        }
    }

    /// Whether queue protection sanctions an L arrival.
    fn sanctions(&mut self, pkt: &Packet, now: Time) -> bool {
        if self.qp.is_none() {
            return false;
        }
        let qdelay = self.l_backlog_delay();
        let prob = self.prob_native(qdelay);
        self.qp
            .as_mut()
            .is_some_and(|qp| qp.qprotect(pkt.flow, pkt.size, now, qdelay, prob))
    }

    fn is_l4s(&self, ecn: Ecn) -> bool {
        let mask = if self.params.any_ect { 0b11 } else { 0b01 };
        ecn.bits() & mask != 0
    }

    /// The larger head sojourn of the two queues at `t`.
    fn qdelay(&self, t: Time) -> Dur {
        let head = |q: &PacketFifo| {
            q.front()
                .map_or(Dur::ZERO, |p| t.saturating_since(p.enqueued_at))
        };
        head(&self.l).max(head(&self.c))
    }

    /// One run of the PI controller at `t` (Linux's `calculate_probability`).
    fn update(&mut self, t: Time) {
        let qdelay = self.qdelay(t);
        let ns = |d: Dur| d.as_nanos() as i128;
        let delta = (ns(qdelay) - ns(self.params.target)) * self.alpha as i128
            + (ns(qdelay) - ns(self.last_qdelay)) * self.beta as i128;
        self.last_qdelay = qdelay;
        // Integer division truncates toward zero, as Linux's divides the magnitude.
        let step = delta / 64;
        let prob = (self.prob as i128 + step).clamp(0, MAX_PROB as i128) as u32;
        self.prob = if self.params.drop_on_overload {
            prob
        } else {
            prob.min(MAX_PROB / self.params.coupling_factor as u32)
        };
    }

    /// Runs the updates due before `now` (the queues did not change since the
    /// last call, so each sees what Linux's timer would have seen); stops once an
    /// update changes nothing.
    fn advance_clock(&mut self, now: Time) {
        let period = self.params.tupdate;
        while self.next_update < now {
            let before = (self.prob, self.last_qdelay);
            let at = self.next_update;
            self.update(at);
            self.next_update += period;
            if before == (self.prob, self.last_qdelay) && self.l.is_empty() && self.c.is_empty() {
                let behind = now.saturating_since(self.next_update).as_nanos();
                self.next_update += period.saturating_mul(behind.div_ceil(period.as_nanos()));
                break;
            }
        }
    }

    /// Linux's `dualpi2_roll`: true with probability `prob` / MAX_PROB.
    fn roll(prob: u64, ctx: &mut Ctx<'_>) -> bool {
        (rand::Rng::gen::<u32>(ctx.rng) as u64) <= prob
    }

    /// What the PI probability does to `pkt`: `None` if it is dropped, else the
    /// packet, CE-marked or not (Linux's `must_drop`).
    fn apply_pi(&mut self, mut pkt: Packet, l4s: bool, ctx: &mut Ctx<'_>) -> Option<Packet> {
        if self.l.bytes() + self.c.bytes() < 2 * self.params.mtu as u64 {
            return Some(pkt);
        }
        let prob = self.prob as u64;
        let l_prob = prob * self.params.coupling_factor as u64;
        let overload = l_prob > MAX_PROB as u64;
        let (signal, drop) = if !l4s {
            let hit = Self::roll(prob, ctx) && Self::roll(prob, ctx);
            (hit, hit && (overload || !pkt.ecn.is_capable()))
        } else if overload {
            let drop =
                self.params.drop_on_overload && Self::roll(prob, ctx) && Self::roll(prob, ctx);
            (true, drop)
        } else {
            let hit = Self::roll(l_prob, ctx);
            (hit, hit && !pkt.ecn.is_capable())
        };
        if drop {
            ctx.drop(pkt, DropReason::Early);
            return None;
        }
        if signal && pkt.ecn.is_ect() {
            pkt.ecn = Ecn::Ce;
            ctx.sink.mark(&pkt, DropReason::Early);
        }
        Some(pkt)
    }

    /// The next packet by the WRR credit, and the credit it costs if sent.
    fn pick(&mut self) -> Option<(Packet, bool, bool, i64)> {
        let (l_len, c_len) = (self.l.len(), self.c.len());
        if l_len > 0 && (c_len == 0 || self.credit <= 0) {
            let pkt = self.l.pop_front()?;
            let step = self.l_step.pop_front().unwrap_or(false);
            let wc = if c_len > 0 {
                self.params.classic_protection as i64
            } else {
                0
            };
            Some((pkt, true, step, wc * pkt.size as i64))
        } else if c_len > 0 {
            let pkt = self.c.pop_front()?;
            let wl = if l_len > 0 {
                100 - self.params.classic_protection as i64
            } else {
                0
            };
            Some((pkt, false, false, -wl * pkt.size as i64))
        } else {
            self.credit = self.credit_init;
            None
        }
    }
}

impl Qdisc for DualPi2 {
    fn enqueue(&mut self, pkt: Packet, ctx: &mut Ctx<'_>) -> Verdict {
        self.advance_clock(ctx.now);
        if self.l.len() + self.c.len() >= self.params.limit as usize {
            ctx.drop(pkt, DropReason::Overflow);
            return Verdict::Dropped;
        }
        let mut l4s = self.is_l4s(pkt.ecn);
        if l4s && self.sanctions(&pkt, ctx.now) {
            match self.params.qp_sanction {
                QpSanction::Redirect => l4s = false,
                QpSanction::Drop => {
                    ctx.drop(pkt, DropReason::Unresponsive);
                    return Verdict::Dropped;
                }
            }
        }
        let mut pkt = pkt;
        if self.params.drop_enqueue {
            match self.apply_pi(pkt, l4s, ctx) {
                Some(p) => pkt = p,
                None => return Verdict::Dropped,
            }
        }
        pkt.enqueued_at = ctx.now;
        if l4s {
            self.l_step
                .push_back(self.l.len() >= self.params.min_qlen_step as usize);
            self.l.push_back(pkt);
        } else {
            self.c.push_back(pkt);
        }
        Verdict::Queued
    }

    fn dequeue(&mut self, ctx: &mut Ctx<'_>) -> Option<Packet> {
        self.advance_clock(ctx.now);
        while let Some((pkt, from_l, step, credit_change)) = self.pick() {
            let mut pkt = pkt;
            if !self.params.drop_enqueue {
                match self.apply_pi(pkt, from_l, ctx) {
                    Some(p) => pkt = p,
                    None => continue,
                }
            }
            if from_l && step {
                let over = match self.params.step_thresh_packets {
                    Some(n) => self.l.len() > n as usize,
                    None => ctx.now.saturating_since(pkt.enqueued_at) > self.step_thresh,
                };
                if over {
                    if !pkt.ecn.is_capable() {
                        ctx.drop(pkt, DropReason::Sojourn);
                        continue;
                    }
                    if pkt.ecn.is_ect() {
                        pkt.ecn = Ecn::Ce;
                        ctx.sink.mark(&pkt, DropReason::Sojourn);
                        self.step_marks += 1;
                    }
                }
            }
            self.credit += credit_change;
            return Some(pkt);
        }
        None
    }

    fn len(&self) -> usize {
        self.l.len() + self.c.len()
    }
    fn bytes(&self) -> u64 {
        self.l.bytes() + self.c.bytes()
    }
    fn limit(&self) -> Limit {
        Limit::Packets(self.params.limit)
    }
    fn set_link_rate(&mut self, rate: Rate) {
        self.rate = rate;
    }
}

#[cfg(test)]
mod tests;
