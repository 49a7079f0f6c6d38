//! The aggregate fair queues' shared parts: parameters checked by name, the
//! papers' defaults, and class state only while a class holds packets.

use super::classes::ClassId;
use super::manager::BufferManager;
use super::testkit::{build, error, inside, offer};
use super::Scheduler;
use crate::any::{AnyQdisc, QdiscSpec};
use crate::time::Dur;

#[test]
fn bad_parameters_are_rejected_by_name() {
    let cases = [
            (
                "kind = \"wfq\"\nclassify = \"aggregate\"\nweights = { \"x1\" = 10 }",
                "weights = { \"x1\" = 10 } has key \"x1\", which must be an aggregate id (a whole number)",
            ),
            (
                "kind = \"drr\"\nclassify = \"aggregate\"\nweights = { \"1\" = 10, \"2\" = -3 }",
                "weights = { \"1\" = 10, \"2\" = -3 } gives aggregate 2 a weight that must be positive",
            ),
            (
                "kind = \"wfq\"\nclassify = \"aggregate\"\nweights = { \"1\" = 0 }",
                "weights = { \"1\" = 0 } gives aggregate 1 a weight that must be positive",
            ),
            (
                "kind = \"wfq\"\nclassify = \"aggregate\"\nweights = { \"1\" = 2e9 }",
                "weights = { \"1\" = 2000000000 } gives aggregate 1 a weight that must be at most 1e9",
            ),
            (
                "kind = \"wfq\"\nweights = { \"1\" = 2 }",
                "weights = { \"1\" = 2 } applies to classify = \"aggregate\" only (a flow's weight is its flow group's `weight`)",
            ),
            (
                "kind = \"wfq\"\nbuffer = \"alqd_plus\"\na = 120",
                "a = 120 must be at most 100 (a percentage of the buffer)",
            ),
            (
                "kind = \"wfq\"\nbuffer = \"alqd_plus\"\nb = -5",
                "b = -5 must be a percentage, 0 or more",
            ),
            (
                "kind = \"wfq\"\nbuffer = \"lqd\"\nlivelock_fix = false",
                "livelock_fix = (set) applies to buffer = \"dropfront\" only, not buffer = \"lqd\"",
            ),
            (
                "kind = \"wfq\"\nlivelock_fix = true",
                "livelock_fix = (set) applies to buffer = \"dropfront\" only, not buffer = \"lqd\"",
            ),
            (
                "kind = \"drr\"\nbuffer = \"dropfront\"\nlivelock_fix = false",
                "livelock_fix = false applies to kind = \"wfq\" only: the livelock is in WFQ's virtual-time tags, and drr has none",
            ),
            ("kind = \"drr\"\nquantum = 0", "quantum = 0 must be at least 1"),
            (
                "kind = \"wfq\"\nquantum = 1500",
                "quantum = 1500 applies to kind = \"drr\" only (wfq has no quantum)",
            ),
            ("kind = \"drr\"\nlimit = 0", "limit = 0 must be at least 1"),
            (
                "kind = \"wfq\"\nbuffer = \"alqd\"\nincrement = 0.1",
                "increment = (set) applies to buffer = \"alqd_plus\" only, not buffer = \"alqd\"",
            ),
            (
                "kind = \"wfq\"\nbuffer = \"alqd_plus\"\nincrement = 0",
                "increment = 0 must be in (0, 1]",
            ),
            (
                "kind = \"wfq\"\nbuffer = \"alqd_plus\"\nfreeze_time = \"0ms\"",
                "freeze_time = 0ns must be positive (Table I divides by it)",
            ),
        ];
    for (config, want) in cases {
        assert_eq!(error(config), want, "{config}");
    }
    let e = toml::from_str::<QdiscSpec>("kind = \"wfq\"\nbuffer = \"red\"").unwrap_err();
    assert!(e.to_string().contains("unknown variant `red`"), "{e}");
    let e = toml::from_str::<QdiscSpec>("kind = \"drr\"\nquantm = 1").unwrap_err();
    assert!(e.to_string().contains("unknown field `quantm`"), "{e}");
}

#[test]
fn defaults_and_the_papers_values() {
    let QdiscSpec::Wfq(p) = toml::from_str("kind = \"wfq\"").unwrap() else {
        unreachable!()
    };
    assert_eq!((p.limit, p.buffer.name(), p.quantum()), (1000, "lqd", 1514));
    let v = p.validate(super::SchedulerKind::Wfq).unwrap();
    let a = v.alqd_plus;
    assert_eq!((a.a, a.b, a.c), (0.25, 0.25, 0.25));
    assert_eq!((a.increment, a.decrement), (0.01, 0.01));
    assert_eq!(a.freeze_time, Dur::from_millis(50));
    assert!(!p.tags_every_packet());
    // A spec survives a round trip through TOML, optional keys included.
    let spec: QdiscSpec = toml::from_str(
            "kind = \"wfq\"\nclassify = \"aggregate\"\nweights = { \"1\" = 10, \"2\" = 10 }\nbuffer = \"alqd_plus\"\na = 30\nfreeze_time = \"40ms\"",
        )
        .unwrap();
    let text = toml::to_string(&spec).unwrap();
    assert_eq!(toml::from_str::<QdiscSpec>(&text).unwrap(), spec, "{text}");
}

/// Whether a live class `c` is kept for a reason: it holds packets, the
/// scheduler still serves it (WFQ: GPS has not finished it) or the buffer
/// manager remembers it (ALQD+ with d > 0).
fn kept_for_a_reason(q: &AnyQdisc, c: ClassId) -> bool {
    let (classes, buffer) = inside(q);
    let sched_idle = match q {
        AnyQdisc::Wfq(q) => q.scheduler().idle(c),
        AnyQdisc::Drr(q) => q.scheduler().idle(c),
        _ => unreachable!(),
    };
    classes.len_of(c) > 0 || !sched_idle || buffer.keeps(c)
}

#[test]
fn classes_hold_state_only_while_they_hold_packets_or_are_still_served() {
    for kind in ["wfq", "drr"] {
        for buffer in ["droptail", "dropfront", "lqd", "alqd", "alqd_plus"] {
            let mut h = build(
                &format!("kind = \"{kind}\"\nlimit = 50\nbuffer = \"{buffer}\""),
                &[],
            );
            // 500 flows in turn, three arrivals per departure at the link's pace.
            for seq in 0..3_000u32 {
                offer(&mut h, seq % 500, 0, 1000, seq);
                if seq % 3 == 0 {
                    h.dequeue();
                    h.advance(Dur::from_millis(1));
                }
                let q = h.q.qdisc();
                let (classes, _) = inside(q);
                for c in classes.live() {
                    assert!(kept_for_a_reason(q, c), "{kind} {buffer}: class {c}");
                }
                if kind == "drr" && buffer != "alqd_plus" {
                    assert_eq!(classes.live().count(), classes.backlogged());
                }
            }
            // Once the link has caught up with GPS, nothing is left but
            // ALQD+'s memory of congested classes.
            h.drain_seqs();
            h.advance(Dur::from_secs(1));
            assert_eq!(h.dequeue(), None);
            let q = h.q.qdisc();
            let live: Vec<ClassId> = inside(q).0.live().collect();
            if buffer == "alqd_plus" {
                assert!(live.iter().all(|&c| inside(q).1.keeps(c)));
            } else {
                assert!(live.is_empty(), "{kind} {buffer}: {live:?}");
            }
        }
    }
}
