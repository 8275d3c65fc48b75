//! The parsed command line run: diagnostics set up, then one command, each in its own file.

use super::args::{Cli, Command, LogFormat};
use super::{audit, complete, plan, profile, review};
use crate::config::{
    AuditConfig, ExplainConfig, PlanConfig, ProfileConfig, RecordConfig, ReviewConfig, RunConfig, WatchConfig,
};
use crate::error::Result;

/// Runs the parsed command line, writing to stdout.
pub fn run(cli: Cli) -> Result<()> {
    let log_format = match &cli.command {
        Command::Run(args) => args.log_format,
        _ => None,
    };
    init_diagnostics(log_format);
    match cli.command {
        Command::Plan(args) if args.watch.enabled => crate::live::watch(&WatchConfig::new(&args)?),
        Command::Plan(args) => plan::plan(&PlanConfig::new(&args)?),
        Command::Explain(args) => plan::explain(&ExplainConfig::new(&args)?),
        Command::Audit(args) => audit::audit(&AuditConfig::new(&args)?),
        Command::Profile(args) => profile::profile(&ProfileConfig::new(&args)),
        Command::Run(args) => crate::live::run(&RunConfig::new(&args)?),
        Command::Record(args) => crate::live::record(&RecordConfig::new(&args)?),
        Command::Review(args) => review::review(&ReviewConfig::new(&args)),
        Command::Completion { shell } => complete::print_script(shell),
    }
}

/// Sends diagnostics (kube's and the HTTP client's, chosen with `RUST_LOG`; off by default, warnings
/// with `--log-format`) to stderr, in the log format when one is asked for.
fn init_diagnostics(format: Option<LogFormat>) {
    let default = if format.is_some() { "warn" } else { "off" };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(false);
    // A subscriber installed already (a test harness) keeps its place.
    let _ = match format {
        Some(LogFormat::Json) => builder.json().flatten_event(true).try_init(),
        _ => builder.try_init(),
    };
}
