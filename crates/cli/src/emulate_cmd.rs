//! `aqmlab emulate`: a scenario on real Linux TCP through the same qdiscs.

use crate::output;
use crate::{print, print_json, usage, Interrupted};
use anyhow::Context;
use aqmlab_command::EmulateArgs;
use sim::Overrides;

pub fn run(a: EmulateArgs) -> anyhow::Result<()> {
    if a.calibrate {
        return calibrate(a.overrides.duration.as_deref(), a.output.json);
    }
    // The scenario as `run` reads it, `--set` included, so one command line
    // emulates what it simulates.
    let labels = sim::front::assign::parse_all(&a.sets).map_err(usage)?;
    let s = sim::front::assign::load(
        a.scenario.as_deref(),
        &labels,
        &Overrides {
            seed: a.overrides.seed,
            duration: a.overrides.duration.as_deref(),
            warmup: a.overrides.warmup.as_deref(),
        },
    )
    .map_err(usage)?;
    output::allow_foreign_out(a.output.allow_foreign_out);
    if let Some(dir) = &a.output.out {
        if let Some(warning) = output::check_out_dir(dir, a.output.format).map_err(usage)? {
            eprintln!("warning: {warning}");
        }
        // Found out now, not after the whole emulation in wall-clock time.
        probe_writable(dir).map_err(usage)?;
    }
    let apps = apps(&a)?;
    let bar = (!a.quiet).then(|| WallClockBar::start(s.file.duration.as_nanos()));
    let result = emulate(&s, apps);
    drop(bar);
    let result = result?;
    eprint!("{}", sim::text::warnings(&result));
    if a.strict {
        refuse_late(&result)?;
    }
    if let Some(dir) = &a.output.out {
        output::write_run(dir, &result, &labels, a.output.format)
            .with_context(|| format!("writing results to {}", dir.display()))?;
    }
    if a.compare {
        let simulated = sim::run_scenario(&s, &mut |_| {}).map_err(|e| usage(e.to_string()))?;
        if a.output.json {
            let both = serde_json::json!({
                "simulated": simulated.summary_json(),
                "emulated": result.summary_json(),
            });
            return print(&format!("{both}\n"));
        }
        return print(&emu_compare(&simulated, &result));
    }
    if a.output.json {
        print_json(&result)
    } else {
        print(&sim::text::summary(&result))
    }
}

/// The emulation's progress on the wall clock, as `run` shows the simulated
/// clock's: drawn by a thread of its own while the emulation holds this one, on a
/// terminal only, gone when dropped.
struct WallClockBar {
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl WallClockBar {
    fn start(duration_ns: u64) -> WallClockBar {
        use indicatif::{ProgressBar, ProgressStyle};
        use std::sync::atomic::Ordering;
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stop = done.clone();
        let thread = std::thread::spawn(move || {
            let started = std::time::Instant::now();
            let bar = ProgressBar::new(duration_ns);
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} emulated {msg} [{bar:40}] {percent}% eta {eta}",
                )
                .expect("valid template")
                .progress_chars("=> "),
            );
            let end = duration_ns as f64 / 1e9;
            while !stop.load(Ordering::Relaxed) {
                let t = started.elapsed().as_nanos().min(u128::from(duration_ns)) as u64;
                bar.set_position(t);
                bar.set_message(sim::text::progress(t as f64 / 1e9, end));
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            bar.finish_and_clear();
        });
        WallClockBar {
            done,
            thread: Some(thread),
        }
    }
}

impl Drop for WallClockBar {
    fn drop(&mut self) {
        self.done.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// `--strict`: a run that did not keep time is an error, and nothing of it is
/// written (its warning, printed above, says why).
fn refuse_late(r: &sim::RunResult) -> anyhow::Result<()> {
    match &r.emulation {
        Some(e) if !e.kept_time => anyhow::bail!(
            "--strict: the emulation did not keep time (p99 lateness {:.1} us against a \
             packet time of {:.1} us); its results are discarded",
            e.lateness_p99_s * 1e6,
            e.packet_time_s * 1e6
        ),
        _ => Ok(()),
    }
}

/// Makes `dir` (as writing the results would) and writes and removes a small
/// file in it: a read-only or full folder is an error before the emulation's
/// wall-clock time is spent, not after.
fn probe_writable(dir: &std::path::Path) -> Result<(), String> {
    let cannot = |e: std::io::Error| format!("--out {}: cannot write there: {e}", dir.display());
    std::fs::create_dir_all(dir).map_err(cannot)?;
    let probe = dir.join(format!(".aqmlab-probe-{}", std::process::id()));
    let written = std::fs::File::create_new(&probe).and_then(|mut f| {
        std::io::Write::write_all(&mut f, &[0u8; 64 * 1024])?;
        f.sync_all()
    });
    let _ = std::fs::remove_file(&probe);
    written.map_err(cannot)
}

/// The programs `--app` runs, or none; `--app` alone is refused.
#[cfg(target_os = "linux")]
fn apps(a: &EmulateArgs) -> anyhow::Result<Option<emu::apps::Apps>> {
    let Some(group) = &a.app else {
        return Ok(None);
    };
    if a.compare {
        return Err(usage(format!(
            "--app {group} with --compare: a program's connections have no simulated \
             counterpart (the simulation would run group \"{group}\" as the scenario \
             declares it); compare without --app"
        )));
    }
    if a.command.is_empty() && a.receiver_cmd.is_none() {
        return Err(usage(format!(
            "--app {group} needs a command to run: `-- CMD ARGS` (senders' namespace) or \
             --receiver-cmd (receivers')"
        )));
    }
    Ok(Some(emu::apps::Apps {
        group: group.clone(),
        sender: a.command.iter().map(Into::into).collect(),
        receiver: a.receiver_cmd.clone(),
    }))
}

#[cfg(not(target_os = "linux"))]
fn apps(_: &EmulateArgs) -> anyhow::Result<Option<()>> {
    Ok(None)
}

#[cfg(target_os = "linux")]
fn emulate(s: &sim::Scenario, apps: Option<emu::apps::Apps>) -> anyhow::Result<sim::RunResult> {
    // Refusals first, then the scenario's no-op warnings, as `run` prints them
    // once it has accepted the scenario.
    emu::check::plan(s).map_err(|e| usage(e.to_string()))?;
    for w in s.warnings() {
        eprintln!("warning: {w}");
    }
    let stop = emu::stop_on_signals().context("installing the signal handlers")?;
    let opts = emu::Options {
        apps,
        ..Default::default()
    };
    let emulated = emu::emulate_with(s, &opts, stop).map(|e| e.result);
    emulated.map_err(|e| match e {
        emu::EmuError::Scenario(_) | emu::EmuError::NotPermitted | emu::EmuError::Apps(_) => {
            usage(e.to_string())
        }
        emu::EmuError::Interrupted => Interrupted(e.to_string()).into(),
        e => anyhow::Error::new(e),
    })
}

/// `--calibrate`: measures this machine's rate, each rate's line as it is
/// measured (stderr), then the limit (stdout; with --json the calibration).
#[cfg(target_os = "linux")]
fn calibrate(duration: Option<&str>, json: bool) -> anyhow::Result<()> {
    let measured_ms = emu::calibrate::measured_ms(duration).map_err(usage)?;
    let stop = emu::stop_on_signals().context("installing the signal handlers")?;
    let mut show = |s: &emu::calibrate::Step| eprintln!("{}", emu::calibrate::step_line(s));
    let kept = emu::calibrate::calibrate_and_keep(measured_ms, stop, &mut show);
    let (c, path) = kept.map_err(|e| match e {
        emu::EmuError::NotPermitted => usage(e.to_string()),
        emu::EmuError::Interrupted => Interrupted(e.to_string()).into(),
        e => anyhow::Error::new(e),
    })?;
    if json {
        return print(&format!("{}\n", serde_json::to_string(&c)?));
    }
    print(&emu::calibrate::summary(&c, &path))
}

#[cfg(not(target_os = "linux"))]
fn calibrate(_: Option<&str>, _: bool) -> anyhow::Result<()> {
    Err(usage(
        "aqmlab emulate needs Linux (network namespaces and TUN devices)",
    ))
}

#[cfg(not(target_os = "linux"))]
fn emulate(_: &sim::Scenario, _: Option<()>) -> anyhow::Result<sim::RunResult> {
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
