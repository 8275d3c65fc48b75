//! The nodes and pods `run` keeps while it follows the watches, and hands to each term's replay.

use std::collections::HashMap;

use super::changes::{NodeChange, PodChange};
use super::terminating::Terminating;
use crate::engine::Engine;
use crate::engine::model::{NodeName, PodKey};
use crate::engine::snapshot::{Snapshot, SnapshotPod};
use crate::engine::start;
use crate::engine::time::Timestamp;

/// The current nodes and pods, as the watches report them: the engine's first lists
/// ([`start::Lists`], as `plan -w` gathers them), kept between terms.
///
/// With an election, the lists outlive a term as leader, but the pods are held once: during a term
/// the engine holds them, and only their binding times (the one field the engine does not keep, and
/// the replay of the next term needs) are kept here; the lists are read back from the engine when
/// the term ends.
#[derive(Default)]
pub(super) struct Lists {
    lists: start::Lists,
    /// While a term runs with an election: each pod's binding time.
    bound: HashMap<PodKey, Timestamp>,
}

impl Lists {
    pub(super) fn complete(&self) -> bool {
        self.lists.complete()
    }

    /// The names of the nodes listed.
    pub(super) fn node_names(&self) -> impl Iterator<Item = &NodeName> {
        self.lists.node_names()
    }

    pub(super) fn pod_count(&self) -> usize {
        self.lists.pod_count()
    }

    pub(super) fn node(&mut self, change: NodeChange) {
        match change {
            NodeChange::Listed(nodes) => self.lists.nodes_listed(nodes),
            NodeChange::Applied(node) => self.lists.node_applied(node),
            NodeChange::Deleted(name) | NodeChange::Left(name) => self.lists.node_gone(&name),
            NodeChange::Interrupted => {}
        }
    }

    pub(super) fn pod(&mut self, change: PodChange) {
        match change {
            PodChange::Listed(pods) => self.lists.pods_listed(pods),
            PodChange::Applied(pod) => self.lists.pod_applied(pod),
            PodChange::Deleted(key) => self.lists.pod_deleted(&key),
            PodChange::Interrupted | PodChange::Resumed => {}
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
        let snapshot = self.lists.snapshot(keep, controller_acquired);
        if keep {
            self.bound = snapshot.pods.iter().filter_map(|p| Some((p.pod.key.clone(), p.bound_at?))).collect();
        }
        snapshot
    }

    /// The lists as a snapshot, copied: they stay.
    pub(super) fn copy(&self, controller_acquired: Option<Timestamp>) -> Snapshot {
        self.lists.copy(controller_acquired)
    }

    /// Takes the pods back from a term's engine, with the binding times kept beside it.
    pub(super) fn take_back(&mut self, engine: &Engine, terminating: &Terminating) {
        let bound = std::mem::take(&mut self.bound);
        let pods = engine
            .pods()
            .map(|pod| SnapshotPod {
                terminating: terminating.holds(&pod.key, &pod.uid),
                bound_at: bound.get(&pod.key).copied(),
                pod,
                phase: "".into(),
                deletion_timestamp: None,
                ready: crate::engine::snapshot::PodReady::No,
                claims: None,
                owner: None,
                tolerations_edited: None,
            })
            .collect();
        self.lists.pods_listed(pods);
    }
}
