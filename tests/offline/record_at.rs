//! `plan`, `explain` and `audit` reading a record `--at` an instant: the state it holds then, evaluated
//! then, by the same engine `review` replays it with (docs/review.md, "The state at an instant").

use serde_json::Value;

use super::audit::json;
use crate::util::{run, scratch};

const INCIDENT: &str = "tests/data/records/incident";

/// Each pod of the plan as `namespace/name verdict deadline`.
fn deadlines(plan: &Value) -> Vec<String> {
    let nodes = plan["nodes"].as_array().expect("nodes");
    let pods = nodes.iter().flat_map(|node| node["pods"].as_array().expect("pods"));
    pods.map(|p| {
        let field = |name: &str| p[name].as_str().unwrap_or("-").to_owned();
        let verdict = if p["terminating"] == true { "terminating".to_owned() } else { field("verdict") };
        format!("{}/{} {verdict} {}", field("namespace"), field("name"), field("evictAt"))
    })
    .collect()
}

#[test]
fn a_plan_at_an_instant_of_the_record_counts_down_from_then_and_agrees_with_the_review() {
    // Checked by hand against the record: node-a is tainted `unreachable` at 10:00:40 (its
    // `timeAdded`). At 10:01:00 nothing is deleted yet: batch (30 s) is due 10:01:10, web-1 (60 s)
    // 10:01:40, cache-0 (250 s) 10:04:50, api-0 (300 s) 10:05:40; the DaemonSet's agent never.
    let early = json(&run(&["plan", "-f", INCIDENT, "--at", "2026-11-29T10:01:00Z", "-o", "json"], None));
    assert_eq!(early["now"], "2026-11-29T10:01:00Z");
    assert_eq!(
        deadlines(&early),
        [
            "shop/batch evict-at 2026-11-29T10:01:10Z",
            "shop/web-1 evict-at 2026-11-29T10:01:40Z",
            "shop/cache-0 evict-at 2026-11-29T10:04:50Z",
            "shop/api-0 evict-at 2026-11-29T10:05:40Z",
            "ops/agent-x1 never -",
        ]
    );
    // At 10:04:00 batch and web-1 are terminating (deleted at 10:01:55 and 10:01:40) and a new leader
    // took the controller's Lease at 10:03:00: every countdown started again from then, cache-0 due
    // at 10:07:10 and api-0 at 10:08:00, the instants the review of the same record says they were
    // due.
    let later = json(&run(&["plan", "-f", INCIDENT, "--at", "2026-11-29T10:04:00Z", "-o", "json"], None));
    let later = deadlines(&later);
    assert_eq!(
        later,
        [
            "shop/batch terminating 2026-11-29T10:01:10Z",
            "shop/web-1 terminating 2026-11-29T10:01:40Z",
            "shop/cache-0 evict-at 2026-11-29T10:07:10Z",
            "shop/api-0 evict-at 2026-11-29T10:08:00Z",
            "ops/agent-x1 never -",
        ]
    );
    let review = json(&run(&["review", INCIDENT, "-o", "json"], None));
    for name in ["cache-0", "api-0"] {
        let reviewed = review["pods"].as_array().expect("pods").iter().find(|p| p["name"] == name).expect("reviewed");
        let due = reviewed["due"].as_str().expect("due");
        assert!(later.iter().any(|line| line == &format!("shop/{name} evict-at {due}")), "{name} due {due}: {later:?}");
    }
}

#[test]
fn explain_and_audit_read_a_record_at_an_instant_and_its_last_line_without_one() {
    let explained = run(&["explain", "-n", "shop", "api-0", "-f", INCIDENT, "--at", "2026-11-29T10:04:00Z"], None);
    assert_eq!(explained.code, 0, "{}", explained.stderr);
    assert!(explained.stdout.contains("Verdict: evict-at 2026-11-29T10:08:00Z (in 4m)"), "{}", explained.stdout);
    assert!(
        explained.stdout.contains("Clock started: 2026-11-29T10:03:00Z (controller-restart)"),
        "{}",
        explained.stdout
    );
    // A record (a directory of JSON lines) is not taken for rendered manifests: node-a's outage at
    // 10:04:00 leaves the StatefulSet cache, whose one replica is there, with none by 10:07:10.
    let audited = json(&run(&["audit", "-f", INCIDENT, "--at", "2026-11-29T10:04:00Z", "-o", "json"], None));
    let scenarios = audited["scenarios"].as_array().expect("scenarios");
    let zone = scenarios.iter().find(|s| s["down"]["zone"] == "eu-west-1a").expect("zone eu-west-1a's outage");
    let cache = zone["owners"].as_array().expect("owners").iter().find(|o| o["name"] == "cache").expect("cache");
    assert_eq!(
        (&cache["noneLeft"], &cache["lastDeletion"]),
        (&Value::from(true), &Value::from("2026-11-29T10:07:10Z"))
    );
    // Without --at: the state at the record's last line (10:10:00, the recorder stopped), evaluated
    // then: api-0 is terminating, cache-0 overdue.
    let end = json(&run(&["plan", "-f", INCIDENT, "-o", "json"], None));
    assert_eq!(end["now"], "2026-11-29T10:10:00Z");
    assert!(deadlines(&end).contains(&"shop/api-0 terminating 2026-11-29T10:08:00Z".to_owned()));
}

#[test]
fn an_instant_in_a_gap_is_said_and_one_outside_the_record_or_a_dump_read_at_one_is_refused() {
    // The pod watch broke at 10:06:00 and listed again at 10:06:20: at 10:06:10 the pods are as seen
    // before, and the answer says so.
    let in_gap = run(&["plan", "-f", INCIDENT, "--at", "2026-11-29T10:06:10Z"], None);
    assert_eq!(in_gap.code, 0, "{}", in_gap.stderr);
    assert_eq!(
        in_gap.stderr.lines().next(),
        Some(
            "warning: the record saw no pods from 2026-11-29T10:06:00Z to 2026-11-29T10:06:10Z: the state is as it \
             last saw it"
        )
    );
    let refused = [
        (
            vec!["plan", "-f", INCIDENT, "--at", "2026-11-29T09:00:00Z"],
            "error: tests/data/records/incident: 2026-11-29T09:00:00Z is before the record's first complete lists of \
             nodes and pods: nothing is known of then",
        ),
        (
            vec!["plan", "-f", INCIDENT, "--at", "2026-11-29T11:00:00Z"],
            "error: tests/data/records/incident: 2026-11-29T11:00:00Z is after the record's last line \
             (2026-11-29T10:10:00Z): what came after is not known",
        ),
        (
            vec!["plan", "-f", INCIDENT, "--now", "2026-11-29T10:04:00Z"],
            "error: tests/data/records/incident is a record: read it --at an instant (its state then, evaluated \
             then), not --now",
        ),
        (
            vec!["plan", "-f", "tests/data/fixtures/real-apiserver-1.29.json", "--at", "2026-11-29T10:04:00Z"],
            "error: --at reads a record (what `kubectl taint-evict record` wrote): tests/data/fixtures/real-apiserver-1.29.json is not one; a \
             dump is one instant, evaluated --now",
        ),
    ];
    for (args, first) in refused {
        let refused = run(&args, None);
        assert_ne!(refused.code, 0, "{args:?}");
        assert_eq!(refused.stderr.lines().next(), Some(first), "{args:?}: {}", refused.stderr);
        assert!(refused.stdout.is_empty(), "{args:?}");
    }
    // --at without -f: clap's own error.
    assert_eq!(run(&["plan", "--at", "2026-11-29T10:04:00Z"], None).code, 2);
    // A record whose line does not read: its file and line.
    let dir = scratch("record-at-bad");
    let bad = dir.join("record.jsonl");
    std::fs::write(
        &bad,
        "{\"at\":\"2026-11-29T10:00:00Z\",\"record\":\"taint-evict/v1\"}\n{\"at\":\"2026-11-29T10:00:01Z\",\"node\":[]}\n",
    )
    .expect("written");
    let bad = bad.to_string_lossy().into_owned();
    let read = run(&["plan", "-f", &bad, "--at", "2026-11-29T10:00:01Z"], None);
    assert_eq!(read.code, 1);
    assert!(read.stderr.starts_with(&format!("error: {bad}:2: node: ")), "{}", read.stderr);
}

#[test]
fn a_what_if_on_a_record_starts_at_its_instant() {
    // `--down node-b` at 10:00:30: node-b's kubelet stops then, not at this machine's time; its
    // `unreachable` taint is predicted after it (the grace period from its last heartbeat, 09:59:50,
    // or later), and api-1, tolerating it 300 s, is due 300 s after the taint's earliest instant.
    let run = run(&["plan", "-f", INCIDENT, "--at", "2026-11-29T10:00:30Z", "--down", "node-b", "-o", "json"], None);
    let plan = json(&run);
    assert_eq!(plan["now"], "2026-11-29T10:00:30Z");
    assert_eq!(plan["whatIf"]["down"], serde_json::json!(["node-b"]));
    let nodes = plan["nodes"].as_array().expect("nodes");
    let node_b = nodes.iter().find(|node| node["name"] == "node-b").expect("node-b");
    let taint = &node_b["predictedTaint"];
    assert_eq!(taint["key"], "node.kubernetes.io/unreachable", "{node_b}");
    let earliest = crate::util::instant(taint["earliest"].as_str().expect("earliest"));
    assert!(earliest > crate::util::instant("2026-11-29T10:00:30Z"), "{node_b}");
    let api = node_b["pods"].as_array().expect("pods").iter().find(|p| p["name"] == "api-1").expect("api-1");
    let due = crate::util::instant(api["evictAt"].as_str().expect("evictAt"));
    assert_eq!(due - earliest, 300 * 1_000_000_000, "{api}");
}
