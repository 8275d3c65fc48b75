//! `plan`: reconstruct a history from a snapshot and replay the engine over it on a virtual clock.
//!
//! A snapshot has no history, so the replay infers one (contract §2): each NoExecute taint is observed
//! at its `timeAdded` (clamped to `now`; at `now` without one), each pod is bound at its `PodScheduled`
//! transition or creation (clamped; before everything without either), and the controller restarts
//! at the `kube-controller-manager` Lease's `acquireTime`. The engine sees those events in time order
//! (ties: timers due, restart, node passes, pod passes by namespace/name), then the what-if taints as
//! one node pass at `now`. The first deletion a pod's work fires is its result.

use std::collections::{BTreeMap, HashMap};

use super::model::{Effect, Node, NodeName, Pod, PodKey, Taint, Uid};
use super::queue::{Cause, Work};
use super::time::Timestamp;
use super::tolerate::untolerated;
use super::{Action, Engine, Input};

/// Everything `plan` reads from a cluster or a dump.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    /// Every node read.
    pub nodes: Vec<SnapshotNode>,
    /// Every pod read.
    pub pods: Vec<SnapshotPod>,
    /// `spec.acquireTime` of the `kube-system/kube-controller-manager` Lease, when it was read.
    pub controller_acquired: Option<Timestamp>,
}

impl Snapshot {
    /// Adds `other`'s objects to this snapshot (a later Lease wins).
    pub fn merge(&mut self, other: Snapshot) {
        self.nodes.extend(other.nodes);
        self.pods.extend(other.pods);
        self.controller_acquired = other.controller_acquired.or(self.controller_acquired);
    }
}

/// A node in a snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SnapshotNode {
    /// Its name.
    pub name: NodeName,
    /// `metadata.labels`, for `-l` on a dump.
    pub labels: BTreeMap<String, String>,
    /// `spec.taints`, every effect, in order.
    pub taints: Vec<Taint>,
}

/// A pod in a snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SnapshotPod {
    /// The engine's view of the pod.
    pub pod: Pod,
    /// When it was bound to its node: the `PodScheduled=True` transition, else its creation.
    pub bound_at: Option<Timestamp>,
    /// `status.phase`.
    pub phase: String,
    /// Whether `metadata.deletionTimestamp` is set.
    pub terminating: bool,
}

/// A hypothetical change applied to every selected node at `now`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WhatIf {
    /// Add the taint, or replace the one with the same key and effect (`timeAdded` = `now`).
    Taint(Taint),
    /// Remove the taints with this key (and effect, when given).
    RemoveTaint {
        /// The taint key.
        key: String,
        /// Only this effect; every effect when `None`.
        effect: Option<Effect>,
    },
}

/// What the replay predicts for one pod.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    /// Some NoExecute taint is untolerated: deleted when it was observed.
    EvictNow,
    /// Every taint is tolerated for a finite time: deleted at `evict_at`.
    EvictAt,
    /// The node is tainted and the pod tolerates it forever.
    Never,
    /// The node has no NoExecute taint.
    Unaffected,
}

/// Where a deletion's clock started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Basis {
    /// A taint's `timeAdded`.
    TaintTimeAdded,
    /// The pod's binding (its `PodScheduled` transition or creation).
    PodScheduled,
    /// The controller's restart (its Lease's `acquireTime`).
    ControllerRestart,
    /// The evaluation instant (a taint without `timeAdded`, a clamped time, a what-if).
    Now,
}

/// The prediction for one pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodPlan {
    /// Namespace and name.
    pub key: PodKey,
    /// `metadata.uid`.
    pub uid: Uid,
    /// `status.phase`.
    pub phase: String,
    /// Whether its deletion was already issued.
    pub terminating: bool,
    /// The verdict.
    pub verdict: Verdict,
    /// When the pod is (or was) deleted.
    pub evict_at: Option<Timestamp>,
    /// When the deciding countdown started.
    pub since: Option<Timestamp>,
    /// Where `since` came from.
    pub basis: Option<Basis>,
    /// The deciding `tolerationSeconds` (as written), for [`Verdict::EvictAt`].
    pub toleration_seconds: Option<i64>,
    /// The node's NoExecute taints at `now` that no toleration of the pod tolerates.
    pub untolerated: Vec<Taint>,
    /// `evict_at` is strictly before `now`.
    pub overdue: bool,
}

/// The prediction for one node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodePlan {
    /// The node.
    pub name: NodeName,
    /// Its NoExecute taints at `now` (what-ifs applied).
    pub taints: Vec<Taint>,
    /// Its pods, by (`evict_at`, none last; namespace; name).
    pub pods: Vec<PodPlan>,
}

/// The replay's result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The evaluation instant.
    pub now: Timestamp,
    /// One entry per selected node, in the order given.
    pub nodes: Vec<NodePlan>,
}

impl Plan {
    /// The deletions the plan predicts, as queue work: what `run` seeds its engine with.
    #[must_use]
    pub fn work(&self) -> Vec<(PodKey, Work)> {
        let pods = self.nodes.iter().flat_map(|node| &node.pods);
        pods.filter_map(|pod| {
            let cause = match pod.verdict {
                Verdict::EvictNow => Cause::Untolerated,
                Verdict::EvictAt => Cause::Expired { seconds: pod.toleration_seconds? },
                Verdict::Never | Verdict::Unaffected => return None,
            };
            Some((pod.key.clone(), Work { created: pod.since?, fire: pod.evict_at?, cause }))
        })
        .collect()
    }
}

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

/// Replays the engine over `snapshot` for the nodes named by `selected` (indices into
/// `snapshot.nodes`, in output order), applies `what_if` at `now`, and reports every pod on them.
#[must_use]
pub fn replay(snapshot: &Snapshot, selected: &[usize], what_if: &[WhatIf], now: Timestamp) -> Plan {
    let nodes: Vec<&SnapshotNode> = selected.iter().map(|&i| &snapshot.nodes[i]).collect();
    let by_name: HashMap<&NodeName, usize> = nodes.iter().enumerate().map(|(i, n)| (&n.name, i)).collect();
    let pods: Vec<(usize, usize)> =
        snapshot.pods.iter().enumerate().filter_map(|(i, p)| Some((i, *by_name.get(p.pod.node.as_ref()?)?))).collect();

    // The timeline: (instant, step, the taints a node pass sees, the basis of work created there).
    let mut timeline: Vec<(Timestamp, Step, Basis)> = Vec::new();
    if let Some(acquired) = snapshot.controller_acquired {
        timeline.push((acquired.min(now), Step::Restart, Basis::ControllerRestart));
    }
    for (i, node) in nodes.iter().enumerate() {
        let mut seen: Vec<(Timestamp, Basis)> =
            node.taints.iter().filter(|t| t.is_no_execute()).map(|t| observed(t, now)).collect();
        seen.sort_unstable_by_key(|(at, basis)| (*at, *basis != Basis::TaintTimeAdded));
        seen.dedup_by_key(|(at, _)| *at);
        timeline.extend(seen.into_iter().map(|(at, basis)| (at, Step::NodePass(i), basis)));
    }
    for &(i, _) in &pods {
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

    let mut replay = Replayer::default();
    for (at, step, basis) in timeline {
        let input = match step {
            Step::Restart => Input::ControllerRestarted,
            Step::NodePass(i) => Input::NodeUpserted(Node {
                name: nodes[i].name.clone(),
                taints: nodes[i]
                    .taints
                    .iter()
                    .filter(|t| t.is_no_execute() && observed(t, now).0 <= at)
                    .cloned()
                    .collect(),
            }),
            Step::PodBound(i) => Input::PodUpserted(snapshot.pods[i].pod.clone()),
        };
        replay.step(input, at, basis);
    }

    let final_taints: Vec<Vec<Taint>> = nodes.iter().map(|n| apply_what_if(&n.taints, what_if, now)).collect();
    if !what_if.is_empty() {
        for (node, taints) in nodes.iter().zip(&final_taints) {
            replay.step(Input::NodeUpserted(Node { name: node.name.clone(), taints: taints.clone() }), now, Basis::Now);
        }
    }
    replay.engine.handle_timeout(now);
    replay.drain(Basis::Now);

    let mut plans: Vec<NodePlan> = nodes
        .iter()
        .zip(final_taints)
        .map(|(node, taints)| NodePlan {
            name: node.name.clone(),
            taints: taints.into_iter().filter(Taint::is_no_execute).collect(),
            pods: Vec::new(),
        })
        .collect();
    for (i, node) in pods {
        let plan = &mut plans[node];
        plan.pods.push(replay.result(&snapshot.pods[i], &plan.taints, now));
    }
    for plan in &mut plans {
        plan.pods.sort_by(|a, b| {
            (a.evict_at.is_none(), a.evict_at, &a.key).cmp(&(b.evict_at.is_none(), b.evict_at, &b.key))
        });
    }
    Plan { now, nodes: plans }
}

/// When the replay observes a taint, and the basis of work started then.
fn observed(taint: &Taint, now: Timestamp) -> (Timestamp, Basis) {
    match taint.time_added {
        Some(added) if added <= now => (added, Basis::TaintTimeAdded),
        _ => (now, Basis::Now),
    }
}

/// The node's taints (every effect) after the what-ifs.
#[must_use]
pub fn apply_what_if(taints: &[Taint], what_if: &[WhatIf], now: Timestamp) -> Vec<Taint> {
    let mut taints = taints.to_vec();
    for change in what_if {
        match change {
            WhatIf::Taint(new) => {
                let new = new.clone().with_time_added(now);
                match taints.iter_mut().find(|t| t.key == new.key && t.effect == new.effect) {
                    Some(existing) => *existing = new,
                    None => taints.push(new),
                }
            }
            WhatIf::RemoveTaint { key, effect } => {
                taints.retain(|t| t.key != *key || effect.as_ref().is_some_and(|e| *e != t.effect));
            }
        }
    }
    taints
}

/// The engine plus a mirror of its work, each item tagged with where its clock started.
#[derive(Default)]
struct Replayer {
    engine: Engine,
    pending: HashMap<PodKey, Record>,
    /// Work cancelled during the current step: a reschedule keeps its start, and its basis.
    cancelled: HashMap<PodKey, Record>,
    /// The first deletion of each pod: its result.
    fired: HashMap<PodKey, Record>,
}

impl Replayer {
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

    fn result(&self, pod: &SnapshotPod, taints: &[Taint], now: Timestamp) -> PodPlan {
        let key = &pod.pod.key;
        let record = self.fired.get(key).or_else(|| self.pending.get(key));
        let (verdict, toleration_seconds) = match record.map(|r| r.work.cause) {
            Some(Cause::Untolerated) => (Verdict::EvictNow, None),
            Some(Cause::Expired { seconds }) => (Verdict::EvictAt, Some(seconds)),
            None if taints.is_empty() => (Verdict::Unaffected, None),
            None => (Verdict::Never, None),
        };
        let evict_at = record.map(|r| r.work.fire);
        PodPlan {
            key: key.clone(),
            uid: pod.pod.uid.clone(),
            phase: pod.phase.clone(),
            terminating: pod.terminating,
            verdict,
            evict_at,
            since: record.map(|r| r.work.created),
            basis: record.map(|r| r.basis),
            toleration_seconds,
            untolerated: untolerated(taints, &pod.pod.tolerations).cloned().collect(),
            overdue: evict_at.is_some_and(|at| at < now),
        }
    }
}
