//! `plan NODE` against the fake API server, beside `kubectl get pods --field-selector
//! spec.nodeName=NODE -o json` against the same server: the plugin should not be slower than kubectl
//! fetching the same data.
//!
//! `cargo bench --bench plan_live` (release build). Prints medians, spread and the ratio.
//! `TAINT_EVICT_BENCH_PLUGIN=PATH` times another build of the plugin instead (before/after a change).

// Benchmarks measure real time: the runtime's clock (clippy.toml) is for the product's code.
#![allow(clippy::disallowed_methods)]

use std::process::Command;

use taint_evict_test_support::cluster;
use taint_evict_test_support::fake_apiserver;
use taint_evict_test_support::process::{median_and_spread, timed};

const RUNS: usize = 30;
const PODS_PER_NODE: usize = 110;

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // test harnesses list benchmarks; this one has no parts to list
    }
    let mut dump = Vec::new();
    cluster::generate(&cluster::Config { nodes: 20, pods_per_node: PODS_PER_NODE, seed: 7, healthy: false }, &mut dump)
        .expect("generate");
    let list: serde_json::Value = serde_json::from_slice(&dump).expect("JSON");
    let node = list["items"]
        .as_array()
        .and_then(|items| items.iter().find(|i| i["kind"] == "Node"))
        .and_then(|n| n["metadata"]["name"].as_str())
        .expect("a node")
        .to_owned();
    let dir = std::env::temp_dir().join(format!("taint-evict-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch");
    let server = fake_apiserver::FakeApiServer::start(&dir);
    server.load(&list);
    // Every node's kubelet Lease, renewed just now, as on a real cluster: `plan` lists them.
    let renewed = jiff::Timestamp::now().to_string();
    for item in list["items"].as_array().into_iter().flatten().filter(|i| i["kind"] == "Node") {
        server.add(serde_json::json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": item["metadata"]["name"], "namespace": "kube-node-lease"},
            "spec": {"holderIdentity": item["metadata"]["name"], "leaseDurationSeconds": 40, "renewTime": renewed}}));
    }
    let kubeconfig = server.kubeconfig().to_str().expect("UTF-8").to_owned();
    // Another build of the plugin (to compare two versions against the same server), else this one.
    let plugin = std::env::var("TAINT_EVICT_BENCH_PLUGIN")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_kubectl-taint_evict").to_owned());
    let selector = format!("spec.nodeName={node}");
    let plugin_cmd = || {
        let mut c = Command::new(&plugin);
        c.args(["plan", &node, "-o", "json", "--kubeconfig", &kubeconfig]).env("HOME", &dir);
        c
    };
    let kubectl_cmd = || {
        let mut c = Command::new("kubectl");
        c.args(["get", "pods", "-A", "--field-selector", &selector, "-o", "json", "--kubeconfig", &kubeconfig])
            .env("HOME", &dir);
        c
    };
    let pods = Command::new("kubectl")
        .args(["get", "pods", "-A", "--field-selector", &selector, "--kubeconfig", &kubeconfig, "--no-headers"])
        .env("HOME", &dir)
        .output()
        .expect("kubectl runs");
    let count = String::from_utf8_lossy(&pods.stdout).lines().count();
    assert_eq!(count, PODS_PER_NODE, "kubectl sees the node's pods");
    for _ in 0..3 {
        timed(&mut plugin_cmd());
        timed(&mut kubectl_cmd()); // also warms kubectl's discovery cache, as in daily use
    }
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        ours.push(timed(&mut plugin_cmd()));
        theirs.push(timed(&mut kubectl_cmd()));
    }
    let (om, o10, o90) = median_and_spread(ours);
    let (km, k10, k90) = median_and_spread(theirs);
    println!("plan_live: node {node} with {PODS_PER_NODE} pods, {RUNS} runs each, alternating");
    println!("  kubectl-taint_evict plan NODE -o json      median {om:?} (p10 {o10:?}, p90 {o90:?})");
    println!("  kubectl get pods --field-selector -o json  median {km:?} (p10 {k10:?}, p90 {k90:?})");
    println!("  ratio plugin/kubectl (medians): {:.2}", om.as_secs_f64() / km.as_secs_f64());
}
