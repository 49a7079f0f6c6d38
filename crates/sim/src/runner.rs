//! The front door for a runner other than the engine (the emulator): what it
//! takes from `sim` to drive the scenario's links on a clock of its own and to
//! report as the simulator does. It names the parts; they stay where they live.
//!
//! - Setting up: [`build`] gives the [`Built`] network, groups and flows; a
//!   monitored link direction's [`LinkRuntime`] (its queue, model and delay)
//!   is taken out of the [`Network`] with `Network::take_runtime`.
//! - Counting: [`LinkStats`], the simulator's observer of a link direction, is
//!   called at the same points of each qdisc call as the engine calls it, and read
//!   with `LinkStats::counters_now` into [`LinkCounters`].
//! - Reporting: [`link_result`] and [`link_flow_rows`] make a link's rows from a
//!   [`MeasuredLink`]; [`fair_shares`], [`group_results`], [`fairness_summary`]
//!   and [`delay_rows`] the rest that both runners report; a probe flow's
//!   [`ProbeEnd`] counts its probes as the engine's does, [`probe_stats`] sums
//!   them up.

pub use crate::flow::{Endpoints, Flow};
pub use crate::link::{Queue, QueuePool};
pub use crate::link_model::{LinkModel, LinkRate, LinkRuntime};
pub use crate::net::{Group, Network};
pub use crate::observe::delays::Delays;
pub use crate::observe::flow_slots::FlowSlots;
pub use crate::observe::link_stats::{LinkCounters, LinkStats};
pub use crate::probe::{stats as probe_stats, ProbeEnd};
pub use crate::report::{
    delay_rows, fair_shares, fairness_summary, group_results, host_results, link_flow_rows,
    link_result, utilization, HostTable, MeasuredLink,
};
pub use crate::setup::{build, Built};
