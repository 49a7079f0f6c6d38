//! The command line as users meet it from the binary: every subcommand in
//! `--help`, a line for those written in Python, completion scripts for every
//! shell. (The same argv gives the same text from the Python package's
//! `aqmlab`: `tests/python/test_cli_face.py`.)

use std::process::Command;

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
fn completions_complete_subcommands_flags_and_scenario_names() {
    for shell in ["bash", "zsh", "fish"] {
        let (code, out, _) = aqmlab(&["completions", shell]);
        assert_eq!(code, Some(0));
        for word in ["queue-lab", "sweep", "seed-list", "pcap"] {
            assert!(out.contains(word), "{shell}: {word}");
        }
        if shell != "fish" {
            assert!(out.contains("choke-fig3"), "{shell}: a built-in scenario");
        }
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

/// A negative count is a bad value of its flag, named, not an unknown argument.
#[test]
fn a_negative_seed_count_names_its_flag() {
    for args in [
        &[
            "sweep",
            "--precision",
            "tcp_goodput_bps=2%",
            "--max-seeds",
            "-1",
        ][..],
        &["sweep", "--seeds", "-7"][..],
    ] {
        let (code, _, err) = aqmlab(args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(
            err.contains("invalid value") && err.contains(args[args.len() - 2]),
            "{args:?}: {err}"
        );
        assert!(!err.contains("unexpected argument"), "{err}");
    }
}
