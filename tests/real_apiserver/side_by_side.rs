//! Beside the real taint-eviction controller (kube-controller-manager running): `plan` predicted each
//! instant the real controller deleted a pod, and `run` enforcing the same cluster deletes each pod
//! once with it, treating the controller's deletions as done.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{ControlPlane, Options, node, pod};
use crate::control_plane;
use crate::real_apiserver::run::{add_taint, server_pod};
use crate::support::running::Running;
use crate::util::{command, instant, run_command};

const SECOND: i128 = 1_000_000_000;

/// Waits until the controller manager's taint-eviction controller has synced its caches.
pub fn wait_for_controller(plane: &ControlPlane) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let log = plane.log("kube-controller-manager");
        if log.lines().any(|l| l.contains("Caches are synced") && l.contains("taint-eviction-controller")) {
            return;
        }
        assert!(Instant::now() < deadline, "the taint-eviction controller did not sync within 60 s:\n{log}");
        std::thread::park_timeout(Duration::from_millis(100));
    }
}

pub fn wait_for_deletions(plane: &ControlPlane, names: &[&str]) -> BTreeMap<String, Vec<i128>> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let deletions = plane.controller_deletions();
        if names.iter().all(|n| deletions.contains_key(*n)) {
            return deletions;
        }
        assert!(Instant::now() < deadline, "the real controller deleted only {deletions:?} within 30 s");
        std::thread::park_timeout(Duration::from_millis(100));
    }
}

fn cluster(plane: &mut ControlPlane) -> taint_evict_test_support::control_plane::Heartbeats {
    plane.create(&[
        node("n1", &[], &[]),
        pod("default", "untolerated", "n1", None),
        pod("default", "t3", "n1", Some(Some(3))),
        pod("default", "t6", "n1", Some(Some(6))),
        pod("default", "forever", "n1", Some(None)),
    ]);
    plane.keep_healthy(&["n1"])
}

#[test]
fn real_apiserver_plan_predicts_each_instant_the_real_controller_deletes() {
    let options = Options { controller_manager: true, ..Options::default() };
    let mut plane = control_plane!("side-by-side-plan", &options);
    let _heartbeats = cluster(&mut plane);
    wait_for_controller(&plane);
    add_taint(&plane, "n1");
    let now = jiff::Timestamp::now().to_string();
    let result = run_command(
        command().args(["plan", "n1", "--now", &now, "-o", "json"]).arg("--kubeconfig").arg(plane.kubeconfig()),
        None,
    );
    assert_eq!(result.code, 0, "{}", result.stderr);
    let plan: Value = serde_json::from_str(&result.stdout).expect("JSON");
    let predicted: BTreeMap<String, Option<i128>> = plan["nodes"][0]["pods"]
        .as_array()
        .expect("pods")
        .iter()
        .map(|p| (p["name"].as_str().expect("name").to_owned(), p["evictAt"].as_str().map(instant)))
        .collect();
    assert_eq!(predicted["forever"], None);

    let real = wait_for_deletions(&plane, &["untolerated", "t3", "t6"]);
    for (name, instants) in &real {
        let expected = instants[0];
        let ours = predicted[name].unwrap_or_else(|| panic!("{name}: deleted by the real controller, plan said never"));
        eprintln!(
            "{name}: the real controller deleted {:+.3} s from the plan's instant",
            (expected - ours) as f64 / 1e9
        );
        assert!((ours - expected).abs() <= SECOND, "{name}: plan {ours}, real controller {expected}");
    }
    assert!(!real.contains_key("forever"), "{real:?}");
}

#[test]
fn real_apiserver_run_beside_the_real_controller_deletes_each_pod_once() {
    let options = Options { controller_manager: true, ..Options::default() };
    let mut plane = control_plane!("side-by-side-run", &options);
    let _heartbeats = cluster(&mut plane);
    wait_for_controller(&plane);
    let mut run = Running::start_with(plane.kubeconfig(), &[]);
    add_taint(&plane, "n1");
    let done = |name: &'static str| {
        move |l: &Value| l["pod"]["name"] == name && (l["type"] == "deleted" || l["type"] == "gone")
    };
    for name in ["untolerated", "t3", "t6"] {
        run.expect("deleted or found terminating", done(name));
    }
    let real = wait_for_deletions(&plane, &["untolerated", "t3", "t6"]);
    let (_, code, lines) = run.interrupt_and_read();
    assert_eq!(code, 0);
    assert!(!lines.iter().any(|l| l["type"] == "failed"), "{lines:#?}");
    for name in ["untolerated", "t3", "t6"] {
        let ours = lines
            .iter()
            .filter(|l| l["pod"]["name"] == name && (l["type"] == "deleted" || l["type"] == "gone"))
            .count();
        assert_eq!(ours, 1, "{name}: one outcome in run: {lines:#?}");
        let pod = server_pod(&plane, "default", name).expect("terminating");
        assert!(pod["metadata"]["deletionTimestamp"].is_string(), "{name}");
        assert!(real.contains_key(name));
    }
    let forever = server_pod(&plane, "default", "forever").expect("forever");
    assert!(forever["metadata"]["deletionTimestamp"].is_null());
}
