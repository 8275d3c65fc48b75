//! What each command costs the real kube-apiserver: its own `apiserver_request_total` counters, read
//! from `/metrics` before and after `plan`, `plan NODE`, `explain POD` and `run --dry-run`'s start-up,
//! over 300 pods on 6 nodes. A handful of requests each, never one per pod: pods are read by LIST,
//! their history (`managedFields`) with them, their owners' templates by LIST (docs/connecting.md,
//! "What each command asks the API server").

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::lifecycle::{clock, wait_until};
use super::{ControlPlane, TAINT, namespace, node, pod, taint};
use crate::control_plane;
use crate::support::running::Running;
use crate::util::{command, run_command};

const SECOND: i128 = 1_000_000_000;

/// The namespaces, each with a ReplicaSet `web` that owns a third of its pods.
const TEAMS: [&str; 3] = ["team-a", "team-b", "team-c"];

/// A request as the API server counts it: verb, resource, scope, subresource.
pub(super) type Shape = (String, String, String, String);

/// `apiserver_request_total`, summed over the labels left out of [`Shape`] (code, group, version…).
pub(super) fn requests(plane: &ControlPlane) -> BTreeMap<Shape, u64> {
    let text = plane.kubectl_ok(&["get", "--raw", "/metrics"], None);
    let mut counts = BTreeMap::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("apiserver_request_total{") else { continue };
        let Some((labels, value)) = rest.rsplit_once("} ") else { continue };
        let label = |name: &str| {
            let start = format!("{name}=\"");
            labels.split(',').find_map(|pair| pair.strip_prefix(&start)).map_or("", |v| v.trim_end_matches('"'))
        };
        let shape =
            (label("verb").into(), label("resource").into(), label("scope").into(), label("subresource").into());
        let value: f64 = value.trim().parse().expect("a counter");
        *counts.entry(shape).or_insert(0) += value as u64;
    }
    counts
}

/// The LISTs etcd served (`apiserver_storage_list_total`), by resource: those the watch cache did
/// not.
fn from_etcd(plane: &ControlPlane) -> BTreeMap<String, u64> {
    let text = plane.kubectl_ok(&["get", "--raw", "/metrics"], None);
    let mut counts = BTreeMap::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("apiserver_storage_list_total{") else { continue };
        let Some((labels, value)) = rest.rsplit_once("} ") else { continue };
        let resource = labels.split(',').find_map(|pair| pair.strip_prefix("resource=\"")).unwrap_or_default();
        let value: f64 = value.trim().parse().expect("a counter");
        *counts.entry(resource.trim_end_matches('"').to_owned()).or_insert(0) += value as u64;
    }
    counts
}

/// The counters that grew from `before` to `after`.
pub(super) fn grown(before: &BTreeMap<Shape, u64>, after: &BTreeMap<Shape, u64>) -> BTreeMap<Shape, u64> {
    after
        .iter()
        .map(|(shape, &n)| (shape.clone(), n - before.get(shape).copied().unwrap_or(0)))
        .filter(|(_, n)| *n > 0)
        .collect()
}

/// The counters as lines: `verb resource scope [subresource] → count`.
pub(super) fn shown(counts: &BTreeMap<Shape, u64>) -> String {
    let line = |((verb, resource, scope, sub), n): (&Shape, &u64)| format!("  {verb} {resource} {scope} {sub} → {n}");
    counts.iter().map(line).collect::<Vec<_>>().join("\n")
}

/// The API server's requests while `work` runs; `work` may wait for long-running requests (a watch
/// is counted when it ends).
pub(super) fn counted(plane: &ControlPlane, work: impl FnOnce()) -> BTreeMap<Shape, u64> {
    let before = requests(plane);
    work();
    grown(&before, &requests(plane))
}

/// `counts` less the API server's own renewal of its identity Lease (a PUT every 10 s, which may fall
/// in a command's window): `plan`, `explain` and a dry run write nothing, so a write there is the
/// server's; any other write stays counted.
pub(super) fn without_the_servers_own(counts: &BTreeMap<Shape, u64>) -> BTreeMap<Shape, u64> {
    let renewal = ("PUT".to_owned(), "leases".to_owned(), "resource".to_owned(), String::new());
    counts.iter().filter(|(shape, _)| **shape != renewal).map(|(shape, n)| (shape.clone(), *n)).collect()
}

/// The clock's next whole second past `at`, and a tenth.
fn next_second(at: i128) -> i128 {
    at - at.rem_euclid(SECOND) + SECOND + SECOND / 10
}

/// 6 nodes, 300 pods in 3 namespaces (a third owned by a ReplicaSet), n0 and n1 tainted with a
/// `timeAdded`, n2 by `kubectl taint` (none), and six pods' tolerations edited after their creation
/// (four owned, two bare): the history and the templates are read.
fn cluster(plane: &ControlPlane) {
    let mut objects: Vec<Value> = TEAMS.iter().map(|n| namespace(n)).collect();
    objects.extend((0..6).map(|i| node(&format!("n{i}"), &[], &[])));
    let labels = json!({"app": "web"});
    let tolerations = json!([{"key": TAINT, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 600}]);
    for team in TEAMS {
        objects.push(json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": "web", "namespace": team},
            "spec": {"replicas": 0, "selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels},
                     "spec": {"tolerations": tolerations, "containers": [{"name": "c", "image": "app"}]}}}}));
    }
    plane.create(&objects);
    let uids: BTreeMap<&str, String> = TEAMS
        .iter()
        .map(|team| {
            let set = plane.get(&["replicaset", "web", "-n", team]);
            (*team, set["metadata"]["uid"].as_str().expect("a UID").to_owned())
        })
        .collect();
    let mut pods = Vec::new();
    for i in 0..300_usize {
        let team = TEAMS[i % 3];
        let seconds = match i % 5 {
            0 => None,
            1 => Some(None),
            2 => Some(Some(30)),
            _ => Some(Some(600 + i as i64)),
        };
        let mut made = pod(team, &format!("p{i:03}"), &format!("n{}", i % 6), seconds);
        if i % 3 == 0 || i % 7 == 0 {
            made["metadata"]["labels"] = json!({"app": "web"});
            made["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web",
                "uid": uids[team], "controller": true}]);
        }
        pods.push(made);
    }
    plane.create(&pods);

    // n0 and n1 by merge patches with a `timeAdded`, n2 by `kubectl taint`: its taint's time is
    // read from the node's managedFields.
    for name in ["n0", "n1"] {
        let patch = json!({"spec": {"taints": [taint(jiff::Timestamp::now())]}}).to_string();
        plane.kubectl_ok(&["patch", "node", name, "--type=merge", "-p", &patch], None);
    }
    plane.kubectl_ok(&["taint", "nodes", "n2", &format!("{TAINT}=now:NoExecute")], None);

    // Two whole seconds on (past a `timeAdded` rounded up), six pods counting down on the tainted
    // nodes get a shorter tolerationSeconds (the one edit the API allows): their managedFields record
    // it after their countdown began.
    wait_until(next_second(clock()) + SECOND);
    let path = ["", "spec", "tolerations", "0", "tolerationSeconds"].join("/");
    let patch = format!(r#"[{{"op":"replace","path":"{path}","value":20}}]"#);
    // p012, p018, p014, p049 (owned), p008, p013 (bare): on n0, n1 or n2.
    for i in [12_usize, 18, 14, 49, 8, 13] {
        assert!(i % 6 < 3 && i % 5 >= 2, "p{i:03} counts down on a tainted node");
        let name = format!("p{i:03}");
        plane.kubectl_ok(&["patch", "pod", &name, "-n", TEAMS[i % 3], "--type=json", "-p", &patch], None);
    }
}

/// Runs the binary with `args` against the admin's kubeconfig; it must succeed.
fn live(plane: &ControlPlane, args: &[&str]) -> String {
    let result = run_command(command().args(args).arg("--kubeconfig").arg(plane.kubeconfig()), None);
    assert_eq!(result.code, 0, "{args:?}: {}", result.stderr);
    result.stdout
}

/// How many watches the API server serves now.
pub(super) fn watches(plane: &ControlPlane) -> u64 {
    let text = plane.kubectl_ok(&["get", "--raw", "/metrics"], None);
    text.lines()
        .filter_map(|line| line.strip_prefix("apiserver_longrunning_requests{"))
        .filter(|rest| rest.contains("verb=\"WATCH\""))
        .filter_map(|rest| rest.rsplit_once("} ").and_then(|(_, n)| n.trim().parse::<f64>().ok()))
        .map(|n| n as u64)
        .sum()
}

/// Waits until the API server serves `count` watches (those of a stopped client have ended, and
/// are counted), within 20 s.
pub(super) fn wait_for_watches(plane: &ControlPlane, count: u64) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while watches(plane) != count {
        assert!(Instant::now() < deadline, "still {} watches, not {count}, 20 s on", watches(plane));
        std::thread::park_timeout(Duration::from_millis(50));
    }
}

#[test]
fn real_apiserver_each_command_costs_a_handful_of_requests_never_one_per_pod() {
    let plane = control_plane!("requests");
    cluster(&plane);
    // Reading /metrics is no request these counters count: two reads in a row see the same.
    let first = requests(&plane);
    let again = grown(&first, &requests(&plane));
    assert!(again.keys().all(|(_, _, _, sub)| sub != "/metrics"), "/metrics counted:\n{}", shown(&again));
    let explained = ("team-a", "p012");

    let etcd_before = from_etcd(&plane);
    // Each command, its requests, and the most it may make.
    let mut costs: Vec<(&str, BTreeMap<Shape, u64>, u64)> = Vec::new();
    let plan_all = counted(&plane, || {
        let plan: Value = serde_json::from_str(&live(&plane, &["plan", "-o", "json"])).expect("JSON");
        let pods: usize =
            plan["nodes"].as_array().expect("nodes").iter().map(|n| n["pods"].as_array().map_or(0, Vec::len)).sum();
        assert!(pods >= 150, "the pods of n0, n1 and n2 at least: {plan}");
    });
    // 3 tainted nodes' pods by node (their managedFields with them, in either content type), the
    // templates by namespace: 3 + 3, beside the nodes and Leases.
    costs.push(("plan", plan_all, 10));
    let plan_node = counted(&plane, || {
        let plan: Value = serde_json::from_str(&live(&plane, &["plan", "n2", "-o", "json"])).expect("JSON");
        assert_eq!(plan["nodes"][0]["taintsWritten"]["manager"], "kubectl-taint", "{plan:#}");
    });
    costs.push(("plan n2", plan_node, 10));
    let explain = counted(&plane, || {
        let (namespace, name) = explained;
        let out = live(&plane, &["explain", "-n", namespace, name, "-o", "json"]);
        assert!(out.contains("ReplicaSet/web's pod template holds"), "the template read: {out}");
    });
    costs.push(("explain", explain, 10));
    // plan and explain read pods, their history and their owners' templates from the watch cache:
    // etcd serves none of those LISTs.
    let etcd_after = from_etcd(&plane);
    assert!(etcd_after.contains_key("pods"), "etcd's LISTs counted: {etcd_after:?}");
    for resource in ["pods", "replicasets.apps"] {
        let read = etcd_after.get(resource).copied().unwrap_or(0) - etcd_before.get(resource).copied().unwrap_or(0);
        assert_eq!(read, 0, "LISTs of {resource} etcd served to plan and explain");
    }
    let serving = watches(&plane);
    let run = counted(&plane, || {
        let run = Running::start_with(plane.kubeconfig(), &["--dry-run"]);
        let (_, code) = run.interrupt();
        assert_eq!(code, 0);
        wait_for_watches(&plane, serving);
    });
    // The start-up's reads (the controller manager's Lease once, the Events, the templates of the
    // pods the watches' first lists show edited), then a watch of the nodes, of the pods (their one
    // LIST each), of the node Leases and of the controller manager's Lease.
    costs.push(("run --dry-run's start-up", run, 16));

    let mut report = String::new();
    for (what, counts, _) in &costs {
        let total: u64 = without_the_servers_own(counts).values().sum();
        report.push_str(&format!("{what}: {total} requests\n{}\n", shown(counts)));
    }
    eprintln!("{report}");
    for (what, counts, most) in &costs {
        let counts = without_the_servers_own(counts);
        let total: u64 = counts.values().sum();
        assert!(total <= *most, "{what}: {total} requests, more than {most}:\n{report}");
        // explain GETs the one pod it is asked about; no command GETs a pod of those it reads.
        let single_pod = ("GET".to_owned(), "pods".to_owned(), "resource".to_owned(), String::new());
        let asked = u64::from(*what == "explain");
        let got = counts.get(&single_pod).copied().unwrap_or(0);
        assert!(got <= asked, "{what}: {got} GETs of a single pod:\n{report}");
    }
}
