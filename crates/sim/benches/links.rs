//! What a link's model costs a whole run: one dumbbell of 10 TCP flows over a
//! 10 Mbit/s bottleneck, 5 simulated seconds, its bottleneck of a constant rate
//! (the engine's plain path and shortcuts), the same rate as a schedule (a
//! modelled link: its own transmitter, no shortcuts), and a trace of that rate
//! (5 opportunities of 1,500 bytes every 6 ms). BENCHMARKS.md, "Link models".

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use sim::{run_scenario, Scenario};

fn scenario(bottleneck_rate: &str) -> Scenario {
    let text = format!(
        r#"
name = "link-cost"
duration = "5s"
[topology]
kind = "dumbbell"
access = {{ rate = "100Mbps", delay = "2ms" }}
[topology.bottleneck]
rate = {bottleneck_rate}
delay = "20ms"
[qdisc]
kind = "red"
[[flows]]
name = "tcp"
kind = "tcp"
count = 10
packet_size = 1500
"#
    );
    let dir = std::env::temp_dir().join(format!("aqmlab-bench-links-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // 10 Mbit/s in 1,500-byte opportunities: 5 every 6 ms.
    let trace: String = (1..=600u64)
        .filter(|ms| ms % 6 == 0)
        .flat_map(|ms| std::iter::repeat_n(format!("{ms}\n"), 5))
        .collect();
    std::fs::write(dir.join("steady.up"), trace).unwrap();
    let path = dir.join("s.toml");
    std::fs::write(&path, text).unwrap();
    Scenario::from_path(&path).unwrap()
}

fn bench_links(c: &mut Criterion) {
    let mut group = c.benchmark_group("link_model_run");
    group.sample_size(10);
    for (name, rate) in [
        ("constant", "\"10Mbps\""),
        (
            "schedule",
            "{ schedule = [{ at = \"0s\", rate = \"10Mbps\" }, { at = \"1s\", rate = \"10Mbps\" }] }",
        ),
        ("trace", "{ trace = \"steady.up\" }"),
    ] {
        let s = scenario(rate);
        group.bench_with_input(BenchmarkId::from_parameter(name), &s, |b, s| {
            b.iter(|| run_scenario(s, &mut |_| {}).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, bench_links);
criterion_main!(benches);
