//! A zone at scale on the real control plane: the 240 nodes of zone `za` (more than the 200 the exact
//! search takes at once, more than `--large-cluster-size-threshold`) stop heartbeating beside the 60
//! healthy nodes of `zb`. kube-controller-manager 1.29.6 queues them as it finds them silent and
//! drains `za`'s queue two nodes a second, in normal then full disruption (docs/node-lifecycle.md,
//! "At scale"), some two minutes; its own client at its defaults (20 requests a second, bursts of
//! 30) holds back the pass that marks the 240 nodes `Unknown` by tens of seconds, which the windows
//! take in ("The controller's own client").
//!
//! Predicted twice: on paper before the stop (`plan -f` over a dump of the healthy cluster,
//! `--down-selector topology.kubernetes.io/zone=za`), and live a few seconds after it (`plan`, which
//! finds the silent nodes itself). Every real `unreachable` taint lands inside both windows (±1.5 s),
//! no node of `zb` is predicted or tainted, and the StatefulSet whose eight replicas all run in `za`
//! is reported losing every one, its real last deletion inside the predicted span.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::Options;
use super::game_day::owned;
use super::lifecycle::{
    SECOND, SLACK, after, assert_in_window, clock, condition_taints, deletions_of, dump, in_zone, plan_silent_after,
    predicted_window, rfc3339, wait_heartbeats, wait_until,
};
use crate::control_plane;
use crate::util::{command, instant, run_command};

/// The controller's node lifecycle flags: a 20 s grace period (a renewal of 300 Leases never comes
/// that late), and a queue of two nodes a second (one a second while partially disrupted).
const FLAGS: [&str; 5] = [
    "--node-monitor-period=2s",
    "--node-monitor-grace-period=20s",
    "--node-eviction-rate=2",
    "--secondary-node-eviction-rate=1",
    "--large-cluster-size-threshold=50",
];

const LOST: usize = 240;
const HEALTHY: usize = 60;

/// How old a Lease renewal must be for `plan` to call a node silent: a sweep of 300 renewals on a
/// loaded machine takes seconds, so a healthy node's can be that old.
const SILENT_AFTER: &str = "--silent-after=8s";

/// When the live plan asks, after the stop: past `SILENT_AFTER`, well before the 20 s grace period.
const ASK_AFTER: i128 = 12 * SECOND;

/// Asserts that no node of `zone` is predicted tainted in `plan`.
fn none_predicted(plan: &Value, zone: &str, what: &str) {
    let nodes = plan["nodes"].as_array().expect("nodes");
    let predicted: Vec<&Value> =
        nodes.iter().filter(|n| n["zone"] == zone && !n["predictedTaint"].is_null()).map(|n| &n["name"]).collect();
    assert!(predicted.is_empty(), "{what}: healthy zone {zone} predicted tainted: {predicted:?}");
}

/// The zone `name` of a plan document.
fn zone<'a>(plan: &'a Value, name: &str) -> &'a Value {
    let zones = plan["zones"].as_array().expect("zones");
    zones.iter().find(|z| z["name"] == name).unwrap_or_else(|| panic!("zone {name} in {zones:?}"))
}

/// Polls the nodes until `count` carry a condition taint (at most `within`): each node's
/// `timeAdded`, and when it was first seen.
fn all_tainted(plane: &super::ControlPlane, count: usize, within: Duration) -> BTreeMap<String, (i128, i128)> {
    let deadline = Instant::now() + within;
    let mut seen = BTreeMap::new();
    while seen.len() < count {
        let at = clock();
        for (name, added) in condition_taints(plane) {
            seen.entry(name).or_insert((added, at));
        }
        assert!(Instant::now() < deadline, "only {} of {count} nodes tainted within {within:?}", seen.len());
        std::thread::park_timeout(Duration::from_millis(250));
    }
    seen
}

#[test]
fn real_apiserver_a_zone_of_240_nodes_is_tainted_inside_its_predicted_drain() {
    let started = Instant::now();
    let options = Options {
        controller_manager: true,
        controller_manager_args: FLAGS.iter().map(|f| (*f).to_owned()).collect(),
        ..Options::default()
    };
    let mut plane = control_plane!("large-zone", &options);
    let lost: Vec<String> = (1..=LOST).map(|i| format!("a{i:03}")).collect();
    let healthy: Vec<String> = (1..=HEALTHY).map(|i| format!("b{i:03}")).collect();
    let mut objects: Vec<Value> = lost.iter().map(|n| in_zone(n, "za")).collect();
    objects.extend(healthy.iter().map(|n| in_zone(n, "zb")));
    let db: Vec<String> = (0..8).map(|i| format!("db-{i}")).collect();
    objects.extend(db.iter().enumerate().map(|(i, pod)| owned(pod, &lost[i * 30], "StatefulSet", "db")));
    objects.extend([
        owned("web-a", &lost[5], "ReplicaSet", "web-5d8f"),
        owned("web-b", &lost[200], "ReplicaSet", "web-5d8f"),
        owned("web-c", &healthy[3], "ReplicaSet", "web-5d8f"),
        owned("web-d", &healthy[40], "ReplicaSet", "web-5d8f"),
    ]);
    plane.create(&objects);
    let heartbeats = plane.keep_healthy(&lost.iter().map(String::as_str).collect::<Vec<_>>());
    let _healthy = plane.keep_healthy(&healthy.iter().map(String::as_str).collect::<Vec<_>>());
    wait_heartbeats(&plane, LOST + HEALTHY, "a001");

    // On paper: a dump of the healthy cluster, the kubelets of za stopping at `stopped`.
    let (healthy_dump, _) = dump(&plane);
    heartbeats.stop_and_wait();
    let stopped = clock();
    let down = ["--down-selector", "topology.kubernetes.io/zone=za", "-o", "json"];
    let json = plan_silent_after(&healthy_dump, stopped, SILENT_AFTER, &FLAGS, &down);
    let paper: Value = serde_json::from_str(&json).expect("plan prints JSON");
    let drain = &zone(&paper, "za")["drain"];
    eprintln!(
        "--- on paper, at {}: za {} drain {drain}; owners {}",
        rfc3339(stopped),
        zone(&paper, "za"),
        paper["owners"]
    );
    assert_eq!(drain["nodes"], json!(LOST), "every node of za queued: {drain}");
    none_predicted(&paper, "zb", "on paper");
    let owners: Vec<Value> = paper["owners"]
        .as_array()
        .expect("owners")
        .iter()
        .map(|o| json!([o["name"], o["pods"], o["deleted"], o["noneLeft"]]))
        .collect();
    assert_eq!(owners, [json!(["db", 8, 8, true]), json!(["web-5d8f", 4, 2, false])], "db loses every replica");

    // Live, a few seconds on: the silent nodes found from their Leases, on the server's clock.
    wait_until(stopped + ASK_AFTER);
    let mut args = vec!["plan", SILENT_AFTER, "-o", "json"];
    args.extend(FLAGS);
    let live = run_command(command().args(&args).arg("--kubeconfig").arg(plane.kubeconfig()), None);
    assert_eq!(live.code, 0, "{}", live.stderr);
    let live: Value = serde_json::from_str(&live.stdout).expect("plan prints JSON");
    eprintln!("--- live, at {}: za {}", live["now"], zone(&live, "za"));
    none_predicted(&live, "zb", "live");
    let windows: Vec<((i128, i128), (i128, i128))> =
        lost.iter().map(|n| (predicted_window(&paper, n), predicted_window(&live, n))).collect();

    // For real: every node of za tainted inside both windows, none of zb.
    let seen = all_tainted(&plane, LOST, Duration::from_secs(360));
    let names: Vec<&String> = seen.keys().collect();
    assert_eq!(names, lost.iter().collect::<Vec<_>>(), "only the nodes of za");
    let (first, last) = (seen.values().map(|s| s.0).min(), seen.values().map(|s| s.0).max());
    eprintln!(
        "large zone: {LOST} taints from {} to {} after the stop, drain predicted {} to {}",
        after(stopped, first.unwrap_or_default()),
        after(stopped, last.unwrap_or_default()),
        drain["first"],
        drain["last"]
    );
    for (name, (on_paper, live)) in lost.iter().zip(&windows) {
        let (added, at) = seen[name];
        assert_in_window(name, added, at, *on_paper, stopped);
        assert_in_window(name, added, at, *live, stopped);
    }

    // db's replicas deleted by the taint-eviction controller, the last inside the owner's span.
    let deletions = deletions_of(&plane, &db);
    let deleted: Vec<i128> = db.iter().map(|pod| deletions[pod][0]).collect();
    let db_owner = paper["owners"].as_array().expect("owners").iter().find(|o| o["name"] == "db").expect("db");
    let (earliest, latest) = (
        instant(db_owner["firstDeletion"].as_str().expect("firstDeletion")),
        instant(db_owner["lastDeletion"].as_str().expect("a bounded lastDeletion")),
    );
    let (first_deleted, last_deleted) = (deleted.iter().min().copied(), deleted.iter().max().copied());
    let (first_deleted, last_deleted) = (first_deleted.unwrap_or_default(), last_deleted.unwrap_or_default());
    eprintln!(
        "db: deleted {} to {} after the stop, predicted {} to {}",
        after(stopped, first_deleted),
        after(stopped, last_deleted),
        after(stopped, earliest),
        after(stopped, latest)
    );
    assert!(first_deleted >= earliest - SLACK, "db's first deletion before its span");
    assert!(last_deleted <= latest + SLACK, "db's last deletion after its span");
    assert!(condition_taints(&plane).keys().all(|n| n.starts_with('a')), "zb stays untainted");
    eprintln!("large zone: {:.1} s", started.elapsed().as_secs_f64());
}
