//! The `iorig` binary: parses the command line, runs the command, maps failures
//! to exit codes. Everything that prints lives in `output`.

mod cli;
mod output;
mod run_cmd;
mod signals;
mod step;

use clap::Parser;
use std::process::ExitCode;

/// Exit codes (DESIGN.md "Exit codes").
pub mod exit {
    pub const OK: u8 = 0;
    pub const RUNTIME: u8 = 1;
    pub const USAGE: u8 = 2;
    pub const INTERRUPTED: u8 = 130;
}

/// An error that already knows its exit code.
#[derive(Debug)]
pub struct Failure {
    pub code: u8,
    pub message: String,
}

impl Failure {
    pub fn usage(message: impl Into<String>) -> Self {
        Failure {
            code: exit::USAGE,
            message: message.into(),
        }
    }
    pub fn runtime(message: impl Into<String>) -> Self {
        Failure {
            code: exit::RUNTIME,
            message: message.into(),
        }
    }
}

fn main() -> ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return output::clap_error(e),
    };
    let result = match cli.command {
        cli::Command::Run(args) => run_cmd::run(*args),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(f) => {
            output::error_line(&f.message);
            ExitCode::from(f.code)
        }
    }
}
