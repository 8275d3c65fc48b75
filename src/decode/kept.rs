//! The fields the readers read, kept of a JSON object: what `record` writes of each object
//! (docs/review.md, "The record"). A pod, a node or a Lease is cut by the protobuf tables
//! ([`super::protobuf`]): the one list of the fields read, so that an object answered as JSON and cut
//! here is the object answered as protobuf and rewritten there, to the byte once written (an empty
//! `omitempty` value left out, a time written as the rewrite writes it, of a pod's `managedFields`
//! only the entries that own `spec.tolerations`). Events, which are never read as protobuf, keep the
//! fields of [`EVENT`].
//!
//! Owns: [`kept`]. Uses: the protobuf tables.

use serde_json::{Map, Value};

use super::protobuf::{Field, Shape, fields_of};
use crate::words::{RFC3339_MAX, rfc3339_ascii};

/// A field an Event keeps: its name, and the fields kept of it when it is an object (`None`: all of it).
struct EventField(&'static str, Option<&'static [EventField]>);

/// What an Event keeps: who and what it is about, what it says, when and how often.
const EVENT: &[EventField] = &[
    EventField("metadata", Some(&[EventField("namespace", None), EventField("name", None), EventField("uid", None)])),
    EventField(
        "involvedObject",
        Some(&[
            EventField("kind", None),
            EventField("namespace", None),
            EventField("name", None),
            EventField("uid", None),
        ]),
    ),
    EventField("reason", None),
    EventField("message", None),
    EventField("type", None),
    EventField("source", Some(&[EventField("component", None), EventField("host", None)])),
    EventField("reportingComponent", None),
    EventField("reportingInstance", None),
    EventField("firstTimestamp", None),
    EventField("lastTimestamp", None),
    EventField("eventTime", None),
    EventField("count", None),
    EventField("series", None),
];

/// `object` (of `kind`: `Pod`, `Node`, `Lease`, `Event`) with the fields the readers read and no
/// more; its `apiVersion` and `kind` go too. `None` for another kind or an object that is not one.
#[must_use]
pub fn kept(kind: &str, object: Value) -> Option<Value> {
    let Value::Object(mut members) = object else { return None };
    if kind == "Event" {
        event(&mut members, EVENT);
    } else {
        message(&mut members, fields_of(kind)?);
    }
    Some(Value::Object(members))
}

/// Keeps the members of an Event's object that `fields` names.
fn event(members: &mut Map<String, Value>, fields: &'static [EventField]) {
    members.retain(|key, value| {
        let Some(EventField(_, inner)) = fields.iter().find(|EventField(name, _)| name == key) else { return false };
        match (inner, value) {
            (_, Value::Null) => false,
            (Some(inner), Value::Object(members)) => {
                event(members, inner);
                true
            }
            (Some(_), _) => false,
            (None, _) => true,
        }
    });
}

/// Keeps the members of a message that `fields` reads, each as the rewrite writes it.
fn message(members: &mut Map<String, Value>, fields: &'static [Field]) {
    members
        .retain(|key, value| fields.iter().find(|field| field.json == key).is_some_and(|field| member(field, value)));
}

/// Cuts one member; whether the rewrite writes it.
fn member(field: &Field, value: &mut Value) -> bool {
    if field.repeated {
        let Value::Array(items) = value else { return false };
        if let Shape::TolerationsOwners(_) = field.shape {
            items.retain(owns_tolerations);
        }
        items.retain_mut(|item| one(field, item).is_some());
        return !items.is_empty() || field.present;
    }
    match (field.shape, value) {
        (Shape::Map, Value::Object(entries)) => {
            entries.retain(|_, text| text.is_string());
            !entries.is_empty()
        }
        (Shape::Map, _) => false,
        (Shape::Time | Shape::MicroTime, value) => one(field, value).is_some(),
        (_, value) => one(field, value).is_some_and(|full| full || field.present),
    }
}

/// Cuts one value; `None` when the rewrite could not have written it (null, or of another shape),
/// else whether it is not empty (an `omitempty` member's empty value is left out).
fn one(field: &Field, value: &mut Value) -> Option<bool> {
    match (field.shape, value) {
        (Shape::Str, Value::String(text)) => Some(!text.is_empty()),
        (Shape::Int, Value::Number(number)) => number.as_i64().map(|n| n != 0),
        (Shape::Bool, Value::Bool(flag)) => Some(*flag),
        (Shape::Time, value @ Value::String(_)) => time(value, false),
        (Shape::MicroTime, value @ Value::String(_)) => time(value, true),
        (Shape::Message(fields) | Shape::TolerationsOwners(fields), Value::Object(members)) => {
            message(members, fields);
            Some(true)
        }
        (Shape::FieldsV1, Value::Object(_)) => Some(true),
        (Shape::TolerationsOwned, value @ Value::Object(_)) => {
            let owned = owns(value);
            *value = if owned { serde_json::json!({"f:spec": {"f:tolerations": {}}}) } else { serde_json::json!({}) };
            Some(true)
        }
        _ => None,
    }
}

/// Rewrites an RFC 3339 time as the rewrite writes it: a `Time` in whole seconds, a `MicroTime` to the
/// microsecond, a fraction only when there is one. A text that is no time is left as it is.
fn time(value: &mut Value, micro: bool) -> Option<bool> {
    let Value::String(text) = value else { return None };
    let Ok(at) = text.parse::<jiff::Timestamp>() else { return Some(true) };
    let nanos = at.as_nanosecond();
    let kept = if micro { nanos - nanos.rem_euclid(1000) } else { nanos - nanos.rem_euclid(1_000_000_000) };
    let mut buffer = [0; RFC3339_MAX];
    if let Some(written) = rfc3339_ascii(kept, &mut buffer).and_then(|bytes| std::str::from_utf8(bytes).ok()) {
        *text = written.to_owned();
    }
    Some(true)
}

/// Whether a `managedFields` entry owns `spec.tolerations`.
fn owns_tolerations(entry: &Value) -> bool {
    entry.get("fieldsV1").is_some_and(owns)
}

/// Whether the fields of a `FieldsV1` name `spec.tolerations`.
fn owns(fields: &Value) -> bool {
    fields.get("f:spec").and_then(|spec| spec.get("f:tolerations")).is_some_and(|owned| !owned.is_null())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::decode::protobuf::{encode, to_json};

    /// What the protobuf path makes of `full`: encoded as a server holding it would send it, rewritten
    /// as JSON, its `apiVersion` and `kind` left out as [`kept`] leaves them out.
    fn rewritten(full: &Value) -> Value {
        let mut json: Value =
            serde_json::from_slice(&to_json(&encode(full).expect("encodes")).expect("rewrites")).expect("JSON");
        let members = json.as_object_mut().expect("an object");
        members.remove("apiVersion");
        members.remove("kind");
        json
    }

    /// A pod as the API server writes it in JSON: containers, volumes, status, managedFields.
    fn full_pod() -> Value {
        json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web-0", "namespace": "shop", "uid": "u-1", "resourceVersion": "812",
                "generateName": "web-", "creationTimestamp": "2026-11-29T10:00:00Z",
                "labels": {"app": "web", "pod-template-hash": "7d9"}, "annotations": {"a": "b"},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d9",
                    "uid": "rs-1", "controller": true, "blockOwnerDeletion": true}],
                "managedFields": [
                    {"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1",
                     "time": "2026-11-29T10:00:00Z", "fieldsType": "FieldsV1",
                     "fieldsV1": {"f:metadata": {"f:labels": {}}, "f:spec": {"f:tolerations": {}, "f:containers": {}}}},
                    {"manager": "kubelet", "operation": "Update", "apiVersion": "v1", "subresource": "status",
                     "time": "2026-11-29T10:00:05Z", "fieldsType": "FieldsV1",
                     "fieldsV1": {"f:status": {"f:phase": {}}}}]},
            "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "app"}],
                "tolerations": [
                    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
                     "tolerationSeconds": 300},
                    {"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"}],
                "restartPolicy": "Always", "schedulerName": "default-scheduler"},
            "status": {"phase": "Running", "podIP": "10.0.0.1", "qosClass": "BestEffort",
                "conditions": [
                    {"type": "PodScheduled", "status": "True", "lastProbeTime": null,
                     "lastTransitionTime": "2026-11-29T10:00:01Z"},
                    {"type": "Ready", "status": "False", "reason": "ContainersNotReady",
                     "lastTransitionTime": "2026-11-29T10:00:02Z"}],
                "containerStatuses": [{"name": "c", "ready": false, "restartCount": 0}]}})
    }

    /// A node as the API server writes it: taints with and without `timeAdded`, conditions, images.
    fn full_node() -> Value {
        json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "node-1", "uid": "n-1", "resourceVersion": "90",
                "creationTimestamp": "2026-11-29T09:00:00Z",
                "labels": {"topology.kubernetes.io/zone": "za", "kubernetes.io/hostname": "node-1"},
                "annotations": {"node.alpha.kubernetes.io/ttl": "0"},
                "managedFields": [{"manager": "kubectl-taint", "operation": "Update", "apiVersion": "v1",
                    "time": "2026-11-29T10:01:00Z", "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:spec": {"f:taints": {}}}}]},
            "spec": {"podCIDR": "10.0.1.0/24", "taints": [
                {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute", "timeAdded": "2026-11-29T10:01:00Z"},
                {"key": "dedicated", "value": "db", "effect": "NoSchedule"}]},
            "status": {"capacity": {"cpu": "4"}, "images": [{"names": ["a"], "sizeBytes": 1}],
                "conditions": [{"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown",
                    "message": "Kubelet stopped posting node status.",
                    "lastHeartbeatTime": "2026-11-29T10:00:20Z", "lastTransitionTime": "2026-11-29T10:01:00Z"}]}})
    }

    /// A node Lease; its MicroTimes with trailing zeros and past the microsecond.
    fn full_lease() -> Value {
        json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": "node-1", "namespace": "kube-node-lease", "uid": "l-1", "resourceVersion": "91",
                "creationTimestamp": "2026-11-29T09:00:00Z",
                "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "node-1", "uid": "n-1"}],
                "managedFields": [{"manager": "kubelet", "operation": "Update", "apiVersion": "coordination.k8s.io/v1",
                    "time": "2026-11-29T10:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}}}]},
            "spec": {"holderIdentity": "node-1", "leaseDurationSeconds": 40,
                "renewTime": "2026-11-29T10:00:10.120000Z", "acquireTime": "2026-11-29T09:00:00.000000Z"}})
    }

    /// Checked by hand: the pod keeps its name, namespace, uid, version, creation, labels, owner, the
    /// one managedFields entry that owns its tolerations (as `{"f:spec":{"f:tolerations":{}}}`), node,
    /// tolerations, phase and conditions without `lastProbeTime`; its containers, annotations, IP and
    /// the kubelet's entry go. The JSON cut equals the protobuf rewrite.
    #[test]
    fn a_pod_cut_from_json_is_the_pod_rewritten_from_protobuf() {
        let full = full_pod();
        let cut = kept("Pod", full.clone()).expect("a pod");
        assert_eq!(cut, rewritten(&full));
        assert_eq!(cut["metadata"]["managedFields"].as_array().map(Vec::len), Some(1));
        assert_eq!(cut["metadata"]["managedFields"][0]["fieldsV1"], json!({"f:spec": {"f:tolerations": {}}}));
        assert!(cut["metadata"].get("annotations").is_none() && cut["spec"].get("containers").is_none());
        assert!(cut.get("kind").is_none() && cut["status"].get("podIP").is_none());
        assert_eq!(cut["spec"]["tolerations"][0]["tolerationSeconds"], 300);
    }

    /// Checked by hand: the node keeps its labels, taints (with `timeAdded`), conditions with their
    /// times and reason (not their message), and its managedFields whole; not its CIDR or images.
    #[test]
    fn a_node_cut_from_json_is_the_node_rewritten_from_protobuf() {
        let full = full_node();
        let cut = kept("Node", full.clone()).expect("a node");
        assert_eq!(cut, rewritten(&full));
        assert_eq!(cut["spec"], json!({"taints": full["spec"]["taints"]}));
        assert!(cut["status"]["conditions"][0].get("message").is_none());
        assert_eq!(cut["metadata"]["managedFields"][0]["fieldsV1"], json!({"f:spec": {"f:taints": {}}}));
    }

    /// Checked by hand: a MicroTime written `.120000Z` by the server is `.12Z` as the rewrite writes
    /// it, and `.000000Z` whole seconds; the Lease's owner stays, its managedFields go.
    #[test]
    fn a_lease_cut_from_json_is_the_lease_rewritten_from_protobuf() {
        let full = full_lease();
        let cut = kept("Lease", full.clone()).expect("a lease");
        assert_eq!(cut, rewritten(&full));
        assert_eq!(cut["spec"]["renewTime"], "2026-11-29T10:00:10.12Z");
        assert_eq!(cut["spec"]["acquireTime"], "2026-11-29T09:00:00Z");
        assert!(cut["metadata"].get("managedFields").is_none());
    }

    /// A pod none of whose managedFields entries owns its tolerations, with empty labels and an empty
    /// node name: none of the three is written, by either path.
    #[test]
    fn what_the_rewrite_leaves_out_the_cut_leaves_out() {
        let mut full = full_pod();
        full["metadata"]["managedFields"].as_array_mut().expect("entries").remove(0);
        full["metadata"]["labels"] = json!({});
        full["spec"]["nodeName"] = json!("");
        let cut = kept("Pod", full.clone()).expect("a pod");
        assert_eq!(cut, rewritten(&full));
        assert!(cut["metadata"].get("managedFields").is_none() && cut["metadata"].get("labels").is_none());
        assert!(cut["spec"].get("nodeName").is_none());
    }

    /// Checked by hand: an Event keeps who and what it is about, what it says and when, not its
    /// managedFields or its action.
    #[test]
    fn an_event_keeps_the_fields_its_readers_read() {
        let full = json!({"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "web-0.1", "namespace": "shop", "uid": "e-1", "resourceVersion": "5",
                "managedFields": [{"manager": "x"}]},
            "involvedObject": {"kind": "Pod", "namespace": "shop", "name": "web-0", "uid": "u-1",
                "apiVersion": "v1", "resourceVersion": "3"},
            "reason": "TaintManagerEviction", "message": "Marking for deletion Pod shop/web-0",
            "source": {"component": "taint-eviction-controller"}, "type": "Normal",
            "firstTimestamp": "2026-11-29T10:02:00Z", "lastTimestamp": "2026-11-29T10:02:00Z", "count": 1,
            "eventTime": null, "action": "", "reportingComponent": "taint-eviction-controller", "reportingInstance": ""});
        let cut = kept("Event", full).expect("an event");
        assert_eq!(
            cut,
            json!({"metadata": {"name": "web-0.1", "namespace": "shop", "uid": "e-1"},
                "involvedObject": {"kind": "Pod", "namespace": "shop", "name": "web-0", "uid": "u-1"},
                "reason": "TaintManagerEviction", "message": "Marking for deletion Pod shop/web-0",
                "source": {"component": "taint-eviction-controller"}, "type": "Normal",
                "firstTimestamp": "2026-11-29T10:02:00Z", "lastTimestamp": "2026-11-29T10:02:00Z", "count": 1,
                "reportingComponent": "taint-eviction-controller", "reportingInstance": ""})
        );
    }
}
