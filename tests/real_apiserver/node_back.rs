//! A node that comes back while it still carries the node lifecycle controller's `unreachable` taint:
//! the controller removes the taint at its next pass and deletes nothing. `plan`, asked in between
//! (the controller stopped, so that the moment lasts), says so: its pods are not due.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::lifecycle::unreachable_pod;
use super::{Options, node};
use crate::support::control_plane::Heartbeats;
use crate::util::{command, run_command};

fn unreachable(plane: &super::ControlPlane) -> bool {
    let node = plane.get(&["node", "n1"]);
    let taints = node["spec"]["taints"].as_array().into_iter().flatten();
    taints.into_iter().any(|t| t["key"] == "node.kubernetes.io/unreachable" && t["effect"] == "NoExecute")
}

/// Waits, polling with a deadline, until `condition` holds.
pub(super) fn wait(what: &str, within: Duration, condition: impl Fn() -> bool) {
    let deadline = Instant::now() + within;
    while !condition() {
        assert!(Instant::now() < deadline, "{what}: not within {within:?}");
        std::thread::park_timeout(Duration::from_millis(100));
    }
}

/// A control plane (the controller manager with a 2 s monitor period and a 10 s grace period) of
/// three nodes of one zone and `pod` on n1, whose kubelet then stops: returns once the controller has
/// tainted n1 `unreachable`, with the other two kept renewing.
fn n1_tainted_silent(name: &str, pod: Value) -> Option<(super::ControlPlane, Heartbeats)> {
    let options = Options {
        controller_manager: true,
        controller_manager_args: vec!["--node-monitor-period=2s".into(), "--node-monitor-grace-period=10s".into()],
        ..Options::default()
    };
    let mut plane = super::ControlPlane::start(name, &options)?;
    let zone = [("topology.kubernetes.io/region", "r"), ("topology.kubernetes.io/zone", "z")];
    plane.create(&[node("n1", &zone, &[]), node("n2", &zone, &[]), node("n3", &zone, &[]), pod]);
    let lost = plane.keep_healthy(&["n1"]);
    let others = plane.keep_healthy(&["n2", "n3"]);
    wait("the controller synced and n1 renewed", Duration::from_secs(60), || {
        plane.log("kube-controller-manager").contains("Caches are synced") && renewed(&plane).is_some()
    });
    lost.stop();
    wait("n1 tainted unreachable", Duration::from_secs(60), || unreachable(&plane));
    Some((plane, others))
}

/// n1's Lease renewal, once it has one.
fn renewed(plane: &super::ControlPlane) -> Option<String> {
    let output = plane.kubectl(&["get", "lease", "-n", "kube-node-lease", "n1", "-o", "json"], None);
    let lease: Value = serde_json::from_slice(&output.stdout).ok()?;
    lease["spec"]["renewTime"].as_str().map(str::to_owned)
}

#[test]
fn real_apiserver_a_node_back_while_tainted_has_no_pod_due() {
    let Some((mut plane, _others)) = n1_tainted_silent("node-back", unreachable_pod("t300", "n1", 300)) else {
        return;
    };

    // n1 comes back: its kubelet posts Ready=True and renews its Lease; the controller is held still
    // meanwhile, so that the taint stays for `plan` to see.
    plane.stop_controller_manager();
    let now = jiff::Timestamp::now().round(jiff::Unit::Second).expect("round").to_string();
    let status = json!({"status": {"conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
        "message": "kubelet is posting ready status", "lastHeartbeatTime": now, "lastTransitionTime": now}]}});
    plane.kubectl_ok(
        &["patch", "node", "n1", "--subresource=status", "--type=strategic", "-p", &status.to_string()],
        None,
    );
    let _back = plane.keep_healthy(&["n1"]);
    wait("n1's Lease renewed", Duration::from_secs(10), || {
        renewed(&plane).is_some_and(|t| crate::util::instant(&t) > crate::util::instant(&now))
    });
    assert!(unreachable(&plane), "still tainted");
    let mut plan = command();
    plan.args(["plan", "n1", "-o", "json", "--node-monitor-period=2s", "--node-monitor-grace-period=10s"])
        .arg("--kubeconfig")
        .arg(plane.kubeconfig());
    let result = run_command(&mut plan, None);
    assert_eq!(result.code, 0, "{}", result.stderr);
    let plan: Value = serde_json::from_str(&result.stdout).expect("JSON");
    let node = &plan["nodes"][0];
    let pod = &node["pods"][0];
    assert_eq!(pod["verdict"], "unaffected", "{plan:#}");
    assert_eq!(node["held"]["reason"], "recovered", "{plan:#}");

    // The controller, back, removes the taint at its first pass and deletes nothing.
    plane.start_controller_manager_again();
    wait("the taint removed", Duration::from_secs(30), || !unreachable(&plane));
    let pod = plane.get(&["pod", "-n", "default", "t300"]);
    assert!(pod["metadata"]["deletionTimestamp"].is_null(), "{pod}");
    assert!(!plane.controller_deletions().contains_key("t300"));
}

/// The `timeAdded` of n1's `unreachable` NoExecute taint, when it has one.
fn unreachable_added(plane: &super::ControlPlane) -> Option<i128> {
    let node = plane.get(&["node", "n1"]);
    let taints = node["spec"]["taints"].as_array().cloned().unwrap_or_default();
    let taint = taints.iter().find(|t| t["key"] == "node.kubernetes.io/unreachable" && t["effect"] == "NoExecute")?;
    taint["timeAdded"].as_str().map(crate::util::instant)
}

#[test]
fn real_apiserver_removing_the_taint_of_a_node_still_silent_is_predicted_to_be_undone() {
    let Some((plane, _others)) = n1_tainted_silent("untaint-silent", unreachable_pod("t60", "n1", 60)) else {
        return;
    };
    let first = unreachable_added(&plane).expect("timeAdded");

    // What if the taint were removed now? The controller still hears nothing from n1: it puts the
    // taint back, and t60's deletion follows that.
    let mut plan = command();
    plan.args(["plan", "n1", "-o", "json", "--remove-taint", "node.kubernetes.io/unreachable"])
        .args(["--node-monitor-period=2s", "--node-monitor-grace-period=10s", "--kubeconfig"])
        .arg(plane.kubeconfig());
    let result = run_command(&mut plan, None);
    assert_eq!(result.code, 0, "{}", result.stderr);
    let plan: Value = serde_json::from_str(&result.stdout).expect("JSON");
    let predicted = &plan["nodes"][0]["predictedTaint"];
    assert_eq!(predicted["key"], "node.kubernetes.io/unreachable", "{plan:#}");
    let pod = &plan["nodes"][0]["pods"][0];
    assert_eq!(pod["verdict"], "evict-at", "not unaffected: {plan:#}");
    let (earliest, latest) = (
        crate::util::instant(predicted["earliest"].as_str().expect("earliest")),
        crate::util::instant(predicted["latest"].as_str().expect("a bounded window")),
    );

    // And so it does.
    let removed = jiff::Timestamp::now().as_nanosecond();
    plane.kubectl_ok(&["taint", "nodes", "n1", "node.kubernetes.io/unreachable:NoExecute-"], None);
    wait("the taint put back", Duration::from_secs(30), || unreachable_added(&plane).is_some_and(|at| at > first));
    let again = unreachable_added(&plane).expect("timeAdded");
    eprintln!(
        "put back {:.3} s after the removal; predicted {:.3}..{:.3} s after the plan",
        (again - removed) as f64 / 1e9,
        (earliest - removed) as f64 / 1e9,
        (latest - removed) as f64 / 1e9
    );
    // `timeAdded` is whole seconds: the real instant lies in [again, again + 1 s).
    let slack = 1_500_000_000;
    assert!(
        again + 1_000_000_000 >= earliest - slack && again <= latest + slack,
        "put back at {again}, predicted {earliest}..{latest}"
    );
}
