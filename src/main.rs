//! `kubectl-taint_evict`: parse the command line, run, map the outcome to an exit code.

use std::process::ExitCode;

use clap::Parser;
use taint_evict::cli::{COMPLETE, Cli, complete, run};
use taint_evict::error::EXIT_OK;
use taint_evict::words::printable;

/// The variable `--content-type` takes its default from.
const CONTENT_TYPE_VARIABLE: &str = "TAINT_EVICT_CONTENT_TYPE";

/// Says what clap could not parse, as clap does, but names the environment variable when a value
/// came from it rather than from the command line.
fn parse_error(error: &clap::Error, args: &[String]) -> ExitCode {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let from_variable = error.kind() == ErrorKind::InvalidValue
        && matches!(error.get(ContextKind::InvalidArg), Some(ContextValue::String(arg)) if arg.starts_with("--content-type"))
        && !args.iter().any(|arg| arg.starts_with("--content-type"));
    match std::env::var(CONTENT_TYPE_VARIABLE) {
        Ok(value) if from_variable => {
            eprintln!(
                "error: {CONTENT_TYPE_VARIABLE}={} is not a content type: expected protobuf or json",
                printable(&format!("{value:?}"))
            );
            eprintln!("hint: it sets --content-type's default: unset it, or set it to protobuf or json");
            ExitCode::from(2)
        }
        _ => error.exit(),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let result = match args.get(1) {
        // kubectl (>= 1.26) completes plugin arguments through `kubectl_complete-taint_evict`.
        Some(first) if first == COMPLETE => complete::complete(&args[2..]),
        _ => match Cli::try_parse() {
            Ok(cli) => run(cli),
            Err(error) => return parse_error(&error, &args),
        },
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
