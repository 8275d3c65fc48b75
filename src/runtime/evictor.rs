//! The seam between `run` and the cluster: an [`Evictor`] makes one deletion attempt and writes one
//! event at a time; [`Outcome`] says how an attempt ended, [`Notice`] which event to write. The
//! cluster layer implements it (`cluster::KubeEvictor`), and so do the tests' recorders.

use std::future::Future;

use super::throttle::Throttle;
use crate::engine::model::PodRef;
use crate::metrics::FailureReason;

/// How one deletion attempt ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The pod was deleted (or, in a dry run, would have been).
    Deleted,
    /// The pod was already gone, or a replacement holds its name (UID precondition failed).
    Gone(String),
    /// A PodDisruptionBudget refused the eviction (`--mode evict`): a refusal for this pod only,
    /// retried with its own backoff until the budget allows it.
    Blocked {
        /// The budget, `NAMESPACE/NAME`.
        budget: String,
        /// What the server said, in one line.
        message: String,
    },
    /// The attempt failed; it is worth trying again.
    Failed {
        /// The kind of failure (the metrics' label).
        reason: FailureReason,
        /// What went wrong, in one line.
        message: String,
    },
}

/// Which of upstream's two NoExecute controllers a deletion stands in for: its events and the pod's
/// condition say so, in that controller's words.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Controller {
    /// The taint-eviction controller (node taints).
    #[default]
    NodeTaints,
    /// The device-taint-eviction controller (DRA device taints, 1.33+).
    DeviceTaints,
}

impl Controller {
    /// The events' reason.
    #[must_use]
    pub fn event_reason(self) -> &'static str {
        match self {
            Self::NodeTaints => "TaintManagerEviction",
            Self::DeviceTaints => "DeviceTaintManagerEviction",
        }
    }

    /// The `DisruptionTarget` condition's reason and message.
    #[must_use]
    pub fn condition(self) -> (&'static str, &'static str) {
        match self {
            Self::NodeTaints => ("DeletionByTaintManager", "Taint manager: deleting due to NoExecute taint"),
            Self::DeviceTaints => {
                ("DeletionByDeviceTaintManager", "Device Taint manager: deleting due to NoExecute taint")
            }
        }
    }
}

/// The events upstream emits around a deletion, and the one `--mode evict` adds.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Notice {
    /// When a deletion fires: `Marking for deletion Pod NS/NAME` (node taints), `Marking for
    /// deletion` (device taints).
    Marking(Controller),
    /// When a live timer is cancelled: `Cancelling deletion of Pod NS/NAME` (node taints),
    /// `Cancelling deletion` (device taints).
    Cancelling(Controller),
    /// A PodDisruptionBudget (`NAMESPACE/NAME`) refuses the pod's eviction; sent when a pod becomes
    /// blocked by a budget, not at every retry.
    Blocked {
        /// The budget, `NAMESPACE/NAME`.
        budget: String,
    },
}

impl Notice {
    /// The controller the event speaks for (a budget's refusal: the node-taint one's, as `run`'s
    /// other events).
    #[must_use]
    pub fn controller(&self) -> Controller {
        match self {
            Self::Marking(controller) | Self::Cancelling(controller) => *controller,
            Self::Blocked { .. } => Controller::NodeTaints,
        }
    }
}

/// Where deletions and their events go: the cluster, a dry run, or a test's recorder.
pub trait Evictor: Clone + Send + Sync + 'static {
    /// Whether nothing is written.
    fn is_dry_run(&self) -> bool;
    /// One attempt to delete the pod (its UID is the precondition), as `controller` does.
    fn evict(&self, pod: &PodRef, controller: Controller) -> impl Future<Output = Outcome> + Send;
    /// Records an event about the pod; failures are the evictor's to log. `run` calls it from one
    /// task, one event at a time, in the order they were sent ([`super::events`]).
    fn notify(&self, pod: &PodRef, notice: Notice) -> impl Future<Output = ()> + Send;
    /// Writes what the evictor holds back (the counts of event series), when `run` stops.
    fn flush(&self) -> impl Future<Output = ()> + Send {
        async {}
    }
    /// The limiter its writes go through, if any: a failed attempt the server pushed back on is
    /// retried when the pushback ends, not after the backoff.
    fn throttle(&self) -> Option<&Throttle> {
        None
    }
}
