//! Live `plan` and `explain` read what the node lifecycle controller reads (the node Leases, the
//! controller manager's Lease, the server version) and predict from it exactly as from a dump of the
//! same objects; without permission to list the Leases they say what the answer lacks.

use serde_json::Value;

use crate::util::{Run, as_from_dump, command, data, read_json, run, run_command, scratch};
use taint_evict_test_support::fake_apiserver::{FakeApiServer, Fault};

/// Fixture `b`: four of twelve nodes of zone z1 silent, the snapshot taken before any taint.
const FIXTURE: &str = "tests/data/nlc/b-rate-limit-4-of-12.json";
const NOW: &str = "2026-11-23T18:27:23.291Z";
const NODE_LEASES: &str = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases";
const SYSTEM_PODS: &str = "/api/v1/namespaces/kube-system/pods";
/// How the line that says the controller's settings were assumed begins.
const ASSUMED: &str = "warning: the node lifecycle controller's settings are assumed at kube-controller-manager 1.";

/// A fake API server holding fixture `b`, answering `/version` as `1.minor`.
fn server(name: &str, minor: u32) -> FakeApiServer {
    let server = FakeApiServer::start(&scratch(name));
    server.load(&read_json(&data("nlc/b-rate-limit-4-of-12.json")));
    server.serve_version(minor);
    server
}

fn live(server: &FakeApiServer, args: &[&str]) -> Run {
    let kubeconfig = server.kubeconfig().to_str().expect("UTF-8 path").to_owned();
    run_command(command().args(args).args(["--kubeconfig", &kubeconfig]), None)
}

/// `plan -o json` of the fixture, live and from the file, with `extra` flags on both.
fn live_and_file(server: &FakeApiServer, live_extra: &[&str], file_extra: &[&str]) -> (String, String) {
    let base = ["plan", "--now", NOW, "--silent-after", "5s", "-o", "json"];
    let from_cluster = live(server, &[&base[..], live_extra].concat());
    assert_eq!(from_cluster.code, 0, "{}", from_cluster.stderr);
    assert!(
        from_cluster.stderr.lines().all(|line| line.starts_with(ASSUMED)),
        "no warning when the Leases are read but that the settings are assumed: {}",
        from_cluster.stderr
    );
    let from_file = run(&[&base[..], &["-f", FIXTURE], file_extra].concat(), None);
    assert_eq!(from_file.code, 0, "{}", from_file.stderr);
    (without_sources(&as_from_dump(&from_cluster.stdout, "watch-cache")), without_sources(&from_file.stdout))
}

/// A plan's document without where its settings came from (a flag given to one, a default to the
/// other), pretty-printed again.
fn without_sources(plan: &str) -> String {
    let mut plan: Value = serde_json::from_str(plan).expect("JSON");
    for setting in plan["controllerSettings"].as_object_mut().expect("the settings of a prediction").values_mut() {
        setting.as_object_mut().expect("a setting").remove("from");
    }
    serde_json::to_string_pretty(&plan).expect("JSON")
}

#[test]
fn live_plan_reads_the_node_leases_and_predicts_as_from_a_dump_of_the_same_objects() {
    let server = server("live-nlc-leases", 29);
    let (from_cluster, from_file) = live_and_file(&server, &[], &[]);
    assert_eq!(from_cluster, from_file);
    let plan: Value = serde_json::from_str(&from_cluster).expect("JSON");
    let n04 = plan["nodes"].as_array().expect("nodes").iter().find(|n| n["name"] == "n04").expect("n04 is shown");
    assert_eq!(n04["predictedTaint"]["basis"], "lost-heartbeat", "{n04}");
    let requests = server.requests();
    let leases: Vec<_> = requests.iter().filter(|r| r.path == NODE_LEASES).collect();
    assert_eq!(leases.len(), 1, "one LIST of the node Leases");
    assert_eq!(requests.iter().filter(|r| r.path == "/version").count(), 1);
    // Named: the node's zone is counted from one LIST of every node, beside the pod list.
    let (from_cluster, from_file) = live_and_file(&server, &["n04"], &["n04"]);
    assert_eq!(from_cluster, from_file);
}

#[test]
fn live_plan_takes_the_grace_period_of_the_servers_version_unless_one_is_given() {
    // 1.32 and later: 50 s of grace by default.
    let server = server("live-nlc-version", 32);
    let (from_cluster, from_file) = live_and_file(&server, &[], &["--node-monitor-grace-period", "50s"]);
    assert_eq!(from_cluster, from_file);
    // A flag given wins over the version's default.
    let given = ["--node-monitor-grace-period", "40s"];
    let (from_cluster, from_file) = live_and_file(&server, &given, &[]);
    assert_eq!(from_cluster, from_file);
}

#[test]
fn live_plan_without_permission_to_list_leases_predicts_from_ready_conditions_and_says_what_it_lacks() {
    let server = server("live-nlc-forbidden", 29);
    let message = "leases.coordination.k8s.io is forbidden: User \"alice\" cannot list resource \"leases\" in API \
                   group \"coordination.k8s.io\" in the namespace \"kube-node-lease\"";
    server.fail("GET", NODE_LEASES, Fault::Status(403, message.to_owned()));
    let result = live(&server, &["plan", "--now", NOW, "--silent-after", "5s", "-o", "json"]);
    assert_eq!(result.code, 0, "{}", result.stderr);
    let lines: Vec<&str> = result.stderr.lines().filter(|line| !line.starts_with(ASSUMED)).collect();
    assert_eq!(
        lines,
        ["warning: cannot list leases in namespace \"kube-node-lease\" (forbidden): a silent kubelet is seen only \
         once its node is Ready=Unknown (grant list on leases there: deploy/rbac-plan.yaml)"]
    );
    // The plan of a dump of the same objects without the node Leases.
    let mut dump = read_json(&data("nlc/b-rate-limit-4-of-12.json"));
    let items = dump["items"].as_array_mut().expect("items");
    items.retain(|item| item["metadata"]["namespace"] != "kube-node-lease");
    let path = scratch("live-nlc-forbidden-dump").join("dump.json");
    std::fs::write(&path, dump.to_string()).expect("the dump is written");
    let path = path.to_str().expect("UTF-8 path");
    let from_file = run(&["plan", "--now", NOW, "--silent-after", "5s", "-o", "json", "-f", path], None);
    assert_eq!(as_from_dump(&result.stdout, "watch-cache"), from_file.stdout);
    // Still Ready=True and no Lease to say they are silent: no taint is foreseen for n01–n04 yet.
    let plan: Value = serde_json::from_str(&result.stdout).expect("JSON");
    let foreseen = plan["nodes"].as_array().expect("nodes").iter().filter(|n| !n["predictedTaint"].is_null()).count();
    assert_eq!(foreseen, 0, "{plan:#}");
    let explain = live(&server, &["explain", "-n", "exp", "zero-n04", "--now", NOW, "--silent-after", "5s"]);
    assert_eq!(explain.code, 0, "{}", explain.stderr);
    assert!(
        explain.stderr.starts_with("warning: cannot list leases in namespace \"kube-node-lease\""),
        "{}",
        explain.stderr
    );
}

#[test]
fn live_explain_walks_the_chain_as_from_a_dump_of_the_same_objects() {
    let server = server("live-nlc-explain", 29);
    for output in ["text", "json"] {
        let args = ["explain", "-n", "exp", "zero-n04", "--now", NOW, "--silent-after", "5s", "-o", output];
        let from_cluster = live(&server, &args);
        assert_eq!(from_cluster.code, 0, "{}", from_cluster.stderr);
        let from_file = run(&[&args[..], &["-f", FIXTURE]].concat(), None);
        assert_eq!(from_cluster.stdout, from_file.stdout, "-o {output}");
    }
}

/// kube-controller-manager as kubeadm runs it: a static pod in `kube-system`, its settings on its
/// command line.
fn controller_manager_pod(flags: &[&str]) -> Value {
    let command: Vec<&str> = ["kube-controller-manager", "--leader-elect=true"].iter().chain(flags).copied().collect();
    serde_json::json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "kube-controller-manager-cp-1",
            "namespace": "kube-system",
            "uid": "5c1c3e0e-0000-4000-8000-00000000c0de",
            "labels": {"component": "kube-controller-manager", "tier": "control-plane"}
        },
        "spec": {"nodeName": "cp-1", "containers": [{"name": "kube-controller-manager", "command": command}]},
        "status": {"phase": "Running"}
    })
}

/// The LISTs of the controller manager's pod among `requests`, and every other request of a pod
/// of `kube-system`.
fn controller_manager_reads(server: &FakeApiServer) -> (usize, usize) {
    let requests = server.requests();
    let system = requests.iter().filter(|r| r.path.starts_with(SYSTEM_PODS));
    let (lists, others): (Vec<_>, Vec<_>) =
        system.partition(|r| r.path == SYSTEM_PODS && r.param("labelSelector") == "component=kube-controller-manager");
    (lists.len(), others.len())
}

#[test]
fn live_plan_reads_the_controllers_settings_from_its_static_pod_in_one_list() {
    let server = server("live-nlc-settings-pod", 29);
    server.add(controller_manager_pod(&["--node-monitor-grace-period=10s", "--node-eviction-rate=0.25"]));
    let base = ["plan", "--now", NOW, "--silent-after", "5s", "-o", "json"];
    let from_cluster = live(&server, &base);
    assert_eq!(from_cluster.code, 0, "{}", from_cluster.stderr);
    assert_eq!(from_cluster.stderr, "", "the settings were read: nothing is assumed");
    assert_eq!(controller_manager_reads(&server), (1, 0), "one LIST by label, no GET per pod");
    let plan: Value = serde_json::from_str(&from_cluster.stdout).expect("JSON");
    let settings = &plan["controllerSettings"];
    assert_eq!(settings["nodeMonitorGracePeriod"], serde_json::json!({"value": 10, "from": "pod"}), "{plan:#}");
    assert_eq!(settings["nodeEvictionRate"], serde_json::json!({"value": 0.25, "from": "pod"}));
    assert_eq!(settings["nodeMonitorPeriod"], serde_json::json!({"value": 5, "from": "default"}));
    // The prediction is that of the same flags given by hand.
    let given = ["--node-monitor-grace-period", "10s", "--node-eviction-rate", "0.25", "-f", FIXTURE];
    let by_hand = run(&[&base[..], &given[..]].concat(), None);
    let by_hand: Value = serde_json::from_str(&by_hand.stdout).expect("JSON");
    assert_eq!(plan["nodes"], by_hand["nodes"]);
    assert_eq!(plan["zones"], by_hand["zones"]);
    // A flag given wins over the pod's.
    let flagged = live(&server, &[&base[..], &["--node-monitor-grace-period", "20s"]].concat());
    let flagged: Value = serde_json::from_str(&flagged.stdout).expect("JSON");
    let grace = &flagged["controllerSettings"]["nodeMonitorGracePeriod"];
    assert_eq!(grace, &serde_json::json!({"value": 20, "from": "flag"}));
    assert_eq!(flagged["controllerSettings"]["nodeEvictionRate"]["from"], "pod");
    // explain shows where the grace period came from.
    let explain = live(&server, &["explain", "-n", "exp", "zero-n04", "--now", NOW, "--silent-after", "5s"]);
    assert_eq!(explain.code, 0, "{}", explain.stderr);
    assert!(explain.stdout.contains("10s of silence after"), "{}", explain.stdout);
    assert!(explain.stdout.contains("the grace period read from its pod"), "{}", explain.stdout);
}

#[test]
fn live_plan_without_the_controllers_pod_says_in_one_line_that_its_settings_are_assumed() {
    let server = server("live-nlc-settings-none", 29);
    let result = live(&server, &["plan", "--now", NOW, "--silent-after", "5s", "-o", "json"]);
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert_eq!(
        result.stderr,
        "warning: the node lifecycle controller's settings are assumed at kube-controller-manager 1.29's defaults \
         (--node-monitor-period 5s, --node-monitor-grace-period 40s, --node-startup-grace-period 1m, \
         --node-eviction-rate 0.1, --secondary-node-eviction-rate 0.01, --unhealthy-zone-threshold 0.55, \
         --large-cluster-size-threshold 50, --kube-api-qps 20, --kube-api-burst 30): no pod labelled component=kube-controller-manager in namespace \
         \"kube-system\"; give its flags, or --controller-settings FILE\n"
    );
    assert_eq!(controller_manager_reads(&server), (1, 0));
    let plan: Value = serde_json::from_str(&result.stdout).expect("JSON");
    assert_eq!(
        plan["controllerSettings"]["nodeMonitorGracePeriod"],
        serde_json::json!({"value": 40, "from": "default"})
    );
    // Refused by RBAC: no error, the defaults, and the line says why.
    let message = "pods is forbidden: User \"alice\" cannot list resource \"pods\" in API group \"\" in the namespace \
                   \"kube-system\"";
    server.fail("GET", SYSTEM_PODS, Fault::Status(403, message.to_owned()));
    let refused = live(&server, &["plan", "--now", NOW, "--silent-after", "5s", "-o", "json"]);
    assert_eq!(refused.code, 0, "{}", refused.stderr);
    assert!(refused.stderr.starts_with(ASSUMED), "{}", refused.stderr);
    assert!(
        refused.stderr.ends_with(
            ": cannot list pods in namespace \"kube-system\" (forbidden); give its flags, or --controller-settings FILE\n"
        ),
        "{}",
        refused.stderr
    );
    assert_eq!(refused.stderr.lines().count(), 1);
    assert_eq!(refused.stdout, result.stdout);
    // A file named instead: its settings, said so.
    server.heal();
    let file = scratch("live-nlc-settings-file").join("settings.yaml");
    std::fs::write(&file, "node-monitor-grace-period: 10s\n").expect("the file is written");
    let named = live(
        &server,
        &[
            "plan",
            "--now",
            NOW,
            "--silent-after",
            "5s",
            "-o",
            "json",
            "--controller-settings",
            file.to_str().expect("UTF-8"),
        ],
    );
    assert_eq!(named.stderr, "");
    let named: Value = serde_json::from_str(&named.stdout).expect("JSON");
    assert_eq!(named["controllerSettings"]["nodeMonitorGracePeriod"], serde_json::json!({"value": 10, "from": "file"}));
}

#[test]
fn a_healthy_cluster_does_not_read_the_controllers_settings() {
    // Nothing is predicted when no node is silent or not ready: no LIST, no line.
    // Ready=True and no Lease to say otherwise: healthy.
    let server = FakeApiServer::start(&scratch("live-nlc-settings-healthy"));
    server.add(serde_json::json!({"kind": "Node", "apiVersion": "v1", "metadata": {"name": "n1"},
        "status": {"conditions": [{"type": "Ready", "status": "True", "lastHeartbeatTime": "2026-11-23T18:27:00Z",
                                   "lastTransitionTime": "2026-11-23T00:00:00Z"}]}}));
    server.add(controller_manager_pod(&["--node-monitor-grace-period=10s"]));
    let result = live(&server, &["plan", "n1", "--now", "2026-11-23T18:27:09Z"]);
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert_eq!(controller_manager_reads(&server), (0, 0), "{}", result.stderr);
    assert!(!result.stderr.contains(ASSUMED), "{}", result.stderr);
}
