//! Turns a simulation's counters and observers into a [`RunResult`].

use crate::engine::Simulation;
use crate::fair_share::{max_min_fair, Demand};
use crate::flow::{Endpoints, Flow};
use crate::net::hosts::{Hosts, Role};
use crate::net::{Group, Network};
use crate::observe::delays::{Delays, Histogram};
use crate::observe::flow_slots::FlowSlots;
use crate::observe::in_progress;
use crate::observe::link_stats::{LinkCounters, LinkStats};
use crate::probe;
use crate::results::{
    fairness, reason_map, DelayBucket, DelayResult, DiagnosticResult, Fairness, FairnessSummary,
    FlowResult, FlowSeriesResult, GroupResult, HostResult, LinkFlowResult, LinkResult,
    ObjectResult, ProbeStats, QueueEventResult, QueueSeries, RunResult, TcpTraceResult,
};
use aqm::Time;
use std::collections::{BTreeMap, HashMap};

pub type GroupFairness = BTreeMap<String, crate::results::Fairness>;

/// What the report reads of the flows, so that the rest of it can be made after
/// they are freed (`Simulation::into_report`).
struct FlowsRead {
    rows: Vec<FlowResult>,
    /// The TCP flows' goodputs, in flow order.
    tcp: Vec<f64>,
    objects: Vec<ObjectResult>,
    /// Each probe group's statistics, its flows' pooled, by group index.
    probes: BTreeMap<usize, ProbeStats>,
}

/// What the report reads of the link directions, so that the rest of it can be
/// made after they are freed (`Simulation::into_report`).
struct LinksRead {
    /// The monitored link directions' names and measured counters, in report order.
    names: Vec<String>,
    counts: Vec<LinkCounters>,
    /// Which flow each row of their per-flow tables is.
    slots: Vec<FlowSlots>,
    links: Vec<LinkResult>,
    flow_series: Vec<FlowSeriesResult>,
    delays: Vec<DelayResult>,
    delay_histogram: Vec<DelayBucket>,
    diagnostics: Vec<DiagnosticResult>,
    queue_events: Vec<QueueEventResult>,
}

impl Simulation {
    /// The results of the measured interval so far. `wall_seconds` is the caller's.
    pub fn report(&self, wall_seconds: f64) -> RunResult {
        let net = &self.net;
        let shares = self.fair_shares(net.links.len(), |l| net.pipe(l).rate.as_f64());
        let counts = self
            .obs
            .measured_links(self.now(), self.net.view(&self.wires));
        let read = self.read_links(counts);
        let flows = self.read_flows(&shares, &self.base_rtts());
        self.finish_report(read, flows, wall_seconds)
    }

    /// [`Simulation::report`] for a run that is over: each part is freed once
    /// read, so that the report's peak stays below the running simulation's.
    /// The link directions and the monitored links' per-flow tables go before
    /// the fair shares are computed, the routes before the flows' rows are made,
    /// the flows before the rows of the links' flows (at 100,000 flows in a
    /// dumbbell: links 256 bytes a flow, per-flow tables 96, fair shares' working
    /// memory 113, flows 480, their rows 300).
    pub fn into_report(mut self, wall_seconds: f64) -> RunResult {
        // Each link's pipe, for its capacity once the links are gone: 4 bytes a
        // link instead of 8 for its rate.
        let pipes: Vec<u32> = self.net.links.iter().map(|l| l.pipe).collect();
        let base_rtts = self.base_rtts();
        let now = self.now();
        let counts = self
            .obs
            .take_measured_links(now, self.net.view(&self.wires));
        let read = self.read_links(counts);
        self.net.links = Vec::new();
        self.obs.links = Vec::new();
        let net = &self.net;
        let shares = self.fair_shares(pipes.len(), |l| net.pipes.get(pipes[l]).rate.as_f64());
        drop(pipes);
        self.net.routes = Default::default();
        let flows = self.read_flows(&shares, &base_rtts);
        drop(shares);
        self.flows = Vec::new();
        self.finish_report(read, flows, wall_seconds)
    }

    /// Everything the report needs of the link directions themselves, with
    /// `counts`, the monitored links' measured counters.
    fn read_links(&self, counts: Vec<LinkCounters>) -> LinksRead {
        let links = self.net.view(&self.wires);
        let secs = self.measured_seconds().max(1e-12);
        let mut read = LinksRead {
            names: Vec::new(),
            links: Vec::new(),
            flow_series: Vec::new(),
            delays: Vec::new(),
            delay_histogram: Vec::new(),
            diagnostics: self.diagnostics(),
            queue_events: self.queue_event_results(),
            counts: Vec::new(),
            slots: Vec::new(),
        };
        for (stats, c) in self.obs.links.iter().zip(&counts) {
            let name = self.link_name(stats.link as usize);
            read.links.push(self.link_result(stats, c, &name, secs));
            if let Some(series) = &stats.series {
                let partial = in_progress(stats, links, self.now());
                read.flow_series
                    .extend(series.rows_at(self.now(), partial).into_iter().map(|r| {
                        let dt = r.len.as_secs_f64();
                        FlowSeriesResult {
                            link: name.clone(),
                            t_s: r.start.as_secs_f64(),
                            dt_s: dt,
                            flow: stats.slots.flow(r.flow as usize),
                            packets: r.packets,
                            bytes: r.bits as f64 / 8.0,
                            throughput_bps: if dt > 0.0 { r.bits as f64 / dt } else { 0.0 },
                            drops: r.drops,
                            marks: r.marks,
                        }
                    }));
            }
            if let Some(d) = &stats.delays {
                delay_rows(
                    &name,
                    &self.groups,
                    d,
                    &mut read.delays,
                    &mut read.delay_histogram,
                );
            }
            read.names.push(name);
            read.slots.push(stats.slots.clone());
        }
        read.counts = counts;
        read
    }

    /// Everything the report needs of the flows themselves, given their fair
    /// `shares`.
    fn read_flows(&self, shares: &[f64], base_rtts: &[f64]) -> FlowsRead {
        let secs = self.measured_seconds().max(1e-12);
        let rows = self.flow_results(shares, base_rtts, secs);
        let tcp = rows
            .iter()
            .zip(&self.flows)
            .filter(|(_, f)| f.kind.is_tcp())
            .map(|(r, _)| r.goodput_bps)
            .collect();
        let mut probes = BTreeMap::new();
        for (gi, g) in self.groups.iter().enumerate() {
            let ends = self.flows[g.first as usize..(g.first + g.count) as usize]
                .iter()
                .filter_map(|f| match &f.endpoints {
                    Endpoints::Probe(p) => Some(&**p),
                    _ => None,
                });
            if g.probe.is_some() {
                probes.insert(gi, probe::stats(ends));
            }
        }
        FlowsRead {
            rows,
            tcp,
            objects: self.object_results(),
            probes,
        }
    }

    /// The rest of the report, from what `read_links` and `read_flows` read;
    /// touches no link, flow or monitored link's per-flow table.
    fn finish_report(
        &self,
        read: LinksRead,
        read_flows: FlowsRead,
        wall_seconds: f64,
    ) -> RunResult {
        let secs = self.measured_seconds().max(1e-12);
        let FlowsRead {
            rows: flows,
            tcp,
            objects,
            probes,
        } = read_flows;
        let (groups, group_fairness) = group_results(&self.groups, &flows, &probes);
        let hosts = host_results(&self.groups, &flows);
        let fairness = fairness_summary(&flows, &tcp, group_fairness, &hosts);
        // One row per flow that crossed a monitored link, counted first: a vector
        // grown by doubling holds up to twice its rows at the peak of a big run.
        let rows = read
            .counts
            .iter()
            .flat_map(|c| &c.per_flow)
            .filter(|c| c.packets > 0 || c.queue_area > 0)
            .count();
        let mut link_flows = Vec::with_capacity(rows);
        for ((name, c), slots) in read.names.iter().zip(&read.counts).zip(&read.slots) {
            link_flow_rows(name, slots, c, secs, &mut link_flows);
        }
        drop(read.counts);
        RunResult {
            scenario: self.name().to_string(),
            seed: self.seed(),
            duration_s: self.end().as_secs_f64(),
            warmup_s: self.warmup().as_secs_f64(),
            events: self.events(),
            wall_seconds,
            sim_seconds: self.now().as_secs_f64(),
            flows,
            groups,
            hosts: hosts.rows,
            links: read.links,
            link_flows,
            fairness,
            flow_series: read.flow_series,
            tcp_trace: self.tcp_trace_results(),
            delays: read.delays,
            delay_histogram: read.delay_histogram,
            objects,
            queue_events: read.queue_events,
            queue_events_missed: self.obs.events.as_ref().map_or(0, |e| e.missed),
            diagnostics: read.diagnostics,
            emulation: None,
        }
    }

    /// Every link's qdisc diagnostic, monitored or not, in link order.
    fn diagnostics(&self) -> Vec<DiagnosticResult> {
        self.net
            .links
            .iter()
            .enumerate()
            .filter_map(|(l, link)| {
                Some(DiagnosticResult {
                    note: link.qdisc.diagnostic()?,
                    link: self.link_name(l),
                    qdisc: link.qdisc.kind().to_string(),
                })
            })
            .collect()
    }

    fn measured_seconds(&self) -> f64 {
        self.now().saturating_since(self.warmup()).as_secs_f64()
    }

    /// Each flow's max-min fair share given every flow's demand and data route,
    /// link `l` of capacity `capacity(l)`.
    fn fair_shares(&self, links: usize, capacity: impl Fn(usize) -> f64) -> Vec<f64> {
        let capacities: Vec<f64> = (0..links).map(capacity).collect();
        fair_shares(&self.net, &self.groups, &self.flows, &capacities)
    }

    /// Each flow's base RTT, seconds: the propagation delays of its data route
    /// and of its ACK route.
    fn base_rtts(&self) -> Vec<f64> {
        self.flows
            .iter()
            .map(|f| self.net.base_rtt(f).as_secs_f64())
            .collect()
    }

    fn flow_results(&self, shares: &[f64], base_rtts: &[f64], secs: f64) -> Vec<FlowResult> {
        self.flows
            .iter()
            .zip(self.obs.measured_flows(&self.flows))
            .enumerate()
            .map(|(id, (f, mut c))| {
                let group = &self.groups[f.group as usize];
                let probe = match &f.endpoints {
                    Endpoints::Probe(p) => Some(probe::stats([&**p])),
                    _ => None,
                };
                if let Some(p) = &probe {
                    // A probe flow's packets are its probes, counted as they are.
                    (c.sent, c.delivered) = (p.sent, p.echoed);
                }
                FlowResult {
                    id: id as u32,
                    group: group.name.clone(),
                    kind: group.kind.name().to_string(),
                    goodput_bps: c.delivered as f64 * f.packet_size as f64 * 8.0 / secs,
                    sent: c.sent,
                    delivered: c.delivered,
                    drops: reason_map(&c.drops),
                    drops_total: c.drops.iter().sum(),
                    marks: c.marks,
                    rtt_mean_s: (f.kind.is_tcp() && c.rtt_samples > 0)
                        .then(|| c.rtt_sum_s / c.rtt_samples as f64),
                    base_rtt_s: base_rtts[id],
                    retransmits: c.retransmits,
                    timeouts: c.timeouts,
                    fast_recoveries: c.fast_recoveries,
                    fair_share_bps: shares[id],
                    probe,
                }
            })
            .collect()
    }

    fn link_result(
        &self,
        stats: &LinkStats,
        c: &LinkCounters,
        name: &str,
        secs: f64,
    ) -> LinkResult {
        let l = &self.net.links[stats.link as usize];
        let pipe = self.net.pipe(stats.link as usize);
        let model =
            (pipe.model != crate::link::NO_MODEL).then(|| &self.net.models[pipe.model as usize]);
        link_result(
            &MeasuredLink {
                name,
                from: &self.net.nodes.name(l.from),
                to: &self.net.nodes.name(l.to),
                pipe,
                qdisc: l.qdisc.kind(),
                model,
                stats,
                counters: c,
            },
            (self.warmup(), self.now()),
            secs,
        )
    }

    fn tcp_trace_results(&self) -> Vec<TcpTraceResult> {
        let Some(trace) = &self.obs.tcp else {
            return Vec::new();
        };
        trace.samples.iter().map(TcpTraceResult::from).collect()
    }

    fn object_results(&self) -> Vec<ObjectResult> {
        let Some(objects) = &self.obs.objects else {
            return Vec::new();
        };
        objects
            .done
            .iter()
            .map(|o| ObjectResult {
                flow: o.flow,
                group: self.groups[self.flows[o.flow as usize].group as usize]
                    .name
                    .clone(),
                start_s: o.start.as_secs_f64(),
                end_s: o.end.as_secs_f64(),
                transfer_s: o.end.saturating_since(o.start).as_secs_f64(),
                packets: o.packets,
            })
            .collect()
    }

    fn queue_event_results(&self) -> Vec<QueueEventResult> {
        let Some(log) = &self.obs.events else {
            return Vec::new();
        };
        log.events
            .iter()
            .map(|e| QueueEventResult {
                t_s: e.at.as_secs_f64(),
                link: self.link_name(e.link as usize),
                flow: e.flow,
                reason: e.reason.name().to_string(),
                mark: e.mark,
            })
            .collect()
    }
}

/// Each flow's max-min fair share given every flow's demand and data route in
/// `net`, link `l` of capacity `capacities[l]`.
pub fn fair_shares(
    net: &Network,
    groups: &[Group],
    flows: &[Flow],
    capacities: &[f64],
) -> Vec<f64> {
    // Each flow's data route, borrowed from the routes (a copy of each was 48
    // bytes a flow at the report's peak).
    let demands: Vec<Demand<'_>> = flows
        .iter()
        .map(|f| Demand {
            demand_bps: groups[f.group as usize].demand_bps,
            path: net.routes.route(f.fwd),
        })
        .collect();
    max_min_fair(capacities, &demands)
}

/// A monitored link direction, what the report shows of it: what it is, and what
/// its observer counted over the measured interval.
pub struct MeasuredLink<'a> {
    pub name: &'a str,
    pub from: &'a str,
    pub to: &'a str,
    pub pipe: &'a crate::link::Pipe,
    pub qdisc: &'a str,
    /// The link direction's model, if its rate, loss or delay varies.
    pub model: Option<&'a crate::link_model::LinkModel>,
    pub stats: &'a LinkStats,
    /// `stats`' counters over the measured interval (less the warm-up's).
    pub counters: &'a LinkCounters,
}

/// The row of the links table for `m`, measured over `interval` of `secs`: the
/// simulator's report and the emulator's both make it here.
pub fn link_result(m: &MeasuredLink<'_>, interval: (Time, Time), secs: f64) -> LinkResult {
    let c = m.counters;
    let q = &c.queue;
    let samples = &m.stats.samples;
    LinkResult {
        name: m.name.to_string(),
        from: m.from.to_string(),
        to: m.to.to_string(),
        rate_bps: m.pipe.rate.bps(),
        delay_s: m.pipe.delay.as_secs_f64(),
        qdisc: m.qdisc.to_string(),
        utilization: utilization(m.model, c.busy_ns, c.tx_bits, interval, secs),
        throughput_bps: c.tx_bits as f64 / secs,
        tx_packets: c.tx_packets,
        arrivals: q.received,
        drops: reason_map(&with_link_losses(q.drops, c.link_losses)),
        drops_total: q.drops.iter().sum::<u64>() + c.link_losses,
        marks: reason_map(&q.marks),
        marks_total: q.marks.iter().sum(),
        mean_queue_packets: c.queue_area as f64 * 1e-9 / secs,
        max_queue_packets: m.stats.max_queue,
        queue: QueueSeries {
            t_s: samples.iter().map(|s| s.0).collect(),
            packets: samples.iter().map(|s| s.1).collect(),
            bytes: samples.iter().map(|s| s.2).collect(),
        },
    }
}

/// The rows of the link-flows table for link `name`: each flow that crossed it
/// or waited in its queue, from `counters` (rows as `slots` lays them out).
pub fn link_flow_rows(
    name: &str,
    slots: &FlowSlots,
    counters: &LinkCounters,
    secs: f64,
    out: &mut Vec<LinkFlowResult>,
) {
    for (flow, c) in slots.flows().zip(&counters.per_flow) {
        if c.packets > 0 || c.queue_area > 0 {
            out.push(LinkFlowResult {
                link: name.to_string(),
                flow,
                throughput_bps: c.bits as f64 / secs,
                packets: c.packets,
                mean_queue_packets: c.queue_area as f64 * 1e-9 / secs,
            });
        }
    }
}

/// The fairness summary: over `tcp`, the TCP (and web) flows' goodputs; over
/// every flow's but probes' (a few kbit/s by design); each group's; and between
/// `hosts`.
pub fn fairness_summary(
    flows: &[FlowResult],
    tcp: &[f64],
    groups: GroupFairness,
    hosts: &HostTable,
) -> FairnessSummary {
    let all: Vec<f64> = flows
        .iter()
        .filter(|r| r.probe.is_none())
        .map(|r| r.goodput_bps)
        .collect();
    FairnessSummary {
        tcp: fairness(tcp),
        all: fairness(&all),
        groups,
        hosts: hosts.senders.clone(),
        receiver_hosts: hosts.receivers.clone(),
    }
}

/// The share of a link direction's capacity its transmissions used over the
/// measured interval `(from, to)` of `secs`: time busy over time for a rate
/// (constant or scheduled), bits sent over the bits the opportunities of the
/// interval offered for a delivery trace, where a packet waiting for its
/// opportunity is not a link at work. The simulator and the emulator both
/// report it.
pub fn utilization(
    model: Option<&crate::link_model::LinkModel>,
    busy_ns: u128,
    tx_bits: u64,
    (from, to): (Time, Time),
    secs: f64,
) -> f64 {
    let trace = model.and_then(|m| match m.tx.rate() {
        crate::link_model::LinkRate::Trace(trace) => Some(trace),
        _ => None,
    });
    let used = match trace {
        Some(trace) => {
            let offered =
                trace.count(from, to) as f64 * crate::link_model::OPPORTUNITY_BYTES as f64 * 8.0;
            tx_bits as f64 / offered.max(1.0)
        }
        None => busy_ns as f64 * 1e-9 / secs,
    };
    used.min(1.0)
}

/// The rows of the delays and delay-histogram tables for the queue of `link`:
/// the link's own, then one per group (the emulator's report uses it too).
pub fn delay_rows(
    link: &str,
    groups: &[Group],
    d: &Delays,
    rows: &mut Vec<DelayResult>,
    histogram: &mut Vec<DelayBucket>,
) {
    let named = std::iter::once((None, &d.all)).chain(
        groups
            .iter()
            .zip(&d.groups)
            .map(|(g, h)| (Some(g.name.clone()), h)),
    );
    for (group, h) in named {
        rows.push(delay_result(link, group.clone(), h));
        histogram.extend(h.buckets().map(|(lo, hi, count)| DelayBucket {
            link: link.to_string(),
            group: group.clone(),
            lo_s: lo as f64 * 1e-9,
            hi_s: hi as f64 * 1e-9,
            count,
        }));
    }
}

fn delay_result(link: &str, group: Option<String>, h: &Histogram) -> DelayResult {
    DelayResult {
        link: link.to_string(),
        scope: if group.is_some() { "group" } else { "link" }.to_string(),
        group,
        count: h.n,
        mean_s: h.mean_ns() * 1e-9,
        p50_s: h.quantile_ns(0.5) * 1e-9,
        p90_s: h.quantile_ns(0.9) * 1e-9,
        p95_s: h.quantile_ns(0.95) * 1e-9,
        p99_s: h.quantile_ns(0.99) * 1e-9,
        max_s: h.max_ns as f64 * 1e-9,
    }
}

/// Per group: totals, and fairness within the group. `flows` are the run's rows in
/// flow order, each group's members contiguous (the emulator's report uses it too);
/// `probes` the probe groups' pooled statistics, by group index.
pub fn group_results(
    groups: &[Group],
    flows: &[FlowResult],
    probes: &BTreeMap<usize, ProbeStats>,
) -> (BTreeMap<String, GroupResult>, GroupFairness) {
    let mut results = BTreeMap::new();
    let mut group_fairness = BTreeMap::new();
    for (gi, g) in groups.iter().enumerate() {
        let members = &flows[g.first as usize..(g.first + g.count) as usize];
        let xs: Vec<f64> = members.iter().map(|r| r.goodput_bps).collect();
        let fair = fairness(&xs);
        let sum: f64 = xs.iter().sum();
        let rtts: Vec<f64> = members.iter().filter_map(|r| r.rtt_mean_s).collect();
        results.insert(
            g.name.clone(),
            GroupResult {
                kind: g.kind.name().to_string(),
                count: xs.len() as u32,
                goodput_bps: sum,
                goodput_mean_bps: if xs.is_empty() {
                    0.0
                } else {
                    sum / xs.len() as f64
                },
                drops_total: members.iter().map(|r| r.drops_total).sum(),
                marks: members.iter().map(|r| r.marks).sum(),
                jain: fair.jain,
                cov: fair.cov,
                rtt_mean_s: (!rtts.is_empty())
                    .then(|| rtts.iter().sum::<f64>() / rtts.len() as f64),
                probe: probes.get(&gi).cloned(),
            },
        );
        group_fairness.insert(g.name.clone(), fair);
    }
    (results, group_fairness)
}

/// The hosts table and the fairness between hosts, for each role some group
/// names a host in (the emulator's report uses it too).
#[derive(Default)]
pub struct HostTable {
    pub rows: Vec<HostResult>,
    pub senders: Option<Fairness>,
    pub receivers: Option<Fairness>,
}

/// Per host: its flows' totals and the fairness among them, and the fairness
/// between hosts. `flows` are the run's rows in flow order, as for
/// [`group_results`]. Probes are left out; hosts come in the order their first
/// flow does.
pub fn host_results(groups: &[Group], flows: &[FlowResult]) -> HostTable {
    let hosts = Hosts::new(groups);
    let mut table = HostTable::default();
    for role in [Role::Sender, Role::Receiver] {
        if !hosts.named_in(role) {
            continue;
        }
        let mut row_of: HashMap<u32, usize> = HashMap::new();
        let mut members: Vec<(String, Vec<&FlowResult>)> = Vec::new();
        for (gi, g) in groups.iter().enumerate().filter(|(_, g)| g.probe.is_none()) {
            for id in g.first..g.first + g.count {
                let host = hosts.of(gi, id, role);
                let row = *row_of.entry(host).or_insert_with(|| {
                    members.push((hosts.name(host, g), Vec::new()));
                    members.len() - 1
                });
                members[row].1.push(&flows[id as usize]);
            }
        }
        let goodputs: Vec<f64> = members
            .iter()
            .map(|(_, m)| m.iter().map(|r| r.goodput_bps).sum())
            .collect();
        let total: f64 = goodputs.iter().sum();
        for ((host, m), goodput) in members.iter().zip(&goodputs) {
            let own: Vec<f64> = m.iter().map(|r| r.goodput_bps).collect();
            table.rows.push(HostResult {
                host: host.clone(),
                role: role.name().to_string(),
                flows: m.len() as u32,
                goodput_bps: *goodput,
                share: if total > 0.0 { goodput / total } else { 0.0 },
                drops_total: m.iter().map(|r| r.drops_total).sum(),
                marks: m.iter().map(|r| r.marks).sum(),
                jain: fairness(&own).jain,
            });
        }
        let between = Some(fairness(&goodputs));
        match role {
            Role::Sender => table.senders = between,
            Role::Receiver => table.receivers = between,
        }
    }
    table
}

/// A link's drops by reason: its queue's, and its random loss's as `link_loss`.
fn with_link_losses(mut drops: aqm::ReasonCounts, losses: u64) -> aqm::ReasonCounts {
    drops[aqm::DropReason::LinkLoss.index()] += losses;
    drops
}
