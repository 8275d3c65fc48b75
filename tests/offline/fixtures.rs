//! The dumps taken from a real kube-apiserver 1.29 (`tests/data/fixtures/`), with the instants at which
//! the real taint-eviction controller issued each deletion. The plan must predict them to the second:
//! the controller acted 0.1–0.4 s after each deadline (queue and API latency).

use serde_json::Value;

use crate::util::{data, instant, run};

const SECOND: i128 = 1_000_000_000;

fn plan(fixture: &str, now: &str, extra: &[&str]) -> Value {
    let path = data(&format!("fixtures/{fixture}"));
    let path = path.to_str().expect("UTF-8 path");
    let mut args = vec!["plan", "-f", path, "--now", now, "-o", "json"];
    args.extend(extra);
    let result = run(&args, None);
    assert_eq!(result.code, 0, "{}", result.stderr);
    serde_json::from_str(&result.stdout).expect("JSON")
}

fn pod<'a>(plan: &'a Value, name: &str) -> &'a Value {
    plan["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|n| n["pods"].as_array().into_iter().flatten())
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("pod {name} in the plan"))
}

/// Asserts the real deletion (`observed`, or never) happened within a second after the prediction.
fn assert_predicted(plan: &Value, name: &str, observed: Option<&str>) {
    let pod = pod(plan, name);
    match observed {
        None => assert_eq!(pod["verdict"], "never", "{name}: the controller never deleted it; plan says {pod}"),
        Some(observed) => {
            let predicted = instant(pod["evictAt"].as_str().unwrap_or_else(|| panic!("{name}: no evictAt in {pod}")));
            let lag = instant(observed) - predicted;
            assert!((0..SECOND).contains(&lag), "{name}: deleted at {observed}, predicted {}", pod["evictAt"]);
        }
    }
}

#[test]
fn real_controller_deletions_match_the_plan() {
    let plan = plan("real-apiserver-1.29.json", "2026-11-22T09:44:04Z", &["n1", "n3", "n4", "n5", "n7"]);
    for (name, observed) in [
        ("s1-untolerated", Some("2026-11-22T09:43:53.32Z")),
        ("s2-tol20", Some("2026-11-22T09:44:13.31Z")),
        ("s3-finite-first", Some("2026-11-22T09:44:13.31Z")),
        ("s3-forever-first", None),
        ("s4-kept", Some("2026-11-22T09:44:53.25Z")),
        ("s5-bound-after", Some("2026-11-22T09:44:23.18Z")),
        ("s7-tol25", Some("2026-11-22T09:44:18.38Z")),
        ("s7-wraps-small", Some("2026-11-22T09:43:53.67Z")),
        ("s7-wraps-negative", None),
    ] {
        assert_predicted(&plan, name, observed);
    }
    assert_eq!(pod(&plan, "s1-untolerated")["verdict"], "evict-now");
    assert_eq!(pod(&plan, "s4-kept")["tolerationSeconds"], 60, "the 60 s deadline was kept when lab/b (10 s) came");
}

#[test]
fn real_controller_deletions_match_a_what_if_taint() {
    let plan =
        plan("real-apiserver-1.29-before-taint.json", "2026-11-22T09:43:53Z", &["--taint", "lab/w:NoExecute", "n6"]);
    assert_predicted(&plan, "s6-bare", Some("2026-11-22T09:43:53.32Z"));
    assert_predicted(&plan, "s6-tol15", Some("2026-11-22T09:44:08.33Z"));
    assert_eq!(pod(&plan, "s6-bare")["verdict"], "evict-now");
}

#[test]
fn real_controller_restart_restarts_countdowns_from_the_lease() {
    let plan = plan("real-apiserver-1.29-controller-restart.json", "2026-11-22T09:50:59Z", &["r1"]);
    for (name, predicted) in [
        ("r-tol5", "2026-11-22T09:50:44Z"),
        ("r-tol40", "2026-11-22T09:51:36.796765Z"),
        ("r-tol70", "2026-11-22T09:52:06.796765Z"),
    ] {
        assert_eq!(instant(pod(&plan, name)["evictAt"].as_str().expect("evictAt")), instant(predicted), "{name}");
    }
    assert_predicted(&plan, "r-tol5", Some("2026-11-22T09:50:44.13Z"));
    assert_predicted(&plan, "r-tol40", Some("2026-11-22T09:51:36.97Z"));
    assert_predicted(&plan, "r-tol70", Some("2026-11-22T09:52:06.95Z"));
    assert_eq!(pod(&plan, "r-tol40")["basis"], "controller-restart");
}
