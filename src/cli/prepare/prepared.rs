//! What `plan`, `explain` and `audit` share, in order: the input read, the evaluation instant, a
//! dump's checks, the node lifecycle controller's settings and prediction, the DRA objects; then the
//! engine's plan of the nodes asked for.

use std::collections::HashSet;

use crate::engine::devices::{DeviceTaints, Devices};
use crate::engine::lifecycle::{NodeHealth, Settings, is_unsettled};
use crate::engine::plan::{Assumed, Plan};
use crate::engine::planner::{Evidence, Request, build};
use crate::engine::snapshot::WhatIf;
use crate::engine::time::Timestamp;
use crate::error::Result;
use crate::output::ClockDoc;
use crate::words::printable;

use super::devices::device_taints;
use super::foresee::{Foreseen, foresee};
use super::input::{Loaded, Want, check_dump, load};
use super::instant::evaluated_at;
use super::settings::settings;
use crate::config::{Input, Lifecycle};

/// What `plan` and `explain` share, in order: the lifecycle flags' warnings, the snapshot and the
/// evaluation instant, the dump's checks, and the node lifecycle controller's prediction.
pub(in crate::cli) struct Prepared {
    pub(in crate::cli) loaded: Loaded,
    pub(in crate::cli) now: Timestamp,
    pub(in crate::cli) clock: Option<ClockDoc>,
    pub(in crate::cli) flags: crate::engine::lifecycle::Flags,
    /// The same settings, and where each came from.
    pub(in crate::cli) settings: Settings,
    pub(in crate::cli) lifecycle: Option<Foreseen>,
    pub(in crate::cli) from_dump: bool,
    /// The DRA objects, and the minor version whose device-taint controller to follow (`None`: no
    /// pod uses a claim, or the version has no such controller).
    devices: Devices,
    device_minor: Option<u32>,
    /// The nodes going down in a what-if (`--down`, then `--down-selector`'s), each once.
    pub(in crate::cli) down: Vec<String>,
}

impl Prepared {
    /// Loads what `want` needs; for `plan` (`Want::Nodes`), a dump without nodes is refused first.
    pub(in crate::cli) fn load(input: &Input, config: &Lifecycle, want: Want<'_>) -> Result<(Self, String)> {
        for warning in config.warnings() {
            eprintln!("warning: {warning}");
        }
        let wants_nodes = matches!(want, Want::Nodes(_));
        let (fixed, silent_after) = (input.now, config.silent_after);
        // A node going down is read as an unsettled one is (every node's health, for its zone).
        let unsettled = |node: &NodeHealth, now| {
            input.down.iter().any(|name| name == node.name.as_str())
                || is_unsettled(node, fixed.unwrap_or(now), silent_after)
        };
        let (mut loaded, namespace) = load(input, want, &unsettled)?;
        if let Some(minor) = config.kube_version {
            loaded.minor = Some(minor);
        }
        let (now, clock) = evaluated_at(input, &loaded);
        let from_dump = input.file.is_some();
        if from_dump {
            check_dump(&loaded, wants_nodes)?;
        }
        let (settings, assumed) = settings(&mut loaded, config, from_dump);
        let flags = settings.flags;
        // As given: `--down`'s names in order, then those `--down-selector` selects (by name), each once.
        let mut seen = HashSet::new();
        let down: Vec<String> =
            input.down.iter().chain(&loaded.down_selected).filter(|name| seen.insert(name.as_str())).cloned().collect();
        // A record read at an instant holds the heartbeats up to then, as a live read does.
        let current = !from_dump || loaded.time.is_some();
        let lifecycle = foresee(&mut loaded, current, now, config, flags, &down)?;
        // Said when the answer rests on them: the node health read is predicted from.
        if let Some(line) = assumed.filter(|_| lifecycle.is_some()) {
            eprintln!("{line}");
        }
        let (devices, device_minor) = device_taints(&mut loaded);
        let prepared = Self { loaded, now, clock, flags, settings, lifecycle, from_dump, devices, device_minor, down };
        Ok((prepared, namespace))
    }

    /// The device-taint controller's view of the DRA objects read.
    pub(in crate::cli) fn device_taints(&self) -> Option<DeviceTaints<'_>> {
        self.device_minor.map(|minor| DeviceTaints::new(&self.devices, minor))
    }

    /// The nodes the controller is expected to act on (taint, or hold a taint back).
    pub(in crate::cli) fn foreseen(&self) -> HashSet<&str> {
        let nodes = self.lifecycle.iter().flat_map(|lifecycle| lifecycle.prediction.iter()).flat_map(|p| &p.nodes);
        nodes.filter(|n| n.taint.is_some() || n.held.is_some()).map(|n| n.name.as_str()).collect()
    }

    /// The plan of the `selected` nodes with `what_if` at `now`, kept to `namespace` (its warnings
    /// printed): the engine's [`build`].
    pub(in crate::cli) fn build(
        &self,
        selected: &[usize],
        what_if: &[WhatIf],
        assumed: Option<&Assumed>,
        namespace: Option<&str>,
    ) -> Plan<'_> {
        let devices = self.device_taints();
        let host = crate::host::host();
        let request =
            Request { selected, what_if, now: self.now, flags: self.flags, assumed, namespace, host, tables: None };
        let evidence = Evidence {
            not_ready: self.loaded.not_ready.as_ref(),
            tolerations_written: Some(&self.loaded.tolerations_written),
            lifecycle: self.lifecycle.as_ref().map(Foreseen::foresight),
            devices: devices.as_ref(),
        };
        let (plan, warnings) = build(&self.loaded.snapshot, &request, &evidence);
        for warning in warnings {
            eprintln!("warning: {}", printable(&warning.to_string()));
        }
        plan
    }

    /// What to say after the answer: how old a dump read late is, what it lacked for the prediction.
    pub(in crate::cli) fn take_lacks(&mut self) -> Vec<String> {
        self.lifecycle.as_mut().map(|lifecycle| std::mem::take(&mut lifecycle.lacks)).unwrap_or_default()
    }
}
