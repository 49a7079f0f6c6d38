//! The part of RED that the RED-based qdiscs (CHOKe, BREATHe, SFRED over MRUL,
//! NLRED) share and that [`crate::red`] does not already export: checking the
//! common parameters by name, and RED's count-spaced early-drop decision.
//!
//! The average itself is [`RedAverage`](crate::red::RedAverage), the curve
//! [`red_region`](crate::red::red_region) and the spacing
//! [`spaced_probability`]; this file only bundles
//! the `count` bookkeeping around them so that each qdisc does exactly what
//! [`Red`](crate::red::Red) does with it.

use crate::qdisc::{check, ParamError};
use crate::red::spaced_probability;

/// Validates the parameters every RED-based qdisc has, with RED's rules and
/// messages (`min_th = 200 must be below max_th = 100`).
pub fn validate_red_core(
    limit: u32,
    min_th: f64,
    max_th: f64,
    max_p: f64,
    w_q: f64,
    mean_pkt_size: u32,
) -> Result<(), ParamError> {
    check::at_least("limit", limit, 1)?;
    check::at_least("min_th", min_th, 0.0)?;
    check::below("min_th", min_th, "max_th", max_th)?;
    if !(max_p > 0.0 && max_p <= 1.0) {
        return Err(ParamError::new("max_p", max_p, "must be in (0, 1]"));
    }
    if !(w_q > 0.0 && w_q <= 1.0) {
        return Err(ParamError::new("w_q", w_q, "must be in (0, 1]"));
    }
    check::at_least("mean_pkt_size", mean_pkt_size, 1)
}

/// RED's `count`: arrivals since the last early drop, -1 while the average is
/// below `min_th` (Floyd & Jacobson 1993, as [`Red`](crate::red::Red) keeps it).
#[derive(Debug, Clone)]
pub struct RedCount {
    count: i64,
}

impl Default for RedCount {
    fn default() -> Self {
        RedCount { count: -1 }
    }
}

impl RedCount {
    /// The average is below `min_th`.
    #[inline]
    pub fn below(&mut self) {
        self.count = -1;
    }

    /// A forced (or otherwise certain) drop restarts the spacing.
    #[inline]
    pub fn forced(&mut self) {
        self.count = 0;
    }

    /// One arrival in the early region with base probability `p_b`; `u` is a
    /// uniform draw in [0, 1). Returns whether RED drops (or marks) it.
    #[inline]
    pub fn early(&mut self, p_b: f64, wait: bool, u: f64) -> bool {
        self.count += 1;
        if u < spaced_probability(p_b, self.count, wait) {
            self.count = 0;
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
    fn count_spacing_without_wait_drops_within_one_over_p() {
        // p_b = 0.25 without wait: the fourth arrival after a drop is dropped surely.
        let mut c = RedCount::default();
        let drops: Vec<bool> = (0..4).map(|_| c.early(0.25, false, 0.999)).collect();
        assert_eq!(drops, vec![false, false, false, true]);
    }

    #[test]
    fn core_parameters_are_checked_by_name() {
        let e = validate_red_core(10, 5.0, 5.0, 0.1, 0.002, 500).unwrap_err();
        assert_eq!(e.to_string(), "min_th = 5 must be below max_th = 5");
        let e = validate_red_core(10, 1.0, 5.0, 0.0, 0.002, 500).unwrap_err();
        assert_eq!(e.key, "max_p");
    }
}
