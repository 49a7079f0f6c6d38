//! The `aqmlab` command line, declared once.
//!
//! Both installs parse their arguments here: the `aqmlab` binary (`crates/cli`)
//! and the Python package's `aqmlab` (`python/aqmlab/_cli.py`, which hands its
//! argv to this parser through the extension, `crates/py`). So every subcommand,
//! flag, help text, error, suggestion ("a similar argument exists") and completion
//! script is the same from both, and a new flag is one field here.
//!
//! This crate holds the declaration and the subcommands that only print text;
//! it has neither Parquet nor a progress bar, so the extension links it as it
//! links `sim`. Who runs the rest: the binary runs `run` and `emulate`; the Python
//! package runs them too (its tables through pyarrow, its bar through tqdm), and
//! runs `sweep`, `repro` and `plot`, which are written in Python and which the
//! bare binary names in `--help` and refuses with one line.
//!
//! ## Map
//! - this file: [`Cli`], [`Command`], [`RunArgs`], [`EmulateArgs`] (with the
//!   flags both take, [`ScenarioOverrides`] and [`RunOutput`]), [`Format`], and
//!   [`Command::printed`] (the subcommands that only print).
//! - [`python_cmds`]: the flags of `sweep`, `repro` and `plot`.
//! - [`model`], [`queue_lab`]: the flags and text of `model` and `queue-lab`.
//! - [`face`]: the tree as a [`clap::Command`], completion scripts.
//! - `complete`: the names the completion scripts offer for free-text arguments.
//!
//! Adding a subcommand: a variant of [`Command`]; if it only prints, its arm in
//! [`Command::printed`]; otherwise its handler in `crates/cli` and, for the pip
//! install, in `python/aqmlab/_cli.py`. A flag several subcommands take is one
//! field of a struct they flatten (`#[command(flatten)]`, with
//! `#[serde(flatten)]` so the Python package still receives one flat object);
//! where one subcommand words its help otherwise, [`help_of`] on it says so.

mod complete;
pub mod face;
pub mod model;
pub mod python_cmds;
pub mod queue_lab;

use clap::{Parser, Subcommand};
use serde::Serialize;
use std::ffi::OsString;
use std::path::PathBuf;

pub use python_cmds::{PlotArgs, PlotKind, ReproArgs, RunnerOptions, SweepArgs, Workers};

#[derive(Parser, Debug)]
#[command(
    name = "aqmlab",
    version,
    about = "Packet-level simulation of fair active queue management"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// Parses a command line (program name first).
pub fn parse<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    Cli::try_parse_from(args)
}

/// What a parse that did not give a [`Cli`] prints, as plain text, and where:
/// (exit status, text, to stderr). Help and `--version` are status 0 on stdout;
/// a mistake is status 2 on stderr.
pub fn exit_text(e: &clap::Error) -> (u8, String, bool) {
    let to_stderr = e.use_stderr();
    (u8::from(to_stderr) * 2, e.render().to_string(), to_stderr)
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a scenario file (or a built-in scenario by name; the default one if none).
    Run(RunArgs),
    /// Run a dumbbell scenario on real Linux TCP through the same qdiscs (root only).
    ///
    /// The scenario's TCP flows are kernel sockets in one network namespace talking
    /// to receivers in another; every packet crosses this process, which applies the
    /// scenario's access links, bottleneck rate and delay and its qdisc, the very
    /// code `run` simulates. Writes the same tables as `run`; the run table says the
    /// run was emulated and how well time was kept.
    Emulate(EmulateArgs),
    /// Run a scenario over a grid of parameter values and seeds, on every core.
    ///
    /// Runs SCENARIO (a file or a built-in name; the default built-in when left out)
    /// at every combination of the --set values, once per seed, on every core. Writes
    /// the runs (one row per run), groups, flows and links tables under DIR, each row
    /// labelled with the point's values and the seed, and prints the runs averaged
    /// over seeds. Each finished run is cached under DIR/cache, so a killed sweep
    /// resumes. Needs the Python package.
    Sweep(SweepArgs),
    /// Reproduce experiments of the seed papers: the paper's numbers beside ours.
    ///
    /// Runs the simulations (in parallel, each run cached under DIR/cache so an
    /// interrupted sweep resumes), writes the tables ID (the paper's numbers against
    /// ours) and ID-runs and the figure ID.png under DIR, and prints the table with
    /// PASS, MISS or OPEN (undecided: our value is only bounded) per row. A MISS is a
    /// finding, not an error: the exit status is 0 unless the arguments are bad (2).
    /// Needs the Python package.
    Repro(ReproArgs),
    /// Plot what `run --out` wrote: queue, throughput, goodput, delay CDF, probe RTTs.
    ///
    /// Reads the tables a `run --out DIR` wrote and saves a figure: the queue length
    /// over time at each monitored link, each flow's throughput over time, each
    /// flow's goodput beside its max-min fair share, the CDF of queueing delay, and
    /// the probe groups' RTT quantiles beside their base RTT.
    /// Needs the Python package (matplotlib).
    Plot(PlotArgs),
    /// List the built-in scenarios.
    Scenarios,
    /// List the queueing disciplines a scenario's `[qdisc] kind` may name, or
    /// one's keys with their defaults and sources.
    Qdiscs {
        /// A kind: print its keys, defaults and the sources of the defaults.
        #[arg(value_parser = clap::builder::PossibleValuesParser::new(aqm::QdiscSpec::KINDS))]
        kind: Option<String>,
    },
    /// Print the `[qdisc]` table a Linux `tc qdisc add ...` line configures.
    ///
    /// Reads pfifo, bfifo, red, sfb, choke, sfq, codel, fq_codel, pie, dualpi2,
    /// cake and fq with tc's options, units (kbit, mbit, kbps = kilobytes per
    /// second, ms, us) and defaults; several lines (or lines joined by `;`) make a
    /// tree: an htb or prio root, its classes, leaves and filters. Comments above
    /// the table say where aqmlab's model of the qdisc differs from Linux. Paste the table into a scenario, or write `[qdisc] tc =
    /// "..."` there. A netem line prints the link keys it becomes (delay, jitter,
    /// loss, rate), for a link's table or its `netem = "..."` key.
    Tc {
        /// The command line, quoted: "tc qdisc add dev eth0 root fq_codel".
        line: String,
    },
    /// Evaluate an analytical model from the papers (SFB eq. 1, front and back CHOKe).
    Model {
        #[command(subcommand)]
        model: model::ModelCommand,
    },
    /// Poisson sources into one exponential server through a real qdisc, to compare
    /// with the models.
    QueueLab(queue_lab::QueueLabArgs),
    /// Print the shell completion script for bash, zsh or fish.
    #[command(after_help = "Install, for example:\n  \
        aqmlab completions bash > ~/.local/share/bash-completion/completions/aqmlab\n  \
        aqmlab completions zsh > ~/.zfunc/_aqmlab   (with ~/.zfunc in fpath)\n  \
        aqmlab completions fish > ~/.config/fish/completions/aqmlab.fish")]
    Completions {
        /// The shell.
        #[arg(value_parser = face::SHELLS)]
        shell: String,
    },
}

/// How tables are written.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Apache Parquet (Snappy-compressed), typed columns.
    Parquet,
    /// Comma-separated text with a header row; an empty cell is a missing value.
    Csv,
}

impl Format {
    /// The file extension.
    pub fn ext(self) -> &'static str {
        match self {
            Format::Parquet => "parquet",
            Format::Csv => "csv",
        }
    }
}

/// `aqmlab run`.
#[derive(clap::Args, Debug, Serialize)]
#[command(after_help = "Examples:
  aqmlab run choke-fig3 --seed 7 --out out/
  aqmlab run choke-fig3 --set qdisc.kind=red --set flows.udp.rate=2Mbps --out red/

--set takes the dotted keys of `aqmlab sweep --set` with one value each; a \
missing key is added. Every table under --out starts with the columns scenario, \
each --set key and seed, so the tables of several runs concatenate as a sweep's do.")]
pub struct RunArgs {
    /// A TOML scenario file, or the name of a built-in scenario.
    #[arg(value_parser = complete::Offering::scenarios(), hide_possible_values = true)]
    #[serde(serialize_with = "complete::os_text")]
    pub scenario: Option<OsString>,
    #[command(flatten)]
    #[serde(flatten)]
    pub overrides: ScenarioOverrides,
    /// Set a dotted key of the scenario, e.g. qdisc.kind=red or flows.udp.rate=2Mbps
    /// (repeatable; labels every table).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    #[command(flatten)]
    #[serde(flatten)]
    pub output: RunOutput,
    /// Capture a link direction (`a->b`, or `bottleneck`) as pcap into --out
    /// (or the current directory).
    #[arg(long, value_name = "LINK")]
    pub pcap: Option<String>,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

/// `aqmlab emulate`.
#[derive(clap::Args, Debug, Serialize)]
#[command(
    after_help = "Needs root (CAP_NET_ADMIN): the senders and receivers live in two \
network namespaces of their own, joined through TUN devices to this process, which \
applies the scenario's links and qdisc to every packet. duration and warmup are \
wall-clock time. Nothing outside the two namespaces is touched, and they vanish \
with the process. docs/emulation.md says how it works and where it differs from \
simulation.",
    // The emulator's duration is wall-clock time; the flag is otherwise run's.
    mut_args(help_of("duration", "Override the scenario's duration (wall-clock), e.g. \"30s\""))
)]
pub struct EmulateArgs {
    /// A TOML scenario file (a dumbbell), or the name of a built-in scenario.
    #[serde(serialize_with = "complete::os_text")]
    pub scenario: Option<OsString>,
    #[command(flatten)]
    #[serde(flatten)]
    pub overrides: ScenarioOverrides,
    /// Set a dotted key of the scenario, e.g. qdisc.kind=red or flows.udp.rate=2Mbps
    /// (repeatable; labels every table), as `run --set` does.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    #[command(flatten)]
    #[serde(flatten)]
    pub output: RunOutput,
    /// Also simulate the scenario and print both side by side (with --json: an
    /// object with "simulated" and "emulated").
    #[arg(long)]
    pub compare: bool,
    /// A run that did not keep time (p99 lateness above one packet time) is an
    /// error (exit status 1) and its tables are not written.
    #[arg(long)]
    pub strict: bool,
    /// Measure the bottleneck rate up to which this machine keeps time (four
    /// CUBIC flows through DropTail at rising rates, three runs each,
    /// --duration each, 3s by default) and keep it for the rate guard; takes no
    /// scenario.
    #[arg(long, conflicts_with_all = ["scenario", "compare", "strict", "app", "sets", "out", "seed", "warmup"])]
    pub calibrate: bool,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
    /// The flow group whose flows carry the connections of your own programs:
    /// the command after `--`, run in the senders' namespace, and
    /// --receiver-cmd in the receivers'. Each connection takes the group's next
    /// free flow and is reported as that flow.
    #[arg(long, value_name = "GROUP")]
    pub app: Option<String>,
    /// A command line run with `sh -c` in the receivers' namespace before the
    /// run starts (a server, say), stopped at its end; needs --app.
    #[arg(long, value_name = "COMMAND", requires = "app")]
    pub receiver_cmd: Option<String>,
    /// The command to run in the senders' namespace, after `--` (needs --app):
    /// it starts with the run and is stopped at its end.
    #[arg(last = true, value_name = "CMD", requires = "app")]
    pub command: Vec<String>,
}

/// The scenario's keys `run` and `emulate` override, declared once for both
/// (flattened into each, and into the flat object the Python package receives).
#[derive(clap::Args, Debug, Serialize)]
pub struct ScenarioOverrides {
    /// Override the scenario's seed.
    #[arg(long, allow_negative_numbers = true)]
    pub seed: Option<u64>,
    /// Override the scenario's duration, e.g. "30s".
    #[arg(long, allow_hyphen_values = true)]
    pub duration: Option<String>,
    /// Override the scenario's warm-up, e.g. "5s" (results are measured after it).
    #[arg(long, allow_hyphen_values = true)]
    pub warmup: Option<String>,
}

/// Where and how `run` and `emulate` give their results, declared once for both.
#[derive(clap::Args, Debug, Serialize)]
pub struct RunOutput {
    /// Write the results as tables and summary.json into this directory.
    #[arg(long)]
    #[serde(serialize_with = "complete::os_text")]
    pub out: Option<PathBuf>,
    /// The tables' format under --out.
    #[arg(long, value_enum, default_value = "parquet")]
    pub format: Format,
    /// Print the summary as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    /// Run as root, write into a folder or through a symbolic link another user
    /// owns (refused otherwise: they would choose where root writes).
    #[arg(long)]
    pub allow_foreign_out: bool,
}

/// For `#[command(mut_args(...))]`: the argument `id` with `help` instead of the
/// help of the struct it was flattened from. In place, unlike clap's `mut_arg`,
/// which moves the argument to the end of the completion scripts' lists.
pub(crate) fn help_of(id: &'static str, help: &'static str) -> impl FnMut(clap::Arg) -> clap::Arg {
    move |a| if a.get_id() == id { a.help(help) } else { a }
}

/// Why a subcommand that only prints printed nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// What the user gave is wrong: `error: ...`, exit status 2.
    Usage(String),
    /// Anything else (a model's solver failing): exit status 1.
    Other(String),
}

impl Command {
    /// The text a subcommand that only prints (`scenarios`, `qdiscs`, `tc`,
    /// `model`, `queue-lab`, `completions`) prints, or why it failed; `None` for
    /// the others, whose handlers are in the binary and the Python package.
    pub fn printed(&self) -> Option<Result<String, Failure>> {
        let usage = |e: String| Failure::Usage(e);
        Some(match self {
            Command::Scenarios => Ok(sim::front::builtin::listing()),
            Command::Qdiscs { kind: None } => Ok(face::qdiscs()),
            Command::Qdiscs { kind: Some(k) } => sim::front::qdisc_help::describe(k)
                .ok_or_else(|| Failure::Usage(format!("no qdisc kind \"{k}\""))),
            Command::Tc { line } => sim::tc::describe(line).map_err(|e| usage(e.to_string())),
            Command::Model { model } => model::text(model),
            Command::QueueLab(a) => queue_lab::text(a),
            Command::Completions { shell } => Ok(face::completion(shell)),
            Command::Run(_)
            | Command::Emulate(_)
            | Command::Sweep(_)
            | Command::Repro(_)
            | Command::Plot(_) => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The flags `run`/`emulate` and `sweep`/`repro` share are flattened for serde
    /// too: the Python package receives one flat object per subcommand, the keys
    /// it had before the flags were shared.
    #[test]
    fn shared_flags_reach_python_as_one_flat_object() {
        let keys = |argv: &[&str]| -> Vec<String> {
            let cli = parse(["aqmlab"].iter().chain(argv)).unwrap();
            let value = match &cli.command {
                Command::Run(a) => serde_json::to_value(a),
                Command::Emulate(a) => serde_json::to_value(a),
                Command::Sweep(a) => serde_json::to_value(a),
                Command::Repro(a) => serde_json::to_value(a),
                other => panic!("{other:?}"),
            };
            let mut keys: Vec<String> = value
                .unwrap()
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect();
            keys.sort();
            keys
        };
        let sorted = |names: &str| -> Vec<String> {
            let mut v: Vec<String> = names.split_whitespace().map(String::from).collect();
            v.sort();
            v
        };
        assert_eq!(
            keys(&["run", "--seed", "3", "--json"]),
            sorted(
                "scenario seed duration warmup sets out format json allow_foreign_out pcap quiet"
            )
        );
        assert_eq!(
            keys(&["emulate"]),
            sorted(
                "scenario seed duration warmup sets out format json allow_foreign_out compare \
                 strict calibrate quiet app receiver_cmd command"
            )
        );
        assert_eq!(
            keys(&["sweep", "-j", "2"]),
            sorted(
                "scenario sets seeds seed_list duration warmup baseline precision max_seeds \
                 jobs scheduler out format no_cache fail_fast json quiet allow_foreign_out \
                 emulate"
            )
        );
        assert_eq!(
            keys(&["repro", "--json"]),
            sorted(
                "ids list out seeds jobs scheduler duration format no_cache fail_fast json \
                 quiet allow_foreign_out peer"
            )
        );
    }
}
