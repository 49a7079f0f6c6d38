//! The TCP sender's ACK path: `TcpSender::on_ack` for a new cumulative ACK in
//! congestion avoidance with a window of 100 packets (each ACK releases one packet),
//! the work done for nearly every packet a bulk TCP flow delivers (DCTCP and
//! Prague count the packets for alpha on every ACK as well).

use aqm::{Dur, Ecn, Time};
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use sim::tcp::{Actions, TcpConfig, TcpSender, Variant};

fn bench_on_ack(c: &mut Criterion) {
    let mut group = c.benchmark_group("tcp_on_ack");
    for (name, variant) in [
        ("newreno_ca_w100", Variant::NewReno),
        ("sack_ca_w100", Variant::Sack),
        ("dctcp_ca_w100", Variant::Dctcp),
        ("prague_ca_w100", Variant::Prague),
    ] {
        let cfg = TcpConfig {
            variant,
            initial_window: 100,
            initial_ssthresh: 50.0,
            max_window: 100,
            ecn: match variant {
                Variant::Prague => Ecn::Ect1,
                v if v.is_scalable() => Ecn::Ect,
                _ => Ecn::NotEct,
            },
            ..TcpConfig::default()
        };
        let mut s = TcpSender::new(&cfg);
        let mut act = Actions::default();
        let mut now = Time::ZERO;
        s.start(now, &cfg, &mut act);
        assert_eq!(act.segs.len(), 100);
        let mut ack = 0u32;
        group.bench_function(name, |b| {
            b.iter(|| {
                act.clear();
                ack += 1;
                now += Dur::from_micros(80);
                s.on_ack(now, black_box(ack), &[], false, &cfg, &mut act);
                black_box(act.segs.len());
            })
        });
        assert!(s.ssthresh() < s.cwnd() && !s.in_recovery());
    }
    group.finish();
}

criterion_group!(benches, bench_on_ack);
criterion_main!(benches);
