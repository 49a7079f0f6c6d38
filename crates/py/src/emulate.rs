//! `aqmlab emulate` and `aqmlab.emulate`: an emulation on a thread of its own,
//! the GIL released, stopped by a signal Python sees; the calibration of the
//! rate guard; the side-by-side table of `--compare`.

use crate::error::Error;
use crate::os_arg::OsArg;
use crate::{command, configure, Finished};

use pyo3::prelude::*;
use sim::{Overrides, Scenario};

/// Runs `work` on a thread of its own, the GIL released; a signal Python
/// sees (Ctrl-C) sets the stop flag `work` was given, waits for it to end and
/// raises.
#[cfg(target_os = "linux")]
fn interruptible<T: Send + 'static>(
    py: Python<'_>,
    what: &str,
    work: impl FnOnce(std::sync::Arc<std::sync::atomic::AtomicBool>) -> T + Send + 'static,
) -> PyResult<T> {
    use std::sync::atomic::{AtomicBool, Ordering};
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let run = std::thread::spawn(move || work(flag));
    while !run.is_finished() {
        py.detach(|| std::thread::sleep(std::time::Duration::from_millis(50)));
        if let Err(e) = py.check_signals() {
            stop.store(true, Ordering::Relaxed);
            let _ = py.detach(|| run.join());
            return Err(e);
        }
    }
    run.join()
        .map_err(|_| Error::Internal(format!("the {what} panicked")).into())
}

/// Emulates `s` (`aqmlab emulate`) on a thread of its own, the GIL released;
/// a signal Python sees (Ctrl-C) stops it and raises.
#[cfg(target_os = "linux")]
fn emulate_scenario(
    py: Python<'_>,
    s: Scenario,
    labels: Option<Vec<sim::front::assign::Assignment>>,
    apps: AppArgs,
) -> PyResult<Finished> {
    let opts = emu::Options {
        apps: apps.into_apps()?,
        ..Default::default()
    };
    let warned: String = s
        .warnings()
        .iter()
        .map(|w| format!("warning: {w}\n"))
        .collect();
    let result = interruptible(py, "emulation", move |stop| {
        emu::emulate_with(&s, &opts, stop).map(|e| e.result)
    })?;
    match result {
        Ok(r) => Ok(Finished(r, warned, labels)),
        Err(
            e @ (emu::EmuError::Scenario(_) | emu::EmuError::NotPermitted | emu::EmuError::Apps(_)),
        ) => Err(Error::usage(e).into()),
        Err(e) => Err(Error::Internal(e.to_string()).into()),
    }
}

#[cfg(not(target_os = "linux"))]
fn emulate_scenario(
    _: Python<'_>,
    _: Scenario,
    _: Option<Vec<sim::front::assign::Assignment>>,
    _: AppArgs,
) -> PyResult<Finished> {
    Err(
        Error::Usage("aqmlab emulate needs Linux (network namespaces and TUN devices)".into())
            .into(),
    )
}

/// `--app GROUP`, `--receiver-cmd` and the command after `--` (`aqmlab emulate`),
/// or `app`, `receiver_command` and `command` (`aqmlab.emulate`).
#[derive(Default)]
struct AppArgs {
    group: Option<String>,
    sender: Option<Vec<String>>,
    receiver: Option<String>,
}

impl AppArgs {
    #[cfg(target_os = "linux")]
    fn into_apps(self) -> PyResult<Option<emu::apps::Apps>> {
        let sender = self.sender.unwrap_or_default();
        let Some(group) = self.group else {
            if !sender.is_empty() || self.receiver.is_some() {
                return Err(Error::Usage(
                    "a command to run needs app= (--app GROUP): the flow group whose flows \
                     carry its connections"
                        .into(),
                )
                .into());
            }
            return Ok(None);
        };
        if sender.is_empty() && self.receiver.is_none() {
            return Err(Error::Usage(format!(
                "--app {group} needs a command to run: `-- CMD ARGS` (senders' namespace) or \
                 --receiver-cmd (receivers')"
            ))
            .into());
        }
        Ok(Some(emu::apps::Apps {
            group,
            sender: sender.into_iter().map(Into::into).collect(),
            receiver: self.receiver,
        }))
    }
}

/// Emulates a scenario given as a JSON object (`aqmlab.emulate` with a dict or
/// overrides); the tables are labelled with the scenario and the seed unless
/// `labelled` is false (a sweep labels its runs' rows itself).
#[pyfunction]
#[pyo3(signature = (json, seed=None, duration=None, warmup=None, labelled=true, app=None, command=None, receiver_cmd=None))]
#[allow(clippy::too_many_arguments)]
pub fn emulate_json(
    py: Python<'_>,
    json: &str,
    seed: Option<u64>,
    duration: Option<&str>,
    warmup: Option<&str>,
    labelled: bool,
    app: Option<String>,
    command: Option<Vec<String>>,
    receiver_cmd: Option<String>,
) -> PyResult<Finished> {
    let s = Scenario::from_json(json).map_err(Error::from)?;
    let labels = labelled.then(Vec::new);
    let apps = AppArgs {
        group: app,
        sender: command,
        receiver: receiver_cmd,
    };
    emulate_scenario(py, configure(s, seed, duration, warmup)?, labels, apps)
}

/// Emulates a scenario file or built-in scenario, resolved as `aqmlab emulate
/// ARG` resolves it, with `sets` (a JSON list of [dotted key, value]) applied
/// as `--set` does and labelling the tables.
#[pyfunction]
#[pyo3(signature = (arg=None, seed=None, duration=None, warmup=None, sets=None, app=None, command=None, receiver_cmd=None))]
#[allow(clippy::too_many_arguments)]
pub fn emulate_builtin_or_path(
    py: Python<'_>,
    arg: Option<OsArg>,
    seed: Option<u64>,
    duration: Option<&str>,
    warmup: Option<&str>,
    sets: Option<&str>,
    app: Option<String>,
    command: Option<Vec<String>>,
    receiver_cmd: Option<String>,
) -> PyResult<Finished> {
    let labels = sets
        .map(command::assignments)
        .transpose()?
        .unwrap_or_default();
    let overrides = Overrides {
        seed,
        duration,
        warmup,
    };
    let arg = arg.as_ref().map(|a| a.0.as_os_str());
    let s = sim::front::assign::load(arg, &labels, &overrides).map_err(Error::Usage)?;
    let apps = AppArgs {
        group: app,
        sender: command,
        receiver: receiver_cmd,
    };
    emulate_scenario(py, s, Some(labels), apps)
}

/// `aqmlab emulate --calibrate`: measures this machine's rate (each rate's
/// line on stderr as it is measured) and keeps it; returns the calibration as
/// JSON and the summary line.
#[pyfunction]
#[pyo3(signature = (duration=None))]
pub fn emulate_calibrate(py: Python<'_>, duration: Option<&str>) -> PyResult<(String, String)> {
    #[cfg(target_os = "linux")]
    {
        let measured_ms = emu::calibrate::measured_ms(duration).map_err(Error::Usage)?;
        let joined = interruptible(py, "calibration", move |stop| {
            let mut show = |s: &emu::calibrate::Step| eprintln!("{}", emu::calibrate::step_line(s));
            emu::calibrate::calibrate_and_keep(measured_ms, stop, &mut show)
        })?;
        match joined {
            Ok((c, path)) => Ok((
                serde_json::to_string(&c).map_err(|e| Error::Internal(e.to_string()))?,
                emu::calibrate::summary(&c, &path),
            )),
            Err(e @ emu::EmuError::NotPermitted) => Err(Error::usage(e).into()),
            Err(e) => Err(Error::Internal(e.to_string()).into()),
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (py, duration);
        Err(
            Error::Usage("aqmlab emulate needs Linux (network namespaces and TUN devices)".into())
                .into(),
        )
    }
}

/// `aqmlab emulate --compare`'s table: a simulated and an emulated run side by side.
#[pyfunction]
pub fn compare_text(simulated: &Finished, emulated: &Finished) -> String {
    #[cfg(target_os = "linux")]
    return emu::compare::table(&simulated.0, &emulated.0);
    #[cfg(not(target_os = "linux"))]
    return format!(
        "{}\n{}",
        sim::text::summary(&simulated.0),
        sim::text::summary(&emulated.0)
    );
}
