//! The pods whose deletion is already under way (`metadata.deletionTimestamp` set): their work is
//! done without another DELETE.

use std::collections::HashMap;

use super::changes::PodChange;
use crate::engine::model::{PodKey, PodRef, Uid};
use crate::engine::snapshot::SnapshotPod;

/// The pods whose deletion is already under way, by key, with the UID that is terminating.
#[derive(Debug, Default)]
pub(super) struct Terminating(HashMap<PodKey, Uid>);

impl Terminating {
    pub(super) fn track(&mut self, change: &PodChange) {
        match change {
            PodChange::Listed(pods) => {
                self.0 =
                    pods.iter().filter(|p| p.terminating).map(|p| (p.pod.key.clone(), p.pod.uid.clone())).collect();
            }
            PodChange::Applied(pod) if pod.terminating => {
                self.0.insert(pod.pod.key.clone(), pod.pod.uid.clone());
            }
            PodChange::Applied(SnapshotPod { pod, .. }) => {
                self.0.remove(&pod.key);
            }
            PodChange::Deleted(key) => {
                self.0.remove(key);
            }
            PodChange::Interrupted | PodChange::Resumed => {}
        }
    }

    pub(super) fn contains(&self, pod: &PodRef) -> bool {
        self.holds(&pod.key, &pod.uid)
    }

    /// Whether the pod `key` is terminating with this `uid`.
    pub(super) fn holds(&self, key: &PodKey, uid: &Uid) -> bool {
        self.0.get(key) == Some(uid)
    }
}
