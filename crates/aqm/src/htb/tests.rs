use super::*;
use crate::packet::FlowId;
use crate::qdisc::FlowClass;
use crate::testing::{rejection, Harness};
use crate::Dscp;

fn class(id: &str, parent: Option<&str>, rate_kbit: u64, ceil_kbit: u64) -> HtbClass {
    HtbClass {
        parent: parent.map(Into::into),
        ceil: Some(Rate::from_kbps(ceil_kbit)),
        ..HtbClass::new(id, Rate::from_kbps(rate_kbit))
    }
}

fn by_dscp(mut c: HtbClass, dscp: u8) -> HtbClass {
    c.filter = Some(Filter {
        groups: vec![],
        dscp: vec![Dscp(dscp)],
    });
    c
}

fn tree(default: Option<&str>, class: Vec<HtbClass>) -> HtbParams {
    HtbParams {
        default: default.map(Into::into),
        class,
        ..Default::default()
    }
}

/// A packet of `flow` marked `dscp`, 1000 bytes.
fn pkt(flow: u32, dscp: u8) -> Packet {
    let mut p = Packet::new(FlowId(flow), 1000);
    p.dscp = dscp;
    p
}

/// Runs the tree as a 100 Mbit/s link would for `secs`, each of `flows`
/// (flow id, its DSCP) kept backlogged from `start` on, and returns each
/// flow's bytes sent after `start` within windows of `window`: the link sends
/// whenever the tree gives a packet and waits for `wake_at` when it does not.
fn run(h: &mut Harness<Htb>, flows: &[(u32, u8, Time)], secs: u64, window: Dur) -> Vec<Vec<u64>> {
    let link = Rate::from_mbps(100);
    let end = h.now + Dur::from_secs(secs);
    let windows = (Dur::from_secs(secs).as_nanos() / window.as_nanos()) as usize;
    let mut sent = vec![vec![0u64; windows]; flows.len()];
    let mut queued = vec![0u32; flows.len()];
    let t0 = h.now;
    while h.now < end {
        for (i, &(flow, dscp, start)) in flows.iter().enumerate() {
            while h.now >= start && queued[i] < 20 {
                assert_eq!(h.offer_pkt(pkt(flow, dscp)), Verdict::Queued);
                queued[i] += 1;
            }
        }
        match h.dequeue() {
            Some(p) => {
                let i = flows.iter().position(|f| f.0 == p.flow.0).unwrap();
                queued[i] -= 1;
                let w = (h.now.saturating_since(t0).as_nanos() / window.as_nanos()) as usize;
                if w < windows {
                    sent[i][w] += p.size as u64;
                }
                h.advance(link.tx_time(p.size as u64));
            }
            None => {
                let t = h.q.wake_at().expect("packets wait: a wake-up");
                assert!(t > h.now);
                h.now = t;
            }
        }
    }
    sent
}

/// Mbit/s over the windows from `from` on.
fn mbps(windows: &[u64], from: usize, window: Dur) -> f64 {
    let bytes: u64 = windows[from..].iter().sum();
    bytes as f64 * 8.0 / (window.as_secs_f64() * (windows.len() - from) as f64) / 1e6
}

#[track_caller]
fn assert_near(got: f64, want: f64, what: &str) {
    assert!(
        (got - want).abs() <= want * 0.05,
        "{what}: {got:.3} Mbit/s, want {want} within 5%"
    );
}

const W: Dur = Dur::from_millis(100);

#[test]
fn each_class_gets_its_rate_when_all_are_backlogged() {
    let mut h = Harness::build(tree(
        None,
        vec![
            class("1:1", None, 10_000, 10_000),
            by_dscp(class("1:10", Some("1:1"), 3_000, 10_000), 10),
            by_dscp(class("1:20", Some("1:1"), 7_000, 10_000), 20),
        ],
    ));
    let sent = run(&mut h, &[(1, 10, Time::ZERO), (2, 20, Time::ZERO)], 3, W);
    assert_near(mbps(&sent[0], 0, W), 3.0, "1:10");
    assert_near(mbps(&sent[1], 0, W), 7.0, "1:20");
}

#[test]
fn a_class_borrows_up_to_its_ceil_when_the_others_are_idle_and_never_above() {
    let params = tree(
        None,
        vec![
            class("1:1", None, 10_000, 10_000),
            by_dscp(class("1:10", Some("1:1"), 2_000, 6_000), 10),
            by_dscp(class("1:20", Some("1:1"), 8_000, 10_000), 20),
        ],
    );
    let mut h = Harness::build(params.clone());
    let sent = run(&mut h, &[(1, 10, Time::ZERO)], 3, W);
    assert_near(mbps(&sent[0], 0, W), 6.0, "1:10 alone, ceil 6");
    // No 100 ms window above the ceil by more than its bursts (1600 bytes each).
    for (w, &b) in sent[0].iter().enumerate() {
        assert!(b <= 6_000_000 / 8 / 10 + 3200, "window {w}: {b} bytes");
    }
    let mut h = Harness::build(params);
    let sent = run(&mut h, &[(2, 20, Time::ZERO)], 3, W);
    assert_near(mbps(&sent[0], 0, W), 10.0, "1:20 alone, ceil 10");
}

#[test]
fn two_classes_under_one_parent_split_its_rate_by_their_rates() {
    // Each gets its own rate, and the parent's spare 8 Mbit/s goes by their
    // quanta (rate / r2q), 1:3 as their rates: 1 + 2 and 3 + 6.
    let mut h = Harness::build(tree(
        None,
        vec![
            class("1:1", None, 12_000, 12_000),
            by_dscp(class("1:10", Some("1:1"), 1_000, 12_000), 10),
            by_dscp(class("1:20", Some("1:1"), 3_000, 12_000), 20),
        ],
    ));
    let sent = run(&mut h, &[(1, 10, Time::ZERO), (2, 20, Time::ZERO)], 3, W);
    assert_near(mbps(&sent[0], 0, W), 3.0, "1:10");
    assert_near(mbps(&sent[1], 0, W), 9.0, "1:20");
}

#[test]
fn a_class_borrows_from_the_nearest_ancestor_before_prio_counts() {
    // 1:20 under 1:2 (4 Mbit/s), 1:30 beside 1:2 under the root, 1:30 first
    // by prio. Levels come before prio: 1:20 borrows 1:2's spare at level 6
    // before 1:30 borrows the root's at level 7, so 1:20 keeps 1:2's 4 and
    // 1:30, which alone borrows at level 7 (it is first there), has the rest.
    let mut h = Harness::build(tree(
        None,
        vec![
            class("1:1", None, 10_000, 10_000),
            class("1:2", Some("1:1"), 4_000, 10_000),
            HtbClass {
                prio: 1,
                ..by_dscp(class("1:20", Some("1:2"), 1_000, 10_000), 20)
            },
            by_dscp(class("1:30", Some("1:1"), 1_000, 10_000), 30),
        ],
    ));
    let sent = run(&mut h, &[(2, 20, Time::ZERO), (3, 30, Time::ZERO)], 3, W);
    assert_near(mbps(&sent[0], 0, W), 4.0, "1:20: its own 1 and 1:2's 3");
    assert_near(
        mbps(&sent[1], 0, W),
        6.0,
        "1:30: its 1 and the root's spare",
    );
}

#[test]
fn lower_prio_gets_the_spare_bandwidth_first() {
    let mut h = Harness::build(tree(
        None,
        vec![
            class("1:1", None, 10_000, 10_000),
            HtbClass {
                prio: 1,
                ..by_dscp(class("1:10", Some("1:1"), 2_000, 10_000), 10)
            },
            by_dscp(class("1:20", Some("1:1"), 2_000, 10_000), 20),
        ],
    ));
    let sent = run(&mut h, &[(1, 10, Time::ZERO), (2, 20, Time::ZERO)], 3, W);
    assert_near(mbps(&sent[0], 0, W), 2.0, "1:10, prio 1: its rate");
    assert_near(
        mbps(&sent[1], 0, W),
        8.0,
        "1:20, prio 0: its rate and the spare",
    );
}

/// Packets in each leaf, in the order the classes are written.
fn leaf_lens(h: &Harness<Htb>) -> Vec<usize> {
    h.q.qdisc().leaves.iter().map(|l| l.q.len()).collect()
}

#[test]
fn packets_go_to_the_first_matching_class_then_to_default() {
    let groups = vec!["bulk".to_string(), "voip".to_string()];
    let flows = [
        FlowClass {
            group: 1,
            ..FlowClass::new(FlowId(1), 0, 1.0)
        },
        FlowClass {
            group: 0,
            ..FlowClass::new(FlowId(2), 0, 1.0)
        },
    ];
    let link = LinkInfo::new(Rate::from_mbps(10))
        .with_flows(&flows)
        .with_groups(&groups);
    let voip = HtbClass {
        filter: Some(Filter {
            groups: vec!["voip".into()],
            dscp: vec![],
        }),
        ..class("1:10", Some("1:1"), 1_000, 10_000)
    };
    let params = tree(
        Some("1:30"),
        vec![
            class("1:1", None, 10_000, 10_000),
            voip,
            by_dscp(class("1:20", Some("1:1"), 1_000, 10_000), 46),
            class("1:30", Some("1:1"), 1_000, 10_000),
        ],
    );
    assert!(QdiscSpec::Htb(params.clone()).uses_flow_table());
    let mut h = Harness::build_for(params, &link);
    h.offer_pkt(pkt(1, 46)); // voip by group, before the DSCP filter
    h.offer_pkt(pkt(2, 46)); // bulk, EF: by DSCP
    h.offer_pkt(pkt(2, 0)); // neither: the default
    h.offer_pkt(pkt(7, 0)); // a flow the link did not announce: the default
    assert_eq!(leaf_lens(&h), vec![1, 1, 2]);
}

#[test]
fn without_a_default_unclassified_packets_go_direct_unshaped_and_first() {
    let mut params = tree(None, vec![by_dscp(class("1:10", None, 8, 8), 46)]);
    params.direct_qlen = 2;
    let mut h = Harness::build(params);
    let mut ef = pkt(1, 46);
    ef.tag = 1;
    h.offer_pkt(ef);
    for tag in 2..=4 {
        let mut p = pkt(2, 0);
        p.tag = tag;
        h.offer_pkt(p);
    }
    // direct_qlen 2: the third unclassified packet is dropped.
    assert_eq!(h.dropped_seqs(DropReason::Overflow), vec![4]);
    // The direct queue first, at once, then the class within its burst.
    assert_eq!(h.drain_seqs(), vec![2, 3, 1]);
}

#[test]
fn wake_at_is_when_the_next_packet_may_leave() {
    // 8 Mbit/s is a byte a microsecond; the bucket holds tc's 1600 bytes.
    let mut h = Harness::build(tree(Some("1:1"), vec![class("1:1", None, 8_000, 8_000)]));
    for seq in 0..3 {
        h.offer(1, seq);
    }
    assert!(h.dequeue().is_some()); // 1600 - 1000 = 600 us left
    assert!(h.dequeue().is_some()); // 600 >= 0 sends: -400 us
    assert!(h.dequeue().is_none());
    assert_eq!(h.q.wake_at(), Some(Time::from_nanos(400_000)));
    h.advance(Dur::from_micros(399));
    assert!(h.dequeue().is_none());
    assert_eq!(h.q.wake_at(), Some(Time::from_nanos(400_000)));
    h.advance(Dur::from_micros(1));
    assert!(h.dequeue().is_some());
    assert!(h.dequeue().is_none());
    assert_eq!(h.q.wake_at(), None, "empty: nothing to wake for");
}

#[test]
fn a_leafs_drops_reach_the_sink() {
    let leaf = HtbClass {
        // Linux's default leaf, a pfifo, of 2 packets.
        qdisc: Some(Box::new(crate::parts::tree::leaf_spec(None, 2))),
        ..class("1:10", None, 1_000, 1_000)
    };
    let mut h = Harness::build(tree(Some("1:10"), vec![leaf]));
    for seq in 0..3 {
        h.offer(1, seq);
    }
    assert_eq!(h.dropped_seqs(DropReason::Overflow), vec![2]);
    assert_eq!(h.q.len(), 2);
}

#[test]
fn the_trees_limit_bounds_all_leaves_and_the_direct_queue() {
    let mut params = tree(Some("1:10"), vec![class("1:10", None, 1_000, 1_000)]);
    params.limit = 3;
    let mut h = Harness::build(params);
    for seq in 0..5 {
        h.offer(1, seq);
    }
    assert_eq!(h.dropped_seqs(DropReason::Overflow), vec![3, 4]);
    assert_eq!(h.q.limit(), Limit::Packets(3));
}

#[test]
fn defaults_follow_tc_and_the_kernel() {
    let c = HtbClass::new("1:1", Rate::from_mbps(100));
    // q_htb.c: rate / get_hz() + mtu, get_hz() 10^9 on a high-resolution kernel.
    assert_eq!(c.burst(), 1600);
    assert_eq!(c.cburst(), 1600);
    assert_eq!(
        HtbClass::new("1:1", Rate::from_bps(80_000_000_000)).burst(),
        1610
    );
    // sch_htb.c: rate / r2q within 1000..=200000.
    assert_eq!(c.quantum(10), 200_000);
    assert_eq!(HtbClass::new("1:1", Rate::from_mbps(1)).quantum(10), 12_500);
    assert_eq!(HtbClass::new("1:1", Rate::from_kbps(64)).quantum(10), 1000);
}

#[test]
fn the_documented_example_parses() {
    let text = r#"
kind = "htb"
default = "1:20"
[[class]]
classid = "1:1"
rate = "100Mbit"
[[class]]
classid = "1:10"
parent = "1:1"
rate = "20Mbit"
ceil = "100Mbit"
prio = 1
qdisc = { kind = "fq_codel" }
filter = { groups = ["voip"], dscp = [46] }
[[class]]
classid = "1:20"
parent = "1:"
rate = "50Mbit"
"#;
    let spec: QdiscSpec = toml::from_str(text).unwrap();
    let QdiscSpec::Htb(p) = &spec else {
        panic!("{spec:?}")
    };
    assert_eq!(
        p.class[1].qdisc.as_deref().map(QdiscSpec::kind),
        Some("fq_codel")
    );
    assert!(spec.uses_flow_table());
    let groups = vec!["voip".to_string()];
    let link = LinkInfo::new(Rate::from_mbps(100)).with_groups(&groups);
    spec.build(&link).unwrap();
    // The group must exist where the scenario's groups are known.
    let others = vec!["web".to_string()];
    let e = spec
        .validate(&LinkInfo::new(Rate::from_mbps(100)).with_groups(&others))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "groups = voip (class 1:10) names no flow group of the scenario"
    );
}

#[test]
fn children_over_their_parents_ceil_are_a_warning_not_an_error() {
    let params = tree(
        None,
        vec![
            class("1:1", None, 100_000, 100_000),
            class("1:10", Some("1:1"), 70_000, 100_000),
            class("1:20", Some("1:1"), 50_000, 100_000),
        ],
    );
    assert!(params.validate().is_ok());
    assert_eq!(
        params.warnings(),
        vec!["class 1:1: children's rates (120Mbps) exceed its ceil (100Mbps)"]
    );
    assert!(tree(None, vec![class("1:1", None, 1, 1)])
        .warnings()
        .is_empty());
}

#[test]
fn bad_trees_are_errors_that_name_the_key_and_the_class() {
    let ok = || {
        tree(
            None,
            vec![
                class("1:1", None, 10_000, 10_000),
                class("1:10", Some("1:1"), 1_000, 10_000),
            ],
        )
    };
    let with = |f: &dyn Fn(&mut HtbParams)| {
        let mut p = ok();
        f(&mut p);
        rejection(p)
    };
    type Change<'a> = &'a dyn Fn(&mut HtbParams);
    let cases: Vec<(Change, &str)> = vec![
        (
            &|p| p.handle = "1:2".into(),
            "handle = 1:2 must be a qdisc handle `M:` (M in hex, not 0)",
        ),
        (
            &|p| p.class[1].classid = "2:10".into(),
            "classid = 2:10 must be `1:N` with N a nonzero hex minor (the qdisc's handle is 1:)",
        ),
        (
            &|p| p.class[1].classid = "1:1".into(),
            "classid = 1:1 is given twice",
        ),
        (
            &|p| p.class[1].parent = Some("1:5".into()),
            "parent = 1:5 (class 1:10) does not exist",
        ),
        (
            &|p| p.class[0].parent = Some("1:10".into()),
            "parent = 1:10 (class 1:1) makes a cycle",
        ),
        (
            &|p| p.class[0].qdisc = Some(Box::new(QdiscSpec::default())),
            "qdisc = droptail (class 1:1) is on a class with children: only leaves hold packets",
        ),
        (
            &|p| p.class[0].filter = Some(Filter::default()),
            "filter = {...} (class 1:1) is on a class with children: only leaves hold packets",
        ),
        (
            &|p| p.default = Some("1:1".into()),
            "default = 1:1 names no leaf class",
        ),
        (
            &|p| p.default = Some("1:99".into()),
            "default = 1:99 names no leaf class",
        ),
        (
            &|p| p.class[1].rate = Rate::from_bps(0),
            "rate = 0bps (class 1:10) must be positive",
        ),
        (
            &|p| p.class[1].ceil = Some(Rate::from_kbps(500)),
            "ceil = 500kbit (class 1:10) must be at least rate = 1Mbps",
        ),
        (
            &|p| p.class[1].prio = 8,
            "prio = 8 (class 1:10) must be 0..=7",
        ),
        (
            &|p| p.class[1].burst = Some(0),
            "burst = 0 (class 1:10) must be positive",
        ),
        (
            &|p| p.class[1].cburst = Some(0),
            "cburst = 0 (class 1:10) must be positive",
        ),
        (
            &|p| p.class[1].quantum = Some(0),
            "quantum = 0 (class 1:10) must be positive",
        ),
        (
            &|p| {
                p.class[1].filter = Some(Filter {
                    groups: vec![],
                    dscp: vec![Dscp(64)],
                })
            },
            "dscp = 64 (class 1:10) must be a DSCP, 0..=63",
        ),
        (
            &|p| {
                p.class[1].filter = Some(Filter {
                    groups: vec!["".into()],
                    dscp: vec![],
                })
            },
            "groups = \"\" (class 1:10) must name flow groups, not be empty",
        ),
        (
            &|p| p.class[1].qdisc = Some(Box::new(crate::parts::tree::leaf_spec(None, 0))),
            "qdisc = droptail (class 1:10): limit = 0 must be at least 1",
        ),
        (&|p| p.limit = 0, "limit = 0 must be at least 1"),
        (&|p| p.direct_qlen = 0, "direct_qlen = 0 must be at least 1"),
        (&|p| p.r2q = 0, "r2q = 0 must be at least 1"),
    ];
    for (change, message) in cases {
        assert_eq!(with(change), message);
    }
    // Eight levels at most (TC_HTB_MAXDEPTH).
    let mut deep = vec![class("1:1", None, 1_000, 1_000)];
    for i in 2..=9 {
        deep.push(class(
            &format!("1:{i}"),
            Some(&format!("1:{}", i - 1)),
            1_000,
            1_000,
        ));
    }
    assert_eq!(
        rejection(tree(None, deep)),
        "parent = 1:8 (class 1:9) is deeper than HTB's 8 levels (TC_HTB_MAXDEPTH)"
    );
}

#[test]
fn a_tree_reads_the_flow_table_when_a_filter_or_leaf_does() {
    let plain = tree(None, vec![class("1:1", None, 1_000, 1_000)]);
    assert!(!QdiscSpec::Htb(plain.clone()).uses_flow_table());
    let mut cake = plain.clone();
    cake.class[0].qdisc = Some(Box::new(QdiscSpec::Cake(Default::default())));
    assert!(QdiscSpec::Htb(cake).uses_flow_table());
    let mut by_dscp_only = plain;
    by_dscp_only.class[0] = by_dscp(by_dscp_only.class[0].clone(), 46);
    assert!(!QdiscSpec::Htb(by_dscp_only).uses_flow_table());
}
