use super::*;
use crate::link_model::DeliveryTrace;
use aqm::{Dur, Time};

/// The shipped files are the generator's output (AQMLAB_UPDATE_TRACES=1 rewrites them).
#[test]
fn shipped_traces_are_the_generators_output() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../traces");
    for (name, _, params) in BUILTIN {
        let text = params.generate();
        let path = dir.join(format!("{name}.up"));
        if std::env::var_os("AQMLAB_UPDATE_TRACES").is_some() {
            std::fs::write(&path, &text).unwrap();
            continue; // the binary carries the old file until it is rebuilt
        }
        assert!(
            builtin(name) == Some(text.as_str()),
            "traces/{name}.up is not the generator's output: run with AQMLAB_UPDATE_TRACES=1"
        );
        let trace = DeliveryTrace::parse(&text).unwrap();
        assert_eq!(trace.period(), Dur::from_millis(params.period_ms));
    }
}

/// Over a long trace, the mean rate is the states' rates weighted by their mean stays.
#[test]
fn the_mean_rate_is_the_models() {
    let params = TwoState {
        period_ms: 2_000_000,
        seed: 9,
        ..BUILTIN[0].2
    };
    let trace = DeliveryTrace::parse(&params.generate()).unwrap();
    let (g, f) = (params.good, params.fade);
    let want = (g.rate.as_f64() * g.mean_stay_ms + f.rate.as_f64() * f.mean_stay_ms)
        / (g.mean_stay_ms + f.mean_stay_ms);
    let got = trace.mean_rate().as_f64();
    assert!((got - want).abs() < 0.05 * want, "{got} vs {want}");
    // Fades happen: some second carries less than a third of the good rate.
    let slow = (0..2000u64)
        .filter(|&s| {
            let from = Time::from_secs(s);
            let bits = trace.count(from, from + Dur::from_secs(1)) * 1500 * 8;
            (bits as f64) < g.rate.as_f64() / 3.0
        })
        .count();
    assert!(slow > 100, "{slow} slow seconds");
}
