//! `kubectl-taint_evict`: parse the command line, run, map the outcome to an exit code.

use std::process::ExitCode;

use clap::Parser;
use taint_evict::cli::{Cli, run};
use taint_evict::error::EXIT_OK;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::from(EXIT_OK),
        Err(error) => {
            if !error.is_silent() {
                eprintln!("error: {error}");
                if let Some(hint) = error.hint() {
                    eprintln!("hint: {hint}");
                }
            }
            ExitCode::from(error.exit_code())
        }
    }
}
