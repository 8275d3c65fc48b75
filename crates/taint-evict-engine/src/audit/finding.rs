//! What an audit finds: a rule broken, how badly, and by which pods.

use super::scenarios::Down;
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
    /// tolerates every taint, device taints too, and no maintenance taint moves it.
    ToleratesEveryTaint,
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
        }
    }
}

/// A rule broken by one owner's pods (or by one pod with no owner).
#[derive(Clone, Debug, PartialEq, Eq)]
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
    pub pods: Vec<&'a SnapshotPod>,
    /// The toleration at fault: its index in the first pod's `spec.tolerations`.
    pub toleration: Option<usize>,
    /// The taint key the rule was checked against, when it is about one (`unreachable`,
    /// `not-ready`).
    pub taint: Option<&'static str>,
    /// The deciding `tolerationSeconds`, for [`Rule::DeletedOnABlip`].
    pub seconds: Option<i64>,
    /// The outage that brings it, for [`Rule::LosesEveryReplica`].
    pub scenario: Option<Down>,
    /// When the last replica is deleted at the latest, for [`Rule::LosesEveryReplica`] (`None`
    /// there: a predicted taint's window is open, the controller may hold it).
    pub at: Option<Timestamp>,
}
