//! `plan --down`: what the node lifecycle controller and the taint manager would do if these
//! nodes' kubelets stopped heartbeating now (docs/game-day.md).

use serde_json::Value;

use crate::util::{instant, run};

const NOW: &str = "2026-11-22T10:00:00Z";

fn plan(extra: &[&str]) -> crate::util::Run {
    run(&[&["plan", "-f", "examples/incident.json", "--now", NOW, "-o", "json"][..], extra].concat(), None)
}

#[test]
fn a_healthy_node_going_down_now_is_predicted_tainted_and_its_pods_deleted_after() {
    let before = plan(&[]);
    let plan_before: Value = serde_json::from_str(&before.stdout).expect("JSON");
    let shown = |plan: &Value| -> Vec<String> {
        plan["nodes"].as_array().expect("nodes").iter().filter_map(|n| n["name"].as_str().map(str::to_owned)).collect()
    };
    assert!(!shown(&plan_before).contains(&"worker-1".to_owned()), "healthy: not shown");

    let down = plan(&["--down", "worker-1"]);
    assert_eq!(down.code, 0, "{}", down.stderr);
    let plan: Value = serde_json::from_str(&down.stdout).expect("JSON");
    let node =
        plan["nodes"].as_array().expect("nodes").iter().find(|n| n["name"] == "worker-1").expect("worker-1 shown");
    let taint = &node["predictedTaint"];
    assert_eq!(taint["key"], "node.kubernetes.io/unreachable");
    // Its last heartbeat was 09:59:58.10 and it goes silent by 10:00:00 at the latest: the window
    // spans both, each plus the grace period (40 s), the pass that marks it Unknown and the next,
    // which taints it (the controller's passes fall at .28 s past each 5 s, by its Lease).
    let window = (taint["earliest"].as_str(), taint["latest"].as_str());
    assert_eq!(window, (Some("2026-11-22T10:00:44.98265Z"), Some("2026-11-22T10:00:46.288999999Z")));
    let pod = &node["pods"][0];
    assert_eq!(
        (pod["basis"].as_str(), pod["evictAt"].as_str()),
        (Some("predicted-taint"), Some("2026-11-22T10:05:44.98265Z"))
    );
    // The rest of the cluster's pods go as they would have (their nodes now say their health too:
    // the prediction is shown).
    let others = |plan: &Value| -> Vec<Value> {
        let nodes = plan["nodes"].as_array().expect("nodes").iter().filter(|n| n["name"] != "worker-1");
        nodes.map(|n| n["pods"].clone()).collect()
    };
    assert_eq!(others(&plan), others(&plan_before));
}

#[test]
fn a_node_going_down_that_does_not_exist_is_named() {
    let result = plan(&["--down", "worker-1,worker-9"]);
    assert_eq!(result.code, 1);
    assert!(
        result.stderr.starts_with("error: node \"worker-9\" not found in examples/incident.json"),
        "{}",
        result.stderr
    );
}

#[test]
fn a_down_selector_takes_down_the_nodes_it_selects_as_down_names_them() {
    let selected = plan(&["--down-selector", "topology.kubernetes.io/zone=eu-west-1a"]);
    let named = plan(&["--down", "worker-4,worker-1"]);
    assert_eq!((selected.code, named.code), (0, 0), "{}{}", selected.stderr, named.stderr);
    let (selected, named): (Value, Value) =
        (serde_json::from_str(&selected.stdout).expect("JSON"), serde_json::from_str(&named.stdout).expect("JSON"));
    for field in ["nodes", "zones", "owners"] {
        assert_eq!(selected[field], named[field], "{field}");
    }
    assert_eq!(selected["whatIf"]["down"], serde_json::json!(["worker-1", "worker-4"]));
    assert_eq!(named["whatIf"]["down"], serde_json::json!(["worker-4", "worker-1"]), "as given");
    assert_eq!(selected["whatIf"]["downSelector"], "topology.kubernetes.io/zone=eu-west-1a");
    assert_eq!(named["whatIf"]["downSelector"], Value::Null);

    let none = plan(&["--down-selector", "topology.kubernetes.io/zone=nowhere"]);
    assert_eq!(none.code, 1);
    assert!(
        none.stderr.starts_with(
            "error: no node matched --down-selector topology.kubernetes.io/zone=nowhere in examples/incident.json"
        ),
        "{}",
        none.stderr
    );
}

#[test]
fn a_game_day_says_what_it_assumed_and_rolls_up_each_owner() {
    let down = plan(&["--down", "worker-1"]);
    let plan: Value = serde_json::from_str(&down.stdout).expect("JSON");
    let what_if = &plan["whatIf"];
    assert_eq!(
        (&what_if["down"], &what_if["taints"], &what_if["removeTaints"]),
        (&serde_json::json!(["worker-1"]), &serde_json::json!([]), &serde_json::json!([]))
    );
    let note = what_if["note"].as_str().expect("a note");
    assert!(note.contains("stop heartbeating at 2026-11-22T10:00:00Z at the latest"), "{note}");
    let owners = plan["owners"].as_array().expect("owners");
    let owner = |name: &str| owners.iter().find(|o| o["name"] == name).cloned().unwrap_or_default();
    // frontend's three running replicas: one on worker-1 (down), two on tainted nodes; the fourth
    // is terminating already.
    assert_eq!(
        owner("frontend-7d9c6b8f5"),
        serde_json::json!({"namespace": "web", "kind": "ReplicaSet", "name": "frontend-7d9c6b8f5", "pods": 3,
                           "deleted": 3, "firstDeletion": "2026-11-22T10:00:00Z",
                           "lastDeletion": "2026-11-22T10:05:46.288999999Z", "noneLeft": true})
    );
    // payments-api keeps its replica on a healthy node.
    assert_eq!(
        (&owner("payments-api-6c8d9f7b5")["pods"], &owner("payments-api-6c8d9f7b5")["noneLeft"]),
        (&2.into(), &false.into())
    );
    let first_kept = owners.iter().position(|o| o["noneLeft"] == false).expect("one keeps a replica");
    assert!(owners[..first_kept].iter().all(|o| o["noneLeft"] == true), "those left with none come first");

    // Without --down, neither.
    let as_is: Value = serde_json::from_str(&self::plan(&[]).stdout).expect("JSON");
    assert!(as_is.get("whatIf").is_none() && as_is.get("owners").is_none(), "{as_is}");
}

#[test]
fn the_table_opens_with_the_assumption_and_closes_with_the_owners() {
    let table = run(&["plan", "-f", "examples/incident.json", "--now", NOW, "--down", "worker-1"], None);
    assert_eq!(table.code, 0, "{}", table.stderr);
    let lines: Vec<&str> = table.stdout.lines().collect();
    assert_eq!(lines[0], "What if: worker-1's kubelet stops heartbeating now (10:00:00)");
    let heading = lines.iter().position(|l| *l == "7 owners lose pods; 6 with none left").expect("the roll-up");
    assert!(lines[heading + 1].starts_with("NAMESPACE    OWNER "), "{}", lines[heading + 1]);
    assert!(
        lines.contains(&"web          ReplicaSet/frontend-7d9c6b8f5       3 of 3    10:00:00   10:05:47   none"),
        "{}",
        table.stdout
    );
    let summary = run(&["plan", "-f", "examples/incident.json", "--now", NOW, "--down", "worker-1", "--summary"], None);
    assert!(summary.stdout.starts_with("What if: worker-1's kubelet") && summary.stdout.contains("owners lose pods"));
}

#[test]
fn explain_under_down_walks_from_the_node_going_down_to_the_deletion() {
    let args = ["explain", "-f", "examples/incident.json", "--now", NOW, "--down", "worker-1", "-n", "web"];
    let explained = run(&[&args[..], &["frontend-7d9c6b8f5-r4nq8"]].concat(), None);
    assert_eq!(explained.code, 0, "{}", explained.stderr);
    let text = &explained.stdout;
    assert!(text.contains("What if node worker-1 went down now (the node lifecycle controller, predicted):"), "{text}");
    for step in [
        "  1. node down (what-if, --down): its kubelet stops heartbeating at 2026-11-22T10:00:00Z at the latest",
        "  3. Ready=Unknown expected 10:00:39–10:00:42",
        "  5. unreachable taint expected 10:00:44–10:00:47 (lost-heartbeat)",
        "  7. deletion expected 10:05:44–10:05:47",
    ] {
        assert!(text.contains(step), "{step}\n{text}");
    }
    let json = run(&[&args[..], &["frontend-7d9c6b8f5-r4nq8", "-o", "json"]].concat(), None);
    let doc: Value = serde_json::from_str(&json.stdout).expect("JSON");
    assert_eq!(doc["beforeTaint"]["down"], true, "{doc}");
}

/// A healthy dump of three zones of 240 nodes each (`crates/test-support/src/cluster.rs`, one pod per
/// node), written once per test.
fn three_zones_of_240(name: &str) -> std::path::PathBuf {
    let config = taint_evict_test_support::cluster::Config { nodes: 720, pods_per_node: 1, seed: 3, healthy: true };
    let mut dump = Vec::new();
    taint_evict_test_support::cluster::generate(&config, &mut dump).expect("writing to a Vec cannot fail");
    let path = crate::util::scratch(name).join("dump.json");
    std::fs::write(&path, dump).expect("the dump is written");
    path
}

#[test]
fn a_zone_of_240_nodes_going_down_is_predicted_by_its_drain() {
    let path = three_zones_of_240("zone-of-240");
    let dump = path.to_str().expect("a UTF-8 path");
    let down = run(
        &["plan", "-f", dump, "--now", NOW, "-o", "json", "--down-selector", "topology.kubernetes.io/zone=eu-west-1a"],
        None,
    );
    assert_eq!(down.code, 0, "{}", down.stderr);
    let plan: Value = serde_json::from_str(&down.stdout).expect("JSON");
    let nodes = plan["nodes"].as_array().expect("nodes");
    assert_eq!(nodes.len(), 240, "every node of the zone is shown");
    // The zone goes Normal to fully disrupted as its nodes go Unknown, together: its queue serves one
    // node per 10 s (`--node-eviction-rate` 0.1), from 45 s after the stop, in an order nobody sees.
    let zone = plan["zones"].as_array().expect("zones").iter().find(|z| z["name"] == "eu-west-1a").expect("the zone");
    let drain = &zone["drain"];
    assert_eq!((drain["nodes"].as_u64(), drain["everySeconds"].as_f64()), (Some(240), Some(10.0)), "{zone}");
    let (first, last) =
        (instant(drain["first"].as_str().expect("first")), instant(drain["last"].as_str().expect("last")));
    let now = instant(NOW);
    let second = 1_000_000_000;
    // Without Leases the kubelets stop any time from their last heartbeat, 12 s before now.
    assert!((now + 25 * second..now + 50 * second).contains(&first), "{drain}");
    // 240 slots of 10 s, each token used up to a tick late, from at most a pass after the zone is down,
    // and that pass held back by the controller's own client: a status and an Event for each node and
    // its one ready pod, a taint's two requests, 1,440 in all, 1,410 past its burst at 20 a second:
    // 70.5 s (docs/node-lifecycle.md, "The controller's own client").
    assert!((first + 2_460 * second..first + 2_530 * second).contains(&last), "{drain}");
    for node in nodes {
        let taint = &node["predictedTaint"];
        assert_eq!(taint["key"], "node.kubernetes.io/unreachable", "{node}");
        let window = (instant(taint["earliest"].as_str().expect("earliest")), taint["latest"].as_str().map(instant));
        assert_eq!(window, (first, Some(last)), "every node's window is the zone's slots: {node}");
    }
    let notes: Vec<&str> = down.stderr.lines().filter(|line| line.contains("in an order nobody sees")).collect();
    assert_eq!(notes.len(), 1, "said once for the zone: {}", down.stderr);
    assert!(
        notes[0].starts_with("note: zone eu-west-1a: 240 nodes tainted one every 10s from 2026-11-22T10:00:"),
        "{}",
        notes[0]
    );
    assert!(!down.stderr.contains("not predicted"), "{}", down.stderr);

    // The healthy zones are not predicted tainted.
    let others = run(
        &[
            "plan",
            "-f",
            dump,
            "--now",
            NOW,
            "-o",
            "json",
            "-l",
            "topology.kubernetes.io/zone=eu-west-1b",
            "--down-selector",
            "topology.kubernetes.io/zone=eu-west-1a",
        ],
        None,
    );
    assert_eq!(others.code, 0, "{}", others.stderr);
    let plan: Value = serde_json::from_str(&others.stdout).expect("JSON");
    for node in plan["nodes"].as_array().expect("nodes").iter().filter(|n| n["zone"] == "eu-west-1b") {
        assert_eq!(node["predictedTaint"], Value::Null, "{node}");
    }
}

#[test]
fn audit_predicts_a_zone_of_240_nodes_as_plan_down_selector_does() {
    let path = three_zones_of_240("audit-zone-of-240");
    let dump = path.to_str().expect("a UTF-8 path");
    let audit = run(&["audit", "-f", dump, "--now", NOW, "-o", "json"], None);
    assert!(audit.code == 0 || audit.code == 3, "{}", audit.stderr);
    let document: Value = serde_json::from_str(&audit.stdout).expect("JSON");
    let scenario = document["scenarios"]
        .as_array()
        .expect("scenarios")
        .iter()
        .find(|s| s["down"]["zone"] == "eu-west-1a")
        .expect("the zone's outage");
    let plan = run(
        &["plan", "-f", dump, "--now", NOW, "-o", "json", "--down-selector", "topology.kubernetes.io/zone=eu-west-1a"],
        None,
    );
    let plan: Value = serde_json::from_str(&plan.stdout).expect("JSON");
    // By name: the plan's nodes come in its order, the audit's in the dump's.
    let windows = |nodes: &Value| -> Vec<(String, Value)> {
        let nodes = nodes.as_array().expect("nodes").iter();
        let mut windows: Vec<(String, Value)> =
            nodes.map(|n| (n["name"].as_str().expect("name").to_owned(), n["predictedTaint"].clone())).collect();
        windows.sort_by(|a, b| a.0.cmp(&b.0));
        windows
    };
    let audited = windows(&scenario["nodes"]);
    assert_eq!(audited.len(), 240);
    assert!(audited.iter().all(|(_, taint)| taint["latest"].is_string()), "every node predicted");
    let planned = windows(&plan["nodes"]);
    let differ: Vec<_> = audited.iter().zip(&planned).filter(|(a, p)| a != p).take(2).collect();
    assert!(differ.is_empty() && audited.len() == planned.len(), "audit, plan: {differ:?}");
}
