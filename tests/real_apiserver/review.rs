//! `review` of what the real control plane did (docs/review.md), recorded both ways: by `record`, and
//! by its kube-apiserver's audit log written with `examples/audit-policy.yaml`; each deletion's
//! instants set beside the taint-eviction controller's own log.

use std::process::Stdio;

use serde_json::Value;

use super::record::{Recording, expect_lines};

use super::side_by_side::{wait_for_controller, wait_for_deletions};
use super::{Options, TAINT, node, pod};
use crate::control_plane;
use crate::util::{command, instant, repo, run_command};

const SECOND: i128 = 1_000_000_000;

#[test]
fn real_apiserver_review_of_a_record_and_of_the_audit_log_agrees_with_the_controllers_own_log() {
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
    let dir = std::env::temp_dir().join(format!("taint-evict-review-record-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut recording = Recording(
        command()
            .args(["record", "--out"])
            .arg(&dir)
            .arg("--kubeconfig")
            .arg(plane.kubeconfig())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("record starts"),
    );
    for kind in ["nodes", "pods"] {
        expect_lines(&dir, &format!("the {kind} listed"), |lines| lines.iter().any(|l| l["listed"] == kind));
    }
    plane.kubectl_ok(&["taint", "nodes", "n1", &format!("{TAINT}=now:NoExecute")], None);
    let real = wait_for_deletions(&plane, &["untolerated", "t5", "t9"]);
    let deleting = |lines: &[Value]| {
        let deleting = lines.iter().filter(|l| !l["pod"]["metadata"]["deletionTimestamp"].is_null()).count();
        deleting >= 3
    };
    expect_lines(&dir, "the three deletions recorded", deleting);
    assert_eq!(recording.terminate(), 0);

    let log = plane.audit_log();
    for source in [log.as_path(), dir.as_path()] {
        let review = reviewed(source);
        judged(&review, &real);
    }
}

/// `review SOURCE -o json`.
fn reviewed(source: &std::path::Path) -> Value {
    let result = run_command(command().args(["review", source.to_str().expect("a UTF-8 path"), "-o", "json"]), None);
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert_eq!(result.stderr, "", "every write the review reads holds its object");
    serde_json::from_str(&result.stdout).expect("JSON")
}

/// Each of the three pods on time, the controller's, within a second of its own log.
fn judged(review: &Value, real: &std::collections::BTreeMap<String, Vec<i128>>) {
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
            "{name}: due {:+.3} s, deleted {:+.3} s from the controller's log (of {})",
            (due - logged) as f64 / 1e9,
            (deleted - logged) as f64 / 1e9,
            review["lines"]
        );
        assert!((deleted - logged).abs() <= SECOND, "{name}: logged {logged}, the review {deleted}");
        assert!((due - logged).abs() <= SECOND, "{name}: logged {logged}, due {due}");
    }
    assert!(pods.iter().all(|p| p["name"] != "forever"), "{review:#}");
    assert_eq!(review["counts"]["onTime"], 3, "{review:#}");
}
