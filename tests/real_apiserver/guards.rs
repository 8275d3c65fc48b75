//! `run`'s guards where they meet a real outage: the node lifecycle controller loses a node, marks its
//! pods not ready and taints it; `run --keep-last-ready`, the only enforcer, keeps the last ready
//! replica of each workload there (docs/run.md, "Keeping the last ready replica").

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::{Value, json};

use super::node_back::{MONITOR, three_nodes, unreachable, wait};
use super::run::{deleted, server_pod};
use crate::support::running::Running;

/// A ReplicaSet of no replicas (no controller makes its pods here), and a maker of its pods on a
/// node, tolerating `unreachable` for 3 s.
fn replica_set(plane: &super::ControlPlane, name: &str) -> impl Fn(&str, &str) -> Value {
    let labels = json!({"app": name});
    let set = json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": name, "namespace": "default"},
        "spec": {"replicas": 0, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "app"}]}}}});
    plane.create(&[set]);
    let uid = plane.get(&["replicaset", name, "-n", "default"])["metadata"]["uid"].as_str().expect("a UID").to_owned();
    let owner = name.to_owned();
    move |pod: &str, node: &str| {
        json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": pod, "namespace": "default", "labels": {"app": owner},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner, "uid": uid,
                                              "controller": true}]},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "app"}],
                     "tolerations": [{"key": "node.kubernetes.io/unreachable", "operator": "Exists",
                                      "effect": "NoExecute", "tolerationSeconds": 3}]}})
    }
}

/// Makes pod `default/NAME` ready, as its kubelet would: `Ready` and `ContainersReady` both `True`.
fn make_ready(plane: &super::ControlPlane, name: &str) {
    let now = jiff::Timestamp::now().round(jiff::Unit::Second).expect("round").to_string();
    let status = json!({"status": {"phase": "Running", "conditions": [
        {"type": "ContainersReady", "status": "True", "lastTransitionTime": now},
        {"type": "Ready", "status": "True", "lastTransitionTime": now}]}});
    plane.kubectl_ok(&["patch", "pod", name, "--subresource=status", "--type=merge", "-p", &status.to_string()], None);
}

/// The status of pod `name`'s condition `type_`.
fn condition(plane: &super::ControlPlane, name: &str, type_: &str) -> Option<String> {
    let pod = server_pod(plane, "default", name)?;
    let conditions = pod["status"]["conditions"].as_array().cloned().unwrap_or_default();
    conditions.iter().find(|c| c["type"] == type_).and_then(|c| c["status"].as_str()).map(str::to_owned)
}

#[test]
fn real_apiserver_keep_last_ready_keeps_the_last_replica_of_each_workload_on_a_lost_node() {
    // The node lifecycle controller alone (2 s period, 10 s grace): `run` is the only one to delete.
    let Some((plane, lost, _others)) = three_nodes("guard-lost-node", Vec::new(), Some("node-lifecycle-controller"))
    else {
        return;
    };
    let web = replica_set(&plane, "web");
    let solo = replica_set(&plane, "solo");
    plane.create(&[web("web-1", "n1"), web("web-2", "n1"), solo("solo-1", "n1"), web("web-3", "n2")]);
    for name in ["web-1", "web-2", "solo-1"] {
        make_ready(&plane, name);
    }
    let mut args = vec!["--keep-last-ready"];
    args.extend(MONITOR);
    let mut run = Running::start_with(plane.kubeconfig(), &args);
    run.expect("synced", |l| l["type"] == "synced");

    // n1's kubelet stops: the controller marks its pods not ready, then taints it.
    lost.stop();
    wait("n1 tainted unreachable", Duration::from_secs(60), || unreachable(&plane));
    assert_eq!(condition(&plane, "web-1", "Ready").as_deref(), Some("False"), "marked not ready by the controller");
    assert_eq!(condition(&plane, "web-1", "ContainersReady").as_deref(), Some("True"));

    // All three fall due 3 s later: one of web's two goes, the other is its last ready replica; solo's
    // only pod is kept, and the line says no replacement is made while it is.
    let first = run.expect("one of web's replicas deleted", |l| l["type"] == "deleted");
    let mut kept = vec![run.expect("a kept replica", |l| l["type"] == "kept")];
    kept.push(
        run.expect("another kept replica", |l| l["type"] == "kept" && l["pod"]["name"] != kept[0]["pod"]["name"]),
    );
    let gone = first["pod"]["name"].as_str().expect("a name");
    let kept_names: BTreeSet<&str> = kept.iter().filter_map(|l| l["pod"]["name"].as_str()).collect();
    let held = *kept_names.iter().find(|name| name.starts_with("web-")).expect("a web replica kept");
    assert_eq!(BTreeSet::from([gone, held]), BTreeSet::from(["web-1", "web-2"]), "{first} {kept:?}");
    assert!(kept_names.contains("solo-1"), "{kept:?}");
    for line in &kept {
        let only = line["pod"]["name"] == "solo-1";
        assert_eq!(line["onlyReplica"], only, "{line}");
    }
    let standing = server_pod(&plane, "default", held).expect("the held replica");
    assert!(standing["metadata"]["deletionTimestamp"].is_null(), "{held} is not deleted: {standing}");

    // A replacement on n2 becomes ready: the held web replica goes; solo-1 stays.
    make_ready(&plane, "web-3");
    let released = run.expect("the held replica let go", |l| l["type"] == "unkept");
    assert_eq!((released["pod"]["name"].as_str(), released["reason"].as_str()), (Some(held), Some("anotherReady")));
    run.expect("the held replica deleted", |l| deleted(l, held));
    let (summary, code, lines) = run.interrupt_and_read();
    assert_eq!(code, 0);
    assert_eq!(super::run::deletions(&lines, "solo-1"), 0, "{lines:#?}");
    let held_at_stop: Vec<(&str, &str)> = summary["held"]
        .as_array()
        .expect("held")
        .iter()
        .filter_map(|h| Some((h["pod"]["name"].as_str()?, h["by"].as_str()?)))
        .collect();
    assert_eq!(held_at_stop, [("solo-1", "keepLastReady")], "{summary}");
    let solo_1 = server_pod(&plane, "default", "solo-1").expect("solo-1");
    assert!(solo_1["metadata"]["deletionTimestamp"].is_null(), "{solo_1}");
}

#[test]
fn real_apiserver_keep_last_ready_on_one_node_counts_a_replica_ready_on_another() {
    // `run n1 --keep-last-ready`: web-1 on n1 and web-2 on n2, both ready; an untolerated taint on n1.
    // Before, only n1's pods were seen: web-1 was kept as web's last ready replica.
    let plane = crate::control_plane!("guard-other-node");
    plane.create(&[super::node("n1", &[], &[]), super::node("n2", &[], &[])]);
    let web = replica_set(&plane, "web");
    plane.create(&[web("web-1", "n1"), web("web-2", "n2")]);
    make_ready(&plane, "web-1");
    make_ready(&plane, "web-2");
    let mut run = Running::start_with(plane.kubeconfig(), &["n1", "--keep-last-ready"]);
    run.expect("synced", |l| l["type"] == "synced");
    super::run::add_taint(&plane, "n1");
    run.expect("web-1 deleted", |l| deleted(l, "web-1"));
    let (_, code, lines) = run.interrupt_and_read();
    assert_eq!(code, 0);
    assert!(!lines.iter().any(|l| l["type"] == "kept" || l["type"] == "warning"), "{lines:#?}");
    let web_2 = server_pod(&plane, "default", "web-2").expect("web-2");
    assert!(web_2["metadata"]["deletionTimestamp"].is_null(), "{web_2}");
}

#[test]
fn real_apiserver_a_second_run_notices_the_first_and_waits_and_enforces_once_it_stops() {
    // Two runs, neither with --leader-elect, the second under a cap of one deletion: before, both
    // enforced and the uncapped one deleted what the capped one held.
    let plane = crate::control_plane!("second-run");
    plane.create(&[
        super::node("n1", &[], &[]),
        super::node("n2", &[], &[]),
        super::pod("default", "a", "n1", None),
        super::pod("default", "b", "n2", None),
        super::pod("default", "c", "n2", None),
    ]);
    let mut first = Running::start_with(plane.kubeconfig(), &[]);
    let mut second = Running::launch_with(plane.kubeconfig(), &["-o", "json", "--max-deletions", "1"]);
    let waiting = second.expect("the second says it waits", |l| l["type"] == "warning");
    let message = waiting["message"].as_str().expect("a message");
    assert!(message.contains("another run") && message.contains("waits"), "{message}");
    assert!(message.contains("default/kubectl-taint-evict"), "names the Lease: {message}");

    // Only the first enforces: a's deletion is its line, not the second's.
    super::run::add_taint(&plane, "n1");
    first.expect("a deleted by the first", |l| deleted(l, "a"));
    // The first stops (its Lease given up): the second takes over, says so, and enforces its cap.
    let (_, code, first_lines) = first.interrupt_and_read();
    assert_eq!(code, 0);
    second.expect("the second leads", |l| l["type"] == "leadership" && l["state"] == "leading");
    second.expect("the second's initial sync", |l| l["type"] == "synced");
    super::run::add_taint(&plane, "n2");
    second.expect("one of b and c deleted", |l| deleted(l, "b") || deleted(l, "c"));
    second.expect("the other capped", |l| l["type"] == "capped");
    let (_, code, second_lines) = second.interrupt_and_read();
    assert_eq!(code, 0);
    assert_eq!(super::run::deletions(&second_lines, "a"), 0, "{second_lines:#?}");
    let by_second = ["b", "c"].iter().map(|name| super::run::deletions(&second_lines, name)).sum::<usize>();
    assert_eq!(by_second, 1, "the cap held: {second_lines:#?}");
    assert_eq!(["b", "c"].iter().map(|name| super::run::deletions(&first_lines, name)).sum::<usize>(), 0);
}

#[test]
fn real_apiserver_a_run_that_takes_over_does_not_delete_again_a_pod_deleted_while_it_waited() {
    // The second run reads its lists, then waits for the first; meanwhile `a` is deleted (it stays
    // terminating: no kubelet) and its node tainted. When the second takes over, the change that
    // says `a` is terminating is already in its queue: before, it seeded from the older list and
    // deleted `a` again.
    let plane = crate::control_plane!("take-over-terminating");
    plane.create(&[super::node("n1", &[], &[]), super::pod("default", "a", "n1", None)]);
    let first = Running::start_with(plane.kubeconfig(), &[]);
    let mut second = Running::launch_with(plane.kubeconfig(), &["-o", "json"]);
    second.expect("the second waits", |l| l["type"] == "leadership" && l["state"] == "following");
    plane.kubectl_ok(&["delete", "pod", "a", "--wait=false"], None);
    super::run::add_taint(&plane, "n1");
    let (_, code, _) = first.interrupt_and_read();
    assert_eq!(code, 0);
    let line = second.expect("a taken over", |l| l["pod"]["name"] == "a" && (l["type"] == "gone" || deleted(l, "a")));
    assert_eq!(line["type"], "gone", "not deleted again: {line}");
}

#[test]
fn real_apiserver_two_leader_elect_runs_over_different_namespaces_both_enforce() {
    // `run -n q1 --leader-elect` and `run -n q2 --leader-elect`: before, both held one Lease, q2's
    // waited behind q1's and q2's pods were never deleted. Different scopes hold different Leases.
    let plane = crate::control_plane!("lease-per-scope");
    plane.create(&[super::namespace("q1"), super::namespace("q2")]);
    plane.create(&[super::node("n1", &[], &[]), super::pod("q1", "a", "n1", None), super::pod("q2", "b", "n1", None)]);
    let mut q1 = Running::start_with(plane.kubeconfig(), &["--leader-elect", "-n", "q1"]);
    let mut q2 = Running::start_with(plane.kubeconfig(), &["--leader-elect", "-n", "q2"]);
    super::run::add_taint(&plane, "n1");
    q1.expect("a deleted by the run over q1", |l| deleted(l, "a"));
    q2.expect("b deleted by the run over q2", |l| deleted(l, "b"));
    let (_, code, _) = q1.interrupt_and_read();
    assert_eq!(code, 0);
    let (_, code, _) = q2.interrupt_and_read();
    assert_eq!(code, 0);
}
