//! The conformance vectors (`tests/data/vectors/` of the repository; its README says what each holds),
//! run through the engine alone: each dump read into a [`Snapshot`] here, its arguments into a
//! [`Request`], and the plan [`build`] makes compared with the expected one, field by field. The
//! plugin's test of the same vectors goes through its binary (its decoder, flags and JSON writer); this
//! one proves the decisions are the engine's. The directory is read at test time, so new vectors are
//! picked up.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use taint_evict_engine::hash::HashKey;
use taint_evict_engine::lifecycle::Flags;
use taint_evict_engine::model::{Effect, NodeName, Operator, Pod, PodKey, Taint, Toleration};
use taint_evict_engine::plan::{NodePlan, PodPlan, Verdict};
use taint_evict_engine::planner::{Evidence, Request, Tables, build};
use taint_evict_engine::snapshot::{Snapshot, SnapshotNode, SnapshotPod, WhatIf};
use taint_evict_engine::time::Timestamp;

fn vectors() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/vectors")
}

/// An RFC 3339 instant, as the API writes it.
fn instant(text: &str) -> Timestamp {
    let parsed: jiff::Timestamp = text.parse().unwrap_or_else(|e| panic!("{text:?}: {e}"));
    Timestamp::from_nanos(parsed.as_nanosecond())
}

fn text<'v>(value: &'v Value, field: &str) -> &'v str {
    value[field].as_str().unwrap_or_default()
}

fn time(value: &Value, field: &str) -> Option<Timestamp> {
    value[field].as_str().map(instant)
}

fn list<'v>(value: &'v Value, field: &str) -> &'v [Value] {
    value[field].as_array().map_or(&[], Vec::as_slice)
}

fn taint(value: &Value) -> Taint {
    let taint = Taint::new(text(value, "key"), text(value, "value"), Effect::from(text(value, "effect")));
    match time(value, "timeAdded") {
        Some(at) => taint.with_time_added(at),
        None => taint,
    }
}

fn toleration(value: &Value) -> Toleration {
    Toleration {
        key: text(value, "key").into(),
        operator: Operator::from(text(value, "operator")),
        value: text(value, "value").into(),
        effect: Some(text(value, "effect")).filter(|e| !e.is_empty()).map(Effect::from),
        seconds: value["tolerationSeconds"].as_i64(),
    }
}

/// The dump as the engine takes it: the fields the vectors use, read as the plugin reads them
/// (docs/plan.md): a pod's binding is its `PodScheduled` transition, else its creation.
fn snapshot(cluster: &Value) -> Snapshot {
    let mut snapshot = Snapshot::default();
    for item in list(cluster, "items") {
        let (metadata, spec) = (&item["metadata"], &item["spec"]);
        match text(item, "kind") {
            "Node" => {
                let (taints, other_taints): (Vec<Taint>, Vec<Taint>) =
                    list(spec, "taints").iter().map(taint).partition(Taint::is_no_execute);
                snapshot.nodes.push(SnapshotNode {
                    name: text(metadata, "name").into(),
                    labels: BTreeMap::new(),
                    taints: taints.into(),
                    other_taints: other_taints.into(),
                    taints_written: None,
                    ready_changed: None,
                });
            }
            "Pod" => {
                let conditions = list(&item["status"], "conditions");
                let condition = |kind: &str| conditions.iter().find(|c| c["type"] == kind && c["status"] == "True");
                let scheduled = condition("PodScheduled").and_then(|c| time(c, "lastTransitionTime"));
                let deleting = time(metadata, "deletionTimestamp");
                let namespace = Some(text(metadata, "namespace")).filter(|n| !n.is_empty()).unwrap_or("default");
                let tolerations: Vec<Toleration> = list(spec, "tolerations").iter().map(toleration).collect();
                let pod = Pod {
                    key: PodKey::new(namespace, text(metadata, "name")),
                    uid: text(metadata, "uid").into(),
                    node: Some(text(spec, "nodeName")).filter(|n| !n.is_empty()).map(NodeName::from),
                    tolerations: tolerations.into(),
                };
                let bound_at = scheduled.or_else(|| time(metadata, "creationTimestamp"));
                snapshot.pods.push(SnapshotPod {
                    phase: text(&item["status"], "phase").into(),
                    terminating: deleting.is_some(),
                    deletion_timestamp: deleting,
                    ready: if condition("Ready").is_some() {
                        taint_evict_engine::snapshot::PodReady::Yes
                    } else {
                        taint_evict_engine::snapshot::PodReady::No
                    },
                    ..SnapshotPod::running(pod, bound_at)
                });
            }
            "Lease"
                if text(metadata, "namespace") == "kube-system"
                    && text(metadata, "name") == "kube-controller-manager" =>
            {
                snapshot.controller_acquired = time(spec, "acquireTime");
            }
            _ => {}
        }
    }
    snapshot
}

/// `--taint KEY[=VALUE]:EFFECT` and `--remove-taint KEY[:EFFECT]`, as the vectors write them.
fn what_if(flag: &str, text: &str) -> WhatIf {
    match flag {
        "--taint" => {
            let (spec, effect) = text.rsplit_once(':').expect("KEY[=VALUE]:EFFECT");
            let (key, value) = spec.split_once('=').unwrap_or((spec, ""));
            WhatIf::Taint(Taint::new(key, value, Effect::from(effect)))
        }
        "--remove-taint" => {
            let text = text.strip_suffix('-').unwrap_or(text);
            let (key, effect) = match text.rsplit_once(':') {
                Some((key, effect)) => (key, Some(Effect::from(effect))),
                None => (text, None),
            };
            WhatIf::RemoveTaint { key: key.to_owned(), effect }
        }
        other => panic!("a flag the vectors do not use: {other}"),
    }
}

/// The plan's value of an expected field, as the JSON output spells it.
fn field(pod: &PodPlan<'_>, name: &str) -> Option<Value> {
    let instant = |at: Option<Timestamp>| at.map_or(Value::Null, |at| Value::from(at.as_nanos().to_string()));
    Some(match name {
        "namespace" => Value::from(pod.key().namespace()),
        "name" => Value::from(pod.key().name()),
        "uid" => Value::from(pod.uid().text().as_str()),
        "phase" => Value::from(&*pod.pod.phase),
        "terminating" => Value::from(pod.pod.terminating),
        "overdue" => Value::from(pod.overdue),
        "tolerationSeconds" => pod.toleration_seconds.map_or(Value::Null, Value::from),
        "verdict" => Value::from(match pod.verdict {
            Verdict::EvictNow => "evict-now",
            Verdict::EvictAt => "evict-at",
            Verdict::Never => "never",
            Verdict::Unaffected => "unaffected",
        }),
        "evictAt" => instant(pod.evict_at),
        "since" => instant(pod.since),
        _ => return None,
    })
}

fn compare(name: &str, expected: &Value, nodes: &[NodePlan<'_>], mismatches: &mut Vec<String>) {
    for want_node in list(expected, "nodes") {
        let node_name = text(want_node, "name");
        let Some(got) = nodes.iter().find(|n| n.name.as_str() == node_name) else {
            mismatches.push(format!("{name}: node {node_name}: not planned"));
            continue;
        };
        let id = |namespace: &str, pod: &str| format!("{namespace}/{pod}");
        let mut got_ids: Vec<String> = got.pods.iter().map(|p| id(p.key().namespace(), p.key().name())).collect();
        let want_pods = list(want_node, "pods");
        let mut want_ids: Vec<String> = want_pods.iter().map(|p| id(text(p, "namespace"), text(p, "name"))).collect();
        got_ids.sort();
        want_ids.sort();
        if got_ids != want_ids {
            mismatches.push(format!("{name}: node {node_name}: pods {got_ids:?}, expected {want_ids:?}"));
            continue;
        }
        for want in want_pods {
            let pod_id = id(text(want, "namespace"), text(want, "name"));
            let Some(pod) = got.pods.iter().find(|p| id(p.key().namespace(), p.key().name()) == pod_id) else {
                continue;
            };
            for (key, value) in want.as_object().expect("a pod object") {
                let value = match key.as_str() {
                    "evictAt" | "since" => {
                        value.as_str().map_or(Value::Null, |at| Value::from(instant(at).as_nanos().to_string()))
                    }
                    _ => value.clone(),
                };
                match field(pod, key) {
                    Some(got) if got == value => {}
                    Some(got) => {
                        mismatches.push(format!("{name}: {node_name} {pod_id}: {key} is {got}, expected {value}"))
                    }
                    None => {
                        mismatches.push(format!("{name}: {node_name} {pod_id}: {key} is not a field of a plan row"))
                    }
                }
            }
        }
    }
}

#[test]
fn every_conformance_vector_is_the_plan_the_engine_builds() {
    let dir = vectors();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 90, "expected the vectors, found {} files in {}", files.len(), dir.display());
    let mut mismatches = Vec::new();
    for file in &files {
        let bytes = std::fs::read(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let case: Value = serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let name = text(&case, "name").to_owned();
        let snapshot = snapshot(&case["cluster"]);
        let (mut selected, mut changes) = (Vec::new(), Vec::new());
        let mut args = list(&case, "args").iter().map(|a| a.as_str().expect("an argument")).skip(1);
        while let Some(arg) = args.next() {
            if arg.starts_with("--") {
                changes.push(what_if(arg, args.next().expect("the flag's value")));
            } else {
                let index = snapshot.nodes.iter().position(|n| n.name.as_str() == arg);
                selected.push(index.unwrap_or_else(|| panic!("{name}: node {arg} is not in the dump")));
            }
        }
        let request = Request {
            selected: &selected,
            what_if: &changes,
            now: instant(text(&case, "now")),
            flags: Flags::defaults_for(29),
            assumed: None,
            namespace: None,
            host: Default::default(),
            tables: None,
        };
        let (plan, _warnings) = build(&snapshot, &request, &Evidence::default());
        compare(&name, &case["expected"], &plan.nodes, &mut mismatches);
        // With the tables an audit finds once: the same plan.
        let tables = Tables::new(&snapshot, HashKey::default());
        let (found, _) = build(&snapshot, &Request { tables: Some(&tables), ..request }, &Evidence::default());
        assert_eq!(found, plan, "{name}: the plan with the tables found once");
    }
    assert!(
        mismatches.is_empty(),
        "{} mismatches over {} vectors:\n{}",
        mismatches.len(),
        files.len(),
        mismatches.join("\n")
    );
}
