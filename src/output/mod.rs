//! Rendering: plans and explanations as tables, JSON, YAML and kubectl's templates (`jsonpath`,
//! `custom-columns`), written to any `io::Write`.
//!
//! Renderers take the colour decision and the terminal's width as arguments ([`ColorMode`],
//! [`View`]) and never read the clock or the terminal themselves; `now` comes from the plan.
//!
//! Owns: every rendering for people and machines. Uses: the engine's values and `run`'s events
//! (`runtime::report`); never the cluster, the decoder or the CLI.

pub mod explain;
pub mod human;
pub mod json;
pub mod jsonpath;
pub mod lifecycle;
mod lines;
pub mod owners;
pub mod redraw;
pub mod run;
pub mod summary;
pub mod table;
pub mod template;
pub mod timeline;
mod view;
pub mod watch;

use std::io::{self, Write};

use crate::engine::plan::Plan;
pub use json::{ClockDoc, Live};
pub use view::{ColorMode, OutputFormat, SortBy, View};

/// Writes `plan` in `format`; `live` says how a live cluster answered (JSON and YAML carry it).
pub fn render_plan(
    plan: &Plan,
    format: OutputFormat,
    color: ColorMode,
    live: Option<&Live>,
    out: &mut impl Write,
) -> io::Result<()> {
    render_plan_view(plan, format, &View { color, ..View::plain() }, live, out)
}

/// Writes `plan` in `format`, laid out as `view` says.
pub fn render_plan_view(
    plan: &Plan,
    format: OutputFormat,
    view: &View,
    live: Option<&Live>,
    out: &mut impl Write,
) -> io::Result<()> {
    let timeline = || view.timeline.then(|| timeline::Timeline::of(plan));
    match format {
        OutputFormat::Table | OutputFormat::Wide if view.timeline => {
            timeline::render(plan, &timeline::Timeline::of(plan), view, out)
        }
        OutputFormat::Table => table::render_view(plan, false, view, out),
        OutputFormat::Wide => table::render_view(plan, true, view, out),
        OutputFormat::Json => json::write_plan_json_with(plan, live, timeline().as_ref(), out),
        OutputFormat::Yaml => {
            let document = json::EvictionPlan::from(plan).read(live).timeline(timeline().as_ref());
            json::write_yaml(&document, out)
        }
        OutputFormat::Name => table::render_names(plan, view.sort, out),
        OutputFormat::Template(template) => {
            let document = plan_document(plan, view, live)?;
            let text = template::Printer::new(template, view.headers)
                .print(&document, template::Rows::PlanPods)
                .map_err(io::Error::other)?;
            out.write_all(&text)
        }
    }
}

/// The document `-o json` prints for `plan`, as a value (what the templates run over).
///
/// # Errors
/// None in practice: the document is written to memory and read back.
pub fn plan_document(plan: &Plan, view: &View, live: Option<&Live>) -> io::Result<serde_json::Value> {
    let mut json = Vec::new();
    render_plan_view(plan, OutputFormat::Json, view, live, &mut json)?;
    serde_json::from_slice(&json).map_err(io::Error::other)
}
