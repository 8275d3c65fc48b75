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

const ZONES: &str = "tests/data/records/zones";

#[test]
fn each_node_taint_is_judged_against_the_window_foreseen_when_its_node_went_silent() {
    let out = run(&["review", ZONES, "--large-cluster-size-threshold", "4", "-o", "json"], None);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let document = json(&out);
    // Checked by hand against the record (docs/review.md, "Node taints"). The controller manager's
    // leader took its Lease at 11:00:00: a pass every 5 s after 0.05-0.5 s of sync, each up to 3 ms.
    // a-1 last renews at 12:00:30, silent from 12:00:42: the pass after the renewal, 40 s of grace,
    // the next pass: 12:01:15.066-12:01:16.238; tainted at 12:01:15.6, within. c-4 the same 10 s
    // earlier (renewal 12:00:20), tainted at 12:01:05.6, within. a-2 is tainted while Ready=True:
    // by hand, not judged. Zone eu-west-1c has six nodes, three down and tainted before the record:
    // with c-4 four of six are not ready (at least 0.55, more than 2): partially disrupted, and
    // larger than the threshold of 4, so one taint each 100 s; c-5 (last renewal 12:01:00) waits
    // for the token 100 s after c-4's taint (timeAdded 12:01:05, to the second): 12:02:44.98 to
    // 12:02:46.131, tainted at 12:02:45.6, the zone named. b-1 last renews at 12:06:10: due
    // 12:06:55.07-12:06:56.322, while the leader, last renewed at 12:06:40 for 15 s, was gone; the
    // new one (12:08:00) starts its grace again and taints it at 12:08:45.6: 109.278 s late.
    let taints: Vec<String> = document["nodeTaints"]
        .as_array()
        .expect("nodeTaints")
        .iter()
        .map(|t| {
            let field = |name: &str| t[name].as_str().unwrap_or("-").to_owned();
            let expected = &t["expected"];
            let edge = |name: &str| expected[name].as_str().unwrap_or("-").to_owned();
            format!("{} {} {} {}-{}", field("node"), field("verdict"), field("added"), edge("earliest"), edge("latest"))
        })
        .collect();
    assert_eq!(
        taints,
        vec![
            "c-4 within 2026-11-29T12:01:05.6Z 2026-11-29T12:01:05.066Z-2026-11-29T12:01:06.232Z",
            "a-1 within 2026-11-29T12:01:15.6Z 2026-11-29T12:01:15.066Z-2026-11-29T12:01:16.238Z",
            "a-2 by-hand 2026-11-29T12:02:30.2Z ---",
            "c-5 within 2026-11-29T12:02:45.6Z 2026-11-29T12:02:44.98Z-2026-11-29T12:02:46.131Z",
            "b-1 late 2026-11-29T12:08:45.6Z 2026-11-29T12:06:55.07Z-2026-11-29T12:06:56.322Z",
        ]
    );
    let c5 = &document["nodeTaints"][3];
    assert_eq!(
        c5["zoneState"],
        serde_json::json!({"zone": "eu-west-1c", "state": "PartialDisruption", "notReady": 5, "nodes": 6,
                           "ratePerSecond": 0.01})
    );
    assert_eq!(c5["expected"]["foreseenAt"], "2026-11-29T12:01:12Z", "its last renewal and 12 s");
    let b1 = &document["nodeTaints"][4];
    assert_eq!(b1["offBySeconds"], 109.278);
    assert_eq!(
        b1["restarts"],
        serde_json::json!([{"at": "2026-11-29T12:08:00Z", "previousRenewed": "2026-11-29T12:06:40Z"}])
    );
    assert_eq!(b1["zoneState"], Value::Null, "zone b was normal: not what made it wait");
    assert_eq!(document["nodeTaints"][0]["zoneState"], Value::Null, "c-4 did not wait");
    let counts = &document["taintCounts"];
    assert_eq!(
        (counts["within"].as_u64(), counts["late"].as_u64(), counts["byHand"].as_u64()),
        (Some(3), Some(1), Some(1))
    );
    // The threshold given, the rest assumed, said in one line on stderr as plan says it.
    assert_eq!(document["controllerSettings"]["largeClusterSizeThreshold"]["from"], "flag");
    assert_eq!(document["nodeLeaseRenewals"], 69);
    let warnings: Vec<&str> = out.stderr.lines().filter(|l| l.starts_with("warning:")).collect();
    assert_eq!(warnings.len(), 1, "{}", out.stderr);
    assert!(warnings[0].contains("settings are assumed at kube-controller-manager 1.29's defaults"), "{}", out.stderr);
    assert!(!warnings[0].contains("--large-cluster-size-threshold"), "given, not assumed: {}", out.stderr);
    // The settings from a file, as plan takes them: nothing said on stderr. Its threshold of 50 makes
    // zone eu-west-1c small: partially disrupted once c-4 is marked, it gets no taint (rate 0), so
    // c-4's and c-5's taints are held back when foreseen, and not judged.
    let dir = scratch("review-controller-settings");
    let file = dir.join("settings.yaml");
    std::fs::write(&file, "large-cluster-size-threshold: 50\n").expect("a scratch file");
    let given = run(&["review", ZONES, "--controller-settings", file.to_str().expect("UTF-8"), "-o", "json"], None);
    let small = json(&given);
    assert_eq!(small["settingsAssumed"], Value::Null, "{}", given.stderr);
    assert!(!given.stderr.contains("warning:"), "{}", given.stderr);
    assert_eq!(small["controllerSettings"]["largeClusterSizeThreshold"]["from"], "file");
    let held: Vec<(&str, &str, &str)> = small["nodeTaints"]
        .as_array()
        .expect("nodeTaints")
        .iter()
        .filter_map(|t| Some((t["node"].as_str()?, t["verdict"].as_str()?, t["heldReason"].as_str()?)))
        .collect();
    assert_eq!(held, vec![("c-4", "held", "partial-disruption"), ("c-5", "held", "partial-disruption")]);
}

#[test]
fn the_incidents_taint_is_judged_from_its_status_heartbeat_for_want_of_a_node_lease() {
    let out = run(&["review", INCIDENT, "-o", "yaml"], None);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // node-a's status heartbeat is 09:59:50 (to the second), no Lease renewal in the record: silent
    // from 10:00:02; the leader's term from 08:00:00 puts the pass after the heartbeat at
    // 09:59:50.1-09:59:56.1, 40 s of grace and a pass: 10:00:35.102-10:00:41.136. Tainted when the
    // record saw it, 10:00:40.005: within. node-b, never written again, was Ready to the end: heard.
    assert!(out.stdout.contains("nodeTaints:\n- node: node-a\n  zone: eu-west-1a\n"), "{}", out.stdout);
    assert!(out.stdout.contains("  verdict: within\n  added: \"2026-11-29T10:00:40.005Z\"\n"), "{}", out.stdout);
    assert!(out.stdout.contains("  withoutLease: true\n"), "{}", out.stdout);
    assert!(
        out.stdout.contains("    earliest: \"2026-11-29T10:00:35.102Z\"\n    latest: \"2026-11-29T10:00:41.136Z\"\n"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("nodeLeaseRenewals: 0\n"), "{}", out.stdout);
    assert!(out.stderr.contains("warning: the record holds no node Lease renewal"), "{}", out.stderr);
}
