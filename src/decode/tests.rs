//! The readers against each other and against the errors they must name.

use super::exact::read_exactly;
use super::*;
use crate::engine::devices::Via;
use crate::engine::model::PodKey;
use crate::engine::snapshot::{Owner, Workloads};

fn item_error(json: &str) -> String {
    read(json.as_bytes()).expect_err("malformed").to_string()
}

#[test]
fn only_the_labels_asked_for_are_kept_and_pods_share_their_node_name_and_phase() {
    let json = r#"{"kind":"List","items":[
        {"kind":"Node","metadata":{"name":"n1","labels":{"zone":"a","role":"db","big":"x"}}},
        {"kind":"Pod","metadata":{"name":"p","namespace":"d","uid":"u1"},"spec":{"nodeName":"n1"},"status":{"phase":"Running"}},
        {"kind":"Pod","metadata":{"name":"q","namespace":"d","uid":"u2"},"spec":{"nodeName":"n1"},"status":{"phase":"Running"}}]}"#;
    let only = |keys: &[&str]| Keep {
        labels: KeepLabels::Only(keys.iter().map(|k| (*k).to_owned()).collect()),
        ..Keep::default()
    };
    let labels = |keep: &Keep| {
        // The fast reader, and the exact one it falls back to, keep the same labels.
        let fast = read_keeping(json.as_bytes(), keep).expect("valid dump");
        let exact = read_exactly(json.as_bytes(), keep).expect("valid dump");
        assert_eq!(format!("{fast:?}"), format!("{exact:?}"));
        fast.nodes[0].labels.keys().cloned().collect::<Vec<_>>()
    };
    assert_eq!(labels(&Keep::default()), ["big", "role", "zone"]);
    assert_eq!(labels(&only(&["zone", "absent"])), ["zone"]);
    assert!(labels(&only(&[])).is_empty());
    let snapshot = read(json.as_bytes()).expect("valid dump");
    let [p, q] = [&snapshot.pods[0], &snapshot.pods[1]];
    let shared = |a: &crate::engine::model::NodeName, b: &crate::engine::model::NodeName| {
        std::ptr::eq(a.as_str().as_ptr(), b.as_str().as_ptr())
    };
    assert!(shared(p.pod.node.as_ref().expect("bound"), &snapshot.nodes[0].name));
    assert!(shared(p.pod.node.as_ref().expect("bound"), q.pod.node.as_ref().expect("bound")));
    assert!(std::sync::Arc::ptr_eq(&p.phase, &q.phase));
}

#[test]
fn a_pods_dra_claims_are_read_by_both_readers_resolved_through_its_status() {
    let json = r#"{"kind":"List","items":[
        {"kind":"Pod","metadata":{"name":"p","namespace":"ml","uid":"u1"},
         "spec":{"nodeName":"n1","resourceClaims":[{"name":"gpu","resourceClaimTemplateName":"t"},
                                                   {"name":"nic","resourceClaimName":"shared-nic"},{"name":"odd"}]},
         "status":{"resourceClaimStatuses":[{"name":"gpu","resourceClaimName":"p-gpu-x7"}],
                   "extendedResourceClaimStatus":{"resourceClaimName":"p-extended"}}},
        {"kind":"Pod","metadata":{"name":"q","namespace":"ml","uid":"u2"},"spec":{"nodeName":"n1"}}]}"#;
    let fast = read(json.as_bytes()).expect("valid dump");
    let exact = read_exactly(json.as_bytes(), &Keep::default()).expect("valid dump");
    assert_eq!(format!("{fast:?}"), format!("{exact:?}"));
    let claims: Vec<(String, Option<String>, Via)> = fast.pods[0]
        .claims
        .as_deref()
        .expect("claims")
        .iter()
        .map(|c| (c.entry.to_string(), c.claim.as_deref().map(str::to_owned), c.via))
        .collect();
    let some = |s: &str| Some(s.to_owned());
    assert_eq!(
        claims,
        [
            ("gpu".to_owned(), some("p-gpu-x7"), Via::Template),
            ("nic".to_owned(), some("shared-nic"), Via::Name),
            ("extended resources".to_owned(), some("p-extended"), Via::Extended),
        ]
    );
    assert_eq!(fast.pods[1].claims, None, "a pod without claims holds none");
}

#[test]
fn a_pods_controller_is_read_by_both_readers_and_shared_by_its_pods() {
    let json = r#"{"kind":"List","items":[
        {"kind":"Pod","metadata":{"name":"web-1","namespace":"shop","ownerReferences":[
            {"apiVersion":"v1","kind":"ConfigMap","name":"not-a-controller","uid":"c"},
            {"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-7d9c","uid":"r","controller":true,"blockOwnerDeletion":true}]},
         "spec":{"nodeName":"n1"}},
        {"kind":"Pod","metadata":{"name":"web-2","namespace":"shop","ownerReferences":[
            {"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-7d9c","uid":"r","controller":true}]},"spec":{"nodeName":"n1"}},
        {"kind":"Pod","metadata":{"name":"bare","namespace":"shop","ownerReferences":[
            {"apiVersion":"v1","kind":"ConfigMap","name":"cm","uid":"c","controller":false}]},"spec":{"nodeName":"n1"}}]}"#;
    let fast = read(json.as_bytes()).expect("valid dump");
    let exact = read_exactly(json.as_bytes(), &Keep::default()).expect("valid dump");
    assert_eq!(format!("{fast:?}"), format!("{exact:?}"));
    let owner = fast.pods[0].owner.as_ref().expect("web-1's controller");
    assert_eq!((owner.kind(), owner.name()), ("ReplicaSet", "web-7d9c"));
    let (first, second) = (fast.pods[0].owner.as_ref(), fast.pods[1].owner.as_ref());
    let (first, second) = (first.expect("owned").kind(), second.expect("owned").kind());
    assert!(std::ptr::eq(first.as_ptr(), second.as_ptr()), "one owner, held once");
    assert_eq!(fast.pods[2].owner, None, "an owner that is not the controller is none");
    // Without a game day, no reader keeps them.
    let without = Keep { owners: false, ..Keep::default() };
    let fast = read_keeping(json.as_bytes(), &without).expect("valid dump");
    let exact = read_exactly(json.as_bytes(), &without).expect("valid dump");
    assert!(fast.pods.iter().chain(&exact.pods).all(|pod| pod.owner.is_none()));
    // A game day's roll-up reads the owners, not what their pods say of them beyond that (only
    // audit's fixes do).
    let web = fast_owner(json, &Keep::default());
    let names_only = Keep { workloads: false, ..Keep::default() };
    for snapshot in [read_keeping(json.as_bytes(), &names_only), read_exactly(json.as_bytes(), &names_only)] {
        let snapshot = snapshot.expect("valid dump");
        assert_eq!(snapshot.pods[0].owner.as_ref(), Some(&web), "the owner is read");
        assert_eq!(snapshot.workloads, Workloads::default(), "and nothing beyond it");
    }
    let kept = read_keeping(json.as_bytes(), &Keep::default()).expect("valid dump");
    assert!(kept.workloads.labels("shop", &web).is_some(), "the default keeps what its pods say");
}

/// The controller of the first pod of `json`, read with `keep`.
fn fast_owner(json: &str, keep: &Keep) -> Owner {
    let snapshot = read_keeping(json.as_bytes(), keep).expect("valid dump");
    snapshot.pods[0].owner.as_ref().expect("its controller").clone()
}

#[test]
fn reads_nodes_pods_and_the_controller_lease() {
    let json = r#"{"apiVersion":"v1","kind":"List","items":[
        {"kind":"Node","metadata":{"name":"n1","labels":{"zone":"a"}},"spec":{"taints":[
            {"key":"k","effect":"NoExecute","timeAdded":"2026-11-22T10:00:00Z"},{"key":"s","value":"v","effect":"NoSchedule"}]}},
        {"kind":"Pod","metadata":{"name":"p","namespace":"web","uid":"u","creationTimestamp":"2026-11-22T09:00:00Z"},
         "spec":{"nodeName":"n1","tolerations":[{"operator":"Exists","tolerationSeconds":5},{"key":"k","effect":"NoExecute"}]},
         "status":{"phase":"Running","conditions":[{"type":"PodScheduled","status":"True","lastTransitionTime":"2026-11-22T09:00:01Z"}]}},
        {"kind":"Service","metadata":{"name":"svc"},"spec":{"taints":"not ours"}},
        {"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"kube-controller-manager","namespace":"kube-system"},
         "spec":{"acquireTime":"2026-11-22T09:50:56.796765Z"}}]}"#;
    let snapshot = read(json.as_bytes()).expect("valid dump");
    assert_eq!(snapshot.nodes.len(), 1);
    assert_eq!(snapshot.nodes[0].taints.len(), 1, "the NoExecute taint");
    assert_eq!(&*snapshot.nodes[0].other_taints[0].value, "v", "the NoSchedule taint, apart");
    assert_eq!(snapshot.nodes[0].labels.get("zone").map(String::as_str), Some("a"));
    let pod = &snapshot.pods[0];
    assert_eq!(pod.pod.key, PodKey::new("web", "p"));
    assert_eq!(pod.bound_at, parse_time("2026-11-22T09:00:01Z"), "PodScheduled wins over creation");
    assert_eq!(pod.pod.tolerations[0].effect, None);
    assert_eq!(pod.pod.tolerations[0].seconds, Some(5));
    assert_eq!(snapshot.controller_acquired, parse_time("2026-11-22T09:50:56.796765Z"));
}

#[test]
fn bad_toleration_seconds_names_item_and_path() {
    let json = r#"{"kind":"List","items":[{"kind":"Node","metadata":{"name":"n"}},
        {"kind":"Pod","metadata":{"name":"api-0","namespace":"web"},"spec":{"tolerations":[{},{"tolerationSeconds":"300"}]}}]}"#;
    assert_eq!(
        item_error(json),
        "item 1 (Pod web/api-0): spec.tolerations[1].tolerationSeconds: invalid type: string \"300\", expected an integer"
    );
}

#[test]
fn bad_time_names_item_and_path() {
    let json = r#"{"kind":"List","items":[{"kind":"Node","metadata":{"name":"n"},"spec":{"taints":[{"key":"k","effect":"NoExecute","timeAdded":"yesterday"}]}}]}"#;
    assert_eq!(item_error(json), "item 0 (Node n): spec.taints[0].timeAdded: \"yesterday\" is not an RFC 3339 time");
}

#[test]
fn wrong_kind_and_non_json_are_named() {
    assert_eq!(
        item_error(r#"{"kind":"Pod","metadata":{"name":"x"}}"#),
        "expected a v1 List as `kubectl get nodes,pods -A -o json` prints it, found kind \"Pod\""
    );
    assert!(item_error("nodes:\n- a").starts_with("not valid JSON: "));
    assert_eq!(
        item_error("[1]"),
        "expected a v1 List as `kubectl get nodes,pods -A -o json` prints it, found a JSON array"
    );
}

#[test]
fn missing_names_are_errors() {
    assert_eq!(
        item_error(r#"{"kind":"List","items":[{"kind":"Pod","metadata":{}}]}"#),
        "item 0 (Pod): metadata.name: missing"
    );
}

#[test]
fn a_node_s_managed_fields_say_when_its_taints_were_written_by_every_reader() {
    // As kube-apiserver writes them after `kubectl taint`: the kubelet owns the labels, kubectl
    // the taints (an atomic list: one owner), the status its own entry.
    let node = r#"{"kind":"Node","metadata":{"name":"n1","managedFields":[
        {"manager":"kubelet","operation":"Update","apiVersion":"v1","time":"2026-11-22T09:00:00Z",
         "fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:zone":{}}}}},
        {"manager":"kubectl-taint","operation":"Update","apiVersion":"v1","time":"2026-11-22T09:58:12Z",
         "fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:taints":{}}}},
        {"manager":"kubelet","operation":"Update","apiVersion":"v1","time":"2026-11-22T09:59:50Z",
         "fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:conditions":{}}},"subresource":"status"}]},
        "spec":{"taints":[{"key":"maint","value":"true","effect":"NoExecute"}]}}"#;
    let pod = r#"{"kind":"Pod","metadata":{"name":"p","namespace":"web","managedFields":[
        {"manager":"kubectl","time":"2026-11-22T09:00:00Z","fieldsV1":{"f:spec":{"f:taints":{}}}}]},
        "spec":{"nodeName":"n1"}}"#;
    let json = format!(r#"{{"kind":"List","items":[{node},{pod}]}}"#);
    let fast = read(json.as_bytes()).expect("valid dump");
    let exact = read_exactly(json.as_bytes(), &Keep::default()).expect("valid dump");
    let written = fast.nodes[0].taints_written.as_ref().expect("the entry that owns spec.taints");
    assert_eq!((written.at, &*written.manager), (parse_time("2026-11-22T09:58:12Z").expect("time"), "kubectl-taint"));
    assert_eq!(exact.nodes[0].taints_written, fast.nodes[0].taints_written);
    // A page and a watch event read it alike.
    let page = read_page(format!(r#"{{"kind":"NodeList","items":[{node}]}}"#).as_bytes(), "Node").expect("page");
    assert_eq!(page.snapshot.nodes[0].taints_written, fast.nodes[0].taints_written);
    // So does the API server's protobuf, rewritten.
    let mut value: serde_json::Value = serde_json::from_str(node).expect("JSON");
    value["apiVersion"] = "v1".into();
    let rewritten = protobuf::to_json(&protobuf::encode(&value).expect("encoded")).expect("rewritten");
    let object = read_object(&rewritten, "Node").expect("rewritten node");
    assert_eq!(object.nodes[0].taints_written, fast.nodes[0].taints_written);
    // Without an entry that owns the taints (a dump of `kubectl get -o json`): none.
    let bare = r#"{"kind":"List","items":[{"kind":"Node","metadata":{"name":"n1"},"spec":{"taints":[
        {"key":"maint","effect":"NoExecute"}]}}]}"#;
    assert_eq!(read(bare.as_bytes()).expect("valid dump").nodes[0].taints_written, None);
    // A time that is not one is named.
    let bad = node.replace("2026-11-22T09:58:12Z", "soon");
    let json = format!(r#"{{"kind":"List","items":[{bad}]}}"#);
    assert_eq!(item_error(&json), "item 0 (Node n1): metadata.managedFields[1].time: \"soon\" is not an RFC 3339 time");
}
