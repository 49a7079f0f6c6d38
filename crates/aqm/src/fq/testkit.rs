//! Helpers for the family's unit tests: build a `wfq` or `drr` from its TOML, as a
//! scenario would, with a flow table, and look inside it.

use super::buffer::Buffer;
use super::classes::Classes;
use crate::any::{AnyQdisc, QdiscSpec};
use crate::packet::{FlowId, Packet};
use crate::qdisc::{FlowClass, LinkInfo, Verdict};
use crate::testing::Harness;
use crate::units::Rate;

/// 8 Mbps: a 1000-byte packet takes 1 ms.
pub const RATE: Rate = Rate::from_mbps(8);

/// Builds the qdisc `config` describes for a link announcing `flows`.
#[track_caller]
pub fn build(config: &str, flows: &[FlowClass]) -> Harness<AnyQdisc> {
    let spec: QdiscSpec = toml::from_str(config).unwrap();
    let link = LinkInfo::new(RATE).with_flows(flows);
    Harness::new(spec.build(&link).unwrap())
}

/// The error building `config` gives.
#[track_caller]
pub fn error(config: &str) -> String {
    let spec: QdiscSpec = toml::from_str(config).unwrap();
    spec.build(&LinkInfo::new(RATE)).unwrap_err().to_string()
}

/// `n` flows per aggregate, aggregates `aggs`, every flow of weight 1; flow ids
/// are `agg * 100 + i`.
pub fn table(aggs: &[u32], n: u32) -> Vec<FlowClass> {
    aggs.iter()
        .flat_map(|&a| (0..n).map(move |i| FlowClass::new(FlowId(a * 100 + i), a, 1.0)))
        .collect()
}

/// Offers a packet of `flow` in aggregate `agg`, tagged `seq`.
#[track_caller]
pub fn offer(h: &mut Harness<AnyQdisc>, flow: u32, agg: u32, size: u32, seq: u32) -> Verdict {
    let mut p = Packet::new(FlowId(flow), size);
    p.aggregate = agg;
    p.tag = seq;
    h.offer_pkt(p)
}

/// The class table and buffer manager inside a `wfq` or `drr`.
pub fn inside(q: &AnyQdisc) -> (&Classes, &Buffer) {
    match q {
        AnyQdisc::Wfq(q) => (q.classes(), q.buffer()),
        AnyQdisc::Drr(q) => (q.classes(), q.buffer()),
        other => panic!("not a fair queue: {}", other.kind()),
    }
}

/// Keeps each class of `aggs` (key, flows, weight) backlogged with at least
/// `keep` bytes of `sizes[i]`-byte packets and lets the link send `steps`
/// packets, at the link's rate. A key is an aggregate whose flows send in turn,
/// or with 0 flows a flow of aggregate 0. After every departure, checks that the
/// bytes sent divided by the weight differ between any two classes by no more
/// than one packet of each plus `slack`, and returns the bytes sent.
pub fn backlogged(
    h: &mut Harness<AnyQdisc>,
    aggs: &[(u32, u32, f64)],
    sizes: &[u32],
    keep: u64,
    steps: usize,
    slack: f64,
) -> Vec<u64> {
    let mut sent = vec![0u64; aggs.len()];
    let mut seq = 0;
    for _ in 0..steps {
        for (i, &(agg, flows, _)) in aggs.iter().enumerate() {
            while (class_len(h, agg) as u64) * (sizes[i] as u64) < keep {
                seq += 1;
                match flows {
                    0 => offer(h, agg, 0, sizes[i], seq),
                    n => offer(h, agg * 100 + seq % n, agg, sizes[i], seq),
                };
            }
        }
        let p = h.dequeue().unwrap();
        let key = if aggs[0].1 == 0 {
            p.flow.0
        } else {
            p.aggregate
        };
        let i = aggs.iter().position(|a| a.0 == key).unwrap();
        sent[i] += p.size as u64;
        h.advance(RATE.tx_time(p.size as u64));
        for i in 0..aggs.len() {
            for j in 0..i {
                let (wi, wj) = (aggs[i].2, aggs[j].2);
                let gap = (sent[i] as f64 / wi - sent[j] as f64 / wj).abs();
                let bound = slack + sizes[i] as f64 / wi + sizes[j] as f64 / wj;
                assert!(gap <= bound + 1e-6, "gap {gap} > {bound}: sent {sent:?}");
            }
        }
    }
    assert_eq!(h.q.counts().total_drops(), 0);
    sent
}

/// Packets queued for class `key`.
pub fn class_len(h: &Harness<AnyQdisc>, key: u32) -> usize {
    let (c, _) = inside(h.q.qdisc());
    c.find(key).map_or(0, |id| c.len_of(id))
}
