//! The zone-outage workload (BENCHMARKS.md): `nodes` nodes with `pods_per_node` pods each, all of them then
//! tainted `node.kubernetes.io/unreachable:NoExecute`, one `NodeUpserted` per node.
//!
//! Shared by `benches/engine.rs`, `examples/engine_memory.rs` and `examples/profile.rs`, so all three
//! measure exactly the same state.
//!
//! Pods, by their index `j` on the node: `j % 10 == 0` DaemonSet-like (not-ready and unreachable
//! tolerated forever), `j % 10 == 1` no tolerations, the rest (80%) the default tolerations
//! (not-ready and unreachable for 300 s). Every pod carries its own strings and its own toleration
//! list, as pods decoded by an informer do; the engine interns what it wants to share.

use std::sync::Arc;

use taint_evict::engine::model::{Effect, Node, NodeName, Operator, Pod, PodKey, Taint, Toleration};
use taint_evict::engine::time::Timestamp;
use taint_evict::engine::{Action, Engine, Input};

/// `node.kubernetes.io/not-ready`.
pub const NOT_READY: &str = "node.kubernetes.io/not-ready";
/// `node.kubernetes.io/unreachable`.
pub const UNREACHABLE: &str = "node.kubernetes.io/unreachable";
/// The default `tolerationSeconds` the admission plugin adds.
pub const WINDOW_SECONDS: i64 = 300;

/// When the pods and the untainted nodes are fed.
pub const SYNCED_AT: Timestamp = Timestamp::from_unix_seconds(1_795_341_600); // 2026-11-22T10:00:00Z
/// When the zone goes down: every node pass happens at this instant.
pub const OUTAGE_AT: Timestamp = Timestamp::from_unix_seconds(1_795_341_600 + 60);

/// What the pods of the outage are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// not-ready and unreachable for 300 s.
    Default,
    /// not-ready and unreachable forever.
    DaemonSet,
    /// No tolerations.
    Untolerating,
}

/// The kind of pod `j` of a node.
#[must_use]
pub fn kind(j: usize) -> Kind {
    match j % 10 {
        0 => Kind::DaemonSet,
        1 => Kind::Untolerating,
        _ => Kind::Default,
    }
}

/// The toleration list of a pod of `kind`, freshly allocated.
#[must_use]
pub fn tolerations(kind: Kind) -> Arc<[Toleration]> {
    let seconds = match kind {
        Kind::Default => Some(WINDOW_SECONDS),
        Kind::DaemonSet => None,
        Kind::Untolerating => return Arc::new([]),
    };
    [NOT_READY, UNREACHABLE]
        .into_iter()
        .map(|key| Toleration {
            key: key.into(),
            operator: Operator::Exists,
            value: Box::default(),
            effect: Some(Effect::NoExecute),
            seconds,
        })
        .collect()
}

/// The name of node `i`, as a cloud provider would name it.
#[must_use]
pub fn node_name(i: usize) -> String {
    format!("ip-10-{}-{}-{}.eu-west-1.compute.internal", i / 65_536 % 256, i / 256 % 256, i % 256)
}

/// Pod `j` of node `i`, with realistic name lengths (`team-017/checkout-7d9f8b6c5d-00123-04`).
#[must_use]
pub fn pod(i: usize, j: usize) -> Pod {
    let kind = kind(j);
    let namespace = format!("team-{:03}", (i * 7 + j) % 200);
    let name = match kind {
        Kind::Default => format!("checkout-{:010x}-{i:05}-{j:02}", (i * 31 + j) % 0xff_ffff),
        Kind::DaemonSet => format!("node-exporter-{i:05}-{j:02}"),
        Kind::Untolerating => format!("batch-worker-{i:05}-{j:02}"),
    };
    let uid = format!("{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}", i, j, i % 4096, j % 4096, i * 1000 + j);
    Pod {
        key: PodKey::new(namespace, name),
        uid: uid.into(),
        node: Some(NodeName::from(node_name(i))),
        tolerations: tolerations(kind),
    }
}

/// An engine that knows `nodes` untainted nodes and their pods, all fed at [`SYNCED_AT`].
#[must_use]
pub fn populated(nodes: usize, pods_per_node: usize) -> Engine {
    let mut engine = Engine::new();
    for i in 0..nodes {
        engine.handle(Input::NodeUpserted(Node { name: node_name(i).into(), taints: Vec::new().into() }), SYNCED_AT);
    }
    for i in 0..nodes {
        for j in 0..pods_per_node {
            engine.handle(Input::PodUpserted(pod(i, j)), SYNCED_AT);
        }
    }
    assert!(engine.poll_action().is_none(), "untainted nodes decide nothing");
    assert_eq!(engine.pod_count(), nodes * pods_per_node);
    engine
}

/// The outage's inputs: one `NodeUpserted` per node, carrying `unreachable:NoExecute`.
#[must_use]
pub fn outage_inputs(nodes: usize) -> Vec<Input> {
    (0..nodes)
        .map(|i| {
            let taint = Taint::new(UNREACHABLE, "", Effect::NoExecute).with_time_added(OUTAGE_AT);
            Input::NodeUpserted(Node { name: node_name(i).into(), taints: vec![taint].into() })
        })
        .collect()
}

/// What the outage decided, counted while draining `poll_action()`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// `Action::Scheduled` firing exactly [`WINDOW_SECONDS`] after the outage.
    pub scheduled_at_window: usize,
    /// `Action::Evict`: due now.
    pub evict_now: usize,
    /// Anything else (there should be nothing).
    pub other: usize,
}

/// The tally the outage must produce.
#[must_use]
pub fn expected(nodes: usize, pods_per_node: usize) -> Tally {
    let count = |k: Kind| nodes * (0..pods_per_node).filter(|&j| kind(j) == k).count();
    Tally { scheduled_at_window: count(Kind::Default), evict_now: count(Kind::Untolerating), other: 0 }
}

/// Feeds every input in order at [`OUTAGE_AT`], one thread, draining the actions after each (the
/// engine's call contract), and counts the decisions.
pub fn run_outage(engine: &mut Engine, inputs: Vec<Input>) -> Tally {
    let deadline = OUTAGE_AT.add_nanos(WINDOW_SECONDS * 1_000_000_000);
    let mut tally = Tally::default();
    for input in inputs {
        engine.handle(input, OUTAGE_AT);
        while let Some(action) = engine.poll_action() {
            match action {
                Action::Scheduled { work, .. } if work.fire == deadline && work.created == OUTAGE_AT => {
                    tally.scheduled_at_window += 1;
                }
                Action::Evict { work, .. } if work.fire == OUTAGE_AT => tally.evict_now += 1,
                _ => tally.other += 1,
            }
        }
    }
    tally
}
