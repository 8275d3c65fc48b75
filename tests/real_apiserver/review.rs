//! `review` of what the real control plane did (docs/review.md): its kube-apiserver's audit log,
//! written with `examples/audit-policy.yaml`, read as a record, each deletion's instants set beside
//! the taint-eviction controller's own log.

use serde_json::Value;

use super::side_by_side::{wait_for_controller, wait_for_deletions};
use super::{Options, TAINT, node, pod};
use crate::control_plane;
use crate::util::{command, instant, repo, run_command};

const SECOND: i128 = 1_000_000_000;

#[test]
fn real_apiserver_review_of_the_audit_log_agrees_with_the_controllers_own_log() {
    let options = Options {
        controller_manager: true,
        audit_policy: Some(repo().join("examples/audit-policy.yaml")),
        ..Options::default()
    };
    let mut plane = control_plane!("review-audit-log", &options);
    plane.create(&[
        node("n1", &[], &[]),
        pod("default", "untolerated", "n1", None),
        pod("default", "t5", "n1", Some(Some(5))),
        pod("default", "t9", "n1", Some(Some(9))),
        pod("default", "forever", "n1", Some(None)),
    ]);
    let _heartbeats = plane.keep_healthy(&["n1"]);
    wait_for_controller(&plane);
    plane.kubectl_ok(&["taint", "nodes", "n1", &format!("{TAINT}=now:NoExecute")], None);
    let real = wait_for_deletions(&plane, &["untolerated", "t5", "t9"]);

    let log = plane.audit_log();
    let result = run_command(command().args(["review", log.to_str().expect("a UTF-8 path"), "-o", "json"]), None);
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert_eq!(result.stderr, "", "every write the review reads holds its object");
    let review: Value = serde_json::from_str(&result.stdout).expect("JSON");
    let pods = review["pods"].as_array().expect("pods");
    let of = |name: &str| pods.iter().find(|p| p["name"] == name).unwrap_or_else(|| panic!("{name} in {review:#}"));
    for name in ["untolerated", "t5", "t9"] {
        let judged = of(name);
        assert_eq!(judged["verdict"], "on-time", "{judged:#}");
        assert_eq!(judged["deletedBy"], "taint-eviction-controller", "{judged:#}");
        // The controller logs "Deleting pod" as it sends the DELETE; the audit log dates the answer.
        let logged = real[name][0];
        let deleted = instant(judged["deleted"].as_str().expect("deleted"));
        let due = instant(judged["due"].as_str().expect("due"));
        eprintln!(
            "{name}: due {:+.3} s, deleted {:+.3} s from the controller's log",
            (due - logged) as f64 / 1e9,
            (deleted - logged) as f64 / 1e9
        );
        assert!((deleted - logged).abs() <= SECOND, "{name}: logged {logged}, the review {deleted}");
        assert!((due - logged).abs() <= SECOND, "{name}: logged {logged}, due {due}");
    }
    assert!(pods.iter().all(|p| p["name"] != "forever"), "{review:#}");
    assert_eq!(review["counts"]["onTime"], 3, "{review:#}");
}
