//! The `aqmlab` command, as a library (the binary is `main.rs`).
//!
//! The command line is declared once, in `aqmlab-command` (`crates/command`),
//! which the Python package's `aqmlab` parses with too. This crate runs what the
//! binary runs: `run` and `emulate` (with Parquet output, `output`, and a progress
//! bar), the subcommands that only print (through [`Command::printed`]), and one
//! line for those written in Python (`sweep`, `repro`, `plot`, [`python_only`]).
//!
//! Errors in what the user gave (a scenario, a flag) print one line and exit with
//! status 2; anything else that fails exits with 1.

mod emulate_cmd;
pub mod output;

use anyhow::Context;
use aqmlab_command::{Command, Failure, RunArgs};
use indicatif::{ProgressBar, ProgressStyle};
use sim::Simulation;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

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

/// A signal (Ctrl-C, SIGTERM) stopped the command after it cleaned up: exit
/// status 130, as a shell reports `run` and `sweep` killed by SIGINT.
#[derive(Debug)]
struct Interrupted(String);

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for Interrupted {}

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
    let labels = sim::front::assign::parse_all(&a.sets).map_err(usage)?;
    let s = sim::front::assign::load(
        a.scenario.as_deref(),
        &labels,
        &sim::Overrides {
            seed: a.overrides.seed,
            duration: a.overrides.duration.as_deref(),
            warmup: a.overrides.warmup.as_deref(),
        },
    )
    .map_err(usage)?;
    output::allow_foreign_out(a.output.allow_foreign_out);
    if let Some(dir) = &a.output.out {
        // Found out now, not after the whole simulation.
        if let Some(warning) = output::check_out_dir(dir, a.output.format).map_err(usage)? {
            report(&format!("warning: {warning}"));
        }
    }
    let mut simulation = Simulation::new(&s).map_err(|e| usage(e.to_string()))?;
    for w in s.warnings() {
        report(&format!("warning: {w}"));
    }
    if let Some(link) = &a.pcap {
        let dir = a.output.out.clone().unwrap_or_else(|| PathBuf::from("."));
        sim::front::overrides::capture(&mut simulation, link, &dir)
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
    if let Some(dir) = &a.output.out {
        output::write_run(dir, &result, &labels, a.output.format)
            .with_context(|| format!("writing results to {}", dir.display()))?;
    }
    if a.output.json {
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
    let cli = match aqmlab_command::parse(args) {
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
    let result = match cli.command.printed() {
        Some(Ok(text)) => print(&text),
        Some(Err(Failure::Usage(e))) => Err(usage(e)),
        Some(Err(Failure::Other(e))) => Err(anyhow::anyhow!(e)),
        None => match cli.command {
            Command::Run(a) => run(a),
            Command::Emulate(a) => emulate_cmd::run(a),
            Command::Sweep(_) => python_only("sweep"),
            Command::Repro(_) => python_only("repro"),
            Command::Plot(_) => python_only("plot"),
            _ => unreachable!("Command::printed answers for every other subcommand"),
        },
    };
    match result {
        Ok(()) => 0,
        Err(e) if e.downcast_ref::<UsageError>().is_some() => {
            report(&format!("error: {e}"));
            2
        }
        Err(e) if e.downcast_ref::<Interrupted>().is_some() => {
            report(&format!("error: {e}"));
            130
        }
        Err(e) => {
            report(&format!("error: {e:#}"));
            1
        }
    }
}
