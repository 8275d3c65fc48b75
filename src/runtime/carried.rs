//! The countdowns a replay cannot see, carried to the next `run` on its Lease (docs/run.md, "What a
//! takeover and a restart know"): when a node's taint goes or is rewritten while countdowns run there,
//! or a pod's tolerations are edited while its countdown runs, upstream keeps the countdown, which
//! the node's and pod's state no longer give. [`Carried`] keeps those, hands them to the ledger (the
//! Lease writes them) and, in a `run` started afresh, puts them in place of the replay's while the
//! node's taints are as they were written.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use super::changes::{NodeChange, PodChange};
use super::ledger::{Countdown, Ledger, taints_print};
use crate::engine::Engine;
use crate::engine::model::{Node, NodeName, Pod, PodKey, Taint, Toleration};
use crate::engine::queue::{Cause, EntryState, Work};
use crate::engine::snapshot::{Snapshot, SnapshotPod};

/// At most this many countdowns go on the Lease (about 180 bytes each; a Lease's annotations may
/// take 256 KiB): those firing first. The others a restart takes from the replay.
const KEPT_AT_MOST: usize = 500;

/// The countdowns carried, by pod.
#[derive(Debug, Default)]
pub(super) struct Carried {
    kept: BTreeMap<PodKey, Countdown>,
    ledger: Ledger,
}

impl Carried {
    /// Carried in `ledger`.
    pub(super) fn new(ledger: Ledger) -> Self {
        Self { kept: BTreeMap::new(), ledger }
    }

    /// The replay's `work`, with the countdowns the ledger carries in place of its own where the
    /// pod's node carries the taints it carried then; those are kept on, the others forgotten.
    pub(super) fn continued(
        &mut self,
        mut work: Vec<(PodKey, Work)>,
        snapshot: &Snapshot,
        nodes: &[Node],
    ) -> Vec<(PodKey, Work)> {
        let recorded: HashMap<PodKey, Countdown> =
            self.ledger.countdowns().into_iter().map(|countdown| (countdown.pod.clone(), countdown)).collect();
        self.kept.clear();
        if recorded.is_empty() {
            return work;
        }
        let prints: HashMap<&NodeName, u64> =
            nodes.iter().map(|node| (&node.name, taints_print(&node.taints))).collect();
        let on: HashMap<&PodKey, &NodeName> =
            snapshot.pods.iter().filter_map(|pod| Some((&pod.pod.key, pod.pod.node.as_ref()?))).collect();
        for (key, work) in &mut work {
            let Some(countdown) = recorded.get(key) else { continue };
            let same = on.get(key) == Some(&&countdown.node) && prints.get(&countdown.node) == Some(&countdown.taints);
            if same && matches!(work.cause, Cause::Expired { .. }) {
                *work = countdown.work;
                self.kept.insert(key.clone(), countdown.clone());
            }
        }
        work
    }

    /// A node's NoExecute taints changed from `before` (`engine` has taken the change): when one
    /// went or was rewritten, the countdowns left running there are kept; a node with countdowns
    /// kept has them kept again under its new taints.
    pub(super) fn taints_changed(&mut self, engine: &Engine, node: &NodeName, before: &[Taint]) {
        let after = engine.taints(node);
        let went = before.iter().any(|taint| !after.contains(taint));
        if !went && !self.kept.values().any(|countdown| countdown.node == *node) {
            return;
        }
        let print = taints_print(after);
        self.kept.retain(|_, countdown| countdown.node != *node);
        let armed = engine.pending().filter(|(pod, entry)| pod.node == *node && entry.state == EntryState::Armed);
        for (pod, entry) in armed {
            let countdown = Countdown { pod: pod.key.clone(), node: node.clone(), taints: print, work: entry.work };
            self.kept.insert(pod.key, countdown);
        }
        self.hand_over();
    }

    /// A pod's tolerations changed from `before` (`engine` has taken the change): when a countdown
    /// runs after it (one kept, or one the edit began: the replay would start it with the taint), it
    /// is kept.
    pub(super) fn tolerations_changed(&mut self, engine: &Engine, pod: &Pod, before: &[Toleration]) {
        let (Some(node), Some(after)) = (&pod.node, engine.tolerations(&pod.key)) else { return };
        let Some(entry) = engine.work(&pod.key).filter(|entry| entry.state == EntryState::Armed) else { return };
        if **after == *before {
            return;
        }
        let taints = taints_print(engine.taints(node));
        let countdown = Countdown { pod: pod.key.clone(), node: node.clone(), taints, work: entry.work };
        self.kept.insert(pod.key.clone(), countdown);
        self.hand_over();
    }

    /// The countdown of `pod` ended (it fired or was cancelled): no longer carried.
    pub(super) fn ended(&mut self, pod: &PodKey) {
        if self.kept.remove(pod).is_some() {
            self.hand_over();
        }
    }

    /// The nodes a change writes (one, or a re-list's) and their NoExecute taints before it.
    pub(super) fn taints_before<'a>(engine: &Engine, change: &'a NodeChange) -> Vec<(&'a NodeName, Vec<Taint>)> {
        let nodes = match change {
            NodeChange::Applied(node) => std::slice::from_ref(node),
            NodeChange::Listed(nodes) => nodes.as_slice(),
            _ => &[],
        };
        nodes.iter().map(|node| (&node.name, engine.taints(&node.name).to_vec())).collect()
    }

    /// The pods a change writes (one, or a re-list's) that the engine knows with other tolerations,
    /// and those it knows: a re-list shows the edits a watch gap hid.
    pub(super) fn tolerations_before<'a>(engine: &Engine, change: &'a PodChange) -> Vec<(&'a Pod, Arc<[Toleration]>)> {
        let pods = match change {
            PodChange::Applied(pod) => std::slice::from_ref(pod),
            PodChange::Listed(pods) => pods.as_slice(),
            _ => &[],
        };
        let edited = |pod: &'a SnapshotPod| {
            let before = engine.tolerations(&pod.pod.key)?;
            (**before != *pod.pod.tolerations).then(|| (&pod.pod, before.clone()))
        };
        pods.iter().filter_map(edited).collect()
    }

    /// Hands the countdowns kept to the ledger, those firing first when there are too many.
    pub(super) fn hand_over(&self) {
        let mut countdowns: Vec<Countdown> = self.kept.values().cloned().collect();
        if countdowns.len() > KEPT_AT_MOST {
            countdowns.sort_by_key(|countdown| countdown.work.fire);
            countdowns.truncate(KEPT_AT_MOST);
        }
        self.ledger.keep_countdowns(countdowns);
    }
}

#[cfg(test)]
mod tests;
