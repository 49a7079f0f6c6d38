//! HTB's property-test configurations: trees whose leaves are qdiscs of other
//! kinds, so they name them (the runtime reaches leaves only through the
//! registry).

use super::{HtbClass, HtbParams};
use crate::any::QdiscSpec;
use crate::packet::Dscp;
use crate::parts::tree::Filter;
use crate::units::Rate;

/// Small trees that shape hard at the property tests' 10 Mbps: leaves of
/// several kinds (a shaper among them), a default, the direct queue, the
/// tree's own limit.
pub(super) fn property_configs() -> Vec<HtbParams> {
    let root = HtbClass::new("1:1", Rate::from_mbps(2));
    let leaf = |id: &str, rate: u64, ceil: u64, prio: u8, q: Option<QdiscSpec>| HtbClass {
        parent: Some("1:1".into()),
        ceil: Some(Rate::from_kbps(ceil)),
        prio,
        qdisc: q.map(Box::new),
        ..HtbClass::new(id, Rate::from_kbps(rate))
    };
    let fq_codel = QdiscSpec::FqCodel(crate::fq_codel::FqCodelParams {
        limit: 8,
        ..Default::default()
    });
    let red = QdiscSpec::Red(crate::red::RedParams {
        limit: 8,
        min_th: 2.0,
        max_th: 6.0,
        ecn: true,
        ..Default::default()
    });
    let pfifo = QdiscSpec::DropTail(crate::droptail::DropTailParams {
        limit: 4,
        ..Default::default()
    });
    let by_dscp0 = Filter {
        groups: vec![],
        dscp: vec![Dscp(0)],
    };
    vec![
        // Everything to the default, an fq_codel borrowing up to the root.
        HtbParams {
            default: Some("1:20".into()),
            class: vec![
                root.clone(),
                leaf("1:10", 500, 2000, 0, Some(red.clone())),
                leaf("1:20", 300, 1000, 1, Some(fq_codel.clone())),
            ],
            ..Default::default()
        },
        // A filter by DSCP to a RED leaf, small bursts, the rest direct.
        HtbParams {
            direct_qlen: 3,
            class: vec![
                root.clone(),
                HtbClass {
                    filter: Some(by_dscp0),
                    burst: Some(1500),
                    cburst: Some(3000),
                    ..leaf("1:10", 200, 800, 0, Some(red))
                },
                leaf("1:20", 300, 1000, 1, Some(fq_codel)),
            ],
            ..Default::default()
        },
        // No class takes anything: the direct queue alone.
        HtbParams {
            direct_qlen: 5,
            class: vec![root.clone(), leaf("1:10", 500, 500, 0, None)],
            ..Default::default()
        },
        // A shaper in the leaf (CAKE at 1 Mbit/s under a 5 Mbit/s class): the
        // tree lets it send and its own wake-up says when.
        HtbParams {
            default: Some("1:2".into()),
            class: vec![HtbClass {
                qdisc: Some(Box::new(QdiscSpec::Cake(crate::cake::CakeParams {
                    bandwidth: Some(Rate::from_mbps(1)),
                    limit: 10,
                    ..Default::default()
                }))),
                ..HtbClass::new("1:2", Rate::from_mbps(5))
            }],
            ..Default::default()
        },
        // The tree's limit below its leaf's, a pfifo leaf under two levels.
        HtbParams {
            handle: "a:".into(),
            default: Some("a:100".into()),
            limit: 3,
            class: vec![
                HtbClass::new("a:1", Rate::from_mbps(1)),
                HtbClass {
                    parent: Some("a:1".into()),
                    ceil: Some(Rate::from_mbps(1)),
                    ..HtbClass::new("a:10", Rate::from_kbps(400))
                },
                HtbClass {
                    parent: Some("a:10".into()),
                    ceil: Some(Rate::from_kbps(800)),
                    qdisc: Some(Box::new(pfifo)),
                    ..HtbClass::new("a:100", Rate::from_kbps(100))
                },
            ],
            ..Default::default()
        },
    ]
}
