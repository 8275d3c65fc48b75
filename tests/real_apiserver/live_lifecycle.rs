//! Live `plan` on the real control plane, before the taint: a node stops renewing its Lease, `plan`
//! reads the cluster itself (the node Leases, the controller manager's Lease, `/version`, its
//! settings from its pod's command line, none given), and the
//! real node-lifecycle controller's `unreachable` taint, and the taint-eviction controller's deletion
//! after it, land inside the windows it printed (±1.5 s). The dump-based twin is in `lifecycle.rs`.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{ControlPlane, Options, node};
use crate::control_plane;
use crate::util::{command, instant, run_command};

const SLACK: i128 = 1_500_000_000;
const SECOND: i128 = 1_000_000_000;

fn zone_node(name: &str) -> Value {
    node(name, &[("topology.kubernetes.io/region", "r"), ("topology.kubernetes.io/zone", "z")], &[])
}

fn unreachable_pod(name: &str, node: &str, seconds: i64) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
           "spec": {"nodeName": node, "containers": [{"name": "c", "image": "app"}],
                    "tolerations": [{"key": "node.kubernetes.io/unreachable", "operator": "Exists",
                                     "effect": "NoExecute", "tolerationSeconds": seconds}]}})
}

/// kube-controller-manager's static pod as kubeadm writes it, with `args` on its command line.
fn controller_manager_pod(args: &[String]) -> Value {
    let mut command = vec!["kube-controller-manager".to_owned(), "--leader-elect=false".to_owned()];
    command.extend(args.iter().cloned());
    json!({"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "kube-controller-manager-cp", "namespace": "kube-system",
                        "labels": {"component": "kube-controller-manager", "tier": "control-plane"}},
           "spec": {"nodeName": "cp",
                    "containers": [{"name": "kube-controller-manager", "image": "registry.k8s.io/kube-controller-manager:v1.29.6",
                                    "command": command}]}})
}

/// Each node Lease's `renewTime`, by node.
fn renewals(plane: &ControlPlane) -> Vec<(String, String)> {
    let leases = plane.get(&["leases", "-n", "kube-node-lease"]);
    leases["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|l| (l["metadata"]["name"].as_str().unwrap_or("").to_owned(), l["spec"]["renewTime"].to_string()))
        .collect()
}

#[test]
fn real_apiserver_live_plan_predicts_the_taint_of_a_node_whose_heartbeat_stopped() {
    let options = Options {
        controller_manager: true,
        controller_manager_args: vec!["--node-monitor-period=2s".into(), "--node-monitor-grace-period=10s".into()],
        ..Options::default()
    };
    let mut plane = control_plane!("live-lifecycle-single", &options);
    plane.create(&[zone_node("n1"), zone_node("n2"), zone_node("n3"), unreachable_pod("short", "n1", 3)]);
    // The controller manager's command line, shown as kubeadm shows it: a static pod's object in
    // kube-system (no kubelet runs it here; the process the plane started is the controller).
    plane.create(&[controller_manager_pod(&options.controller_manager_args)]);
    let lost = plane.keep_healthy(&["n1"]);
    let _others = plane.keep_healthy(&["n2", "n3"]);
    // Healthy long enough for the controller to have synced and seen n1's Lease renewed once more.
    let deadline = Instant::now() + Duration::from_secs(60);
    let first = loop {
        let leases = renewals(&plane);
        if leases.len() == 3 && plane.log("kube-controller-manager").contains("Caches are synced") {
            break leases;
        }
        assert!(Instant::now() < deadline, "no sync or no Leases within 60 s: {leases:?}");
        std::thread::park_timeout(Duration::from_millis(100));
    };
    let renewed = |leases: &[(String, String)]| leases.iter().find(|(n, _)| n == "n1").map(|(_, t)| t.clone());
    while renewed(&renewals(&plane)) == renewed(&first) {
        assert!(Instant::now() < deadline, "n1's Lease is not renewed");
        std::thread::park_timeout(Duration::from_millis(100));
    }
    lost.stop();
    let stopped = jiff::Timestamp::now().as_nanosecond();
    // Ask once the silence is longer than a late renewal can explain (see `SILENT_AFTER`).
    while jiff::Timestamp::now().as_nanosecond() < stopped + 5 * SECOND {
        std::thread::park_timeout(Duration::from_millis(50));
    }
    // The monitor period and the grace period are read from the controller's pod, none given; the
    // server's version (1.29) gives the rest.
    let args = ["plan", "-o", "json", super::lifecycle::SILENT_AFTER];
    let result = run_command(command().args(args).arg("--kubeconfig").arg(plane.kubeconfig()), None);
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert_eq!(result.stderr, "", "every read is granted, the settings read");
    let plan: Value = serde_json::from_str(&result.stdout).expect("plan -o json prints JSON");
    let settings = &plan["controllerSettings"];
    assert_eq!(settings["nodeMonitorGracePeriod"], json!({"value": 10, "from": "pod"}), "{plan:#}");
    assert_eq!(settings["nodeMonitorPeriod"], json!({"value": 2, "from": "pod"}), "{plan:#}");
    assert_eq!(settings["nodeEvictionRate"], json!({"value": 0.1, "from": "default"}), "{plan:#}");
    let nodes = plan["nodes"].as_array().expect("nodes");
    let names: Vec<&str> = nodes.iter().filter_map(|n| n["name"].as_str()).collect();
    assert_eq!(names, ["n1"], "only the silent node is shown: {plan:#}");
    let taint = &nodes[0]["predictedTaint"];
    assert_eq!((&taint["key"], &taint["basis"]), (&"node.kubernetes.io/unreachable".into(), &"lost-heartbeat".into()));
    let (earliest, latest) = (
        instant(taint["earliest"].as_str().expect("earliest")),
        instant(taint["latest"].as_str().unwrap_or_else(|| panic!("a bounded window: {taint}"))),
    );
    let short = nodes[0]["pods"].as_array().expect("pods").iter().find(|p| p["name"] == "short").expect("short");
    assert_eq!((&short["verdict"], &short["basis"]), (&"evict-at".into(), &"predicted-taint".into()));
    let (delete_from, delete_to) = (
        instant(short["evictAt"].as_str().expect("evictAt")),
        instant(short["evictAtLatest"].as_str().expect("latest")),
    );

    // The real controller: poll the node until the taint shows.
    let deadline = Instant::now() + Duration::from_secs(60);
    let (seen, added) = loop {
        let node = plane.get(&["node", "n1"]);
        let found = node["spec"]["taints"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|t| t["key"] == "node.kubernetes.io/unreachable" && t["effect"] == "NoExecute");
        if let Some(taint) = found {
            let added = instant(taint["timeAdded"].as_str().expect("timeAdded"));
            break (jiff::Timestamp::now().as_nanosecond(), added);
        }
        assert!(Instant::now() < deadline, "no unreachable taint on n1 within 60 s");
        std::thread::park_timeout(Duration::from_millis(100));
    };
    let window = format!(
        "predicted {:.3}..{:.3} s after the stop",
        (earliest - stopped) as f64 / 1e9,
        (latest - stopped) as f64 / 1e9
    );
    eprintln!(
        "n1 (live plan): taint added {:.3} s after the heartbeats stopped (seen at {:.3}); {window}",
        (added - stopped) as f64 / 1e9,
        (seen - stopped) as f64 / 1e9
    );
    // timeAdded is written in whole seconds: the real instant lies in [added, added + 1 s).
    assert!(added + SECOND >= earliest - SLACK && added <= latest + SLACK, "timeAdded outside the window: {window}");
    assert!(seen >= earliest - SLACK, "seen before the window: {window}");

    // The taint-eviction controller deletes `short` 3 s after the taint, inside the printed window.
    let deadline = Instant::now() + Duration::from_secs(30);
    let deleted = loop {
        if let Some(at) = plane.controller_deletions().get("short").and_then(|at| at.first()) {
            break *at;
        }
        assert!(Instant::now() < deadline, "short not deleted within 30 s of the taint");
        std::thread::park_timeout(Duration::from_millis(100));
    };
    assert!(
        deleted >= delete_from - SLACK && deleted <= delete_to + SLACK,
        "deletion {deleted} outside {delete_from}..{delete_to}"
    );
}
