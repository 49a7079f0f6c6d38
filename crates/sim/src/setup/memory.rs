//! What a scenario will need in memory, estimated before anything is built, so a
//! run that cannot fit is an error that says how much it needs instead of an abort
//! halfway through building (Rust aborts the process when an allocation fails).
//!
//! The estimate counts the structures a run keeps per flow, per link direction and
//! per monitored link, the packets that can be in the network at once, and the
//! rows of the series `[monitor]` asks for, what each TCP sender keeps per packet
//! of its window, each at its in-memory size. The estimate plus a quarter
//! (`MARGIN`: growth by doubling, and what it leaves out) is compared with the
//! smallest of the limits on this process: the memory available (`MemAvailable`
//! of /proc/meminfo), the address space left under `ulimit -v` (`RLIMIT_AS`), and
//! what its cgroup may still use (`memory.max` less `memory.current`: a SLURM
//! `--mem`, a container's limit); or with `AQMLAB_MEMORY_LIMIT` (bytes, or with
//! a unit: `"8GiB"`, `"512MB"`) when set.

use crate::flow::Flow;
use crate::header::Header;
use crate::link::Link;
use crate::observe::monitor_rows;
use crate::observe::packed::PACKED_FLOW_COUNTERS;
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
    let mut windows = 0u64;
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
                let size = g.packet_size.max(1) as f64;
                let peak = g
                    .schedule()
                    .into_iter()
                    .flatten()
                    .map(|st| st.rate.as_f64())
                    .fold(rate.as_f64(), f64::max);
                (peak * secs / (8.0 * size)).min(1e15) as u64
            }
            (None, None) => 0,
        };
        packets = packets.saturating_add(count.saturating_mul(per));
    }
    let flows_part = flows.saturating_mul(per_flow(dumbbell));
    let links_part = links
        .saturating_mul(per_link())
        .saturating_add(link_models(s, flows));
    let monitor_part = monitor_rows(s.monitor(), monitored, flows, secs);
    let bytes = flows_part
        .saturating_add(links_part)
        .saturating_add(
            packets
                .min(capacity.saturating_add(4 * flows))
                .saturating_mul(PER_PACKET),
        )
        .saturating_add(windows.saturating_mul(PER_WINDOW_PACKET))
        .saturating_add(monitor_part);
    Estimate {
        bytes,
        flows: flows_part,
        links: links_part,
    }
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
    format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
}

/// An error when a run of `s` would need more memory than there is.
pub fn check(s: &Scenario, total_flows: usize) -> Result<(), ScenarioError> {
    let budget = budget().map_err(|m| s.error(m))?;
    check_within(s, total_flows, budget)?;
    // Ask for the memory once, untouched (the pages are not used, so this costs
    // nothing): a limit the files above do not show (a `ulimit -v` set after
    // start, an allocator's own cap) is an error here instead of an abort later.
    // Above the address space a process can map, the estimate is refused too.
    let wanted = estimate(s, total_flows)
        .bytes
        .saturating_mul(MARGIN_QUARTERS)
        / 4;
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
    let e = estimate(s, total_flows);
    let wanted = e.bytes.saturating_mul(MARGIN_QUARTERS) / 4;
    match budget {
        Some(avail) if wanted > avail => Err(s.error(format!(
            "this run needs about {} of memory with a margin of a quarter ({} flows: {}, \
             {} link directions: {}, TCP windows, packets in flight, queues and [monitor] \
             series: the rest), and {} are available (the least of free memory, ulimit -v \
             and the cgroup's memory.max; AQMLAB_MEMORY_LIMIT sets the limit)",
            gib(wanted),
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
    fn a_senders_window_is_counted_and_a_margin_kept() {
        // 100 senders whose first window is a million packets: what they keep
        // per packet in flight alone is 3.4 GB.
        let windowed = |w: u32| {
            let text = format!(
                "name = \"w\"\nduration = \"1s\"\n[topology]\nkind = \"dumbbell\"\n\
                 access = {{ rate = \"1Gbps\", delay = \"1ms\" }}\n\
                 bottleneck = {{ rate = \"1Gbps\", delay = \"1ms\" }}\n\
                 [[flows]]\nname = \"t\"\nkind = \"tcp\"\ncount = 100\n\
                 initial_window = {w}\nmax_window = {w}\n"
            );
            Scenario::from_toml(&text, "w.toml").unwrap()
        };
        let big = estimate(&windowed(1 << 20), 100).bytes;
        let small = estimate(&windowed(10), 100).bytes;
        assert!(
            big - small >= 100 * (1 << 20) * PER_WINDOW_PACKET,
            "{small} {big}"
        );
        let e = check_within(&windowed(1 << 20), 100, Some(2 << 30)).unwrap_err();
        assert!(e.to_string().contains("TCP windows"), "{e}");
        // The estimate alone is not enough: a quarter more is asked for.
        let s = windowed(10);
        assert!(check_within(&s, 100, Some(small)).is_err());
        assert!(check_within(&s, 100, Some(small / 4 * 5 + 4)).is_ok());
    }

    #[test]
    fn every_qdiscs_limit_is_counted() {
        // An unresponsive source of 10 Gbit/s into 1 Mbit/s fills whatever queue
        // the bottleneck has: its limit bounds the packets held.
        let flooded = |qdisc: &str| {
            let text = format!(
                "name = \"q\"\nduration = \"10s\"\n[topology]\nkind = \"dumbbell\"\n\
                 access = {{ rate = \"10Gbps\", delay = \"1ms\" }}\n\
                 bottleneck = {{ rate = \"1Mbps\", delay = \"1ms\" }}\n[qdisc]\n{qdisc}\n\
                 [[flows]]\nname = \"u\"\nkind = \"cbr\"\nrate = \"10Gbps\"\n"
            );
            estimate(&Scenario::from_toml(&text, "q.toml").unwrap(), 1).bytes
        };
        for kind in ["codel", "fq_codel", "pie", "wfq", "drr", "red", "sfq"] {
            let small = flooded(&format!("kind = \"{kind}\"\nlimit = 100"));
            let big = flooded(&format!("kind = \"{kind}\"\nlimit = {}", 1 << 22));
            assert!(
                big - small >= (1 << 22) * PER_PACKET,
                "{kind}: {small} {big}"
            );
        }
    }

    #[test]
    fn the_smallest_of_free_memory_ulimit_and_cgroup_binds() {
        const GIB: u64 = 1 << 30;
        let files = |cgroup: &'static str| {
            move |path: &str| -> Option<String> {
                Some(match path {
                    "/proc/meminfo" => {
                        format!("MemTotal: 1 kB\nMemAvailable: {} kB\n", 22 * GIB / 1024)
                    }
                    "/proc/self/limits" => format!(
                        "Limit Soft Limit Hard Limit Units\nMax address space {} unlimited bytes\n",
                        4 * GIB
                    ),
                    "/proc/self/status" => format!("VmSize: {} kB\n", GIB / 1024),
                    "/proc/self/cgroup" => cgroup.to_string(),
                    "/sys/fs/cgroup/slurm/job/memory.max" => format!("{}\n", 2 * GIB),
                    "/sys/fs/cgroup/slurm/job/memory.current" => format!("{}\n", GIB / 2),
                    "/sys/fs/cgroup/slurm/memory.max" => "max\n".into(),
                    "/sys/fs/cgroup/memory/job/memory.limit_in_bytes" => format!("{}\n", GIB),
                    "/sys/fs/cgroup/memory/job/memory.usage_in_bytes" => "0\n".into(),
                    "/sys/fs/cgroup/memory/memory.limit_in_bytes" => format!("{}\n", u64::MAX / 2),
                    _ => return None,
                })
            }
        };
        let least = |cgroup| limits(&files(cgroup)).into_iter().map(|(_, b)| b).min();
        // RLIMIT_AS less what is mapped: 3 GiB; the v2 cgroup: 1.5 GiB left.
        assert_eq!(least("0::/slurm/job\n"), Some(3 * GIB / 2));
        assert_eq!(least("0::/elsewhere\n"), Some(3 * GIB));
        // cgroup v1's memory controller.
        assert_eq!(least("4:memory:/job\n3:cpu:/job\n"), Some(GIB));
        let all = limits(&files("0::/slurm/job\n"));
        assert!(all
            .iter()
            .any(|&(n, b)| n == "available memory" && b == 22 * GIB));
    }

    #[test]
    fn sizes_parse_with_their_units() {
        assert_eq!(parse_bytes("8GiB"), Some(8 << 30));
        assert_eq!(parse_bytes("512MB"), Some(512_000_000));
        assert_eq!(parse_bytes("1000"), Some(1000));
        assert_eq!(parse_bytes("lots"), None);
    }
}
