//! Cost per packet of each qdisc: enqueue + dequeue with a standing queue of 100
//! packets drawn from 1000 flows (`sfq_red`: SFQ with RED in every bin;
//! `fq_codel_set_assoc`: FQ-CoDel with the 8-way set-associative hash;
//! `pie_dq_rate`: PIE with the drain-rate estimator; `fred_wide`: FRED with
//! thresholds above the standing queue, so flows are not capped at 5 packets;
//! `red_step`: RED with DCTCP's step at 20 packets, its check on every arrival).
//!
//! `fair_queue`: the fair queues (`wfq`, `drr`) with each buffer manager against
//! the number of active (backlogged) classes, 10, 100 and 10,000, on two paths:
//! `common` (two packets per class, buffer never full: one enqueue and one
//! dequeue per iteration) and `overflow` (buffer full at two packets per class:
//! two enqueues, one of which makes the buffer manager drop, and one dequeue).

use aqm::{rng, FlowId, LinkInfo, Monitored, Packet, QdiscSpec, Rate, Time, VecSink};
use criterion::{black_box, criterion_group, criterion_main, Criterion};

/// A sink that forgets, so the benchmark measures the qdisc, not a growing Vec.
struct Discard;
impl aqm::DropSink for Discard {
    fn drop(&mut self, _: Packet, _: aqm::DropReason) {}
    fn mark(&mut self, _: &Packet, _: aqm::DropReason) {}
}

fn bench_qdiscs(c: &mut Criterion) {
    let link = LinkInfo::new(Rate::from_mbps(100));
    let mut group = c.benchmark_group("enqueue_dequeue");
    // Every kind with its defaults, and variants whose common path differs.
    let variants = [
        (
            "sfq_red",
            "kind = \"sfq\"\nred = true\nmin_th = 20\nmax_th = 60",
        ),
        (
            "fq_codel_set_assoc",
            "kind = \"fq_codel\"\nset_associative_hash = true",
        ),
        ("pie_dq_rate", "kind = \"pie\"\ndq_rate_estimator = true"),
        ("fred_wide", "kind = \"fred\"\nmin_th = 20\nmax_th = 60"),
        (
            "red_step",
            "kind = \"red\"\nstep = 20\nmin_th = 200\nmax_th = 600",
        ),
    ];
    let configs = QdiscSpec::KINDS
        .iter()
        .map(|k| (*k, format!("kind = \"{k}\"")))
        .chain(variants.iter().map(|(n, c)| (*n, c.to_string())));
    for (kind, config) in configs {
        // Thresholds well above the standing queue, so the bench measures the common path.
        let spec: QdiscSpec = toml::from_str(&config).unwrap();
        let mut q = Monitored::new(spec.build(&link).unwrap());
        let mut rng = rng::stream(1, 0);
        let mut sink = Discard;
        let _ = VecSink::default();
        let mut now = Time::ZERO;
        let mut flow = 0u32;
        for _ in 0..100 {
            flow = (flow + 7) % 1000;
            q.enqueue(Packet::new(FlowId(flow), 1000), now, &mut rng, &mut sink);
        }
        group.bench_function(kind, |b| {
            b.iter(|| {
                flow = (flow + 7) % 1000;
                now += aqm::Dur::from_micros(80);
                q.enqueue(Packet::new(FlowId(flow), 1000), now, &mut rng, &mut sink);
                black_box(q.dequeue(now, &mut rng, &mut sink));
            })
        });
    }
    group.finish();
}

fn bench_fair_queues(c: &mut Criterion) {
    let link = LinkInfo::new(Rate::from_mbps(100));
    let mut group = c.benchmark_group("fair_queue");
    group
        .sample_size(20)
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(2));
    let tick = aqm::Dur::from_micros(80); // 1000 bytes at 100 Mbps
    for kind in ["wfq", "drr"] {
        for buffer in ["droptail", "dropfront", "lqd", "alqd", "alqd_plus"] {
            for n in [10u32, 100, 10_000] {
                for overflow in [false, true] {
                    if !overflow && buffer != "droptail" && buffer != "alqd_plus" {
                        // Without overflow the other managers only index lengths
                        // (LQD's heap, ALQD's register): measured with overflow.
                        continue;
                    }
                    let limit = if overflow { 2 * n } else { 4 * n };
                    let config = format!(
                        "kind = \"{kind}\"\nlimit = {limit}\nbuffer = \"{buffer}\"\nquantum = 1000"
                    );
                    let config = if kind == "wfq" {
                        config.replace("\nquantum = 1000", "")
                    } else {
                        config
                    };
                    let spec: QdiscSpec = toml::from_str(&config).unwrap();
                    let mut q = Monitored::new(spec.build(&link).unwrap());
                    let mut rng = rng::stream(1, 0);
                    let mut sink = Discard;
                    let mut now = Time::ZERO;
                    for f in 0..2 * n {
                        q.enqueue(Packet::new(FlowId(f % n), 1000), now, &mut rng, &mut sink);
                    }
                    let (mut a, mut b) = (0u32, 0u32);
                    let path = if overflow { "overflow" } else { "common" };
                    group.bench_function(format!("{kind}/{buffer}/{path}/{n}"), |bench| {
                        bench.iter(|| {
                            a = (a + 1) % n;
                            now += tick;
                            q.enqueue(Packet::new(FlowId(a), 1000), now, &mut rng, &mut sink);
                            if overflow {
                                b = (b + 7) % n;
                                q.enqueue(Packet::new(FlowId(b), 1000), now, &mut rng, &mut sink);
                            }
                            black_box(q.dequeue(now, &mut rng, &mut sink));
                        })
                    });
                }
            }
        }
    }
    group.finish();
}

criterion_group!(benches, bench_qdiscs, bench_fair_queues);
criterion_main!(benches);
