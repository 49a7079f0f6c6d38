//! `aqmlab emulate`: a scenario on real Linux TCP through the same qdiscs.

use crate::output::{self, Format};
use crate::{print, print_json, usage};
use anyhow::Context;
use sim::Overrides;
use std::path::PathBuf;

#[derive(clap::Args)]
#[command(
    after_help = "Needs root (CAP_NET_ADMIN): the senders and receivers live in two \
network namespaces of their own, joined through TUN devices to this process, which \
applies the scenario's links and qdisc to every packet. duration and warmup are \
wall-clock time. Nothing outside the two namespaces is touched, and they vanish \
with the process. docs/emulation.md says how it works and where it differs from \
simulation."
)]
pub struct EmulateArgs {
    /// A TOML scenario file (a dumbbell), or the name of a built-in scenario.
    scenario: Option<String>,
    /// Override the scenario's seed.
    #[arg(long)]
    seed: Option<u64>,
    /// Override the scenario's duration (wall-clock), e.g. "30s".
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
    /// Also simulate the scenario and print both side by side (with --json: an
    /// object with "simulated" and "emulated").
    #[arg(long)]
    compare: bool,
}

pub fn run(a: EmulateArgs) -> anyhow::Result<()> {
    let mut s = sim::load(a.scenario.as_deref()).map_err(|e| usage(e.to_string()))?;
    Overrides {
        seed: a.seed,
        duration: a.duration.as_deref(),
        warmup: a.warmup.as_deref(),
    }
    .apply(&mut s)
    .map_err(|e| usage(e.to_string()))?;
    if let Some(dir) = &a.out {
        if let Some(warning) = output::check_out_dir(dir, a.format).map_err(usage)? {
            eprintln!("warning: {warning}");
        }
    }
    let result = emulate(&s)?;
    eprint!("{}", sim::text::warnings(&result));
    if let Some(dir) = &a.out {
        output::write_run(dir, &result, a.format)
            .with_context(|| format!("writing results to {}", dir.display()))?;
    }
    if a.compare {
        let simulated = sim::run_scenario(&s, &mut |_| {}).map_err(|e| usage(e.to_string()))?;
        if a.json {
            let both = serde_json::json!({
                "simulated": simulated.summary_json(),
                "emulated": result.summary_json(),
            });
            return print(&format!("{both}\n"));
        }
        return print(&emu_compare(&simulated, &result));
    }
    if a.json {
        print_json(&result)
    } else {
        print(&sim::text::summary(&result))
    }
}

#[cfg(target_os = "linux")]
fn emulate(s: &sim::Scenario) -> anyhow::Result<sim::RunResult> {
    // Refusals first, then the scenario's no-op warnings, as `run` prints them
    // once it has accepted the scenario.
    emu::check::plan(s).map_err(|e| usage(e.to_string()))?;
    for w in s.warnings() {
        eprintln!("warning: {w}");
    }
    let stop = emu::stop_on_signals().context("installing the signal handlers")?;
    emu::emulate(s, stop).map_err(|e| match e {
        emu::EmuError::Scenario(_) | emu::EmuError::NotPermitted => usage(e.to_string()),
        e => anyhow::Error::new(e),
    })
}

#[cfg(not(target_os = "linux"))]
fn emulate(_: &sim::Scenario) -> anyhow::Result<sim::RunResult> {
    Err(usage(
        "aqmlab emulate needs Linux (network namespaces and TUN devices)",
    ))
}

#[cfg(target_os = "linux")]
fn emu_compare(simulated: &sim::RunResult, emulated: &sim::RunResult) -> String {
    emu::compare::table(simulated, emulated)
}

#[cfg(not(target_os = "linux"))]
fn emu_compare(_: &sim::RunResult, _: &sim::RunResult) -> String {
    unreachable!("emulation fails first off Linux")
}
