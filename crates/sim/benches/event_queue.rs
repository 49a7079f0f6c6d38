//! The event queue under the "hold" model: pop the earliest event, push one a random
//! delay later, with a steady pending set of realistic size. Experiment (b) of
//! BENCHMARKS.md (401 flows, 1606 link directions) keeps about 1,000-2,000 events
//! pending; (c) (1000 flows) a few thousand.

use aqm::{Dur, Time};
use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion};
use sim::event::{Event, EventQueue};

/// Delays spread over 0..100 ms (a link's serialization, a propagation delay, an RTO).
fn delays(n: usize) -> Vec<Dur> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            Dur::from_nanos(x % 100_000_000)
        })
        .collect()
}

fn bench_hold(c: &mut Criterion) {
    let mut group = c.benchmark_group("event_queue_hold");
    for &pending in &[100usize, 1_000, 10_000] {
        let d = delays(4096);
        let mut q = EventQueue::new();
        for (i, dt) in d.iter().cycle().take(pending).enumerate() {
            q.push(Time::ZERO + *dt, Event::Arrive(i as u32));
        }
        let mut k = 0usize;
        group.bench_with_input(BenchmarkId::from_parameter(pending), &pending, |b, _| {
            b.iter(|| {
                let (t, ev) = q.pop().expect("the pending set never empties");
                k = (k + 1) & 4095;
                q.push(t + d[k], black_box(ev));
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_hold);
criterion_main!(benches);
