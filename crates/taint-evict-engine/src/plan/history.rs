//! History a snapshot does not show, read from the evidence that exists (docs/upstream.md, "A taint
//! swapped" and "A toleration edited").
//!
//! - A countdown older than the taint a node carries: the node lifecycle controller swaps its
//!   `not-ready` taint for `unreachable` (or the reverse) when the node's `Ready` goes from `False`
//!   to `Unknown` (or back); the new taint gets a new `timeAdded`, while the taint-eviction
//!   controller keeps the countdown it began with the first one. The node's Events say when its
//!   not-ready spell began (`NodeNotReady`, not followed by `NodeReady`); a condition taint added
//!   well after that is a swap, and the first taint went on at the controller's first pass after
//!   the event.
//! - A toleration edited mid-countdown: the controller keeps the countdown it began with the
//!   `tolerationSeconds` of then; the pod's `managedFields` say when its tolerations were written,
//!   not what they were.

use std::collections::BTreeMap;
use std::time::Duration;

use super::model::{Basis, Plan, Verdict, sort_pods};
use crate::lifecycle::ConditionTaint;
use crate::model::{Effect, NodeName, PodKey, Taint};
use crate::snapshot::TaintsWritten;
use crate::time::Timestamp;
use crate::tolerate::{Tolerance, TolerationWindow, tolerance};

/// Moves the countdowns of `plan` that began with a swapped condition taint back to the first
/// taint of the node's not-ready spell.
///
/// `not_ready` holds, by node, when its Events last said it became not ready. A node whose
/// `unreachable`/`not-ready` NoExecute taint was added more than `monitor_period` + 1 s after that
/// carries a swapped taint: the first went on within `monitor_period` (+ 1 s: the event's time is
/// whole seconds) of the event, assuming its zone's queue did not hold it back. A pod whose
/// countdown began with the swapped taint is deleted when the first taint's countdown ends (the
/// window of its tolerations for the taints of then): its deadline becomes a window, its basis
/// [`Basis::NodeNotReady`]. A pod the first taint did not start counting for (tolerated forever
/// then, or untolerated) keeps what the replay found.
pub fn mark_swapped(plan: &mut Plan<'_>, not_ready: &BTreeMap<NodeName, Timestamp>, monitor_period: Duration) {
    let now = plan.now;
    let slack = nanos(monitor_period).saturating_add(NANOS_PER_SECOND);
    for node in &mut plan.nodes {
        let Some(&since) = not_ready.get(&node.name) else { continue };
        let Some((index, condition, added)) = node.taints.iter().enumerate().find_map(|(i, taint)| {
            let condition = ConditionTaint::from_key(&taint.key).filter(|_| taint.is_no_execute())?;
            Some((i, condition, taint.time_added?))
        }) else {
            continue;
        };
        let latest_start = since.add_nanos(slack);
        if added <= latest_start {
            continue;
        }
        // The taints when the spell's first taint went on: the other condition taint in its place.
        let other = match condition {
            ConditionTaint::Unreachable => ConditionTaint::NotReady,
            ConditionTaint::NotReady => ConditionTaint::Unreachable,
        };
        let mut first: Vec<Taint> = node.taints.to_vec();
        first[index] = Taint::new(other.key(), "", Effect::NoExecute);
        let mut moved = false;
        for pod in &mut node.pods {
            if pod.verdict != Verdict::EvictAt || pod.basis != Some(Basis::TaintTimeAdded) || pod.since != Some(added) {
                continue;
            }
            let Tolerance::Tolerated(TolerationWindow::After { seconds, nanos }) =
                tolerance(&first, &pod.pod.pod.tolerations)
            else {
                continue;
            };
            let evict_at = since.add_nanos(nanos);
            pod.evict_at = Some(evict_at);
            pod.evict_at_latest = Some(latest_start.add_nanos(nanos));
            pod.since = Some(since);
            pod.basis = Some(Basis::NodeNotReady);
            pod.toleration_seconds = Some(seconds);
            pod.overdue = evict_at < now;
            moved = true;
        }
        if moved {
            sort_pods(&mut node.pods);
        }
    }
}

/// Marks the pods of `plan` whose tolerations were written after their countdown began.
///
/// `written` holds, by pod, when its tolerations were last written after its creation (the
/// `managedFields` entry that owns `spec.tolerations`, whole seconds: the write was within the
/// second after). A pod deleted at `evict_at` ([`Verdict::EvictAt`]) whose countdown began before
/// that write is counted by the controller with the `tolerationSeconds` it had then, which the pod no
/// longer shows: its [`tolerations_edited`](super::PodPlan::tolerations_edited) says so, and its
/// deadline is not known (the replay's, from the tolerations of now, is shown).
pub fn mark_edited(plan: &mut Plan<'_>, written: &BTreeMap<PodKey, TaintsWritten>) {
    if written.is_empty() {
        return;
    }
    for pod in plan.nodes.iter_mut().flat_map(|node| &mut node.pods) {
        let Some(edit) = written.get(pod.key()) else { continue };
        if pod.verdict == Verdict::EvictAt && pod.since.is_some_and(|since| since < edit.at) {
            pod.tolerations_edited = Some(Box::new(edit.clone()));
        }
    }
}

const NANOS_PER_SECOND: i64 = 1_000_000_000;

fn nanos(duration: Duration) -> i64 {
    i64::try_from(duration.as_nanos()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Arc;
    use std::time::Duration;

    use super::{mark_edited, mark_swapped};
    use crate::model::{Effect, Operator, Pod, PodKey, Taint, Toleration};
    use crate::plan::{Basis, Verdict};
    use crate::replay::replay;
    use crate::snapshot::{Snapshot, SnapshotNode, SnapshotPod, TaintsWritten};
    use crate::time::Timestamp;

    const UNREACHABLE: &str = "node.kubernetes.io/unreachable";
    const NOT_READY: &str = "node.kubernetes.io/not-ready";

    fn t(seconds: i64) -> Timestamp {
        Timestamp::from_unix_seconds(1_800_000_000 + seconds)
    }

    fn toleration(key: &str, seconds: Option<i64>) -> Toleration {
        Toleration {
            key: key.into(),
            operator: Operator::Exists,
            value: "".into(),
            effect: Some(Effect::NoExecute),
            seconds,
        }
    }

    fn pod(name: &str, tolerations: Vec<Toleration>) -> SnapshotPod {
        SnapshotPod {
            pod: Pod {
                key: PodKey::new("default", name),
                uid: name.into(),
                node: Some("n1".into()),
                tolerations: Arc::from(tolerations),
            },
            bound_at: Some(t(-1000)),
            phase: "Running".into(),
            terminating: false,
            deletion_timestamp: None,
            ready: true,
            claims: None,
            owner: None,
        }
    }

    /// n1 carries `key` added at +60 s; its pods: p90 tolerates both condition taints for 90 s,
    /// split tolerates not-ready 30 s and unreachable 300 s, forever tolerates not-ready forever.
    fn snapshot(key: &str) -> Snapshot {
        let taint = Taint::new(key, "", Effect::NoExecute).with_time_added(t(60));
        Snapshot {
            nodes: vec![SnapshotNode::new("n1".into(), BTreeMap::new(), [taint])],
            pods: vec![
                pod("p90", vec![toleration(NOT_READY, Some(90)), toleration(UNREACHABLE, Some(90))]),
                pod("split", vec![toleration(NOT_READY, Some(30)), toleration(UNREACHABLE, Some(300))]),
                pod("forever", vec![toleration(NOT_READY, None), toleration(UNREACHABLE, Some(120))]),
            ],
            ..Snapshot::default()
        }
    }

    /// A pod's `evict_at`, `evict_at_latest`, basis and whether it is overdue.
    type Deadline = (Option<Timestamp>, Option<Timestamp>, Option<Basis>, bool);

    fn deadlines(key: &str, not_ready: Option<i64>, now: i64) -> BTreeMap<String, Deadline> {
        let snapshot = snapshot(key);
        let mut plan = replay(&snapshot, &[0], &[], t(now));
        let events: BTreeMap<_, _> = not_ready.map(|at| ("n1".into(), t(at))).into_iter().collect();
        mark_swapped(&mut plan, &events, Duration::from_secs(5));
        let pods = plan.nodes.remove(0).pods;
        pods.into_iter()
            .filter(|p| p.verdict == Verdict::EvictAt)
            .map(|p| (p.key().name().to_owned(), (p.evict_at, p.evict_at_latest, p.basis, p.overdue)))
            .collect()
    }

    #[test]
    fn a_swapped_taint_keeps_the_countdown_of_the_first() {
        // Not ready at +0 (the kubelet's event), unreachable since +60: the not-ready taint went on
        // within +0..+6 s, and its countdowns run on.
        let moved = deadlines(UNREACHABLE, Some(0), 70);
        assert_eq!(moved["p90"], (Some(t(90)), Some(t(96)), Some(Basis::NodeNotReady), false));
        // The first countdown was not-ready's 30 s, not unreachable's 300 s: due already.
        assert_eq!(moved["split"], (Some(t(30)), Some(t(36)), Some(Basis::NodeNotReady), true));
        // Tolerated forever at first: its countdown began at the swap, as the replay has it.
        assert_eq!(moved["forever"], (Some(t(180)), None, Some(Basis::TaintTimeAdded), false));

        // The reverse swap (unreachable, then the kubelet back posting `Ready=False`) alike.
        let back = deadlines(NOT_READY, Some(0), 70);
        assert_eq!(back["split"], (Some(t(300)), Some(t(306)), Some(Basis::NodeNotReady), false));
    }

    #[test]
    fn a_first_taint_or_no_event_leaves_the_replay_as_it_is() {
        let replayed = deadlines(UNREACHABLE, None, 70);
        assert_eq!(replayed["p90"], (Some(t(150)), None, Some(Basis::TaintTimeAdded), false));
        // The taint within a pass (+ 1 s) of the event is the spell's first.
        assert_eq!(deadlines(UNREACHABLE, Some(54), 70), replayed);
        // An event after the taint belongs to no earlier spell.
        assert_eq!(deadlines(UNREACHABLE, Some(65), 70), replayed);
        assert_ne!(deadlines(UNREACHABLE, Some(53), 70), replayed);
    }

    #[test]
    fn tolerations_written_after_the_countdown_began_are_marked() {
        let snapshot = snapshot(UNREACHABLE);
        let mut plan = replay(&snapshot, &[0], &[], t(70));
        let written = |at| TaintsWritten { at: t(at), manager: "kubectl-patch".into() };
        let edits: BTreeMap<_, _> = [("p90", written(65)), ("split", written(60)), ("forever", written(65))]
            .into_iter()
            .map(|(name, edit)| (crate::model::PodKey::new("default", name), edit))
            .collect();
        mark_edited(&mut plan, &edits);
        let edited: BTreeMap<&str, bool> =
            plan.nodes[0].pods.iter().map(|p| (p.key().name(), p.tolerations_edited.is_some())).collect();
        // Written after the countdown began at +60: marked. At +60 (the same second): not after it.
        assert_eq!(edited, BTreeMap::from([("forever", true), ("p90", true), ("split", false)]));
    }
}
