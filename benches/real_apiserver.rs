//! `plan` against the real kube-apiserver (v1.29, started from the envtest binaries) holding 200 nodes
//! and 20,000 pods, beside kubectl fetching the same data from the same server, same run:
//! - `plan NODE` (watch-cache read) and `plan NODE --quorum-read` vs
//!   `kubectl get pods -A --field-selector spec.nodeName=NODE -o json`;
//! - `plan` over every tainted node (all 200) vs `kubectl get nodes,pods -A -o json`;
//! - a game day, `plan -l ZONE --down-selector ZONE` (a zone of 50 nodes going dark: every pod read,
//!   the node lifecycle controller predicted for 50 silent nodes, the owners rolled up), vs the same.
//!
//! `cargo bench --bench real_apiserver` (release build). Prints medians, spread and the ratios.
//! `TAINT_EVICT_BENCH_BASELINE=PATH` also times `plan NODE` of another build, interleaved (before/after).

// Benchmarks measure real time: the runtime's clock (clippy.toml) is for the product's code.
#![allow(clippy::disallowed_methods)]

#[allow(dead_code)]
#[path = "../tests/support/control_plane.rs"]
mod control_plane;
#[path = "support/process.rs"]
mod process;

use std::process::Command;
use std::time::{Duration, Instant};

use process::{median_and_spread, timed};
use serde_json::json;

const RUNS: usize = 10;
const NODES: usize = 200;
const PODS_PER_NODE: usize = 100;

fn cluster() -> Vec<Vec<serde_json::Value>> {
    let added = "2026-11-23T11:58:00Z";
    let mut batches = Vec::new();
    // Ready, in four zones, without Leases (so never silent: only `--down` takes a zone down).
    let ready = json!({"conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                       "lastHeartbeatTime": added, "lastTransitionTime": added}]});
    let nodes: Vec<_> = (0..NODES)
        .map(|i| {
            json!({"apiVersion": "v1", "kind": "Node",
                   "metadata": {"name": format!("node-{i:03}"),
                                "labels": {"topology.kubernetes.io/zone": format!("z{}", i % 4)}},
                   "spec": {"taints": [{"key": "example.com/drain", "effect": "NoExecute", "timeAdded": added}]},
                   "status": ready})
        })
        .collect();
    batches.push(nodes);
    for i in 0..NODES {
        let pods = (0..PODS_PER_NODE)
            .map(|j| {
                json!({"apiVersion": "v1", "kind": "Pod",
                       "metadata": {"name": format!("pod-{i:03}-{j:03}"), "namespace": "default",
                                    "labels": {"app": format!("app-{}", j % 10)},
                                    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                                         "name": format!("app-{}", j % 10), "controller": true,
                                                         "uid": "6f1c2a4e-0b7d-4c1e-9f3a-5d8e7b6a4c21"}]},
                       "spec": {"nodeName": format!("node-{i:03}"), "containers": [{"name": "c", "image": "app"}],
                                "tolerations": [{"key": "example.com/drain", "operator": "Exists",
                                                 "effect": "NoExecute", "tolerationSeconds": 60 * (j as i64 % 7)}]}})
            })
            .collect();
        batches.push(pods);
    }
    batches
}

fn ratio_of(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64()
}

fn report(name: &str, samples: Vec<Duration>) -> Duration {
    let (median, p10, p90) = median_and_spread(samples);
    println!("  {name:<62} median {median:>10.3?} (p10 {p10:.3?}, p90 {p90:.3?})");
    median
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // test harnesses list benchmarks; this one has no parts to list
    }
    let Some(plane) = control_plane::ControlPlane::start("bench", &control_plane::Options::default()) else {
        return;
    };
    let start = Instant::now();
    let batches = cluster();
    plane.create(&batches[0]);
    std::thread::scope(|scope| {
        for chunk in batches[1..].chunks(NODES / 4) {
            let plane = &plane;
            scope.spawn(move || chunk.iter().for_each(|batch| plane.create(batch)));
        }
    });
    println!("real_apiserver: {NODES} nodes, {} pods created in {:.1?}", NODES * PODS_PER_NODE, start.elapsed());

    let dir = std::env::temp_dir().join(format!("taint-evict-bench-real-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch");
    let kubeconfig = plane.kubeconfig().to_str().expect("UTF-8").to_owned();
    let plugin = env!("CARGO_BIN_EXE_kubectl-taint_evict");
    let node = "node-005";
    let selector = format!("spec.nodeName={node}");
    let command = |program: &str, args: &[&str]| {
        let mut c = Command::new(program);
        c.args(args).args(["--kubeconfig", &kubeconfig]).env("HOME", &dir).env_remove("KUBECONFIG");
        c
    };
    let plan_node = || command(plugin, &["plan", node, "-o", "json"]);
    let plan_node_quorum = || command(plugin, &["plan", node, "-o", "json", "--quorum-read"]);
    let kubectl_node = || command("kubectl", &["get", "pods", "-A", "--field-selector", &selector, "-o", "json"]);
    let plan_all = || command(plugin, &["plan", "-o", "json"]);
    let plan_all_quorum = || command(plugin, &["plan", "-o", "json", "--quorum-read"]);
    let kubectl_all = || command("kubectl", &["get", "nodes,pods", "-A", "-o", "json"]);
    let zone = "topology.kubernetes.io/zone=z0";
    let plan_down = || command(plugin, &["plan", "-l", zone, "--down-selector", zone, "-o", "json"]);

    let baseline = std::env::var("TAINT_EVICT_BENCH_BASELINE").ok();
    let plan_node_before = || command(baseline.as_deref().unwrap_or(plugin), &["plan", node, "-o", "json"]);
    let warm: [&dyn Fn() -> Command; 6] =
        [&plan_node, &plan_node_quorum, &kubectl_node, &plan_all, &kubectl_all, &plan_down];
    for make in warm {
        timed(&mut make()); // warm up, and kubectl's discovery cache, as in daily use
    }
    let mut commands: Vec<&dyn Fn() -> Command> =
        vec![&plan_node, &plan_node_quorum, &kubectl_node, &plan_all, &plan_all_quorum, &kubectl_all, &plan_down];
    if baseline.is_some() {
        timed(&mut plan_node_before());
        commands.push(&plan_node_before);
    }
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); commands.len()];
    for _ in 0..RUNS {
        for (make, log) in commands.iter().zip(samples.iter_mut()) {
            log.push(timed(&mut make()));
        }
    }
    let mut samples = samples.into_iter();
    let mut next = || samples.next().expect("samples");
    println!(
        "real_apiserver: kube-apiserver v1.29.6, {NODES} nodes x {PODS_PER_NODE} pods, {RUNS} runs each, interleaved"
    );
    let ours = report("kubectl-taint_evict plan node-005 -o json (watch cache)", next());
    let ours_quorum = report("kubectl-taint_evict plan node-005 -o json --quorum-read", next());
    let theirs = report("kubectl get pods -A --field-selector spec.nodeName=node-005 -o json", next());
    let all = report("kubectl-taint_evict plan -o json (watch cache)", next());
    let all_quorum = report("kubectl-taint_evict plan -o json --quorum-read", next());
    let all_theirs = report("kubectl get nodes,pods -A -o json", next());
    let down = report("kubectl-taint_evict plan -l ZONE --down-selector ZONE -o json", next());
    if baseline.is_some() {
        let before = report("baseline plan node-005 -o json (watch cache)", next());
        println!("  ratio plan NODE now / baseline (medians): {:.3}", ratio_of(ours, before));
    }
    println!(
        "  ratio plan NODE / kubectl (medians): {:.3} (quorum read: {:.3})",
        ratio_of(ours, theirs),
        ratio_of(ours_quorum, theirs)
    );
    println!(
        "  ratio plan / kubectl get nodes,pods (medians): {:.3} (quorum read: {:.3})",
        ratio_of(all, all_theirs),
        ratio_of(all_quorum, all_theirs)
    );
    println!(
        "  ratio plan --down-selector / kubectl get nodes,pods (medians): {:.3} (/ plan: {:.3})",
        ratio_of(down, all_theirs),
        ratio_of(down, all)
    );
}
