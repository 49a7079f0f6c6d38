//! What a scenario will need in memory, estimated before anything is built, so a
//! run that cannot fit is an error that says how much it needs instead of an abort
//! halfway through building (Rust aborts the process when an allocation fails).
//!
//! The estimate counts the structures a run keeps per flow, per link direction and
//! per monitored link, the tables each qdisc keeps sized by one of its keys
//! (`aqm::table_bytes`: FQ-CoDel's flow queues, SFB's bins, ...), the packets
//! that can be in the network at once, and the rows of the series `[monitor]` asks for, what each TCP sender keeps per packet
//! of its window, each at its in-memory size. A monitored link keeps a row per
//! flow its routes carry (`observe::flow_slots`): until the routes are known
//! ([`check`], before the network is built) a graph's are left out, and once they
//! are ([`check_tables`], before the observers are made) they are counted. The estimate plus a quarter
//! (`MARGIN`: growth by doubling, and what it leaves out) is compared with the
//! smallest of the limits on this process: the memory available (`MemAvailable`
//! of /proc/meminfo), the address space left under `ulimit -v` (`RLIMIT_AS`), and
//! what its cgroup may still use (`memory.max` less `memory.current`: a SLURM
//! `--mem`, a container's limit); or with `AQMLAB_MEMORY_LIMIT` (bytes, or with
//! a unit: `"8GiB"`, `"512MB"`) when set.

use crate::flow::Flow;
use crate::header::Header;
use crate::link::Link;
use crate::observe::packed::PACKED_FLOW_COUNTERS;
use crate::observe::{monitor_rows, Tables};
use crate::results::FlowResult;
use crate::scenario::{KeyPath, Scenario, ScenarioError, Topology};
use crate::tcp::TcpSender;
use aqm::table_bytes::KeyedTable;
use aqm::Packet;
use std::mem::size_of;

/// Bytes a run of `s` is expected to need, with the part that dominates.
pub struct Estimate {
    pub bytes: u64,
    pub flows: u64,
    pub links: u64,
    /// The qdiscs' tables sized by a key, and the largest of them with where the
    /// scenario gives its qdisc.
    pub qdisc_tables: u64,
    pub largest_table: Option<(KeyPath, KeyedTable)>,
}

/// A packet in the network: its header, its place on a wire or in a queue.
const PER_PACKET: u64 = (size_of::<Header>() + 2 * size_of::<Packet>() + 8) as u64;

/// A packet of a TCP sender's window: its scoreboard byte and send time, each in
/// a ring that grows by doubling, and its segment in the burst that sends it.
const PER_WINDOW_PACKET: u64 = 2 * (1 + 8) + 16;

/// What the estimate is multiplied by before it is compared with the memory
/// there is, in quarters: growth by doubling and allocator slack it leaves out.
const MARGIN_QUARTERS: u64 = 5;

/// A link direction: the `Link`, 8 bytes of slack (as estimated from the start)
/// and 4 of cut-through state (`engine::forward`).
fn per_link() -> u64 {
    size_of::<Link>() as u64 + 8 + 4
}

/// Per flow beyond its `Flow` (its links are counted with the links): a TCP
/// sender (boxed) with its scoreboard and the receiver's out-of-order runs; its
/// counters frozen at the warm-up (packed) and its row of results with two strings; its
/// routes (its own two in a dumbbell) and where they start (freed once the flows
/// are built; end nodes are read off the routes). BENCHMARKS.md ("Memory per flow")
/// measures each. The rows and the running flows are not alive at
/// once (`Simulation::into_report`), so this is more than a run's peak.
fn per_flow(dumbbell: bool) -> u64 {
    let tcp = size_of::<TcpSender>() as u64 + 16 + 64;
    let results = PACKED_FLOW_COUNTERS + size_of::<FlowResult>() as u64 + 2 * 32;
    let routes = if dumbbell { 8 * 4 + 8 } else { 8 };
    size_of::<Flow>() as u64 + tcp + results + routes
}

/// The estimate before the routes are known: a dumbbell's two monitored
/// directions (the bottleneck's) carry every flow; a graph's are left out.
pub fn estimate(s: &Scenario, total_flows: usize) -> Estimate {
    let flows = total_flows as u64;
    let tables = match s.file.topology.get_ref() {
        Topology::Dumbbell { .. } => {
            let selected = match &s.monitor().links {
                Some(l) => l.len().min(2) as u64,
                None => 2,
            };
            Tables {
                rows: 2 * flows,
                series_rows: selected * flows,
                slot_bytes: 0,
            }
        }
        Topology::Graph { .. } => Tables::default(),
    };
    estimate_with(s, total_flows, tables)
}

/// The estimate with the monitored links' per-flow tables `tables`.
pub fn estimate_with(s: &Scenario, total_flows: usize, tables: Tables) -> Estimate {
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
    let mut windows = 0u64;
    let mut rtt_samples = 0u64;
    let capacity = shared_capacity(s);
    for g in &f.flows {
        let g = g.get_ref();
        let count = g.count as u64;
        let tcp = g.kind().is_tcp().then(|| g.tcp_config());
        if let Some(t) = &tcp {
            // A sender's window in flight: its first window whole, and what it
            // can grow to with ACKs, which the shared links' capacity bounds.
            let max = t.max_window as u64;
            let initial = (t.initial_window as u64).min(max);
            let w = initial.max(max.min(capacity.saturating_add(2 * initial)));
            windows = windows.saturating_add(count.saturating_mul(w));
        }
        let per = match (&tcp, g.rate()) {
            (Some(t), _) => 2 * t.max_window as u64,
            (None, Some(rate)) => {
                let size = g.packet_size().max(1) as f64;
                let peak = g
                    .schedule()
                    .into_iter()
                    .flatten()
                    .map(|st| st.rate.as_f64())
                    .fold(rate.as_f64(), f64::max);
                (peak * secs / (8.0 * size)).min(1e15) as u64
            }
            // A probe and its echo at a time; each echo's RTT kept (8 bytes).
            (None, None) => match g.probe_interval() {
                Some(iv) => {
                    let probes = (secs / iv.as_secs_f64().max(1e-9)).min(1e15) as u64;
                    rtt_samples = rtt_samples.saturating_add(count.saturating_mul(probes));
                    2
                }
                None => 0,
            },
        };
        packets = packets.saturating_add(count.saturating_mul(per));
    }
    // Under ECMP each flow has its own two routes, not its group's: a fat
    // tree's are 6 hops and an end marker each way; 8 hops are counted.
    let ecmp = matches!(
        f.topology.get_ref(),
        Topology::Graph {
            routing: crate::scenario::Routing::Ecmp,
            ..
        }
    );
    let own_routes = if ecmp { 2 * 9 * 4 } else { 0 };
    let flows_part = flows.saturating_mul(per_flow(dumbbell) + own_routes);
    let links_part = links
        .saturating_mul(per_link())
        .saturating_add(link_models(s, flows));
    let monitor_part = monitor_rows(s.monitor(), monitored, tables, flows, secs);
    let (qdisc_tables, largest_table) = qdisc_tables(s);
    let bytes = flows_part
        .saturating_add(qdisc_tables)
        .saturating_add(links_part)
        .saturating_add(
            packets
                .min(capacity.saturating_add(4 * flows))
                .saturating_mul(PER_PACKET),
        )
        .saturating_add(windows.saturating_mul(PER_WINDOW_PACKET))
        .saturating_add(rtt_samples.saturating_mul(8))
        .saturating_add(monitor_part);
    Estimate {
        bytes,
        flows: flows_part,
        links: links_part,
        qdisc_tables,
        largest_table,
    }
}

/// Every link direction's qdisc that the scenario gives (a dumbbell's access
/// links are DropTail), with where it gives it and the link's rate.
fn qdiscs(s: &Scenario) -> Vec<(&aqm::QdiscSpec, KeyPath, aqm::Rate)> {
    let f = &s.file;
    let top = f.qdisc.as_ref().map(|q| q.get_ref());
    // Each qdisc is built with its direction's nominal rate (a schedule's first,
    // a trace's mean); a scenario whose links do not resolve fails validation.
    let links = s.links().unwrap_or_default();
    let rates = |i: usize| {
        links
            .get(i)
            .map(|(_, fwd, rev)| (fwd.nominal_rate(), rev.nominal_rate()))
    };
    let mut out = Vec::new();
    match f.topology.get_ref() {
        Topology::Dumbbell { reverse_qdisc, .. } => {
            let Some((fwd, rev)) = rates(0) else {
                return out;
            };
            if let Some(q) = top {
                out.push((q, KeyPath::top("qdisc"), fwd));
            }
            if let Some(q) = reverse_qdisc {
                let path = KeyPath::top("topology").key("reverse_qdisc");
                out.push((q, path, rev));
            }
        }
        Topology::Graph { links, .. } => {
            for (k, l) in links.iter().enumerate() {
                let link = KeyPath::top("topology").key("links").index(k);
                let Some((fwd, rev)) = rates(k) else {
                    continue;
                };
                match (&l.qdisc, top) {
                    (Some(q), _) => out.push((q, link.key("qdisc"), fwd)),
                    (None, Some(q)) => out.push((q, KeyPath::top("qdisc"), fwd)),
                    (None, None) => {}
                }
                if let Some(q) = &l.reverse_qdisc {
                    out.push((q, link.key("reverse_qdisc"), rev));
                }
            }
        }
    }
    out
}

/// Bytes of every qdisc's tables sized by a key, and the largest table.
fn qdisc_tables(s: &Scenario) -> (u64, Option<(KeyPath, KeyedTable)>) {
    let mut total = 0u64;
    let mut largest: Option<(KeyPath, KeyedTable)> = None;
    for (spec, path, rate) in qdiscs(s) {
        let Some(t) = spec.table_bytes(&aqm::LinkInfo::new(rate)) else {
            continue;
        };
        total = total.saturating_add(t.bytes);
        if largest.as_ref().is_none_or(|(_, l)| t.bytes > l.bytes) {
            largest = Some((path, t));
        }
    }
    (total, largest)
}

/// A link's queue when the scenario names none: DropTail's default limit.
const DEFAULT_LIMIT: u64 = 1000;

/// Packets the shared links can hold: twice each one's queue limit and pipe
/// (rate x delay in 1000-byte packets). A dumbbell's access links are each one
/// flow's own and are left out.
fn shared_capacity(s: &Scenario) -> u64 {
    let f = &s.file;
    let limit = |q: Option<&aqm::QdiscSpec>| q.map_or(DEFAULT_LIMIT, |q| q.limit() as u64);
    let pipe = |rate: aqm::Rate, delay: aqm::Dur| {
        (rate.as_f64() * delay.as_secs_f64() / 8000.0) as u64 + 1
    };
    // A scenario that validates resolves; the link keys were checked then.
    let links = s.links().unwrap_or_default();
    let pipes = |i: usize| {
        links.get(i).map_or(0, |(_, a, b)| {
            pipe(a.nominal_rate(), a.delay) + pipe(b.nominal_rate(), b.delay)
        })
    };
    let held = match f.topology.get_ref() {
        Topology::Dumbbell { reverse_qdisc, .. } => limit(f.qdisc.as_ref().map(|q| q.get_ref()))
            .saturating_add(limit(reverse_qdisc.as_ref()))
            .saturating_add(pipes(0)),
        Topology::Graph { links: specs, .. } => specs
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let fwd = l.qdisc.as_ref().or(f.qdisc.as_ref().map(|q| q.get_ref()));
                limit(fwd)
                    .saturating_add(limit(l.reverse_qdisc.as_ref()))
                    .saturating_add(pipes(i))
            })
            .fold(0u64, u64::saturating_add),
    };
    held.saturating_mul(2)
}

/// The link models: each trace's table once (its directions share it), and the
/// state of every link direction with one (a dumbbell's access links have one
/// each, four a flow).
fn link_models(s: &Scenario, flows: u64) -> u64 {
    let links = s.links().unwrap_or_default();
    let state = size_of::<crate::link_model::LinkModel>() as u64;
    let mut bytes = 0u64;
    for (i, (_, fwd, rev)) in links.iter().enumerate() {
        let access = i == 1 && matches!(s.file.topology.get_ref(), Topology::Dumbbell { .. });
        let each = if access { 2 * flows } else { 1 };
        for d in [fwd, rev] {
            bytes = bytes.saturating_add(d.table_bytes());
            if !d.is_plain() {
                bytes = bytes.saturating_add(each.saturating_mul(state));
            }
        }
    }
    bytes
}

/// The memory a run may use: `AQMLAB_MEMORY_LIMIT`, else the smallest of the
/// limits on this process ([`limits`]); `None` when none is known.
fn budget() -> Result<Option<u64>, String> {
    if let Ok(text) = std::env::var("AQMLAB_MEMORY_LIMIT") {
        return parse_bytes(&text)
            .map(Some)
            .ok_or_else(|| format!("AQMLAB_MEMORY_LIMIT = \"{text}\" is not a size (write it like \"8GiB\" or \"512MB\")"));
    }
    Ok(limits(&|path| std::fs::read_to_string(path).ok())
        .into_iter()
        .map(|(_, bytes)| bytes)
        .min())
}

/// The limits on what this process can still allocate, each named, read through
/// `read` (a file's text, `None` if it cannot be read): the system's
/// `MemAvailable`; the address space `RLIMIT_AS` leaves (the limit less the
/// process's `VmSize`); the cgroup's `memory.max` less its `memory.current`, the
/// tightest of the process's cgroup and its ancestors (v2), or `memory.limit_in_bytes`
/// less `memory.usage_in_bytes` (v1).
fn limits(read: &dyn Fn(&str) -> Option<String>) -> Vec<(&'static str, u64)> {
    let mut out = vec![];
    let field = |text: &str, key: &str| -> Option<u64> {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().strip_suffix("kB"))
            .and_then(|kb| kb.trim().parse::<u64>().ok())
            .map(|kb| kb * 1024)
    };
    if let Some(avail) = read("/proc/meminfo").and_then(|t| field(&t, "MemAvailable:")) {
        out.push(("available memory", avail));
    }
    // "Max address space   unlimited   unlimited   bytes" (soft, hard).
    let soft_as = read("/proc/self/limits").and_then(|t| {
        t.lines()
            .find(|l| l.starts_with("Max address space"))
            .and_then(|l| l.split_whitespace().nth(3)?.parse::<u64>().ok())
    });
    if let Some(limit) = soft_as {
        let used = read("/proc/self/status")
            .and_then(|t| field(&t, "VmSize:"))
            .unwrap_or(0);
        out.push(("address space (ulimit -v)", limit.saturating_sub(used)));
    }
    let number = |path: &str| read(path).and_then(|t| t.trim().parse::<u64>().ok());
    if let Some(groups) = read("/proc/self/cgroup") {
        let mut cgroup: Option<u64> = None;
        for line in groups.lines() {
            let mut parts = line.splitn(3, ':');
            let (_, controllers, path) = (parts.next(), parts.next(), parts.next());
            let (Some(controllers), Some(path)) = (controllers, path) else {
                continue;
            };
            let path = path.trim_end_matches('/');
            let (root, max, current, v1) = if controllers.is_empty() {
                ("/sys/fs/cgroup", "memory.max", "memory.current", false)
            } else if controllers.split(',').any(|c| c == "memory") {
                (
                    "/sys/fs/cgroup/memory",
                    "memory.limit_in_bytes",
                    "memory.usage_in_bytes",
                    true,
                )
            } else {
                continue;
            };
            // The process's own group and every ancestor: the tightest binds.
            let mut at = path.to_string();
            loop {
                let dir = format!("{root}{at}");
                if let Some(limit) = number(&format!("{dir}/{max}")) {
                    // v1 writes "no limit" as a huge number; v2 as "max" (no number).
                    if !(v1 && limit >= 1 << 60) {
                        let used = number(&format!("{dir}/{current}")).unwrap_or(0);
                        let left = limit.saturating_sub(used);
                        cgroup = Some(cgroup.map_or(left, |c| c.min(left)));
                    }
                }
                match at.rfind('/') {
                    Some(i) if !at.is_empty() => at.truncate(i),
                    _ => break,
                }
            }
        }
        if let Some(left) = cgroup {
            out.push(("cgroup memory.max", left));
        }
    }
    out
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
    if bytes < 1 << 30 {
        format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
    } else {
        format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
    }
}

/// An error when a run of `s` would need more memory than there is, as far as
/// it is known before the network is built.
pub fn check(s: &Scenario, total_flows: usize) -> Result<(), ScenarioError> {
    check_estimate(s, total_flows, estimate(s, total_flows), 0)
}

/// [`check`] once the routes are known, with the monitored links' per-flow
/// tables `tables`, when the links and the flows are built: a limit read off
/// the system now is what is left after them, so they are added back to it.
pub fn check_tables(s: &Scenario, total_flows: usize, tables: Tables) -> Result<(), ScenarioError> {
    let e = estimate_with(s, total_flows, tables);
    let built = e.flows.saturating_add(e.links);
    check_estimate(s, total_flows, e, built)
}

/// Refuses `e` if it does not fit; `built` of it is already allocated.
fn check_estimate(
    s: &Scenario,
    total_flows: usize,
    e: Estimate,
    built: u64,
) -> Result<(), ScenarioError> {
    let budget = match std::env::var_os("AQMLAB_MEMORY_LIMIT") {
        Some(_) => budget().map_err(|m| s.error(m))?,
        None => budget()
            .map_err(|m| s.error(m))?
            .map(|left| left.saturating_add(built)),
    };
    let wanted = e
        .bytes
        .saturating_sub(built)
        .saturating_mul(MARGIN_QUARTERS)
        / 4;
    within(s, total_flows, &e, budget)?;
    // Ask for the memory once, untouched (the pages are not used, so this costs
    // nothing): a limit the files above do not show (a `ulimit -v` set after
    // start, an allocator's own cap) is an error here instead of an abort later.
    // Above the address space a process can map, the estimate is refused too.
    let probe = usize::try_from(wanted).ok().and_then(|n| {
        let mut v = Vec::<u8>::new();
        v.try_reserve_exact(n).ok()?;
        // Kept opaque, so the compiler cannot drop the allocation as unused.
        Some(std::hint::black_box(v).capacity())
    });
    if probe.is_none() {
        return Err(s.error(format!(
            "this run needs about {} of memory with a margin of a quarter, and this \
             process cannot allocate that much (AQMLAB_MEMORY_LIMIT does not raise what \
             the system allows)",
            gib(wanted)
        )));
    }
    Ok(())
}

/// An error when a run of `s` would need more than `budget` bytes.
pub fn check_within(
    s: &Scenario,
    total_flows: usize,
    budget: Option<u64>,
) -> Result<(), ScenarioError> {
    within(s, total_flows, &estimate(s, total_flows), budget)
}

fn within(
    s: &Scenario,
    total_flows: usize,
    e: &Estimate,
    budget: Option<u64>,
) -> Result<(), ScenarioError> {
    let wanted = e.bytes.saturating_mul(MARGIN_QUARTERS) / 4;
    match (budget, &e.largest_table) {
        // A qdisc's table that is most of it: the error names its key.
        (Some(avail), Some((path, t))) if wanted > avail && 2 * t.bytes >= e.bytes => {
            let spec = qdiscs(s)
                .into_iter()
                .find(|(_, p, _)| p == path)
                .map_or("the qdisc", |(q, _, _)| q.kind());
            let rule = format!(
                "gives {spec}'s tables {}: this run needs about {} of memory with a margin \
                 of a quarter, and {} are available (the least of free memory, ulimit -v and \
                 the cgroup's memory.max; AQMLAB_MEMORY_LIMIT sets the limit)",
                gib(t.bytes),
                gib(wanted),
                gib(avail),
            );
            Err(s.qdisc_error(path, &aqm::ParamError::new(t.key, &t.value, rule)))
        }
        (Some(avail), _) if wanted > avail => Err(s.error(format!(
            "this run needs about {} of memory with a margin of a quarter ({} flows: {}, \
             {} link directions: {}, qdisc tables: {}, TCP windows, packets in flight, queues \
             and [monitor] series: the rest), and {} are available (the least of free \
             memory, ulimit -v and the cgroup's memory.max; AQMLAB_MEMORY_LIMIT sets the limit)",
            gib(wanted),
            total_flows,
            gib(e.flows),
            e.links / per_link(),
            gib(e.links),
            gib(e.qdisc_tables),
            gib(avail),
        ))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests;
