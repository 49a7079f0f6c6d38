use super::*;
use crate::packet::FlowId;
use crate::parts::tree::IP_TOS2PRIO;
use crate::testing::{rejection, Harness};
use crate::Dscp;

fn pkt(flow: u32, dscp: u8, tag: u32) -> Packet {
    let mut p = Packet::new(FlowId(flow), 1000);
    p.dscp = dscp;
    p.tag = tag;
    p
}

fn band_lens(h: &Harness<Prio>) -> Vec<usize> {
    h.q.qdisc().leaves.iter().map(|q| q.len()).collect()
}

#[test]
fn band_0_is_always_served_first() {
    let mut h = Harness::build(PrioParams::default());
    // DSCP 0: priority 0, band 1; AF12 (12): priority 6, band 0; AF11 (10):
    // priority 2, band 2.
    h.offer_pkt(pkt(1, 10, 1));
    h.offer_pkt(pkt(1, 0, 2));
    h.offer_pkt(pkt(1, 12, 3));
    h.offer_pkt(pkt(1, 0, 4));
    assert_eq!(band_lens(&h), vec![1, 2, 1]);
    assert_eq!(h.dequeue().unwrap().tag, 3);
    h.offer_pkt(pkt(1, 12, 5));
    assert_eq!(h.drain_seqs(), vec![5, 2, 4, 1]);
}

/// Linux's `ip_tos2prio` as include/net/route.h names it, and the priority
/// `rt_tos2priority(dscp << 2)` gives each of the 64 DSCPs, written out.
#[test]
fn tos_to_band_is_linuxs_table_for_every_dscp() {
    const BESTEFFORT: u8 = 0;
    const BULK: u8 = 2;
    const INTERACTIVE_BULK: u8 = 4;
    const INTERACTIVE: u8 = 6;
    let linux = [
        BESTEFFORT,
        BESTEFFORT,
        BESTEFFORT,
        BESTEFFORT,
        BULK,
        BULK,
        BULK,
        BULK,
        INTERACTIVE,
        INTERACTIVE,
        INTERACTIVE,
        INTERACTIVE,
        INTERACTIVE_BULK,
        INTERACTIVE_BULK,
        INTERACTIVE_BULK,
        INTERACTIVE_BULK,
    ];
    assert_eq!(IP_TOS2PRIO, linux);
    // IPTOS_TOS_MASK (0x1e) keeps the DSCP's low three bits: 0, 0, 2, 2, 6, 6, 4, 4.
    #[rustfmt::skip]
    let priority: [u8; 64] = [
        0, 0, 2, 2, 6, 6, 4, 4,   0, 0, 2, 2, 6, 6, 4, 4,
        0, 0, 2, 2, 6, 6, 4, 4,   0, 0, 2, 2, 6, 6, 4, 4,
        0, 0, 2, 2, 6, 6, 4, 4,   0, 0, 2, 2, 6, 6, 4, 4,
        0, 0, 2, 2, 6, 6, 4, 4,   0, 0, 2, 2, 6, 6, 4, 4,
    ];
    let priomap = PrioParams::default().priomap;
    let mut h = Harness::build(PrioParams::default());
    for dscp in 0..64u8 {
        assert_eq!(dscp_priority(dscp), priority[dscp as usize], "DSCP {dscp}");
        let before = band_lens(&h);
        h.offer_pkt(pkt(1, dscp, dscp as u32));
        let band = (0..3).find(|&b| band_lens(&h)[b] > before[b]).unwrap();
        assert_eq!(
            band, priomap[priority[dscp as usize] as usize] as usize,
            "DSCP {dscp}"
        );
    }
    // EF (46) is priority 4 (interactive bulk), band 1; AF12 band 0; AF11
    // band 2; CS4 (32) band 1, as best effort: only the DSCP's low bits count.
    assert_eq!(priomap[dscp_priority(46) as usize], 1);
    assert_eq!(priomap[dscp_priority(12) as usize], 0);
    assert_eq!(priomap[dscp_priority(32) as usize], 1);
    assert_eq!(priomap[dscp_priority(10) as usize], 2);
}

#[test]
fn filters_override_the_priomap() {
    let groups = vec!["voip".to_string()];
    let flows = [crate::qdisc::FlowClass::new(FlowId(9), 0, 1.0)];
    let link = LinkInfo::new(Rate::from_mbps(10))
        .with_flows(&flows)
        .with_groups(&groups);
    let params = PrioParams {
        class: vec![
            PrioClass {
                classid: "1:3".into(),
                qdisc: None,
                filter: Some(Filter {
                    groups: vec![],
                    dscp: vec![Dscp(32)],
                }),
            },
            PrioClass {
                classid: "1:1".into(),
                qdisc: None,
                filter: Some(Filter {
                    groups: vec!["voip".into()],
                    dscp: vec![],
                }),
            },
        ],
        ..Default::default()
    };
    assert!(QdiscSpec::Prio(params.clone()).uses_flow_table());
    let mut h = Harness::build_for(params, &link);
    h.offer_pkt(pkt(1, 32, 1)); // CS4 would be band 1: the filter says 2
    h.offer_pkt(pkt(9, 0, 2)); // group voip: band 0
    h.offer_pkt(pkt(1, 0, 3)); // no filter: the priomap's band 1
    assert_eq!(band_lens(&h), vec![1, 1, 1]);
    assert_eq!(h.drain_seqs(), vec![2, 3, 1]);
}

#[test]
fn a_bands_qdisc_drops_through_the_sink_and_follows_the_link_rate() {
    let params = PrioParams {
        class: vec![PrioClass {
            classid: "1:2".into(),
            // A pfifo of one packet, Linux's default leaf.
            qdisc: Some(Box::new(crate::parts::tree::leaf_spec(None, 1))),
            filter: None,
        }],
        ..Default::default()
    };
    let mut h = Harness::build(params);
    h.offer_pkt(pkt(1, 0, 1));
    h.offer_pkt(pkt(1, 0, 2));
    assert_eq!(h.dropped_seqs(DropReason::Overflow), vec![2]);
    h.q.set_link_rate(Rate::from_mbps(1));
    assert_eq!(h.drain_seqs(), vec![1]);
}

#[test]
fn bad_parameters_are_errors_that_name_the_key() {
    let band = |id: &str| PrioClass {
        classid: id.into(),
        qdisc: None,
        filter: None,
    };
    let cases = [
        (PrioParams { bands: 1, ..Default::default() }, "bands = 1 must be 2..=16 (Linux's TCQ_MIN_PRIO_BANDS, TCQ_PRIO_BANDS)"),
        (PrioParams { bands: 17, ..Default::default() }, "bands = 17 must be 2..=16 (Linux's TCQ_MIN_PRIO_BANDS, TCQ_PRIO_BANDS)"),
        (PrioParams { bands: 2, ..Default::default() }, "priomap = 2 must name a band below bands = 2"),
        (PrioParams { priomap: vec![0; 15], ..Default::default() }, "priomap = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] must give a band for each of the 16 priorities"),
        (PrioParams { class: vec![band("1:4")], ..Default::default() }, "classid = 1:4 must name a band, minor 1..=3"),
        (PrioParams { class: vec![band("2:1")], ..Default::default() }, "classid = 2:1 must be `1:N` with N a nonzero hex minor (the qdisc's handle is 1:)"),
        (PrioParams { class: vec![band("1:1"), band("1:1")], ..Default::default() }, "classid = 1:1 is given twice"),
        (PrioParams { class: vec![PrioClass { filter: Some(Filter { groups: vec![], dscp: vec![Dscp(64)] }), ..band("1:1") }], ..Default::default() }, "dscp = 64 (class 1:1) must be a DSCP, 0..=63"),
        (PrioParams { class: vec![PrioClass { qdisc: Some(Box::new(crate::parts::tree::leaf_spec(None, 0))), ..band("1:2") }], ..Default::default() }, "qdisc = droptail (class 1:2): limit = 0 must be at least 1"),
        (PrioParams { limit: 0, ..Default::default() }, "limit = 0 must be at least 1"),
    ];
    for (params, message) in cases {
        assert_eq!(rejection(params), message);
    }
    // A group the scenario lacks, where its groups are known.
    let params = PrioParams {
        class: vec![PrioClass {
            filter: Some(Filter {
                groups: vec!["x".into()],
                dscp: vec![],
            }),
            ..band("1:1")
        }],
        ..Default::default()
    };
    let groups = ["web".to_string()];
    let link = LinkInfo::new(Rate::from_mbps(10)).with_groups(&groups);
    assert_eq!(
        params.validate_on(&link).unwrap_err().to_string(),
        "groups = x (class 1:1) names no flow group of the scenario"
    );
}
