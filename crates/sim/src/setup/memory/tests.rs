//! The memory estimate: what it counts, what it is compared with, and its errors.

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
fn qdisc_tables_are_counted_and_a_refusal_names_their_key() {
    // SFB at its bound of bins: 32 levels x 32,768 bins, two sets of them
    // for one link before a packet is queued.
    let sfb = |bins: u32| {
        let text = format!(
            "name = \"t\"\nduration = \"1s\"\n[topology]\nkind = \"dumbbell\"\n\
             access = {{ rate = \"1Gbps\", delay = \"1ms\" }}\n\
             bottleneck = {{ rate = \"1Gbps\", delay = \"1ms\" }}\n\
             [qdisc]\nkind = \"sfb\"\nlevels = 32\nbins = {bins}\n\
             [[flows]]\nname = \"t\"\nkind = \"tcp\"\ncount = 2\n"
        );
        Scenario::from_toml(&text, "t.toml").unwrap_or_else(|e| panic!("{e}"))
    };
    let (big, small) = (estimate(&sfb(32_768), 2), estimate(&sfb(16), 2));
    assert!(big.qdisc_tables >= 2 << 20 << 4, "{}", big.qdisc_tables);
    assert!(big.bytes - small.bytes >= big.qdisc_tables - small.qdisc_tables);
    // A limit the tables alone nearly fill.
    let limit = big.qdisc_tables + (big.qdisc_tables >> 4);
    let e = check_within(&sfb(32_768), 2, Some(limit))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("t.toml:10: qdisc.bins = 32768 gives sfb's tables "),
        "{e}"
    );
    assert!(e.contains(" MiB are available"), "{e}");
    assert!(check_within(&sfb(16), 2, Some(limit)).is_ok());
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
