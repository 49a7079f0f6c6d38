//! # aqmlab_fuzz: the fuzz targets, as plain functions of bytes
//!
//! Each target takes any `&[u8]` and panics only on a bug: a panic inside the
//! crates, or a property the target checks failing. The same functions run under
//! libFuzzer (`fuzz/libfuzzer`, one binary per target) and in `cargo test`
//! (`tests/corpus.rs` replays every file of `fuzz/corpus/<target>/`), so a crash a
//! fuzzer found stays a regression test on stable Rust with no fuzzer installed.
//!
//! ## Map
//! - [`scenario`]: any bytes through `Scenario::from_toml` and `from_json`: an
//!   error or a valid scenario; a valid one small enough is built and run briefly.
//! - [`qdisc`]: every qdisc under arbitrary parameters and operation sequences:
//!   conservation of packets and bytes, the limit, packet identity, no panic.
//! - [`engine`]: small random valid scenarios, generated structurally: no panic,
//!   per-link conservation, determinism across two runs.
//! - [`tc`]: any bytes as a tc command line: an error, or a table that reads back
//!   as the same spec and builds.
//! - [`gen`]: the parameter generator the `qdisc` and `engine` targets share.
//!
//! `docs/testing.md` says how to run them and records the runs.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

pub mod engine;
pub mod gen;
pub mod qdisc;
pub mod scenario;
pub mod tc;

static SKIP_KNOWN: AtomicBool = AtomicBool::new(false);

/// Whether to step over the open findings already saved in `fuzz/crashes/`, so a
/// fuzzing session or a random test looks for new bugs instead of finding the
/// same one every second: set by the environment (`AQMLAB_FUZZ_SKIP_KNOWN=1`, for
/// `cargo fuzz run`) or by [`skip_known_findings`]. The corpus replay never sets
/// it, and the replay of `fuzz/crashes/` checks each finding in full. Fixing a
/// finding removes its exception from the target.
pub fn skip_known() -> bool {
    static FROM_ENV: OnceLock<bool> = OnceLock::new();
    SKIP_KNOWN.load(Ordering::Relaxed)
        || *FROM_ENV
            .get_or_init(|| std::env::var_os("AQMLAB_FUZZ_SKIP_KNOWN").is_some_and(|v| v == "1"))
}

/// Steps over the open findings from now on, in this process (see [`skip_known`]).
pub fn skip_known_findings() {
    SKIP_KNOWN.store(true, Ordering::Relaxed);
}

/// A fuzz target: any bytes; it panics only on a bug.
pub type Target = fn(&[u8]);

/// The targets by name, as the corpus folders and the libFuzzer binaries call them.
pub const TARGETS: &[(&str, Target)] = &[
    ("scenario", scenario::run),
    ("qdisc", qdisc::run),
    ("engine", engine::run),
    ("tc", tc::run),
];
