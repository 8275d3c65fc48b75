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
    pub owner: Arc<Owner>,
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
        let workload = Workload { namespace: Arc::clone(key.namespace_arc()), owner: Arc::clone(owner) };
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
mod tests {
    use super::*;
    use crate::engine::model::Pod;

    fn replica(name: &str, owner: Option<&Arc<Owner>>, ready: bool) -> SnapshotPod {
        let ready = if ready { PodReady::Yes } else { PodReady::No };
        on("n1", name, owner, ready)
    }

    fn on(node: &str, name: &str, owner: Option<&Arc<Owner>>, ready: PodReady) -> SnapshotPod {
        SnapshotPod {
            pod: Pod {
                key: PodKey::new("default", name),
                uid: format!("uid-{name}").into(),
                node: Some(node.into()),
                tolerations: Arc::default(),
            },
            bound_at: None,
            phase: "Running".into(),
            terminating: false,
            deletion_timestamp: None,
            ready,
            claims: None,
            owner: owner.cloned(),
            tolerations_edited: None,
        }
    }

    fn pod_ref(pod: &SnapshotPod) -> PodRef {
        let node = pod.pod.node.clone().unwrap_or_else(|| "n1".into());
        PodRef { key: pod.pod.key.clone(), uid: pod.pod.uid.clone(), node }
    }

    /// No node is lost.
    fn healthy(_: &NodeName) -> bool {
        false
    }

    #[test]
    fn the_last_ready_replica_is_kept_and_a_spare_lets_it_go() {
        let web = Arc::new(Owner { kind: "ReplicaSet".into(), name: "web".into(), uid: "rs".into() });
        let (a, b) = (replica("a", Some(&web), true), replica("b", Some(&web), true));
        let mut replicas = Replicas::default();
        replicas.listed(&[a.clone(), b.clone(), replica("bare", None, true), replica("slow", Some(&web), false)]);
        let none = |_: &PodKey| false;
        assert_eq!(replicas.guard(&pod_ref(&a), none, healthy), Guard::Spare(&b.pod.key));
        // b's deletion under way: a is the last.
        assert!(
            matches!(replicas.guard(&pod_ref(&a), |k: &PodKey| *k == b.pod.key, healthy), Guard::Last { workload, only: false } if workload.owner == web)
        );
        assert_eq!(replicas.guard(&pod_ref(&replica("bare", None, true)), none, healthy), Guard::Free);
        assert_eq!(replicas.guard(&pod_ref(&replica("slow", Some(&web), false)), none, healthy), Guard::Free);
        // b carried out: taken until the watch shows it terminating, gone or replaced.
        replicas.carried_out(&pod_ref(&b));
        assert!(matches!(replicas.guard(&pod_ref(&a), none, healthy), Guard::Last { .. }));
        replicas.applied(&SnapshotPod { terminating: true, ..b.clone() });
        assert!(matches!(replicas.guard(&pod_ref(&a), none, healthy), Guard::Last { .. }));
        let replacement = SnapshotPod { pod: Pod { uid: "uid-b2".into(), ..b.pod.clone() }, ..b.clone() };
        replicas.applied(&replacement);
        assert_eq!(replicas.guard(&pod_ref(&a), none, healthy), Guard::Spare(&b.pod.key), "a new b, ready");
        replicas.deleted(&b.pod.key);
        assert!(matches!(replicas.guard(&pod_ref(&a), none, healthy), Guard::Last { .. }));
        // Another ReplicaSet of the same name (another UID) is another workload.
        let again = Arc::new(Owner { uid: "rs-2".into(), ..(*web).clone() });
        replicas.applied(&replica("c", Some(&again), true));
        assert!(matches!(replicas.guard(&pod_ref(&a), none, healthy), Guard::Last { .. }));
    }

    #[test]
    fn on_a_lost_node_a_replica_marked_not_ready_with_its_containers_ready_counts_as_ready() {
        // The node lifecycle controller lost n1: a and b, ready until then, are marked not ready; c,
        // not ready of its own before, is not counted; d on n2 (not lost) is marked by a readiness
        // gate, not counted.
        let web = Arc::new(Owner { kind: "ReplicaSet".into(), name: "web".into(), uid: "rs".into() });
        let (a, b) = (on("n1", "a", Some(&web), PodReady::Marked), on("n1", "b", Some(&web), PodReady::Marked));
        let (c, d) = (on("n1", "c", Some(&web), PodReady::No), on("n2", "d", Some(&web), PodReady::Marked));
        let mut replicas = Replicas::default();
        replicas.listed(&[a.clone(), b.clone(), c.clone(), d.clone()]);
        let lost = |node: &NodeName| node.as_str() == "n1";
        let none = |_: &PodKey| false;
        assert_eq!(replicas.guard(&pod_ref(&a), none, lost), Guard::Spare(&b.pod.key));
        let b_taken = |k: &PodKey| *k == b.pod.key;
        assert!(matches!(replicas.guard(&pod_ref(&a), b_taken, lost), Guard::Last { only: false, .. }));
        assert_eq!(replicas.guard(&pod_ref(&c), none, lost), Guard::Free, "not ready before its node was lost");
        assert_eq!(replicas.guard(&pod_ref(&d), none, lost), Guard::Free, "its node is not lost");
        // Nothing lost: marked pods are not ready.
        assert_eq!(replicas.guard(&pod_ref(&a), none, healthy), Guard::Free);
        // A workload of one pod: the only one.
        let solo = Arc::new(Owner { kind: "StatefulSet".into(), name: "db".into(), uid: "ss".into() });
        let db = on("n1", "db-0", Some(&solo), PodReady::Marked);
        replicas.applied(&db);
        assert!(matches!(replicas.guard(&pod_ref(&db), none, lost), Guard::Last { only: true, .. }));
    }
}

#[cfg(test)]
// The loop's tests on tokio's paused clock measure its time directly.
#[allow(clippy::disallowed_methods)]
mod in_the_loop;
