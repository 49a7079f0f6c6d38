//! With `queue_protection` off (its default), DualPI2 decides exactly as it did
//! before queue protection existed: every verdict, departure (flow, tag, ECN) and
//! drop or mark reason on a random workload hashes to the value the code of
//! commit 6d3afc5 gave. This file uses only what that commit had, so it runs
//! unchanged on both.

use aqm::dualpi2::DualPi2Params;
use aqm::testing::Harness;
use aqm::{Dur, Ecn, FlowId, LinkInfo, Packet, Rate};
use rand::{Rng, SeedableRng};

/// The hash of 200,000 steps of random arrivals of every ECN codepoint and size
/// and random departures, on a 100 Mb/s link.
fn fingerprint(params: DualPi2Params) -> u64 {
    let link = LinkInfo::with_seed(Rate::from_mbps(100), 11);
    let mut h = Harness::build_for(params, &link);
    let mut r = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(5);
    let mut acc: u64 = 0;
    let mut mix = |v: u64| acc = aqm::rng::mix64(acc ^ v);
    for i in 0..200_000u32 {
        let flow = r.gen_range(0..8);
        let ecn = [Ecn::NotEct, Ecn::Ect, Ecn::Ect1, Ecn::Ce][r.gen_range(0..4)];
        for _ in 0..r.gen_range(0..3) {
            let mut p = Packet::new(FlowId(flow), r.gen_range(64..1515));
            p.ecn = ecn;
            p.tag = i;
            mix(h.offer_pkt(p) as u64);
        }
        if r.gen_bool(0.6) {
            if let Some(p) = h.dequeue() {
                mix(((p.flow.0 as u64) << 40) ^ ((p.tag as u64) << 8) ^ p.ecn.bits() as u64);
            }
        }
        h.advance(Dur::from_micros(r.gen_range(1..400)));
    }
    for (p, reason) in h.sink.drops.iter().chain(h.sink.marks.iter()) {
        mix(((p.tag as u64) << 8) ^ reason.index() as u64);
    }
    acc
}

#[test]
fn with_queue_protection_off_every_decision_is_as_before() {
    let tiny = DualPi2Params {
        limit: 40,
        step_thresh: Some(Dur::from_micros(300)),
        ..Default::default()
    };
    let got = [fingerprint(DualPi2Params::default()), fingerprint(tiny)];
    assert_eq!(got, [1_337_504_712_409_370_002, 1_448_761_685_196_876_603]);
    // The hash sees decisions: another coupling factor changes it.
    let nudged = DualPi2Params {
        coupling_factor: 3,
        ..Default::default()
    };
    assert_ne!(fingerprint(nudged), got[0]);
}
