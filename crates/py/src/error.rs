//! The one place core errors become Python exceptions.
//!
//! Whatever the user gave wrong (the scenario, its seed or duration) becomes a
//! `ValueError` whose text is exactly what the `aqmlab` command prints after
//! `error: `, so a message reads the same from the shell and from Python.
//! Anything else (results that fail to serialize) is a bug: `RuntimeError`.

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::PyErr;
use sim::ScenarioError;

/// An error on its way to Python.
#[derive(Debug)]
pub enum Error {
    /// A scenario that does not parse, validate or build (`path:line: message`).
    Scenario(ScenarioError),
    /// A problem the CLI reports itself (an unknown scenario name, a bad
    /// `--duration`), already worded as it prints it.
    Usage(String),
    /// Results that do not serialize.
    Internal(String),
}

impl From<ScenarioError> for Error {
    fn from(e: ScenarioError) -> Self {
        Error::Scenario(e)
    }
}

impl From<aqm::UnitError> for Error {
    /// Only `duration` is parsed here, so the prefix is the CLI's `--duration: `.
    fn from(e: aqm::UnitError) -> Self {
        Error::Usage(format!("--duration: {e}"))
    }
}

impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Self {
        Error::Internal(format!("serializing the results: {e}"))
    }
}

impl From<Error> for PyErr {
    fn from(e: Error) -> PyErr {
        match e {
            Error::Scenario(e) => PyValueError::new_err(e.to_string()),
            Error::Usage(msg) => PyValueError::new_err(msg),
            Error::Internal(msg) => PyRuntimeError::new_err(msg),
        }
    }
}
