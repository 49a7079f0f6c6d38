use super::*;
use aqm::rng::stream;

fn spec(distribution: Distribution, reorder: bool) -> JitterSpec {
    JitterSpec {
        mean: Dur::from_millis(20),
        jitter: Dur::from_millis(5),
        distribution,
        reorder,
    }
}

#[test]
fn the_tables_are_iproute2s() {
    for d in [
        Distribution::Normal,
        Distribution::Pareto,
        Distribution::ParetoNormal,
    ] {
        let t = d.table().unwrap();
        assert_eq!(t.len(), 4096, "{d:?}");
        assert!(
            t.windows(2).all(|w| w[0] <= w[1]),
            "{d:?}: a quantile function rises"
        );
    }
    // Entries iproute2's generators print (normal.dist, pareto.dist: first and last).
    let normal = Distribution::Normal.table().unwrap();
    assert_eq!(normal[2048], 0, "the median of the normal table");
    assert!(
        (normal[0] as f64 / 8192.0 + 3.9).abs() < 0.15,
        "{}",
        normal[0]
    );
    let pareto = Distribution::Pareto.table().unwrap();
    assert_eq!(
        pareto[0],
        clamp16(-0.5 * 4.0 / 3.0 * 8192.0),
        "u = 1: 1 - 1.5"
    );
    assert_eq!(*pareto.last().unwrap(), 32767, "the tail is clamped");
}

#[test]
fn moments_match_the_distributions() {
    let (m, sd) = Distribution::Normal.moments();
    assert!(m.abs() < 0.01 && (sd - 1.0).abs() < 0.01, "normal {m} {sd}");
    // Pareto(3) scaled by 4/3 has mean 0 and sd 4/3 * sqrt(3/4) = 1.155; the
    // table clamps its tail at 4 units, which leaves a mean of -0.033 and an sd of 0.82.
    let (m, sd) = Distribution::Pareto.moments();
    assert!(
        (m + 0.033).abs() < 0.002 && (sd - 0.82).abs() < 0.01,
        "pareto {m} {sd}"
    );
    let (m, sd) = Distribution::Uniform.moments();
    assert!(m == 0.0 && (sd - 0.57735).abs() < 1e-4);
}

#[test]
fn drawn_delays_have_the_configured_mean_and_spread() {
    let n = 200_000;
    for d in [
        Distribution::Uniform,
        Distribution::Normal,
        Distribution::Pareto,
        Distribution::ParetoNormal,
    ] {
        let s = spec(d, true);
        let mut rng = stream(5, 9);
        let xs: Vec<f64> = (0..n).map(|_| s.draw(&mut rng).as_secs_f64()).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
        let (m, spread) = d.moments();
        let (want_mean, want_sd) = (0.020 + m * 0.005, spread * 0.005);
        assert!(
            (mean - want_mean).abs() < 0.01 * want_mean,
            "{d:?} mean {mean} {want_mean}"
        );
        assert!(
            (sd - want_sd).abs() < 0.03 * want_sd,
            "{d:?} sd {sd} {want_sd}"
        );
    }
}

#[test]
fn without_reorder_no_packet_overtakes_another() {
    for d in [
        Distribution::Uniform,
        Distribution::Normal,
        Distribution::Pareto,
    ] {
        let mut line = Jitter::new(spec(d, false));
        let mut rng = stream(1, 1);
        let mut previous = Time::ZERO;
        for i in 0..10_000u64 {
            let at = line.arrival(Time::from_nanos(i * 100_000), &mut rng);
            assert!(at >= previous, "{d:?}: packet {i} overtook");
            previous = at;
        }
        // With reorder, jitter of 5 ms on packets 0.1 ms apart does reorder.
        let mut line = Jitter::new(spec(d, true));
        let mut rng = stream(1, 1);
        let arrivals: Vec<Time> = (0..1000u64)
            .map(|i| line.arrival(Time::from_nanos(i * 100_000), &mut rng))
            .collect();
        assert!(arrivals.windows(2).any(|w| w[1] < w[0]), "{d:?}");
    }
}

#[test]
fn a_delay_is_never_negative() {
    let s = JitterSpec {
        mean: Dur::from_millis(1),
        jitter: Dur::from_millis(10),
        distribution: Distribution::Normal,
        reorder: true,
    };
    let mut rng = stream(2, 2);
    let zero = (0..10_000).filter(|_| s.draw(&mut rng).is_zero()).count();
    assert!(zero > 0, "a mean below the jitter clips at zero");
}
