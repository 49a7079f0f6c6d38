//! CAKE's tins: the DSCP maps are Linux's, each tin gets Linux's constants, a
//! tin within its threshold goes before the tins below it, a tin over its
//! threshold falls back to its share yet may use an idle link, and at DSCP 0
//! `diffserv3` is `besteffort` packet for packet.

use super::shaper::ByteTime;
use super::*;
use crate::packet::Ecn;
use crate::testing::Harness;

const EF: u8 = 46;
const CS1: u8 = 8;

fn cake(p: CakeParams) -> Harness<Cake> {
    Harness::build(p)
}

/// A backlogged flow: id, DSCP, packet size, packets kept queued.
#[derive(Copy, Clone)]
struct Backlog(u32, u8, u32, u32);

/// One flow's packets at fixed spacing: id, DSCP, size, gap.
#[derive(Copy, Clone)]
struct Paced(u32, u8, u32, Dur);

/// What left: each packet with its departure time.
struct Run {
    sent: Vec<(Packet, Time)>,
}

impl Run {
    /// Bytes of `flow` sent at or after `from`.
    fn bytes(&self, flow: u32, from: Time) -> u64 {
        self.sent
            .iter()
            .filter(|(p, t)| p.flow == FlowId(flow) && *t >= from)
            .map(|(p, _)| p.size as u64)
            .sum()
    }
    /// The largest queueing delay of `flow`'s packets.
    fn max_delay(&self, flow: u32) -> Dur {
        self.sent
            .iter()
            .filter(|(p, _)| p.flow == FlowId(flow))
            .map(|(p, t)| t.saturating_since(p.enqueued_at))
            .max()
            .expect("the flow sent packets")
    }
}

/// Drives CAKE onto a link of `link` until `end`: `backlog` flows kept queued,
/// `paced` flows arriving on their schedule.
fn drive(mut h: Harness<Cake>, link: Rate, backlog: &[Backlog], paced: &[Paced], end: Time) -> Run {
    let mut queued = vec![0u32; backlog.len()];
    let mut next: Vec<Time> = vec![Time::ZERO; paced.len()];
    let mut sent = Vec::new();
    let mut seen_drops = 0;
    let mut seq = 0;
    let mut busy_until = Time::ZERO;
    while h.now < end {
        for (i, p) in paced.iter().enumerate() {
            while next[i] <= h.now {
                let mut pkt = Packet::new(FlowId(p.0), p.2);
                pkt.dscp = p.1;
                pkt.tag = seq;
                seq += 1;
                h.offer_pkt(pkt);
                next[i] += p.3;
            }
        }
        for (i, b) in backlog.iter().enumerate() {
            while queued[i] < b.3 {
                let mut pkt = Packet::new(FlowId(b.0), b.2);
                pkt.dscp = b.1;
                pkt.ecn = Ecn::Ect;
                pkt.tag = seq;
                seq += 1;
                h.offer_pkt(pkt);
                queued[i] += 1;
            }
        }
        let sent_one = if h.now >= busy_until {
            h.dequeue().map(|p| {
                if let Some(i) = backlog.iter().position(|b| FlowId(b.0) == p.flow) {
                    queued[i] -= 1;
                }
                busy_until = h.now + link.tx_time(p.size as u64);
                sent.push((p, h.now));
            })
        } else {
            None
        };
        for (p, _) in &h.sink.drops[seen_drops..] {
            if let Some(i) = backlog.iter().position(|b| FlowId(b.0) == p.flow) {
                queued[i] -= 1;
            }
        }
        seen_drops = h.sink.drops.len();
        if sent_one.is_none() {
            let mut at = next.iter().copied().min().unwrap_or(end).min(end);
            if h.now < busy_until {
                at = at.min(busy_until);
            } else if let Some(w) = h.q.wake_at() {
                at = at.min(w);
            }
            h.now = at.max(h.now + Dur::from_nanos(1));
        } else {
            h.now = busy_until;
        }
    }
    Run { sent }
}

#[track_caller]
fn assert_share(got: u64, total: u64, want: f64, tol: f64, what: &str) {
    let share = got as f64 / total as f64;
    assert!(
        (share - want).abs() <= tol,
        "{what}: share {share:.4}, want {want:.4} ± {tol}"
    );
}

/// The codepoints by name, written from RFC 4594 / 8622 and sch_cake.c's class
/// lists rather than copied from its tables.
const LE: u8 = 1;
const TOS2: u8 = 2;
const TOS4: u8 = 4;
const CS2: u8 = 16;
const CS3: u8 = 24;
const CS4: u8 = 32;
const CS5: u8 = 40;
const VA: u8 = 44;
const CS6: u8 = 48;
const CS7: u8 = 56;
const AF1: [u8; 3] = [10, 12, 14];
const AF2: [u8; 3] = [18, 20, 22];
const AF3: [u8; 3] = [26, 28, 30];
const AF4: [u8; 3] = [34, 36, 38];

/// The tin each codepoint goes to: listed classes, everything else `rest`.
fn expected(classes: &[(usize, &[u8])], rest: usize) -> [usize; 64] {
    let mut m = [rest; 64];
    for (tin, dscps) in classes {
        for &d in *dscps {
            m[d as usize] = *tin;
        }
    }
    m
}

#[test]
fn the_dscp_maps_are_linuxs_for_all_64_codepoints() {
    let af = |a: [u8; 3], b: &[u8]| [&a[..], b].concat();
    let d3 = expected(&[(1, &[LE, CS1]), (2, &[TOS4, VA, EF, CS6, CS7])], 0);
    let video = [af(AF2, &[TOS4, CS2]), af(AF3, &[CS3]), AF4.to_vec()].concat();
    let d4 = expected(
        &[
            (1, &[LE, CS1]),
            (2, &video),
            (3, &[CS4, CS5, VA, EF, CS6, CS7]),
        ],
        0,
    );
    let d8 = expected(
        &[
            (0, &[LE]),
            (1, &af(AF1, &[TOS2, CS1])),
            (3, &[af(AF3, &[CS3]), AF4.to_vec()].concat()),
            (4, &af(AF2, &[TOS4])),
            (5, &[CS2]),
            (6, &[CS4, CS5, VA, EF]),
            (7, &[CS6, CS7]),
        ],
        2,
    );
    for d in 0..64u8 {
        let i = d as usize;
        assert_eq!(Diffserv::Diffserv3.tin(d), d3[i], "diffserv3, DSCP {d}");
        assert_eq!(Diffserv::Diffserv4.tin(d), d4[i], "diffserv4, DSCP {d}");
        assert_eq!(Diffserv::Diffserv8.tin(d), d8[i], "diffserv8, DSCP {d}");
        assert_eq!(Diffserv::Precedence.tin(d), i >> 3, "precedence, DSCP {d}");
        assert_eq!(Diffserv::Besteffort.tin(d), 0, "besteffort, DSCP {d}");
    }
}

#[test]
fn besteffort_puts_every_codepoint_in_one_tin() {
    let mut h = cake(CakeParams {
        diffserv: Diffserv::Besteffort,
        ..Default::default()
    });
    for d in 0..64u8 {
        let mut p = Packet::new(FlowId(d as u32), 100);
        p.dscp = d;
        h.offer_pkt(p);
    }
    let c = h.q.qdisc();
    assert_eq!(c.tin_count(), 1);
    assert_eq!(c.tin_bytes(0), 6400);
}

#[test]
fn each_tin_gets_linuxs_threshold_weight_and_constants() {
    let shaped = |diffserv| {
        cake(CakeParams {
            diffserv,
            bandwidth: Some(Rate::from_mbps(10)),
            ..Default::default()
        })
    };
    let r = 1_250_000u64; // 10 Mbit/s in bytes per second
    let h = shaped(Diffserv::Diffserv3);
    let c = h.q.qdisc();
    assert_eq!(
        c.tin_config(0),
        (r, 305, 1024),
        "best effort: rate >> 12 bytes"
    );
    assert_eq!(
        c.tin_config(1),
        (r >> 4, 300, 64),
        "bulk: the 300-byte floor"
    );
    assert_eq!(c.tin_config(2), (r >> 2, 300, 256));
    // The bulk tin's MTU takes 19 ms at its threshold: target and interval grow.
    let bulk = c.tin_cobalt_params(1);
    assert_eq!(bulk.mtu_time, ByteTime::new(r >> 4).duration(MTU));
    assert_eq!(bulk.target, bulk.mtu_time * 3 / 2);
    assert_eq!(bulk.interval, 100_000_000 + bulk.target - 5_000_000);
    assert_eq!(c.tin_cobalt_params(0).target, 5_000_000);
    let h = shaped(Diffserv::Diffserv4);
    let rates: Vec<u64> = (0..4).map(|t| h.q.qdisc().tin_config(t).0).collect();
    assert_eq!(rates, [r, r >> 4, r >> 1, r >> 2]);
    let quanta: Vec<u16> = (0..4).map(|t| h.q.qdisc().tin_config(t).2).collect();
    assert_eq!(quanta, [1024, 64, 512, 256]);
    // diffserv8 and precedence: each tin 7/8 of the one below.
    for mode in [Diffserv::Diffserv8, Diffserv::Precedence] {
        let h = shaped(mode);
        let quanta: Vec<u16> = (0..8).map(|t| h.q.qdisc().tin_config(t).2).collect();
        assert_eq!(quanta, [256, 224, 196, 171, 149, 130, 113, 98]);
        assert_eq!(h.q.qdisc().tin_config(1).0, r * 7 / 8);
        // 1250000 times 7/8 seven times, rounding down each time.
        assert_eq!(h.q.qdisc().tin_config(7).0, 490_868);
    }
    // Unshaped, Linux gives no tin a threshold: the default constants for all.
    let h = cake(CakeParams::default());
    for t in 0..3 {
        assert_eq!(h.q.qdisc().tin_config(t).0, 0);
        assert_eq!(h.q.qdisc().tin_config(t).1, 1514);
        assert_eq!(h.q.qdisc().tin_cobalt_params(t).target, 5_000_000);
    }
}

#[test]
fn voice_within_its_threshold_goes_before_best_effort_backlog() {
    // Eight bulk best-effort flows and a 2 Mbit/s EF flow on a 10 Mbit/s link:
    // EF is under its tin's quarter of the rate, so each of its packets waits
    // at most for the packet on the wire. In one tin, it is one flow of nine,
    // over its fair share, and queues.
    let link = Rate::from_mbps(10);
    let be: Vec<Backlog> = (1..=8).map(|f| Backlog(f, 0, 1500, 20)).collect();
    let voice = [Paced(9, EF, 1000, Dur::from_millis(4))];
    let one_packet = link.tx_time(1500);
    for diffserv in [Diffserv::Diffserv3, Diffserv::Diffserv4] {
        let h = cake(CakeParams {
            diffserv,
            bandwidth: Some(link),
            ..Default::default()
        });
        let r = drive(h, link, &be, &voice, Time::from_secs(2));
        let d = r.max_delay(9);
        assert!(d <= one_packet, "{diffserv:?}: EF waited {d}");
    }
    let h = cake(CakeParams {
        diffserv: Diffserv::Besteffort,
        bandwidth: Some(link),
        ..Default::default()
    });
    let r = drive(h, link, &be, &voice, Time::from_secs(2));
    assert!(
        r.max_delay(9) > one_packet.saturating_mul(2),
        "in one tin EF queues: {}",
        r.max_delay(9)
    );
}

#[test]
fn a_tin_over_its_threshold_falls_back_to_its_share_but_may_use_an_idle_link() {
    let link = Rate::from_mbps(10);
    let warm = Time::from_secs(1);
    let end = Time::from_secs(3);
    let shaped = CakeParams {
        bandwidth: Some(link),
        ..Default::default()
    };
    // Saturating bulk (CS1) against saturating best effort: bulk gets its 1/16.
    let flows = [Backlog(1, CS1, 1500, 20), Backlog(2, 0, 1500, 20)];
    let r = drive(cake(shaped.clone()), link, &flows, &[], end);
    let (bulk, be) = (r.bytes(1, warm), r.bytes(2, warm));
    assert_share(
        bulk,
        bulk + be,
        1.0 / 16.0,
        0.01,
        "shaped bulk vs best effort",
    );
    // Saturating EF against best effort: voice is held to its quarter.
    let flows = [Backlog(1, EF, 1500, 20), Backlog(2, 0, 1500, 20)];
    let r = drive(cake(shaped.clone()), link, &flows, &[], end);
    let (voice, be) = (r.bytes(1, warm), r.bytes(2, warm));
    assert_share(voice, voice + be, 0.25, 0.01, "shaped voice vs best effort");
    // Alone, bulk fills the shaped link: the tins are work conserving.
    let flows = [Backlog(1, CS1, 1500, 20)];
    let r = drive(cake(shaped), link, &flows, &[], end);
    let secs = (end.as_secs_f64() - warm.as_secs_f64()) as u64;
    assert_share(
        r.bytes(1, warm),
        link.bps() / 8 * secs,
        1.0,
        0.01,
        "bulk alone",
    );
    // Unshaped, the tins share by their DRR weights: bulk 64 to best effort 1024.
    let flows = [Backlog(1, CS1, 1500, 20), Backlog(2, 0, 1500, 20)];
    let r = drive(cake(CakeParams::default()), link, &flows, &[], end);
    let (bulk, be) = (r.bytes(1, warm), r.bytes(2, warm));
    assert_share(bulk, bulk + be, 64.0 / 1088.0, 0.01, "unshaped bulk");
    let flows = [Backlog(1, CS1, 1500, 20)];
    let r = drive(cake(CakeParams::default()), link, &flows, &[], end);
    assert_share(
        r.bytes(1, warm),
        link.bps() / 8 * secs,
        1.0,
        0.01,
        "unshaped bulk alone",
    );
}

/// Dequeues and drops, in order, of a mixed workload (sizes, ECN, an
/// overflowing limit) with every packet at DSCP 0.
fn trace(p: CakeParams) -> Vec<(u32, Option<Ecn>, Time)> {
    let mut h = cake(p);
    let mut out = Vec::new();
    let mut seen = 0;
    let mut seq = 0u32;
    while h.now < Time::from_secs(2) {
        if seq < 20_000 {
            for f in 0..(1 + seq % 4) {
                let mut pkt = Packet::new(FlowId(f % 7), 100 + (seq * 37) % 1400);
                pkt.ecn = if f % 2 == 0 { Ecn::Ect } else { Ecn::NotEct };
                pkt.tag = seq;
                seq += 1;
                h.offer_pkt(pkt);
            }
        }
        match h.dequeue() {
            Some(p) => {
                out.push((p.tag, Some(p.ecn), h.now));
                h.now += Rate::from_mbps(8).tx_time(p.size as u64);
            }
            None => {
                h.now = h.q.wake_at().unwrap_or(h.now + Dur::from_micros(300));
            }
        }
        for (p, _) in &h.sink.drops[seen..] {
            out.push((p.tag, None, h.now));
        }
        seen = h.sink.drops.len();
    }
    out
}

#[test]
fn diffserv3_at_dscp_0_is_besteffort_packet_for_packet() {
    let base = [
        CakeParams {
            limit: 60,
            ..Default::default()
        },
        CakeParams {
            limit: 60,
            bandwidth: Some(Rate::from_mbps(6)),
            ingress: true,
            ..Default::default()
        },
        CakeParams {
            memlimit: Some(20_000),
            bandwidth: Some(Rate::from_mbps(3)),
            isolation: Isolation::Flows,
            ..Default::default()
        },
    ];
    for p in base {
        let be = trace(CakeParams {
            diffserv: Diffserv::Besteffort,
            ..p.clone()
        });
        let d3 = trace(CakeParams {
            diffserv: Diffserv::Diffserv3,
            ..p.clone()
        });
        assert!(be.len() > 1000);
        assert_eq!(be, d3, "{p:?}");
    }
}

#[test]
fn wash_clears_the_dscp_after_the_tin_is_chosen() {
    let mut h = cake(CakeParams {
        wash: true,
        ..Default::default()
    });
    let mut p = Packet::new(FlowId(1), 500);
    p.dscp = EF;
    h.offer_pkt(p);
    assert_eq!(h.q.qdisc().tin_bytes(2), 500, "classified as EF");
    assert_eq!(h.dequeue().unwrap().dscp, 0);
}

#[test]
fn the_mode_is_read_as_tc_spells_it_and_a_bad_one_names_the_key() {
    let p: CakeParams = toml::from_str("diffserv = \"diffserv4\"").unwrap();
    assert_eq!(p.diffserv, Diffserv::Diffserv4);
    let p: CakeParams = toml::from_str("diffserv = \"besteffort\"").unwrap();
    assert_eq!(p.diffserv, Diffserv::Besteffort);
    assert_eq!(CakeParams::default().diffserv, Diffserv::Diffserv3);
    let e = toml::from_str::<CakeParams>("diffserv = \"diffserv5\"")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("diffserv") && e.contains("unknown variant"),
        "{e}"
    );
}
