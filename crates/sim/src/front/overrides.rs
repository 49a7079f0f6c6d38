//! The run-time overrides of a scenario, `--seed`, `--duration` and `--warmup`
//! (`seed=`, `duration=`, `warmup=` in Python), applied in one place so the command
//! and the Python package accept the same values and word the same errors.
//!
//! A run measures from the end of the warm-up to the end of the run, so the
//! duration must exceed the warm-up. When an override breaks that, the message says
//! which of the two came from the scenario and which flag to change.

use crate::scenario::{Scenario, ScenarioError};
use aqm::{parse_dur, Dur, UnitError};
use std::fmt;

/// Values given on the command line (or as keyword arguments), as the user wrote
/// them; `None` keeps the scenario's.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Overrides<'a> {
    pub seed: Option<u64>,
    pub duration: Option<&'a str>,
    pub warmup: Option<&'a str>,
}

/// Why an override was refused; `Display` is the one line the command prints.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OverrideError {
    /// `--duration` or `--warmup` does not parse (`flag` names which).
    Unit {
        flag: &'static str,
        error: Box<UnitError>,
    },
    /// The duration would not exceed the warm-up.
    Times(String),
    /// The scenario with the new values fails its own checks.
    Scenario(ScenarioError),
}

impl fmt::Display for OverrideError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OverrideError::Unit { flag, error } => write!(f, "--{flag}: {error}"),
            OverrideError::Times(m) => f.write_str(m),
            OverrideError::Scenario(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for OverrideError {}

fn parse(flag: &'static str, text: Option<&str>) -> Result<Option<Dur>, OverrideError> {
    text.map(|t| {
        parse_dur(t).map_err(|e| OverrideError::Unit {
            flag,
            error: Box::new(e),
        })
    })
    .transpose()
}

impl Overrides<'_> {
    /// Applies the overrides to `s`.
    pub fn apply(&self, s: &mut Scenario) -> Result<(), OverrideError> {
        let duration = parse("duration", self.duration)?;
        let warmup = parse("warmup", self.warmup)?;
        if let Some(seed) = self.seed {
            s.set_seed(seed);
        }
        if duration.is_none() && warmup.is_none() {
            return Ok(());
        }
        let d = duration.unwrap_or(s.file.duration);
        let w = warmup.unwrap_or(s.file.warmup);
        if d.is_zero() {
            return Err(OverrideError::Times("--duration must be positive".into()));
        }
        if w >= d {
            return Err(OverrideError::Times(match (duration, warmup) {
                (Some(_), Some(_)) => {
                    format!("--warmup {w} must be shorter than --duration {d}")
                }
                (Some(_), None) => format!(
                    "--duration {d} is not longer than the scenario's warm-up ({w}), after \
                     which a run is measured: give a shorter --warmup too, e.g. --warmup {}",
                    Dur::from_nanos(d.as_nanos() / 5)
                ),
                _ => format!(
                    "--warmup {w} must be shorter than the scenario's duration ({d}): give \
                     a shorter --warmup or a longer --duration"
                ),
            }));
        }
        s.set_times(d, w).map_err(OverrideError::Scenario)
    }
}

/// Captures the link direction named `link` (`a->b`, or `bottleneck`) as pcap into
/// `dir/<a-b>.pcap` (`--pcap LINK`); returns the file's path. An unknown name is
/// `Err` with the one line the command prints, a file that cannot be created is
/// `Ok(Err(..))`.
pub fn capture(
    sim: &mut crate::Simulation,
    link: &str,
    dir: &std::path::Path,
) -> Result<std::io::Result<std::path::PathBuf>, String> {
    let l = sim.find_link(link).ok_or_else(|| {
        format!(
            "--pcap: no link direction named \"{link}\" (names look like \"left->right\"; \
             \"bottleneck\" is the dumbbell's forward direction)"
        )
    })?;
    let file = dir.join(format!("{}.pcap", link.replace("->", "-")));
    Ok(std::fs::create_dir_all(dir)
        .and_then(|()| sim.capture(l, &file))
        .map(|()| file))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario() -> Scenario {
        // choke-fig3: 100 s with a 20 s warm-up.
        crate::front::source::load(Some("choke-fig3")).unwrap()
    }

    fn refused(o: Overrides<'_>) -> String {
        o.apply(&mut scenario()).unwrap_err().to_string()
    }

    #[test]
    fn overrides_replace_the_scenarios_values() {
        let mut s = scenario();
        Overrides {
            seed: Some(9),
            duration: Some("10s"),
            warmup: Some("2s"),
        }
        .apply(&mut s)
        .unwrap();
        assert_eq!(s.file.seed, 9);
        assert_eq!(s.file.duration, Dur::from_secs(10));
        assert_eq!(s.file.warmup, Dur::from_secs(2));
        let mut s = scenario();
        Overrides {
            warmup: Some("0s"),
            ..Default::default()
        }
        .apply(&mut s)
        .unwrap();
        assert_eq!(s.file.warmup, Dur::ZERO);
        assert_eq!(s.file.duration, Dur::from_secs(100));
    }

    #[test]
    fn a_duration_within_the_warmup_names_warmup() {
        let d = |duration| Overrides {
            duration: Some(duration),
            ..Default::default()
        };
        assert_eq!(
            refused(d("10s")),
            "--duration 10s is not longer than the scenario's warm-up (20s), after which a \
             run is measured: give a shorter --warmup too, e.g. --warmup 2s"
        );
        assert!(refused(d("20s")).contains("--warmup 4s"));
        assert_eq!(
            refused(Overrides {
                duration: Some("10s"),
                warmup: Some("10s"),
                ..Default::default()
            }),
            "--warmup 10s must be shorter than --duration 10s"
        );
        assert!(refused(Overrides {
            warmup: Some("100s"),
            ..Default::default()
        })
        .starts_with("--warmup 100s must be shorter than the scenario's duration (100s)"));
    }

    #[test]
    fn bad_values_name_the_flag() {
        assert_eq!(
            refused(Overrides {
                warmup: Some("soon"),
                ..Default::default()
            }),
            "--warmup: duration 'soon' has no number (write it like \"20ms\" or \"1.5s\")"
        );
        assert!(refused(Overrides {
            duration: Some("0s"),
            ..Default::default()
        })
        .contains("positive"));
        // Large durations are plain seconds, not "1e6s".
        let mut s = scenario();
        Overrides {
            duration: Some("1000000s"),
            ..Default::default()
        }
        .apply(&mut s)
        .unwrap();
        assert_eq!(s.file.duration, Dur::from_secs(1_000_000));
    }
}
