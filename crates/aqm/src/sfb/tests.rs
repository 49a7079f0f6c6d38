//! SFB against its paper: an unresponsive flow rate-limited while responsive
//! sharers of its bins are spared, the double-buffered moving hash, ECN marks.

use super::*;
use crate::testing::{rejection, Harness, TEST_LINK};

/// A traffic source for the scripted runs below.
#[derive(Clone, Debug)]
enum Source {
    /// Unresponsive: one packet every `interval`, whatever happens to them.
    Cbr {
        flow: u32,
        interval: Dur,
        next: Time,
    },
    /// Responsive (a crude window): keeps `window` packets in the queue,
    /// offering one more whenever fewer are there.
    Window { flow: u32, window: u32, queued: u32 },
    /// Responsive and light (a window of one over a round trip): offers a
    /// packet, then waits until `rtt` after it left (or was dropped or
    /// marked) before the next.
    Light {
        flow: u32,
        rtt: Dur,
        ready: Time,
        queued: bool,
    },
}

impl Source {
    fn flow(&self) -> u32 {
        match *self {
            Source::Cbr { flow, .. } | Source::Window { flow, .. } | Source::Light { flow, .. } => {
                flow
            }
        }
    }
}

/// A link draining the queue at a fixed packet rate, fed by `sources`.
struct Sim {
    h: Harness<Sfb>,
    sources: Vec<Source>,
    tx_interval: Dur,
    next_tx: Time,
    /// Departures per source.
    departed: Vec<u64>,
    seq: u32,
}

const STEP: Dur = Dur::from_micros(100);

impl Sim {
    fn new(params: SfbParams, sources: Vec<Source>, link_pps: u64) -> Self {
        Sim {
            h: Harness::build(params),
            departed: vec![0; sources.len()],
            sources,
            tx_interval: Dur::from_nanos(1_000_000_000 / link_pps),
            next_tx: Time::ZERO,
            seq: 0,
        }
    }

    fn run_until(&mut self, end: Time) {
        while self.h.now < end {
            let now = self.h.now;
            for i in 0..self.sources.len() {
                match &mut self.sources[i] {
                    Source::Cbr {
                        flow,
                        interval,
                        next,
                    } => {
                        while *next <= now {
                            *next += *interval;
                            self.seq += 1;
                            let f = *flow;
                            self.h.offer(f, self.seq);
                        }
                    }
                    Source::Window {
                        flow,
                        window,
                        queued,
                    } => {
                        if *queued < *window {
                            self.seq += 1;
                            let f = *flow;
                            if self.h.offer(f, self.seq) == Verdict::Queued {
                                if let Source::Window { queued, .. } = &mut self.sources[i] {
                                    *queued += 1;
                                }
                            }
                        }
                    }
                    Source::Light {
                        flow,
                        rtt,
                        ready,
                        queued,
                    } => {
                        if !*queued && *ready <= now {
                            self.seq += 1;
                            let (f, rtt) = (*flow, *rtt);
                            let verdict = self.h.offer(f, self.seq);
                            if let Source::Light { ready, queued, .. } = &mut self.sources[i] {
                                if verdict == Verdict::Queued {
                                    *queued = true;
                                } else {
                                    *ready = now + rtt;
                                }
                            }
                        }
                    }
                }
            }
            while self.next_tx <= now {
                match self.h.dequeue() {
                    Some(p) => {
                        self.next_tx += self.tx_interval;
                        for (i, s) in self.sources.iter_mut().enumerate() {
                            if s.flow() == p.flow.0 {
                                self.departed[i] += 1;
                                match s {
                                    Source::Window { queued, .. } => *queued -= 1,
                                    Source::Light {
                                        rtt, ready, queued, ..
                                    } => {
                                        *queued = false;
                                        *ready = now + *rtt;
                                    }
                                    Source::Cbr { .. } => {}
                                }
                            }
                        }
                    }
                    None => self.next_tx = now + self.tx_interval,
                }
            }
            self.h.advance(STEP);
        }
    }

    fn sfb(&self) -> &Sfb {
        self.h.q.qdisc()
    }
}

/// `count` flows sharing `a`'s bin at `level` and no other bin, none in
/// `exclude`.
fn sharers_of(q: &Sfb, a: u32, level: usize, count: usize, exclude: &[u32]) -> Vec<u32> {
    (1000..)
        .filter(|&f| {
            (0..q.params.levels as usize)
                .all(|l| (q.bin_of(FlowId(f), l) == q.bin_of(FlowId(a), l)) == (l == level))
                && !exclude.contains(&f)
        })
        .take(count)
        .collect()
}

const A: u32 = 7;

/// The paper's situation in miniature, on a 10 Mbps link of 1000-byte packets
/// (1250 packets/s): one unresponsive flow `A` at 20 Mbps, and at each level
/// four responsive flows that share `A`'s bin there and nowhere else (so each
/// has a clean bin), each keeping 4 packets queued. Returns the sim and the
/// sharers, level 0's first.
fn scenario(params: SfbParams) -> (Sim, Vec<u32>) {
    let probe = Sfb::new(params.clone(), &TEST_LINK).unwrap();
    let mut sharers = Vec::new();
    for l in 0..params.levels as usize {
        let found = sharers_of(&probe, A, l, 4, &sharers);
        sharers.extend(found);
    }
    let mut sources = vec![Source::Cbr {
        flow: A,
        interval: Dur::from_micros(400),
        next: Time::ZERO,
    }];
    sources.extend(sharers.iter().map(|&flow| Source::Window {
        flow,
        window: 4,
        queued: 0,
    }));
    (Sim::new(params, sources, 1250), sharers)
}

/// Departures per source between now and `until`.
fn departures_until(sim: &mut Sim, until: Time) -> Vec<u64> {
    let before = sim.departed.clone();
    sim.run_until(until);
    sim.departed
        .iter()
        .zip(&before)
        .map(|(x, y)| x - y)
        .collect()
}

#[test]
fn rate_limits_an_unresponsive_flow_and_spares_a_flow_with_one_clean_bin() {
    let (mut sim, sharers) = scenario(SfbParams::default());
    sim.run_until(Time::from_secs(5));
    let q = sim.sfb();
    let a = FlowId(A);
    assert!(q.is_rate_limited(a), "pmin(A) = {}", q.pmin(a));
    let polluted = q.polluted_bins();
    for (l, bins) in polluted.iter().enumerate() {
        assert!(bins.contains(&q.bin_of(a, l)), "{polluted:?}");
    }
    // B shares A's level-0 bin (polluted) but has a clean one.
    let b = FlowId(sharers[0]);
    assert_eq!(q.bin_of(b, 0), q.bin_of(a, 0));
    assert_ne!(q.bin_of(b, 1), q.bin_of(a, 1));
    assert!(q.pmin(b) < 0.5, "pmin(B) = {}", q.pmin(b));
    for &s in &sharers {
        assert!(!q.is_rate_limited(FlowId(s)));
    }
    // Over the next 10 s, A gets about rate_limit = 0.16 Mbps = 20 packets/s
    // (plus at most one 20-packet burst), far below its 2500 packets/s, and
    // the responsive flows share the rest of the link.
    let got = departures_until(&mut sim, Time::from_secs(15));
    assert!((180..=225).contains(&got[0]), "A departed {got:?}");
    assert!(got[1] > 1_000, "B departed {got:?}");
    let link: u64 = got.iter().sum();
    assert!(link > 12_000, "the link stays busy: {got:?}");
    assert!(sim.h.drops(DropReason::RateLimit) > 20_000);
}

/// Table I's failure (REPRODUCTION.md, "SFB paper (000)") in miniature. In the
/// 45 Mbps run, 51,409 of the 52,451 decrements of the CBR flow's bins came
/// from its own arrivals (nearly all then dropped) finding the bins empty, and
/// only 1,042 from other flows: once anything moved its pmin one step below 1,
/// the penalty box no longer applied and its own arrivals pulled pm down at
/// its full arrival rate. Here: `A` drives its bins to 1, a sharer finds one
/// empty, then 1000 arrivals of `A` each find its bins empty. A bin is now
/// lowered only when a departure empties it, so `A`'s dropped arrivals cannot
/// free it.
#[test]
fn own_dropped_arrivals_do_not_free_a_flow_from_the_penalty_box() {
    let mut h = Harness::build(SfbParams::default());
    let sharer = sharers_of(h.q.qdisc(), A, 0, 1, &[])[0];
    let mut seq = 0;
    // 13 packets fill both bins; 400 more raise them to 1 (and are dropped).
    for _ in 0..413 {
        seq += 1;
        h.offer(A, seq);
    }
    assert!(h.q.qdisc().is_rate_limited(FlowId(A)));
    h.drain_seqs();
    seq += 1;
    h.offer(sharer, seq);
    h.drain_seqs();
    let mut admitted = 0;
    for _ in 0..1000 {
        seq += 1;
        if h.offer(A, seq) == Verdict::Queued {
            admitted += 1;
        }
        h.drain_seqs();
    }
    let pmin = h.q.qdisc().pmin(FlowId(A));
    assert!(pmin > 0.99, "pmin(A) = {pmin}, {admitted} admitted");
    // The rate limiter's burst (20 packets) and a few pmin < 1 admissions.
    assert!(admitted <= 25, "pmin(A) = {pmin}, {admitted} admitted");
}

/// The case that leaked in Table I without ECN (REPRODUCTION.md, "SFB paper
/// (000)"): `A` at twice the link shares each of its bins with 16 light
/// responsive flows (one packet per 50 ms round trip, each with a clean bin at
/// the other level), and 16 flows with no bin in common with `A` keep the link
/// busy. Every departure that empties one of `A`'s bins lowers its `pm`, and
/// one step below 1 takes `A` out of the penalty box; with the lowering on
/// emptying `A` stays at `rate_limit`. (A regression test: this scripted case
/// does not reproduce the full scenario's leak, which needs TCP's dynamics.)
#[test]
fn light_sharers_do_not_free_an_unresponsive_flow_from_the_penalty_box() {
    let params = SfbParams::default();
    let probe = Sfb::new(params.clone(), &TEST_LINK).unwrap();
    let mut light = Vec::new();
    for l in 0..params.levels as usize {
        let found = sharers_of(&probe, A, l, 16, &light);
        light.extend(found);
    }
    let busy: Vec<u32> = (2000..)
        .filter(|&f| {
            (0..params.levels as usize)
                .all(|l| probe.bin_of(FlowId(f), l) != probe.bin_of(FlowId(A), l))
        })
        .take(16)
        .collect();
    let mut sources = vec![Source::Cbr {
        flow: A,
        interval: Dur::from_micros(400),
        next: Time::ZERO,
    }];
    sources.extend(light.iter().map(|&flow| Source::Light {
        flow,
        rtt: Dur::from_millis(50),
        ready: Time::ZERO,
        queued: false,
    }));
    sources.extend(busy.iter().map(|&flow| Source::Window {
        flow,
        window: 4,
        queued: 0,
    }));
    let mut sim = Sim::new(params, sources, 1250);
    sim.run_until(Time::from_secs(5));
    assert!(
        sim.sfb().is_rate_limited(FlowId(A)),
        "pmin(A) = {}",
        sim.sfb().pmin(FlowId(A))
    );
    let got = departures_until(&mut sim, Time::from_secs(15));
    let pmin = sim.sfb().pmin(FlowId(A));
    // rate_limit = 20 packets/s for 10 s, plus one 20-packet burst.
    assert!(
        got[0] <= 225,
        "A departed {} in 10 s, pmin(A) = {pmin}",
        got[0]
    );
    // The light flows are not rate-limited: each sends one packet per round
    // trip plus queueing (about 85 in 10 s), far above rate_limit's share.
    let light_min = got[1..=light.len()].iter().min().unwrap();
    assert!(*light_min > 60, "{got:?}");
    assert!(light.iter().all(|&f| !sim.sfb().is_rate_limited(FlowId(f))));
}

#[test]
fn double_buffered_hash_keeps_the_flow_rate_limited_across_the_swap() {
    let mut after_swap = Vec::new();
    for hash in [HashMode::Moving, HashMode::DoubleBuffered] {
        let (mut sim, _) = scenario(SfbParams {
            hash,
            ..Default::default()
        });
        sim.run_until(Time::from_nanos(1_990_000_000));
        let q = sim.sfb();
        assert!(
            q.is_rate_limited(FlowId(A)),
            "{hash:?}: learned in period 1"
        );
        if hash == HashMode::DoubleBuffered {
            assert!(q.is_warming());
        }
        // One step past the period's end: the hashes have changed.
        sim.run_until(Time::from_nanos(2_001_000_000));
        let limited = sim.sfb().is_rate_limited(FlowId(A));
        let got = departures_until(&mut sim, Time::from_nanos(2_500_000_000));
        after_swap.push((hash, limited, got[0]));
    }
    // Plain moving hash: the bins reset, A is on parole and takes a large share
    // of the link (625 packets in 0.5 s) until it is re-learned.
    let (_, limited, a_moving) = after_swap[0];
    assert!(!limited, "{after_swap:?}");
    assert!(a_moving > 100, "{after_swap:?}");
    // Double-buffered: the warm bins learned A, so it stays at rate_limit
    // (10 packets in 0.5 s, plus what is left of the burst).
    let (_, limited, a_double) = after_swap[1];
    assert!(limited, "{after_swap:?}");
    assert!(a_double <= 30, "{after_swap:?}");
}

#[test]
fn a_warmup_as_long_as_the_period_keeps_the_next_set_warming() {
    // Linux's tc-testing 430a: rehash 60 ms under the default 60 s warm-up.
    let mut h = Harness::build(SfbParams {
        hash: HashMode::DoubleBuffered,
        rehash_period: Dur::from_millis(60),
        warmup: Dur::from_secs(60),
        ..Default::default()
    });
    for period in 0..5u32 {
        h.offer(1, period);
        assert!(h.q.qdisc().is_warming(), "period {period}");
        h.advance(Dur::from_millis(60));
    }
}

#[test]
fn moving_hash_changes_the_flow_to_bin_mapping_every_period() {
    let mapping = |q: &Sfb| -> Vec<(usize, usize)> {
        (0..64)
            .map(|f| (q.bin_of(FlowId(f), 0), q.bin_of(FlowId(f), 1)))
            .collect()
    };
    for hash in [HashMode::Fixed, HashMode::Moving, HashMode::DoubleBuffered] {
        let mut h = Harness::build(SfbParams {
            hash,
            rehash_period: Dur::from_millis(100),
            warmup: Dur::from_millis(20),
            ..Default::default()
        });
        h.offer(1, 0);
        let before = mapping(h.q.qdisc());
        h.advance(Dur::from_millis(99));
        h.offer(1, 1);
        assert_eq!(mapping(h.q.qdisc()), before, "{hash:?}: same period");
        h.advance(Dur::from_millis(2));
        h.offer(1, 2);
        let after = mapping(h.q.qdisc());
        let moved = before.iter().zip(&after).filter(|(x, y)| x != y).count();
        if hash == HashMode::Fixed {
            assert_eq!(moved, 0);
        } else {
            assert!(moved > 48, "{hash:?}: only {moved} of 64 flows moved");
        }
    }
}

#[test]
fn bins_count_exactly_across_rehashes_and_swaps() {
    let cases = [
        (HashMode::Fixed, 4),
        (HashMode::Moving, 4),
        (HashMode::DoubleBuffered, 4),
        (HashMode::DoubleBuffered, 15), // warm all the time
    ];
    for (hash, warmup_ms) in cases {
        let params = SfbParams {
            hash,
            levels: 3,
            bins: 5,
            bin_size: 6,
            limit: 40,
            rehash_period: Dur::from_millis(10),
            warmup: Dur::from_millis(warmup_ms),
            freeze_time: Dur::ZERO,
            ..Default::default()
        };
        let levels = params.levels as u64;
        let mut h = Harness::build(params);
        let mut r = crate::rng::stream(5, 5);
        for seq in 0..20_000 {
            match rand::Rng::gen_range(&mut r, 0..10) {
                0..=5 => {
                    h.offer(rand::Rng::gen_range(&mut r, 0..30), seq);
                }
                6..=8 => {
                    h.dequeue();
                }
                _ => h.advance(Dur::from_micros(rand::Rng::gen_range(&mut r, 0..3_000))),
            }
            let (active, warm) = h.q.qdisc().counted_packets();
            let queued = h.q.len() as u64;
            assert!(
                active <= levels * queued,
                "{hash:?}: {active} > {levels} x {queued}"
            );
            assert!(warm <= levels * queued);
            if hash == HashMode::Fixed {
                assert_eq!(active, levels * queued);
            }
        }
        h.drain_seqs();
        assert_eq!(h.q.qdisc().counted_packets(), (0, 0), "{hash:?}");
    }
}

#[test]
fn pmin_marks_ecn_capable_packets_instead_of_dropping() {
    let mut h = Harness::build(SfbParams {
        levels: 1,
        bins: 1,
        bin_size: 2,
        increment: 0.25,
        ecn: true,
        ..Default::default()
    });
    // Two packets fill the single bin; the next two raise pm to 0.5 and are
    // dropped as bin overflow.
    for seq in 0..4 {
        h.offer_ect(1, seq);
    }
    assert_eq!(h.drops(DropReason::Overflow), 2);
    assert_eq!(h.q.qdisc().pm(0, 0), 0.5);
    // Keep one packet queued so the bin is neither empty nor full: pm stays.
    h.dequeue();
    for seq in 10..2_010 {
        h.offer_ect(1, seq);
        h.dequeue();
    }
    let marks = h.marks(DropReason::Early);
    assert!((800..1_200).contains(&marks), "marks {marks}");
    assert_eq!(h.drops(DropReason::Early), 0);
}

#[test]
fn bad_parameters_are_rejected_by_name() {
    let e = rejection(SfbParams {
        levels: 0,
        ..Default::default()
    });
    assert_eq!(e, "levels = 0 must be at least 1");
    let e = rejection(SfbParams {
        hash: HashMode::DoubleBuffered,
        warmup: Dur::ZERO,
        ..Default::default()
    });
    assert_eq!(
        e,
        "warmup = 0ns must be positive with a double-buffered hash"
    );
}
