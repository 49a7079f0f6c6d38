//! Errors in a model's arguments. Each names the argument as the command line
//! spells it (without the leading `--`), the value and the rule, so
//! `aqmlab model` can print `--bins = 0 must be at least 1`.

use std::fmt;

/// A model was asked something it cannot answer.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelError {
    /// An integer argument below its minimum: `bins = 0 must be at least 1`.
    TooSmall {
        arg: &'static str,
        value: u64,
        min: u64,
    },
    /// A real argument that must be a positive finite number (`mu`).
    NotPositive { arg: &'static str, value: f64 },
    /// No arrival rates at all.
    NoFlows,
    /// The rate of flow `flow` (1-based, as the papers number flows) is not a
    /// positive finite number.
    BadRate { flow: usize, value: f64 },
    /// Back CHOKe needs M < N: with M = N no arrival could ever be admitted.
    MemoryTooLarge { memory: usize, flows: usize },
    /// The chain has more states (N!/(N - M)!) or transitions (states x (N - M))
    /// than we are willing to solve.
    TooLarge {
        memory: usize,
        flows: usize,
        /// `None` when the count does not even fit in a u64.
        states: Option<u64>,
        max_states: u64,
        max_transitions: u64,
    },
    /// Front CHOKe is unstable: sum of lambda_i / (mu + 2 lambda_i) >= 1 (eq. 2).
    Unstable { load: f64 },
    /// The solver failed (a singular system, or power iteration that did not
    /// converge). Not the user's fault: a bug or a pathological input.
    Solver(String),
}

impl ModelError {
    /// The argument at fault, as the command line spells it without `--`.
    pub fn arg(&self) -> &'static str {
        match self {
            ModelError::TooSmall { arg, .. } | ModelError::NotPositive { arg, .. } => arg,
            ModelError::NoFlows | ModelError::BadRate { .. } | ModelError::Unstable { .. } => {
                "rates"
            }
            ModelError::MemoryTooLarge { .. } | ModelError::TooLarge { .. } => "memory",
            ModelError::Solver(_) => "solver",
        }
    }

    /// Whether the error is in what the caller asked (as opposed to a solver
    /// failure).
    pub fn is_usage(&self) -> bool {
        !matches!(self, ModelError::Solver(_))
    }
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelError::TooSmall { arg, value, min } => {
                write!(f, "{arg} = {value} must be at least {min}")
            }
            ModelError::NotPositive { arg, value } => {
                write!(f, "{arg} = {value} must be a positive number")
            }
            ModelError::NoFlows => write!(f, "rates must list at least one flow's rate"),
            ModelError::BadRate { flow, value } => write!(
                f,
                "rates: flow {flow}'s rate {value} must be a positive number"
            ),
            ModelError::MemoryTooLarge { memory, flows } => write!(
                f,
                "memory = {memory} must be below the number of flows ({flows})"
            ),
            ModelError::TooLarge {
                memory,
                flows,
                states,
                max_states,
                max_transitions,
            } => {
                let n = states.map_or_else(|| "more than 2^64".to_string(), |s| s.to_string());
                write!(
                    f,
                    "memory = {memory} with {flows} flows gives a chain of {n} states; \
                     the solver accepts at most {max_states} states and {max_transitions} transitions"
                )
            }
            ModelError::Unstable { load } => write!(
                f,
                "rates: the queue is unstable: sum of lambda_i / (mu + 2 lambda_i) = {load:.4} must be below 1 (eq. 2)"
            ),
            ModelError::Solver(msg) => write!(f, "solver: {msg}"),
        }
    }
}

impl std::error::Error for ModelError {}

/// Checks that `rates` is non-empty and every rate positive and finite.
pub(crate) fn check_rates(rates: &[f64]) -> Result<(), ModelError> {
    if rates.is_empty() {
        return Err(ModelError::NoFlows);
    }
    for (i, &r) in rates.iter().enumerate() {
        if !(r > 0.0 && r.is_finite()) {
            return Err(ModelError::BadRate {
                flow: i + 1,
                value: r,
            });
        }
    }
    Ok(())
}

/// Checks that `value` of `arg` is positive and finite.
pub(crate) fn check_positive(arg: &'static str, value: f64) -> Result<(), ModelError> {
    if value > 0.0 && value.is_finite() {
        Ok(())
    } else {
        Err(ModelError::NotPositive { arg, value })
    }
}
