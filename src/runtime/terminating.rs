//! The pods whose deletion is already under way (`metadata.deletionTimestamp` set): their work is
//! done without another DELETE.

use std::collections::HashMap;

use super::changes::PodChange;
use crate::engine::model::{PodKey, PodRef, Uid};
use crate::engine::start;

/// The pods whose deletion is already under way, by key, with the UID that is terminating (the
/// engine's set, as `plan -w` keeps it); and those this `run` deleted, until the watch shows them gone.
pub(super) struct Terminating {
    terminating: start::Terminating,
    ours: HashMap<PodKey, Uid>,
}

impl Default for Terminating {
    fn default() -> Self {
        Self { terminating: start::Terminating::with_hash_key(crate::host::hash_key()), ours: HashMap::new() }
    }
}

impl Terminating {
    pub(super) fn track(&mut self, change: &PodChange) {
        match change {
            PodChange::Listed(pods) => {
                self.terminating.listed(pods);
                let listed: HashMap<&PodKey, &Uid> = pods.iter().map(|p| (&p.pod.key, &p.pod.uid)).collect();
                self.ours.retain(|key, uid| listed.get(key) == Some(&&*uid));
            }
            PodChange::Applied(pod) => {
                self.terminating.applied(pod);
                if !pod.terminating && self.ours.get(&pod.pod.key).is_some_and(|uid| *uid != pod.pod.uid) {
                    self.ours.remove(&pod.pod.key);
                }
            }
            PodChange::Deleted(key) => {
                self.terminating.deleted(key);
                self.ours.remove(key);
            }
            PodChange::Interrupted | PodChange::Resumed => {}
        }
    }

    /// `pod` was deleted by this `run`: a later decision on it (a taint change while it terminates)
    /// is carried out silently, not said as a new countdown or as a pod gone.
    pub(super) fn deleted(&mut self, pod: &PodRef) {
        self.ours.insert(pod.key.clone(), pod.uid.clone());
    }

    /// Whether this `run` deleted `pod`, and the watch has not shown it gone yet.
    pub(super) fn ours(&self, pod: &PodRef) -> bool {
        self.ours.get(&pod.key) == Some(&pod.uid)
    }

    pub(super) fn contains(&self, pod: &PodRef) -> bool {
        self.terminating.contains(pod)
    }

    /// Whether the pod `key` is terminating with this `uid`.
    pub(super) fn holds(&self, key: &PodKey, uid: &Uid) -> bool {
        self.terminating.holds(key, uid)
    }
}
