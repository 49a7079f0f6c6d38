//! # _aqmlab: the Python extension module of aqmlab
//!
//! Conversions and nothing else: each function takes plain Python values, calls
//! the core crates, and returns plain Python values (results as JSON text, which
//! the pure-Python package `aqmlab` turns into DataFrames). The user API lives in
//! `python/aqmlab`; the stubs in `python/aqmlab/_aqmlab.pyi` list what is here.
//!
//! ## Map
//! - [`error`]: core errors to Python exceptions (`ValueError` with the CLI's text).
//! - this file: the module's functions.
//!
//! Simulations run with the GIL released, in slices of simulated time; between
//! slices the GIL is taken back to check for signals, so Ctrl-C interrupts a long
//! run with `KeyboardInterrupt`.

mod error;

use error::Error;
use pyo3::prelude::*;
use sim::{builtin, Scenario, Simulation};

/// Applies the `seed` and `duration` arguments as the CLI applies `--seed` and
/// `--duration`.
fn configure(
    mut s: Scenario,
    seed: Option<u64>,
    duration: Option<&str>,
) -> Result<Scenario, Error> {
    if let Some(seed) = seed {
        s.set_seed(seed);
    }
    if let Some(d) = duration {
        s.set_duration(aqm::parse_dur(d)?)?;
    }
    Ok(s)
}

/// Slices a run is cut into, to look for signals between them.
const SLICES: u64 = 1000;

/// Runs `s` without the GIL and returns the full results as JSON text.
fn simulate(py: Python<'_>, s: Scenario) -> PyResult<String> {
    let started = std::time::Instant::now();
    let mut simulation = py.detach(|| Simulation::new(&s)).map_err(Error::from)?;
    let end = simulation.end();
    let step = (end.as_nanos() / SLICES).max(1_000_000);
    while simulation.now() < end {
        let until = aqm::Time::from_nanos(simulation.now().as_nanos().saturating_add(step));
        py.detach(|| simulation.run_until(until, &mut |_| {}));
        py.check_signals()?;
    }
    let result = simulation.report(started.elapsed().as_secs_f64());
    let json = py.detach(|| serde_json::to_string(&result));
    Ok(json.map_err(Error::from)?)
}

/// Runs a scenario given as TOML text; `origin` names it in error messages.
#[pyfunction]
#[pyo3(signature = (text, origin, seed=None, duration=None))]
fn run_toml(
    py: Python<'_>,
    text: &str,
    origin: &str,
    seed: Option<u64>,
    duration: Option<&str>,
) -> PyResult<String> {
    let s = Scenario::from_toml(text, origin).map_err(Error::from)?;
    simulate(py, configure(s, seed, duration)?)
}

/// Runs a scenario given as a JSON object (a dict with the TOML's keys).
#[pyfunction]
#[pyo3(signature = (json, seed=None, duration=None))]
fn run_json(
    py: Python<'_>,
    json: &str,
    seed: Option<u64>,
    duration: Option<&str>,
) -> PyResult<String> {
    let s = Scenario::from_json(json).map_err(Error::from)?;
    simulate(py, configure(s, seed, duration)?)
}

/// Checks a scenario given as a JSON object as `run_json` would (parse, validate,
/// build the network) without simulating it: a sweep checks every point before it
/// starts one, so a typo in the last point does not cost the runs before it.
#[pyfunction]
#[pyo3(signature = (json, seed=None, duration=None))]
fn check_json(
    py: Python<'_>,
    json: &str,
    seed: Option<u64>,
    duration: Option<&str>,
) -> PyResult<()> {
    let s = configure(
        Scenario::from_json(json).map_err(Error::from)?,
        seed,
        duration,
    )?;
    py.detach(|| Simulation::new(&s).map(drop))
        .map_err(Error::from)?;
    Ok(())
}

/// Runs a scenario file, or a built-in scenario by name (the default when `None`),
/// resolved exactly as `aqmlab run ARG` resolves it.
#[pyfunction]
#[pyo3(signature = (arg=None, seed=None, duration=None))]
fn run_builtin_or_path(
    py: Python<'_>,
    arg: Option<&str>,
    seed: Option<u64>,
    duration: Option<&str>,
) -> PyResult<String> {
    let s = aqmlab_cli::load(arg).map_err(Error::Usage)?;
    simulate(py, configure(s, seed, duration)?)
}

/// Runs the `aqmlab` command line (program name first); returns its exit status.
#[pyfunction]
fn cli_main(py: Python<'_>, argv: Vec<String>) -> u8 {
    py.detach(|| aqmlab_cli::main_with_args(argv))
}

/// (name, one-line description) of each built-in scenario.
#[pyfunction]
fn builtin_scenarios() -> Vec<(&'static str, &'static str)> {
    builtin::BUILTINS
        .iter()
        .map(|(name, text)| (*name, builtin::describe(text)))
        .collect()
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

/// The name of the scenario `aqmlab run` runs when given none.
#[pyfunction]
fn default_scenario() -> &'static str {
    builtin::DEFAULT
}

#[pymodule]
fn _aqmlab(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_toml, m)?)?;
    m.add_function(wrap_pyfunction!(run_json, m)?)?;
    m.add_function(wrap_pyfunction!(run_builtin_or_path, m)?)?;
    m.add_function(wrap_pyfunction!(check_json, m)?)?;
    m.add_function(wrap_pyfunction!(cli_main, m)?)?;
    m.add_function(wrap_pyfunction!(builtin_scenarios, m)?)?;
    m.add_function(wrap_pyfunction!(builtin_text, m)?)?;
    m.add_function(wrap_pyfunction!(qdisc_kinds, m)?)?;
    m.add_function(wrap_pyfunction!(default_scenario, m)?)?;
    Ok(())
}
