//! The command tree as a [`clap::Command`], and the shell completion scripts
//! generated from it (the same from both installs: both call [`completion`]).

use clap::CommandFactory;
use clap_complete::Shell;

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
