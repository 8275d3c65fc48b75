//! A taint put on with `kubectl taint` (no `timeAdded`): the real taint-eviction controller counts
//! from when its watch saw the taint, which is when it was written. `plan` reads that instant from the
//! node's `managedFields` (docs/upstream.md), so every way of asking, at any time, gives one deadline:
//! the real controller's.

use serde_json::{Value, json};

use super::lifecycle::{clock, wait_until};
use super::side_by_side::{wait_for_controller, wait_for_deletions};
use super::{ControlPlane, Options, TAINT, node, pod};
use crate::control_plane;
use crate::support::running::Running;
use crate::util::{command, instant, run_command};

const SECOND: i128 = 1_000_000_000;

/// `kubectl taint nodes n1 example.com/drain=now:NoExecute`, written early in a second: the
/// `managedFields` time is the write's whole second, so the prediction is then off by the
/// controller's own latency only (any later in the second and it is up to a second early, by design).
/// Returns when it was written.
fn kubectl_taint(plane: &ControlPlane) -> i128 {
    // The moment the taint is written is chosen: 20 ms into the next second, so that its whole second
    // (the `managedFields` time) is after every object made before it.
    let now = clock();
    wait_until(now - now.rem_euclid(SECOND) + SECOND + 20_000_000);
    let before = jiff::Timestamp::now().as_nanosecond();
    plane.kubectl_ok(&["taint", "nodes", "n1", &format!("{TAINT}=now:NoExecute")], None);
    before
}

/// The plan of node n1 (`--now` when given), as JSON.
fn plan(plane: &ControlPlane, now: Option<i128>) -> Value {
    let mut plan = command();
    plan.args(["plan", "n1", "-o", "json"]).arg("--kubeconfig").arg(plane.kubeconfig());
    if let Some(now) = now {
        let now = jiff::Timestamp::from_nanosecond(now).expect("an instant").to_string();
        plan.args(["--now", &now]);
    }
    let result = run_command(&mut plan, None);
    assert_eq!(result.code, 0, "{}", result.stderr);
    serde_json::from_str(&result.stdout).expect("JSON")
}

/// Pod `name`'s deadline in `plan`, and its basis.
fn deadline(plan: &Value, name: &str) -> (i128, String) {
    let pods = plan["nodes"][0]["pods"].as_array().expect("pods");
    let pod = pods.iter().find(|p| p["name"] == name).unwrap_or_else(|| panic!("{name} in {plan:#}"));
    let at = pod["evictAt"].as_str().unwrap_or_else(|| panic!("{name}: no deadline in {plan:#}"));
    (instant(at), pod["basis"].as_str().unwrap_or_default().to_owned())
}

fn cluster(plane: &mut ControlPlane) -> taint_evict_test_support::control_plane::Heartbeats {
    plane.create(&[
        node("n1", &[], &[]),
        pod("default", "untolerated", "n1", None),
        pod("default", "t12", "n1", Some(Some(12))),
        pod("default", "forever", "n1", Some(None)),
    ]);
    plane.keep_healthy(&["n1"])
}

#[test]
fn real_apiserver_a_taint_put_on_by_hand_has_one_deadline_whenever_it_is_asked() {
    let options = Options { controller_manager: true, ..Options::default() };
    let mut plane = control_plane!("kubectl-taint", &options);
    let _heartbeats = cluster(&mut plane);
    wait_for_controller(&plane);
    let written = kubectl_taint(&plane);

    // Asked at once (live), then as if at +8 s and at +18 s (after the deletion: overdue, same instant).
    let live = plan(&plane, None);
    assert_eq!(live["nodes"][0]["taintsWritten"]["manager"], "kubectl-taint", "{live:#}");
    let (at, basis) = deadline(&live, "t12");
    assert_eq!(basis, "taint-written");
    for later in [8, 18] {
        assert_eq!(deadline(&plan(&plane, Some(written + later * SECOND)), "t12").0, at, "asked at +{later} s");
    }
    // `plan -w` started after the taint schedules the same deadline.
    let mut watching = Running::spawn(command().args(["plan", "-w", "n1", "--kubeconfig"]).arg(plane.kubeconfig()));
    let scheduled = watching.expect("t12 scheduled", |l| l["type"] == "scheduled" && l["pod"]["name"] == "t12");
    assert_eq!(instant(scheduled["evictAt"].as_str().expect("evictAt")), at, "{scheduled}");

    let real = wait_for_deletions(&plane, &["untolerated", "t12"]);
    let deleted = real["t12"][0];
    eprintln!("t12: the real controller deleted {:+.3} s from the plan's instant", (deleted - at) as f64 / 1e9);
    assert!((deleted - at).abs() <= SECOND, "plan {at}, the real controller {deleted}");
    assert!(!real.contains_key("forever"), "{real:?}");
    drop(watching);
}

#[test]
fn real_apiserver_run_started_after_a_taint_put_on_by_hand_continues_its_countdown() {
    let mut plane = control_plane!("kubectl-taint-run");
    let _heartbeats = cluster(&mut plane);
    let written = kubectl_taint(&plane);
    let (at, _) = deadline(&plan(&plane, None), "t12");
    assert!((at - (written + 12 * SECOND)).abs() <= SECOND, "written {written}, deadline {at}");

    let mut run = Running::start_with(plane.kubeconfig(), &[]);
    let deleted = run.expect("t12 deleted", |l| l["type"] == "deleted" && l["pod"]["name"] == "t12");
    let when = instant(deleted["time"].as_str().expect("time"));
    eprintln!("t12: run deleted it {:+.3} s from the plan's instant", (when - at) as f64 / 1e9);
    assert!((when - at).abs() <= SECOND, "plan {at}, run {when}");
    let (_, code, lines) = run.interrupt_and_read();
    assert_eq!(code, 0);
    assert!(lines.iter().any(|l| l["type"] == "deleted" && l["pod"]["name"] == "untolerated"), "{lines:#?}");
    assert!(!lines.iter().any(|l| l["pod"]["name"] == "forever" && l["type"] == "deleted"), "{lines:#?}");
}

/// Sets pod `name`'s first toleration's `tolerationSeconds` (the API allows that edit, and only it).
fn edit_toleration(plane: &ControlPlane, name: &str, seconds: i64) {
    // The JSON pointer to the field, built from its segments.
    let path = ["", "spec", "tolerations", "0", "tolerationSeconds"].join("/");
    let patch = format!(r#"[{{"op":"replace","path":"{path}","value":{seconds}}}]"#);
    plane.kubectl_ok(&["patch", "pod", name, "--type=json", "-p", &patch], None);
}

#[test]
fn real_apiserver_a_toleration_edited_mid_countdown_keeps_the_first_countdown() {
    let options = Options { controller_manager: true, ..Options::default() };
    let mut plane = control_plane!("toleration-edit", &options);
    plane.create(&[
        node("n1", &[], &[]),
        pod("default", "raised", "n1", Some(Some(12))),
        pod("default", "lowered", "n1", Some(Some(20))),
        pod("default", "t12", "n1", Some(Some(12))),
    ]);
    let _heartbeats = plane.keep_healthy(&["n1"]);
    wait_for_controller(&plane);
    // `plan -w` and a dry `run` watch it all happen.
    let mut watching = Running::spawn(command().args(["plan", "-w", "n1", "--kubeconfig"]).arg(plane.kubeconfig()));
    let mut run = Running::start_with(plane.kubeconfig(), &["--dry-run"]);
    let written = kubectl_taint(&plane);
    let first = watching.expect("raised scheduled", |l| l["type"] == "scheduled" && l["pod"]["name"] == "raised");
    let first = instant(first["evictAt"].as_str().expect("evictAt"));

    // A second later (the managedFields' whole second after the taint's), one raised, one lowered.
    wait_until(written - written.rem_euclid(SECOND) + SECOND + 100_000_000);
    edit_toleration(&plane, "raised", 3600);
    edit_toleration(&plane, "lowered", 2);

    // A live plan sees the edits, and says the deadline is not known; the untouched pod is as it was.
    let live = plan(&plane, None);
    let pods = live["nodes"][0]["pods"].as_array().expect("pods").clone();
    let pod = |name: &str| pods.iter().find(|p| p["name"] == name).cloned().unwrap_or_default();
    for name in ["raised", "lowered"] {
        assert_eq!(pod(name)["tolerationsEdited"]["manager"], "kubectl-patch", "{name}: {live:#}");
    }
    assert!(pod("t12").get("tolerationsEdited").is_none(), "{live:#}");
    let mut explain = command();
    explain.args(["explain", "raised", "--kubeconfig"]).arg(plane.kubeconfig());
    let explained = run_command(&mut explain, None);
    assert!(explained.stdout.contains("cannot be known from the pod"), "{}", explained.stdout);

    // The real controller keeps each first countdown; so do `plan -w` and `run`, which saw it start.
    let real = wait_for_deletions(&plane, &["raised", "lowered", "t12"]);
    for (name, seconds) in [("raised", 12), ("lowered", 20)] {
        let deleted = real[name][0];
        eprintln!("{name}: deleted {:+.3} s after the taint", (deleted - written) as f64 / 1e9);
        assert!((deleted - (written + seconds * SECOND)).abs() <= SECOND, "{name}: {deleted} vs taint {written}");
        let due = run.expect("run's dry deletion", |l| l["type"] == "wouldDelete" && l["pod"]["name"] == name);
        let due = instant(due["time"].as_str().expect("time"));
        assert!((due - deleted).abs() <= SECOND, "{name}: run {due}, the real controller {deleted}");
    }
    assert!((real["raised"][0] - first).abs() <= SECOND, "plan -w scheduled {first}");
    let (_, code, _) = run.interrupt_and_read();
    assert_eq!(code, 0);
    drop(watching);
}

#[test]
fn real_apiserver_a_replica_sets_pods_edited_mid_countdown_get_the_deadline_of_its_template() {
    let options = Options { controller_manager: true, ..Options::default() };
    let mut plane = control_plane!("toleration-edit-template", &options);
    // A real ReplicaSet with 0 replicas (no ReplicaSet controller runs here: the pods are made by
    // hand, owned by it), its template tolerating the taint for 12 s as its pods do.
    let labels = json!({"app": "test"});
    let tolerations = json!([{"key": TAINT, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 12}]);
    let replica_set = json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"replicas": 0, "selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels},
                 "spec": {"tolerations": tolerations, "containers": [{"name": "c", "image": "app"}]}}}});
    plane.create(&[node("n1", &[], &[]), replica_set]);
    let uid = plane.get(&["replicaset", "web", "-n", "default"])["metadata"]["uid"].as_str().expect("a UID").to_owned();
    let owned = |name: &str| {
        let mut pod = pod("default", name, "n1", Some(Some(12)));
        pod["metadata"]["ownerReferences"] =
            json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": uid, "controller": true}]);
        pod
    };
    plane.create(&[owned("raised"), owned("lowered"), pod("default", "bare", "n1", Some(Some(12)))]);
    let _heartbeats = plane.keep_healthy(&["n1"]);
    wait_for_controller(&plane);
    let written = kubectl_taint(&plane);

    // A second into the countdown, one raised, one lowered; the bare pod lowered too.
    wait_until(written - written.rem_euclid(SECOND) + SECOND + 100_000_000);
    edit_toleration(&plane, "raised", 3600);
    edit_toleration(&plane, "lowered", 2);
    edit_toleration(&plane, "bare", 2);

    // Asked after the edits: the owned pods' deadline is their template's; the bare pod's is unknown.
    let live = plan(&plane, None);
    let pods = live["nodes"][0]["pods"].as_array().expect("pods").clone();
    let pod = |name: &str| pods.iter().find(|p| p["name"] == name).cloned().unwrap_or_default();
    let mut planned = std::collections::BTreeMap::new();
    for name in ["raised", "lowered"] {
        let edited = &pod(name)["tolerationsEdited"];
        assert_eq!(edited["deadlineFrom"], "ownerTemplate", "{name}: {live:#}");
        assert_eq!(edited["owner"], json!({"kind": "ReplicaSet", "name": "web"}), "{name}: {live:#}");
        assert_eq!(pod(name)["tolerationSeconds"], 12, "{name}: {live:#}");
        planned.insert(name, deadline(&live, name).0);
    }
    assert_eq!(pod("bare")["tolerationsEdited"]["unknownBecause"], "noOwner", "{live:#}");
    let mut explain = command();
    explain.args(["explain", "bare", "--kubeconfig"]).arg(plane.kubeconfig());
    let explained = run_command(&mut explain, None);
    assert!(explained.stdout.contains("no owner template"), "{}", explained.stdout);

    // `plan -w` and a dry `run` started after the edits take the countdowns over from the template.
    let mut watching = Running::spawn(command().args(["plan", "-w", "n1", "--kubeconfig"]).arg(plane.kubeconfig()));
    let mut run = Running::start_with(plane.kubeconfig(), &["--dry-run"]);
    let real = wait_for_deletions(&plane, &["raised", "lowered", "bare"]);
    for name in ["raised", "lowered"] {
        let deleted = real[name][0];
        eprintln!(
            "{name}: deleted {:+.3} s after the taint, {:+.3} s from the plan's instant",
            (deleted - written) as f64 / 1e9,
            (deleted - planned[name]) as f64 / 1e9
        );
        assert!(
            (deleted - planned[name]).abs() <= SECOND,
            "{name}: plan {}, the real controller {deleted}",
            planned[name]
        );
        let scheduled = watching.expect("plan -w's deadline", |l| l["type"] == "scheduled" && l["pod"]["name"] == name);
        let scheduled = instant(scheduled["evictAt"].as_str().expect("evictAt"));
        eprintln!("{name}: plan -w scheduled it {:+.3} s from the real deletion", (scheduled - deleted) as f64 / 1e9);
        assert!((scheduled - deleted).abs() <= SECOND, "{name}: plan -w {scheduled}, the real controller {deleted}");
        let due = run.expect("run's dry deletion", |l| l["type"] == "wouldDelete" && l["pod"]["name"] == name);
        let due = instant(due["time"].as_str().expect("time"));
        eprintln!("{name}: run would have deleted it {:+.3} s from the real deletion", (due - deleted) as f64 / 1e9);
        assert!((due - deleted).abs() <= SECOND, "{name}: run {due}, the real controller {deleted}");
    }
    let (_, code, _) = run.interrupt_and_read();
    assert_eq!(code, 0);
    drop(watching);
}

#[test]
fn real_apiserver_a_taint_put_on_by_hand_before_the_node_is_lost_keeps_its_countdown_after_the_controllers_write() {
    // g tolerates the hand-made taint 40 s and `unreachable` 5 s. The hand-made taint goes on, then n1
    // falls silent and the node lifecycle controller adds `unreachable`: its write is now the record
    // of the node's taints. The real controller keeps the countdown the hand-made taint began.
    let tolerations = json!([
        {"key": TAINT, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 40},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5}]);
    let mut g = pod("default", "g", "n1", None);
    g["spec"]["tolerations"] = tolerations;
    let Some((plane, lost, _others)) = super::node_back::three_nodes("taint-rewritten", vec![g], None) else { return };
    wait_for_controller(&plane);
    let written = kubectl_taint(&plane);
    lost.stop();
    super::node_back::wait("n1 tainted unreachable", std::time::Duration::from_secs(60), || {
        super::node_back::unreachable(&plane)
    });

    // Asked now: the record is the controller's write; the hand-made taint was there before it.
    let mut asked = command();
    asked
        .args(["plan", "n1", "-o", "json"])
        .args(super::node_back::MONITOR)
        .arg("--kubeconfig")
        .arg(plane.kubeconfig());
    let result = run_command(&mut asked, None);
    assert_eq!(result.code, 0, "{}", result.stderr);
    let planned: Value = serde_json::from_str(&result.stdout).expect("JSON");
    let pod = planned["nodes"][0]["pods"].as_array().expect("pods").iter().find(|p| p["name"] == "g").cloned();
    let pod = pod.unwrap_or_else(|| panic!("g in {planned:#}"));
    assert_eq!(pod["basis"], "taint-rewritten", "{planned:#}");
    let latest = instant(pod["evictAtLatest"].as_str().expect("evictAtLatest"));
    // A dry `run` started now takes the countdown over: it acts at the window's end.
    let mut args = vec!["--dry-run"];
    args.extend(super::node_back::MONITOR);
    let mut run = Running::start_with(plane.kubeconfig(), &args);
    let scheduled = run.expect("g scheduled", |l| l["type"] == "scheduled" && l["pod"]["name"] == "g");
    let due = instant(scheduled["evictAt"].as_str().expect("evictAt"));

    let deleted = wait_for_deletions(&plane, &["g"])["g"][0];
    eprintln!(
        "the real controller deleted g {:.3} s after the hand-made taint; plan's latest {:+.3} s, run's {:+.3} s from it",
        (deleted - written) as f64 / 1e9,
        (latest - deleted) as f64 / 1e9,
        (due - deleted) as f64 / 1e9
    );
    assert!(deleted > written + 39 * SECOND, "the real controller kept the 40 s countdown: {deleted} {written}");
    // Never early; late by at most how long the taint was on before the controller's write.
    for (what, at) in [("plan's latest", latest), ("run's deadline", due)] {
        assert!(at >= deleted - SECOND, "{what} {at} is before the real deletion {deleted}");
        assert!(at <= deleted + 30 * SECOND, "{what} {at}, the real deletion {deleted}");
    }
}

#[test]
fn real_apiserver_an_unrelated_write_of_the_node_s_taints_makes_a_hand_made_taint_s_deadline_a_window() {
    // The hand-made NoExecute taint, then 4 s later another taint by hand (NoSchedule): the record is
    // now the second write. The real controller counts t12 from the first.
    let options = Options { controller_manager: true, ..Options::default() };
    let mut plane = control_plane!("kubectl-taint-rewritten", &options);
    let _heartbeats = cluster(&mut plane);
    wait_for_controller(&plane);
    let written = kubectl_taint(&plane);
    wait_until(written + 4 * SECOND);
    plane.kubectl_ok(&["taint", "nodes", "n1", "other=y:NoSchedule"], None);

    let planned = plan(&plane, None);
    let pods = planned["nodes"][0]["pods"].as_array().expect("pods");
    let t12 = pods.iter().find(|p| p["name"] == "t12").expect("t12");
    assert_eq!(t12["basis"], "taint-rewritten", "{planned:#}");
    let (earliest, latest) = (
        instant(t12["evictAt"].as_str().expect("evictAt")),
        instant(t12["evictAtLatest"].as_str().expect("evictAtLatest")),
    );
    // A dry `run` started now acts at the window's end.
    let mut run = Running::start_with(plane.kubeconfig(), &["--dry-run"]);
    let scheduled = run.expect("t12 scheduled", |l| l["type"] == "scheduled" && l["pod"]["name"] == "t12");
    let due = instant(scheduled["evictAt"].as_str().expect("evictAt"));
    let deleted = wait_for_deletions(&plane, &["t12"])["t12"][0];
    eprintln!(
        "t12: the real controller deleted it {:.3} s after the first write; the window {:+.3}..{:+.3} s, run {:+.3} s",
        (deleted - written) as f64 / 1e9,
        (earliest - deleted) as f64 / 1e9,
        (latest - deleted) as f64 / 1e9,
        (due - deleted) as f64 / 1e9
    );
    assert!(earliest <= deleted + SECOND && deleted <= latest + SECOND, "{earliest}..{latest}, deleted {deleted}");
    assert!(due >= deleted - SECOND && due <= deleted + 6 * SECOND, "run {due}, the real controller {deleted}");
}
