//! What a scenario will need in memory, estimated before anything is built, so a
//! run that cannot fit is an error that says how much it needs instead of an abort
//! halfway through building (Rust aborts the process when an allocation fails).
//!
//! The estimate counts the structures a run keeps per flow, per link direction and
//! per monitored link, the packets that can be in the network at once, and the
//! rows of the series `[monitor]` asks for, each at its in-memory size. It is
//! compared with the memory available (`MemAvailable` of /proc/meminfo), or with
//! `AQMLAB_MEMORY_LIMIT` (bytes, or with a unit: `"8GiB"`, `"512MB"`) when set.

use crate::flow::Flow;
use crate::header::Header;
use crate::link::Link;
use crate::observe::monitor_rows;
use crate::results::FlowResult;
use crate::scenario::{Scenario, ScenarioError, Topology};
use crate::tcp::TcpSender;
use aqm::Packet;
use std::mem::size_of;

/// Bytes a run of `s` is expected to need, with the part that dominates.
pub struct Estimate {
    pub bytes: u64,
    pub flows: u64,
    pub links: u64,
}

/// A packet in the network: its header, its place on a wire or in a queue.
const PER_PACKET: u64 = (size_of::<Header>() + 2 * size_of::<Packet>() + 8) as u64;

/// A link direction: the `Link`, 8 bytes of slack (as estimated from the start)
/// and 4 of cut-through state (`engine::forward`).
fn per_link() -> u64 {
    size_of::<Link>() as u64 + 8 + 4
}

/// A flow's counters frozen at the warm-up, packed (`observe::packed`): seven
/// counters below 2^21 in 3 bytes each, two non-zero reasons in 3 and the other
/// eight in 1, the float's 8 bytes (under 30 in bench/scale.py's 100,000-flow run).
pub(crate) const PACKED_FLOW_COUNTERS: u64 = 7 * 3 + 2 * 3 + 8 + 8;

/// Per flow beyond its `Flow` (its links are counted with the links): a TCP
/// sender (boxed) with its scoreboard and the receiver's out-of-order runs; its
/// counters frozen at the warm-up (packed) and its row of results with two strings; its
/// routes (its own two in a dumbbell) and where they start (freed once the flows
/// are built; end nodes are read off the routes). BENCHMARKS.md ("Cost per flow",
/// "Session 4") measures each. The rows and the running flows are not alive at
/// once (`Simulation::into_report`), so this is more than a run's peak.
fn per_flow(dumbbell: bool) -> u64 {
    let tcp = size_of::<TcpSender>() as u64 + 16 + 64;
    let results = PACKED_FLOW_COUNTERS + size_of::<FlowResult>() as u64 + 2 * 32;
    let routes = if dumbbell { 8 * 4 + 8 } else { 8 };
    size_of::<Flow>() as u64 + tcp + results + routes
}

pub fn estimate(s: &Scenario, total_flows: usize) -> Estimate {
    let f = &s.file;
    let flows = total_flows as u64;
    let (links, monitored) = match f.topology.get_ref() {
        Topology::Dumbbell { .. } => (2 + 4 * flows, 2),
        Topology::Graph { links, .. } => {
            let n = links.len() as u64;
            (2 * n, 2 * links.iter().filter(|l| l.monitor).count() as u64)
        }
    };
    let dumbbell = matches!(f.topology.get_ref(), Topology::Dumbbell { .. });
    let secs = f.duration.as_secs_f64();
    // Packets in the network at once: at most every TCP window full (data and
    // ACKs) and all an unresponsive source sends in the run; in practice what the
    // shared links hold (queues and pipes, twice over for both directions and
    // bursts) plus a few packets per flow on its own links.
    let mut packets = 0u64;
    for g in &f.flows {
        let g = g.get_ref();
        let count = g.count.unwrap_or(1) as u64;
        let per = match (g.kind.is_some_and(|k| k.is_tcp()), g.rate) {
            (true, _) => 2 * g.max_window.unwrap_or(131) as u64,
            (false, Some(rate)) => {
                let size = g.packet_size.unwrap_or(1000).max(1) as f64;
                let peak = g
                    .schedule
                    .iter()
                    .flatten()
                    .map(|st| st.rate.as_f64())
                    .fold(rate.as_f64(), f64::max);
                (peak * secs / (8.0 * size)).min(1e15) as u64
            }
            (false, None) => 0,
        };
        packets = packets.saturating_add(count.saturating_mul(per));
    }
    let flows_part = flows.saturating_mul(per_flow(dumbbell));
    let links_part = links.saturating_mul(per_link());
    let monitor_part = monitor_rows(s.monitor(), monitored, flows, secs);
    let bytes = flows_part
        .saturating_add(links_part)
        .saturating_add(
            packets
                .min(shared_capacity(s).saturating_add(4 * flows))
                .saturating_mul(PER_PACKET),
        )
        .saturating_add(monitor_part);
    Estimate {
        bytes,
        flows: flows_part,
        links: links_part,
    }
}

/// Packets the shared links can hold: twice each one's queue limit and pipe
/// (rate x delay in 1000-byte packets). A dumbbell's access links are each one
/// flow's own and are left out.
fn shared_capacity(s: &Scenario) -> u64 {
    let f = &s.file;
    let limit = |q: Option<&aqm::QdiscSpec>| q.map_or(1000, packet_limit);
    let pipe = |rate: aqm::Rate, delay: aqm::Dur| {
        (rate.as_f64() * delay.as_secs_f64() / 8000.0) as u64 + 1
    };
    let held = match f.topology.get_ref() {
        Topology::Dumbbell {
            reverse_qdisc,
            bottleneck,
            ..
        } => limit(f.qdisc.as_ref().map(|q| q.get_ref()))
            .saturating_add(limit(reverse_qdisc.as_ref()))
            .saturating_add(2 * pipe(bottleneck.rate, bottleneck.delay)),
        Topology::Graph { links: specs, .. } => specs
            .iter()
            .map(|l| {
                let fwd = l.qdisc.as_ref().or(f.qdisc.as_ref().map(|q| q.get_ref()));
                limit(fwd)
                    .saturating_add(limit(l.reverse_qdisc.as_ref()))
                    .saturating_add(2 * pipe(l.rate, l.delay))
            })
            .fold(0u64, u64::saturating_add),
    };
    held.saturating_mul(2)
}

/// A qdisc's `limit` in packets (every qdisc has one; 1000 is DropTail's default).
fn packet_limit(q: &aqm::QdiscSpec) -> u64 {
    toml::Value::try_from(q)
        .ok()
        .and_then(|v| v.get("limit").and_then(toml::Value::as_integer))
        .map_or(1000, |l| l.max(0) as u64)
}

/// The memory a run may use: `AQMLAB_MEMORY_LIMIT`, else what the system has
/// available; `None` when neither is known.
fn budget() -> Result<Option<u64>, String> {
    if let Ok(text) = std::env::var("AQMLAB_MEMORY_LIMIT") {
        return parse_bytes(&text)
            .map(Some)
            .ok_or_else(|| format!("AQMLAB_MEMORY_LIMIT = \"{text}\" is not a size (write it like \"8GiB\" or \"512MB\")"));
    }
    let Ok(info) = std::fs::read_to_string("/proc/meminfo") else {
        return Ok(None);
    };
    Ok(info
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.trim().strip_suffix("kB"))
        .and_then(|kb| kb.trim().parse::<u64>().ok())
        .map(|kb| kb * 1024))
}

/// `"8GiB"`, `"512MB"`, `"1000000"` as bytes.
fn parse_bytes(text: &str) -> Option<u64> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num.parse().ok()?;
    let scale = match unit.trim() {
        "" | "B" => 1.0,
        "kB" | "KB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "TB" => 1e12,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        "TiB" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    let bytes = value * scale;
    (bytes.is_finite() && bytes >= 0.0).then_some(bytes as u64)
}

fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
}

/// An error when a run of `s` would need more memory than there is.
pub fn check(s: &Scenario, total_flows: usize) -> Result<(), ScenarioError> {
    let budget = budget().map_err(|m| s.error(m))?;
    check_within(s, total_flows, budget)
}

/// An error when a run of `s` would need more than `budget` bytes.
pub fn check_within(
    s: &Scenario,
    total_flows: usize,
    budget: Option<u64>,
) -> Result<(), ScenarioError> {
    let e = estimate(s, total_flows);
    match budget {
        Some(avail) if e.bytes > avail => Err(s.error(format!(
            "this run needs about {} of memory ({} flows: {}, {} link directions: {}, packets \
             in flight, queues and [monitor] series: the rest), and {} are available \
             (AQMLAB_MEMORY_LIMIT sets the limit)",
            gib(e.bytes),
            total_flows,
            gib(e.flows),
            e.links / per_link(),
            gib(e.links),
            gib(avail),
        ))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(flows: u64, monitor: &str) -> Scenario {
        let text = format!(
            "name = \"m\"\nduration = \"100s\"\n[topology]\nkind = \"dumbbell\"\n\
             access = {{ rate = \"1Gbps\", delay = \"1ms\" }}\n\
             bottleneck = {{ rate = \"10Gbps\", delay = \"1ms\" }}\n[monitor]\n{monitor}\n\
             [[flows]]\nname = \"t\"\nkind = \"tcp\"\ncount = {flows}\n"
        );
        Scenario::from_toml(&text, "m.toml").unwrap()
    }

    #[test]
    fn a_run_that_cannot_fit_says_how_much_it_needs() {
        let s = scenario(3_000_000, "");
        let e = check_within(&s, 3_000_000, Some(4 << 30))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("m.toml: this run needs about "), "{e}");
        assert!(
            e.contains("3000000 flows") && e.contains("4.0 GiB are available"),
            "{e}"
        );
        let ok = check_within(&s, 3_000_000, Some(64 << 30));
        assert!(ok.is_ok(), "{}", ok.unwrap_err());
        // Estimates grow with what is asked for: a per-flow series of 1 ms.
        let small = estimate(&scenario(1000, ""), 1000).bytes;
        let series = estimate(&scenario(1000, "flow_series = \"1ms\""), 1000).bytes;
        assert!(series > 100 * small, "{small} {series}");
        // Per flow, no less than BENCHMARKS.md measures (under 1 KB at 100,000
        // flows, packets and rows included).
        let per = estimate(&scenario(100_000, ""), 100_000).bytes / 100_000;
        assert!((1000..8000).contains(&per), "{per} bytes per flow");
    }

    #[test]
    fn sizes_parse_with_their_units() {
        assert_eq!(parse_bytes("8GiB"), Some(8 << 30));
        assert_eq!(parse_bytes("512MB"), Some(512_000_000));
        assert_eq!(parse_bytes("1000"), Some(1000));
        assert_eq!(parse_bytes("lots"), None);
    }
}
