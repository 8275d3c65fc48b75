//! A plan in the format asked for: the table (or its timeline), names, JSON, YAML or a template.

use std::io::{self, Write};

use super::eviction_plan::{EvictionPlan, write_plan_json_with};
use super::format::OutputFormat;
use super::json::write_yaml;
use super::view::{ColorMode, View};
use super::wire::Live;
use super::{table, template, timeline};
use crate::engine::lifecycle::Settings;
use crate::engine::plan::Plan;

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
    render_plan_settings(plan, format, view, live, None, out)
}

/// [`render_plan_view`], the documents with the node lifecycle controller's `settings` when given.
pub fn render_plan_settings(
    plan: &Plan,
    format: OutputFormat,
    view: &View,
    live: Option<&Live>,
    settings: Option<&Settings>,
    out: &mut impl Write,
) -> io::Result<()> {
    let timeline = || view.timeline.then(|| timeline::Timeline::of(plan));
    match format {
        OutputFormat::Table | OutputFormat::Wide if view.timeline => {
            timeline::render(plan, &timeline::Timeline::of(plan), view, out)
        }
        OutputFormat::Table => table::render_view(plan, false, view, out),
        OutputFormat::Wide => table::render_view(plan, true, view, out),
        OutputFormat::Json => write_plan_json_with(plan, live, settings, timeline().as_ref(), out),
        OutputFormat::Yaml => {
            let document = EvictionPlan::from(plan).read(live).settings(settings).timeline(timeline().as_ref());
            write_yaml(&document, out)
        }
        OutputFormat::Name => table::render_names(plan, view.sort, out),
        OutputFormat::Template(template) => {
            let document = plan_document(plan, view, live, settings)?;
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
pub fn plan_document(
    plan: &Plan,
    view: &View,
    live: Option<&Live>,
    settings: Option<&Settings>,
) -> io::Result<serde_json::Value> {
    let mut json = Vec::new();
    render_plan_settings(plan, OutputFormat::Json, view, live, settings, &mut json)?;
    serde_json::from_slice(&json).map_err(io::Error::other)
}
