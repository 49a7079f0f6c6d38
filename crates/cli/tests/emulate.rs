//! `aqmlab emulate` as a user meets it: refusals before anything starts, exit 2
//! without CAP_NET_ADMIN, nothing left behind by a killed run.
#![cfg(target_os = "linux")]

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_aqmlab");

const SMALL: &str = r#"
name = "small"
duration = "1s"
qdisc = { kind = "droptail", limit = 50 }
flows = [{ name = "bulk", kind = "tcp", count = 2, variant = "cubic", start_spread = "0s" }]
[topology]
kind = "dumbbell"
access = { rate = "100Mbps", delay = "1ms" }
bottleneck = { rate = "10Mbps", delay = "5ms" }
"#;

/// The command, with no calibration of this machine in sight: the tests
/// assume the built-in rate guard, whatever a user's calibration says (those
/// about the calibration point it at their own file).
fn aqmlab() -> Command {
    let mut c = Command::new(BIN);
    c.env(
        "AQMLAB_EMULATE_CALIBRATION",
        "/nonexistent/aqmlab-tests/emulate-calibration.json",
    );
    c
}

fn root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("CapEff:"))
                .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        })
        .is_some_and(|caps| caps & (1 << 12) != 0)
        && Path::new("/dev/net/tun").exists()
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

/// `--app` without a command, a command without `--app`, and `--app` naming no
/// group of the scenario are usage errors (exit 2) that say what is wrong,
/// before anything starts.
#[test]
fn app_and_its_commands_are_checked_before_anything_starts() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "s.toml", SMALL);
    for (args, needle) in [
        (vec!["--app", "bulk"], "--app bulk needs a command to run"),
        (
            vec!["--app", "bulk", "--compare", "--", "true"],
            "no simulated counterpart",
        ),
        (vec!["--", "true"], "--app <GROUP>"),
        (vec!["--receiver-cmd", "true"], "--app <GROUP>"),
        (
            vec!["--app", "web", "--", "true"],
            "no flow group named \"web\"",
        ),
    ] {
        let out = aqmlab()
            .args(["emulate", &path])
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

/// A scenario the emulator cannot honour is refused before anything starts:
/// one line naming the key and its line, exit 2 (no privilege needed to say so).
#[test]
fn a_graph_or_a_rate_too_high_is_refused_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let fast = SMALL.replace(r#"rate = "10Mbps""#, r#"rate = "10Gbps""#);
    let web = SMALL.replace(r#"kind = "tcp""#, r#"kind = "web", object_size = 10"#);
    for (text, needle) in [
        (fast.as_str(), "topology.bottleneck.rate"),
        (web.as_str(), "flows[0].kind = \"web\""),
    ] {
        let path = write(dir.path(), "s.toml", text);
        let out = aqmlab()
            .args(["emulate", &path])
            .env("AQMLAB_EMULATE_CALIBRATION", dir.path().join("none.json"))
            .output()
            .unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(needle), "{err}");
        assert!(err.contains("s.toml:"), "names the file and line: {err}");
    }
}

/// A calibration as `--calibrate` keeps it, with the limit `rate_bps`, made
/// on this machine by this aqmlab or (`elsewhere`) by another version.
fn calibration(rate_bps: u64, elsewhere: bool) -> String {
    let kernel = Command::new("uname").arg("-r").output().unwrap().stdout;
    let version = if elsewhere {
        "0.0.0-other"
    } else {
        env!("CARGO_PKG_VERSION")
    };
    serde_json::json!({
        "rate_bps": rate_bps,
        "kept_any": true,
        "machine": {
            "cores": std::thread::available_parallelism().unwrap().get(),
            "kernel": String::from_utf8(kernel).unwrap().trim(),
            "aqmlab": version,
        },
        "measured_at_unix_s": 0,
        "steps": [],
    })
    .to_string()
}

/// The rate guard applies this machine's calibration: below the built-in
/// limit it refuses what the built-in allows, naming the file; one made by
/// another aqmlab is ignored for the built-in limit.
#[test]
fn the_rate_guard_applies_this_machines_calibration() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("calibration.json");
    let refusal = |scenario: &str, calibration: &str| {
        let path = write(dir.path(), "s.toml", scenario);
        std::fs::write(&file, calibration).unwrap();
        let out = aqmlab()
            .args(["emulate", &path, "--duration", "1s"])
            .env("AQMLAB_EMULATE_CALIBRATION", &file)
            .env_remove("AQMLAB_EMULATE_ANY_RATE")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8(out.stderr).unwrap())
    };
    let (code, err) = refusal(SMALL, &calibration(5_000_000, false));
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(
            "s.toml:9: topology.bottleneck.rate reaches 10000000 bit/s, above the 5 Mbit/s"
        ),
        "{err}"
    );
    assert!(err.contains("calibration.json"), "names the file: {err}");
    let fast = SMALL.replace(r#"rate = "10Mbps""#, r#"rate = "150Mbps""#);
    let (code, err) = refusal(&fast, &calibration(1_000_000_000, true));
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("above the 100 Mbit/s"), "{err}");
    assert!(
        err.contains("aqmlab emulate --calibrate"),
        "says how to measure: {err}"
    );
}

/// `--calibrate` measures rising rates until one is not kept, keeps the
/// limit where `AQMLAB_EMULATE_CALIBRATION` says, each rate's line on
/// stderr, and refuses a scenario beside it.
#[test]
fn calibrate_measures_rising_rates_and_keeps_the_last_kept() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("c.json");
    let out = aqmlab()
        .args(["emulate", "--calibrate", "s.toml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be used with"));
    if !root() {
        eprintln!("skipped: not root");
        return;
    }
    let out = aqmlab()
        .args(["emulate", "--calibrate", "--duration", "200ms", "--json"])
        .env("AQMLAB_EMULATE_CALIBRATION", &file)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let printed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let kept: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(printed, kept);
    let steps = kept["steps"].as_array().unwrap();
    assert_eq!(
        err.lines().filter(|l| l.contains("Mbit/s")).count(),
        steps.len(),
        "{err}"
    );
    let rates: Vec<u64> = steps
        .iter()
        .map(|s| s["rate_bps"].as_u64().unwrap())
        .collect();
    assert!(rates.windows(2).all(|w| w[0] < w[1]), "{rates:?}");
    let is_kept = |s: &serde_json::Value| {
        2 * s["kept_runs"].as_u64().unwrap() > s["utilization"].as_array().unwrap().len() as u64
    };
    // Every step but the last was kept; the limit is the last kept one.
    assert!(steps[..steps.len() - 1].iter().all(is_kept), "{kept}");
    let last_kept = steps.iter().rev().find(|s| is_kept(s));
    if let Some(s) = last_kept {
        assert_eq!(kept["rate_bps"], s["rate_bps"]);
    }
    assert_eq!(kept["kept_any"], last_kept.is_some());
}

/// Without CAP_NET_ADMIN: one line saying so, exit 2.
#[test]
fn without_cap_net_admin_it_says_so_and_exits_2() {
    if !root() {
        eprintln!("skipped: not root, so no capability to drop");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "s.toml", SMALL);
    // setpriv clears the capability from every set before exec.
    let out = Command::new("setpriv")
        .args([
            "--inh-caps=-net_admin",
            "--bounding-set=-net_admin",
            "--",
            BIN,
            "emulate",
            &path,
        ])
        .output();
    let Ok(out) = out else {
        eprintln!("skipped: setpriv is not installed");
        return;
    };
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("CAP_NET_ADMIN"), "{err}");
}

/// The network namespaces (`net:[inode]`) the threads of process `pid` are
/// in, and those its open descriptors hold.
fn namespaces_of(pid: u32) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let links = |dir: String, sub: &str| -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter_map(|e| {
                let path = if sub.is_empty() {
                    e.path()
                } else {
                    e.path().join(sub)
                };
                std::fs::read_link(path).ok()
            })
            .map(|l| l.to_string_lossy().into_owned())
            .filter(|l| l.starts_with("net:["))
            .collect()
    };
    out.extend(links(format!("/proc/{pid}/task"), "ns/net"));
    out.extend(links(format!("/proc/{pid}/fd"), ""));
    out
}

/// Every network namespace some thread of some process is in, or that is
/// mounted somewhere (as `ip netns add` keeps one).
fn live_namespaces() -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for p in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Some(pid) = p.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) {
            out.extend(namespaces_of(pid));
        }
    }
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    for l in mounts.lines() {
        if let Some(ns) = l
            .split_whitespace()
            .nth(3)
            .filter(|r| r.starts_with("net:["))
        {
            out.insert(ns.to_string());
        }
    }
    out
}

/// A run killed with SIGKILL leaves no namespace, device or mount: the next run
/// finds none of it, and runs.
#[test]
fn a_killed_run_leaves_nothing_behind() {
    if !root() {
        eprintln!("skipped: not root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let long = SMALL.replace(r#"duration = "1s""#, r#"duration = "60s""#);
    let path = write(dir.path(), "long.toml", &long);
    let mut child = aqmlab()
        .args(["emulate", &path])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let ours = namespaces_of(std::process::id());
    // Wait until it made its two namespaces.
    let t0 = Instant::now();
    let mut made = BTreeSet::new();
    while t0.elapsed() < Duration::from_secs(20) {
        made = namespaces_of(pid).difference(&ours).cloned().collect();
        if made.len() >= 2 {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(made.len() >= 2, "the run made its namespaces: {made:?}");
    std::thread::sleep(Duration::from_millis(500));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();

    let small = write(dir.path(), "small.toml", SMALL);
    let next = aqmlab()
        .args(["emulate", &small, "--json"])
        .output()
        .unwrap();
    assert!(
        next.status.success(),
        "{}",
        String::from_utf8_lossy(&next.stderr)
    );
    let live = live_namespaces();
    for ns in &made {
        assert!(!live.contains(ns), "{ns} of the killed run is still alive");
    }
    let devices = std::fs::read_to_string("/proc/net/dev").unwrap();
    assert!(!devices.contains(&format!("aq{pid}")), "{devices}");
    if let Ok(dir) = std::fs::read_dir("/run/netns") {
        for e in dir.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            assert!(!name.starts_with(&format!("aqmlab-{pid}-")), "{name}");
        }
    }
}

/// The scenario's no-op warnings are printed as `run` prints them, each naming
/// its key and line, before the run starts.
#[test]
fn it_prints_the_scenarios_warnings_as_run_does() {
    if !root() {
        eprintln!("skipped: not root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let codel = SMALL.replace(
        r#"qdisc = { kind = "droptail", limit = 50 }"#,
        r#"qdisc = { kind = "codel", target = "100ms", interval = "100ms" }"#,
    );
    let path = write(dir.path(), "s.toml", &codel);
    let warning = |cmd: &str| {
        let out = aqmlab()
            .args([cmd, &path, "--json", "-q"])
            .output()
            .unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(out.status.success(), "{cmd}: {err}");
        err.lines()
            .find(|l| l.contains("target = 100ms"))
            .map(str::to_string)
    };
    let from_run = warning("run").expect("run warns");
    assert!(from_run.contains("s.toml:"), "{from_run}");
    assert_eq!(warning("emulate"), Some(from_run));
}

/// SIGINT stops an emulation with status 130, as it stops `run` and `sweep`,
/// after it removed what it made.
#[test]
fn sigint_exits_130() {
    if !root() {
        eprintln!("skipped: not root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let long = SMALL.replace(r#"duration = "1s""#, r#"duration = "30s""#);
    let path = write(dir.path(), "long.toml", &long);
    let child = aqmlab()
        .args(["emulate", &path])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let t0 = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(t0.elapsed() < Duration::from_secs(10));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted"), "{err}");
}

/// An `--out` that cannot be written is an error before the emulation spends
/// its wall-clock time, not after (a file where the folder should be made, a
/// folder on a read-only mount).
#[test]
fn an_out_that_cannot_be_written_is_refused_before_emulating() {
    if !root() {
        eprintln!("skipped: not root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let long = SMALL.replace(r#"duration = "1s""#, r#"duration = "20s""#);
    let path = write(dir.path(), "long.toml", &long);
    std::fs::write(dir.path().join("file"), "").unwrap();
    let ro = dir.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "ro,size=1m", "tmpfs"])
        .arg(&ro)
        .status()
        .is_ok_and(|s| s.success());
    let mut outs = vec![dir.path().join("file").join("sub")];
    if mounted {
        outs.push(ro.join("results"));
    }
    for out in &outs {
        let t0 = Instant::now();
        let o = aqmlab()
            .args(["emulate", &path, "--out"])
            .arg(out)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{}: {err}", out.display());
        assert!(err.contains("--out"), "{err}");
        assert!(t0.elapsed() < Duration::from_secs(10), "{}", out.display());
    }
    if mounted {
        let _ = Command::new("umount").arg(&ro).status();
    }
    assert!(mounted, "a read-only tmpfs could not be mounted");
}

/// A run that cannot keep time (a 100 Gbit/s bottleneck: a packet time of
/// 120 ns, shorter than one write to a TUN device) says so: a warning, the
/// summary's `kept_time` false; with `--strict` it is an error, exit 1, and no
/// table is written.
#[test]
fn a_run_that_did_not_keep_time_says_so_and_strict_refuses_it() {
    if !root() {
        eprintln!("skipped: not root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let fast = SMALL.replace(r#"rate = "10Mbps""#, r#"rate = "100Gbps""#);
    let path = write(dir.path(), "fast.toml", &fast);
    let emulate = |extra: &[&str]| {
        aqmlab()
            .args(["emulate", &path, "-q", "--duration", "1s", "--warmup", "0s"])
            .args(extra)
            .env("AQMLAB_EMULATE_ANY_RATE", "1")
            .output()
            .unwrap()
    };
    let out = emulate(&["--json"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("time was not kept"), "{err}");
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["emulation"]["kept_time"], false, "{summary}");
    assert!(summary["emulation"]["late_share"].as_f64().unwrap() > 0.01);

    let tables = dir.path().join("tables");
    let out = emulate(&["--strict", "--out", tables.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("--strict: the emulation did not keep time"),
        "{err}"
    );
    let written: Vec<_> = std::fs::read_dir(&tables)
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(written.is_empty(), "{written:?}");
}

/// `--set` works as in `run`: the emulated scenario is the one set, and the
/// tables carry its column, as a run's do.
#[test]
fn set_changes_the_emulated_scenario_and_labels_its_tables() {
    if !root() {
        eprintln!("skipped: not root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "s.toml", SMALL);
    let tables = dir.path().join("tables");
    let out = aqmlab()
        .args(["emulate", &path, "-q", "--json", "--set", "qdisc.kind=pie"])
        .args(["--out", tables.to_str().unwrap(), "--format", "csv"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["links"][0]["qdisc"], "pie", "{summary}");
    let links = std::fs::read_to_string(tables.join("links.csv")).unwrap();
    let header = links.lines().next().unwrap();
    assert!(header.starts_with("scenario,qdisc.kind,seed,"), "{header}");
    assert!(links.lines().nth(1).unwrap().contains(",pie,"), "{links}");

    let bad = aqmlab()
        .args(["emulate", &path, "-q", "--set", "qdisc.nope=1"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("qdisc.nope"));
}
