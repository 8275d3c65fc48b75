//! Deleting a pod as upstream does, with a UID precondition: the `DisruptionTarget` condition on its
//! status first, then DELETE; events `TaintManagerEviction` as the cluster's controller sends them.
//!
//! Or, with `--mode evict`, evicting it through the Eviction API (`policy/v1`, `pods/NAME/eviction`),
//! which checks the pod's PodDisruptionBudget first and sets the `DisruptionTarget` condition itself
//! (reason `EvictionByEvictionAPI`, Kubernetes 1.26 and later): no status PATCH of ours then. A
//! budget's refusal (429 naming the budget in its causes) is [`Outcome::Blocked`].

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::api::policy::v1::Eviction;
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::api::{DeleteParams, Patch, PatchParams, PostParams, Preconditions};
use kube::{Api, Client};
use serde_json::json;

use super::watched::WatchedPod;
use crate::engine::model::PodRef;
use crate::metrics::FailureReason;
use crate::runtime::{Evictor, Notice, Outcome, Throttle};

/// The reporting controller named on events, so they can be told from the cluster's own.
pub const CONTROLLER: &str = "kubectl-taint-evict";
/// Upstream's event reason.
pub const REASON: &str = "TaintManagerEviction";

/// How a due pod is removed (`run --mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// The `DisruptionTarget` condition, then DELETE: what upstream's controller does; no
    /// PodDisruptionBudget is consulted.
    #[default]
    Delete,
    /// POST `pods/NAME/eviction` (`policy/v1`): the API server refuses while the pod's
    /// PodDisruptionBudget allows no disruption.
    Evict,
}

/// Deletes pods in the cluster, or, in a dry run, only says it would.
#[derive(Clone)]
pub struct KubeEvictor {
    client: Client,
    /// `reportingInstance` of the events (the pod's name in a cluster).
    instance: String,
    dry_run: bool,
    /// Every write waits for its turn here (`--qps`, `--burst`, the server's `Retry-After`).
    throttle: Throttle,
    mode: Mode,
}

impl KubeEvictor {
    /// An evictor writing through `client` (nothing at all when `dry_run`), each write paced by
    /// `throttle` (the client should report the server's pushback to it: [`super::pushback`]).
    #[must_use]
    pub fn new(client: Client, dry_run: bool, instance: Option<String>, throttle: Throttle) -> Self {
        let instance = instance.unwrap_or_else(|| CONTROLLER.to_owned());
        Self { client, instance, dry_run, throttle, mode: Mode::Delete }
    }

    /// Removes pods as `mode` says (DELETE by default). A dry run in [`Mode::Evict`] sends each
    /// eviction with `dryRun=All`: the API server checks the budget and changes nothing.
    #[must_use]
    pub fn with_mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    /// One eviction through the Eviction API, with the UID as precondition (so a replacement is never
    /// evicted), as `kubectl drain` sends it.
    ///
    /// Not kube's `Api::evict`: it writes the options as `delete_options`, a field the API server does
    /// not know and drops, and the precondition with it.
    async fn evict_through_api(&self, pod: &PodRef) -> Outcome {
        let api: Api<WatchedPod> = Api::namespaced(self.client.clone(), pod.key.namespace());
        let eviction = Eviction {
            metadata: ObjectMeta {
                name: Some(pod.key.name().into()),
                namespace: Some(pod.key.namespace().into()),
                ..ObjectMeta::default()
            },
            delete_options: Some(meta::DeleteOptions {
                preconditions: Some(meta::Preconditions { uid: Some(pod.uid.to_string()), resource_version: None }),
                ..meta::DeleteOptions::default()
            }),
        };
        let params = PostParams { dry_run: self.dry_run, ..PostParams::default() };
        self.throttle.admit().await;
        match api.create_subresource::<_, kube::core::Status>("eviction", pod.key.name(), &params, &eviction).await {
            Ok(_) => Outcome::Deleted,
            Err(kube::Error::Api(status)) if status.code == 429 && budget_refusal(&status).is_some() => {
                let (budget, message) = budget_refusal(&status).expect("just matched");
                Outcome::Blocked { budget: format!("{}/{budget}", pod.key.namespace()), message }
            }
            Err(error) => outcome(error, "create pods/eviction"),
        }
    }
}

/// The budget a 429 from the Eviction API names, and the server's words about it: `details.causes`
/// holds `{reason: DisruptionBudget, message: "The disruption budget NAME needs N healthy pods and
/// has M currently"}` (or `… NAME is still being processed by the server.`), as `checkAndDecrement`
/// and `createTooManyRequestsError` in upstream's `pkg/registry/core/pod/storage/eviction.go` write
/// it. A 429 without it (API Priority and Fairness) is the server's pushback, not a budget's refusal.
#[must_use]
pub fn budget_refusal(status: &kube::core::Status) -> Option<(String, String)> {
    let cause = status.details.as_ref()?.causes.iter().find(|cause| cause.reason == "DisruptionBudget")?;
    let named = cause.message.strip_prefix("The disruption budget ")?;
    let budget = named.split_whitespace().next()?.to_owned();
    Some((budget, cause.message.trim_end_matches('.').to_owned()))
}

/// The permissions the refused step needs, in words.
fn needs(step: &str) -> &'static str {
    if step.contains("eviction") {
        "run --mode evict needs create on pods/eviction"
    } else {
        "run needs patch on pods/status and delete on pods"
    }
}

/// How a failed request ends the attempt: 404, 409 and a refused UID mean the pod is gone or replaced.
fn outcome(error: kube::Error, step: &str) -> Outcome {
    match error {
        kube::Error::Api(status) if status.code == 404 => Outcome::Gone(format!("not found: {}", status.message)),
        kube::Error::Api(status) if status.code == 409 => Outcome::Gone(format!("replaced: {}", status.message)),
        // A status patch naming another UID is refused as a change of the immutable field.
        kube::Error::Api(status) if status.code == 422 && status.message.contains("metadata.uid") => {
            Outcome::Gone(format!("replaced: {}", status.message))
        }
        kube::Error::Api(status) if status.code == 403 => Outcome::Failed {
            reason: FailureReason::Forbidden,
            message: format!("{step} forbidden: {} ({})", status.message, needs(step)),
        },
        kube::Error::Api(status) => Outcome::Failed {
            reason: FailureReason::of_status(status.code),
            message: format!("{step} failed: {} ({})", status.message, status.code),
        },
        // The innermost cause ("connection refused"), not kube's wrapper ("ServiceError: client error").
        other => Outcome::Failed {
            reason: FailureReason::Transport,
            message: format!("{step} failed: {}", super::error::root_cause(&other)),
        },
    }
}

impl Evictor for KubeEvictor {
    fn is_dry_run(&self) -> bool {
        self.dry_run
    }

    fn throttle(&self) -> Option<&Throttle> {
        Some(&self.throttle)
    }

    async fn evict(&self, pod: &PodRef) -> Outcome {
        if self.mode == Mode::Evict {
            return self.evict_through_api(pod).await;
        }
        if self.dry_run {
            return Outcome::Deleted;
        }
        // The answers (the whole pod, twice) are decoded into the slim type: only what is needed.
        let api: Api<WatchedPod> = Api::namespaced(self.client.clone(), pod.key.namespace());
        let name = pod.key.name();
        // Mirrors addConditionAndDeletePod: the condition first (carrying the UID, so a replacement is
        // never marked), then the DELETE with the UID as precondition (upstream sends none, #141568).
        let condition = json!({
            "metadata": {"uid": pod.uid.as_str()},
            "status": {"conditions": [{
                "type": "DisruptionTarget",
                "status": "True",
                "reason": "DeletionByTaintManager",
                "message": "Taint manager: deleting due to NoExecute taint",
                "lastTransitionTime": self.throttle.clock().api_now().to_string(),
            }]}
        });
        self.throttle.admit().await;
        if let Err(error) = api.patch_status(name, &PatchParams::default(), &Patch::Strategic(condition)).await {
            return outcome(error, "patch pods/status");
        }
        let preconditions = Preconditions { uid: Some(pod.uid.to_string()), resource_version: None };
        let params = DeleteParams { preconditions: Some(preconditions), ..DeleteParams::default() };
        self.throttle.admit().await;
        match api.delete(name, &params).await {
            Ok(_) => Outcome::Deleted,
            Err(error) => outcome(error, "delete pods"),
        }
    }

    async fn notify(&self, pod: &PodRef, notice: Notice) {
        if self.dry_run {
            return;
        }
        let (note, action, type_) = match notice {
            Notice::Marking => (format!("Marking for deletion Pod {}", pod.key), "Delete", "Normal"),
            Notice::Cancelling => (format!("Cancelling deletion of Pod {}", pod.key), "CancelDelete", "Normal"),
            Notice::Blocked { budget } => {
                let note = format!("Eviction of Pod {} refused by PodDisruptionBudget {budget}; retrying", pod.key);
                (note, "Evict", "Warning")
            }
        };
        // One new event each time, as kube-rs' recorder writes a first occurrence. Its series cache
        // is not used: it scans every cached event on each publish under one lock, which made a
        // burst of 10,000 deletions quadratic; upstream's events are per pod, so series are rare.
        let now = self.throttle.clock().api_now();
        let namespace = pod.key.namespace();
        let event = Event {
            metadata: ObjectMeta {
                name: Some(format!("{}.{:x}", pod.key.name(), now.as_nanosecond())),
                namespace: Some(namespace.into()),
                ..ObjectMeta::default()
            },
            event_time: Some(MicroTime(now)),
            type_: Some(type_.into()),
            reason: Some(REASON.into()),
            note: Some(note),
            action: Some(action.into()),
            reporting_controller: Some(CONTROLLER.into()),
            reporting_instance: Some(self.instance.clone()),
            regarding: Some(ObjectReference {
                api_version: Some("v1".into()),
                kind: Some("Pod".into()),
                name: Some(pod.key.name().into()),
                namespace: Some(namespace.into()),
                uid: Some(pod.uid.to_string()),
                ..ObjectReference::default()
            }),
            ..Event::default()
        };
        // An event that cannot be written does not stop a deletion; one the server pushed back on is
        // sent again when the pushback ends.
        let api = Api::<Event>::namespaced(self.client.clone(), namespace);
        loop {
            self.throttle.admit().await;
            let started = self.throttle.now();
            match api.create(&PostParams::default(), &event).await {
                Err(kube::Error::Api(status))
                    if matches!(status.code, 429 | 503) && self.throttle.pushed_back_since(started) => {}
                _ => break,
            }
        }
    }
}
