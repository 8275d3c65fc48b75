//! `run` against the real kube-apiserver: deletions at once and at their deadline, cancellation, the
//! UID precondition, what the real validation accepts (the DisruptionTarget condition, the Event), and
//! a dry run that writes nothing.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::{Value, json};

use super::{ControlPlane, node, pod, taint};
use crate::control_plane;
use crate::support::running::Running;
use crate::util::instant;

const SECOND: i128 = 1_000_000_000;

/// Adds the test taint to `node` now (`timeAdded` = now); returns the instant it was added.
pub fn add_taint(plane: &ControlPlane, node: &str) -> i128 {
    let now = jiff::Timestamp::now();
    let patch = json!({"spec": {"taints": [taint(now)]}}).to_string();
    plane.kubectl_ok(&["patch", "node", node, "--type=merge", "-p", &patch], None);
    now.as_nanosecond()
}

/// Removes every taint from `node`.
pub fn remove_taints(plane: &ControlPlane, node: &str) {
    plane.kubectl_ok(&["patch", "node", node, "--type=merge", "-p", r#"{"spec":{"taints":null}}"#], None);
}

/// Whether a `run -o json` line reports the deletion of `name` (a real one, not a dry run's).
pub fn deleted(line: &Value, name: &str) -> bool {
    line["type"] == "deleted" && line["pod"]["name"] == name
}

/// How many lines report the deletion of `name`.
pub fn deletions(lines: &[Value], name: &str) -> usize {
    lines.iter().filter(|l| deleted(l, name)).count()
}

/// The pod as the server has it, or `None` once it is gone.
pub fn server_pod(plane: &ControlPlane, namespace: &str, name: &str) -> Option<Value> {
    let output = plane.kubectl(&["get", "pod", "-n", namespace, name, "-o", "json"], None);
    output.status.success().then(|| serde_json::from_slice(&output.stdout).expect("JSON"))
}

/// Waits until the wall clock passes `at` (nanoseconds since the epoch): a deadline of the cluster's
/// own, not a guess at how long something takes.
fn wait_until(at: i128) {
    while jiff::Timestamp::now().as_nanosecond() < at {
        std::thread::park_timeout(Duration::from_millis(20));
    }
}

#[test]
fn real_apiserver_run_deletes_untolerated_pods_at_once_and_tolerating_ones_at_their_deadline() {
    let plane = control_plane!("run-deadlines");
    plane.create(&[
        node("n1", &[], &[]),
        pod("default", "untolerated", "n1", None),
        pod("default", "four-seconds", "n1", Some(Some(4))),
        pod("default", "forever", "n1", Some(None)),
    ]);
    let mut run = Running::start_with(plane.kubeconfig(), &[]);
    let added = add_taint(&plane, "n1");

    let first = run.expect("untolerated deleted", |l| deleted(l, "untolerated"));
    // "At once": within kubectl's patch (a process started after `added`), the watch's delivery and
    // the condition's PATCH; on a loaded two-core machine that has taken 1.35 s. The next pod's
    // deadline is 4 s.
    let late = instant(first["time"].as_str().expect("time")) - added;
    assert!((0..2 * SECOND).contains(&late), "deleted {late} ns after the taint");

    let second = run.expect("four-seconds deleted", |l| deleted(l, "four-seconds"));
    let at = instant(second["time"].as_str().expect("time"));
    let off = at - (added + 4 * SECOND);
    assert!(off.abs() <= SECOND, "deleted {off} ns from its deadline (taint + 4 s)");

    for name in ["untolerated", "four-seconds"] {
        let pod = server_pod(&plane, "default", name).expect("a deleted pod stays Terminating without a kubelet");
        assert!(pod["metadata"]["deletionTimestamp"].is_string(), "{name} is terminating: {pod}");
    }
    let forever = server_pod(&plane, "default", "forever").expect("forever exists");
    assert!(forever["metadata"]["deletionTimestamp"].is_null(), "{forever}");
    let (summary, code, lines) = run.interrupt_and_read();
    assert_eq!(code, 0);
    assert_eq!(summary["deleted"], 2, "{summary}");
    assert_eq!(deletions(&lines, "forever"), 0);
}

#[test]
fn real_apiserver_run_untaint_cancels_the_countdown() {
    let plane = control_plane!("run-untaint");
    plane.create(&[
        node("n1", &[], &[]),
        node("n2", &[], &[]),
        pod("default", "spared", "n1", Some(Some(3))),
        pod("default", "canary", "n2", Some(Some(6))),
    ]);
    let mut run = Running::start_with(plane.kubeconfig(), &[]);
    add_taint(&plane, "n1");
    run.expect("spared scheduled", |l| l["type"] == "scheduled" && l["pod"]["name"] == "spared");
    remove_taints(&plane, "n1");
    run.expect("spared cancelled", |l| l["type"] == "cancelled" && l["pod"]["name"] == "spared");
    // The canary's deadline lies after the spared pod's: once it is deleted, the spared one's is past.
    add_taint(&plane, "n2");
    run.expect("canary deleted", |l| deleted(l, "canary"));
    let spared = server_pod(&plane, "default", "spared").expect("spared exists");
    assert!(spared["metadata"]["deletionTimestamp"].is_null(), "{spared}");
    let (summary, _, lines) = run.interrupt_and_read();
    assert_eq!(deletions(&lines, "spared"), 0, "{summary}");
}

#[test]
fn real_apiserver_run_never_deletes_a_pod_replaced_under_the_same_name() {
    let plane = control_plane!("run-replaced");
    plane.create(&[node("n1", &[], &[]), node("n2", &[], &[]), pod("default", "same", "n1", Some(Some(3)))]);
    let mut run = Running::start_with(plane.kubeconfig(), &[]);
    add_taint(&plane, "n1");
    let scheduled = run.expect("same scheduled", |l| l["type"] == "scheduled" && l["pod"]["name"] == "same");
    let old_uid = scheduled["pod"]["uid"].as_str().expect("uid").to_owned();
    let due = instant(scheduled["evictAt"].as_str().expect("evictAt"));

    // While run is stopped, the pod is replaced by one that tolerates the taint forever; run wakes up
    // after the old pod's deadline, with its timer and the watch events racing.
    run.signal("-STOP");
    plane.kubectl_ok(&["delete", "pod", "same", "--grace-period=0", "--force"], None);
    plane.create(&[pod("default", "same", "n1", Some(None))]);
    let new_uid = server_pod(&plane, "default", "same").expect("the replacement")["metadata"]["uid"]
        .as_str()
        .expect("uid")
        .to_owned();
    assert_ne!(old_uid, new_uid);
    wait_until(due + SECOND);
    run.signal("-CONT");

    // A canary deleted after the wake-up shows run has handled what was pending.
    plane.create(&[pod("default", "canary", "n2", None)]);
    add_taint(&plane, "n2");
    run.expect("canary deleted", |l| deleted(l, "canary"));
    let replacement = server_pod(&plane, "default", "same").expect("the replacement exists");
    assert_eq!(replacement["metadata"]["uid"], new_uid.as_str());
    assert!(replacement["metadata"]["deletionTimestamp"].is_null(), "{replacement}");
    let (_, _, lines) = run.interrupt_and_read();
    assert!(
        !lines.iter().any(|l| deleted(l, "same") && l["pod"]["uid"] == new_uid.as_str()),
        "the replacement was never deleted: {lines:#?}"
    );
}

#[test]
fn real_apiserver_accepts_the_disruption_condition_and_the_event() {
    let plane = control_plane!("run-condition-event");
    plane.create(&[node("n1", &[], &[]), pod("default", "victim", "n1", None)]);
    let mut run = Running::start_with(plane.kubeconfig(), &[]);
    add_taint(&plane, "n1");
    run.expect("victim deleted", |l| deleted(l, "victim"));
    let (_, _, lines) = run.interrupt_and_read();
    assert!(!lines.iter().any(|l| l["type"] == "failed" || l["type"] == "warning"), "{lines:#?}");

    let victim = server_pod(&plane, "default", "victim").expect("victim is terminating");
    let conditions = victim["status"]["conditions"].as_array().expect("conditions");
    let target = conditions.iter().find(|c| c["type"] == "DisruptionTarget").expect("a DisruptionTarget condition");
    assert_eq!(target["status"], "True");
    assert_eq!(target["reason"], "DeletionByTaintManager");
    assert!(target["lastTransitionTime"].is_string(), "{target}");

    let events = plane.get(&["events", "-n", "default", "--field-selector", "involvedObject.name=victim"]);
    let event = events["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|e| e["reason"] == "TaintManagerEviction")
        .unwrap_or_else(|| panic!("a TaintManagerEviction event: {events}"));
    assert_eq!(event["involvedObject"]["kind"], "Pod");
    assert!(event["message"].as_str().is_some_and(|m| m.contains("victim")), "{event}");
}

#[test]
fn real_apiserver_accepts_the_series_of_a_flapping_nodes_events() {
    const CYCLES: usize = 3;
    const PODS: [&str; 2] = ["flap-a", "flap-b"];
    let plane = control_plane!("run-event-series");
    plane.create(&[
        node("n1", &[], &[]),
        pod("default", PODS[0], "n1", Some(Some(3600))),
        pod("default", PODS[1], "n1", Some(Some(3600))),
    ]);
    let mut run = Running::start_with(plane.kubeconfig(), &[]);
    for cycle in 1..=CYCLES {
        add_taint(&plane, "n1");
        run.expect_count("the scheduled deletions", cycle * PODS.len(), |l| l["type"] == "scheduled");
        remove_taints(&plane, "n1");
        run.expect_count("the cancellations", cycle * PODS.len(), |l| l["type"] == "cancelled");
    }
    let (_, code, lines) = run.interrupt_and_read();
    assert_eq!(code, 0);
    assert!(!lines.iter().any(|l| l["type"] == "failed" || l["type"] == "warning"), "{lines:#?}");

    let events = plane.get(&["events.v1.events.k8s.io", "-n", "default"]);
    let ours: Vec<&Value> = events["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter(|e| e["reportingController"] == "kubectl-taint-evict")
        .collect();
    assert_eq!(ours.len(), PODS.len(), "one Event per pod: {events:#}");
    for name in PODS {
        let event = ours.iter().find(|e| e["regarding"]["name"] == name).expect("the pod's Event");
        assert_eq!(event["note"], format!("Cancelling deletion of Pod default/{name}"));
        assert_eq!(event["series"]["count"], CYCLES, "every cycle counted, as the server keeps it: {event:#}");
        assert!(event["series"]["lastObservedTime"].is_string(), "{event:#}");
    }
}

#[test]
fn real_apiserver_dry_run_writes_nothing() {
    let plane = control_plane!("run-dry-run");
    plane.create(&[
        node("n1", &[], &[]),
        pod("default", "a", "n1", None),
        pod("default", "b", "n1", None),
        pod("default", "c", "n1", Some(Some(2))),
    ]);
    let before = plane.get(&["pods", "-n", "default"]);
    let mut run = Running::start_with(plane.kubeconfig(), &["--dry-run"]);
    add_taint(&plane, "n1");
    for name in ["a", "b", "c"] {
        let line = run.expect("a dry-run deletion", |l| l["pod"]["name"] == name && l["dryRun"] == true);
        assert_eq!(line["type"], "wouldDelete", "a dry run never says deleted: {line}");
    }
    let after = plane.get(&["pods", "-n", "default"]);
    let versions = |list: &Value| -> Vec<(String, String)> {
        list["items"]
            .as_array()
            .expect("items")
            .iter()
            .map(|p| (p["metadata"]["name"].to_string(), p["metadata"]["resourceVersion"].to_string()))
            .collect()
    };
    assert_eq!(versions(&before), versions(&after), "no pod changed");
    assert!(after["items"].as_array().expect("items").iter().all(|p| p["metadata"]["deletionTimestamp"].is_null()));
    let events = plane.get(&["events", "-A"]);
    assert!(
        !events["items"].as_array().expect("items").iter().any(|e| e["reason"] == "TaintManagerEviction"),
        "{events}"
    );
    let (_, code) = run.interrupt();
    assert_eq!(code, 0);
}

#[test]
fn real_apiserver_run_n_watches_and_deletes_the_pods_of_that_namespace_alone() {
    let plane = control_plane!("run-namespace");
    plane.create(&[
        super::namespace("shop"),
        node("n1", &[], &[]),
        pod("default", "a", "n1", None),
        pod("shop", "cart", "n1", None),
    ]);
    let mut run = Running::start_with(plane.kubeconfig(), &["-n", "shop"]);
    let synced = run.expect("synced", |l| l["type"] == "synced");
    assert_eq!(synced["pods"], 1, "only shop's pods are listed: {synced}");
    add_taint(&plane, "n1");
    let deleted = run.expect("cart deleted", |l| l["type"] == "deleted" && l["pod"]["name"] == "cart");
    assert_eq!(deleted["pod"]["namespace"], "shop", "{deleted}");
    let (summary, code) = run.interrupt();
    assert_eq!((code, summary["deleted"].as_u64()), (0, Some(1)), "{summary}");
    let left = plane.get(&["pods", "-n", "default"]);
    let a = &left["items"][0];
    assert!(a["metadata"]["name"] == "a" && a["metadata"]["deletionTimestamp"].is_null(), "{left}");
}

#[test]
fn real_apiserver_a_taint_on_every_node_deletes_exactly_the_cap_and_lists_the_rest() {
    let plane = crate::control_plane!("run-cap");
    let mut objects = Vec::new();
    for n in ["n1", "n2", "n3"] {
        objects.push(node(n, &[], &[]));
        for p in 1..=2 {
            objects.push(pod("default", &format!("{n}-p{p}"), n, None));
        }
    }
    plane.create(&objects);
    let mut run = Running::start_with(plane.kubeconfig(), &["--max-deletions", "2", "--max-deletions-window", "10m"]);
    for n in ["n1", "n2", "n3"] {
        add_taint(&plane, n);
    }
    run.expect_count("the cap reached", 2, |l| l["type"] == "deleted");
    run.expect_count("the rest held and listed", 4, |l| l["type"] == "capped");
    let (_, code, lines) = run.interrupt_and_read();
    assert_eq!(code, 0);
    let deleted: Vec<&str> =
        lines.iter().filter(|l| l["type"] == "deleted").filter_map(|l| l["pod"]["name"].as_str()).collect();
    assert_eq!(deleted.len(), 2, "exactly the cap: {lines:#?}");
    let capped = lines.iter().filter(|l| l["type"] == "capped").collect::<Vec<_>>();
    assert!(capped.iter().all(|l| l["maxDeletions"] == 2 && l["windowSeconds"] == 600.0), "{capped:#?}");
    // `capped` only once the cap is really reached: never for a pod deleted.
    let capped_names: BTreeSet<&str> = capped.iter().filter_map(|l| l["pod"]["name"].as_str()).collect();
    assert_eq!(capped.len(), 4, "each held pod said once, no other: {capped:#?}");
    assert!(deleted.iter().all(|name| !capped_names.contains(name)), "{deleted:?} {capped_names:?}");
    // The summary lists the four held, with their deadlines and what holds them.
    let summary = lines.iter().find(|l| l["type"] == "summary").expect("a summary");
    let held: BTreeSet<&str> = summary["held"]
        .as_array()
        .expect("held")
        .iter()
        .inspect(|h| assert_eq!(h["by"], "maxDeletions", "{summary}"))
        .filter_map(|h| h["pod"]["name"].as_str())
        .collect();
    assert_eq!(held, capped_names, "{summary}");
    let standing = objects
        .iter()
        .filter(|o| o["kind"] == "Pod")
        .filter_map(|o| o["metadata"]["name"].as_str())
        .filter(|name| {
            server_pod(&plane, "default", name).is_some_and(|p| p["metadata"]["deletionTimestamp"].is_null())
        })
        .count();
    assert_eq!(standing, 4, "the four held pods still stand");
}

/// Makes pod `default/NAME` Ready, as its kubelet would (no kubelet runs here).
fn make_ready(plane: &ControlPlane, name: &str) {
    let now = jiff::Timestamp::now().round(jiff::Unit::Second).expect("round").to_string();
    let status = json!({"status": {"phase": "Running", "conditions": [
        {"type": "Ready", "status": "True", "lastTransitionTime": now}]}});
    plane.kubectl_ok(&["patch", "pod", name, "--subresource=status", "--type=merge", "-p", &status.to_string()], None);
}

#[test]
fn real_apiserver_run_keep_last_ready_deletes_one_of_two_ready_replicas_and_the_other_once_a_third_is_ready() {
    // No kube-controller-manager runs here: no ReplicaSet controller makes pods, no garbage collector
    // reads the owner references, no taint eviction but `run`'s.
    let plane = control_plane!("run-keep-last-ready");
    let labels = json!({"app": "web"});
    let replica_set = json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"replicas": 0, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "app"}]}}}});
    plane.create(&[node("n1", &[], &[]), node("n2", &[], &[]), replica_set]);
    let uid = plane.get(&["replicaset", "web", "-n", "default"])["metadata"]["uid"].as_str().expect("a UID").to_owned();
    let owned = |name: &str, node: &str| {
        let mut pod = pod("default", name, node, None);
        pod["metadata"]["ownerReferences"] =
            json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": uid, "controller": true}]);
        pod
    };
    plane.create(&[owned("web-1", "n1"), owned("web-2", "n1"), owned("web-3", "n2")]);
    for name in ["web-1", "web-2"] {
        make_ready(&plane, name);
    }
    let mut run = Running::start_with(plane.kubeconfig(), &["--keep-last-ready"]);
    add_taint(&plane, "n1");

    // Both fall due at once: the first goes, the second is the last ready replica and is held.
    let first = run.expect("one replica deleted", |l| l["type"] == "deleted");
    let kept = run.expect("the other kept", |l| l["type"] == "kept");
    let (gone, held) = (first["pod"]["name"].as_str().expect("a name"), kept["pod"]["name"].as_str().expect("a name"));
    assert_eq!(BTreeSet::from([gone, held]), BTreeSet::from(["web-1", "web-2"]), "{first} {kept}");
    assert_eq!(kept["owner"], json!({"kind": "ReplicaSet", "name": "web", "uid": uid}), "{kept}");
    assert_eq!((kept["reason"].as_str(), kept["dryRun"].as_bool()), (Some("untolerated"), Some(false)));
    let standing = server_pod(&plane, "default", held).expect("the held replica");
    assert!(standing["metadata"]["deletionTimestamp"].is_null(), "{held} is not deleted: {standing}");

    // A replica on n2 becomes ready: the held one goes.
    make_ready(&plane, "web-3");
    let released = run.expect("the held replica let go", |l| l["type"] == "unkept");
    assert_eq!((released["pod"]["name"].as_str(), released["reason"].as_str()), (Some(held), Some("anotherReady")));
    assert_eq!(released["replica"], "web-3");
    run.expect("the held replica deleted", |l| deleted(l, held));
    let (_, code, lines) = run.interrupt_and_read();
    assert_eq!(code, 0);
    assert_eq!(lines.iter().filter(|l| l["type"] == "kept").count(), 1, "said once: {lines:#?}");
    for name in ["web-1", "web-2"] {
        let pod = server_pod(&plane, "default", name).expect("a deleted pod stays Terminating without a kubelet");
        assert!(pod["metadata"]["deletionTimestamp"].is_string(), "{name} is terminating: {pod}");
    }
    let web_3 = server_pod(&plane, "default", "web-3").expect("web-3");
    assert!(web_3["metadata"]["deletionTimestamp"].is_null(), "web-3, untainted, stands: {web_3}");
}

#[test]
fn real_apiserver_run_l_cancels_the_deletions_on_a_node_relabelled_out_of_its_selector() {
    let plane = control_plane!("run-relabelled");
    let zone = "topology.kubernetes.io/zone";
    plane.create(&[
        node("zc-3", &[(zone, "zc")], &[]),
        pod("default", "first", "zc-3", Some(Some(5))),
        pod("default", "second", "zc-3", Some(Some(5))),
    ]);
    let mut run = Running::start_with(plane.kubeconfig(), &["-l", "topology.kubernetes.io/zone=zc"]);
    let added = add_taint(&plane, "zc-3");
    for name in ["first", "second"] {
        run.expect("scheduled", |l| l["type"] == "scheduled" && l["pod"]["name"] == name);
    }
    plane.kubectl_ok(&["label", "node", "zc-3", "--overwrite", "topology.kubernetes.io/zone=zx"], None);
    for name in ["first", "second"] {
        run.expect("cancelled", |l| l["type"] == "cancelled" && l["pod"]["name"] == name);
    }
    // The deadline (taint + 5 s) passed by 2 s: a deletion would have been said by now.
    wait_until(added + 7 * SECOND);
    for name in ["first", "second"] {
        let pod = server_pod(&plane, "default", name).expect("still there");
        assert!(pod["metadata"]["deletionTimestamp"].is_null(), "{name} is not terminating: {pod}");
    }
    let (summary, code, lines) = run.interrupt_and_read();
    assert_eq!(code, 0);
    assert_eq!(deletions(&lines, "first") + deletions(&lines, "second"), 0, "{summary}");
    assert_eq!(summary["deleted"], 0, "{summary}");
}

#[test]
fn real_apiserver_run_counts_a_pod_already_terminating_apart_from_the_deletions_due_at_start() {
    // n1 tainted an hour ago, with no kubelet: `stuck`, deleted already, stays terminating; `due`
    // was not deleted. Both are overdue when `run` starts.
    let plane = control_plane!("run-terminating");
    let an_hour_ago = jiff::Timestamp::now() - jiff::SignedDuration::from_secs(3600);
    plane.create(&[
        node("n1", &[], &[taint(an_hour_ago)]),
        pod("default", "stuck", "n1", None),
        pod("default", "due", "n1", None),
    ]);
    plane.kubectl_ok(&["delete", "pod", "-n", "default", "stuck", "--wait=false"], None);
    let stuck = plane.get(&["pod", "-n", "default", "stuck"]);
    assert!(stuck["metadata"]["deletionTimestamp"].is_string(), "terminating: {stuck}");
    let mut run = Running::launch_with(plane.kubeconfig(), &["-o", "json", "--dry-run"]);
    let synced = run.expect("the initial sync", |l| l["type"] == "synced");
    assert_eq!((synced["terminating"].as_u64(), synced["due"].as_u64()), (Some(1), Some(1)), "{synced}");
    let (_, code) = run.interrupt();
    assert_eq!(code, 0);
}
