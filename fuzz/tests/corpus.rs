//! The fuzz targets as ordinary tests, on stable Rust with no fuzzer installed:
//! every input of `fuzz/corpus/<target>/` (the seeds and what the fuzzing runs of
//! `docs/testing.md` kept) is run through its target (tests/random.rs adds
//! fixed pseudo-random inputs). A crash a fuzzer finds is saved in
//! `fuzz/crashes/<target>/` while it is open (replayed by `open_findings` below),
//! and moves to the corpus when it is fixed, where it stays a regression test.

use aqmlab_fuzz::{engine, Target, TARGETS};
use std::fs;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = match fs::read_dir(dir) {
        Ok(entries) => entries
            .map(|e| e.expect("a readable entry").path())
            .filter(|p| p.is_file() && p.file_name().is_some_and(|n| n != "README.md"))
            .collect(),
        Err(_) => Vec::new(),
    };
    out.sort();
    out
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// Runs `target` on `path`; a failure names the file, so it can be replayed alone
/// with `cargo fuzz run --fuzz-dir fuzz/libfuzzer -s none <target> <path>`.
fn replay(name: &str, target: Target, path: &Path) -> Result<(), String> {
    let data = fs::read(path).expect("a readable corpus file");
    catch_unwind(AssertUnwindSafe(|| target(&data))).map_err(|e| {
        let msg = e
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        format!("{name} {}: {msg}", path.display())
    })
}

fn replay_corpus(name: &str) {
    let (_, target) = TARGETS.iter().find(|(n, _)| *n == name).unwrap();
    let inputs = files(&root().join("corpus").join(name));
    assert!(!inputs.is_empty(), "fuzz/corpus/{name} is empty");
    let failures: Vec<String> = inputs
        .iter()
        .filter_map(|p| replay(name, *target, p).err())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn scenario_corpus() {
    replay_corpus("scenario");
}

#[test]
fn qdisc_corpus() {
    replay_corpus("qdisc");
}

#[test]
fn engine_corpus() {
    replay_corpus("engine");
}

/// The engine target skips what its generator draws outside the valid set; most
/// of its corpus must really run, or the target tests nothing.
#[test]
fn most_of_the_engine_corpus_runs() {
    let inputs = files(&root().join("corpus/engine"));
    let ran = inputs
        .iter()
        .filter(|p| engine::run_checked(&fs::read(p).unwrap()) == engine::Outcome::Ran)
        .count();
    assert!(
        ran * 2 >= inputs.len(),
        "only {ran} of {} engine inputs ran",
        inputs.len()
    );
}

/// The open findings of the fuzzers, each a file in `fuzz/crashes/<target>/`
/// (listed in `fuzz/crashes/README.md`): none may stay open on main, so CI
/// replays them; a fixed one moves to `fuzz/corpus/<target>/`. (An input that
/// aborts, out of memory, ends the test binary itself; `cargo fuzz run` reports
/// those one at a time.)
#[test]
fn open_findings() {
    let mut failures = Vec::new();
    for (name, target) in TARGETS {
        for p in files(&root().join("crashes").join(name)) {
            if let Err(e) = replay(name, *target, &p) {
                failures.push(e);
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
