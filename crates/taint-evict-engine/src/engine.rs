//! The engine itself: inputs in, deletions and timers out (see the crate's documentation for how to
//! call it).

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use crate::decide::{Decision, decide};
use crate::hash::{HashKey, Keyed};
use crate::index::{Interner, PodIndex};
use crate::model::{Node, NodeName, Pod, PodKey, PodRef, Taint, Toleration, Uid, no_execute};
use crate::queue::{Added, Cause, Entry, EvictionQueue, Ticket, Work};
use crate::slab::Slab;
use crate::time::Timestamp;
use crate::tolerate::{Tolerance, TolerationWindow, tolerance};

/// Something that happened in the cluster, or to a deletion the engine asked for.
#[derive(Clone, Debug)]
pub enum Input {
    /// A node was added or changed.
    NodeUpserted(Node),
    /// A node was deleted. Pending work of its pods is kept (upstream: they fire if the pods remain).
    NodeDeleted(NodeName),
    /// A node is no longer followed (relabelled out of `run -l`): nothing is enforced there any more,
    /// so its pods' work is cancelled, and the node and its pods are forgotten (docs/run.md, "What
    /// `run` watches"). Not upstream's: its controller follows every node. A node followed again
    /// comes back as a node that joins, [`Input::NodeUpserted`], and its pods as pods that join.
    NodeLeft(NodeName),
    /// A pod was added or changed.
    PodUpserted(Pod),
    /// A pod was deleted: its work is cancelled.
    PodDeleted(PodKey),
    /// A complete list of nodes (a re-list): nodes not in it are deleted, the others upserted.
    NodesReplaced(Vec<Node>),
    /// A complete list of pods (a re-list): pods not in it are deleted, the others upserted.
    PodsReplaced(Vec<Pod>),
    /// The deletion started by [`Action::Evict`] completed, whatever its outcome.
    EvictionFinished {
        /// The pod.
        pod: PodKey,
        /// The ticket of the [`Action::Evict`].
        ticket: Ticket,
    },
    /// A deletion that fell due while a watch was broken, and was held, not carried out: it was
    /// decided on lists of two instants (one watch listed again, the other not yet); or one decided
    /// before the gap and still waiting (`run`'s own holds). Now that both lists are current, it stands when the pod's tolerations of its node's taints still give the cause it
    /// fired for; otherwise it is withdrawn and the pod evaluated afresh, its countdown from now (when
    /// it began cannot be known; later never deletes before the controller would). Not upstream's:
    /// its deletions are not held (docs/run.md, "When a watch breaks").
    Reconsider {
        /// The pod.
        pod: PodKey,
        /// The ticket of the [`Action::Evict`] held.
        ticket: Ticket,
    },
    /// The controller restarted: every timer is lost, and every tainted node is passed again (upstream
    /// sees an ADD event for every object, kubernetes/kubernetes#108268).
    ControllerRestarted,
    /// Loads nodes and pods without evaluating them, with the work a replay of them found: how `run`
    /// continues the story `plan` tells instead of restarting every countdown. Work due by `now`
    /// fires at once.
    Seeded {
        /// Every node.
        nodes: Vec<Node>,
        /// Every pod.
        pods: Vec<Pod>,
        /// The pending deletions, by pod (pods not in `pods` are ignored).
        work: Vec<(PodKey, Work)>,
    },
}

/// A decision for the IO layer to carry out or report.
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use]
pub enum Action {
    /// A deletion timer was armed. Nothing to execute; useful to show.
    Scheduled {
        /// The pod.
        pod: PodRef,
        /// Its deletion and clock.
        work: Work,
    },
    /// A live timer was cancelled: upstream emits a `Cancelling deletion` event.
    Cancelled {
        /// The pod.
        pod: PodRef,
        /// The work that will not run.
        work: Work,
    },
    /// A deletion in flight is no longer wanted (the pod went away, or a later evaluation replaced or
    /// cancelled its work). Upstream lets a started deletion run to its end, and so should an attempt
    /// already sent; only retries of it should stop (upstream has none).
    Withdrawn {
        /// The pod.
        pod: PodRef,
        /// The ticket of the [`Action::Evict`] withdrawn.
        ticket: Ticket,
    },
    /// The pod is due: delete it, then report [`Input::EvictionFinished`] with the ticket.
    Evict {
        /// The pod (its UID is the deletion's precondition).
        pod: PodRef,
        /// The deletion and its clock.
        work: Work,
        /// Identifies this deletion in the completion report.
        ticket: Ticket,
    },
}

/// A pod's number: its index in the pod table, stable while the pod exists (reused after).
type PodId = u32;

/// A node's number: its index in the node table, stable while the node is known (reused after).
type NodeId = u32;

/// The node number of a pod bound to no node (never given to a node).
const UNBOUND: NodeId = NodeId::MAX;

#[derive(Debug)]
struct PodSlot {
    key: PodKey,
    uid: Uid,
    tolerations: Arc<[Toleration]>,
    /// The node it is bound to, or [`UNBOUND`].
    node: NodeId,
    /// Position in its node's pod list.
    position: u32,
}

impl PodSlot {
    /// The node the pod is bound to.
    fn node(&self) -> Option<NodeId> {
        (self.node != UNBOUND).then_some(self.node)
    }
}

#[derive(Debug)]
struct NodeSlot {
    /// The node's name, shared by the pods' [`PodRef`]s.
    name: NodeName,
    /// Whether the node object exists (its taints are known).
    exists: bool,
    /// Its NoExecute taints, in node order (upstream `taintedNodes` holds the non-empty ones).
    taints: Arc<[Taint]>,
    /// The pods bound to it (upstream's `spec.nodeName` index).
    pods: Vec<PodId>,
}

/// Upstream's taint-eviction controller as a state machine. See the module docs for the call order.
///
/// Pods and nodes are numbered; the numbers index their tables and the queue, so deciding for a pod
/// never hashes. A node's name is held once, in its slot, and shared by its pods' actions; namespaces
/// and toleration lists are shared between the pods that carry equal ones.
#[derive(Debug, Default)]
pub struct Engine {
    pods: Slab<PodSlot>,
    free_pods: Vec<PodId>,
    pod_ids: PodIndex,
    nodes: Slab<NodeSlot>,
    free_nodes: Vec<NodeId>,
    node_ids: HashMap<NodeName, NodeId, Keyed>,
    shared: Shared,
    queue: EvictionQueue<PodId>,
    actions: VecDeque<Action>,
}

/// An engine's shared copies of the values pods repeat, which one engine can hand on to the next
/// (a replay runs an engine per node, over the pods of one dump), with the key they are hashed by.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    pub(crate) key: HashKey,
    namespaces: Interner<str>,
    toleration_lists: Interner<[Toleration]>,
}

impl Shared {
    /// No copies yet, hashed with `key`.
    pub(crate) fn with_key(key: HashKey) -> Self {
        Self { key, namespaces: Interner::with_key(key), toleration_lists: Interner::with_key(key) }
    }
}

impl Engine {
    /// An engine that knows no node and no pod. Its tables hash the names of pods and nodes with the
    /// zero key: the same on every run; see [`Engine::with_hash_key`].
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// An engine that knows no node and no pod, hashing their names with `key`. Names come from the
    /// cluster: a key their writers do not know (drawn at random once per process) keeps crafted names
    /// from piling into one bucket of a table as large as the cluster.
    #[must_use]
    pub fn with_hash_key(key: HashKey) -> Self {
        Self::with_shared(Shared::with_key(key))
    }

    /// An engine that knows no node and no pod, starting from `shared`'s copies of repeated values and
    /// hashing with their key.
    pub(crate) fn with_shared(shared: Shared) -> Self {
        let key = shared.key;
        Self {
            pod_ids: PodIndex::with_key(key),
            node_ids: HashMap::with_hasher(Keyed::new(key)),
            shared,
            ..Self::default()
        }
    }

    /// This engine's copies of repeated values, for the next engine.
    pub(crate) fn into_shared(self) -> Shared {
        self.shared
    }

    /// Applies `input`, which happened at `now`, after firing the timers due by then.
    pub fn handle(&mut self, input: Input, now: Timestamp) {
        self.handle_timeout(now);
        match input {
            Input::NodeUpserted(node) => self.upsert_node(node, now),
            Input::NodeDeleted(name) => self.delete_node(&name),
            Input::NodeLeft(name) => self.leave_node(&name),
            Input::PodUpserted(pod) => self.upsert_pod(pod, now),
            Input::PodDeleted(key) => self.delete_pod(&key),
            Input::NodesReplaced(nodes) => self.replace_nodes(nodes, now),
            Input::PodsReplaced(pods) => self.replace_pods(pods, now),
            Input::EvictionFinished { pod, ticket } => {
                if let Some(id) = self.pod_id(&pod) {
                    self.queue.finish(&id, ticket);
                }
            }
            Input::Reconsider { pod, ticket } => self.reconsider(&pod, ticket, now),
            Input::ControllerRestarted => self.restart(now),
            Input::Seeded { nodes, pods, work } => self.seed(nodes, pods, work, now),
        }
    }

    /// Fires every timer due at or before `now`. Early or repeated calls are harmless.
    pub fn handle_timeout(&mut self, now: Timestamp) {
        while let Some((id, entry)) = self.queue.pop_due(now) {
            let pod = self.pod_ref(id);
            self.actions.push_back(Action::Evict { pod, work: entry.work, ticket: entry.ticket });
        }
    }

    /// The next decision to carry out, oldest first.
    pub fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    /// When [`Engine::handle_timeout`] must be called next: the earliest armed deadline.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        self.queue.next_deadline()
    }

    /// The work queued for a pod, armed or in flight.
    #[must_use]
    pub fn work(&self, pod: &PodKey) -> Option<&Entry> {
        self.pod_id(pod).and_then(|id| self.queue.get(&id))
    }

    /// A pod's tolerations as last given, when the engine tracks it.
    #[must_use]
    pub fn tolerations(&self, pod: &PodKey) -> Option<&Arc<[Toleration]>> {
        self.pod_id(pod).map(|id| &self.slot(id).tolerations)
    }

    /// Every pod with work, armed or in flight.
    pub fn pending(&self) -> impl Iterator<Item = (PodRef, &Entry)> + '_ {
        self.queue.iter().map(|(id, entry)| (self.pod_ref(id), entry))
    }

    /// A node's current NoExecute taints (empty when untainted, deleted or unknown).
    #[must_use]
    pub fn taints(&self, node: &NodeName) -> &[Taint] {
        self.node_ids.get(node).map_or(&[], |&id| &self.node(id).taints)
    }

    /// How many pods the engine tracks.
    #[must_use]
    pub fn pod_count(&self) -> usize {
        self.pod_ids.len()
    }

    /// Every pod the engine tracks, as it was given, in no particular order: what a caller that
    /// keeps no list of its own reads back (`run` when a term as leader ends).
    pub fn pods(&self) -> impl Iterator<Item = Pod> + '_ {
        self.pods.iter().map(|(_, slot)| self.given(slot))
    }

    /// One pod the engine tracks, by its key, as it was given: one lookup, not a walk of every pod.
    #[must_use]
    pub fn pod(&self, key: &PodKey) -> Option<Pod> {
        self.pod_id(key).map(|id| self.given(self.slot(id)))
    }

    /// A pod's slot as the pod it was given.
    fn given(&self, slot: &PodSlot) -> Pod {
        Pod {
            key: slot.key.clone(),
            uid: slot.uid.clone(),
            node: slot.node().map(|node| self.node(node).name.clone()),
            tolerations: slot.tolerations.clone(),
        }
    }

    /// How many deletion timers are armed.
    #[must_use]
    pub fn armed(&self) -> usize {
        self.queue.armed()
    }

    fn slot(&self, id: PodId) -> &PodSlot {
        self.pods.get(id as usize).expect("pod ids in indexes and the queue refer to live slots")
    }

    fn slot_mut(&mut self, id: PodId) -> &mut PodSlot {
        self.pods.get_mut(id as usize).expect("pod ids in indexes and the queue refer to live slots")
    }

    fn node(&self, id: NodeId) -> &NodeSlot {
        self.nodes.get(id as usize).expect("node ids in pods and the name index refer to live slots")
    }

    fn node_mut(&mut self, id: NodeId) -> &mut NodeSlot {
        self.nodes.get_mut(id as usize).expect("node ids in pods and the name index refer to live slots")
    }

    fn pod_id(&self, key: &PodKey) -> Option<PodId> {
        self.pod_ids.get(key, |id| &self.slot(id).key)
    }

    fn pod_ref(&self, id: PodId) -> PodRef {
        let slot = self.slot(id);
        PodRef {
            key: slot.key.clone(),
            uid: slot.uid.clone(),
            node: slot.node().map_or_else(|| NodeName::from(""), |node| self.node(node).name.clone()),
        }
    }

    /// The number of node `name`, giving it one (as a node not known to exist) if it has none.
    fn node_id(&mut self, name: NodeName) -> NodeId {
        if let Some(&id) = self.node_ids.get(&name) {
            return id;
        }
        let slot = NodeSlot { name: name.clone(), exists: false, taints: Arc::default(), pods: Vec::new() };
        let id = match self.free_nodes.pop() {
            Some(id) => id,
            None => NodeId::try_from(self.nodes.len()).ok().filter(|&id| id < NodeId::MAX).expect("fewer nodes"),
        };
        self.nodes.replace(id as usize, slot);
        self.node_ids.insert(name, id);
        id
    }

    /// Mirrors `NodeUpdated` (change filter) and `handleNodeUpdate`.
    fn upsert_node(&mut self, node: Node, now: Timestamp) {
        let taints = no_execute(node.taints);
        let id = self.node_id(node.name);
        let slot = self.node_mut(id);
        // Upstream enqueues a node update only when its ordered NoExecute taints (TimeAdded included)
        // changed; an add is always enqueued.
        if slot.exists && slot.taints == taints {
            return;
        }
        slot.exists = true;
        slot.taints = taints;
        self.pass_node(id, now);
    }

    fn delete_node(&mut self, name: &NodeName) {
        // Mirrors handleNodeUpdate's NotFound branch: forget the taints, keep the timers (they
        // still delete the node's pods when they fire).
        let Some(&id) = self.node_ids.get(name) else { return };
        let slot = self.node_mut(id);
        slot.exists = false;
        slot.taints = Arc::default();
        self.drop_empty_node(id);
    }

    /// A node no longer followed: its pods' work cancelled, they and the node forgotten.
    fn leave_node(&mut self, name: &NodeName) {
        let Some(&id) = self.node_ids.get(name) else { return };
        let slot = self.node_mut(id);
        slot.exists = false;
        slot.taints = Arc::default();
        let mut keys: Vec<PodKey> = self.node(id).pods.iter().map(|&pod| self.slot(pod).key.clone()).collect();
        // In name order, so that the cancellations are said in the same order on every run.
        keys.sort_unstable();
        for key in keys {
            self.delete_pod(&key);
        }
        if let Some(&id) = self.node_ids.get(name) {
            self.drop_empty_node(id);
        }
    }

    /// Evaluates every pod bound to the node against its current taints, with one `now`.
    fn pass_node(&mut self, node: NodeId, now: Timestamp) {
        // The pass changes no binding and no taint, so the lists are borrowed out of the slot
        // rather than copied, and put back after.
        let slot = self.node_mut(node);
        let pods = std::mem::take(&mut slot.pods);
        let taints = std::mem::take(&mut slot.taints);
        if taints.is_empty() {
            // Untainted: cancel every pod's work; never evaluate against an empty list (upstream's
            // function would delete every pod at once).
            for &id in &pods {
                self.cancel(id);
            }
        } else {
            for &id in &pods {
                self.process(id, &taints, now);
            }
        }
        let slot = self.node_mut(node);
        slot.pods = pods;
        slot.taints = taints;
    }

    /// Mirrors `PodUpdated` (change filter) and `handlePodUpdate`.
    fn upsert_pod(&mut self, pod: Pod, now: Timestamp) {
        let tolerations = self.shared.toleration_lists.intern(pod.tolerations);
        let id = match self.pod_id(&pod.key) {
            Some(id) if self.slot(id).uid != pod.uid => {
                // A same-named replacement: the old pod is gone, this is a new one.
                self.delete_pod(&pod.key);
                self.insert_pod(pod.key, pod.uid, pod.node, tolerations)
            }
            Some(id) => {
                let same_node = self.slot(id).node().map(|node| &self.node(node).name) == pod.node.as_ref();
                let slot = self.slot_mut(id);
                if same_node && *slot.tolerations == *tolerations {
                    return;
                }
                slot.tolerations = tolerations;
                if !same_node {
                    self.unbind(id);
                    self.bind(id, pod.node);
                }
                id
            }
            None => self.insert_pod(pod.key, pod.uid, pod.node, tolerations),
        };
        self.pass_pod(id, now);
    }

    fn pass_pod(&mut self, id: PodId, now: Timestamp) {
        let Some(node) = self.slot(id).node() else { return };
        let slot = self.node_mut(node);
        if slot.taints.is_empty() {
            // Upstream: no `taintedNodes` entry, nothing to do (and nothing is cancelled).
            return;
        }
        let taints = std::mem::take(&mut slot.taints);
        self.process(id, &taints, now);
        self.node_mut(node).taints = taints;
    }

    /// [`Input::Reconsider`].
    fn reconsider(&mut self, key: &PodKey, ticket: Ticket, now: Timestamp) {
        let Some(id) = self.pod_id(key) else { return };
        let Some(entry) = self.queue.get(&id).copied() else { return };
        if entry.ticket != ticket || entry.is_armed() {
            return;
        }
        let taints = self.slot(id).node().map(|node| Arc::clone(&self.node(node).taints)).unwrap_or_default();
        let stands = match (entry.work.cause, tolerance(&taints, &self.slot(id).tolerations)) {
            (Cause::Untolerated, Tolerance::Untolerated) => true,
            (
                Cause::Expired { seconds },
                Tolerance::Tolerated(TolerationWindow::After { seconds: now_seconds, .. }),
            ) => seconds == now_seconds,
            _ => false,
        };
        if !stands {
            self.cancel(id);
            if !taints.is_empty() {
                self.process(id, &taints, now);
            }
        }
    }

    fn delete_pod(&mut self, key: &PodKey) {
        let Some(id) = self.pod_ids.remove(key, |id| &self.pods.get(id as usize).expect("live slot").key) else {
            return;
        };
        self.cancel(id);
        self.unbind(id);
        self.pods.take(id as usize);
        self.free_pods.push(id);
    }

    fn insert_pod(&mut self, key: PodKey, uid: Uid, node: Option<NodeName>, tolerations: Arc<[Toleration]>) -> PodId {
        let hash = self.pod_ids.hash(&key);
        let (namespace, name) = key.into_parts();
        let key = PodKey::new(self.shared.namespaces.intern(namespace), name);
        let slot = PodSlot { key, uid, tolerations, node: UNBOUND, position: 0 };
        let id = match self.free_pods.pop() {
            Some(id) => id,
            None => PodId::try_from(self.pods.len()).ok().filter(|&id| id < PodId::MAX).expect("fewer pods"),
        };
        self.pods.replace(id as usize, slot);
        self.pod_ids.insert(hash, id);
        self.bind(id, node);
        id
    }

    fn bind(&mut self, id: PodId, node: Option<NodeName>) {
        let node = node.map(|name| self.node_id(name));
        if let Some(node) = node {
            let pods = &mut self.node_mut(node).pods;
            let position = u32::try_from(pods.len()).expect("fewer than 2^32 pods on a node");
            pods.push(id);
            self.slot_mut(id).position = position;
        }
        self.slot_mut(id).node = node.unwrap_or(UNBOUND);
    }

    fn unbind(&mut self, id: PodId) {
        let slot = self.slot_mut(id);
        let Some(node) = slot.node() else { return };
        slot.node = UNBOUND;
        let position = slot.position as usize;
        let pods = &mut self.node_mut(node).pods;
        pods.swap_remove(position);
        if let Some(&moved) = pods.get(position) {
            self.slot_mut(moved).position = position as u32;
        }
        self.drop_empty_node(node);
    }

    fn drop_empty_node(&mut self, id: NodeId) {
        let slot = self.node(id);
        if !slot.exists && slot.pods.is_empty() {
            let slot = self.nodes.take(id as usize).expect("live node slot");
            self.node_ids.remove(&slot.name);
            self.free_nodes.push(id);
        }
    }

    fn replace_nodes(&mut self, nodes: Vec<Node>, now: Timestamp) {
        let mut listed = HashSet::with_capacity_and_hasher(nodes.len(), Keyed::new(self.shared.key));
        listed.extend(nodes.iter().map(|n| &n.name));
        let gone: Vec<NodeName> = self
            .nodes
            .iter()
            .filter(|(_, slot)| slot.exists && !listed.contains(&slot.name))
            .map(|(_, slot)| slot.name.clone())
            .collect();
        for name in gone {
            // Gone while the watch was away: whether its taints went before it cannot be known, so
            // its pods' work is withdrawn, not kept as for a deletion watched (docs/upstream.md,
            // "Differences").
            if let Some(&id) = self.node_ids.get(&name) {
                for pod in self.node(id).pods.clone() {
                    self.cancel(pod);
                }
            }
            self.delete_node(&name);
        }
        for node in nodes {
            self.upsert_node(node, now);
        }
    }

    fn replace_pods(&mut self, pods: Vec<Pod>, now: Timestamp) {
        let mut listed = HashSet::with_capacity_and_hasher(pods.len(), Keyed::new(self.shared.key));
        listed.extend(pods.iter().map(|p| &p.key));
        let gone: Vec<PodKey> =
            self.pods.iter().map(|(_, slot)| &slot.key).filter(|key| !listed.contains(key)).cloned().collect();
        for key in gone {
            self.delete_pod(&key);
        }
        for pod in pods {
            self.upsert_pod(pod, now);
        }
    }

    fn seed(&mut self, nodes: Vec<Node>, pods: Vec<Pod>, work: Vec<(PodKey, Work)>, now: Timestamp) {
        for node in nodes {
            let id = self.node_id(node.name);
            let slot = self.node_mut(id);
            slot.exists = true;
            slot.taints = no_execute(node.taints);
        }
        for pod in pods {
            let tolerations = self.shared.toleration_lists.intern(pod.tolerations);
            self.delete_pod(&pod.key);
            self.insert_pod(pod.key, pod.uid, pod.node, tolerations);
        }
        for (key, work) in work {
            let Some(id) = self.pod_id(&key) else { continue };
            self.cancel(id);
            if work.fire <= now {
                // Overdue: it should already have happened; carry it out now, no timer.
                if let Added::Fired(ticket) = self.queue.add_due(id, work) {
                    self.actions.push_back(Action::Evict { pod: self.pod_ref(id), work, ticket });
                }
            } else {
                self.add(id, work);
            }
        }
    }

    fn restart(&mut self, now: Timestamp) {
        self.queue.clear();
        let mut tainted: Vec<(NodeName, NodeId)> = self
            .nodes
            .iter()
            .filter(|(_, slot)| !slot.taints.is_empty())
            .map(|(id, slot)| (slot.name.clone(), id as NodeId))
            .collect();
        tainted.sort_unstable();
        for (_, id) in tainted {
            self.pass_node(id, now);
        }
    }

    /// Applies upstream's `processPodOnNode` decision for one pod.
    fn process(&mut self, id: PodId, taints: &[Taint], now: Timestamp) {
        let decision = decide(taints, &self.slot(id).tolerations, self.queue.get(&id), now);
        match decision {
            Decision::Keep => {}
            Decision::Cancel => self.cancel(id),
            Decision::EvictNow(work) => {
                self.cancel(id);
                self.add(id, work);
            }
            Decision::Schedule(work) => self.add(id, work),
            Decision::Reschedule(work) => {
                self.cancel(id);
                self.add(id, work);
            }
        }
    }

    fn add(&mut self, id: PodId, work: Work) {
        match self.queue.add(id, work) {
            Added::Skipped => {}
            Added::Armed(_) => self.actions.push_back(Action::Scheduled { pod: self.pod_ref(id), work }),
            Added::Fired(ticket) => {
                self.actions.push_back(Action::Evict { pod: self.pod_ref(id), work, ticket });
            }
        }
    }

    fn cancel(&mut self, id: PodId) {
        match self.queue.cancel(&id) {
            Some(entry) if entry.is_armed() => {
                self.actions.push_back(Action::Cancelled { pod: self.pod_ref(id), work: entry.work });
            }
            Some(entry) => self.actions.push_back(Action::Withdrawn { pod: self.pod_ref(id), ticket: entry.ticket }),
            None => {}
        }
    }
}
