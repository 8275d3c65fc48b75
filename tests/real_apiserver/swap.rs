//! A node not ready, then silent: the node lifecycle controller taints it `not-ready`, then swaps
//! that taint for `unreachable` (a new `timeAdded`), and the taint-eviction controller keeps the
//! countdown it began with the first. `plan` and `explain`, asked after the swap, read the node's
//! `NodeNotReady` event and give the deletion of the first countdown.

use std::time::Duration;

use serde_json::{Value, json};

use super::node_back::wait;
use super::{Options, node};
use crate::support::running::Running;
use crate::util::{command, instant, run_command};

/// n1's NoExecute taint with `key`, when it carries one: its `timeAdded`.
fn tainted(plane: &super::ControlPlane, key: &str) -> Option<String> {
    let node = plane.get(&["node", "n1"]);
    let taints = node["spec"]["taints"].as_array().cloned().unwrap_or_default();
    let taint = taints.iter().find(|t| t["key"] == key && t["effect"] == "NoExecute")?;
    Some(taint["timeAdded"].as_str().unwrap_or_default().to_owned())
}

/// When `node`'s `Ready` condition last changed, when it is not `True`.
fn ready_changed(plane: &super::ControlPlane, node: &str) -> Option<i128> {
    let node = plane.get(&["node", node]);
    let conditions = node["status"]["conditions"].as_array().cloned().unwrap_or_default();
    let ready = conditions.iter().find(|c| c["type"] == "Ready" && c["status"] != "True")?;
    Some(instant(ready["lastTransitionTime"].as_str()?))
}

#[test]
fn real_apiserver_a_swapped_taint_keeps_the_first_countdown() {
    let options = Options {
        controller_manager: true,
        controller_manager_args: vec!["--node-monitor-period=2s".into(), "--node-monitor-grace-period=10s".into()],
        ..Options::default()
    };
    let Some(mut plane) = super::ControlPlane::start("swap", &options) else { return };
    let zone = [("topology.kubernetes.io/region", "r"), ("topology.kubernetes.io/zone", "z")];
    let tolerating =
        |key: &str| json!({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 40});
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "t40", "namespace": "default"},
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "app"}],
                 "tolerations": [tolerating("node.kubernetes.io/not-ready"), tolerating("node.kubernetes.io/unreachable")]}});
    plane.create(&[node("n1", &zone, &[]), node("n2", &zone, &[]), node("n3", &zone, &[]), pod]);
    let kubelet = plane.keep_healthy(&["n1"]);
    let _others = plane.keep_healthy(&["n2", "n3"]);
    wait("the controller synced and n1 renewed", Duration::from_secs(60), || {
        let lease = plane.kubectl(&["get", "lease", "-n", "kube-node-lease", "n1", "-o", "name"], None);
        plane.log("kube-controller-manager").contains("Caches are synced") && lease.status.success()
    });

    // n1's kubelet posts Ready=False, and records the event a kubelet records then.
    let now = jiff::Timestamp::now().round(jiff::Unit::Second).expect("round").to_string();
    let status = json!({"status": {"conditions": [{"type": "Ready", "status": "False", "reason": "KubeletNotReady",
        "message": "container runtime is down", "lastHeartbeatTime": now, "lastTransitionTime": now}]}});
    plane.kubectl_ok(
        &["patch", "node", "n1", "--subresource=status", "--type=strategic", "-p", &status.to_string()],
        None,
    );
    let event = json!({"apiVersion": "v1", "kind": "Event",
        "metadata": {"name": "n1.not-ready", "namespace": "default"},
        "involvedObject": {"kind": "Node", "name": "n1", "uid": "n1"},
        "reason": "NodeNotReady", "message": "Node n1 status is now: NodeNotReady", "type": "Normal",
        "source": {"component": "kubelet", "host": "n1"}, "count": 1, "firstTimestamp": now, "lastTimestamp": now});
    plane.create(&[event]);
    wait("n1 tainted not-ready", Duration::from_secs(30), || tainted(&plane, "node.kubernetes.io/not-ready").is_some());

    // Then it falls silent: the controller swaps the taint for `unreachable`.
    kubelet.stop();
    wait("the taint swapped", Duration::from_secs(60), || tainted(&plane, "node.kubernetes.io/unreachable").is_some());
    let swapped = instant(&tainted(&plane, "node.kubernetes.io/unreachable").expect("timeAdded"));

    let mut plan = command();
    plan.args(["plan", "n1", "-o", "json", "--node-monitor-period=2s", "--node-monitor-grace-period=10s"])
        .arg("--kubeconfig")
        .arg(plane.kubeconfig());
    let result = run_command(&mut plan, None);
    assert_eq!(result.code, 0, "{}", result.stderr);
    let plan: Value = serde_json::from_str(&result.stdout).expect("JSON");
    let pod = &plan["nodes"][0]["pods"][0];
    assert_eq!(pod["basis"], "node-not-ready", "{plan:#}");
    let (earliest, latest) = (
        instant(pod["evictAt"].as_str().expect("evictAt")),
        instant(pod["evictAtLatest"].as_str().expect("evictAtLatest")),
    );
    // The first countdown began after the event and before the swap, made when the controller marked
    // n1's `Ready` `Unknown`: the window runs from one to the other.
    let changed = ready_changed(&plane, "n1").expect("n1 not ready");
    assert!(earliest < changed + 40_000_000_000 - 5_000_000_000, "the first countdown's: {plan:#}");
    assert!(latest <= changed + 41_000_000_000, "ends with the swap's: {plan:#}");

    let mut explain = command();
    explain.args(["explain", "t40", "--node-monitor-period=2s", "--kubeconfig"]).arg(plane.kubeconfig());
    let explained = run_command(&mut explain, None);
    assert_eq!(explained.code, 0, "{}", explained.stderr);
    assert!(explained.stdout.contains("swapped its first not-ready or unreachable taint"), "{}", explained.stdout);

    // A dry `run` started now takes the countdown over from the first taint too.
    let mut run = Running::start_with(plane.kubeconfig(), &["--dry-run", "--node-monitor-period=2s"]);
    // And so does `plan -w`.
    let mut watching = Running::spawn(
        command().args(["plan", "-w", "n1", "--node-monitor-period=2s", "--kubeconfig"]).arg(plane.kubeconfig()),
    );

    wait("the controller deletes t40", Duration::from_secs(60), || plane.controller_deletions().contains_key("t40"));
    let deleted = plane.controller_deletions()["t40"][0];
    eprintln!(
        "deleted {:.3} s after the swap; predicted {:.3}..{:.3} s",
        (deleted - swapped) as f64 / 1e9,
        (earliest - swapped) as f64 / 1e9,
        (latest - swapped) as f64 / 1e9
    );
    let slack = 1_000_000_000;
    assert!(
        earliest - slack <= deleted && deleted <= latest + slack,
        "deleted at {deleted}, predicted {earliest}..{latest}"
    );
    // Its deadline is the window's end: an enforcer never deletes before the controller would have
    // (here the controller, enforcing too, deletes first).
    let due = run.expect("run's countdown", |l| l["type"] == "scheduled" && l["pod"]["name"] == "t40");
    let due = instant(due["evictAt"].as_str().expect("evictAt"));
    eprintln!("run's deadline {:+.3} s from the controller's deletion", (due - deleted) as f64 / 1e9);
    assert!(due >= deleted - slack && due <= latest + slack, "run {due}, the controller {deleted}");
    let watched = watching.expect("plan -w's countdown", |l| l["type"] == "scheduled" && l["pod"]["name"] == "t40");
    let watched = instant(watched["evictAt"].as_str().expect("evictAt"));
    assert_eq!(watched, due, "plan -w and run keep one deadline");
}

#[test]
fn real_apiserver_a_taint_its_zone_queue_held_back_is_no_swap() {
    // Two of a zone's four nodes fall silent at once: the controller marks both not ready in one pass
    // (their `NodeNotReady` events), taints one at once and the other when its zone's rate limiter
    // (0.1 per second) lets it, about 10 s later. Before, the later taint was taken for a swap: its
    // pods' deadlines counted from the event, seconds before the controller's.
    let options = Options {
        controller_manager: true,
        controller_manager_args: vec![
            "--node-monitor-period=2s".into(),
            "--node-monitor-grace-period=10s".into(),
            "--node-eviction-rate=0.1".into(),
        ],
        ..Options::default()
    };
    let Some(mut plane) = super::ControlPlane::start("queued-taint", &options) else { return };
    let zone = [("topology.kubernetes.io/region", "r"), ("topology.kubernetes.io/zone", "zb")];
    let tolerating =
        |key: &str| json!({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30});
    let pod = |name: &str, node: &str| {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "app"}],
                     "tolerations": [tolerating("node.kubernetes.io/not-ready"), tolerating("node.kubernetes.io/unreachable")]}})
    };
    plane.create(&[
        node("zb-1", &zone, &[]),
        node("zb-2", &zone, &[]),
        node("zb-3", &zone, &[]),
        node("zb-4", &zone, &[]),
        pod("p1", "zb-1"),
        pod("p2", "zb-2"),
    ]);
    let down = plane.keep_healthy(&["zb-1", "zb-2"]);
    let _others = plane.keep_healthy(&["zb-3", "zb-4"]);
    wait("the controller synced and the nodes renewed", Duration::from_secs(60), || {
        let lease = plane.kubectl(&["get", "lease", "-n", "kube-node-lease", "zb-2", "-o", "name"], None);
        plane.log("kube-controller-manager").contains("Caches are synced") && lease.status.success()
    });

    down.stop();
    let unreachable = |node: &str| {
        let taints = plane.get(&["node", node])["spec"]["taints"].as_array().cloned().unwrap_or_default();
        let taint =
            taints.iter().find(|t| t["key"] == "node.kubernetes.io/unreachable" && t["effect"] == "NoExecute")?;
        Some(instant(taint["timeAdded"].as_str()?))
    };
    wait("both tainted", Duration::from_secs(90), || unreachable("zb-1").is_some() && unreachable("zb-2").is_some());
    let (first, second) = (unreachable("zb-1").expect("zb-1"), unreachable("zb-2").expect("zb-2"));
    let (late, pod_name, added) = if first < second { ("zb-2", "p2", second) } else { ("zb-1", "p1", first) };
    let changed = ready_changed(&plane, late).expect("not ready");
    eprintln!("{late}: not ready at {changed}, tainted {:.1} s later", (added - changed) as f64 / 1e9);
    assert!(added - changed > 4_000_000_000, "the zone's queue held the second taint back");

    // `plan`, asked now, counts from the taint: no swap happened.
    let mut plan = command();
    plan.args(["plan", late, "-o", "json", "--node-monitor-period=2s", "--node-monitor-grace-period=10s"])
        .arg("--kubeconfig")
        .arg(plane.kubeconfig());
    let result = run_command(&mut plan, None);
    assert_eq!(result.code, 0, "{}", result.stderr);
    let plan: Value = serde_json::from_str(&result.stdout).expect("JSON");
    let planned = &plan["nodes"][0]["pods"][0];
    assert_eq!(planned["basis"], "taint-time-added", "{plan:#}");
    let evict_at = instant(planned["evictAt"].as_str().expect("evictAt"));
    assert_eq!(evict_at, added + 30_000_000_000, "{plan:#}");

    // A dry `run` started now keeps that deadline, and the controller deletes then.
    let mut run = Running::start_with(plane.kubeconfig(), &["--dry-run", "--node-monitor-period=2s", late]);
    let due = run.expect("run's countdown", |l| l["type"] == "scheduled" && l["pod"]["name"] == pod_name);
    let due = instant(due["evictAt"].as_str().expect("evictAt"));
    wait("the controller deletes the pod", Duration::from_secs(60), || {
        plane.controller_deletions().contains_key(pod_name)
    });
    let deleted = plane.controller_deletions()[pod_name][0];
    eprintln!("run's deadline {:+.3} s from the controller's deletion", (due - deleted) as f64 / 1e9);
    assert!(due >= deleted - 1_000_000_000 && due <= deleted + 1_000_000_000, "run {due}, the controller {deleted}");
}
