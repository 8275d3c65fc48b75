//! A game day on paper, then for real: `plan --down` over a dump of a healthy cluster predicts what
//! the node lifecycle controller and the taint-eviction controller do if these nodes' kubelets stop
//! now; then their heartbeats really stop at that `--now`, and the real controllers' taints and
//! deletions land inside the predicted windows (±1.5 s), and the zone predicted held gets no taint.
//!
//! Two zones: in `z1`, four of twelve nodes go down (33 %, under the unhealthy threshold: the zone
//! stays Normal and its rate limiter taints them one per 1/`--node-eviction-rate`); in `z2`, three of
//! four go down, chosen by a label (`--down-selector rack=r7`): the small zone is partially disrupted,
//! its rate 0, its nodes held.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::lifecycle::{
    SECOND, SILENT_AFTER, after, assert_deleted_in_window, assert_in_window, clock, condition_taints, deletions_of,
    dump, in_zone, plan, plan_node, predicted_window, rfc3339, short_grace_pod, taints_seen, wait_heartbeats,
    wait_unknown,
};
use super::{Options, node};
use crate::control_plane;
use crate::util::{command, run_command};

const FLAGS: [&str; 3] = ["--node-monitor-period=2s", "--node-monitor-grace-period=10s", "--node-eviction-rate=0.25"];

/// What the game day assumes: these nodes of `z1` by name, `z2`'s rack `r7` by label.
const DOWN: [&str; 4] = ["--down", "n01,n02,n03,n04", "--down-selector", "rack=r7"];

/// A pod of `owner` (a controller that is not there: nothing here collects garbage) on `node`.
pub(super) fn owned(name: &str, node: &str, kind: &str, owner: &str) -> Value {
    let mut pod = short_grace_pod(name, node, 2);
    pod["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": kind, "name": owner,
        "uid": "6f1c2a4e-0b7d-4c1e-9f3a-5d8e7b6a4c21", "controller": true}]);
    pod
}

/// A node of zone `z2` on rack `rack`.
fn on_rack(name: &str, rack: &str) -> Value {
    node(name, &[("topology.kubernetes.io/region", "r"), ("topology.kubernetes.io/zone", "z2"), ("rack", rack)], &[])
}

/// Asserts that `docs/game-day.md` runs the command run here and shows what it printed (`printed`),
/// times and durations aside.
fn the_docs_show(printed: &str, more: &[&str]) {
    use crate::offline::readme_examples::{examples, shows};
    let page = "docs/game-day.md";
    let text = std::fs::read_to_string(crate::util::repo().join(page)).expect("the page");
    let command =
        format!("kubectl taint-evict plan -f dump.json {} {} {SILENT_AFTER}", more.join(" "), FLAGS.join(" "));
    let example = examples(&text).into_iter().find(|e| e.command == command);
    let example = example.unwrap_or_else(|| panic!("{page} runs `{command}`"));
    let lines: Vec<String> = printed.lines().map(str::to_owned).collect();
    assert!(
        shows(&lines, &example.shown),
        "{page}:{} shows:\n{}\n--- plan printed:\n{printed}",
        example.line,
        example.shown.join("\n")
    );
}

#[test]
fn real_apiserver_game_day_predicted_on_a_healthy_dump_comes_true_when_the_kubelets_stop() {
    let started = Instant::now();
    let options = Options {
        controller_manager: true,
        controller_manager_args: FLAGS.iter().map(|f| (*f).to_owned()).collect(),
        ..Options::default()
    };
    let mut plane = control_plane!("game-day", &options);
    let z1: Vec<String> = (1..=12).map(|i| format!("n{i:02}")).collect();
    let (lost_z1, healthy_z1): (Vec<&str>, Vec<&str>) =
        (z1[..4].iter().map(String::as_str).collect(), z1[4..].iter().map(String::as_str).collect());
    let lost_z2 = ["m1", "m2", "m3"];
    let mut objects: Vec<Value> = z1.iter().map(|n| in_zone(n, "z1")).collect();
    objects.extend([on_rack("m1", "r7"), on_rack("m2", "r7"), on_rack("m3", "r7"), on_rack("m4", "r8")]);
    objects.extend([
        owned("web-a", "n01", "ReplicaSet", "web-5d8f"),
        owned("web-b", "n02", "ReplicaSet", "web-5d8f"),
        owned("web-c", "n05", "ReplicaSet", "web-5d8f"),
        owned("db-0", "n03", "StatefulSet", "db"),
        owned("db-1", "n04", "StatefulSet", "db"),
        owned("cache-a", "m1", "ReplicaSet", "cache-6c7d"),
    ]);
    plane.create(&objects);
    let down: Vec<&str> = lost_z1.iter().chain(&lost_z2).copied().collect();
    let heartbeats = plane.keep_healthy(&down);
    let healthy: Vec<&str> = healthy_z1.iter().copied().chain(["m4"]).collect();
    let _healthy = plane.keep_healthy(&healthy);
    wait_heartbeats(&plane, 16, "n01");

    // On paper: a dump of the healthy cluster, the kubelets stopping at `now`.
    let (healthy_dump, _) = dump(&plane);
    heartbeats.stop();
    let stopped = clock();
    let json = plan(&healthy_dump, stopped, &FLAGS, &[&DOWN[..], &["-o", "json"]].concat());
    let summary = plan(&healthy_dump, stopped, &FLAGS, &[&DOWN[..], &["--summary"]].concat());
    eprintln!("--- game day at {}\n{summary}\n{json}", rfc3339(stopped));
    let prediction: Value = serde_json::from_str(&json).expect("plan prints JSON");
    assert_eq!(prediction["whatIf"]["down"], json!(["n01", "n02", "n03", "n04", "m1", "m2", "m3"]));
    for name in lost_z2 {
        let node = plan_node(&prediction, name);
        assert_eq!((&node["held"]["reason"], &node["held"]["zone"]), (&json!("partial-disruption"), &json!("z2")));
        assert!(node["predictedTaint"].is_null(), "{node}");
    }
    let windows: BTreeMap<&str, (i128, i128)> =
        lost_z1.iter().map(|n| (*n, predicted_window(&prediction, n))).collect();
    let owners = prediction["owners"].as_array().expect("owners");
    let rolled: Vec<(&str, u64, u64, bool)> = owners
        .iter()
        .map(|o| {
            let number = |field: &str| o[field].as_u64().expect("a count");
            (o["name"].as_str().expect("a name"), number("pods"), number("deleted"), o["noneLeft"] == true)
        })
        .collect();
    assert_eq!(rolled, [("db", 2, 2, true), ("web-5d8f", 3, 2, false)], "cache-6c7d's zone is held: it loses none");

    // Live, the same question gets the same answer (read from the API server: the node LIST with the
    // selector, every pod, the Leases), up to a heartbeat that landed after the dump.
    let now = rfc3339(stopped);
    let mut args = vec!["plan", "--now", &now, SILENT_AFTER, "-o", "json"];
    args.extend(FLAGS);
    args.extend(DOWN);
    let live = run_command(command().args(&args).arg("--kubeconfig").arg(plane.kubeconfig()), None);
    assert_eq!(live.code, 0, "{}", live.stderr);
    let live: Value = serde_json::from_str(&live.stdout).expect("plan prints JSON");
    assert_eq!(live["whatIf"], prediction["whatIf"]);
    let counts = |plan: &Value| -> Vec<Value> {
        let owners = plan["owners"].as_array().cloned().unwrap_or_default();
        owners.iter().map(|o| json!([o["kind"], o["name"], o["pods"], o["deleted"], o["noneLeft"]])).collect()
    };
    assert_eq!(counts(&live), counts(&prediction));
    for name in lost_z2 {
        assert_eq!(plan_node(&live, name)["held"]["reason"], "partial-disruption");
    }

    // For real: every taint of z1 inside its window, none in z2.
    let seen = taints_seen(&plane, lost_z1.len());
    assert_eq!(seen.keys().map(String::as_str).collect::<Vec<_>>(), lost_z1, "only the down nodes of z1");
    for (name, window) in &windows {
        let (added, at) = seen[*name];
        assert_in_window(name, added, at, *window, stopped);
    }

    // The taint-eviction controller's deletions, inside each pod's window.
    let pods = [("web-a", "n01"), ("web-b", "n02"), ("db-0", "n03"), ("db-1", "n04")];
    let deletions = deletions_of(&plane, &pods.map(|(pod, _)| pod.to_owned()));
    for (name, node) in pods {
        assert_deleted_in_window(&prediction, node, name, &deletions, stopped);
    }
    assert!(!deletions.contains_key("web-c") && !deletions.contains_key("cache-a"), "{deletions:?}");

    // z2: Ready=Unknown, partially disrupted, and no taint two grace periods on.
    let unknown = wait_unknown(&plane, &lost_z2);
    eprintln!("game day: z2 Ready=Unknown seen {} after the stop", after(stopped, unknown));
    while clock() < unknown + 20 * SECOND {
        let tainted: Vec<String> = condition_taints(&plane).into_keys().filter(|n| n.starts_with('m')).collect();
        assert!(tainted.is_empty(), "z2 is held, yet the controller tainted {tainted:?}");
        std::thread::park_timeout(Duration::from_millis(250));
    }
    assert!(!plane.controller_deletions().contains_key("cache-a"), "no taint, no eviction");
    the_docs_show(&summary, &[&DOWN[..], &["--summary"]].concat());
    eprintln!("game day: {:.1} s", started.elapsed().as_secs_f64());
}
