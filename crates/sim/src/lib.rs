//! # sim: the aqmlab discrete-event engine
//!
//! Links with rate, delay and an egress qdisc from [`aqm`]; nodes joined by static
//! shortest-path routes; one-way TCP (Reno, NewReno, SACK, CUBIC, BBR, DCTCP,
//! Prague) and UDP sources; scenario files; results as Arrow tables. `docs/architecture.md` is the guide.
//!
//! ## Map
//! Three parts over one network, with arrows one way (`tests/arrows.rs` holds
//! them; `docs/architecture.md` draws them):
//! - [`setup`]: fills the network (`net`) from a scenario ([`setup::build`], what
//!   both runners start from) and makes a [`Simulation`].
//! - `engine`: runs it: the loop, forwarding, the speed shortcuts, endpoints.
//! - `observe`: watches it from outside the forwarding path: a monitored link's
//!   counters, series, sojourn times, TCP traces, the event log, pcap.
//!
//! Below the three, naming none of them:
//! - `net`: the network: nodes, link directions with their qdiscs, flow groups,
//!   routes.
//! - [`event`], `link`, [`link_model`], `wire`, `flow`, `header`: the
//!   engine's data: the event queue, a link direction and its queue, rate
//!   schedules, traces, loss and jitter, packets in flight, a flow and its
//!   endpoints, packet headers.
//! - `delta`: counters that only grow and what happened since a reading of
//!   them (the warm-up's subtraction), declared with `delta::counters!`.
//! - [`tcp`], [`udp`], `probe`: the transports, I/O-free state machines.
//! - [`scenario`]: scenario files, validated, errors by key and line; [`tc`]:
//!   Linux `tc` lines as qdisc tables.
//!
//! What the command line resolves, in [`front`]: what `aqmlab run ARG` names
//! (a file or a built-in scenario), `--set`'s dotted keys, `--seed` and the
//! like, `aqmlab qdiscs KIND`, and a run's tables labelled with its keys.
//!
//! For a runner of its own (the emulator): [`runner`], the one module it names
//! for setting up, counting and reporting as the engine does.
//!
//! Results:
//! - [`results`]: [`RunResult`]; `report`: counters to results;
//!   `fair_share`: max-min fair shares over the routes.
//! - [`tables`]: the one schema of every output table (Arrow).
//! - [`text`]: the summary `aqmlab run` prints.
//!
//! ## Tutorial: a dumbbell with RED on the bottleneck, run, its results read
//! ```
//! use sim::{run_scenario, Scenario};
//! let text = r#"
//! name = "tutorial"
//! duration = "5s"
//! warmup = "1s"
//! qdisc = { kind = "red", min_th = 20, max_th = 60 }
//! flows = [{ name = "bulk", kind = "tcp", count = 4 }]
//! [topology]
//! kind = "dumbbell"
//! access = { rate = "100Mbps", delay = "1ms" }
//! bottleneck = { rate = "10Mbps", delay = "10ms" }
//! "#;
//! let scenario = Scenario::from_toml(text, "tutorial.toml").unwrap();
//! let result = run_scenario(&scenario, &mut |_| {}).unwrap();
//! let bottleneck = &result.links[0];
//! assert_eq!(bottleneck.name, "left->right");
//! assert!(bottleneck.utilization > 0.9);
//! assert_eq!(result.groups["bulk"].count, 4);
//! ```

pub(crate) mod delta;
pub(crate) mod engine;
pub mod event;
pub(crate) mod fair_share;
pub(crate) mod flow;
pub mod front;
pub(crate) mod header;
pub(crate) mod link;
pub mod link_model;
pub(crate) mod net;
pub(crate) mod observe;
pub(crate) mod probe;
pub(crate) mod report;
pub mod results;
pub mod runner;
pub mod scenario;
pub mod setup;
pub mod tables;
pub mod tc;
pub mod tcp;
pub mod text;
pub mod udp;
pub(crate) mod wire;

pub use engine::Simulation;
pub use front::overrides::{OverrideError, Overrides};
pub use front::source::{load, resolve, Source, SourceError};
pub use results::RunResult;
pub use scenario::{Scenario, ScenarioError};

/// Builds and runs a scenario to its end; `progress` is called with the simulated
/// time now and then (for progress bars).
pub fn run_scenario(
    scenario: &Scenario,
    progress: &mut dyn FnMut(aqm::Time),
) -> Result<RunResult, ScenarioError> {
    let started = std::time::Instant::now();
    let mut sim = Simulation::new(scenario)?;
    sim.run(progress);
    Ok(sim.into_report(started.elapsed().as_secs_f64()))
}
