//! Rendering: plans and explanations as tables, JSON and YAML, written to any `io::Write`.
//!
//! Renderers take the colour decision as an argument ([`ColorMode`]) and never read the clock or the
//! terminal themselves; `now` comes from the plan.

pub mod explain;
pub mod foreseen;
pub mod human;
pub mod json;
pub mod run;
pub mod table;

use std::io::{self, Write};

use crate::engine::replay::Plan;

/// How `plan` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum OutputFormat {
    /// A table per node.
    #[default]
    Table,
    /// The table with `SINCE BASIS TOLERATION UID`.
    Wide,
    /// The `EvictionPlan` document as JSON.
    Json,
    /// The same document as YAML.
    Yaml,
}

/// Whether to colour output. Decided once, from `--color`, the terminal and `NO_COLOR`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColorMode {
    /// ANSI colours.
    Color,
    /// Plain text.
    Plain,
}

/// Writes `plan` in `format`; `read` says how a live cluster answered (JSON and YAML carry it).
pub fn render_plan(
    plan: &Plan,
    format: OutputFormat,
    color: ColorMode,
    read: Option<&'static str>,
    out: &mut impl Write,
) -> io::Result<()> {
    match format {
        OutputFormat::Table => table::render(plan, false, color, out),
        OutputFormat::Wide => table::render(plan, true, color, out),
        OutputFormat::Json => json::write_plan_json(plan, read, out),
        OutputFormat::Yaml => json::write_yaml(&json::EvictionPlan::from(plan).read(read), out),
    }
}
