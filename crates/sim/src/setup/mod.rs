//! Building a [`Simulation`] from a [`Scenario`]: the network (nodes, links and
//! their qdiscs, routes), the flows, and the observers the scenario asks for.
//! Each step is a named function; [`Simulation::new`] only composes them.

pub mod ecmp;
pub mod flows;
pub mod memory;
pub mod network;
pub mod routes;

#[cfg(test)]
mod crn_tests;
#[cfg(test)]
mod fat_tree_tests;

pub use crate::net::{Group, Network};

use crate::engine::Simulation;
use crate::event::{Event, EventQueue};
use crate::flow::Flow;
use crate::observe::{Observers, Plan};
use crate::scenario::{Scenario, ScenarioError};
use aqm::Time;

/// What both runners start from: the network (links with their qdiscs, random
/// streams and hash seeds, routes), the flow groups and flows, and the flows'
/// first events. The simulator adds observers and runs it on simulated time; the
/// emulator runs the monitored links' runtimes on the wall clock.
pub struct Built {
    pub net: Network,
    pub groups: Vec<Group>,
    pub flows: Vec<Flow>,
    pub events: EventQueue,
}

/// Builds the network and flows of `s`, and tells each link's qdisc the flows it
/// carries (the qdiscs that size per-flow state by them).
pub fn build(s: &Scenario) -> Result<Built, ScenarioError> {
    build_counted(s, flows::count(s)?)
}

fn build_counted(s: &Scenario, total_flows: usize) -> Result<Built, ScenarioError> {
    let mut net = Network::build(s, total_flows)?;
    let mut events = EventQueue::new();
    // Where each flow's routes start, needed only here (each flow keeps its
    // own): 8 bytes a flow, freed.
    let flow_routes = std::mem::take(&mut net.flow_routes);
    let (groups, flows) = flows::build(s, &flow_routes, &mut events);
    drop(flow_routes);
    net.announce_flows(s, &groups, &flows)?;
    Ok(Built {
        net,
        groups,
        flows,
        events,
    })
}

impl Simulation {
    /// Builds the network, flows and observers a scenario describes.
    pub fn new(s: &Scenario) -> Result<Simulation, ScenarioError> {
        let f = &s.file;
        let total_flows = flows::count(s)?;
        memory::check(s, total_flows)?;
        let Built {
            net,
            groups,
            flows,
            mut events,
        } = build_counted(s, total_flows)?;
        // The monitored links' per-flow tables, sized by the flows their routes
        // carry, counted before they are made.
        let plan = Plan::new(s, &net, &flows)?;
        memory::check_tables(
            s,
            total_flows,
            plan.tables(&net, s.monitor().flow_series.is_some()),
        )?;
        let obs = Observers::new(s, &net, &groups, &flows, plan);
        for (tick, at) in obs.first_ticks() {
            events.push(at, Event::Tick(tick));
        }
        let warmup_end = Time::ZERO + f.warmup;
        if warmup_end > Time::ZERO {
            events.push(warmup_end, Event::MeasureStart);
        }
        Ok(Simulation::assemble(s, net, groups, flows, obs, events))
    }
}
