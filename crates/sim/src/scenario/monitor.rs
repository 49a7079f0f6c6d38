//! `[monitor]`: what a run records besides its totals. Every observer but the
//! queue-length samples is off unless asked for, and each is bounded: a period so
//! short that its rows would not fit in memory is an error naming the key.

use super::{KeyPath, Scenario, ScenarioError};
use crate::net::Network;
use aqm::Dur;
use serde::{Deserialize, Serialize};

/// Rows a periodic observer may produce per observed link or flow: ten million
/// samples of one queue is a sample every 10 us of a 100 s run.
pub const MAX_TICKS: u64 = 10_000_000;

/// What to record besides the totals.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Monitor {
    /// Period of the queue-length samples of monitored links (0: none).
    pub queue_interval: Dur,
    /// Period of the per-flow series across monitored links (off when absent).
    pub flow_series: Option<Dur>,
    /// Period of the TCP state samples of every TCP flow (off when absent).
    pub tcp_trace: Option<Dur>,
    /// Queueing-delay histograms at monitored queues, overall and per flow group.
    pub delays: bool,
    /// The transfer time of every web object.
    pub objects: bool,
    /// A log of every drop and mark, at any queue.
    pub events: bool,
    /// The most entries the event log keeps.
    pub max_events: u64,
    /// The monitored link directions (`"a->b"`, `"bottleneck"`) that get the series
    /// and delay observers; all monitored links when absent.
    pub links: Option<Vec<String>>,
}

/// The `[monitor]` a scenario gets when it has none.
pub const DEFAULT_MONITOR: Monitor = Monitor {
    queue_interval: Dur::from_millis(100),
    flow_series: None,
    tcp_trace: None,
    delays: false,
    objects: false,
    events: false,
    max_events: 10_000_000,
    links: None,
};

impl Default for Monitor {
    fn default() -> Self {
        DEFAULT_MONITOR
    }
}

impl Scenario {
    /// The scenario's `[monitor]` table, or the defaults.
    pub fn monitor(&self) -> &Monitor {
        self.file
            .monitor
            .as_ref()
            .map_or(&DEFAULT_MONITOR, |m| m.get_ref())
    }

    /// An error about `monitor.KEY` (element `index` of it, for a list).
    pub(super) fn monitor_error(
        &self,
        key: &str,
        index: Option<usize>,
        message: String,
    ) -> ScenarioError {
        let mut path = KeyPath::top("monitor").key(key);
        if let Some(i) = index {
            path = path.index(i);
        }
        self.error_at(&path, format!("monitor.{message}"))
    }

    /// Checks the periods against the run's duration.
    pub(super) fn validate_monitor(&self) -> Result<(), ScenarioError> {
        let m = self.monitor();
        let duration = self.file.duration;
        let periods = [
            (
                "queue_interval",
                Some(m.queue_interval).filter(|d| !d.is_zero()),
            ),
            ("flow_series", m.flow_series),
            ("tcp_trace", m.tcp_trace),
        ];
        for (key, period) in periods {
            let Some(p) = period else { continue };
            if p.is_zero() {
                return Err(self.monitor_error(key, None, format!("{key} = 0s must be positive")));
            }
            let ticks = duration.as_nanos() / p.as_nanos();
            if ticks > MAX_TICKS {
                return Err(self.monitor_error(
                    key,
                    None,
                    format!(
                        "{key} = {p} gives {ticks} samples over duration = {duration}; at most \
                         {MAX_TICKS} fit (use a period of at least {})",
                        Dur::from_nanos(duration.as_nanos().div_ceil(MAX_TICKS))
                    ),
                ));
            }
        }
        if m.events && m.max_events == 0 {
            return Err(self.monitor_error(
                "max_events",
                None,
                "max_events = 0 must be at least 1".into(),
            ));
        }
        Ok(())
    }
}

impl Monitor {
    /// The link directions `links` names, checked against the monitored ones of
    /// `net`; `None` when it names none (every monitored link).
    pub(crate) fn selected_links(
        &self,
        s: &Scenario,
        net: &Network,
    ) -> Result<Option<Vec<u32>>, ScenarioError> {
        let Some(names) = &self.links else {
            return Ok(None);
        };
        let name_of = |l: u32| {
            let link = &net.links[l as usize];
            format!("{}->{}", net.nodes.name(link.from), net.nodes.name(link.to))
        };
        let monitored: Vec<(u32, String)> =
            net.monitored.iter().map(|&l| (l, name_of(l))).collect();
        names
            .iter()
            .enumerate()
            .map(|(j, name)| {
                let wanted = if name == "bottleneck" {
                    "left->right"
                } else {
                    name
                };
                monitored
                    .iter()
                    .find(|(_, n)| n == wanted)
                    .map(|(l, _)| *l)
                    .ok_or_else(|| {
                        let known: Vec<&str> = monitored.iter().map(|(_, n)| n.as_str()).collect();
                        s.monitor_error(
                            "links",
                            Some(j),
                            format!(
                                "links names \"{name}\", which is not a monitored link direction \
                                 (monitored: {})",
                                known.join(", ")
                            ),
                        )
                    })
            })
            .collect::<Result<Vec<u32>, _>>()
            .map(Some)
    }
}
