//! Writing results: a text summary for people, JSON and Parquet for programs.

use sim::RunResult;
use std::fmt::Write as _;
use std::path::Path;

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

pub fn write_all(dir: &Path, r: &RunResult) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)?;
    let json = serde_json::to_vec_pretty(&r.summary_json())?;
    write_atomic(&dir.join("summary.json"), &json)?;
    Ok(())
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
