//! `plan`: reconstruct a history from a snapshot and replay the engine over it on a virtual clock.
//!
//! A snapshot has no history, so the replay infers one (docs/plan.md): each NoExecute taint is observed
//! at its `timeAdded`; without one, when the node's `managedFields` say its taints were written;
//! without either, at `now` (each clamped to `now`). Each pod is bound at its `PodScheduled`
//! transition or creation (clamped; before everything without either), and the controller restarts
//! at the `kube-controller-manager` Lease's `acquireTime`. The engine sees those events in time order
//! (ties: timers due, restart, node passes, pod passes by namespace/name), then the what-if taints as
//! one node pass at `now`. The first deletion a pod's work fires is its result.

use std::collections::{HashMap, HashSet};
use std::hash::BuildHasher;
use std::ops::Range;
use std::sync::Arc;

use super::hash::{FxBuild, HashKey, Keyed};
use super::model::{Node, NodeName, PodKey, Taint, Toleration, no_execute};
use super::plan::{Basis, NodePlan, Plan, PodPlan, Verdict, pod_order, sort_pods};
use super::queue::{Cause, Work};
use super::snapshot::{Snapshot, SnapshotNode, SnapshotPod, TaintsWritten, WhatIf, apply_what_if};
use super::time::{NANOS_PER_SECOND, Timestamp};
use super::tolerate::untolerated;
use crate::engine::{Action, Engine, Input, Shared};

/// Before every instant a snapshot can carry: pods with no binding time are bound then.
const BEGINNING: Timestamp = Timestamp::from_nanos(i128::MIN / 2);

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    Restart,
    /// Index into the selected nodes, and the taints observed by then.
    NodePass(usize),
    /// Index into the snapshot's pods.
    PodBound(usize),
}

/// A work item and where its clock started.
#[derive(Clone, Copy)]
struct Record {
    work: Work,
    basis: Basis,
}

/// Runs the independent parts of a replay, on whichever threads it has: the engine starts none
/// (docs/architecture.md), so a caller that may use threads supplies them here.
pub trait Parts: Sync {
    /// `run(0)`, …, `run(parts - 1)`, in any order and on any threads, their results returned in the
    /// order of their numbers. Each part is independent of the others.
    fn map<'a>(&self, parts: usize, run: &(dyn Fn(usize) -> Part<'a> + Sync)) -> Vec<Part<'a>>;

    /// `run(0)`, …, `run(parts - 1)`, in any order and on any threads, each independent of the
    /// others (an audit's outages); one after the other unless overridden.
    fn each(&self, parts: usize, run: &(dyn Fn(usize) + Sync)) {
        (0..parts).for_each(run);
    }
}

/// The plans of the nodes of one part of a replay.
#[derive(Debug)]
pub struct Part<'a>(Vec<NodePlan<'a>>);

/// Runs a replay's parts one after the other on the caller's thread.
#[derive(Clone, Copy, Debug, Default)]
pub struct Inline;

impl Parts for Inline {
    fn map<'a>(&self, parts: usize, run: &(dyn Fn(usize) -> Part<'a> + Sync)) -> Vec<Part<'a>> {
        (0..parts).map(run).collect()
    }
}

/// What a replay takes from its caller: who runs its parts, and the key of its keyed hashes (see
/// [`crate::hash`]). The default runs every part inline with the zero key.
#[derive(Clone, Copy)]
pub struct Host<'h> {
    /// Runs the parts.
    pub parts: &'h dyn Parts,
    /// Hashes what the cluster names, in tables that may hold every pod.
    pub key: HashKey,
}

impl Default for Host<'_> {
    fn default() -> Self {
        Self { parts: &Inline, key: HashKey::default() }
    }
}

/// Replays the engine over `snapshot` for the nodes named by `selected` (indices into
/// `snapshot.nodes`, in output order), applies `what_if` at `now`, and reports every pod on them.
/// Its parts run inline, one after the other; [`replay_with`] takes them elsewhere.
#[must_use]
pub fn replay<'a>(snapshot: &'a Snapshot, selected: &[usize], what_if: &[WhatIf], now: Timestamp) -> Plan<'a> {
    replay_with(snapshot, selected, what_if, now, Host::default())
}

/// [`replay`], its parts run by `host.parts` and its tables keyed by `host.key`: the plan is the same
/// whoever runs the parts, in the same order.
///
/// Nodes do not interact: a pod's work depends only on its node's taints and the restart. So each
/// node is replayed on an engine of its own, which keeps every index and sort as small as the
/// node, and a large replay is two parts (each with the nodes of half the pods) that can run at once.
/// That holds while every selected node name and every pod key on them is distinct; otherwise
/// (a pod listed twice, moving between nodes in the replay) one engine replays them all together.
/// Either way each group of nodes goes through `replay_nodes`.
#[must_use]
pub fn replay_with<'a>(
    snapshot: &'a Snapshot,
    selected: &[usize],
    what_if: &[WhatIf],
    now: Timestamp,
    host: Host<'_>,
) -> Plan<'a> {
    replay_in_parts(snapshot, selected, what_if, now, host, None, REPLAY_IN_TWO_FROM, CHUNK)
}

/// [`replay_with`], the pods of the selected nodes taken from `pods` (found once for many replays)
/// rather than found again: the same plan.
#[must_use]
pub fn replay_found<'a>(
    snapshot: &'a Snapshot,
    selected: &[usize],
    what_if: &[WhatIf],
    now: Timestamp,
    host: Host<'_>,
    pods: &PodsByNode,
) -> Plan<'a> {
    replay_in_parts(snapshot, selected, what_if, now, host, Some(pods), REPLAY_IN_TWO_FROM, CHUNK)
}

/// The pods of every node of a snapshot, found once for the many replays of a few nodes each that
/// an audit makes (docs/audit.md): each replay takes its nodes' pods from here, in the order it
/// would have found them.
#[derive(Clone, Debug)]
pub struct PodsByNode {
    /// The pods' indices, node after node (node `i`'s are `order[starts[i]..starts[i + 1]]`).
    order: Vec<usize>,
    starts: Vec<usize>,
}

impl PodsByNode {
    /// The pods of `snapshot`'s nodes; `None` when a node name or a pod key repeats (each replay
    /// then finds its own, as [`replay_with`] does).
    #[must_use]
    pub fn new(snapshot: &Snapshot, key: HashKey) -> Option<Self> {
        let nodes: Vec<&SnapshotNode> = snapshot.nodes.iter().collect();
        let (order, starts) = pods_by_node(snapshot, &nodes, key)?;
        Some(Self { order, starts })
    }

    /// The pods of the nodes `selected` (indices into the snapshot's nodes), as `pods_by_node` finds
    /// them for those nodes; `None` when a node repeats, as there.
    fn of(&self, selected: &[usize]) -> Option<(Vec<usize>, Vec<usize>)> {
        let mut sorted = selected.to_vec();
        sorted.sort_unstable();
        if sorted.windows(2).any(|pair| pair[0] == pair[1]) {
            return None;
        }
        let mut order = Vec::new();
        let mut starts = Vec::with_capacity(selected.len() + 1);
        starts.push(0);
        for &i in selected {
            order.extend_from_slice(&self.order[self.starts[i]..self.starts[i + 1]]);
            starts.push(order.len());
        }
        Some((order, starts))
    }
}

/// How many pods of one node an engine replays at most: the pods of a node do not interact either,
/// so a node with more is replayed a chunk at a time, and the engine's tables stay that small.
const CHUNK: usize = 4096;

/// How many pods make [`replay_with`] split its nodes into two parts.
const REPLAY_IN_TWO_FROM: usize = 20_000;

/// [`replay_with`], in two parts from `in_two_from` pods on, `chunk` pods of a node at a time.
#[allow(clippy::too_many_arguments)]
fn replay_in_parts<'a>(
    snapshot: &'a Snapshot,
    selected: &[usize],
    what_if: &[WhatIf],
    now: Timestamp,
    host: Host<'_>,
    found: Option<&PodsByNode>,
    in_two_from: usize,
    chunk: usize,
) -> Plan<'a> {
    let nodes: Vec<&SnapshotNode> = selected.iter().map(|&i| &snapshot.nodes[i]).collect();
    let pods = match found {
        Some(found) => found.of(selected),
        None => pods_by_node(snapshot, &nodes, host.key),
    };
    let Some((order, starts)) = pods else {
        let pods = pods_on(snapshot, &nodes, host.key);
        let mut shared = Shared::with_key(host.key);
        let plans =
            replay_nodes(snapshot, &nodes, &pods, what_if, now, &mut Vec::new(), &mut shared, Keyed::new(host.key));
        return Plan { now, nodes: plans, zones: None, device_taints: None, owners: None, assumed: None };
    };
    // The nodes of `range`, one engine each, handing the interned values on.
    let replay_range = |range: Range<usize>| {
        let (mut steps, mut pods, mut shared) = (Vec::new(), Vec::new(), Shared::with_key(host.key));
        let mut plans: Vec<NodePlan> = Vec::with_capacity(range.len());
        for i in range {
            let on_node = &order[starts[i]..starts[i + 1]];
            let mut parts = on_node.chunks(chunk);
            // A node without pods is replayed once too, for its plan.
            let first = parts.next().unwrap_or_default();
            let at = plans.len();
            for part in std::iter::once(first).chain(parts) {
                pods.clear();
                pods.extend(part.iter().map(|&pod| (pod, 0)));
                let replayed = replay_nodes(
                    snapshot,
                    &[nodes[i]],
                    &pods,
                    what_if,
                    now,
                    &mut steps,
                    &mut shared,
                    FxBuild::default(),
                );
                // One node: one plan, the first part's, which the others' pods join.
                match plans.get_mut(at) {
                    Some(plan) => plan.pods.extend(replayed.into_iter().flat_map(|part| part.pods)),
                    None => {
                        plans.extend(replayed);
                        if let Some(plan) = plans.get_mut(at) {
                            plan.pods.reserve_exact(on_node.len() - plan.pods.len());
                        }
                    }
                }
            }
            if on_node.len() > chunk
                && let Some(plan) = plans.get_mut(at)
            {
                // The keys are distinct here, so the order is total: sorted in place, without
                // the stable sort's buffer of half the node's plans.
                plan.pods.sort_unstable_by(pod_order);
            }
        }
        Part(plans)
    };
    let cut = if order.len() < in_two_from || nodes.len() < 2 {
        nodes.len()
    } else {
        // Two parts, each with the nodes of about half the pods; the plans are the same either way.
        starts.partition_point(|&start| start < order.len() / 2).clamp(1, nodes.len() - 1)
    };
    let ranges: Vec<Range<usize>> = [0..cut, cut..nodes.len()].into_iter().filter(|part| !part.is_empty()).collect();
    let parts = host.parts.map(ranges.len(), &|i| replay_range(ranges[i].clone()));
    assert_eq!(parts.len(), ranges.len(), "a replay's parts are run once each");
    let mut parts = parts.into_iter();
    let mut plans = parts.next().map_or_else(Vec::new, |part| part.0);
    for part in parts {
        plans.extend(part.0);
    }
    Plan { now, nodes: plans, zones: None, device_taints: None, owners: None, assumed: None }
}

/// Every pod on `nodes`, in snapshot order: (its index in the snapshot, its node's in `nodes`).
fn pods_on(snapshot: &Snapshot, nodes: &[&SnapshotNode], key: HashKey) -> Vec<(usize, usize)> {
    let mut by_name = HashMap::with_capacity_and_hasher(nodes.len(), Keyed::new(key));
    by_name.extend(nodes.iter().enumerate().map(|(i, n)| (&n.name, i)));
    snapshot.pods.iter().enumerate().filter_map(|(i, p)| Some((i, *by_name.get(p.pod.node.as_ref()?)?))).collect()
}

/// The indices of the pods on each node, node after node in snapshot order (node `i`'s are
/// `order[starts[i]..starts[i + 1]]`); `None` when a node name or a pod key repeats.
fn pods_by_node(snapshot: &Snapshot, nodes: &[&SnapshotNode], key: HashKey) -> Option<(Vec<usize>, Vec<usize>)> {
    let mut by_name: HashMap<&NodeName, usize, Keyed> = HashMap::with_capacity_and_hasher(nodes.len(), Keyed::new(key));
    for (i, node) in nodes.iter().enumerate() {
        if by_name.insert(&node.name, i).is_some() {
            return None;
        }
    }
    let mut node_of = Vec::with_capacity(snapshot.pods.len());
    let mut counts = vec![0; nodes.len() + 1];
    for (i, pod) in snapshot.pods.iter().enumerate() {
        if let Some(&node) = pod.pod.node.as_ref().and_then(|name| by_name.get(name)) {
            node_of.push((i, node));
            counts[node + 1] += 1;
        }
    }
    if !distinct_keys(snapshot, &node_of, key) {
        return None;
    }
    for i in 1..counts.len() {
        counts[i] += counts[i - 1];
    }
    let starts = counts.clone();
    let mut order = vec![0; node_of.len()];
    for (pod, node) in node_of {
        order[counts[node]] = pod;
        counts[node] += 1;
    }
    Some((order, starts))
}

/// Whether the pods keys are all different. Dumps list pods by namespace and name, so that is
/// usually one comparison per pod.
fn distinct_keys(snapshot: &Snapshot, pods: &[(usize, usize)], hash: HashKey) -> bool {
    let key = |&(i, _): &(usize, usize)| &snapshot.pods[i].pod.key;
    if pods.windows(2).all(|pair| key(&pair[0]) < key(&pair[1])) {
        return true;
    }
    let mut keys = HashSet::with_capacity_and_hasher(pods.len(), Keyed::new(hash));
    pods.iter().all(|pod| keys.insert(key(pod)))
}

/// The timeline of one node, or of all the selected nodes: (instant, step, the basis of work created
/// then). `pods` are indices into the snapshot's pods.
fn timeline(
    snapshot: &Snapshot,
    nodes: &[&SnapshotNode],
    pods: impl Iterator<Item = usize>,
    now: Timestamp,
    timeline: &mut Vec<(Timestamp, Step, Basis)>,
) {
    timeline.clear();
    if let Some(acquired) = snapshot.controller_acquired {
        timeline.push((acquired.min(now), Step::Restart, Basis::ControllerRestart));
    }
    for (i, node) in nodes.iter().enumerate() {
        let mut seen: Vec<(Timestamp, Basis)> =
            node.taints.iter().filter(|t| t.is_no_execute()).map(|t| observed(t, node, snapshot.taken, now)).collect();
        // At one instant, the firmest basis names the pass: `timeAdded`, then a write, then `now`.
        let firmness = |basis: &Basis| match basis {
            Basis::TaintTimeAdded => 0,
            Basis::TaintWritten | Basis::TaintRewritten => 1,
            _ => 2,
        };
        seen.sort_unstable_by_key(|(at, basis)| (*at, firmness(basis)));
        seen.dedup_by_key(|(at, _)| *at);
        timeline.extend(seen.into_iter().map(|(at, basis)| (at, Step::NodePass(i), basis)));
    }
    for i in pods {
        let (at, basis) = match snapshot.pods[i].bound_at {
            Some(bound) if bound <= now => (bound, Basis::PodScheduled),
            Some(_) => (now, Basis::Now),
            None => (BEGINNING, Basis::PodScheduled),
        };
        timeline.push((at, Step::PodBound(i), basis));
    }
    timeline.sort_by(|(a, sa, _), (b, sb, _)| {
        a.cmp(b).then_with(|| match (sa, sb) {
            (Step::PodBound(x), Step::PodBound(y)) => snapshot.pods[*x].pod.key.cmp(&snapshot.pods[*y].pod.key),
            _ => sa.cmp(sb),
        })
    });
}

/// Feeds a timeline to the engine.
fn run<S: BuildHasher>(
    replay: &mut Replayer<S>,
    snapshot: &Snapshot,
    nodes: &[&SnapshotNode],
    timeline: &[(Timestamp, Step, Basis)],
    now: Timestamp,
) {
    for &(at, step, basis) in timeline {
        let input = match step {
            Step::Restart => Input::ControllerRestarted,
            Step::NodePass(i) => {
                let all = &nodes[i].taints;
                let seen = |t: &&Taint| t.is_no_execute() && observed(t, nodes[i], snapshot.taken, now).0 <= at;
                // Usually the whole list by the last pass: then the node's own list is shared.
                let taints = if all.iter().all(|t| seen(&t)) {
                    Arc::clone(all)
                } else {
                    all.iter().filter(seen).cloned().collect::<Vec<_>>().into()
                };
                Input::NodeUpserted(Node { name: nodes[i].name.clone(), taints })
            }
            Step::PodBound(i) => Input::PodUpserted(snapshot.pods[i].pod.clone()),
        };
        replay.step(input, at, basis);
    }
}

/// Replays `nodes` on one engine with `pods` ((index in the snapshot, index in `nodes`), in snapshot
/// order): the one replay path, for one node or for all of them. `hasher` hashes pod keys (see
/// [`Replayer`]).
#[allow(clippy::too_many_arguments)]
fn replay_nodes<'a, S: BuildHasher + Clone>(
    snapshot: &'a Snapshot,
    nodes: &[&SnapshotNode],
    pods: &[(usize, usize)],
    what_if: &[WhatIf],
    now: Timestamp,
    steps: &mut Vec<(Timestamp, Step, Basis)>,
    values: &mut Shared,
    hasher: S,
) -> Vec<NodePlan<'a>> {
    timeline(snapshot, nodes, pods.iter().map(|&(i, _)| i), now, steps);
    let key = values.key;
    let mut replay =
        Replayer::new(Engine::with_shared(std::mem::replace(values, Shared::with_key(key))), pods.len(), hasher);
    run(&mut replay, snapshot, nodes, steps, now);

    let final_taints: Vec<Arc<[Taint]>> = nodes.iter().map(|n| apply_what_if(&n.taints, what_if, now)).collect();
    if !what_if.is_empty() {
        for (node, taints) in nodes.iter().zip(&final_taints) {
            let taints = Arc::clone(taints);
            replay.step(Input::NodeUpserted(Node { name: node.name.clone(), taints }), now, Basis::Now);
        }
    }
    replay.engine.handle_timeout(now);
    replay.drain(Basis::Now);

    let mut plans: Vec<NodePlan> = nodes
        .iter()
        .zip(final_taints)
        .map(|(node, taints)| NodePlan {
            name: node.name.clone(),
            taints_written: node.taints_written.clone().filter(|_| taints.iter().any(|t| t.time_added.is_none())),
            taints: no_execute(taints),
            pods: Vec::new(),
            lifecycle: None,
        })
        .collect();
    let mut counts = vec![0; plans.len()];
    for &(_, node) in pods {
        counts[node] += 1;
    }
    for (plan, count) in plans.iter_mut().zip(counts) {
        plan.pods.reserve_exact(count);
    }
    let mut shared = Untolerated::default();
    for &(i, node) in pods {
        let plan = &mut plans[node];
        plan.pods.push(replay.result(&snapshot.pods[i], &plan.taints, now, &mut shared));
    }
    for plan in &mut plans {
        sort_pods(&mut plan.pods);
    }
    *values = replay.engine.into_shared();
    plans
}

/// When the replay observes a taint of `node`, and the basis of work started then: its `timeAdded`;
/// without one, when the node's taints were last written (`managedFields`); else when a dump read
/// late was `taken`, or `now`.
///
/// A write recorded over the taint's own ([`rewritten`]): the taint was there before it, and is
/// observed a nanosecond before, so that the countdown it began is kept when the write's taint
/// comes (the latest it can have begun; [`Basis::TaintRewritten`]).
fn observed(taint: &Taint, node: &SnapshotNode, taken: Option<Timestamp>, now: Timestamp) -> (Timestamp, Basis) {
    match (taint.time_added, &node.taints_written, taken) {
        (Some(added), _, _) if added <= now => (added, Basis::TaintTimeAdded),
        (None, Some(written), _) if written.at <= now && rewritten(node, written) => {
            (written.at.add_nanos(-1), Basis::TaintRewritten)
        }
        (None, Some(written), _) if written.at <= now => (written.at, Basis::TaintWritten),
        (None, None, Some(taken)) if taken < now => (taken, Basis::InputTaken),
        _ => (now, Basis::Now),
    }
}

/// The manager the node lifecycle controller writes as (its user agent's name).
const LIFECYCLE_MANAGER: &str = "kube-controller-manager";

/// Whether the last write of `node`'s taints (`written`) may be another's than its undated taints':
/// it added a taint with `timeAdded` (within its second: the node lifecycle controller's, which
/// always sets it), it was the node lifecycle controller's, or more than one taint has no
/// `timeAdded` (the write is the last of theirs, not necessarily each one's). A taint list is
/// written whole, so its one record is the last write's (docs/upstream.md). The taints of the
/// node's own keys ([`SYSTEM_PREFIXES`]: put on when the node is made, or by the node lifecycle
/// controller, whose writes are told by their manager) are not among the undated ones counted.
fn rewritten(node: &SnapshotNode, written: &TaintsWritten) -> bool {
    let within = |at: Timestamp| at >= written.at && at < written.at.add_nanos(NANOS_PER_SECOND);
    let dated = node.all_taints().any(|taint| taint.time_added.is_some_and(within));
    let system = |taint: &Taint| SYSTEM_PREFIXES.iter().any(|prefix| taint.key.starts_with(prefix));
    let undated = node.all_taints().filter(|taint| taint.time_added.is_none() && !system(taint)).count();
    dated || &*written.manager == LIFECYCLE_MANAGER || undated > 1
}

/// The key prefixes of the taints a node is made with or its controllers keep (`not-ready`,
/// `unschedulable`, kubeadm's `control-plane`): never a later hand-made write.
const SYSTEM_PREFIXES: [&str; 2] = ["node.kubernetes.io/", "node-role.kubernetes.io/"];

/// The untolerated taints of each (taints, tolerations) pair met: the pods of a node mostly share
/// their tolerations (a workload's template), and so their untolerated taints.
#[derive(Default)]
struct Untolerated {
    /// By the addresses of the taint list and the toleration list (alive for the whole replay).
    lists: HashMap<(usize, usize), Arc<[Taint]>, FxBuild>,
}

impl Untolerated {
    fn get(&mut self, taints: &Arc<[Taint]>, tolerations: &Arc<[Toleration]>) -> Arc<[Taint]> {
        let key = (taints.as_ptr() as usize, Arc::as_ptr(tolerations).cast::<Toleration>() as usize);
        let list = self.lists.entry(key).or_insert_with(|| {
            // Counted first, so that the list is allocated once, at its size (a node may carry
            // very many taints), or not at all when no taint is tolerated.
            let count = untolerated(taints, tolerations).count();
            if count == taints.len() {
                return Arc::clone(taints);
            }
            let mut each = untolerated(taints, tolerations);
            (0..count).map(|_| each.next().cloned().expect("the taints just counted")).collect()
        });
        Arc::clone(list)
    }
}

/// The engine plus a mirror of its work, each item tagged with where its clock started.
///
/// `S` hashes pod keys: the keyed hasher when the tables hold every pod, the unkeyed one when they
/// hold one node's (a chunk at most).
struct Replayer<S> {
    engine: Engine,
    pending: HashMap<PodKey, Record, S>,
    /// Work cancelled during the current step: a reschedule keeps its start, and its basis.
    cancelled: HashMap<PodKey, Record, S>,
    /// The first deletion of each pod: its result.
    fired: HashMap<PodKey, Record, S>,
}

impl<S: BuildHasher + Clone> Replayer<S> {
    /// A replayer of `engine`, with room for the work of `pods` pods, hashing their keys with `hasher`.
    fn new(engine: Engine, pods: usize, hasher: S) -> Self {
        Self {
            engine,
            pending: HashMap::with_capacity_and_hasher(pods, hasher.clone()),
            cancelled: HashMap::with_hasher(hasher.clone()),
            fired: HashMap::with_capacity_and_hasher(pods, hasher),
        }
    }
}

impl<S: BuildHasher> Replayer<S> {
    fn step(&mut self, input: Input, at: Timestamp, basis: Basis) {
        self.engine.handle(input, at);
        self.drain(basis);
    }

    fn drain(&mut self, basis: Basis) {
        self.cancelled.clear();
        while let Some(action) = self.engine.poll_action() {
            match action {
                Action::Scheduled { pod, work } => {
                    let basis = match self.cancelled.get(&pod.key) {
                        Some(old) if old.work.created == work.created => old.basis,
                        _ => basis,
                    };
                    self.pending.insert(pod.key, Record { work, basis });
                }
                Action::Cancelled { pod, .. } => {
                    if let Some(record) = self.pending.remove(&pod.key) {
                        self.cancelled.insert(pod.key, record);
                    }
                }
                Action::Withdrawn { .. } => {}
                Action::Evict { pod, work, .. } => {
                    let record = match self.pending.remove(&pod.key) {
                        Some(record) if record.work == work => record,
                        _ => Record { work, basis },
                    };
                    // First deletion wins: the pod should already be gone, later events change nothing.
                    self.fired.entry(pod.key).or_insert(record);
                }
            }
        }
    }

    fn result<'a>(
        &self,
        pod: &'a SnapshotPod,
        taints: &Arc<[Taint]>,
        now: Timestamp,
        shared: &mut Untolerated,
    ) -> PodPlan<'a> {
        let key = &pod.pod.key;
        let record = self.fired.get(key).or_else(|| self.pending.get(key));
        let (verdict, toleration_seconds) = match record.map(|r| r.work.cause) {
            Some(Cause::Untolerated) => (Verdict::EvictNow, None),
            Some(Cause::Expired { seconds }) => (Verdict::EvictAt, Some(seconds)),
            None if taints.is_empty() => (Verdict::Unaffected, None),
            None => (Verdict::Never, None),
        };
        let mut evict_at = record.map(|r| r.work.fire);
        let mut evict_at_latest = None;
        if let Some(work) = record.filter(|r| r.basis == Basis::TaintRewritten).map(|r| r.work) {
            // Begun before the write (at its latest), and no earlier than the pod's binding.
            let earliest = pod.bound_at.filter(|&bound| bound < work.created).unwrap_or(work.created);
            evict_at_latest = Some(work.fire);
            evict_at = Some(earliest.add_nanos(i64::try_from(work.fire.nanos_since(work.created)).unwrap_or(i64::MAX)));
        }
        PodPlan {
            pod,
            verdict,
            evict_at,
            evict_at_latest,
            since: record.map(|r| r.work.created),
            basis: record.map(|r| r.basis),
            toleration_seconds,
            untolerated: shared.get(taints, &pod.pod.tolerations),
            overdue: evict_at.is_some_and(|at| at < now),
            stuck: false,
            tolerations_edited: None,
            devices: None,
        }
    }
}

#[cfg(test)]
mod tests {
    //! Replaying node by node against replaying every node on one engine.

    use std::sync::Arc;

    use proptest::prelude::*;

    use super::*;
    use std::collections::BTreeMap;

    use crate::model::{Effect, Operator, Pod, Toleration, Uid};

    const NOW: i64 = 10_000;

    #[test]
    fn pods_with_the_same_tolerations_share_their_untolerated_taints() {
        let tolerations: Arc<[Toleration]> = Arc::from([]);
        let pod = |name: &str| SnapshotPod {
            pod: Pod {
                key: PodKey::new("d", name),
                uid: Uid::from(name),
                node: Some(NodeName::from("n")),
                tolerations: Arc::clone(&tolerations),
            },
            bound_at: None,
            phase: Arc::from("Running"),
            terminating: false,
            deletion_timestamp: None,
            ready: crate::snapshot::PodReady::No,
            claims: None,
            owner: None,
            tolerations_edited: None,
        };
        let snapshot = Snapshot {
            nodes: vec![SnapshotNode::new(
                NodeName::from("n"),
                BTreeMap::new(),
                [Taint::new("k", "", Effect::NoExecute)],
            )],
            pods: vec![pod("a"), pod("b")],
            controller_acquired: None,
            taken: None,
            ..Snapshot::default()
        };
        let plan = replay(&snapshot, &[0], &[], at(NOW));
        let [a, b] = [&plan.nodes[0].pods[0], &plan.nodes[0].pods[1]];
        assert_eq!(a.untolerated.len(), 1);
        assert!(Arc::ptr_eq(&a.untolerated, &b.untolerated));
        // Every taint is NoExecute and untolerated: the node's own list, not a copy of it (a node
        // may carry very many).
        assert!(Arc::ptr_eq(&plan.nodes[0].taints, &snapshot.nodes[0].taints));
        assert!(Arc::ptr_eq(&a.untolerated, &snapshot.nodes[0].taints));
    }

    #[test]
    fn a_nodes_no_execute_taints_are_shared_beside_other_effects() {
        let taints = [
            Taint::new("s", "", Effect::NoSchedule),
            Taint::new("k", "", Effect::NoExecute),
            Taint::new("p", "", Effect::PreferNoSchedule),
            Taint::new("l", "", Effect::NoExecute),
        ];
        let node = SnapshotNode::new(NodeName::from("n"), BTreeMap::new(), taints.clone());
        assert_eq!(&*node.taints, &[taints[1].clone(), taints[3].clone()]);
        assert_eq!(&*node.other_taints, &[taints[0].clone(), taints[2].clone()]);
        let snapshot = Snapshot {
            nodes: vec![node],
            pods: Vec::new(),
            controller_acquired: None,
            taken: None,
            ..Snapshot::default()
        };
        let plan = replay(&snapshot, &[0], &[], at(NOW));
        // Held once: a node may carry very many taints of mixed effects.
        assert!(Arc::ptr_eq(&plan.nodes[0].taints, &snapshot.nodes[0].taints));
    }

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_unix_seconds(seconds)
    }

    fn instant() -> impl Strategy<Value = Option<Timestamp>> {
        prop::option::weighted(0.9, (NOW - 700..NOW + 100).prop_map(at))
    }

    fn taint() -> impl Strategy<Value = Taint> {
        let effect = prop_oneof![3 => Just(Effect::NoExecute), 1 => Just(Effect::NoSchedule)];
        (prop::sample::select(&["a", "b", "c"][..]), effect, instant())
            .prop_map(|(key, effect, added)| Taint { time_added: added, ..Taint::new(key, "", effect) })
    }

    fn toleration() -> impl Strategy<Value = Toleration> {
        let seconds = prop::option::of(prop_oneof![Just(0i64), Just(60), Just(300), Just(600)]);
        (prop::sample::select(&["a", "b", ""][..]), prop::option::of(Just(Effect::NoExecute)), seconds).prop_map(
            |(key, effect, seconds)| Toleration {
                key: key.into(),
                operator: Operator::Exists,
                value: Box::default(),
                effect,
                seconds,
            },
        )
    }

    fn snapshot() -> impl Strategy<Value = Snapshot> {
        let node = prop::collection::vec(taint(), 0..4);
        let pod = (
            prop::sample::select(&["web", "db"][..]),
            // Now and then a name given before: the same pod listed twice.
            prop::option::weighted(0.03, 0..3usize),
            0..5usize,
            prop::collection::vec(toleration(), 0..3),
            instant(),
            any::<bool>(),
        );
        (
            prop::collection::vec(node, 1..5),
            prop::collection::vec(pod, 0..30),
            prop::option::weighted(0.3, (NOW - 900..NOW + 100).prop_map(at)),
            prop::option::weighted(0.3, (NOW - 900..NOW + 100).prop_map(at)),
        )
            .prop_map(|(nodes, pods, controller_acquired, taken)| Snapshot {
                taken,
                workloads: Default::default(),
                nodes: nodes
                    .into_iter()
                    .enumerate()
                    .map(|(i, taints)| SnapshotNode::new(NodeName::from(format!("n{i}")), BTreeMap::new(), taints))
                    .collect(),
                pods: pods
                    .into_iter()
                    .enumerate()
                    .map(|(i, (namespace, repeated, node, tolerations, bound_at, terminating))| {
                        (i, repeated.unwrap_or(i), namespace, node, tolerations, bound_at, terminating)
                    })
                    .map(|(_, name, namespace, node, tolerations, bound_at, terminating)| SnapshotPod {
                        pod: Pod {
                            key: PodKey::new(namespace, format!("p{name}")),
                            uid: Uid::from(format!("u{name}")),
                            node: Some(NodeName::from(format!("n{node}"))),
                            tolerations: Arc::from(tolerations),
                        },
                        bound_at,
                        phase: "Running".into(),
                        terminating,
                        deletion_timestamp: None,
                        ready: crate::snapshot::PodReady::No,
                        claims: None,
                        owner: None,
                        tolerations_edited: None,
                    })
                    .collect(),
                controller_acquired,
            })
    }

    /// Every selected node on one engine: what [`replay`] gives when it cannot split by node, and
    /// what it must give when it can.
    fn together<'a>(snapshot: &'a Snapshot, selected: &[usize], what_if: &[WhatIf]) -> Plan<'a> {
        let nodes: Vec<&SnapshotNode> = selected.iter().map(|&i| &snapshot.nodes[i]).collect();
        let pods = pods_on(snapshot, &nodes, HashKey::default());
        let plans = replay_nodes(
            snapshot,
            &nodes,
            &pods,
            what_if,
            at(NOW),
            &mut Vec::new(),
            &mut Shared::default(),
            Keyed::default(),
        );
        Plan { now: at(NOW), nodes: plans, zones: None, device_taints: None, owners: None, assumed: None }
    }

    /// Runs a replay's parts last to first, as a pool of threads may finish them.
    struct Backwards;

    impl Parts for Backwards {
        fn map<'a>(&self, parts: usize, run: &(dyn Fn(usize) -> Part<'a> + Sync)) -> Vec<Part<'a>> {
            let mut done: Vec<Part<'a>> = (0..parts).rev().map(run).collect();
            done.reverse();
            done
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

        #[test]
        fn replaying_node_by_node_predicts_what_one_engine_does(
            snapshot in snapshot(),
            pick in prop::collection::vec(any::<prop::sample::Index>(), 1..5),
            repeat_a_node in prop::bool::weighted(0.05),
            what_if in prop::option::of(taint()),
            in_two_from in prop_oneof![Just(0), Just(usize::MAX)],
            chunk in prop_oneof![Just(usize::MAX), 1..4usize],
            backwards in any::<bool>(),
            key in any::<[u64; 2]>(),
            found_once in any::<bool>(),
        ) {
            let mut selected: Vec<usize> = Vec::new();
            for i in pick.iter().map(|i| i.index(snapshot.nodes.len())) {
                if repeat_a_node || !selected.contains(&i) {
                    selected.push(i);
                }
            }
            let what_if: Vec<WhatIf> = what_if.into_iter().map(WhatIf::Taint).collect();
            // Whoever runs the parts, in whatever order, and whatever the key: the same plan.
            let host = Host { parts: if backwards { &Backwards } else { &Inline }, key: HashKey(key) };
            // The pods found for each replay, or once for the snapshot.
            let found = PodsByNode::new(&snapshot, HashKey(key)).filter(|_| found_once);
            let plan =
                replay_in_parts(&snapshot, &selected, &what_if, at(NOW), host, found.as_ref(), in_two_from, chunk);
            prop_assert_eq!(plan, together(&snapshot, &selected, &what_if));
        }
    }

    #[test]
    fn a_pod_plan_holds_the_decision_and_points_at_its_pod() {
        // 96 bytes, and one pointer each for the rare: the device-taint controller's report, a
        // toleration edited mid-countdown.
        assert_eq!(size_of::<PodPlan<'_>>(), 112);
    }

    #[test]
    fn repeated_pod_keys_are_replayed_on_one_engine() {
        let node = |name: &str| {
            let taint = Taint::new("a", "", Effect::NoExecute).with_time_added(at(NOW - 60));
            SnapshotNode::new(NodeName::from(name), BTreeMap::new(), [taint])
        };
        let pod = |node: &str| SnapshotPod {
            pod: Pod {
                key: PodKey::new("web", "api-0"),
                uid: Uid::from("u"),
                node: Some(NodeName::from(node)),
                tolerations: Arc::from([]),
            },
            bound_at: Some(at(NOW - 120)),
            phase: "Running".into(),
            terminating: false,
            deletion_timestamp: None,
            ready: crate::snapshot::PodReady::No,
            claims: None,
            owner: None,
            tolerations_edited: None,
        };
        let snapshot = Snapshot {
            nodes: vec![node("n0"), node("n1")],
            pods: vec![pod("n0"), pod("n1")],
            controller_acquired: None,
            taken: None,
            ..Snapshot::default()
        };
        let nodes: Vec<&SnapshotNode> = snapshot.nodes.iter().collect();
        assert!(pods_by_node(&snapshot, &nodes, HashKey::default()).is_none());
        assert_eq!(replay(&snapshot, &[0, 1], &[], at(NOW)), together(&snapshot, &[0, 1], &[]));
    }

    #[test]
    fn a_taint_without_time_added_counts_from_when_the_node_s_taints_were_written() {
        let toleration = Toleration {
            key: "maint".into(),
            operator: Operator::Exists,
            value: "".into(),
            effect: Some(Effect::NoExecute),
            seconds: Some(30),
        };
        let pod = SnapshotPod {
            pod: Pod {
                key: PodKey::new("web", "api-0"),
                uid: Uid::from("u"),
                node: Some(NodeName::from("n")),
                tolerations: Arc::from([toleration]),
            },
            bound_at: Some(at(NOW - 600)),
            phase: "Running".into(),
            terminating: false,
            deletion_timestamp: None,
            ready: crate::snapshot::PodReady::No,
            claims: None,
            owner: None,
            tolerations_edited: None,
        };
        let taint = Taint::new("maint", "true", Effect::NoExecute);
        let plan_at = |written: Option<i64>, now: i64| {
            let mut node = SnapshotNode::new(NodeName::from("n"), BTreeMap::new(), [taint.clone()]);
            if let Some(written) = written {
                node = node.with_taints_written(at(written), "kubectl-taint");
            }
            let snapshot = Snapshot {
                nodes: vec![node],
                pods: vec![pod.clone()],
                controller_acquired: Some(at(NOW - 3600)),
                taken: None,
                ..Snapshot::default()
            };
            let plan = replay(&snapshot, &[0], &[], at(now));
            let pod = &plan.nodes[0].pods[0];
            (pod.evict_at, pod.since, pod.basis, plan.nodes[0].taints_written.is_some())
        };
        // Written at NOW - 8: asked at NOW, at NOW + 10 and after the deadline, the same deadline.
        for now in [NOW, NOW + 10, NOW + 60] {
            let written = plan_at(Some(NOW - 8), now);
            assert_eq!(written, (Some(at(NOW + 22)), Some(at(NOW - 8)), Some(Basis::TaintWritten), true), "{now}");
        }
        // Without a record, from `now`: a later question, a later answer.
        assert_eq!(plan_at(None, NOW), (Some(at(NOW + 30)), Some(at(NOW)), Some(Basis::Now), false));
        assert_eq!(plan_at(None, NOW + 10).0, Some(at(NOW + 40)));
        // A record after `now` (a skewed clock) is clamped to `now`.
        assert_eq!(plan_at(Some(NOW + 5), NOW).2, Some(Basis::Now));
        // Counted from the controller's restart when that came later.
        let node = SnapshotNode::new(NodeName::from("n"), BTreeMap::new(), [taint.clone()])
            .with_taints_written(at(NOW - 20), "kubectl-taint");
        let snapshot = Snapshot {
            nodes: vec![node],
            pods: vec![pod.clone()],
            controller_acquired: Some(at(NOW - 10)),
            taken: None,
            ..Snapshot::default()
        };
        let plan = replay(&snapshot, &[0], &[], at(NOW));
        assert_eq!(plan.nodes[0].pods[0].evict_at, Some(at(NOW + 20)));
        assert_eq!(plan.nodes[0].pods[0].basis, Some(Basis::ControllerRestart));
    }

    #[test]
    fn a_taint_there_before_a_later_write_of_the_node_s_taints_keeps_its_countdown_and_is_a_window() {
        // A hand-made `lab` taint (no `timeAdded`); later the node lifecycle controller adds
        // `unreachable` at NOW - 60, and its write is the record. The pod tolerates `lab` 600 s and
        // `unreachable` 30 s: the controller kept the countdown `lab` began, before NOW - 60.
        let toleration = |key: &str, seconds| Toleration {
            key: key.into(),
            operator: Operator::Exists,
            value: "".into(),
            effect: Some(Effect::NoExecute),
            seconds: Some(seconds),
        };
        let tolerations = Arc::from([toleration("lab", 600), toleration("node.kubernetes.io/unreachable", 30)]);
        let pod = SnapshotPod {
            bound_at: Some(at(NOW - 3600)),
            ..SnapshotPod::running(
                Pod {
                    key: PodKey::new("web", "g4"),
                    uid: Uid::from("u"),
                    node: Some(NodeName::from("n")),
                    tolerations,
                },
                None,
            )
        };
        let lab = Taint::new("lab", "x", Effect::NoExecute);
        let unreachable =
            Taint::new("node.kubernetes.io/unreachable", "", Effect::NoExecute).with_time_added(at(NOW - 60));
        let plan_of = |taints: Vec<Taint>, manager: &str| {
            let node = SnapshotNode::new(NodeName::from("n"), BTreeMap::new(), taints)
                .with_taints_written(at(NOW - 60), manager);
            let snapshot = Snapshot {
                nodes: vec![node],
                pods: vec![pod.clone()],
                controller_acquired: None,
                taken: None,
                ..Snapshot::default()
            };
            let plan = replay(&snapshot, &[0], &[], at(NOW));
            let pod = &plan.nodes[0].pods[0];
            (pod.verdict, pod.evict_at, pod.evict_at_latest, pod.basis, plan.work()[0].1.fire)
        };
        // The write added a dated taint (and was the controller's): `lab` was there before it; its
        // 600 s countdown ends between the pod's binding + 600 s and the write + 600 s, where `run` acts
        // (never at the write + 30 s, which the write taken as `lab`'s would give).
        let latest = at(NOW - 60).add_nanos(-1).add_nanos(600 * NANOS_PER_SECOND);
        let expected = (Verdict::EvictAt, Some(at(NOW - 3000)), Some(latest), Some(Basis::TaintRewritten), latest);
        assert_eq!(plan_of(vec![lab.clone(), unreachable.clone()], "kube-controller-manager"), expected);
        assert_eq!(plan_of(vec![lab.clone(), unreachable], "other-writer"), expected, "the dated taint alone tells");
        // Two taints without `timeAdded`: the record is the last write of the two, maybe not `lab`'s.
        let other = Taint::new("other", "y", Effect::NoSchedule);
        let (_, earliest, latest, basis, fire) = plan_of(vec![lab.clone(), other], "kubectl-taint");
        let latest_expected = at(NOW - 60).add_nanos(-1).add_nanos(600 * NANOS_PER_SECOND);
        assert_eq!(
            (earliest, latest, basis, fire),
            (Some(at(NOW - 3000)), Some(latest_expected), Some(Basis::TaintRewritten), latest_expected)
        );
        // `lab` alone, written by kubectl: its own write, as before; beside the `not-ready` NoSchedule
        // taint a node is made with, too.
        let (_, at_, latest, basis, _) = plan_of(vec![lab.clone()], "kubectl-taint");
        assert_eq!((at_, latest, basis), (Some(at(NOW + 540)), None, Some(Basis::TaintWritten)));
        let made_with = Taint::new("node.kubernetes.io/not-ready", "", Effect::NoSchedule);
        assert_eq!(plan_of(vec![lab, made_with], "kubectl-taint").3, Some(Basis::TaintWritten));
    }
}
