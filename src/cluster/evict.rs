//! Deleting a pod as upstream does, with a UID precondition: the `DisruptionTarget` condition on its
//! status first, then DELETE; events `TaintManagerEviction` as the cluster's controller sends them.

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::Event;
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

/// Deletes pods in the cluster, or, in a dry run, only says it would.
#[derive(Clone)]
pub struct KubeEvictor {
    client: Client,
    /// `reportingInstance` of the events (the pod's name in a cluster).
    instance: String,
    dry_run: bool,
    /// Every write waits for its turn here (`--qps`, `--burst`, the server's `Retry-After`).
    throttle: Throttle,
}

impl KubeEvictor {
    /// An evictor writing through `client` (nothing at all when `dry_run`), each write paced by
    /// `throttle` (the client should report the server's pushback to it: [`super::pushback`]).
    #[must_use]
    pub fn new(client: Client, dry_run: bool, instance: Option<String>, throttle: Throttle) -> Self {
        Self { client, instance: instance.unwrap_or_else(|| CONTROLLER.to_owned()), dry_run, throttle }
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
            message: format!(
                "{step} forbidden: {} (run needs patch on pods/status and delete on pods)",
                status.message
            ),
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
        let (note, action) = match notice {
            Notice::Marking => (format!("Marking for deletion Pod {}", pod.key), "Delete"),
            Notice::Cancelling => (format!("Cancelling deletion of Pod {}", pod.key), "CancelDelete"),
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
            type_: Some("Normal".into()),
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
