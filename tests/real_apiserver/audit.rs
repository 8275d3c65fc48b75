//! `audit` on a dump of a healthy two-zone cluster, then one zone's kubelets really stop at the
//! audit's `--now`: the owner the audit said that zone's outage leaves with no replica loses them
//! all, its last deletion inside the audit's window (±1.5 s); the owners it said keep one keep it; the
//! zone's nodes are tainted inside the windows its scenario gave, and the other zone's not at all.
//!
//! Zone `za` (three nodes) holds both replicas of the StatefulSet `db` and one of the ReplicaSet
//! `web`; zone `zb` (two) holds `web`'s other and the ReplicaSet `cache`'s one. `za` down is fully
//! disrupted while `zb` is not: tainted at `--node-eviction-rate`, one node per 4 s.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::game_day::owned;
use super::lifecycle::{
    SILENT_AFTER, SLACK, after, assert_in_window, clock, condition_taints, deletions_of, dump, in_zone, rfc3339,
    taints_seen, wait_heartbeats,
};
use super::{ControlPlane, Options};
use crate::control_plane;
use crate::util::{command, instant, run_command};

pub(super) const FLAGS: [&str; 3] =
    ["--node-monitor-period=2s", "--node-monitor-grace-period=10s", "--node-eviction-rate=0.25"];

/// `audit -o json` over `dump`, the kubelets stopping at `now`.
pub(super) fn audit(dump: &str, now: i128) -> Value {
    let now = rfc3339(now);
    let mut args = vec!["audit", "-f", "-", "--now", &now, SILENT_AFTER, "-o", "json"];
    args.extend(FLAGS);
    let run = crate::util::run(&args, Some(dump.as_bytes()));
    assert_eq!(run.code, 0, "audit: {}", run.stderr);
    serde_json::from_str(&run.stdout).expect("audit prints JSON")
}

/// The scenario whose `down` is `down`.
pub(super) fn scenario<'a>(audit: &'a Value, down: &Value) -> &'a Value {
    let scenarios = audit["scenarios"].as_array().expect("scenarios");
    scenarios.iter().find(|s| s["down"] == *down).unwrap_or_else(|| panic!("no scenario {down} in {audit}"))
}

/// `audit -o json` over the live cluster (every node, every pod and the Leases read from the API
/// server), the kubelets stopping at `now`.
pub(super) fn live_audit(plane: &ControlPlane, now: i128) -> Value {
    let now = rfc3339(now);
    let mut args = vec!["audit", "--now", &now, SILENT_AFTER, "-o", "json"];
    args.extend(FLAGS);
    let live = run_command(command().args(&args).arg("--kubeconfig").arg(plane.kubeconfig()), None);
    assert_eq!(live.code, 0, "{}", live.stderr);
    serde_json::from_str(&live.stdout).expect("audit prints JSON")
}

/// Per scenario, what each owner losing pods loses: the numbers, not the instants.
pub(super) fn counts(audit: &Value) -> Vec<Value> {
    let scenarios = audit["scenarios"].as_array().cloned().unwrap_or_default();
    scenarios
        .iter()
        .map(|s| {
            let owners = s["owners"].as_array().cloned().unwrap_or_default();
            let owners: Vec<Value> =
                owners.iter().map(|o| json!([o["kind"], o["name"], o["pods"], o["deleted"], o["noneLeft"]])).collect();
            json!([s["down"], owners])
        })
        .collect()
}

/// The findings, without their instants and words.
pub(super) fn rules(audit: &Value) -> Vec<Value> {
    let findings = audit["findings"].as_array().cloned().unwrap_or_default();
    findings.iter().map(|f| json!([f["rule"], f["namespace"], f["kind"], f["name"], f["scenario"]])).collect()
}

#[test]
fn real_apiserver_audit_of_a_healthy_dump_names_the_owner_a_zone_outage_leaves_without_replicas() {
    let options = Options {
        controller_manager: true,
        controller_manager_args: FLAGS.iter().map(|f| (*f).to_owned()).collect(),
        ..Options::default()
    };
    let mut plane = control_plane!("audit", &options);
    let (za, zb) = (["a1", "a2", "a3"], ["b1", "b2"]);
    let mut objects: Vec<Value> =
        za.iter().map(|n| in_zone(n, "za")).chain(zb.iter().map(|n| in_zone(n, "zb"))).collect();
    objects.extend(workloads());
    plane.create(&objects);
    let heartbeats = plane.keep_healthy(&za);
    let _healthy = plane.keep_healthy(&zb);
    wait_heartbeats(&plane, 5, "a1");

    // On paper: the healthy cluster's dump, every outage at the instant za's kubelets stop.
    let (healthy_dump, _) = dump(&plane);
    heartbeats.stop();
    let stopped = clock();
    let audit = audit(&healthy_dump, stopped);
    eprintln!("--- audit at {}\n{audit}", rfc3339(stopped));
    let za_down = scenario(&audit, &json!({"zone": "za"}));
    let owners: Vec<(&str, u64, u64, bool)> = za_down["owners"]
        .as_array()
        .expect("owners")
        .iter()
        .map(|o| {
            (
                o["name"].as_str().expect("a name"),
                o["pods"].as_u64().expect("pods"),
                o["deleted"].as_u64().expect("deleted"),
                o["noneLeft"] == true,
            )
        })
        .collect();
    assert_eq!(owners, [("db", 2, 2, true), ("web", 2, 1, false)]);
    let db = &za_down["owners"][0];
    let (first, last) = (
        instant(db["firstDeletion"].as_str().expect("first")),
        instant(db["lastDeletion"].as_str().expect("a bounded last deletion")),
    );
    let findings = audit["findings"].as_array().expect("findings");
    let gone: Vec<(&Value, &Value)> =
        findings.iter().filter(|f| f["rule"] == "loses-every-replica").map(|f| (&f["name"], &f["scenario"])).collect();
    assert_eq!(gone, [(&json!("cache"), &json!({"node": "b2"})), (&json!("db"), &json!({"zone": "za"}))]);
    let windows: BTreeMap<&str, (i128, i128)> = za_down["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .map(|n| {
            let taint = &n["predictedTaint"];
            let bound = |field: &str| instant(taint[field].as_str().unwrap_or_else(|| panic!("{n} is tainted")));
            (n["name"].as_str().expect("a name"), (bound("earliest"), bound("latest")))
        })
        .collect();
    assert_eq!(windows.keys().copied().collect::<Vec<_>>(), za);

    // Live, the same question gets the same answer (every node, every pod and the Leases read from
    // the API server), up to a heartbeat that landed after the dump.
    let live = live_audit(&plane, stopped);
    assert_eq!(counts(&live), counts(&audit));
    assert_eq!(rules(&live), rules(&audit));

    // For real: za's taints inside their windows, none on zb.
    let seen = taints_seen(&plane, za.len());
    assert_eq!(seen.keys().map(String::as_str).collect::<Vec<_>>(), za, "only za's nodes");
    for (name, window) in &windows {
        let (added, at) = seen[*name];
        assert_in_window(name, added, at, *window, stopped);
    }
    // `db` loses both, the last inside the audit's window; `web` and `cache` keep theirs on zb.
    let deletions = deletions_of(&plane, &["db-0".to_owned(), "db-1".to_owned(), "web-a".to_owned()]);
    let last_db = deletions["db-0"][0].max(deletions["db-1"][0]);
    eprintln!(
        "audit: db's last replica deleted {} after the stop, predicted {}..{}",
        after(stopped, last_db),
        after(stopped, first),
        after(stopped, last)
    );
    assert!(last_db >= first - SLACK && last_db <= last + SLACK, "db's last deletion outside the audit's window");
    assert!(!deletions.contains_key("web-b") && !deletions.contains_key("cache-a"), "{deletions:?}");
    assert!(condition_taints(&plane).keys().all(|n| n.starts_with('a')), "zb is healthy: never tainted");
}

/// The workloads of both audit tests' two-zone clusters (za: a1–a3, zb: b1–b2): `db`'s two replicas in
/// za, `web`'s one in each zone, `cache`'s one on b2.
pub(super) fn workloads() -> [Value; 5] {
    [
        owned("db-0", "a1", "StatefulSet", "db"),
        owned("db-1", "a2", "StatefulSet", "db"),
        owned("web-a", "a3", "ReplicaSet", "web"),
        owned("web-b", "b1", "ReplicaSet", "web"),
        owned("cache-a", "b2", "ReplicaSet", "cache"),
    ]
}
