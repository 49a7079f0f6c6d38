//! `aqmlab model ...`: the papers' analytical models from the `models` crate.
//!
//! - `sfb-misclass --levels L --bins B --nonresponsive M`: SFB eq. (1).
//! - `choke-front --mu MU --rates L1,L2,...`: front CHOKe (CHOKe paper IV-A).
//! - `choke-back --memory M --rates L1,L2,... [--mu MU]`: back CHOKe with memory
//!   (CHOKe paper IV-B).
//!
//! Each prints a small table, or one JSON object with `--json`. A bad argument
//! prints one line naming the flag (`--bins = 0 must be at least 1`) and exits 2.

use clap::Subcommand;
use models::ModelError;
use serde_json::json;
use std::io::Write;

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
fn model_error(e: ModelError) -> anyhow::Error {
    if e.is_usage() {
        crate::usage(format!("--{e}"))
    } else {
        anyhow::anyhow!(e)
    }
}

fn print(text: String) {
    let _ = std::io::stdout().write_all(text.as_bytes());
}

fn json_line(v: serde_json::Value) -> String {
    v.to_string() + "\n"
}

/// Runs one `aqmlab model` subcommand.
pub(crate) fn run(cmd: ModelCommand) -> anyhow::Result<()> {
    match cmd {
        ModelCommand::SfbMisclass {
            levels,
            bins,
            nonresponsive,
            json,
        } => {
            let p =
                models::sfb_misclassification(levels, bins, nonresponsive).map_err(model_error)?;
            print(if json {
                json_line(json!({
                    "levels": levels, "bins": bins, "nonresponsive": nonresponsive, "p": p,
                }))
            } else {
                format!("p = {p}\n")
            });
        }
        ModelCommand::ChokeFront { mu, rates, json } => {
            let m = models::front_choke(mu, &rates).map_err(model_error)?;
            print(if json {
                json_line(json!({
                    "mu": m.mu,
                    "p0": m.p0,
                    "flows": m.flows.iter().enumerate().map(|(i, f)| json!({
                        "flow": i + 1, "rate": f.rate, "head_prob": f.head_prob,
                        "throughput": f.throughput, "drop_prob": f.drop_prob,
                    })).collect::<Vec<_>>(),
                }))
            } else {
                let mut s = format!("front CHOKe (CHOKe paper IV-A), mu = {}\n", m.mu);
                s += "flow  rate       p_i       throughput  drop prob\n";
                for (i, f) in m.flows.iter().enumerate() {
                    s += &format!(
                        "{:<5} {:<10} {:<9.4} {:<11.4} {:.4}\n",
                        i + 1,
                        f.rate,
                        f.head_prob,
                        f.throughput,
                        f.drop_prob
                    );
                }
                s + &format!("P0 = {:.4}\n", m.p0)
            });
        }
        ModelCommand::ChokeBack {
            memory,
            rates,
            mu,
            json,
        } => {
            if let Some(mu) = mu {
                if !(mu > 0.0 && mu.is_finite()) {
                    return Err(crate::usage(format!(
                        "--mu = {mu} must be a positive number"
                    )));
                }
            }
            let m = models::back_choke(memory, &rates).map_err(model_error)?;
            let p0 = mu.and_then(|mu| m.p0(mu));
            print(if json {
                json_line(json!({
                    "memory": m.memory,
                    "states": m.states,
                    "admission_rate": m.admission_rate,
                    "mu": mu,
                    "stable": mu.map(|_| p0.is_some()),
                    "p0": p0,
                    "flows": m.flows.iter().enumerate().map(|(i, f)| json!({
                        "flow": i + 1, "rate": f.rate, "share": f.share,
                        "throughput": f.throughput, "drop_prob": f.drop_prob,
                    })).collect::<Vec<_>>(),
                }))
            } else {
                let mut s = format!(
                    "back CHOKe with memory M = {} (CHOKe paper IV-B), {} states solved ({:?})\n",
                    m.memory, m.states, m.solver
                );
                s += "flow  rate       share T_i  throughput  drop prob\n";
                for (i, f) in m.flows.iter().enumerate() {
                    s += &format!(
                        "{:<5} {:<10} {:<10.4} {:<11.4} {:.4}\n",
                        i + 1,
                        f.rate,
                        f.share,
                        f.throughput,
                        f.drop_prob
                    );
                }
                s += &format!("admission rate A = {:.4}\n", m.admission_rate);
                match (mu, p0) {
                    (Some(_), Some(p0)) => s += &format!("P0 = {p0:.4}\n"),
                    (Some(mu), None) => {
                        s += &format!("unstable: A = {:.4} >= mu = {mu}\n", m.admission_rate)
                    }
                    _ => {}
                }
                s
            });
        }
    }
    Ok(())
}
