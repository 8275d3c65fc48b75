//! `audit`: every zone's and every node's outage, each as `plan --down` predicts it, and the rules
//! on tolerations (docs/audit.md).

use serde_json::Value;

use crate::util::{Run, data, read_json, run};

const NOW: &str = "2026-11-22T10:00:00Z";
const DUMP: &str = "examples/two-zones.json";

fn audit(extra: &[&str]) -> Run {
    run(&[&["audit", "-f", DUMP, "--now", NOW][..], extra].concat(), None)
}

/// An audit's `-o json` document, the audit having passed.
pub(crate) fn json(run: &Run) -> Value {
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

/// The worked example's dump without its ReplicaSets and its pods' labels, each item passed
/// through `edit`, then `extra` items added.
fn example_with(edit: impl Fn(&mut Value), extra: &[Value]) -> Vec<u8> {
    let mut dump = read_json(&crate::util::repo().join(DUMP));
    let items = dump["items"].as_array_mut().expect("items");
    items.retain(|item| item["kind"] != "ReplicaSet");
    for pod in items.iter_mut().filter(|item| item["kind"] == "Pod") {
        pod["metadata"].as_object_mut().expect("metadata").remove("labels");
    }
    items.iter_mut().for_each(edit);
    items.extend(extra.iter().cloned());
    dump.to_string().into_bytes()
}

/// A ReplicaSet or a Job of namespace `shop` (its `uid` as the example's pods name it), owned by
/// `owner` (`kind`, `name`) when given.
fn workload(kind: &str, name: &str, uid: &str, owner: Option<(&str, &str)>) -> Value {
    let mut object = serde_json::json!({"apiVersion": "apps/v1", "kind": kind,
        "metadata": {"name": name, "namespace": "shop", "uid": uid}, "spec": {"replicas": 1}});
    if let Some((kind, name)) = owner {
        object["metadata"]["ownerReferences"] = serde_json::json!([{"apiVersion": "apps/v1", "kind": kind,
            "name": name, "uid": format!("{name}-uid"), "controller": true}]);
    }
    object
}

/// The uid the example's pods name for their controller `name`.
fn owner_uid(name: &str) -> String {
    let dump = read_json(&crate::util::repo().join(DUMP));
    let pods = dump["items"].as_array().expect("items").iter().filter(|item| item["kind"] == "Pod");
    let refs = pods.flat_map(|pod| pod["metadata"]["ownerReferences"].as_array().cloned().unwrap_or_default());
    let found = refs.into_iter().find(|r| r["name"] == name).expect("an owner of that name");
    found["uid"].as_str().expect("a uid").to_owned()
}

fn audit_of(dump: &[u8], extra: &[&str]) -> Run {
    let result = run(&[&["audit", "-f", "-", "--now", NOW][..], extra].concat(), Some(dump));
    assert_eq!(result.code, 0, "{}", result.stderr);
    result
}

#[test]
fn a_replica_set_s_owner_is_read_from_the_dump_when_it_holds_the_replica_set() {
    // Fixed: the fix named "ReplicaSet cache-6c9d4's Deployment" when the dump held the ReplicaSet
    // and said no Deployment owns it.
    let (cache, api) = (owner_uid("cache-6c9d4"), owner_uid("api-7f4b9"));
    let dump = example_with(
        |_| {},
        &[
            workload("ReplicaSet", "cache-6c9d4", &cache, None),
            workload("ReplicaSet", "api-7f4b9", &api, Some(("Deployment", "api"))),
        ],
    );
    let result = audit_of(&dump, &[]);
    assert!(
        result.stdout.contains(
            "| run 2 replicas or more and spread them, in the pod template of ReplicaSet cache-6c9d4 (no object owns \
             it):\n"
        ),
        "{}",
        result.stdout
    );
    assert!(
        result.stdout.contains(
            "| set tolerations[1]'s tolerationSeconds (300 is the default), in the pod template of Deployment api, \
             which makes ReplicaSet api-7f4b9:\n"
        ),
        "{}",
        result.stdout
    );
    assert!(!result.stdout.contains("if it has one"), "{}", result.stdout);
    // Another ReplicaSet under the name (another uid) says nothing of the pods' one.
    let dump = example_with(|_| {}, &[workload("ReplicaSet", "cache-6c9d4", "another", None)]);
    let result = audit_of(&dump, &[]);
    assert!(
        result
            .stdout
            .contains("in the pod template of ReplicaSet cache-6c9d4's Deployment, if it has one (else its own):"),
        "{}",
        result.stdout
    );
}

#[test]
fn a_job_s_cron_job_is_named_where_its_pods_are_made() {
    // A CronJob's Job is made again from the CronJob: editing the Job changes nothing to come.
    let dump = example_with(
        |item| {
            if item["metadata"]["name"] == "cache-6c9d4-x7" {
                item["metadata"]["ownerReferences"] = serde_json::json!([{"apiVersion": "batch/v1", "kind": "Job",
                    "name": "nightly-29001", "uid": "job-uid", "controller": true}]);
            }
        },
        &[workload("Job", "nightly-29001", "job-uid", Some(("CronJob", "nightly")))],
    );
    let result = audit_of(&dump, &[]);
    assert!(
        result.stdout.contains(
            "in the pod template of CronJob nightly (spec.jobTemplate.spec.template), which makes Job nightly-29001:\n"
        ),
        "{}",
        result.stdout
    );
}

#[test]
fn the_spread_fix_selects_the_pods_by_the_labels_they_share_not_by_an_empty_selector() {
    // Fixed: the fix pasted `matchLabels: {}`, which selects every pod of the namespace.
    let dump = example_with(
        |item| {
            let name = item["metadata"]["name"].as_str().unwrap_or_default().to_owned();
            let labels = if name.starts_with("cache-") {
                serde_json::json!({"app": "cache", "tier": "1", "pod-template-hash": "6c9d4"})
            } else if name.starts_with("db-") {
                serde_json::json!({"app": "db", "controller-revision-hash": "db-7d9", "role": name,
                    "statefulset.kubernetes.io/pod-name": name, "apps.kubernetes.io/pod-index": name.trim_start_matches("db-")})
            } else {
                return;
            };
            item["metadata"]["labels"] = labels;
        },
        &[],
    );
    let result = audit_of(&dump, &[]);
    // Each pod's own labels (a number quoted, as YAML would read it as one), none a controller sets.
    let cache = "|   labelSelector:\n  |     matchLabels:  # the labels its pods share\n  |       app: cache\n  |       tier: \"1\"\n\n";
    assert!(result.stdout.contains(cache), "{}", result.stdout);
    // The labels both replicas carry: `role` differs between them.
    let db = "|   labelSelector:\n  |     matchLabels:  # the labels its pods share\n  |       app: db\n\n";
    assert!(result.stdout.contains(db), "{}", result.stdout);
    assert!(!result.stdout.contains("matchLabels: {}"), "{}", result.stdout);
    // Pods with no label of their own: a placeholder the API server refuses, never an empty selector.
    let bare = audit_of(&example_with(|_| {}, &[]), &[]);
    assert!(!bare.stdout.contains("matchLabels: {}"), "{}", bare.stdout);
    assert!(bare.stdout.contains("|       <key>: <value>  # its pods share no label of their own"), "{}", bare.stdout);
}

#[test]
fn every_name_and_label_in_a_fix_is_escaped_as_the_table_escapes_names() {
    // A raw newline in an owner's owner, or in a label, must not split the fix's line.
    let api = owner_uid("api-7f4b9");
    let cache = owner_uid("cache-6c9d4");
    let dump = example_with(
        |item| {
            if item["metadata"]["name"] == "cache-6c9d4-x7" {
                item["metadata"]["labels"] = serde_json::json!({"app": "ca\nche", "x\ty": "z"});
            }
        },
        &[
            workload("ReplicaSet", "api-7f4b9", &api, Some(("Deploy\nment", "a\npi\u{1b}[2J"))),
            workload("ReplicaSet", "cache-6c9d4", &cache, None),
        ],
    );
    let result = audit_of(&dump, &[]);
    assert!(
        result
            .stdout
            .contains("in the pod template of Deploy\\nment a\\npi\\u{1b}[2J, which makes ReplicaSet api-7f4b9:\n"),
        "{}",
        result.stdout
    );
    assert!(result.stdout.contains("|       app: \"ca\\nche\"\n  |       \"x\\ty\": z\n"), "{}", result.stdout);
    assert!(!result.stdout.contains('\u{1b}'), "{}", result.stdout);
    // Every line of the output is a line of the table: a finding's, its message's, its fix's, or
    // an outage's.
    for line in result.stdout.lines() {
        assert!(
            line.is_empty()
                || line.starts_with("  ")
                || ["high ", "medium ", "low ", "zone ", "node ", "6 findings", "7 outages"]
                    .iter()
                    .any(|s| line.starts_with(s)),
            "a line split: {line:?}"
        );
    }
    let json = audit_of(&dump, &["-o", "json"]);
    let document: Value = serde_json::from_str(&json.stdout).expect("JSON");
    let fixes: Vec<&str> =
        document["findings"].as_array().expect("findings").iter().filter_map(|f| f["fix"].as_str()).collect();
    assert!(fixes.iter().any(|fix| fix.contains("Deploy\\nment a\\npi\\u{1b}[2J, which makes")), "{fixes:?}");
    assert!(fixes.iter().all(|fix| !fix.contains('\u{1b}')), "{fixes:?}");
}

/// Three zones of three nodes, none with status (nothing is predicted), and StatefulSet `db`'s three
/// replicas all in zone `za`, as a dump says them.
fn three_zones_one_owner_in_one() -> Vec<u8> {
    let mut items = Vec::new();
    for zone in ["za", "zb", "zc"] {
        for i in 1..=3 {
            items.push(serde_json::json!({"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": format!("{zone}-{i}"),
                             "labels": {"topology.kubernetes.io/region": "r", "topology.kubernetes.io/zone": zone}}}));
        }
    }
    for i in 0..3 {
        items.push(serde_json::json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": format!("db-{i}"), "namespace": "shop", "uid": format!("uid-db-{i}"),
                         "labels": {"app": "db"},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db",
                                              "uid": "uid-db", "controller": true}]},
            "spec": {"nodeName": format!("za-{}", i + 1), "containers": [{"name": "c", "image": "db"}]},
            "status": {"phase": "Running"}}));
    }
    serde_json::to_vec(&serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items})).expect("JSON")
}

#[test]
fn every_replica_in_one_zone_is_a_finding_from_placement_alone_when_no_outage_is_predicted() {
    let dump = three_zones_one_owner_in_one();
    let args = ["audit", "-f", "-", "--now", NOW, "--fail-on", "high"];
    let result = run(&args, Some(&dump));
    assert_eq!(result.code, 3, "a finding --fail-on high sees: {}\n{}", result.stdout, result.stderr);
    assert!(result.stdout.starts_with("1 finding: 1 high, 0 medium, 0 low\n"), "{}", result.stdout);
    assert!(result.stdout.contains("high  replicas-in-one-zone  shop/StatefulSet/db (3 pods)"), "{}", result.stdout);
    assert!(
        result.stdout.contains("all 3 running replicas run on zone za (from placement, no outage predicted says so)"),
        "{}",
        result.stdout
    );
    assert!(result.stdout.contains("topologyKey: topology.kubernetes.io/zone"), "{}", result.stdout);
    let document: Value =
        serde_json::from_str(&run(&["audit", "-f", "-", "--now", NOW, "-o", "json"], Some(&dump)).stdout)
            .expect("JSON");
    assert_eq!(findings(&document), ["replicas-in-one-zone high shop/StatefulSet/db"]);
}
