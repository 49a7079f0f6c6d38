//! A token bucket in bytes, refilled at a rate in bits per second: SFB's penalty
//! box for flows at `pmin = 1` (Linux `sch_sfb.c`'s `penalty_rate` and
//! `penalty_burst`). It starts full.

use crate::time::Time;
use crate::units::Rate;

#[derive(Clone, Debug)]
pub struct TokenBucket {
    bytes_per_sec: f64,
    burst: f64,
    tokens: f64,
    last: Time,
}

impl TokenBucket {
    /// A full bucket of `burst` bytes refilled at `rate`.
    pub fn new(rate: Rate, burst: u64) -> Self {
        TokenBucket {
            bytes_per_sec: rate.as_f64() / 8.0,
            burst: burst as f64,
            tokens: burst as f64,
            last: Time::ZERO,
        }
    }

    /// Takes `bytes` tokens if there are that many at `now`.
    #[inline]
    pub fn take(&mut self, bytes: u32, now: Time) -> bool {
        let elapsed = now.saturating_since(self.last).as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.bytes_per_sec).min(self.burst);
        self.last = now;
        if self.tokens >= bytes as f64 {
            self.tokens -= bytes as f64;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_bucket_passes_its_burst_then_the_rate() {
        // 8 kbps = 1000 bytes/s, burst 2000 bytes, 1000-byte packets.
        let mut b = TokenBucket::new(Rate::from_kbps(8), 2000);
        let at = |ms: u64| Time::from_nanos(ms * 1_000_000);
        assert!(b.take(1000, at(0)) && b.take(1000, at(0)));
        assert!(!b.take(1000, at(500)), "half a packet's worth of tokens");
        assert!(b.take(1000, at(1000)));
        assert!(!b.take(1000, at(1000)));
        // A long pause refills only up to the burst.
        assert!(b.take(1000, at(60_000)) && b.take(1000, at(60_000)));
        assert!(!b.take(1000, at(60_000)));
    }
}
