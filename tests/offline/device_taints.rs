//! The DRA device-taint controller's decisions in `plan`, from dumps in each API version's shape:
//! the conformance cases of `tests/data/devices/` (built from the rules of docs/device-taints.md
//! and upstream's `TestController` table; each names the rules it covers), and what `plan` says
//! around them.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use crate::util::run;
use taint_evict_test_support::fake_apiserver::{FakeApiServer, Fault};

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
    // docs/device-taints.md, "The rules": every one a dump can show (`whole-seconds` is the API
    // server's doing).
    let wanted = [
        "claims-that-count",
        "every-allocated-device",
        "slice-taints",
        "rule-taints",
        "taints-add-up",
        "no-execute-tolerations-only",
        "toleration-match",
        "forever-wins",
        "smallest-seconds",
        "deadline-per-taint",
        "earliest-per-claim",
        "earliest-per-pod",
        "from-time-added",
        "no-time-added",
    ];
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

/// A GPU node whose device `gpu-0` carries an untolerated ECC taint in its slice (shape `shape`),
/// and a maintenance rule on the whole pool from 09:59 (version `rule_version`); `trainer` holds
/// `gpu-0` with a 60 s toleration of the rule, `idle` has no claim.
pub fn gpu_cluster(shape: &str, rule_version: &str) -> Value {
    let resource = |version: &str| format!("resource.k8s.io/{version}");
    let taints =
        serde_json::json!([{"key": "gpu.example.com/ecc", "effect": "NoExecute", "timeAdded": "2026-11-26T09:58:00Z"}]);
    let device = if shape == "v1beta1" {
        serde_json::json!({"name": "gpu-0", "basic": {"taints": taints}})
    } else {
        serde_json::json!({"name": "gpu-0", "taints": taints})
    };
    let toleration = serde_json::json!([{"key": "maintenance", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60},
                                        {"key": "gpu.example.com/ecc", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 600}]);
    serde_json::json!({"kind": "List", "apiVersion": "v1", "items": [
        {"kind": "Node", "apiVersion": "v1", "metadata": {"name": "gpu-1"}, "spec": {}},
        {"kind": "Pod", "apiVersion": "v1",
         "metadata": {"name": "trainer", "namespace": "ml", "uid": "uid-trainer", "creationTimestamp": "2026-11-26T08:00:00Z"},
         "spec": {"nodeName": "gpu-1", "containers": [{"name": "c", "image": "trainer"}],
                  "resourceClaims": [{"name": "gpu", "resourceClaimName": "trainer-gpu"}]},
         "status": {"phase": "Running"}},
        {"kind": "Pod", "apiVersion": "v1",
         "metadata": {"name": "idle", "namespace": "web", "uid": "uid-idle", "creationTimestamp": "2026-11-26T08:00:00Z"},
         "spec": {"nodeName": "gpu-1", "containers": [{"name": "c", "image": "web"}]},
         "status": {"phase": "Running"}},
        {"kind": "ResourceClaim", "apiVersion": resource(shape),
         "metadata": {"name": "trainer-gpu", "namespace": "ml", "uid": "uid-claim"},
         "spec": {"devices": {"requests": [{"name": "gpu"}]}},
         "status": {"allocation": {"devices": {"results": [
             {"request": "gpu", "driver": "gpu.example.com", "pool": "gpu-1", "device": "gpu-0", "tolerations": toleration}]}},
                    "reservedFor": [{"resource": "pods", "name": "trainer", "uid": "uid-trainer"}]}},
        {"kind": "ResourceSlice", "apiVersion": resource(shape), "metadata": {"name": "gpu-1-gpu.example.com"},
         "spec": {"driver": "gpu.example.com", "nodeName": "gpu-1", "pool": {"name": "gpu-1", "generation": 1, "resourceSliceCount": 1},
                  "devices": [device]}},
        {"kind": "DeviceTaintRule", "apiVersion": resource(rule_version), "metadata": {"name": "gpu-1-maintenance"},
         "spec": {"deviceSelector": {"driver": "gpu.example.com", "pool": "gpu-1"},
                  "taint": {"key": "maintenance", "effect": "NoExecute", "timeAdded": "2026-11-26T09:59:00Z"}}},
    ]})
}

fn live(server: &FakeApiServer, args: &[&str]) -> crate::util::Run {
    let kubeconfig = server.kubeconfig().to_str().expect("UTF-8 path").to_owned();
    crate::util::run_command(crate::util::command().args(args).args(["--kubeconfig", &kubeconfig]), None)
}

#[test]
fn live_reads_follow_the_versions_each_release_serves_and_equal_the_dump() {
    // 1.33: v1beta1 slices and claims, v1alpha3 rules; 1.36: v1, rules in v1beta2; 1.37: all v1.
    for (minor, shape, rule_version) in [(33, "v1beta1", "v1alpha3"), (36, "v1", "v1beta2"), (37, "v1", "v1")] {
        let cluster = gpu_cluster(shape, rule_version);
        let server = FakeApiServer::start(&crate::util::scratch(&format!("device-taints-live-{minor}")));
        server.serve_version(minor);
        server.serve_dra(minor);
        server.load(&cluster);
        let args = ["plan", "gpu-1", "--now", "2026-11-26T10:00:00Z", "-o", "json"];
        let from_cluster = live(&server, &args);
        assert_eq!(from_cluster.code, 0, "1.{minor}: {}", from_cluster.stderr);
        assert_eq!(from_cluster.stderr, "", "1.{minor}: the version is the server's");
        let dump = serde_json::to_vec(&cluster).expect("JSON");
        let version = format!("1.{minor}");
        let from_dump = run(&[&args[..], &["-f", "-", "--kube-version", &version]].concat(), Some(&dump));
        assert_eq!(crate::util::as_from_dump(&from_cluster.stdout, "watch-cache"), from_dump.stdout, "1.{minor}");
        let plan: Value = serde_json::from_str(&from_dump.stdout).expect("JSON");
        let trainer = pod(&plan, "trainer").expect("trainer");
        // The rule (09:59 + 60 s) comes before the slice's taint (09:58 + 600 s).
        assert_eq!(
            (trainer["evictAt"].as_str(), trainer["basis"].as_str()),
            (Some("2026-11-26T10:00:00Z"), Some("device-taint"))
        );
        let paths: BTreeSet<String> = server
            .requests()
            .iter()
            .filter(|r| r.path.starts_with("/apis/resource.k8s.io/") && r.path.matches('/').count() > 3)
            .map(|r| r.path.clone())
            .collect();
        let expected: BTreeSet<String> = [
            format!("/apis/resource.k8s.io/{shape}/resourceslices"),
            format!("/apis/resource.k8s.io/{shape}/namespaces/ml/resourceclaims"),
            format!("/apis/resource.k8s.io/{rule_version}/devicetaintrules"),
        ]
        .into();
        assert_eq!(paths, expected, "1.{minor}: each resource in the most preferred version served");

        // Without NODE: every node with a NoExecute taint, and the nodes of pods whose devices have one.
        let every = live(&server, &["plan", "--now", "2026-11-26T10:00:00Z", "-o", "json"]);
        assert_eq!(every.code, 0, "1.{minor}: {}", every.stderr);
        let plan: Value = serde_json::from_str(&every.stdout).expect("JSON");
        let nodes: Vec<&str> =
            plan["nodes"].as_array().expect("nodes").iter().filter_map(|n| n["name"].as_str()).collect();
        assert_eq!(nodes, ["gpu-1"], "1.{minor}");
        let dump_every = run(
            &["plan", "--now", "2026-11-26T10:00:00Z", "-o", "json", "-f", "-", "--kube-version", &version],
            Some(&dump),
        );
        assert_eq!(
            crate::util::as_from_dump(&every.stdout, "watch-cache"),
            dump_every.stdout,
            "1.{minor}: as from the dump"
        );
    }
}

#[test]
fn a_cluster_whose_pods_name_no_claim_is_not_asked_about_devices() {
    let mut cluster = gpu_cluster("v1", "v1");
    cluster["items"].as_array_mut().expect("items").retain(|item| item["metadata"]["name"] != "trainer");
    let server = FakeApiServer::start(&crate::util::scratch("device-taints-none"));
    server.serve_dra(37);
    server.load(&cluster);
    let result = live(&server, &["plan", "gpu-1", "--now", "2026-11-26T10:00:00Z", "-o", "json"]);
    assert_eq!(result.code, 0, "{}", result.stderr);
    let asked: Vec<String> =
        server.requests().iter().filter(|r| r.path.contains("resource.k8s.io")).map(|r| r.path.clone()).collect();
    assert_eq!(asked, Vec::<String>::new());
    let plan: Value = serde_json::from_str(&result.stdout).expect("JSON");
    assert_eq!(plan.get("deviceTaints"), None);
}

#[test]
fn device_reads_denied_or_not_served_leave_the_node_taints_and_say_so_once() {
    let cluster = gpu_cluster("v1", "v1");
    let server = FakeApiServer::start(&crate::util::scratch("device-taints-denied"));
    server.serve_dra(37);
    server.load(&cluster);
    server.fail("GET", "/apis/resource.k8s.io/v1/resourceslices", Fault::Status(403, "forbidden".into()));
    let result = live(&server, &["plan", "gpu-1", "--now", "2026-11-26T10:00:00Z", "-o", "json"]);
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert_eq!(
        result.stderr.trim_end(),
        "warning: cannot list resourceslices.resource.k8s.io (forbidden): device taints are not shown (grant list on \
         resourceslices, resourceclaims and devicetaintrules of resource.k8s.io: deploy/rbac-plan.yaml)"
    );
    let plan: Value = serde_json::from_str(&result.stdout).expect("JSON");
    assert_eq!(pod(&plan, "trainer").expect("trainer")["verdict"], "unaffected");

    let old = FakeApiServer::start(&crate::util::scratch("device-taints-unserved"));
    old.serve_version(29);
    old.load(&cluster);
    let result = live(&old, &["plan", "gpu-1", "--now", "2026-11-26T10:00:00Z"]);
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert_eq!(
        result.stderr.trim_end(),
        "warning: pods use DRA claims, but the server serves no resource.k8s.io ResourceSlices and ResourceClaims: \
         device taints are not shown"
    );
}

/// A GPU node (Kubernetes 1.36) whose slice taints `gpu-0` (ECC, `added`): `train` holds it with
/// `train_seconds` of toleration, `infer` holds `gpu-1` (ECC too) with `infer_seconds`.
fn gpu_run_cluster(
    added: jiff::Timestamp,
    train_seconds: i64,
    infer_seconds: i64,
    generation: i64,
    tainted: &[&str],
) -> Value {
    let taint = serde_json::json!([{"key": "ecc", "effect": "NoExecute", "timeAdded": added.round(jiff::Unit::Second).expect("round").to_string()}]);
    let device = |name: &str| {
        let taints = if tainted.contains(&name) { taint.clone() } else { serde_json::json!([]) };
        serde_json::json!({"name": name, "taints": taints})
    };
    let pod = |name: &str| {
        serde_json::json!({"kind": "Pod", "apiVersion": "v1",
            "metadata": {"name": name, "namespace": "ml", "uid": format!("uid-{name}"), "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"nodeName": "gpu-1", "containers": [{"name": "c", "image": "app"}],
                     "resourceClaims": [{"name": "gpu", "resourceClaimName": format!("{name}-gpu")}]},
            "status": {"phase": "Running"}})
    };
    let claim = |name: &str, device: &str, seconds: i64| {
        serde_json::json!({"kind": "ResourceClaim", "apiVersion": "resource.k8s.io/v1",
            "metadata": {"name": format!("{name}-gpu"), "namespace": "ml", "uid": format!("uid-{name}-gpu")},
            "spec": {"devices": {"requests": [{"name": "gpu"}]}},
            "status": {"allocation": {"devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "gpu-1",
                "device": device, "tolerations": [{"key": "ecc", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": seconds}]}]}},
                       "reservedFor": [{"resource": "pods", "name": name, "uid": format!("uid-{name}")}]}})
    };
    serde_json::json!({"kind": "List", "apiVersion": "v1", "items": [
        {"kind": "Node", "apiVersion": "v1", "metadata": {"name": "gpu-1", "labels": {"kubernetes.io/hostname": "gpu-1"}}, "spec": {}},
        pod("train"), pod("infer"),
        claim("train", "gpu-0", train_seconds), claim("infer", "gpu-1", infer_seconds),
        {"kind": "ResourceSlice", "apiVersion": "resource.k8s.io/v1", "metadata": {"name": "gpu-1-slice"},
         "spec": {"driver": "gpu.example.com", "nodeName": "gpu-1", "pool": {"name": "gpu-1", "generation": generation, "resourceSliceCount": 1},
                  "devices": [device("gpu-0"), device("gpu-1")]}},
    ]})
}

fn dra_server(name: &str, cluster: &Value) -> FakeApiServer {
    let server = FakeApiServer::start(&crate::util::scratch(name));
    server.serve_version(36);
    server.serve_dra(36);
    server.load(cluster);
    server
}

#[test]
fn run_deletes_for_a_device_taint_in_the_device_controllers_words_and_cancels_when_untainted() {
    // `train` tolerates the ECC taint 5 s and it was added 60 s ago: overdue, deleted at once.
    // `infer` tolerates it an hour: scheduled, then cancelled when the driver clears the taint.
    let added = jiff::Timestamp::now() - jiff::SignedDuration::from_secs(60);
    let server = dra_server("device-taints-run", &gpu_run_cluster(added, 5, 3600, 1, &["gpu-0", "gpu-1"]));
    let mut run = crate::support::running::Running::start(&server, &[]);
    let requests = server.wait_for("train's DELETE", std::time::Duration::from_secs(20), |r| {
        crate::fake_api::run_cluster::deletes_in(r, "ml", "train") == 1
    });
    let patch =
        requests.iter().find(|r| r.method == "PATCH" && r.path.ends_with("/pods/train/status")).expect("patched");
    let condition = &patch.body.as_ref().expect("a body")["status"]["conditions"][0];
    assert_eq!(
        (condition["reason"].as_str(), condition["message"].as_str()),
        (Some("DeletionByDeviceTaintManager"), Some("Device Taint manager: deleting due to NoExecute taint"))
    );
    let delete = requests.iter().find(|r| r.method == "DELETE" && r.path.ends_with("/pods/train")).expect("deleted");
    assert_eq!(delete.body.as_ref().expect("DeleteOptions")["preconditions"]["uid"], "uid-train");
    let scheduled = run.expect("infer scheduled", |l| l["type"] == "scheduled" && l["pod"]["name"] == "infer");
    assert_eq!(scheduled["tolerationSeconds"], 3600);

    // The driver publishes a new generation without the taints: infer's deletion is cancelled.
    server.add(gpu_run_cluster(added, 5, 3600, 2, &[])["items"][5].clone());
    run.expect("infer cancelled", |l| l["type"] == "cancelled" && l["pod"]["name"] == "infer");
    server.wait_until_state("the events", std::time::Duration::from_secs(20), |view| view.events().len() >= 2);
    let notes: Vec<(String, String)> = server
        .events()
        .iter()
        .map(|e| {
            (e["reason"].as_str().unwrap_or_default().to_owned(), e["note"].as_str().unwrap_or_default().to_owned())
        })
        .collect();
    let words = |note: &str| ("DeviceTaintManagerEviction".to_owned(), note.to_owned());
    assert_eq!(notes, [words("Marking for deletion"), words("Cancelling deletion")]);
    let (summary, code) = run.interrupt();
    assert_eq!((code, summary["deleted"].as_u64(), summary["cancelled"].as_u64()), (0, Some(1), Some(1)));
    assert_eq!(crate::fake_api::run_cluster::deletes_in(&server.requests(), "ml", "infer"), 0);
}

#[test]
fn run_with_device_taints_false_leaves_them_to_the_cluster_and_asks_nothing_of_them() {
    let added = jiff::Timestamp::now() - jiff::SignedDuration::from_secs(60);
    let server = dra_server("device-taints-off", &gpu_run_cluster(added, 5, 5, 1, &["gpu-0", "gpu-1"]));
    let run = crate::support::running::Running::start(&server, &["--device-taints=false"]);
    let (summary, code) = run.interrupt();
    assert_eq!((code, summary["deleted"].as_u64()), (0, Some(0)));
    let asked = server.requests().iter().filter(|r| r.path.contains("resource.k8s.io")).count();
    assert_eq!(asked, 0);
}

#[test]
fn run_follows_the_kube_version_given_as_plan_does() {
    // Kubernetes 1.32 has no device-taint controller: nothing to enforce, nothing to watch.
    let added = jiff::Timestamp::now() - jiff::SignedDuration::from_secs(60);
    let server = dra_server("device-taints-version", &gpu_run_cluster(added, 5, 5, 1, &["gpu-0", "gpu-1"]));
    let run = crate::support::running::Running::start(&server, &["--kube-version", "1.32"]);
    let (summary, code) = run.interrupt();
    assert_eq!((code, summary["deleted"].as_u64()), (0, Some(0)));
    assert_eq!(server.requests().iter().filter(|r| r.path.contains("resource.k8s.io")).count(), 0);
}
