//! The `EvictionPlan` wire document (docs/output.md, "The JSON (and YAML) document"): versioned, with
//! stable field names, as serde serializes it (YAML) and as written field by field (JSON: `plan -o
//! json` prints hundreds of thousands of pods). These structs are the JSON and YAML contract; engine
//! types never serialize themselves.

use std::fmt;
use std::io::{self, Write};
use std::marker::PhantomData;

use serde::{Serialize, Serializer};

use super::human::rfc3339;
use super::json::{field, indented, time};
use super::settings::SettingsDoc;
use super::timeline::Timeline;
use super::wire::{API_VERSION, ClockDoc, DeviceDoc, HeldDoc, Live, OwnerDoc, PredictedTaintDoc, TaintDoc, WrittenDoc};
use super::wire::{basis_name, verdict_name};
use crate::engine::devices::DeviceEviction;
use crate::engine::lifecycle::Settings;
use crate::engine::lifecycle::{Ready, ZoneForecast};
use crate::engine::model::{Effect, NodeName, Taint};
use crate::engine::plan::{Assumed, Basis, EditedDeadline, NodeLifecycle, NodePlan, Plan, PodPlan, TolerationsEdited};
use crate::engine::snapshot::WhatIf;
use crate::engine::time::Timestamp;
use crate::words::json_string as string;

/// `kind: EvictionPlan`.
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct EvictionPlan<'a> {
    api_version: &'static str,
    kind: &'static str,
    now: String,
    /// How a live cluster answered: `watch-cache` or `quorum`; absent for a dump.
    #[serde(skip_serializing_if = "Option::is_none")]
    read: Option<&'static str>,
    /// What the reads of pods, nodes and Leases were answered in: `protobuf`, `json`, or `protobuf
    /// and json`; absent for a dump.
    #[serde(skip_serializing_if = "Option::is_none")]
    content_type: Option<&'static str>,
    /// How the control plane's time was read; absent for a dump or with `--now`.
    #[serde(skip_serializing_if = "Option::is_none")]
    clock: Option<ClockDoc>,
    /// Whose device-taint controller was followed; absent when no pod uses a DRA claim.
    #[serde(skip_serializing_if = "Option::is_none")]
    device_taints: Option<DeviceTaintsDoc>,
    /// What a what-if assumed; absent for the cluster as it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    what_if: Option<WhatIfDoc<'a>>,
    nodes: Each<'a, NodePlan<'a>, NodeDoc<'a>>,
    /// Every zone's state, when the node lifecycle controller was predicted (docs/output.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    zones: Option<Vec<ZoneDoc>>,
    /// The node lifecycle controller's settings the prediction used, when it was shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    controller_settings: Option<SettingsDoc>,
    /// The owners losing pods, with `--down`.
    #[serde(skip_serializing_if = "Option::is_none")]
    owners: Option<Vec<OwnerDoc<'a>>>,
    /// The deletions per interval, with `--timeline`.
    #[serde(skip_serializing_if = "Option::is_none")]
    timeline: Option<TimelineDoc>,
}

/// `whatIf`: what the plan assumed, and a sentence that says it.
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
struct WhatIfDoc<'a> {
    /// `--taint`: added (or replaced) on the selected nodes at `now`.
    taints: Vec<TaintDoc<'a>>,
    /// `--remove-taint`: removed from the selected nodes at `now` (`effect` null: every effect).
    remove_taints: Vec<RemovedDoc<'a>>,
    /// `--down` and `--down-selector`: the nodes whose kubelets stop heartbeating at `now`.
    down: Vec<&'a str>,
    down_selector: Option<&'a str>,
    note: String,
}

#[derive(Serialize, Debug)]
struct RemovedDoc<'a> {
    key: &'a str,
    effect: Option<&'a str>,
}

impl<'a> WhatIfDoc<'a> {
    fn new(assumed: &'a Assumed, now: Timestamp) -> Self {
        let mut taints = Vec::new();
        let mut remove_taints = Vec::new();
        for change in &assumed.changes {
            match change {
                WhatIf::Taint(taint) => taints.push(TaintDoc {
                    key: &taint.key,
                    value: &taint.value,
                    effect: taint.effect.as_str(),
                    time_added: Some(rfc3339(now)),
                }),
                WhatIf::RemoveTaint { key, effect } => {
                    remove_taints.push(RemovedDoc { key, effect: effect.as_ref().map(Effect::as_str) });
                }
            }
        }
        Self {
            taints,
            remove_taints,
            down: assumed.down.iter().map(NodeName::as_str).collect(),
            down_selector: assumed.down_selector.as_deref(),
            note: what_if_note(assumed, now),
        }
    }
}

/// What a what-if assumed, in a sentence.
#[must_use]
pub fn what_if_note(assumed: &Assumed, now: Timestamp) -> String {
    let at = rfc3339(now);
    let mut clauses = Vec::new();
    let added = assumed.changes.iter().filter(|c| matches!(c, WhatIf::Taint(_))).count();
    let removed = assumed.changes.len() - added;
    if added > 0 {
        clauses.push(format!("{added} taint(s) added to the selected nodes at {at}"));
    }
    if removed > 0 {
        clauses.push(format!("{removed} taint key(s) removed from the selected nodes at {at}"));
    }
    if !assumed.down.is_empty() {
        clauses.push(format!(
            "the kubelets of {} node(s) stop heartbeating at {at} at the latest, after their last heartbeat recorded at \
             the earliest; the node lifecycle controller and the taint-eviction controller act on them as on nodes \
             really silent",
            assumed.down.len()
        ));
    }
    clauses.push("everything else stays as it is".to_owned());
    clauses.join("; ")
}

/// `deviceTaints`: the Kubernetes version whose device-taint controller the plan follows.
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
struct DeviceTaintsDoc {
    kube_version: String,
}

/// `plan --timeline`'s buckets: pods deleted per `step` from `from` on.
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct TimelineDoc {
    step: String,
    step_seconds: i64,
    from: String,
    terminating: usize,
    due_now: usize,
    buckets: Vec<BucketDoc>,
    later: usize,
    never: usize,
    biggest_cliff: Option<CliffDoc>,
}

/// Pods deleted after `from`, up to and including `to`.
#[derive(Serialize, Debug)]
struct BucketDoc {
    from: String,
    to: String,
    pods: usize,
}

#[derive(Serialize, Debug)]
struct CliffDoc {
    at: String,
    pods: usize,
}

impl From<&Timeline> for TimelineDoc {
    fn from(timeline: &Timeline) -> Self {
        Self {
            step: timeline.step(),
            step_seconds: timeline.step_seconds,
            from: rfc3339(timeline.from),
            terminating: timeline.terminating,
            due_now: timeline.due_now,
            buckets: timeline
                .buckets
                .iter()
                .map(|b| BucketDoc { from: rfc3339(b.from), to: rfc3339(b.to), pods: b.pods })
                .collect(),
            later: timeline.later,
            never: timeline.never,
            biggest_cliff: timeline.cliff.map(|c| CliffDoc { at: rfc3339(c.at), pods: c.pods }),
        }
    }
}

/// A list written one document at a time, each made from its item as it is written: the documents
/// of a plan's 300,000 pods are never all held.
struct Each<'a, T, D>(&'a [T], PhantomData<fn() -> D>);

impl<'a, T, D> Each<'a, T, D> {
    fn new(items: &'a [T]) -> Self {
        Self(items, PhantomData)
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<'a, T, D: From<&'a T> + Serialize> Serialize for Each<'a, T, D> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(D::from))
    }
}

impl<'a, T, D: From<&'a T> + fmt::Debug> fmt::Debug for Each<'a, T, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.0.iter().map(D::from)).finish()
    }
}

#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
struct NodeDoc<'a> {
    name: &'a str,
    taints: Each<'a, Taint, TaintDoc<'a>>,
    /// When the taints were last written, for a taint without `timeAdded` (docs/output.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    taints_written: Option<WrittenDoc<'a>>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    lifecycle: Option<LifecycleDoc>,
    pods: Each<'a, PodPlan<'a>, PodDoc<'a>>,
}

/// A node's health and the node lifecycle controller's expected action (docs/output.md).
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
struct LifecycleDoc {
    ready: Option<&'static str>,
    last_heartbeat: Option<String>,
    zone: String,
    predicted_taint: Option<PredictedTaintDoc>,
    held: Option<HeldDoc>,
}

#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
struct ZoneDoc {
    name: String,
    state: &'static str,
    nodes: usize,
    not_ready: usize,
    rate_per_second: f32,
    /// Predicted at scale: the zone's queue drained one node per token (docs/node-lifecycle.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    drain: Option<DrainDoc>,
}

/// A zone's queue drained at scale: its slots, which node gets which nobody can tell.
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
struct DrainDoc {
    nodes: usize,
    every_seconds: f64,
    first: String,
    last: String,
}

/// A pod's tolerations written after its countdown began: the write, the pod's controller, and
/// where its deadline comes from.
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct EditedDoc<'a> {
    time: String,
    manager: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    owner: Option<OwnerRefDoc<'a>>,
    deadline_from: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    unknown_because: Option<&'static str>,
}

/// A pod's controller, by kind and name.
#[derive(Serialize, Debug)]
pub struct OwnerRefDoc<'a> {
    kind: &'a str,
    name: &'a str,
}

impl<'a> From<&'a TolerationsEdited> for EditedDoc<'a> {
    fn from(edited: &'a TolerationsEdited) -> Self {
        let (deadline_from, unknown_because) = edited_deadline(edited.deadline);
        Self {
            time: rfc3339(edited.written.at),
            manager: &edited.written.manager,
            owner: edited.owner.as_ref().map(|owner| OwnerRefDoc { kind: owner.kind(), name: owner.name() }),
            deadline_from,
            unknown_because,
        }
    }
}

/// `deadlineFrom` and `unknownBecause` of an edited pod's deadline.
pub fn edited_deadline(deadline: EditedDeadline) -> (Option<&'static str>, Option<&'static str>) {
    let unknown = match deadline {
        EditedDeadline::OwnerTemplate => return (Some("ownerTemplate"), None),
        EditedDeadline::NoOwner => "noOwner",
        EditedDeadline::OwnerKind => "ownerKind",
        EditedDeadline::OwnerUnread => "ownerUnread",
        EditedDeadline::TemplateDiffers => "templateDiffers",
        EditedDeadline::AddedAtCreation => "addedAtCreation",
        EditedDeadline::ForeverThen => "foreverThen",
    };
    (None, Some(unknown))
}

#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
struct PodDoc<'a> {
    namespace: &'a str,
    name: &'a str,
    uid: String,
    phase: &'a str,
    terminating: bool,
    /// Present (`true`) only for a pod stuck terminating: its node's kubelet is gone.
    #[serde(skip_serializing_if = "Option::is_none")]
    stuck: Option<bool>,
    /// When it became stuck (its `deletionTimestamp`); present with `stuck`.
    #[serde(skip_serializing_if = "Option::is_none")]
    stuck_since: Option<String>,
    verdict: &'static str,
    evict_at: Option<String>,
    /// Present for a deletion that waits on a predicted taint.
    #[serde(skip_serializing_if = "Option::is_none")]
    evict_at_latest: Option<Option<String>>,
    since: Option<String>,
    overdue: bool,
    toleration_seconds: Option<i64>,
    untolerated: Each<'a, Taint, TaintDoc<'a>>,
    basis: Option<&'static str>,
    /// Present when its tolerations were written after its countdown began (`managedFields`): the
    /// controller keeps the countdown it began with the `tolerationSeconds` of then, which its
    /// owner's pod template may recover (`deadlineFrom`), or `evictAt` is not known.
    #[serde(skip_serializing_if = "Option::is_none")]
    tolerations_edited: Option<EditedDoc<'a>>,
    /// The NoExecute taints on the DRA devices its claims hold; present only when there are some.
    #[serde(skip_serializing_if = "Each::is_empty")]
    devices: Each<'a, DeviceEviction, DeviceDoc<'a>>,
}

impl<'a> From<&'a PodPlan<'a>> for PodDoc<'a> {
    fn from(pod: &'a PodPlan<'a>) -> Self {
        Self {
            namespace: pod.key().namespace(),
            name: pod.key().name(),
            uid: pod.uid().to_string(),
            phase: pod.phase(),
            terminating: pod.terminating(),
            stuck: pod.stuck_since().map(|_| true),
            stuck_since: pod.stuck_since().map(rfc3339),
            verdict: verdict_name(pod.verdict),
            evict_at: pod.evict_at.map(rfc3339),
            evict_at_latest: pod.basis.is_some_and(Basis::windowed).then(|| pod.evict_at_latest.map(rfc3339)),
            since: pod.since.map(rfc3339),
            overdue: pod.overdue,
            toleration_seconds: pod.toleration_seconds,
            untolerated: Each::new(&pod.untolerated),
            basis: pod.basis.map(basis_name),
            tolerations_edited: pod.tolerations_edited.as_deref().map(EditedDoc::from),
            devices: Each::new(pod.devices()),
        }
    }
}

impl<'a> From<&'a NodePlan<'a>> for NodeDoc<'a> {
    fn from(node: &'a NodePlan) -> Self {
        Self {
            name: node.name.as_str(),
            taints: Each::new(&node.taints),
            taints_written: node.taints_written.as_ref().map(WrittenDoc::from),
            lifecycle: node.lifecycle.as_ref().map(LifecycleDoc::from),
            pods: Each::new(&node.pods),
        }
    }
}

impl From<&NodeLifecycle> for LifecycleDoc {
    fn from(lifecycle: &NodeLifecycle) -> Self {
        let forecast = &lifecycle.forecast;
        Self {
            ready: forecast.ready.map(Ready::as_str),
            last_heartbeat: forecast.last_heartbeat.map(rfc3339),
            zone: forecast.zone.name().to_owned(),
            predicted_taint: forecast.taint.as_ref().map(PredictedTaintDoc::from),
            held: forecast.held.as_ref().map(HeldDoc::from),
        }
    }
}

impl From<&ZoneForecast> for ZoneDoc {
    fn from(zone: &ZoneForecast) -> Self {
        Self {
            name: zone.zone.name().to_owned(),
            state: zone.state.as_str(),
            nodes: zone.nodes,
            not_ready: zone.not_ready,
            rate_per_second: zone.rate_per_second,
            drain: zone.drain.map(|drain| DrainDoc {
                nodes: drain.nodes,
                every_seconds: drain.every.as_secs_f64(),
                first: rfc3339(drain.first),
                last: rfc3339(drain.last),
            }),
        }
    }
}

impl EvictionPlan<'_> {
    /// The document saying how a live cluster answered (`None`: a dump).
    #[must_use]
    pub fn read(mut self, live: Option<&Live>) -> Self {
        self.read = live.map(|live| live.read);
        self.content_type = live.and_then(|live| live.content_type);
        self.clock = live.and_then(|live| live.clock);
        self
    }

    /// The document with the `controllerSettings` field (`None`: without it).
    #[must_use]
    pub fn settings(mut self, settings: Option<&Settings>) -> Self {
        self.controller_settings = settings.map(SettingsDoc::from);
        self
    }

    /// The document with the `timeline` field (`None`: without it).
    #[must_use]
    pub fn timeline(mut self, timeline: Option<&Timeline>) -> Self {
        self.timeline = timeline.map(TimelineDoc::from);
        self
    }
}

impl<'a> From<&'a Plan<'a>> for EvictionPlan<'a> {
    fn from(plan: &'a Plan) -> Self {
        Self {
            api_version: API_VERSION,
            kind: "EvictionPlan",
            now: rfc3339(plan.now),
            read: None,
            content_type: None,
            clock: None,
            device_taints: plan.device_taints.map(|minor| DeviceTaintsDoc { kube_version: format!("1.{minor}") }),
            what_if: plan.assumed.as_ref().map(|assumed| WhatIfDoc::new(assumed, plan.now)),
            nodes: Each::new(&plan.nodes),
            zones: plan.zones.as_ref().map(|zones| zones.iter().map(ZoneDoc::from).collect()),
            controller_settings: None,
            owners: plan.owners.as_ref().map(|owners| owners.iter().map(OwnerDoc::from).collect()),
            timeline: None,
        }
    }
}

/// Writes `plan` as the [`EvictionPlan`] document, exactly as [`write_json`] writes it, without
/// building the document first: `plan -o json` prints hundreds of thousands of pods.
pub fn write_plan_json(plan: &Plan, live: Option<&Live>, out: &mut impl Write) -> io::Result<()> {
    write_plan_json_with(plan, live, None, None, out)
}

/// [`write_plan_json`] with the `controllerSettings` field when `settings` are given, and the
/// `timeline` field when `timeline` is.
pub fn write_plan_json_with(
    plan: &Plan,
    live: Option<&Live>,
    settings: Option<&Settings>,
    timeline: Option<&Timeline>,
    out: &mut impl Write,
) -> io::Result<()> {
    out.write_all(b"{\n  \"apiVersion\": ")?;
    string(out, API_VERSION)?;
    out.write_all(b",\n  \"kind\": \"EvictionPlan\",\n  \"now\": ")?;
    time(out, Some(plan.now))?;
    if let Some(live) = live {
        out.write_all(b",\n  \"read\": ")?;
        string(out, live.read)?;
        if let Some(content_type) = live.content_type {
            out.write_all(b",\n  \"contentType\": ")?;
            string(out, content_type)?;
        }
    }
    if let Some(clock) = live.and_then(|live| live.clock) {
        out.write_all(b",\n  \"clock\": {\n    \"offset\": ")?;
        serde_json::to_writer(&mut *out, &clock.offset)?;
        out.write_all(b",\n    \"uncertainty\": ")?;
        serde_json::to_writer(&mut *out, &clock.uncertainty)?;
        out.write_all(b",\n    \"source\": ")?;
        string(out, clock.source)?;
        out.write_all(b"\n  }")?;
    }
    if let Some(minor) = plan.device_taints {
        write!(out, ",\n  \"deviceTaints\": {{\n    \"kubeVersion\": \"1.{minor}\"\n  }}")?;
    }
    if let Some(assumed) = &plan.assumed {
        out.write_all(b",\n  \"whatIf\": ")?;
        indented(out, &WhatIfDoc::new(assumed, plan.now))?;
    }
    out.write_all(b",\n  \"nodes\": [")?;
    for (i, node) in plan.nodes.iter().enumerate() {
        out.write_all(if i == 0 { b"\n    {\n      \"name\": " } else { b",\n    {\n      \"name\": " })?;
        string(out, node.name.as_str())?;
        out.write_all(b",\n      \"taints\": [")?;
        taints(out, &node.taints, 4)?;
        if let Some(written) = &node.taints_written {
            out.write_all(b",\n      \"taintsWritten\": {\n        \"time\": ")?;
            time(out, Some(written.at))?;
            out.write_all(b",\n        \"manager\": ")?;
            string(out, &written.manager)?;
            out.write_all(b"\n      }")?;
        }
        if let Some(lifecycle) = &node.lifecycle {
            lifecycle_fields(out, lifecycle)?;
        }
        out.write_all(b",\n      \"pods\": [")?;
        for (j, pod) in node.pods.iter().enumerate() {
            out.write_all(if j == 0 { b"\n        {" } else { b",\n        {" })?;
            pod_fields(out, pod)?;
            out.write_all(b"\n        }")?;
        }
        out.write_all(if node.pods.is_empty() { b"]" } else { b"\n      ]" })?;
        out.write_all(b"\n    }")?;
    }
    out.write_all(if plan.nodes.is_empty() { b"]" } else { b"\n  ]" })?;
    if let Some(zones) = &plan.zones {
        out.write_all(b",\n  \"zones\": [")?;
        for (i, zone) in zones.iter().enumerate() {
            out.write_all(if i == 0 { b"\n    {\n      \"name\": " } else { b",\n    {\n      \"name\": " })?;
            string(out, zone.zone.name())?;
            out.write_all(b",\n      \"state\": ")?;
            string(out, zone.state.as_str())?;
            write!(
                out,
                ",\n      \"nodes\": {},\n      \"notReady\": {},\n      \"ratePerSecond\": ",
                zone.nodes, zone.not_ready
            )?;
            serde_json::to_writer(&mut *out, &zone.rate_per_second)?;
            if let Some(drain) = &zone.drain {
                write!(out, ",\n      \"drain\": {{\n        \"nodes\": {},\n        \"everySeconds\": ", drain.nodes)?;
                serde_json::to_writer(&mut *out, &drain.every.as_secs_f64())?;
                out.write_all(b",\n        \"first\": ")?;
                string(out, &rfc3339(drain.first))?;
                out.write_all(b",\n        \"last\": ")?;
                string(out, &rfc3339(drain.last))?;
                out.write_all(b"\n      }")?;
            }
            out.write_all(b"\n    }")?;
        }
        out.write_all(if zones.is_empty() { b"]" } else { b"\n  ]" })?;
    }
    if let Some(settings) = settings {
        out.write_all(b",\n  \"controllerSettings\": ")?;
        indented(out, &SettingsDoc::from(settings))?;
    }
    if let Some(owners) = &plan.owners {
        out.write_all(b",\n  \"owners\": ")?;
        indented(out, &owners.iter().map(OwnerDoc::from).collect::<Vec<_>>())?;
    }
    if let Some(timeline) = timeline {
        out.write_all(b",\n  \"timeline\": ")?;
        indented(out, &TimelineDoc::from(timeline))?;
    }
    out.write_all(b"\n}\n")
}

/// A [`LifecycleDoc`]'s fields, after a node's taints.
fn lifecycle_fields(out: &mut impl Write, lifecycle: &NodeLifecycle) -> io::Result<()> {
    let forecast = &lifecycle.forecast;
    out.write_all(b",\n      \"ready\": ")?;
    match forecast.ready {
        Some(ready) => string(out, ready.as_str())?,
        None => out.write_all(b"null")?,
    }
    out.write_all(b",\n      \"lastHeartbeat\": ")?;
    time(out, forecast.last_heartbeat)?;
    out.write_all(b",\n      \"zone\": ")?;
    string(out, forecast.zone.name())?;
    out.write_all(b",\n      \"predictedTaint\": ")?;
    match forecast.taint {
        None => out.write_all(b"null")?,
        Some(taint) => {
            out.write_all(b"{\n        \"key\": ")?;
            string(out, taint.key.key())?;
            out.write_all(b",\n        \"effect\": \"NoExecute\",\n        \"earliest\": ")?;
            time(out, Some(taint.earliest))?;
            out.write_all(b",\n        \"latest\": ")?;
            time(out, taint.latest)?;
            out.write_all(b",\n        \"basis\": ")?;
            string(out, taint.basis.as_str())?;
            out.write_all(b"\n      }")?;
        }
    }
    out.write_all(b",\n      \"held\": ")?;
    match &forecast.held {
        None => out.write_all(b"null"),
        Some(held) => {
            out.write_all(b"{\n        \"reason\": ")?;
            string(out, held.reason.as_str())?;
            out.write_all(b",\n        \"zone\": ")?;
            string(out, held.zone.name())?;
            out.write_all(b"\n      }")
        }
    }
}

/// A [`PodDoc`]'s fields, one level deeper than the pod's braces.
fn pod_fields(out: &mut impl Write, pod: &PodPlan) -> io::Result<()> {
    out.write_all(b"\n          \"namespace\": ")?;
    string(out, pod.key().namespace())?;
    out.write_all(b",\n          \"name\": ")?;
    string(out, pod.key().name())?;
    out.write_all(b",\n          \"uid\": ")?;
    string(out, pod.uid().text().as_str())?;
    out.write_all(b",\n          \"phase\": ")?;
    string(out, pod.phase())?;
    out.write_all(if pod.terminating() {
        b",\n          \"terminating\": true"
    } else {
        b",\n          \"terminating\": false"
    })?;
    if let Some(since) = pod.stuck_since() {
        out.write_all(b",\n          \"stuck\": true,\n          \"stuckSince\": ")?;
        time(out, Some(since))?;
    }
    out.write_all(b",\n          \"verdict\": ")?;
    string(out, verdict_name(pod.verdict))?;
    out.write_all(b",\n          \"evictAt\": ")?;
    time(out, pod.evict_at)?;
    if pod.basis.is_some_and(Basis::windowed) {
        out.write_all(b",\n          \"evictAtLatest\": ")?;
        time(out, pod.evict_at_latest)?;
    }
    out.write_all(b",\n          \"since\": ")?;
    time(out, pod.since)?;
    out.write_all(if pod.overdue {
        b",\n          \"overdue\": true,\n          \"tolerationSeconds\": "
    } else {
        b",\n          \"overdue\": false,\n          \"tolerationSeconds\": "
    })?;
    match pod.toleration_seconds {
        Some(seconds) => write!(out, "{seconds}")?,
        None => out.write_all(b"null")?,
    }
    out.write_all(b",\n          \"untolerated\": [")?;
    taints(out, &pod.untolerated, 6)?;
    out.write_all(b",\n          \"basis\": ")?;
    match pod.basis {
        Some(basis) => string(out, basis_name(basis))?,
        None => out.write_all(b"null")?,
    }
    if let Some(edited) = &pod.tolerations_edited {
        out.write_all(b",\n          \"tolerationsEdited\": {\n            \"time\": ")?;
        time(out, Some(edited.written.at))?;
        out.write_all(b",\n            \"manager\": ")?;
        string(out, &edited.written.manager)?;
        if let Some(owner) = &edited.owner {
            out.write_all(b",\n            \"owner\": {\n              \"kind\": ")?;
            string(out, owner.kind())?;
            out.write_all(b",\n              \"name\": ")?;
            string(out, owner.name())?;
            out.write_all(b"\n            }")?;
        }
        match edited_deadline(edited.deadline) {
            (Some(from), _) => {
                out.write_all(b",\n            \"deadlineFrom\": ")?;
                string(out, from)?;
            }
            (None, unknown) => {
                out.write_all(b",\n            \"deadlineFrom\": null,\n            \"unknownBecause\": ")?;
                string(out, unknown.unwrap_or_default())?;
            }
        }
        out.write_all(b"\n          }")?;
    }
    if !pod.devices().is_empty() {
        // Rare (pods with tainted DRA devices): serde's pretty writer, indented to the pod's fields.
        out.write_all(b",\n          \"devices\": ")?;
        let docs: Vec<DeviceDoc> = pod.devices().iter().map(DeviceDoc::from).collect();
        let text = serde_json::to_string_pretty(&docs).map_err(io::Error::other)?;
        for (i, line) in text.lines().enumerate() {
            if i > 0 {
                out.write_all(b"\n          ")?;
            }
            out.write_all(line.as_bytes())?;
        }
    }
    Ok(())
}

/// The elements of a taint array and its closing bracket; `level` is the elements' indentation level
/// (two spaces each).
fn taints(out: &mut impl Write, taints: &[Taint], level: usize) -> io::Result<()> {
    const SPACES: &[u8] = b"                ";
    let (close, outer, inner) = (&SPACES[..2 * level - 2], &SPACES[..2 * level], &SPACES[..2 * level + 2]);
    for (i, taint) in taints.iter().enumerate() {
        out.write_all(if i == 0 { b"\n" } else { b",\n" })?;
        out.write_all(outer)?;
        field(out, b"{\n", inner, b"\"key\": ")?;
        string(out, &taint.key)?;
        field(out, b",\n", inner, b"\"value\": ")?;
        string(out, &taint.value)?;
        field(out, b",\n", inner, b"\"effect\": ")?;
        string(out, taint.effect.as_str())?;
        field(out, b",\n", inner, b"\"timeAdded\": ")?;
        time(out, taint.time_added)?;
        out.write_all(b"\n")?;
        out.write_all(outer)?;
        out.write_all(b"}")?;
    }
    if taints.is_empty() {
        return out.write_all(b"]");
    }
    out.write_all(b"\n")?;
    out.write_all(close)?;
    out.write_all(b"]")
}

#[cfg(test)]
mod tests;
