//! `plan -w`: the engine driven by watch changes, as `run` drives it, with nothing carried out.
//!
//! The [`Observer`] holds the same [`Engine`] `run` holds, seeded the same way (the replay of the
//! first lists, docs/run.md), and fed the same changes. Where `run` would delete a pod, it reports
//! the pod due and waits for the cluster's own controller: the pod's work stays in flight in the
//! engine (upstream: a worker still running) until the pod is deleted, or its deletion is issued
//! (`deletionTimestamp` set, as on a node whose kubelet is gone). That is reported done, with how
//! late (or early) it came against the deadline. Pods already terminating are not followed: their
//! deletion was issued before.
//!
//! Inputs come with the instant they happen at; what to show comes out as [`Observed`] values, in
//! the quinn-style `handle_*` / `poll_*` families of the engine.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

use super::hash::Keyed;
use super::model::{NodeName, PodKey, PodRef, Taint};
use super::queue::Work;
use super::replay::Host;
use super::snapshot::{SnapshotNode, SnapshotPod, TolerationsWritten};
use super::start::{Lists, Seeding, Terminating, engine_node};
use super::time::Timestamp;
use super::{Action, Engine, Input};

/// How the cluster's controller's deletion of a pod showed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Deletion {
    /// `metadata.deletionTimestamp` was set: the deletion is issued, the pod terminates (it stays
    /// so on a node whose kubelet is gone).
    Terminating,
    /// The pod is gone from the API.
    Deleted,
}

impl Deletion {
    /// `terminating` or `deleted`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Terminating => "terminating",
            Self::Deleted => "deleted",
        }
    }
}

/// Something the operator watching should see.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Observed {
    /// Both first lists are in: the view starts from here.
    Synced {
        /// Nodes with a NoExecute taint.
        tainted: usize,
        /// Pods listed.
        pods: usize,
    },
    /// A node's NoExecute taints changed (empty: untainted or deleted).
    Taints {
        /// The node.
        node: NodeName,
        /// Its NoExecute taints now, in node order.
        taints: Vec<Taint>,
    },
    /// A pod's deletion is scheduled.
    Scheduled {
        /// The pod.
        pod: PodRef,
        /// Its deadline and clock.
        work: Work,
    },
    /// A pod's deadline has come: the cluster's controller should delete it now.
    Due {
        /// The pod.
        pod: PodRef,
        /// Its deadline and clock.
        work: Work,
    },
    /// A scheduled or due deletion is no longer wanted (taint removed, tolerations changed).
    Cancelled {
        /// The pod.
        pod: PodRef,
        /// The deadline that will not be kept.
        work: Work,
    },
    /// The pod was deleted (by the cluster's controller, or anyone) while its deletion was
    /// scheduled or due.
    Done {
        /// The pod.
        pod: PodRef,
        /// The deadline it had.
        work: Work,
        /// How the deletion showed.
        how: Deletion,
    },
}

/// One [`Observed`] and the instant it was seen at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seen {
    /// When.
    pub at: Timestamp,
    /// What.
    pub what: Observed,
}

/// A pod with a deletion being followed.
#[derive(Clone, Debug)]
struct Followed {
    pod: PodRef,
    work: Work,
}

/// The engine fed by watches, reporting what to show. See the module docs.
pub struct Observer {
    engine: Engine,
    /// Who runs the start-up replay's parts, and the key of the tables of pods and nodes.
    host: Host<'static>,
    /// The first lists gathered; `None` once synced.
    gathering: Option<Lists>,
    controller_acquired: Option<Timestamp>,
    /// Pods whose deletion is issued, with the UID terminating.
    terminating: Terminating,
    /// Pods with a deletion scheduled or due.
    followed: HashMap<PodKey, Followed, Keyed>,
    /// Each tainted node's NoExecute taints, as last reported.
    taints: BTreeMap<NodeName, Vec<Taint>>,
    seen: VecDeque<Seen>,
    /// What the start-up replay keeps besides its reconstruction: a swapped taint's and an edited
    /// pod's first countdowns (never restarted: `plan -w` shows what `run` would do by default).
    seeding: Seeding,
}

fn no_execute(node: &SnapshotNode) -> Vec<Taint> {
    node.taints.to_vec()
}

impl Observer {
    /// An observer waiting for the first lists; `controller_acquired` is the controller manager
    /// Lease's `acquireTime`, for the start-up replay (as `run` seeds its engine).
    #[must_use]
    pub fn new(controller_acquired: Option<Timestamp>) -> Self {
        Self {
            engine: Engine::new(),
            host: Host::default(),
            gathering: Some(Lists::default()),
            controller_acquired,
            terminating: Terminating::default(),
            followed: HashMap::default(),
            taints: BTreeMap::new(),
            seen: VecDeque::new(),
            seeding: Seeding::default(),
        }
    }

    /// The same observer, its start-up replay keeping the countdowns of condition taints swapped
    /// after the nodes' not-ready spells in `not_ready` began (`monitor_period`: the controller's).
    #[must_use]
    pub fn with_not_ready(
        mut self,
        not_ready: BTreeMap<NodeName, Timestamp>,
        monitor_period: std::time::Duration,
    ) -> Self {
        self.seeding.not_ready = not_ready;
        self.seeding.monitor_period = monitor_period;
        self
    }

    /// The same observer, its start-up replay keeping the first countdown of the pods in `edited`
    /// (their tolerations written after creation) that their controller's template recovers.
    #[must_use]
    pub fn with_edited(mut self, edited: BTreeMap<PodKey, TolerationsWritten>) -> Self {
        self.seeding.edited = edited;
        self
    }

    /// The same observer, its start-up replay's parts run by `host.parts` and its tables of pods and
    /// nodes keyed by `host.key` (see [`crate::replay::replay_with`]). Before any input.
    #[must_use]
    pub fn with_host(mut self, host: Host<'static>) -> Self {
        self.engine = Engine::with_hash_key(host.key);
        self.terminating = Terminating::with_hash_key(host.key);
        self.followed = HashMap::with_hasher(Keyed::new(host.key));
        self.host = host;
        self
    }

    /// Whether both first lists are in.
    #[must_use]
    pub fn is_synced(&self) -> bool {
        self.gathering.is_none()
    }

    /// The complete node list (the first, or a re-list).
    pub fn handle_nodes_listed(&mut self, nodes: Vec<SnapshotNode>, now: Timestamp) {
        if let Some(gathering) = &mut self.gathering {
            gathering.nodes_listed(nodes);
            return self.try_sync(now);
        }
        self.fire(now);
        let mut listed = HashSet::with_capacity_and_hasher(nodes.len(), Keyed::new(self.host.key));
        listed.extend(nodes.iter().map(|n| &n.name));
        let gone: Vec<NodeName> = self.taints.keys().filter(|n| !listed.contains(n)).cloned().collect();
        self.engine.handle(Input::NodesReplaced(nodes.iter().map(engine_node).collect()), now);
        for name in gone {
            self.set_taints(name, Vec::new(), now);
        }
        for node in &nodes {
            self.set_taints(node.name.clone(), no_execute(node), now);
        }
        self.drain(now);
    }

    /// A node added or changed.
    pub fn handle_node_applied(&mut self, node: SnapshotNode, now: Timestamp) {
        if let Some(gathering) = &mut self.gathering {
            return gathering.node_applied(node);
        }
        self.fire(now);
        self.engine.handle(Input::NodeUpserted(engine_node(&node)), now);
        self.set_taints(node.name.clone(), no_execute(&node), now);
        self.drain(now);
    }

    /// A node deleted.
    pub fn handle_node_deleted(&mut self, name: NodeName, now: Timestamp) {
        self.node_gone(name, Input::NodeDeleted, now);
    }

    /// A node no longer followed (relabelled out of `-l`): its pods' deletions are cancelled, and
    /// the node and its pods forgotten ([`Input::NodeLeft`]).
    pub fn handle_node_left(&mut self, name: NodeName, now: Timestamp) {
        self.node_gone(name, Input::NodeLeft, now);
    }

    /// A node deleted or no longer followed: `input` tells the engine which.
    fn node_gone(&mut self, name: NodeName, input: fn(NodeName) -> Input, now: Timestamp) {
        if let Some(gathering) = &mut self.gathering {
            return gathering.node_gone(&name);
        }
        self.fire(now);
        self.engine.handle(input(name.clone()), now);
        self.set_taints(name, Vec::new(), now);
        self.drain(now);
    }

    /// The complete pod list (the first, or a re-list).
    pub fn handle_pods_listed(&mut self, pods: Vec<SnapshotPod>, now: Timestamp) {
        if let Some(gathering) = &mut self.gathering {
            gathering.pods_listed(pods);
            return self.try_sync(now);
        }
        self.fire(now);
        let mut listed = HashMap::with_capacity_and_hasher(pods.len(), Keyed::new(self.host.key));
        listed.extend(pods.iter().map(|p| (&p.pod.key, p)));
        let mut ended: Vec<(PodKey, Deletion)> = self
            .followed
            .iter()
            .filter_map(|(key, followed)| match listed.get(key) {
                None => Some((key.clone(), Deletion::Deleted)),
                Some(pod) if pod.pod.uid != followed.pod.uid => Some((key.clone(), Deletion::Deleted)),
                Some(pod) if pod.terminating => Some((key.clone(), Deletion::Terminating)),
                Some(_) => None,
            })
            .collect();
        ended.sort_by(|a, b| a.0.cmp(&b.0));
        for (key, how) in ended {
            self.done(&key, how, now);
        }
        self.terminating.listed(&pods);
        self.engine.handle(Input::PodsReplaced(pods.into_iter().map(|p| p.pod).collect()), now);
        self.drain(now);
    }

    /// A pod added or changed.
    pub fn handle_pod_applied(&mut self, pod: SnapshotPod, now: Timestamp) {
        if let Some(gathering) = &mut self.gathering {
            return gathering.pod_applied(pod);
        }
        self.fire(now);
        let key = pod.pod.key.clone();
        if self.followed.get(&key).is_some_and(|f| f.pod.uid != pod.pod.uid) {
            // A same-named replacement: the followed pod is gone.
            self.done(&key, Deletion::Deleted, now);
        }
        if pod.terminating && self.followed.contains_key(&key) {
            self.done(&key, Deletion::Terminating, now);
        }
        self.terminating.applied(&pod);
        self.engine.handle(Input::PodUpserted(pod.pod), now);
        self.drain(now);
    }

    /// A pod deleted.
    pub fn handle_pod_deleted(&mut self, key: PodKey, now: Timestamp) {
        if let Some(gathering) = &mut self.gathering {
            return gathering.pod_deleted(&key);
        }
        self.fire(now);
        if self.followed.contains_key(&key) {
            self.done(&key, Deletion::Deleted, now);
        }
        self.terminating.deleted(&key);
        self.engine.handle(Input::PodDeleted(key), now);
        self.drain(now);
    }

    /// Fires the deadlines due by `now` before a change at `now` is applied (the engine's tie rule),
    /// so that a pod due then is seen due before it is seen deleted.
    fn fire(&mut self, now: Timestamp) {
        self.engine.handle_timeout(now);
        self.drain(now);
    }

    /// Fires the deadlines due by `now`.
    pub fn handle_timeout(&mut self, now: Timestamp) {
        self.engine.handle_timeout(now);
        self.drain(now);
    }

    /// When [`Observer::handle_timeout`] must be called next.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        self.engine.poll_timeout()
    }

    /// The next thing to show, oldest first.
    pub fn poll_seen(&mut self) -> Option<Seen> {
        self.seen.pop_front()
    }

    fn push(&mut self, at: Timestamp, what: Observed) {
        self.seen.push_back(Seen { at, what });
    }

    fn try_sync(&mut self, now: Timestamp) {
        let Some(mut lists) = self.gathering.take_if(|lists| lists.complete()) else { return };
        let snapshot = lists.snapshot(false, self.controller_acquired);
        self.terminating.listed(&snapshot.pods);
        // `run`'s start (docs/run.md): the replay's deadlines continue, overdue work fires at once.
        self.seeding.seed(&mut self.engine, &snapshot, now, self.host, |work, _| work);
        let tainted = snapshot.nodes.iter().filter(|n| !n.taints.is_empty()).count();
        self.push(now, Observed::Synced { tainted, pods: snapshot.pods.len() });
        for node in &snapshot.nodes {
            self.set_taints(node.name.clone(), no_execute(node), now);
        }
        self.drain(now);
    }

    fn set_taints(&mut self, node: NodeName, taints: Vec<Taint>, now: Timestamp) {
        let known = self.taints.get(&node).map_or(&[][..], Vec::as_slice);
        if known == taints.as_slice() {
            return;
        }
        if taints.is_empty() {
            self.taints.remove(&node);
        } else {
            self.taints.insert(node.clone(), taints.clone());
        }
        self.push(now, Observed::Taints { node, taints });
    }

    fn done(&mut self, key: &PodKey, how: Deletion, now: Timestamp) {
        if let Some(Followed { pod, work }) = self.followed.remove(key) {
            self.push(now, Observed::Done { pod, work, how });
        }
    }

    fn is_terminating(&self, pod: &PodRef) -> bool {
        self.terminating.contains(pod)
    }

    fn drain(&mut self, now: Timestamp) {
        while let Some(action) = self.engine.poll_action() {
            match action {
                Action::Scheduled { pod, .. } | Action::Evict { pod, .. } if self.is_terminating(&pod) => {}
                Action::Scheduled { pod, work } => {
                    self.followed.insert(pod.key.clone(), Followed { pod: pod.clone(), work });
                    self.push(now, Observed::Scheduled { pod, work });
                }
                // Nothing is carried out: the work stays in flight until the pod goes.
                Action::Evict { pod, work, .. } => {
                    self.followed.insert(pod.key.clone(), Followed { pod: pod.clone(), work });
                    self.push(now, Observed::Due { pod, work });
                }
                Action::Cancelled { pod, .. } | Action::Withdrawn { pod, .. } => {
                    if let Some(Followed { pod, work }) = self.followed.remove(&pod.key) {
                        self.push(now, Observed::Cancelled { pod, work });
                    }
                }
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::model::{Effect, Operator, Pod, Toleration};

    const TAINT: &str = "example.com/drain";

    fn t(seconds: i64) -> Timestamp {
        Timestamp::from_unix_seconds(seconds)
    }

    /// A node `n1`-like of one `NoExecute` taint added at `tainted_at`, if any (shared with `start`'s tests).
    pub(crate) fn node(name: &str, tainted_at: Option<i64>) -> SnapshotNode {
        let taints = tainted_at.map(|at| Taint::new(TAINT, "", Effect::NoExecute).with_time_added(t(at)));
        SnapshotNode::new(name.into(), BTreeMap::new(), taints)
    }

    /// A pod on `n1` tolerating the taint for `seconds`, if any (shared with `start`'s tests).
    pub(crate) fn pod(name: &str, seconds: Option<i64>, terminating: bool) -> SnapshotPod {
        let tolerations: Arc<[Toleration]> = match seconds {
            None => Arc::new([]),
            Some(seconds) => Arc::new([Toleration {
                key: TAINT.into(),
                operator: Operator::Exists,
                value: Box::default(),
                effect: Some(Effect::NoExecute),
                seconds: Some(seconds),
            }]),
        };
        let pod = Pod {
            key: PodKey::new("web", name),
            uid: format!("uid-{name}").into(),
            node: Some("n1".into()),
            tolerations,
        };
        SnapshotPod {
            pod,
            bound_at: None,
            phase: "Running".into(),
            terminating,
            deletion_timestamp: None,
            ready: crate::snapshot::PodReady::No,
            claims: None,
            owner: None,
            tolerations_edited: None,
        }
    }

    fn drain(observer: &mut Observer) -> Vec<Seen> {
        std::iter::from_fn(|| observer.poll_seen()).collect()
    }

    fn kinds(seen: &[Seen]) -> Vec<String> {
        seen.iter()
            .map(|s| match &s.what {
                Observed::Synced { .. } => "synced".to_owned(),
                Observed::Taints { node, taints } => format!("taints {node} {}", taints.len()),
                Observed::Scheduled { pod, .. } => format!("scheduled {}", pod.key.name()),
                Observed::Due { pod, .. } => format!("due {}", pod.key.name()),
                Observed::Cancelled { pod, .. } => format!("cancelled {}", pod.key.name()),
                Observed::Done { pod, how, .. } => format!("done {} {}", pod.key.name(), how.as_str()),
            })
            .collect()
    }

    #[test]
    fn the_first_lists_continue_the_replay_and_a_deletion_by_the_cluster_is_done() {
        let mut observer = Observer::new(None);
        observer.handle_pods_listed(vec![pod("late", Some(60), false), pod("next", Some(600), false)], t(100));
        assert!(drain(&mut observer).is_empty(), "nothing before both lists");
        observer.handle_nodes_listed(vec![node("n1", Some(0))], t(100));
        let seen = drain(&mut observer);
        assert_eq!(kinds(&seen), ["synced", "taints n1 1", "due late", "scheduled next"]);
        assert!(matches!(&seen[3].what, Observed::Scheduled { work, .. } if work.fire == t(600)), "{seen:?}");
        assert_eq!(observer.poll_timeout(), Some(t(600)));
        // The cluster's controller deletes the overdue pod; the other one is issued at its deadline.
        observer.handle_pod_deleted(PodKey::new("web", "late"), t(101));
        observer.handle_timeout(t(600));
        observer.handle_pod_applied(pod("next", Some(600), true), t(602));
        let seen = drain(&mut observer);
        assert_eq!(kinds(&seen), ["done late deleted", "due next", "done next terminating"]);
        assert_eq!(seen[2].at, t(602));
        assert!(matches!(&seen[0].what, Observed::Done { work, .. } if work.fire == t(60)));
    }

    #[test]
    fn new_taints_schedule_and_their_removal_cancels() {
        let mut observer = Observer::new(None);
        observer.handle_nodes_listed(vec![node("n1", None)], t(0));
        observer.handle_pods_listed(vec![pod("a", Some(30), false), pod("gone", None, true)], t(0));
        assert_eq!(kinds(&drain(&mut observer)), ["synced"]);
        observer.handle_node_applied(node("n1", Some(10)), t(10));
        observer.handle_pod_applied(pod("b", None, false), t(11));
        assert_eq!(kinds(&drain(&mut observer)), ["taints n1 1", "scheduled a", "due b"]);
        observer.handle_node_applied(node("n1", None), t(12));
        assert_eq!(kinds(&drain(&mut observer)), ["taints n1 0", "cancelled a", "cancelled b"]);
        assert_eq!(observer.poll_timeout(), None);
    }

    #[test]
    fn a_node_that_leaves_the_scope_cancels_what_was_scheduled_on_it() {
        let mut observer = Observer::new(None);
        observer.handle_nodes_listed(vec![node("n1", None)], t(0));
        observer.handle_pods_listed(vec![pod("a", Some(30), false)], t(0));
        observer.handle_node_applied(node("n1", Some(10)), t(10));
        assert_eq!(kinds(&drain(&mut observer)), ["synced", "taints n1 1", "scheduled a"]);
        observer.handle_node_left("n1".into(), t(13));
        assert_eq!(kinds(&drain(&mut observer)), ["taints n1 0", "cancelled a"]);
        assert_eq!(observer.poll_timeout(), None);
        observer.handle_timeout(t(100));
        assert!(drain(&mut observer).is_empty(), "nothing due on a node no longer followed");
    }

    #[test]
    fn a_relist_marks_done_what_vanished_while_disconnected() {
        let mut observer = Observer::new(None);
        observer.handle_nodes_listed(vec![node("n1", Some(0))], t(5));
        observer.handle_pods_listed(vec![pod("a", Some(30), false), pod("b", Some(30), false)], t(5));
        drain(&mut observer);
        observer.handle_pods_listed(vec![pod("b", Some(30), true)], t(40));
        assert_eq!(kinds(&drain(&mut observer)), ["due a", "due b", "done a deleted", "done b terminating"]);
    }
}
