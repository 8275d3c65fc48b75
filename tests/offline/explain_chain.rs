//! `explain` of a pod on a node the node lifecycle controller is about to taint, or holds back: the
//! chain from the last heartbeat to the deletion (snapshots over the real-controller fixtures of
//! `tests/data/nlc/`, whose README says what the controller then did).

use serde_json::Value;

use crate::util::run;

fn explain(fixture: &str, now: &str, pod: &str, extra: &[&str]) -> String {
    let file = format!("tests/data/nlc/{fixture}");
    let now = format!("2026-11-23T{now}Z");
    // The fixtures' kubelets renewed their Lease every 2 s.
    let args = ["explain", "-f", &file, "--now", &now, "--silent-after", "5s", "-n", "exp", pod];
    let result = run(&[&args[..], extra].concat(), None);
    assert_eq!(result.code, 0, "{}", result.stderr);
    result.stdout
}

#[test]
fn chain_of_a_pod_on_a_silent_node_queued_behind_three_others() {
    // The real controller tainted n04 at 18:27:55.675 and deleted def-n04 300 s after.
    insta::assert_snapshot!(explain("b-rate-limit-4-of-12.json", "18:27:23.291", "def-n04", &[]));
}

#[test]
fn chain_of_an_untolerating_pod_on_a_silent_node() {
    insta::assert_snapshot!(explain("a-single-unreachable.json", "18:25:43.315", "zero-a1", &[]));
}

#[test]
fn chain_of_a_pod_on_a_node_held_by_a_partially_disrupted_zone() {
    let grace = ["--node-monitor-grace-period", "20s"];
    insta::assert_snapshot!(explain("c-partial-z2-full-z3.json", "18:37:09.139", "def-m1", &grace));
}

#[test]
fn chain_as_json_keeps_the_existing_fields_and_adds_before_taint() {
    let text = explain("b-rate-limit-4-of-12.json", "18:27:23.291", "def-n04", &["-o", "json"]);
    insta::assert_snapshot!(text);
    let doc: Value = serde_json::from_str(&text).expect("JSON");
    for field in ["verdict", "evictAt", "since", "basis", "overdue", "tolerationSeconds", "taints"] {
        assert!(doc.get(field).is_some(), "{field} is kept: {doc}");
    }
    assert_eq!(doc["beforeTaint"]["predictedTaint"]["key"], "node.kubernetes.io/unreachable");
    assert_eq!(doc["beforeTaint"]["queuedAhead"], 3);
    assert_eq!(doc["beforeTaint"]["usedToleration"], 1);
}

#[test]
fn a_pod_on_a_healthy_node_has_no_chain() {
    let text = explain("b-rate-limit-4-of-12.json", "18:27:23.291", "def-n05", &["-o", "json"]);
    let doc: Value = serde_json::from_str(&text).expect("JSON");
    assert!(doc.get("beforeTaint").is_none(), "{doc}");
    assert!(!explain("b-rate-limit-4-of-12.json", "18:27:23.291", "def-n05", &[]).contains("Before the taint"));
}
