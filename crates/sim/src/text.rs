//! The human-readable summary `aqmlab run` prints, shared by the command's two
//! installs (the binary and the Python package).

use crate::results::RunResult;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// A short summary: groups, monitored links, fairness.
pub fn summary(r: &RunResult) -> String {
    let mut s = String::new();
    match &r.emulation {
        None => {
            let _ = writeln!(
                s,
                "{} (seed {}): {} s simulated in {:.2} s wall, {} events",
                r.scenario,
                r.seed,
                seconds(r.sim_seconds),
                r.wall_seconds,
                r.events
            );
        }
        Some(e) => {
            let _ = writeln!(
                s,
                "{} (seed {}): {} s emulated on real Linux TCP, {} packets at the bottleneck",
                r.scenario,
                r.seed,
                seconds(r.sim_seconds),
                r.events
            );
            let _ = writeln!(
                s,
                "{}: lateness p50 {:.1} us, p99 {:.1} us, max {:.1} us (one packet time \
                 {:.1} us, {:.2}% of packets later); {} packets lost in the TUN queues",
                if e.kept_time {
                    "time kept"
                } else {
                    "TIME NOT KEPT"
                },
                e.lateness_p50_s * 1e6,
                e.lateness_p99_s * 1e6,
                e.lateness_max_s * 1e6,
                e.packet_time_s * 1e6,
                e.late_share * 100.0,
                e.tun_drops
            );
        }
    }
    let _ = writeln!(
        s,
        "measured from {} s to {} s",
        seconds(r.warmup_s),
        seconds(r.duration_s)
    );
    let rtts = base_rtts(r);
    let _ = writeln!(
        s,
        "\n{:<12} {:>5} {:>8} {:>11} {:>11} {:>9} {:>7} {:>15}",
        "group", "flows", "kind", "goodput", "per flow", "drops", "jain", "base rtt"
    );
    for (name, g) in &r.groups {
        let _ = writeln!(
            s,
            "{:<12} {:>5} {:>8} {:>11} {:>11} {:>9} {:>7.3} {:>15}",
            name,
            g.count,
            g.kind,
            rate(g.goodput_bps),
            rate(g.goodput_mean_bps),
            g.drops_total,
            g.jain,
            rtts.get(name.as_str())
                .map_or_else(String::new, |&r| rtt_range(r)),
        );
    }
    probes(&mut s, r);
    hosts(&mut s, r);
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
    for (between, x) in [("senders", &f.hosts), ("receivers", &f.receiver_hosts)] {
        if let Some(x) = x {
            let _ = writeln!(
                s,
                "between hosts as {between}: jain {:.3} cov {:.3}",
                x.jain, x.cov
            );
        }
    }
    s
}

/// The hosts table, when the scenario names hosts: a host with many flows
/// beside one with few is what per-host isolation is about.
fn hosts(s: &mut String, r: &RunResult) {
    if r.hosts.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "\n{:<12} {:>8} {:>5} {:>11} {:>6} {:>9} {:>7}",
        "host", "role", "flows", "goodput", "share", "drops", "jain"
    );
    for h in &r.hosts {
        let _ = writeln!(
            s,
            "{:<12} {:>8} {:>5} {:>11} {:>6.3} {:>9} {:>7.3}",
            h.host,
            h.role,
            h.flows,
            rate(h.goodput_bps),
            h.share,
            h.drops_total,
            h.jain
        );
    }
}

/// The probe groups' RTTs (latency under load), when there are any.
fn probes(s: &mut String, r: &RunResult) {
    let probes: Vec<_> = r
        .groups
        .iter()
        .filter_map(|(name, g)| Some((name, g.probe.as_ref()?)))
        .collect();
    if probes.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "\n{:<12} {:>7} {:>7} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "probes", "sent", "echoed", "lost", "rtt mean", "p50", "p95", "p99", "max"
    );
    let ms = |x: Option<f64>| x.map_or_else(|| "-".to_string(), |x| format!("{:.2} ms", x * 1e3));
    for (name, p) in probes {
        let _ = writeln!(
            s,
            "{:<12} {:>7} {:>7} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10}",
            name,
            p.sent,
            p.echoed,
            p.lost,
            ms(p.rtt_mean_s),
            ms(p.rtt_p50_s),
            ms(p.rtt_p95_s),
            ms(p.rtt_p99_s),
            ms(p.rtt_max_s)
        );
    }
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

/// A rate in bit/s with three significant digits, in the unit that suits it
/// (`15.0 b/s`, `1.23 kb/s`, `456 Mb/s`): a flow that got 15 b/s does not read
/// as 0.0 kb/s.
pub fn rate(bps: f64) -> String {
    const UNITS: [(f64, &str); 4] = [(1e9, "Gb/s"), (1e6, "Mb/s"), (1e3, "kb/s"), (1.0, "b/s")];
    let (scale, unit) = UNITS
        .into_iter()
        .find(|&(scale, _)| significant(bps / scale).abs() >= 1.0)
        .unwrap_or((1.0, "b/s"));
    let v = significant(bps / scale);
    let decimals = match v.abs() {
        a if a >= 100.0 => 0,
        a if a >= 10.0 => 1,
        _ => 2,
    };
    format!("{v:.decimals$} {unit}")
}

/// A time in seconds as the scenario would write it, not rounded: `0.3`, `2.5`,
/// `20` (a run measured from 0.3 s to 2.5 s must not read "from 0 s to 2 s").
/// Times are whole nanoseconds, so nine decimals are exact.
pub fn seconds(x: f64) -> String {
    let s = format!("{x:.9}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.into()
    }
}

/// Simulated time against the run's end, for a progress bar: `12.3 s / 300 s`.
pub fn progress(now_s: f64, end_s: f64) -> String {
    let secs = |x: f64| match x.abs() {
        a if a >= 100.0 || x == x.trunc() => format!("{x:.0}"),
        a if a >= 10.0 => format!("{x:.1}"),
        _ => format!("{x:.2}"),
    };
    format!("{} s / {} s", secs(now_s), secs(end_s))
}

/// `x` rounded to three significant digits.
fn significant(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let scale = 10f64.powi(2 - x.abs().log10().floor() as i32);
    (x * scale).round() / scale
}

/// Per group, the smallest and largest base RTT of its flows, seconds.
fn base_rtts(r: &RunResult) -> BTreeMap<&str, (f64, f64)> {
    let mut out: BTreeMap<&str, (f64, f64)> = BTreeMap::new();
    for f in &r.flows {
        let e = out
            .entry(f.group.as_str())
            .or_insert((f.base_rtt_s, f.base_rtt_s));
        e.0 = e.0.min(f.base_rtt_s);
        e.1 = e.1.max(f.base_rtt_s);
    }
    out
}

/// `22 ms`, or `20-40 ms` when a group's flows differ.
fn rtt_range((lo, hi): (f64, f64)) -> String {
    let ms = |s: f64| {
        let v = significant(s * 1e3);
        if v == v.trunc() {
            format!("{v:.0}")
        } else {
            format!("{v}")
        }
    };
    if ms(lo) == ms(hi) {
        format!("{} ms", ms(lo))
    } else {
        format!("{}-{} ms", ms(lo), ms(hi))
    }
}

#[cfg(test)]
mod tests {
    use super::{progress, rate, seconds};

    #[test]
    fn times_are_printed_as_written_not_rounded() {
        assert_eq!(seconds(0.3), "0.3");
        assert_eq!(seconds(2.5), "2.5");
        assert_eq!(seconds(20.0), "20");
        assert_eq!(seconds(0.0), "0");
        assert_eq!(seconds(0.000_001), "0.000001");
        assert_eq!(seconds(1.0 + 1e-9), "1.000000001");
    }

    #[test]
    fn progress_shows_seconds_not_nanoseconds() {
        assert_eq!(progress(12.345678901, 300.0), "12.3 s / 300 s");
        assert_eq!(progress(0.5, 2.5), "0.50 s / 2.50 s");
        assert_eq!(progress(150.2, 300.0), "150 s / 300 s");
    }

    #[test]
    fn rates_take_the_unit_that_suits_them() {
        assert_eq!(rate(15.0), "15.0 b/s");
        assert_eq!(rate(0.0), "0.00 b/s");
        assert_eq!(rate(999.6), "1.00 kb/s");
        assert_eq!(rate(1234.0), "1.23 kb/s");
        assert_eq!(rate(456_000.0), "456 kb/s");
        assert_eq!(rate(12_345_678.0), "12.3 Mb/s");
        assert_eq!(rate(2.5e9), "2.50 Gb/s");
    }
}
