//! The bottleneck rate up to which the emulator keeps time on this machine:
//! measured by `aqmlab emulate --calibrate`, kept in a file, read by the rate
//! guard ([`crate::check`]).
//!
//! A machine is measured with the scenario BENCHMARKS.md measures ("Emulation"):
//! four CUBIC flows of 1500-byte packets through a DropTail bottleneck of one
//! bandwidth-delay product (10 ms round trip), at rising rates. A rate is kept
//! when most of its runs kept time (p99 lateness within one packet time, every
//! event handled) and filled the link (utilization 0.95 or more); the limit is
//! the highest rate kept before the first that was not. The measurement holds
//! for the machine it was made on (its cores, its kernel) and the aqmlab that
//! made it; for any other, the guard falls back to [`BUILT_IN_RATE_BPS`].

use crate::EmuError;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// The rate the emulator keeps time at on the shared 2-core machine of
/// BENCHMARKS.md ("Emulation"), for a machine not measured.
pub const BUILT_IN_RATE_BPS: u64 = 100_000_000;
/// The rates a calibration tries, Mbit/s, in order.
pub const RATES_MBPS: [u64; 9] = [10, 50, 100, 150, 200, 300, 500, 700, 1000];
/// Runs per rate; a rate is kept when most of them kept time.
pub const RUNS: usize = 3;
/// The least utilization of a run that kept time.
pub const MIN_UTILIZATION: f64 = 0.95;

/// Where the rate guard's limit comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum Limit {
    /// This machine's calibration, in the file at `path`.
    Measured { rate_bps: u64, path: PathBuf },
    /// No calibration of this machine: [`BUILT_IN_RATE_BPS`].
    BuiltIn,
    /// No limit (`AQMLAB_EMULATE_ANY_RATE=1`, or a calibration under way).
    Lifted,
}

impl Limit {
    /// The limit for this process: lifted by `AQMLAB_EMULATE_ANY_RATE=1`, else
    /// this machine's calibration when there is one, else the built-in rate.
    pub fn current() -> Limit {
        if std::env::var_os("AQMLAB_EMULATE_ANY_RATE").is_some_and(|v| v == "1") {
            return Limit::Lifted;
        }
        path().map_or(Limit::BuiltIn, Limit::from_file)
    }

    /// The calibration in the file at `path` if it was made on this machine by
    /// this aqmlab, else the built-in rate.
    pub fn from_file(path: PathBuf) -> Limit {
        match read(&path) {
            Ok(c) if c.machine == Machine::this() => Limit::Measured {
                rate_bps: c.rate_bps,
                path,
            },
            _ => Limit::BuiltIn,
        }
    }

    /// The highest bottleneck rate allowed, bit/s (`None`: any).
    pub fn rate_bps(&self) -> Option<u64> {
        match self {
            Limit::Measured { rate_bps, .. } => Some(*rate_bps),
            Limit::BuiltIn => Some(BUILT_IN_RATE_BPS),
            Limit::Lifted => None,
        }
    }

    /// Where the limit comes from and how to move it, for the guard's refusal.
    pub fn explain(&self) -> String {
        match self {
            Limit::Measured { path, .. } => format!(
                "this machine was measured to keep (aqmlab emulate --calibrate, {}); \
                 AQMLAB_EMULATE_ANY_RATE=1 lifts the limit",
                path.display()
            ),
            _ => "the emulator keeps on a shared 2-core machine (BENCHMARKS.md); measure \
                  this machine's with aqmlab emulate --calibrate, or set \
                  AQMLAB_EMULATE_ANY_RATE=1 to lift the limit"
                .into(),
        }
    }
}

/// What a calibration found, as its file holds it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// The highest rate kept, bit/s (the lowest tried when none was).
    pub rate_bps: u64,
    /// Whether any rate was kept.
    pub kept_any: bool,
    pub machine: Machine,
    /// When it was measured, seconds since the Unix epoch.
    pub measured_at_unix_s: u64,
    pub steps: Vec<Step>,
}

/// What a calibration holds for: the machine and the aqmlab that measured it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Machine {
    pub cores: usize,
    /// The kernel's release (`uname -r`).
    pub kernel: String,
    pub aqmlab: String,
}

impl Machine {
    pub fn this() -> Machine {
        Machine {
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            kernel: kernel_release(),
            aqmlab: env!("CARGO_PKG_VERSION").into(),
        }
    }
}

/// One rate's runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Step {
    pub rate_bps: u64,
    pub packet_time_s: f64,
    pub utilization: Vec<f64>,
    pub lateness_p99_s: Vec<f64>,
    /// How many of the runs kept time and filled the link.
    pub kept_runs: usize,
}

impl Step {
    /// Whether most of the runs kept time.
    pub fn kept(&self) -> bool {
        2 * self.kept_runs > self.utilization.len()
    }
}

/// The calibration file: `AQMLAB_EMULATE_CALIBRATION` when set, else
/// `aqmlab/emulate-calibration.json` in `$XDG_CACHE_HOME` or `~/.cache`.
pub fn path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("AQMLAB_EMULATE_CALIBRATION") {
        return Some(PathBuf::from(p));
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(cache.join("aqmlab").join("emulate-calibration.json"))
}

/// Reads a calibration file.
pub fn read(path: &Path) -> Result<Calibration, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Writes `c` to `path` whole or not at all (a temporary file, renamed).
pub fn write(c: &Calibration, path: &Path) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension(format!("tmp.{}", std::process::id()));
    let text = serde_json::to_string_pretty(c).expect("a calibration serializes");
    std::fs::write(&tmp, text + "\n")?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// The scenario a calibration runs at `mbps`: `measured_ms` after a warm-up of
/// half a second.
pub fn scenario(mbps: u64, measured_ms: u64) -> String {
    // One bandwidth-delay product at a 10 ms round trip, at least 50 packets.
    let limit = (mbps * 1_000_000 / 100 / 8 / 1500).max(50);
    format!(
        "name = \"calibrate-{mbps}mbps\"\nduration = \"{d}ms\"\nwarmup = \"500ms\"\n\
         qdisc = {{ kind = \"droptail\", limit = {limit} }}\n\
         [topology]\nkind = \"dumbbell\"\n\
         access = {{ rate = \"10Gbps\", delay = \"0ms\" }}\n\
         bottleneck = {{ rate = \"{mbps}Mbps\", delay = \"5ms\" }}\n\
         [[flows]]\nname = \"bulk\"\nkind = \"tcp\"\ncount = 4\nvariant = \"cubic\"\n\
         packet_size = 1500\nmax_window = 100000\nstart_spread = \"0s\"\n\
         [monitor]\nqueue_interval = \"0s\"\n",
        d = measured_ms + 500
    )
}

/// The time each calibration run is measured for, by default.
pub const MEASURED_MS: u64 = 3000;

/// Each run's measured time, ms: `--duration`'s text, or [`MEASURED_MS`].
pub fn measured_ms(duration: Option<&str>) -> Result<u64, String> {
    let Some(text) = duration else {
        return Ok(MEASURED_MS);
    };
    let d = aqm::units::parse_dur(text).map_err(|e| format!("--duration {text}: {e}"))?;
    if d < crate::check::MIN_DURATION {
        return Err(format!(
            "--duration {text}: a calibration run needs at least 100ms"
        ));
    }
    Ok(d.as_nanos() / 1_000_000)
}

/// Measures this machine ([`calibrate`]) and keeps the result in the file of
/// [`path`]; returns it and the file.
pub fn calibrate_and_keep(
    measured_ms: u64,
    stop: Arc<AtomicBool>,
    progress: &mut dyn FnMut(&Step),
) -> Result<(Calibration, PathBuf), EmuError> {
    let path = path().ok_or_else(|| {
        EmuError::Calibration(
            "nowhere to keep it: set AQMLAB_EMULATE_CALIBRATION, XDG_CACHE_HOME or HOME".into(),
        )
    })?;
    if !crate::netns::privileged() {
        return Err(EmuError::NotPermitted);
    }
    let c = calibrate(measured_ms, stop, progress)?;
    write(&c, &path)
        .map_err(|e| EmuError::Calibration(format!("writing {}: {e}", path.display())))?;
    Ok((c, path))
}

/// One rate's line of the calibration's table.
pub fn step_line(s: &Step) -> String {
    let runs: Vec<String> = s
        .utilization
        .iter()
        .zip(&s.lateness_p99_s)
        .map(|(u, l)| format!("{u:.3} / {:.0} us", l * 1e6))
        .collect();
    format!(
        "{:>5} Mbit/s  packet time {:>6.1} us  {}  {}",
        s.rate_bps / 1_000_000,
        s.packet_time_s * 1e6,
        if s.kept() { "kept    " } else { "not kept" },
        runs.join(", ")
    )
}

/// What a calibration found, for the terminal: the limit and where it is kept.
pub fn summary(c: &Calibration, path: &Path) -> String {
    let rate = c.rate_bps / 1_000_000;
    let found = if c.kept_any {
        format!("this machine keeps time up to {rate} Mbit/s")
    } else {
        format!(
            "this machine kept time at no rate tried; the limit is the lowest, {rate} Mbit/s \
             (a busy machine? try again when it is quieter)"
        )
    };
    format!(
        "{found}: the rate guard of aqmlab emulate now allows bottlenecks up to it \
         (kept in {})\n",
        path.display()
    )
}

/// Measures this machine: each rate of [`RATES_MBPS`] [`RUNS`] times,
/// `measured_ms` each, until one is not kept. `progress` sees each rate's runs.
pub fn calibrate(
    measured_ms: u64,
    stop: Arc<AtomicBool>,
    progress: &mut dyn FnMut(&Step),
) -> Result<Calibration, EmuError> {
    let mut steps = Vec::new();
    for mbps in RATES_MBPS {
        let text = scenario(mbps, measured_ms);
        let s = sim::Scenario::from_toml(&text, "calibration")
            .map_err(|e| EmuError::Traffic(format!("the calibration's scenario: {e}")))?;
        let mut step = Step {
            rate_bps: mbps * 1_000_000,
            packet_time_s: 1500.0 * 8.0 / (mbps as f64 * 1e6),
            utilization: Vec::new(),
            lateness_p99_s: Vec::new(),
            kept_runs: 0,
        };
        for _ in 0..RUNS {
            let opts = crate::Options {
                limit: Some(Limit::Lifted),
                ..crate::Options::default()
            };
            let r = crate::emulate_with(&s, &opts, stop.clone())?.result;
            let e = r
                .emulation
                .as_ref()
                .expect("an emulation reports its timing");
            let util = r.links.first().map_or(0.0, |l| l.utilization);
            step.utilization.push(util);
            step.lateness_p99_s.push(e.lateness_p99_s);
            if e.kept_time && util >= MIN_UTILIZATION {
                step.kept_runs += 1;
            }
        }
        progress(&step);
        let kept = step.kept();
        steps.push(step);
        if !kept {
            break;
        }
    }
    Ok(summarize(steps))
}

/// The limit the steps measured: the highest rate kept before the first that
/// was not (the lowest tried when none was).
pub fn summarize(steps: Vec<Step>) -> Calibration {
    let kept: Vec<&Step> = steps.iter().take_while(|s| s.kept()).collect();
    let rate_bps = kept
        .last()
        .or(steps.first().as_ref())
        .map_or(RATES_MBPS[0] * 1_000_000, |s| s.rate_bps);
    Calibration {
        rate_bps,
        kept_any: !kept.is_empty(),
        machine: Machine::this(),
        measured_at_unix_s: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        steps,
    }
}

fn kernel_release() -> String {
    // SAFETY: uname fills the zeroed struct; its fields are NUL-terminated.
    unsafe {
        let mut u: libc::utsname = std::mem::zeroed();
        if libc::uname(&mut u) != 0 {
            return String::new();
        }
        std::ffi::CStr::from_ptr(u.release.as_ptr())
            .to_string_lossy()
            .into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(mbps: u64, kept_runs: usize) -> Step {
        Step {
            rate_bps: mbps * 1_000_000,
            packet_time_s: 1500.0 * 8.0 / (mbps as f64 * 1e6),
            utilization: vec![1.0; RUNS],
            lateness_p99_s: vec![0.0; RUNS],
            kept_runs,
        }
    }

    /// The limit is the highest rate kept by most of its runs before the
    /// first that was not; with none kept, the lowest tried, and it says so.
    #[test]
    fn the_limit_is_the_last_rate_most_runs_kept() {
        let c = summarize(vec![step(10, 3), step(50, 2), step(100, 1)]);
        assert_eq!((c.rate_bps, c.kept_any), (50_000_000, true));
        let c = summarize(vec![step(10, 1)]);
        assert_eq!((c.rate_bps, c.kept_any), (10_000_000, false));
    }

    /// A calibration is written whole and read back; one made on another
    /// machine (or by another aqmlab) is not this machine's.
    #[test]
    fn a_calibration_round_trips_and_names_its_machine() {
        let dir = std::env::temp_dir().join(format!("aqmlab-calib-{}", std::process::id()));
        let path = dir.join("sub").join("c.json");
        let c = summarize(vec![step(10, 3), step(50, 3)]);
        write(&c, &path).unwrap();
        assert_eq!(read(&path).unwrap(), c);
        assert!(c.machine.cores >= 1 && !c.machine.kernel.is_empty());
        let measured = Limit::from_file(path.clone());
        assert_eq!(measured.rate_bps(), Some(50_000_000));
        let mut elsewhere = c.clone();
        elsewhere.machine.cores += 1;
        write(&elsewhere, &path).unwrap();
        assert_eq!(Limit::from_file(path.clone()), Limit::BuiltIn);
        let leftovers: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(leftovers, vec![std::ffi::OsString::from("c.json")]);
        std::fs::write(&path, "{ not json").unwrap();
        assert!(read(&path).unwrap_err().contains("c.json"));
        assert_eq!(Limit::from_file(path.clone()), Limit::BuiltIn);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The calibration's scenario is one the emulator accepts, its buffer
    /// one bandwidth-delay product.
    #[test]
    fn the_calibration_scenario_is_a_valid_dumbbell() {
        for mbps in RATES_MBPS {
            let s = sim::Scenario::from_toml(&scenario(mbps, 3000), "c").unwrap();
            crate::check::plan_within(&s, &Limit::Lifted).unwrap();
        }
        assert!(scenario(300, 3000).contains("limit = 250 "));
    }
}
