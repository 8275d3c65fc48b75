//! The protobuf reader and the JSON reader give the same values for the same objects, encoded by the
//! real kube-apiserver: random nodes, pods and Leases (a property test's generators, with its
//! deterministic seed) are created, then read through the whole client twice, once in each content
//! type, and the snapshots and node health compared.

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use serde_json::{Value, json};
use taint_evict::cluster::protobuf::ContentType;
use taint_evict::cluster::snapshot::NodeSelection;
use taint_evict::cluster::{ConnectOptions, connect, read_snapshot};
use taint_evict::engine::lifecycle::NodeHealth;
use taint_evict::engine::time::Timestamp;

use super::namespace;
use crate::control_plane;

const NAMESPACES: [&str; 2] = ["team-a", "team-b"];

fn name() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9-]{0,12}[a-z0-9]"
}

fn instant() -> impl Strategy<Value = String> {
    (1_700_000_000i64..1_900_000_000).prop_map(|s| jiff::Timestamp::from_second(s).expect("in range").to_string())
}

/// A `MicroTime` as the API writes it (six digits).
fn micro_instant() -> impl Strategy<Value = String> {
    (1_700_000_000i64..1_900_000_000, 0u32..1_000_000).prop_map(|(s, micros)| {
        let at = jiff::Timestamp::from_second(s).expect("in range");
        format!("{}.{micros:06}Z", at.strftime("%Y-%m-%dT%H:%M:%S"))
    })
}

fn labels() -> impl Strategy<Value = Value> {
    prop::collection::btree_map(
        prop_oneof![
            name(),
            Just("topology.kubernetes.io/zone".to_owned()),
            name().prop_map(|n| format!("example.com/{n}"))
        ],
        prop_oneof![Just(String::new()), name()],
        0..4,
    )
    .prop_map(|labels| json!(labels))
}

fn effect() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["NoExecute", "NoSchedule", "PreferNoSchedule"])
}

fn taint() -> impl Strategy<Value = Value> {
    (name(), prop::option::of(name()), effect(), prop::option::of(instant())).prop_map(|(key, value, effect, added)| {
        let mut taint = json!({"key": format!("example.com/{key}"), "effect": effect});
        if let Some(value) = value {
            taint["value"] = json!(value);
        }
        if let (Some(added), "NoExecute") = (added, effect) {
            taint["timeAdded"] = json!(added);
        }
        taint
    })
}

fn node(index: usize) -> impl Strategy<Value = Value> {
    let condition =
        (prop::sample::select(vec!["True", "False", "Unknown"]), instant(), instant(), prop::option::of(name()));
    (labels(), prop::collection::vec(taint(), 0..3), prop::option::of(condition)).prop_map(
        move |(labels, taints, ready)| {
            let mut node = json!({"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": format!("node-{index:02}"), "labels": labels}, "spec": {"taints": taints}});
            if let Some((status, heartbeat, transition, reason)) = ready {
                let mut condition =
                    json!({"type": "Ready", "status": status, "lastHeartbeatTime": heartbeat, "lastTransitionTime": transition});
                if let Some(reason) = reason {
                    condition["reason"] = json!(reason);
                }
                node["status"] = json!({"conditions": [condition]});
            }
            node
        },
    )
}

fn toleration() -> impl Strategy<Value = Value> {
    let seconds = prop_oneof![Just(None), (-5i64..100_000).prop_map(Some)];
    (prop::option::of(name()), prop::bool::ANY, prop::option::of(name()), prop::option::of(effect()), seconds).prop_map(
        |(key, exists, value, effect, seconds)| {
            let mut toleration = json!({});
            if let Some(key) = key {
                toleration["key"] = json!(format!("example.com/{key}"));
            }
            if exists || toleration.get("key").is_none() {
                toleration["operator"] = json!("Exists");
            } else {
                toleration["operator"] = json!("Equal");
                toleration["value"] = json!(value.unwrap_or_default());
            }
            if let Some(effect) = effect {
                toleration["effect"] = json!(effect);
                if effect == "NoExecute"
                    && let Some(seconds) = seconds
                {
                    toleration["tolerationSeconds"] = json!(seconds);
                }
            }
            toleration
        },
    )
}

fn owner() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(vec!["ReplicaSet", "StatefulSet", "Job", "DaemonSet"]),
        name(),
        prop::option::of(prop::bool::ANY),
    )
        .prop_map(|(kind, name, controller)| {
            let mut owner = json!({"apiVersion": "apps/v1", "kind": kind, "name": name,
                                   "uid": "6f1d6f6e-0000-4000-8000-000000000001"});
            if let Some(controller) = controller {
                owner["controller"] = json!(controller);
            }
            owner
        })
}

fn pod(index: usize, nodes: usize) -> impl Strategy<Value = Value> {
    (
        labels(),
        prop::collection::vec(toleration(), 0..4),
        prop::option::of(0..nodes),
        prop::option::of(owner()),
        prop::sample::select(NAMESPACES.to_vec()),
    )
        .prop_map(move |(labels, tolerations, node, owner, namespace)| {
            let mut pod = json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": format!("pod-{index:03}"), "namespace": namespace, "labels": labels},
                "spec": {"tolerations": tolerations, "containers": [{"name": "c", "image": "app"}]}});
            if let Some(node) = node {
                pod["spec"]["nodeName"] = json!(format!("node-{node:02}"));
            }
            if let Some(owner) = owner {
                pod["metadata"]["ownerReferences"] = json!([owner]);
            }
            pod
        })
}

fn lease(node: usize) -> impl Strategy<Value = Value> {
    (prop::option::of(micro_instant()), prop::option::of(micro_instant()), prop::option::of(1i32..600)).prop_map(
        move |(renewed, acquired, duration)| {
            let name = format!("node-{node:02}");
            let mut spec = json!({"holderIdentity": name});
            if let Some(renewed) = renewed {
                spec["renewTime"] = json!(renewed);
            }
            if let Some(acquired) = acquired {
                spec["acquireTime"] = json!(acquired);
            }
            if let Some(duration) = duration {
                spec["leaseDurationSeconds"] = json!(duration);
            }
            json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                   "metadata": {"name": name, "namespace": "kube-node-lease"}, "spec": spec})
        },
    )
}

/// Draws one value of `strategy`.
fn draw<T: std::fmt::Debug>(runner: &mut TestRunner, strategy: impl Strategy<Value = T>) -> T {
    strategy.new_tree(runner).expect("a value").current()
}

#[test]
fn real_apiserver_protobuf_and_json_read_random_objects_alike() {
    let plane = control_plane!("protobuf-equals-json");
    let mut runner = TestRunner::deterministic();
    let (nodes, pods) = (12, 60);
    let mut objects: Vec<Value> = NAMESPACES.iter().map(|n| namespace(n)).collect();
    objects.extend((0..nodes).map(|i| draw(&mut runner, node(i))));
    objects.extend((0..pods).map(|i| draw(&mut runner, pod(i, nodes))));
    objects.extend((0..nodes).filter(|i| i % 3 != 0).map(|i| draw(&mut runner, lease(i))));
    plane.create(&objects);
    // Pod conditions are status: written through its subresource.
    for i in (0..pods).step_by(7) {
        let (namespace, name) =
            (objects[2 + nodes + i]["metadata"]["namespace"].as_str().expect("ns"), format!("pod-{i:03}"));
        let at = draw(&mut runner, instant());
        let status = json!({"status": {"phase": "Running",
            "conditions": [{"type": "PodScheduled", "status": "True", "lastTransitionTime": at}]}});
        plane.kubectl_ok(
            &[
                "patch",
                "pod",
                &name,
                "-n",
                namespace,
                "--subresource=status",
                "--type=merge",
                "-p",
                &status.to_string(),
            ],
            None,
        );
    }

    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let read = |content_type| {
        runtime.block_on(async {
            let kubeconfig = plane.kubeconfig().to_str().map(str::to_owned);
            let options = ConnectOptions { kubeconfig, content_type, ..ConnectOptions::default() };
            let connection = connect(&options).await.expect("connects");
            let names = (0..nodes).map(|i| format!("node-{i:02}")).collect();
            let every = |_: &NodeHealth, _: Timestamp| true;
            let (snapshot, health) =
                read_snapshot(&connection, &NodeSelection::Named(names), &every, true).await.expect("reads");
            (format!("{snapshot:#?}"), format!("{:#?}", health.health), connection.answers.described())
        })
    };
    let (protobuf, json) = (read(ContentType::Protobuf), read(ContentType::Json));
    assert_eq!((protobuf.2, json.2), (Some("protobuf"), Some("json")));
    assert_eq!(protobuf.0, json.0, "the snapshots");
    assert_eq!(protobuf.1, json.1, "the node health");
    // What was compared holds what was drawn.
    for expected in ["tolerations", "owner: Some", "Running", "renewed", "taints"] {
        assert!(format!("{}{}", protobuf.0, protobuf.1).contains(expected), "{expected} was read");
    }
}
