//! libFuzzer entry for the `engine` target; the target itself is
//! `aqmlab_fuzz::engine::run`, which `cargo test -p aqmlab-fuzz` replays.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| aqmlab_fuzz::engine::run(data));
