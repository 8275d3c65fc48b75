//! History a snapshot does not show, read from the evidence that exists (docs/upstream.md, "A taint
//! swapped" and "A toleration edited").
//!
//! - A countdown older than the taint a node carries: the node lifecycle controller swaps its
//!   `not-ready` taint for `unreachable` (or the reverse) when the node's `Ready` goes from `False`
//!   to `Unknown` (or back); the new taint gets a new `timeAdded`, while the taint-eviction
//!   controller keeps the countdown it began with the first one. The node's Events say when its
//!   not-ready spell began (`NodeNotReady`, not followed by `NodeReady`), and its `Ready` condition
//!   when it last changed: a condition taint added with that change, well after the spell began, is
//!   a swap; one added later than the slack after both was held back by its zone's queue.
//! - A toleration edited mid-countdown: the controller keeps the countdown it began with the
//!   `tolerationSeconds` of then; the pod's `managedFields` say when its tolerations were written,
//!   not what they were.

use std::collections::BTreeMap;
use std::time::Duration;

use super::model::{Basis, EditedDeadline, Plan, TolerationsEdited, Verdict, sort_pods};
use crate::lifecycle::ConditionTaint;
use crate::model::{Effect, NodeName, Operator, PodKey, Taint, Toleration};
use crate::snapshot::{OwnerTemplate, Snapshot, TolerationsWritten};
use crate::time::Timestamp;
use crate::tolerate::{Tolerance, TolerationWindow, tolerance};

/// Moves the countdowns of `plan` that began with a swapped condition taint back to the first
/// taint of the node's not-ready spell.
///
/// `not_ready` holds, by node, when its Events last said it became not ready (`since`). A node whose
/// `unreachable`/`not-ready` NoExecute taint was added more than `monitor_period` + 1 s after that
/// (the slack: the controller's pass, and whole seconds) carries either a swapped taint or a taint
/// its zone's queue held back; the node's `Ready` condition (in `snapshot`) tells them apart:
///
/// - it changed again after the spell began, and the taint went on within the slack of that change:
///   a swap. The first taint went on after `since` and before the change, so a pod whose countdown
///   began with it is deleted in the window of its tolerations for the taints of then, counted from
///   `since` to the change (+ 1 s, whole seconds);
/// - it has not changed since the spell began, or the taint went on well after its change: the
///   taint is the spell's first, held back by the queue; its `timeAdded` is the countdown's start
///   and nothing moves;
/// - it is not known (`True` again, or not read): either may be; the window spans both.
///
/// A pod marked gets basis [`Basis::NodeNotReady`]; one the first taint did not start counting for
/// (tolerated forever then, or untolerated) keeps what the replay found.
pub fn mark_swapped(
    plan: &mut Plan<'_>,
    snapshot: &Snapshot,
    not_ready: &BTreeMap<NodeName, Timestamp>,
    monitor_period: Duration,
) {
    let now = plan.now;
    let slack = nanos(monitor_period).saturating_add(NANOS_PER_SECOND);
    // The `Ready` changes of the nodes with a spell, looked up once (the first node of a name).
    let mut ready_changed: std::collections::HashMap<&NodeName, Option<Timestamp>> =
        std::collections::HashMap::with_capacity(not_ready.len());
    for node in snapshot.nodes.iter().filter(|node| not_ready.contains_key(&node.name)) {
        ready_changed.entry(&node.name).or_insert(node.ready_changed);
    }
    for node in &mut plan.nodes {
        let Some(&since) = not_ready.get(&node.name) else { continue };
        let Some((index, condition, added)) = node.taints.iter().enumerate().find_map(|(i, taint)| {
            let condition = ConditionTaint::from_key(&taint.key).filter(|_| taint.is_no_execute())?;
            Some((i, condition, taint.time_added?))
        }) else {
            continue;
        };
        if added <= since.add_nanos(slack) {
            continue;
        }
        let changed = ready_changed.get(&node.name).copied().flatten();
        let swap = match changed {
            // The condition changed at most once since the spell began: no swap, a queued taint.
            Some(changed) if changed <= since.add_nanos(slack) => continue,
            // The taint went on well after the condition's last change: queued after it.
            Some(changed) if added > changed.add_nanos(slack) => continue,
            Some(changed) => Swap::Certain { latest_start: changed.add_nanos(NANOS_PER_SECOND) },
            None => Swap::Possible { latest_start: added.add_nanos(NANOS_PER_SECOND) },
        };
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
            let (earliest, latest) = match swap {
                Swap::Certain { latest_start } => (since.add_nanos(nanos), latest_start.add_nanos(nanos)),
                Swap::Possible { latest_start } => {
                    let queued = pod.evict_at.unwrap_or(now);
                    (since.add_nanos(nanos).min(queued), latest_start.add_nanos(nanos).max(queued))
                }
            };
            pod.evict_at = Some(earliest);
            pod.evict_at_latest = Some(latest);
            pod.since = Some(since);
            pod.basis = Some(Basis::NodeNotReady);
            pod.toleration_seconds = Some(seconds);
            pod.overdue = earliest < now;
            moved = true;
        }
        if moved {
            sort_pods(&mut node.pods);
        }
    }
}

/// What a node's `Ready` condition says of a condition taint added well after its not-ready spell
/// began ([`mark_swapped`]).
#[derive(Clone, Copy)]
enum Swap {
    /// A swap: the spell's first taint went on before `latest_start`.
    Certain { latest_start: Timestamp },
    /// A swap (the first taint before `latest_start`) or the spell's first taint, queued.
    Possible { latest_start: Timestamp },
}

/// Marks the pods of `plan` whose tolerations were written after their countdown began, and gives
/// each the controller's deadline when its owner's pod template recovers it.
///
/// `written` holds, by pod, when its tolerations were last written after its creation (the
/// `managedFields` entry that owns `spec.tolerations`, whole seconds: the write was within the
/// second after), and its controller's template. A pod deleted at `evict_at` ([`Verdict::EvictAt`])
/// whose countdown began before that write is counted by the controller with the
/// `tolerationSeconds` it had then, which the pod no longer shows: its
/// [`tolerations_edited`](super::model::PodPlan::tolerations_edited) says so. When the template's
/// tolerations are the pod's but for `tolerationSeconds` (with those the API server adds at
/// creation, `created_with`), they are the ones the countdown began with: it is counted again
/// with them from its start, over the taints of then, and `evict_at` is its end
/// ([`EditedDeadline::OwnerTemplate`]). Otherwise the deadline is not known (the replay's, from the
/// tolerations of now, is shown) and the reason is given.
pub fn mark_edited(plan: &mut Plan<'_>, written: &BTreeMap<PodKey, TolerationsWritten>) {
    if written.is_empty() {
        return;
    }
    let now = plan.now;
    for node in &mut plan.nodes {
        let mut moved = false;
        for pod in &mut node.pods {
            let Some(edit) = written.get(pod.key()) else { continue };
            let Some(since) = pod.since.filter(|&since| pod.verdict == Verdict::EvictAt && since < edit.written.at)
            else {
                continue;
            };
            let deadline = match &edit.template {
                OwnerTemplate::NoOwner => EditedDeadline::NoOwner,
                OwnerTemplate::OtherKind(_) => EditedDeadline::OwnerKind,
                OwnerTemplate::Unread(_) => EditedDeadline::OwnerUnread,
                OwnerTemplate::Read(_, template) => {
                    let taints = taints_at(&node.taints, since, pod.basis);
                    match recovered(&taints, template, &pod.pod.pod.tolerations) {
                        Ok((seconds, nanos)) => {
                            let evict_at = since.add_nanos(nanos);
                            if let (Some(old), Some(latest)) = (pod.evict_at, pod.evict_at_latest) {
                                // A window (a swapped taint's first) moves with its start.
                                let moved_by = i64::try_from(evict_at.nanos_since(old)).unwrap_or(0);
                                pod.evict_at_latest = Some(latest.add_nanos(moved_by));
                            }
                            pod.evict_at = Some(evict_at);
                            pod.toleration_seconds = Some(seconds);
                            pod.overdue = evict_at < now;
                            moved = true;
                            EditedDeadline::OwnerTemplate
                        }
                        Err(unknown) => unknown,
                    }
                }
            };
            let owner = edit.template.owner().cloned();
            pod.tolerations_edited =
                Some(Box::new(TolerationsEdited { written: edit.written.clone(), owner, deadline }));
        }
        if moved {
            sort_pods(&mut node.pods);
        }
    }
}

/// The NoExecute taints of `taints` (the node's now) that were there when a countdown began at
/// `since`: those added later are left out, and for a swapped taint's first countdown
/// ([`Basis::NodeNotReady`]) the condition taint is the other one, as [`mark_swapped`] has it.
fn taints_at(taints: &[Taint], since: Timestamp, basis: Option<Basis>) -> Vec<Taint> {
    taints
        .iter()
        .filter_map(|taint| {
            let later = taint.time_added.is_some_and(|added| added > since);
            match ConditionTaint::from_key(&taint.key) {
                Some(condition) if later && basis == Some(Basis::NodeNotReady) => {
                    let other = match condition {
                        ConditionTaint::Unreachable => ConditionTaint::NotReady,
                        ConditionTaint::NotReady => ConditionTaint::Unreachable,
                    };
                    Some(Taint::new(other.key(), "", Effect::NoExecute))
                }
                _ if later => None,
                _ => Some(taint.clone()),
            }
        })
        .collect()
}

/// The window (`tolerationSeconds`, nanoseconds) a pod created from a template with `template`'s
/// tolerations, and showing `now`'s, had for `taints`; or why it is not known.
fn recovered(taints: &[Taint], template: &[Toleration], now: &[Toleration]) -> Result<(i64, i64), EditedDeadline> {
    let created = created_with(template, now).ok_or(EditedDeadline::TemplateDiffers)?;
    let window = |tolerations: &[Toleration]| match tolerance(taints, tolerations) {
        Tolerance::Tolerated(TolerationWindow::After { seconds, nanos }) => Some((seconds, nanos)),
        Tolerance::Tolerated(TolerationWindow::Forever) | Tolerance::Untolerated => None,
    };
    let found = window(&created).ok_or(EditedDeadline::ForeverThen)?;
    // The tolerations the API server added keep the value of now, which an edit may have changed:
    // they must not decide.
    let mut without = created;
    for added in &mut without[template.len()..] {
        added.seconds = None;
    }
    if window(&without) != Some(found) {
        return Err(EditedDeadline::AddedAtCreation);
    }
    Ok(found)
}

/// The tolerations a pod created from `template` was created with, when `now` (its tolerations of
/// now) differ from them in `tolerationSeconds` only: the template's, then those the API server's
/// `DefaultTolerationSeconds` admission adds (`not-ready` and `unreachable`, `Exists`, NoExecute)
/// when the template tolerates neither, with the value the pod shows now. `None` when they differ
/// otherwise.
fn created_with(template: &[Toleration], now: &[Toleration]) -> Option<Vec<Toleration>> {
    let same = |a: &Toleration, b: &Toleration| {
        (&a.key, &a.operator, &a.value, &a.effect) == (&b.key, &b.operator, &b.value, &b.effect)
    };
    let added: Vec<&str> = [ConditionTaint::NotReady, ConditionTaint::Unreachable]
        .into_iter()
        .map(ConditionTaint::key)
        .filter(|key| {
            !template.iter().any(|t| {
                (t.key.is_empty() || &*t.key == *key)
                    && t.effect.as_ref().is_none_or(|effect| *effect == Effect::NoExecute)
            })
        })
        .collect();
    if now.len() != template.len() + added.len() || !template.iter().zip(now).all(|(t, n)| same(t, n)) {
        return None;
    }
    let mut created: Vec<Toleration> = template.to_vec();
    for (key, shown) in added.into_iter().zip(&now[template.len()..]) {
        let default = Toleration {
            key: key.into(),
            operator: Operator::Exists,
            value: "".into(),
            effect: Some(Effect::NoExecute),
            seconds: shown.seconds,
        };
        if !same(&default, shown) {
            return None;
        }
        created.push(default);
    }
    Some(created)
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
    use crate::plan::model::{Basis, EditedDeadline, Verdict};
    use crate::replay::replay;
    use crate::snapshot::{
        Owner, OwnerTemplate, Snapshot, SnapshotNode, SnapshotPod, TaintsWritten, TolerationsWritten,
    };
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
        let pod = Pod {
            key: PodKey::new("default", name),
            uid: name.into(),
            node: Some("n1".into()),
            tolerations: Arc::from(tolerations),
        };
        SnapshotPod::running(pod, Some(t(-1000)))
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

    /// The plan's deadlines at `now`: n1's spell began at `not_ready` (its event), its `Ready`
    /// condition last changed at `changed`.
    fn deadlines(key: &str, not_ready: Option<i64>, changed: Option<i64>, now: i64) -> BTreeMap<String, Deadline> {
        let mut snapshot = snapshot(key);
        snapshot.nodes[0].ready_changed = changed.map(t);
        let mut plan = replay(&snapshot, &[0], &[], t(now));
        let events: BTreeMap<_, _> = not_ready.map(|at| ("n1".into(), t(at))).into_iter().collect();
        mark_swapped(&mut plan, &snapshot, &events, Duration::from_secs(5));
        let pods = plan.nodes.remove(0).pods;
        pods.into_iter()
            .filter(|p| p.verdict == Verdict::EvictAt)
            .map(|p| (p.key().name().to_owned(), (p.evict_at, p.evict_at_latest, p.basis, p.overdue)))
            .collect()
    }

    #[test]
    fn a_swapped_taint_keeps_the_countdown_of_the_first() {
        // Not ready at +0 (the kubelet's event), `Unknown` and unreachable since +60: the not-ready
        // taint went on within +0..+61 s (its zone's queue may have held it), and its countdowns
        // run on.
        let moved = deadlines(UNREACHABLE, Some(0), Some(60), 70);
        assert_eq!(moved["p90"], (Some(t(90)), Some(t(151)), Some(Basis::NodeNotReady), false));
        // The first countdown was not-ready's 30 s, not unreachable's 300 s: due already.
        assert_eq!(moved["split"], (Some(t(30)), Some(t(91)), Some(Basis::NodeNotReady), true));
        // Tolerated forever at first: its countdown began at the swap, as the replay has it.
        assert_eq!(moved["forever"], (Some(t(180)), None, Some(Basis::TaintTimeAdded), false));
        // The swap came at the controller's pass after the change (+55): the same.
        assert_eq!(deadlines(UNREACHABLE, Some(0), Some(55), 70)["p90"].0, Some(t(90)));

        // The reverse swap (unreachable, then the kubelet back posting `Ready=False`) alike.
        let back = deadlines(NOT_READY, Some(0), Some(58), 70);
        assert_eq!(back["split"], (Some(t(300)), Some(t(359)), Some(Basis::NodeNotReady), false));
    }

    #[test]
    fn a_taint_its_zone_queue_held_back_is_no_swap() {
        let replayed = deadlines(UNREACHABLE, None, None, 70);
        assert_eq!(replayed["p90"], (Some(t(150)), None, Some(Basis::TaintTimeAdded), false));
        // Not ready since +0 and the condition unchanged since: the taint at +60 is the spell's
        // first, held back by the zone's rate limiter; its `timeAdded` is exact.
        assert_eq!(deadlines(UNREACHABLE, Some(0), Some(0), 70), replayed);
        assert_eq!(deadlines(UNREACHABLE, Some(0), Some(6), 70), replayed);
        // The condition changed at +30 and the taint went on at +60: queued after the change.
        assert_eq!(deadlines(UNREACHABLE, Some(0), Some(30), 70), replayed);
    }

    #[test]
    fn an_unknown_condition_spans_a_swap_and_a_queued_taint() {
        // `Ready` True again (or not read): a swap (from +0) or the first taint (at +60).
        let either = deadlines(UNREACHABLE, Some(0), None, 70);
        assert_eq!(either["p90"], (Some(t(90)), Some(t(151)), Some(Basis::NodeNotReady), false));
        // Queued, split's countdown is unreachable's 300 s from +60; swapped, not-ready's 30 s.
        assert_eq!(either["split"], (Some(t(30)), Some(t(360)), Some(Basis::NodeNotReady), true));
    }

    #[test]
    fn a_first_taint_or_no_event_leaves_the_replay_as_it_is() {
        let replayed = deadlines(UNREACHABLE, None, Some(60), 70);
        // The taint within a pass (+ 1 s) of the event is the spell's first.
        assert_eq!(deadlines(UNREACHABLE, Some(54), Some(54), 70), replayed);
        assert_eq!(deadlines(UNREACHABLE, Some(54), None, 70), replayed);
        // An event after the taint belongs to no earlier spell.
        assert_eq!(deadlines(UNREACHABLE, Some(65), Some(65), 70), replayed);
        assert_ne!(deadlines(UNREACHABLE, Some(53), Some(60), 70), replayed);
    }

    fn bare(at: i64) -> TolerationsWritten {
        TolerationsWritten {
            written: TaintsWritten { at: t(at), manager: "kubectl-patch".into() },
            template: OwnerTemplate::NoOwner,
        }
    }

    fn from_template(at: i64, tolerations: Vec<Toleration>) -> TolerationsWritten {
        let owner = Owner::new("ReplicaSet", "web", "rs-uid");
        TolerationsWritten { template: OwnerTemplate::Read(owner, tolerations.into()), ..bare(at) }
    }

    #[test]
    fn tolerations_written_after_the_countdown_began_are_marked() {
        let snapshot = snapshot(UNREACHABLE);
        let mut plan = replay(&snapshot, &[0], &[], t(70));
        let edits: BTreeMap<_, _> = [("p90", bare(65)), ("split", bare(60)), ("forever", bare(65))]
            .into_iter()
            .map(|(name, edit)| (PodKey::new("default", name), edit))
            .collect();
        mark_edited(&mut plan, &edits);
        let edited: BTreeMap<&str, Option<EditedDeadline>> = plan.nodes[0]
            .pods
            .iter()
            .map(|p| (p.key().name(), p.tolerations_edited.as_ref().map(|edit| edit.deadline)))
            .collect();
        // Written after the countdown began at +60: marked, and a bare pod's deadline is not known.
        // At +60 (the same second): not after it.
        let unknown = Some(EditedDeadline::NoOwner);
        assert_eq!(edited, BTreeMap::from([("forever", unknown), ("p90", unknown), ("split", None)]));
    }

    const DRAIN: &str = "example.com/drain";

    /// n1 carries `taints` (key, added at); `pod` on it shows `now` tolerations, and its
    /// controller's template holds `template`; the edit was at +65. Returns the pod's deadline,
    /// `tolerationSeconds` and what the plan says of the edit, at +70.
    fn edited(
        taints: &[(&str, i64)],
        template: Vec<Toleration>,
        now: Vec<Toleration>,
    ) -> (Option<Timestamp>, Option<i64>, Option<EditedDeadline>) {
        let taints = taints.iter().map(|&(key, at)| Taint::new(key, "", Effect::NoExecute).with_time_added(t(at)));
        let snapshot = Snapshot {
            nodes: vec![SnapshotNode::new("n1".into(), BTreeMap::new(), taints)],
            pods: vec![pod("web-1", now)],
            ..Snapshot::default()
        };
        let mut plan = replay(&snapshot, &[0], &[], t(70));
        mark_edited(&mut plan, &BTreeMap::from([(PodKey::new("default", "web-1"), from_template(65, template))]));
        let pod = &plan.nodes[0].pods[0];
        (pod.evict_at, pod.toleration_seconds, pod.tolerations_edited.as_ref().map(|edit| edit.deadline))
    }

    /// What the API server adds at creation to a pod that tolerates neither condition taint.
    fn defaults(not_ready: i64, unreachable: i64) -> [Toleration; 2] {
        [toleration(NOT_READY, Some(not_ready)), toleration(UNREACHABLE, Some(unreachable))]
    }

    fn with(first: Toleration, rest: [Toleration; 2]) -> Vec<Toleration> {
        let mut all = vec![first];
        all.extend(rest);
        all
    }

    #[test]
    fn the_owners_template_gives_the_countdown_the_controller_keeps() {
        let template = vec![toleration(DRAIN, Some(12))];
        // Raised to 3600 s and lowered to 2 s after the countdown began at +60: +72 either way.
        let raised = edited(&[(DRAIN, 60)], template.clone(), with(toleration(DRAIN, Some(3600)), defaults(300, 300)));
        assert_eq!(raised, (Some(t(72)), Some(12), Some(EditedDeadline::OwnerTemplate)));
        let lowered = edited(&[(DRAIN, 60)], template.clone(), with(toleration(DRAIN, Some(2)), defaults(300, 300)));
        assert_eq!(lowered, raised);
        // A taint added after the countdown began does not change it, as upstream keeps the work.
        let mut both = template.clone();
        both.push(toleration("example.com/late", Some(1)));
        let mut now = vec![toleration(DRAIN, Some(3600)), toleration("example.com/late", Some(1))];
        now.extend(defaults(300, 300));
        assert_eq!(edited(&[(DRAIN, 60), ("example.com/late", 64)], both, now).0, Some(t(72)));
    }

    #[test]
    fn a_template_that_does_not_recover_the_value_leaves_the_deadline_unknown() {
        let now = with(toleration(DRAIN, Some(3600)), defaults(300, 300));
        let replayed = Some(t(3660));
        // The template's toleration is another one now: it changed since the pod was made.
        let other = edited(&[(DRAIN, 60)], vec![toleration("example.com/other", Some(12))], now.clone());
        assert_eq!(other, (replayed, Some(3600), Some(EditedDeadline::TemplateDiffers)));
        // Tolerated forever by the template: the countdown began with an edit.
        let forever = edited(&[(DRAIN, 60)], vec![toleration(DRAIN, None)], now.clone());
        assert_eq!(forever.2, Some(EditedDeadline::ForeverThen));
        // A node not ready: the toleration the API server added decides, and its value of then is
        // not in the template.
        let added = edited(&[(DRAIN, 60), (NOT_READY, 60)], vec![toleration(DRAIN, Some(3600))], {
            with(toleration(DRAIN, Some(3600)), defaults(30, 300))
        });
        assert_eq!(added, (Some(t(90)), Some(30), Some(EditedDeadline::AddedAtCreation)));
        // Unless the template's own toleration decides anyway.
        let decided = edited(&[(DRAIN, 60), (NOT_READY, 60)], vec![toleration(DRAIN, Some(12))], now);
        assert_eq!(decided, (Some(t(72)), Some(12), Some(EditedDeadline::OwnerTemplate)));
    }
}
