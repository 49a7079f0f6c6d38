//! The command line of the Python package's `aqmlab`: its argv parsed by the one
//! declaration (`aqmlab-command`, the binary's own), so help, errors, suggestions
//! and completion scripts are the binary's. The subcommands that only print run
//! here; for the others Python gets the subcommand and its values.

use crate::error::Error;
use crate::os_arg::OsArg;
use aqmlab_command::{Command, Failure};
use pyo3::prelude::*;

/// (exit status, stdout, stderr, the subcommand Python runs and its values).
type Outcome = (u8, String, String, Option<(&'static str, String)>);

/// What `aqmlab ARGV...` asks Python to do: (exit status, stdout text, stderr
/// text, the subcommand for Python to run). When the parse printed (help, an
/// error) or the subcommand only prints, the texts and status are the outcome and
/// the last is `None`. Otherwise it is (`"run"`, `"emulate"`, `"sweep"`,
/// `"repro"` or `"plot"`, the subcommand's values as a JSON object named as its
/// flags are, `seed_list` for `--seed-list`; a path that is not UTF-8 as a list
/// of its bytes). An argument is a `str` (surrogate escapes for bytes that are not
/// UTF-8, as in `sys.argv`), `bytes` or an `os.PathLike`.
#[pyfunction]
pub fn command_line(py: Python<'_>, argv: Vec<OsArg>) -> PyResult<Outcome> {
    let cli = match aqmlab_command::parse(argv.into_iter().map(|a| a.0)) {
        Ok(c) => c,
        Err(e) => {
            let (status, text, to_stderr) = aqmlab_command::exit_text(&e);
            return Ok(if to_stderr {
                (status, String::new(), text, None)
            } else {
                (status, text, String::new(), None)
            });
        }
    };
    if let Some(outcome) = py.detach(|| cli.command.printed()) {
        return Ok(match outcome {
            Ok(text) => (0, text, String::new(), None),
            Err(Failure::Usage(e)) => (2, String::new(), format!("error: {e}\n"), None),
            Err(Failure::Other(e)) => (1, String::new(), format!("error: {e}\n"), None),
        });
    }
    let json = |v: Result<String, serde_json::Error>| v.map_err(|e| Error::Internal(e.to_string()));
    let handoff = match &cli.command {
        Command::Run(a) => ("run", json(serde_json::to_string(a))?),
        Command::Emulate(a) => ("emulate", json(serde_json::to_string(a))?),
        Command::Sweep(a) => ("sweep", json(serde_json::to_string(a))?),
        Command::Repro(a) => ("repro", json(serde_json::to_string(a))?),
        Command::Plot(a) => ("plot", json(serde_json::to_string(a))?),
        _ => unreachable!("Command::printed answers for every other subcommand"),
    };
    Ok((0, String::new(), String::new(), Some(handoff)))
}

/// The `--set` texts (`KEY=VALUE`) parsed as `aqmlab run` parses them: a JSON
/// list of [key, value].
#[pyfunction]
pub fn parse_sets(texts: Vec<String>) -> PyResult<String> {
    let sets = sim::front::assign::parse_all(&texts).map_err(Error::Usage)?;
    let pairs: Vec<(&str, &toml::Value)> =
        sets.iter().map(|a| (a.key.as_str(), &a.value)).collect();
    Ok(serde_json::to_string(&pairs).map_err(|e| Error::Internal(e.to_string()))?)
}

/// Whether `v` holds an integer above TOML's largest.
fn beyond_toml(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::Number(n) => n.as_u64().is_some_and(|u| u > i64::MAX as u64),
        serde_json::Value::Array(a) => a.iter().any(beyond_toml),
        serde_json::Value::Object(m) => m.values().any(beyond_toml),
        _ => false,
    }
}

/// The scenario `table` (JSON) with the assignments `sets` (a JSON list of
/// [key, value]) applied as `aqmlab run --set` applies them, as JSON: a sweep's
/// point.
#[pyfunction]
pub fn assign(table: &str, sets: &str) -> PyResult<String> {
    let mut table: sim::front::assign::Table = serde_json::from_str(table)
        .map_err(|e| Error::Usage(format!("the scenario as a table: {e}")))?;
    let sets = assignments(sets)?;
    sim::front::assign::apply_all(&mut table, &sets).map_err(Error::Usage)?;
    Ok(serde_json::to_string(&table).map_err(|e| Error::Internal(e.to_string()))?)
}

/// A JSON list of [key, value] (what [`parse_sets`] returns, or `aqmlab.run`'s
/// `set=`) as assignments.
pub fn assignments(json: &str) -> Result<Vec<sim::front::assign::Assignment>, Error> {
    let pairs: Vec<(String, serde_json::Value)> =
        serde_json::from_str(json).map_err(|e| Error::Usage(format!("set: {e}")))?;
    // Each value becomes TOML on its own, so that one TOML cannot hold (an
    // integer above 2^63 - 1) is refused under its key.
    let sets = pairs
        .into_iter()
        .map(|(key, value)| {
            if beyond_toml(&value) {
                return Err(Error::Usage(format!(
                    "set {key}: an integer too large: scenario integers are at most {} \
                     (2^63 - 1)",
                    i64::MAX
                )));
            }
            serde_json::from_value::<toml::Value>(value)
                .map(|value| sim::front::assign::Assignment {
                    key: key.clone(),
                    value,
                })
                .map_err(|e| Error::Usage(format!("set {key}: {e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    for a in &sets {
        sim::front::assign::check_key(&a.key).map_err(Error::Usage)?;
    }
    sim::front::assign::check_unique(&sets).map_err(Error::Usage)?;
    Ok(sets)
}
