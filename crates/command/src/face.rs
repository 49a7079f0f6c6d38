//! The command's face as data: every subcommand's flags, help texts and the shell
//! completion scripts, generated from [`crate::Cli`].
//!
//! The Python package has no clap (the extension must stay free of it), so it
//! prints these texts from a checked-in copy, `python/aqmlab/_face.json`; a test
//! here keeps that file equal to [`document`], and one in `tests/python` holds the
//! Python parser to the tree it records. Regenerate the file with
//! `make face` (`AQMLAB_UPDATE_FACE=1 cargo test -p aqmlab-cli --test face`).

use clap::CommandFactory;
use clap_complete::Shell;
use serde_json::{json, Map, Value};

/// The shells `aqmlab completions` writes for.
pub const SHELLS: [&str; 3] = ["bash", "zsh", "fish"];

/// The whole tree, built (so clap's own `help` subcommands and `--help` flags are
/// in it), named `aqmlab`.
pub fn command() -> clap::Command {
    let mut cmd = crate::Cli::command().bin_name("aqmlab");
    cmd.build();
    cmd
}

/// The completion script for `shell` (one of [`SHELLS`]).
pub fn completion(shell: &str) -> String {
    let shell = match shell {
        "bash" => Shell::Bash,
        "zsh" => Shell::Zsh,
        "fish" => Shell::Fish,
        other => panic!("no completion script for {other}"),
    };
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut command(), "aqmlab", &mut out);
    String::from_utf8(out).expect("completion scripts are UTF-8")
}

/// What `aqmlab qdiscs` prints.
pub fn qdiscs() -> String {
    aqm::QdiscSpec::KINDS
        .iter()
        .map(|k| format!("{k}\n"))
        .collect()
}

/// Every command (keyed by its path after `aqmlab`, `""` for the top) with its
/// one-line help, arguments, subcommands and the texts `-h` and `--help` print;
/// and the completion scripts.
pub fn document() -> Value {
    let mut commands = Map::new();
    walk(&command(), "", &mut commands);
    let completions: Map<String, Value> = SHELLS
        .iter()
        .map(|s| (s.to_string(), Value::String(completion(s))))
        .collect();
    json!({ "commands": commands, "completions": completions })
}

/// What `aqmlab PATH FLAG` prints, taken from the parser itself (clap decides
/// when `--help` is longer than `-h`).
fn printed(path: &str, flag: &str) -> String {
    let argv = std::iter::once("aqmlab")
        .chain(path.split_whitespace())
        .chain(std::iter::once(flag));
    match command().try_get_matches_from(argv) {
        Err(e) => e.render().to_string(),
        Ok(_) => unreachable!("{flag} always prints help"),
    }
}

fn walk(cmd: &clap::Command, path: &str, out: &mut Map<String, Value>) {
    let args: Vec<Value> = cmd
        .get_arguments()
        .map(|a| {
            let takes_value = a.get_num_args().is_some_and(|n| n.takes_values());
            json!({
                "id": a.get_id().as_str(),
                "long": a.get_long(),
                "short": a.get_short().map(String::from),
                "positional": a.is_positional(),
                "value": takes_value.then(|| a.get_value_names()
                    .and_then(|v| v.first())
                    .map(|v| v.to_string())
                    .unwrap_or_else(|| a.get_id().as_str().to_uppercase())),
                "help": a.get_help().map(|h| h.to_string()),
            })
        })
        .collect();
    let subcommands: Vec<&str> = cmd.get_subcommands().map(|c| c.get_name()).collect();
    out.insert(
        path.to_string(),
        json!({
            "about": cmd.get_about().map(|a| a.to_string()),
            "args": args,
            "subcommands": subcommands,
            "help": printed(path, "-h"),
            "long_help": printed(path, "--help"),
        }),
    );
    for sub in cmd.get_subcommands() {
        // clap's `help` subcommand mirrors the tree; it is documented by its parent.
        if sub.get_name() == "help" {
            continue;
        }
        let p = if path.is_empty() {
            sub.get_name().to_string()
        } else {
            format!("{path} {}", sub.get_name())
        };
        walk(sub, &p, out);
    }
}
