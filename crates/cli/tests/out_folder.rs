//! `aqmlab run --out`: what is in the folder beside the results is never lost.
//! Nothing is renamed over a device, FIFO or symbolic link; two writers of one
//! folder take turns; a file aqmlab did not write is never removed or replaced;
//! an empty `--out` is a usage error.

use std::fs::File;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn aqmlab_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_aqmlab"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("aqmlab runs")
}

const RUN: [&str; 5] = ["run", "--duration", "21s", "--quiet", "--out"];

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    v.sort();
    v
}

#[test]
fn an_empty_out_is_a_usage_error_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("flows.csv"), "mine").unwrap();
    let out = aqmlab_in(dir.path(), &[&RUN[..], &[""]].concat());
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--out"), "{err}");
    assert_eq!(names(dir.path()), ["flows.csv"]);
    // And what the library is given, however it came.
    let e = aqmlab_cli::output::check_out_dir(Path::new(""), aqmlab_cli::output::Format::Csv);
    assert!(e.unwrap_err().contains("an empty path"));
}

#[test]
fn files_aqmlab_did_not_write_are_never_removed_or_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The user's own table of the name a CSV run writes: refused before the run.
    std::fs::write(d.join("flows.csv"), "mine").unwrap();
    std::fs::write(d.join("notes.txt"), "mine").unwrap();
    let out = aqmlab_in(d, &[&RUN[..], &[".", "--format", "csv"]].concat());
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("flows.csv was not written by aqmlab"), "{err}");
    assert_eq!(names(d), ["flows.csv", "notes.txt"]);
    // A Parquet run beside them: a warning, and both left as they were (an
    // earlier aqmlab's stale CSV tables go; the user's do not).
    let out = aqmlab_in(d, &[&RUN[..], &["."]].concat());
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("holds files aqmlab did not write (flows.csv, notes.txt)"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(d.join("flows.csv")).unwrap(),
        "mine"
    );
    assert_eq!(
        std::fs::read_to_string(d.join("notes.txt")).unwrap(),
        "mine"
    );
    assert!(d.join("flows.parquet").is_file() && d.join("summary.json").is_file());
}

#[test]
fn a_symbolic_link_or_device_in_the_folder_is_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let o = out_dir.to_str().unwrap();
    assert!(aqmlab_in(dir.path(), &[&RUN[..], &[o]].concat())
        .status
        .success());
    // The user points two of the tables elsewhere: a file, and the null device.
    let elsewhere = dir.path().join("kept.parquet");
    std::fs::remove_file(out_dir.join("flows.parquet")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, out_dir.join("flows.parquet")).unwrap();
    std::fs::remove_file(out_dir.join("links.parquet")).unwrap();
    std::os::unix::fs::symlink("/dev/null", out_dir.join("links.parquet")).unwrap();
    assert!(aqmlab_in(dir.path(), &[&RUN[..], &[o]].concat())
        .status
        .success());
    let link = std::fs::symlink_metadata(out_dir.join("flows.parquet")).unwrap();
    assert!(link.file_type().is_symlink(), "the link was replaced");
    let bytes = std::fs::read(&elsewhere).unwrap();
    assert!(bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"));
    let null = std::fs::symlink_metadata("/dev/null").unwrap();
    assert!(!null.file_type().is_file(), "/dev/null was replaced");
    let link = std::fs::symlink_metadata(out_dir.join("links.parquet")).unwrap();
    assert!(link.file_type().is_symlink());
}

#[test]
fn two_writers_of_one_folder_take_turns() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    // This test is the first writer: it holds the folder's lock.
    let lock = File::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(out_dir.join(".aqmlab-files"))
        .unwrap();
    lock.lock().unwrap();
    let mut second = Command::new(env!("CARGO_BIN_EXE_aqmlab"))
        .args([&RUN[..], &[out_dir.to_str().unwrap()]].concat())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The run simulates (about a second), then waits for the lock: nothing of
    // it may appear in the folder meanwhile.
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(8) {
        assert!(
            second.try_wait().unwrap().is_none(),
            "finished while locked out"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        names(&out_dir),
        [".aqmlab-files"],
        "written while locked out"
    );
    drop(lock);
    let out = second.wait_with_output().unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("waiting for another aqmlab writing"), "{err}");
    assert!(out_dir.join("summary.json").is_file());
}
