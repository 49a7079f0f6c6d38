//! Building the [`Network`] a scenario describes: nodes, link directions with their
//! qdiscs, the monitored link directions, and every flow's routes.

use super::ecmp;
use super::routes::Graph;
use crate::event::MAX_LINKS;
use crate::flow::Flow;
use crate::link::{Link, Pipe, Pipes, Queue, NO_MODEL};
use crate::link_model::{Jitter, LinkModel, LinkRate, Loss, Transmitter};
use crate::net::hosts::Hosts;
use crate::net::routes::Routes;
use crate::net::{Group, Network, Nodes, Rebuild};
use crate::scenario::{Direction, KeyPath, Routing, Scenario, ScenarioError, Topology};
use aqm::{rng, FlowClass, FlowId, LinkInfo, QdiscSpec, Rate};
use std::collections::HashMap;

/// Stream numbers for `rng::stream`: each link direction draws from its own.
pub(crate) const STREAM_LINK: u64 = 1 << 32;
/// A link direction's loss and jitter streams, apart from its qdisc's.
const STREAM_LINK_LOSS: u64 = 3 << 32;
const STREAM_LINK_JITTER: u64 = 4 << 32;

/// What link direction `link` of a run seeded `run_seed` tells its qdisc: its
/// rate, and the seed its hashes are keyed with unless the scenario pins
/// `hash_seed`, a function of the run's seed and the link, so that another run
/// seed moves the hash placement as it moves every other random choice.
fn link_info(run_seed: u64, link: usize, rate: Rate) -> LinkInfo<'static> {
    let salt = rng::mix64(STREAM_LINK + link as u64);
    LinkInfo::with_seed(rate, rng::mix64(run_seed ^ salt))
}

/// Builds link directions, each with its own random stream.
struct LinkFactory<'a> {
    s: &'a Scenario,
    links: Vec<Link>,
    pipes: Pipes,
    models: Vec<LinkModel>,
    deferred: Vec<Rebuild>,
}

impl LinkFactory<'_> {
    fn new(s: &Scenario, links: usize) -> LinkFactory<'_> {
        LinkFactory {
            s,
            links: Vec::with_capacity(links),
            pipes: Pipes::default(),
            models: Vec::new(),
            deferred: Vec::new(),
        }
    }

    /// The pipe of link direction `i` going as `d` says (sending ahead is the
    /// engine's to set). A constant rate and delay share a pipe with every link
    /// alike; a modelled direction gets its model, with its own streams, and so a
    /// pipe of its own.
    fn pipe(&mut self, i: usize, d: &Direction) -> u32 {
        let model = if d.is_plain() {
            NO_MODEL
        } else {
            let seed = self.s.file.seed;
            self.models.push(LinkModel {
                tx: Transmitter::new(d.rate.clone()),
                loss: d.loss.map(Loss::new),
                jitter: d.jitter.map(Jitter::new),
                loss_rng: rng::stream(seed, STREAM_LINK_LOSS + i as u64),
                jitter_rng: rng::stream(seed, STREAM_LINK_JITTER + i as u64),
                told: d.nominal_rate(),
            });
            u32::try_from(self.models.len() - 1).expect("fewer than 2^32 link models")
        };
        self.pipes.intern(Pipe {
            rate: d.nominal_rate(),
            delay: d.delay,
            send_ahead: false,
            feeds_cut: false,
            model,
        })
    }

    /// A dumbbell's access link direction `from -> to`: a default DropTail, built
    /// when a packet first waits (`Queue::lazy_droptail`). Its random stream would be
    /// the link's own; DropTail never draws, so leaving it out changes nothing.
    fn add_access(&mut self, (from, to): (u32, u32), d: &Direction) -> u32 {
        let i = self.links.len();
        let pipe = self.pipe(i, d);
        self.links
            .push(Link::new(from, to, pipe, Queue::lazy_droptail()));
        i as u32
    }

    /// Adds the link direction `from -> to` going as `d` says with the qdisc
    /// `spec`, which the scenario gives at `path` (errors name it).
    fn add(
        &mut self,
        (from, to): (u32, u32),
        d: &Direction,
        spec: &QdiscSpec,
        path: &KeyPath,
    ) -> Result<u32, ScenarioError> {
        let i = self.links.len();
        let seed = self.s.file.seed;
        let qdisc = spec
            .build(&link_info(seed, i, d.nominal_rate()))
            .map_err(|e| self.s.qdisc_error(path, &e))?;
        if spec.uses_flow_table() {
            self.deferred.push(Rebuild {
                link: i as u32,
                spec: spec.clone(),
                path: path.clone(),
            });
        }
        let stream = rng::stream(seed, STREAM_LINK + i as u64);
        let pipe = self.pipe(i, d);
        self.links
            .push(Link::new(from, to, pipe, Queue::new(qdisc, stream)));
        Ok(i as u32)
    }
}

/// A direction of a constant `rate` (a flow group's `access_rate`), the rest as `d`.
fn with_rate(d: &Direction, rate: Option<Rate>) -> Direction {
    match rate {
        Some(r) => Direction {
            rate: LinkRate::Constant(r),
            ..d.clone()
        },
        None => d.clone(),
    }
}

impl Network {
    /// The network of `s`, which has `total_flows` flows.
    pub fn build(s: &Scenario, total_flows: usize) -> Result<Network, ScenarioError> {
        let net = match s.file.topology.get_ref() {
            Topology::Dumbbell { .. } => Self::dumbbell(s, total_flows)?,
            Topology::Graph { .. } => Self::graph(s, total_flows)?,
        };
        debug_assert_eq!(net.flow_routes.len(), total_flows);
        if net.links.len() > MAX_LINKS {
            return Err(s.error(format!(
                "{} link directions in all; at most {MAX_LINKS} fit the event queue",
                net.links.len()
            )));
        }
        Ok(net)
    }

    /// Builds again, now announcing the flows routed over their links, the qdiscs
    /// that read them (each flow on the links of its data and of its ACKs, with
    /// its aggregate and weight).
    pub fn announce_flows(
        &mut self,
        s: &Scenario,
        groups: &[Group],
        flows: &[Flow],
    ) -> Result<(), ScenarioError> {
        if self.rebuild.is_empty() {
            return Ok(());
        }
        let slot: HashMap<u32, usize> = self
            .rebuild
            .iter()
            .enumerate()
            .map(|(i, d)| (d.link, i))
            .collect();
        let mut tables: Vec<Vec<FlowClass>> = vec![Vec::new(); self.rebuild.len()];
        let hosts = Hosts::new(groups);
        for (id, f) in flows.iter().enumerate() {
            let (sender, receiver) = hosts.ends(f.group as usize, id as u32);
            let class = FlowClass {
                src_host: sender,
                dst_host: receiver,
                group: f.group,
                ..FlowClass::new(
                    FlowId(id as u32),
                    f.aggregate,
                    groups[f.group as usize].weight,
                )
            };
            // The ACKs come from the receiver's host.
            let acks = FlowClass {
                src_host: receiver,
                dst_host: sender,
                ..class
            };
            for (start, class) in [(f.fwd, class), (f.rev, acks)] {
                for l in self.routes.route(start) {
                    if let Some(&i) = slot.get(l) {
                        if tables[i].last().is_none_or(|c| c.flow != class.flow) {
                            tables[i].push(class);
                        }
                    }
                }
            }
        }
        let names: Vec<String> = groups.iter().map(|g| g.name.clone()).collect();
        for (d, table) in self.rebuild.drain(..).zip(&tables) {
            let link = &mut self.links[d.link as usize];
            let rate = self.pipes.get(link.pipe).rate;
            let info = link_info(s.file.seed, d.link as usize, rate)
                .with_flows(table)
                .with_groups(&names);
            let qdisc = d
                .spec
                .build(&info)
                .map_err(|e| s.qdisc_error(&d.path, &e))?;
            link.qdisc.rebuild(qdisc);
        }
        Ok(())
    }

    /// Two routers joined by the bottleneck; each flow has its own sender and
    /// receiver on access links (DropTail) to the routers.
    fn dumbbell(s: &Scenario, total_flows: usize) -> Result<Network, ScenarioError> {
        let f = &s.file;
        let Topology::Dumbbell {
            access,
            bottleneck,
            reverse_qdisc,
        } = f.topology.get_ref()
        else {
            unreachable!("called for a dumbbell")
        };
        let droptail = QdiscSpec::default();
        let _ = (access, bottleneck);
        let resolved = s.links()?;
        let (_, bn_fwd, bn_rev) = &resolved[0];
        let (_, acc_fwd, acc_rev) = &resolved[1];
        let mut make = LinkFactory::new(s, 0);
        let fwd_spec = f.qdisc.as_ref().map_or(&droptail, |q| q.get_ref());
        let lr = make.add((0, 1), bn_fwd, fwd_spec, &KeyPath::top("qdisc"))?;
        let rev_spec = reverse_qdisc.as_ref().unwrap_or(&droptail);
        let rev_path = KeyPath::top("topology").key("reverse_qdisc");
        let rl = make.add((1, 0), bn_rev, rev_spec, &rev_path)?;
        let nodes = Nodes::new(vec!["left".into(), "right".into()]);
        // Four access link directions per flow, reserved up front: growing by
        // doubling would hold twice the memory at the end.
        make.links.reserve_exact(4 * total_flows);
        let mut routes = Routes::default();
        routes.reserve(8 * total_flows);
        let mut flow_routes = Vec::with_capacity(total_flows);
        for g in &f.flows {
            let spec = g.get_ref();
            // A group's `access_rate` and `access_delay` are constants for both
            // directions of its access links.
            let own = |d: &Direction| {
                let mut d = with_rate(d, spec.access_rate);
                if let Some(delay) = spec.access_delay {
                    (d.delay, d.jitter) = (delay, None);
                }
                d
            };
            let (fwd, rev) = (own(acc_fwd), own(acc_rev));
            for _ in 0..spec.count {
                // Hosts `s{i}` and `r{i}` of flow `i`, as `Nodes::name` names them.
                // Forward is the data's way: host to router, router to host.
                let i = flow_routes.len() as u32;
                let (sn, rn) = (2 + 2 * i, 3 + 2 * i);
                let s_l = make.add_access((sn, 0), &fwd);
                let l_s = make.add_access((0, sn), &rev);
                let r_r = make.add_access((1, rn), &fwd);
                let r_rr = make.add_access((rn, 1), &rev);
                let fwd = routes.push(&[s_l, lr, r_r]);
                let rev = routes.push(&[r_rr, rl, l_s]);
                flow_routes.push((fwd, rev));
            }
        }
        Ok(Network {
            nodes,
            links: make.links,
            pipes: make.pipes,
            models: make.models,
            monitored: vec![lr, rl],
            routes,
            flow_routes,
            rebuild: make.deferred,
        })
    }

    /// Explicit nodes and links; flows follow their group's `path`, else the
    /// routes the topology's `routing` gives between the nodes they name.
    fn graph(s: &Scenario, total_flows: usize) -> Result<Network, ScenarioError> {
        let f = &s.file;
        let Topology::Graph {
            nodes,
            links: specs,
            routing,
            ..
        } = f.topology.get_ref()
        else {
            unreachable!("called for a graph")
        };
        let droptail = QdiscSpec::default();
        let index: HashMap<&str, u32> = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_str(), i as u32))
            .collect();
        let resolved = s.links()?;
        let mut make = LinkFactory::new(s, 2 * specs.len());
        let mut graph = Graph::new(nodes.len());
        let mut monitored = Vec::new();
        for (k, l) in specs.iter().enumerate() {
            let (a, b) = (index[l.from.as_str()], index[l.to.as_str()]);
            let link = KeyPath::top("topology").key("links").index(k);
            let (spec, path) = match (&l.qdisc, &f.qdisc) {
                (Some(q), _) => (q, link.key("qdisc")),
                (None, Some(q)) => (q.get_ref(), KeyPath::top("qdisc")),
                (None, None) => (&droptail, KeyPath::top("qdisc")),
            };
            let (_, fwd, rev) = &resolved[k];
            let ab = make.add((a, b), fwd, spec, &path)?;
            let rev_spec = l.reverse_qdisc.as_ref().unwrap_or(&droptail);
            let ba = make.add((b, a), rev, rev_spec, &link.key("reverse_qdisc"))?;
            graph.add(a, b, ab);
            graph.add(b, a, ba);
            if l.monitor {
                monitored.push(ab);
                monitored.push(ba);
            }
        }
        drop(resolved);
        let (routes, flow_routes) =
            Self::graph_routes(s, &graph, (nodes, &index), *routing, total_flows)?;
        Ok(Network {
            nodes: Nodes::new(nodes.clone()),
            links: make.links,
            pipes: make.pipes,
            models: make.models,
            monitored,
            routes,
            flow_routes,
            rebuild: make.deferred,
        })
    }

    /// Every flow's data and ACK routes in a graph: a group's `path` (its ACKs
    /// the reverse), one fewest-hop route per group under `shortest`, or one per
    /// flow under `ecmp`. Found in batches (a search per source or destination,
    /// not per pair), stored group by group in flow order.
    fn graph_routes(
        s: &Scenario,
        graph: &Graph,
        (names, index): (&[String], &HashMap<&str, u32>),
        routing: Routing,
        total_flows: usize,
    ) -> Result<(Routes, Vec<(u32, u32)>), ScenarioError> {
        let f = &s.file;
        let nodes = |i: u32| &names[i as usize];
        let ends: Vec<(u32, u32)> = f
            .flows
            .iter()
            .map(|g| {
                let end = |n: &Option<String>| index[n.as_deref().expect("validated")];
                (end(&g.get_ref().from), end(&g.get_ref().to))
            })
            .collect();
        let own_path = |i: usize| f.flows[i].get_ref().path.as_ref();
        let ecmp = |i: usize| routing == Routing::Ecmp && own_path(i).is_none();
        // Under `shortest`, each group's two routes, both ways from the batch.
        let shortest_pairs: Vec<(u32, u32)> = (0..ends.len())
            .filter(|&i| !ecmp(i) && own_path(i).is_none())
            .flat_map(|i| [ends[i], (ends[i].1, ends[i].0)])
            .collect();
        let mut shortest = graph.shortest_paths(&shortest_pairs).into_iter();
        // Under `ecmp`, each flow's two.
        let mut queries = Vec::new();
        let mut flow = 0u32;
        for (i, g) in f.flows.iter().enumerate() {
            let count = g.get_ref().count;
            if ecmp(i) {
                let (a, b) = ends[i];
                for id in flow..flow + count {
                    queries.push((a, b, ecmp::flow_key(id, false)));
                    queries.push((b, a, ecmp::flow_key(id, true)));
                }
            }
            flow += count;
        }
        let mut hashed = ecmp::routes(graph, f.seed, &queries).into_iter();
        drop(queries);
        let mut routes = Routes::default();
        let mut flow_routes = Vec::with_capacity(total_flows);
        for (i, g) in f.flows.iter().enumerate() {
            let spec = g.get_ref();
            let (a, b) = ends[i];
            let no_route = || {
                s.flow_error(
                    i,
                    "to",
                    format!("no route from \"{}\" to \"{}\"", nodes(a), nodes(b)),
                )
            };
            if ecmp(i) {
                for _ in 0..spec.count {
                    let fwd = hashed.next().flatten().ok_or_else(no_route)?;
                    let rev = hashed.next().flatten().ok_or_else(no_route)?;
                    flow_routes.push((routes.push(&fwd), routes.push(&rev)));
                }
                continue;
            }
            let (fwd, rev) = match own_path(i) {
                Some(path) => {
                    let at: Vec<u32> = path.iter().map(|n| index[n.as_str()]).collect();
                    let walk = |from: &[u32]| -> Vec<u32> {
                        from.windows(2)
                            .map(|w| graph.link_between(w[0], w[1]).expect("validated"))
                            .collect()
                    };
                    let back: Vec<u32> = at.iter().rev().copied().collect();
                    (walk(&at), walk(&back))
                }
                None => (
                    shortest.next().flatten().ok_or_else(no_route)?,
                    shortest.next().flatten().ok_or_else(no_route)?,
                ),
            };
            // The group's flows share one copy of its two routes.
            let fwd = routes.push(&fwd);
            let rev = routes.push(&rev);
            for _ in 0..spec.count {
                flow_routes.push((fwd, rev));
            }
        }
        Ok((routes, flow_routes))
    }
}

#[cfg(test)]
mod tests {
    use super::link_info;
    use aqm::Rate;
    use std::collections::HashSet;

    /// The hash seed a link's qdisc gets is a function of the run's seed and the
    /// link (not every run hashed alike): another run seed moves every
    /// link's, links of one run differ, and the same run gives the same.
    #[test]
    fn every_link_hashes_by_the_runs_seed() {
        let rate = Rate::from_mbps(10);
        let seeds = |run: u64| {
            (0..64)
                .map(|l| link_info(run, l, rate).seed)
                .collect::<Vec<_>>()
        };
        let one = seeds(1);
        assert_eq!(one, seeds(1));
        assert_eq!(
            one.iter().collect::<HashSet<_>>().len(),
            64,
            "two links alike"
        );
        let two = seeds(2);
        assert!(
            one.iter().zip(&two).all(|(a, b)| a != b),
            "seeds 1 and 2 alike"
        );
    }
}
