//! The `aqmlab` binary: see the library for the commands.

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(aqmlab_cli::main_with_args(std::env::args_os()))
}
