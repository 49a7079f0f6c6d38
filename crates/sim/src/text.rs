//! The human-readable summary `aqmlab run` prints, shared by the command's two
//! installs (the binary and the Python package).

use crate::results::RunResult;
use std::fmt::Write as _;

/// A short summary: groups, monitored links, fairness.
pub fn summary(r: &RunResult) -> String {
    let mut s = String::new();
    match &r.emulation {
        None => {
            let _ = writeln!(
                s,
                "{} (seed {}): {:.0} s simulated in {:.2} s wall, {} events",
                r.scenario, r.seed, r.sim_seconds, r.wall_seconds, r.events
            );
        }
        Some(e) => {
            let _ = writeln!(
                s,
                "{} (seed {}): {:.0} s emulated on real Linux TCP, {} packets at the bottleneck",
                r.scenario, r.seed, r.sim_seconds, r.events
            );
            let _ = writeln!(
                s,
                "lateness p50 {:.1} us, p99 {:.1} us, max {:.1} us (one packet time {:.1} us); \
                 {} packets lost in the TUN queues",
                e.lateness_p50_s * 1e6,
                e.lateness_p99_s * 1e6,
                e.lateness_max_s * 1e6,
                e.packet_time_s * 1e6,
                e.tun_drops
            );
        }
    }
    let _ = writeln!(
        s,
        "measured from {:.0} s to {:.0} s",
        r.warmup_s, r.duration_s
    );
    let _ = writeln!(
        s,
        "\n{:<12} {:>5} {:>8} {:>14} {:>14} {:>9} {:>7}",
        "group", "flows", "kind", "goodput", "per flow", "drops", "jain"
    );
    for (name, g) in &r.groups {
        let _ = writeln!(
            s,
            "{:<12} {:>5} {:>8} {:>9.1} kb/s {:>9.1} kb/s {:>9} {:>7.3}",
            name,
            g.count,
            g.kind,
            g.goodput_bps / 1e3,
            g.goodput_mean_bps / 1e3,
            g.drops_total,
            g.jain
        );
    }
    let _ = writeln!(
        s,
        "\n{:<16} {:>8} {:>6} {:>11} {:>9} {:>9}",
        "link", "qdisc", "util", "mean queue", "drops", "marks"
    );
    for l in &r.links {
        let _ = writeln!(
            s,
            "{:<16} {:>8} {:>6.3} {:>11.1} {:>9} {:>9}",
            l.name, l.qdisc, l.utilization, l.mean_queue_packets, l.drops_total, l.marks_total
        );
    }
    let f = &r.fairness;
    let _ = writeln!(
        s,
        "\nfairness: all TCP flows jain {:.3} cov {:.3}; all flows jain {:.3}",
        f.tcp.jain, f.tcp.cov, f.all.jain
    );
    s
}

/// The qdiscs' diagnostics (and an emulation's warnings) as the warnings
/// `aqmlab run` and `aqmlab emulate` print on stderr, once per run, one line each
/// (empty when there are none); the results keep them in the `diagnostics` table
/// and the summary's `diagnostics` (`emulation.warnings`).
pub fn warnings(r: &RunResult) -> String {
    let mut s = String::new();
    for d in &r.diagnostics {
        let _ = writeln!(s, "warning: {}: {}", d.link, d.note);
    }
    for w in r.emulation.iter().flat_map(|e| &e.warnings) {
        let _ = writeln!(s, "warning: emulation: {w}");
    }
    s
}
