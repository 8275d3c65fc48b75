//! `--keep-last-ready`: the ready replicas of each workload, so that `run` never deletes the last one
//! (docs/run.md, "Keeping the last ready replica").
//!
//! A workload is a pod's controller (the `ownerReferences` entry with `controller: true`) in the
//! pod's namespace, told apart by its UID too. A replica is ready while its `Ready` condition is
//! `True` and it is not terminating. The runtime says which deletions it has started or is holding
//! ([`Replicas::guard`]'s `taken`); the deletions it carried out are remembered here until the watch
//! shows their pods terminating or gone (a dry run's pods never go: they stay taken).
//!
//! Owns: the replicas by workload. Uses: the engine's model only.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use crate::engine::model::{PodKey, PodRef, Uid};
use crate::engine::snapshot::{Owner, SnapshotPod};

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
    /// `Ready=True` and not terminating.
    ready: bool,
}

/// What the guard says of a pod whose deletion is due.
#[derive(Debug, PartialEq, Eq)]
pub enum Guard<'a> {
    /// Not guarded: a bare pod, one that is not ready, or one not seen.
    Free,
    /// Another replica of its workload is ready, and stays: it may go.
    Spare(&'a PodKey),
    /// The last ready replica of its workload: its deletion is held.
    Last(&'a Workload),
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
        let ready = pod.ready && !pod.terminating;
        let replica = Replica { uid: pod.pod.uid.clone(), workload, ready };
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
    /// (those pods are going: they do not count as ready replicas).
    pub fn guard(&self, pod: &PodRef, taken: impl Fn(&PodKey) -> bool) -> Guard<'_> {
        let Some(replica) = self.pods.get(&pod.key).filter(|r| r.uid == pod.uid && r.ready) else {
            return Guard::Free;
        };
        let others = self.workloads.get(&replica.workload).into_iter().flatten().filter(|key| **key != pod.key);
        let mut ready = others.filter(|key| {
            self.pods.get(*key).is_some_and(|other| other.ready && self.carried.get(*key) != Some(&other.uid))
                && !taken(key)
        });
        match ready.next() {
            Some(spare) => Guard::Spare(spare),
            None => Guard::Last(&replica.workload),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::model::Pod;

    fn replica(name: &str, owner: Option<&Arc<Owner>>, ready: bool) -> SnapshotPod {
        SnapshotPod {
            pod: Pod {
                key: PodKey::new("default", name),
                uid: format!("uid-{name}").into(),
                node: Some("n1".into()),
                tolerations: Arc::default(),
            },
            bound_at: None,
            phase: "Running".into(),
            terminating: false,
            deletion_timestamp: None,
            ready,
            claims: None,
            owner: owner.cloned(),
        }
    }

    fn pod_ref(pod: &SnapshotPod) -> PodRef {
        PodRef { key: pod.pod.key.clone(), uid: pod.pod.uid.clone(), node: "n1".into() }
    }

    #[test]
    fn the_last_ready_replica_is_kept_and_a_spare_lets_it_go() {
        let web = Arc::new(Owner { kind: "ReplicaSet".into(), name: "web".into(), uid: "rs".into() });
        let (a, b) = (replica("a", Some(&web), true), replica("b", Some(&web), true));
        let mut replicas = Replicas::default();
        replicas.listed(&[a.clone(), b.clone(), replica("bare", None, true), replica("slow", Some(&web), false)]);
        let none = |_: &PodKey| false;
        assert_eq!(replicas.guard(&pod_ref(&a), none), Guard::Spare(&b.pod.key));
        // b's deletion under way: a is the last.
        assert!(matches!(replicas.guard(&pod_ref(&a), |k: &PodKey| *k == b.pod.key), Guard::Last(w) if w.owner == web));
        assert_eq!(replicas.guard(&pod_ref(&replica("bare", None, true)), none), Guard::Free);
        assert_eq!(replicas.guard(&pod_ref(&replica("slow", Some(&web), false)), none), Guard::Free);
        // b carried out: taken until the watch shows it terminating, gone or replaced.
        replicas.carried_out(&pod_ref(&b));
        assert!(matches!(replicas.guard(&pod_ref(&a), none), Guard::Last(_)));
        replicas.applied(&SnapshotPod { terminating: true, ..b.clone() });
        assert!(matches!(replicas.guard(&pod_ref(&a), none), Guard::Last(_)));
        let replacement = SnapshotPod { pod: Pod { uid: "uid-b2".into(), ..b.pod.clone() }, ..b.clone() };
        replicas.applied(&replacement);
        assert_eq!(replicas.guard(&pod_ref(&a), none), Guard::Spare(&b.pod.key), "a new b, ready");
        replicas.deleted(&b.pod.key);
        assert!(matches!(replicas.guard(&pod_ref(&a), none), Guard::Last(_)));
        // Another ReplicaSet of the same name (another UID) is another workload.
        let again = Arc::new(Owner { uid: "rs-2".into(), ..(*web).clone() });
        replicas.applied(&replica("c", Some(&again), true));
        assert!(matches!(replicas.guard(&pod_ref(&a), none), Guard::Last(_)));
    }
}
