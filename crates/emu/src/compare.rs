//! `aqmlab emulate --compare`: a simulated and an emulated run of one scenario,
//! side by side.

use sim::text::seconds;
use sim::RunResult;
use std::fmt::Write as _;

/// The UDP groups' share of all goodput.
pub fn udp_share(r: &RunResult) -> f64 {
    let all: f64 = r.groups.values().map(|g| g.goodput_bps).sum();
    let udp: f64 = r
        .groups
        .values()
        .filter(|g| !matches!(g.kind.as_str(), "tcp" | "web"))
        .map(|g| g.goodput_bps)
        .sum();
    if all > 0.0 {
        udp / all
    } else {
        0.0
    }
}

/// The forward bottleneck's drops per packet that arrived.
pub fn drop_rate(r: &RunResult) -> f64 {
    r.links
        .first()
        .map_or(0.0, |l| l.drops_total as f64 / (l.arrivals.max(1)) as f64)
}

/// The TCP flows' mean RTT, seconds.
pub fn mean_rtt(r: &RunResult) -> Option<f64> {
    let rtts: Vec<f64> = r.flows.iter().filter_map(|f| f.rtt_mean_s).collect();
    (!rtts.is_empty()).then(|| rtts.iter().sum::<f64>() / rtts.len() as f64)
}

/// The two runs side by side: per group goodput and Jain's index, each named
/// host's share and the fairness between hosts, then the UDP share, the forward bottleneck's mean queue and drop rate, the TCP flows' RTT.
pub fn table(simulated: &RunResult, emulated: &RunResult) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{} (seed {}): simulated beside emulated, measured from {} s to {} s\n",
        simulated.scenario,
        simulated.seed,
        seconds(simulated.warmup_s),
        seconds(simulated.duration_s)
    );
    // A run that lost time is marked where its numbers are read.
    let late = emulated.emulation.as_ref().is_some_and(|e| !e.kept_time);
    let _ = writeln!(
        s,
        "{:<24} {:>14} {:>14} {:>9}",
        "",
        "simulated",
        if late { "emulated (!)" } else { "emulated" },
        "ratio"
    );
    for (name, g) in &simulated.groups {
        let Some(e) = emulated.groups.get(name) else {
            continue;
        };
        row(
            &mut s,
            &format!("{name} goodput"),
            g.goodput_bps,
            e.goodput_bps,
            " Mb/s",
            1e-6,
        );
        row(&mut s, &format!("{name} jain"), g.jain, e.jain, "", 1.0);
    }
    host_rows(&mut s, simulated, emulated);
    row(
        &mut s,
        "udp share",
        udp_share(simulated),
        udp_share(emulated),
        "",
        1.0,
    );
    row(
        &mut s,
        "jain (all tcp)",
        simulated.fairness.tcp.jain,
        emulated.fairness.tcp.jain,
        "",
        1.0,
    );
    if let (Some(a), Some(b)) = (simulated.links.first(), emulated.links.first()) {
        row(
            &mut s,
            "mean queue",
            a.mean_queue_packets,
            b.mean_queue_packets,
            " pkt",
            1.0,
        );
        row(&mut s, "utilization", a.utilization, b.utilization, "", 1.0);
    }
    row(
        &mut s,
        "drop rate",
        drop_rate(simulated),
        drop_rate(emulated),
        "",
        1.0,
    );
    if let (Some(a), Some(b)) = (mean_rtt(simulated), mean_rtt(emulated)) {
        row(&mut s, "tcp rtt", a, b, " ms", 1e3);
    }
    if let Some(e) = emulated.emulation.as_ref().filter(|_| late) {
        let _ = writeln!(
            s,
            "\n(!) the emulation did not keep time (p99 lateness {:.1} us against a \
             packet time of {:.1} us): its column is not a measurement of the scenario",
            e.lateness_p99_s * 1e6,
            e.packet_time_s * 1e6
        );
    }
    s
}

/// One row: the simulated and emulated values scaled into `unit`, and their ratio.
fn row(s: &mut String, name: &str, a: f64, b: f64, unit: &str, scale: f64) {
    let ratio = if a != 0.0 {
        format!("{:.2}", b / a)
    } else {
        "-".into()
    };
    let _ = writeln!(
        s,
        "{:<24} {:>9.3}{:<5} {:>9.3}{:<5} {:>9}",
        name,
        a * scale,
        unit,
        b * scale,
        unit,
        ratio
    );
}

/// Each named host's share side by side, and the fairness between hosts
/// (nothing when the scenario names no host).
fn host_rows(s: &mut String, simulated: &RunResult, emulated: &RunResult) {
    for h in &simulated.hosts {
        let Some(e) = emulated
            .hosts
            .iter()
            .find(|e| (&e.host, &e.role) == (&h.host, &h.role))
        else {
            continue;
        };
        let role = if h.role == "receiver" { " (to)" } else { "" };
        let name = format!("host {}{role} share", h.host);
        row(s, &name, h.share, e.share, "", 1.0);
    }
    if let (Some(a), Some(b)) = (&simulated.fairness.hosts, &emulated.fairness.hosts) {
        row(s, "jain (hosts)", a.jain, b.jain, "", 1.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim::results::{Fairness, HostResult};

    fn hosted(share: f64) -> RunResult {
        let host = |name: &str, role: &str, share: f64| HostResult {
            host: name.into(),
            role: role.into(),
            flows: 1,
            goodput_bps: share * 1e6,
            share,
            drops_total: 0,
            marks: 0,
            jain: 1.0,
        };
        let mut r = RunResult {
            hosts: vec![
                host("a", "sender", share),
                host("b", "sender", 1.0 - share),
                host("srv", "receiver", 1.0),
            ],
            ..RunResult::default()
        };
        r.fairness.hosts = Some(Fairness {
            n: 2,
            jain: 0.9,
            cov: 0.1,
        });
        r
    }

    #[test]
    fn named_hosts_get_a_share_row_each_and_their_fairness() {
        let t = table(&hosted(0.5), &hosted(0.25));
        let line = |name: &str| {
            t.lines()
                .find(|l| l.starts_with(name))
                .unwrap_or_else(|| panic!("no {name} row in\n{t}"))
                .split_whitespace()
                .last()
                .unwrap()
                .to_string()
        };
        assert_eq!(line("host a share"), "0.50");
        assert_eq!(line("host b share"), "1.50");
        assert_eq!(line("host srv (to) share"), "1.00");
        assert_eq!(line("jain (hosts)"), "1.00");
        assert!(!table(&RunResult::default(), &RunResult::default()).contains("host"));
    }
}
