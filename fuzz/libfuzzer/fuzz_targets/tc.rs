//! libFuzzer entry for the `tc` target; the target itself is
//! `aqmlab_fuzz::tc::run`, which `cargo test -p aqmlab-fuzz` replays.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| aqmlab_fuzz::tc::run(data));
