//! What the node lifecycle controller reads the input with: its `Lt`/`Gt` gate, and its settings,
//! each with where it came from.

use crate::engine::lifecycle::Settings;

use super::input::Loaded;
use crate::config::Lifecycle;

/// The node lifecycle controller's settings (docs/node-lifecycle.md, "The controller's settings"),
/// its `TaintTolerationComparisonOperators` gate first applied to the snapshot's `Lt`/`Gt` tolerations:
/// the flags given, then its pod's command line (read live, or in a dump), else
/// `--controller-settings`, else the defaults of the version followed. A setting of the pod that
/// does not read is warned of; with the settings, the line that says they were assumed, and why,
/// when a live read assumed them.
pub(super) fn settings(loaded: &mut Loaded, config: &Lifecycle, from_dump: bool) -> (Settings, Option<String>) {
    // `Lt`/`Gt` tolerations, read as the controller reads them.
    let (enabled, _) = config.comparison_operators(loaded.minor);
    let comparing = loaded.snapshot.gate_comparison_operators(enabled);
    if let Some(warning) = config.comparison_warning(comparing, loaded.minor) {
        eprintln!("warning: {warning}");
    }
    let read = config.settings_found(loaded.minor, loaded.controller_manager.as_ref(), !from_dump);
    for warning in &read.warnings {
        eprintln!("warning: {warning}");
    }
    let line = read.assumed.map(|why| format!("warning: {why}"));
    (read.settings, line)
}
