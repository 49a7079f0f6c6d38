//! COBALT: CoDel and BLUE Alternate (Høiland-Jørgensen, Täht & Morton, "Piece of
//! CAKE", LANCS 2018, section 4.4), the AQM of each CAKE flow queue, as Linux's
//! `sch_cake.c` runs it.
//!
//! Two controllers share one queue. CoDel's control law acts at dequeue on the
//! sojourn time: once it exceeds `target` the state goes "dropping" and the next
//! signal is scheduled `interval / sqrt(count)` later (the first one `interval`
//! after, since the inverse square roots of 0 and 1 are both held as the largest
//! fixed-point value). Unlike reference CoDel, `count` is not reset when the
//! dropping state ends: it *decays*, one step per scheduled signal time that
//! passes without one, so a flow that keeps coming back resumes near its old rate.
//! BLUE catches what CoDel cannot: a flow that does not slow down. Each overflow
//! drop from the queue ([`CobaltVars::queue_full`]) raises its drop probability
//! `p_drop` by `p_inc`, each time the queue is found empty
//! ([`CobaltVars::queue_empty`]) lowers it by `p_dec`, each at most once per
//! `target`; every dequeued packet not already dropped is dropped with
//! probability `p_drop` (never marked: an unresponsive flow ignores marks too).
//!
//! Linux's arithmetic is kept: `rec_inv_sqrt` is a Q0.32 fraction refined by the
//! same Newton step, the first 16 taken from a cache built by four steps each,
//! `p_drop` a Q0.32 probability compared with a uniform `u32`, and the signal time
//! `t + (interval * rec_inv_sqrt) >> 32` (`reciprocal_scale`). Times are
//! nanoseconds, as Linux's `ktime_t`. `cobalt/tests.rs` checks all of it against
//! an independent transcription of Linux's functions.

use crate::time::Time;

/// `REC_INV_SQRT_CACHE` in Linux: counts below this take their 1/sqrt from a table.
const CACHE: usize = 16;

/// One Newton step of `rec_inv_sqrt` toward 1/sqrt(count) in Q0.32.
const fn newton_step(rec_inv_sqrt: u32, count: u32) -> u32 {
    let inv = rec_inv_sqrt as u64;
    let inv2 = (inv * inv) >> 32;
    let mut val = (3u64 << 32).wrapping_sub(count as u64 * inv2);
    // Shifted first so that the product below cannot overflow 64 bits.
    val >>= 2;
    val = val.wrapping_mul(inv) >> (32 - 2 + 1);
    val as u32
}

/// 1/sqrt(count) for count < 16, each from the previous entry by four Newton
/// steps, entry 0 being the largest value (as `cobalt_cache_init`).
const INV_SQRT_CACHE: [u32; CACHE] = {
    let mut cache = [0u32; CACHE];
    cache[0] = u32::MAX;
    let mut rec = u32::MAX;
    let mut count = 1;
    while count < CACHE {
        let mut i = 0;
        while i < 4 {
            rec = newton_step(rec, count as u32);
            i += 1;
        }
        cache[count] = rec;
        count += 1;
    }
    cache
};

/// The constants of one COBALT instance (CAKE derives them per tin from its rate).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct CobaltParams {
    /// CoDel's interval, ns.
    pub interval: u64,
    /// CoDel's target sojourn, ns; also BLUE's freeze time.
    pub target: u64,
    /// Time to send one MTU at the shaped rate, ns (0 when unshaped): a sojourn of
    /// four of them, or two per bulk flow in ingress mode, is not yet a queue.
    pub mtu_time: u64,
    /// BLUE's increment, Q0.32 (Linux: 1/256).
    pub p_inc: u32,
    /// BLUE's decrement, Q0.32 (Linux: 1/4096).
    pub p_dec: u32,
}

impl CobaltParams {
    /// Linux's BLUE steps: `p_inc = 2^24` (1/256), `p_dec = 2^20` (1/4096).
    pub const P_INC: u32 = 1 << 24;
    pub const P_DEC: u32 = 1 << 20;
}

/// What COBALT decided for a dequeued packet.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Signal {
    /// Deliver it unchanged.
    Pass,
    /// CoDel's signal on an ECN-capable packet: CE-mark and deliver it.
    Mark,
    /// CoDel's signal on a packet that cannot be marked: drop it.
    Drop,
    /// BLUE's drop of a packet CoDel let pass (or marked).
    Blue,
}

/// One queue's COBALT state.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct CobaltVars {
    /// CoDel's signal count; decays rather than resets.
    pub count: u32,
    /// 1/sqrt(count) in Q0.32.
    pub rec_inv_sqrt: u32,
    /// The next CoDel signal (while dropping), or an activity timeout, ns.
    pub drop_next: i64,
    /// When BLUE's probability last changed, ns.
    pub blue_timer: i64,
    /// BLUE's drop probability, Q0.32.
    pub p_drop: u32,
    /// Whether the sojourn was over target at the last look.
    pub dropping: bool,
}

impl Default for CobaltVars {
    fn default() -> Self {
        CobaltVars {
            count: 0,
            rec_inv_sqrt: INV_SQRT_CACHE[0],
            drop_next: 0,
            blue_timer: 0,
            p_drop: 0,
            dropping: false,
        }
    }
}

#[inline]
fn ns(t: Time) -> i64 {
    t.as_nanos() as i64
}

/// `t + (interval * rec_inv_sqrt) >> 32`.
#[inline]
fn control(t: i64, interval: u64, rec_inv_sqrt: u32) -> i64 {
    t.wrapping_add(((interval as u128 * rec_inv_sqrt as u128) >> 32) as i64)
}

impl CobaltVars {
    /// BLUE's drop probability as a fraction.
    pub fn p_drop(&self) -> f64 {
        self.p_drop as f64 / (1u64 << 32) as f64
    }

    /// Whether the state has decayed to rest: no BLUE probability, no count and
    /// the activity timeout passed (CAKE keeps the queue scheduled until then).
    pub fn at_rest(&self, now: Time) -> bool {
        self.p_drop == 0 && self.count == 0 && ns(now) >= self.drop_next
    }

    fn invsqrt(&mut self) {
        self.rec_inv_sqrt = if (self.count as usize) < CACHE {
            INV_SQRT_CACHE[self.count as usize]
        } else {
            newton_step(self.rec_inv_sqrt, self.count)
        };
    }

    /// The queue overflowed and lost a packet: raise BLUE's probability (once per
    /// `target`) and make CoDel signal at once. True when BLUE went from idle to
    /// active (the flow is now counted unresponsive).
    pub fn queue_full(&mut self, p: &CobaltParams, now: Time) -> bool {
        let now = ns(now);
        let mut up = false;
        if now.wrapping_sub(self.blue_timer) > p.target as i64 {
            up = self.p_drop == 0;
            self.p_drop = self.p_drop.saturating_add(p.p_inc);
            self.blue_timer = now;
        }
        self.dropping = true;
        self.drop_next = now;
        if self.count == 0 {
            self.count = 1;
        }
        up
    }

    /// The queue was served and found empty: lower BLUE's probability (once per
    /// `target`), leave the dropping state and decay `count` if a signal was due.
    /// True when BLUE went from active to idle.
    pub fn queue_empty(&mut self, p: &CobaltParams, now: Time) -> bool {
        let now = ns(now);
        let mut down = false;
        if self.p_drop != 0 && now.wrapping_sub(self.blue_timer) > p.target as i64 {
            self.p_drop = self.p_drop.saturating_sub(p.p_dec);
            self.blue_timer = now;
            down = self.p_drop == 0;
        }
        self.dropping = false;
        if self.count != 0 && now.wrapping_sub(self.drop_next) >= 0 {
            self.count -= 1;
            self.invsqrt();
            self.drop_next = control(self.drop_next, p.interval, self.rec_inv_sqrt);
        }
        down
    }

    /// Judges a packet just dequeued after `sojourn` ns in the queue. `bulk_flows`
    /// scales the sojourn that counts as a queue (CAKE passes its bulk flows in
    /// ingress mode, else 0); `ect` says whether the packet can be CE-marked;
    /// `draw` is a uniform `u32` for BLUE.
    pub fn should_drop(
        &mut self,
        p: &CobaltParams,
        now: Time,
        sojourn: u64,
        bulk_flows: u32,
        ect: bool,
        draw: u32,
    ) -> Signal {
        let now = ns(now);
        let mut schedule = now.wrapping_sub(self.drop_next);
        let over_target = sojourn > p.target
            && sojourn > p.mtu_time.saturating_mul(bulk_flows as u64 * 2)
            && sojourn > p.mtu_time.saturating_mul(4);
        let mut next_due = self.count != 0 && schedule >= 0;
        if over_target {
            if !self.dropping {
                self.dropping = true;
                self.drop_next = control(now, p.interval, self.rec_inv_sqrt);
            }
            if self.count == 0 {
                self.count = 1;
            }
        } else if self.dropping {
            self.dropping = false;
        }
        let mut signal = Signal::Pass;
        if next_due && self.dropping {
            signal = if ect { Signal::Mark } else { Signal::Drop };
            self.count = self.count.saturating_add(1);
            self.invsqrt();
            self.drop_next = control(self.drop_next, p.interval, self.rec_inv_sqrt);
            schedule = now.wrapping_sub(self.drop_next);
        } else {
            // Signals that fell due while nothing called for them decay the count.
            while next_due {
                self.count -= 1;
                self.invsqrt();
                self.drop_next = control(self.drop_next, p.interval, self.rec_inv_sqrt);
                schedule = now.wrapping_sub(self.drop_next);
                next_due = self.count != 0 && schedule >= 0;
            }
        }
        if self.p_drop != 0 && signal != Signal::Drop && draw < self.p_drop {
            signal = Signal::Blue;
        }
        // drop_next doubles as an activity timeout once the count is spent.
        if self.count == 0 {
            self.drop_next = now.wrapping_add(p.interval as i64);
        } else if schedule > 0 && matches!(signal, Signal::Pass | Signal::Mark) {
            self.drop_next = now;
        }
        signal
    }
}

#[cfg(test)]
mod tests;
