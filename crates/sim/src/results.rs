//! What a run produces: per-flow, per-group, per-link and fairness results.
//!
//! Everything here is plain data with serde, so the same structure is the `--json`
//! summary, the Parquet tables and the Python DataFrames. Rates are bit/s over the
//! measured interval (after warm-up); counters count events inside that interval.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Drops (or marks) by reason, serialized as a map keyed by
/// [`aqm::DropReason::name`]; every reason is present, zero or not, so tables have
/// stable columns. Stored as the counts array itself (80 bytes) rather than a map
/// of strings: a million-flow run has one per flow.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct ReasonMap(pub aqm::ReasonCounts);

impl std::ops::Index<&str> for ReasonMap {
    type Output = u64;
    /// The count of the reason named `name`; panics on a name that is no reason.
    fn index(&self, name: &str) -> &u64 {
        let r = aqm::DropReason::ALL
            .iter()
            .find(|r| r.name() == name)
            .unwrap_or_else(|| panic!("no drop reason is named {name:?}"));
        &self.0[r.index()]
    }
}

impl Serialize for ReasonMap {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(aqm::DropReason::COUNT))?;
        for r in aqm::DropReason::ALL {
            m.serialize_entry(r.name(), &self.0[r.index()])?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for ReasonMap {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let map = BTreeMap::<String, u64>::deserialize(d)?;
        let mut out = ReasonMap::default();
        for (name, n) in map {
            let r = aqm::DropReason::ALL
                .iter()
                .find(|r| r.name() == name)
                .ok_or_else(|| serde::de::Error::custom(format!("unknown drop reason {name:?}")))?;
            out.0[r.index()] = n;
        }
        Ok(out)
    }
}

pub fn reason_map(counts: &aqm::ReasonCounts) -> ReasonMap {
    ReasonMap(*counts)
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlowResult {
    pub id: u32,
    pub group: String,
    /// `tcp`, `web`, `cbr`, `poisson`, `onoff` or `probe`.
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
    /// The propagation delay of the data's route plus the ACKs' route, seconds:
    /// the RTT with empty queues and no transmission time (in a dumbbell, 2 x
    /// (sender access + bottleneck + receiver access delay)).
    #[serde(default)]
    pub base_rtt_s: f64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub fast_recoveries: u64,
    /// Max-min fair share of this flow given every flow's demand and path, bit/s
    /// (0 for a probe: probes are left out of the shares).
    pub fair_share_bps: f64,
    /// A probe flow's probes and RTTs; `None` for the other kinds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<ProbeStats>,
}

/// What a probe flow (or group, pooled) measured: of the probes sent in the
/// measured interval, how many were echoed and lost (the probe or its echo
/// dropped; the rest were in flight at the end), and the RTT of the echoed ones,
/// send to echo arrival, seconds: mean and nearest-rank quantiles (`None` when
/// none was echoed).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProbeStats {
    pub sent: u64,
    pub echoed: u64,
    pub lost: u64,
    pub rtt_mean_s: Option<f64>,
    pub rtt_p50_s: Option<f64>,
    pub rtt_p95_s: Option<f64>,
    pub rtt_p99_s: Option<f64>,
    pub rtt_max_s: Option<f64>,
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
    /// The mean over the group's flows that took RTT samples of each one's
    /// `rtt_mean_s`, seconds; `None` when none did (UDP).
    #[serde(default)]
    pub rtt_mean_s: Option<f64>,
    /// A probe group's probes and RTTs, its flows' pooled; `None` for the other kinds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<ProbeStats>,
}

/// One host's flows, as sender or as receiver (rows only when some group names
/// a host in that role; a flow that names none is the host `group#i`). Probes
/// are left out, as from `fairness.all`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostResult {
    pub host: String,
    /// `sender` or `receiver`.
    pub role: String,
    pub flows: u32,
    /// Sum of its flows' goodputs, bit/s.
    pub goodput_bps: f64,
    /// Its goodput over every host's of the same role.
    pub share: f64,
    pub drops_total: u64,
    pub marks: u64,
    /// Jain's index among its own flows.
    pub jain: f64,
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

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Fairness {
    pub n: u32,
    pub jain: f64,
    pub cov: f64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FairnessSummary {
    /// Over every TCP (and web) flow.
    pub tcp: Fairness,
    /// Over every flow but probes (a probe's goodput is a few kbit/s by design).
    pub all: Fairness,
    pub groups: BTreeMap<String, Fairness>,
    /// Over the hosts' goodputs as senders, when some group names a `host`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts: Option<Fairness>,
    /// Over the hosts' goodputs as receivers, when some group names a
    /// `receiver_host`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receiver_hosts: Option<Fairness>,
}

/// One flow's traffic across one monitored link in one interval
/// (`[monitor] flow_series`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlowSeriesResult {
    pub link: String,
    /// The interval's start and length, seconds.
    pub t_s: f64,
    pub dt_s: f64,
    pub flow: u32,
    /// Packets the link finished sending for the flow, the bytes that left in the
    /// interval (a packet in transmission at an interval's edge is split between
    /// the two), and the rate they make.
    pub packets: u32,
    pub bytes: f64,
    pub throughput_bps: f64,
    /// The flow's packets the link's queue dropped and marked.
    pub drops: u32,
    pub marks: u32,
}

/// A TCP sender's state at one instant (`[monitor] tcp_trace`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TcpTraceResult {
    pub t_s: f64,
    pub flow: u32,
    /// Congestion window and slow-start threshold, packets (ssthresh is infinite
    /// until the first reduction).
    pub cwnd: f64,
    pub ssthresh: f64,
    /// Smoothed RTT (0 before the first sample) and retransmission timeout, seconds.
    pub srtt_s: f64,
    pub rto_s: f64,
    /// Packets sent and not yet cumulatively acknowledged.
    pub in_flight: u32,
    /// The rate the sender paces at, packets per second; none when it does not
    /// pace. Emulated: the kernel's `tcpi_pacing_rate` over its MSS, which it
    /// computes for every flow but paces only BBR at (others under `fq`).
    pub pacing_rate_pps: Option<f64>,
    /// BBR's bandwidth estimate, packets per second, and its minimum RTT,
    /// seconds (Linux's `bbr_bw` and `min_rtt_us`, `TCP_CC_INFO` when
    /// emulated); none for other variants.
    pub bbr_bw_pps: Option<f64>,
    pub bbr_min_rtt_s: Option<f64>,
}

impl From<&crate::tcp::TcpSample> for TcpTraceResult {
    fn from(s: &crate::tcp::TcpSample) -> Self {
        TcpTraceResult {
            t_s: s.at.as_secs_f64(),
            flow: s.flow,
            cwnd: s.cwnd,
            ssthresh: s.ssthresh,
            srtt_s: s.srtt_s,
            rto_s: s.rto_s,
            in_flight: s.in_flight,
            pacing_rate_pps: s.pacing_rate_pps,
            bbr_bw_pps: s.bbr_bw_pps,
            bbr_min_rtt_s: s.bbr_min_rtt_s,
        }
    }
}

/// The queueing delay at a monitored queue over the measured interval, for every
/// packet it sent (`group` = None: the whole link, `scope` "link" in the tables) or
/// for one flow group's (`[monitor] delays`). Quantiles are read from the
/// histogram (`observe::delays::Histogram::quantile_ns`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DelayResult {
    pub link: String,
    /// "link" (every packet of the queue; `group` None) or "group".
    #[serde(default)]
    pub scope: String,
    pub group: Option<String>,
    pub count: u64,
    pub mean_s: f64,
    pub p50_s: f64,
    pub p90_s: f64,
    #[serde(default)]
    pub p95_s: f64,
    pub p99_s: f64,
    pub max_s: f64,
}

/// One bucket of a queueing-delay histogram: `count` packets waited between
/// `lo_s` and `hi_s`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DelayBucket {
    pub link: String,
    pub group: Option<String>,
    pub lo_s: f64,
    pub hi_s: f64,
    pub count: u64,
}

/// A web object, from the moment it could start to the ACK of its last packet
/// (`[monitor] objects`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ObjectResult {
    pub flow: u32,
    pub group: String,
    pub start_s: f64,
    pub end_s: f64,
    pub transfer_s: f64,
    pub packets: u32,
}

/// A drop or an ECN mark at a queue (`[monitor] events`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QueueEventResult {
    pub t_s: f64,
    pub link: String,
    pub flow: u32,
    pub reason: String,
    /// A CE mark rather than a drop.
    pub mark: bool,
}

/// A qdisc's note on how it ran ([`aqm::Qdisc::diagnostic`]): a configuration
/// that did not do what its parameters suggest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DiagnosticResult {
    pub link: String,
    pub qdisc: String,
    pub note: String,
}

/// How an emulated run (`aqmlab emulate`: real packets through the same qdiscs)
/// kept time; absent for a simulation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Emulation {
    /// Lateness of the writes (each write's start, when the kernel takes the
    /// packet) against their logical departure over the measured interval,
    /// seconds.
    pub lateness_p50_s: f64,
    pub lateness_p99_s: f64,
    pub lateness_max_s: f64,
    /// One packet time at the bottleneck (its largest packet size / its rate):
    /// the lateness the emulation warns above.
    pub packet_time_s: f64,
    /// The share of writes later than one packet time (to the histogram's
    /// 1 us resolution below 1 ms, 100 us above).
    #[serde(default)]
    pub late_share: f64,
    /// Whether the run kept time: p99 lateness within one packet time, and every
    /// event due before the end handled. A run that did not is not a measurement
    /// of the scenario; a warning says so, and `--strict` refuses it.
    #[serde(default = "kept")]
    pub kept_time: bool,
    /// Packets the kernel dropped before the emulator read them (TUN queues full).
    pub tun_drops: u64,
    /// Packets read that belonged to no flow of the scenario (dropped).
    pub unclassified: u64,
    /// What the emulation warns of (time not kept, packets lost); empty when all is well.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

fn kept() -> bool {
    true
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Everything one run produced.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
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
    /// Per host, when the scenario names hosts (see [`HostResult`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<HostResult>,
    pub links: Vec<LinkResult>,
    pub link_flows: Vec<LinkFlowResult>,
    pub fairness: FairnessSummary,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flow_series: Vec<FlowSeriesResult>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tcp_trace: Vec<TcpTraceResult>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub delays: Vec<DelayResult>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub delay_histogram: Vec<DelayBucket>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub objects: Vec<ObjectResult>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub queue_events: Vec<QueueEventResult>,
    /// Drops and marks that happened after the event log was full.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub queue_events_missed: u64,
    /// What the qdiscs say about how they ran (BREATHe whose heavy-hitter set
    /// never evicted a flow), every link's, monitored or not. Empty when all is well.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<DiagnosticResult>,
    /// Set when the run was emulated on real packets, not simulated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emulation: Option<Emulation>,
}

/// The `--json` summary: a [`RunResult`] but its long tables (per link and flow,
/// series, traces, logs), borrowed,
/// so writing it streams the rows instead of building a JSON tree of them first
/// (which took about 3 KB per flow).
#[derive(Serialize)]
pub struct Summary<'a> {
    pub scenario: &'a str,
    pub seed: u64,
    pub duration_s: f64,
    pub warmup_s: f64,
    pub events: u64,
    pub wall_seconds: f64,
    pub sim_seconds: f64,
    pub flows: &'a [FlowResult],
    pub groups: &'a BTreeMap<String, GroupResult>,
    #[serde(skip_serializing_if = "<[HostResult]>::is_empty")]
    pub hosts: &'a [HostResult],
    pub links: &'a [LinkResult],
    pub fairness: &'a FairnessSummary,
    #[serde(skip_serializing_if = "<[DelayResult]>::is_empty")]
    pub delays: &'a [DelayResult],
    /// Drops and marks the event log had no room for (0 when it is off).
    pub queue_events_missed: u64,
    /// The qdiscs' diagnostics; absent when there are none.
    #[serde(skip_serializing_if = "<[DiagnosticResult]>::is_empty")]
    pub diagnostics: &'a [DiagnosticResult],
    /// How an emulated run kept time; absent for a simulation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub emulation: Option<&'a Emulation>,
}

impl RunResult {
    /// The `--json` summary: everything but the long tables.
    pub fn summary(&self) -> Summary<'_> {
        Summary {
            scenario: &self.scenario,
            seed: self.seed,
            duration_s: self.duration_s,
            warmup_s: self.warmup_s,
            events: self.events,
            wall_seconds: self.wall_seconds,
            sim_seconds: self.sim_seconds,
            flows: &self.flows,
            groups: &self.groups,
            hosts: &self.hosts,
            links: &self.links,
            fairness: &self.fairness,
            delays: &self.delays,
            queue_events_missed: self.queue_events_missed,
            diagnostics: &self.diagnostics,
            emulation: self.emulation.as_ref(),
        }
    }

    /// [`RunResult::summary`] as a JSON value.
    pub fn summary_json(&self) -> serde_json::Value {
        serde_json::to_value(self.summary()).expect("results serialize")
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

#[cfg(test)]
mod reason_map_tests {
    use super::*;

    #[test]
    fn serializes_as_a_map_of_every_reason_and_back() {
        let mut counts = aqm::ReasonCounts::default();
        counts[aqm::DropReason::ChokeMatch.index()] = 7;
        let m = reason_map(&counts);
        assert_eq!(m["choke_match"], 7);
        let json = serde_json::to_value(m).unwrap();
        let obj = json.as_object().unwrap();
        assert_eq!(obj.len(), aqm::DropReason::COUNT);
        assert_eq!(obj["choke_match"], 7);
        assert_eq!(obj["overflow"], 0);
        assert_eq!(serde_json::from_value::<ReasonMap>(json).unwrap(), m);
        let e = serde_json::from_str::<ReasonMap>(r#"{"nope": 1}"#).unwrap_err();
        assert!(
            e.to_string().contains("unknown drop reason \"nope\""),
            "{e}"
        );
    }
}
