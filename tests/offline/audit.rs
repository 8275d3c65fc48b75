//! `audit`: every zone's and every node's outage, each as `plan --down` predicts it, and the rules
//! on tolerations (docs/audit.md).

use serde_json::Value;

use crate::util::{Run, data, read_json, run};

const NOW: &str = "2026-11-22T10:00:00Z";
const DUMP: &str = "examples/two-zones.json";

fn audit(extra: &[&str]) -> Run {
    run(&[&["audit", "-f", DUMP, "--now", NOW][..], extra].concat(), None)
}

fn json(run: &Run) -> Value {
    assert_eq!(run.code, 0, "{}", run.stderr);
    serde_json::from_str(&run.stdout).expect("audit -o json prints JSON")
}

/// Each finding as `rule severity namespace/kind/name`.
fn findings(document: &Value) -> Vec<String> {
    let findings = document["findings"].as_array().expect("findings");
    findings
        .iter()
        .map(|f| {
            let field = |name: &str| f[name].as_str().unwrap_or_default().to_owned();
            format!(
                "{} {} {}/{}/{}",
                field("rule"),
                field("severity"),
                field("namespace"),
                field("kind"),
                field("name")
            )
        })
        .collect()
}

#[test]
fn every_zone_and_node_is_an_outage_predicted_as_plan_down_predicts_it() {
    let document = json(&audit(&["-o", "json"]));
    assert_eq!(document["kind"], "EvictionAudit");
    let downs: Vec<String> =
        document["scenarios"].as_array().expect("scenarios").iter().map(|s| s["down"].to_string()).collect();
    let expected = [
        r#"{"zone":"za"}"#,
        r#"{"zone":"zb"}"#,
        r#"{"node":"za-1"}"#,
        r#"{"node":"za-2"}"#,
        r#"{"node":"za-3"}"#,
        r#"{"node":"zb-1"}"#,
        r#"{"node":"zb-2"}"#,
    ];
    assert_eq!(downs, expected);
    // Zone za's outage is `plan --down-selector` of its nodes, owner for owner and window for window.
    let plan = json(&run(
        &["plan", "-f", DUMP, "--now", NOW, "-o", "json", "--down-selector", "topology.kubernetes.io/zone=za"],
        None,
    ));
    assert_eq!(document["scenarios"][0]["owners"], plan["owners"]);
    let plan_nodes: Vec<(&Value, &Value)> =
        plan["nodes"].as_array().expect("nodes").iter().map(|n| (&n["name"], &n["predictedTaint"])).collect();
    let audit_nodes: Vec<(&Value, &Value)> = document["scenarios"][0]["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .map(|n| (&n["name"], &n["predictedTaint"]))
        .collect();
    assert_eq!(audit_nodes, plan_nodes);
    // So is node zb-2's, by `--down`.
    let plan = json(&run(&["plan", "-f", DUMP, "--now", NOW, "-o", "json", "--down", "zb-2"], None));
    assert_eq!(document["scenarios"][6]["owners"], plan["owners"]);
    assert_eq!(
        findings(&document),
        [
            "loses-every-replica high shop/ReplicaSet/cache-6c9d4",
            "loses-every-replica high shop/StatefulSet/db",
            "tolerates-node-loss-forever high batch/StatefulSet/ledger",
            "deleted-on-a-blip medium shop/ReplicaSet/api-7f4b9",
            "bare-pod-deleted-at-once medium ops/Pod/debug",
            "tolerates-every-taint low kube-system/DaemonSet/node-agent",
        ]
    );
    // `db` goes with its zone; the last of its replicas when the zone's last node is tainted, 300 s on.
    let db = &document["findings"][1];
    assert_eq!(
        (db["scenario"].to_string(), &db["pods"]),
        (r#"{"zone":"za"}"#.to_owned(), &serde_json::json!(["db-0", "db-1"]))
    );
    let db_loss = &document["scenarios"][0]["owners"][0];
    assert_eq!(
        (&db_loss["name"], &db_loss["noneLeft"], &db["at"]),
        (&Value::from("db"), &Value::from(true), &db_loss["lastDeletion"])
    );
}

#[test]
fn namespace_and_selector_keep_their_findings_and_outages() {
    let document = json(&audit(&["-o", "json", "-n", "shop", "-l", "topology.kubernetes.io/zone=zb"]));
    let downs: Vec<String> =
        document["scenarios"].as_array().expect("scenarios").iter().map(|s| s["down"].to_string()).collect();
    assert_eq!(downs, [r#"{"zone":"zb"}"#, r#"{"node":"zb-1"}"#, r#"{"node":"zb-2"}"#]);
    assert_eq!(
        findings(&document),
        ["loses-every-replica high shop/ReplicaSet/cache-6c9d4", "deleted-on-a-blip medium shop/ReplicaSet/api-7f4b9"]
    );
    let none = audit(&["-l", "topology.kubernetes.io/zone=zc"]);
    assert_eq!(none.code, 1);
    assert!(none.stderr.starts_with("error: "), "{}", none.stderr);
}

#[test]
fn fail_on_ends_with_3_only_for_findings_at_or_above_it() {
    let high = audit(&["--summary", "--fail-on", "high"]);
    assert_eq!(high.code, 3, "{}", high.stderr);
    assert!(high.stdout.starts_with("6 findings: 3 high, 2 medium, 1 low\n"), "{}", high.stdout);
    assert_eq!(high.stderr, "error: 3 finding(s) at or above high (--fail-on high)\n");
    // `ops` holds one medium finding: not high, but medium.
    assert_eq!(audit(&["-n", "ops", "--fail-on", "high"]).code, 0);
    assert_eq!(audit(&["-n", "ops", "--fail-on", "medium"]).code, 3);
    assert_eq!(audit(&["-n", "kube-system", "--fail-on", "medium"]).code, 0);
    assert_eq!(audit(&["-n", "kube-system", "--fail-on", "low"]).code, 3);
    assert_eq!(audit(&[]).code, 0, "without --fail-on, findings are not a failure");
}

#[test]
fn summary_is_for_the_table() {
    let refused = audit(&["--summary", "-o", "json"]);
    assert_eq!(refused.code, 2);
    assert_eq!(refused.stderr, "error: --summary is for the table, not -o json or yaml\n");
}

#[test]
fn a_dump_without_node_status_audits_the_tolerations_and_says_no_outage_is_predicted() {
    // A conformance vector: nodes without status, pods with a bare one among them.
    let case = read_json(&data("vectors/scenario-bound-after-taint.json"));
    let cluster = serde_json::to_vec(&case["cluster"]).expect("cluster");
    let result = run(&["audit", "-f", "-", "--now", NOW, "-o", "json"], Some(&cluster));
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert!(
        result.stderr.starts_with("warning: the input has no node status: no outage is predicted"),
        "{}",
        result.stderr
    );
    let document: Value = serde_json::from_str(&result.stdout).expect("JSON");
    assert_eq!(document["scenarios"], serde_json::json!([]));
}

#[test]
fn an_owner_name_in_a_fix_is_escaped_as_in_the_finding_line() {
    // Fixed: a raw newline in the owner's name split the fix's line.
    let dump = br#"{"kind":"List","items":[
{"kind":"Node","metadata":{"name":"n1"}},
{"kind":"Pod","metadata":{"name":"p","namespace":"web","uid":"u1","ownerReferences":[{"apiVersion":"apps/v1","kind":"StatefulSet","name":"db\nx","uid":"o1","controller":true}]},
 "spec":{"nodeName":"n1","tolerations":[{"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute"}]}}]}"#;
    let result = run(&["audit", "-f", "-", "--now", NOW], Some(dump));
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert!(result.stdout.contains("web/StatefulSet/db\\nx (1 pod)"), "{}", result.stdout);
    assert!(
        result.stdout.contains("| set tolerations[0]'s tolerationSeconds (300 is the default), in the pod template of StatefulSet db\\nx:\n"),
        "{}",
        result.stdout
    );
    let json = run(&["audit", "-f", "-", "--now", NOW, "-o", "json"], Some(dump));
    let document: Value = serde_json::from_str(&json.stdout).expect("JSON");
    let fix = document["findings"][0]["fix"].as_str().unwrap_or_default();
    assert!(fix.contains("StatefulSet db\\nx:"), "{fix}");
}

#[test]
fn a_replica_set_s_deployment_is_not_claimed_from_its_name() {
    // Fixed: the fix named "ReplicaSet cache-6c9d4's Deployment" for a ReplicaSet no Deployment owns:
    // the owner was guessed from the name's hash suffix.
    let dump = br#"{"kind":"List","items":[
{"kind":"Node","metadata":{"name":"n1"}},
{"kind":"Pod","metadata":{"name":"p","namespace":"web","uid":"u1","ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"cache-6c9d4","uid":"o1","controller":true}]},
 "spec":{"nodeName":"n1","tolerations":[{"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute"}]}}]}"#;
    let result = run(&["audit", "-f", "-", "--now", NOW], Some(dump));
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert!(
        result
            .stdout
            .contains("in the pod template of ReplicaSet cache-6c9d4's Deployment, if it has one (else its own):"),
        "{}",
        result.stdout
    );
}
