//! The result tables: the one schema every output of a run uses.
//!
//! [`TABLES`] lists each table by name with the function that builds it from a
//! [`RunResult`] as an Arrow [`RecordBatch`]. `aqmlab run --out` writes them as
//! Parquet (or CSV), the Python extension hands them to Python as Arrow IPC (where
//! `aqmlab.Result` turns each into a DataFrame property), and `aqmlab sweep` and
//! `aqmlab repro` stack them. So a column is defined here once, and a new table is
//! one function and one line of [`TABLES`] (plus its property in Python).
//!
//! Counts by [`aqm::DropReason`] are one column per reason, `drops_<reason>` (and
//! `marks_<reason>`), every reason present, in `DropReason::ALL` order, after the
//! total. Rates are bit/s and counts are events inside the measured interval.

use crate::results::RunResult;
use arrow_array::RecordBatch;
use columns::Columns;

mod columns;

/// Builds one table from a run's results.
pub type Build = fn(&RunResult) -> RecordBatch;

/// Every table, in the order they are written: (name, builder).
pub const TABLES: &[(&str, Build)] = &[
    ("run", run),
    ("flows", flows),
    ("groups", groups),
    ("hosts", hosts),
    ("links", links),
    ("queue", queue),
    ("link_flows", link_flows),
    ("fairness", fairness),
    ("flow_series", flow_series),
    ("tcp_trace", tcp_trace),
    ("delays", delays),
    ("delay_histogram", delay_histogram),
    ("objects", objects),
    ("events", events),
    ("diagnostics", diagnostics),
];

/// Every table of `r`, named, in [`TABLES`] order.
pub fn tables(r: &RunResult) -> Vec<(&'static str, RecordBatch)> {
    TABLES
        .iter()
        .map(|(name, build)| (*name, build(r)))
        .collect()
}

/// Every table's schema, in [`TABLES`] order: what a reader of a table written as
/// CSV, which carries no types, takes its column types from.
pub fn schemas() -> Vec<(&'static str, arrow_schema::SchemaRef)> {
    let empty = RunResult::default();
    TABLES
        .iter()
        .map(|(name, build)| (*name, build(&empty).schema()))
        .collect()
}

/// One row: what ran and how long it took (`wall_seconds`, the one value that
/// differs between replays of a run); for an emulated run (`emulated`), how
/// well it kept time.
pub fn run(r: &RunResult) -> RecordBatch {
    let one = std::slice::from_ref(r);
    let mut t = Columns::default();
    t.str("scenario", one.iter().map(|r| r.scenario.as_str()));
    t.u64("seed", one.iter().map(|r| r.seed));
    t.f64("duration_s", one.iter().map(|r| r.duration_s));
    t.f64("warmup_s", one.iter().map(|r| r.warmup_s));
    t.u64("events", one.iter().map(|r| r.events));
    t.f64("wall_seconds", one.iter().map(|r| r.wall_seconds));
    t.f64("sim_seconds", one.iter().map(|r| r.sim_seconds));
    t.u64(
        "queue_events_missed",
        one.iter().map(|r| r.queue_events_missed),
    );
    // An emulated run's timekeeping; null for a simulation.
    let emu = || one.iter().map(|r| r.emulation.as_ref());
    t.bool("emulated", emu().map(|e| e.is_some()));
    t.opt_f64("lateness_p50_s", emu().map(|e| e.map(|e| e.lateness_p50_s)));
    t.opt_f64("lateness_p99_s", emu().map(|e| e.map(|e| e.lateness_p99_s)));
    t.opt_f64("lateness_max_s", emu().map(|e| e.map(|e| e.lateness_max_s)));
    t.opt_f64("late_share", emu().map(|e| e.map(|e| e.late_share)));
    t.opt_bool("kept_time", emu().map(|e| e.map(|e| e.kept_time)));
    t.opt_u64("tun_drops", emu().map(|e| e.map(|e| e.tun_drops)));
    t.finish()
}

/// One row per flow.
pub fn flows(r: &RunResult) -> RecordBatch {
    let f = &r.flows;
    let mut t = Columns::default();
    t.u32("id", f.iter().map(|f| f.id));
    t.str("group", f.iter().map(|f| f.group.as_str()));
    t.str("kind", f.iter().map(|f| f.kind.as_str()));
    t.f64("goodput_bps", f.iter().map(|f| f.goodput_bps));
    t.f64("fair_share_bps", f.iter().map(|f| f.fair_share_bps));
    t.u64("sent", f.iter().map(|f| f.sent));
    t.u64("delivered", f.iter().map(|f| f.delivered));
    t.u64("drops_total", f.iter().map(|f| f.drops_total));
    t.reasons("drops", f, |f| &f.drops);
    t.u64("marks", f.iter().map(|f| f.marks));
    t.opt_f64("rtt_mean_s", f.iter().map(|f| f.rtt_mean_s));
    t.f64("base_rtt_s", f.iter().map(|f| f.base_rtt_s));
    t.u64("retransmits", f.iter().map(|f| f.retransmits));
    t.u64("timeouts", f.iter().map(|f| f.timeouts));
    t.u64("fast_recoveries", f.iter().map(|f| f.fast_recoveries));
    t.probe(f.iter().map(|f| f.probe.as_ref()));
    t.finish()
}

/// One row per flow group, in name order.
pub fn groups(r: &RunResult) -> RecordBatch {
    let g = &r.groups;
    let mut t = Columns::default();
    t.str("group", g.keys().map(String::as_str));
    t.str("kind", g.values().map(|g| g.kind.as_str()));
    t.u32("count", g.values().map(|g| g.count));
    t.f64("goodput_bps", g.values().map(|g| g.goodput_bps));
    t.f64("goodput_mean_bps", g.values().map(|g| g.goodput_mean_bps));
    t.u64("drops_total", g.values().map(|g| g.drops_total));
    t.u64("marks", g.values().map(|g| g.marks));
    t.f64("jain", g.values().map(|g| g.jain));
    t.f64("cov", g.values().map(|g| g.cov));
    t.opt_f64("rtt_mean_s", g.values().map(|g| g.rtt_mean_s));
    t.probe(g.values().map(|g| g.probe.as_ref()));
    t.finish()
}

/// One row per host and role, when the scenario names hosts (`host`,
/// `receiver_host`): its flows' goodput, share, drops, marks and Jain's index.
pub fn hosts(r: &RunResult) -> RecordBatch {
    let h = &r.hosts;
    let mut t = Columns::default();
    t.str("host", h.iter().map(|h| h.host.as_str()));
    t.str("role", h.iter().map(|h| h.role.as_str()));
    t.u32("flows", h.iter().map(|h| h.flows));
    t.f64("goodput_bps", h.iter().map(|h| h.goodput_bps));
    t.f64("share", h.iter().map(|h| h.share));
    t.u64("drops_total", h.iter().map(|h| h.drops_total));
    t.u64("marks", h.iter().map(|h| h.marks));
    t.f64("jain", h.iter().map(|h| h.jain));
    t.finish()
}

/// One row per monitored link direction.
pub fn links(r: &RunResult) -> RecordBatch {
    let l = &r.links;
    let mut t = Columns::default();
    t.str("name", l.iter().map(|l| l.name.as_str()));
    t.str("from", l.iter().map(|l| l.from.as_str()));
    t.str("to", l.iter().map(|l| l.to.as_str()));
    t.u64("rate_bps", l.iter().map(|l| l.rate_bps));
    t.f64("delay_s", l.iter().map(|l| l.delay_s));
    t.str("qdisc", l.iter().map(|l| l.qdisc.as_str()));
    t.f64("utilization", l.iter().map(|l| l.utilization));
    t.f64("throughput_bps", l.iter().map(|l| l.throughput_bps));
    t.u64("tx_packets", l.iter().map(|l| l.tx_packets));
    t.u64("arrivals", l.iter().map(|l| l.arrivals));
    t.u64("drops_total", l.iter().map(|l| l.drops_total));
    t.reasons("drops", l, |l| &l.drops);
    t.u64("marks_total", l.iter().map(|l| l.marks_total));
    t.reasons("marks", l, |l| &l.marks);
    t.f64("mean_queue_packets", l.iter().map(|l| l.mean_queue_packets));
    t.u32("max_queue_packets", l.iter().map(|l| l.max_queue_packets));
    t.finish()
}

/// The sampled backlog of every monitored link, long format.
pub fn queue(r: &RunResult) -> RecordBatch {
    let samples = || {
        r.links
            .iter()
            .flat_map(|l| (0..l.queue.t_s.len()).map(move |i| (l, i)))
    };
    let mut t = Columns::default();
    t.str("link", samples().map(|(l, _)| l.name.as_str()));
    t.f64("t_s", samples().map(|(l, i)| l.queue.t_s[i]));
    t.u32("packets", samples().map(|(l, i)| l.queue.packets[i]));
    t.u64("bytes", samples().map(|(l, i)| l.queue.bytes[i]));
    t.finish()
}

/// Each flow's throughput across each monitored link, and its mean number of
/// packets in that link's queue.
pub fn link_flows(r: &RunResult) -> RecordBatch {
    let x = &r.link_flows;
    let mut t = Columns::default();
    t.str("link", x.iter().map(|x| x.link.as_str()));
    t.u32("flow", x.iter().map(|x| x.flow));
    t.f64("throughput_bps", x.iter().map(|x| x.throughput_bps));
    t.u64("packets", x.iter().map(|x| x.packets));
    t.f64("mean_queue_packets", x.iter().map(|x| x.mean_queue_packets));
    t.finish()
}

/// Jain's index and the coefficient of variation of goodput: over TCP flows
/// (`scope` "tcp"), over all flows ("all"), per group ("group", with `group`),
/// and between hosts as senders ("hosts") and as receivers ("receiver_hosts")
/// when the scenario names them.
pub fn fairness(r: &RunResult) -> RecordBatch {
    let f = &r.fairness;
    let hosts = [("hosts", &f.hosts), ("receiver_hosts", &f.receiver_hosts)];
    let rows: Vec<(&str, Option<&str>, &crate::results::Fairness)> =
        [("tcp", None, &f.tcp), ("all", None, &f.all)]
            .into_iter()
            .chain(f.groups.iter().map(|(g, x)| ("group", Some(g.as_str()), x)))
            .chain(
                hosts
                    .into_iter()
                    .filter_map(|(s, x)| Some((s, None, x.as_ref()?))),
            )
            .collect();
    let mut t = Columns::default();
    t.str("scope", rows.iter().map(|r| r.0));
    t.opt_str("group", rows.iter().map(|r| r.1));
    t.u32("n", rows.iter().map(|r| r.2.n));
    t.f64("jain", rows.iter().map(|r| r.2.jain));
    t.f64("cov", rows.iter().map(|r| r.2.cov));
    t.finish()
}

/// Each flow's traffic across each monitored link per interval (`[monitor]
/// flow_series`; empty when off).
pub fn flow_series(r: &RunResult) -> RecordBatch {
    let x = &r.flow_series;
    let mut t = Columns::default();
    t.str("link", x.iter().map(|x| x.link.as_str()));
    t.f64("t_s", x.iter().map(|x| x.t_s));
    t.f64("dt_s", x.iter().map(|x| x.dt_s));
    t.u32("flow", x.iter().map(|x| x.flow));
    t.u32("packets", x.iter().map(|x| x.packets));
    t.f64("bytes", x.iter().map(|x| x.bytes));
    t.f64("throughput_bps", x.iter().map(|x| x.throughput_bps));
    t.u32("drops", x.iter().map(|x| x.drops));
    t.u32("marks", x.iter().map(|x| x.marks));
    t.finish()
}

/// Every TCP sender's state per interval (`[monitor] tcp_trace`).
pub fn tcp_trace(r: &RunResult) -> RecordBatch {
    let x = &r.tcp_trace;
    let mut t = Columns::default();
    t.f64("t_s", x.iter().map(|x| x.t_s));
    t.u32("flow", x.iter().map(|x| x.flow));
    t.f64("cwnd", x.iter().map(|x| x.cwnd));
    t.f64("ssthresh", x.iter().map(|x| x.ssthresh));
    t.f64("srtt_s", x.iter().map(|x| x.srtt_s));
    t.f64("rto_s", x.iter().map(|x| x.rto_s));
    t.u32("in_flight", x.iter().map(|x| x.in_flight));
    t.opt_f64("pacing_rate_pps", x.iter().map(|x| x.pacing_rate_pps));
    t.opt_f64("bbr_bw_pps", x.iter().map(|x| x.bbr_bw_pps));
    t.opt_f64("bbr_min_rtt_s", x.iter().map(|x| x.bbr_min_rtt_s));
    t.finish()
}

/// `scope` of a delay row: "link" (every packet of the queue, `group` null) or
/// "group" (one flow group's packets), as the fairness table's `scope`.
fn delay_scope(group: &Option<String>) -> &'static str {
    if group.is_some() {
        "group"
    } else {
        "link"
    }
}

/// Queueing-delay quantiles per monitored queue, over all packets (`scope` "link",
/// `group` null) and per flow group (`scope` "group"), `[monitor] delays`.
pub fn delays(r: &RunResult) -> RecordBatch {
    let x = &r.delays;
    let mut t = Columns::default();
    t.str("link", x.iter().map(|x| x.link.as_str()));
    t.str("scope", x.iter().map(|x| delay_scope(&x.group)));
    t.opt_str("group", x.iter().map(|x| x.group.as_deref()));
    t.u64("count", x.iter().map(|x| x.count));
    t.f64("mean_s", x.iter().map(|x| x.mean_s));
    t.f64("p50_s", x.iter().map(|x| x.p50_s));
    t.f64("p90_s", x.iter().map(|x| x.p90_s));
    t.f64("p95_s", x.iter().map(|x| x.p95_s));
    t.f64("p99_s", x.iter().map(|x| x.p99_s));
    t.f64("max_s", x.iter().map(|x| x.max_s));
    t.finish()
}

/// The histograms behind [`delays`]: packets per delay bucket `[lo_s, hi_s)`.
pub fn delay_histogram(r: &RunResult) -> RecordBatch {
    let x = &r.delay_histogram;
    let mut t = Columns::default();
    t.str("link", x.iter().map(|x| x.link.as_str()));
    t.str("scope", x.iter().map(|x| delay_scope(&x.group)));
    t.opt_str("group", x.iter().map(|x| x.group.as_deref()));
    t.f64("lo_s", x.iter().map(|x| x.lo_s));
    t.f64("hi_s", x.iter().map(|x| x.hi_s));
    t.u64("count", x.iter().map(|x| x.count));
    t.finish()
}

/// Every web object's transfer (`[monitor] objects`).
pub fn objects(r: &RunResult) -> RecordBatch {
    let x = &r.objects;
    let mut t = Columns::default();
    t.u32("flow", x.iter().map(|x| x.flow));
    t.str("group", x.iter().map(|x| x.group.as_str()));
    t.f64("start_s", x.iter().map(|x| x.start_s));
    t.f64("end_s", x.iter().map(|x| x.end_s));
    t.f64("transfer_s", x.iter().map(|x| x.transfer_s));
    t.u32("packets", x.iter().map(|x| x.packets));
    t.finish()
}

/// Every drop and mark at any queue (`[monitor] events`).
pub fn events(r: &RunResult) -> RecordBatch {
    let x = &r.queue_events;
    let mut t = Columns::default();
    t.f64("t_s", x.iter().map(|x| x.t_s));
    t.str("link", x.iter().map(|x| x.link.as_str()));
    t.u32("flow", x.iter().map(|x| x.flow));
    t.str("reason", x.iter().map(|x| x.reason.as_str()));
    t.bool("mark", x.iter().map(|x| x.mark));
    t.finish()
}

/// The qdiscs' notes on how they ran, one row each (usually none).
pub fn diagnostics(r: &RunResult) -> RecordBatch {
    let x = &r.diagnostics;
    let mut t = Columns::default();
    t.str("link", x.iter().map(|x| x.link.as_str()));
    t.str("qdisc", x.iter().map(|x| x.qdisc.as_str()));
    t.str("note", x.iter().map(|x| x.note.as_str()));
    t.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Array, Float64Array, StringArray, UInt64Array};

    fn result() -> RunResult {
        let mut s = crate::front::source::load(Some("choke-fig3")).unwrap();
        crate::Overrides {
            duration: Some("3s"),
            warmup: Some("1s"),
            ..Default::default()
        }
        .apply(&mut s)
        .unwrap();
        crate::run_scenario(&s, &mut |_| {}).unwrap()
    }

    fn column<'a, A: 'static>(b: &'a RecordBatch, name: &str) -> &'a A {
        b.column_by_name(name)
            .unwrap_or_else(|| panic!("no column {name}"))
            .as_any()
            .downcast_ref::<A>()
            .unwrap()
    }

    #[test]
    fn every_table_holds_what_the_result_holds() {
        let r = result();
        let t: std::collections::BTreeMap<_, _> = tables(&r).into_iter().collect();
        assert_eq!(t.len(), TABLES.len());
        assert_eq!(t["flows"].num_rows(), r.flows.len());
        assert_eq!(t["groups"].num_rows(), r.groups.len());
        assert_eq!(t["links"].num_rows(), r.links.len());
        assert_eq!(t["link_flows"].num_rows(), r.link_flows.len());
        assert_eq!(t["fairness"].num_rows(), 2 + r.groups.len());
        let samples: usize = r.links.iter().map(|l| l.queue.t_s.len()).sum();
        assert_eq!(t["queue"].num_rows(), samples);
        assert_eq!(t["run"].num_rows(), 1);
        for (name, rows) in [
            ("flow_series", r.flow_series.len()),
            ("tcp_trace", r.tcp_trace.len()),
            ("delays", r.delays.len()),
            ("delay_histogram", r.delay_histogram.len()),
            ("objects", r.objects.len()),
            ("events", r.queue_events.len()),
        ] {
            assert_eq!(t[name].num_rows(), rows, "{name}");
        }

        // Drops and marks by reason add up to their totals, on flows and on links.
        let n = aqm::DropReason::COUNT;
        let links = &t["links"];
        for prefix in ["drops", "marks"] {
            let total = column::<UInt64Array>(links, &format!("{prefix}_total"));
            for row in 0..links.num_rows() {
                let sum: u64 = aqm::DropReason::ALL
                    .iter()
                    .map(|d| {
                        column::<UInt64Array>(links, &format!("{prefix}_{}", d.name())).value(row)
                    })
                    .sum();
                assert_eq!(sum, total.value(row), "{prefix} of link {row}");
            }
        }
        assert_eq!(links.num_columns(), 14 + 2 * n);
        let drops = column::<UInt64Array>(&t["flows"], "drops_total");
        assert_eq!(
            drops.values().iter().sum::<u64>(),
            r.flows.iter().map(|f| f.drops_total).sum::<u64>()
        );
        // A flow without RTT samples (UDP) has a null, not a zero.
        let rtt = column::<Float64Array>(&t["flows"], "rtt_mean_s");
        let udp = r.flows.iter().position(|f| f.kind == "cbr").unwrap();
        assert!(rtt.is_null(udp));
        for (i, f) in r.flows.iter().enumerate() {
            assert_eq!(rtt.is_null(i), f.rtt_mean_s.is_none(), "flow {i}");
        }
        assert!(rtt.null_count() < r.flows.len());
        let scope = column::<StringArray>(&t["fairness"], "scope");
        assert_eq!(
            (scope.value(0), scope.value(1), scope.value(2)),
            ("tcp", "all", "group")
        );
    }

    #[test]
    fn delay_quantiles_and_group_rtts_are_those_of_the_recorded_delays() {
        let sets = crate::front::assign::parse_all(&["monitor.delays=true".to_string()]).unwrap();
        let o = crate::Overrides {
            duration: Some("3s"),
            warmup: Some("1s"),
            ..Default::default()
        };
        let s = crate::front::assign::load(Some("choke-fig3"), &sets, &o).unwrap();
        let r = crate::run_scenario(&s, &mut |_| {}).unwrap();
        let t: std::collections::BTreeMap<_, _> = tables(&r).into_iter().collect();
        let (d, h) = (&t["delays"], &t["delay_histogram"]);
        assert!(d.num_rows() > 0);
        let (link, scope, count) = (
            column::<StringArray>(d, "link"),
            column::<StringArray>(d, "scope"),
            column::<UInt64Array>(d, "count"),
        );
        let group = column::<StringArray>(d, "group");
        let (hl, hg, hs) = (
            column::<StringArray>(h, "link"),
            column::<StringArray>(h, "group"),
            column::<StringArray>(h, "scope"),
        );
        let (lo, hi, hc) = (
            column::<Float64Array>(h, "lo_s"),
            column::<Float64Array>(h, "hi_s"),
            column::<UInt64Array>(h, "count"),
        );
        for row in 0..d.num_rows() {
            // The whole link is named, not left as a silent null.
            assert_eq!(
                scope.value(row),
                if group.is_null(row) { "link" } else { "group" }
            );
            let n = count.value(row);
            if n == 0 {
                continue;
            }
            // This row's buckets: same link, same group (or both the whole link).
            let buckets: Vec<(f64, f64, u64)> = (0..h.num_rows())
                .filter(|&i| {
                    hl.value(i) == link.value(row)
                        && hs.value(i) == scope.value(row)
                        && (group.is_null(row) || hg.value(i) == group.value(row))
                })
                .map(|i| (lo.value(i), hi.value(i), hc.value(i)))
                .collect();
            assert_eq!(buckets.iter().map(|b| b.2).sum::<u64>(), n);
            let max = column::<Float64Array>(d, "max_s").value(row);
            for (q, name) in [
                (0.5, "p50_s"),
                (0.9, "p90_s"),
                (0.95, "p95_s"),
                (0.99, "p99_s"),
            ] {
                // The ceil(q n)-th smallest delay lies in the bucket the
                // cumulative counts reach it in; the table holds its midpoint.
                let rank = ((q * n as f64).ceil() as u64).clamp(1, n);
                let mut seen = 0;
                let (l, u, _) = *buckets
                    .iter()
                    .find(|b| {
                        seen += b.2;
                        seen >= rank
                    })
                    .unwrap();
                let got = column::<Float64Array>(d, name).value(row);
                let want = if u - l <= 1.5e-9 { l } else { (l + u) / 2.0 }.min(max);
                assert!(
                    (got - want).abs() <= 1e-12,
                    "{name} row {row}: {got} vs {want}"
                );
            }
        }
        let p95 = column::<Float64Array>(d, "p95_s");
        let p99 = column::<Float64Array>(d, "p99_s");
        assert!((0..d.num_rows()).any(|i| p95.value(i) > 0.0));
        for i in 0..d.num_rows() {
            assert!(p95.value(i) <= p99.value(i));
        }
        // A group's RTT is the mean of its flows' mean RTTs; null for UDP.
        let g = &t["groups"];
        let names = column::<StringArray>(g, "group");
        let rtt = column::<Float64Array>(g, "rtt_mean_s");
        for i in 0..g.num_rows() {
            let xs: Vec<f64> = r
                .flows
                .iter()
                .filter(|f| f.group == names.value(i))
                .filter_map(|f| f.rtt_mean_s)
                .collect();
            if xs.is_empty() {
                assert!(rtt.is_null(i));
            } else {
                let mean = xs.iter().sum::<f64>() / xs.len() as f64;
                assert!((rtt.value(i) - mean).abs() < 1e-12);
                assert!(mean > r.flows[0].base_rtt_s);
            }
        }
    }
}
