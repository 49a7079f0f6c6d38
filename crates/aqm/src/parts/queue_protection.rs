//! Queue protection (RFC 9957, DOCSIS 3.1's QProt): per-microflow queuing scores
//! that pick out the flows building a queue in the low-latency (L) queue of a
//! dual-queue coupled AQM, so that their packets can be sanctioned (redirected to
//! the Classic queue, or dropped) before the L queue's delay goes past a critical
//! threshold.
//!
//! Each arriving L packet is charged to a bucket (RFC 9957 section 4.2.1's
//! `pick_bucket`): a flow owns one of `2^bucket_bits` buckets, found by trying
//! `attempts` slices of `bucket_bits` bits of a 32-bit keyed hash of the flow id,
//! taking the first slice whose bucket has expired if none is the flow's own; a
//! flow that finds neither shares one default bucket. A bucket holds `t_exp`, the
//! time at which its score will have drained: the score is `t_exp - now`, so it
//! ages by one nanosecond per nanosecond without a timer, and the bucket is free
//! to be recycled once the score reaches zero (there is no other expiry).
//! `fill_bucket` (section 4.2.2) adds `probNative x size / AGING` to it, where
//! probNative is the L queue's native marking probability at the packet's arrival
//! and AGING is `2^lg_aging` bytes per 2^30 ns (the RFC's `AGING = pow(2,
//! LG_AGING - 30) * T_RES`, with T_RES = 1 ns): the division is a left shift by
//! `30 - lg_aging`, as the RFC suggests for integer code. A flow whose congestion
//! rate (probNative x its byte rate) stays under 2^lg_aging B per 2^30 ns (3.9
//! Mb/s at the default 19) keeps a bounded score; one above it accumulates
//! score. The score is capped at `max_score` (qLSCORE_MAX, 5 s).
//!
//! `qprotect` (section 4.2.3) sanctions the packet when the L queue's delay is
//! over CRITICALqL and the delay times the flow's score is over CRITICALqL x
//! CRITICALqLSCORE: the deeper the queue, the smaller the score that suffices.
//!
//! The arithmetic is the RFC's: times and scores are integer nanoseconds (T_RES =
//! 1 ns), probNative is a fixed-point fraction of 2^32, the product compared
//! against CRITICALqLPRODUCT is exact in 128 bits. What differs: the RFC keeps the
//! microflow id in the bucket and hashes it with an unspecified `hash32`; here the
//! bucket keeps the `FlowId` and the hash is [`keyed_hash`] keyed by the run's
//! seed (or a pinned `hash_seed`). RFC 9957 leaves open what happens when `t_exp`
//! would overflow; a 64-bit nanosecond clock does not within 584 years, and the
//! score is capped at `max_score` as CableLabs' ns-3 model caps it.

use crate::packet::FlowId;
use crate::parts::flow_hash::keyed_hash;
use crate::qdisc::ParamError;
use crate::time::{Dur, Time};

/// probNative = 1 in the fixed point [`QueueProtection::qprotect`] takes.
pub const PROB_ONE: u64 = 1 << 32;

/// The RFC's parameters, validated by [`QpConfig::validate`] under DualPI2's key
/// names.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QpConfig {
    /// CRITICALqL: no packet is sanctioned while the L queue's delay is at most this.
    pub critical_delay: Dur,
    /// CRITICALqLSCORE: the score that gets a flow sanctioned when the delay is
    /// just over `critical_delay`.
    pub critical_score: Dur,
    /// LG_AGING: scores drain at 2^lg_aging bytes of native marking per 2^30 ns.
    pub lg_aging: u8,
    /// BI_SIZE: there are 2^bucket_bits buckets besides the default one.
    pub bucket_bits: u8,
    /// ATTEMPTS: hash slices tried for a flow's bucket.
    pub attempts: u8,
    /// qLSCORE_MAX: a score never exceeds this.
    pub max_score: Dur,
}

impl QpConfig {
    /// RFC 9957 section 4.1's defaults (CRITICALqL, which defaults to the native
    /// AQM's MAXTH, is the caller's).
    pub const fn rfc_defaults(critical_delay: Dur) -> Self {
        QpConfig {
            critical_delay,
            critical_score: Dur::from_millis(4),
            lg_aging: 19,
            bucket_bits: 5,
            attempts: 2,
            max_score: Dur::from_secs(5),
        }
    }

    /// Checks the parameters, naming DualPI2's keys.
    pub fn validate(&self) -> Result<(), ParamError> {
        let d = self.critical_delay;
        if d.is_zero() || d > Dur::from_secs(4) {
            return Err(ParamError::new(
                "qp_critical_delay",
                d,
                "must be above 0 and at most 4s",
            ));
        }
        if self.critical_score.is_zero() {
            return Err(ParamError::new(
                "qp_critical_score",
                self.critical_score,
                "must be above 0",
            ));
        }
        if self.max_score > Dur::from_secs(3600) {
            return Err(ParamError::new(
                "qp_max_score",
                self.max_score,
                "must be at most 3600s",
            ));
        }
        if self.critical_score > self.max_score {
            return Err(ParamError::new(
                "qp_critical_score",
                self.critical_score,
                format!(
                    "must be at most qp_max_score = {}: a score never exceeds it",
                    self.max_score
                ),
            ));
        }
        if !(1..=30).contains(&self.lg_aging) {
            return Err(ParamError::new(
                "qp_lg_aging",
                self.lg_aging,
                "must be from 1 to 30 (log2 of the aging rate in bytes per 2^30 ns)",
            ));
        }
        if !(1..=16).contains(&self.bucket_bits) {
            return Err(ParamError::new(
                "qp_bucket_bits",
                self.bucket_bits,
                "must be from 1 to 16 (2 to 65536 buckets)",
            ));
        }
        let most = 32 / self.bucket_bits;
        if self.attempts < 1 || self.attempts > most {
            return Err(ParamError::new(
                "qp_attempts",
                self.attempts,
                format!(
                    "must be from 1 to {most}: each attempt takes qp_bucket_bits = {} \
                     bits of a 32-bit hash",
                    self.bucket_bits
                ),
            ));
        }
        Ok(())
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct Bucket {
    /// The flow that last claimed the bucket.
    owner: Option<FlowId>,
    /// When the score will have drained, ns since the start.
    t_exp: u64,
}

/// The buckets and counters of RFC 9957's queue protection.
#[derive(Clone, Debug)]
pub struct QueueProtection {
    cfg: QpConfig,
    key: u64,
    /// 2^bucket_bits buckets, then the default bucket.
    buckets: Vec<Bucket>,
    critical_product: u128,
    sanctioned: u64,
    default_bucket_uses: u64,
}

impl QueueProtection {
    /// Buckets for a validated `cfg`, hashing flow ids with `key`.
    pub fn new(cfg: QpConfig, key: u64) -> Self {
        QueueProtection {
            buckets: vec![Bucket::default(); (1usize << cfg.bucket_bits) + 1],
            critical_product: cfg.critical_delay.as_nanos() as u128
                * cfg.critical_score.as_nanos() as u128,
            sanctioned: 0,
            default_bucket_uses: 0,
            key,
            cfg,
        }
    }

    /// The parameters in force.
    pub fn config(&self) -> &QpConfig {
        &self.cfg
    }

    /// Packets sanctioned so far.
    pub fn sanctioned(&self) -> u64 {
        self.sanctioned
    }

    /// Packets charged to the shared default bucket because their flow found no
    /// bucket of its own (a sign that `bucket_bits` is too small for the flows).
    pub fn default_bucket_uses(&self) -> u64 {
        self.default_bucket_uses
    }

    /// `flow`'s queuing score at `now` if it owns a bucket (zero once drained).
    pub fn score(&self, flow: FlowId, now: Time) -> Option<Dur> {
        let now = now.as_nanos();
        self.slots(flow)
            .map(|h| &self.buckets[h])
            .find(|b| b.owner == Some(flow))
            .map(|b| Dur::from_nanos(b.t_exp.saturating_sub(now)))
    }

    /// The buckets `flow` may own: `attempts` slices of its hash.
    fn slots(&self, flow: FlowId) -> impl Iterator<Item = usize> {
        let bits = self.cfg.bucket_bits as u32;
        let mask = (1u32 << bits) - 1;
        let h32 = keyed_hash(self.key, flow.0);
        (0..self.cfg.attempts as u32).map(move |j| ((h32 >> (j * bits)) & mask) as usize)
    }

    /// RFC 9957's `pick_bucket`: the flow's bucket if one of its slots holds it,
    /// else the first expired slot (claimed and reset), else the default bucket.
    fn pick_bucket(&mut self, flow: FlowId, now: u64) -> usize {
        let mut expired = None;
        for h in self.slots(flow) {
            let b = &mut self.buckets[h];
            if b.owner == Some(flow) {
                b.t_exp = b.t_exp.max(now);
                return h;
            }
            if expired.is_none() && b.t_exp <= now {
                expired = Some(h);
            }
        }
        let h = expired.unwrap_or_else(|| {
            self.default_bucket_uses += 1;
            self.buckets.len() - 1
        });
        let b = &mut self.buckets[h];
        b.t_exp = b.t_exp.max(now);
        b.owner = Some(flow);
        h
    }

    /// RFC 9957's `fill_bucket`: charges `size` bytes at `prob_native` (of
    /// [`PROB_ONE`]) to bucket `h`; the flow's score after it, in ns.
    fn fill_bucket(&mut self, h: usize, size: u32, prob_native: u64, now: u64) -> u64 {
        let shift = 30 - self.cfg.lg_aging as u32;
        let charge = ((prob_native.min(PROB_ONE) as u128 * size as u128) << shift) >> 32;
        let max = self.cfg.max_score.as_nanos();
        let b = &mut self.buckets[h];
        let score = ((b.t_exp - now) as u128 + charge).min(max as u128) as u64;
        b.t_exp = now + score;
        score
    }

    /// RFC 9957's `qprotect` for an L packet of `flow` and `size` bytes arriving
    /// at `now` to an L queue of delay `qdelay` whose native marking probability
    /// is `prob_native` (of [`PROB_ONE`]): true if the packet is sanctioned.
    pub fn qprotect(
        &mut self,
        flow: FlowId,
        size: u32,
        now: Time,
        qdelay: Dur,
        prob_native: u64,
    ) -> bool {
        let now = now.as_nanos();
        let h = self.pick_bucket(flow, now);
        let score = self.fill_bucket(h, size, prob_native, now);
        let qdelay = qdelay.as_nanos();
        let sanction = qdelay > self.cfg.critical_delay.as_nanos()
            && qdelay as u128 * score as u128 > self.critical_product;
        self.sanctioned += sanction as u64;
        sanction
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn qp() -> QueueProtection {
        QueueProtection::new(QpConfig::rfc_defaults(Dur::from_millis(1)), 7)
    }

    #[test]
    fn a_full_probability_byte_costs_two_to_the_thirty_minus_lg_aging_ns() {
        let mut q = qp();
        let t = Time::from_secs(1);
        q.qprotect(FlowId(1), 1500, t, Dur::ZERO, PROB_ONE);
        assert_eq!(q.score(FlowId(1), t), Some(Dur::from_nanos(1500 << 11)));
        // Half the probability, half the charge; nothing at probability 0.
        q.qprotect(FlowId(1), 1500, t, Dur::ZERO, PROB_ONE / 2);
        q.qprotect(FlowId(1), 1500, t, Dur::ZERO, 0);
        assert_eq!(
            q.score(FlowId(1), t),
            Some(Dur::from_nanos((3 * 1500) << 10))
        );
        // The score drains one ns per ns.
        let later = t + Dur::from_millis(1);
        assert_eq!(
            q.score(FlowId(1), later),
            Some(Dur::from_nanos(((3 * 1500) << 10) - 1_000_000))
        );
    }

    #[test]
    fn the_sanction_needs_both_the_delay_and_the_scaled_score() {
        let mut q = qp();
        let t = Time::from_secs(1);
        // Build a 6.1 ms score (2 x 1500 B x 2048 ns/B) with an empty queue.
        for _ in 0..2 {
            assert!(!q.qprotect(FlowId(1), 1500, t, Dur::ZERO, PROB_ONE));
        }
        // Under CRITICALqL nothing is sanctioned, whatever the score.
        assert!(!q.qprotect(FlowId(1), 1, t, Dur::from_millis(1), 0));
        // Just over it, a score over CRITICALqLSCORE is.
        assert!(q.qprotect(FlowId(1), 1, t, Dur::from_micros(1001), 0));
        // A fresh flow's small score is not, unless the queue is deep enough:
        // 1000 B is 2.048 ms of score, enough once qdelay > 4 ms x 1 ms / 2.048 ms.
        assert!(!q.qprotect(FlowId(2), 1000, t, Dur::from_micros(1500), PROB_ONE));
        assert!(q.qprotect(FlowId(3), 1000, t, Dur::from_micros(1000 + 955), PROB_ONE));
        assert_eq!(q.sanctioned(), 2);
    }

    #[test]
    fn scores_are_capped_at_the_max_score() {
        let mut q = qp();
        let t = Time::from_secs(1);
        for _ in 0..10_000 {
            q.qprotect(FlowId(1), 1500, t, Dur::ZERO, PROB_ONE);
        }
        assert_eq!(q.score(FlowId(1), t), Some(Dur::from_secs(5)));
    }

    #[test]
    fn a_flow_without_a_free_bucket_shares_the_default_one() {
        let cfg = QpConfig {
            bucket_bits: 1,
            attempts: 1,
            ..QpConfig::rfc_defaults(Dur::from_millis(1))
        };
        let mut q = QueueProtection::new(cfg, 3);
        let t = Time::from_secs(1);
        // Flows that hash to the same one of two buckets, all with live scores.
        let same: Vec<u32> = (0..100)
            .filter(|&f| keyed_hash(3, f) & 1 == keyed_hash(3, 0) & 1)
            .take(3)
            .collect();
        for &f in &same {
            q.qprotect(FlowId(f), 1500, t, Dur::ZERO, PROB_ONE);
        }
        assert!(q.score(FlowId(same[0]), t).is_some());
        assert_eq!(q.default_bucket_uses(), 2);
        // Once the first flow's score drains its bucket is recycled.
        let later = t + Dur::from_secs(1);
        q.qprotect(FlowId(same[1]), 1500, later, Dur::ZERO, 0);
        assert_eq!(q.score(FlowId(same[0]), later), None);
        assert_eq!(q.score(FlowId(same[1]), later), Some(Dur::ZERO));
    }
}
