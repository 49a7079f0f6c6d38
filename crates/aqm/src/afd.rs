//! AFD: Approximate Fair Dropping (Pan, Breslau, Prabhakar & Shenker, *Approximate
//! fairness through differential dropping*, ACM CCR 33(2), 2003). The baseline
//! BREATHe is compared with (seed 001, section 4).
//!
//! A FIFO whose arrivals are dropped by how fast their flow has been arriving:
//! - a **shadow buffer** of `shadow` entries (the paper's b) holds the flow ids of
//!   recently sampled arrivals: each arrival is copied into it with probability
//!   `sample` (the paper's 1/s), replacing an entry chosen at random once it is
//!   full. m_i, the number of entries of flow i, estimates i's arrival rate:
//!   r_i ~ R m_i / b for a total arrival rate R.
//! - an arrival of flow i is dropped with probability `(1 - m_fair / m_i)+`, so a
//!   flow with m_i > m_fair keeps about m_fair R / b, the same for every such flow,
//!   and a flow below m_fair is never dropped early.
//! - m_fair, the fair share in shadow-buffer entries, follows the queue: every
//!   `interval` (the paper's 160 Hz), `m_fair += alpha (q_old - target) - beta (q -
//!   target)`, the PI controller of Hollot et al. that the paper adopts, clamped
//!   to [0, b]. A queue above `target` lowers m_fair (more drops), one below
//!   raises it; it starts at b (no early drops).
//!
//! Readings and choices (the AFD paper is not among the seeds; these are the
//! points where its description leaves a choice):
//! - The shadow buffer records **arrivals**, dropped ones included: AFD estimates
//!   arrival rates, and a flow's admitted rate is what it controls.
//! - The arrival is sampled (or not) before its own m_i is read.
//! - Lengths are packets (the paper also has a byte mode; not modelled); m_fair
//!   may be fractional, so a very large shadow buffer, where a fair-rate flow
//!   holds less than one entry, still works.
//! - The controller runs on the `now` of each enqueue and dequeue, as PIE's does:
//!   the updates due before a call run in order first (an update at the very
//!   instant of a call runs after it). The queue does not change between calls,
//!   so this is what a timer computes. After an idle spell the catch-up stops at
//!   the first update that changes nothing.
//! - Early drops are reported as `HeavyHitter` (a flow judged above its fair
//!   share), a full queue as `Overflow`. No ECN: AFD's drops are its signal.
//!
//! Defaults, with their sources: `docs/qdiscs.md`.

use crate::drop_reason::DropReason;
use crate::packet::{FlowId, Packet};
use crate::parts::fifo::{backlog_of, LimitedQueue};
use crate::parts::flow_hash::FlowMap;
use crate::parts::params::qdisc_params;
use crate::qdisc::{check, Ctx, LinkInfo, ParamError, Qdisc, QdiscParams, Verdict};
use crate::time::{Dur, Time};

/// The most shadow-buffer entries: it grows with the arrivals up to this.
pub const MAX_SHADOW: u32 = 1 << 22;

qdisc_params! {
    /// AFD parameters. Lengths are in packets.
    pub struct AfdParams {
        /// Capacity in packets. The BREATHe paper's buffer (section 4).
        limit: u32 = 300,
        /// b: entries of the shadow buffer of sampled arrivals.
        shadow: u32 = 1000,
        /// 1/s: the probability an arrival is copied into the shadow buffer.
        sample: f64 = 1.0,
        /// q_target: the queue length m_fair is steered toward, in packets.
        target: f64 = 100.0,
        /// Weight of the previous update's queue error (AFD paper: 1.7).
        alpha: f64 = 1.7,
        /// Weight of the current queue error (AFD paper: 1.8).
        beta: f64 = 1.8,
        /// Time between m_fair updates (AFD paper: 160 Hz).
        interval: Dur = Dur::from_micros(6250),
    }
}

impl QdiscParams for AfdParams {
    type Qdisc = Afd;
    fn validate(&self) -> Result<(), ParamError> {
        check::limit("limit", self.limit)?;
        check::at_least("shadow", self.shadow, 1)?;
        if self.shadow > MAX_SHADOW {
            return Err(ParamError::new(
                "shadow",
                self.shadow,
                format!("must be at most {MAX_SHADOW} entries (2^22)"),
            ));
        }
        check::positive("sample", self.sample)?;
        check::probability("sample", self.sample)?;
        check::finite("target", self.target)?;
        if self.target < 0.0 {
            return Err(ParamError::new(
                "target",
                self.target,
                "must not be negative",
            ));
        }
        check::below("target", self.target, "limit", self.limit as f64)?;
        for (key, v) in [("alpha", self.alpha), ("beta", self.beta)] {
            check::finite(key, v)?;
            if v < 0.0 {
                return Err(ParamError::new(key, v, "must not be negative"));
            }
        }
        if self.interval < Dur::from_micros(1) {
            return Err(ParamError::new(
                "interval",
                self.interval,
                "must be at least 1us",
            ));
        }
        Ok(())
    }
    fn build(&self, _link: &LinkInfo) -> Result<Afd, ParamError> {
        Afd::new(self.clone())
    }
    fn property_configs() -> Vec<Self> {
        vec![
            // Tiny: the shadow buffer wraps at once, the queue overflows often.
            AfdParams {
                limit: 8,
                shadow: 5,
                target: 3.0,
                interval: Dur::from_micros(100),
                ..Default::default()
            },
            // Sparse sampling and strong gains.
            AfdParams {
                limit: 20,
                shadow: 50,
                sample: 0.3,
                target: 5.0,
                alpha: 8.0,
                beta: 9.0,
                interval: Dur::from_millis(1),
            },
        ]
    }
}

#[derive(Debug, Clone)]
pub struct Afd {
    params: AfdParams,
    queue: LimitedQueue,
    /// Flow ids of sampled arrivals; grows to `shadow` entries, then is overwritten.
    shadow: Vec<FlowId>,
    /// m_i for every flow with an entry in `shadow`; a flow leaves at zero.
    counts: FlowMap<u32>,
    m_fair: f64,
    /// The queue length at the last update (the controller's q(t - 1)).
    q_old: f64,
    next_update: Time,
}

impl Afd {
    pub fn new(params: AfdParams) -> Result<Self, ParamError> {
        params.validate()?;
        Ok(Afd {
            queue: LimitedQueue::new(params.limit),
            shadow: Vec::new(),
            counts: FlowMap::default(),
            m_fair: params.shadow as f64,
            q_old: 0.0,
            next_update: Time::ZERO + params.interval,
            params,
        })
    }

    /// The fair share, in shadow-buffer entries.
    pub fn m_fair(&self) -> f64 {
        self.m_fair
    }

    /// m_i: `flow`'s entries in the shadow buffer.
    pub fn count(&self, flow: FlowId) -> u32 {
        self.counts.get(&flow).copied().unwrap_or(0)
    }

    /// Entries in the shadow buffer (at most `shadow`).
    pub fn shadow_len(&self) -> usize {
        self.shadow.len()
    }

    /// Runs the m_fair updates due before `now`.
    fn advance_clock(&mut self, now: Time) {
        let period = self.params.interval;
        while self.next_update < now {
            let before = (self.m_fair, self.q_old);
            self.update_fair_share();
            self.next_update += period;
            if before == (self.m_fair, self.q_old) {
                // Nothing moved and the queue is as it was: neither would the rest.
                let behind = now.saturating_since(self.next_update).as_nanos();
                self.next_update += period.saturating_mul(behind.div_ceil(period.as_nanos()));
                break;
            }
        }
    }

    /// One controller step: m_fair += alpha (q_old - target) - beta (q - target).
    fn update_fair_share(&mut self) {
        let p = &self.params;
        let q = self.queue.len() as f64;
        let m = self.m_fair + p.alpha * (self.q_old - p.target) - p.beta * (q - p.target);
        self.m_fair = m.clamp(0.0, p.shadow as f64);
        self.q_old = q;
    }

    /// Copies `flow` into the shadow buffer, over a random entry once it is full.
    fn sample(&mut self, flow: FlowId, ctx: &mut Ctx<'_>) {
        if self.shadow.len() < self.params.shadow as usize {
            self.shadow.push(flow);
        } else {
            let i = rand::Rng::gen_range(ctx.rng, 0..self.shadow.len());
            let old = std::mem::replace(&mut self.shadow[i], flow);
            let c = self
                .counts
                .get_mut(&old)
                .expect("a shadowed flow has a count");
            *c -= 1;
            if *c == 0 {
                self.counts.remove(&old);
            }
        }
        *self.counts.entry(flow).or_insert(0) += 1;
    }
}

impl Qdisc for Afd {
    backlog_of!(queue);

    fn enqueue(&mut self, pkt: Packet, ctx: &mut Ctx<'_>) -> Verdict {
        self.advance_clock(ctx.now);
        if self.params.sample >= 1.0 || ctx.uniform() < self.params.sample {
            self.sample(pkt.flow, ctx);
        }
        let m_i = self.count(pkt.flow) as f64;
        if m_i > self.m_fair && ctx.uniform() < 1.0 - self.m_fair / m_i {
            ctx.drop(pkt, DropReason::HeavyHitter);
            return Verdict::Dropped;
        }
        self.queue.admit(pkt, ctx)
    }

    fn dequeue(&mut self, ctx: &mut Ctx<'_>) -> Option<Packet> {
        self.advance_clock(ctx.now);
        self.queue.pop_front()
    }
}

impl crate::table_bytes::TableBytes for AfdParams {
    /// The shadow buffer of `shadow` flow ids and a count per flow in it.
    fn table_bytes(&self, _: &LinkInfo) -> Option<crate::table_bytes::KeyedTable> {
        use crate::table_bytes::{map_bytes, vec_bytes};
        let n = u64::from(self.shadow);
        Some(crate::table_bytes::KeyedTable {
            key: "shadow",
            value: self.shadow.to_string(),
            bytes: vec_bytes::<FlowId>(n).saturating_add(map_bytes::<FlowId, u32>(n)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{rejection, Harness};
    use std::collections::BTreeMap;

    /// Drives AFD with constant-rate flows into a link that serves one packet
    /// every `service`: `flows` are (count, period) groups, every flow of a group
    /// sending one packet every `period` from a phase of its own. Returns each
    /// flow's packets transmitted after `warmup`, by flow id, and the longest
    /// queue seen after `warmup`.
    fn run(
        params: AfdParams,
        flows: &[(u32, Dur)],
        service: Dur,
        warmup: Dur,
        end: Dur,
    ) -> (Harness<Afd>, BTreeMap<u32, u64>, usize) {
        let mut h = Harness::build(params);
        // (next arrival, period, flow id)
        let mut sources: Vec<(Time, Dur, u32)> = Vec::new();
        for &(n, period) in flows {
            for _ in 0..n {
                let id = sources.len() as u32;
                let phase = Dur::from_nanos(period.as_nanos() * (id as u64 * 7919 % 97) / 97);
                sources.push((Time::ZERO + phase, period, id));
            }
        }
        let mut next_service = Time::ZERO + service;
        let mut sent: BTreeMap<u32, u64> = BTreeMap::new();
        let (end, warmup) = (Time::ZERO + end, Time::ZERO + warmup);
        let (mut seq, mut longest) = (0, 0);
        loop {
            let (i, t) = sources
                .iter()
                .enumerate()
                .map(|(i, s)| (i, s.0))
                .min_by_key(|&(i, t)| (t, i))
                .unwrap();
            if next_service <= t {
                h.now = next_service;
                if let Some(p) = h.dequeue() {
                    if h.now >= warmup {
                        *sent.entry(p.flow.0).or_default() += 1;
                    }
                }
                next_service += service;
            } else {
                h.now = t;
                let (_, period, id) = sources[i];
                h.offer(id, seq);
                seq += 1;
                if h.now >= warmup {
                    longest = longest.max(h.q.len());
                }
                sources[i].0 += period;
            }
            if h.now >= end {
                return (h, sent, longest);
            }
        }
    }

    #[test]
    fn flows_above_the_fair_share_are_cut_to_it_and_flows_below_are_not_dropped() {
        // 1000 packets/s of service. 4 unresponsive flows at 500/s and 10 light
        // flows at 20/s: max-min fair is 20/s for each light flow and (1000 -
        // 200) / 4 = 200/s for each heavy one. 30 s, measured over the last 20.
        let params = AfdParams {
            target: 50.0,
            ..Default::default()
        };
        let ms = Dur::from_millis;
        let (h, sent, longest) = run(
            params,
            &[(4, ms(2)), (10, ms(50))],
            ms(1),
            Dur::from_secs(10),
            Dur::from_secs(30),
        );
        let secs = 20.0;
        for heavy in 0..4 {
            let rate = sent[&heavy] as f64 / secs;
            assert!(
                (170.0..230.0).contains(&rate),
                "heavy flow {heavy} got {rate}/s, fair is 200/s"
            );
        }
        let light_drops = h.sink.drops.iter().filter(|(p, _)| p.flow.0 >= 4).count();
        let light_sent: u64 = (4..14).map(|f| sent[&f]).sum();
        // 10 flows x 20/s x 30 s = 6000 offered.
        assert!(
            light_drops <= 60,
            "light flows lost {light_drops} of 6000 packets"
        );
        assert!(light_sent as f64 / secs > 0.97 * 200.0, "{light_sent}");
        // Once settled the queue is held near the target, away from the limit.
        assert!(longest < 200, "the queue reached {longest} packets");
    }

    #[test]
    fn the_shadow_buffer_counts_what_it_holds_and_forgets_at_random() {
        let mut h = Harness::build(AfdParams {
            shadow: 10,
            limit: 1000,
            target: 500.0,
            ..Default::default()
        });
        for seq in 0..10 {
            h.offer(seq % 3, seq);
        }
        let q = h.q.qdisc();
        assert_eq!(q.shadow_len(), 10);
        assert_eq!(
            (q.count(FlowId(0)), q.count(FlowId(1)), q.count(FlowId(2))),
            (4, 3, 3)
        );
        // Once full, each arrival replaces one entry: the counts still sum to b,
        // and flows that lost every entry are forgotten.
        for seq in 10..200 {
            h.offer(7, seq);
        }
        let q = h.q.qdisc();
        assert_eq!(q.count(FlowId(7)), 10);
        assert_eq!(q.counts.len(), 1);
    }

    #[test]
    fn sampling_keeps_about_the_given_fraction() {
        let mut h = Harness::build(AfdParams {
            shadow: 100_000,
            sample: 0.25,
            limit: 100_000,
            target: 50_000.0,
            ..Default::default()
        });
        for seq in 0..40_000 {
            h.offer(seq % 50, seq);
        }
        let n = h.q.qdisc().shadow_len() as f64;
        assert!((9_500.0..10_500.0).contains(&n), "{n} of 40000 sampled");
    }

    #[test]
    fn the_fair_share_follows_the_pi_rule_and_stays_in_range() {
        let mut h = Harness::build(AfdParams {
            shadow: 1000,
            limit: 1000,
            target: 10.0,
            alpha: 1.7,
            beta: 1.8,
            ..Default::default()
        });
        // 60 packets of one flow at t = 0: the first update, due at 6.25 ms, runs
        // at the next call after it, with q = 60 and q_old = 0.
        for seq in 0..60 {
            h.offer(seq % 2, seq);
        }
        h.advance(Dur::from_millis(7));
        h.offer(5, 60);
        let expect = 1000.0 + 1.7 * (0.0 - 10.0) - 1.8 * (60.0 - 10.0);
        assert!((h.q.qdisc().m_fair() - expect).abs() < 1e-9);
        // Idle: the queue drains and m_fair climbs back to b and stops there.
        h.drain_seqs();
        h.advance(Dur::from_secs(100));
        h.offer(5, 61);
        assert_eq!(h.q.qdisc().m_fair(), 1000.0);
    }

    #[test]
    fn a_flow_below_the_fair_share_is_never_dropped_early() {
        // m_fair = b at the start: nothing is dropped while the queue has room.
        let mut h = Harness::build(AfdParams {
            shadow: 100,
            limit: 50,
            target: 10.0,
            ..Default::default()
        });
        for seq in 0..50 {
            assert_eq!(h.offer(1, seq), Verdict::Queued);
        }
        assert_eq!(h.q.counts().total_drops(), 0);
    }

    #[test]
    fn bad_parameters_are_rejected_by_name() {
        let bad = |p: AfdParams| rejection(p);
        assert_eq!(
            bad(AfdParams {
                shadow: 0,
                ..Default::default()
            }),
            "shadow = 0 must be at least 1"
        );
        assert_eq!(
            bad(AfdParams {
                sample: 0.0,
                ..Default::default()
            }),
            "sample = 0 must be positive"
        );
        assert_eq!(
            bad(AfdParams {
                sample: 1.5,
                ..Default::default()
            }),
            "sample = 1.5 must be a probability in [0, 1]"
        );
        assert_eq!(
            bad(AfdParams {
                target: 300.0,
                ..Default::default()
            }),
            "target = 300 must be below limit = 300"
        );
        assert!(bad(AfdParams {
            beta: f64::NAN,
            ..Default::default()
        })
        .starts_with("beta = NaN must be a finite number"));
        assert!(bad(AfdParams {
            interval: Dur::ZERO,
            ..Default::default()
        })
        .starts_with("interval = "));
    }
}
