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

/// A case's dump with `filler` more pods on another node, each carrying a long annotation: from
/// 4 MiB on, a dump file is read a group of items at a time.
fn padded(case: &Value, filler: usize) -> Vec<u8> {
    let mut dump = case["dump"].clone();
    let items = dump["items"].as_array_mut().expect("items");
    let note = "x".repeat(2048);
    // Half before the DRA objects, half after: they land in different groups.
    let pod = |i: usize| {
        serde_json::json!({"kind": "Pod", "apiVersion": "v1",
            "metadata": {"name": format!("filler-{i}"), "namespace": "batch", "uid": format!("uid-filler-{i}"),
                         "annotations": {"note": note}},
            "spec": {"nodeName": "cpu-1", "containers": [{"name": "c", "image": "app"}]},
            "status": {"phase": "Running"}})
    };
    let (before, after): (Vec<Value>, Vec<Value>) = (0..filler).map(pod).partition(|p| {
        p["metadata"]["name"]
            .as_str()
            .is_some_and(|n| n.trim_start_matches("filler-").parse::<usize>().unwrap_or(0) % 2 == 0)
    });
    items.splice(0..0, before);
    items.extend(after);
    items.push(serde_json::json!({"kind": "Node", "apiVersion": "v1", "metadata": {"name": "cpu-1"}}));
    serde_json::to_vec(&dump).expect("JSON")
}

#[test]
fn a_large_dump_read_in_groups_finds_the_dra_objects_wherever_they_are() {
    let (_, case) = cases().into_iter().find(|(name, _)| name == "s5-t2-many-taints").expect("the case");
    let dump = padded(&case, 2_500);
    assert!(dump.len() > 4 << 20, "{} bytes: read in groups", dump.len());
    let path = crate::util::scratch("device-taints-grouped").join("dump.json");
    std::fs::write(&path, &dump).expect("written");
    let file = path.to_str().expect("UTF-8");
    let result =
        run(&["plan", "-f", file, "-o", "json", "--now", "2026-11-26T10:00:00Z", "--kube-version", "1.37"], None);
    assert_eq!(result.code, 0, "{}", result.stderr);
    let plan: Value = serde_json::from_str(&result.stdout).expect("a plan");
    let nodes: Vec<&str> = plan["nodes"].as_array().expect("nodes").iter().filter_map(|n| n["name"].as_str()).collect();
    assert_eq!(nodes, ["gpu-1"], "the node is shown for its pod's tainted device, the other is not");
    let trainer = pod(&plan, "trainer").expect("trainer");
    assert_eq!(
        (trainer["evictAt"].as_str(), trainer["devices"].as_array().map(Vec::len)),
        (Some("2026-11-26T09:58:30Z"), Some(4))
    );
}

#[test]
fn a_pod_whose_only_taint_is_on_its_device_is_shown_and_explained() {
    let (_, case) =
        cases().into_iter().find(|(name, _)| name == "s1-s3-t1-evict-pod-resourceclaim-v1").expect("the case");
    let dump = serde_json::to_vec(&case["dump"]).expect("JSON");
    let now = ["--now", "2026-11-26T10:00:00Z", "--kube-version", "1.36"];
    let table = run(&[&["plan", "-f", "-"][..], &now].concat(), Some(&dump));
    assert_eq!(table.code, 0, "{}", table.stderr);
    assert!(
        table.stdout.contains("untolerated device gpu.example.com/gpu-1/gpu-0 taint gpu.example.com/ecc:NoExecute"),
        "{}",
        table.stdout
    );
    let explained = run(&[&["explain", "trainer", "-n", "ml", "-f", "-"][..], &now].concat(), Some(&dump));
    assert_eq!(explained.code, 0, "{}", explained.stderr);
    for line in [
        "DRA devices (the device-taint controller of Kubernetes 1.36):",
        "  claim gpu → trainer-gpu (resourceClaimName)",
        "    device gpu.example.com/gpu-1/gpu-0 (request gpu): taint gpu.example.com/ecc:NoExecute since 2026-11-26T09:58:00Z",
        "      set by ResourceSlice \"gpu-1-slice\"",
        "      untolerated: deleted at its timeAdded, 2026-11-26T09:58:00Z",
        "Result: a device taint decides: the device-taint controller deletes the pod at 2026-11-26T09:58:00Z, before any node taint would.",
    ] {
        assert!(explained.stdout.lines().any(|l| l == line), "missing {line:?} in\n{}", explained.stdout);
    }
    let json = run(&[&["explain", "trainer", "-n", "ml", "-f", "-", "-o", "json"][..], &now].concat(), Some(&dump));
    let document: Value = serde_json::from_str(&json.stdout).expect("JSON");
    assert_eq!(document["devices"]["kubeVersion"], "1.36");
    assert_eq!(document["devices"]["claims"][0]["counted"], true);
    assert_eq!(document["devices"]["taints"][0]["deadline"], "2026-11-26T09:58:00Z");
}

#[test]
fn a_dump_without_a_version_says_which_controller_it_follows() {
    let (_, case) =
        cases().into_iter().find(|(name, _)| name == "s1-s3-t1-evict-pod-resourceclaim-v1").expect("the case");
    let dump = serde_json::to_vec(&case["dump"]).expect("JSON");
    let result = run(&["plan", "-f", "-", "--now", "2026-11-26T10:00:00Z", "-o", "json"], Some(&dump));
    assert_eq!(result.code, 0);
    assert_eq!(
        result.stderr.trim_end(),
        "warning: device taints follow the device-taint controller of Kubernetes 1.37; name the dump's version with \
         --kube-version 1.MINOR"
    );
    let plan: Value = serde_json::from_str(&result.stdout).expect("JSON");
    assert_eq!(plan["deviceTaints"]["kubeVersion"], "1.37");
    let old = run(&["plan", "-f", "-", "--now", "2026-11-26T10:00:00Z", "--kube-version", "1.32"], Some(&dump));
    assert!(old.stderr.contains("Kubernetes 1.32 has no device-taint controller"), "{}", old.stderr);
}
