//! # _aqmlab: the Python extension module of aqmlab
//!
//! Conversions and nothing else: each function takes plain Python values, calls
//! the core crates (`sim`, `aqm`, `models`, and `command`, the command line's one
//! declaration; not the `cli` crate, so neither Parquet nor a progress bar ships
//! in here), and returns plain Python values. A run's results cross
//! as Arrow: [`Finished::tables`] gives each table of `sim::tables` as Arrow IPC
//! stream bytes, which `aqmlab.Result` reads with `pyarrow.ipc`. The user API lives
//! in `python/aqmlab`; the stubs in `python/aqmlab/_aqmlab.pyi` list what is here.
//!
//! ## Map
//! - [`error`]: core errors to Python exceptions (`ValueError` with the CLI's text).
//! - [`command`]: the pip install's `aqmlab` parsed by the binary's parser.
//! - [`emulate`]: `aqmlab emulate` and `aqmlab.emulate` (Linux).
//! - this file: the module's functions and [`Finished`].
//!
//! Simulations run with the GIL released, in slices of simulated time; between
//! slices the GIL is taken back to check for signals, so Ctrl-C interrupts a long
//! run with `KeyboardInterrupt`, and to call the caller's `progress(now_s, end_s)`
//! (a tqdm bar in `aqmlab`) at most ten times a second.

mod command;
mod emulate;
mod error;
mod os_arg;

use error::Error;
use os_arg::OsArg;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use sim::front::assign::Assignment;
use sim::front::builtin;
use sim::{Overrides, RunResult, Scenario, Simulation};

/// A finished run, kept in Rust until Python asks for it in a form, with the
/// scenario's warnings (`warning: ...` lines) and, for a run whose tables are
/// labelled (`aqmlab run`, `aqmlab.run`), its `--set` assignments.
#[pyclass(frozen, module = "aqmlab._aqmlab")]
struct Finished(RunResult, String, Option<Vec<Assignment>>);

#[pymethods]
impl Finished {
    /// Every table of the run as (name, Arrow IPC stream bytes), in `sim::tables`
    /// order; labelled (`sim::front::labels`) when the run was.
    fn tables<'py>(&self, py: Python<'py>) -> PyResult<Vec<(&'static str, Bound<'py, PyBytes>)>> {
        let encoded = py.detach(|| -> Result<Vec<(&'static str, Vec<u8>)>, Error> {
            match &self.2 {
                Some(sets) => sim::front::labels::labelled(&self.0, sets),
                None => sim::tables::tables(&self.0),
            }
            .into_iter()
            .map(|(name, batch)| Ok((name, ipc_stream(&batch)?)))
            .collect()
        })?;
        Ok(encoded
            .into_iter()
            .map(|(name, bytes)| (name, PyBytes::new(py, &bytes)))
            .collect())
    }

    /// The `aqmlab run --json` object as text (indented with `pretty`, as
    /// `summary.json` under `--out` is).
    #[pyo3(signature = (pretty=false))]
    fn summary_json(&self, pretty: bool) -> PyResult<String> {
        let s = self.0.summary();
        let text = if pretty {
            serde_json::to_string_pretty(&s)
        } else {
            serde_json::to_string(&s)
        };
        Ok(text.map_err(|e| Error::Internal(e.to_string()))?)
    }

    /// The short summary `aqmlab run` prints.
    fn text(&self) -> String {
        sim::text::summary(&self.0)
    }

    /// The scenario's warnings and the qdiscs' diagnostics, as the warning lines
    /// `aqmlab run` prints on stderr.
    fn warnings(&self) -> String {
        format!("{}{}", self.1, sim::text::warnings(&self.0))
    }
}

/// One table as an Arrow IPC stream.
fn ipc_stream(batch: &arrow_array::RecordBatch) -> Result<Vec<u8>, Error> {
    let mut w = arrow_ipc::writer::StreamWriter::try_new(Vec::new(), &batch.schema())?;
    w.write(batch)?;
    w.finish()?;
    Ok(w.into_inner()?)
}

/// Applies `seed`, `duration` and `warmup` as the CLI applies its flags.
fn configure(
    mut s: Scenario,
    seed: Option<u64>,
    duration: Option<&str>,
    warmup: Option<&str>,
) -> Result<Scenario, Error> {
    Overrides {
        seed,
        duration,
        warmup,
    }
    .apply(&mut s)?;
    Ok(s)
}

/// Slices a run is cut into, to look for signals between them.
const SLICES: u64 = 1000;

/// Least wall time between two calls of a run's `progress`.
const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_millis(100);

/// Runs `s` without the GIL, capturing the link `pcap` (a name, and the folder)
/// when asked, calling `progress(now_s, end_s)` as it goes and once at the end.
fn simulate(
    py: Python<'_>,
    s: Scenario,
    pcap: Option<(&str, &std::path::Path)>,
    progress: Option<&Bound<'_, PyAny>>,
    labels: Option<Vec<Assignment>>,
) -> PyResult<Finished> {
    let started = std::time::Instant::now();
    let warned: String = s
        .warnings()
        .iter()
        .map(|w| format!("warning: {w}\n"))
        .collect();
    let mut simulation = py.detach(|| Simulation::new(&s)).map_err(Error::from)?;
    if let Some((link, dir)) = pcap {
        sim::front::overrides::capture(&mut simulation, link, dir)
            .map_err(Error::Usage)?
            .map_err(|e| {
                Error::Internal(format!("creating a pcap file in {}: {e}", dir.display()))
            })?;
    }
    let end = simulation.end();
    let step = (end.as_nanos() / SLICES).max(1_000_000);
    let mut told = started;
    while simulation.now() < end {
        let until = aqm::Time::from_nanos(simulation.now().as_nanos().saturating_add(step));
        py.detach(|| simulation.run_until(until, &mut |_| {}));
        py.check_signals()?;
        if let Some(cb) = progress {
            let now = std::time::Instant::now();
            if now.duration_since(told) >= PROGRESS_EVERY || simulation.now() >= end {
                told = now;
                cb.call1((simulation.now().as_secs_f64(), end.as_secs_f64()))?;
            }
        }
    }
    simulation
        .finish_capture()
        .map_err(|e| Error::Internal(format!("finishing the pcap: {e}")))?;
    Ok(Finished(
        simulation.into_report(started.elapsed().as_secs_f64()),
        warned,
        labels,
    ))
}

/// Runs a scenario given as TOML text; `origin` names it in error messages.
#[pyfunction]
#[pyo3(signature = (text, origin, seed=None, duration=None, warmup=None, progress=None))]
fn run_toml(
    py: Python<'_>,
    text: &str,
    origin: &str,
    seed: Option<u64>,
    duration: Option<&str>,
    warmup: Option<&str>,
    progress: Option<Bound<'_, PyAny>>,
) -> PyResult<Finished> {
    let s = Scenario::from_toml(text, origin).map_err(Error::from)?;
    simulate(
        py,
        configure(s, seed, duration, warmup)?,
        None,
        progress.as_ref(),
        None,
    )
}

/// Runs a scenario given as a JSON object (a dict with the TOML's keys). With
/// `sets` (a JSON list of [dotted key, value], as `--set` gives them), applies
/// them and labels the tables with the scenario, the keys and the seed.
#[pyfunction]
#[pyo3(signature = (json, seed=None, duration=None, warmup=None, progress=None, sets=None))]
fn run_json(
    py: Python<'_>,
    json: &str,
    seed: Option<u64>,
    duration: Option<&str>,
    warmup: Option<&str>,
    progress: Option<Bound<'_, PyAny>>,
    sets: Option<&str>,
) -> PyResult<Finished> {
    let labels = sets.map(command::assignments).transpose()?;
    let s = match labels.as_deref() {
        Some(sets) if !sets.is_empty() => {
            let table: sim::front::assign::Table =
                serde_json::from_str(json).map_err(|e| Error::Usage(format!("<dict>: {e}")))?;
            sim::front::assign::with(table, sets, "<dict>").map_err(Error::Usage)?
        }
        _ => Scenario::from_json(json).map_err(Error::from)?,
    };
    simulate(
        py,
        configure(s, seed, duration, warmup)?,
        None,
        progress.as_ref(),
        labels,
    )
}

/// Checks that `aqmlab emulate` can honour a scenario given as a JSON object
/// (a dumbbell, rates it keeps time at, kernel TCP variants) before a sweep of
/// emulated runs starts: `ValueError` with the refusal `emulate` prints.
#[pyfunction]
fn check_emulation(json: &str) -> PyResult<()> {
    let s = Scenario::from_json(json).map_err(Error::from)?;
    emu::check::plan(&s).map_err(Error::from)?;
    Ok(())
}

/// Checks a scenario given as a JSON object as `run_json` would (parse, validate,
/// and the memory it needs) without building or simulating it: a scenario that
/// validates builds, and a sweep checks every point before it
/// starts one, so a typo in the last point does not cost the runs before it.
/// Returns what the run would simulate as JSON ([`Scenario::simulated`]), for a
/// sweep to find an axis that changes nothing.
#[pyfunction]
#[pyo3(signature = (json, seed=None, duration=None, warmup=None))]
fn check_json(
    py: Python<'_>,
    json: &str,
    seed: Option<u64>,
    duration: Option<&str>,
    warmup: Option<&str>,
) -> PyResult<String> {
    let s = Scenario::from_json(json).map_err(Error::from)?;
    let s = configure(s, seed, duration, warmup)?;
    py.detach(|| fits_in_memory(&s)).map_err(Error::from)?;
    Ok(s.simulated().to_string())
}

/// Checks a scenario file, or a built-in scenario by name, as
/// `run_builtin_or_path` would (parse, validate, and the memory it needs)
/// without building or simulating it: a sweep over a file checks the file first, so its errors name
/// the file and the line.
#[pyfunction]
#[pyo3(signature = (arg=None, duration=None, warmup=None))]
fn check_source(
    py: Python<'_>,
    arg: Option<OsArg>,
    duration: Option<&str>,
    warmup: Option<&str>,
) -> PyResult<()> {
    let s = sim::load(arg.as_ref().map(|a| a.0.as_os_str())).map_err(Error::from)?;
    let s = configure(s, None, duration, warmup)?;
    py.detach(|| fits_in_memory(&s)).map_err(Error::from)?;
    Ok(())
}

/// Runs a scenario file, or a built-in scenario by name (the default when `None`),
/// resolved exactly as `aqmlab run ARG` resolves it; `pcap` = (link, folder)
/// captures that link as `aqmlab run --pcap` does. With `sets` (a JSON list of
/// [dotted key, value]), applies them as `--set` does and labels the tables.
#[pyfunction]
#[pyo3(signature = (arg=None, seed=None, duration=None, warmup=None, pcap=None, progress=None, sets=None))]
#[allow(clippy::too_many_arguments)]
fn run_builtin_or_path(
    py: Python<'_>,
    arg: Option<OsArg>,
    seed: Option<u64>,
    duration: Option<&str>,
    warmup: Option<&str>,
    pcap: Option<(String, OsArg)>,
    progress: Option<Bound<'_, PyAny>>,
    sets: Option<&str>,
) -> PyResult<Finished> {
    let labels = sets.map(command::assignments).transpose()?;
    let overrides = Overrides {
        seed,
        duration,
        warmup,
    };
    let arg = arg.as_ref().map(|a| a.0.as_os_str());
    let s = sim::front::assign::load(arg, labels.as_deref().unwrap_or(&[]), &overrides)
        .map_err(Error::Usage)?;
    let pcap = pcap
        .as_ref()
        .map(|(l, d)| (l.as_str(), std::path::Path::new(&d.0)));
    simulate(py, s, pcap, progress.as_ref(), labels)
}

/// (TOML text, origin) of a scenario argument, resolved as `aqmlab run ARG`
/// resolves it, for callers that edit the scenario before running it.
#[pyfunction]
#[pyo3(signature = (arg=None))]
fn scenario_source(arg: Option<OsArg>) -> PyResult<(String, String)> {
    let s = sim::resolve(arg.as_ref().map(|a| a.0.as_os_str())).map_err(Error::from)?;
    Ok((s.text, s.origin))
}

/// The names of the result tables, in `sim::tables` order.
#[pyfunction]
fn table_names() -> Vec<&'static str> {
    sim::tables::TABLES.iter().map(|(n, _)| *n).collect()
}

/// Each result table's schema, as the Arrow IPC stream of an empty table, by name
/// (a CSV table carries no column types; these are the ones it was written with).
#[pyfunction]
fn table_schemas() -> Result<Vec<(&'static str, Vec<u8>)>, Error> {
    sim::tables::schemas()
        .into_iter()
        .map(|(name, schema)| {
            Ok((
                name,
                ipc_stream(&arrow_array::RecordBatch::new_empty(schema))?,
            ))
        })
        .collect()
}

/// The drop (and mark) reasons, in the order of the `drops_<reason>` columns.
#[pyfunction]
fn drop_reasons() -> Vec<&'static str> {
    aqm::DropReason::ALL.iter().map(|d| d.name()).collect()
}

/// A rate as a scenario writes it (`"10Mbps"`, `"500kbit"`, `"8KBps"`), in bit/s.
#[pyfunction]
fn parse_rate(text: &str) -> PyResult<u64> {
    Ok(aqm::parse_rate(text).map_err(Error::usage)?.bps())
}

/// A duration as a scenario writes it (`"20ms"`, `"1.5s"`), in nanoseconds.
#[pyfunction]
fn parse_duration(text: &str) -> PyResult<u64> {
    Ok(aqm::parse_dur(text).map_err(Error::usage)?.as_nanos())
}

/// Nanoseconds written as a scenario would write them (`20000000` -> `"20ms"`).
#[pyfunction]
fn format_duration(nanos: u64) -> String {
    aqm::Dur::from_nanos(nanos).to_string()
}

/// The key of hash level `level` in key generation `generation` of a qdisc whose
/// `hash_seed` is given (SFB's levels; SFQ uses level 0).
#[pyfunction]
fn hash_key(hash_seed: u64, generation: u32, level: u32) -> u64 {
    aqm::parts::flow_hash::level_key(hash_seed, generation, level)
}

/// The 32-bit hash of flow `flow` under `key`, which SFB and SFQ reduce modulo
/// their bin count.
#[pyfunction]
fn flow_hash(key: u64, flow: u32) -> u32 {
    aqm::parts::flow_hash::keyed_hash(key, flow)
}

/// Runs the queue lab on a configuration given as a JSON object (the keys of
/// `aqmlab queue-lab`'s flags); returns what `aqmlab queue-lab` prints: the JSON
/// object, or the table with `text`.
#[pyfunction]
#[pyo3(signature = (config, text=false))]
fn queue_lab(py: Python<'_>, config: &str, text: bool) -> PyResult<String> {
    use models::queue_lab as lab;
    let cfg: lab::LabConfig =
        serde_json::from_str(config).map_err(|e| Error::Usage(format!("queue lab: {e}")))?;
    let r = py.detach(|| lab::run_lab(&cfg)).map_err(Error::Usage)?;
    Ok(if text {
        lab::to_text(&r)
    } else {
        lab::to_json(&r)
    })
}

/// `aqmlab model sfb-misclass`'s output.
#[pyfunction]
#[pyo3(signature = (levels, bins, nonresponsive, json=false))]
fn model_sfb_misclass(levels: u32, bins: u64, nonresponsive: u64, json: bool) -> PyResult<String> {
    Ok(models::report::sfb_misclass(levels, bins, nonresponsive, json).map_err(Error::from)?)
}

/// `aqmlab model choke-front`'s output.
#[pyfunction]
#[pyo3(signature = (mu, rates, json=false))]
fn model_choke_front(mu: f64, rates: Vec<f64>, json: bool) -> PyResult<String> {
    Ok(models::report::choke_front(mu, &rates, json).map_err(Error::from)?)
}

/// `aqmlab model choke-back`'s output.
#[pyfunction]
#[pyo3(signature = (memory, rates, mu=None, json=false))]
fn model_choke_back(
    memory: usize,
    rates: Vec<f64>,
    mu: Option<f64>,
    json: bool,
) -> PyResult<String> {
    Ok(models::report::choke_back(memory, &rates, mu, json).map_err(Error::from)?)
}

/// (name, one-line description) of each built-in scenario.
#[pyfunction]
fn builtin_scenarios() -> Vec<(&'static str, String)> {
    builtin::BUILTINS
        .iter()
        .map(|(name, text)| (*name, builtin::describe(text)))
        .collect()
}

/// What `aqmlab scenarios` prints.
#[pyfunction]
fn builtin_listing() -> String {
    builtin::listing()
}

/// The TOML text of a built-in scenario.
#[pyfunction]
fn builtin_text(name: &str) -> PyResult<&'static str> {
    builtin::builtin(name).ok_or_else(|| {
        Error::Usage(format!(
            "no built-in scenario named \"{name}\" (see `aqmlab scenarios`)"
        ))
        .into()
    })
}

/// The `kind` names a scenario's `[qdisc]` may use.
#[pyfunction]
fn qdisc_kinds() -> Vec<&'static str> {
    aqm::QdiscSpec::KINDS.to_vec()
}

/// The memory check `Simulation::new` makes first; what else it could refuse
/// was refused when the scenario validated.
fn fits_in_memory(s: &Scenario) -> Result<(), sim::ScenarioError> {
    sim::setup::memory::check(s, s.total_flows())
}

/// The keys a `[qdisc]` of `kind` takes besides `kind` (its parameters' names,
/// from the registry); a `ValueError` for a kind there is not.
#[pyfunction]
fn qdisc_keys(kind: &str) -> PyResult<Vec<&'static str>> {
    aqm::QdiscSpec::keys(kind)
        .map(<[_]>::to_vec)
        .ok_or_else(|| {
            Error::Usage(format!(
                "no qdisc kind \"{kind}\" (kinds: {})",
                aqm::QdiscSpec::KINDS.join(", ")
            ))
            .into()
        })
}

/// Simulated time against a run's end as the progress bars show it
/// (`12.3 s / 300 s`).
#[pyfunction]
fn progress_text(now_s: f64, end_s: f64) -> String {
    sim::text::progress(now_s, end_s)
}

/// What `aqmlab qdiscs KIND` prints: the kind's keys, defaults and their sources.
#[pyfunction]
fn qdisc_help(kind: &str) -> PyResult<String> {
    sim::front::qdisc_help::describe(kind)
        .ok_or_else(|| Error::Usage(format!("no qdisc kind \"{kind}\"")).into())
}

/// `aqmlab tc`'s output: the `[qdisc]` table a tc command line configures.
#[pyfunction]
fn tc_table(line: &str) -> PyResult<String> {
    Ok(sim::tc::parse(line).map_err(Error::usage)?.to_toml())
}

/// The name of the scenario `aqmlab run` runs when given none.
#[pyfunction]
fn default_scenario() -> &'static str {
    builtin::DEFAULT
}

#[pymodule]
fn _aqmlab(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Finished>()?;
    m.add_function(wrap_pyfunction!(command::command_line, m)?)?;
    m.add_function(wrap_pyfunction!(command::parse_sets, m)?)?;
    m.add_function(wrap_pyfunction!(command::assign, m)?)?;
    m.add_function(wrap_pyfunction!(run_toml, m)?)?;
    m.add_function(wrap_pyfunction!(run_json, m)?)?;
    m.add_function(wrap_pyfunction!(check_emulation, m)?)?;
    m.add_function(wrap_pyfunction!(run_builtin_or_path, m)?)?;
    m.add_function(wrap_pyfunction!(check_json, m)?)?;
    m.add_function(wrap_pyfunction!(emulate::emulate_json, m)?)?;
    m.add_function(wrap_pyfunction!(emulate::emulate_builtin_or_path, m)?)?;
    m.add_function(wrap_pyfunction!(emulate::emulate_calibrate, m)?)?;
    m.add_function(wrap_pyfunction!(emulate::compare_text, m)?)?;
    m.add_function(wrap_pyfunction!(check_source, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_source, m)?)?;
    m.add_function(wrap_pyfunction!(table_names, m)?)?;
    m.add_function(wrap_pyfunction!(table_schemas, m)?)?;
    m.add_function(wrap_pyfunction!(drop_reasons, m)?)?;
    m.add_function(wrap_pyfunction!(parse_rate, m)?)?;
    m.add_function(wrap_pyfunction!(parse_duration, m)?)?;
    m.add_function(wrap_pyfunction!(format_duration, m)?)?;
    m.add_function(wrap_pyfunction!(hash_key, m)?)?;
    m.add_function(wrap_pyfunction!(flow_hash, m)?)?;
    m.add_function(wrap_pyfunction!(queue_lab, m)?)?;
    m.add_function(wrap_pyfunction!(model_sfb_misclass, m)?)?;
    m.add_function(wrap_pyfunction!(model_choke_front, m)?)?;
    m.add_function(wrap_pyfunction!(model_choke_back, m)?)?;
    m.add_function(wrap_pyfunction!(builtin_scenarios, m)?)?;
    m.add_function(wrap_pyfunction!(builtin_listing, m)?)?;
    m.add_function(wrap_pyfunction!(builtin_text, m)?)?;
    m.add_function(wrap_pyfunction!(qdisc_kinds, m)?)?;
    m.add_function(wrap_pyfunction!(qdisc_keys, m)?)?;
    m.add_function(wrap_pyfunction!(qdisc_help, m)?)?;
    m.add_function(wrap_pyfunction!(progress_text, m)?)?;
    m.add_function(wrap_pyfunction!(tc_table, m)?)?;
    m.add_function(wrap_pyfunction!(default_scenario, m)?)?;
    Ok(())
}
