//! The `aqmlab` command, as a library: the binary in `main.rs` and the Python
//! package's `aqmlab` console script both call [`main_with_args`], so the two are
//! one program.
//!
//! Errors in what the user gave (a scenario, a flag) print one line and exit with
//! status 2; anything else that fails exits with 1.

mod model_cmd;
pub mod output;
pub mod queue_lab;

use anyhow::Context;
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use sim::{builtin, Scenario, Simulation};
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[derive(Parser)]
#[command(
    name = "aqmlab",
    version,
    about = "Packet-level simulation of fair active queue management",
    after_help = "Installed with pip, the command also has `aqmlab repro` (the papers' \
                  experiments) and `aqmlab sweep` (a grid of runs on every core)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario file (or a built-in scenario by name; the default one if none).
    Run {
        /// A TOML scenario file, or the name of a built-in scenario.
        scenario: Option<String>,
        /// Override the scenario's seed.
        #[arg(long)]
        seed: Option<u64>,
        /// Override the scenario's duration, e.g. "30s".
        #[arg(long)]
        duration: Option<String>,
        /// Write the results as Parquet tables and summary.json into this directory.
        #[arg(long)]
        out: Option<PathBuf>,
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
    },
    /// List the built-in scenarios.
    Scenarios,
    /// List the queueing disciplines a scenario's `[qdisc] kind` may name.
    Qdiscs,
    /// Evaluate an analytical model from the papers (SFB eq. 1, front and back CHOKe).
    Model {
        #[command(subcommand)]
        model: model_cmd::ModelCommand,
    },
    /// Poisson sources into one exponential server through a real qdisc, to compare
    /// with the models.
    QueueLab(queue_lab::QueueLabArgs),
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

/// A scenario from a file path, or a built-in by name (the default when `None`).
pub fn load(arg: Option<&str>) -> Result<Scenario, String> {
    let name = arg.unwrap_or(builtin::DEFAULT);
    let path = PathBuf::from(name);
    if path.exists() || arg.is_some_and(|a| a.ends_with(".toml") || a.contains('/')) {
        return Scenario::from_path(&path).map_err(|e| e.to_string());
    }
    match builtin::builtin(name) {
        Some(text) => {
            Scenario::from_toml(text, &format!("<built-in {name}>")).map_err(|e| e.to_string())
        }
        None => Err(format!(
            "no scenario file or built-in scenario named \"{name}\" (see `aqmlab scenarios`)"
        )),
    }
}

struct RunArgs {
    scenario: Option<String>,
    seed: Option<u64>,
    duration: Option<String>,
    out: Option<PathBuf>,
    json: bool,
    pcap: Option<String>,
    quiet: bool,
}

fn run(a: RunArgs) -> anyhow::Result<()> {
    let mut s = load(a.scenario.as_deref()).map_err(usage)?;
    if let Some(seed) = a.seed {
        s.set_seed(seed);
    }
    if let Some(d) = &a.duration {
        let d = aqm::parse_dur(d).map_err(|e| usage(format!("--duration: {e}")))?;
        s.set_duration(d).map_err(|e| usage(e.to_string()))?;
    }
    let mut simulation = Simulation::new(&s).map_err(|e| usage(e.to_string()))?;
    if let Some(link) = &a.pcap {
        let l = simulation.find_link(link).ok_or_else(|| {
            usage(format!(
                "--pcap: no link direction named \"{link}\" (names look like \"left->right\"; \"bottleneck\" is the dumbbell's forward direction)"
            ))
        })?;
        let dir = a.out.clone().unwrap_or_else(|| PathBuf::from("."));
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let file = dir.join(format!("{}.pcap", link.replace("->", "-")));
        simulation
            .capture(l, &file)
            .with_context(|| format!("creating {}", file.display()))?;
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
            b.set_message(format!("{t}"));
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    simulation.finish_capture().context("finishing the pcap")?;
    let result = simulation.report(started.elapsed().as_secs_f64());
    if let Some(dir) = &a.out {
        output::write_all(dir, &result)
            .with_context(|| format!("writing results to {}", dir.display()))?;
    }
    let text = if a.json {
        serde_json::to_string(&result.summary())? + "\n"
    } else {
        output::text_summary(&result)
    };
    // A closed pipe (`aqmlab run | head`) is not an error worth a panic.
    let _ = std::io::stdout().write_all(text.as_bytes());
    Ok(())
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
            let _ = e.print();
            return code;
        }
    };
    let result = match cli.command {
        Command::Run {
            scenario,
            seed,
            duration,
            out,
            json,
            pcap,
            quiet,
        } => run(RunArgs {
            scenario,
            seed,
            duration,
            out,
            json,
            pcap,
            quiet,
        }),
        Command::Scenarios => {
            let mut text = String::new();
            for (name, body) in builtin::BUILTINS {
                let mark = if *name == builtin::DEFAULT {
                    " (default)"
                } else {
                    ""
                };
                text += &format!("{name:<16} {}{mark}\n", builtin::describe(body));
            }
            let _ = std::io::stdout().write_all(text.as_bytes());
            Ok(())
        }
        Command::Qdiscs => {
            let text: String = aqm::QdiscSpec::KINDS
                .iter()
                .map(|k| format!("{k}\n"))
                .collect();
            let _ = std::io::stdout().write_all(text.as_bytes());
            Ok(())
        }
        Command::Model { model } => model_cmd::run(model),
        Command::QueueLab(a) => queue_lab::run(a),
    };
    match result {
        Ok(()) => 0,
        Err(e) if e.downcast_ref::<UsageError>().is_some() => {
            eprintln!("error: {e}");
            2
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            1
        }
    }
}
