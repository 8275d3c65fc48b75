//! What a plan holds: per node, per pod, a verdict, a deadline and where its clock started.

use std::sync::Arc;

use crate::devices::{DeviceEviction, DeviceReport};
use crate::lifecycle::{NodeForecast, ZoneForecast};
use crate::model::{NodeName, PodKey, Taint, Uid};
use crate::queue::{Cause, Work};
use crate::snapshot::{Owner, SnapshotPod, TaintsWritten, WhatIf};
use crate::time::Timestamp;

/// What the replay predicts for one pod.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    /// Some NoExecute taint is untolerated: deleted when it was observed.
    EvictNow,
    /// Every taint is tolerated for a finite time: deleted at `evict_at`.
    EvictAt,
    /// The node is tainted and the pod tolerates it forever.
    Never,
    /// The node has no NoExecute taint.
    Unaffected,
}

/// Where a deletion's clock started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Basis {
    /// A taint's `timeAdded`.
    TaintTimeAdded,
    /// When a taint without `timeAdded` was written: the node's `managedFields` entry that owns
    /// `spec.taints` (its `time`, whole seconds).
    TaintWritten,
    /// A taint without `timeAdded` that was there before the node's taints were last written: that
    /// write added a taint with `timeAdded` (the node lifecycle controller's), was the node
    /// lifecycle controller's, or left another taint without `timeAdded` whose write it may be
    /// (docs/upstream.md, "How the replay reconstructs history"). Its countdown began before the
    /// write and no earlier than the pod's binding: the deadline is a window, and an enforcer acts
    /// at its end.
    TaintRewritten,
    /// The pod's binding (its `PodScheduled` transition or creation).
    PodScheduled,
    /// The controller's restart (its Lease's `acquireTime`).
    ControllerRestart,
    /// The first condition taint of the node's not-ready spell, which the node lifecycle controller
    /// has swapped since ([`mark_swapped`](super::mark_swapped)): it went on within a window after the node's
    /// `NodeNotReady` event, and so the deadline is a window.
    NodeNotReady,
    /// When a dump read after it was taken was taken (its newest heartbeat): a taint without
    /// `timeAdded` or a record of its writing was there by then.
    InputTaken,
    /// The evaluation instant (a taint without `timeAdded` or a record of its writing, a clamped
    /// time, a what-if).
    Now,
    /// A NoExecute taint the node lifecycle controller is expected to add (docs/node-lifecycle.md): the
    /// clock starts when it is added, somewhere in its window.
    PredictedTaint,
    /// A NoExecute taint on a DRA device the pod's claim holds: the device-taint controller deletes
    /// the pod first, and its clock started at the taint's `timeAdded`.
    DeviceTaint,
}

impl Basis {
    /// Whether a deadline counted from it is a window (`evict_at` to `evict_at_latest`): a taint
    /// predicted, a swapped taint's first, or a taint whose write was recorded over.
    #[must_use]
    pub fn windowed(self) -> bool {
        matches!(self, Self::PredictedTaint | Self::NodeNotReady | Self::TaintRewritten)
    }
}

/// The prediction for one pod: the pod as the snapshot has it, and what the replay decided.
///
/// A plan borrows its pods from the snapshot it was replayed from instead of copying their name,
/// UID and phase: a dump of many small pods then holds each once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodPlan<'a> {
    /// The pod.
    pub pod: &'a SnapshotPod,
    /// The verdict.
    pub verdict: Verdict,
    /// When the pod is (or was) deleted; for a [`windowed`](Basis::windowed) basis, the earliest
    /// instant.
    pub evict_at: Option<Timestamp>,
    /// For a [`windowed`](Basis::windowed) basis with a deletion, the latest instant (`None`: the
    /// predicted taint may never come); `None` otherwise.
    pub evict_at_latest: Option<Timestamp>,
    /// When the deciding countdown started.
    pub since: Option<Timestamp>,
    /// Where `since` came from.
    pub basis: Option<Basis>,
    /// The deciding `tolerationSeconds` (as written), for [`Verdict::EvictAt`].
    pub toleration_seconds: Option<i64>,
    /// The node's NoExecute taints at `now` that no toleration of the pod tolerates (shared by the
    /// node's pods with the same tolerations).
    pub untolerated: Arc<[Taint]>,
    /// `evict_at` is strictly before `now`.
    pub overdue: bool,
    /// The pod is stuck terminating: its grace period is over and its node's kubelet is gone, so
    /// nothing finishes the deletion (see [`stuck_since`](Self::stuck_since)).
    pub stuck: bool,
    /// When its tolerations were written after its countdown began, and by whom (their
    /// `managedFields` entry; [`mark_edited`](super::mark_edited)): the controller keeps the countdown it began, with the
    /// `tolerationSeconds` of then, which the pod no longer shows. `evict_at` is counted with its
    /// controller's pod template when that recovers them ([`EditedDeadline::OwnerTemplate`]), else
    /// with the tolerations of now, and is not known.
    pub tolerations_edited: Option<Box<TolerationsEdited>>,
    /// What the device-taint controller decides for it ([`show_devices`](super::show_devices)), when its claims hold a
    /// device with a NoExecute taint (boxed: most pods have none, and a plan holds every pod).
    pub devices: Option<Box<DeviceReport>>,
}

impl<'a> PodPlan<'a> {
    /// Namespace and name.
    #[must_use]
    pub fn key(&self) -> &'a PodKey {
        &self.pod.pod.key
    }

    /// `metadata.uid`.
    #[must_use]
    pub fn uid(&self) -> &'a Uid {
        &self.pod.pod.uid
    }

    /// `status.phase`.
    #[must_use]
    pub fn phase(&self) -> &'a str {
        &self.pod.phase
    }

    /// Whether its deletion was already issued.
    #[must_use]
    pub fn terminating(&self) -> bool {
        self.pod.terminating
    }

    /// The NoExecute taints on the DRA devices its claims hold; empty without.
    #[must_use]
    pub fn devices(&self) -> &[DeviceEviction] {
        self.devices.as_ref().map_or(&[], |report| &report.evictions)
    }

    /// Since when the pod has been stuck terminating, when it is [`stuck`](Self::stuck): its
    /// `deletionTimestamp`.
    #[must_use]
    pub fn stuck_since(&self) -> Option<Timestamp> {
        self.pod.deletion_timestamp.filter(|_| self.stuck)
    }
}

/// A pod's tolerations written after its countdown began ([`mark_edited`](super::mark_edited)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TolerationsEdited {
    /// When they were written, and by whom (`managedFields`).
    pub written: TaintsWritten,
    /// The pod's controller, when it has one.
    pub owner: Option<Owner>,
    /// Whether the deadline was recovered, and if not, why.
    pub deadline: EditedDeadline,
}

/// Where an edited pod's deadline comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EditedDeadline {
    /// Its controller's pod template holds the tolerations it was created with: the countdown is
    /// replayed with them from its start, and `evict_at` is the controller's deadline.
    OwnerTemplate,
    /// Not known: a bare pod has no template to recover the value from.
    NoOwner,
    /// Not known: its controller's kind has no pod template read.
    OwnerKind,
    /// Not known: its controller could not be read.
    OwnerUnread,
    /// Not known: the template's tolerations differ from the pod's in more than
    /// `tolerationSeconds` (the template changed since, or the pod was edited otherwise).
    TemplateDiffers,
    /// Not known: a toleration the API server added at the pod's creation (not in the template)
    /// decides the countdown.
    AddedAtCreation,
    /// Not known: with the template's tolerations the pod tolerated the taints forever, so its
    /// countdown began with an edit, which `managedFields` may not date.
    ForeverThen,
}

impl EditedDeadline {
    /// Whether `evict_at` is the controller's deadline.
    #[must_use]
    pub fn known(self) -> bool {
        self == Self::OwnerTemplate
    }
}

/// The prediction for one node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodePlan<'a> {
    /// The node.
    pub name: NodeName,
    /// Its NoExecute taints at `now` (what-ifs applied).
    pub taints: Arc<[Taint]>,
    /// When its taints were last written (`managedFields`), when one of them has no `timeAdded`
    /// and the input says; else `None`.
    pub taints_written: Option<TaintsWritten>,
    /// Its pods, by (`evict_at`, none last; namespace; name).
    pub pods: Vec<PodPlan<'a>>,
    /// What the node lifecycle controller is expected to do to it; `None` when not predicted.
    pub lifecycle: Option<NodeLifecycle>,
}

/// A node's health and the node lifecycle controller's expected action (docs/output.md).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeLifecycle {
    /// The prediction for the node.
    pub forecast: NodeForecast,
    /// When its `Ready` condition last changed (`lastTransitionTime`).
    pub ready_since: Option<Timestamp>,
}

/// The replay's result.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan<'a> {
    /// The evaluation instant.
    pub now: Timestamp,
    /// One entry per selected node, in the order given.
    pub nodes: Vec<NodePlan<'a>>,
    /// Every zone's state, when the node lifecycle controller was predicted.
    pub zones: Option<Vec<ZoneForecast>>,
    /// The Kubernetes minor version whose device-taint controller [`show_devices`](super::show_devices) followed; `None`
    /// when no pod uses a DRA claim.
    pub device_taints: Option<u32>,
    /// The owners losing pods ([`owner_losses`](super::owner_losses)), when the roll-up was asked for.
    pub owners: Option<Vec<OwnerLoss<'a>>>,
    /// What a what-if assumed; `None` for the cluster as it is.
    pub assumed: Option<Assumed>,
}

/// What a what-if plan assumed: taints added or removed on the selected nodes, and nodes whose
/// kubelets stop heartbeating at the plan's `now`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Assumed {
    /// The taints added and removed, in order.
    pub changes: Vec<WhatIf>,
    /// The nodes going down, by name, in order.
    pub down: Vec<NodeName>,
    /// The label selector that chose nodes going down, as written.
    pub down_selector: Option<String>,
}

impl Plan<'_> {
    /// The deletions the plan predicts, as queue work: what `run` seeds its engine with.
    #[must_use]
    pub fn work(&self) -> Vec<(PodKey, Work)> {
        let pods = self.nodes.iter().flat_map(|node| &node.pods);
        pods.filter_map(|pod| {
            let cause = match pod.verdict {
                Verdict::EvictNow => Cause::Untolerated,
                Verdict::EvictAt => Cause::Expired { seconds: pod.toleration_seconds? },
                Verdict::Never | Verdict::Unaffected => return None,
            };
            // A predicted taint is not there yet: nothing is queued for it; a device taint is the
            // other controller's.
            if matches!(pod.basis, Some(Basis::PredictedTaint | Basis::DeviceTaint)) {
                return None;
            }
            // A swapped taint's first countdown, or one begun before a later write of the node's
            // taints, ends within a window: an enforcer deletes at its end, never before the
            // controller would have.
            let fire = match pod.basis {
                Some(Basis::NodeNotReady | Basis::TaintRewritten) => pod.evict_at_latest.or(pod.evict_at)?,
                _ => pod.evict_at?,
            };
            Some((pod.key().clone(), Work { created: pod.since?, fire, cause }))
        })
        .collect()
    }
}

/// By (`evict_at`, none last; namespace; name).
pub(crate) fn sort_pods(pods: &mut [PodPlan<'_>]) {
    pods.sort_by(pod_order);
}

/// (`evict_at`, none last; namespace; name).
pub(crate) fn pod_order(a: &PodPlan<'_>, b: &PodPlan<'_>) -> std::cmp::Ordering {
    (a.evict_at.is_none(), a.evict_at, a.key()).cmp(&(b.evict_at.is_none(), b.evict_at, b.key()))
}

/// How one owner's pods fare in a plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnerLoss<'a> {
    /// The owner's namespace (its pods'): their shared text, so that a loss is a few words (an
    /// outage of a zone can hold an owner lost per pod).
    pub namespace: &'a Arc<str>,
    /// The owner.
    pub owner: &'a Owner,
    /// Its running pods in the snapshot, on any node: bound, not terminating, not finished (a
    /// `u32`: an outage of a zone can hold an owner lost per pod).
    pub pods: u32,
    /// Of those, the pods the plan deletes.
    pub deleted: u32,
    /// The earliest deletion.
    pub first: Timestamp,
    /// When the last of them is deleted at the latest; `None` when a predicted taint's window is
    /// open-ended (it may never come).
    pub last: Option<Timestamp>,
}

impl OwnerLoss<'_> {
    /// Whether the plan deletes every running pod of the owner: no replica is left.
    #[must_use]
    pub fn none_left(&self) -> bool {
        self.deleted == self.pods
    }
}
