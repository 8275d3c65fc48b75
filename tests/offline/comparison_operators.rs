//! The `Lt`/`Gt` toleration operators (Kubernetes 1.35, gate `TaintTolerationComparisonOperators`):
//! matched as kube-controller-manager matches them with its gate on, not at all with it off; the gate
//! as `--feature-gates` gives it, else by the server's version (a dump: on).

use serde_json::{Value, json};

use crate::fake_api::run_cluster::{node, pod};
use crate::support::running::Running;
use crate::util::{run, scratch};
use taint_evict_test_support::fake_apiserver::FakeApiServer;

const NOW: &str = "2026-11-26T10:00:00Z";

/// Node `n1` with `sla=950:NoExecute` since 09:00; `above` tolerates it with `sla Gt 750` (950 > 750),
/// `below` with `sla Lt 800` (950 is not less than 800), `typo` with `sla gt 750` (no such operator).
fn dump() -> Vec<u8> {
    let taint = json!({"key": "sla", "value": "950", "effect": "NoExecute", "timeAdded": "2026-11-26T09:00:00Z"});
    let toleration =
        |op: &str, value: &str| json!([{"key": "sla", "operator": op, "value": value, "effect": "NoExecute"}]);
    let pod = |name: &str, tolerations: Value| {
        json!({"kind": "Pod", "apiVersion": "v1",
               "metadata": {"name": name, "namespace": "default", "uid": format!("uid-{name}"),
                            "creationTimestamp": "2026-11-26T08:00:00Z"},
               "spec": {"nodeName": "n1", "tolerations": tolerations, "containers": [{"name": "c", "image": "app"}]},
               "status": {"phase": "Running"}})
    };
    let list = json!({"kind": "List", "apiVersion": "v1", "items": [
        {"kind": "Node", "apiVersion": "v1", "metadata": {"name": "n1"}, "spec": {"taints": [taint]}},
        pod("above", toleration("Gt", "750")),
        pod("below", toleration("Lt", "800")),
        pod("typo", toleration("gt", "750")),
    ]});
    serde_json::to_vec(&list).expect("JSON")
}

/// `plan -o json`'s verdict of each pod, and what it printed on stderr.
fn verdicts(extra: &[&str]) -> (Vec<(String, String)>, String) {
    let result = run(&[&["plan", "-f", "-", "--now", NOW, "-o", "json"], extra].concat(), Some(&dump()));
    assert_eq!(result.code, 0, "{}", result.stderr);
    let plan: Value = serde_json::from_str(&result.stdout).expect("JSON");
    let pods = plan["nodes"][0]["pods"].as_array().expect("pods").iter();
    let mut verdicts: Vec<(String, String)> = pods
        .map(|p| (p["name"].as_str().expect("name").to_owned(), p["verdict"].as_str().expect("verdict").to_owned()))
        .collect();
    verdicts.sort();
    (verdicts, result.stderr)
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect()
}

#[test]
fn a_dump_matches_lt_and_gt_with_the_gate_on_and_says_it_assumed_so() {
    // Fixed: `Gt` matched nothing: `above` was shown evict-now, and `run` would delete it.
    let (verdicts, stderr) = verdicts(&[]);
    assert_eq!(verdicts, pairs(&[("above", "never"), ("below", "evict-now"), ("typo", "evict-now")]));
    assert_eq!(
        stderr.trim_end(),
        "warning: 2 pods have Lt/Gt tolerations: matched as kube-controller-manager does with its \
         TaintTolerationComparisonOperators gate on (the API server admitted them, so its gate is on); if the \
         controller's is off, say so with --feature-gates TaintTolerationComparisonOperators=false"
    );
}

#[test]
fn the_gate_given_off_matches_neither_and_given_on_says_nothing() {
    let (off, stderr) = verdicts(&["--feature-gates", "TaintTolerationComparisonOperators=false"]);
    assert_eq!(off, pairs(&[("above", "evict-now"), ("below", "evict-now"), ("typo", "evict-now")]));
    assert!(stderr.is_empty(), "{stderr}");
    let (on, stderr) = verdicts(&["--feature-gates=TaintTolerationComparisonOperators=true"]);
    assert_eq!(on, pairs(&[("above", "never"), ("below", "evict-now"), ("typo", "evict-now")]));
    assert!(stderr.is_empty(), "given, not assumed: {stderr}");
}

#[test]
fn explain_shows_the_comparison_made_and_why_one_does_not_hold() {
    let explain = |pod: &str, extra: &[&str]| {
        let args = [&["explain", "-f", "-", "--now", NOW, pod][..], extra].concat();
        let result = run(&args, Some(&dump()));
        assert_eq!(result.code, 0, "{}", result.stderr);
        result.stdout
    };
    let above = explain("above", &[]);
    assert!(above.contains("     used: tolerations[0] sla Gt 750:NoExecute (950 > 750)\n"), "{above}");
    let below = explain("below", &[]);
    assert!(below.contains("tolerations[0] sla Lt 800:NoExecute: 950 is not less than 800 (operator Lt)\n"), "{below}");
    let off = explain("above", &["--feature-gates", "TaintTolerationComparisonOperators=false"]);
    assert!(
        off.contains(
            "tolerations[0] sla Gt 750:NoExecute: operator Gt matches nothing with kube-controller-manager's \
             TaintTolerationComparisonOperators gate off (--feature-gates)"
        ),
        "{off}"
    );
    let typo = explain("typo", &["-o", "json"]);
    let doc: Value = serde_json::from_str(&typo).expect("JSON");
    assert_eq!(
        doc["taints"][0]["rejected"][0]["reason"],
        "operator matches nothing (only Equal, Exists, Lt and Gt do)"
    );
}

#[test]
fn an_unknown_gate_or_value_is_a_usage_error() {
    for (gates, first) in [
        (
            "Foo=true",
            "error: invalid value 'Foo=true' for '--feature-gates <GATE=BOOL,…>': unrecognized feature gate: Foo (the one this tool follows: TaintTolerationComparisonOperators)",
        ),
        (
            "TaintTolerationComparisonOperators=yes",
            "error: invalid value 'TaintTolerationComparisonOperators=yes' for '--feature-gates <GATE=BOOL,…>': invalid value of TaintTolerationComparisonOperators: \"yes\" (expected true or false)",
        ),
    ] {
        let result = run(&["plan", "-f", "-", "--feature-gates", gates], None);
        assert_eq!(result.code, 2, "{}", result.stderr);
        assert_eq!(result.stderr.lines().next(), Some(first));
    }
}

#[test]
fn run_on_a_server_before_1_35_matches_no_lt_gt_unless_the_gate_is_given() {
    let dir = scratch("run-comparison-operators");
    let server = FakeApiServer::start(&dir);
    server.serve_version(34);
    let mut tainted = node("n1", &[]);
    tainted["spec"]["taints"] =
        json!([{"key": "sla", "value": "950", "effect": "NoExecute", "timeAdded": "2026-11-26T09:00:00Z"}]);
    server.add(tainted);
    let mut above = pod("above", "n1", None);
    above["spec"]["tolerations"] = json!([{"key": "sla", "operator": "Gt", "value": "750", "effect": "NoExecute"}]);
    server.add(above);

    // 1.34: the controller knows no Lt/Gt: the pod is deleted at once, and the assumption is said.
    let mut run = Running::start(&server, &["--dry-run"]);
    run.expect("the would-be deletion", |l| l["type"] == "wouldDelete" && l["pod"]["name"] == "above");
    let warning = run.expect("the warning", |l| l["type"] == "warning");
    assert!(
        warning["message"].as_str().is_some_and(|m| m.starts_with("1 pod has Lt/Gt tolerations: they match nothing"))
    );
    let (_, code) = run.interrupt();
    assert_eq!(code, 0);

    // The gate given on: tolerated forever, nothing due.
    let run = Running::start(&server, &["--dry-run", "--feature-gates", "TaintTolerationComparisonOperators=true"]);
    let synced = run.seen.iter().find(|l| l["type"] == "synced").cloned().expect("synced");
    assert_eq!((synced["due"].as_u64(), synced["scheduled"].as_u64()), (Some(0), Some(0)), "{synced}");
    let (summary, code) = run.interrupt();
    assert_eq!((code, summary["wouldDelete"].as_u64()), (0, Some(0)), "{summary}");
}
