//! The Linux profile's window arithmetic, in whole segments as the kernel keeps
//! it: `tcp_slow_start` and `tcp_cong_avoid_ai` (net/ipv4/tcp_cong.c, the
//! `snd_cwnd_cnt` counter), Reno's halving (`tcp_reno_ssthresh`), and CUBIC as
//! `tcp_cubic.c` computes it ([`LinuxCubic`]): its table-and-Newton cube root,
//! time in jiffies scaled to 2^-10 s, the curve aimed at the minimum RTT, `cnt`
//! (ACKs per one-segment increase) in integers, its own TCP-friendly region
//! (`beta_scale`: 8/15 of a segment per window, not RFC 9438's `alpha_cubic`),
//! `beta` 717/1024, fast convergence, and HyStart (ACK trains and delay, the
//! 4-16 ms clamp), not HyStart++.
//!
//! The ns-2 profile's arithmetic (floating point, RFC 9438, HyStart++) stays in
//! `congestion.rs`; docs/tcp.md, "Profiles", says where the two differ.

use aqm::Time;

/// CONFIG_HZ of the kernels the Linux profile is held against (Debian's and
/// Fedora's builds, and the one docs/validation.md names): `tcp_jiffies32`
/// ticks every 4 ms, and CUBIC's epoch and update gate count those ticks.
pub const HZ: u64 = 250;
const NS_PER_JIFFY: u64 = 1_000_000_000 / HZ;
const US_PER_JIFFY: u32 = (1_000_000 / HZ) as u32;

/// `tcp_jiffies32` at `t`.
fn jiffies(t: Time) -> u32 {
    (t.as_nanos() / NS_PER_JIFFY) as u32
}

/// The kernel's microsecond clock (`tcp_mstamp`) at `t`.
fn micros(t: Time) -> u32 {
    (t.as_nanos() / 1_000) as u32
}

/// `usecs_to_jiffies`: rounds up.
fn usecs_to_jiffies(us: u32) -> u64 {
    (us as u64).div_ceil(US_PER_JIFFY as u64)
}

/// A window as the kernel stores it: an infinite ssthresh is `u32::MAX`
/// (the kernel's `TCP_INFINITE_SSTHRESH` plays the same part).
pub fn segments(w: f64) -> u32 {
    if w >= u32::MAX as f64 {
        u32::MAX
    } else {
        w as u32
    }
}

/// `snd_cwnd_cnt`: the ACKed segments counted toward the next increase.
#[derive(Debug, Clone, Default)]
pub struct Segments {
    cwnd_cnt: u32,
}

impl Segments {
    /// `tcp_slow_start`: cwnd grows by the segments ACKed, up to ssthresh; what
    /// is left over goes to congestion avoidance on the same ACK.
    pub fn slow_start(cwnd: &mut u32, ssthresh: u32, acked: u32) -> u32 {
        let grown = cwnd.saturating_add(acked).min(ssthresh);
        let left = acked - (grown - *cwnd);
        *cwnd = grown;
        left
    }

    /// `tcp_cong_avoid_ai`: one segment more per `w` segments ACKed.
    pub fn avoid(&mut self, cwnd: &mut u32, w: u32, acked: u32) {
        let w = w.max(1);
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            *cwnd += 1;
        }
        self.cwnd_cnt += acked;
        if self.cwnd_cnt >= w {
            let delta = self.cwnd_cnt / w;
            self.cwnd_cnt -= delta * w;
            *cwnd += delta;
        }
    }

    /// A reduction clears the count (`tcp_init_cwnd_reduction`, `tcp_enter_loss`).
    pub fn clear(&mut self) {
        self.cwnd_cnt = 0;
    }

    /// Linux Reno's growth on an ACK of `acked` segments (`tcp_reno_cong_avoid`).
    pub fn reno(&mut self, cwnd: u32, ssthresh: u32, acked: u32) -> u32 {
        let mut cwnd = cwnd;
        let mut acked = acked;
        if cwnd < ssthresh {
            acked = Self::slow_start(&mut cwnd, ssthresh, acked);
        }
        if acked > 0 {
            let w = cwnd;
            self.avoid(&mut cwnd, w, acked);
        }
        cwnd
    }
}

/// `tcp_reno_ssthresh`.
pub fn reno_ssthresh(cwnd: u32) -> u32 {
    (cwnd >> 1).max(2)
}

const BETA_SCALE: u32 = 1024;
const BETA: u32 = 717;
const BIC_SCALE: u64 = 41;
/// Time in CUBIC's curve is in units of 2^-10 s.
const BICTCP_HZ: u32 = 10;
const CUBE_RTT_SCALE: u64 = BIC_SCALE * 10;
/// 2^40 / (bic_scale x 10): turns (W_max - cwnd) into K^3 in 2^-30 s^3.
const CUBE_FACTOR: u64 = (1u64 << (10 + 3 * BICTCP_HZ)) / CUBE_RTT_SCALE;
/// The TCP-friendly region's ACKs per segment, scaled by 8: 8 (1 + beta) /
/// (3 (1 - beta)) in the kernel's integer arithmetic, 15.
const FRIENDLY_SCALE: u32 = 8 * (BETA_SCALE + BETA) / 3 / (BETA_SCALE - BETA);

const HYSTART_LOW_WINDOW: u32 = 16;
const HYSTART_ACK_DELTA_US: u32 = 2000;
const HYSTART_MIN_SAMPLES: u8 = 8;
const HYSTART_DELAY_MIN_US: u32 = 4000;
const HYSTART_DELAY_MAX_US: u32 = 16_000;
/// The largest GSO packet the kernel builds (`sk_gso_max_size`), for HyStart's
/// allowance for TSO and GRO delays.
const GSO_MAX_SIZE: u64 = 65_536;

/// `cubic_root`: a table of the cube roots of the top six bits, then one
/// Newton-Raphson step (about 0.2% off), exactly as the kernel rounds it.
pub fn cubic_root(a: u64) -> u32 {
    // cbrt(x << 18) - 1 for x in 0..64, refined by hand in the kernel.
    const V: [u8; 64] = [
        0, 54, 54, 54, 118, 118, 118, 118, 123, 129, 134, 138, 143, 147, 151, 156, 157, 161, 164,
        168, 170, 173, 176, 179, 181, 185, 187, 190, 192, 194, 197, 199, 200, 202, 204, 206, 209,
        211, 213, 215, 217, 219, 221, 222, 224, 225, 227, 229, 231, 232, 234, 236, 237, 239, 240,
        242, 244, 245, 246, 248, 250, 251, 252, 254,
    ];
    let bits = 64 - a.leading_zeros();
    if bits < 7 {
        return (V[a as usize] as u32 + 35) >> 6;
    }
    let b = ((bits * 84) >> 8) - 1;
    let shift = (a >> (b * 3)) as usize;
    let x = ((V[shift] as u32 + 10) << b) >> 6;
    let x = 2 * x as u64 + a / (x as u64 * (x as u64 - 1));
    ((x as u32).wrapping_mul(341)) >> 10
}

/// `struct bictcp`: CUBIC's state as the kernel keeps it.
#[derive(Debug, Clone, Default)]
pub struct LinuxCubic {
    seg: Segments,
    /// ACKs per one-segment increase.
    cnt: u32,
    last_max_cwnd: u32,
    last_cwnd: u32,
    last_time: u32,
    origin_point: u32,
    /// Time from the epoch's start to the origin, 2^-10 s.
    k: u32,
    delay_min_us: u32,
    /// In jiffies; `None` between a reduction and the next ACK in avoidance.
    epoch_start: Option<u32>,
    ack_cnt: u32,
    tcp_cwnd: u32,
    hystart: Option<HyStart>,
}

/// HyStart's round and samples (`round_start`, `end_seq`, `last_ack`,
/// `curr_rtt`, `sample_cnt`, `found`).
#[derive(Debug, Clone, Default)]
struct HyStart {
    found: bool,
    round_start_us: u32,
    end_seq: u32,
    last_ack_us: u32,
    curr_rtt_us: u32,
    sample_cnt: u8,
}

impl HyStart {
    fn reset_round(&mut self, now: Time, snd_nxt: u32) {
        self.round_start_us = micros(now);
        self.last_ack_us = self.round_start_us;
        self.end_seq = snd_nxt;
        self.curr_rtt_us = u32::MAX;
        self.sample_cnt = 0;
    }
}

/// What HyStart sees of the sender on one ACK.
#[derive(Copy, Clone, Debug)]
pub struct Round {
    pub now: Time,
    pub cwnd: u32,
    pub ssthresh: u32,
    pub snd_una: u32,
    pub snd_nxt: u32,
    /// The pacing rate Linux computes in slow start (twice cwnd per srtt),
    /// bytes per second; 0 before an RTT sample.
    pub pacing_rate: f64,
}

impl LinuxCubic {
    pub fn new(hystart: bool) -> Self {
        LinuxCubic {
            hystart: hystart.then(HyStart::default),
            ..Default::default()
        }
    }

    /// Whether HyStart runs (it starts again after a timeout).
    pub fn has_hystart(&self) -> bool {
        self.hystart.is_some()
    }

    /// `bictcp_update`: `cnt` for the window `cwnd` after `acked` more ACKed
    /// segments.
    fn update(&mut self, cwnd: u32, acked: u32, now: Time) {
        let jiffies = jiffies(now);
        self.ack_cnt = self.ack_cnt.wrapping_add(acked);
        if self.last_cwnd == cwnd
            && (jiffies.wrapping_sub(self.last_time) as i32) <= (HZ / 32) as i32
        {
            return;
        }
        // The curve's `cnt` changes at most once a jiffy.
        if !(self.epoch_start.is_some() && jiffies == self.last_time) {
            self.last_cwnd = cwnd;
            self.last_time = jiffies;
            let epoch_start = *self.epoch_start.get_or_insert_with(|| {
                self.ack_cnt = acked;
                self.tcp_cwnd = cwnd;
                if self.last_max_cwnd <= cwnd {
                    self.k = 0;
                    self.origin_point = cwnd;
                } else {
                    let gap = (self.last_max_cwnd - cwnd) as u64;
                    self.k = cubic_root(CUBE_FACTOR.wrapping_mul(gap));
                    self.origin_point = self.last_max_cwnd;
                }
                jiffies
            });
            let elapsed = jiffies.wrapping_sub(epoch_start) as i32 as i64 as u64;
            let t = ((elapsed + usecs_to_jiffies(self.delay_min_us)) << BICTCP_HZ) / HZ;
            let k = self.k as u64;
            let offs = t.abs_diff(k);
            let delta = (CUBE_RTT_SCALE
                .wrapping_mul(offs)
                .wrapping_mul(offs)
                .wrapping_mul(offs)
                >> (10 + 3 * BICTCP_HZ)) as u32;
            let target = if t < k {
                self.origin_point.wrapping_sub(delta)
            } else {
                self.origin_point.wrapping_add(delta)
            };
            self.cnt = if target > cwnd {
                cwnd / (target - cwnd)
            } else {
                100 * cwnd
            };
            // Without a maximum yet, at most 5% more per round trip.
            if self.last_max_cwnd == 0 && self.cnt > 20 {
                self.cnt = 20;
            }
        }
        // The TCP-friendly estimate: one segment per `cwnd x 15 / 8` ACKs.
        let per = (cwnd * FRIENDLY_SCALE) >> 3;
        if per > 0 && self.ack_cnt > per {
            let n = (self.ack_cnt - 1) / per;
            self.ack_cnt -= n * per;
            self.tcp_cwnd += n;
        }
        if self.tcp_cwnd > cwnd {
            let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
            self.cnt = self.cnt.min(max_cnt);
        }
        // At most one segment per two ACKed: 1.5 times per round trip.
        self.cnt = self.cnt.max(2);
    }

    /// `cubictcp_cong_avoid` on an ACK of `acked` segments outside recovery.
    pub fn on_ack(&mut self, cwnd: u32, ssthresh: u32, acked: u32, now: Time) -> u32 {
        let mut cwnd = cwnd;
        let mut acked = acked;
        if cwnd < ssthresh {
            acked = Segments::slow_start(&mut cwnd, ssthresh, acked);
            if acked == 0 {
                return cwnd;
            }
        }
        self.update(cwnd, acked, now);
        let cnt = self.cnt;
        self.seg.avoid(&mut cwnd, cnt, acked);
        cwnd
    }

    /// `cubictcp_recalc_ssthresh`, and on a timeout `cubictcp_state(Loss)`.
    pub fn on_signal(&mut self, cwnd: u32, timeout: bool) -> u32 {
        self.epoch_start = None;
        self.last_max_cwnd = if cwnd < self.last_max_cwnd {
            (cwnd * (BETA_SCALE + BETA)) / (2 * BETA_SCALE)
        } else {
            cwnd
        };
        self.seg.clear();
        let ssthresh = ((cwnd * BETA) / BETA_SCALE).max(2);
        if timeout {
            // bictcp_reset: every curve and HyStart variable, delay_min too.
            *self = LinuxCubic::new(self.hystart.is_some());
        }
        ssthresh
    }

    /// `cubictcp_acked`: an RTT sample (the newest segment this ACK delivered).
    /// Returns the new ssthresh when HyStart ends slow start here.
    pub fn on_rtt(&mut self, rtt: aqm::Dur, r: &Round) -> Option<u32> {
        let now_j = jiffies(r.now);
        // No delay samples in the first second after a reduction.
        if let Some(e) = self.epoch_start {
            if (now_j.wrapping_sub(e) as i32) < HZ as i32 {
                return None;
            }
        }
        let delay = ((rtt.as_nanos() / 1_000) as u32).max(1);
        if self.delay_min_us == 0 || self.delay_min_us > delay {
            self.delay_min_us = delay;
        }
        let delay_min = self.delay_min_us;
        let h = self.hystart.as_mut()?;
        if h.found || r.cwnd >= r.ssthresh {
            return None;
        }
        // hystart_update
        if r.snd_una > h.end_seq {
            h.reset_round(r.now, r.snd_nxt);
        }
        if r.cwnd < HYSTART_LOW_WINDOW {
            return None;
        }
        let now = micros(r.now);
        if now.wrapping_sub(h.last_ack_us) as i32 <= HYSTART_ACK_DELTA_US as i32 {
            h.last_ack_us = now;
            // Unpaced, the train must span half the minimum RTT (plus the
            // allowance for TSO and GRO delays, at most 1 ms).
            let ack_delay = if r.pacing_rate > 0.0 {
                ((GSO_MAX_SIZE * 4 * 1_000_000) as f64 / r.pacing_rate).min(1000.0) as u32
            } else {
                0
            };
            let threshold = (delay_min + ack_delay) >> 1;
            if now.wrapping_sub(h.round_start_us) as i32 > threshold as i32 {
                h.found = true;
                return Some(r.cwnd);
            }
        }
        h.curr_rtt_us = h.curr_rtt_us.min(delay);
        if h.sample_cnt < HYSTART_MIN_SAMPLES {
            h.sample_cnt += 1;
        } else if h.curr_rtt_us
            > delay_min + (delay_min >> 3).clamp(HYSTART_DELAY_MIN_US, HYSTART_DELAY_MAX_US)
        {
            h.found = true;
            return Some(r.cwnd);
        }
        None
    }

    /// Whether HyStart still looks for the end of slow start.
    #[cfg(test)]
    pub fn hystart_active(&self) -> bool {
        self.hystart.as_ref().is_some_and(|h| !h.found)
    }
}

#[cfg(test)]
mod tests;
