//! The network a run runs on: nodes, link directions with their qdiscs, routes,
//! and the flow groups. `setup` fills it, `engine` runs it, `observe` and the
//! report read it; it imports none of them (`tests/arrows.rs`).

pub mod hosts;
pub mod routes;

use crate::flow::Flow;
use crate::link::{Link, Links, Pipe, Pipes, Queue, NO_MODEL};
use crate::link_model::{LinkModel, LinkRuntime};
use crate::scenario::{FlowKind, KeyPath};
use crate::tcp::TcpConfig;
use crate::udp::UdpConfig;
use crate::wire::WireSlab;
use aqm::{Dur, QdiscSpec, Time};
use routes::Routes;
use std::borrow::Cow;

/// The nodes' names. A dumbbell's hosts, two per flow, are named on demand
/// (`s{i}` and `r{i}` for flow `i`): as strings they were 112 bytes a flow.
pub struct Nodes {
    named: Vec<String>,
}

impl Nodes {
    /// Nodes named `named`, then a dumbbell's hosts named on demand.
    pub fn new(named: Vec<String>) -> Self {
        Nodes { named }
    }

    /// Node `i`'s name.
    pub fn name(&self, i: u32) -> Cow<'_, str> {
        match self.named.get(i as usize) {
            Some(n) => Cow::Borrowed(n),
            None => {
                let host = i as usize - self.named.len();
                let side = if host.is_multiple_of(2) { 's' } else { 'r' };
                Cow::Owned(format!("{side}{}", host / 2))
            }
        }
    }
}

pub struct Network {
    pub nodes: Nodes,
    pub links: Vec<Link>,
    /// The links' rates, delays and whether they send ahead, each kind once.
    pub pipes: Pipes,
    /// The modelled link directions' models (`Pipe::model`).
    pub models: Vec<LinkModel>,
    /// The monitored link directions, in the order results report them.
    pub monitored: Vec<u32>,
    pub routes: Routes,
    /// Per flow: where the routes of its data and of its ACKs start in `routes`
    /// (taken by the flows as they are built; each keeps its own).
    pub flow_routes: Vec<(u32, u32)>,
    /// Link directions whose qdisc reads the flows routed over it (fair queueing):
    /// built without them first, built again by `setup` once the flows are known.
    pub(crate) rebuild: Vec<Rebuild>,
}

/// A qdisc to build again with its link's flow table.
pub(crate) struct Rebuild {
    pub link: u32,
    pub spec: QdiscSpec,
    /// Where the scenario gives the qdisc, for errors.
    pub path: KeyPath,
}

/// A group of flows and the configuration they share.
pub struct Group {
    pub name: String,
    pub kind: FlowKind,
    pub tcp: TcpConfig,
    pub udp: Option<UdpConfig>,
    /// A probe group's interval between probes (`None` for the other kinds).
    pub probe: Option<Dur>,
    /// Scheduling weight of each flow (fair queueing).
    pub weight: f64,
    /// The host the flows send from and the one they send to, if the group
    /// names them (`hosts`).
    pub host: Option<String>,
    pub receiver_host: Option<String>,
    /// The DiffServ codepoint of its data packets.
    pub dscp: u8,
    /// When its flows stop sending, if they do.
    pub stop: Option<Time>,
    /// Mean offered rate over the measured interval (infinite for TCP, zero for
    /// probes: they stay out of the max-min fair shares).
    pub demand_bps: f64,
    /// The group's flows: `first..first + count`.
    pub first: u32,
    pub count: u32,
}

impl Network {
    /// The sending and receiving nodes of the flow whose data route starts at
    /// `fwd` (a route that crosses at least one link): where its first link
    /// starts and its last ends. Not stored: 8 bytes a flow.
    pub fn flow_ends(&self, fwd: u32) -> (u32, u32) {
        let route = self.routes.route(fwd);
        let (first, last) = (route[0], route[route.len() - 1]);
        (
            self.links[first as usize].from,
            self.links[last as usize].to,
        )
    }

    /// Link direction `l`'s rate, delay and sending ahead.
    #[inline]
    pub fn pipe(&self, l: usize) -> &Pipe {
        self.pipes.get(self.links[l].pipe)
    }

    /// A flow's base RTT: the propagation delay of its data route (from link
    /// `fwd`) and of its ACK route (from link `rev`), no queueing, no serialization.
    pub fn base_rtt(&self, flow: &Flow) -> Dur {
        let delay = |start: u32| {
            self.routes
                .route(start)
                .iter()
                .fold(Dur::ZERO, |d, &l| d + self.pipe(l as usize).delay)
        };
        delay(flow.fwd) + delay(flow.rev)
    }

    /// Lets link direction `l` send ahead or not (`Pipe::send_ahead`).
    pub fn set_send_ahead(&mut self, l: usize, on: bool) {
        self.repipe(l, |p| p.send_ahead = on);
    }

    /// Marks link direction `l` as the only input of a link that cuts through
    /// (`Pipe::feeds_cut`).
    pub fn set_feeds_cut(&mut self, l: usize, on: bool) {
        self.repipe(l, |p| p.feeds_cut = on);
    }

    fn repipe(&mut self, l: usize, change: impl FnOnce(&mut Pipe)) {
        let link = &mut self.links[l];
        let mut pipe = *self.pipes.get(link.pipe);
        change(&mut pipe);
        link.pipe = self.pipes.intern(pipe);
    }

    /// Link direction `l` to be driven by a runner of its own (the emulator): its
    /// qdisc, taken out of the network (a default DropTail is left in its
    /// place), its model (a constant one when the scenario gives none) and its
    /// delay.
    pub fn take_runtime(&mut self, l: usize) -> LinkRuntime {
        let pipe = *self.pipe(l);
        let model = match pipe.model {
            NO_MODEL => LinkModel::constant(pipe.rate),
            m => self.models[m as usize].clone(),
        };
        LinkRuntime {
            queue: std::mem::replace(&mut self.links[l].qdisc, Queue::lazy_droptail()),
            model,
            delay: pipe.delay,
            constant: pipe.model == NO_MODEL,
        }
    }

    /// The names of the nodes at the ends of link direction `l`.
    pub fn link_ends(&self, l: usize) -> (std::borrow::Cow<'_, str>, std::borrow::Cow<'_, str>) {
        let link = &self.links[l];
        (self.nodes.name(link.from), self.nodes.name(link.to))
    }

    /// Link direction `l`'s name, `from->to`, as the result tables name it.
    pub fn link_name(&self, l: usize) -> String {
        let (from, to) = self.link_ends(l);
        format!("{from}->{to}")
    }

    /// The link directions as observers read them, with `wires`, the slab
    /// holding the packets being serialized.
    pub fn view<'a>(&'a self, wires: &'a WireSlab) -> Links<'a> {
        Links {
            links: &self.links,
            pipes: &self.pipes,
            wires,
        }
    }
}
