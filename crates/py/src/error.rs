//! The one place core errors become Python exceptions.
//!
//! Whatever the user gave wrong (the scenario, an override, a model's or the queue
//! lab's arguments) becomes a `ValueError` whose text is exactly what the `aqmlab`
//! command prints after `error: `, so a message reads the same from the binary, the
//! Python package's command, and Python. Anything else (a model's solver failing,
//! a table that does not serialize) is `RuntimeError`.

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::PyErr;

/// An error on its way to Python.
#[derive(Debug)]
pub enum Error {
    /// A problem with what the user gave, worded as the command prints it.
    Usage(String),
    /// Not the user's fault.
    Internal(String),
}

impl Error {
    pub fn usage(e: impl std::fmt::Display) -> Self {
        Error::Usage(e.to_string())
    }
}

impl From<sim::ScenarioError> for Error {
    fn from(e: sim::ScenarioError) -> Self {
        Error::usage(e)
    }
}

impl From<sim::SourceError> for Error {
    fn from(e: sim::SourceError) -> Self {
        Error::usage(e)
    }
}

impl From<sim::OverrideError> for Error {
    fn from(e: sim::OverrideError) -> Self {
        Error::usage(e)
    }
}

impl From<models::ModelError> for Error {
    /// As `aqmlab model` prints it: the flag named with its `--`.
    fn from(e: models::ModelError) -> Self {
        if e.is_usage() {
            Error::Usage(format!("--{e}"))
        } else {
            Error::Internal(e.to_string())
        }
    }
}

impl From<arrow_schema::ArrowError> for Error {
    fn from(e: arrow_schema::ArrowError) -> Self {
        Error::Internal(format!("writing a result table: {e}"))
    }
}

impl From<Error> for PyErr {
    fn from(e: Error) -> PyErr {
        match e {
            Error::Usage(msg) => PyValueError::new_err(msg),
            Error::Internal(msg) => PyRuntimeError::new_err(msg),
        }
    }
}
