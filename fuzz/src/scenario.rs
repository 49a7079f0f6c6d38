//! Target `scenario`: any bytes are a scenario file; the parser and validator must
//! answer with an error or a valid scenario, never a panic or an abort.
//!
//! The bytes are read as UTF-8 (invalid sequences replaced, so a mutation that
//! breaks one byte still reaches the parser) and given to `Scenario::from_toml`,
//! and to `Scenario::from_json` (what the Python bindings call for a dict). What
//! parses must:
//! - keep the validator's promises (positive duration, warm-up inside it, at least
//!   one named group, flows of a graph between its nodes);
//! - read back as itself when written out as TOML (the path a Python dict takes);
//! - build with `Simulation::new` (which must succeed), and run a few simulated milliseconds, when it is
//!   small: the harness, not the crates, caps flows, rates and sampling so that
//!   one iteration stays in milliseconds. Scenarios above the caps are still
//!   parsed and validated, only not built.

use aqm::{Dur, QdiscSpec, Rate, Time};
use sim::link_model::LinkRate;
use sim::scenario::{Topology, Traffic};
use sim::{Scenario, Simulation};

/// At most this many flows (summed over groups) are built.
const MAX_FLOWS: u64 = 64;
/// At most this many graph nodes and links are built.
const MAX_NODES: usize = 64;
/// Rates above this (links, access links, UDP sources) are not run: the events a
/// run makes grow with the rate.
const MAX_RATE: Rate = Rate::from_mbps(100);
/// Simulated time run for each scenario that is built.
const RUN_FOR: Dur = Dur::from_millis(20);
/// Sampling queues more often than this is not run (one event per sample).
const MIN_SAMPLE: Dur = Dur::from_micros(100);

pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    match Scenario::from_toml(&text, "fuzz.toml") {
        Ok(s) => valid(&s),
        Err(e) => assert!(
            !e.message.trim().is_empty(),
            "an error with no message: {e:?}"
        ),
    }
    if let Ok(s) = Scenario::from_json(&text) {
        valid(&s);
    }
}

/// What a scenario that parsed must satisfy.
fn valid(s: &Scenario) {
    let f = &s.file;
    assert!(!f.duration.is_zero(), "accepted a zero duration");
    assert!(f.warmup < f.duration, "accepted warmup >= duration");
    assert!(!f.flows.is_empty(), "accepted a scenario without flows");
    let mut names: Vec<&str> = f.flows.iter().map(|g| g.get_ref().name.as_str()).collect();
    assert!(
        names.iter().all(|n| !n.is_empty()),
        "accepted an empty name"
    );
    names.sort_unstable();
    assert!(
        names.windows(2).all(|w| w[0] != w[1]),
        "accepted a group name twice"
    );
    if let Topology::Graph { nodes, .. } = f.topology.get_ref() {
        for g in &f.flows {
            let g = g.get_ref();
            for end in [&g.from, &g.to] {
                let end = end.as_ref().expect("accepted a graph flow without from/to");
                assert!(nodes.contains(end), "accepted a flow to a missing node");
            }
        }
    }
    round_trip(s);
    if small(s) {
        build_and_run(s);
    }
}

/// Written back as TOML, a valid scenario reads back as the same scenario.
fn round_trip(s: &Scenario) {
    let Ok(text) = toml::to_string(&s.file) else {
        return;
    };
    let back = Scenario::from_toml(&text, "round-trip.toml")
        .unwrap_or_else(|e| panic!("a valid scenario written as TOML is rejected: {e}\n{text}"));
    let again = toml::to_string(&back.file).expect("serialized once already");
    assert_eq!(text, again, "a scenario changed on its way through TOML");
}

/// Whether building and briefly running `s` stays cheap (the harness's caps).
fn small(s: &Scenario) -> bool {
    let f = &s.file;
    let flows: u64 = f.flows.iter().map(|g| g.get_ref().count as u64).sum();
    if flows > MAX_FLOWS {
        return false;
    }
    let qdisc_small = |q: &QdiscSpec| toml_ints(q).all(|v| v <= 100_000);
    if let Some(q) = &f.qdisc {
        if !qdisc_small(q.get_ref()) {
            return false;
        }
    }
    // Every link direction's rate, at every step of a schedule.
    let fast = |r: &LinkRate| match r {
        LinkRate::Constant(r) => *r > MAX_RATE,
        LinkRate::Schedule(s) => s.max_rate() > MAX_RATE,
        LinkRate::Trace(_) => false,
    };
    let links = s.links().unwrap_or_default();
    if links.iter().any(|(_, a, b)| fast(&a.rate) || fast(&b.rate)) {
        return false;
    }
    match f.topology.get_ref() {
        Topology::Dumbbell {
            access,
            bottleneck,
            reverse_qdisc,
        } => {
            let _ = (access, bottleneck);
            if reverse_qdisc.as_ref().is_some_and(|q| !qdisc_small(q)) {
                return false;
            }
        }
        Topology::Graph { nodes, links, .. } => {
            if nodes.len() > MAX_NODES || links.len() > 2 * MAX_NODES {
                return false;
            }
            for l in links {
                for q in [&l.qdisc, &l.reverse_qdisc].into_iter().flatten() {
                    if !qdisc_small(q) {
                        return false;
                    }
                }
            }
        }
    }
    f.flows.iter().all(|g| {
        let g = g.get_ref();
        let rates_ok = g.rate().is_none_or(|r| r <= MAX_RATE)
            && g.access_rate.is_none_or(|r| r <= MAX_RATE)
            && g.schedule()
                .is_none_or(|steps| steps.iter().all(|st| st.rate <= MAX_RATE));
        // On/off periods of any length cost an event a packet at most; a Pareto
        // tail this steep draws periods of ~0 s and ~mean forever.
        let onoff_ok = match &g.traffic {
            Traffic::Onoff(k) => k.shape.is_none_or(|k| k.is_finite() && k <= 100.0),
            _ => true,
        };
        let tcp = g.tcp_config();
        let timers_ok = tcp.min_rto >= Dur::from_micros(100)
            && (tcp.think.is_zero() || tcp.think >= Dur::from_micros(10));
        rates_ok && onoff_ok && timers_ok
    }) && (s.monitor().queue_interval.is_zero() || s.monitor().queue_interval >= MIN_SAMPLE)
}

/// The integer parameters of a qdisc spec (limits, bin counts, ...), to skip
/// building qdiscs whose size alone would dominate an iteration.
fn toml_ints(q: &QdiscSpec) -> impl Iterator<Item = u64> {
    let table = toml::Table::try_from(q).unwrap_or_default();
    table
        .into_iter()
        .filter_map(|(_, v)| v.as_integer())
        .map(|v| v.unsigned_abs())
        .collect::<Vec<_>>()
        .into_iter()
}

fn build_and_run(s: &Scenario) {
    // A scenario that validates builds (its qdiscs, totals, routes and monitored
    // links were checked with it); within the harness's caps memory is no limit.
    let mut sim = Simulation::new(s)
        .unwrap_or_else(|e| panic!("a scenario that validates does not build: {e}"));
    let until = Time::ZERO + RUN_FOR;
    sim.run_until(until, &mut |_| {});
    assert!(sim.now() <= sim.end(), "ran past the end");
    let report = sim.report(0.0);
    // With a warm-up inside the run, packets queued at the snapshot leave after
    // it; without one, nothing leaves a link that did not arrive there.
    let snapshot_taken = !s.file.warmup.is_zero() && s.file.warmup <= RUN_FOR;
    for l in report.links.iter().filter(|_| !snapshot_taken) {
        assert!(
            l.tx_packets + l.drops_total <= l.arrivals + 1,
            "{}: sent {} and dropped {} of {} arrivals",
            l.name,
            l.tx_packets,
            l.drops_total,
            l.arrivals
        );
    }
    serde_json::to_string(&report).expect("a report serializes");
}
