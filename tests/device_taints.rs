//! The DRA device-taint controller's decisions in `plan`, from dumps in each API version's shape:
//! the conformance cases of `tests/data/devices/` (built from `device-taints.md`'s rules and
//! upstream's `TestController` table; each names the rule ids it covers), and what `plan` says
//! around them.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use crate::util::run;

/// Every case: its dump, its arguments, the pods' expected verdicts.
fn cases() -> Vec<(String, Value)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/devices");
    let mut cases: Vec<(String, Value)> = std::fs::read_dir(&dir)
        .expect("tests/data/devices")
        .map(|entry| {
            let path = entry.expect("an entry").path();
            let case = serde_json::from_slice(&std::fs::read(&path).expect("a case")).expect("JSON");
            (path.file_stem().expect("a name").to_string_lossy().into_owned(), case)
        })
        .collect();
    cases.sort_by(|a, b| a.0.cmp(&b.0));
    cases
}

/// The pod `name` of a plan, wherever its node.
fn pod<'a>(plan: &'a Value, name: &str) -> Option<&'a Value> {
    let nodes = plan["nodes"].as_array()?;
    nodes.iter().flat_map(|node| node["pods"].as_array().into_iter().flatten()).find(|pod| pod["name"] == name)
}

#[test]
fn every_conformance_case_gives_the_expected_verdicts() {
    let mut failures = Vec::new();
    for (name, case) in cases() {
        let dump = serde_json::to_vec(&case["dump"]).expect("JSON");
        let args: Vec<&str> =
            case["args"].as_array().expect("args").iter().map(|a| a.as_str().expect("text")).collect();
        let result = run(&[&["plan", "-f", "-", "-o", "json"][..], &args, &["gpu-1"]].concat(), Some(&dump));
        if result.code != 0 {
            failures.push(format!("{name}: exit {}: {}", result.code, result.stderr));
            continue;
        }
        let plan: Value = serde_json::from_str(&result.stdout).expect("a plan");
        for (pod_name, expected) in case["expect"].as_object().expect("expect") {
            let Some(got) = pod(&plan, pod_name) else {
                failures.push(format!("{name}: no pod {pod_name}"));
                continue;
            };
            for field in ["verdict", "evictAt", "basis", "tolerationSeconds"] {
                if got[field] != expected[field] {
                    failures
                        .push(format!("{name}: {pod_name}.{field}: {} != expected {}", got[field], expected[field]));
                }
            }
            let Some(devices) = expected["devices"].as_array() else { continue };
            let shown = got["devices"].as_array().cloned().unwrap_or_default();
            if shown.len() != devices.len() {
                failures.push(format!("{name}: {pod_name}: {} devices shown, expected {}", shown.len(), devices.len()));
                continue;
            }
            for (device, expected) in shown.iter().zip(devices) {
                for (field, value) in expected.as_object().expect("a device") {
                    if device[field] != *value {
                        failures.push(format!("{name}: {pod_name}.devices[].{field}: {} != {value}", device[field]));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_cases_cover_every_static_rule_and_all_three_api_shapes() {
    let cases = cases();
    let rules: BTreeSet<&str> = cases
        .iter()
        .flat_map(|(_, case)| case["rules"].as_array().into_iter().flatten())
        .filter_map(Value::as_str)
        .collect();
    let wanted = ["S1", "S2", "S3", "S4", "S5", "M1", "M2", "M3", "M4", "T1", "T2", "T3", "T4", "T5"];
    let missing: Vec<&str> = wanted.iter().copied().filter(|rule| !rules.contains(rule)).collect();
    assert!(missing.is_empty(), "rules without a case: {missing:?}");
    let shapes: BTreeSet<&str> = cases.iter().filter_map(|(_, case)| case["shape"].as_str()).collect();
    assert_eq!(shapes, BTreeSet::from(["v1", "v1beta1", "v1beta2"]));
}
