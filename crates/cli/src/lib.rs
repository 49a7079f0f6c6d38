//! The `aqmlab` command, as a library (the binary is `main.rs`).
//!
//! One command tree for both installs: this crate's [`Cli`] declares every
//! subcommand, including those written in Python (`sweep`, `repro`, `plot`), which the
//! bare binary names in `--help` and refuses with one line. The Python package's
//! `aqmlab` (argparse over the extension, `python/aqmlab/_cli.py`) implements the
//! same tree and prints the help and completion scripts generated here
//! ([`face::document`], checked in as `python/aqmlab/_face.json`); tests on both
//! sides keep the two equal.
//!
//! Adding a subcommand is one variant of [`Command`] and its arm in
//! [`main_with_args`] (for a Python-only one, [`python_only`]), then the file
//! regenerated and one registration in `_cli.py`.
//!
//! Errors in what the user gave (a scenario, a flag) print one line and exit with
//! status 2; anything else that fails exits with 1.

mod complete;
mod emulate_cmd;
pub mod face;
mod model_cmd;
pub mod output;
mod python_cmds;
mod queue_lab_cmd;

use anyhow::Context;
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use output::Format;
use sim::{builtin, Overrides, Simulation};
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[derive(Parser)]
#[command(
    name = "aqmlab",
    version,
    about = "Packet-level simulation of fair active queue management"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario file (or a built-in scenario by name; the default one if none).
    Run(RunArgs),
    /// Run a dumbbell scenario on real Linux TCP through the same qdiscs (root only).
    ///
    /// The scenario's TCP flows are kernel sockets in one network namespace talking
    /// to receivers in another; every packet crosses this process, which applies the
    /// scenario's access links, bottleneck rate and delay and its qdisc, the very
    /// code `run` simulates. Writes the same tables as `run`; the run table says the
    /// run was emulated and how well time was kept.
    Emulate(emulate_cmd::EmulateArgs),
    /// Run a scenario over a grid of parameter values and seeds, on every core.
    ///
    /// Runs SCENARIO (a file or a built-in name; the default built-in when left out)
    /// at every combination of the --set values, once per seed, on every core. Writes
    /// the runs (one row per run), groups, flows and links tables under DIR, each row
    /// labelled with the point's values and the seed, and prints the runs averaged
    /// over seeds. Each finished run is cached under DIR/cache, so a killed sweep
    /// resumes. Needs the Python package.
    Sweep(python_cmds::SweepArgs),
    /// Reproduce experiments of the seed papers: the paper's numbers beside ours.
    ///
    /// Runs the simulations (in parallel, each run cached under DIR/cache so an
    /// interrupted sweep resumes), writes the tables ID (the paper's numbers against
    /// ours) and ID-runs and the figure ID.png under DIR, and prints the table with
    /// PASS, MISS or OPEN (undecided: our value is only bounded) per row. A MISS is a
    /// finding, not an error: the exit status is 0 unless the arguments are bad (2).
    /// Needs the Python package.
    Repro(python_cmds::ReproArgs),
    /// Plot what `run --out` wrote: queue, throughput, goodput, delay CDF.
    ///
    /// Reads the tables a `run --out DIR` wrote and saves a figure: the queue length
    /// over time at each monitored link, each flow's throughput over time, each
    /// flow's goodput beside its max-min fair share, and the CDF of queueing delay.
    /// Needs the Python package (matplotlib).
    Plot(python_cmds::PlotArgs),
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
    /// Reads pfifo, bfifo, red, sfb, choke, sfq, codel, fq_codel and pie with tc's
    /// options, units (kbit, mbit, kbps = kilobytes per second, ms, us) and
    /// defaults. Comments above the table say where aqmlab's model of the qdisc
    /// differs from Linux. Paste the table into a scenario, or write `[qdisc] tc =
    /// "..."` there.
    Tc {
        /// The command line, quoted: "tc qdisc add dev eth0 root fq_codel".
        line: String,
    },
    /// Evaluate an analytical model from the papers (SFB eq. 1, front and back CHOKe).
    Model {
        #[command(subcommand)]
        model: model_cmd::ModelCommand,
    },
    /// Poisson sources into one exponential server through a real qdisc, to compare
    /// with the models.
    QueueLab(queue_lab_cmd::QueueLabArgs),
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

#[derive(clap::Args)]
struct RunArgs {
    /// A TOML scenario file, or the name of a built-in scenario.
    #[arg(value_parser = complete::Offering::scenarios(), hide_possible_values = true)]
    scenario: Option<String>,
    /// Override the scenario's seed.
    #[arg(long)]
    seed: Option<u64>,
    /// Override the scenario's duration, e.g. "30s".
    #[arg(long)]
    duration: Option<String>,
    /// Override the scenario's warm-up, e.g. "5s" (results are measured after it).
    #[arg(long)]
    warmup: Option<String>,
    /// Write the results as tables and summary.json into this directory.
    #[arg(long)]
    out: Option<PathBuf>,
    /// The tables' format under --out.
    #[arg(long, value_enum, default_value = "parquet")]
    format: Format,
    /// Print the summary as one JSON object on stdout.
    #[arg(long)]
    json: bool,
    /// Capture a link direction (`a->b`, or `bottleneck`) as pcap into --out
    /// (or the current directory).
    #[arg(long, value_name = "LINK")]
    pcap: Option<String>,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
}

/// A problem with what the user asked for: exit status 2.
#[derive(Debug)]
struct UsageError(String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for UsageError {}

fn usage(msg: impl Into<String>) -> anyhow::Error {
    UsageError(msg.into()).into()
}

/// Writes to stdout and flushes. A write that fails (a full disk, a pipe closed
/// by `head`) is an error: the output the user asked for did not arrive, so the
/// exit status must not say it did.
fn print(text: &str) -> anyhow::Result<()> {
    // (A closed descriptor, `>&-`, is not seen here: the runtime opens /dev/null
    // in its place before main.)
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .context("writing to standard output")
}

/// Writes one line to stderr, ignoring a failure (there is nowhere left to say it).
fn report(text: &str) {
    let _ = writeln!(std::io::stderr(), "{text}");
}

/// A subcommand of the Python package, reached from the bare binary: one line
/// saying where it is, exit status 2.
fn python_only(name: &str) -> anyhow::Result<()> {
    Err(usage(format!(
        "`aqmlab {name}` is written in Python and needs the Python package: \
         `pip install -c constraints.txt .` in aqmlab's source tree (or the wheel \
         of `make wheel`, docs/cluster.md), then run its `aqmlab {name}`"
    )))
}

fn run(a: RunArgs) -> anyhow::Result<()> {
    let mut s = sim::load(a.scenario.as_deref()).map_err(|e| usage(e.to_string()))?;
    Overrides {
        seed: a.seed,
        duration: a.duration.as_deref(),
        warmup: a.warmup.as_deref(),
    }
    .apply(&mut s)
    .map_err(|e| usage(e.to_string()))?;
    if let Some(dir) = &a.out {
        // Found out now, not after the whole simulation.
        if let Some(warning) = output::check_out_dir(dir, a.format).map_err(usage)? {
            report(&format!("warning: {warning}"));
        }
    }
    let mut simulation = Simulation::new(&s).map_err(|e| usage(e.to_string()))?;
    for w in s.warnings() {
        report(&format!("warning: {w}"));
    }
    if let Some(link) = &a.pcap {
        let dir = a.out.clone().unwrap_or_else(|| PathBuf::from("."));
        sim::overrides::capture(&mut simulation, link, &dir)
            .map_err(usage)?
            .with_context(|| format!("creating a pcap file in {}", dir.display()))?;
    }
    let started = Instant::now();
    let end = simulation.end().as_nanos();
    let mut bar: Option<ProgressBar> = None;
    let show = !a.quiet;
    simulation.run(&mut |t| {
        if !show {
            return;
        }
        if bar.is_none() && started.elapsed() > Duration::from_secs(1) {
            let b = ProgressBar::new(end);
            b.set_style(
                ProgressStyle::with_template(
                    "{spinner} simulated {msg} [{bar:40}] {percent}% eta {eta}",
                )
                .expect("valid template")
                .progress_chars("=> "),
            );
            bar = Some(b);
        }
        if let Some(b) = &bar {
            b.set_position(t.as_nanos());
            b.set_message(sim::text::progress(t.as_secs_f64(), end as f64 / 1e9));
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    simulation.finish_capture().context("finishing the pcap")?;
    // The simulation is read out and freed as the report is made: its memory is
    // free for the output (at 100,000 flows, 150 MB of state against 35 MB of JSON).
    let result = simulation.into_report(started.elapsed().as_secs_f64());
    eprint!("{}", sim::text::warnings(&result));
    if let Some(dir) = &a.out {
        output::write_run(dir, &result, a.format)
            .with_context(|| format!("writing results to {}", dir.display()))?;
    }
    if a.json {
        print_json(&result)
    } else {
        print(&sim::text::summary(&result))
    }
}

/// Writes the summary of `result` as one line of JSON to stdout, as it is
/// serialized: a string of it first would be 350 bytes a flow (twice that in
/// capacity) on top of the results.
fn print_json(result: &sim::RunResult) -> anyhow::Result<()> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    serde_json::to_writer(&mut out, &result.summary())
        .map_err(std::io::Error::from)
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush())
        .context("writing to standard output")
}

/// Runs the command line `args` (program name first) and returns the exit status.
pub fn main_with_args<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            if let Err(why) = e.print() {
                report(&format!("error: writing the help: {why}"));
                return 1;
            }
            return code;
        }
    };
    let result = match cli.command {
        Command::Run(a) => run(a),
        Command::Emulate(a) => emulate_cmd::run(a),
        Command::Sweep(_) => python_only("sweep"),
        Command::Repro(_) => python_only("repro"),
        Command::Plot(_) => python_only("plot"),
        Command::Scenarios => print(&builtin::listing()),
        Command::Qdiscs { kind: None } => print(&face::qdiscs()),
        Command::Qdiscs { kind: Some(k) } => match sim::qdisc_help::describe(&k) {
            Some(text) => print(&text),
            None => Err(usage(format!("no qdisc kind \"{k}\""))),
        },
        Command::Tc { line } => match sim::tc::parse(&line) {
            Ok(q) => print(&q.to_toml()),
            Err(e) => Err(usage(e.to_string())),
        },
        Command::Model { model } => model_cmd::run(model),
        Command::QueueLab(a) => queue_lab_cmd::run(a),
        Command::Completions { shell } => print(&face::completion(&shell)),
    };
    match result {
        Ok(()) => 0,
        Err(e) if e.downcast_ref::<UsageError>().is_some() => {
            report(&format!("error: {e}"));
            2
        }
        Err(e) => {
            report(&format!("error: {e:#}"));
            1
        }
    }
}
