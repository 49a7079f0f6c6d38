//! Property tests over every built-in qdisc, through `AnyQdisc`: conservation,
//! bounds, no panic on any sequence of enqueues, dequeues and time jumps, and
//! replay under a seed.

use aqm::{
    rng, Dur, Ecn, FlowClass, FlowId, LinkInfo, Monitored, Packet, Qdisc, QdiscSpec, Rate, Time,
    VecSink, Verdict,
};
use proptest::prelude::*;

/// Each qdisc with its defaults and with a small configuration that overflows often.
/// Every kind in the registry must appear here (checked below).
const CONFIGS: &[&str] = &[
    "kind = \"droptail\"",
    "kind = \"droptail\"\nlimit = 5",
    "kind = \"droptail\"\nlimit = 5\ndrop = \"front\"",
    "kind = \"red\"",
    "kind = \"red\"\nlimit = 12\nmin_th = 2\nmax_th = 6\nw_q = 0.2",
    "kind = \"red\"\nlimit = 12\nmin_th = 2\nmax_th = 6\nw_q = 0.2\ngentle = true\necn = true\nadaptive = true",
    "kind = \"red\"\nlimit = 12\nmin_th = 2\nmax_th = 6\nw_q = 0.2\nbyte_mode = true\nwait = false",
    "kind = \"blue\"",
    "kind = \"blue\"\nlimit = 6\nincrement = 0.2\ndecrement = 0.05\nfreeze_time = \"1ms\"\necn = true",
    "kind = \"sfb\"",
    "kind = \"sfb\"\nlimit = 10\nlevels = 3\nbins = 4\nbin_size = 3\nincrement = 0.2\ndecrement = 0.05\nrate_limit = \"1Mbps\"\nrate_limit_burst = 3000\nhash = \"moving\"\nrehash_period = \"20ms\"\necn = true",
    "kind = \"sfb\"\nlimit = 10\nlevels = 2\nbins = 3\nbin_size = 2\nincrement = 0.5\ndecrement = 0.1\nfreeze_time = \"1ms\"\nrate_limit = \"0.16Mbps\"\nhash = \"double_buffered\"\nrehash_period = \"20ms\"\nwarmup = \"5ms\"",
    "kind = \"sfred\"",
    "kind = \"sfred\"\nlimit = 10\nlevels = 3\nbins = 4\nmin_th = 0.5\nmax_th = 2\nw_q = 0.3\nadapt_interval = \"1ms\"\ngentle = true\nwait = false\necn = true",
    "kind = \"choke\"",
    "kind = \"choke\"\nlimit = 12\nmin_th = 2\nmax_th = 6\nw_q = 0.3\ncandidates = 3",
    "kind = \"choke\"\nlimit = 12\nmin_th = 1\nmax_th = 8\nw_q = 0.5\nadaptive_candidates = true\nregions = 3\necn = true",
    "kind = \"choke\"\nlimit = 10\nmin_th = 1\nmax_th = 5\nw_q = 0.5\ncandidates = 2\ncandidate = \"front\"",
    "kind = \"choke\"\nlimit = 10\nmin_th = 1\nmax_th = 5\nw_q = 0.5\ncandidates = 2\ncandidate = \"back\"\nwait = false",
    "kind = \"breathe\"",
    "kind = \"breathe\"\nlimit = 12\nmin_th = 2\nmax_th = 6\nw_q = 0.3\ncounters = 3\necn = true",
    "kind = \"breathe\"\nlimit = 12\nmin_th = 2\nmax_th = 6\nw_q = 0.3\nrate_limit = \"2Mbps\"",
    "kind = \"mrul\"",
    "kind = \"mrul\"\nlimit = 12\nmin_th = 2\nmax_th = 6\nw_q = 0.3\nlist_size = 4\nd_w = 2\naging_period = \"5ms\"\necn = true",
    "kind = \"mrul\"\nlimit = 12\nmin_th = 2\nmax_th = 6\nw_q = 0.3\nlist_size = 30\npenalty_below_min_th = true\nwait = false",
    "kind = \"nlred\"",
    "kind = \"nlred\"\nlimit = 12\nmin_th = 2\nmax_th = 6\nw_q = 0.3\nmax_p = 0.9\nmax_p_scale = 1.5\necn = true",
    "kind = \"sfq\"",
    "kind = \"sfq\"\nlimit = 10\ndepth = 4\ndivisor = 5\nquantum = 300\nperturb_period = \"20ms\"",
    "kind = \"sfq\"\nlimit = 10\ndepth = 6\ndivisor = 3\ndrop = \"tail\"\nheaddrop = true\nred = true\nmin_th = 1\nmax_th = 3\nw_q = 0.3\ngentle = true\necn = true\nperturb_period = \"5ms\"",
    "kind = \"sfq\"\nlimit = 12\ndepth = 12\ndivisor = 4\nquantum = 100\nred = true\nmin_th = 1\nmax_th = 2\nw_q = 0.5\nbyte_mode = true\nmean_pkt_size = 500\nwait = false",
    "kind = \"codel\"",
    "kind = \"codel\"\nlimit = 6\ntarget = \"1ms\"\ninterval = \"5ms\"\nmtu = 0",
    "kind = \"codel\"\nlimit = 8\ntarget = \"1ms\"\ninterval = \"3ms\"\necn = true\nce_threshold = \"2ms\"\nmtu = 500",
    "kind = \"fq_codel\"",
    "kind = \"fq_codel\"\nlimit = 8\nflows = 4\nquantum = 300\ntarget = \"1ms\"\ninterval = \"5ms\"\nmemory_limit = 5000\ndrop_batch_size = 3\nce_threshold = \"1ms\"\nmtu = 0",
    "kind = \"fq_codel\"\nlimit = 10\nflows = 16\nset_associative_hash = true\nset_ways = 4\necn = false\nper_flow_mtu = true\nmtu = 100\ntarget = \"1ms\"\ninterval = \"4ms\"\nhash_seed = 3",
    "kind = \"pie\"",
    "kind = \"pie\"\nlimit = 8\ntarget = \"1ms\"\ntupdate = \"2ms\"\nmax_burst = \"0ms\"\necn = true\nmtu = 100\ndq_rate_estimator = true\ndq_threshold = 2000\nbytemode = true",
    "kind = \"pie\"\nlimit = 10\ntarget = \"2ms\"\ntupdate = \"1ms\"\nmax_burst = \"5ms\"\nderandomize = false\ncap_drop_adjustment = false\nmtu = 200\nalpha = 2.0\nbeta = 20.0",
    "kind = \"fred\"",
    "kind = \"fred\"\nlimit = 10\nmin_th = 2\nmax_th = 6\nw_q = 0.3\nminq = 1\nmax_p = 0.5\necn = true",
    "kind = \"wfq\"",
    "kind = \"wfq\"\nlimit = 8\nbuffer = \"droptail\"",
    "kind = \"wfq\"\nlimit = 8\nbuffer = \"dropfront\"\nlivelock_fix = false",
    "kind = \"wfq\"\nlimit = 8\nclassify = \"aggregate\"\nbuffer = \"dropfront\"",
    "kind = \"wfq\"\nlimit = 8\nclassify = \"aggregate\"\nweights = { \"1\" = 0.5, \"3\" = 4 }\nbuffer = \"lqd\"",
    "kind = \"wfq\"\nlimit = 8\nbuffer = \"alqd\"",
    "kind = \"wfq\"\nlimit = 10\nclassify = \"aggregate\"\nbuffer = \"alqd_plus\"\nfreeze_time = \"1ms\"\nincrement = 0.2",
    "kind = \"drr\"",
    "kind = \"drr\"\nlimit = 8\nquantum = 300\nbuffer = \"droptail\"",
    "kind = \"drr\"\nlimit = 8\nclassify = \"aggregate\"\nquantum = 500\nbuffer = \"dropfront\"",
    "kind = \"drr\"\nlimit = 8\nclassify = \"aggregate\"\nbuffer = \"lqd\"",
    "kind = \"drr\"\nlimit = 8\nquantum = 100\nbuffer = \"alqd\"",
    "kind = \"drr\"\nlimit = 10\nclassify = \"aggregate\"\nweights = { \"0\" = 3 }\nbuffer = \"alqd_plus\"\na = 10\nb = 50\nc = 0\nfreeze_time = \"1ms\"\nincrement = 0.5\ndecrement = 0.1",
];

/// The flows the link announces: 0..40 in aggregates flow % 5 with weights 1-3;
/// the workloads' other flows (40..50) are unannounced. Qdiscs other than the fair
/// queues ignore it.
fn flow_table() -> Vec<FlowClass> {
    (0..40)
        .map(|f| FlowClass {
            flow: FlowId(f),
            aggregate: f % 5,
            weight: 1.0 + (f % 3) as f64,
        })
        .collect()
}

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

fn run(config: &str, ops: &[Op], seed: u64) -> Result<Trace, TestCaseError> {
    let spec: QdiscSpec = toml::from_str(config).unwrap();
    let table = flow_table();
    let link = LinkInfo::new(Rate::from_mbps(10)).with_flows(&table);
    let mut q = Monitored::new(spec.build(&link).unwrap());
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
                p.ecn = if ect { Ecn::Ect } else { Ecn::NotEct };
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
            "conservation after op {} in {}",
            i,
            config
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
    // Nothing is lost: draining empties the queue and every packet is accounted for.
    while let Some(p) = q.dequeue(now, &mut rng, &mut sink) {
        departed += 1;
        trace.departed.push((p.flow.0, p.tag));
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
        for config in CONFIGS {
            let a = run(config, &ops, seed)?;
            let b = run(config, &ops, seed)?;
            prop_assert_eq!(a, b, "replay differs for {}", config);
        }
    }
}

#[test]
fn every_registered_kind_is_property_tested() {
    for kind in QdiscSpec::KINDS {
        let needle = format!("kind = \"{kind}\"");
        assert!(
            CONFIGS.iter().any(|c| c.starts_with(&needle)),
            "{kind} has no property-test config"
        );
    }
}

#[test]
fn a_long_random_workload_never_breaks_the_invariants() {
    // One long run per config, beyond proptest's short sequences: queues fill and
    // drain many times and averages travel the whole curve.
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
    for config in CONFIGS {
        run(config, &ops, 1).unwrap();
    }
}

/// The `Qdisc` trait is object-safe: user-written qdiscs can be boxed.
#[test]
fn qdisc_trait_is_object_safe() {
    let spec: QdiscSpec = toml::from_str("kind = \"droptail\"").unwrap();
    let q: Box<dyn Qdisc> = Box::new(spec.build(&LinkInfo::new(Rate::from_mbps(1))).unwrap());
    assert_eq!(q.len(), 0);
}
