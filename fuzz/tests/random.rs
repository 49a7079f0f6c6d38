//! Fixed pseudo-random inputs through every target: cheap breadth beside the
//! corpus replay (tests/corpus.rs). A test binary of its own because it steps over
//! the open findings of `fuzz/crashes/` (random bytes find some of them at once),
//! which is a setting for the whole process.

use aqmlab_fuzz::TARGETS;
use std::fs;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

fn corpus(name: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join(name);
    let mut out: Vec<PathBuf> = fs::read_dir(dir)
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    out.sort();
    out
}

/// SplitMix64: a fixed stream of test inputs, the same on every machine.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A few hundred fixed pseudo-random inputs per target, and the same inputs
/// spliced into corpus files: cheap breadth beside the corpus.
#[test]
fn random_inputs() {
    aqmlab_fuzz::skip_known_findings();
    let mut state = 16;
    for (name, target) in TARGETS {
        let corpus = corpus(name);
        let count = if *name == "engine" { 40 } else { 300 };
        for i in 0..count {
            let len = (splitmix(&mut state) % 1024) as usize;
            let mut data: Vec<u8> = (0..len).map(|_| splitmix(&mut state) as u8).collect();
            if i % 2 == 1 && !corpus.is_empty() {
                // Corpus file with its tail replaced: valid heads, random tails.
                let base = fs::read(&corpus[i % corpus.len()]).unwrap();
                let cut = (splitmix(&mut state) as usize) % (base.len() + 1);
                data = [&base[..cut], &data[..]].concat();
            }
            let seen = format!("input {i} (seed 16)");
            catch_unwind(AssertUnwindSafe(|| target(&data)))
                .unwrap_or_else(|_| panic!("{name}: random {seen} crashed: {data:?}"));
        }
    }
}
