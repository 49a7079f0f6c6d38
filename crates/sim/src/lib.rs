//! # sim: the aqmlab discrete-event engine
//!
//! Links with rate, delay and an egress qdisc from [`aqm`]; nodes joined by static
//! shortest-path routes; one-way TCP (Reno, NewReno, SACK) and UDP sources; scenario
//! files; results as plain data.
//!
//! ## Map
//! Three parts, with arrows one way: building makes a [`Simulation`], running
//! advances it, observing watches it from outside the forwarding path.
//! - [`scenario`]: TOML scenarios, validated, with errors that name key and line.
//! - [`builtin`]: the scenarios shipped with aqmlab.
//! - [`build`]: building: the network (nodes, links, qdiscs, routes), the flows.
//! - [`engine`]: running: the event loop and its handlers (links, transports).
//! - [`observe`]: observing: link and queue statistics, per-flow series, TCP
//!   traces, queueing delays, web objects, a drop log, pcap, the warm-up snapshot.
//! - [`source`]: a scenario argument (a path or a built-in's name) resolved, as
//!   every face of aqmlab resolves it.
//! - [`overrides`]: `--seed`, `--duration`, `--warmup` applied to a scenario.
//! - [`event`]: the (time, sequence)-ordered event queue.
//! - [`link`]: one direction of a link: qdisc, transmitter, wire.
//! - [`wire`]: the packets propagating on every wire, in one slab.
//! - [`flow`]: a flow's routes, endpoints, timers and counters.
//! - [`tcp`], [`udp`]: the transports, as I/O-free state machines.
//! - [`tc`]: a Linux `tc qdisc add ...` line read into the `[qdisc]` table it means.
//! - [`header`]: transport headers kept beside packets.
//! - [`results`], [`report`], [`fair_share`]: what a run produces.
//! - [`tables`]: the results as named Arrow tables, the one schema of every output.
//! - [`text`]: the results as the short summary `aqmlab run` prints.
//!
//! ## Tutorial
//! Build a dumbbell, put RED on the bottleneck, run, read the results:
//! ```
//! use sim::{run_scenario, Scenario};
//! let text = r#"
//! name = "tutorial"
//! duration = "5s"
//! warmup = "1s"
//! [topology]
//! kind = "dumbbell"
//! access = { rate = "100Mbps", delay = "1ms" }
//! bottleneck = { rate = "10Mbps", delay = "10ms" }
//! [qdisc]
//! kind = "red"
//! min_th = 20
//! max_th = 60
//! [[flows]]
//! name = "bulk"
//! kind = "tcp"
//! count = 4
//! "#;
//! let scenario = Scenario::from_toml(text, "tutorial.toml").unwrap();
//! let result = run_scenario(&scenario, &mut |_| {}).unwrap();
//! let bottleneck = &result.links[0];
//! assert_eq!(bottleneck.name, "left->right");
//! assert!(bottleneck.utilization > 0.9);
//! assert_eq!(result.groups["bulk"].count, 4);
//! ```

pub mod build;
pub mod builtin;
pub mod engine;
pub mod event;
pub mod fair_share;
pub mod flow;
pub mod header;
pub mod link;
pub mod observe;
pub mod overrides;
pub mod report;
pub mod results;
pub mod scenario;
pub mod source;
pub mod tables;
pub mod tc;
pub mod tcp;
pub mod text;
pub mod udp;
pub mod wire;

pub use engine::Simulation;
pub use overrides::{OverrideError, Overrides};
pub use results::RunResult;
pub use scenario::{Scenario, ScenarioError};
pub use source::{load, resolve, Source, SourceError};

/// Builds and runs a scenario to its end; `progress` is called with the simulated
/// time now and then (for progress bars).
pub fn run_scenario(
    scenario: &Scenario,
    progress: &mut dyn FnMut(aqm::Time),
) -> Result<RunResult, ScenarioError> {
    let started = std::time::Instant::now();
    let mut sim = Simulation::new(scenario)?;
    sim.run(progress);
    Ok(sim.report(started.elapsed().as_secs_f64()))
}
