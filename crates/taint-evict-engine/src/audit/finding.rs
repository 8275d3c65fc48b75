//! What an audit finds: a rule broken, how badly, and by which pods.

use std::ops::Range;

use super::scenarios::Down;
use crate::plan::OwnerLoss;
use crate::snapshot::{Owner, SnapshotPod};
use crate::time::Timestamp;

/// How much a finding matters, in the order `--fail-on` compares them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Worth knowing: by design for some workloads.
    Low,
    /// A pod deleted sooner, or kept longer, than its operator likely meant.
    Medium,
    /// A workload down, or pods bound to a dead node, until someone acts.
    High,
}

impl Severity {
    /// The name `-o json` and `--fail-on` use.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
        }
    }
}

/// The rules an audit checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rule {
    /// An owner loses every running replica when one node goes down, or one zone: its replicas
    /// share that node or zone.
    LosesEveryReplica,
    /// A pod that is not a DaemonSet's tolerates `unreachable` or `not-ready` for ever: when its node
    /// dies it is never deleted, so its owner never replaces it (it shows `Terminating` or `Unknown`
    /// until someone deletes it by hand).
    ToleratesNodeLossForever,
    /// A pod that is not a DaemonSet's tolerates `unreachable` or `not-ready` for less than the node
    /// lifecycle controller's grace period: a network blip a little longer than that grace deletes it.
    DeletedOnABlip,
    /// A pod with no owner that a `NoExecute` taint it does not name deletes at once: nothing makes it
    /// again.
    BarePodDeletedAtOnce,
    /// A toleration with `operator: Exists` and no key, for every effect or `NoExecute`: the pod
    /// tolerates every node taint (a device's taints are its claim's to tolerate: docs/device-taints.md),
    /// and no maintenance taint moves it.
    ToleratesEveryTaint,
    /// Every running replica of an owner runs on one node, in a cluster of several: that node's
    /// loss takes them all. Found from placement alone, when no outage predicted says it.
    ReplicasOnOneNode,
    /// Every running replica of an owner runs in one zone, in a cluster of several: that zone's
    /// loss takes them all. Found from placement alone, when no outage predicted says it.
    ReplicasInOneZone,
    /// A PodDisruptionBudget that one zone's outage (one node's, when the zones are not known) leaves
    /// with fewer healthy replicas of a template it selects than it needs: taint eviction does not
    /// ask it, and every voluntary eviction of its pods is refused until they run again.
    BudgetBrokenByAnOutage,
}

impl Rule {
    /// The rule's id, as findings name it.
    #[must_use]
    pub fn id(self) -> &'static str {
        match self {
            Self::LosesEveryReplica => "loses-every-replica",
            Self::ToleratesNodeLossForever => "tolerates-node-loss-forever",
            Self::DeletedOnABlip => "deleted-on-a-blip",
            Self::BarePodDeletedAtOnce => "bare-pod-deleted-at-once",
            Self::ToleratesEveryTaint => "tolerates-every-taint",
            Self::ReplicasOnOneNode => "replicas-on-one-node",
            Self::ReplicasInOneZone => "replicas-in-one-zone",
            Self::BudgetBrokenByAnOutage => "budget-broken-by-an-outage",
        }
    }
}

/// A rule broken by one owner's pods (or by one pod with no owner), as [`Findings::iter`] gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Finding<'a> {
    /// The rule.
    pub rule: Rule,
    /// How much it matters.
    pub severity: Severity,
    /// The pods' namespace.
    pub namespace: &'a str,
    /// The controller the pods name; `None` for a pod with no owner (then `pods` holds it alone).
    pub owner: Option<&'a Owner>,
    /// The pods that break the rule, in the snapshot's order.
    pub pods: &'a [&'a SnapshotPod],
    /// The toleration at fault: its index in the first pod's `spec.tolerations`.
    pub toleration: Option<usize>,
    /// The taint key the rule was checked against, when it is about one (`unreachable`,
    /// `not-ready`).
    pub taint: Option<&'static str>,
    /// The deciding `tolerationSeconds`, for [`Rule::DeletedOnABlip`].
    pub seconds: Option<i64>,
    /// The outage that brings it, for [`Rule::LosesEveryReplica`].
    pub scenario: Option<&'a Down>,
    /// When the last replica is deleted at the latest, for [`Rule::LosesEveryReplica`] (`None`
    /// there: a predicted taint's window is open, the controller may hold it).
    pub at: Option<Timestamp>,
    /// The node or zone every replica runs in, for [`Rule::ReplicasOnOneNode`] and
    /// [`Rule::ReplicasInOneZone`].
    pub place: Option<&'a str>,
}

/// An audit's findings, most severe first, each rule's own order kept within a severity: the owners
/// that lose every replica ([`Rule::LosesEveryReplica`], high) by namespace and owner, then the rules
/// on tolerations.
///
/// A cluster can have an owner per pod, so an owner that loses every replica is kept as its loss in
/// the outage that brings it; each [`Finding`] is made as it is read.
#[derive(Clone, Debug, Default)]
pub struct Findings<'a> {
    /// [`Rule::LosesEveryReplica`]: the outage, the owner's loss and its pods (in `pods`).
    losses: Vec<(&'a Down, &'a OwnerLoss<'a>, Range<usize>)>,
    /// The rules on tolerations, most severe first: each finding with no pods, and its pods (in
    /// `pods`).
    others: Vec<(Finding<'a>, Range<usize>)>,
    /// Every finding's pods, one finding's after another's.
    pods: Vec<&'a SnapshotPod>,
}

impl<'a> Findings<'a> {
    /// The findings of owners that lose every replica: each outage and loss (by namespace and owner)
    /// with the owner's pods, `pods` sorted alike.
    pub(super) fn of_losses(
        losses: Vec<(&'a Down, &'a OwnerLoss<'a>, Range<usize>)>,
        pods: Vec<&'a SnapshotPod>,
    ) -> Self {
        Self { losses, others: Vec::new(), pods }
    }

    /// Findings of other rules, most severe first, each with its pods.
    pub(super) fn of_others(found: impl IntoIterator<Item = (Finding<'a>, Vec<&'a SnapshotPod>)>) -> Self {
        let mut findings = Self::default();
        for (finding, pods) in found {
            let start = findings.pods.len();
            findings.pods.extend(pods);
            findings.others.push((Finding { pods: &[], ..finding }, start..findings.pods.len()));
        }
        findings
    }

    /// Adds `more`'s findings, keeping the order: the most severe first, then each rule's.
    pub fn extend(&mut self, more: Findings<'a>) {
        let offset = self.pods.len();
        let moved = |pods: Range<usize>| pods.start + offset..pods.end + offset;
        self.pods.extend(more.pods);
        self.losses.extend(more.losses.into_iter().map(|(down, loss, pods)| (down, loss, moved(pods))));
        self.others.extend(more.others.into_iter().map(|(finding, pods)| (finding, moved(pods))));
        // Stable: each severity's findings in the order they came.
        self.others.sort_by_key(|(finding, _)| std::cmp::Reverse(finding.severity));
    }

    /// Keeps only the findings of namespace `namespace`.
    pub fn retain_namespace(&mut self, namespace: &str) {
        self.losses.retain(|(_, loss, _)| **loss.namespace == *namespace);
        self.others.retain(|(finding, _)| finding.namespace == namespace);
    }

    /// How many findings.
    #[must_use]
    pub fn len(&self) -> usize {
        self.losses.len() + self.others.len()
    }

    /// Whether there is none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The findings, in order.
    pub fn iter(&self) -> impl Iterator<Item = Finding<'_>> {
        let losses = self.losses.iter().map(|(down, loss, pods)| Finding {
            rule: Rule::LosesEveryReplica,
            severity: Severity::High,
            namespace: loss.namespace,
            owner: Some(loss.owner),
            pods: &self.pods[pods.clone()],
            toleration: None,
            taint: None,
            seconds: None,
            scenario: Some(down),
            at: loss.last,
            place: None,
        });
        let others = self.others.iter().map(|(finding, pods)| Finding { pods: &self.pods[pods.clone()], ..*finding });
        losses.chain(others)
    }
}
