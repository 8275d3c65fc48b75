//! `kubectl-taint_evict`: parse the command line, run, map the outcome to an exit code.

use std::process::ExitCode;

use clap::Parser;
use taint_evict::cli::{COMPLETE, Cli, complete, run};
use taint_evict::error::EXIT_OK;
use taint_evict::words::printable;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let result = match args.get(1) {
        // kubectl (>= 1.26) completes plugin arguments through `kubectl_complete-taint_evict`.
        Some(first) if first == COMPLETE => complete::complete(&args[2..]),
        _ => run(Cli::parse()),
    };
    match result {
        Ok(()) => ExitCode::from(EXIT_OK),
        Err(error) => {
            if !error.is_silent() {
                // Messages quote names and server text: one line, never an escape sequence.
                eprintln!("error: {}", printable(&error.to_string()));
                if let Some(hint) = error.hint() {
                    eprintln!("hint: {}", printable(&hint));
                }
            }
            ExitCode::from(error.exit_code())
        }
    }
}
