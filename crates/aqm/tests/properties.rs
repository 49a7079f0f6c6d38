//! Property tests over every built-in qdisc, through `AnyQdisc`: conservation,
//! bounds, no panic on any sequence of enqueues, dequeues and time jumps, and
//! replay under a seed. The configurations come from the registry: every kind's
//! defaults and the small ones its own file lists (`QdiscParams::property_configs`).

use aqm::{
    rng, AnyQdisc, Dur, Ecn, FlowClass, FlowId, LinkInfo, Monitored, Packet, Qdisc, QdiscSpec,
    Rate, Time, VecSink, Verdict,
};
use proptest::prelude::*;

/// The flows the link announces: 0..40 in aggregates flow % 5 with weights 1-3,
/// from four hosts to three (CAKE's host isolation); the workloads' other flows
/// (40..50) are unannounced, hosts of their own. Qdiscs other than the fair
/// queues and CAKE ignore it.
fn flow_table() -> Vec<FlowClass> {
    (0..40)
        .map(|f| FlowClass {
            src_host: 1000 + f % 4,
            dst_host: 2000 + f % 3,
            ..FlowClass::new(FlowId(f), f % 5, 1.0 + (f % 3) as f64)
        })
        .collect()
}

/// Each flow's DSCP, so CAKE's tins all see traffic: best effort, EF, CS1, LE,
/// AF41, AF11, AF31, CS6. Qdiscs other than CAKE ignore it.
const DSCPS: [u8; 8] = [0, 46, 8, 1, 34, 10, 26, 48];

#[derive(Clone, Debug)]
enum Op {
    Enqueue { flow: u32, size: u32, ect: bool },
    Dequeue,
    Advance(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (0u32..24, 40u32..1500, any::<bool>()).prop_map(|(flow, size, ect)| Op::Enqueue { flow, size, ect }),
        3 => Just(Op::Dequeue),
        1 => (0u64..200_000_000).prop_map(Op::Advance),
    ]
}

/// What a run produced, for comparing replays.
#[derive(Debug, PartialEq)]
struct Trace {
    verdicts: Vec<Verdict>,
    departed: Vec<(u32, u32)>,
    drops: Vec<(u32, aqm::DropReason)>,
    marks: usize,
}

/// Runs `ops` with every ECN-capable arrival carrying `capable` (ECT(0) or ECT(1)).
fn run(spec: &QdiscSpec, ops: &[Op], seed: u64, capable: Ecn) -> Result<Trace, TestCaseError> {
    run_built(spec, build(spec, Rate::from_mbps(10)), ops, seed, capable)
}

/// `spec` built for a link of `rate` that announces [`flow_table`].
fn build(spec: &QdiscSpec, rate: Rate) -> AnyQdisc {
    let table = flow_table();
    spec.build(&LinkInfo::new(rate).with_flows(&table))
        .unwrap_or_else(|e| panic!("{spec:?}: {e}"))
}

/// [`run`] on a qdisc already built from `spec`.
fn run_built(
    spec: &QdiscSpec,
    q: AnyQdisc,
    ops: &[Op],
    seed: u64,
    capable: Ecn,
) -> Result<Trace, TestCaseError> {
    let mut q = Monitored::new(q);
    let mut rng = rng::stream(seed, 3);
    let mut sink = VecSink::default();
    let mut now = Time::ZERO;
    let mut trace = Trace {
        verdicts: vec![],
        departed: vec![],
        drops: vec![],
        marks: 0,
    };
    let (mut offered, mut departed) = (0u64, 0u64);
    for (i, op) in ops.iter().enumerate() {
        match *op {
            Op::Enqueue { flow, size, ect } => {
                let mut p = Packet::new(FlowId(flow), size);
                p.tag = i as u32;
                p.aggregate = flow % 5;
                p.ecn = if ect { capable } else { Ecn::NotEct };
                p.dscp = DSCPS[flow as usize % DSCPS.len()];
                offered += 1;
                trace.verdicts.push(q.enqueue(p, now, &mut rng, &mut sink));
            }
            Op::Dequeue => {
                if let Some(p) = q.dequeue(now, &mut rng, &mut sink) {
                    departed += 1;
                    trace.departed.push((p.flow.0, p.tag));
                }
            }
            Op::Advance(ns) => now += Dur::from_nanos(ns),
        }
        let dropped = sink.drops.len() as u64;
        prop_assert_eq!(
            offered,
            departed + dropped + q.len() as u64,
            "conservation after op {} in {:?}",
            i,
            spec
        );
        prop_assert!(
            q.limit().admits(q.len(), q.bytes()),
            "backlog {} over {:?}",
            q.len(),
            q.limit()
        );
        let queued_bytes: u64 = q.bytes();
        prop_assert!(queued_bytes <= 1500 * q.len() as u64);
    }
    // Nothing is lost: draining empties the queue and every packet is accounted
    // for. A shaper (CAKE's) holding packets says when to ask again.
    loop {
        match q.dequeue(now, &mut rng, &mut sink) {
            Some(p) => {
                departed += 1;
                trace.departed.push((p.flow.0, p.tag));
            }
            None => match q.wake_at() {
                Some(t) if !q.is_empty() => {
                    prop_assert!(t > now, "a wake-up at {:?}, not after {:?}", t, now);
                    now = t;
                }
                _ => break,
            },
        }
    }
    prop_assert_eq!(q.len(), 0);
    prop_assert_eq!(q.bytes(), 0);
    prop_assert_eq!(offered, departed + sink.drops.len() as u64);
    // A packet departs or is dropped once, never both, never twice.
    let mut seen: Vec<u32> = trace
        .departed
        .iter()
        .map(|d| d.1)
        .chain(sink.drops.iter().map(|d| d.0.tag))
        .collect();
    seen.sort_unstable();
    let n = seen.len();
    seen.dedup();
    prop_assert_eq!(seen.len(), n, "a packet left twice");
    trace.drops = sink.drops.iter().map(|(p, r)| (p.tag, *r)).collect();
    trace.marks = sink.marks.len();
    Ok(trace)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn conservation_bounds_and_replay(ops in prop::collection::vec(op(), 1..400), seed in 0u64..1000) {
        for spec in QdiscSpec::property_configs() {
            for capable in [Ecn::Ect, Ecn::Ect1] {
                let a = run(&spec, &ops, seed, capable)?;
                let b = run(&spec, &ops, seed, capable)?;
                prop_assert_eq!(a, b, "replay differs for {:?}", spec);
            }
        }
    }

    /// ECT(1) is the L4S identifier to DualPI2 alone: every other qdisc treats it
    /// exactly as ECT(0), arrival by arrival.
    #[test]
    fn ect1_is_ect0_to_every_qdisc_but_dualpi2(ops in prop::collection::vec(op(), 1..400), seed in 0u64..1000) {
        for spec in QdiscSpec::property_configs() {
            if spec.kind() == "dualpi2" {
                continue;
            }
            let a = run(&spec, &ops, seed, Ecn::Ect)?;
            let b = run(&spec, &ops, seed, Ecn::Ect1)?;
            prop_assert_eq!(a, b, "ECT(1) differs from ECT(0) for {:?}", spec);
        }
    }
}

#[test]
fn every_configuration_builds_and_round_trips_through_toml() {
    for spec in QdiscSpec::property_configs() {
        let text = toml::to_string(&spec).unwrap();
        let back: QdiscSpec = toml::from_str(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(back, spec, "{text}");
        spec.build(&LinkInfo::new(Rate::from_mbps(10)))
            .unwrap_or_else(|e| panic!("{spec:?}: {e}"));
    }
}

/// One long workload, beyond proptest's short sequences: queues fill and drain
/// many times, with idle gaps, and averages travel the whole curve.
fn long_workload() -> Vec<Op> {
    let mut ops = Vec::new();
    let mut r = rng::stream(9, 9);
    for _ in 0..50_000 {
        let x: u32 = rand::Rng::gen_range(&mut r, 0..10);
        ops.push(match x {
            0..=5 => Op::Enqueue {
                flow: rand::Rng::gen_range(&mut r, 0..50),
                size: 1000,
                ect: x.is_multiple_of(2),
            },
            6..=8 => Op::Dequeue,
            _ => Op::Advance(rand::Rng::gen_range(&mut r, 0..5_000_000)),
        });
    }
    ops
}

#[test]
fn a_long_random_workload_never_breaks_the_invariants() {
    let ops = long_workload();
    for spec in QdiscSpec::property_configs() {
        run(&spec, &ops, 1, Ecn::Ect).unwrap();
        run(&spec, &ops, 1, Ecn::Ect1).unwrap();
    }
}

/// The `Qdisc` trait is object-safe: user-written qdiscs can be boxed.
#[test]
fn qdisc_trait_is_object_safe() {
    let spec: QdiscSpec = toml::from_str("kind = \"droptail\"").unwrap();
    let q: Box<dyn Qdisc> = Box::new(spec.build(&LinkInfo::new(Rate::from_mbps(1))).unwrap());
    assert_eq!(q.len(), 0);
}

/// On a link whose rate varies, a qdisc told the new rate (`set_link_rate`)
/// decides as one built for that rate: whatever it derived from the rate (RED's
/// idle decay, REM's capacity, FRED's, SFQ's and SFRED's averages, WFQ's virtual
/// time) follows.
/// The kinds listed keep their build rate (docs/links.md says so); for them the
/// test shows the rate matters, so the list cannot hide a kind that ignores it
/// for no reason.
#[test]
fn a_qdisc_told_a_new_rate_decides_as_one_built_for_it() {
    const KEEP_BUILD_RATE: &[&str] = &["breathe"];
    let ops = long_workload();
    let (from, to) = (Rate::from_mbps(10), Rate::from_mbps(2));
    let mut kept_and_differs = Vec::new();
    for spec in QdiscSpec::property_configs() {
        let mut told = build(&spec, from);
        told.set_link_rate(to);
        let a = run_built(&spec, told, &ops, 1, Ecn::Ect).unwrap();
        let b = run_built(&spec, build(&spec, to), &ops, 1, Ecn::Ect).unwrap();
        if KEEP_BUILD_RATE.contains(&spec.kind()) {
            if a != b {
                kept_and_differs.push(spec.kind());
            }
        } else {
            assert!(a == b, "{spec:?} told {to} decides unlike one built for it");
        }
    }
    for kind in KEEP_BUILD_RATE {
        assert!(
            kept_and_differs.contains(kind),
            "{kind} decides alike at both rates: it follows the rate, or does not use it"
        );
    }
}
