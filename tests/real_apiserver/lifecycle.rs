//! Before the taint, on the real control plane: a node stops renewing its Lease, the prediction is made
//! from a `kubectl get nodes,pods,leases -A -o json` dump taken then, and the real node-lifecycle
//! controller's `unreachable` taint, and the taint-eviction controller's deletion after it, land inside
//! the predicted windows (±1.5 s).
//!
//! Then the zone scenarios of the node lifecycle controller (1.29, its zones as docs/node-lifecycle.md has them), each
//! predicted by `plan -f` over a dump taken a few seconds after the heartbeats stopped:
//! - four of twelve nodes of one zone: 33 % is under the unhealthy threshold, the zone stays Normal and
//!   its token bucket lets the taints through one per 1/`--node-eviction-rate`, in an order no snapshot
//!   shows (each node's window spans every slot); pods deleted after them stay Terminating without a
//!   kubelet, and `plan` flags them stuck;
//! - three of four nodes of a small zone: partially disrupted at the pass that marks them Unknown, rate
//!   0 (the zone is not larger than `--large-cluster-size-threshold`): held, never tainted;
//! - every node: every zone fully disrupted, the controller's all-zones-down mode removes the taint it
//!   had added and adds none.
//!
//! The heartbeat loop stamps a Lease's `renewTime` before `kubectl apply` starts, so on a loaded machine
//! the write reaches the controller a few hundred milliseconds after the instant the prediction starts
//! from: taints then come up to that much after the predicted latest (inside the slack).

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Options, node};
use crate::control_plane;
use crate::util::instant;
use taint_evict::decode::lifecycle::read_health;
use taint_evict::engine::lifecycle::{ConditionTaint, Flags, predict};
use taint_evict::engine::time::Timestamp;

pub(super) const SLACK: i128 = 1_500_000_000;
pub(super) const SECOND: i128 = 1_000_000_000;

fn zone_node(name: &str) -> Value {
    node(name, &[("topology.kubernetes.io/region", "r"), ("topology.kubernetes.io/zone", "z")], &[])
}

pub(super) fn unreachable_pod(name: &str, node: &str, seconds: i64) -> Value {
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

// The zone scenarios: several nodes stop at once, the prediction is `plan -f` over a dump taken
// then (the binary, with the controller's own flags), and the real controllers act on it.

/// Nanoseconds since the epoch, now.
pub(super) fn clock() -> i128 {
    jiff::Timestamp::now().as_nanosecond()
}

/// `nanos` as RFC 3339 (UTC, with the fraction).
pub(super) fn rfc3339(nanos: i128) -> String {
    jiff::Timestamp::from_nanosecond(nanos).expect("a representable instant").to_string()
}

/// Waits, without a sleep of fixed length, until the clock reaches `nanos`.
pub(super) fn wait_until(nanos: i128) {
    while clock() < nanos {
        std::thread::park_timeout(Duration::from_millis(20));
    }
}

/// A node of zone `zone` (region `r`).
pub(super) fn in_zone(name: &str, zone: &str) -> Value {
    node(name, &[("topology.kubernetes.io/region", "r"), ("topology.kubernetes.io/zone", zone)], &[])
}

/// A pod on `node` that tolerates `unreachable:NoExecute` for `seconds` and has a 1 s termination
/// grace period (its `deletionTimestamp` is the deletion call + 1 s).
pub(super) fn short_grace_pod(name: &str, node: &str, seconds: i64) -> Value {
    let mut pod = unreachable_pod(name, node, seconds);
    pod["spec"]["terminationGracePeriodSeconds"] = json!(1);
    pod
}

/// Waits until the controller manager has synced, the Leases of all `count` nodes exist, and
/// `watched`'s has been renewed once more since: every node has been seen heartbeating.
pub(super) fn wait_heartbeats(plane: &super::ControlPlane, count: usize, watched: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    let renewed = |plane: &super::ControlPlane| -> (usize, Option<String>) {
        let leases = plane.get(&["leases", "-n", "kube-node-lease"]);
        let items = leases["items"].as_array().cloned().unwrap_or_default();
        let time = items.iter().find(|l| l["metadata"]["name"] == watched).map(|l| l["spec"]["renewTime"].to_string());
        (items.len(), time)
    };
    let first = loop {
        let (leases, time) = renewed(plane);
        if leases == count && plane.log("kube-controller-manager").contains("Caches are synced") {
            break time;
        }
        assert!(Instant::now() < deadline, "no sync or only {leases} of {count} Leases within 60 s");
        std::thread::park_timeout(Duration::from_millis(100));
    };
    while renewed(plane).1 == first {
        assert!(Instant::now() < deadline, "{watched}'s Lease is not renewed");
        std::thread::park_timeout(Duration::from_millis(100));
    }
}

/// How old a Lease renewal must be for `plan` to call a Ready node silent. The test renews the
/// healthy nodes' Leases every second, but on a loaded machine a renewal (a `kubectl apply`) can come
/// seconds late: the margin keeps a late one from reading as a lost heartbeat.
pub const SILENT_AFTER: &str = "--silent-after=4500ms";

/// When, after the heartbeats stop, the dump before the taint is taken: past `SILENT_AFTER`, and well
/// before the controller's 10 s grace period ends.
const ASK_AFTER: i128 = 5 * SECOND;

/// A dump as `kubectl get nodes,pods,leases -A -o json` writes it, and the instant it was taken.
pub(super) fn dump(plane: &super::ControlPlane) -> (String, i128) {
    let dump = plane.kubectl_ok(&["get", "nodes,pods,leases", "-A", "-o", "json"], None);
    (dump, clock())
}

/// `plan -f -` over `dump` at `now`, with the controller's flags `kcm` and `more` arguments.
pub(super) fn plan(dump: &str, now: i128, kcm: &[&str], more: &[&str]) -> String {
    plan_silent_after(dump, now, SILENT_AFTER, kcm, more)
}

/// [`plan`], a node silent after `silent_after` (`--silent-after=…`).
pub(super) fn plan_silent_after(dump: &str, now: i128, silent_after: &str, kcm: &[&str], more: &[&str]) -> String {
    let now = rfc3339(now);
    let mut args = vec!["plan", "-f", "-", "--now", &now, silent_after];
    args.extend(kcm);
    args.extend(more);
    let run = crate::util::run(&args, Some(dump.as_bytes()));
    assert_eq!(run.code, 0, "plan {args:?}: {}", run.stderr);
    run.stdout
}

/// `plan -o json`, parsed, and the table, both printed (with the moment) for the record.
fn plan_both(what: &str, dump: &str, now: i128, kcm: &[&str]) -> Value {
    plan_and_table(what, dump, now, kcm).0
}

/// `plan -o json`, parsed, and the table, both printed (with the moment) for the record.
fn plan_and_table(what: &str, dump: &str, now: i128, kcm: &[&str]) -> (Value, String) {
    let table = plan(dump, now, kcm, &[]);
    let json = plan(dump, now, kcm, &["-o", "json"]);
    eprintln!("--- {what}: plan at {}\n{table}\n{json}", rfc3339(now));
    (serde_json::from_str(&json).expect("plan prints JSON"), table)
}

/// Asserts that the docs' walkthrough example `which` (0: before the taint, 1: after;
/// `docs/node-lifecycle.md`) is the command run here and shows what it printed (`table`), times and
/// durations aside.
fn the_readme_shows(which: usize, table: &str, kcm: &[&str]) {
    use crate::offline::readme_examples::{examples, shows};
    let page = "docs/node-lifecycle.md";
    let readme = std::fs::read_to_string(crate::util::repo().join(page)).expect("the page");
    let command = format!("kubectl taint-evict plan -f dump.json {} {SILENT_AFTER}", kcm.join(" "));
    let walkthrough: Vec<_> = examples(&readme).into_iter().filter(|e| e.command == command).collect();
    assert_eq!(walkthrough.len(), 2, "{page}'s walkthrough runs `{command}` twice");
    let example = &walkthrough[which];
    let printed: Vec<String> = table.lines().map(str::to_owned).collect();
    assert!(
        shows(&printed, &example.shown),
        "{page}:{} shows:\n{}\n--- plan printed:\n{table}",
        example.line,
        example.shown.join("\n")
    );
}

/// The node named `name` in a plan document.
pub(super) fn plan_node<'a>(plan: &'a Value, name: &str) -> &'a Value {
    let nodes = plan["nodes"].as_array().expect("nodes");
    nodes.iter().find(|n| n["name"] == name).unwrap_or_else(|| panic!("{name} is in the plan: {plan}"))
}

/// The node's `predictedTaint` window, in nanoseconds.
pub(super) fn predicted_window(plan: &Value, name: &str) -> (i128, i128) {
    let taint = &plan_node(plan, name)["predictedTaint"];
    let earliest = instant(taint["earliest"].as_str().unwrap_or_else(|| panic!("{name} predicted: {taint}")));
    let latest = instant(taint["latest"].as_str().unwrap_or_else(|| panic!("{name}'s window is bounded: {taint}")));
    (earliest, latest)
}

/// The `unreachable`/`not-ready` NoExecute taints on the nodes now: node → `timeAdded`.
pub(super) fn condition_taints(plane: &super::ControlPlane) -> std::collections::BTreeMap<String, i128> {
    let nodes = plane.get(&["nodes"]);
    let mut found = std::collections::BTreeMap::new();
    for node in nodes["items"].as_array().into_iter().flatten() {
        let taints = node["spec"]["taints"].as_array().into_iter().flatten();
        for taint in taints.filter(|t| t["effect"] == "NoExecute") {
            let key = taint["key"].as_str().unwrap_or_default();
            if key == "node.kubernetes.io/unreachable" || key == "node.kubernetes.io/not-ready" {
                let name = node["metadata"]["name"].as_str().unwrap_or_default().to_owned();
                found.insert(name, instant(taint["timeAdded"].as_str().expect("timeAdded")));
            }
        }
    }
    found
}

/// Seconds from `from` to `to`, for messages.
pub(super) fn after(from: i128, to: i128) -> String {
    format!("{:.3} s", (to - from) as f64 / 1e9)
}

/// Asserts a taint written at `added` (whole seconds: the real instant is in `[added, added + 1 s)`)
/// and first seen at `seen` lies in `window` (±1.5 s).
pub(super) fn assert_in_window(name: &str, added: i128, seen: i128, window: (i128, i128), stopped: i128) {
    let (earliest, latest) = window;
    let text = format!(
        "{name}: taint timeAdded {} (seen {}) after the stop, predicted {}..{}",
        after(stopped, added),
        after(stopped, seen),
        after(stopped, earliest),
        after(stopped, latest)
    );
    eprintln!("{text}");
    assert!(added + SECOND >= earliest - SLACK && added <= latest + SLACK, "timeAdded outside the window: {text}");
    assert!(seen >= earliest - SLACK, "seen before the window: {text}");
}

/// Polls the nodes until `count` carry a condition taint (at most 60 s): each node's `timeAdded`, and
/// when it was first seen.
pub(super) fn taints_seen(
    plane: &super::ControlPlane,
    count: usize,
) -> std::collections::BTreeMap<String, (i128, i128)> {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut seen = std::collections::BTreeMap::new();
    while seen.len() < count {
        let at = clock();
        for (name, added) in condition_taints(plane) {
            seen.entry(name).or_insert((added, at));
        }
        assert!(Instant::now() < deadline, "not {count} nodes tainted within 60 s: {seen:?}");
        std::thread::park_timeout(Duration::from_millis(100));
    }
    seen
}

/// Polls the controller manager's log until the taint-eviction controller has deleted every one of
/// `pods` (at most 30 s); every pod's deletions.
pub(super) fn deletions_of(
    plane: &super::ControlPlane,
    pods: &[String],
) -> std::collections::BTreeMap<String, Vec<i128>> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let deletions = plane.controller_deletions();
        if pods.iter().all(|pod| deletions.contains_key(pod)) {
            return deletions;
        }
        assert!(Instant::now() < deadline, "not every pod deleted within 30 s of the taints: {deletions:?}");
        std::thread::park_timeout(Duration::from_millis(100));
    }
}

/// Asserts that pod `name` of `node` waits on a predicted taint in `prediction`, and that its first
/// deletion in `deletions` lies in its window (±1.5 s).
pub(super) fn assert_deleted_in_window(
    prediction: &Value,
    node: &str,
    name: &str,
    deletions: &std::collections::BTreeMap<String, Vec<i128>>,
    stopped: i128,
) {
    let pods = plan_node(prediction, node)["pods"].as_array().cloned().unwrap_or_default();
    let pod = pods.iter().find(|p| p["name"] == name).unwrap_or_else(|| panic!("{name} in the plan"));
    assert_eq!(pod["basis"], "predicted-taint", "{pod}");
    let from = instant(pod["evictAt"].as_str().expect("evictAt"));
    let to = instant(pod["evictAtLatest"].as_str().expect("evictAtLatest"));
    let deleted = deletions[name][0];
    eprintln!(
        "{name}: deleted {} after the stop, predicted {}..{}",
        after(stopped, deleted),
        after(stopped, from),
        after(stopped, to)
    );
    assert!(deleted >= from - SLACK && deleted <= to + SLACK, "{name}: deletion outside its window");
}

const ZONE_FLAGS: [&str; 3] =
    ["--node-monitor-period=2s", "--node-monitor-grace-period=10s", "--node-eviction-rate=0.25"];

#[test]
fn real_apiserver_four_of_twelve_in_a_zone_are_tainted_one_by_one_inside_their_windows() {
    let started = Instant::now();
    let options = Options {
        controller_manager: true,
        controller_manager_args: ZONE_FLAGS.iter().map(|f| (*f).to_owned()).collect(),
        ..Options::default()
    };
    let mut plane = control_plane!("lifecycle-rate-limit", &options);
    let names: Vec<String> = (1..=12).map(|i| format!("n{i:02}")).collect();
    let (lost, healthy): (Vec<&str>, Vec<&str>) =
        (names[..4].iter().map(String::as_str).collect(), names[4..].iter().map(String::as_str).collect());
    let mut objects: Vec<Value> = names.iter().map(|n| in_zone(n, "z1")).collect();
    objects.extend(lost.iter().map(|n| short_grace_pod(&format!("p-{n}"), n, 2)));
    plane.create(&objects);
    let heartbeats = plane.keep_healthy(&lost);
    let _healthy = plane.keep_healthy(&healthy);
    wait_heartbeats(&plane, 12, "n01");
    heartbeats.stop();
    let stopped = clock();
    wait_until(stopped + ASK_AFTER);
    let (before, now) = dump(&plane);
    let (prediction, table) = plan_and_table("four of twelve, before the taint", &before, now, &ZONE_FLAGS);
    the_readme_shows(0, &table, &ZONE_FLAGS);
    let shown: Vec<&str> =
        prediction["nodes"].as_array().expect("nodes").iter().filter_map(|n| n["name"].as_str()).collect();
    assert_eq!(shown, lost, "only the silent nodes are about to be tainted");
    let zone = &prediction["zones"][0];
    assert_eq!((zone["name"].as_str(), zone["state"].as_str()), (Some("z1"), Some("Normal")), "{zone}");
    let windows: Vec<(i128, i128)> = lost.iter().map(|n| predicted_window(&prediction, n)).collect();

    // The real controller: every taint, when it was first seen.
    let seen = taints_seen(&plane, lost.len());
    assert!(healthy.iter().all(|n| !seen.contains_key(*n)), "a healthy node was tainted: {seen:?}");
    for (name, window) in lost.iter().zip(&windows) {
        let (added, at) = seen[*name];
        assert_in_window(name, added, at, *window, stopped);
    }
    // One at a time, at the zone's rate: the k-th taint no earlier than k / rate after the first.
    let mut instants: Vec<i128> = seen.values().map(|(added, _)| *added).collect();
    instants.sort_unstable();
    for pair in instants.windows(2) {
        assert!(pair[1] - pair[0] >= 4 * SECOND - SECOND, "taints closer than 1/rate: {instants:?}");
    }

    // The taint-eviction controller deletes each pod 2 s after its node's taint, inside the pod's window.
    let pods: Vec<String> = lost.iter().map(|n| format!("p-{n}")).collect();
    let deletions = deletions_of(&plane, &pods);
    for n in &lost {
        assert_deleted_in_window(&prediction, n, &format!("p-{n}"), &deletions, stopped);
    }

    // After: the taints are there, and the pods, deleted, stay Terminating on nodes without a
    // kubelet: once their 1 s of grace is over, plan flags them stuck since their deletionTimestamp.
    let last = lost.iter().map(|n| deletions[&format!("p-{n}")][0]).max().unwrap_or_default();
    wait_until(last + 2 * SECOND);
    let (after_taint, now) = dump(&plane);
    let (stuck, table) = plan_and_table("four of twelve, after the taints", &after_taint, now, &ZONE_FLAGS);
    let objects: Value = serde_json::from_str(&after_taint).expect("a JSON dump");
    for n in &lost {
        let name = format!("p-{n}");
        let object = objects["items"].as_array().expect("items").iter().find(|o| o["metadata"]["name"] == *name);
        let deletion = object.map(|o| o["metadata"]["deletionTimestamp"].clone()).unwrap_or_default();
        assert!(deletion.is_string(), "{name} is still there, Terminating: {object:?}");
        let pod = plan_node(&stuck, n)["pods"].as_array().expect("pods").iter().find(|p| p["name"] == *name).cloned();
        let pod = pod.unwrap_or_else(|| panic!("{name} in the plan"));
        assert_eq!(
            (&pod["terminating"], &pod["stuck"], &pod["stuckSince"]),
            (&json!(true), &json!(true), &deletion),
            "{pod}"
        );
    }
    the_readme_shows(1, &table, &ZONE_FLAGS);
    eprintln!("four of twelve: {:.1} s", started.elapsed().as_secs_f64());
}

/// The `Ready` status of each node now.
fn ready(plane: &super::ControlPlane) -> std::collections::BTreeMap<String, String> {
    let nodes = plane.get(&["nodes"]);
    let items = nodes["items"].as_array().into_iter().flatten();
    items
        .map(|node| {
            let conditions = node["status"]["conditions"].as_array().into_iter().flatten();
            let status = conditions.filter(|c| c["type"] == "Ready").find_map(|c| c["status"].as_str());
            (node["metadata"]["name"].as_str().unwrap_or_default().to_owned(), status.unwrap_or_default().to_owned())
        })
        .collect()
}

/// Polls until every node of `names` is `Ready=Unknown`; the instant that was first seen.
pub(super) fn wait_unknown(plane: &super::ControlPlane, names: &[&str]) -> i128 {
    let deadline = Instant::now() + Duration::from_secs(40);
    loop {
        let ready = ready(plane);
        if names.iter().all(|n| ready.get(*n).is_some_and(|s| s == "Unknown")) {
            return clock();
        }
        assert!(Instant::now() < deadline, "not Ready=Unknown within 40 s: {ready:?}");
        std::thread::park_timeout(Duration::from_millis(100));
    }
}

/// Polls the nodes until `until`; fails at the first `unreachable`/`not-ready` NoExecute taint seen.
pub(super) fn assert_no_condition_taint_until(plane: &super::ControlPlane, until: i128, why: &str) {
    while clock() < until {
        let taints = condition_taints(plane);
        assert!(taints.is_empty(), "{why}, yet the controller tainted: {taints:?}");
        std::thread::park_timeout(Duration::from_millis(250));
    }
}

const SMALL_FLAGS: [&str; 3] =
    ["--node-monitor-period=2s", "--node-monitor-grace-period=10s", "--node-eviction-rate=0.5"];

#[test]
fn real_apiserver_small_zone_partially_disrupted_is_held_and_never_tainted() {
    let started = Instant::now();
    let options = Options {
        controller_manager: true,
        controller_manager_args: SMALL_FLAGS.iter().map(|f| (*f).to_owned()).collect(),
        ..Options::default()
    };
    let mut plane = control_plane!("lifecycle-partial", &options);
    let (lost, healthy) = (["m1", "m2", "m3"], ["m4", "h1", "h2"]);
    let mut objects = vec![in_zone("m1", "z1"), in_zone("m2", "z1"), in_zone("m3", "z1"), in_zone("m4", "z1")];
    objects.extend([in_zone("h1", "z2"), in_zone("h2", "z2"), short_grace_pod("zero", "m1", 0)]);
    plane.create(&objects);
    let heartbeats = plane.keep_healthy(&lost);
    let _healthy = plane.keep_healthy(&healthy);
    wait_heartbeats(&plane, 6, "m1");
    heartbeats.stop();
    let stopped = clock();
    wait_until(stopped + ASK_AFTER);
    let (before, now) = dump(&plane);
    let prediction = plan_both("small zone, before Ready=Unknown", &before, now, &SMALL_FLAGS);
    for name in lost {
        let node = plan_node(&prediction, name);
        assert_eq!(node["held"]["reason"], "partial-disruption", "{node}");
        assert_eq!(node["held"]["zone"], "z1", "{node}");
        assert!(node["predictedTaint"].is_null(), "{node}");
    }
    let zero = &plan_node(&prediction, "m1")["pods"][0];
    assert_eq!((zero["name"].as_str(), zero["verdict"].as_str()), (Some("zero"), Some("unaffected")), "{zero}");

    let unknown = wait_unknown(&plane, &lost);
    eprintln!("small zone: Ready=Unknown seen {} after the stop", after(stopped, unknown));
    let (partial, now) = dump(&plane);
    let during = plan_both("small zone, Ready=Unknown", &partial, now, &SMALL_FLAGS);
    let z1 = during["zones"].as_array().expect("zones").iter().find(|z| z["name"] == "z1").cloned().expect("z1");
    assert_eq!(
        (z1["state"].as_str(), z1["notReady"].as_u64(), z1["ratePerSecond"].as_f64()),
        (Some("PartialDisruption"), Some(3), Some(0.0)),
        "{z1}"
    );
    // No taint, so the taint-eviction controller leaves zero alone; deleted by hand, it stays
    // Terminating on a node without a kubelet, and once its 1 s of grace is over plan and explain say
    // it is stuck (the node is Ready=Unknown, untainted).
    plane.kubectl_ok(&["delete", "pod", "zero", "--wait=false"], None);
    let deleted = clock();
    wait_until(deleted + 2500 * 1_000_000);
    let (stuck, now) = dump(&plane);
    let flagged = plan_both("small zone, zero deleted by hand", &stuck, now, &SMALL_FLAGS);
    let zero = &plan_node(&flagged, "m1")["pods"][0];
    assert_eq!(
        (&zero["name"], &zero["terminating"], &zero["stuck"]),
        (&json!("zero"), &json!(true), &json!(true)),
        "{zero}"
    );
    let since = instant(zero["stuckSince"].as_str().expect("stuckSince"));
    assert!(since > deleted - 2 * SECOND && since <= deleted + 2 * SECOND, "stuck since the deletion + 1 s: {zero}");
    let now = rfc3339(now);
    let explain = crate::util::run(&["explain", "-f", "-", "--now", &now, "zero"], Some(stuck.as_bytes()));
    assert_eq!(explain.code, 0, "{}", explain.stderr);
    eprintln!("{}", explain.stdout);
    assert!(
        explain.stdout.contains("Stuck terminating since ") && explain.stdout.contains("out-of-service"),
        "{}",
        explain.stdout
    );
    // Two grace periods past Ready=Unknown (the taint would have come one pass after it).
    assert_no_condition_taint_until(&plane, unknown + 20 * SECOND, "z1 is partially disrupted");
    assert!(
        !plane.controller_deletions().contains_key("zero"),
        "zero tolerates nothing for 0 s: no taint, no eviction"
    );
    eprintln!("small zone: {:.1} s", started.elapsed().as_secs_f64());
}

#[test]
fn real_apiserver_all_zones_down_removes_the_taint_and_adds_none() {
    let started = Instant::now();
    let options = Options {
        controller_manager: true,
        controller_manager_args: SMALL_FLAGS.iter().map(|f| (*f).to_owned()).collect(),
        ..Options::default()
    };
    let mut plane = control_plane!("lifecycle-all-down", &options);
    let mut objects = vec![in_zone("a1", "z1"), in_zone("a2", "z1"), in_zone("b1", "z2"), in_zone("b2", "z2")];
    objects.extend([short_grace_pod("long", "a1", 120), short_grace_pod("quick", "a1", 1)]);
    plane.create(&objects);
    let first = plane.keep_healthy(&["a1"]);
    let rest = plane.keep_healthy(&["a2", "b1", "b2"]);
    wait_heartbeats(&plane, 4, "a1");
    // a1 goes first, alone: its zone stays Normal (1 of 2), it is tainted in its window.
    first.stop();
    let alone = clock();
    wait_until(alone + ASK_AFTER);
    let (before, now) = dump(&plane);
    let prediction = plan_both("all zones down, a1 alone", &before, now, &SMALL_FLAGS);
    let window = predicted_window(&prediction, "a1");
    let deadline = Instant::now() + Duration::from_secs(40);
    let (tainted, seen) = loop {
        if let Some(added) = condition_taints(&plane).get("a1") {
            break (*added, clock());
        }
        assert!(Instant::now() < deadline, "a1 not tainted within 40 s");
        std::thread::park_timeout(Duration::from_millis(100));
    };
    assert_in_window("a1", tainted, seen, window, alone);
    let quick =
        plan_node(&prediction, "a1")["pods"].as_array().expect("pods").iter().find(|p| p["name"] == "quick").cloned();
    let quick = quick.expect("quick in the plan");
    let (from, to) = (
        instant(quick["evictAt"].as_str().expect("evictAt")),
        instant(quick["evictAtLatest"].as_str().expect("evictAtLatest")),
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    let deleted = loop {
        if let Some(at) = plane.controller_deletions().get("quick").and_then(|at| at.first()) {
            break *at;
        }
        assert!(Instant::now() < deadline, "quick not deleted within 20 s of the taint");
        std::thread::park_timeout(Duration::from_millis(100));
    };
    eprintln!(
        "quick: deleted {} after a1 stopped, predicted {}..{}",
        after(alone, deleted),
        after(alone, from),
        after(alone, to)
    );
    assert!(deleted >= from - SLACK && deleted <= to + SLACK, "quick: deletion outside its window");
    // Then every other node: each zone fully disrupted, every zone down.
    rest.stop();
    let stopped = clock();
    wait_until(stopped + ASK_AFTER);
    let (before, now) = dump(&plane);
    let prediction = plan_both("all zones down, before Ready=Unknown", &before, now, &SMALL_FLAGS);
    for name in ["a1", "a2", "b1", "b2"] {
        let node = plan_node(&prediction, name);
        assert_eq!(node["held"]["reason"], "all-zones-down", "{node}");
        assert!(node["predictedTaint"].is_null(), "{node}");
    }
    let pods = plan_node(&prediction, "a1")["pods"].as_array().cloned().unwrap_or_default();
    let long = pods.iter().find(|p| p["name"] == "long").expect("long in the plan");
    assert_eq!(long["verdict"], "unaffected", "{long}");

    // The real controller removes a1's taint when it enters master disruption mode, adds none.
    let deadline = Instant::now() + Duration::from_secs(40);
    let removed = loop {
        if !condition_taints(&plane).contains_key("a1") {
            break clock();
        }
        assert!(Instant::now() < deadline, "a1's taint (added {tainted}) not removed within 40 s");
        std::thread::park_timeout(Duration::from_millis(100));
    };
    eprintln!("all zones down: a1's taint removed (seen) {} after the others stopped", after(stopped, removed));
    let (down, now) = dump(&plane);
    let during = plan_both("all zones down, after the removal", &down, now, &SMALL_FLAGS);
    for name in ["a1", "a2", "b1", "b2"] {
        assert_eq!(plan_node(&during, name)["held"]["reason"], "all-zones-down");
    }
    assert_no_condition_taint_until(&plane, removed + 20 * SECOND, "every zone is down");
    assert!(!plane.controller_deletions().contains_key("long"), "long's eviction was cancelled with the taint");
    eprintln!("all zones down: {:.1} s", started.elapsed().as_secs_f64());
}
