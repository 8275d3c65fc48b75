//! Snapshots of a real control plane (kube-controller-manager v1.29.6) taken after kubelets stopped
//! heartbeating and before the node lifecycle controller tainted them (`tests/data/nlc/`), replayed
//! through the prediction: every taint the real controller then added, and every deletion the
//! taint-eviction controller then issued, must lie in the predicted window (±1.5 s); nodes the
//! controller held back must be predicted held.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use taint_evict::decode::lifecycle::read_health;
use taint_evict::engine::lifecycle::{Flags, HeldReason, NodeHealth, Prediction, deletion, predict};
use taint_evict::engine::model::{Effect, Toleration};
use taint_evict::engine::time::Timestamp;

/// The tolerance of the checks: the controller's API latency and the observer's watch delay.
const SLACK: i128 = 1_500_000_000;

/// The simulated kubelets renewed their Lease every 2 s: one older than this is silent.
const SILENT_AFTER: Duration = Duration::from_secs(5);

fn at(text: &str) -> Timestamp {
    let parsed: jiff::Timestamp = text.parse().unwrap_or_else(|e| panic!("timestamp {text:?}: {e}"));
    Timestamp::from_nanos(parsed.as_nanosecond())
}

/// A time of day on the fixtures' date.
fn clock(time: &str) -> Timestamp {
    at(&format!("2026-11-23T{time}Z"))
}

fn load(name: &str) -> (Vec<u8>, Value) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/nlc").join(name);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let list = serde_json::from_slice(&bytes).expect("the fixture is JSON");
    (bytes, list)
}

fn pods(list: &Value) -> impl Iterator<Item = &Value> {
    list["items"].as_array().expect("a List").iter().filter(|item| item["kind"] == "Pod")
}

fn tolerations(pod: &Value) -> Vec<Toleration> {
    pod["spec"]["tolerations"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| Toleration {
            key: t["key"].as_str().unwrap_or_default().into(),
            operator: t["operator"].as_str().unwrap_or_default().into(),
            value: t["value"].as_str().unwrap_or_default().into(),
            effect: t["effect"].as_str().filter(|e| !e.is_empty()).map(Effect::from),
            seconds: t["tolerationSeconds"].as_i64(),
        })
        .collect()
}

struct Fixture {
    list: Value,
    nodes: Vec<NodeHealth>,
    prediction: Prediction,
}

impl Fixture {
    fn new(name: &str, captured: &str, flags: Flags) -> Self {
        let (bytes, list) = load(name);
        let health = read_health(&bytes).expect("the fixture reads");
        assert!(health.node_leases > 0 && health.controller.is_some(), "{name} has the Leases");
        let nodes = health.nodes.clone();
        let prediction = predict(&health.observe(clock(captured), flags, SILENT_AFTER));
        Self { list, nodes, prediction }
    }

    fn node(&self, name: &str) -> &taint_evict::engine::lifecycle::NodeForecast {
        self.prediction.nodes.iter().find(|n| n.name.as_str() == name).unwrap_or_else(|| panic!("node {name}"))
    }

    /// The real controller tainted `node` at `seen`: it lies in the predicted window.
    #[track_caller]
    fn assert_tainted(&self, node: &str, seen: &str) {
        let forecast = self.node(node);
        let taint = forecast.taint.unwrap_or_else(|| panic!("{node}: a predicted taint, got {forecast:?}"));
        let seen = clock(seen);
        let latest = taint.latest.unwrap_or_else(|| panic!("{node}: a bounded window, got {taint:?}"));
        assert!(
            taint.earliest.add_nanos(-(SLACK as i64)) <= seen && seen <= latest.add_nanos(SLACK as i64),
            "{node}: tainted at {seen:?}, predicted {taint:?}"
        );
    }

    /// The taint-eviction controller deleted pod `exp/pod` at `called`: in the predicted window.
    #[track_caller]
    fn assert_deleted(&self, pod: &str, called: &str) {
        let object = pods(&self.list).find(|p| p["metadata"]["name"] == pod).expect("the pod");
        let node = object["spec"]["nodeName"].as_str().expect("bound");
        let forecast = self.node(node);
        let taint = forecast.taint.unwrap_or_else(|| panic!("{pod}: its node has a predicted taint"));
        let health = self.nodes.iter().find(|n| n.name.as_str() == node).expect("the node");
        let tolerations: Arc<[Toleration]> = tolerations(object).into();
        let window = deletion(&taint, &health.taints, &tolerations).expect("deleted some time");
        let called = clock(called);
        let latest = window.latest.expect("bounded");
        assert!(
            window.earliest.add_nanos(-(SLACK as i64)) <= called && called <= latest.add_nanos(SLACK as i64),
            "{pod}: deleted at {called:?}, predicted {window:?}"
        );
    }

    #[track_caller]
    fn assert_held(&self, node: &str, reason: HeldReason) {
        let forecast = self.node(node);
        assert_eq!(forecast.held.as_ref().map(|held| held.reason), Some(reason), "{node}: {forecast:?}");
        assert_eq!(forecast.taint, None, "{node}");
    }

    /// Nothing is predicted for these nodes (healthy, or already tainted).
    #[track_caller]
    fn assert_quiet(&self, nodes: &[&str]) {
        for node in nodes {
            let forecast = self.node(node);
            assert_eq!((forecast.taint, forecast.held.clone()), (None, None), "{node}");
        }
    }
}

fn defaults() -> Flags {
    Flags::defaults_for(29)
}

fn grace_20s() -> Flags {
    Flags { node_monitor_grace_period: Duration::from_secs(20), ..Flags::defaults_for(29) }
}

#[test]
fn nlc_fixture_a_single_silent_node_is_tainted_in_its_window() {
    let f = Fixture::new("a-single-unreachable.json", "18:25:43.315", defaults());
    assert!(f.prediction.phase_known);
    f.assert_tainted("a1", "18:26:15.641");
    f.assert_deleted("zero-a1", "18:26:15.650");
    f.assert_deleted("def-a1", "18:31:15.655");
    let a1 = f.node("a1").taint.expect("a1");
    let width = a1.latest.expect("bounded").nanos_since(a1.earliest);
    assert!(width < 2_000_000_000, "a phase-known window is narrow: {a1:?}");
    f.assert_quiet(&["a2", "a3", "a4", "a5", "a6", "a7", "n01", "n12"]);
}

#[test]
fn nlc_fixture_b_four_of_twelve_are_tainted_one_token_apart_in_any_order() {
    let f = Fixture::new("b-rate-limit-4-of-12.json", "18:27:23.291", defaults());
    for (node, seen) in
        [("n04", "18:27:55.675"), ("n01", "18:28:05.738"), ("n02", "18:28:15.794"), ("n03", "18:28:25.850")]
    {
        f.assert_tainted(node, seen);
    }
    for (pod, called) in [
        ("zero-n04", "18:27:55.688"),
        ("def-n04", "18:32:55.685"),
        ("zero-n01", "18:28:05.747"),
        ("def-n01", "18:33:05.747"),
        ("zero-n02", "18:28:15.803"),
        ("def-n02", "18:33:15.801"),
        ("zero-n03", "18:28:25.858"),
        ("def-n03", "18:33:25.861"),
    ] {
        f.assert_deleted(pod, called);
    }
    // a1 and a3 already carry the taint; a2 recovered.
    f.assert_quiet(&["a1", "a2", "a3", "n05", "n12"]);
}

#[test]
fn nlc_fixture_c_a_small_partially_disrupted_zone_is_held_and_a_dead_zone_is_tainted() {
    let f = Fixture::new("c-partial-z2-full-z3.json", "18:37:09.139", grace_20s());
    for node in ["m1", "m2", "m3"] {
        f.assert_held(node, HeldReason::PartialDisruption);
    }
    f.assert_tainted("f1", "18:37:23.278");
    f.assert_tainted("f2", "18:37:33.340");
    f.assert_deleted("zero-f1", "18:37:23.297");
    f.assert_deleted("zero-f2", "18:37:33.352");
    f.assert_quiet(&["m4", "h1", "h2", "h3"]);
}

#[test]
fn nlc_fixture_d_all_zones_down_holds_every_node_and_removes_the_taints() {
    let f = Fixture::new("d-all-zones-down.json", "18:38:16.697", grace_20s());
    for node in ["m1", "m2", "m3", "m4", "h1", "h2", "f1", "f2"] {
        f.assert_held(node, HeldReason::AllZonesDown);
    }
    // The excluded node is healthy: nothing to say about it (it died later, and stayed untainted).
    f.assert_quiet(&["h3"]);
}

/// `plan -f FIXTURE --now CAPTURED -o json` with the fixture's controller flags.
fn plan_json(name: &str, captured: &str, flags: &[&str]) -> Value {
    let file = format!("tests/data/nlc/{name}");
    let now = format!("2026-11-23T{captured}Z");
    // The simulated kubelets renewed every 2 s (README of the fixtures).
    let mut args = vec!["plan", "-f", &file, "--now", &now, "--silent-after", "5s", "-o", "json"];
    args.extend(flags);
    let result = crate::util::run(&args, None);
    assert_eq!(result.code, 0, "{}", result.stderr);
    serde_json::from_str(&result.stdout).expect("plan -o json prints JSON")
}

fn plan_node<'a>(plan: &'a Value, name: &str) -> &'a Value {
    let nodes = plan["nodes"].as_array().expect("nodes");
    nodes.iter().find(|node| node["name"] == name).unwrap_or_else(|| panic!("node {name} is shown: {plan:#}"))
}

/// `instant` lies in `[earliest, latest]` (±[`SLACK`]).
#[track_caller]
fn assert_within(earliest: &Value, latest: &Value, instant: &str, what: &str) {
    let earliest = at(earliest.as_str().unwrap_or_else(|| panic!("{what}: earliest {earliest}")));
    let latest = at(latest.as_str().unwrap_or_else(|| panic!("{what}: latest {latest}")));
    let instant = clock(instant);
    assert!(
        earliest.add_nanos(-(SLACK as i64)) <= instant && instant <= latest.add_nanos(SLACK as i64),
        "{what}: {instant:?} not in {earliest:?}..{latest:?}"
    );
}

#[track_caller]
fn assert_plan_tainted(plan: &Value, node: &str, seen: &str) {
    let taint = &plan_node(plan, node)["predictedTaint"];
    assert_eq!(taint["key"], "node.kubernetes.io/unreachable", "{node}: {taint}");
    assert_eq!(taint["effect"], "NoExecute", "{node}");
    assert_within(&taint["earliest"], &taint["latest"], seen, node);
}

#[track_caller]
fn assert_plan_deleted(plan: &Value, node: &str, pod: &str, called: &str) {
    let pods = plan_node(plan, node)["pods"].as_array().expect("pods");
    let pod_doc = pods.iter().find(|p| p["name"] == pod).unwrap_or_else(|| panic!("pod {pod}"));
    assert_eq!((&pod_doc["verdict"], &pod_doc["basis"]), (&"evict-at".into(), &"predicted-taint".into()), "{pod}");
    assert_within(&pod_doc["evictAt"], &pod_doc["evictAtLatest"], called, pod);
}

#[test]
fn plan_of_fixture_a_shows_the_silent_node_and_its_pods_deletion_windows() {
    let plan = plan_json("a-single-unreachable.json", "18:25:43.315", &[]);
    assert_eq!(plan["nodes"].as_array().map(Vec::len), Some(1), "only a1 is about to be tainted: {plan:#}");
    assert_plan_tainted(&plan, "a1", "18:26:15.641");
    assert_plan_deleted(&plan, "a1", "zero-a1", "18:26:15.650");
    assert_plan_deleted(&plan, "a1", "def-a1", "18:31:15.655");
    let a1 = plan_node(&plan, "a1");
    assert_eq!((&a1["ready"], &a1["zone"], &a1["held"]), (&"True".into(), &"za".into(), &Value::Null));
    assert_eq!(a1["predictedTaint"]["basis"], "lost-heartbeat");
    let zones: Vec<&str> = plan["zones"].as_array().expect("zones").iter().filter_map(|z| z["name"].as_str()).collect();
    assert_eq!(zones, ["z1", "za"]);
}

#[test]
fn plan_of_fixture_b_shows_four_nodes_tainted_one_token_apart() {
    let plan = plan_json("b-rate-limit-4-of-12.json", "18:27:23.291", &[]);
    for (node, seen) in
        [("n04", "18:27:55.675"), ("n01", "18:28:05.738"), ("n02", "18:28:15.794"), ("n03", "18:28:25.850")]
    {
        assert_plan_tainted(&plan, node, seen);
    }
    assert_plan_deleted(&plan, "n03", "def-n03", "18:33:25.861");
    // Already tainted: shown as before, with the node's health beside.
    assert_eq!(plan_node(&plan, "a1")["predictedTaint"], Value::Null);
}

#[test]
fn plan_of_fixture_c_holds_the_partially_disrupted_zone_and_taints_the_dead_one() {
    let plan = plan_json("c-partial-z2-full-z3.json", "18:37:09.139", &["--node-monitor-grace-period", "20s"]);
    assert_plan_tainted(&plan, "f1", "18:37:23.278");
    assert_plan_tainted(&plan, "f2", "18:37:33.340");
    assert_plan_deleted(&plan, "f1", "zero-f1", "18:37:23.297");
    for node in ["m1", "m2", "m3"] {
        let held = &plan_node(&plan, node)["held"];
        assert_eq!((&held["reason"], &held["zone"]), (&"partial-disruption".into(), &"z2".into()), "{node}");
        let pods = plan_node(&plan, node)["pods"].as_array().expect("pods");
        assert!(pods.iter().all(|p| p["verdict"] == "unaffected"), "{node}: {pods:?}");
    }
}

#[test]
fn plan_of_fixture_d_holds_every_node_when_all_zones_are_down() {
    let plan = plan_json("d-all-zones-down.json", "18:38:16.697", &["--node-monitor-grace-period", "20s"]);
    for node in ["m1", "m2", "m3", "m4", "h1", "h2", "f1", "f2"] {
        assert_eq!(plan_node(&plan, node)["held"]["reason"], "all-zones-down", "{node}");
    }
    let f1 = plan_node(&plan, "f1")["pods"].as_array().expect("pods");
    let def = f1.iter().find(|p| p["name"] == "def-f1").expect("def-f1");
    assert_eq!(def["verdict"], "unaffected", "the taint is removed before its deadline: {def}");
}

#[test]
fn plan_table_says_when_the_taint_is_expected_and_why_a_zone_is_held() {
    let run = |file: &str, now: &str, grace: &str| {
        let (file, now) = (format!("tests/data/nlc/{file}"), format!("2026-11-23T{now}Z"));
        let args = ["plan", "-f", &file, "--now", &now, "--silent-after", "5s", "--node-monitor-grace-period", grace];
        let result = crate::util::run(&args, None);
        assert_eq!(result.code, 0, "{}", result.stderr);
        result.stdout
    };
    let a = run("a-single-unreachable.json", "18:25:43.315", "40s");
    assert!(a.starts_with("Node a1: no NoExecute taints\n"), "{a}");
    let header = a.lines().nth(1).expect("a second line");
    assert!(header.starts_with("Ready=True since "), "{header}");
    assert!(
        header.contains(", last heartbeat 18:25:29; unreachable taint expected 18:26:15–18:26:17 (zone za)"),
        "{header}"
    );
    assert!(a.contains("evict-at   18:31:15–18:31:17   in 5m 32s"), "{a}");
    let c = run("c-partial-z2-full-z3.json", "18:37:09.139", "20s");
    assert!(
        c.contains("held: zone z2 about to be partially disrupted — the controller adds no NoExecute taints here"),
        "{c}"
    );
}

#[test]
fn plan_yaml_of_a_predicted_taint_is_the_json_document() {
    let file = "tests/data/nlc/a-single-unreachable.json";
    let now = "2026-11-23T18:25:43.315Z";
    let yaml = crate::util::run(&["plan", "-f", file, "--now", now, "--silent-after", "5s", "-o", "yaml"], None);
    assert_eq!(yaml.code, 0, "{}", yaml.stderr);
    let from_yaml: Value = serde_saphyr::from_str(&yaml.stdout).expect("YAML");
    let from_json = plan_json("a-single-unreachable.json", "18:25:43.315", &[]);
    assert_eq!(from_yaml, from_json);
}

/// The pod `name` of `node` in a plan document.
fn plan_pod<'a>(plan: &'a Value, node: &str, name: &str) -> &'a Value {
    let pods = plan_node(plan, node)["pods"].as_array().expect("pods");
    pods.iter().find(|p| p["name"] == name).unwrap_or_else(|| panic!("pod {name} on {node}: {pods:?}"))
}

#[test]
fn plan_of_fixture_d_flags_the_pods_stuck_terminating_on_the_dead_zone() {
    let plan = plan_json("d-all-zones-down.json", "18:38:16.697", &["--node-monitor-grace-period", "20s"]);
    // Deleted by the taint manager at 18:37:23 and 18:37:33, 30 s of grace each, no kubelet to finish.
    for (node, pod, since) in [("f1", "zero-f1", "2026-11-23T18:37:53Z"), ("f2", "zero-f2", "2026-11-23T18:38:03Z")] {
        let doc = plan_pod(&plan, node, pod);
        assert_eq!(
            (&doc["terminating"], &doc["stuck"], &doc["stuckSince"]),
            (&true.into(), &true.into(), &since.into())
        );
    }
    // Not deleted: the document has no stuck fields at all.
    let def = plan_pod(&plan, "f1", "def-f1");
    assert!(def.get("stuck").is_none() && def.get("stuckSince").is_none(), "{def}");
}

#[test]
fn a_deleted_pod_is_not_stuck_while_its_grace_period_runs() {
    // At 18:38:00 zero-f1's grace period (to 18:37:53) is over, zero-f2's (to 18:38:03) is not.
    let plan = plan_json("d-all-zones-down.json", "18:38:00", &["--node-monitor-grace-period", "20s"]);
    assert_eq!(plan_pod(&plan, "f1", "zero-f1")["stuck"], true);
    let zero_f2 = plan_pod(&plan, "f2", "zero-f2");
    assert_eq!((&zero_f2["terminating"], zero_f2.get("stuck")), (&true.into(), None), "{zero_f2}");
}

#[test]
fn plan_and_explain_say_what_unblocks_a_pod_stuck_terminating_and_that_they_do_not_do_it() {
    let file = "tests/data/nlc/d-all-zones-down.json";
    let now = "2026-11-23T18:38:16.697Z";
    let table = crate::util::run(&["plan", "-f", file, "--now", now, "--node-monitor-grace-period", "20s", "f1"], None);
    assert_eq!(table.code, 0, "{}", table.stderr);
    for line in [
        "Stuck terminating since 18:37:53 (kubelet gone): exp/zero-f1\n",
        "  kubectl taint nodes f1 node.kubernetes.io/out-of-service=nodeshutdown:NoExecute\n",
        "  (non-graceful node shutdown: only if the node is really down); or\n",
        "  kubectl delete pod -n exp zero-f1 --force --grace-period=0\n",
        "  taint-evict does none of these itself.\n",
    ] {
        assert!(table.stdout.contains(line), "{line:?} in:\n{}", table.stdout);
    }
    let explain = crate::util::run(&["explain", "-f", file, "--now", now, "-n", "exp", "zero-f2"], None);
    assert_eq!(explain.code, 0, "{}", explain.stderr);
    assert!(
        explain.stdout.contains("Stuck terminating since 18:38:03 (kubelet gone): exp/zero-f2\n"),
        "{}",
        explain.stdout
    );
    assert!(!explain.stdout.contains("Note: the pod is already terminating"), "{}", explain.stdout);
    let json = crate::util::run(&["explain", "-f", file, "--now", now, "-n", "exp", "zero-f2", "-o", "json"], None);
    let doc: Value = serde_json::from_str(&json.stdout).expect("JSON");
    assert_eq!((&doc["stuck"], &doc["stuckSince"]), (&true.into(), &"2026-11-23T18:38:03Z".into()));
    // A pod not deleted: no stuck fields, no hint.
    let def = crate::util::run(&["explain", "-f", file, "--now", now, "-n", "exp", "def-f2", "-o", "json"], None);
    let doc: Value = serde_json::from_str(&def.stdout).expect("JSON");
    assert!(doc.get("stuck").is_none(), "{doc}");
}

/// What a plan says of each node and pod that does not depend on when it is read: the predicted
/// taints, the holds, the verdicts and deadlines.
fn verdicts(plan: &Value) -> Vec<Value> {
    let mut all = Vec::new();
    for node in plan["nodes"].as_array().expect("nodes") {
        all.push(serde_json::json!([node["name"], node["predictedTaint"], node["held"]]));
        for pod in node["pods"].as_array().expect("pods") {
            all.push(serde_json::json!([
                pod["name"],
                pod["verdict"],
                pod["evictAt"],
                pod["evictAtLatest"],
                pod["since"]
            ]));
        }
    }
    all
}

#[test]
fn a_dump_read_late_gives_the_plan_it_gave_when_it_was_taken() {
    let cases = [
        ("a-single-unreachable.json", "18:25:43.315", "40s"),
        ("b-rate-limit-4-of-12.json", "18:27:23.291", "40s"),
        ("c-partial-z2-full-z3.json", "18:37:09.139", "20s"),
        ("d-all-zones-down.json", "18:38:16.697", "20s"),
    ];
    for (file, captured, grace) in cases {
        let flags = ["--node-monitor-grace-period", grace];
        let fresh = plan_json(file, captured, &flags);
        let taken = at(&format!("2026-11-23T{captured}Z")).as_nanos();
        for later in [20, 300, 86_400] {
            let now = jiff::Timestamp::from_nanosecond(taken + i128::from(later) * 1_000_000_000).expect("instant");
            let now = now.to_string();
            let path = format!("tests/data/nlc/{file}");
            let args = ["plan", "-f", &path, "--now", &now, "--silent-after", "5s", "-o", "json", flags[0], flags[1]];
            let result = crate::util::run(&args, None);
            assert_eq!(result.code, 0, "{}", result.stderr);
            let plan: Value = serde_json::from_str(&result.stdout).expect("JSON");
            assert_eq!(verdicts(&plan), verdicts(&fresh), "{file} read {later} s late");
            // No pod the fresh plan deletes is unaffected later.
            let unaffected =
                plan["nodes"].as_array().into_iter().flatten().flat_map(|n| n["pods"].as_array()).flatten();
            assert!(
                unaffected.filter(|p| p["verdict"] == "unaffected").count()
                    <= verdicts(&fresh).iter().filter(|v| v[1] == "unaffected").count()
            );
            assert!(result.stderr.contains("note: the dump was taken at "), "{file}: {}", result.stderr);
        }
    }
}
