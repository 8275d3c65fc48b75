//! Leader election on the real coordination API: two `run --leader-elect` processes, one leads; kill
//! it and the other takes over; each pod is deleted once.

use super::{node, pod};
use crate::control_plane;
use crate::real_apiserver::run::{add_taint, deleted, deletions};
use crate::support::running::Running;

fn candidate(plane: &super::ControlPlane) -> Running {
    Running::launch_with(
        plane.kubeconfig(),
        &[
            "-o",
            "json",
            "--leader-elect",
            "--leader-elect-namespace=default",
            "--leader-elect-lease-duration=3s",
            "--leader-elect-renew-deadline=2s",
            "--leader-elect-retry-period=500ms",
        ],
    )
}

#[test]
fn real_apiserver_follower_takes_over_when_the_leader_is_killed_and_each_pod_goes_once() {
    let plane = control_plane!("election");
    plane.create(&[
        node("n1", &[], &[]),
        node("n2", &[], &[]),
        pod("default", "first", "n1", None),
        pod("default", "second", "n2", None),
        pod("default", "late", "n1", Some(Some(4))),
    ]);
    let mut one = candidate(&plane);
    one.expect("one leads", |l| l["type"] == "leadership" && l["state"] == "leading");
    // The taint must come after the leader's first sync: a taint it finds at start-up makes `late` due at
    // once (a start that takes 4 s on a busy machine), never scheduled.
    one.expect("the leader's initial sync", |l| l["type"] == "synced");
    let mut two = candidate(&plane);
    two.expect("two follows", |l| l["type"] == "leadership" && l["state"] == "following");

    add_taint(&plane, "n1");
    one.expect("first deleted by the leader", |l| deleted(l, "first"));
    one.expect("late scheduled by the leader", |l| l["type"] == "scheduled" && l["pod"]["name"] == "late");
    let lease = plane.get(&["lease", "-n", "default", "kubectl-taint-evict"]);
    let leader = lease["spec"]["holderIdentity"].as_str().expect("a holder").to_owned();

    one.child.kill().expect("kill the leader");
    one.child.wait().expect("reaped");
    two.expect("two leads", |l| l["type"] == "leadership" && l["state"] == "leading");
    add_taint(&plane, "n2");
    two.expect("second deleted by the new leader", |l| deleted(l, "second"));
    two.expect("late deleted by the new leader", |l| deleted(l, "late"));
    let lease = plane.get(&["lease", "-n", "default", "kubectl-taint-evict"]);
    assert_ne!(lease["spec"]["holderIdentity"].as_str(), Some(leader.as_str()), "{lease}");

    let (_, code, lines) = two.interrupt_and_read();
    assert_eq!(code, 0);
    let all: Vec<serde_json::Value> = one.seen.iter().chain(&lines).cloned().collect();
    for name in ["first", "second", "late"] {
        assert_eq!(deletions(&all, name), 1, "{name} deleted once: {all:#?}");
    }
}

#[test]
fn real_apiserver_a_new_leader_keeps_a_countdown_a_removed_taint_shortened() {
    // e3 tolerates lab-a 20 s and lab-b 120 s; both go on n1 at once, lab-a comes off 3 s later: the
    // countdown of 20 s runs on (a countdown is never moved). The leader is killed; the follower takes
    // over. Before, its term began from a replay of what it then listed (lab-b alone): e3 deleted
    // 120 s after the taints, 100 s late. Its engine followed the taints as the leader's did.
    let plane = control_plane!("election-countdown");
    let tolerating = |key: &str, seconds: i64| serde_json::json!({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": seconds});
    let e3 = serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "e3", "namespace": "default"},
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "app"}],
                 "tolerations": [tolerating("lab-a", 20), tolerating("lab-b", 120)]}});
    plane.create(&[node("n1", &[], &[]), e3]);
    // Both follow n1 and n9, which is not there: each says so once its lists are in.
    let candidate = || {
        let args = ["-o", "json", "n1", "n9", "--leader-elect", "--leader-elect-namespace=default"];
        let times = ["--leader-elect-lease-duration=3s", "--leader-elect-renew-deadline=2s"];
        Running::launch_with(plane.kubeconfig(), &[&args[..], &times, &["--leader-elect-retry-period=500ms"]].concat())
    };
    let absent =
        |l: &serde_json::Value| l["type"] == "warning" && l["message"].as_str().is_some_and(|m| m.contains("n9"));
    let mut one = candidate();
    one.expect("one leads", |l| l["type"] == "leadership" && l["state"] == "leading");
    one.expect("the leader's initial sync", |l| l["type"] == "synced");
    let mut two = candidate();
    two.expect("two follows", |l| l["type"] == "leadership" && l["state"] == "following");
    two.expect("two's lists in", absent);

    let taint = |key: &str| serde_json::json!({"key": key, "value": "x", "effect": "NoExecute"});
    let both = serde_json::json!({"spec": {"taints": [taint("lab-a"), taint("lab-b")]}}).to_string();
    plane.kubectl_ok(&["patch", "node", "n1", "--type=merge", "-p", &both], None);
    let scheduled = one.expect("e3 scheduled by the leader", |l| l["type"] == "scheduled" && l["pod"]["name"] == "e3");
    let due = crate::util::instant(scheduled["evictAt"].as_str().expect("evictAt"));
    let only_b = serde_json::json!({"spec": {"taints": [taint("lab-b")]}}).to_string();
    plane.kubectl_ok(&["patch", "node", "n1", "--type=merge", "-p", &only_b], None);

    one.child.kill().expect("kill the leader");
    one.child.wait().expect("reaped");
    two.expect("two leads", |l| l["type"] == "leadership" && l["state"] == "leading");
    let gone = two.expect("e3 deleted by the new leader", |l| deleted(l, "e3"));
    let at = crate::util::instant(gone["time"].as_str().expect("time"));
    eprintln!("deleted {:+.3} s from the leader's deadline", (at - due) as f64 / 1e9);
    assert!(at >= due && at - due < 3_000_000_000, "deleted at {at}, the leader's countdown ended {due}: {gone}");
}

#[test]
fn real_apiserver_a_deletion_cap_holds_across_a_failover_and_a_restart() {
    // `--max-deletions 1` per 5 minutes, two candidates. The leader deletes p1 and is killed at once;
    // the new leader must wait for the slot p1 took, not delete p2 at once; nor must a lone `run`
    // started after it. Before, each term began with an empty window: p2 went 27 s after p1.
    let plane = control_plane!("election-cap");
    plane.create(&[
        node("n1", &[], &[]),
        node("n2", &[], &[]),
        pod("default", "p1", "n1", None),
        pod("default", "p2", "n2", None),
    ]);
    let cap = ["-o", "json", "--max-deletions=1", "--max-deletions-window=5m", "--leader-elect-namespace=default"];
    let times =
        ["--leader-elect-lease-duration=3s", "--leader-elect-renew-deadline=2s", "--leader-elect-retry-period=500ms"];
    let candidate = || Running::launch_with(plane.kubeconfig(), &[&cap[..], &times, &["--leader-elect"]].concat());
    let mut one = candidate();
    one.expect("one leads", |l| l["type"] == "leadership" && l["state"] == "leading");
    one.expect("the leader's initial sync", |l| l["type"] == "synced");
    let mut two = candidate();
    two.expect("two follows", |l| l["type"] == "leadership" && l["state"] == "following");

    add_taint(&plane, "n1");
    let evicting = one.expect("p1 started by the leader", |l| l["type"] == "evicting" && l["pod"]["name"] == "p1");
    let started = crate::util::instant(evicting["time"].as_str().expect("time"));
    one.expect("p1 deleted by the leader", |l| deleted(l, "p1"));
    one.child.kill().expect("kill the leader");
    one.child.wait().expect("reaped");
    let lease = plane.get(&["lease", "-n", "default", "kubectl-taint-evict"]);
    let counted = lease["metadata"]["annotations"]["kubectl-taint-evict/deletions-started"].as_str().unwrap_or("");
    assert!(!counted.is_empty(), "the Lease carries the deletion counted: {lease}");

    two.expect("two leads", |l| l["type"] == "leadership" && l["state"] == "leading");
    add_taint(&plane, "n2");
    let window = 300_000_000_000_i128;
    let slot = |line: &serde_json::Value| crate::util::instant(line["nextSlot"].as_str().expect("nextSlot"));
    let capped = two.expect("p2 capped by the new leader", |l| l["type"] == "capped" && l["pod"]["name"] == "p2");
    assert!(
        (slot(&capped) - (started + window)).abs() < 1_000_000_000,
        "the slot p1 took frees 5 min after it: {capped}"
    );
    let (_, code, lines) = two.interrupt_and_read();
    assert_eq!(code, 0);
    assert_eq!(deletions(&lines, "p2"), 0, "{lines:#?}");

    // A lone run started now holds the same Lease and counts p1 too.
    let mut lone = Running::launch_with(plane.kubeconfig(), &cap);
    let capped = lone.expect("p2 capped after a restart", |l| l["type"] == "capped" && l["pod"]["name"] == "p2");
    assert!((slot(&capped) - (started + window)).abs() < 1_000_000_000, "{capped}");
    let (_, code, lines) = lone.interrupt_and_read();
    assert_eq!(code, 0);
    assert_eq!(deletions(&lines, "p2"), 0, "{lines:#?}");
    plane.get(&["pod", "-n", "default", "p2"]);
}

#[test]
fn real_apiserver_a_restarted_run_keeps_a_countdown_a_removed_taint_shortened() {
    // e3 tolerates lab-a 20 s and lab-b 120 s; both go on n1 at once, lab-a comes off 3 s later: the
    // countdown of 20 s runs on. The run is killed; another starts. Before, it began from a replay of
    // what it listed (lab-b alone): e3 deleted 120 s after the taints, 100 s late. The Lease carried
    // the countdown.
    let plane = control_plane!("restart-countdown");
    let tolerating = |key: &str, seconds: i64| serde_json::json!({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": seconds});
    let e3 = serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "e3", "namespace": "default"},
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "app"}],
                 "tolerations": [tolerating("lab-a", 20), tolerating("lab-b", 120)]}});
    plane.create(&[node("n1", &[], &[]), e3]);
    let args = ["-o", "json", "--leader-elect-namespace=default", "--leader-elect-lease-duration=3s"];
    let times = ["--leader-elect-renew-deadline=2s", "--leader-elect-retry-period=500ms"];
    let launch = || Running::launch_with(plane.kubeconfig(), &[&args[..], &times].concat());
    let mut one = launch();
    one.expect("the first run's initial sync", |l| l["type"] == "synced");

    let taint = |key: &str| serde_json::json!({"key": key, "value": "x", "effect": "NoExecute"});
    let both = serde_json::json!({"spec": {"taints": [taint("lab-a"), taint("lab-b")]}}).to_string();
    plane.kubectl_ok(&["patch", "node", "n1", "--type=merge", "-p", &both], None);
    let scheduled = one.expect("e3 scheduled", |l| l["type"] == "scheduled" && l["pod"]["name"] == "e3");
    let due = crate::util::instant(scheduled["evictAt"].as_str().expect("evictAt"));
    let only_b = serde_json::json!({"spec": {"taints": [taint("lab-b")]}}).to_string();
    plane.kubectl_ok(&["patch", "node", "n1", "--type=merge", "-p", &only_b], None);
    // The countdown is on the Lease within a renewal.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let lease = plane.get(&["lease", "-n", "default", "kubectl-taint-evict"]);
        if lease["metadata"]["annotations"]["kubectl-taint-evict/countdowns"].as_str().is_some_and(|c| c.contains("e3"))
        {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the countdown never reached the Lease: {lease}");
    }
    one.child.kill().expect("kill the run");
    one.child.wait().expect("reaped");

    let mut two = launch();
    let gone = two.expect("e3 deleted by the restarted run", deleted_e3);
    let at = crate::util::instant(gone["time"].as_str().expect("time"));
    eprintln!("deleted {:+.3} s from the first run's deadline", (at - due) as f64 / 1e9);
    assert!(at >= due && at - due < 4_000_000_000, "deleted at {at}, the first run's countdown ended {due}: {gone}");
    let (_, code, _) = two.interrupt_and_read();
    assert_eq!(code, 0);
}

fn deleted_e3(line: &serde_json::Value) -> bool {
    deleted(line, "e3")
}
