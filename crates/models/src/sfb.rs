//! SFB's probability of misclassifying a responsive flow (Feng, Kandlur, Saha &
//! Shin, "Stochastic Fair Blue", INFOCOM 2001, section IV-B, eq. (1) and Fig. 4).
//!
//! SFB hashes every flow into one bin at each of L levels of B bins. A
//! nonresponsive flow drives the marking probability of each of its L bins to 1
//! ("pollutes" them); a responsive flow is misclassified (rate-limited as if
//! nonresponsive) when *all* of its L bins are polluted. With M nonresponsive flows
//! hashed independently and uniformly, a given bin of a level stays clean with
//! probability (1 - 1/B)^M, so
//!
//! ```text
//! p = [1 - (1 - 1/B)^M]^L                                   (1)
//! ```
//!
//! Assumptions: independent uniform hashes per level; every bin a nonresponsive
//! flow touches is polluted (pm = 1); a responsive flow never pollutes a bin by
//! itself. L = 1 is SFB behaving like SFQ with a shared buffer.

use crate::error::ModelError;

/// Eq. (1): the probability that a responsive flow hashes, at every one of
/// `levels` levels of `bins` bins, into a bin polluted by one of `nonresponsive`
/// flows.
///
/// Computed as `(-expm1(M ln(1 - 1/B)))^L`, which keeps full relative precision
/// when M/B is small (where p is tiny and Fig. 4 is read on a log scale).
pub fn sfb_misclassification(
    levels: u32,
    bins: u64,
    nonresponsive: u64,
) -> Result<f64, ModelError> {
    if levels < 1 {
        return Err(ModelError::TooSmall {
            arg: "levels",
            value: levels as u64,
            min: 1,
        });
    }
    if bins < 1 {
        return Err(ModelError::TooSmall {
            arg: "bins",
            value: bins,
            min: 1,
        });
    }
    let polluted = if nonresponsive == 0 {
        0.0
    } else if bins == 1 {
        1.0
    } else {
        // 1 - (1 - 1/B)^M
        -((nonresponsive as f64) * (-1.0 / bins as f64).ln_1p()).exp_m1()
    };
    Ok(polluted.powf(levels as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(l: u32, b: u64, m: u64) -> f64 {
        sfb_misclassification(l, b, m).unwrap()
    }

    #[track_caller]
    fn close(got: f64, want: f64, rel: f64) {
        assert!(
            (got - want).abs() <= rel * want.abs(),
            "got {got}, want {want} (relative tolerance {rel})"
        );
    }

    #[test]
    fn matches_hand_computed_values() {
        // 1 level of 10 bins, 3 flows: 1 - 0.9^3 = 0.271.
        close(p(1, 10, 3), 0.271, 1e-12);
        // 3 levels of 10 bins, 3 flows: 0.271^3 = 0.019902511.
        close(p(3, 10, 3), 0.019_902_511, 1e-12);
        // 2 levels of 4 bins, 2 flows: (1 - (3/4)^2)^2 = (7/16)^2 = 49/256.
        close(p(2, 4, 2), 49.0 / 256.0, 1e-12);
        // One nonresponsive flow: (1/B)^L.
        close(p(2, 23, 1), 1.0 / 529.0, 1e-12);
        close(p(3, 30, 1), 1.0 / 27_000.0, 1e-12);
    }

    #[test]
    fn reproduces_the_percentages_and_flow_counts_of_section_iv_b() {
        // "in an SFB configuration that contains two levels of 23 bins, 2.65% of
        // the TCP flows (11) are misclassified when 4 non-responsive flows are
        // present ... when 8 non-responsive flows are present, 8.96% (36)".
        let (four, eight) = (p(2, 23, 4), p(2, 23, 8));
        assert_eq!((four * 1e4).round() / 1e2, 2.65);
        assert_eq!((eight * 1e4).round() / 1e2, 8.96);
        assert_eq!((four * 400.0).round(), 11.0);
        assert_eq!((eight * 400.0).round(), 36.0);
        // "Using the same number of bins (46), the equation predicts that SFQ and
        // a single-level SFB misclassify ... (34) ... (64)" of the 400 TCP flows.
        assert_eq!((p(1, 46, 4) * 400.0).round(), 34.0);
        assert_eq!((p(1, 46, 8) * 400.0).round(), 64.0);
    }

    #[test]
    fn has_the_shape_of_fig_4() {
        // Fig. 4: the total number of bins is fixed (90 or 900) and split over
        // L = 1, 2, 3 levels.
        for total in [90u64, 900] {
            let curve =
                |l: u32| -> Vec<f64> { (0..=total).map(|m| p(l, total / l as u64, m)).collect() };
            let (l1, l2, l3) = (curve(1), curve(2), curve(3));
            for c in [&l1, &l2, &l3] {
                assert_eq!(c[0], 0.0);
                assert!(c.windows(2).all(|w| w[0] < w[1]), "not increasing in M");
                assert!(c[total as usize] < 1.0);
            }
            // Few nonresponsive flows: more levels, fewer misclassifications.
            for m in 1..=(total / 9) as usize {
                assert!(l3[m] < l2[m] && l2[m] < l1[m], "M = {m} of {total}");
            }
            // "as the number of nonresponsive flows increases past half the number
            // of bins present, the single level SFB queue affords the smallest
            // probability of misclassification".
            for m in (total / 2) as usize..=total as usize {
                assert!(l1[m] < l2[m] && l2[m] < l3[m], "M = {m} of {total}");
            }
        }
    }

    #[test]
    fn edge_cases() {
        assert_eq!(p(1, 1, 1), 1.0);
        assert_eq!(p(4, 1, 0), 0.0);
        assert_eq!(p(3, 100, 0), 0.0);
        // Precise where 1 - (1 - 1/B)^M would cancel: M = 1, B = 1e9.
        close(p(1, 1_000_000_000, 1), 1e-9, 1e-9);
    }

    #[test]
    fn bad_arguments_are_named() {
        let e = sfb_misclassification(2, 0, 4).unwrap_err();
        assert_eq!(e.to_string(), "bins = 0 must be at least 1");
        assert_eq!(e.arg(), "bins");
        let e = sfb_misclassification(0, 23, 4).unwrap_err();
        assert_eq!(e.to_string(), "levels = 0 must be at least 1");
    }
}
