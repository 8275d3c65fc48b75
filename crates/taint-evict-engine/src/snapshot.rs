//! What `plan` reads: a snapshot of the cluster (its nodes and pods, the controller's restart), and
//! the what-if changes to apply to it.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::devices::ClaimUse;
use crate::model::{Effect, NodeName, Pod, Taint, Toleration, shared_list};
use crate::time::Timestamp;
pub use crate::workloads::{Owner, Workloads};

/// Everything `plan` reads from a cluster or a dump.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    /// Every node read.
    pub nodes: Vec<SnapshotNode>,
    /// Every pod read.
    pub pods: Vec<SnapshotPod>,
    /// `spec.acquireTime` of the `kube-system/kube-controller-manager` Lease, when it was read.
    pub controller_acquired: Option<Timestamp>,
    /// For a dump evaluated after it was taken: when it was taken (its newest heartbeat). A taint
    /// without `timeAdded` or a record of its writing was there by then: its countdowns start then
    /// at the latest, instead of at `now` (docs/upstream.md).
    pub taken: Option<Timestamp>,
    /// What the input says of the pods' controllers: the labels each one's pods share, and the
    /// controllers' own controllers whose objects it holds (read when the pods' controllers are).
    pub workloads: Workloads,
}

impl Snapshot {
    /// [`SnapshotPod::gate_comparison_operators`] for every pod; how many have `Lt`/`Gt` tolerations.
    pub fn gate_comparison_operators(&mut self, enabled: bool) -> usize {
        self.pods.iter_mut().map(|pod| pod.gate_comparison_operators(enabled)).filter(|&compares| compares).count()
    }

    /// Adds `other`'s objects to this snapshot (a later Lease wins).
    pub fn merge(&mut self, other: Snapshot) {
        self.nodes.extend(other.nodes);
        self.pods.extend(other.pods);
        self.workloads.merge(other.workloads);
        self.controller_acquired = other.controller_acquired.or(self.controller_acquired);
    }
}

/// A snapshot's nodes by name, found once for many plans (an audit's outages): the first node of
/// each name.
#[derive(Clone, Debug, Default)]
pub struct NodesByName<'s>(HashMap<&'s NodeName, usize>);

impl<'s> NodesByName<'s> {
    /// The nodes of `snapshot` by name.
    #[must_use]
    pub fn new(snapshot: &'s Snapshot) -> Self {
        let mut first = HashMap::with_capacity(snapshot.nodes.len());
        for (i, node) in snapshot.nodes.iter().enumerate() {
            first.entry(&node.name).or_insert(i);
        }
        Self(first)
    }

    /// The index of the first node named `name`.
    #[must_use]
    pub fn first(&self, name: &NodeName) -> Option<usize> {
        self.0.get(name).copied()
    }
}

/// A node in a snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SnapshotNode {
    /// Its name.
    pub name: NodeName,
    /// `metadata.labels`, for `-l` on a dump.
    pub labels: BTreeMap<String, String>,
    /// `spec.taints` with the `NoExecute` effect, in order: the only ones the engine acts on
    /// (shared with the plan and the engine).
    pub taints: Arc<[Taint]>,
    /// `spec.taints` with any other effect, in order.
    ///
    /// Apart, so that a node of many taints of mixed effects holds each once: the plan and the
    /// engine share the `NoExecute` list instead of each filtering a copy of it.
    pub other_taints: Arc<[Taint]>,
    /// When `spec.taints` was last written, as the node's `managedFields` say; `None` when the
    /// input has none (a `kubectl get -o json` dump leaves them out).
    pub taints_written: Option<TaintsWritten>,
    /// Its `Ready` condition's `lastTransitionTime` while that condition is not `True`: when the
    /// node last went not ready, or between `False` and `Unknown` (docs/upstream.md, "A taint
    /// swapped"); `None` when it is `True`, absent, or the input leaves it out.
    pub ready_changed: Option<Timestamp>,
}

/// The `managedFields` entry that owns a node's `spec.taints`: when it last wrote them, and who.
///
/// A taint without `timeAdded` started counting when the taint-eviction controller saw it, about
/// when it was written: at this `time` (whole seconds: within the second after it), or earlier when
/// the same manager wrote the list again since (docs/plan.md, "When the clock started").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaintsWritten {
    /// The entry's `time`.
    pub at: Timestamp,
    /// The entry's `manager` (`kubectl-taint`, `kube-controller-manager`, …).
    pub manager: Arc<str>,
}

/// A pod's tolerations written after its creation: the `managedFields` entry that owns
/// `spec.tolerations` (when, by whom), and what its controller's pod template says of the
/// tolerations it was created with (docs/upstream.md, "A toleration edited").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TolerationsWritten {
    /// The entry's `time` and `manager`.
    pub written: TaintsWritten,
    /// The pod's controller and its template's tolerations, as read.
    pub template: OwnerTemplate,
}

/// A pod's `spec.tolerations` written after its creation, as the pod's own `managedFields` say:
/// the entry that owns them (the earliest, should several), and the pod's controller as its
/// `ownerReferences` name it, whose pod template says what it was created with (read apart, with
/// [`TolerationsWritten`]'s `template`; docs/upstream.md, "A toleration edited").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TolerationsEdited {
    /// The entry's `time` and `manager`.
    pub written: TaintsWritten,
    /// The `ownerReferences` entry with `controller: true`: its `apiVersion` (the group whose kind
    /// it is) and the owner; `None` for a bare pod.
    pub controller: Option<(Arc<str>, Owner)>,
}

/// A pod's controller and the tolerations of its pod template, as read for a pod whose tolerations
/// were edited.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OwnerTemplate {
    /// The pod has no controller.
    NoOwner,
    /// Its controller is of a kind whose pod template is not read (not a ReplicaSet, StatefulSet,
    /// DaemonSet or Job).
    OtherKind(Owner),
    /// Its controller could not be read (not allowed, gone, or another object under its name).
    Unread(Owner),
    /// Its controller's `spec.template.spec.tolerations`.
    Read(Owner, Arc<[Toleration]>),
}

impl OwnerTemplate {
    /// The controller, when the pod has one.
    #[must_use]
    pub fn owner(&self) -> Option<&Owner> {
        match self {
            Self::NoOwner => None,
            Self::OtherKind(owner) | Self::Unread(owner) | Self::Read(owner, _) => Some(owner),
        }
    }
}

impl SnapshotNode {
    /// Node `name` with `labels` and `taints` (every effect, in order).
    #[must_use]
    pub fn new(name: NodeName, labels: BTreeMap<String, String>, taints: impl IntoIterator<Item = Taint>) -> Self {
        let (no_execute, other): (Vec<Taint>, Vec<Taint>) = taints.into_iter().partition(Taint::is_no_execute);
        Self {
            name,
            labels,
            taints: shared_list(no_execute),
            other_taints: shared_list(other),
            taints_written: None,
            ready_changed: None,
        }
    }

    /// The same node, its `Ready` condition not `True` since `at`.
    #[must_use]
    pub fn with_ready_changed(mut self, at: Timestamp) -> Self {
        self.ready_changed = Some(at);
        self
    }

    /// The same node, its taints written at `at` by `manager`.
    #[must_use]
    pub fn with_taints_written(mut self, at: Timestamp, manager: &str) -> Self {
        self.taints_written = Some(TaintsWritten { at, manager: manager.into() });
        self
    }

    /// Its taints of every effect: the `NoExecute` ones, then the others.
    pub fn all_taints(&self) -> impl Iterator<Item = &Taint> {
        self.taints.iter().chain(self.other_taints.iter())
    }
}

/// A pod in a snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SnapshotPod {
    /// The engine's view of the pod.
    pub pod: Pod,
    /// When it was bound to its node: the `PodScheduled=True` transition, else its creation.
    pub bound_at: Option<Timestamp>,
    /// `status.phase` (shared: pods have a handful).
    pub phase: Arc<str>,
    /// Whether `metadata.deletionTimestamp` is set.
    pub terminating: bool,
    /// `metadata.deletionTimestamp`: when its termination grace period ends.
    pub deletion_timestamp: Option<Timestamp>,
    /// What its `Ready` condition says (`run --keep-last-ready` keeps the last ready replica of
    /// each owner; a plan does not read it).
    pub ready: PodReady,
    /// The DRA claims it names (`spec.resourceClaims`, resolved through its status); `None` for
    /// none, as most pods.
    pub claims: Option<Arc<[ClaimUse]>>,
    /// Its controller (the `ownerReferences` entry with `controller: true`), for a plan's roll-up
    /// per owner and `run --keep-last-ready`; `None` for a bare pod, or when not read (shared by the
    /// owner's pods).
    pub owner: Option<Owner>,
    /// Its tolerations written after its creation, as its `managedFields` say; `None` when they
    /// were not, or the input leaves `managedFields` out (as a `kubectl get -o json` dump does).
    pub tolerations_edited: Option<Arc<TolerationsEdited>>,
}

/// What a pod's `Ready` condition says, as `run --keep-last-ready` reads it (docs/run.md, "Keeping
/// the last ready replica").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PodReady {
    /// `Ready` is not `True` (or there is none).
    #[default]
    No,
    /// `Ready=True`.
    Yes,
    /// `Ready=False` while `ContainersReady=True`: its containers were ready when something other
    /// than them turned `Ready` off. The node lifecycle controller does so to every pod of a node it
    /// loses (`MarkPodsNotReady`, when the node's `Ready` leaves `True`); an unmet readiness gate
    /// shows the same.
    Marked,
}

impl PodReady {
    /// Whether `Ready` is `True`.
    #[must_use]
    pub fn is_ready(self) -> bool {
        self == Self::Yes
    }
}

impl SnapshotPod {
    /// `pod` running and ready, bound at `bound_at`, not terminating, with no claim and no owner:
    /// set the rest with struct update syntax (`SnapshotPod { owner, ..SnapshotPod::running(pod, at) }`).
    #[must_use]
    pub fn running(pod: Pod, bound_at: Option<Timestamp>) -> Self {
        Self {
            pod,
            bound_at,
            phase: "Running".into(),
            terminating: false,
            deletion_timestamp: None,
            ready: PodReady::Yes,
            claims: None,
            owner: None,
            tolerations_edited: None,
        }
    }

    /// Whether it counts as one of its owner's running replicas: bound, not terminating, not
    /// finished.
    #[must_use]
    pub fn runs(&self) -> bool {
        self.pod.node.is_some() && !self.terminating && !matches!(&*self.phase, "Succeeded" | "Failed")
    }

    /// Reads the pod's tolerations as kube-controller-manager does with its
    /// `TaintTolerationComparisonOperators` gate `enabled` ([`crate::model::gate_comparison_operators`]).
    /// Returns whether the pod has an `Lt` or `Gt` toleration.
    pub fn gate_comparison_operators(&mut self, enabled: bool) -> bool {
        let compares = self.pod.tolerations.iter().any(|t| t.operator.compares());
        if let Some(gated) = crate::model::gate_comparison_operators(&self.pod.tolerations, enabled) {
            self.pod.tolerations = gated;
        }
        compares
    }
}

/// A hypothetical change applied to every selected node at `now`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WhatIf {
    /// Add the taint, or replace the one with the same key and effect (`timeAdded` = `now`).
    Taint(Taint),
    /// Remove the taints with this key (and effect, when given).
    RemoveTaint {
        /// The taint key.
        key: String,
        /// Only this effect; every effect when `None`.
        effect: Option<Effect>,
    },
}

/// The node's taints (every effect) after the what-ifs (the list itself without any).
#[must_use]
pub fn apply_what_if(taints: &Arc<[Taint]>, what_if: &[WhatIf], now: Timestamp) -> Arc<[Taint]> {
    if what_if.is_empty() {
        return Arc::clone(taints);
    }
    let mut taints = taints.to_vec();
    for change in what_if {
        match change {
            WhatIf::Taint(new) => {
                let new = new.clone().with_time_added(now);
                match taints.iter_mut().find(|t| t.key == new.key && t.effect == new.effect) {
                    Some(existing) => *existing = new,
                    None => taints.push(new),
                }
            }
            WhatIf::RemoveTaint { key, effect } => {
                taints.retain(|t| *t.key != **key || effect.as_ref().is_some_and(|e| *e != t.effect));
            }
        }
    }
    taints.into()
}
