//! The pods of a plan stuck terminating: deleted, their grace period over, on a node whose kubelet
//! is gone (`lifecycle::stuck_since`).

use std::collections::HashMap;
use std::time::Duration;

use super::model::Plan;
use crate::lifecycle::{NodeHealth, stuck_since};
use crate::model::NodeName;

/// Marks the pods of `plan` that are stuck terminating at `plan.now`, reading node health from
/// `nodes`. Pods of nodes not in `nodes` are left as they are.
pub fn mark_stuck(plan: &mut Plan<'_>, nodes: &[NodeHealth], grace: Duration) {
    let health: HashMap<&NodeName, &NodeHealth> = nodes.iter().map(|node| (&node.name, node)).collect();
    let now = plan.now;
    for node in &mut plan.nodes {
        let Some(health) = health.get(&node.name) else { continue };
        for pod in node.pods.iter_mut().filter(|pod| pod.terminating()) {
            if let Some(deletion) = pod.pod.deletion_timestamp {
                pod.stuck = stuck_since(deletion, health, now, grace).is_some();
            }
        }
    }
}
