//! A kube-apiserver audit log read as a record (docs/review.md, "From an audit log"): each write of a
//! node, a pod, the controller manager's Lease or an Event, as the API server answered it, becomes
//! the record's line of that object at the instant the answer was complete, with who wrote it.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::{Value, json};

use super::record::{Numbered, RecordError};

/// What an audit log's first line holds when it is one.
const AUDIT_API_VERSION: &str = "audit.k8s.io/v1";

/// Whether `text` (a file's start) is a kube-apiserver audit log rather than a record.
#[must_use]
pub fn is_audit_log(text: &str) -> bool {
    let first = text.lines().find(|line| !line.trim().is_empty()).unwrap_or_default();
    serde_json::from_str::<Head>(first).is_ok_and(|head| head.api_version == AUDIT_API_VERSION)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Head {
    api_version: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AuditEvent {
    stage: String,
    verb: String,
    #[serde(default)]
    user: User,
    #[serde(default)]
    user_agent: String,
    object_ref: Option<ObjectRef>,
    response_status: Option<Status>,
    request_object: Option<Value>,
    response_object: Option<Value>,
    stage_timestamp: String,
}

#[derive(Deserialize, Default)]
struct User {
    #[serde(default)]
    username: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ObjectRef {
    resource: String,
    #[serde(default)]
    namespace: String,
    #[serde(default)]
    name: String,
}

#[derive(Deserialize)]
struct Status {
    code: u16,
}

/// An audit log's events read as a record, in order.
pub struct AuditLog<'a> {
    /// The record's lines, each numbered by the audit log's line it came from.
    pub lines: Vec<Result<Numbered<'a>, RecordError>>,
    /// Writes of the kinds a review reads that the log holds without the object (a level below
    /// `RequestResponse`): what the record cannot tell.
    pub without_objects: usize,
}

/// Reads `text`, the audit log `file`: each complete write of a node, a pod, an Event or the
/// controller manager's Lease, answered with success, as a record's line. The state before the log
/// starts is not in it: the record starts with no node and no pod, and each appears when first
/// written.
#[must_use]
pub fn read_audit_log<'a>(file: &'a str, text: &'a str) -> AuditLog<'a> {
    let mut lines = Vec::new();
    let mut without_objects = 0;
    let mut started = false;
    for (index, text) in text.lines().enumerate() {
        if text.trim().is_empty() {
            continue;
        }
        let number = index + 1;
        let event: AuditEvent = match serde_json::from_str(text) {
            Ok(event) => event,
            Err(e) => {
                lines.push(Err(RecordError {
                    file: file.to_owned(),
                    line: number,
                    reason: format!("audit event: {e}"),
                }));
                break;
            }
        };
        let Some(line) = rewritten(event, &mut without_objects) else { continue };
        if !started {
            started = true;
            let at = line["at"].clone();
            for head in [
                json!({"at": at, "record": "taint-evict/v1", "recorder": "kube-apiserver audit log"}),
                json!({"at": at, "list": "nodes"}),
                json!({"at": at, "listed": "nodes"}),
                json!({"at": at, "list": "pods"}),
                json!({"at": at, "listed": "pods"}),
            ] {
                lines.push(Ok(Numbered { file, line: number, text: Cow::Owned(head.to_string()) }));
            }
        }
        lines.push(Ok(Numbered { file, line: number, text: Cow::Owned(line.to_string()) }));
    }
    AuditLog { lines, without_objects }
}

/// The record's line of one audit event, when it is a complete, successful write a review reads.
fn rewritten(event: AuditEvent, without_objects: &mut usize) -> Option<Value> {
    if event.stage != "ResponseComplete"
        || !event.response_status.as_ref().is_some_and(|s| (200..300).contains(&s.code))
    {
        return None;
    }
    let object = event.object_ref?;
    let writes = matches!(event.verb.as_str(), "create" | "update" | "patch" | "delete");
    let read = match object.resource.as_str() {
        "nodes" | "pods" | "events" => true,
        "leases" => object.namespace == "kube-system" && object.name == "kube-controller-manager",
        _ => false,
    };
    if !writes || !read {
        return None;
    }
    let at = event.stage_timestamp;
    let kind_of = |value: &Value| value["kind"].as_str().map(str::to_owned);
    let answered = event.response_object.filter(|value| value.is_object());
    let (by, agent) = (event.user.username, event.user_agent);
    match (object.resource.as_str(), event.verb.as_str()) {
        ("events", _) => {
            let Some(mut event) = answered.or(event.request_object) else {
                *without_objects += 1;
                return None;
            };
            // events.k8s.io/v1 says `note` where core/v1 says `message`.
            if event.get("message").is_none()
                && let Some(note) = event.get("note").cloned()
            {
                event["message"] = note;
            }
            Some(json!({"at": at, "event": event}))
        }
        ("nodes" | "pods", "delete")
            if answered.as_ref().and_then(kind_of).as_deref() == Some("Status") || answered.is_none() =>
        {
            let kind = if object.resource == "nodes" { "Node" } else { "Pod" };
            let deleted = json!({"kind": kind, "namespace": object.namespace, "name": object.name});
            Some(json!({"at": at, "deleted": deleted, "by": by, "agent": agent}))
        }
        (resource, _) => {
            let Some(answered) = answered else {
                *without_objects += 1;
                return None;
            };
            let kind = match resource {
                "nodes" => "Node",
                "pods" => "Pod",
                _ => "Lease",
            };
            // A pod's binding or eviction answers with a Status, not the pod.
            if kind_of(&answered).is_some_and(|answered_kind| answered_kind != kind) {
                return None;
            }
            let key = match kind {
                "Node" => "node",
                "Pod" => "pod",
                _ => "lease",
            };
            Some(json!({"at": at, key: answered, "by": by, "agent": agent}))
        }
    }
}
