//! The nodes and pods `run` keeps while it follows the watches, and hands to each term's replay.

use std::collections::HashMap;

use super::changes::{NodeChange, PodChange};
use super::terminating::Terminating;
use crate::engine::Engine;
use crate::engine::model::{NodeName, PodKey};
use crate::engine::snapshot::{Snapshot, SnapshotNode, SnapshotPod};
use crate::engine::time::Timestamp;

/// The current nodes and pods, as the watches report them.
///
/// With an election, the lists outlive a term as leader, but the pods are held once: during a term
/// the engine holds them, and only their binding times (the one field the engine does not keep, and
/// the replay of the next term needs) are kept here; the lists are read back from the engine when
/// the term ends.
#[derive(Default)]
pub(super) struct Lists {
    nodes: Option<HashMap<NodeName, SnapshotNode>>,
    pods: Option<HashMap<PodKey, SnapshotPod>>,
    /// While a term runs with an election: each pod's binding time.
    bound: HashMap<PodKey, Timestamp>,
}

impl Lists {
    pub(super) fn complete(&self) -> bool {
        self.nodes.is_some() && self.pods.is_some()
    }

    /// The names of the nodes listed.
    pub(super) fn node_names(&self) -> impl Iterator<Item = &NodeName> {
        self.nodes.iter().flat_map(HashMap::keys)
    }

    pub(super) fn pod_count(&self) -> usize {
        self.pods.as_ref().map_or(0, HashMap::len)
    }

    pub(super) fn node(&mut self, change: NodeChange) {
        match (change, self.nodes.as_mut()) {
            (NodeChange::Listed(nodes), _) => {
                self.nodes = Some(nodes.into_iter().map(|node| (node.name.clone(), node)).collect());
            }
            (NodeChange::Applied(node), Some(nodes)) => {
                nodes.insert(node.name.clone(), node);
            }
            (NodeChange::Deleted(name) | NodeChange::Left(name), Some(nodes)) => {
                nodes.remove(&name);
            }
            (NodeChange::Interrupted, _) | (_, None) => {}
        }
    }

    pub(super) fn pod(&mut self, change: PodChange) {
        match (change, self.pods.as_mut()) {
            (PodChange::Listed(pods), _) => {
                self.pods = Some(pods.into_iter().map(|pod| (pod.pod.key.clone(), pod)).collect());
            }
            (PodChange::Applied(pod), Some(pods)) => {
                pods.insert(pod.pod.key.clone(), pod);
            }
            (PodChange::Deleted(key), Some(pods)) => {
                pods.remove(&key);
            }
            (PodChange::Interrupted | PodChange::Resumed, _) | (_, None) => {}
        }
    }

    /// Follows a pod change during a term: only the binding times.
    pub(super) fn bound(&mut self, change: &PodChange) {
        match change {
            PodChange::Listed(pods) => {
                self.bound = pods.iter().filter_map(|p| Some((p.pod.key.clone(), p.bound_at?))).collect();
            }
            PodChange::Applied(SnapshotPod { pod, bound_at: Some(at), .. }) => {
                self.bound.insert(pod.key.clone(), *at);
            }
            PodChange::Applied(SnapshotPod { pod, .. }) => {
                self.bound.remove(&pod.key);
            }
            PodChange::Deleted(key) => {
                self.bound.remove(key);
            }
            PodChange::Interrupted | PodChange::Resumed => {}
        }
    }

    /// The lists as a snapshot, in a stable order. The pods are handed over; with `keep`, the
    /// nodes stay (for the next term) and the pods' binding times are kept.
    pub(super) fn snapshot(&mut self, keep: bool, controller_acquired: Option<Timestamp>) -> Snapshot {
        let mut nodes: Vec<SnapshotNode> = if keep {
            self.nodes.iter().flat_map(HashMap::values).cloned().collect()
        } else {
            self.nodes.take().into_iter().flat_map(HashMap::into_values).collect()
        };
        let mut pods: Vec<SnapshotPod> = self.pods.take().into_iter().flat_map(HashMap::into_values).collect();
        if keep {
            self.bound = pods.iter().filter_map(|p| Some((p.pod.key.clone(), p.bound_at?))).collect();
        }
        nodes.sort_unstable_by(|a, b| a.name.cmp(&b.name));
        pods.sort_unstable_by(|a, b| a.pod.key.cmp(&b.pod.key));
        Snapshot { nodes, pods, controller_acquired, taken: None, workloads: Default::default() }
    }
}

impl Lists {
    /// The lists as a snapshot, copied: they stay.
    pub(super) fn copy(&self, controller_acquired: Option<Timestamp>) -> Snapshot {
        let mut nodes: Vec<SnapshotNode> = self.nodes.iter().flat_map(HashMap::values).cloned().collect();
        let mut pods: Vec<SnapshotPod> = self.pods.iter().flat_map(HashMap::values).cloned().collect();
        nodes.sort_unstable_by(|a, b| a.name.cmp(&b.name));
        pods.sort_unstable_by(|a, b| a.pod.key.cmp(&b.pod.key));
        Snapshot { nodes, pods, controller_acquired, taken: None, workloads: Default::default() }
    }

    /// Takes the pods back from a term's engine, with the binding times kept beside it.
    pub(super) fn take_back(&mut self, engine: &Engine, terminating: &Terminating) {
        let bound = std::mem::take(&mut self.bound);
        let pods = engine
            .pods()
            .map(|pod| {
                let terminating = terminating.holds(&pod.key, &pod.uid);
                let bound_at = bound.get(&pod.key).copied();
                let pod = SnapshotPod {
                    pod,
                    bound_at,
                    phase: "".into(),
                    terminating,
                    deletion_timestamp: None,
                    ready: crate::engine::snapshot::PodReady::No,
                    claims: None,
                    owner: None,
                    tolerations_edited: None,
                };
                (pod.pod.key.clone(), pod)
            })
            .collect();
        self.pods = Some(pods);
    }
}
