//! `aqmlab model ...`: the papers' analytical models from the `models` crate.
//!
//! - `sfb-misclass --levels L --bins B --nonresponsive M`: SFB eq. (1).
//! - `choke-front --mu MU --rates L1,L2,...`: front CHOKe (CHOKe paper IV-A).
//! - `choke-back --memory M --rates L1,L2,... [--mu MU]`: back CHOKe with memory
//!   (CHOKe paper IV-B).
//!
//! Each prints a small table, or one JSON object with `--json` (`models::report`,
//! which the Python package prints through too). A bad argument prints one line
//! naming the flag (`--bins = 0 must be at least 1`) and exits 2.

use crate::Failure;
use clap::Subcommand;
use models::{report, ModelError};

#[derive(Subcommand, Debug)]
pub enum ModelCommand {
    /// SFB: probability that a responsive flow is misclassified, [1 - (1 - 1/B)^M]^L.
    SfbMisclass {
        /// L, the number of levels.
        #[arg(long)]
        levels: u32,
        /// B, the number of bins per level.
        #[arg(long)]
        bins: u64,
        /// M, the number of nonresponsive flows.
        #[arg(long)]
        nonresponsive: u64,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Front CHOKe: per-flow throughput mu p_i, p_i = lambda_i / (mu + 2 lambda_i), and P0.
    ChokeFront {
        /// Service rate.
        #[arg(long)]
        mu: f64,
        /// Each Poisson flow's rate, comma-separated.
        #[arg(long, value_delimiter = ',', required = true)]
        rates: Vec<f64>,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Back CHOKe with a memory of the last M admitted ids: each flow's share (Table III).
    ChokeBack {
        /// M, the admitted ids remembered (below the number of flows).
        #[arg(long)]
        memory: usize,
        /// Each Poisson flow's rate, comma-separated.
        #[arg(long, value_delimiter = ',', required = true)]
        rates: Vec<f64>,
        /// Service rate, for P0 and the stability check (optional).
        #[arg(long)]
        mu: Option<f64>,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
}

/// A model error: the user's (exit 2, naming the flag) or the solver's (exit 1).
fn model_error(e: ModelError) -> Failure {
    if e.is_usage() {
        Failure::Usage(format!("--{e}"))
    } else {
        Failure::Other(e.to_string())
    }
}

/// What one `aqmlab model` subcommand prints.
pub(crate) fn text(cmd: &ModelCommand) -> Result<String, Failure> {
    let text = match *cmd {
        ModelCommand::SfbMisclass {
            levels,
            bins,
            nonresponsive,
            json,
        } => report::sfb_misclass(levels, bins, nonresponsive, json),
        ModelCommand::ChokeFront {
            mu,
            ref rates,
            json,
        } => report::choke_front(mu, rates, json),
        ModelCommand::ChokeBack {
            memory,
            ref rates,
            mu,
            json,
        } => report::choke_back(memory, rates, mu, json),
    };
    text.map_err(model_error)
}
