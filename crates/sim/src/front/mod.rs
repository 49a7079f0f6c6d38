//! What the command line and the Python front end resolve before a run:
//! - `source` and [`builtin`]: what `aqmlab run ARG` names, a file or a
//!   built-in scenario.
//! - [`assign`]: `--set`'s dotted keys; [`overrides`]: `--seed`, `--duration`,
//!   `--warmup` and the pcap capture.
//! - [`qdisc_help`]: `aqmlab qdiscs KIND`, each key with its default and source.
//! - [`labels`]: a run's tables labelled with scenario, `--set` keys and seed.

pub mod assign;
pub mod builtin;
pub mod labels;
pub mod overrides;
pub mod qdisc_help;
pub(crate) mod source;
