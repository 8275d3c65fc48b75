//! Before the taint, on the real control plane: a node stops renewing its Lease, the prediction is made
//! from a `kubectl get nodes,pods,leases -A -o json` dump taken then, and the real node-lifecycle
//! controller's `unreachable` taint, and the taint-eviction controller's deletion after it, land inside
//! the predicted windows (±1.5 s).

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Options, node};
use crate::control_plane;
use crate::util::instant;
use taint_evict::engine::lifecycle::{ConditionTaint, Flags, predict};
use taint_evict::engine::time::Timestamp;
use taint_evict::source::lifecycle::read_health;

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

#[test]
fn real_apiserver_lost_heartbeat_taint_and_deletion_land_in_the_predicted_windows() {
    let flags = Flags {
        node_monitor_period: Duration::from_secs(2),
        node_monitor_grace_period: Duration::from_secs(10),
        ..Flags::defaults_for(29)
    };
    let options = Options {
        controller_manager: true,
        controller_manager_args: vec!["--node-monitor-period=2s".into(), "--node-monitor-grace-period=10s".into()],
        ..Options::default()
    };
    let mut plane = control_plane!("lifecycle-single", &options);
    plane.create(&[zone_node("n1"), zone_node("n2"), zone_node("n3"), unreachable_pod("short", "n1", 3)]);
    let lost = plane.keep_healthy(&["n1"]);
    let _others = plane.keep_healthy(&["n2", "n3"]);
    // Healthy long enough for the controller to have seen every node renew: it has synced, every
    // Lease exists, and n1's has been renewed once more since.
    let deadline = Instant::now() + Duration::from_secs(60);
    let renewals = |plane: &super::ControlPlane| -> Vec<(String, String)> {
        let leases = plane.get(&["leases", "-n", "kube-node-lease"]);
        leases["items"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|l| (l["metadata"]["name"].as_str().unwrap_or("").to_owned(), l["spec"]["renewTime"].to_string()))
            .collect()
    };
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
    // Observe once the silence is longer than a renewal interval (1 s) can explain.
    while jiff::Timestamp::now().as_nanosecond() < stopped + 3 * SECOND {
        std::thread::park_timeout(Duration::from_millis(50));
    }
    let dump = plane.kubectl_ok(&["get", "nodes,pods,leases", "-A", "-o", "json"], None);
    let now = Timestamp::from_nanos(jiff::Timestamp::now().as_nanosecond());
    let health = read_health(dump.as_bytes()).expect("the dump reads");
    assert_eq!(health.node_leases, 3);
    let prediction = predict(&health.observe(now, flags, Duration::from_millis(2500)));
    let n1 = prediction.nodes.iter().find(|n| n.name.as_str() == "n1").expect("n1 forecast");
    let taint = n1.taint.unwrap_or_else(|| panic!("n1 predicted to be tainted: {n1:?}"));
    assert_eq!(taint.key, ConditionTaint::Unreachable);
    let (earliest, latest) = (taint.earliest.as_nanos(), taint.latest.expect("a bounded window").as_nanos());
    for other in ["n2", "n3"] {
        let forecast = prediction.nodes.iter().find(|n| n.name.as_str() == other).expect("forecast");
        assert!(forecast.taint.is_none(), "{other} keeps renewing: {forecast:?}");
    }

    // The real controller: poll the node until the taint shows, note when it was seen.
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
        "n1: taint added {:.3} s after the heartbeats stopped (seen at {:.3}); {window}",
        (added - stopped) as f64 / 1e9,
        (seen - stopped) as f64 / 1e9
    );
    // timeAdded is written in whole seconds: the real instant lies in [added, added + 1 s).
    assert!(added + SECOND >= earliest - SLACK && added <= latest + SLACK, "timeAdded outside the window: {window}");
    assert!(seen >= earliest - SLACK, "seen before the window: {window}");

    // The taint-eviction controller deletes `short` 3 s after the taint.
    let deadline = Instant::now() + Duration::from_secs(30);
    let deleted = loop {
        if let Some(at) = plane.controller_deletions().get("short").and_then(|at| at.first()) {
            break *at;
        }
        assert!(Instant::now() < deadline, "short not deleted within 30 s of the taint");
        std::thread::park_timeout(Duration::from_millis(100));
    };
    let (from, to) = (earliest + 3 * SECOND, latest + 3 * SECOND);
    assert!(deleted >= from - SLACK && deleted <= to + SLACK, "deletion {deleted} outside {from}..{to}");
}
