//! libFuzzer entry for the `scenario` target; the target itself is
//! `aqmlab_fuzz::scenario::run`, which `cargo test -p aqmlab-fuzz` replays.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| aqmlab_fuzz::scenario::run(data));
