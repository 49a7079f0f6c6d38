//! Writing results: a text summary for people, JSON and Parquet for programs.

use arrow_array::{ArrayRef, Float64Array, RecordBatch, StringArray, UInt32Array, UInt64Array};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use sim::RunResult;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

/// A short human-readable summary: groups, bottleneck links, fairness.
pub fn text_summary(r: &RunResult) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{} (seed {}): {:.0} s simulated in {:.2} s wall, {} events",
        r.scenario, r.seed, r.sim_seconds, r.wall_seconds, r.events
    );
    let _ = writeln!(
        s,
        "measured from {:.0} s to {:.0} s",
        r.warmup_s, r.duration_s
    );
    let _ = writeln!(
        s,
        "\n{:<12} {:>5} {:>8} {:>14} {:>14} {:>9} {:>7}",
        "group", "flows", "kind", "goodput", "per flow", "drops", "jain"
    );
    for (name, g) in &r.groups {
        let _ = writeln!(
            s,
            "{:<12} {:>5} {:>8} {:>9.1} kb/s {:>9.1} kb/s {:>9} {:>7.3}",
            name,
            g.count,
            g.kind,
            g.goodput_bps / 1e3,
            g.goodput_mean_bps / 1e3,
            g.drops_total,
            g.jain
        );
    }
    let _ = writeln!(
        s,
        "\n{:<16} {:>8} {:>6} {:>11} {:>9} {:>9}",
        "link", "qdisc", "util", "mean queue", "drops", "marks"
    );
    for l in &r.links {
        let _ = writeln!(
            s,
            "{:<16} {:>8} {:>6.3} {:>11.1} {:>9} {:>9}",
            l.name, l.qdisc, l.utilization, l.mean_queue_packets, l.drops_total, l.marks_total
        );
    }
    let f = &r.fairness;
    let _ = writeln!(
        s,
        "\nfairness: all TCP flows jain {:.3} cov {:.3}; all flows jain {:.3}",
        f.tcp.jain, f.tcp.cov, f.all.jain
    );
    s
}

/// Writes `flows`, `groups`, `links`, `queue` and `link_flows` as Parquet tables and
/// `summary.json` (the `--json` object) into `dir`. Each file is written under a
/// temporary name and renamed into place, and `summary.json` comes last: if it is
/// there, the run finished and every table beside it is whole.
pub fn write_all(dir: &Path, r: &RunResult) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)?;
    let reasons = aqm::DropReason::ALL;
    let mut flows = Table::default();
    flows.u32("id", r.flows.iter().map(|f| f.id));
    flows.str("group", r.flows.iter().map(|f| f.group.as_str()));
    flows.str("kind", r.flows.iter().map(|f| f.kind.as_str()));
    flows.f64("goodput_bps", r.flows.iter().map(|f| f.goodput_bps));
    flows.f64("fair_share_bps", r.flows.iter().map(|f| f.fair_share_bps));
    flows.u64("sent", r.flows.iter().map(|f| f.sent));
    flows.u64("delivered", r.flows.iter().map(|f| f.delivered));
    flows.u64("drops_total", r.flows.iter().map(|f| f.drops_total));
    for reason in reasons {
        flows.u64(
            &format!("drops_{}", reason.name()),
            r.flows.iter().map(|f| f.drops[reason.name()]),
        );
    }
    flows.u64("marks", r.flows.iter().map(|f| f.marks));
    flows.opt_f64("rtt_mean_s", r.flows.iter().map(|f| f.rtt_mean_s));
    flows.u64("retransmits", r.flows.iter().map(|f| f.retransmits));
    flows.u64("timeouts", r.flows.iter().map(|f| f.timeouts));
    flows.u64("fast_recoveries", r.flows.iter().map(|f| f.fast_recoveries));

    let mut groups = Table::default();
    groups.str("group", r.groups.keys().map(String::as_str));
    groups.str("kind", r.groups.values().map(|g| g.kind.as_str()));
    groups.u32("count", r.groups.values().map(|g| g.count));
    groups.f64("goodput_bps", r.groups.values().map(|g| g.goodput_bps));
    groups.f64(
        "goodput_mean_bps",
        r.groups.values().map(|g| g.goodput_mean_bps),
    );
    groups.u64("drops_total", r.groups.values().map(|g| g.drops_total));
    groups.u64("marks", r.groups.values().map(|g| g.marks));
    groups.f64("jain", r.groups.values().map(|g| g.jain));
    groups.f64("cov", r.groups.values().map(|g| g.cov));

    let mut links = Table::default();
    links.str("name", r.links.iter().map(|l| l.name.as_str()));
    links.str("from", r.links.iter().map(|l| l.from.as_str()));
    links.str("to", r.links.iter().map(|l| l.to.as_str()));
    links.u64("rate_bps", r.links.iter().map(|l| l.rate_bps));
    links.f64("delay_s", r.links.iter().map(|l| l.delay_s));
    links.str("qdisc", r.links.iter().map(|l| l.qdisc.as_str()));
    links.f64("utilization", r.links.iter().map(|l| l.utilization));
    links.f64("throughput_bps", r.links.iter().map(|l| l.throughput_bps));
    links.u64("tx_packets", r.links.iter().map(|l| l.tx_packets));
    links.u64("arrivals", r.links.iter().map(|l| l.arrivals));
    links.u64("drops_total", r.links.iter().map(|l| l.drops_total));
    for reason in reasons {
        links.u64(
            &format!("drops_{}", reason.name()),
            r.links.iter().map(|l| l.drops[reason.name()]),
        );
    }
    links.u64("marks_total", r.links.iter().map(|l| l.marks_total));
    links.f64(
        "mean_queue_packets",
        r.links.iter().map(|l| l.mean_queue_packets),
    );
    links.u32(
        "max_queue_packets",
        r.links.iter().map(|l| l.max_queue_packets),
    );

    let samples = || {
        r.links
            .iter()
            .flat_map(|l| (0..l.queue.t_s.len()).map(move |i| (l, i)))
    };
    let mut queue = Table::default();
    queue.str("link", samples().map(|(l, _)| l.name.as_str()));
    queue.f64("t_s", samples().map(|(l, i)| l.queue.t_s[i]));
    queue.u32("packets", samples().map(|(l, i)| l.queue.packets[i]));
    queue.u64("bytes", samples().map(|(l, i)| l.queue.bytes[i]));

    let mut link_flows = Table::default();
    link_flows.str("link", r.link_flows.iter().map(|x| x.link.as_str()));
    link_flows.u32("flow", r.link_flows.iter().map(|x| x.flow));
    link_flows.f64(
        "throughput_bps",
        r.link_flows.iter().map(|x| x.throughput_bps),
    );
    link_flows.u64("packets", r.link_flows.iter().map(|x| x.packets));
    link_flows.f64(
        "mean_queue_packets",
        r.link_flows.iter().map(|x| x.mean_queue_packets),
    );

    for (name, table) in [
        ("flows", flows),
        ("groups", groups),
        ("links", links),
        ("queue", queue),
        ("link_flows", link_flows),
    ] {
        table.write_parquet(&dir.join(format!("{name}.parquet")))?;
    }
    let json = serde_json::to_vec_pretty(&r.summary())?;
    write_atomic(&dir.join("summary.json"), &json)?;
    Ok(())
}

/// Columns being assembled into one Parquet table.
#[derive(Default)]
struct Table {
    fields: Vec<Field>,
    columns: Vec<ArrayRef>,
}

impl Table {
    fn push(&mut self, name: &str, ty: DataType, nullable: bool, column: ArrayRef) {
        self.fields.push(Field::new(name, ty, nullable));
        self.columns.push(column);
    }
    fn u32(&mut self, name: &str, v: impl Iterator<Item = u32>) {
        self.push(
            name,
            DataType::UInt32,
            false,
            Arc::new(UInt32Array::from_iter_values(v)),
        );
    }
    fn u64(&mut self, name: &str, v: impl Iterator<Item = u64>) {
        self.push(
            name,
            DataType::UInt64,
            false,
            Arc::new(UInt64Array::from_iter_values(v)),
        );
    }
    fn f64(&mut self, name: &str, v: impl Iterator<Item = f64>) {
        self.push(
            name,
            DataType::Float64,
            false,
            Arc::new(Float64Array::from_iter_values(v)),
        );
    }
    fn opt_f64(&mut self, name: &str, v: impl Iterator<Item = Option<f64>>) {
        self.push(
            name,
            DataType::Float64,
            true,
            Arc::new(Float64Array::from_iter(v)),
        );
    }
    fn str<'a>(&mut self, name: &str, v: impl Iterator<Item = &'a str>) {
        // StringArray sizes its buffers from the iterator's upper bound: collect first.
        let v: Vec<&str> = v.collect();
        self.push(
            name,
            DataType::Utf8,
            false,
            Arc::new(StringArray::from_iter_values(v)),
        );
    }

    fn write_parquet(self, path: &Path) -> anyhow::Result<()> {
        let batch = RecordBatch::try_new(Arc::new(Schema::new(self.fields)), self.columns)?;
        let tmp = path.with_extension("parquet.partial");
        let file = std::fs::File::create(&tmp)?;
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .build();
        let mut writer = ArrowWriter::try_new(file, batch.schema(), Some(props))?;
        writer.write(&batch)?;
        let file = writer.into_inner()?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)?;
        Ok(())
    }
}

/// Writes `bytes` to `path` through a temporary file and a rename, so a reader
/// sees the old file, the whole new file, or nothing.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let tmp = path.with_extension(format!(
        "{}.partial",
        path.extension().and_then(|e| e.to_str()).unwrap_or("")
    ));
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)
}
