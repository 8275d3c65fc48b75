//! The pods whose tolerations were edited mid-countdown, found in the watches' first lists rather
//! than read again: each pod's history came with it (its `managedFields`, in either content type),
//! and only its controller's pod template is read then (docs/upstream.md, "A toleration edited").

use tokio::sync::{mpsc, oneshot};

use crate::cluster::{self, Connection};
use crate::engine::snapshot::SnapshotNode;
use crate::runtime::{Edits, NodeChange, PodChange};

/// Passes the node and pod changes on as they come, but for the first list of pods: that waits
/// until the pods it holds counting down on the first list's tainted nodes, with their tolerations
/// edited, are in `edits` with their controllers' templates (read by LIST, per kind and namespace).
/// The loop's start-up replay, which needs both first lists, finds them there.
pub fn found_in_first_lists(
    connection: Connection,
    mut nodes: mpsc::Receiver<NodeChange>,
    mut pods: mpsc::Receiver<PodChange>,
    edits: Edits,
) -> (mpsc::Receiver<NodeChange>, mpsc::Receiver<PodChange>) {
    let (tainted_tx, tainted) = oneshot::channel::<Vec<SnapshotNode>>();
    let (nodes_tx, nodes_out) = mpsc::channel(1024);
    tokio::spawn(async move {
        let mut first = Some(tainted_tx);
        while let Some(change) = nodes.recv().await {
            if let NodeChange::Listed(list) = &change
                && let Some(first) = first.take()
            {
                let _ = first.send(list.iter().filter(|node| !node.taints.is_empty()).cloned().collect());
            }
            if nodes_tx.send(change).await.is_err() {
                return;
            }
        }
    });
    let (pods_tx, pods_out) = mpsc::channel(1024);
    tokio::spawn(async move {
        let mut tainted = Some(tainted);
        while let Some(change) = pods.recv().await {
            if let PodChange::Listed(list) = &change
                && let Some(tainted) = tainted.take()
            {
                // No first list of nodes (the watch ended): nothing counts down.
                let nodes = tainted.await.unwrap_or_default();
                let counting = cluster::snapshot::counting_down(&nodes, list);
                edits.put(cluster::snapshot::tolerations_written(&connection, &counting).await);
            }
            if pods_tx.send(change).await.is_err() {
                return;
            }
        }
    });
    (nodes_out, pods_out)
}
