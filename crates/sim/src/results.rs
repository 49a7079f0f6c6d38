//! What a run produces: per-flow, per-group, per-link and fairness results.
//!
//! Everything here is plain data with serde, so the same structure is the `--json`
//! summary, the Parquet tables and the Python DataFrames. Rates are bit/s over the
//! measured interval (after warm-up); counters count events inside that interval.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Drops (or marks) by reason, keyed by [`aqm::DropReason::name`]; every reason is
/// present, zero or not, so tables have stable columns.
pub type ReasonMap = BTreeMap<String, u64>;

pub fn reason_map(counts: &aqm::ReasonCounts) -> ReasonMap {
    aqm::DropReason::ALL
        .iter()
        .map(|r| (r.name().to_string(), counts[r.index()]))
        .collect()
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlowResult {
    pub id: u32,
    pub group: String,
    /// `tcp`, `web`, `cbr`, `poisson` or `onoff`.
    pub kind: String,
    /// In-order data delivered to the receiving application, bit/s.
    pub goodput_bps: f64,
    /// Data packets sent, retransmissions included.
    pub sent: u64,
    /// Data packets delivered to the receiving application (unique, in order for TCP).
    pub delivered: u64,
    /// Packets of this flow (either direction) dropped by any queue, by reason.
    pub drops: ReasonMap,
    pub drops_total: u64,
    /// Packets of this flow CE-marked by any queue.
    pub marks: u64,
    /// Mean of the RTT samples taken (Karn's rule), seconds; `None` for UDP.
    pub rtt_mean_s: Option<f64>,
    pub retransmits: u64,
    pub timeouts: u64,
    pub fast_recoveries: u64,
    /// Max-min fair share of this flow given every flow's demand and path, bit/s.
    pub fair_share_bps: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GroupResult {
    pub kind: String,
    pub count: u32,
    /// Sum of the group's goodputs, bit/s.
    pub goodput_bps: f64,
    pub goodput_mean_bps: f64,
    pub drops_total: u64,
    pub marks: u64,
    pub jain: f64,
    pub cov: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QueueSeries {
    pub t_s: Vec<f64>,
    pub packets: Vec<u32>,
    pub bytes: Vec<u64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinkResult {
    /// `from->to`, one direction of a link.
    pub name: String,
    pub from: String,
    pub to: String,
    pub rate_bps: u64,
    pub delay_s: f64,
    pub qdisc: String,
    /// Fraction of the measured interval the link spent transmitting.
    pub utilization: f64,
    pub throughput_bps: f64,
    pub tx_packets: u64,
    pub arrivals: u64,
    pub drops: ReasonMap,
    pub drops_total: u64,
    pub marks: ReasonMap,
    pub marks_total: u64,
    /// Time-averaged backlog over the measured interval, packets.
    pub mean_queue_packets: f64,
    pub max_queue_packets: u32,
    /// The backlog sampled every `[monitor] queue_interval`.
    pub queue: QueueSeries,
}

/// Throughput of one flow across one monitored link direction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinkFlowResult {
    pub link: String,
    pub flow: u32,
    pub throughput_bps: f64,
    pub packets: u64,
    /// The flow's mean number of packets in the link's queue over the measured
    /// interval (time-weighted; summed over flows it is the link's
    /// `mean_queue_packets`).
    pub mean_queue_packets: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Fairness {
    pub n: u32,
    pub jain: f64,
    pub cov: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FairnessSummary {
    /// Over every TCP (and web) flow.
    pub tcp: Fairness,
    /// Over every flow.
    pub all: Fairness,
    pub groups: BTreeMap<String, Fairness>,
}

/// Everything one run produced.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    pub scenario: String,
    pub seed: u64,
    pub duration_s: f64,
    pub warmup_s: f64,
    /// Events the engine processed.
    pub events: u64,
    /// Wall-clock seconds the run took (the one field that differs between replays).
    pub wall_seconds: f64,
    /// Simulated seconds.
    pub sim_seconds: f64,
    pub flows: Vec<FlowResult>,
    pub groups: BTreeMap<String, GroupResult>,
    pub links: Vec<LinkResult>,
    pub link_flows: Vec<LinkFlowResult>,
    pub fairness: FairnessSummary,
}

impl RunResult {
    /// The `--json` summary: everything but the per-link per-flow table.
    pub fn summary_json(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(self).expect("results serialize");
        if let Some(o) = v.as_object_mut() {
            o.remove("link_flows");
        }
        v
    }
}

/// Jain's fairness index (Σx)² / (n Σx²): 1 when all equal, 1/n when one takes all.
/// An empty set or all zeros gives 1 (nothing is unfair).
pub fn jain(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let sum: f64 = xs.iter().sum();
    let sq: f64 = xs.iter().map(|x| x * x).sum();
    if n == 0.0 || sq == 0.0 {
        1.0
    } else {
        sum * sum / (n * sq)
    }
}

/// Coefficient of variation: population standard deviation over the mean (0 when
/// the mean is 0).
pub fn cov(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    if mean == 0.0 {
        return 0.0;
    }
    let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
    var.sqrt() / mean
}

pub fn fairness(xs: &[f64]) -> Fairness {
    Fairness {
        n: xs.len() as u32,
        jain: jain(xs),
        cov: cov(xs),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_and_cov_on_known_sets() {
        assert_eq!(jain(&[1.0, 1.0, 1.0, 1.0]), 1.0);
        assert!((jain(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
        assert_eq!(cov(&[2.0, 2.0]), 0.0);
        assert!((cov(&[1.0, 3.0]) - 0.5).abs() < 1e-12);
        assert_eq!(jain(&[]), 1.0);
    }
}
