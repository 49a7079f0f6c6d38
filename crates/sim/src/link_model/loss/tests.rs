use super::*;
use aqm::rng::stream;

/// The measured loss rate and mean burst of `n` packets.
fn measure(spec: LossSpec, n: usize, seed: u64) -> (f64, f64) {
    let mut loss = Loss::new(spec);
    let mut rng = stream(seed, 7);
    let (mut lost, mut bursts, mut previous) = (0usize, 0usize, false);
    for _ in 0..n {
        let l = loss.lose(&mut rng);
        lost += l as usize;
        bursts += (l && !previous) as usize;
        previous = l;
    }
    (lost as f64 / n as f64, lost as f64 / bursts.max(1) as f64)
}

#[test]
fn bernoulli_loss_falls_in_the_binomial_interval_over_many_seeds() {
    let (p, n) = (0.01, 20_000usize);
    // 99% interval of a binomial proportion; over 200 seeds about 2 may fall out.
    let half = 2.576 * (p * (1.0 - p) / n as f64).sqrt();
    let outside = (1..=200)
        .filter(|&s| (measure(LossSpec::Bernoulli { p }, n, s).0 - p).abs() > half)
        .count();
    assert!(
        outside <= 8,
        "{outside} of 200 seeds outside the 99% interval"
    );
}

#[test]
fn gilbert_elliott_matches_its_closed_forms() {
    let cases = [
        LossSpec::gemodel(0.01, Some(0.3), None, None), // simple Gilbert: bursts of 1/r
        LossSpec::gemodel(0.05, Some(0.2), Some(0.7), Some(0.01)),
        LossSpec::gemodel(0.02, None, Some(0.5), None),
    ];
    for spec in cases {
        let (rate, burst) = measure(spec, 2_000_000, 3);
        let (want_rate, want_burst) = (spec.loss_rate(), spec.mean_burst());
        assert!(
            (rate - want_rate).abs() < 0.03 * want_rate,
            "{spec:?}: loss rate {rate} against {want_rate}"
        );
        assert!(
            (burst - want_burst).abs() < 0.03 * want_burst,
            "{spec:?}: mean burst {burst} against {want_burst}"
        );
    }
    // The simple Gilbert model's closed forms, by hand: p/(p+r) and 1/r.
    let simple = LossSpec::gemodel(0.01, Some(0.3), None, None);
    assert!((simple.loss_rate() - 0.01 / 0.31).abs() < 1e-12);
    assert!((simple.mean_burst() - 1.0 / 0.3).abs() < 1e-9);
}

#[test]
fn netem_defaults_fill_what_the_line_leaves_out() {
    assert_eq!(
        LossSpec::gemodel(0.1, None, None, None),
        LossSpec::GilbertElliott {
            p: 0.1,
            r: 0.9,
            loss_bad: 1.0,
            loss_good: 0.0
        }
    );
    assert!(LossSpec::gemodel(1.5, None, None, None).check().is_err());
    assert!(LossSpec::Bernoulli { p: -0.1 }
        .check()
        .unwrap_err()
        .contains("loss"));
}

#[test]
fn the_same_stream_gives_the_same_losses() {
    let spec = LossSpec::gemodel(0.05, Some(0.2), Some(0.7), Some(0.01));
    let draw = || {
        let mut l = Loss::new(spec);
        let mut rng = stream(11, 3);
        (0..1000).map(|_| l.lose(&mut rng)).collect::<Vec<_>>()
    };
    assert_eq!(draw(), draw());
}
