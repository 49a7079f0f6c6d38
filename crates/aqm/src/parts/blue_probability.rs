//! BLUE's probability step (Feng, Kandlur, Saha & Shin, CSE-TR-387-99; the SFB
//! paper, seed 000 section II): a marking probability raised by a step on
//! overflow and lowered by a step when the queue (or an SFB bin) empties, each
//! change at most once per freeze time. The state of a BLUE queue and of every
//! SFB bin.

use crate::qdisc::ParamError;
use crate::time::{Dur, Time};

/// A BLUE step (`increment`, `decrement`) must be in (0, 1].
pub fn check_step(key: &'static str, v: f64) -> Result<(), ParamError> {
    if v > 0.0 && v <= 1.0 {
        Ok(())
    } else {
        Err(ParamError::new(key, v, "must be in (0, 1]"))
    }
}

/// A BLUE probability with its freeze clock.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct BlueProbability {
    /// The marking probability, in [0, 1].
    pub p: f64,
    /// The earliest time `p` may change again.
    next_update: Time,
}

impl Default for BlueProbability {
    fn default() -> Self {
        BlueProbability {
            p: 0.0,
            next_update: Time::ZERO,
        }
    }
}

impl BlueProbability {
    /// Raises `p` by `step` unless it changed less than `freeze` ago. Returns
    /// whether it changed.
    #[inline]
    pub fn raise(&mut self, step: f64, now: Time, freeze: Dur) -> bool {
        if now < self.next_update {
            return false;
        }
        // Snap to 1 so that 1/step increments reach exactly 1 despite rounding.
        let p = self.p + step;
        self.p = if p > 1.0 - 1e-9 { 1.0 } else { p };
        self.next_update = now + freeze;
        true
    }

    /// Lowers `p` by `step` unless it changed less than `freeze` ago.
    #[inline]
    pub fn lower(&mut self, step: f64, now: Time, freeze: Dur) -> bool {
        if now < self.next_update {
            return false;
        }
        let p = self.p - step;
        self.p = if p < 1e-12 { 0.0 } else { p };
        self.next_update = now + freeze;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_snap_to_the_ends_and_respect_the_freeze_time() {
        let mut b = BlueProbability::default();
        let freeze = Dur::from_millis(100);
        for i in 0..400 {
            assert!(b.raise(0.0025, Time::from_nanos(i * 100_000_000), freeze));
        }
        assert_eq!(b.p, 1.0, "400 steps of 0.0025 reach exactly 1");
        assert!(!b.lower(0.5, Time::from_nanos(39_950_000_000), freeze));
        assert!(b.lower(0.5, Time::from_secs(40), freeze));
        assert!(b.lower(0.5, Time::from_nanos(40_100_000_000), freeze));
        assert_eq!(b.p, 0.0);
        assert_eq!(check_step("increment", 0.0).unwrap_err().key, "increment");
    }
}
