#![cfg(unix)]

//! Paths as the system has them, and memory refused before it is allocated: a
//! scenario in a folder whose name is not UTF-8 runs, and errors write such a path
//! lossily; a qdisc whose tables do not fit under `AQMLAB_MEMORY_LIMIT` is refused
//! at its key's line, before anything is built.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::process::Command;

const EXAMPLE: &str = include_str!("../../../scenarios/choke-fig3.toml");

#[test]
fn a_scenario_in_a_folder_named_with_byte_0xff_runs() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join(OsStr::from_bytes(b"runs-\xff"));
    std::fs::create_dir(&folder).unwrap();
    let file = folder.join("s.toml");
    std::fs::write(&file, EXAMPLE).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_aqmlab"))
        .arg("run")
        .arg(&file)
        .args([
            "--duration",
            "2s",
            "--warmup",
            "1s",
            "--json",
            "-q",
            "--out",
        ])
        .arg(folder.join("out"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["scenario"], "choke-fig3");
    assert!(folder.join("out").join("summary.json").is_file());

    // A missing one is named lossily, on one line.
    let missing = folder.join("missing.toml");
    let out = Command::new(env!("CARGO_BIN_EXE_aqmlab"))
        .arg("run")
        .arg(&missing)
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).expect("errors are UTF-8");
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("runs-\u{fffd}/missing.toml: cannot read scenario file"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

#[test]
fn qdisc_tables_over_the_memory_limit_are_refused_at_their_key() {
    // SFB's largest table of bins: 2 sets of 32 x 32,768 bins, tens of MiB for one
    // link, under a limit of 40 MiB that the rest of the run fits in many times.
    let text = "name = \"big-bins\"\nduration = \"1s\"\n[topology]\nkind = \"dumbbell\"\n\
                access = { rate = \"1Gbps\", delay = \"1ms\" }\n\
                bottleneck = { rate = \"1Gbps\", delay = \"1ms\" }\n\
                [qdisc]\nkind = \"sfb\"\nlevels = 32\nbins = 32768\n\
                [[flows]]\nname = \"t\"\nkind = \"tcp\"\ncount = 2\n";
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.toml");
    std::fs::write(&file, text).unwrap();
    let run = |limit: &str| {
        Command::new(env!("CARGO_BIN_EXE_aqmlab"))
            .arg("run")
            .arg(&file)
            .arg("-q")
            .env("AQMLAB_MEMORY_LIMIT", limit)
            .output()
            .unwrap()
    };
    let out = run("40MiB");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("s.toml:10: qdisc.bins = 32768 gives sfb's tables "),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(out.stdout.is_empty());
    // With room for them, the same scenario runs.
    let out = run("1GiB");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
