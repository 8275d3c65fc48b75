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
