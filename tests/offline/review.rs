//! `review` of a record: the engine replayed over what the record saw, each deletion set beside when it
//! was due (docs/review.md).

use serde_json::Value;

use super::audit::json;
use crate::util::{run, scratch};

const INCIDENT: &str = "tests/data/records/incident";

/// Each pod as `namespace/name verdict due deleted by`.
fn verdicts(document: &Value) -> Vec<String> {
    let pods = document["pods"].as_array().expect("pods");
    pods.iter()
        .map(|p| {
            let field = |name: &str| p[name].as_str().unwrap_or("-").to_owned();
            format!(
                "{}/{} {} {} {} {}",
                field("namespace"),
                field("name"),
                field("verdict"),
                field("due"),
                field("deleted"),
                field("deletedBy")
            )
        })
        .collect()
}

#[test]
fn a_recorded_incident_is_judged_pod_by_pod_a_new_leader_restarting_the_countdowns() {
    let document = json(&run(&["review", INCIDENT, "-o", "json"], None));
    assert_eq!(document["kind"], "Review");
    // Checked by hand against the record: node-a is tainted `unreachable` when the record sees it,
    // 10:00:40.005. web-1 tolerates it 60 s: due 10:01:40.005, its deletion seen 1 ms before: on time.
    // batch tolerates it 30 s: due 10:01:10.005, deleted at 10:01:55.004, 45 s late. The controller's
    // Lease changes hands at 10:03:00 (acquireTime): every countdown starts again, so cache-0 (250 s)
    // is due at 10:07:10 and never deleted before the record stops at 10:10, and api-0 (the default
    // 300 s) at 10:08:00, deleted 3 ms after. The pod watch's gap (10:06:00 to 10:06:20) holds no
    // verdict; api-1 (node-b, untainted) and the DaemonSet's agent (tolerating for ever) are never due.
    assert_eq!(
        verdicts(&document),
        vec![
            "shop/web-1 on-time 2026-11-29T10:01:40.005Z 2026-11-29T10:01:40.004Z taint-eviction-controller",
            "shop/batch late 2026-11-29T10:01:10.005Z 2026-11-29T10:01:55.004Z taint-eviction-controller",
            "shop/cache-0 not-deleted 2026-11-29T10:07:10Z - -",
            "shop/api-0 on-time 2026-11-29T10:08:00Z 2026-11-29T10:08:00.003Z taint-eviction-controller",
        ]
    );
    assert_eq!(document["pods"][1]["offBySeconds"], 44.999);
    assert_eq!(document["pods"][3]["countdownFrom"], "2026-11-29T10:03:00Z");
    // Without the restart, api-0 was due 300 s after the taint, and cache-0 250 s after.
    assert_eq!(document["pods"][3]["dueBeforeRestart"], "2026-11-29T10:05:40.005Z");
    assert_eq!(document["pods"][2]["dueBeforeRestart"], "2026-11-29T10:04:50.005Z");
    assert_eq!(document["pods"][0]["dueBeforeRestart"], Value::Null);
    // The leader before it last renewed at 10:01:30: 90 s with no controller.
    assert_eq!(
        document["leaderChanges"],
        serde_json::json!([{
            "at": "2026-11-29T10:03:00Z",
            "holder": "kcm-2_9c1e",
            "previousRenewed": "2026-11-29T10:01:30Z",
            "withoutLeaderSeconds": 90.0
        }])
    );
    assert_eq!(
        document["gaps"],
        serde_json::json!([{"from": "2026-11-29T10:06:00Z", "to": "2026-11-29T10:06:20.05Z"}])
    );
    let counts = &document["counts"];
    assert_eq!(
        (counts["onTime"].as_u64(), counts["late"].as_u64(), counts["notDeleted"].as_u64()),
        (Some(2), Some(1), Some(1))
    );
    // -n keeps one namespace's pods; the DaemonSet's namespace has none.
    let ops = json(&run(&["review", INCIDENT, "-n", "ops", "-o", "json"], None));
    assert_eq!(ops["pods"], serde_json::json!([]));
}

#[test]
fn a_line_that_does_not_read_is_one_error_naming_its_file_and_line() {
    let dir = scratch("review-bad-line");
    let path = dir.join("record-1.jsonl");
    let text =
        "{\"at\":\"2026-11-29T10:00:00Z\",\"record\":\"taint-evict/v1\"}\n{\"at\":\"yesterday\",\"list\":\"nodes\"}\n";
    std::fs::write(&path, text).expect("a scratch record");
    let out = run(&["review", dir.to_str().expect("a UTF-8 path")], None);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let first = out.stderr.lines().next().unwrap_or_default();
    assert_eq!(first, format!("error: {}:2: at: not an RFC 3339 time: \"yesterday\"", path.display()));
    assert!(out.stderr.contains("hint: a record is JSON lines"), "{}", out.stderr);
    // A directory with no record in it says so.
    let empty = scratch("review-empty");
    let out = run(&["review", empty.to_str().expect("a UTF-8 path")], None);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("no record in it"), "{}", out.stderr);
}
