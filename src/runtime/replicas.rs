//! `--keep-last-ready`: the ready replicas of each workload, so that `run` never deletes the last one
//! (docs/run.md, "Keeping the last ready replica").
//!
//! A workload is a pod's controller (the `ownerReferences` entry with `controller: true`) in the
//! pod's namespace, told apart by its UID too. A replica is ready while it is not terminating and
//! its `Ready` condition is `True`, or its node is lost and its containers were ready when the node
//! lifecycle controller marked it not ready ([`PodReady::Marked`]): ready as its kubelet last said. The runtime says which deletions it has started or is holding
//! ([`Replicas::guard`]'s `taken`); the deletions it carried out are remembered here until the watch
//! shows their pods terminating or gone (a dry run's pods never go: they stay taken).
//!
//! Owns: the replicas by workload. Uses: the engine's model only.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use crate::engine::model::{NodeName, PodKey, PodRef, Uid};
use crate::engine::snapshot::{Owner, PodReady, SnapshotPod};

/// A workload: its namespace and its controller.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Workload {
    /// The namespace of its pods.
    pub namespace: Arc<str>,
    /// The controller its pods name.
    pub owner: Owner,
}

/// A pod of a workload.
#[derive(Debug)]
struct Replica {
    uid: Uid,
    workload: Workload,
    node: Option<NodeName>,
    /// `Ready=True` and not terminating.
    ready: bool,
    /// Marked not ready with its containers ready ([`PodReady::Marked`]), and not terminating: ready
    /// as its kubelet last said, while its node is lost.
    marked: bool,
}

impl Replica {
    /// Whether it counts as a ready replica, `lost` saying which nodes are lost.
    fn counts(&self, lost: &impl Fn(&NodeName) -> bool) -> bool {
        self.ready || (self.marked && self.node.as_ref().is_some_and(lost))
    }
}

/// What the guard says of a pod whose deletion is due.
#[derive(Debug, PartialEq, Eq)]
pub enum Guard<'a> {
    /// Not guarded: a bare pod, one that is not ready, or one not seen.
    Free,
    /// Another replica of its workload is ready, and stays: it may go.
    Spare(&'a PodKey),
    /// The last ready replica of its workload: its deletion is held. `only`: the workload has no
    /// other pod at all, so its controller makes no replacement while this one stays.
    Last {
        /// The workload.
        workload: &'a Workload,
        /// No other pod of the workload is known.
        only: bool,
    },
}

/// The pods of workloads, by key and by workload.
#[derive(Debug, Default)]
pub struct Replicas {
    pods: HashMap<PodKey, Replica>,
    workloads: HashMap<Workload, BTreeSet<PodKey>>,
    /// Deletions carried out whose pods the watch has not yet shown gone or replaced.
    carried: HashMap<PodKey, Uid>,
}

impl Replicas {
    /// The complete list of pods (the initial list, or a re-list).
    pub fn listed(&mut self, pods: &[SnapshotPod]) {
        self.pods.clear();
        self.workloads.clear();
        for pod in pods {
            self.applied(pod);
        }
        let seen = &self.pods;
        self.carried.retain(|key, uid| seen.get(key).is_some_and(|replica| replica.uid == *uid));
    }

    /// A pod was added or changed.
    pub fn applied(&mut self, pod: &SnapshotPod) {
        let key = &pod.pod.key;
        if self.carried.get(key).is_some_and(|uid| *uid != pod.pod.uid) {
            self.carried.remove(key);
        }
        let Some(owner) = &pod.owner else {
            self.deleted_replica(key);
            return;
        };
        let workload = Workload { namespace: Arc::clone(key.namespace_arc()), owner: owner.clone() };
        // Each watched pod comes with its own copy: the workload's pods share the first one kept.
        let workload = self.workloads.get_key_value(&workload).map_or(workload, |(known, _)| known.clone());
        let ready = pod.ready == PodReady::Yes && !pod.terminating;
        let marked = pod.ready == PodReady::Marked && !pod.terminating;
        let node = pod.pod.node.clone();
        let replica = Replica { uid: pod.pod.uid.clone(), workload, node, ready, marked };
        if let Some(before) = self.pods.get(key)
            && before.workload != replica.workload
        {
            self.deleted_replica(key);
        }
        self.workloads.entry(replica.workload.clone()).or_default().insert(key.clone());
        self.pods.insert(key.clone(), replica);
    }

    /// A pod was deleted.
    pub fn deleted(&mut self, key: &PodKey) {
        self.carried.remove(key);
        self.deleted_replica(key);
    }

    fn deleted_replica(&mut self, key: &PodKey) {
        let Some(replica) = self.pods.remove(key) else { return };
        if let Some(keys) = self.workloads.get_mut(&replica.workload) {
            keys.remove(key);
            if keys.is_empty() {
                self.workloads.remove(&replica.workload);
            }
        }
    }

    /// `run` deleted `pod` (or, in a dry run, would have): it counts as going until the watch shows
    /// it gone or replaced.
    pub fn carried_out(&mut self, pod: &PodRef) {
        self.carried.insert(pod.key.clone(), pod.uid.clone());
    }

    /// Whether `pod` may go now: `taken` says which pods `run` has a deletion of under way or held
    /// (those pods are going: they do not count as ready replicas), `lost` which nodes are lost
    /// (they carry the node lifecycle controller's NoExecute taint).
    pub fn guard(&self, pod: &PodRef, taken: impl Fn(&PodKey) -> bool, lost: impl Fn(&NodeName) -> bool) -> Guard<'_> {
        let Some(replica) = self.pods.get(&pod.key).filter(|r| r.uid == pod.uid && r.counts(&lost)) else {
            return Guard::Free;
        };
        let keys = self.workloads.get(&replica.workload);
        let others = keys.into_iter().flatten().filter(|key| **key != pod.key);
        let mut ready = others.filter(|key| {
            self.pods.get(*key).is_some_and(|other| other.counts(&lost) && self.carried.get(*key) != Some(&other.uid))
                && !taken(key)
        });
        match ready.next() {
            Some(spare) => Guard::Spare(spare),
            None => Guard::Last { workload: &replica.workload, only: keys.is_none_or(|keys| keys.len() <= 1) },
        }
    }
}

#[cfg(test)]
mod tests;
