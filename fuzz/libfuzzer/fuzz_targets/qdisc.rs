//! libFuzzer entry for the `qdisc` target; the target itself is
//! `aqmlab_fuzz::qdisc::run`, which `cargo test -p aqmlab-fuzz` replays.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| aqmlab_fuzz::qdisc::run(data));
