//! Valid dumps at the extremes a cluster allows ("a pathological but valid dump"), for
//! measuring `plan`'s memory against a dump's size (`examples/gen_served.rs` writes them to a file).
//!
//! A dump here is what the contract reads: `kubectl get nodes,pods -A -o json`, in kubectl's layout
//! (keys in order, four spaces a level). Every object is written as kube-apiserver 1.29 serves it
//! (defaulted fields, UID, resource version, the `not-ready` `NoSchedule` taint a new node gets; a pod
//! carries the two 300 s tolerations the admission adds), and no larger than it accepts: a request
//! body of at most 3 MiB, 1.5 MiB once in etcd. The largest object of each shape was created on a
//! real v1.29.6 API server. The hand-made shapes of `examples/gen_hostile.rs` are smaller per object
//! than any API server answers (it refuses a pod without containers).
//!
//! The shapes:
//! - `pods`: 200,000 pods of the smallest kind an API server keeps, on one tainted node;
//! - `nodes`: 200,000 tainted nodes of that kind, and a pod;
//! - `taints`: 20 nodes with 60,000 distinct NoExecute taints each, and a pod each;
//! - `tolerations`: 20 pods with 40,000 distinct tolerations each;
//! - `labels`: 50 nodes with 70,000 labels each, and a pod;
//! - `long-names`: 100,000 pods with 253-character names in 63-character namespaces;
//! - `annotations`: 400 pods with a 256 KiB annotation each.

use std::io::Write;

use serde_json::{Value, json};

/// A UID in the API server's form, distinct for each `(kind, i)`.
fn uid(kind: u32, i: usize) -> String {
    format!("{kind:08x}-0000-4000-8000-{i:012x}")
}

/// A node as the API server serves it: the `not-ready` `NoSchedule` taint it adds on creation after
/// `taints`.
fn node(name: &str, i: usize, labels: Option<Value>, mut taints: Vec<Value>) -> Value {
    taints.push(json!({"effect": "NoSchedule", "key": "node.kubernetes.io/not-ready"}));
    let mut metadata = json!({
        "creationTimestamp": "2025-12-31T23:50:00Z",
        "name": name,
        "resourceVersion": "191",
        "uid": uid(1, i),
    });
    if let Some(labels) = labels {
        metadata["labels"] = labels;
    }
    json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": metadata,
        "spec": {"taints": taints},
        "status": {
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 0}},
            "nodeInfo": {
                "architecture": "", "bootID": "", "containerRuntimeVersion": "", "kernelVersion": "",
                "kubeProxyVersion": "", "kubeletVersion": "", "machineID": "", "operatingSystem": "",
                "osImage": "", "systemUUID": "",
            },
        },
    })
}

/// The one `NoExecute` taint most shapes' nodes carry.
fn unreachable() -> Vec<Value> {
    vec![json!({"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "timeAdded": "2025-12-31T23:55:00Z"})]
}

/// A pod as the API server serves it, with `extra` tolerations before the two the admission adds.
fn pod(namespace: &str, name: &str, i: usize, node: &str, extra: Vec<Value>, annotations: Option<Value>) -> Value {
    let mut tolerations = extra;
    for key in ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"] {
        tolerations.push(json!({"effect": "NoExecute", "key": key, "operator": "Exists", "tolerationSeconds": 300}));
    }
    let mut metadata = json!({
        "creationTimestamp": "2025-12-31T23:00:00Z",
        "name": name,
        "namespace": namespace,
        "resourceVersion": "193",
        "uid": uid(2, i),
    });
    if let Some(annotations) = annotations {
        metadata["annotations"] = annotations;
    }
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": {
            "containers": [{
                "image": "i",
                "imagePullPolicy": "Always",
                "name": "c",
                "resources": {},
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
            }],
            "dnsPolicy": "ClusterFirst",
            "enableServiceLinks": true,
            "nodeName": node,
            "preemptionPolicy": "PreemptLowerPriority",
            "priority": 0,
            "restartPolicy": "Always",
            "schedulerName": "default-scheduler",
            "securityContext": {},
            "terminationGracePeriodSeconds": 30,
            "tolerations": tolerations,
        },
        "status": {"phase": "Pending", "qosClass": "BestEffort"},
    })
}

/// A pod on node `n0`: a dump without pods is refused.
fn lone_pod() -> Value {
    pod("d", "p", 0, "n0", vec![], None)
}

/// The items of `shape`; `None` for an unknown one.
fn items(shape: &str) -> Option<Box<dyn Iterator<Item = Value>>> {
    let tainted = || std::iter::once(node("n", 0, None, unreachable()));
    Some(match shape {
        "pods" => Box::new(tainted().chain((0..200_000).map(|i| pod("d", &format!("p{i}"), i, "n", vec![], None)))),
        "nodes" => Box::new(
            (0..200_000).map(|i| node(&format!("n{i}"), i, None, unreachable())).chain(std::iter::once(lone_pod())),
        ),
        "taints" => Box::new((0..20).flat_map(|n| {
            let taints = (0..60_000).map(|i| json!({"effect": "NoExecute", "key": format!("k{n}-{i}")})).collect();
            let name = format!("n{n}");
            [node(&name, n, None, taints), pod("d", &format!("p{n}"), n, &name, vec![], None)]
        })),
        "tolerations" => Box::new(tainted().chain((0..20).map(|p| {
            let tolerations = (0..40_000).map(|i| json!({"key": format!("k{p}-{i}"), "operator": "Exists"})).collect();
            pod("d", &format!("p{p}"), p, "n", tolerations, None)
        }))),
        "labels" => Box::new(
            (0..50)
                .map(|n| {
                    let labels: serde_json::Map<String, Value> =
                        (0..70_000).map(|i| (format!("k{n}-{i}"), Value::from("v"))).collect();
                    node(&format!("n{n}"), n, Some(labels.into()), unreachable())
                })
                .chain(std::iter::once(lone_pod())),
        ),
        "long-names" => Box::new(tainted().chain((0..100_000).map(|i| {
            let name = format!("{}{i:06}", "p".repeat(247));
            pod(&"d".repeat(63), &name, i, "n", vec![], None)
        }))),
        "annotations" => Box::new(tainted().chain((0..400).map(|i| {
            let annotations = json!({"a": "x".repeat(256 * 1024 - 1)});
            pod("d", &format!("p{i}"), i, "n", vec![], Some(annotations))
        }))),
        _ => return None,
    })
}

/// Writes `value` as kubectl does an item of a list: four spaces a level, from the second level on.
fn write_item(out: &mut impl Write, value: &Value, text: &mut Vec<u8>) -> std::io::Result<()> {
    text.clear();
    let mut serializer =
        serde_json::Serializer::with_formatter(&mut *text, serde_json::ser::PrettyFormatter::with_indent(b"    "));
    serde::Serialize::serialize(value, &mut serializer).map_err(std::io::Error::other)?;
    for (i, line) in text.split(|&b| b == b'\n').enumerate() {
        if i > 0 {
            out.write_all(b"\n")?;
        }
        out.write_all(b"        ")?;
        out.write_all(line)?;
    }
    Ok(())
}

/// Writes the dump of shape `shape` to `out` (an `InvalidInput` error names the shapes when it is not
/// one of them).
pub fn write(shape: &str, out: &mut impl Write) -> std::io::Result<()> {
    let Some(items) = items(shape) else {
        let shapes = "pods, nodes, taints, tolerations, labels, long-names, annotations";
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("unknown shape {shape:?}: one of {shapes}"),
        ));
    };
    out.write_all(b"{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n")?;
    let mut text = Vec::new();
    for (i, item) in items.enumerate() {
        if i > 0 {
            out.write_all(b",\n")?;
        }
        write_item(out, &item, &mut text)?;
    }
    out.write_all(
        b"\n    ],\n    \"kind\": \"List\",\n    \"metadata\": {\n        \"resourceVersion\": \"\"\n    }\n}\n",
    )
}
