//! Where features meet: the runtime over random interleavings of taints added and removed,
//! tolerations edited, pods and nodes deleted, watches broken and listed again, with or without
//! `--max-deletions` and `--keep-last-ready`, against the engine fed the same changes as they
//! happened (upstream's controller, watching throughout).

use std::collections::BTreeMap;

use proptest::prelude::*;

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use crate::engine::model::Node;
use crate::engine::model::PodKey;
use crate::engine::snapshot::{PodReady, SnapshotNode, SnapshotPod};
use crate::engine::start::engine_node;
use crate::engine::time::Timestamp;
use crate::engine::{Action, Engine, Input};
use crate::runtime::changes::{NodeChange, PodChange};
use crate::runtime::harness::*;
use crate::runtime::options::{Leadership, Policy, RunOptions};

const NODES: [&str; 2] = ["n1", "n2"];
const PODS: usize = 4;
/// The last instant a change is made, and when `run` stops.
const END: i64 = 80;

#[derive(Clone, Debug)]
enum Op {
    /// A node's NoExecute taints become these keys (added now), or it is deleted (`None`).
    Taints(usize, Option<Vec<&'static str>>),
    /// A pod's toleration of `a` becomes this (`None`: none; `Some(None)`: forever).
    Tolerate(usize, Option<Option<i64>>),
    /// A pod is deleted.
    Delete(usize),
    /// Both watches break, and list again this many seconds later.
    Gap(i64),
    /// A node is relabelled out of `-l`: no longer followed (its next taint change brings it back,
    /// relabelled in).
    Leave(usize),
    /// Leadership is lost, and taken again this many seconds later (a failover and back).
    Failover(i64),
    /// A pod's disruption budget refuses its next evictions, this many (`--mode evict`).
    Refuse(usize, u32),
    /// `run` stops, and another starts from the lists then and what the Lease carries.
    Restart,
}

fn op() -> impl Strategy<Value = Op> {
    let keys = prop::sample::subsequence(vec!["a", "b"], 0..=2);
    let tolerance = prop_oneof![Just(None), Just(Some(None)), (1i64..30).prop_map(|s| Some(Some(s)))];
    prop_oneof![
        4 => (0..NODES.len(), prop::option::weighted(0.85, keys)).prop_map(|(n, t)| Op::Taints(n, t)),
        2 => (0..PODS, tolerance).prop_map(|(p, t)| Op::Tolerate(p, t)),
        1 => (0..PODS).prop_map(Op::Delete),
        1 => (1i64..15).prop_map(Op::Gap),
        1 => (0..NODES.len()).prop_map(Op::Leave),
        1 => (1i64..20).prop_map(Op::Failover),
        1 => (0..PODS, 1u32..4).prop_map(|(p, n)| Op::Refuse(p, n)),
        1 => Just(Op::Restart),
    ]
}

/// The cluster as it is: its nodes and pods.
#[derive(Clone)]
struct World {
    nodes: BTreeMap<usize, SnapshotNode>,
    pods: BTreeMap<usize, SnapshotPod>,
    /// The nodes out of the scope: their changes and their pods' are not reported.
    left: std::collections::BTreeSet<usize>,
    /// When each pod's tolerations were last edited (its `managedFields` entry).
    edited: BTreeMap<usize, i64>,
}

impl World {
    fn start(placement: &[usize]) -> Self {
        let nodes = (0..NODES.len()).map(|n| (n, node(NODES[n], &[]))).collect();
        let pods = placement
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                let pod = pod(&format!("p{i}"), NODES[n], &[("a", Some(10))], -60);
                let owner = crate::engine::snapshot::Owner::new("ReplicaSet", "web", "rs");
                (i, SnapshotPod { owner: Some(owner), ready: PodReady::Yes, ..pod })
            })
            .collect();
        Self { nodes, pods, left: std::collections::BTreeSet::new(), edited: BTreeMap::new() }
    }

    /// Whether pod `p` is on a node out of the scope.
    fn unseen(&self, p: usize) -> bool {
        let on = |n: &usize| self.pods[&p].pod.node.as_ref().is_some_and(|node| node.as_str() == NODES[*n]);
        self.left.iter().any(on)
    }

    /// The nodes and pods a list shows.
    fn listed(&self) -> (NodeChange, PodChange) {
        let (nodes, pods) = self.visible();
        (NodeChange::Listed(nodes), PodChange::Listed(pods))
    }

    fn visible(&self) -> (Vec<SnapshotNode>, Vec<SnapshotPod>) {
        let nodes = self.nodes.iter().filter(|(n, _)| !self.left.contains(n)).map(|(_, node)| node.clone());
        let pods = self.pods.iter().filter(|(p, _)| !self.unseen(**p)).map(|(_, pod)| pod.clone());
        (nodes.collect(), pods.collect())
    }

    /// What a start-up reads of the pods' edited tolerations: when each was written (its
    /// controller's template not read).
    fn edits(&self) -> BTreeMap<PodKey, crate::engine::snapshot::TolerationsWritten> {
        let owner = crate::engine::snapshot::Owner::new("ReplicaSet", "web", "rs");
        self.edited
            .iter()
            .filter_map(|(p, at)| self.pods.get(p).map(|pod| (pod.pod.key.clone(), *at)))
            .map(|(key, at)| {
                let written = crate::engine::snapshot::TaintsWritten { at: t(at), manager: "kubectl-edit".into() };
                let template = crate::engine::snapshot::OwnerTemplate::Unread(owner.clone());
                (key, crate::engine::snapshot::TolerationsWritten { written, template })
            })
            .collect()
    }

    /// Applies `op` at `at`: the changes the watches report.
    fn apply(&mut self, op: &Op, at: i64) -> (Option<NodeChange>, Vec<PodChange>) {
        match op {
            Op::Taints(n, Some(keys)) => {
                let taints: Vec<(&str, i64)> = keys.iter().map(|key| (*key, at)).collect();
                let node = node(NODES[*n], &taints);
                // Back in the scope, or made again: the node joins, and its pods are listed.
                let joins = self.left.remove(n) | self.nodes.insert(*n, node.clone()).is_none();
                let pods = if joins {
                    let on = |pod: &&SnapshotPod| pod.pod.node.as_ref().is_some_and(|on| *on == node.name);
                    self.pods.values().filter(on).map(|pod| PodChange::Applied(pod.clone())).collect()
                } else {
                    Vec::new()
                };
                (Some(NodeChange::Applied(node)), pods)
            }
            Op::Taints(n, None) => {
                let shown = !self.left.remove(n);
                let gone = self.nodes.remove(n).filter(|_| shown);
                (gone.map(|node| NodeChange::Deleted(node.name)), Vec::new())
            }
            Op::Leave(n) => {
                if !self.nodes.contains_key(n) || !self.left.insert(*n) {
                    return (None, Vec::new());
                }
                (Some(NodeChange::Left(NODES[*n].into())), Vec::new())
            }
            Op::Tolerate(p, tolerance) => {
                let unseen = self.pods.contains_key(p) && self.unseen(*p);
                let Some(pod) = self.pods.get_mut(p) else { return (None, Vec::new()) };
                let tolerations: Vec<(&str, Option<i64>)> = tolerance.iter().map(|s| ("a", *s)).collect();
                let edited = crate::runtime::harness::pod(
                    pod.pod.key.name(),
                    pod.pod.node.as_ref().expect("bound").as_str(),
                    &tolerations,
                    -60,
                );
                pod.pod.tolerations = edited.pod.tolerations;
                self.edited.insert(*p, at);
                let change = (!unseen).then(|| PodChange::Applied(pod.clone()));
                (None, change.into_iter().collect())
            }
            Op::Delete(p) => {
                let unseen = self.pods.contains_key(p) && self.unseen(*p);
                let gone = self.pods.remove(p).filter(|_| !unseen);
                (None, gone.map(|pod| PodChange::Deleted(pod.pod.key)).into_iter().collect())
            }
            Op::Gap(_) | Op::Failover(_) | Op::Refuse(..) | Op::Restart => (None, Vec::new()),
        }
    }
}

/// The engine fed every change as it happened, each deletion finished when `run`'s was: when each
/// pod fell due (`Evict`), and when it stopped being due (`Withdrawn`), by name.
fn reference(
    start: &World,
    ops: &[(i64, Op)],
    deleted: &[(String, Timestamp)],
) -> BTreeMap<String, Vec<(Timestamp, Option<Timestamp>)>> {
    let mut engine = Engine::new();
    let mut world = start.clone();
    let mut due: BTreeMap<String, Vec<(Timestamp, Option<Timestamp>)>> = BTreeMap::new();
    let mut tickets = BTreeMap::new();
    let mut drain = |engine: &mut Engine, at: Timestamp, tickets: &mut BTreeMap<String, _>| {
        while let Some(action) = engine.poll_action() {
            match action {
                Action::Evict { pod, ticket, .. } => {
                    tickets.insert(pod.key.name().to_owned(), (pod.key.clone(), ticket));
                    due.entry(pod.key.name().to_owned()).or_default().push((at, None));
                }
                Action::Withdrawn { pod, .. } => {
                    if let Some(last) = due.get_mut(pod.key.name()).and_then(|spells| spells.last_mut()) {
                        last.1.get_or_insert(at);
                    }
                }
                _ => {}
            }
        }
    };
    let nodes: Vec<Node> = world.nodes.values().map(engine_node).collect();
    engine.handle(Input::NodesReplaced(nodes), t(0));
    engine.handle(Input::PodsReplaced(world.pods.values().map(|p| p.pod.clone()).collect()), t(0));
    drain(&mut engine, t(0), &mut tickets);
    // Every instant something happens: a change, a deletion finished, a timer.
    let mut instants: Vec<Timestamp> = ops.iter().map(|(at, _)| t(*at)).chain(deleted.iter().map(|d| d.1)).collect();
    instants.sort();
    instants.dedup();
    let mut next = 0;
    for at in instants {
        while let Some(timer) = engine.poll_timeout().filter(|timer| *timer < at) {
            engine.handle_timeout(timer);
            drain(&mut engine, timer, &mut tickets);
        }
        // At one instant, as `run` takes them: the deletions finished, then node changes, then pods.
        for (name, _) in deleted.iter().filter(|d| d.1 == at) {
            if let Some((key, ticket)) = tickets.remove(name) {
                engine.handle(Input::EvictionFinished { pod: key, ticket }, at);
            }
        }
        while next < ops.len() && t(ops[next].0) == at {
            let (node, pod) = world.apply(&ops[next].1, ops[next].0);
            match node {
                Some(NodeChange::Applied(node)) => engine.handle(Input::NodeUpserted(engine_node(&node)), at),
                Some(NodeChange::Deleted(name)) => engine.handle(Input::NodeDeleted(name), at),
                Some(NodeChange::Left(name)) => engine.handle(Input::NodeLeft(name), at),
                _ => {}
            }
            for pod in pod {
                match pod {
                    PodChange::Applied(pod) => engine.handle(Input::PodUpserted(pod.pod), at),
                    PodChange::Deleted(key) => engine.handle(Input::PodDeleted(key), at),
                    _ => {}
                }
            }
            next += 1;
        }
        engine.handle_timeout(at);
        drain(&mut engine, at, &mut tickets);
    }
    due
}

/// Runs `run` over `ops` (one a second at most, from +1 s), with `options`; its deletions. Each
/// `Restart` stops it and starts another from the lists then and the ledger its Lease carried.
fn run_over(start: &World, ops: &[(i64, Op)], options: RunOptions) -> Vec<(String, Timestamp)> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true).build().unwrap();
    runtime.block_on(async {
        let ledger = crate::runtime::ledger::Ledger::default();
        // The Lease: each count written as soon as it changes.
        let writer = ledger.clone();
        tokio::spawn(async move {
            let mut changes = writer.changes();
            while changes.changed().await.is_ok() {
                writer.written(writer.to_write().generation);
            }
        });
        let mut world = start.clone();
        let mut deletions = Vec::new();
        let mut ends: Vec<i64> = ops.iter().filter(|(_, op)| matches!(op, Op::Restart)).map(|(at, _)| *at).collect();
        ends.push(END + 60);
        let mut from = 0;
        for until in ends {
            let (nodes, pods) = world.visible();
            let options = RunOptions { edited: world.edits().into(), ..options.clone() };
            let (leading, leadership) = watch::channel(true);
            let leading = Arc::new(leading);
            let leadership = Leadership::elected(leadership).with_ledger(ledger.clone());
            let h = start_recording_at(t(from), nodes, pods, options, until - from, leadership, Recorder::default());
            let mut gap_until: Option<i64> = None;
            let segment = ops.iter().filter(|(at, op)| *at >= from && *at < until && !matches!(op, Op::Restart));
            for (at, op) in segment {
                let (at, since) = (*at, *at - from);
                if let Op::Failover(seconds) = op {
                    lead_at(&leading, since, false);
                    lead_at(&leading, since + seconds, true);
                }
                if let Op::Refuse(p, times) = op {
                    let (budgets, name, times) = (h.evictor.budgets.clone(), format!("p{p}"), *times);
                    tokio::spawn(async move {
                        tokio::time::sleep(Duration::from_secs(since as u64)).await;
                        budgets.lock().unwrap().push((name, "web".into(), times));
                    });
                }
                if let Some(until) = gap_until.filter(|until| *until < at) {
                    // Listed again: the world as it is then.
                    let (nodes, pods) = world.listed();
                    node_at(&h, until - from, nodes);
                    pod_at(&h, until - from, pods);
                    gap_until = None;
                }
                let (node, pod) = world.apply(op, at);
                if gap_until == Some(at) {
                    // Listed again as the change is made: the lists show it (the pod watch's
                    // filter follows the node watch, so a list never shows a node's pods after it
                    // left).
                    let (nodes, pods) = world.listed();
                    node_at(&h, since, nodes);
                    pod_at(&h, since, pods);
                    gap_until = None;
                    if !matches!(op, Op::Gap(_)) {
                        continue;
                    }
                }
                if let (Op::Gap(seconds), None) = (op, gap_until) {
                    node_at(&h, since, NodeChange::Interrupted);
                    pod_at(&h, since, PodChange::Interrupted);
                    gap_until = Some(at + seconds);
                    continue;
                }
                if gap_until.is_some() {
                    continue;
                }
                if let Some(change) = node {
                    node_at(&h, since, change);
                }
                for change in pod {
                    pod_at(&h, since, change);
                }
            }
            if let Some(end) = gap_until.filter(|end| *end < until) {
                let (nodes, pods) = world.listed();
                node_at(&h, end - from, nodes);
                pod_at(&h, end - from, pods);
            }
            let (_, done, _) = h.finish().await;
            deletions.extend(done);
            from = until;
        }
        deletions
    })
}

/// Whether a watch gap hides what a re-list cannot tell (docs/run.md, "Continuous watches"): a
/// taint change and, after it, an edit of tolerations (the lists show the edited value, not that
/// the countdown began before it with the value of then); or a node that left the scope or was
/// deleted and came back (the lists show a node that never went).
fn unseen_in_a_gap(ops: &[(i64, Op)]) -> bool {
    ops.iter().any(|(start, op)| {
        let Op::Gap(seconds) = op else { return false };
        let within: Vec<&(i64, Op)> = ops.iter().filter(|(at, _)| *start <= *at && *at <= start + seconds).collect();
        let edited_after_a_taint = within.iter().any(|(tainted, op)| {
            matches!(op, Op::Taints(..))
                && within.iter().any(|(at, op)| at >= tainted && matches!(op, Op::Tolerate(..)))
        });
        let went_and_came_back = within.iter().any(|(went, op)| {
            let node = match op {
                Op::Leave(n) | Op::Taints(n, None) => *n,
                _ => return false,
            };
            within.iter().any(|(at, op)| at > went && matches!(op, Op::Taints(back, Some(_)) if *back == node))
        });
        edited_after_a_taint || went_and_came_back
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, max_global_rejects: 65_536, ..ProptestConfig::default() })]

    #[test]
    fn run_deletes_only_what_the_controller_watching_throughout_wants_then_and_never_before_it(
        placement in prop::collection::vec(0..NODES.len(), PODS),
        ops in prop::collection::btree_map(1i64..END, op(), 1..16),
        cap in prop::option::of(1u32..3),
        keep_last_ready in any::<bool>(),
    ) {
        let ops: Vec<(i64, Op)> = ops.into_iter().collect();
        prop_assume!(!unseen_in_a_gap(&ops));
        let start = World::start(&placement);
        let policy = Policy { max_deletions: cap.map(|max| (max, Duration::from_secs(30))), keep_last_ready, ..Policy::default() };
        let options = RunOptions::from(policy);
        let deleted = run_over(&start, &ops, options);
        let due = reference(&start, &ops, &deleted);
        for (name, at) in &deleted {
            let spells = due.get(name).map(Vec::as_slice).unwrap_or_default();
            // Due since some instant at or before, and not withdrawn before the deletion.
            let wanted = spells.iter().any(|(from, until)| from <= at && until.is_none_or(|until| *at <= until));
            prop_assert!(wanted, "{name} deleted at {at:?}; the controller had it due {spells:?}; ops {ops:?}");
            // The cap holds across terms, and a refusal takes no slot.
            if let Some(max) = cap {
                let window = deleted.iter().filter(|(_, other)| other <= at && other.add_nanos(30_000_000_000) > *at);
                prop_assert!(window.count() <= max as usize, "more than {max} in 30 s up to {at:?}: {deleted:?}; ops {ops:?}");
            }
        }
    }
}
