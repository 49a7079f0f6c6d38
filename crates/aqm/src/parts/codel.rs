//! CoDel's control law and dequeue-time state machine, shared by `codel` and
//! `fq_codel` (one instance per flow queue), as Linux keeps them in
//! `include/net/codel.h` and `codel_impl.h` apart from `sch_codel.c` and
//! `sch_fq_codel.c`.
//!
//! CoDel (Nichols & Jacobson; RFC 8289) looks at the sojourn time of each packet
//! it dequeues. Once the sojourn has stayed at or above `target` for a whole
//! `interval`, it enters the dropping state and drops (or CE-marks) one packet,
//! then the next at `interval / sqrt(count)` after the previous one, `count`
//! growing by one per drop, until a packet's sojourn falls below `target`.
//!
//! The arithmetic is Linux's, bit for bit: `1 / sqrt(count)` is kept as a Q0.16
//! fixed-point `rec_inv_sqrt` refined by one integer Newton step per drop
//! ([`newton_step`]), and the next drop time is `t + interval * rec_inv_sqrt`
//! ([`control_law`]). The approximation is coarse at first (after the second drop
//! the spacing is `interval / 2`, not `interval / sqrt 2`) and that coarseness is
//! part of Linux's behaviour, so it is kept. `codel/tests/linux.rs` runs every
//! dequeue beside a line-by-line transcription of Linux's `codel_dequeue`.
//!
//! # Where aqmlab differs from Linux
//! - Time is aqmlab's integer nanoseconds, not Linux's 1024-ns `codel_time_t`:
//!   nothing wraps (Linux's clock wraps every 2199 s and compares serially), and
//!   sojourn times are exact to the nanosecond instead of rounded down to 1.024 us.
//!   The control law is the same formula on the finer unit; on Linux's unit it is
//!   Linux's result exactly (tested).
//! - A packet that arrives already CE-marked is not counted again as a
//!   `ce_threshold` mark (Linux counts it in `ce_mark`), and a packet CE-marked by
//!   the control law in this dequeue is not marked a second time for
//!   `ce_threshold` (as ns-3): a reported mark always changed a packet.
//! - Linux's newest kernels cap the drops of one dequeue at 256; aqmlab does not
//!   (a dequeue ends when the queue empties or the sojourn falls below target).

use crate::drop_reason::DropReason;
use crate::packet::Packet;
use crate::parts::fifo::PacketFifo;
use crate::qdisc::{Ctx, ParamError};
use crate::time::{Dur, Time};

/// Bits of `rec_inv_sqrt` (Linux `REC_INV_SQRT_BITS`).
const REC_INV_SQRT_BITS: u32 = 16;
/// Shift from `rec_inv_sqrt` to a Q0.32 number (Linux `REC_INV_SQRT_SHIFT`).
const REC_INV_SQRT_SHIFT: u32 = 32 - REC_INV_SQRT_BITS;
/// `rec_inv_sqrt` for `count = 1`: 1.0 in Q0.16, as large as it goes.
pub const REC_INV_SQRT_ONE: u16 = u16::MAX;

/// One Newton-Raphson step toward `1 / sqrt(count)`:
/// `x' = x / 2 * (3 - count * x^2)`, with `x` a Q0.16 fixed-point number.
///
/// This is Linux's `codel_Newton_step` (include/net/codel_impl.h) to the bit,
/// including its 64-bit wrap-around when `count * x^2` exceeds 3 (a stale `x`
/// after `count` jumped): the next steps converge again from whatever it gives.
pub fn newton_step(rec_inv_sqrt: u16, count: u32) -> u16 {
    let invsqrt = (rec_inv_sqrt as u32) << REC_INV_SQRT_SHIFT;
    let invsqrt2 = ((invsqrt as u64 * invsqrt as u64) >> 32) as u32;
    let mut val = (3u64 << 32).wrapping_sub(count as u64 * invsqrt2 as u64);
    // Linux shifts first so the multiply below stays within 64 bits.
    val >>= 2;
    val = val.wrapping_mul(invsqrt as u64) >> (32 - 2 + 1);
    (val >> REC_INV_SQRT_SHIFT) as u16
}

/// The next drop time, `t + interval / sqrt(count)` with `1 / sqrt(count)` given
/// as `rec_inv_sqrt` (Linux `codel_control_law` with `reciprocal_scale`). Works in
/// any time unit; for `t` and `interval` below 2^32 it is Linux's result modulo
/// 2^32.
pub fn control_law(t: u64, interval: u64, rec_inv_sqrt: u16) -> u64 {
    let scale = ((rec_inv_sqrt as u32) << REC_INV_SQRT_SHIFT) as u128;
    let step = (interval as u128 * scale) >> 32;
    t.saturating_add(step.min(u64::MAX as u128) as u64)
}

/// What one CoDel instance is configured with (Linux `struct codel_params`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct CodelConfig {
    /// Acceptable standing sojourn time.
    pub target: Dur,
    /// How long the sojourn must stay above `target` before dropping starts, and
    /// the base of the drop spacing.
    pub interval: Dur,
    /// CE-mark ECN-capable packets whose sojourn exceeds this (Linux
    /// `ce_threshold`), independent of `ecn`; `None` = off.
    pub ce_threshold: Option<Dur>,
    /// Never drop while the backlog after the dequeue is at most this many bytes
    /// (Linux `mtu`: one full packet is not a standing queue).
    pub mtu: u64,
    /// CE-mark ECN-capable packets instead of dropping them.
    pub ecn: bool,
}

impl CodelConfig {
    /// Checks `target` and `interval` by name (`interval = 0ns must be positive`,
    /// `target = 200ms must not exceed interval = 100ms`). Linux takes any pair;
    /// a target equal to the interval is legal (tc-testing 630a), one above it is
    /// refused here as the likely swap of the two.
    pub fn validate(&self) -> Result<(), ParamError> {
        if self.interval.is_zero() {
            return Err(ParamError::new(
                "interval",
                self.interval,
                "must be positive",
            ));
        }
        if self.target.is_zero() {
            return Err(ParamError::new("target", self.target, "must be positive"));
        }
        if self.target > self.interval {
            return Err(ParamError::new(
                "target",
                self.target,
                format!("must not exceed interval = {}", self.interval),
            ));
        }
        Ok(())
    }
}

/// CoDel's per-queue state (Linux `struct codel_vars`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct CodelVars {
    /// Drops (and marks) since the dropping state was entered, plus the carried-over
    /// count when it is re-entered soon after leaving it.
    pub count: u32,
    /// `count` when the dropping state was last entered.
    pub lastcount: u32,
    /// In the dropping state.
    pub dropping: bool,
    /// `1 / sqrt(count)` in Q0.16.
    pub rec_inv_sqrt: u16,
    /// When the sojourn will have been above target for a whole interval; `None`
    /// while it is below (Linux uses 0 for that).
    pub first_above_time: Option<Time>,
    /// When the next drop is due (in the dropping state), or when the last was.
    pub drop_next: Time,
    /// Sojourn time of the last packet examined.
    pub ldelay: Dur,
}

/// Counters a CoDel instance keeps beside the drop sink (Linux `codel_stats`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct CodelStats {
    /// Largest packet seen, bytes.
    pub maxpacket: u32,
    /// Packets dropped by the control law.
    pub drop_count: u64,
    /// Packets CE-marked by the control law instead of dropped (Linux `ecn_mark`).
    pub ecn_mark: u64,
    /// Packets CE-marked for a sojourn above `ce_threshold` (Linux `ce_mark`).
    pub ce_mark: u64,
}

/// The queue a CoDel instance controls: where it takes packets from and what
/// backlog the `mtu` rule compares.
pub trait CodelQueue {
    /// Removes the head packet, updating any backlog counters.
    fn pop(&mut self) -> Option<Packet>;
    /// The backlog in bytes the `mtu` rule looks at, after the last `pop` (the
    /// queue's own for `codel`, the whole qdisc's for `fq_codel`, as Linux).
    fn backlog(&self) -> u64;
}

/// A plain FIFO is its own CoDel queue: the `mtu` rule sees its backlog (`codel`).
impl CodelQueue for PacketFifo {
    #[inline]
    fn pop(&mut self) -> Option<Packet> {
        self.pop_front()
    }
    #[inline]
    fn backlog(&self) -> u64 {
        self.bytes()
    }
}

/// Decides whether the sojourn of `pkt` (just taken from the queue) makes it
/// eligible for dropping: above target for at least an interval (Linux
/// `codel_should_drop`).
fn should_drop(
    pkt: Option<&Packet>,
    backlog: u64,
    p: &CodelConfig,
    v: &mut CodelVars,
    s: &mut CodelStats,
    now: Time,
) -> bool {
    let Some(pkt) = pkt else {
        v.first_above_time = None;
        return false;
    };
    v.ldelay = now.saturating_since(pkt.enqueued_at);
    s.maxpacket = s.maxpacket.max(pkt.size);
    if v.ldelay < p.target || backlog <= p.mtu {
        // Went below: stay below for at least an interval before dropping again.
        v.first_above_time = None;
        return false;
    }
    match v.first_above_time {
        None => {
            v.first_above_time = Some(now + p.interval);
            false
        }
        Some(t) => now > t,
    }
}

/// CE-marks `pkt` through the sink (it must be ECN-capable).
fn mark(pkt: Packet, ctx: &mut Ctx<'_>) -> Packet {
    let marked = ctx.mark_or_drop(pkt, true, DropReason::Sojourn);
    debug_assert!(marked.is_some(), "only ECN-capable packets are marked");
    marked.unwrap_or(pkt)
}

/// Takes the next packet CoDel lets through, dropping (reason `sojourn`) or
/// CE-marking on the way as the control law says (Linux `codel_dequeue`).
pub fn dequeue<Q: CodelQueue>(
    q: &mut Q,
    p: &CodelConfig,
    v: &mut CodelVars,
    s: &mut CodelStats,
    ctx: &mut Ctx<'_>,
) -> Option<Packet> {
    let now = ctx.now;
    let mut cur = q.pop();
    if cur.is_none() {
        v.dropping = false;
        return None;
    }
    let interval = p.interval.as_nanos();
    let drop = should_drop(cur.as_ref(), q.backlog(), p, v, s, now);
    let mut marked = false;
    if v.dropping {
        if !drop {
            // Sojourn below target: leave the dropping state.
            v.dropping = false;
        } else if now >= v.drop_next {
            // A large backlog can make several drops due at once, hence the loop.
            while v.dropping && now >= v.drop_next {
                v.count = v.count.wrapping_add(1);
                v.rec_inv_sqrt = newton_step(v.rec_inv_sqrt, v.count);
                let Some(pkt) = cur.take() else { break };
                let next = control_law(v.drop_next.as_nanos(), interval, v.rec_inv_sqrt);
                if p.ecn && pkt.ecn.is_capable() {
                    cur = Some(mark(pkt, ctx));
                    s.ecn_mark += 1;
                    marked = true;
                    v.drop_next = Time::from_nanos(next);
                    break;
                }
                ctx.drop(pkt, DropReason::Sojourn);
                s.drop_count += 1;
                cur = q.pop();
                if should_drop(cur.as_ref(), q.backlog(), p, v, s, now) {
                    v.drop_next = Time::from_nanos(next);
                } else {
                    v.dropping = false;
                }
            }
        }
    } else if drop {
        if let Some(pkt) = cur.take() {
            if p.ecn && pkt.ecn.is_capable() {
                cur = Some(mark(pkt, ctx));
                s.ecn_mark += 1;
                marked = true;
            } else {
                ctx.drop(pkt, DropReason::Sojourn);
                s.drop_count += 1;
                cur = q.pop();
                should_drop(cur.as_ref(), q.backlog(), p, v, s, now);
            }
        }
        v.dropping = true;
        // If the sojourn went above target soon after it last went below, the drop
        // rate that controlled the queue last time is a good place to start.
        let delta = v.count.wrapping_sub(v.lastcount);
        let since_last = now.as_nanos() as i128 - v.drop_next.as_nanos() as i128;
        if delta > 1 && since_last < 16 * interval as i128 {
            v.count = delta;
            // Not exact for the new count; the next steps converge quadratically.
            v.rec_inv_sqrt = newton_step(v.rec_inv_sqrt, v.count);
        } else {
            v.count = 1;
            v.rec_inv_sqrt = REC_INV_SQRT_ONE;
        }
        v.lastcount = v.count;
        v.drop_next = Time::from_nanos(control_law(now.as_nanos(), interval, v.rec_inv_sqrt));
    }
    if let (Some(pkt), Some(threshold)) = (cur.as_mut(), p.ce_threshold) {
        if !marked && v.ldelay > threshold && pkt.ecn.is_ect() {
            *pkt = mark(*pkt, ctx);
            s.ce_mark += 1;
        }
    }
    cur
}

#[cfg(test)]
mod tests {
    use super::*;

    /// FNV-1a, to fold a large grid of results into one number.
    fn fnv(h: &mut u64, v: u64) {
        *h ^= v;
        *h = h.wrapping_mul(1_099_511_628_211);
    }
    const FNV_OFFSET: u64 = 1_469_598_103_934_665_603;

    #[test]
    fn newton_steps_walk_linux_sequence_from_count_one() {
        // rec_inv_sqrt after each drop from count = 1 (0xffff), printed by Linux's
        // codel_Newton_step compiled from include/net/codel_impl.h.
        let linux: [u16; 12] = [
            0x8001, 0x9000, 0x7ce0, 0x7107, 0x6771, 0x600c, 0x59fd, 0x54f2, 0x50a7, 0x4cf3, 0x49b5,
            0x46d8,
        ];
        let mut r = REC_INV_SQRT_ONE;
        for (i, want) in linux.iter().enumerate() {
            r = newton_step(r, i as u32 + 2);
            assert_eq!(r, *want, "count {}", i + 2);
        }
        // It converges to 1/sqrt(count): at count 40 within 1% of the true value.
        for c in 14..=40 {
            r = newton_step(r, c);
        }
        let exact = 65536.0 / 40f64.sqrt();
        assert!((r as f64 - exact).abs() < 0.01 * exact, "{r:#x} vs {exact}");
    }

    #[test]
    fn newton_step_matches_linux_bit_for_bit_over_a_grid() {
        // 1,114,146 (rec_inv_sqrt, count) pairs, including counts large enough to
        // wrap Linux's 64-bit subtraction; the hash is that of the same grid run
        // through the C function.
        let mut h = FNV_OFFSET;
        let mut n = 0u64;
        for rec in (0u32..65536).step_by(3) {
            let mut c: u64 = 1;
            while c < 1 << 31 {
                fnv(&mut h, newton_step(rec as u16, c as u32) as u64);
                n += 1;
                c = c * 3 / 2 + 1;
            }
        }
        assert_eq!(n, 1_114_146);
        assert_eq!(h, 0xbedd_77ba_b9ac_d459);
    }

    #[test]
    fn control_law_matches_linux_on_linux_time_units() {
        let mut h = FNV_OFFSET;
        let mut n = 0u64;
        let mut t: u64 = 0;
        while t < 4_000_000_000 {
            let mut iv: u64 = 1;
            while iv < 4_000_000_000 {
                for rec in (0u32..65536).step_by(257) {
                    // Linux adds in 32 bits; the truncation is its wrap-around.
                    fnv(&mut h, control_law(t, iv, rec as u16) as u32 as u64);
                    n += 1;
                }
                iv = iv * 5 + 3;
            }
            t += 987_654_321;
        }
        assert_eq!(n, 17_920);
        assert_eq!(h, 0xa7d2_9f50_ea2d_e75d);
    }

    /// ns-3 `CoDelQueueDiscNewtonStepTest` (codel-queue-disc-test-suite.cc): the
    /// same spot checks, rec_inv_sqrt 0xff, 0x7f, ... 1 against count 1, 2, ... 128,
    /// with the values Linux's C function gives for them.
    #[test]
    fn ns3_codel_queue_disc_newton_step_test() {
        let linux: [u16; 8] = [382, 190, 94, 46, 22, 10, 4, 1];
        let mut rec: u16 = 0xff;
        for want in linux {
            let mut count = 1u32;
            while count < 0xff {
                assert_eq!(newton_step(rec, count), want, "rec {rec:#x} count {count}");
                count *= 2;
            }
            rec /= 2;
        }
        assert_eq!(rec, 0);
    }

    /// ns-3 `CoDelQueueDiscControlLawTest`: t from 0 to 20 s in 100 ms steps and
    /// rec_inv_sqrt 0xff ... 1, interval 100 ms, all in Linux's 1024-ns unit; the
    /// 1608 results hash to what Linux's codel_control_law gives.
    #[test]
    fn ns3_codel_queue_disc_control_law_test() {
        let to_codel = |ns: u64| ns >> 10;
        let interval = to_codel(Dur::from_millis(100).as_nanos());
        let mut h = FNV_OFFSET;
        let mut n = 0;
        let mut t = 0u64;
        while t <= Dur::from_secs(20).as_nanos() {
            let mut rec: u16 = 0xff;
            while rec > 0 {
                fnv(
                    &mut h,
                    control_law(to_codel(t), interval, rec) as u32 as u64,
                );
                n += 1;
                rec /= 2;
            }
            t += Dur::from_millis(100).as_nanos();
        }
        assert_eq!(n, 1608);
        assert_eq!(h, 0xbb89_89c3_1095_56e7);
        assert_eq!(
            control_law(to_codel(20_000_000_000), interval, 1),
            19_531_251
        );
    }

    #[test]
    fn control_law_spaces_drops_by_interval_over_sqrt_count() {
        let interval = Dur::from_millis(100).as_nanos();
        assert_eq!(control_law(7, interval, REC_INV_SQRT_ONE), 7 + 99_998_474);
        let mut r = REC_INV_SQRT_ONE;
        for c in 2..=200u32 {
            r = newton_step(r, c);
            if c >= 16 {
                let step = control_law(0, interval, r) as f64;
                let exact = interval as f64 / (c as f64).sqrt();
                assert!(
                    (step - exact).abs() < 0.01 * exact,
                    "count {c}: {step} vs {exact}"
                );
            }
        }
    }

    #[test]
    fn parameters_are_checked_by_name() {
        let ok = CodelConfig {
            target: Dur::from_millis(5),
            interval: Dur::from_millis(100),
            ce_threshold: None,
            mtu: 1514,
            ecn: false,
        };
        assert!(ok.validate().is_ok());
        let e = CodelConfig {
            interval: Dur::ZERO,
            ..ok
        };
        assert_eq!(
            e.validate().unwrap_err().to_string(),
            "interval = 0ns must be positive"
        );
        let equal = CodelConfig {
            target: Dur::from_millis(100),
            ..ok
        };
        assert!(equal.validate().is_ok(), "Linux accepts target = interval");
        let e = CodelConfig {
            target: Dur::from_millis(101),
            ..ok
        };
        assert_eq!(
            e.validate().unwrap_err().to_string(),
            "target = 101ms must not exceed interval = 100ms"
        );
    }
}
