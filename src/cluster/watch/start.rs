//! The watches started: the one node watch (every node; those in the scope reach the engine, every
//! node's health the foresight), the pod watches and the DRA objects'.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher;
use kube::{Api, Client};
use tokio::sync::mpsc;

use super::cache::from_watch_cache;
use super::decoded::WatchedNode;
use super::devices::{self, Served};
use super::forward::{Adapter, View, forward};
use super::outage::{Health, backoff};
use super::pods::{self, Selected};
use super::relist;
use super::scope::NodeScope;
use super::tap::{HealthChange, Tap};
use crate::metrics::Metrics;
use crate::runtime::report::Report;
use crate::runtime::{NodeChange, PodChange};
use crate::time::Clock;

/// Starts the node watch and the pod watches (of `namespace` alone when given), and the DRA objects'
/// when `devices` says which versions serve them; their changes arrive on the returned channels. The
/// node watch reads every node: those in `scope` reach the engine, and every node's health reaches
/// `health` (the lifecycle controller's taints foreseen), from the one watch. With `replicas`
/// (`run --keep-last-ready`) the pods carry their controller, and with a `scope` short of every node,
/// one more watch reads the pods on every node, for the replicas of each workload alone.
#[allow(clippy::too_many_arguments)]
pub fn spawn(
    client: &Client,
    scope: NodeScope,
    namespace: Option<&str>,
    report: mpsc::UnboundedSender<Report>,
    clock: Clock,
    metrics: Arc<Metrics>,
    devices: Option<&Served>,
    health: mpsc::UnboundedSender<HealthChange>,
    replicas: bool,
) -> Watches {
    let (node_tx, node_rx) = mpsc::channel(1024);
    let (pod_tx, pod_rx) = mpsc::channel(1024);
    let (fatal_tx, fatal) = mpsc::unbounded_channel();

    // Every node: the foresight counts every zone's; the scope is applied here, not by the server.
    let config = from_watch_cache();
    let api = Api::<WatchedNode>::all(client.clone());
    let mut tap = Tap::new(scope.clone(), health);
    let nodes = relist::relisting(move || watcher::watcher(api.clone(), config.clone()).boxed())
        .backoff(backoff())
        .inspect(move |event| tap.see(event));
    let (pod_nodes, selected) = pods::Nodes::of(&scope);
    let replicas_apart = replicas && !matches!(scope, NodeScope::All);
    // The replicas are counted by controller: the pods carry theirs.
    let owners = replicas;
    // The nodes the engine was shown: one that leaves the scope (relabelled) has left it, which is
    // not a deletion (docs/run.md, "What `run` watches").
    let shown = Arc::new(Mutex::new(HashSet::new()));
    let (seen, gone) = (shown.clone(), shown);
    let adapter = Adapter {
        view: move |node: WatchedNode| {
            let name = &node.node().name;
            let mut shown = seen.lock().expect("shown");
            if scope.admits(node.node()) {
                shown.insert(name.clone());
                View::Seen(node.into_node())
            } else {
                View::Unseen(shown.remove(name).then(|| NodeChange::Left(name.clone())))
            }
        },
        deleted: move |node: WatchedNode| {
            let name = node.into_node().name;
            gone.lock().expect("shown").remove(&name).then_some(NodeChange::Deleted(name))
        },
        listed: NodeChange::Listed,
        applied: NodeChange::Applied,
        interrupted: Some(|| NodeChange::Interrupted),
    };
    let observe = move |change: &NodeChange| {
        let Some(selected) = &selected else { return };
        let _ = selected.send(match change {
            NodeChange::Listed(nodes) => Selected::Listed(nodes.iter().map(|n| n.name.clone()).collect()),
            NodeChange::Applied(node) => Selected::Applied(node.name.clone()),
            NodeChange::Deleted(name) | NodeChange::Left(name) => Selected::Deleted(name.clone()),
            NodeChange::Interrupted => return,
        });
    };
    let health = Health::new("nodes", report.clone(), clock.clone(), metrics.clone(), fatal_tx.clone());
    tokio::spawn(forward(nodes, adapter, health, node_tx, observe));

    let devices = devices.map(|served| {
        let health = |what| Health::new(what, report.clone(), clock.clone(), metrics.clone(), fatal_tx.clone());
        devices::spawn(client, served, health)
    });
    let replicas = replicas_apart.then(|| {
        let (replica_tx, replica_rx) = mpsc::channel(1024);
        let health = Health::new("replicas", report.clone(), clock.clone(), metrics.clone(), fatal_tx.clone());
        pods::spawn(client, pods::Nodes::All, namespace, health.in_namespace(namespace), replica_tx, true);
        replica_rx
    });
    let health = Health::new("pods", report, clock, metrics, fatal_tx).in_namespace(namespace);
    pods::spawn(client, pod_nodes, namespace, health, pod_tx, owners);
    Watches { nodes: node_rx, pods: pod_rx, devices, replicas, fatal }
}

/// The watches' changes, and what ends them for good.
pub struct Watches {
    /// The node changes.
    pub nodes: mpsc::Receiver<NodeChange>,
    /// The pod changes.
    pub pods: mpsc::Receiver<PodChange>,
    /// The DRA objects' changes, when they are watched.
    pub devices: Option<mpsc::Receiver<crate::engine::devices::DeviceInput>>,
    /// The pods on every node, for `run --keep-last-ready` when the nodes followed are not all of
    /// them: a replica ready on another node counts.
    pub replicas: Option<mpsc::Receiver<PodChange>>,
    /// A failure no retry can mend (the server refuses the request as malformed, forbidden or not
    /// found, or it cannot be built): the command ends with it.
    pub fatal: mpsc::UnboundedReceiver<crate::cluster::error::ClusterError>,
}
