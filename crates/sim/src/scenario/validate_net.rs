//! The checks of what the network will be, made before it is built, so that a
//! scenario that validates always builds: every qdisc's parameters on the link
//! that carries it, the number of flows and link directions the event queue can
//! name, a route for every flow, and the `[monitor] links` names.

use super::{KeyPath, Scenario, ScenarioError, Topology};
use crate::event::{MAX_FLOWS, MAX_LINKS};
use aqm::{LinkInfo, QdiscSpec, Rate};
use std::collections::{HashMap, HashSet};

/// Link directions a dumbbell has besides its flows' four each: the bottleneck's two.
const DUMBBELL_SHARED_LINKS: u64 = 2;

impl Scenario {
    /// The flows of every group, in all (bounded when the scenario validates).
    pub fn total_flows(&self) -> usize {
        self.file
            .flows
            .iter()
            .map(|g| g.get_ref().count as usize)
            .sum()
    }

    /// The network's checks: qdiscs, totals, routes, monitored link names.
    pub(super) fn validate_network(&self) -> Result<(), ScenarioError> {
        self.validate_qdiscs()?;
        self.validate_totals()?;
        self.validate_routes()?;
        self.validate_monitor_links()
    }

    /// Every qdisc table the scenario writes, checked as the registry would build
    /// it on its link (a rule such as BREATHe's K = link rate / `rate_limit` needs
    /// the rate). A `[qdisc]` no link uses (every graph link sets its own) is
    /// still checked, on the slowest link, since the user wrote it.
    fn validate_qdiscs(&self) -> Result<(), ScenarioError> {
        let f = &self.file;
        // With the groups' names, which a qdisc tree's filters may name.
        let groups: Vec<String> = f.flows.iter().map(|g| g.get_ref().name.clone()).collect();
        let check = |spec: &QdiscSpec, rate: Rate, path: &KeyPath| {
            spec.validate(&LinkInfo::new(rate).with_groups(&groups))
                .map_err(|e| self.qdisc_error(path, &e))
        };
        let top = KeyPath::top("qdisc");
        let topology = KeyPath::top("topology");
        // A fat tree's ports share one qdisc, checked at the key that gives it
        // on both rates its links have.
        if let Some((path, q)) = self.fat_tree_port() {
            if let Topology::Graph {
                fat_tree: Some(fat),
                ..
            } = f.topology.get_ref()
            {
                for rate in [Some(fat.rate), fat.host_rate].into_iter().flatten() {
                    check(q, rate, &path)?;
                }
            }
            return Ok(());
        }
        // The rate each qdisc is built with: its direction's nominal one.
        let links = self.links()?;
        match f.topology.get_ref() {
            Topology::Dumbbell { reverse_qdisc, .. } => {
                let (_, fwd, rev) = &links[0];
                if let Some(q) = &f.qdisc {
                    check(q.get_ref(), fwd.nominal_rate(), &top)?;
                }
                if let Some(q) = reverse_qdisc {
                    check(q, rev.nominal_rate(), &topology.key("reverse_qdisc"))?;
                }
            }
            Topology::Graph { links: specs, .. } => {
                for (k, (l, (_, fwd, rev))) in specs.iter().zip(&links).enumerate() {
                    let link = topology.key("links").index(k);
                    match (&l.qdisc, &f.qdisc) {
                        (Some(q), _) => check(q, fwd.nominal_rate(), &link.key("qdisc"))?,
                        (None, Some(q)) => check(q.get_ref(), fwd.nominal_rate(), &top)?,
                        (None, None) => {}
                    }
                    if let Some(q) = &l.reverse_qdisc {
                        check(q, rev.nominal_rate(), &link.key("reverse_qdisc"))?;
                    }
                }
                if let Some(q) = &f.qdisc {
                    let slowest = links
                        .iter()
                        .map(|(_, fwd, _)| fwd.nominal_rate())
                        .min_by_key(|r| r.bps());
                    if let Some(slowest) = slowest {
                        check(q.get_ref(), slowest, &top)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// The flows and link directions in all, within what the event queue can
    /// name; an error at the `count` that goes over.
    fn validate_totals(&self) -> Result<(), ScenarioError> {
        let f = &self.file;
        let (max_flows, why) = match f.topology.get_ref() {
            // Four access link directions per flow, all named by the event queue.
            Topology::Dumbbell { .. } => (
                (MAX_FLOWS as u64).min((MAX_LINKS as u64 - DUMBBELL_SHARED_LINKS) / 4),
                "fit the event queue (a dumbbell gives each flow four link directions)",
            ),
            Topology::Graph { links, .. } => {
                if 2 * links.len() as u64 > MAX_LINKS as u64 {
                    return Err(self.error_at(
                        &KeyPath::top("topology").key("links"),
                        format!(
                            "topology.links has {} links, {} directions; at most {MAX_LINKS} \
                             fit the event queue",
                            links.len(),
                            2 * links.len()
                        ),
                    ));
                }
                (MAX_FLOWS as u64, "fit the event queue")
            }
        };
        let mut total = 0u64;
        for (i, g) in f.flows.iter().enumerate() {
            let count = g.get_ref().count;
            total += count as u64;
            if total > max_flows {
                return Err(self.flow_error(
                    i,
                    "count",
                    format!(
                        "count = {count} brings the flows in all to {total}; at most {max_flows} {why}"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// In a graph, a route between the ends of every flow (links carry both
    /// directions, so a route exists when the ends are connected), and each
    /// explicit `path` a walk over links from `from` to `to`.
    fn validate_routes(&self) -> Result<(), ScenarioError> {
        let Topology::Graph { nodes, links, .. } = self.file.topology.get_ref() else {
            return Ok(());
        };
        // Names to indices once: a search per name was quadratic in a fat tree.
        let by_name: HashMap<&str, usize> = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_str(), i))
            .collect();
        let index = |n: &str| by_name[n];
        self.validate_paths(&by_name)?;
        // Union-find over the nodes: the component of each.
        let mut parent: Vec<usize> = (0..nodes.len()).collect();
        fn root(parent: &mut [usize], mut i: usize) -> usize {
            while parent[i] != i {
                parent[i] = parent[parent[i]];
                i = parent[i];
            }
            i
        }
        for l in links {
            let (a, b) = (index(&l.from), index(&l.to));
            let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
            parent[ra] = rb;
        }
        for (i, g) in self.file.flows.iter().enumerate() {
            let (Some(from), Some(to)) = (g.get_ref().from.as_deref(), g.get_ref().to.as_deref())
            else {
                continue;
            };
            let (a, b) = (index(from), index(to));
            if root(&mut parent, a) != root(&mut parent, b) {
                return Err(self.flow_error(
                    i,
                    "to",
                    format!("no route from \"{from}\" to \"{to}\""),
                ));
            }
        }
        Ok(())
    }

    /// Each flow group's `path`: its first node the group's `from`, its last its
    /// `to`, each node a node of the graph, each step a link, no node twice.
    fn validate_paths(&self, by_name: &HashMap<&str, usize>) -> Result<(), ScenarioError> {
        let Topology::Graph { links, .. } = self.file.topology.get_ref() else {
            return Ok(());
        };
        let groups = self.file.flows.iter().map(|g| g.get_ref());
        if groups.clone().all(|g| g.path.is_none()) {
            return Ok(());
        }
        let linked: HashSet<(usize, usize)> = links
            .iter()
            .flat_map(|l| {
                let (a, b) = (by_name[l.from.as_str()], by_name[l.to.as_str()]);
                [(a, b), (b, a)]
            })
            .collect();
        for (i, g) in groups.enumerate() {
            let Some(path) = &g.path else { continue };
            let at = |msg: String| self.flow_error(i, "path", msg);
            let (from, to) = (g.from.as_deref(), g.to.as_deref());
            if path.first().map(String::as_str) != from || path.last().map(String::as_str) != to {
                return Err(at(format!(
                    "path must start at from = \"{}\" and end at to = \"{}\"",
                    from.unwrap_or_default(),
                    to.unwrap_or_default()
                )));
            }
            let mut seen = HashSet::with_capacity(path.len());
            for (j, n) in path.iter().enumerate() {
                let Some(&node) = by_name.get(n.as_str()) else {
                    return Err(at(format!(
                        "path[{j}] = \"{n}\" is not a node of the topology"
                    )));
                };
                if !seen.insert(node) {
                    return Err(at(format!("path visits \"{n}\" twice")));
                }
                if j > 0 && !linked.contains(&(by_name[path[j - 1].as_str()], node)) {
                    return Err(at(format!(
                        "path[{}] = \"{}\" and path[{j}] = \"{n}\" are not linked",
                        j - 1,
                        path[j - 1]
                    )));
                }
            }
        }
        Ok(())
    }

    /// `[monitor] links` names monitored link directions only.
    fn validate_monitor_links(&self) -> Result<(), ScenarioError> {
        let Some(names) = &self.monitor().links else {
            return Ok(());
        };
        let monitored: Vec<String> = match self.file.topology.get_ref() {
            Topology::Dumbbell { .. } => vec!["left->right".into(), "right->left".into()],
            Topology::Graph { links, .. } => links
                .iter()
                .filter(|l| l.monitor)
                .flat_map(|l| {
                    [
                        format!("{}->{}", l.from, l.to),
                        format!("{}->{}", l.to, l.from),
                    ]
                })
                .collect(),
        };
        for (j, name) in names.iter().enumerate() {
            let wanted = if name == "bottleneck" {
                "left->right"
            } else {
                name
            };
            if !monitored.iter().any(|m| m == wanted) {
                return Err(self.monitor_error(
                    "links",
                    Some(j),
                    format!(
                        "links names \"{name}\", which is not a monitored link direction \
                         (monitored: {})",
                        monitored.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }
}
