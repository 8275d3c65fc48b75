//! This machine's clock off the control plane's (docs/connecting.md, "Whose clock"): the binary runs under libfaketime
//! (`FAKETIME=+90s`, its monotonic clock true) against the real kube-apiserver, whose clock is true.
//! Every answer must be in the control plane's time: countdowns, overdue marks, node silence, and
//! `run`'s deletions.

use std::process::Command;

use serde_json::{Value, json};

use super::run::{add_taint, deleted};
use super::{Options, node, pod};
use crate::control_plane;
use crate::support::running::Running;
use crate::util::{command, instant, run_command};
use taint_evict_test_support::control_plane::libfaketime;

const SECOND: i128 = 1_000_000_000;

/// `command` with its wall clock shifted by `shift` (`+90s`, `-45s`); its monotonic clock stays true.
fn shifted(mut command: Command, shift: &str) -> Command {
    let library = libfaketime().expect("libfaketime (Debian's faketime package; .ci/run installs it)");
    command.env("LD_PRELOAD", library).env("FAKETIME", shift).env("DONT_FAKE_MONOTONIC", "1");
    command
}

fn true_now() -> i128 {
    jiff::Timestamp::now().as_nanosecond()
}

/// A node Lease last renewed `ago` seconds before now (a kubelet gone silent then).
fn lease_renewed(node: &str, ago: i64) -> Value {
    let at = jiff::Timestamp::now() - jiff::SignedDuration::from_secs(ago);
    json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
           "metadata": {"name": node, "namespace": "kube-node-lease"},
           "spec": {"holderIdentity": node, "leaseDurationSeconds": 40,
                    "renewTime": at.strftime("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()}})
}

#[test]
fn real_apiserver_plan_with_this_machine_s_clock_off_answers_in_the_control_plane_s_time() {
    let mut plane = control_plane!("skew-plan");
    // Its kubelet stopped 25 s ago: the node lifecycle controller taints it once 40 s have passed.
    let mut silent = node("silent", &[], &[]);
    let stopped = (jiff::Timestamp::now() - jiff::SignedDuration::from_secs(25)).round(jiff::Unit::Second);
    let stopped = stopped.expect("round").to_string();
    silent["status"]["conditions"][0]["lastHeartbeatTime"] = json!(stopped);
    silent["status"]["conditions"][0]["lastTransitionTime"] = json!(stopped);
    plane.create(&[
        node("healthy", &[], &[]),
        node("tainted", &[], &[]),
        silent,
        pod("default", "thirty", "tainted", Some(Some(30))),
        lease_renewed("silent", 25),
    ]);
    let _beats = plane.keep_healthy(&["healthy", "tainted"]);
    let added = add_taint(&plane, "tainted");
    let kubeconfig = plane.kubeconfig().to_str().expect("UTF-8").to_owned();
    for (shift, ahead) in [("+90s", 90.0), ("-45s", -45.0)] {
        let before = true_now();
        let mut plan = shifted(command(), shift);
        plan.args(["plan", "-o", "json", "--kubeconfig", &kubeconfig]);
        let run = run_command(&mut plan, None);
        let after = true_now();
        assert_eq!(run.code, 0, "{shift}: {}", run.stderr);
        let document: Value = serde_json::from_str(&run.stdout).expect("JSON");
        let now = instant(document["now"].as_str().expect("now"));
        assert!(before - SECOND <= now && now <= after + SECOND, "{shift}: now {now} outside {before}..{after}");
        let offset = document["clock"]["offset"].as_f64().expect("clock.offset");
        assert!((offset - ahead).abs() < 1.0, "{shift}: offset {offset}: {}", document["clock"]);
        // No controller manager: the headers, narrowed by the freshest node Lease when it is fresh enough.
        let source = document["clock"]["source"].as_str().expect("clock.source");
        assert!(["date-header", "node-lease"].contains(&source), "{shift}: {source}");
        let side = if ahead > 0.0 { "ahead of" } else { "behind" };
        assert!(run.stderr.contains(&format!("s {side} the control plane")), "{shift}: {}", run.stderr);

        let nodes = document["nodes"].as_array().expect("nodes");
        let names: Vec<&str> = nodes.iter().map(|n| n["name"].as_str().expect("name")).collect();
        assert_eq!(names, ["silent", "tainted"], "{shift}: the heartbeating node is not foreseen");
        let tainted = &nodes[1];
        assert!(tainted["predictedTaint"].is_null() && tainted["held"].is_null(), "{shift}: {tainted}");
        let thirty = &tainted["pods"][0];
        assert_eq!(thirty["overdue"], false, "{shift}: {thirty}");
        let due = instant(thirty["evictAt"].as_str().expect("evictAt"));
        assert!((due - (added + 30 * SECOND)).abs() <= SECOND, "{shift}: {thirty}");
        let silent = &nodes[0];
        assert!(silent["held"].is_null(), "{shift}: not all zones are down: {silent}");
        let earliest = instant(silent["predictedTaint"]["earliest"].as_str().expect("a predicted taint"));
        assert!(earliest > now && earliest < now + 30 * SECOND, "{shift}: {silent}");
    }
}

/// Starts `run -o json` under a wall clock shifted by `shift` and waits for its initial sync.
fn run_shifted(kubeconfig: &std::path::Path, shift: &str) -> Running {
    let mut run = shifted(command(), shift);
    run.args(["run", "-o", "json", "--kubeconfig", kubeconfig.to_str().expect("UTF-8")]);
    let mut running = Running::spawn(&mut run);
    running.expect("the initial sync", |l| l["type"] == "synced");
    running
}

/// Adds the taint and checks that each pod is deleted at the true instant of its deadline (±1 s),
/// as the test's true clock sees the deletion reported.
fn deletes_on_time(plane: &super::ControlPlane, mut running: Running) -> Vec<Value> {
    let added = add_taint(plane, "n1");
    for (name, seconds) in [("untolerated", 0), ("six-seconds", 6)] {
        let line = running.expect("a deletion", |l| deleted(l, name));
        let seen = true_now();
        let off = seen - (added + seconds * SECOND);
        assert!((0..=SECOND).contains(&off), "{name} deleted {off} ns from its true deadline");
        let stamped = instant(line["time"].as_str().expect("time"));
        assert!((stamped - seen).abs() <= SECOND, "{name}: stamped {stamped}, seen {seen}");
    }
    let (_, code, lines) = running.interrupt_and_read();
    assert_eq!(code, 0);
    lines
}

#[test]
fn real_apiserver_run_with_this_machine_s_clock_ahead_deletes_at_the_true_deadline() {
    let plane = control_plane!("skew-run");
    plane.create(&[
        node("n1", &[], &[]),
        pod("default", "untolerated", "n1", None),
        pod("default", "six-seconds", "n1", Some(Some(6))),
    ]);
    let lines = deletes_on_time(&plane, run_shifted(plane.kubeconfig(), "+60s"));
    let message = clock_warning(&lines);
    assert!(message.starts_with("this machine's clock is 60.0 s ahead of the control plane"), "{message}");
}

#[test]
fn real_apiserver_run_with_this_machine_s_clock_ahead_follows_the_controller_manager_s_lease() {
    // The node lifecycle controller alone (the taint-eviction controller would delete the pods
    // itself), elected, so that it renews its Lease every 2 s.
    let options = Options {
        controller_manager: true,
        controller_manager_args: vec!["--controllers=node-lifecycle-controller".into(), "--leader-elect=true".into()],
        ..Options::default()
    };
    let mut plane = control_plane!("skew-run-controller", &options);
    plane.create(&[
        node("n1", &[], &[]),
        pod("default", "untolerated", "n1", None),
        pod("default", "six-seconds", "n1", Some(Some(6))),
    ]);
    let _beats = plane.keep_healthy(&["n1"]);
    wait_for_lease(&plane);
    let before = true_now();
    let mut plan = shifted(command(), "+60s");
    plan.args(["plan", "-o", "json", "--kubeconfig", plane.kubeconfig().to_str().expect("UTF-8")]);
    let run = run_command(&mut plan, None);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let document: Value = serde_json::from_str(&run.stdout).expect("JSON");
    assert!((instant(document["now"].as_str().expect("now")) - before).abs() <= SECOND, "{document}");

    let lines = deletes_on_time(&plane, run_shifted(plane.kubeconfig(), "+60s"));
    let message = clock_warning(&lines);
    assert!(message.contains("from the kube-controller-manager Lease"), "{message}");
}

/// The message of `run`'s warning that this machine's clock is off the control plane's.
fn clock_warning(lines: &[Value]) -> &str {
    let messages = lines.iter().filter(|l| l["type"] == "warning").filter_map(|l| l["message"].as_str());
    messages
        .into_iter()
        .find(|m| m.starts_with("this machine's clock"))
        .unwrap_or_else(|| panic!("no clock warning: {lines:?}"))
}

/// Waits (up to 30 s) until the controller manager holds its Lease.
fn wait_for_lease(plane: &super::ControlPlane) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let output =
            plane.kubectl(&["get", "lease", "-n", "kube-system", "kube-controller-manager", "-o", "json"], None);
        if output.status.success() {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "kube-controller-manager took no Lease within 30 s");
        std::thread::park_timeout(std::time::Duration::from_millis(200));
    }
}
