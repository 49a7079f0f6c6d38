//! `kind = "fat_tree"`: a k-ary fat tree (Al-Fares et al., SIGCOMM 2008), read
//! into a graph's nodes and links so that validation, routing and the engine are
//! the graph's.
//!
//! k pods, each of k/2 edge and k/2 aggregation switches, every edge switch
//! linked to every aggregation switch of its pod; (k/2)^2 core switches, core
//! `j * k/2 + z` linked to aggregation switch `j` of every pod; `hosts_per_edge`
//! hosts (k/2 by default) on each edge switch. Names, each numbered from 0 over
//! the whole tree: hosts `h{i}` (host `i` on edge switch `i / hosts_per_edge`),
//! edge switches `e{p * k/2 + x}`, aggregation switches `a{p * k/2 + y}`, core
//! switches `c{j}`. Every port has the same qdisc both ways.

use super::{DelayKey, GraphLink, KeyPath, RateKey, Routing, Scenario, ScenarioError, Topology};
use crate::event::MAX_LINKS;
use aqm::{Dur, QdiscSpec, Rate};
use serde::Serialize;

/// A fat tree's keys as written.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FatTree {
    /// Ports per switch: even, at least 2.
    pub k: u32,
    /// Hosts on each edge switch; k/2 when not written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hosts_per_edge: Option<u32>,
    /// Every switch-to-switch link's rate, and a host link's unless `host_rate`.
    pub rate: Rate,
    /// Every link's one-way delay.
    pub delay: Dur,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_rate: Option<Rate>,
    /// Every port's qdisc, both ways; the scenario's `[qdisc]`, else DropTail,
    /// when not written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qdisc: Option<QdiscSpec>,
    /// Whether every link is monitored (off: tens of thousands of ports).
    pub monitor: bool,
}

impl FatTree {
    fn half(&self) -> usize {
        self.k as usize / 2
    }

    fn hosts_per_edge(&self) -> usize {
        self.hosts_per_edge.map_or(self.half(), |h| h as usize)
    }

    /// Hosts and links in all (checked before they are made).
    fn size(&self) -> (u64, u64) {
        // Saturating: a k or hosts_per_edge near 2^32 is refused, not wrapped.
        let (k, half) = (self.k as u64, self.half() as u64);
        let edges = k.saturating_mul(half);
        let hosts = edges.saturating_mul(self.hosts_per_edge() as u64);
        let switch_links = edges.saturating_mul(half).saturating_mul(2);
        (hosts, hosts.saturating_add(switch_links))
    }

    /// The keys as a run simulates them (`Scenario::simulated`).
    pub(super) fn simulated(&self, routing: Routing) -> serde_json::Value {
        let mut v = serde_json::to_value(self).expect("a fat tree serializes");
        if let Some(m) = v.as_object_mut() {
            m.insert("kind".into(), "fat_tree".into());
            m.insert("routing".into(), routing.name().into());
        }
        v
    }

    /// The nodes and links, in the order the module comment gives.
    fn expand(&self, port: Option<&QdiscSpec>) -> (Vec<String>, Vec<GraphLink>) {
        let (k, half, per_edge) = (self.k as usize, self.half(), self.hosts_per_edge());
        let (hosts, links) = self.size();
        let edges = k * half;
        let mut nodes = Vec::with_capacity(hosts as usize + 2 * edges + half * half);
        nodes.extend((0..hosts).map(|i| format!("h{i}")));
        nodes.extend((0..edges).map(|i| format!("e{i}")));
        nodes.extend((0..edges).map(|i| format!("a{i}")));
        nodes.extend((0..half * half).map(|i| format!("c{i}")));
        let link = |from: String, to: String, rate: Rate| GraphLink {
            from,
            to,
            rate: Some(RateKey::Constant(rate)),
            delay: Some(DelayKey::Fixed(self.delay)),
            qdisc: port.cloned(),
            reverse_qdisc: port.cloned(),
            monitor: self.monitor,
            ..GraphLink::default()
        };
        let mut out = Vec::with_capacity(links as usize);
        let host_rate = self.host_rate.unwrap_or(self.rate);
        for h in 0..hosts as usize {
            out.push(link(
                format!("h{h}"),
                format!("e{}", h / per_edge),
                host_rate,
            ));
        }
        for p in 0..k {
            for x in 0..half {
                for y in 0..half {
                    let (e, a) = (p * half + x, p * half + y);
                    out.push(link(format!("e{e}"), format!("a{a}"), self.rate));
                }
            }
        }
        for p in 0..k {
            for y in 0..half {
                for z in 0..half {
                    let (a, c) = (p * half + y, y * half + z);
                    out.push(link(format!("a{a}"), format!("c{c}"), self.rate));
                }
            }
        }
        (nodes, out)
    }
}

impl Scenario {
    /// A fat tree's keys checked, each error at its line, and its nodes and
    /// links made (once: a scenario checked again keeps them).
    pub(super) fn expand_fat_tree(&mut self) -> Result<(), ScenarioError> {
        let Topology::Graph {
            nodes,
            fat_tree: Some(fat),
            ..
        } = self.file.topology.get_ref()
        else {
            return Ok(());
        };
        if !nodes.is_empty() {
            return Ok(());
        }
        let top = KeyPath::top("topology");
        let k = fat.k;
        if k < 2 || k % 2 == 1 {
            return Err(self.error_at(
                &top.key("k"),
                format!(
                    "topology.k = {k} must be even and at least 2 (a pod has k/2 edge and \
                     k/2 aggregation switches)"
                ),
            ));
        }
        if fat.hosts_per_edge == Some(0) {
            return Err(self.error_at(
                &top.key("hosts_per_edge"),
                "topology.hosts_per_edge = 0 must be at least 1".into(),
            ));
        }
        for (key, rate) in [("rate", Some(fat.rate)), ("host_rate", fat.host_rate)] {
            if rate.is_some_and(|r| r.bps() == 0) {
                return Err(
                    self.error_at(&top.key(key), format!("topology.{key} must be positive"))
                );
            }
        }
        // Bounded before anything is made: a k of a million would not fit in memory.
        let (hosts, links) = fat.size();
        if links.saturating_mul(2) > MAX_LINKS as u64 {
            let (key, value) = match fat.hosts_per_edge {
                Some(h) => ("hosts_per_edge", h),
                None => ("k", k),
            };
            return Err(self.error_at(
                &top.key(key),
                format!(
                    "topology.{key} = {value}: a fat tree of k = {k} with {hosts} hosts has \
                     {links} links, {} directions; at most {MAX_LINKS} fit the event queue",
                    links.saturating_mul(2)
                ),
            ));
        }
        let port = fat
            .qdisc
            .as_ref()
            .or(self.file.qdisc.as_ref().map(|q| q.get_ref()));
        let (new_nodes, new_links) = fat.expand(port);
        if let Topology::Graph { nodes, links, .. } = self.file.topology.get_mut() {
            *nodes = new_nodes;
            *links = new_links;
        }
        Ok(())
    }

    /// The fat tree's port qdisc and where it is written, when the graph is a
    /// fat tree whose ports have one written (`topology.qdisc` or `[qdisc]`).
    pub(super) fn fat_tree_port(&self) -> Option<(KeyPath, &QdiscSpec)> {
        let Topology::Graph {
            fat_tree: Some(fat),
            ..
        } = self.file.topology.get_ref()
        else {
            return None;
        };
        match (&fat.qdisc, &self.file.qdisc) {
            (Some(q), _) => Some((KeyPath::top("topology").key("qdisc"), q)),
            (None, Some(q)) => Some((KeyPath::top("qdisc"), q.get_ref())),
            (None, None) => None,
        }
    }

    /// Whether the topology is a fat tree.
    pub fn is_fat_tree(&self) -> bool {
        matches!(
            self.file.topology.get_ref(),
            Topology::Graph {
                fat_tree: Some(_),
                ..
            }
        )
    }
}
