//! An emulation's counters as a [`RunResult`]: the simulator's schema, filled
//! from the data plane (links, drops, marks, queues), the receivers (goodput)
//! and the senders' `TCP_INFO` (retransmissions, RTT, the TCP trace).

use crate::plane::{Outcome, FWD, REV};
use crate::traffic::{InfoSample, Shared, Snapshot};
use sim::results::{
    reason_map, DelayBucket, DelayResult, DiagnosticResult, Emulation, FlowResult, LinkFlowResult,
    LinkResult, ProbeStats, RunResult, TcpTraceResult,
};
use sim::runner::{
    delay_rows, fair_shares, fairness_summary, group_results, host_results, link_flow_rows,
    link_result, probe_stats, Flow, Group, MeasuredLink, Network,
};
use sim::text::rate;
use sim::Scenario;
use std::collections::BTreeMap;

/// IP (20) + TCP (20) + timestamps option (12) bytes of each TCP packet.
const TCP_OVERHEAD: u32 = 52;

/// The `TCP_MAXSEG` that makes Linux send packets of `packet_size` bytes: the
/// size less the IP and TCP headers (Linux takes the timestamps from it).
pub fn maxseg(packet_size: u32) -> u32 {
    packet_size - 40
}

/// Application bytes in one full TCP packet of `packet_size` bytes.
pub fn payload(packet_size: u32) -> u32 {
    packet_size - TCP_OVERHEAD
}

pub struct Inputs<'a> {
    pub s: &'a Scenario,
    pub net: &'a Network,
    pub groups: &'a [Group],
    pub flows: &'a [Flow],
    pub kinds: [&'static str; 2],
    pub outcome: Outcome,
    pub at_warmup: Snapshot,
    pub at_end: Snapshot,
    /// The group whose flows users' programs drove (`--app`).
    pub app_group: Option<usize>,
    pub shared: &'a Shared,
    pub tun_drops: u64,
    pub warnings: Vec<String>,
    pub wall_seconds: f64,
}

/// The samples of a flow's `TCP_INFO` inside [from, to].
fn window(samples: &[InfoSample], from: u64, to: u64) -> impl Iterator<Item = &InfoSample> {
    samples
        .iter()
        .filter(move |x| x.t_ns >= from && x.t_ns <= to)
}

pub fn build(i: Inputs<'_>) -> RunResult {
    let f = &i.s.file;
    let from = f.warmup.as_nanos();
    let to = i.outcome.end_ns;
    let secs = (to.saturating_sub(from) as f64 * 1e-9).max(1e-12);
    let net = i.net;
    let monitored = [net.monitored[FWD] as usize, net.monitored[REV] as usize];

    // Fair shares, from every flow's demand and route, as the simulator's.
    let capacities: Vec<f64> = (0..net.links.len())
        .map(|l| net.pipe(l).rate.as_f64())
        .collect();
    let shares = fair_shares(net, i.groups, i.flows, &capacities);

    let (rows, trace) = flow_rows(&i, (from, to), secs, &shares);

    let (groups, group_fair) = group_results(i.groups, &rows, &probe_groups(&i));

    let largest = i
        .groups
        .iter()
        .map(|g| g.tcp.packet_size)
        .max()
        .unwrap_or(1000);
    let packet_time_s = net
        .pipe(monitored[FWD])
        .rate
        .tx_time(u64::from(largest))
        .as_secs_f64();
    let names = monitored.map(|l| net.link_name(l));
    let interval = (aqm::Time::from_nanos(from), aqm::Time::from_nanos(to));
    let read_links = link_rows(&i, &names, interval, secs);
    let tcp: Vec<f64> = rows
        .iter()
        .zip(i.flows)
        .filter(|(_, f)| i.groups[f.group as usize].kind.is_tcp())
        .map(|(r, _)| r.goodput_bps)
        .collect();
    let hosts = host_results(i.groups, &rows);
    let fairness = fairness_summary(&rows, &tcp, group_fair, &hosts);
    let carried = read_links.links[FWD].throughput_bps;
    let read: f64 = rows.iter().map(|r| r.goodput_bps).sum();
    let diagnostics = diagnostics(&i, &names);
    let emulation = timekeeping(
        &i.outcome,
        i.tun_drops,
        i.warnings,
        packet_time_s,
        (read, carried),
    );
    RunResult {
        scenario: f.name.clone(),
        seed: f.seed,
        duration_s: f.duration.as_secs_f64(),
        warmup_s: f.warmup.as_secs_f64(),
        events: i.outcome.links.iter().map(|c| c.queue.received).sum(),
        wall_seconds: i.wall_seconds,
        sim_seconds: to as f64 * 1e-9,
        flows: rows,
        groups,
        hosts: hosts.rows,
        links: read_links.links,
        link_flows: read_links.link_flows,
        fairness,
        flow_series: Vec::new(),
        tcp_trace: trace,
        delays: read_links.delays,
        delay_histogram: read_links.delay_histogram,
        objects: Vec::new(),
        queue_events: Vec::new(),
        queue_events_missed: 0,
        diagnostics,
        emulation: Some(emulation),
    }
}

/// The rows of the two monitored bottleneck directions, as the simulator's.
struct LinkRows {
    links: Vec<LinkResult>,
    link_flows: Vec<LinkFlowResult>,
    delays: Vec<DelayResult>,
    delay_histogram: Vec<DelayBucket>,
}

/// Each bottleneck direction's row, its flows' rows and (when recorded) the
/// sojourn times at its queue, over `interval` of `secs`.
fn link_rows(
    i: &Inputs<'_>,
    names: &[String; 2],
    interval: (aqm::Time, aqm::Time),
    secs: f64,
) -> LinkRows {
    let net = i.net;
    let mut out = LinkRows {
        links: Vec::new(),
        link_flows: Vec::new(),
        delays: Vec::new(),
        delay_histogram: Vec::new(),
    };
    for dir in [FWD, REV] {
        let link = net.monitored[dir] as usize;
        let stats = &i.outcome.stats[dir];
        let counters = &i.outcome.links[dir];
        let (from_node, to_node) = net.link_ends(link);
        let measured = MeasuredLink {
            name: &names[dir],
            from: &from_node,
            to: &to_node,
            pipe: net.pipe(link),
            qdisc: i.kinds[dir],
            model: Some(&i.outcome.links_back[dir].link.model),
            stats,
            counters,
        };
        out.links.push(link_result(&measured, interval, secs));
        link_flow_rows(
            &names[dir],
            &stats.slots,
            counters,
            secs,
            &mut out.link_flows,
        );
        if let Some(d) = &stats.delays {
            delay_rows(
                &names[dir],
                i.groups,
                d,
                &mut out.delays,
                &mut out.delay_histogram,
            );
        }
    }
    out
}

/// What the qdiscs say about how they ran, as in simulation.
fn diagnostics(i: &Inputs<'_>, names: &[String; 2]) -> Vec<DiagnosticResult> {
    [FWD, REV]
        .into_iter()
        .filter_map(|dir| {
            let q = &i.outcome.links_back[dir].link.queue;
            Some(DiagnosticResult {
                note: q.diagnostic()?,
                link: names[dir].clone(),
                qdisc: q.kind().to_string(),
            })
        })
        .collect()
}

/// Each probe group's probes pooled over its flows, as the simulator's.
fn probe_groups(i: &Inputs<'_>) -> BTreeMap<usize, ProbeStats> {
    i.groups
        .iter()
        .enumerate()
        .filter(|(_, g)| g.probe.is_some())
        .map(|(gi, g)| {
            let ends = (g.first..g.first + g.count)
                .filter_map(|id| i.outcome.probes[id as usize].as_ref());
            (gi, probe_stats(ends))
        })
        .collect()
}

/// How well the emulation kept time, and what else makes it less than a
/// measurement: `read`, the flows' goodput, against `carried`, what the
/// bottleneck carried (bit/s); `packet_time_s`, a largest packet's time at it.
fn timekeeping(
    outcome: &Outcome,
    tun_drops: u64,
    warnings: Vec<String>,
    packet_time_s: f64,
    (read, carried): (f64, f64),
) -> Emulation {
    let late = &outcome.lateness;
    let packet_time_ns = (packet_time_s * 1e9) as u64;
    let mut emulation = Emulation {
        lateness_p50_s: late.quantile(0.5),
        lateness_p99_s: late.quantile(0.99),
        lateness_max_s: late.max_ns as f64 * 1e-9,
        packet_time_s,
        late_share: late.share_later_than(packet_time_ns),
        kept_time: true,
        tun_drops,
        unclassified: outcome.unclassified,
        warnings,
    };
    const ADVICE: &str = "this run is not a measurement of the scenario; run it with \
                          fewer flows, a lower rate or on a quieter machine";
    if emulation.lateness_p99_s > packet_time_s {
        emulation.kept_time = false;
        emulation.warnings.push(format!(
            "time was not kept: p99 lateness {:.1} us exceeds one packet time at the \
             bottleneck ({:.1} us), and {:.1}% of the packets left later than that; {ADVICE}",
            emulation.lateness_p99_s * 1e6,
            packet_time_s * 1e6,
            emulation.late_share * 100.0
        ));
    }
    // Goodput counts what the receivers read in the measured interval, the link
    // what it sent then: bytes that crossed before the interval began and were
    // read after it count in the first, not the second. Never silently above
    // what the link carried.
    if read > carried * 1.02 {
        emulation.warnings.push(format!(
            "the flows' goodput ({}) is above what the bottleneck carried in the \
             measured interval ({}): data that crossed it before the warm-up ended was \
             read after; a longer measured interval makes this share small",
            rate(read),
            rate(carried)
        ));
    }
    if outcome.access_drops > 0 {
        emulation.warnings.push(format!(
            "{} packets found their access link's queue full ({} packets, as the \
             simulator's access DropTail): a source is faster than its access link",
            outcome.access_drops,
            crate::plane::ACCESS_LIMIT
        ));
    }
    if outcome.unhandled > 0 {
        emulation.kept_time = false;
        emulation.warnings.push(format!(
            "time was not kept: the data plane fell behind and {} events due before \
             the end were not handled when the run's time was up; {ADVICE}",
            outcome.unhandled
        ));
    }
    if tun_drops > 0 {
        emulation.warnings.push(format!(
            "{} packets were lost in the TUN queues before the emulator read them",
            tun_drops
        ));
    }
    emulation
}

/// Each flow's row, from the receivers' counts and the senders' `TCP_INFO` over
/// the measured interval `(from, to)` (ns) of `secs`, and the TCP trace's rows.
fn flow_rows(
    i: &Inputs<'_>,
    (from, to): (u64, u64),
    secs: f64,
    shares: &[f64],
) -> (Vec<FlowResult>, Vec<TcpTraceResult>) {
    let mut rows = Vec::with_capacity(i.flows.len());
    let mut trace = Vec::new();
    let tcp_interval = i.s.monitor().tcp_trace.map(|d| d.as_nanos());
    for (id, fl) in i.flows.iter().enumerate() {
        let g = &i.groups[fl.group as usize];
        let c = &i.outcome.flows[id];
        let size = fl.packet_size;
        let probe = i.outcome.probes[id].as_ref().map(|e| probe_stats([e]));
        let tcp = g.kind.is_tcp();
        let samples = i.shared.info[id].lock().expect("not poisoned").clone();
        let app = (i.app_group == Some(fl.group as usize)).then_some(&c.app);
        let (delivered, sent, retransmits, rtt, timeouts, recoveries) = if let Some(a) = app {
            // Seen by the data plane only: no socket of ours to ask.
            (a.delivered, a.sent, a.retransmits, None, 0, 0)
        } else if tcp {
            let bytes = i.at_end.read_bytes[id] - i.at_warmup.read_bytes[id];
            let delivered = bytes / u64::from(payload(size));
            let first = samples.iter().rfind(|x| x.t_ns <= from);
            let last = samples.iter().rfind(|x| x.t_ns <= to);
            let delta = |get: fn(&InfoSample) -> u32| match (first, last) {
                (Some(a), Some(b)) => u64::from(get(b).wrapping_sub(get(a))),
                (None, Some(b)) => u64::from(get(b)),
                _ => 0,
            };
            let rtts: Vec<f64> = window(&samples, from, to)
                .filter(|x| x.srtt_us > 0)
                .map(|x| x.srtt_us as f64 * 1e-6)
                .collect();
            let rtt = (!rtts.is_empty()).then(|| rtts.iter().sum::<f64>() / rtts.len() as f64);
            (
                delivered,
                delta(|x| x.data_segs_out),
                delta(|x| x.total_retrans),
                rtt,
                delta(|x| x.total_rto),
                delta(|x| x.recoveries),
            )
        } else if let Some(p) = &probe {
            // A probe flow's packets are its probes, counted as they are.
            (p.echoed, p.sent, 0, None, 0, 0)
        } else {
            let got = i.at_end.datagrams[id] - i.at_warmup.datagrams[id];
            (got, c.udp_sent, 0, None, 0, 0)
        };
        if let Some(every) = tcp_interval {
            let mut next = 0;
            for x in &samples {
                if x.t_ns >= next {
                    trace.push(x.trace_row(id as u32));
                    next = x.t_ns + every;
                }
            }
        }
        rows.push(FlowResult {
            id: id as u32,
            group: g.name.clone(),
            kind: g.kind.name().to_string(),
            // Counted as the simulator counts: delivered packets at their size
            // (a program's at the size each had on the wire).
            goodput_bps: app.map_or(delivered as f64 * f64::from(size), |a| {
                a.delivered_bytes as f64
            }) * 8.0
                / secs,
            sent,
            delivered,
            drops: reason_map(&c.drops),
            drops_total: c.drops.iter().sum(),
            marks: c.marks,
            rtt_mean_s: rtt,
            retransmits,
            timeouts,
            fast_recoveries: recoveries,
            fair_share_bps: shares[id],
            base_rtt_s: i.net.base_rtt(fl).as_secs_f64(),
            probe,
        });
    }
    trace.sort_by(|a, b| a.t_s.total_cmp(&b.t_s).then(a.flow.cmp(&b.flow)));
    (rows, trace)
}
