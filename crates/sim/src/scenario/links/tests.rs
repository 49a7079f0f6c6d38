//! The link keys: what each spelling means, and that every bad value is an error
//! naming its key and its line.

use super::*;
use crate::link_model::DeliveryTrace;

/// A dumbbell whose bottleneck table is `bottleneck` (its keys from line 7).
fn dumbbell(bottleneck: &str) -> String {
    format!(
        "name = \"l\"\nduration = \"10s\"\n[topology]\nkind = \"dumbbell\"\n\
         access = {{ rate = \"100Mbps\", delay = \"1ms\" }}\n\
         [topology.bottleneck]\n{bottleneck}\n\
         [[flows]]\nname = \"a\"\nkind = \"tcp\"\n"
    )
}

fn parse(bottleneck: &str) -> Result<Scenario, ScenarioError> {
    Scenario::from_toml(&dumbbell(bottleneck), "s.toml")
}

/// The bottleneck's two directions.
fn directions(bottleneck: &str) -> (Direction, Direction) {
    let s = parse(bottleneck).unwrap_or_else(|e| panic!("{bottleneck}: {e}"));
    let (_, fwd, rev) = s.links().unwrap().swap_remove(0);
    (fwd, rev)
}

/// The error, which must be at `line`.
#[track_caller]
fn err_at(bottleneck: &str, line: usize) -> String {
    let e = parse(bottleneck).expect_err(bottleneck);
    assert_eq!(e.line, Some(line), "{e}");
    e.to_string()
}

#[test]
fn a_constant_link_is_plain_both_ways() {
    let (fwd, rev) = directions("rate = \"10Mbps\"\ndelay = \"5ms\"");
    assert!(fwd.is_plain() && rev.is_plain());
    assert_eq!(fwd, rev);
    assert_eq!(fwd.nominal_rate(), Rate::from_mbps(10));
    assert_eq!(fwd.delay, Dur::from_millis(5));
}

#[test]
fn a_schedule_uses_the_udp_flows_spelling_and_each_direction_may_have_its_own() {
    let (fwd, rev) = directions(
        "rate = { schedule = [{ at = \"0s\", rate = \"10Mbps\" }, { at = \"5s\", rate = \"2Mbps\" }] }\n\
         delay = \"5ms\"\nreverse_rate = \"1Mbps\"",
    );
    let LinkRate::Schedule(s) = &fwd.rate else {
        panic!("{fwd:?}")
    };
    assert_eq!(s.rate_at(Time::from_secs(6)), Rate::from_mbps(2));
    assert_eq!(fwd.nominal_rate(), Rate::from_mbps(10));
    assert_eq!(rev.rate, LinkRate::Constant(Rate::from_mbps(1)));
    assert_eq!(rev.delay, fwd.delay, "the delay both ways");
}

#[test]
fn a_trace_is_a_shipped_name_or_a_file_beside_the_scenario() {
    let (fwd, rev) = directions("rate = { trace = \"lte-driving\" }\ndelay = \"5ms\"");
    let want = DeliveryTrace::parse(synthetic::builtin("lte-driving").unwrap()).unwrap();
    assert_eq!(fwd.rate, LinkRate::Trace(Arc::new(want.clone())));
    // The trace shapes the forward direction only: the ACKs' way runs at its
    // mean rate, unless a reverse key asks for the trace there too.
    assert_eq!(rev.rate, LinkRate::Constant(want.mean_rate()));
    let (_, rev) = directions(
        "rate = { trace = \"lte-driving\" }\ndelay = \"5ms\"\nreverse_rate = { trace = \"lte-driving\" }",
    );
    assert_eq!(rev.rate, LinkRate::Trace(Arc::new(want.clone())));
    assert_eq!(fwd.nominal_rate(), want.mean_rate());
    assert_eq!(fwd.table_bytes(), 8 * want.len() as u64);
    // A file, relative to the scenario's directory.
    let dir = std::env::temp_dir().join(format!("aqmlab-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("t.up"), "1\n1\n2\n").unwrap();
    let file = dir.join("s.toml");
    std::fs::write(
        &file,
        dumbbell("rate = { trace = \"t.up\" }\ndelay = \"5ms\""),
    )
    .unwrap();
    let s = Scenario::from_path(&file).unwrap();
    let (_, fwd, _) = s.links().unwrap().swap_remove(0);
    assert_eq!(
        fwd.rate,
        LinkRate::Trace(Arc::new(DeliveryTrace::parse("1\n1\n2").unwrap()))
    );
    // A bad trace line is named, at the key's line.
    std::fs::write(dir.join("t.up"), "1\nx\n").unwrap();
    let e = Scenario::from_path(&file).unwrap_err();
    assert_eq!(e.line, Some(7), "{e}");
    assert!(e.to_string().contains("line 2"), "{e}");
    // Any file may be named: what it holds is never shown, its name and line are.
    std::fs::write(dir.join("t.up"), "1\nroot:$6$salt$hash:19000::\x1b[2J\n").unwrap();
    let e = Scenario::from_path(&file).unwrap_err().to_string();
    assert!(e.contains("t.up") && e.contains("line 2"), "{e}");
    assert!(
        !e.contains("root") && !e.contains("hash") && !e.contains('\x1b'),
        "{e}"
    );
    std::fs::remove_file(dir.join("t.up")).unwrap();
    let e = err_at("rate = { trace = \"no-such.up\" }\ndelay = \"5ms\"", 7);
    assert!(
        e.contains("topology.bottleneck.rate") && e.contains("lte-driving"),
        "{e}"
    );
    // The trace's own path, and that it is the trace file that is missing.
    assert!(
        e.contains("trace \"no-such.up\" (no-such.up): cannot read trace file: "),
        "{e}"
    );
    assert!(!e.contains("scenario file"), "{e}");
    // Beside a scenario file, the path is where it was looked for.
    let e = Scenario::from_path(&file).unwrap_err().to_string();
    let beside = dir.join("t.up");
    assert!(
        e.starts_with(&format!("{}:7: ", file.display()))
            && e.contains(&format!("({}): cannot read trace file", beside.display())),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn loss_is_bernoulli_or_gemodel_with_netems_defaults_on_the_forward_direction() {
    let (fwd, rev) = directions("rate = \"10Mbps\"\ndelay = \"5ms\"\nloss = 0.01");
    assert_eq!(fwd.loss, Some(LossSpec::Bernoulli { p: 0.01 }));
    assert_eq!(rev.loss, None, "loss is the forward direction's, as qdisc");
    assert!(!fwd.is_plain() && rev.is_plain());
    let (fwd, rev) = directions(
        "rate = \"10Mbps\"\ndelay = \"5ms\"\nloss = { gemodel = [0.01] }\nreverse_loss = 0.5",
    );
    assert_eq!(fwd.loss, Some(LossSpec::gemodel(0.01, None, None, None)));
    assert_eq!(rev.loss, Some(LossSpec::Bernoulli { p: 0.5 }));
    let (fwd, _) = directions(
        "rate = \"10Mbps\"\ndelay = \"5ms\"\nloss = { gemodel = [0.01, 0.3, 0.7, 0.001] }",
    );
    assert_eq!(
        fwd.loss,
        Some(LossSpec::GilbertElliott {
            p: 0.01,
            r: 0.3,
            loss_bad: 0.7,
            loss_good: 0.001
        })
    );
}

#[test]
fn jitter_is_a_delay_table_with_netems_default_distribution() {
    let (fwd, rev) = directions("rate = \"10Mbps\"\ndelay = { mean = \"20ms\", jitter = \"5ms\" }");
    let want = JitterSpec {
        mean: Dur::from_millis(20),
        jitter: Dur::from_millis(5),
        distribution: Distribution::Uniform,
        reorder: false,
    };
    assert_eq!((fwd.delay, fwd.jitter), (Dur::from_millis(20), Some(want)));
    assert_eq!(rev.jitter, Some(want), "the delay both ways");
    let (fwd, _) = directions(
        "rate = \"10Mbps\"\ndelay = { mean = \"20ms\", jitter = \"5ms\", distribution = \"pareto\", reorder = true }",
    );
    let j = fwd.jitter.unwrap();
    assert!(j.reorder && j.distribution == Distribution::Pareto);
    let (fwd, _) = directions("rate = \"10Mbps\"\ndelay = { mean = \"20ms\" }");
    assert!(fwd.is_plain(), "no jitter: a constant delay");
}

#[test]
fn a_netem_line_stands_for_the_keys_it_sets() {
    let (fwd, rev) = directions(
        "netem = \"tc qdisc add dev eth0 root netem delay 20ms 5ms distribution normal loss 1% rate 10mbit\"",
    );
    assert_eq!(fwd.rate, LinkRate::Constant(Rate::from_mbps(10)));
    assert_eq!(fwd.delay, Dur::from_millis(20));
    let j = fwd.jitter.unwrap();
    assert_eq!(
        (j.jitter, j.distribution, j.reorder),
        (Dur::from_millis(5), Distribution::Normal, false)
    );
    assert_eq!(fwd.loss, Some(LossSpec::Bernoulli { p: 0.01 }));
    // Rate and delay are both directions', loss the forward one's.
    assert_eq!(
        (rev.rate, rev.delay, rev.loss),
        (fwd.rate.clone(), fwd.delay, None)
    );
    // Without a delay on the line: netem's, none.
    let (fwd, _) = directions("rate = \"10Mbps\"\nnetem = \"netem loss 1%\"");
    assert_eq!((fwd.delay, fwd.jitter), (Dur::ZERO, None));
}

#[test]
fn every_bad_value_names_its_key_at_its_line() {
    // Line 7 is the bottleneck's first key.
    let e = err_at("rate = \"0Mbps\"\ndelay = \"1ms\"", 7);
    assert!(
        e.contains("topology.bottleneck.rate must be positive"),
        "{e}"
    );
    let e = err_at("rate = \"10Mbps\"\ndelay = \"1ms\"\nloss = 1.5", 9);
    assert!(
        e.contains("topology.bottleneck.loss") && e.contains("1.5"),
        "{e}"
    );
    let e = err_at(
        "rate = \"10Mbps\"\ndelay = \"1ms\"\nloss = { gemodel = [0.1, 0.2, 0.3, 0.4, 0.5] }",
        9,
    );
    assert!(e.contains("gemodel takes 1 to 4"), "{e}");
    let e = err_at(
        "rate = \"10Mbps\"\ndelay = \"1ms\"\nloss = { gemodle = [0.1] }",
        9,
    );
    assert!(e.contains("gemodle"), "{e}");
    let e = err_at(
        "rate = \"10Mbps\"\ndelay = { mean = \"1ms\", jitter = \"1ms\", distribution = \"gauss\" }",
        8,
    );
    assert!(e.contains("gauss") && e.contains("paretonormal"), "{e}");
    let e = err_at(
        "rate = { schedule = [{ at = \"1s\", rate = \"1Mbps\" }] }\ndelay = \"1ms\"",
        7,
    );
    assert!(e.contains("first step must be at 0 s"), "{e}");
    let e = err_at(
        "rate = { trace = \"a\", schedule = [] }\ndelay = \"1ms\"",
        7,
    );
    assert!(e.contains("one of `trace` and `schedule`"), "{e}");
    let e = err_at("rate = \"10Mbsp\"\ndelay = \"1ms\"", 7);
    assert!(e.contains("topology.bottleneck.rate"), "{e}");
    let e = err_at("rate = \"10Mbps\"", 6);
    assert!(e.contains("missing field `delay`"), "{e}");
    let e = err_at(
        "rate = \"10Mbps\"\ndelay = \"1ms\"\nnetem = \"netem duplicate 1%\"",
        9,
    );
    assert!(
        e.contains("topology.bottleneck.netem") && e.contains("duplicate"),
        "{e}"
    );
    let e = err_at(
        "rate = \"10Mbps\"\ndelay = \"1ms\"\nnetem = \"netem limit 50\"",
        9,
    );
    assert!(e.contains("qdisc"), "{e}");
}

#[test]
fn a_key_set_by_the_key_and_the_netem_line_is_an_error_naming_both() {
    let e = err_at(
        "rate = \"10Mbps\"\ndelay = \"1ms\"\nnetem = \"netem delay 5ms\"",
        8,
    );
    assert!(
        e.contains("topology.bottleneck.delay and the delay of topology.bottleneck.netem"),
        "{e}"
    );
    let e = err_at("netem = \"netem rate 1mbit\"\nrate = \"10Mbps\"", 8);
    assert!(
        e.contains("topology.bottleneck.rate and the rate of topology.bottleneck.netem"),
        "{e}"
    );
    let e = err_at(
        "rate = \"10Mbps\"\ndelay = \"1ms\"\nreverse_loss = 0.1\nreverse_netem = \"netem loss 1%\"",
        9,
    );
    assert!(e.contains("reverse_loss and the loss of"), "{e}");
}

/// No spelling builds a link of rate 0 or beyond what a rate holds: a netem line
/// (forward, reverse, a graph link's), as the `rate` key refuses "0bps".
#[test]
fn no_netem_line_makes_a_rate_of_zero_or_beyond_a_rate() {
    for word in ["0bit", "0kbit", "0", "0.4", "0mbps", "0.0000000001gibit"] {
        let e = err_at(
            &format!("delay = \"1ms\"\nnetem = \"netem rate {word}\""),
            8,
        );
        assert!(
            e.contains("topology.bottleneck.netem") && e.contains("at least 1 bit/s"),
            "{word}: {e}"
        );
        let e = err_at(
            &format!("rate = \"1Mbps\"\ndelay = \"1ms\"\nreverse_netem = \"netem rate {word}\""),
            9,
        );
        assert!(e.contains("reverse_netem"), "{word}: {e}");
    }
    for word in ["1e30gbit", "18446744073709551616", "3tbps0"] {
        let e = err_at(
            &format!("delay = \"1ms\"\nnetem = \"netem rate {word}\""),
            8,
        );
        assert!(e.contains("topology.bottleneck.netem"), "{word}: {e}");
    }
    let e = err_at("delay = \"1ms\"\nnetem = \"netem rate 3e9tbit\"", 8);
    assert!(e.contains("below 2^64"), "{e}");
    let graph = "name = \"g\"\nduration = \"10s\"\n[topology]\nkind = \"graph\"\nnodes = [\"a\", \"b\"]\n\
        [[topology.links]]\nfrom = \"a\"\nto = \"b\"\ndelay = \"1ms\"\nnetem = \"netem rate 0gbit\"\n\
        [[flows]]\nname = \"f\"\nkind = \"tcp\"\nfrom = \"a\"\nto = \"b\"\n";
    let e = Scenario::from_toml(graph, "g.toml").unwrap_err();
    assert_eq!(e.line, Some(10), "{e}");
    assert!(e.to_string().contains("topology.links[0].netem"), "{e}");
}

/// A trace file whose mean rate rounds to 0 bit/s is refused at the key's line,
/// naming the file's line.
#[test]
fn a_trace_with_a_mean_rate_of_zero_is_refused_at_its_key() {
    let dir = std::env::temp_dir().join(format!("aqmlab-trace0-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("sparse.up"), "3\n\n90000000000\n").unwrap();
    let file = dir.join("s.toml");
    std::fs::write(
        &file,
        dumbbell("rate = \"1Mbps\"\ndelay = \"5ms\"\nreverse_rate = { trace = \"sparse.up\" }"),
    )
    .unwrap();
    let e = Scenario::from_path(&file).unwrap_err();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(e.line, Some(9), "{e}");
    let e = e.to_string();
    assert!(
        e.contains("reverse_rate") && e.contains("sparse.up") && e.contains("line 3"),
        "{e}"
    );
}

#[test]
fn a_graph_link_takes_the_same_keys() {
    let text = "name = \"g\"\nduration = \"10s\"\n[topology]\nkind = \"graph\"\nnodes = [\"a\", \"b\"]\n\
        [[topology.links]]\nfrom = \"a\"\nto = \"b\"\nrate = { trace = \"lte-stationary\" }\n\
        delay = \"1ms\"\nloss = 0.5\n[[flows]]\nname = \"f\"\nkind = \"tcp\"\nfrom = \"a\"\nto = \"b\"\n";
    let s = Scenario::from_toml(text, "g.toml").unwrap();
    let (_, fwd, rev) = s.links().unwrap().swap_remove(0);
    assert!(matches!(fwd.rate, LinkRate::Trace(_)));
    assert_eq!(
        rev.rate,
        LinkRate::Constant(fwd.nominal_rate()),
        "a trace shapes one way"
    );
    assert_eq!((fwd.loss.is_some(), rev.loss.is_some()), (true, false));
    let e = Scenario::from_toml(&text.replace("loss = 0.5", "loss = -1"), "g.toml").unwrap_err();
    assert_eq!(e.line, Some(11), "{e}");
    assert!(e.to_string().contains("topology.links[0].loss"), "{e}");
}

#[test]
fn the_keys_round_trip_through_toml_and_json() {
    let s = parse(
        "rate = { schedule = [{ at = \"0s\", rate = \"10Mbps\" }, { at = \"5s\", rate = \"2Mbps\" }] }\n\
         delay = { mean = \"20ms\", jitter = \"5ms\", distribution = \"normal\" }\n\
         loss = { gemodel = [0.01, 0.3] }\nreverse_rate = { trace = \"lte-driving\" }",
    )
    .unwrap();
    let text = toml::to_string(&s.file).unwrap();
    let back = Scenario::from_toml(&text, "back.toml").unwrap();
    assert_eq!(back.links().unwrap(), s.links().unwrap());
    // As a Python dict gives it: the keys set, none null.
    fn set(v: serde_json::Value) -> serde_json::Value {
        match v {
            serde_json::Value::Object(m) => m
                .into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, set(v)))
                .collect(),
            serde_json::Value::Array(a) => a.into_iter().map(set).collect(),
            v => v,
        }
    }
    let json = set(serde_json::to_value(&s.file).unwrap()).to_string();
    let back = Scenario::from_json(&json).unwrap();
    assert_eq!(back.links().unwrap(), s.links().unwrap());
}
