//! The one start-up path of a live engine, shared by `run` and `plan -w` (docs/run.md, its start):
//! the first lists gathered ([`Lists`]), the pods already terminating ([`Terminating`]), and the
//! engine seeded from the lists ([`Seeding`]): the replay's deadlines continue, overdue work fires at
//! once, a swapped taint's and an edited pod's first countdowns are kept; or, when asked, every
//! countdown restarts.
//!
//! What differs between the two is a parameter: `run` may restart the countdowns, and continues the
//! countdowns its Lease carries (a step it passes in); `plan -w` does neither.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use super::hash::{HashKey, Keyed};
use super::model::{Node, NodeName, PodKey, PodRef, Uid};
use super::queue::Work;
use super::replay::{Host, replay_with};
use super::snapshot::{Snapshot, SnapshotNode, SnapshotPod, TolerationsWritten, Workloads};
use super::time::Timestamp;
use super::{Engine, Input};

/// A node as the engine holds it: its name and its `NoExecute` taints.
#[must_use]
pub fn engine_node(node: &SnapshotNode) -> Node {
    Node { name: node.name.clone(), taints: node.taints.clone() }
}

/// The current nodes and pods, as the watches report them: each list is `None` until its first
/// list is in, and a change to a list not yet in is dropped (the list brings it).
#[derive(Default)]
pub struct Lists {
    nodes: Option<BTreeMap<NodeName, SnapshotNode>>,
    pods: Option<BTreeMap<PodKey, SnapshotPod>>,
}

impl Lists {
    /// Whether both lists are in.
    #[must_use]
    pub fn complete(&self) -> bool {
        self.nodes.is_some() && self.pods.is_some()
    }

    /// The names of the nodes listed, in order.
    pub fn node_names(&self) -> impl Iterator<Item = &NodeName> {
        self.nodes.iter().flat_map(BTreeMap::keys)
    }

    /// How many pods are listed.
    #[must_use]
    pub fn pod_count(&self) -> usize {
        self.pods.as_ref().map_or(0, BTreeMap::len)
    }

    /// The complete node list (the first, or a re-list).
    pub fn nodes_listed(&mut self, nodes: Vec<SnapshotNode>) {
        self.nodes = Some(nodes.into_iter().map(|node| (node.name.clone(), node)).collect());
    }

    /// A node added or changed.
    pub fn node_applied(&mut self, node: SnapshotNode) {
        if let Some(nodes) = &mut self.nodes {
            nodes.insert(node.name.clone(), node);
        }
    }

    /// A node deleted, or no longer followed.
    pub fn node_gone(&mut self, name: &NodeName) {
        if let Some(nodes) = &mut self.nodes {
            nodes.remove(name);
        }
    }

    /// The complete pod list (the first, or a re-list).
    pub fn pods_listed(&mut self, pods: Vec<SnapshotPod>) {
        self.pods = Some(pods.into_iter().map(|pod| (pod.pod.key.clone(), pod)).collect());
    }

    /// A pod added or changed.
    pub fn pod_applied(&mut self, pod: SnapshotPod) {
        if let Some(pods) = &mut self.pods {
            pods.insert(pod.pod.key.clone(), pod);
        }
    }

    /// A pod deleted.
    pub fn pod_deleted(&mut self, key: &PodKey) {
        if let Some(pods) = &mut self.pods {
            pods.remove(key);
        }
    }

    /// The lists as a snapshot, in order. The pods are handed over (the list is no longer in); with
    /// `keep_nodes` the nodes stay, else they are handed over too.
    pub fn snapshot(&mut self, keep_nodes: bool, controller_acquired: Option<Timestamp>) -> Snapshot {
        let nodes = if keep_nodes {
            self.nodes.iter().flat_map(BTreeMap::values).cloned().collect()
        } else {
            self.nodes.take().into_iter().flat_map(BTreeMap::into_values).collect()
        };
        let pods = self.pods.take().into_iter().flat_map(BTreeMap::into_values).collect();
        Snapshot { nodes, pods, controller_acquired, taken: None, workloads: Workloads::default() }
    }

    /// The lists as a snapshot, in order, copied: they stay.
    #[must_use]
    pub fn copy(&self, controller_acquired: Option<Timestamp>) -> Snapshot {
        let nodes = self.nodes.iter().flat_map(BTreeMap::values).cloned().collect();
        let pods = self.pods.iter().flat_map(BTreeMap::values).cloned().collect();
        Snapshot { nodes, pods, controller_acquired, taken: None, workloads: Workloads::default() }
    }
}

/// The pods whose deletion is already under way (`metadata.deletionTimestamp` set), by key, with the
/// UID terminating: their work is done without another deletion.
pub struct Terminating(HashMap<PodKey, Uid, Keyed>);

impl Default for Terminating {
    fn default() -> Self {
        Self::with_hash_key(HashKey::default())
    }
}

impl Terminating {
    /// An empty set, its table keyed by `key` (see [`crate::hash`]).
    #[must_use]
    pub fn with_hash_key(key: HashKey) -> Self {
        Self(HashMap::with_hasher(Keyed::new(key)))
    }

    /// The complete pod list (the first, or a re-list): the terminating ones replace those held.
    pub fn listed(&mut self, pods: &[SnapshotPod]) {
        self.0.clear();
        self.0.extend(pods.iter().filter(|p| p.terminating).map(|p| (p.pod.key.clone(), p.pod.uid.clone())));
    }

    /// A pod added or changed: held while it terminates.
    pub fn applied(&mut self, pod: &SnapshotPod) {
        if pod.terminating {
            self.0.insert(pod.pod.key.clone(), pod.pod.uid.clone());
        } else {
            self.0.remove(&pod.pod.key);
        }
    }

    /// A pod deleted.
    pub fn deleted(&mut self, key: &PodKey) {
        self.0.remove(key);
    }

    /// Whether `pod` is terminating (with its UID).
    #[must_use]
    pub fn contains(&self, pod: &PodRef) -> bool {
        self.holds(&pod.key, &pod.uid)
    }

    /// Whether the pod `key` is terminating with this `uid`.
    #[must_use]
    pub fn holds(&self, key: &PodKey, uid: &Uid) -> bool {
        self.0.get(key) == Some(uid)
    }
}

/// How an engine is seeded from the first lists: what the start-up replay keeps besides its own
/// reconstruction, taken by the first seeding (a later one would read spells that may have ended).
#[derive(Default)]
pub struct Seeding {
    /// Every countdown restarted at the seeding, not continued from the replay.
    pub restart_countdowns: bool,
    /// When nodes last became not ready, as their Events said at start: the replay keeps a swapped
    /// taint's first countdown ([`crate::plan::mark_swapped`]).
    pub not_ready: BTreeMap<NodeName, Timestamp>,
    /// The node lifecycle controller's monitor period, for the same.
    pub monitor_period: Duration,
    /// Pods whose tolerations were written after their creation, with their controllers'
    /// templates: the replay keeps an edited pod's first countdown when its template recovers it
    /// ([`crate::plan::mark_edited`]).
    pub edited: BTreeMap<PodKey, TolerationsWritten>,
}

impl Seeding {
    /// Seeds `engine`, which has had no input, from `snapshot` at `now`: its nodes and pods, and
    /// the replay's work (its parts run by `host`) passed through `continued` with the engine's
    /// nodes (the identity where nothing else is known of the countdowns); or, restarting the
    /// countdowns, the nodes and pods alone. The engine's first decisions wait in it.
    pub fn seed(
        &mut self,
        engine: &mut Engine,
        snapshot: &Snapshot,
        now: Timestamp,
        host: Host<'_>,
        continued: impl FnOnce(Vec<(PodKey, Work)>, &[Node]) -> Vec<(PodKey, Work)>,
    ) {
        let nodes: Vec<Node> = snapshot.nodes.iter().map(engine_node).collect();
        let pods = snapshot.pods.iter().map(|p| p.pod.clone()).collect();
        if self.restart_countdowns {
            engine.handle(Input::NodesReplaced(nodes), now);
            engine.handle(Input::PodsReplaced(pods), now);
            return;
        }
        let selected: Vec<usize> = (0..snapshot.nodes.len()).collect();
        let mut plan = replay_with(snapshot, &selected, &[], now, host);
        crate::plan::mark_swapped(&mut plan, snapshot, &std::mem::take(&mut self.not_ready), self.monitor_period);
        crate::plan::mark_edited(&mut plan, &std::mem::take(&mut self.edited));
        let work = continued(plan.work(), &nodes);
        engine.handle(Input::Seeded { nodes, pods, work }, now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Action;

    fn t(seconds: i64) -> Timestamp {
        Timestamp::from_unix_seconds(seconds)
    }

    fn node(name: &str) -> SnapshotNode {
        crate::observe::tests::node(name, Some(0))
    }

    fn pod(name: &str, seconds: i64, terminating: bool) -> SnapshotPod {
        crate::observe::tests::pod(name, Some(seconds), terminating)
    }

    fn fires(engine: &Engine) -> Vec<(String, Timestamp)> {
        let mut fires: Vec<_> =
            engine.pending().map(|(pod, entry)| (pod.key.name().to_owned(), entry.work.fire)).collect();
        fires.sort();
        fires
    }

    #[test]
    fn changes_before_a_list_are_dropped_and_the_snapshot_is_in_order() {
        let mut lists = Lists::default();
        lists.pod_applied(pod("early", 60, false));
        lists.node_applied(node("n0"));
        assert!(!lists.complete());
        lists.nodes_listed(vec![node("n2"), node("n1")]);
        lists.pods_listed(vec![pod("b", 60, false), pod("a", 60, false)]);
        lists.pod_applied(pod("c", 60, false));
        lists.pod_deleted(&PodKey::new("web", "b"));
        lists.node_gone(&"n2".into());
        assert!(lists.complete());
        let copy = lists.copy(None);
        let snapshot = lists.snapshot(true, None);
        let names = |s: &Snapshot| s.pods.iter().map(|p| p.pod.key.name().to_owned()).collect::<Vec<_>>();
        assert_eq!(names(&snapshot), ["a", "c"]);
        assert_eq!(names(&copy), names(&snapshot));
        assert_eq!(lists.node_names().collect::<Vec<_>>(), [&NodeName::from("n1")], "the nodes stay");
        assert!(!lists.complete(), "the pods are handed over");
    }

    #[test]
    fn a_terminating_pod_is_held_with_its_uid() {
        let mut terminating = Terminating::default();
        terminating.listed(&[pod("a", 60, true), pod("b", 60, false)]);
        let a = pod("a", 60, true).pod;
        assert!(terminating.holds(&a.key, &a.uid));
        assert!(!terminating.holds(&a.key, &"another".into()));
        terminating.applied(&pod("b", 60, true));
        terminating.applied(&pod("a", 60, false));
        let b = pod("b", 60, true).pod;
        assert!(!terminating.holds(&a.key, &a.uid) && terminating.holds(&b.key, &b.uid));
        terminating.deleted(&b.key);
        assert!(!terminating.holds(&b.key, &b.uid));
    }

    #[test]
    fn seeding_continues_the_replay_or_restarts_every_countdown() {
        let snapshot = Snapshot {
            nodes: vec![node("n1")],
            pods: vec![pod("late", 60, false), pod("next", 600, false)],
            controller_acquired: None,
            taken: None,
            workloads: Workloads::default(),
        };
        let mut continued = Engine::new();
        Seeding::default().seed(&mut continued, &snapshot, t(100), Host::default(), |work, _| work);
        assert_eq!(fires(&continued), [("late".to_owned(), t(60)), ("next".to_owned(), t(600))]);
        let mut restarted = Engine::new();
        let mut seeding = Seeding { restart_countdowns: true, ..Seeding::default() };
        seeding.seed(&mut restarted, &snapshot, t(100), Host::default(), |_, _| unreachable!("nothing continued"));
        assert_eq!(fires(&restarted), [("late".to_owned(), t(160)), ("next".to_owned(), t(700))]);
        // What is continued is the caller's step.
        let mut moved = Engine::new();
        let later = |work: Vec<(PodKey, Work)>, nodes: &[Node]| {
            assert_eq!(nodes.len(), 1);
            work.into_iter().map(|(key, work)| (key, Work { fire: t(900), ..work })).collect()
        };
        Seeding::default().seed(&mut moved, &snapshot, t(100), Host::default(), later);
        assert_eq!(fires(&moved), [("late".to_owned(), t(900)), ("next".to_owned(), t(900))]);
        assert!(std::iter::from_fn(|| moved.poll_action()).all(|a| matches!(a, Action::Scheduled { .. })));
    }
}
