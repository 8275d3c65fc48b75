//! After an incident: what the taint-eviction controller did, against what it should have done.
//!
//! What a record saw of the cluster comes in as [`Moment`]s, in order; the same [`Engine`] that
//! `plan` and `run` drive is driven over them, and each deletion it decides is set beside the deletion
//! seen: on time, late, early, not made, or made with nothing due (docs/review.md). The controller's
//! leader changes are its restarts: every countdown starts again, as upstream's does.

use std::collections::HashMap;

use crate::model::{Node, NodeName, Pod, PodKey, PodRef};
use crate::queue::Work;
use crate::replay::{Host, replay_with};
use crate::snapshot::Snapshot;
use crate::start::engine_node;
use crate::time::Timestamp;
use crate::{Action, Engine, Input};

/// Who started a pod's deletion, as far as the record tells.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Deleter {
    /// The taint-eviction controller (its `TaintManagerEviction` Event, or its user in an audit log).
    Controller,
    /// Someone else, by name (a user, another controller).
    Other(Box<str>),
    /// The record does not say.
    Unknown,
}

/// One thing a record saw.
#[derive(Clone, Debug)]
pub enum Seen {
    /// Where the record starts: every node and pod then. The countdowns already running are those a
    /// replay of it finds, as `plan` replays a dump; a pod already terminating is left out.
    Start(Box<Snapshot>),
    /// A list again after a gap: nodes not in it are gone, the others as written then.
    Nodes(Vec<Node>),
    /// A list again after a gap: pods not in it are gone (their deletions come as
    /// [`Seen::PodDeleted`] before it, when the record tells), the others as written then.
    Pods(Vec<Pod>),
    /// A node, as written then.
    Node(Node),
    /// A node deleted.
    NodeGone(NodeName),
    /// A pod, as written then (not being deleted).
    Pod(Pod),
    /// A pod's deletion started (its `deletionTimestamp` set, or a DELETE answered), or it went at once.
    PodDeleted {
        /// The pod.
        pod: PodKey,
        /// By whom.
        by: Deleter,
    },
    /// The controller's leader changed: a new term, every countdown lost and started again.
    LeaderChanged {
        /// The new leader's identity.
        holder: Box<str>,
        /// When the leader before it last renewed its term, when the record saw it: from then to
        /// this instant no controller acted.
        last_renewed: Option<Timestamp>,
    },
    /// The record saw nothing from this moment's instant to `until`.
    Gap {
        /// When it saw again.
        until: Timestamp,
    },
}

/// What was seen, and when (the control plane's clock).
#[derive(Clone, Debug)]
pub struct Moment {
    /// When.
    pub at: Timestamp,
    /// What.
    pub seen: Seen,
}

/// A pod's deletion, judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Deleted within the slack of when it was due.
    OnTime,
    /// Deleted this many nanoseconds after it was due.
    Late(i128),
    /// Deleted this many nanoseconds before it was due.
    Early(i128),
    /// Due, and not deleted by the end of the record.
    NotDeleted,
    /// Deleted by the controller with nothing due: the record saw no taint that should delete it.
    NothingDue,
    /// Due when the record ends, later than its end.
    Pending,
    /// Deleted by someone other than the controller, before it was due or with nothing due.
    DeletedByOther,
}

/// One pod's story.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodReview {
    /// The pod, as the deletion or the countdown knew it.
    pub pod: PodRef,
    /// What the controller should have done: the deletion and its clock (the last countdown, when the
    /// controller restarted during it), `None` when nothing was due.
    pub due: Option<Work>,
    /// When its deletion started, and by whom; `None` when it was not deleted.
    pub deleted: Option<(Timestamp, Deleter)>,
    /// The judgement.
    pub verdict: Verdict,
    /// Whether a gap in the record falls between when it was due and when it went: what happened
    /// then is not known, so neither is the judgement.
    pub in_gap: bool,
    /// When it was due before a restart of the controller started its countdown again: what the
    /// restart cost it (upstream's restart does this; a controller down for a while makes it late).
    pub due_before_restart: Option<Timestamp>,
}

/// A leader's term seen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Term {
    /// When it started.
    pub at: Timestamp,
    /// The leader's identity.
    pub holder: Box<str>,
    /// When the leader before it last renewed its term: no controller acted between then and `at`.
    pub last_renewed: Option<Timestamp>,
}

/// What a review found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Review {
    /// Every pod with something due or deleted, in the order of its deletion (or of when it was due).
    pub pods: Vec<PodReview>,
    /// The controller's terms, in order.
    pub terms: Vec<Term>,
    /// The gaps in the record, `(from, to)`.
    pub gaps: Vec<(Timestamp, Timestamp)>,
    /// When the record starts and ends.
    pub span: Option<(Timestamp, Timestamp)>,
}

/// A pod's countdown or deletion while the review runs.
struct Open {
    pod: PodRef,
    due: Option<Work>,
    /// When the engine fired its deletion.
    fired: Option<Timestamp>,
    /// When it was due before the controller's restarts moved it.
    moved_from: Option<Timestamp>,
    /// A moved countdown cancelled: when it was due before the restart, and when the countdown
    /// cancelled would have ended. Armed again by then, it is the same countdown moved once more.
    cancelled: Option<(Timestamp, Timestamp)>,
}

impl Open {
    fn new(pod: PodRef) -> Self {
        Self { pod, due: None, fired: None, moved_from: None, cancelled: None }
    }
}

/// Reviews `moments` (in order of their instants), deletions within `slack_nanos` of their due
/// instant on time (the instants a record holds are whole seconds), ending at `end` (at least the
/// last moment's instant).
#[must_use]
pub fn review(moments: &[Moment], end: Timestamp, slack_nanos: i128) -> Review {
    let mut engine = Engine::new();
    let mut open: HashMap<PodKey, Open> = HashMap::new();
    let mut done: Vec<PodReview> = Vec::new();
    let mut found = Review::default();
    let Some(first) = moments.first() else { return found };
    found.span = Some((first.at, end.max(moments.last().map_or(end, |m| m.at))));
    for moment in moments {
        advance(&mut engine, &mut open, moment.at);
        let input = match &moment.seen {
            Seen::Start(snapshot) => started(snapshot, moment.at),
            Seen::Nodes(nodes) => Input::NodesReplaced(nodes.clone()),
            Seen::Pods(pods) => Input::PodsReplaced(pods.clone()),
            Seen::Node(node) => Input::NodeUpserted(node.clone()),
            Seen::NodeGone(name) => Input::NodeDeleted(name.clone()),
            Seen::Pod(pod) => Input::PodUpserted(pod.clone()),
            Seen::PodDeleted { pod, by } => {
                let verdict = judge(&engine, &mut open, pod, moment.at, by, slack_nanos);
                done.extend(verdict);
                Input::PodDeleted(pod.clone())
            }
            Seen::LeaderChanged { holder, last_renewed } => {
                found.terms.push(Term { at: moment.at, holder: holder.clone(), last_renewed: *last_renewed });
                let before: Vec<(PodKey, Timestamp, Option<Timestamp>)> = open
                    .iter()
                    .filter_map(|(key, entry)| entry.due.map(|work| (key.clone(), work.fire, entry.moved_from)))
                    .collect();
                engine.handle(Input::ControllerRestarted, moment.at);
                drain(&mut engine, &mut open, moment.at);
                // Each countdown the restart started again remembers when it was due before.
                for (key, fire, moved_from) in before {
                    if let Some(entry) = open.get_mut(&key)
                        && entry.due.is_some_and(|work| work.fire != fire)
                    {
                        entry.moved_from = moved_from.or(Some(fire));
                    }
                }
                continue;
            }
            Seen::Gap { until } => {
                found.gaps.push((moment.at, *until));
                continue;
            }
        };
        engine.handle(input, moment.at);
        drain(&mut engine, &mut open, moment.at);
    }
    let (_, end) = found.span.unwrap_or((end, end));
    advance(&mut engine, &mut open, end);
    for (_, left) in open {
        let verdict = match (left.due, left.fired) {
            (Some(_), Some(_)) => Verdict::NotDeleted,
            (Some(_), None) => Verdict::Pending,
            (None, _) => continue,
        };
        let moved = left.moved_from;
        done.push(PodReview {
            pod: left.pod,
            due: left.due,
            deleted: None,
            verdict,
            in_gap: false,
            due_before_restart: moved,
        });
    }
    for review in &mut done {
        let due = review.due.map(|work| work.fire);
        let went = review.deleted.as_ref().map(|(at, _)| *at);
        let (from, to) = match (due, went) {
            (Some(a), Some(b)) => (a.min(b), a.max(b)),
            (Some(a), None) => (a, end),
            (None, Some(b)) => (b, b),
            (None, None) => continue,
        };
        review.in_gap = found.gaps.iter().any(|&(start, stop)| start <= to && from <= stop);
    }
    done.sort_by(|a, b| {
        let at = |r: &PodReview| r.deleted.as_ref().map(|(at, _)| *at).or(r.due.map(|w| w.fire));
        at(a).cmp(&at(b)).then_with(|| a.pod.key.cmp(&b.pod.key))
    });
    found.pods = done;
    found
}

/// The engine's first input: the snapshot's nodes and pods, and the countdowns its replay finds
/// running at `now` (those due by then fire at once).
fn started(snapshot: &Snapshot, now: Timestamp) -> Input {
    let selected: Vec<usize> = (0..snapshot.nodes.len()).collect();
    let plan = replay_with(snapshot, &selected, &[], now, Host::default());
    let nodes = snapshot.nodes.iter().map(engine_node).collect();
    let pods = snapshot.pods.iter().filter(|pod| !pod.terminating).map(|pod| pod.pod.clone()).collect();
    Input::Seeded { nodes, pods, work: plan.work() }
}

/// Fires the engine's timers due by `now`, each at its own instant.
fn advance(engine: &mut Engine, open: &mut HashMap<PodKey, Open>, now: Timestamp) {
    while let Some(at) = engine.poll_timeout().filter(|at| *at <= now) {
        engine.handle_timeout(at);
        drain(engine, open, at);
    }
}

/// Takes the engine's decisions: a countdown armed, cancelled, a deletion fired.
fn drain(engine: &mut Engine, open: &mut HashMap<PodKey, Open>, now: Timestamp) {
    while let Some(action) = engine.poll_action() {
        match action {
            Action::Scheduled { pod, work } => {
                let entry = open.entry(pod.key.clone()).or_insert_with(|| Open::new(pod.clone()));
                entry.pod = pod;
                entry.due = Some(work);
                entry.fired = None;
                // Upstream's node-lifecycle controller, started again, takes a node's `unreachable`
                // taint off and puts it back: the countdown the restart moved, cancelled and armed
                // again before it would have ended, keeps what the restart cost (docs/review.md, "A
                // real incident, reviewed").
                if let Some((from, ended)) = entry.cancelled.take()
                    && now <= ended
                {
                    entry.moved_from = Some(from);
                }
            }
            Action::Cancelled { pod, work } => {
                // A countdown ended without a deletion: nothing is due any more.
                if let Some(entry) = open.get_mut(&pod.key).filter(|entry| entry.fired.is_none()) {
                    match entry.moved_from.take() {
                        Some(from) => {
                            entry.due = None;
                            entry.cancelled = Some((from, work.fire));
                        }
                        None => {
                            open.remove(&pod.key);
                        }
                    }
                }
            }
            Action::Withdrawn { pod, .. } => {
                if open.get(&pod.key).is_some_and(|entry| entry.fired.is_none()) {
                    open.remove(&pod.key);
                }
            }
            Action::Evict { pod, work, .. } => {
                let entry = open.entry(pod.key.clone()).or_insert_with(|| Open::new(pod.clone()));
                entry.due = Some(work);
                entry.fired.get_or_insert(now);
            }
        }
    }
}

/// A pod's deletion seen at `at`, set beside what the engine has for it then.
fn judge(
    engine: &Engine,
    open: &mut HashMap<PodKey, Open>,
    pod: &PodKey,
    at: Timestamp,
    by: &Deleter,
    slack: i128,
) -> Option<PodReview> {
    let entry = open.remove(pod);
    let due_before_restart = entry.as_ref().and_then(|entry| entry.moved_from);
    let due = entry.as_ref().and_then(|entry| entry.due).or_else(|| engine.work(pod).map(|entry| entry.work));
    let pod_ref = match &entry {
        Some(entry) => entry.pod.clone(),
        None => {
            let tracked = engine.pod(pod)?;
            PodRef { key: tracked.key, uid: tracked.uid, node: tracked.node.unwrap_or_else(|| "".into()) }
        }
    };
    let by_controller = *by == Deleter::Controller;
    let verdict = match due {
        Some(work) => {
            let after = at.nanos_since(work.fire);
            if after > slack {
                Verdict::Late(after)
            } else if after >= -slack {
                Verdict::OnTime
            } else if by_controller {
                Verdict::Early(-after)
            } else {
                Verdict::DeletedByOther
            }
        }
        None if by_controller => Verdict::NothingDue,
        // Deleted by another with nothing due: not the controllers' story.
        None => return None,
    };
    Some(PodReview { pod: pod_ref, due, deleted: Some((at, by.clone())), verdict, in_gap: false, due_before_restart })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use super::*;
    use crate::model::{Effect, Operator, Taint, Toleration};
    use crate::snapshot::{SnapshotNode, SnapshotPod, Workloads};

    const S: i128 = 1_000_000_000;

    fn t(seconds: i64) -> Timestamp {
        Timestamp::from_unix_seconds(seconds)
    }

    fn at(seconds: i64, seen: Seen) -> Moment {
        Moment { at: t(seconds), seen }
    }

    fn pod(name: &str, seconds: Option<i64>) -> Pod {
        let tolerations: Arc<[Toleration]> = match seconds {
            Some(seconds) => Arc::new([Toleration {
                key: "node.kubernetes.io/unreachable".into(),
                operator: Operator::Exists,
                value: Box::default(),
                effect: Some(Effect::NoExecute),
                seconds: Some(seconds),
            }]),
            None => Arc::new([]),
        };
        Pod { key: PodKey::new("shop", name), uid: format!("uid-{name}").into(), node: Some("n1".into()), tolerations }
    }

    fn node(tainted: bool) -> Node {
        let taints: Arc<[Taint]> = if tainted {
            Arc::new([Taint::new("node.kubernetes.io/unreachable", "", Effect::NoExecute)])
        } else {
            Arc::new([])
        };
        Node { name: "n1".into(), taints }
    }

    fn start(pods: &[Pod]) -> Moment {
        let node = SnapshotNode::new("n1".into(), BTreeMap::new(), []);
        let pods = pods.iter().map(|pod| SnapshotPod::running(pod.clone(), Some(t(0)))).collect();
        let snapshot = Snapshot {
            nodes: vec![node],
            pods,
            controller_acquired: None,
            taken: None,
            workloads: Workloads::default(),
        };
        at(0, Seen::Start(Box::new(snapshot)))
    }

    fn deleted(seconds: i64, name: &str, by: Deleter) -> Moment {
        at(seconds, Seen::PodDeleted { pod: PodKey::new("shop", name), by })
    }

    fn verdicts(review: &Review) -> Vec<(String, Verdict, Option<i64>)> {
        review
            .pods
            .iter()
            .map(|p| {
                let due = p.due.map(|w| i64::try_from(w.fire.as_nanos() / S).expect("seconds"));
                (p.pod.key.to_string(), p.verdict, due)
            })
            .collect()
    }

    #[test]
    fn each_deletion_is_set_beside_when_it_was_due() {
        // Tainted at 100: api (300 s) due at 400, deleted at 401: on time; web (60 s) due at 160,
        // deleted at 190: 30 s late; job (no toleration) due at once, deleted at 100: on time; db
        // (600 s) due at 700, deleted by the controller at 500: 200 s early; cache (900 s) due at
        // 1,000, after the record's end at 800: pending; batch (120 s) due at 220, never deleted.
        let pods = [
            pod("api", Some(300)),
            pod("web", Some(60)),
            pod("job", None),
            pod("db", Some(600)),
            pod("cache", Some(900)),
            pod("batch", Some(120)),
        ];
        let moments = [
            start(&pods),
            at(100, Seen::Node(node(true))),
            deleted(100, "job", Deleter::Controller),
            deleted(190, "web", Deleter::Controller),
            deleted(401, "api", Deleter::Controller),
            deleted(500, "db", Deleter::Controller),
        ];
        let found = review(&moments, t(800), S);
        assert_eq!(
            verdicts(&found),
            vec![
                ("shop/job".to_owned(), Verdict::OnTime, Some(100)),
                ("shop/web".to_owned(), Verdict::Late(30 * S), Some(160)),
                ("shop/batch".to_owned(), Verdict::NotDeleted, Some(220)),
                ("shop/api".to_owned(), Verdict::OnTime, Some(400)),
                ("shop/db".to_owned(), Verdict::Early(200 * S), Some(700)),
                ("shop/cache".to_owned(), Verdict::Pending, Some(1000)),
            ]
        );
        assert_eq!(found.span, Some((t(0), t(800))));
    }

    #[test]
    fn a_new_leader_starts_every_countdown_again_and_a_taint_removed_in_time_saves_the_pod() {
        // Tainted at 100, api due at 400; the leader changes at 250: due at 550, deleted at 550.
        // web (60 s) is saved: the taint goes at 150 (its countdown restarts at 250 from none).
        let moments = [
            start(&[pod("api", Some(300))]),
            at(100, Seen::Node(node(true))),
            at(250, Seen::LeaderChanged { holder: "kcm-2".into(), last_renewed: Some(t(240)) }),
            deleted(550, "api", Deleter::Controller),
        ];
        let found = review(&moments, t(600), S);
        assert_eq!(verdicts(&found), vec![("shop/api".to_owned(), Verdict::OnTime, Some(550))]);
        assert_eq!(found.terms, vec![Term { at: t(250), holder: "kcm-2".into(), last_renewed: Some(t(240)) }]);
        assert_eq!(found.pods[0].due_before_restart, Some(t(400)), "the restart moved it from 400 to 550");
        let saved = [start(&[pod("web", Some(60))]), at(100, Seen::Node(node(true))), at(150, Seen::Node(node(false)))];
        assert_eq!(review(&saved, t(600), S).pods, vec![]);
    }

    #[test]
    fn a_controller_down_when_a_pod_was_due_deletes_it_a_countdown_after_its_return() {
        // Tainted at 100, web (60 s) due at 160; the controller last renewed its term at 120 and a new
        // leader starts at 300: web is due at 360 and goes then, on time for a restarted controller,
        // 200 s after it was first due.
        let moments = [
            start(&[pod("web", Some(60))]),
            at(100, Seen::Node(node(true))),
            at(300, Seen::LeaderChanged { holder: "kcm-2".into(), last_renewed: Some(t(120)) }),
            deleted(360, "web", Deleter::Controller),
        ];
        let found = review(&moments, t(600), S);
        assert_eq!(verdicts(&found), vec![("shop/web".to_owned(), Verdict::OnTime, Some(360))]);
        assert_eq!(found.pods[0].due_before_restart, Some(t(160)));
    }

    #[test]
    fn a_restarted_countdown_cancelled_and_armed_again_before_its_end_keeps_what_the_restart_cost() {
        // Tainted at 100, web (60 s) due at 160; a new leader at 300 moves it to 360. Its node
        // lifecycle controller takes the taint off at 301 and puts it back at 302 (as upstream's does
        // when it starts): due at 362, deleted then, on time, first due at 160. Put back at 400 instead,
        // after the countdown cancelled would have ended (360), it is a countdown of its own.
        let moments = |back: i64| {
            [
                start(&[pod("web", Some(60))]),
                at(100, Seen::Node(node(true))),
                at(300, Seen::LeaderChanged { holder: "kcm-2".into(), last_renewed: Some(t(120)) }),
                at(301, Seen::Node(node(false))),
                at(back, Seen::Node(node(true))),
                deleted(back + 60, "web", Deleter::Controller),
            ]
        };
        let found = review(&moments(302), t(600), S);
        assert_eq!(verdicts(&found), vec![("shop/web".to_owned(), Verdict::OnTime, Some(362))]);
        assert_eq!(found.pods[0].due_before_restart, Some(t(160)));
        let found = review(&moments(400), t(600), S);
        assert_eq!(verdicts(&found), vec![("shop/web".to_owned(), Verdict::OnTime, Some(460))]);
        assert_eq!(found.pods[0].due_before_restart, None);
    }

    #[test]
    fn a_deletion_with_nothing_due_or_by_another_is_told_apart() {
        // The controller deletes api though the record saw no taint; a user deletes web before its
        // countdown ends (by another: not judged late or early); one deletes db with nothing due:
        // not the controllers' story, left out.
        let moments = [
            start(&[pod("api", Some(300)), pod("web", Some(60)), pod("db", None)]),
            deleted(50, "api", Deleter::Controller),
            at(100, Seen::Node(node(false))),
            deleted(120, "db", Deleter::Other("alice".into())),
            at(130, Seen::Node(node(true))),
            deleted(140, "web", Deleter::Other("alice".into())),
        ];
        let found = review(&moments, t(600), S);
        assert_eq!(
            verdicts(&found),
            vec![
                ("shop/api".to_owned(), Verdict::NothingDue, None),
                ("shop/web".to_owned(), Verdict::DeletedByOther, Some(190)),
            ]
        );
    }

    #[test]
    fn a_countdown_running_when_the_record_starts_continues_from_its_taint() {
        // The node was tainted at -100 (its `timeAdded`), before the record starts at 0: api (300 s)
        // is due at 200, not 300; web (60 s) was due at -40: it fires at the start, and its
        // deletion at 30 is 70 s late. A pod already terminating at the start is not followed.
        let mut taint = Taint::new("node.kubernetes.io/unreachable", "", Effect::NoExecute);
        taint.time_added = Some(t(-100));
        let node = SnapshotNode::new("n1".into(), BTreeMap::new(), [taint]);
        let mut gone = SnapshotPod::running(pod("old", None), Some(t(-500)));
        gone.terminating = true;
        let pods = vec![
            SnapshotPod::running(pod("api", Some(300)), Some(t(-500))),
            SnapshotPod::running(pod("web", Some(60)), Some(t(-500))),
            gone,
        ];
        let snapshot = Snapshot {
            nodes: vec![node],
            pods,
            controller_acquired: None,
            taken: None,
            workloads: Workloads::default(),
        };
        let moments = [
            at(0, Seen::Start(Box::new(snapshot))),
            deleted(30, "web", Deleter::Controller),
            deleted(200, "api", Deleter::Controller),
        ];
        let found = review(&moments, t(600), S);
        assert_eq!(
            verdicts(&found),
            vec![
                ("shop/web".to_owned(), Verdict::Late(70 * S), Some(-40)),
                ("shop/api".to_owned(), Verdict::OnTime, Some(200))
            ]
        );
    }

    #[test]
    fn a_gap_between_due_and_deleted_makes_the_judgement_unknown() {
        let moments = [
            start(&[pod("api", Some(60)), pod("web", Some(300))]),
            at(100, Seen::Node(node(true))),
            at(150, Seen::Gap { until: t(170) }),
            deleted(175, "api", Deleter::Controller),
            deleted(400, "web", Deleter::Controller),
        ];
        let found = review(&moments, t(600), S);
        let gaps: Vec<(String, bool)> = found.pods.iter().map(|p| (p.pod.key.to_string(), p.in_gap)).collect();
        assert_eq!(gaps, vec![("shop/api".to_owned(), true), ("shop/web".to_owned(), false)]);
        assert_eq!(found.gaps, vec![(t(150), t(170))]);
    }
}
