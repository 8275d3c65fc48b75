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
mod tests {
    use super::*;
    use crate::engine::Input;
    use crate::engine::model::{Effect, Uid};
    use crate::engine::time::Timestamp;

    fn t(seconds: i64) -> Timestamp {
        Timestamp::from_unix_seconds(1_000 + seconds)
    }

    fn taint(key: &str, at: i64) -> Taint {
        Taint { key: key.into(), value: "".into(), effect: Effect::NoExecute, time_added: Some(t(at)) }
    }

    fn node(taints: &[Taint]) -> Node {
        Node { name: "n1".into(), taints: taints.to_vec().into() }
    }

    fn pod() -> Pod {
        let tolerate = |key: &str, seconds: i64| Toleration {
            key: key.into(),
            operator: crate::engine::model::Operator::Exists,
            value: "".into(),
            effect: Some(Effect::NoExecute),
            seconds: Some(seconds),
        };
        Pod {
            key: PodKey::new("default", "e3"),
            uid: Uid::from("u"),
            node: Some("n1".into()),
            tolerations: vec![tolerate("a", 20), tolerate("b", 120)].into(),
        }
    }

    #[test]
    fn a_countdown_a_removed_taint_left_is_carried_until_it_ends() {
        let ledger = Ledger::default();
        let mut carried = Carried::new(ledger.clone());
        let mut engine = Engine::new();
        engine.handle(Input::NodesReplaced(vec![node(&[taint("a", 0), taint("b", 0)])]), t(0));
        engine.handle(Input::PodsReplaced(vec![pod()]), t(0));
        let before = engine.taints(&"n1".into()).to_vec();
        engine.handle(Input::NodeUpserted(node(&[taint("b", 0)])), t(3));
        carried.taints_changed(&engine, &"n1".into(), &before);
        let kept = ledger.countdowns();
        assert_eq!(kept.iter().map(|c| (c.pod.name(), c.work.fire)).collect::<Vec<_>>(), [("e3", t(20))]);
        // An added taint alone carries nothing new.
        let mut fresh = Carried::new(Ledger::default());
        let before = engine.taints(&"n1".into()).to_vec();
        engine.handle(Input::NodeUpserted(node(&[taint("b", 0), taint("c", 5)])), t(5));
        fresh.taints_changed(&engine, &"n1".into(), &before);
        assert!(fresh.kept.is_empty());
        carried.ended(&PodKey::new("default", "e3"));
        assert!(ledger.countdowns().is_empty());
    }
}

#[cfg(test)]
// The loop's tests on tokio's paused clock measure its time directly.
#[allow(clippy::disallowed_methods)]
mod in_the_loop;
