//! The emulator's memory is bounded by its scenario and its run ends on time:
//! a UDP source 100 times faster than its access link, under a 1 GB limit on
//! the process's address space. Alone in its file: the limit is the process's.
mod common;

use std::time::Instant;

#[test]
fn a_source_far_faster_than_its_access_link_is_bounded_and_ends_on_time() {
    require_emulation!();
    let limit = libc::rlimit {
        rlim_cur: 1 << 30,
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: setrlimit with a valid rlimit on the stack.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &limit) }, 0);
    // 5 Gbit/s into a 50 Mbit/s access link: without a bound on the access
    // link's queue, 3 s of it is 1.25 million buffers of 2 KiB.
    let text = r#"
name = "flood"
duration = "3s"
warmup = "1s"
[topology]
kind = "dumbbell"
access = { rate = "50Mbps", delay = "1ms" }
bottleneck = { rate = "10Mbps", delay = "5ms" }
[[flows]]
name = "flood"
kind = "cbr"
rate = "5Gbps"
"#;
    let started = Instant::now();
    let r = common::emulate(text);
    let took = started.elapsed().as_secs_f64();
    assert!(took < 3.0 + 2.0, "a 3 s emulation took {took:.1} s");
    let e = r.emulation.as_ref().unwrap();
    assert!(
        e.warnings
            .iter()
            .any(|w| w.contains("access link's queue full")),
        "{:?}",
        e.warnings
    );
    // The bottleneck is saturated by what the access link let through.
    assert!(r.links[0].utilization > 0.8, "{}", r.links[0].utilization);
}
