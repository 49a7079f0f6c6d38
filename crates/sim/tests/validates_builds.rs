//! A scenario that parses and validates always builds: every error a network
//! build could give (a qdisc's parameters on its link, the flows the event queue
//! can name, a route for every flow, the monitored links) is found by
//! `Scenario::from_toml`, with its key and line, before anything is built.
//!
//! Scenarios are generated with every qdisc kind and a few of its keys set to
//! values at their edges (0, 1, 2^24 + 1, u32::MAX, negative, NaN-free floats,
//! zero durations and rates), and flow groups of every kind with keys of their
//! own; whatever validates must build.

use aqm::QdiscSpec;
use proptest::prelude::*;
use sim::{Scenario, Simulation};

const INTEGERS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "16",
    "100",
    "1000",
    "65536",
    "16777216",
    "16777217",
    "4294967295",
    "-1",
];
const FLOATS: &[&str] = &[
    "0.0", "0.001", "0.1", "0.5", "1.0", "1.5", "3.0", "100.0", "1e9", "-1.0",
];
const STRINGS: &[&str] = &[
    "\"0s\"",
    "\"1ns\"",
    "\"1ms\"",
    "\"100ms\"",
    "\"0bps\"",
    "\"1bps\"",
    "\"1Mbps\"",
    "\"10Gbps\"",
    "\"flow\"",
    "\"aggregate\"",
    "\"droptail\"",
    "\"dropfront\"",
    "\"lqd\"",
    "\"alqd_plus\"",
    "\"tail\"",
    "\"front\"",
    "\"pareto\"",
    "\"exponential\"",
    "\"cubic\"",
    "\"reno\"",
];
const BOOLS: &[&str] = &["true", "false"];

/// Values a key may take: those of its default's type, or any when it has none
/// written (an optional key).
fn pool(default: Option<&toml::Value>) -> Vec<&'static str> {
    match default {
        Some(toml::Value::Integer(_)) => INTEGERS.to_vec(),
        Some(toml::Value::Float(_)) => FLOATS.iter().chain(INTEGERS).copied().collect(),
        Some(toml::Value::Boolean(_)) => BOOLS.to_vec(),
        Some(toml::Value::String(_)) => STRINGS.to_vec(),
        _ => INTEGERS
            .iter()
            .chain(FLOATS)
            .chain(STRINGS)
            .chain(BOOLS)
            .copied()
            .collect(),
    }
}

/// A `[qdisc]` table: a kind and up to four of its keys, each at a value picked
/// by the index that goes with it.
fn qdisc_table(kind: usize, picks: &[(usize, usize)]) -> String {
    let kind = QdiscSpec::KINDS[kind % QdiscSpec::KINDS.len()];
    let keys = QdiscSpec::keys(kind).unwrap();
    let defaults =
        toml::Value::try_from(toml::from_str::<QdiscSpec>(&format!("kind = \"{kind}\"")).unwrap())
            .unwrap();
    let mut out = format!("kind = \"{kind}\"\n");
    let mut used = Vec::new();
    for &(k, v) in picks {
        let key = keys[k % keys.len()];
        if used.contains(&key) {
            continue;
        }
        used.push(key);
        let values = pool(defaults.get(key));
        out += &format!("{key} = {}\n", values[v % values.len()]);
    }
    out
}

const FLOW_KINDS: &[&str] = &["tcp", "web", "cbr", "poisson", "onoff"];
const FLOW_KEYS: &[(&str, &[&str])] = &[
    ("count", &["1", "2", "0"]),
    ("rate", &["\"1Mbps\"", "\"0bps\"", "\"10Gbps\""]),
    ("object_size", &["1", "10", "0"]),
    ("on", &["\"1ms\"", "\"0s\"", "\"1s\""]),
    ("off", &["\"1ms\"", "\"0s\"", "\"1s\""]),
    ("distribution", &["\"pareto\"", "\"exponential\""]),
    ("shape", &["1.5", "1.0", "-5.0", "2000.0"]),
    (
        "max_window",
        &["1", "0", "1048576", "1048577", "1000000000"],
    ),
    ("initial_window", &["1", "10", "0", "1000000000"]),
    ("weight", &["1.0", "0.0", "1e10"]),
    ("aggregate", &["1", "2147483648"]),
    ("packet_size", &["1000", "40", "41", "65536"]),
    ("start", &["\"0s\"", "\"1s\"", "\"10s\""]),
    ("stop", &["\"1s\"", "\"2s\"", "\"0s\""]),
    (
        "variant",
        &[
            "\"cubic\"",
            "\"reno\"",
            "\"newreno\"",
            "\"dctcp\"",
            "\"prague\"",
        ],
    ),
    ("hystart", &["true"]),
    ("ecn", &["true", "false", "\"ect0\"", "\"ect1\""]),
    ("pacing", &["true", "false"]),
];

fn flow_table(name: &str, kind: usize, picks: &[(usize, usize)], graph: bool) -> String {
    let kind = FLOW_KINDS[kind % FLOW_KINDS.len()];
    // What the kind needs, at a valid value, unless a pick sets it.
    let mut keys: Vec<(&str, &str)> = match kind {
        "web" => vec![("object_size", "10")],
        "cbr" | "poisson" => vec![("rate", "\"1Mbps\"")],
        "onoff" => vec![("rate", "\"1Mbps\""), ("on", "\"1ms\""), ("off", "\"1ms\"")],
        _ => vec![],
    };
    for &(k, v) in picks {
        let (key, values) = FLOW_KEYS[k % FLOW_KEYS.len()];
        let value = values[v % values.len()];
        match keys.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => keys.push((key, value)),
        }
    }
    let mut out = format!("[[flows]]\nname = \"{name}\"\nkind = \"{kind}\"\n");
    if graph {
        out += "from = \"a\"\nto = \"c\"\n";
    }
    for (key, value) in keys {
        out += &format!("{key} = {value}\n");
    }
    out
}

fn scenario(
    graph: bool,
    qdisc: (usize, Vec<(usize, usize)>),
    reverse: Option<(usize, Vec<(usize, usize)>)>,
    flows: Vec<(usize, Vec<(usize, usize)>)>,
) -> String {
    let mut text = String::from("name = \"p\"\nduration = \"3s\"\n");
    text += &format!("[qdisc]\n{}", qdisc_table(qdisc.0, &qdisc.1));
    if graph {
        text += "[topology]\nkind = \"graph\"\nnodes = [\"a\", \"b\", \"c\"]\n\
                 [[topology.links]]\nfrom = \"a\"\nto = \"b\"\nrate = \"10Mbps\"\ndelay = \"1ms\"\n\
                 [[topology.links]]\nfrom = \"b\"\nto = \"c\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\n";
        if let Some((k, picks)) = &reverse {
            text += &format!("[topology.links.reverse_qdisc]\n{}", qdisc_table(*k, picks));
        }
    } else {
        text +=
            "[topology]\nkind = \"dumbbell\"\naccess = { rate = \"10Mbps\", delay = \"1ms\" }\n\
                 bottleneck = { rate = \"1Mbps\", delay = \"5ms\" }\n";
        if let Some((k, picks)) = &reverse {
            text += &format!("[topology.reverse_qdisc]\n{}", qdisc_table(*k, picks));
        }
    }
    for (i, (kind, picks)) in flows.iter().enumerate() {
        text += &flow_table(&format!("g{i}"), *kind, picks, graph);
    }
    text
}

fn picks() -> impl Strategy<Value = Vec<(usize, usize)>> {
    prop::collection::vec((0usize..64, 0usize..64), 0..3)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    #[test]
    fn a_scenario_that_validates_builds(
        graph in any::<bool>(),
        qdisc in (0usize..64, picks()),
        reverse in prop::option::of((0usize..64, picks())),
        flows in prop::collection::vec((0usize..8, picks()), 1..3),
    ) {
        let text = scenario(graph, qdisc, reverse, flows);
        if let Ok(s) = Scenario::from_toml(&text, "p.toml") {
            if let Err(e) = Simulation::new(&s) {
                prop_assert!(false, "validates but does not build: {e}\n{text}");
            }
        }
    }
}

/// The generator reaches both sides: scenarios that validate and build, and
/// qdisc parameters refused at validation (not first at build).
#[test]
fn the_generator_makes_valid_and_invalid_qdiscs() {
    let ok = scenario(false, (0, vec![]), None, vec![(0, vec![])]);
    assert!(Simulation::new(&Scenario::from_toml(&ok, "p.toml").unwrap()).is_ok());
    let codel = QdiscSpec::KINDS.iter().position(|k| *k == "codel").unwrap();
    let limit = QdiscSpec::keys("codel")
        .unwrap()
        .iter()
        .position(|k| *k == "limit")
        .unwrap();
    let u32_max = INTEGERS.iter().position(|v| *v == "4294967295").unwrap();
    let text = scenario(
        false,
        (codel, vec![(limit, u32_max)]),
        None,
        vec![(0, vec![])],
    );
    let e = Scenario::from_toml(&text, "p.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("p.toml:5: qdisc.limit = 4294967295 must be at most"),
        "{e}"
    );
    // A rule that needs the link's rate: BREATHe's K = 1 Mbps / 1 bps counters.
    let text = ok
        .replace(
            "kind = \"droptail\"\n",
            "kind = \"breathe\"\nrate_limit = \"1bps\"\n",
        )
        .replace(
            "rate = \"1Mbps\", delay = \"5ms\"",
            "rate = \"10Gbps\", delay = \"5ms\"",
        );
    let e = Scenario::from_toml(&text, "p.toml")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("p.toml:5: qdisc.rate_limit = "), "{e}");
    assert!(e.contains("gives K = 10000000000 counters"), "{e}");
}

/// Over a fixed spread of inputs, a good part of the generated scenarios
/// validate (and so are built by the property above) and a good part do not.
#[test]
fn the_generator_reaches_both_sides() {
    let (mut valid, mut total) = (0, 0);
    for i in 0..400usize {
        let p = |k: usize| {
            let pick = ((i * 7 + k) % 64, (i * 13 + k * 5) % 64);
            if (i + k).is_multiple_of(2) {
                vec![pick]
            } else {
                vec![]
            }
        };
        let text = scenario(
            i.is_multiple_of(2),
            (i, p(1)),
            i.is_multiple_of(3).then(|| (i / 3, p(2))),
            vec![(i % 5, p(3))],
        );
        total += 1;
        if let Ok(s) = Scenario::from_toml(&text, "p.toml") {
            valid += 1;
            assert!(Simulation::new(&s).is_ok(), "{text}");
        }
    }
    assert!(
        valid * 5 > total && valid * 5 < 4 * total,
        "{valid} of {total} validate"
    );
}
