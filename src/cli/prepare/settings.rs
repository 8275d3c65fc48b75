//! What the node lifecycle controller reads the input with: its `Lt`/`Gt` gate, and its settings,
//! each with where it came from.

use crate::decode::controller_manager::{self, Found};
use crate::engine::lifecycle::Settings;
use crate::words::printable;

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
    let pod = match &loaded.controller_manager {
        Some(Found::Pod { name, args }) => {
            let (given, warnings) = controller_manager::from_args(args);
            for warning in warnings {
                let pod = printable(name);
                eprintln!("warning: pod kube-system/{pod}: {}: its default is assumed", printable(&warning));
            }
            Some(given)
        }
        _ => None,
    };
    let settings = config.settings(loaded.minor, pod.as_ref());
    let why = match &loaded.controller_manager {
        _ if from_dump || config.file.is_some() || !settings.some_assumed() => None,
        Some(Found::NoPod) => Some(format!(
            "no pod labelled {} in namespace \"{}\"",
            controller_manager::SELECTOR,
            controller_manager::NAMESPACE
        )),
        Some(Found::Unreadable(why)) => Some(why.clone()),
        Some(Found::Pod { .. }) | None => None,
    };
    let line = why.map(|why| {
        let minor = loaded.minor.unwrap_or(crate::config::DEFAULT_MINOR);
        let assumed: Vec<String> = settings
            .each()
            .iter()
            .filter(|(_, _, source)| *source == crate::engine::lifecycle::Source::Default)
            .map(|(name, value, _)| format!("--{name} {}", crate::output::settings::shown(*value)))
            .collect();
        format!(
            "warning: the node lifecycle controller's settings are assumed at kube-controller-manager 1.{minor}'s \
             defaults ({}): {}; give its flags, or --controller-settings FILE",
            assumed.join(", "),
            printable(&why)
        )
    });
    (settings, line)
}
