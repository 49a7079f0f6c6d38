#![cfg(target_os = "linux")]

//! What root writes, and where: a folder or symbolic link another user owns is
//! not followed (they would choose where root's files go), a capture that cannot
//! be finished leaves no file behind. Root-only: elsewhere they print why they
//! did not run.

use std::os::unix::fs::{chown, lchown, symlink};
use std::path::Path;
use std::process::{Command, Output};

/// `nobody`: a user other than root, on any Linux.
const OTHER_USER: u32 = 65_534;

fn root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|v| v.split_whitespace().nth(1).map(|e| e == "0"))
        })
        .unwrap_or(false)
}

fn run(out: &Path, more: &[&str]) -> Output {
    run_for(None, out, more)
}

/// [`run`], as `sudo` started for the user `sudo_uid`.
fn run_for(sudo_uid: Option<u32>, out: &Path, more: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_aqmlab"));
    command.env_remove("SUDO_UID");
    if let Some(uid) = sudo_uid {
        command.env("SUDO_UID", uid.to_string());
    }
    command.args(["run", "--duration", "2s", "--warmup", "1s", "-q"]);
    if !more.contains(&"--format") {
        command.args(["--format", "csv"]);
    }
    command.args(more).arg("--out").arg(out).output().unwrap()
}

#[test]
fn root_refuses_an_out_folder_or_link_another_user_owns() {
    if !root() {
        eprintln!("skipped: not root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Their folder: refused before simulating, unless the flag says so.
    let theirs = dir.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    chown(&theirs, Some(OTHER_USER), Some(OTHER_USER)).unwrap();
    let out = run(&theirs, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--out") && err.contains("user 65534"), "{err}");
    assert!(!theirs.join("summary.json").exists());
    let out = run(&theirs, &["--allow-foreign-out"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(theirs.join("summary.json").is_file());
    // A new folder inside theirs: they could swap it for a link once root made it.
    let inside = theirs.join("new");
    let out = run(&inside, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("would be made in") && err.contains("user 65534"),
        "{err}"
    );
    assert!(!inside.exists());
    // Unless it is the folder of the user who ran sudo: theirs to choose anyway.
    let out = run_for(Some(OTHER_USER), &inside, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(inside.join("summary.json").is_file());

    // Their link to a folder of root's, at --out or above it.
    let mine = dir.path().join("mine");
    std::fs::create_dir(&mine).unwrap();
    let link = dir.path().join("link");
    symlink(&mine, &link).unwrap();
    lchown(&link, Some(OTHER_USER), Some(OTHER_USER)).unwrap();
    for out_dir in [link.clone(), link.join("deeper")] {
        let out = run(&out_dir, &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("symbolic link of user 65534"), "{err}");
    }
    assert_eq!(std::fs::read_dir(&mine).unwrap().count(), 0);
}

#[test]
fn root_does_not_write_through_a_link_another_user_left_in_the_folder() {
    if !root() {
        eprintln!("skipped: not root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    assert!(run(&out_dir, &[]).status.success());
    // A file of root's elsewhere, and a link to it in place of a table the
    // folder's record says aqmlab wrote.
    let precious = dir.path().join("precious");
    std::fs::write(&precious, "root's\n").unwrap();
    let table = out_dir.join("flows.csv");
    std::fs::remove_file(&table).unwrap();
    symlink(&precious, &table).unwrap();
    lchown(&table, Some(OTHER_USER), Some(OTHER_USER)).unwrap();
    let out = run(&out_dir, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("symbolic link of user 65534"), "{err}");
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "root's\n");
    assert!(
        !out_dir.join("summary.json").exists(),
        "a run that failed looks whole"
    );
}

/// Unmounts the small file system of a test, whatever happens in it.
struct Mounted<'a>(&'a Path);

impl Drop for Mounted<'_> {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.0).status();
    }
}

#[test]
fn a_capture_on_a_full_disk_is_an_error_and_leaves_no_file() {
    if !root() {
        eprintln!("skipped: not root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("small");
    std::fs::create_dir(&small).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
        .arg(&small)
        .status()
        .unwrap();
    if !mounted.success() {
        eprintln!("skipped: cannot mount a tmpfs here");
        return;
    }
    let _unmount = Mounted(&small);
    // Ten seconds of a 10 Mbit/s bottleneck: megabytes of capture into 64 KiB.
    let out = Command::new(env!("CARGO_BIN_EXE_aqmlab"))
        .args(["run", "--duration", "10s", "--warmup", "1s", "-q"])
        .args(["--pcap", "bottleneck", "--out"])
        .arg(&small)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("pcap"), "{err}");
    let left: Vec<String> = std::fs::read_dir(&small)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != ".aqmlab-files")
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// Fills the file system at `dir` until `left` bytes are free.
fn fill(dir: &Path, left: u64) {
    let out = Command::new("df")
        .args(["--output=avail", "-B1"])
        .arg(dir)
        .output()
        .unwrap();
    let avail: u64 = String::from_utf8_lossy(&out.stdout)
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .unwrap();
    let filler = vec![0u8; avail.saturating_sub(left) as usize];
    std::fs::write(dir.join("filler"), filler).unwrap();
}

/// A run's tables that cannot all be written (a full disk) leave none behind,
/// neither the new ones written before the failure nor an earlier run's (in
/// either format), and the error is the file system's, naming the table.
#[test]
fn a_full_disk_leaves_no_tables_and_says_so() {
    if !root() {
        eprintln!("skipped: not root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("small");
    std::fs::create_dir(&small).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=256k", "tmpfs"])
        .arg(&small)
        .status()
        .unwrap();
    if !mounted.success() {
        eprintln!("skipped: cannot mount a tmpfs here");
        return;
    }
    let _unmount = Mounted(&small);
    let out_dir = small.join("out");
    for (earlier, now) in [("csv", "parquet"), ("parquet", "csv")] {
        let _ = std::fs::remove_file(small.join("filler"));
        assert!(run(&out_dir, &["--format", earlier]).status.success());
        // Room for a table or two of the next run, not for all.
        fill(&small, 8 << 10);
        let out = run(&out_dir, &["--format", now]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{err}");
        assert!(
            err.contains(&format!(".{now}: No space left on device")),
            "{err}"
        );
        let left: Vec<String> = std::fs::read_dir(&out_dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != ".aqmlab-files")
            .collect();
        assert!(left.is_empty(), "left behind: {left:?}");
    }
}
