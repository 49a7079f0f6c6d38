//! One command tree for both installs: the checked-in copy of the command's face
//! that the Python package prints (`python/aqmlab/_face.json`) is what this crate
//! generates, and the binary prints those very texts.
//!
//! After changing a subcommand, a flag or a help text: `make face` (this test with
//! `AQMLAB_UPDATE_FACE=1`) rewrites the file.

use std::path::PathBuf;
use std::process::Command;

fn face_file() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../python/aqmlab/_face.json")
}

fn generated() -> String {
    serde_json::to_string_pretty(&aqmlab_cli::face::document()).unwrap() + "\n"
}

fn aqmlab(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_aqmlab"))
        .args(args)
        .output()
        .expect("aqmlab runs");
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn the_python_packages_copy_of_the_face_is_current() {
    let now = generated();
    if std::env::var_os("AQMLAB_UPDATE_FACE").is_some() {
        std::fs::write(face_file(), &now).unwrap();
        return;
    }
    let checked_in = std::fs::read_to_string(face_file()).unwrap_or_default();
    assert!(
        checked_in == now,
        "python/aqmlab/_face.json is stale: run `make face` (AQMLAB_UPDATE_FACE=1 cargo test -p aqmlab-cli --test face)"
    );
}

#[test]
fn the_binary_prints_the_documented_help_and_completions() {
    let doc = aqmlab_cli::face::document();
    let commands = doc["commands"].as_object().unwrap();
    for (path, c) in commands {
        let words: Vec<&str> = path.split_whitespace().collect();
        let with = |flag: &'static str| [&words[..], &[flag]].concat();
        assert_eq!(
            aqmlab(&with("-h")).1,
            c["help"].as_str().unwrap(),
            "{path} -h"
        );
        assert_eq!(
            aqmlab(&with("--help")).1,
            c["long_help"].as_str().unwrap(),
            "{path} --help"
        );
        if !path.is_empty() {
            let help = [&["help"][..], &words[..]].concat();
            let (code, out, _) = aqmlab(&help);
            assert_eq!(code, Some(0));
            assert_eq!(out, c["long_help"].as_str().unwrap(), "help {path}");
        }
    }
    for shell in aqmlab_cli::face::SHELLS {
        let (code, out, _) = aqmlab(&["completions", shell]);
        assert_eq!(code, Some(0));
        assert_eq!(out, doc["completions"][shell].as_str().unwrap(), "{shell}");
    }
}

#[test]
fn help_lists_every_subcommand_with_a_line_each() {
    let (code, out, _) = aqmlab(&["--help"]);
    assert_eq!(code, Some(0));
    for cmd in [
        "run",
        "sweep",
        "repro",
        "plot",
        "scenarios",
        "qdiscs",
        "model",
        "queue-lab",
        "completions",
        "help",
    ] {
        assert!(
            out.lines()
                .any(|l| l.trim_start().starts_with(&format!("{cmd} "))),
            "{cmd} missing from:\n{out}"
        );
    }
}

#[test]
fn the_python_commands_say_where_they_are_in_one_line() {
    let commands = [
        ("sweep", None, "--json"),
        ("repro", None, "--json"),
        ("plot", Some("results"), "--kind"),
    ];
    for (cmd, arg, flag) in commands {
        let argv: Vec<&str> = std::iter::once(cmd).chain(arg).collect();
        let (code, out, err) = aqmlab(&argv);
        assert_eq!(code, Some(2));
        assert!(out.is_empty());
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("needs the Python package"), "{err}");
        // Their help is here all the same.
        let (code, out, _) = aqmlab(&[cmd, "--help"]);
        assert_eq!(code, Some(0));
        assert!(out.contains(flag) && out.contains("--out"), "{out}");
    }
}
