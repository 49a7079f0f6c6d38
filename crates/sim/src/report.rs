//! Turns a finished simulation's counters into a [`RunResult`].

use crate::engine::Simulation;
use crate::fair_share::{max_min_fair, Demand};
use crate::results::{
    fairness, reason_map, FairnessSummary, FlowResult, GroupResult, LinkFlowResult, LinkResult,
    QueueSeries, RunResult,
};
use std::collections::BTreeMap;

impl Simulation {
    /// The results of the measured interval so far. `wall_seconds` is the caller's.
    pub fn report(&self, wall_seconds: f64) -> RunResult {
        let (flow_counts, link_counts, per_flow) = self.measured();
        let secs = self.measured_seconds().max(1e-12);
        let capacities: Vec<f64> = self.links.iter().map(|l| l.rate.as_f64()).collect();
        let demands: Vec<Demand<'_>> = self
            .flows
            .iter()
            .map(|f| Demand {
                demand_bps: self.groups[f.group as usize].demand_bps,
                path: &[],
            })
            .collect();
        // Paths as usize for the fair-share computation.
        let paths: Vec<Vec<usize>> = (0..self.flows.len())
            .map(|f| self.data_route(f).iter().map(|&l| l as usize).collect())
            .collect();
        let demands: Vec<Demand<'_>> = demands
            .iter()
            .zip(&paths)
            .map(|(d, p)| Demand {
                demand_bps: d.demand_bps,
                path: p,
            })
            .collect();
        let shares = max_min_fair(&capacities, &demands);

        let flows: Vec<FlowResult> = self
            .flows
            .iter()
            .zip(&flow_counts)
            .enumerate()
            .map(|(id, (f, c))| {
                let group = &self.groups[f.group as usize];
                let goodput_bps = c.delivered as f64 * f.packet_size as f64 * 8.0 / secs;
                FlowResult {
                    id: id as u32,
                    group: group.name.clone(),
                    kind: group.kind.name().to_string(),
                    goodput_bps,
                    sent: c.sent,
                    delivered: c.delivered,
                    drops: reason_map(&c.drops),
                    drops_total: c.drops.iter().sum(),
                    marks: c.marks,
                    rtt_mean_s: (f.kind.is_tcp() && c.rtt_samples > 0)
                        .then(|| c.rtt_sum_s / c.rtt_samples as f64),
                    retransmits: c.retransmits,
                    timeouts: c.timeouts,
                    fast_recoveries: c.fast_recoveries,
                    fair_share_bps: shares[id],
                }
            })
            .collect();

        let mut groups = BTreeMap::new();
        let mut group_fairness = BTreeMap::new();
        for (gi, g) in self.groups.iter().enumerate() {
            let members: Vec<&FlowResult> = flows
                .iter()
                .zip(&self.flows)
                .filter(|(_, f)| f.group as usize == gi)
                .map(|(r, _)| r)
                .collect();
            let xs: Vec<f64> = members.iter().map(|r| r.goodput_bps).collect();
            let fair = fairness(&xs);
            let sum: f64 = xs.iter().sum();
            groups.insert(
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
                },
            );
            group_fairness.insert(g.name.clone(), fair);
        }
        let tcp: Vec<f64> = flows
            .iter()
            .zip(&self.flows)
            .filter(|(_, f)| f.kind.is_tcp())
            .map(|(r, _)| r.goodput_bps)
            .collect();
        let all: Vec<f64> = flows.iter().map(|r| r.goodput_bps).collect();

        let warmup_s = self.warmup().as_secs_f64();
        let mut links = Vec::new();
        let mut link_flows = Vec::new();
        for (((li, samples), per), c) in self.monitor_links().zip(&per_flow).zip(&link_counts) {
            let l = &self.links[li];
            let name = self.link_name(li);
            let q = &c.queue;
            links.push(LinkResult {
                name: name.clone(),
                from: self.nodes[l.from as usize].clone(),
                to: self.nodes[l.to as usize].clone(),
                rate_bps: l.rate.bps(),
                delay_s: l.delay.as_secs_f64(),
                qdisc: l.qdisc.qdisc().kind().to_string(),
                utilization: (c.busy_ns as f64 * 1e-9 / secs).min(1.0),
                throughput_bps: c.tx_bytes as f64 * 8.0 / secs,
                tx_packets: c.tx_packets,
                arrivals: q.received,
                drops: reason_map(&q.drops),
                drops_total: q.drops.iter().sum(),
                marks: reason_map(&q.marks),
                marks_total: q.marks.iter().sum(),
                mean_queue_packets: c.queue_area as f64 * 1e-9 / secs,
                max_queue_packets: l.max_queue,
                queue: QueueSeries {
                    t_s: samples.iter().map(|s| s.0).collect(),
                    packets: samples.iter().map(|s| s.1).collect(),
                    bytes: samples.iter().map(|s| s.2).collect(),
                },
            });
            for (flow, c) in per.iter().enumerate() {
                if c.packets > 0 || c.queue_area > 0 {
                    link_flows.push(LinkFlowResult {
                        link: name.clone(),
                        flow: flow as u32,
                        throughput_bps: c.bytes as f64 * 8.0 / secs,
                        packets: c.packets,
                        mean_queue_packets: c.queue_area as f64 * 1e-9 / secs,
                    });
                }
            }
        }
        let _ = warmup_s;
        RunResult {
            scenario: self.name.clone(),
            seed: self.seed,
            duration_s: self.end().as_secs_f64(),
            warmup_s: self.warmup().as_secs_f64(),
            events: self.event_count,
            wall_seconds,
            sim_seconds: self.now().as_secs_f64(),
            flows,
            groups,
            links,
            link_flows,
            fairness: FairnessSummary {
                tcp: fairness(&tcp),
                all: fairness(&all),
                groups: group_fairness,
            },
        }
    }
}
