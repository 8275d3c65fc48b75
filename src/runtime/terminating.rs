//! The pods whose deletion is already under way (`metadata.deletionTimestamp` set): their work is
//! done without another DELETE.

use std::collections::HashMap;

use super::changes::PodChange;
use crate::engine::model::{PodKey, PodRef, Uid};
use crate::engine::snapshot::SnapshotPod;

/// The pods whose deletion is already under way, by key, with the UID that is terminating; and those
/// this `run` deleted, until the watch shows them gone.
#[derive(Debug, Default)]
pub(super) struct Terminating {
    terminating: HashMap<PodKey, Uid>,
    ours: HashMap<PodKey, Uid>,
}

impl Terminating {
    pub(super) fn track(&mut self, change: &PodChange) {
        match change {
            PodChange::Listed(pods) => {
                self.terminating =
                    pods.iter().filter(|p| p.terminating).map(|p| (p.pod.key.clone(), p.pod.uid.clone())).collect();
                let listed: HashMap<&PodKey, &Uid> = pods.iter().map(|p| (&p.pod.key, &p.pod.uid)).collect();
                self.ours.retain(|key, uid| listed.get(key) == Some(&&*uid));
            }
            PodChange::Applied(pod) if pod.terminating => {
                self.terminating.insert(pod.pod.key.clone(), pod.pod.uid.clone());
            }
            PodChange::Applied(SnapshotPod { pod, .. }) => {
                self.terminating.remove(&pod.key);
                if self.ours.get(&pod.key).is_some_and(|uid| *uid != pod.uid) {
                    self.ours.remove(&pod.key);
                }
            }
            PodChange::Deleted(key) => {
                self.terminating.remove(key);
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
        self.holds(&pod.key, &pod.uid)
    }

    /// Whether the pod `key` is terminating with this `uid`.
    pub(super) fn holds(&self, key: &PodKey, uid: &Uid) -> bool {
        self.terminating.get(key) == Some(uid)
    }
}
