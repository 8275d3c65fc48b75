//! `record`'s recorder on a generated stream: 150,000 pods on 5,000 nodes listed, then changed, then
//! written again unchanged, and the nodes' Lease renewals of ten minutes; what it holds per object and
//! how many lines a second it writes.
//!
//! ```text
//! cargo run --release --example record_memory [-- NODES PODS_PER_NODE]
//! ```
//!
//! Method: a counting `#[global_allocator]` (as `engine_memory`): bytes per object = (allocated after
//! the list, the lines taken and dropped as `record` writes them, − allocated before) / objects. Each
//! object is built as the watch decodes it (the fields kept, as JSON) before it is handed over; only
//! the recorder's calls are timed.

#![allow(clippy::disallowed_methods)]

use std::time::{Duration, Instant};

use serde_json::json;
use taint_evict::cluster::watch::{Recorded, Seen};
use taint_evict::engine::time::Timestamp;
use taint_evict::live::record::lines::Recorder;
use taint_evict_test_support::counting::{self, read};

#[global_allocator]
static ALLOCATOR: counting::Counting = counting::Counting;

const NODES: usize = 0;
const PODS: usize = 1;
const LEASES: usize = 2;

/// A pod as the record keeps it: a ReplicaSet's, bound, two tolerations, four conditions.
fn pod(index: usize, nodes: usize, ready: bool) -> Recorded {
    let (name, node) = (format!("web-{index:06}"), format!("node-{:05}", index % nodes));
    let status = if ready { "True" } else { "False" };
    let object = json!({
        "metadata": {"name": name, "namespace": format!("team-{}", index % 40), "uid": format!("{index:032x}"),
            "creationTimestamp": "2026-11-29T09:00:00Z", "labels": {"app": "web", "pod-template-hash": "7d9f8c"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d9f8c",
                "uid": "0f4e1d2c-aaaa-bbbb-cccc-000000000001", "controller": true}]},
        "spec": {"nodeName": node, "tolerations": [
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}]},
        "status": {"phase": "Running", "conditions": [
            {"type": "PodReadyToStartContainers", "status": "True", "lastTransitionTime": "2026-11-29T09:00:02Z"},
            {"type": "Initialized", "status": "True", "lastTransitionTime": "2026-11-29T09:00:01Z"},
            {"type": "Ready", "status": status, "lastTransitionTime": "2026-11-29T09:00:05Z"},
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-11-29T09:00:00Z"}]}});
    let namespace = object["metadata"]["namespace"].as_str().map(str::to_owned);
    Recorded { namespace, name: name.clone(), uid: format!("{index:032x}"), object }
}

/// A node Lease renewed at `second`.
fn lease(node: usize, second: i64) -> Recorded {
    let name = format!("node-{node:05}");
    let renewed = jiff::Timestamp::from_second(1_795_946_400 + second).expect("in range").to_string();
    let object = json!({"metadata": {"name": name, "namespace": "kube-node-lease", "uid": format!("l{node:031x}")},
        "spec": {"holderIdentity": name, "leaseDurationSeconds": 40, "renewTime": renewed}});
    Recorded { namespace: Some("kube-node-lease".into()), name, uid: format!("l{node:031x}"), object }
}

fn at(second: i64) -> Timestamp {
    Timestamp::from_unix_seconds(1_795_946_400 + second)
}

/// Feeds `seen` to the recorder, timed, and drops what it wrote (as `record` writes it out); the
/// bytes and lines it wrote.
fn feed(recorder: &mut Recorder, seen: Seen, at: Timestamp, spent: &mut Duration) -> (usize, usize) {
    let started = Instant::now();
    recorder.see(seen, at);
    let written = recorder.write_out(|lines| Ok::<_, ()>((lines.len(), lines.iter().filter(|b| **b == b'\n').count())));
    *spent += started.elapsed();
    written.unwrap_or_default()
}

fn main() {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<usize>().expect("sizes are integers"));
    let nodes = args.next().unwrap_or(5_000);
    let pods = nodes * args.next().unwrap_or(30);
    let before = read();
    let mut recorder = Recorder::new(Duration::from_secs(60));
    recorder.begin(at(0), "kubectl-taint-evict bench", "https://bench");
    recorder.take();
    let mut spent = Duration::ZERO;
    let (mut bytes, mut lines) = (0, 0);
    let mut add = |written: (usize, usize)| {
        bytes += written.0;
        lines += written.1;
    };
    for watch in [NODES, LEASES] {
        add(feed(&mut recorder, Seen::Listing { watch }, at(0), &mut spent));
        add(feed(&mut recorder, Seen::Listed { watch }, at(0), &mut spent));
    }
    add(feed(&mut recorder, Seen::Listing { watch: PODS }, at(0), &mut spent));
    for index in 0..pods {
        add(feed(&mut recorder, Seen::Object { watch: PODS, recorded: pod(index, nodes, true) }, at(0), &mut spent));
    }
    add(feed(&mut recorder, Seen::Listed { watch: PODS }, at(0), &mut spent));
    let listed = read();
    println!(
        "list of {pods} pods: {lines} lines, {:.1} MB, in {:.3} s: {:.0} lines/s, {:.1} MB/s",
        bytes as f64 / 1e6,
        spent.as_secs_f64(),
        lines as f64 / spent.as_secs_f64(),
        bytes as f64 / 1e6 / spent.as_secs_f64()
    );
    println!(
        "held after the list: {} objects, {:.1} bytes each ({:.1} MB), peak {:.1} MB in the process",
        recorder.known(),
        (listed.bytes - before.bytes) as f64 / recorder.known() as f64,
        (listed.bytes - before.bytes) as f64 / 1e6,
        listed.peak as f64 / 1e6
    );

    // Every pod's readiness flips (a line each), then every pod is written again unchanged (none).
    let (mut spent, mut changed_lines) = (Duration::ZERO, 0);
    for index in 0..pods {
        changed_lines +=
            feed(&mut recorder, Seen::Object { watch: PODS, recorded: pod(index, nodes, false) }, at(1), &mut spent).1;
    }
    println!(
        "{pods} pods changed: {changed_lines} lines in {:.3} s: {:.0} lines/s",
        spent.as_secs_f64(),
        changed_lines as f64 / spent.as_secs_f64()
    );
    let (mut spent, mut unchanged_lines) = (Duration::ZERO, 0);
    for index in 0..pods {
        unchanged_lines +=
            feed(&mut recorder, Seen::Object { watch: PODS, recorded: pod(index, nodes, false) }, at(2), &mut spent).1;
    }
    println!(
        "{pods} pods written again unchanged: {unchanged_lines} lines, {:.3} s: {:.0} objects/s",
        spent.as_secs_f64(),
        pods as f64 / spent.as_secs_f64()
    );

    // Ten minutes of node Lease renewals (every 10 s), ticked every second.
    let (mut spent, mut lease_lines) = (Duration::ZERO, 0);
    for second in 0..600 {
        for node in (0..nodes).filter(|node| (*node as i64 + second) % 10 == 0) {
            lease_lines += feed(
                &mut recorder,
                Seen::Object { watch: LEASES, recorded: lease(node, second) },
                at(second),
                &mut spent,
            )
            .1;
        }
        let started = Instant::now();
        recorder.tick(at(second));
        lease_lines +=
            recorder.write_out(|lines| Ok::<_, ()>(lines.iter().filter(|b| **b == b'\n').count())).unwrap_or(0);
        spent += started.elapsed();
    }
    let renewals = nodes * 60;
    println!(
        "{renewals} node Lease renewals over 10 min, --leases-every 60s: {lease_lines} lines ({:.1} per node), {:.3} s",
        lease_lines as f64 / nodes as f64,
        spent.as_secs_f64()
    );
    let end = read();
    println!(
        "held at the end: {} objects, {:.1} MB allocated ({:.1} bytes per object), peak {:.1} MB",
        recorder.known(),
        (end.bytes - before.bytes) as f64 / 1e6,
        (end.bytes - before.bytes) as f64 / recorder.known() as f64,
        end.peak as f64 / 1e6
    );
}
