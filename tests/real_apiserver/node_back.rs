//! A node that comes back while it still carries the node lifecycle controller's `unreachable` taint:
//! the controller removes the taint at its next pass and deletes nothing. `plan` and `plan -w`, in
//! between (the controller stopped, so that the moment lasts), say so: its pods are not due. `run`,
//! the only enforcer, deletes what falls due while the taint is on, as upstream does, and nothing
//! once it is gone.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::lifecycle::unreachable_pod;
use super::{Options, node};
use crate::support::running::Running;
use crate::util::{command, instant, run_command};
use taint_evict_test_support::control_plane::Heartbeats;

pub(super) fn unreachable(plane: &super::ControlPlane) -> bool {
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

/// The controller's flags in these tests, which `plan` and `run` are told too.
pub const MONITOR: [&str; 2] = ["--node-monitor-period=2s", "--node-monitor-grace-period=10s"];

/// A control plane (the controller manager with a 2 s monitor period and a 10 s grace period, and
/// `controllers` when given) of three nodes of one zone and `pods` on n1, all heartbeating: returns
/// once the controller has synced and n1 renewed, with n1's heartbeats and the two others'.
pub(super) fn three_nodes(
    name: &str,
    pods: Vec<Value>,
    controllers: Option<&str>,
) -> Option<(super::ControlPlane, Heartbeats, Heartbeats)> {
    let mut args: Vec<String> = MONITOR.iter().map(|&arg| arg.to_owned()).collect();
    args.extend(controllers.map(|list| format!("--controllers={list}")));
    let options = Options { controller_manager: true, controller_manager_args: args, ..Options::default() };
    let mut plane = super::ControlPlane::start(name, &options)?;
    let zone = [("topology.kubernetes.io/region", "r"), ("topology.kubernetes.io/zone", "z")];
    let mut objects = vec![node("n1", &zone, &[]), node("n2", &zone, &[]), node("n3", &zone, &[])];
    objects.extend(pods);
    plane.create(&objects);
    let n1 = plane.keep_healthy(&["n1"]);
    let others = plane.keep_healthy(&["n2", "n3"]);
    wait("the controller synced and n1 renewed", Duration::from_secs(60), || {
        plane.log("kube-controller-manager").contains("Caches are synced") && renewed(&plane).is_some()
    });
    Some((plane, n1, others))
}

/// [`three_nodes`], then n1's kubelet stops: returns once the controller has tainted n1
/// `unreachable`, with the other two kept renewing.
fn n1_tainted_silent(name: &str, pods: Vec<Value>) -> Option<(super::ControlPlane, Heartbeats)> {
    let (plane, lost, others) = three_nodes(name, pods, None)?;
    lost.stop();
    wait("n1 tainted unreachable", Duration::from_secs(60), || unreachable(&plane));
    Some((plane, others))
}

/// n1's kubelet is back: it posts `Ready=True` and renews its Lease again (kept renewing while the
/// returned heartbeats live); returns once the Lease shows a renewal after the post.
fn n1_comes_back(plane: &mut super::ControlPlane) -> Heartbeats {
    let now = jiff::Timestamp::now().round(jiff::Unit::Second).expect("round").to_string();
    let status = json!({"status": {"conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
        "message": "kubelet is posting ready status", "lastHeartbeatTime": now, "lastTransitionTime": now}]}});
    plane.kubectl_ok(
        &["patch", "node", "n1", "--subresource=status", "--type=strategic", "-p", &status.to_string()],
        None,
    );
    let back = plane.keep_healthy(&["n1"]);
    wait("n1's Lease renewed", Duration::from_secs(10), || {
        renewed(plane).is_some_and(|t| crate::util::instant(&t) > crate::util::instant(&now))
    });
    back
}

/// n1's Lease renewal, once it has one.
fn renewed(plane: &super::ControlPlane) -> Option<String> {
    let output = plane.kubectl(&["get", "lease", "-n", "kube-node-lease", "n1", "-o", "json"], None);
    let lease: Value = serde_json::from_slice(&output.stdout).ok()?;
    lease["spec"]["renewTime"].as_str().map(str::to_owned)
}

#[test]
fn real_apiserver_a_node_back_while_tainted_has_no_pod_due() {
    let pods = vec![unreachable_pod("t300", "n1", 300), unreachable_pod("gone", "n1", 300)];
    let Some((mut plane, _others)) = n1_tainted_silent("node-back", pods) else {
        return;
    };
    // `gone` was deleted by someone: without a kubelet it stays terminating.
    plane.kubectl_ok(&["delete", "pod", "-n", "default", "gone", "--wait=false"], None);
    let mut watching =
        Running::spawn(command().args(["plan", "-w", "n1"]).args(MONITOR).arg("--kubeconfig").arg(plane.kubeconfig()));
    watching.expect("plan -w's countdown of t300", |l| l["type"] == "scheduled" && l["pod"]["name"] == "t300");

    // n1 comes back; the controller is held still meanwhile, so that the taint stays for `plan`
    // and `plan -w` to see.
    plane.stop_controller_manager();
    let _back = n1_comes_back(&mut plane);
    assert!(unreachable(&plane), "still tainted");
    let mut plan = command();
    plan.args(["plan", "n1", "-o", "json"]).args(MONITOR).arg("--kubeconfig").arg(plane.kubeconfig());
    let result = run_command(&mut plan, None);
    assert_eq!(result.code, 0, "{}", result.stderr);
    let plan: Value = serde_json::from_str(&result.stdout).expect("JSON");
    let node = &plan["nodes"][0];
    let pod = |name: &str| node["pods"].as_array().into_iter().flatten().find(|p| p["name"] == name).cloned();
    let t300 = pod("t300").expect("t300 in the plan");
    assert_eq!(t300["verdict"], "unaffected", "{plan:#}");
    assert_eq!(node["held"]["reason"], "recovered", "{plan:#}");
    let gone = pod("gone").expect("gone in the plan");
    assert_eq!(gone["terminating"], true, "{plan:#}");
    assert_ne!(gone["verdict"], "unaffected", "a terminating pod is shown terminating: {plan:#}");
    // `plan -w` says the same of the node: back, its taint removed at the next pass.
    let foreseen =
        watching.expect("plan -w: n1 back", |l| l["type"] == "foreseen" && l["node"] == "n1" && !l["held"].is_null());
    assert_eq!(foreseen["held"]["reason"], "recovered", "{foreseen}");

    // The controller, back, removes the taint at its first pass and deletes nothing; `plan -w`
    // cancels t300's countdown with it.
    plane.start_controller_manager_again();
    wait("the taint removed", Duration::from_secs(30), || !unreachable(&plane));
    watching.expect("plan -w: n1 untainted", |l| {
        l["type"] == "taints" && l["node"] == "n1" && l["taints"].as_array().is_some_and(Vec::is_empty)
    });
    watching.expect("plan -w: t300's countdown cancelled", |l| l["type"] == "cancelled" && l["pod"]["name"] == "t300");
    let pod = plane.get(&["pod", "-n", "default", "t300"]);
    assert!(pod["metadata"]["deletionTimestamp"].is_null(), "{pod}");
    assert!(!plane.controller_deletions().contains_key("t300"));
    // Nothing was ever said due or done, nor followed of the terminating pod.
    let said = |l: &&Value| {
        matches!(l["type"].as_str(), Some("due" | "done"))
            || (l["pod"]["name"] == "gone" && matches!(l["type"].as_str(), Some("scheduled" | "due" | "cancelled")))
    };
    let wrong: Vec<&Value> = watching.seen.iter().filter(said).collect();
    assert!(wrong.is_empty(), "{wrong:#?}");
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
    let Some((plane, _others)) = n1_tainted_silent("untaint-silent", vec![unreachable_pod("t60", "n1", 60)]) else {
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

/// Now, in nanoseconds since the epoch.
fn now() -> i128 {
    jiff::Timestamp::now().as_nanosecond()
}

const SECOND: i128 = 1_000_000_000;

#[test]
fn real_apiserver_run_alone_deletes_on_time_while_tainted_and_nothing_once_the_node_is_back() {
    // The node lifecycle controller alone: `run` is the only one to delete.
    let pods = vec![unreachable_pod("t3", "n1", 3), unreachable_pod("t16", "n1", 16)];
    let Some((mut plane, lost, _others)) = three_nodes("node-back-run", pods, Some("node-lifecycle-controller")) else {
        return;
    };
    let mut run = Running::start_with(plane.kubeconfig(), &MONITOR);
    lost.stop();
    wait("n1 tainted unreachable", Duration::from_secs(60), || unreachable(&plane));
    // `timeAdded` is whole seconds: the taint went on in [added, added + 1 s).
    let added = unreachable_added(&plane).expect("timeAdded");

    // t3 falls due while n1 is still silent: `run` deletes it at its deadline.
    let t3 = run.expect("t3 deleted", |l| super::run::deleted(l, "t3"));
    let at = instant(t3["time"].as_str().expect("time"));
    eprintln!("t3 deleted {:.3} s after the taint's timeAdded (due 3..4 s)", (at - added) as f64 / 1e9);
    assert!(added + 2 * SECOND <= at && at <= added + 5 * SECOND, "t3 deleted at {at}, the taint added at {added}");

    // n1 comes back; the controller removes the taint at its next pass, before t16 is due.
    let back = now();
    let _back = n1_comes_back(&mut plane);
    wait("the taint removed", Duration::from_secs(10), || !unreachable(&plane));
    let removed = now();
    eprintln!(
        "n1 back {:.3} s after the taint's timeAdded, the taint removed {:.3} s later; t16 due at 16..17 s",
        (back - added) as f64 / 1e9,
        (removed - back) as f64 / 1e9
    );
    assert!(removed < added + 15 * SECOND, "the taint removed too late for this test: {removed}, added {added}");
    run.expect("t16's countdown cancelled", |l| l["type"] == "cancelled" && l["pod"]["name"] == "t16");

    // Past t16's deadline, it is still there: nothing deleted it.
    wait("t16's deadline passed", Duration::from_secs(30), || now() > added + 18 * SECOND);
    let t16 = super::run::server_pod(&plane, "default", "t16").expect("t16 exists");
    assert!(t16["metadata"]["deletionTimestamp"].is_null(), "{t16}");
    let (summary, code, lines) = run.interrupt_and_read();
    assert_eq!(code, 0);
    assert_eq!(super::run::deletions(&lines, "t16"), 0, "{lines:#?}");
    assert_eq!(summary["deleted"], 1, "{summary}");
}

#[test]
fn real_apiserver_run_alone_deletes_a_pod_due_while_a_node_back_still_carries_the_taint() {
    // As upstream's taint-eviction controller: the taint is what counts, not the node's health.
    let pods = vec![unreachable_pod("t10", "n1", 10)];
    let Some((mut plane, lost, _others)) = three_nodes("node-back-gap", pods, Some("node-lifecycle-controller")) else {
        return;
    };
    let mut run = Running::start_with(plane.kubeconfig(), &MONITOR);
    lost.stop();
    wait("n1 tainted unreachable", Duration::from_secs(60), || unreachable(&plane));
    let added = unreachable_added(&plane).expect("timeAdded");

    // n1 comes back while the controller is held still: the taint stays past t10's deadline.
    plane.stop_controller_manager();
    let _back = n1_comes_back(&mut plane);
    let back = now();
    assert!(back < added + 10 * SECOND, "n1 back too late for this test: {back}, the taint added at {added}");
    let t10 = run.expect("t10 deleted", |l| super::run::deleted(l, "t10"));
    let at = instant(t10["time"].as_str().expect("time"));
    eprintln!(
        "n1 back {:.3} s after the taint's timeAdded; t10 deleted {:.3} s after it (due 10..11 s)",
        (back - added) as f64 / 1e9,
        (at - added) as f64 / 1e9
    );
    assert!(added + 9 * SECOND <= at && at <= added + 12 * SECOND, "t10 deleted at {at}, the taint added at {added}");
    assert!(unreachable(&plane), "deleted while the node, back, still carried the taint");
}

#[test]
fn real_apiserver_a_node_going_down_keeps_the_countdown_a_taint_runs_there() {
    // g on n1 tolerates the test taint 40 s and `unreachable` 5 s. The taint goes on; `plan --down n1`
    // is asked; then n1's kubelet stops, and the controller, adding `unreachable`, keeps the countdown
    // the taint began: it deletes g 40 s after the taint. Before, `plan --down` said 5 s after the
    // predicted `unreachable` taint, about 20 s early.
    let tolerating = |key: &str, seconds: i64| json!({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": seconds});
    let g = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "g", "namespace": "default"},
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "app"}],
                 "tolerations": [tolerating(super::TAINT, 40), tolerating("node.kubernetes.io/unreachable", 5)]}});
    let Some((plane, lost, _others)) = three_nodes("down-running", vec![g], None) else { return };
    super::run::add_taint(&plane, "n1");
    let taints = plane.get(&["node", "n1"])["spec"]["taints"].clone();
    let added = instant(taints[0]["timeAdded"].as_str().expect("timeAdded"));

    let mut plan = command();
    plan.args(["plan", "--down", "n1", "-o", "json"]).args(MONITOR).arg("--kubeconfig").arg(plane.kubeconfig());
    let result = run_command(&mut plan, None);
    assert_eq!(result.code, 0, "{}", result.stderr);
    let plan: Value = serde_json::from_str(&result.stdout).expect("JSON");
    let pod = &plan["nodes"][0]["pods"][0];
    // The taint's countdown (or the pod's binding, when it came in the same second), not the
    // predicted taint's.
    assert_ne!(pod["basis"], "predicted-taint", "{plan:#}");
    // 40 s from the taint: its `timeAdded` (whole seconds, rounded, so it may be a little ahead of a
    // plan asked at once, which then counts from its own now).
    let evict_at = instant(pod["evictAt"].as_str().expect("evictAt"));
    assert!((evict_at - (added + 40_000_000_000)).abs() < 1_000_000_000, "{plan:#}");

    lost.stop();
    wait("n1 tainted unreachable", Duration::from_secs(60), || unreachable(&plane));
    wait("the controller deletes g", Duration::from_secs(60), || plane.controller_deletions().contains_key("g"));
    let deleted = plane.controller_deletions()["g"][0];
    eprintln!("deleted {:+.3} s from plan --down's deadline", (deleted - evict_at) as f64 / 1e9);
    assert!((deleted - evict_at).abs() < 1_500_000_000, "deleted at {deleted}, planned {evict_at}");
}
