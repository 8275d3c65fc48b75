//! The loop on tokio's paused clock: countdowns, terms and leadership, pods terminating, the
//! clock's corrections, device taints, the summary.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, watch};

use crate::engine::model::{Effect, PodKey, Taint, Toleration, Uid};
use crate::engine::snapshot::SnapshotPod;
use crate::engine::time::Timestamp;
use crate::runtime::harness::*;
use crate::runtime::report::{HeldBy, Report, RunEvent};

use crate::runtime::changes::{NodeChange, PodChange};
use crate::runtime::event_loop::run;
use crate::runtime::evictor::{Controller, Notice};
use crate::runtime::options::{Leadership, Policy, RunOptions, Sources};
use crate::time::Clock;

#[tokio::test(start_paused = true)]
async fn a_follower_decides_nothing_then_leads_from_a_replay_of_the_current_lists() {
    let nodes = vec![node("n1", &[("a", -100)]), node("n2", &[])];
    let pods = vec![pod("short", "n1", &[("a", Some(60))], -3600), pod("long", "n1", &[("a", Some(300))], -3600)];
    let (leading, leadership) = watch::channel(false);
    let leading = Arc::new(leading);
    let options = RunOptions::default();
    let metrics = options.metrics.clone();
    let h = start_with(nodes, pods, options, 1000, Leadership::elected(leadership));
    // While following: a taint and a new pod arrive; the lists keep them, nothing is decided.
    node_at(&h, 10, NodeChange::Applied(node("n2", &[("a", 10)])));
    pod_at(&h, 11, PodChange::Applied(pod("late", "n2", &[("a", Some(30))], 11)));
    lead_at(&leading, 50, true);
    let (summary, mut deletions, reports) = h.finish().await;
    deletions.sort();
    // The term starts at +50 from the replay: short (due -40) and late (due +40) are overdue.
    assert_eq!(deletions, [deleted("late", 50), deleted("long", 200), deleted("short", 50)]);
    assert_eq!(summary.deleted, 3);
    let synced: Vec<_> = reports.iter().filter(|r| matches!(r.event, RunEvent::Synced { .. })).map(|r| r.at).collect();
    assert_eq!(synced, [t(50)], "seeded once, when leading began");
    assert!(metrics.is_ready(), "ready after the initial lists, leader or not");
}

#[tokio::test(start_paused = true)]
async fn a_follower_taking_over_continues_each_countdown_as_it_ran() {
    // e3 tolerates a 20 s and b 120 s; both on n1 at +0, a removed at +5: the controller keeps the
    // countdown of +0..+20 (a countdown is never moved). This instance follows from the start and
    // leads from +10. Before, its term began from a replay of the lists of +10, which show b alone:
    // e3 deleted at +120, 100 s late. Its engine followed the lists meanwhile: deleted at +20.
    let nodes = vec![node("n1", &[])];
    let pods = vec![pod("e3", "n1", &[("a", Some(20)), ("b", Some(120))], -3600)];
    let (leading, leadership) = watch::channel(false);
    let leading = Arc::new(leading);
    let h = start_with(nodes, pods, RunOptions::default(), 1000, Leadership::elected(leadership));
    node_at(&h, 0, NodeChange::Applied(node("n1", &[("a", 0), ("b", 0)])));
    node_at(&h, 5, NodeChange::Applied(node("n1", &[("b", 0)])));
    lead_at(&leading, 10, true);
    let (_, deletions, reports) = h.finish().await;
    assert_eq!(deletions, [deleted("e3", 20)], "{reports:#?}");
    // And a deletion that fell due while another led, not carried out: due at once when leading.
    let nodes = vec![node("n1", &[])];
    let pods = vec![pod("x", "n1", &[("a", Some(5))], -3600)];
    let (leading, leadership) = watch::channel(false);
    let leading = Arc::new(leading);
    let h = start_with(nodes, pods, RunOptions::default(), 1000, Leadership::elected(leadership));
    node_at(&h, 1, NodeChange::Applied(node("n1", &[("a", 1)])));
    lead_at(&leading, 30, true);
    let (_, deletions, reports) = h.finish().await;
    assert_eq!(deletions, [deleted("x", 30)], "{reports:#?}");
}

#[tokio::test(start_paused = true)]
async fn losing_leadership_stops_deleting_at_once_and_the_next_term_reseeds() {
    let nodes = vec![node("n1", &[("a", -100)])];
    let pods = vec![
        pod("stuck", "n1", &[], -3600),
        pod("slow", "n1", &[], -3600),
        pod("long", "n1", &[("a", Some(300))], -3600),
    ];
    let (leading, leadership) = watch::channel(true);
    let leading = Arc::new(leading);
    let h = start_with(nodes, pods, RunOptions::default(), 1000, Leadership::elected(leadership));
    // stuck fails at +0, +1, +3, +7 and +15; its attempt at +31 would succeed.
    h.evictor.failures.lock().unwrap().push(("stuck".into(), 5));
    // slow's first attempt is answered at +60, long after leadership is lost.
    h.evictor.slow.lock().unwrap().push(("slow".into(), Duration::from_secs(60)));
    lead_at(&leading, 20, false);
    lead_at(&leading, 400, true);
    let (_, mut deletions, reports) = h.finish().await;
    deletions.sort();
    // Nothing between +20 and +400: not slow's attempt under way, not stuck's retry at +31, not long's
    // deadline at +200.
    assert_eq!(deletions, [deleted("long", 400), deleted("slow", 400), deleted("stuck", 400)]);
    let abandoned = reports.iter().find_map(|r| match &r.event {
        RunEvent::Warning { message } if message.starts_with("leadership lost") => Some((r.at, message.clone())),
        _ => None,
    });
    assert_eq!(abandoned, Some((t(20), "leadership lost: 2 deletions under way abandoned".to_owned())));
}

#[tokio::test(start_paused = true)]
async fn the_next_term_replays_the_pods_the_last_one_held_with_their_binding_times() {
    let nodes = vec![node("n1", &[("a", -100)])];
    let pods = vec![pod("early", "n1", &[("a", Some(500))], -3600), pod("gone", "n1", &[("a", Some(500))], -3600)];
    let (leading, leadership) = watch::channel(true);
    let leading = Arc::new(leading);
    let options = RunOptions::default();
    let metrics = options.metrics.clone();
    let h = start_with(nodes, pods, options, 1000, Leadership::elected(leadership));
    // During the term (the engine holds the pods): one arrives, bound at +30; one is deleted.
    pod_at(&h, 30, PodChange::Applied(pod("late", "n1", &[("a", Some(100))], 30)));
    pod_at(&h, 31, PodChange::Deleted(PodKey::new("default", "gone")));
    lead_at(&leading, 40, false);
    // While following, after the term: a pod arrives.
    pod_at(&h, 50, PodChange::Applied(pod("follower", "n1", &[("a", Some(200))], 50)));
    lead_at(&leading, 60, true);
    let (_, mut deletions, reports) = h.finish().await;
    deletions.sort();
    // late's countdown runs from its binding (+30), not from the taint (which would make it overdue
    // at +60) nor from the new term (+160); early keeps the taint's (-100 + 500).
    assert_eq!(deletions, [deleted("early", 400), deleted("follower", 250), deleted("late", 130)]);
    let synced: Vec<usize> = reports
        .iter()
        .filter_map(|r| match r.event {
            RunEvent::Synced { pods, .. } => Some(pods),
            _ => None,
        })
        .collect();
    assert_eq!(synced, [2, 3], "each term starts from the lists of its time");
    assert_eq!(
        metrics.encode().lines().find(|l| l.starts_with("taint_evict_watched_pods ")),
        Some("taint_evict_watched_pods 3")
    );
}

#[tokio::test(start_paused = true)]
async fn start_continues_the_replay_overdue_at_once_others_at_their_deadline() {
    // Tainted 100 s before start: the 60 s pod is overdue, the 300 s pod is due at +200 s.
    let nodes = vec![node("n1", &[("node.kubernetes.io/unreachable", -100)])];
    let pods = vec![
        pod("short", "n1", &[("node.kubernetes.io/unreachable", Some(60))], -3600),
        pod("long", "n1", &[("node.kubernetes.io/unreachable", Some(300))], -3600),
        pod("daemon", "n1", &[("node.kubernetes.io/unreachable", None)], -3600),
    ];
    let h = start(nodes, pods, RunOptions::default(), 1000);
    let (summary, deletions, reports) = h.finish().await;
    assert_eq!(deletions, [deleted("short", 0), deleted("long", 200)]);
    assert_eq!(summary.deleted, 2);
    let synced = reports.iter().find_map(|r| match &r.event {
        RunEvent::Synced { scheduled, due, .. } => Some((*scheduled, *due)),
        _ => None,
    });
    assert_eq!(synced, Some((1, 1)), "one timer armed after seeding (long), one deletion due at once (short)");
    assert!(
        !reports.iter().any(|r| matches!(&r.event, RunEvent::Scheduled { pod, .. } if pod.key.name() == "short")),
        "an overdue pod is not shown as scheduled"
    );
}

#[tokio::test(start_paused = true)]
async fn restart_countdowns_starts_every_countdown_at_start_like_upstream() {
    let nodes = vec![node("n1", &[("node.kubernetes.io/unreachable", -100)])];
    let pods = vec![pod("short", "n1", &[("node.kubernetes.io/unreachable", Some(60))], -3600)];
    let options = RunOptions::from(Policy { restart_countdowns: true, ..Policy::default() });
    let (_, deletions, _) = start(nodes, pods, options, 1000).finish().await;
    assert_eq!(deletions, [deleted("short", 60)]);
}

#[tokio::test(start_paused = true)]
async fn taint_added_deletes_untolerated_now_and_tolerated_at_deadline() {
    let nodes = vec![node("n1", &[])];
    let pods = vec![pod("bare", "n1", &[], -60), pod("tol30", "n1", &[("a", Some(30))], -60)];
    let h = start(nodes, pods, RunOptions::default(), 1000);
    node_at(&h, 10, NodeChange::Applied(node("n1", &[("a", 10)])));
    let (_, deletions, _) = h.finish().await;
    assert_eq!(deletions, [deleted("bare", 10), deleted("tol30", 40)]);
}

#[tokio::test(start_paused = true)]
async fn taint_removed_before_the_deadline_cancels_with_an_event() {
    let nodes = vec![node("n1", &[])];
    let pods = vec![pod("tol30", "n1", &[("a", Some(30))], -60)];
    let h = start(nodes, pods, RunOptions::default(), 1000);
    node_at(&h, 10, NodeChange::Applied(node("n1", &[("a", 10)])));
    node_at(&h, 20, NodeChange::Applied(node("n1", &[])));
    let notices = h.evictor.notices.clone();
    let (summary, deletions, reports) = h.finish().await;
    assert_eq!(deletions, []);
    assert_eq!(summary.cancelled, 1);
    assert_eq!(*notices.lock().unwrap(), [("tol30".to_owned(), Notice::Cancelling(Controller::NodeTaints))]);
    let cancelled_at = reports.iter().find(|r| matches!(r.event, RunEvent::Cancelled { .. })).map(|r| r.at);
    assert_eq!(cancelled_at, Some(t(20)));
}

#[tokio::test(start_paused = true)]
async fn pod_deleted_before_its_deadline_is_not_deleted() {
    let nodes = vec![node("n1", &[("a", -10)])];
    let pods = vec![pod("tol30", "n1", &[("a", Some(30))], -60)];
    let h = start(nodes, pods, RunOptions::default(), 1000);
    pod_at(&h, 5, PodChange::Deleted(PodKey::new("default", "tol30")));
    let (summary, deletions, _) = h.finish().await;
    assert_eq!(deletions, []);
    assert_eq!(summary.cancelled, 1);
}

#[tokio::test(start_paused = true)]
async fn node_change_is_applied_before_a_pod_change_waiting_with_it() {
    // At +10 the pod's tolerations become "forever" and the node gains a taint the old tolerations do
    // not cover, both queued before the loop wakes. Node first (upstream's priority): the untolerated
    // taint deletes the pod. Pod first would have cancelled its countdown and saved it.
    let h = start(
        vec![node("n1", &[("a", -5)])],
        vec![pod("p", "n1", &[("a", Some(100))], -60)],
        RunOptions::default(),
        1000,
    );
    let (nodes, pods) = (h.nodes.clone(), h.pods.clone());
    tokio::spawn(async move {
        tokio::time::sleep_until(tokio::time::Instant::now() + Duration::from_secs(10)).await;
        pods.try_send(PodChange::Applied(pod("p", "n1", &[("a", None), ("b", None)], -60))).unwrap();
        nodes.try_send(NodeChange::Applied(node("n1", &[("a", -5), ("b", 10)]))).unwrap();
    });
    let (_, deletions, _) = h.finish().await;
    assert_eq!(deletions, [deleted("p", 10)]);
}

#[tokio::test(start_paused = true)]
async fn summary_lists_what_is_still_scheduled_and_what_keeps_failing() {
    let nodes = vec![node("n1", &[("a", 0)])];
    let pods = vec![pod("later", "n1", &[("a", Some(5000))], -60), pod("denied", "n1", &[], -60)];
    let h = start(
        nodes,
        pods,
        RunOptions::from(Policy { drain_timeout: Duration::from_secs(1), ..Policy::default() }),
        100,
    );
    h.evictor.failures.lock().unwrap().push(("denied".into(), u32::MAX));
    let (summary, _, _) = h.finish().await;
    assert_eq!(summary.scheduled.iter().map(|(p, at)| (p.key.name(), *at)).collect::<Vec<_>>(), [("later", t(5000))]);
    assert_eq!(
        summary.failed.iter().map(|(p, r)| (p.key.name(), r.as_str())).collect::<Vec<_>>(),
        [("denied", "the server is unavailable")]
    );
}

#[tokio::test(start_paused = true)]
async fn a_shorter_tolerated_taint_arriving_later_keeps_the_deadline() {
    let h = start(
        vec![node("n1", &[("a", 0)])],
        vec![pod("p", "n1", &[("a", Some(3600)), ("b", Some(60))], -60)],
        RunOptions::default(),
        4000,
    );
    node_at(&h, 10, NodeChange::Applied(node("n1", &[("a", 0), ("b", 10)])));
    let (_, deletions, _) = h.finish().await;
    assert_eq!(deletions, [deleted("p", 3600)]);
}

#[tokio::test(start_paused = true)]
async fn untolerated_taint_added_replaces_the_countdown_with_an_immediate_deletion() {
    let h = start(
        vec![node("n1", &[("a", 0)])],
        vec![pod("p", "n1", &[("a", Some(300))], -60)],
        RunOptions::default(),
        1000,
    );
    node_at(&h, 50, NodeChange::Applied(node("n1", &[("a", 0), ("c", 50)])));
    let (summary, deletions, _) = h.finish().await;
    assert_eq!(deletions, [deleted("p", 50)]);
    assert_eq!(summary.cancelled, 1, "the countdown was cancelled first (upstream's event)");
}

#[tokio::test(start_paused = true)]
async fn remaining_taints_tolerated_forever_cancel() {
    let h = start(
        vec![node("n1", &[("a", 0), ("d", 0)])],
        vec![pod("p", "n1", &[("a", Some(300)), ("d", None)], -60)],
        RunOptions::default(),
        1000,
    );
    node_at(&h, 50, NodeChange::Applied(node("n1", &[("d", 0)])));
    let (summary, deletions, _) = h.finish().await;
    assert_eq!((deletions, summary.cancelled), (vec![], 1));
}

#[tokio::test(start_paused = true)]
async fn node_deleted_keeps_the_timer() {
    let h = start(
        vec![node("n1", &[("a", 0)])],
        vec![pod("p", "n1", &[("a", Some(300))], -60)],
        RunOptions::default(),
        1000,
    );
    node_at(&h, 50, NodeChange::Deleted("n1".into()));
    let (_, deletions, _) = h.finish().await;
    assert_eq!(deletions, [deleted("p", 300)]);
}

#[tokio::test(start_paused = true)]
async fn a_node_that_leaves_the_scope_cancels_its_pods_deletions() {
    let h = start(
        vec![node("n1", &[("a", 0)]), node("n2", &[("a", 0)])],
        vec![pod("p", "n1", &[("a", Some(300))], -60), pod("q", "n2", &[("a", Some(300))], -60)],
        RunOptions::default(),
        1000,
    );
    node_at(&h, 50, NodeChange::Left("n1".into()));
    let (summary, deletions, reports) = h.finish().await;
    assert_eq!(deletions, [deleted("q", 300)], "n1 is no longer enforced");
    let cancelled: Vec<_> = reports
        .iter()
        .filter_map(|r| match &r.event {
            RunEvent::Cancelled { pod, .. } => Some((pod.key.name().to_owned(), r.at)),
            _ => None,
        })
        .collect();
    assert_eq!(cancelled, [("p".to_owned(), t(50))]);
    assert_eq!(summary.cancelled, 1);
}

#[tokio::test(start_paused = true)]
async fn relist_of_unchanged_objects_does_not_restart_countdowns() {
    let nodes = vec![node("n1", &[("a", 0)])];
    let pods = vec![pod("p", "n1", &[("a", Some(300))], -60)];
    let h = start(nodes.clone(), pods.clone(), RunOptions::default(), 1000);
    node_at(&h, 100, NodeChange::Listed(nodes));
    pod_at(&h, 100, PodChange::Listed(pods));
    let (_, deletions, _) = h.finish().await;
    assert_eq!(deletions, [deleted("p", 300)]);
}

#[tokio::test(start_paused = true)]
async fn synced_counts_the_pods_already_terminating_apart_not_as_deletions_due_now() {
    // Fixed: after an outage the line said 2 deletions due now where one pod was terminating.
    let nodes = vec![node("n1", &[("a", -100)])];
    let mut terminating = pod("terminating", "n1", &[], -3600);
    terminating.terminating = true;
    let pods = vec![terminating, pod("overdue", "n1", &[], -3600), pod("later", "n1", &[("a", Some(300))], -3600)];
    let (_, deletions, reports) = start(nodes, pods, RunOptions::default(), 1000).finish().await;
    assert_eq!(deletions, [deleted("overdue", 0), deleted("later", 200)]);
    let synced = reports.iter().find_map(|r| match &r.event {
        RunEvent::Synced { scheduled, terminating, due, .. } => Some((*scheduled, *terminating, *due)),
        _ => None,
    });
    assert_eq!(synced, Some((1, 1, 1)), "later armed; terminating apart; overdue due at once");
}

#[tokio::test(start_paused = true)]
async fn a_pod_already_terminating_is_reported_gone_without_another_delete() {
    let nodes = vec![node("n1", &[("a", -10)])];
    let mut terminating = pod("terminating", "n1", &[], -3600);
    terminating.terminating = true;
    let pods = vec![terminating, pod("running", "n1", &[("a", Some(30))], -3600)];
    let h = start(nodes, pods, RunOptions::default(), 100);
    // A pod deleted while the run watches: its later work is done without a DELETE too.
    let mut deleting = pod("running", "n1", &[("a", Some(30))], -3600);
    deleting.terminating = true;
    pod_at(&h, 5, PodChange::Applied(deleting));
    let (summary, deletions, reports) = h.finish().await;
    assert_eq!(deletions, [], "no DELETE for a pod whose deletion is under way");
    assert_eq!(summary.gone, 2);
    let gone: Vec<_> = reports
        .iter()
        .filter_map(|r| match &r.event {
            RunEvent::Gone { pod, reason } => Some((pod.key.name().to_owned(), reason.clone(), r.at)),
            _ => None,
        })
        .collect();
    assert_eq!(gone.len(), 2, "{gone:?}");
    assert!(gone.iter().all(|(_, reason, _)| reason.starts_with("already terminating")), "{gone:?}");
    assert_eq!(gone.iter().find(|(name, ..)| name == "running").map(|g| g.2), Some(t(20)), "at its deadline");
}

#[tokio::test(start_paused = true)]
async fn a_correction_of_the_clock_moves_each_deletion_to_its_control_plane_instant() {
    // Deadlines are the control plane's instants (docs/connecting.md, "Whose clock"); the clock is corrected while `run`
    // runs (a better reading, or this machine resumed from sleep).
    let nodes = vec![node("n1", &[("a", 0)])];
    let pods = vec![pod("early", "n1", &[("a", Some(30))], -3600), pod("late", "n1", &[("a", Some(60))], -3600)];
    let h = start(nodes, pods, RunOptions::default(), 1000);
    // At +10 this machine turns out 5 s behind: the control plane reads +15, early's deadline
    // (+30) is 15 s away, not 20. Without re-arming, early went at the control plane's +35.
    correct_at(&h, 10, -5);
    // At +40 (the control plane's +45) it turns out 5 s ahead instead: the control plane reads +35,
    // and late's deadline (+60) is 25 s away; it must not go at the instant armed before (+55).
    correct_at(&h, 40, 5);
    let (_, mut deletions, _) = h.finish().await;
    deletions.sort();
    assert_eq!(deletions, [deleted("early", 30), deleted("late", 60)]);
}

#[tokio::test(start_paused = true)]
async fn the_summary_lists_the_deletions_due_and_held_with_what_holds_each() {
    // a, b and c, ready replicas, and a bare pod d, all due at once; one deletion per minute; stopped
    // at +30: a went, b and d wait for a slot, c is the last ready replica.
    let nodes = vec![node("n1", &[("a", 0)])];
    let pods =
        vec![replica("a", "n1", true), replica("b", "n1", true), replica("c", "n1", true), pod("d", "n1", &[], -60)];
    let options = RunOptions::from(Policy {
        max_deletions: Some((1, Duration::from_secs(60))),
        keep_last_ready: true,
        ..Policy::default()
    });
    let h = start(nodes, pods, options, 30);
    let (summary, deletions, reports) = h.finish().await;
    assert_eq!(deletions, [deleted("a", 0)], "{reports:#?}");
    let held: Vec<(&str, Timestamp, HeldBy)> =
        summary.held.iter().map(|(pod, at, by)| (pod.key.name(), *at, *by)).collect();
    assert_eq!(
        held,
        [("b", t(0), HeldBy::MaxDeletions), ("c", t(0), HeldBy::KeepLastReady), ("d", t(0), HeldBy::MaxDeletions)]
    );
    assert!(summary.scheduled.is_empty(), "held, not scheduled: {summary:?}");
}

#[tokio::test(start_paused = true)]
async fn a_pod_this_run_deleted_is_not_scheduled_again_nor_counted_gone_while_it_terminates() {
    // x does not tolerate a: deleted at +0, then terminating (its grace period). At +5 n1 gains b,
    // which x tolerates 10 s: the engine decides on x again (upstream would DELETE again). Before,
    // x was said `scheduled` again, then `gone` at +15, and counted deleted and gone.
    let nodes = vec![node("n1", &[("a", 0)])];
    let h = start(nodes, vec![pod("x", "n1", &[("b", Some(10))], -60)], RunOptions::default(), 60);
    pod_at(&h, 1, PodChange::Applied(SnapshotPod { terminating: true, ..pod("x", "n1", &[("b", Some(10))], -60) }));
    node_at(&h, 5, NodeChange::Applied(node("n1", &[("a", 0), ("b", 5)])));
    let (summary, deletions, reports) = h.finish().await;
    assert_eq!(deletions, [deleted("x", 0)]);
    assert_eq!((summary.deleted, summary.gone), (1, 0), "{reports:#?}");
    let said = |r: &&Report| matches!(r.event, RunEvent::Scheduled { .. } | RunEvent::Gone { .. });
    assert_eq!(reports.iter().filter(said).count(), 0, "{reports:#?}");
}

mod devices {
    //! Device taints enforced beside node taints, by the device-taint controller's rules.

    use super::*;
    use crate::engine::devices::{
        Allocated, Claim, ClaimUse, Consumer, DeviceId, DeviceInput, Slice, SliceDevice, Via,
    };

    /// Pod `name` on `n1`, naming claim `name-gpu` (by name).
    fn gpu_pod(name: &str) -> SnapshotPod {
        let mut pod = pod(name, "n1", &[], -60);
        let uses = vec![ClaimUse { entry: "gpu".into(), claim: Some(format!("{name}-gpu").into()), via: Via::Name }];
        pod.claims = Some(uses.into());
        pod
    }

    /// The claim of `gpu_pod(pod)`, holding `device`, tolerating its taint for `seconds`.
    fn claim(pod: &str, device: &str, seconds: i64) -> Claim {
        let toleration = Toleration {
            key: "".into(),
            operator: "Exists".into(),
            value: "".into(),
            effect: Some(Effect::NoExecute),
            seconds: Some(seconds),
        };
        let id = DeviceId { driver: "gpu".into(), pool: "n1".into(), device: device.into() };
        Claim {
            namespace: "default".into(),
            name: format!("{pod}-gpu").into(),
            owner: None,
            allocation: Some(vec![Allocated { request: "gpu".into(), device: id, tolerations: vec![toleration] }]),
            reserved_for: vec![Consumer::pod(pod, Uid::from(format!("uid-{pod}")))],
            requested_tolerations: 1,
        }
    }

    /// The pool's slice: `tainted` devices carry an ECC taint added at `t(added)`.
    fn slice(generation: i64, tainted: &[&str], added: i64) -> Slice {
        let taint = Taint::new("ecc", "", Effect::NoExecute).with_time_added(t(added));
        let device = |name: &str| SliceDevice {
            name: name.into(),
            taints: if tainted.contains(&name) { vec![taint.clone()] } else { Vec::new() },
        };
        Slice {
            name: "n1-gpu".into(),
            driver: "gpu".into(),
            pool: "n1".into(),
            generation,
            devices: vec![device("g0"), device("g1")],
        }
    }

    fn device_at(devices: &mpsc::Sender<DeviceInput>, at: i64, input: DeviceInput) {
        let tx = devices.clone();
        tokio::spawn(async move {
            tokio::time::sleep_until(tokio::time::Instant::now() + Duration::from_secs(at as u64)).await;
            tx.send(input).await.unwrap();
        });
    }

    /// `run` with device taints (Kubernetes 1.36), the DRA objects listed at start.
    fn start_with_devices(
        pods: Vec<SnapshotPod>,
        claims: Vec<Claim>,
        slice: Slice,
    ) -> (Harness, mpsc::Sender<DeviceInput>) {
        let clock = Clock::starting_at(t(0));
        let evictor = Recorder::default();
        *evictor.clock.lock().unwrap() = Some(clock.clone());
        let (node_tx, node_rx) = mpsc::channel(64);
        let (pod_tx, pod_rx) = mpsc::channel(64);
        let (device_tx, device_rx) = mpsc::channel(64);
        let (report_tx, reports) = mpsc::unbounded_channel();
        node_tx.try_send(NodeChange::Listed(vec![node("n1", &[])])).unwrap();
        pod_tx.try_send(PodChange::Listed(pods)).unwrap();
        device_tx.try_send(DeviceInput::SlicesListed(vec![slice])).unwrap();
        device_tx.try_send(DeviceInput::ClaimsListed(claims)).unwrap();
        device_tx.try_send(DeviceInput::RulesListed(Vec::new())).unwrap();
        let sources = Sources {
            nodes: node_rx,
            pods: pod_rx,
            devices: Some(device_rx),
            replicas: None,
            controller_acquired: None,
            leadership: Leadership::always(),
        };
        let options = RunOptions { device_minor: Some(36), ..RunOptions::default() };
        let stop = tokio::time::sleep(Duration::from_secs(1000));
        let run = tokio::spawn(run(options, sources, evictor.clone(), clock, report_tx, stop));
        (Harness { nodes: node_tx, pods: pod_tx, evictor, reports, run }, device_tx)
    }

    #[tokio::test(start_paused = true)]
    async fn a_device_taint_deletes_at_time_added_plus_the_claims_toleration_with_its_controllers_words() {
        // The taint was added 10 s before `run` started: the deadline is absolute, not restarted.
        let (h, _devices) =
            start_with_devices(vec![gpu_pod("train")], vec![claim("train", "g0", 30)], slice(1, &["g0"], -10));
        let notices = h.evictor.notices.clone();
        let (summary, deletions, _) = h.finish().await;
        assert_eq!(deletions, [deleted("train", 20)]);
        assert_eq!(summary.deleted, 1);
        assert_eq!(*notices.lock().unwrap(), [("train".to_owned(), Notice::Marking(Controller::DeviceTaints))]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_device_untainted_before_the_deadline_cancels_with_the_device_controllers_event() {
        let pods = vec![gpu_pod("train"), gpu_pod("infer")];
        let claims = vec![claim("train", "g0", 60), claim("infer", "g1", 5)];
        let (h, devices) = start_with_devices(pods, claims, slice(1, &["g0", "g1"], 0));
        // At 30 s the driver publishes a new generation without the taint on g0.
        device_at(&devices, 30, DeviceInput::SliceApplied(slice(2, &["g1"], 0)));
        let notices = h.evictor.notices.clone();
        let (summary, deletions, _) = h.finish().await;
        assert_eq!(deletions, [deleted("infer", 5)]);
        assert_eq!(summary.cancelled, 1);
        let cancelled = ("train".to_owned(), Notice::Cancelling(Controller::DeviceTaints));
        assert!(notices.lock().unwrap().contains(&cancelled), "{:?}", notices.lock().unwrap());
    }

    #[tokio::test(start_paused = true)]
    async fn a_pod_deleted_before_its_device_deadline_is_not_deleted_and_a_terminating_one_is_left_alone() {
        let mut terminating = gpu_pod("leaving");
        terminating.terminating = true;
        let pods = vec![gpu_pod("train"), terminating];
        let claims = vec![claim("train", "g0", 60), claim("leaving", "g1", 0)];
        let (h, _devices) = start_with_devices(pods, claims, slice(1, &["g0", "g1"], 0));
        pod_at(&h, 30, PodChange::Deleted(PodKey::new("default", "train")));
        let notices = h.evictor.notices.clone();
        let (_, deletions, _) = h.finish().await;
        assert_eq!(deletions, []);
        assert_eq!(*notices.lock().unwrap(), [], "a deleted pod's deletion goes silently");
    }
}
