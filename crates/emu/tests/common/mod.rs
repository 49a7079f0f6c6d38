//! Shared by the emulator's tests: whether they can run here, and a runner.
#![allow(dead_code)]

use sim::{RunResult, Scenario};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

/// Emulations share the machine's CPU: one at a time keeps their timing honest.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Why these tests cannot run here, if they cannot.
pub fn cannot_run() -> Option<&'static str> {
    if !emu::netns::privileged() {
        return Some("not root (needs CAP_NET_ADMIN and CAP_SYS_ADMIN)");
    }
    if !std::path::Path::new("/dev/net/tun").exists() {
        return Some("/dev/net/tun is missing");
    }
    None
}

/// Returns early from a test, saying why, where emulation cannot run.
#[macro_export]
macro_rules! require_emulation {
    () => {
        if let Some(why) = common::cannot_run() {
            eprintln!("skipped: {why}");
            return;
        }
    };
}

pub fn scenario(text: &str) -> Scenario {
    Scenario::from_toml(text, "test.toml").unwrap()
}

pub fn emulate(text: &str) -> RunResult {
    emulate_scenario(&scenario(text)).unwrap()
}

/// The options every test runs with: the built-in rate guard, whatever this
/// machine's calibration file says (a user's low calibration must not make a
/// test refuse its scenario).
pub fn options() -> emu::Options {
    emu::Options {
        limit: Some(emu::calibrate::Limit::BuiltIn),
        ..Default::default()
    }
}

/// Emulates `s`, one emulation at a time.
pub fn emulate_scenario(s: &Scenario) -> Result<RunResult, emu::EmuError> {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    emu::emulate_with(s, &options(), Arc::new(AtomicBool::new(false))).map(|e| e.result)
}

/// [`emulate`], run again (up to three times in all) while the run says it
/// did not keep time: the shared machine's load is not what a test of timing
/// asks about, and a run that never keeps time still fails the caller's check.
pub fn emulate_keeping_time(text: &str) -> RunResult {
    let mut result = emulate(text);
    for _ in 1..3 {
        let late = result.emulation.as_ref().is_some_and(|e| !e.kept_time);
        if !late {
            break;
        }
        eprintln!("the run did not keep time (a loaded machine?): running it again");
        result = emulate(text);
    }
    result
}

pub fn simulate(text: &str) -> RunResult {
    sim::run_scenario(&scenario(text), &mut |_| {}).unwrap()
}

/// [`emulate`], with the senders' namespace's `TcpExt` counters.
pub fn emulate_counted(text: &str) -> emu::Emulated {
    let s = scenario(text);
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    emu::emulate_with(&s, &options(), Arc::new(AtomicBool::new(false))).unwrap()
}
