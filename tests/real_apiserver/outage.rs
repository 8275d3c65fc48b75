//! A deletion decided before an API server outage is not carried out after it on what `run` could
//! not see: two kube-apiservers over one etcd (as behind a load balancer), `run` talking to the
//! first; the first is killed, the taint is removed through the second, the first comes back.
//! `run` holds what falls due while its watches are down and drops it once they list again. The same
//! with the watches cut by a relay between `run` and the one API server.

use std::time::{Duration, Instant};

use serde_json::json;

use super::{TAINT, node, pod};
use crate::control_plane;
use crate::real_apiserver::run::{add_taint, server_pod};
use crate::support::connect_proxy::ConnectProxy;
use crate::support::running::Running;

/// Returns at `start + seconds` (the outage's script; nothing is awaited).
fn at(start: Instant, seconds: u64) {
    let when = start + Duration::from_secs(seconds);
    while Instant::now() < when {
        std::thread::park_timeout(when - Instant::now());
    }
}

#[test]
fn real_apiserver_a_taint_removed_during_an_outage_deletes_nothing_after_it() {
    let mut plane = control_plane!("outage");
    let second = plane.start_second_apiserver();
    // t15: due during the outage; t24: due a second after the first API server is back, before
    // `run`'s watches can have listed again (their backoff reached seconds by then).
    plane.create(&[
        node("n1", &[], &[]),
        pod("default", "t15", "n1", Some(Some(15))),
        pod("default", "t24", "n1", Some(Some(24))),
    ]);
    let mut run = Running::start_with(plane.kubeconfig(), &[]);
    let start = Instant::now();
    add_taint(&plane, "n1");
    run.expect_count("both scheduled", 2, |l| l["type"] == "scheduled");

    at(start, 5);
    plane.kill_apiserver();
    at(start, 7);
    let untaint = json!({"spec": {"taints": null}}).to_string();
    let output = std::process::Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(&second)
        .args(["patch", "node", "n1", "--type=merge", "-p", &untaint])
        .env_remove("KUBECONFIG")
        .output()
        .expect("kubectl runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    at(start, 23);
    plane.start_apiserver_again();

    run.expect("t15 held while the watches were down", |l| l["type"] == "held" && l["pod"]["name"] == "t15");
    run.expect("the nodes listed again", |l| l["type"] == "dropped" && l["pod"]["name"] == "t15");
    run.expect("t24 never went ahead", |l| {
        matches!(l["type"].as_str(), Some("cancelled" | "dropped")) && l["pod"]["name"] == "t24"
    });
    let (summary, code, lines) = run.interrupt_and_read();
    assert_eq!(code, 0, "run still runs, and stops cleanly: {summary}");
    assert!(!lines.iter().any(|l| l["type"] == "deleted"), "nothing deleted: {lines:#?}");
    for name in ["t15", "t24"] {
        let pod = server_pod(&plane, "default", name).expect("still there");
        assert!(pod["metadata"]["deletionTimestamp"].is_null(), "{name}");
        let taints = plane.get(&["node", "n1"])["spec"]["taints"].clone();
        assert!(taints.as_array().is_none_or(|t| !t.iter().any(|t| t["key"] == TAINT)), "{taints}");
    }
}

#[test]
fn real_apiserver_a_taint_removed_while_the_watches_are_cut_deletes_nothing_after_it() {
    let plane = control_plane!("outage-relay");
    plane.create(&[
        node("n1", &[], &[]),
        pod("default", "t10", "n1", Some(Some(10))),
        pod("default", "t15", "n1", Some(Some(15))),
    ]);
    // `run` reaches the API server through a relay that cuts its connections from +3 s to +14 s.
    let relay = ConnectProxy::start();
    let mut run = Running::spawn(
        crate::util::command()
            .args(["run", "-o", "json", "--kubeconfig"])
            .arg(plane.kubeconfig())
            .env("HTTPS_PROXY", relay.url()),
    );
    run.expect("the initial sync", |l| l["type"] == "synced");
    let start = Instant::now();
    add_taint(&plane, "n1");
    run.expect_count("both scheduled", 2, |l| l["type"] == "scheduled");
    at(start, 3);
    relay.cut();
    at(start, 5);
    // Removed past the relay: run cannot see it.
    plane.kubectl_ok(&["patch", "node", "n1", "--type=merge", "-p", r#"{"spec":{"taints":null}}"#], None);
    at(start, 14);
    relay.restore();

    run.expect("t10 held while the watches were cut", |l| l["type"] == "held" && l["pod"]["name"] == "t10");
    run.expect("t10 dropped once listed again", |l| l["type"] == "dropped" && l["pod"]["name"] == "t10");
    run.expect("t15 never went ahead", |l| {
        matches!(l["type"].as_str(), Some("cancelled" | "dropped")) && l["pod"]["name"] == "t15"
    });
    let (summary, code, lines) = run.interrupt_and_read();
    assert_eq!(code, 0, "{summary}");
    assert!(!lines.iter().any(|l| l["type"] == "deleted"), "nothing deleted: {lines:#?}");
    assert!(relay.tunnels() > 1, "run went through the relay, and again after the cut");
    for name in ["t10", "t15"] {
        let pod = server_pod(&plane, "default", name).expect("still there");
        assert!(pod["metadata"]["deletionTimestamp"].is_null(), "{name}");
    }
}
