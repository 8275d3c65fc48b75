//! `plan --down`: what the node lifecycle controller and the taint manager would do if these
//! nodes' kubelets stopped heartbeating now (issue 31).

use serde_json::Value;

use crate::util::run;

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
