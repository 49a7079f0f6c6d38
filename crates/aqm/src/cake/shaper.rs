//! CAKE's deficit-mode shaper and its framing compensation (`sch_cake.c`'s
//! `cake_set_rate`, `cake_calc_overhead` and `cake_advance_shaper`).
//!
//! The shaper keeps no tokens: it schedules. Each packet sent moves the time the
//! next may leave by its adjusted length at the shaped rate, from that scheduled
//! time and not from now, so a late dequeue does not lose capacity and a burst
//! cannot borrow from idle time (the schedule is pulled up to now only when the
//! qdisc is empty). A failsafe schedule at 1.5 times the duration caps how long a
//! drop-heavy ingress shaper, whose drops also move the main schedule, can stall.
//! The rate is Linux's fixed point: nanoseconds per byte scaled by `2^shift`.

use crate::time::Time;

/// How each packet's length is adjusted before it is charged to the shaper.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Framing {
    /// Bytes added to each packet (negative to subtract), -64..=256.
    pub overhead: i32,
    /// The least a packet is charged, 0..=256.
    pub mpu: u32,
    /// ATM cells (48 bytes of payload in 53) or PTM's 64/65 encoding.
    pub cells: Cells,
}

/// The link layer's cell encoding (tc's `atm`, `ptm`, `noatm`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Cells {
    #[default]
    None,
    Atm,
    Ptm,
}

impl Framing {
    /// The bytes the link really carries for a packet of `len` bytes (the
    /// defaults, 0, 0 and no cells, charge `len` itself: Linux's `raw`).
    pub fn adjusted_len(&self, len: u32) -> u32 {
        let mut len = (len as i64 + self.overhead as i64).max(0) as u32;
        len = len.max(self.mpu);
        match self.cells {
            Cells::None => len,
            Cells::Atm => len.div_ceil(48) * 53,
            // One byte per 64 or part of 64: Linux's conservative PTM rule.
            Cells::Ptm => len + len.div_ceil(64),
        }
    }
}

/// A byte rate as Linux holds it: `ns_per_byte_scaled >> shift` ns per byte.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ByteTime {
    pub rate_ns: u64,
    pub shift: u8,
}

impl ByteTime {
    /// `cake_set_rate`'s conversion of `bytes_per_sec` (at least 64).
    pub fn new(bytes_per_sec: u64) -> Self {
        let mut shift = 34u8;
        let mut rate_ns = (1_000_000_000u64 << shift) / bytes_per_sec.max(64);
        while rate_ns >> 34 != 0 {
            rate_ns >>= 1;
            shift -= 1;
        }
        ByteTime { rate_ns, shift }
    }

    /// Nanoseconds to send `len` bytes.
    #[inline]
    pub fn duration(&self, len: u32) -> u64 {
        (len as u64 * self.rate_ns) >> self.shift
    }
}

/// The global shaper's schedule.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Shaper {
    pub rate: ByteTime,
    /// When the next packet may leave.
    pub next: Time,
    /// The failsafe schedule, advanced 1.5 times as fast and never by drops.
    pub failsafe: Time,
}

impl Shaper {
    pub fn new(bytes_per_sec: u64) -> Self {
        Shaper {
            rate: ByteTime::new(bytes_per_sec),
            next: Time::ZERO,
            failsafe: Time::ZERO,
        }
    }

    /// An arrival at an empty qdisc: a schedule in the past restarts from now.
    pub fn restart_if_stale(&mut self, now: Time) {
        if self.next < now {
            self.next = now;
            self.failsafe = now;
        }
    }

    /// `Some(when)` if nothing may leave before `when`.
    pub fn throttled(&self, now: Time) -> Option<Time> {
        (self.next > now && self.failsafe > now).then(|| self.next.min(self.failsafe))
    }

    /// Charges `adjusted` bytes: a packet sent, or (`dropped`) one dropped in
    /// ingress mode, which counts as received for the upstream link.
    pub fn advance(&mut self, adjusted: u32, dropped: bool) {
        let d = self.rate.duration(adjusted);
        self.next = Time::from_nanos(self.next.as_nanos().saturating_add(d));
        if !dropped {
            self.failsafe = Time::from_nanos(self.failsafe.as_nanos().saturating_add(d + (d >> 1)));
        }
    }
}
