//! The runtime on tokio's paused clock: in-memory sources, a recording evictor, exact virtual instants.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{mpsc, watch};

use super::*;
use crate::engine::model::{Effect, Pod, PodKey, PodRef, Taint, Toleration, Uid};
use crate::engine::snapshot::{PodReady, SnapshotNode, SnapshotPod};
use crate::engine::time::Timestamp;
use crate::metrics::FailureReason;
use crate::runtime::report::{HeldBy, LetGo, Report, RunEvent, Summary};
use crate::time::Clock;

/// 2026-11-22T10:00:00Z, the virtual start.
const T0: i64 = 1_795_341_600;

fn t(offset: i64) -> Timestamp {
    Timestamp::from_unix_seconds(T0 + offset)
}

#[derive(Clone, Default)]
struct Recorder {
    /// It says it is a dry run (it records alike: a dry run's deletions change nothing either).
    dry_run: bool,
    clock: Arc<Mutex<Option<Clock>>>,
    deletions: Arc<Mutex<Vec<(String, Timestamp)>>>,
    notices: Arc<Mutex<Vec<(String, Notice)>>>,
    /// Pods whose next N attempts fail.
    failures: Arc<Mutex<Vec<(String, u32)>>>,
    gone: Arc<Mutex<Vec<String>>>,
    /// Pods whose next attempt takes this long to answer.
    slow: Arc<Mutex<Vec<(String, Duration)>>>,
    /// Every attempt waits for its turn here, as the cluster's writes do.
    throttle: Option<Throttle>,
    /// Pods whose next attempt the server refuses with 503 and this `Retry-After`.
    pushback: Arc<Mutex<Vec<(String, Duration)>>>,
    /// Pods whose eviction a PodDisruptionBudget (`default/NAME`) refuses the next N attempts.
    budgets: Arc<Mutex<Vec<(String, String, u32)>>>,
    /// Requests go to a server answering a few at a time: a deletion is then two writes (the
    /// status PATCH, the DELETE), an event one.
    server: Option<Server>,
}

/// A server answering `capacity` requests at a time (in the order they came), a write in `write`,
/// an event in `event`.
#[derive(Clone)]
struct Server {
    capacity: Arc<tokio::sync::Semaphore>,
    write: Duration,
    event: Duration,
}

impl Server {
    fn new(capacity: usize, write: Duration, event: Duration) -> Self {
        Self { capacity: Arc::new(tokio::sync::Semaphore::new(capacity)), write, event }
    }

    /// One request taking `latency` of the server's time (simulated on the paused clock).
    async fn request(&self, latency: Duration) {
        let _serving = self.capacity.acquire().await.expect("server open");
        tokio::time::sleep(latency).await;
    }
}

impl Evictor for Recorder {
    fn is_dry_run(&self) -> bool {
        self.dry_run
    }

    async fn evict(&self, pod: &PodRef, _: Controller) -> Outcome {
        let name = pod.key.name().to_owned();
        let latency = self.slow.lock().unwrap().iter().position(|(n, _)| *n == name);
        if let Some(index) = latency {
            // A slow API server (simulated latency on the paused clock, not synchronisation).
            let (_, latency) = self.slow.lock().unwrap().remove(index);
            tokio::time::sleep(latency).await;
        }
        if let Some(throttle) = &self.throttle {
            throttle.admit().await;
            let refused = self.pushback.lock().unwrap().iter().position(|(n, _)| *n == name);
            if let Some(index) = refused {
                // What the client's layer does on a 503 with `Retry-After`.
                let (_, retry_after) = self.pushback.lock().unwrap().remove(index);
                throttle.push_back(retry_after);
                return Outcome::Failed { reason: FailureReason::ServerError, message: "service unavailable".into() };
            }
        }
        let now = self.clock.lock().unwrap().as_ref().expect("clock set").now();
        if let Some(entry) = self.budgets.lock().unwrap().iter_mut().find(|(n, _, left)| *n == name && *left > 0) {
            entry.2 -= 1;
            let (budget, message) = (format!("default/{}", entry.1), format!("The disruption budget {}", entry.1));
            return Outcome::Blocked { budget, message };
        }
        if let Some(entry) = self.failures.lock().unwrap().iter_mut().find(|(n, left)| *n == name && *left > 0) {
            entry.1 -= 1;
            return Outcome::Failed { reason: FailureReason::ServerError, message: "the server is unavailable".into() };
        }
        if self.gone.lock().unwrap().contains(&name) {
            return Outcome::Gone("precondition failed".into());
        }
        let now = match &self.server {
            Some(server) => {
                server.request(server.write).await;
                server.request(server.write).await;
                self.clock.lock().unwrap().as_ref().expect("clock set").now()
            }
            None => now,
        };
        self.deletions.lock().unwrap().push((name, now));
        Outcome::Deleted
    }

    async fn notify(&self, pod: &PodRef, notice: Notice) {
        if let Some(server) = &self.server {
            server.request(server.event).await;
        }
        self.notices.lock().unwrap().push((pod.key.name().to_owned(), notice));
    }

    fn throttle(&self) -> Option<&Throttle> {
        self.throttle.as_ref()
    }
}

fn node(name: &str, taints: &[(&str, i64)]) -> SnapshotNode {
    let taints = taints.iter().map(|(k, added)| Taint::new(*k, "", Effect::NoExecute).with_time_added(t(*added)));
    SnapshotNode::new(name.into(), Default::default(), taints)
}

fn pod(name: &str, node: &str, tolerations: &[(&str, Option<i64>)], bound: i64) -> SnapshotPod {
    let tolerations: Vec<Toleration> = tolerations
        .iter()
        .map(|(key, seconds)| Toleration {
            key: (*key).into(),
            operator: "Exists".into(),
            value: Box::default(),
            effect: Some(Effect::NoExecute),
            seconds: *seconds,
        })
        .collect();
    SnapshotPod {
        pod: Pod {
            key: PodKey::new("default", name),
            uid: format!("uid-{name}").into(),
            node: Some(node.into()),
            tolerations: tolerations.into(),
        },
        bound_at: Some(t(bound)),
        phase: "Running".into(),
        terminating: false,
        deletion_timestamp: None,
        ready: crate::engine::snapshot::PodReady::No,
        claims: None,
        owner: None,
        tolerations_edited: None,
    }
}

struct Harness {
    nodes: mpsc::Sender<NodeChange>,
    pods: mpsc::Sender<PodChange>,
    evictor: Recorder,
    reports: mpsc::UnboundedReceiver<Report>,
    run: tokio::task::JoinHandle<Summary>,
}

/// Starts `run` at virtual T0 with the given initial lists; it stops at `T0 + stop_after`.
fn start(nodes: Vec<SnapshotNode>, pods: Vec<SnapshotPod>, options: RunOptions, stop_after: i64) -> Harness {
    start_with(nodes, pods, options, stop_after, Leadership::always())
}

/// Like [`start`], deciding only while `leadership` says so.
fn start_with(
    nodes: Vec<SnapshotNode>,
    pods: Vec<SnapshotPod>,
    options: RunOptions,
    stop_after: i64,
    leadership: Leadership,
) -> Harness {
    start_paced(nodes, pods, options, stop_after, leadership, None)
}

/// Like [`start_with`], each attempt paced at `pace` (`--qps`, `--burst`).
fn start_paced(
    nodes: Vec<SnapshotNode>,
    pods: Vec<SnapshotPod>,
    options: RunOptions,
    stop_after: i64,
    leadership: Leadership,
    pace: Option<(f64, u32)>,
) -> Harness {
    let clock = Clock::starting_at(t(0));
    let throttle = pace.map(|(qps, burst)| Throttle::new(clock, qps, burst));
    start_recording(nodes, pods, options, stop_after, leadership, Recorder { throttle, ..Recorder::default() })
}

/// Like [`start_with`], recording with `evictor`.
fn start_recording(
    nodes: Vec<SnapshotNode>,
    pods: Vec<SnapshotPod>,
    options: RunOptions,
    stop_after: i64,
    leadership: Leadership,
    evictor: Recorder,
) -> Harness {
    start_recording_at(t(0), nodes, pods, options, stop_after, leadership, evictor)
}

/// Like [`start_recording`], the clock starting at `at`.
fn start_recording_at(
    at: Timestamp,
    nodes: Vec<SnapshotNode>,
    pods: Vec<SnapshotPod>,
    options: RunOptions,
    stop_after: i64,
    leadership: Leadership,
    evictor: Recorder,
) -> Harness {
    let clock = Clock::starting_at(at);
    *evictor.clock.lock().unwrap() = Some(clock.clone());
    let (node_tx, node_rx) = mpsc::channel(64);
    let (pod_tx, pod_rx) = mpsc::channel(64);
    let (report_tx, reports) = mpsc::unbounded_channel();
    node_tx.try_send(NodeChange::Listed(nodes)).unwrap();
    pod_tx.try_send(PodChange::Listed(pods)).unwrap();
    let sources =
        Sources { nodes: node_rx, pods: pod_rx, devices: None, replicas: None, controller_acquired: None, leadership };
    let stop = tokio::time::sleep(Duration::from_secs(stop_after as u64));
    let run = tokio::spawn(run(options, sources, evictor.clone(), clock, report_tx, stop));
    Harness { nodes: node_tx, pods: pod_tx, evictor, reports, run }
}

/// Sends `change` at virtual `T0 + at`.
fn node_at(h: &Harness, at: i64, change: NodeChange) {
    let tx = h.nodes.clone();
    tokio::spawn(async move {
        tokio::time::sleep_until(tokio::time::Instant::now() + Duration::from_secs(at as u64)).await;
        tx.send(change).await.unwrap();
    });
}

fn pod_at(h: &Harness, at: i64, change: PodChange) {
    let tx = h.pods.clone();
    tokio::spawn(async move {
        tokio::time::sleep_until(tokio::time::Instant::now() + Duration::from_secs(at as u64)).await;
        tx.send(change).await.unwrap();
    });
}

impl Harness {
    async fn finish(mut self) -> (Summary, Vec<(String, Timestamp)>, Vec<Report>) {
        let summary = self.run.await.unwrap();
        let mut reports = Vec::new();
        while let Ok(report) = self.reports.try_recv() {
            reports.push(report);
        }
        let deletions = self.evictor.deletions.lock().unwrap().clone();
        (summary, deletions, reports)
    }
}

fn deleted(name: &str, at: i64) -> (String, Timestamp) {
    (name.into(), t(at))
}

/// Sets leadership at virtual `T0 + at`.
fn lead_at(leading: &Arc<watch::Sender<bool>>, at: i64, value: bool) {
    let leading = leading.clone();
    tokio::spawn(async move {
        tokio::time::sleep_until(tokio::time::Instant::now() + Duration::from_secs(at as u64)).await;
        leading.send_replace(value);
    });
}

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
    let options = RunOptions { restart_countdowns: true, ..RunOptions::default() };
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
async fn failed_deletion_is_retried_with_backoff_until_it_succeeds() {
    let nodes = vec![node("n1", &[("a", 0)])];
    let h = start(nodes, vec![pod("stubborn", "n1", &[], -60)], RunOptions::default(), 1000);
    h.evictor.failures.lock().unwrap().push(("stubborn".into(), 3));
    let (summary, deletions, reports) = h.finish().await;
    // Attempts at 0, 1, 3 and 7 s (backoff 1, 2, 4 s).
    assert_eq!(deletions, [deleted("stubborn", 7)]);
    let failures = reports.iter().filter(|r| matches!(r.event, RunEvent::Failed { .. })).count();
    assert_eq!(failures, 3);
    assert!(summary.failed.is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_pod_blocked_by_its_budget_is_retried_on_its_own_backoff_and_holds_up_no_other_pod() {
    let nodes = vec![node("n1", &[("a", 0)])];
    let pods = vec![pod("guarded", "n1", &[], -60), pod("free", "n1", &[("a", Some(2))], -60)];
    // One deletion at a time: were the blocked pod to keep its permit while it waits, "free" would
    // wait for it.
    let options = RunOptions { concurrency: 1, ..RunOptions::default() };
    let metrics = options.metrics.clone();
    let h = start(nodes, pods, options, 1000);
    h.evictor.budgets.lock().unwrap().push(("guarded".into(), "web".into(), 4));
    let notices = h.evictor.notices.clone();
    let budget_gauge = "taint_evict_blocked_pods{budget=\"default/web\"} 1";
    let probe = {
        let metrics = metrics.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(4)).await;
            metrics.encode()
        })
    };
    let (summary, mut deletions, reports) = h.finish().await;
    deletions.sort();
    // Refused at 0, 5, 15 and 35 (5 s doubling); evicted at 65 (the cap, 30 s, is not reached yet).
    assert_eq!(deletions, [deleted("free", 2), deleted("guarded", 65)]);
    let blocked: Vec<(Timestamp, u32, Timestamp)> = reports
        .iter()
        .filter_map(|r| match &r.event {
            RunEvent::Blocked { budget, attempt, retry_at, .. } if budget == "default/web" => {
                Some((r.at, *attempt, *retry_at))
            }
            _ => None,
        })
        .collect();
    assert_eq!(blocked, [(t(0), 1, t(5)), (t(5), 2, t(15)), (t(15), 3, t(35)), (t(35), 4, t(65))]);
    assert!(!reports.iter().any(|r| matches!(r.event, RunEvent::Failed { .. })), "a refusal is not a failure");
    let blocked_notices: Vec<(String, Notice)> =
        notices.lock().unwrap().iter().filter(|(_, n)| matches!(n, Notice::Blocked { .. })).cloned().collect();
    let once = ("guarded".to_owned(), Notice::Blocked { budget: "default/web".into() });
    assert_eq!(blocked_notices, [once], "one event when it became blocked, not one per retry");
    assert_eq!(summary.deleted, 2);
    assert!(summary.failed.is_empty(), "{:?}", summary.failed);
    let during = probe.await.unwrap();
    assert!(during.contains(budget_gauge), "{during}");
    assert!(during.contains("taint_evict_deletion_failures_total{reason=\"pdb\"} 1"), "{during}");
    let after = metrics.encode();
    assert!(!after.contains("taint_evict_blocked_pods{"), "no pod is blocked any more: {after}");
    assert!(after.contains("taint_evict_deletion_failures_total{reason=\"pdb\"} 4"), "{after}");
}

#[tokio::test(start_paused = true)]
async fn a_blocked_pod_that_is_no_longer_due_is_given_up_and_says_so() {
    let nodes = vec![node("n1", &[("a", 0)])];
    let options = RunOptions::default();
    let metrics = options.metrics.clone();
    let h = start(nodes, vec![pod("guarded", "n1", &[], -60)], options, 100);
    h.evictor.budgets.lock().unwrap().push(("guarded".into(), "web".into(), u32::MAX));
    // The taint goes away at +7, while the pod waits for its retry at +15.
    node_at(&h, 7, NodeChange::Applied(node("n1", &[])));
    let (summary, deletions, reports) = h.finish().await;
    assert!(deletions.is_empty());
    let ended: Vec<(Timestamp, &str)> = reports
        .iter()
        .filter_map(|r| match &r.event {
            RunEvent::Withdrawn { pod, budget } if budget == "default/web" => Some((r.at, pod.key.name())),
            _ => None,
        })
        .collect();
    assert_eq!(ended, [(t(7), "guarded")]);
    let attempts = reports.iter().filter(|r| matches!(r.event, RunEvent::Blocked { .. })).count();
    assert_eq!(attempts, 2, "at 0 and 5, none after the taint went away");
    assert!(summary.failed.is_empty(), "{:?}", summary.failed);
    assert!(!metrics.encode().contains("taint_evict_blocked_pods{"), "{}", metrics.encode());
}

#[tokio::test(start_paused = true)]
async fn a_run_started_afresh_continues_a_countdown_a_removed_taint_left_from_the_lease() {
    // e3 tolerates a 20 s and b 120 s, both added at 0; a goes at 3: the countdown of 20 s runs on.
    // The run stops at 8; another starts at 9 from the lists (b alone) and the ledger the Lease
    // carried: e3 deleted at 20, not at 120 as the replay alone says.
    let ledger = crate::runtime::ledger::Ledger::default();
    let e3 = || pod("e3", "n1", &[("a", Some(20)), ("b", Some(120))], -60);
    let leadership = || Leadership::always().with_ledger(ledger.clone());
    let h = start_with(vec![node("n1", &[("a", 0), ("b", 0)])], vec![e3()], RunOptions::default(), 8, leadership());
    node_at(&h, 3, NodeChange::Applied(node("n1", &[("b", 0)])));
    let (_, deletions, _) = h.finish().await;
    assert!(deletions.is_empty());
    let kept = ledger.countdowns();
    assert_eq!(kept.iter().map(|c| (c.pod.name(), c.work.fire)).collect::<Vec<_>>(), [("e3", t(20))]);

    tokio::time::sleep(Duration::from_secs(1)).await;
    let nodes = vec![node("n1", &[("b", 0)])];
    let h = start_recording_at(t(9), nodes, vec![e3()], RunOptions::default(), 30, leadership(), Recorder::default());
    let (_, deletions, _) = h.finish().await;
    assert_eq!(deletions, [deleted("e3", 20)]);

    // Had b been rewritten meanwhile (another timeAdded), the countdown would not hold: the replay's.
    ledger.adopt(Vec::new(), kept);
    let h = start_with(vec![node("n1", &[("b", 1)])], vec![e3()], RunOptions::default(), 30, leadership());
    let (_, deletions, _) = h.finish().await;
    assert!(deletions.is_empty(), "{deletions:?}");
}

#[tokio::test(start_paused = true)]
async fn under_a_cap_a_refused_eviction_frees_its_slot_and_a_second_taint_moves_no_deletion() {
    // At most 2 deletions per 120 s; x1's budget refuses it once. x1 and x2 take the slots, x3 is
    // capped; x1's refusal frees its slot, which x3 takes at once; x1's retry (at 5) finds none
    // free and waits for x2's to leave the window. A second taint at 3 leaves every pod due: the
    // engine decides again, and nothing is dropped, withdrawn or moved.
    let nodes = vec![node("n1", &[("a", 0)])];
    let pods = vec![pod("x1", "n1", &[], -60), pod("x2", "n1", &[], -60), pod("x3", "n1", &[], -60)];
    let options = RunOptions { max_deletions: Some((2, Duration::from_secs(120))), ..RunOptions::default() };
    let h = start(nodes, pods, options, 200);
    h.evictor.budgets.lock().unwrap().push(("x1".into(), "web".into(), 1));
    // The pods deleted are gone from the watch before the second taint.
    pod_at(&h, 1, PodChange::Deleted(PodKey::new("default", "x2")));
    pod_at(&h, 1, PodChange::Deleted(PodKey::new("default", "x3")));
    node_at(&h, 3, NodeChange::Applied(node("n1", &[("a", 0), ("b", 3)])));
    let (summary, mut deletions, reports) = h.finish().await;
    deletions.sort();
    assert_eq!(deletions, [deleted("x1", 120), deleted("x2", 0), deleted("x3", 0)]);
    let capped: Vec<(Timestamp, &str, Timestamp)> = reports
        .iter()
        .filter_map(|r| match &r.event {
            RunEvent::Capped { pod, until, .. } => Some((r.at, pod.key.name(), *until)),
            _ => None,
        })
        .collect();
    assert_eq!(capped, [(t(0), "x3", t(120)), (t(5), "x1", t(120))]);
    let moved = |r: &&Report| matches!(r.event, RunEvent::Withdrawn { .. } | RunEvent::Dropped { .. });
    assert_eq!(reports.iter().filter(moved).count(), 0, "{reports:#?}");
    let evicting = reports.iter().filter(|r| matches!(r.event, RunEvent::Evicting { .. })).count();
    assert_eq!(evicting, 3, "each eviction starts once, a retry says nothing new");
    assert_eq!(summary.deleted, 3);
}

#[tokio::test(start_paused = true)]
async fn replaced_pod_is_gone_not_an_error() {
    let nodes = vec![node("n1", &[("a", 0)])];
    let h = start(nodes, vec![pod("web-0", "n1", &[], -60)], RunOptions::default(), 100);
    h.evictor.gone.lock().unwrap().push("web-0".into());
    let (summary, deletions, _) = h.finish().await;
    assert_eq!((summary.gone, summary.deleted, deletions.len()), (1, 0, 0));
}

#[tokio::test(start_paused = true)]
async fn summary_lists_what_is_still_scheduled_and_what_keeps_failing() {
    let nodes = vec![node("n1", &[("a", 0)])];
    let pods = vec![pod("later", "n1", &[("a", Some(5000))], -60), pod("denied", "n1", &[], -60)];
    let h = start(nodes, pods, RunOptions { drain_timeout: Duration::from_secs(1), ..RunOptions::default() }, 100);
    h.evictor.failures.lock().unwrap().push(("denied".into(), u32::MAX));
    let (summary, _, _) = h.finish().await;
    assert_eq!(summary.scheduled.iter().map(|(p, at)| (p.key.name(), *at)).collect::<Vec<_>>(), [("later", t(5000))]);
    assert_eq!(
        summary.failed.iter().map(|(p, r)| (p.key.name(), r.as_str())).collect::<Vec<_>>(),
        [("denied", "the server is unavailable")]
    );
}

#[tokio::test(start_paused = true)]
async fn d4_a_shorter_tolerated_taint_arriving_later_keeps_the_deadline() {
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
async fn d8_untolerated_taint_added_replaces_the_countdown_with_an_immediate_deletion() {
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
async fn d9_remaining_taints_tolerated_forever_cancel() {
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
async fn d11_node_deleted_keeps_the_timer() {
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
async fn failing_deletion_stops_retrying_once_the_pod_is_no_longer_due() {
    // The pod is due at +30 but every attempt fails; the taint is removed at +40: no more attempts.
    let h = start(
        vec![node("n1", &[("a", 0)])],
        vec![pod("p", "n1", &[("a", Some(30))], -60)],
        RunOptions::default(),
        1000,
    );
    h.evictor.failures.lock().unwrap().push(("p".into(), u32::MAX));
    node_at(&h, 40, NodeChange::Applied(node("n1", &[])));
    let failures = h.evictor.failures.clone();
    let (summary, deletions, reports) = h.finish().await;
    assert_eq!(deletions, []);
    let attempts: Vec<Timestamp> =
        reports.iter().filter(|r| matches!(r.event, RunEvent::Failed { .. })).map(|r| r.at).collect();
    // Attempts at 30, 31, 33, 37 (backoff 1, 2, 4 s); the next one (45) is withdrawn at 40.
    assert_eq!(attempts, [t(30), t(31), t(33), t(37)]);
    assert!(summary.failed.is_empty(), "a withdrawn deletion is not a failure: {:?}", summary.failed);
    assert!(failures.lock().unwrap()[0].1 > 1000, "no attempt after the withdrawal");
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
async fn deletions_due_together_go_out_at_the_write_rate_in_deadline_order() {
    // Five overdue pods, their deadlines in the reverse of their names' order: e (-50) … a (-10).
    let nodes = vec![node("n1", &[("a", -100)])];
    let pods: Vec<_> = ["e", "d", "c", "b", "a"]
        .iter()
        .zip([50, 60, 70, 80, 90])
        .map(|(n, s)| pod(n, "n1", &[("a", Some(s))], -3600))
        .collect();
    let h = start_paced(nodes, pods, RunOptions::default(), 100, Leadership::always(), Some((2.0, 2)));
    let (summary, deletions, _) = h.finish().await;
    assert_eq!(summary.deleted, 5);
    // A burst of 2 at once, then one every 0.5 s, earliest deadline first.
    let half = |n: i64| t(0).add_nanos(n * 500_000_000);
    let expected: Vec<_> = [("e", 0), ("d", 0), ("c", 1), ("b", 2), ("a", 3)]
        .iter()
        .map(|(name, halves)| ((*name).to_owned(), half(*halves)))
        .collect();
    assert_eq!(deletions, expected);
}

#[tokio::test(start_paused = true)]
async fn retry_after_holds_every_write_and_retries_the_refused_one_then_without_backoff() {
    // "first" is due at once and refused with 503, Retry-After 5 s; "second" falls due at +2.
    let nodes = vec![node("n1", &[("a", 0)])];
    let pods = vec![pod("first", "n1", &[], -60), pod("second", "n1", &[("a", Some(2))], -60)];
    let options = RunOptions::default();
    let metrics = options.metrics.clone();
    let h = start_paced(nodes, pods, options, 100, Leadership::always(), Some((0.0, 1)));
    h.evictor.pushback.lock().unwrap().push(("first".into(), Duration::from_secs(5)));
    let (summary, mut deletions, reports) = h.finish().await;
    deletions.sort();
    // Nothing goes before +5, then both: the refused one is not dropped nor backed off to +1, +3.
    assert_eq!(deletions, [deleted("first", 5), deleted("second", 5)]);
    assert_eq!(summary.deleted, 2);
    let retry_at: Vec<_> = reports
        .iter()
        .filter_map(|r| match &r.event {
            RunEvent::Failed { retry_at, .. } => Some((r.at, *retry_at)),
            _ => None,
        })
        .collect();
    assert_eq!(retry_at, [(t(0), t(5))]);
    let text = metrics.encode();
    assert!(text.contains("taint_evict_deletion_failures_total{reason=\"throttled\"} 1"), "{text}");
}

/// Starts `run` against a [`Server`] answering two requests at a time, a write in 10 ms and an
/// event in 1 s (a fault on the events path).
fn start_served(nodes: Vec<SnapshotNode>, pods: Vec<SnapshotPod>, stop_after: i64) -> Harness {
    let server = Server::new(2, Duration::from_millis(10), Duration::from_secs(1));
    let evictor = Recorder { server: Some(server), ..Recorder::default() };
    start_recording(nodes, pods, RunOptions::default(), stop_after, Leadership::always(), evictor)
}

#[tokio::test(start_paused = true)]
async fn a_bursts_deletions_are_not_held_behind_slow_event_writes() {
    // Ten pods due at once: twenty writes of 10 ms, and ten events of 1 s each.
    let nodes = vec![node("n1", &[("a", 0)])];
    let pods: Vec<_> = (0..10).map(|i| pod(&format!("p{i}"), "n1", &[], -60)).collect();
    let h = start_served(nodes, pods, 100);
    let notices = h.evictor.notices.clone();
    let (summary, deletions, _) = h.finish().await;
    assert_eq!(summary.deleted, 10);
    // One event is written at a time: it holds one of the server's two slots, the deletions' writes
    // go through the other (written beside them, the events would hold both for 5 s).
    let last = deletions.iter().map(|(_, at)| *at).max().unwrap();
    assert!(last <= t(0).add_nanos(200_000_000), "last DELETE at {last:?}, {deletions:?}");
    // Every event is still written, in the order the deletions started.
    let expected: Vec<_> = (0..10).map(|i| (format!("p{i}"), Notice::Marking(Controller::NodeTaints))).collect();
    assert_eq!(*notices.lock().unwrap(), expected);
}

#[tokio::test(start_paused = true)]
async fn events_are_written_in_order_per_pod_and_those_queued_are_flushed_on_stop() {
    // Five pods due at once (five events of 1 s queued at 0); "x", on another node, tolerates the
    // taint 2 s: its countdown is cancelled at +1 (the taint removed), and it is deleted at +4
    // (retainted at +2).
    let nodes = vec![node("n1", &[("a", 0)]), node("n2", &[("a", 0)])];
    let mut pods: Vec<_> = (0..5).map(|i| pod(&format!("p{i}"), "n1", &[], -60)).collect();
    pods.push(pod("x", "n2", &[("a", Some(2))], -60));
    let h = start_served(nodes, pods, 5);
    node_at(&h, 1, NodeChange::Applied(node("n2", &[])));
    node_at(&h, 2, NodeChange::Applied(node("n2", &[("a", 2)])));
    let notices = h.evictor.notices.clone();
    let (summary, _, _) = h.finish().await;
    assert_eq!(summary.deleted, 6);
    // At the stop (+5), x's two events still wait behind the others: written before run returns.
    let mut expected: Vec<_> = (0..5).map(|i| (format!("p{i}"), Notice::Marking(Controller::NodeTaints))).collect();
    expected.extend([
        ("x".to_owned(), Notice::Cancelling(Controller::NodeTaints)),
        ("x".to_owned(), Notice::Marking(Controller::NodeTaints)),
    ]);
    assert_eq!(*notices.lock().unwrap(), expected);
}

/// Corrects the run's clock at virtual `T0 + at`: this machine is taken to be `ahead` seconds ahead
/// of the control plane from then on.
fn correct_at(h: &Harness, at: i64, ahead: i64) {
    let clock = h.evictor.clock.lock().unwrap().clone().expect("clock set");
    tokio::spawn(async move {
        tokio::time::sleep_until(tokio::time::Instant::now() + Duration::from_secs(at as u64)).await;
        clock.correct(ahead * 1_000_000_000);
    });
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

#[tokio::test(start_paused = true)]
async fn a_deletion_due_while_a_watch_is_interrupted_waits_for_the_relist_and_is_dropped_if_no_longer_due() {
    // n1 tainted at T0; `t10` tolerates 10 s, `t30` 30 s. The nodes watch breaks at +5; while it is
    // down the taint is removed elsewhere; it lists again at +25, without the taint.
    let nodes = vec![node("n1", &[("a", 0)])];
    let pods = vec![pod("t10", "n1", &[("a", Some(10))], -60), pod("t30", "n1", &[("a", Some(30))], -60)];
    let h = start(nodes, pods, RunOptions::default(), 60);
    node_at(&h, 5, NodeChange::Interrupted);
    node_at(&h, 25, NodeChange::Listed(vec![node("n1", &[])]));
    let (_, deletions, reports) = h.finish().await;
    assert_eq!(deletions, [], "nothing deleted on a decision the re-list undid");
    let held: Vec<_> = reports.iter().filter(|r| matches!(r.event, RunEvent::Held { .. })).collect();
    assert_eq!(held.len(), 1, "t10 came due at +10 while the nodes watch was down: {reports:#?}");
    assert_eq!(held[0].at, t(10));
    assert!(
        matches!(&held[0].event, RunEvent::Held { watches: "nodes", since, .. } if *since == t(5)),
        "{:?}",
        held[0].event
    );
    let dropped = reports.iter().filter(|r| matches!(&r.event, RunEvent::Dropped { pod } if pod.key.name() == "t10"));
    assert_eq!(dropped.map(|r| r.at).collect::<Vec<_>>(), [t(25)]);
    assert!(!reports.iter().any(|r| matches!(r.event, RunEvent::Evicting { .. })), "never started");
}

#[tokio::test(start_paused = true)]
async fn a_deletion_held_goes_ahead_once_the_relist_says_it_is_still_due() {
    let nodes = vec![node("n1", &[("a", 0)])];
    let pods = vec![pod("t10", "n1", &[("a", Some(10))], -60)];
    let h = start(nodes.clone(), pods.clone(), RunOptions::default(), 60);
    pod_at(&h, 5, PodChange::Interrupted);
    // The pods listed again at +20 (unchanged): the engine still wants t10 deleted.
    pod_at(&h, 20, PodChange::Listed(pods));
    let (_, deletions, reports) = h.finish().await;
    assert_eq!(deletions, [deleted("t10", 20)]);
    assert!(reports.iter().any(|r| matches!(r.event, RunEvent::Released { count: 1 }) && r.at == t(20)));
    // A merged per-node pod view says it is up to date with `Resumed` instead of a list.
    let h = start(nodes, vec![pod("t10", "n1", &[("a", Some(10))], -60)], RunOptions::default(), 60);
    pod_at(&h, 5, PodChange::Interrupted);
    pod_at(&h, 30, PodChange::Resumed);
    let (_, deletions, _) = h.finish().await;
    assert_eq!(deletions, [deleted("t10", 30)]);
}

#[tokio::test(start_paused = true)]
async fn a_failing_deletion_is_not_retried_on_a_decision_older_than_the_last_gap() {
    // t10's deletion fails (the API server is gone) from +10 on, retried 1 s, 2 s, 4 s … later; the
    // watch breaks at +12 (the same outage), and the re-list at +40 finds the taint gone.
    let nodes = vec![node("n1", &[("a", 0)])];
    let pods = vec![pod("t10", "n1", &[("a", Some(10))], -60)];
    let recorder = Recorder { failures: Arc::new(Mutex::new(vec![("t10".into(), 100)])), ..Recorder::default() };
    let h = start_recording(nodes, pods, RunOptions::default(), 60, Leadership::always(), recorder);
    node_at(&h, 12, NodeChange::Interrupted);
    node_at(&h, 40, NodeChange::Listed(vec![node("n1", &[])]));
    let (_, deletions, reports) = h.finish().await;
    assert_eq!(deletions, []);
    let attempts: Vec<Timestamp> =
        reports.iter().filter(|r| matches!(r.event, RunEvent::Failed { .. })).map(|r| r.at).collect();
    // At +10 and +11 (1 s later); the next, due at +13, never comes.
    assert_eq!(attempts, [t(10), t(11)], "{reports:#?}");
    assert!(reports.iter().any(|r| matches!(&r.event, RunEvent::Dropped { pod } if pod.key.name() == "t10")));
}

#[tokio::test(start_paused = true)]
async fn past_max_deletions_the_due_pods_wait_for_the_window_to_free_a_slot() {
    // Five pods due at once; at most 2 deletions per 60 s.
    let nodes = vec![node("n1", &[("a", 0)])];
    let pods: Vec<SnapshotPod> = (1..=5).map(|i| pod(&format!("p{i}"), "n1", &[], -60)).collect();
    let options = RunOptions { max_deletions: Some((2, Duration::from_secs(60))), ..RunOptions::default() };
    let h = start(nodes, pods, options, 150);
    let (_, deletions, reports) = h.finish().await;
    let at = |name: &str| deletions.iter().find(|(n, _)| n == name).map(|(_, at)| *at);
    assert_eq!([at("p1"), at("p2")], [Some(t(0)), Some(t(0))], "{deletions:?}");
    assert_eq!([at("p3"), at("p4")], [Some(t(60)), Some(t(60))], "two more when the first two leave the window");
    assert_eq!(at("p5"), Some(t(120)));
    let capped: Vec<(String, Timestamp)> = reports
        .iter()
        .filter_map(|r| match &r.event {
            RunEvent::Capped { pod, until, .. } => Some((pod.key.name().to_owned(), *until)),
            _ => None,
        })
        .collect();
    assert_eq!(capped.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), ["p3", "p4", "p5"], "each said once");
    assert!(capped.iter().all(|(_, until)| *until == t(60)), "{capped:?}");
}

#[tokio::test(start_paused = true)]
async fn a_term_counts_the_deletions_its_lease_carries_and_sends_one_only_once_its_count_is_written() {
    // The Lease says a deletion started 30 s before T0; at most 1 per 60 s. p1 waits for the slot
    // that deletion holds (T0 + 30), and is sent only once the count holding it is written (T0 + 40).
    let ledger = crate::runtime::ledger::Ledger::default();
    ledger.adopt(vec![t(-30)], Vec::new());
    let nodes = vec![node("n1", &[("a", 0)])];
    let pods = vec![pod("p1", "n1", &[], -60)];
    let options = RunOptions { max_deletions: Some((1, Duration::from_secs(60))), ..RunOptions::default() };
    let h = start_with(nodes, pods, options, 50, Leadership::always().with_ledger(ledger.clone()));
    let writer = ledger.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(40)).await;
        writer.written(writer.to_write().generation);
    });
    let (_, deletions, reports) = h.finish().await;
    let capped = reports.iter().find_map(|r| match &r.event {
        RunEvent::Capped { until, .. } => Some(*until),
        _ => None,
    });
    assert_eq!(capped, Some(t(30)), "the slot the Lease's deletion holds: {reports:?}");
    assert_eq!(deletions, [deleted("p1", 40)]);
    assert_eq!(ledger.started(), [t(30)], "counted for the next term; the first left the window");
}

/// `--keep-last-ready`: pod `name` on `node`, a replica of ReplicaSet `web`, its Ready condition
/// `ready`; it tolerates no taint.
fn replica(name: &str, node: &str, ready: bool) -> SnapshotPod {
    let owner = crate::engine::snapshot::Owner { kind: "ReplicaSet".into(), name: "web".into(), uid: "rs-web".into() };
    let ready = if ready { PodReady::Yes } else { PodReady::No };
    SnapshotPod { owner: Some(Arc::new(owner)), ready, ..pod(name, node, &[], -60) }
}

/// The `kept` lines: each pod's name and when.
fn kept(reports: &[Report]) -> Vec<(String, Timestamp)> {
    reports
        .iter()
        .filter_map(|r| match &r.event {
            RunEvent::Kept { pod, owner, .. } if &*owner.name == "web" => Some((pod.key.name().to_owned(), r.at)),
            _ => None,
        })
        .collect()
}

/// The `unkept` lines: each pod's name, why, and when.
fn unkept(reports: &[Report]) -> Vec<(String, LetGo, Timestamp)> {
    reports
        .iter()
        .filter_map(|r| match &r.event {
            RunEvent::Unkept { pod, why, .. } => Some((pod.key.name().to_owned(), why.clone(), r.at)),
            _ => None,
        })
        .collect()
}

fn keeping() -> RunOptions {
    RunOptions { keep_last_ready: true, ..RunOptions::default() }
}

#[tokio::test(start_paused = true)]
async fn keep_last_ready_deletes_one_of_two_ready_replicas_due_together_and_the_other_once_a_third_is_ready() {
    // n1 tainted: a and b, both ready, fall due at once; c, on n2, is not ready yet. The recorder's
    // deletions leave the pods as they were (a dry run's do too): a stays taken, not ready to spare.
    let nodes = vec![node("n1", &[("a", 0)]), node("n2", &[])];
    let pods = vec![replica("a", "n1", true), replica("b", "n1", true), replica("c", "n2", false)];
    let h = start(nodes, pods, keeping(), 60);
    pod_at(&h, 30, PodChange::Applied(replica("c", "n2", true)));
    let (summary, deletions, reports) = h.finish().await;
    assert_eq!(deletions, [deleted("a", 0), deleted("b", 30)], "{reports:#?}");
    assert_eq!(kept(&reports), [("b".to_owned(), t(0))]);
    assert_eq!(unkept(&reports), [("b".to_owned(), LetGo::Spare { replica: "c".into() }, t(30))]);
    assert_eq!(summary.deleted, 2);
}

#[tokio::test(start_paused = true)]
async fn keep_last_ready_in_a_node_loss_counts_the_replicas_the_controller_marked_not_ready() {
    // n1 lost: the node lifecycle controller tainted it `unreachable` and marked its pods not ready
    // (their containers were ready). web's a and b, and db's only pod, fall due at once: a goes, b is
    // the last ready replica of web, db-0 the only pod of db; both kept, and said so.
    let unreachable = "node.kubernetes.io/unreachable";
    let nodes = vec![node("n1", &[(unreachable, 0)]), node("n2", &[])];
    let marked = |name: &str| SnapshotPod { ready: PodReady::Marked, ..replica(name, "n1", false) };
    let db = crate::engine::snapshot::Owner { kind: "StatefulSet".into(), name: "db".into(), uid: "ss-db".into() };
    let db_0 = SnapshotPod { owner: Some(Arc::new(db)), ..marked("db-0") };
    let pods = vec![marked("a"), marked("b"), db_0];
    let h = start(nodes, pods, keeping(), 60);
    // A replacement for a, on n2, becomes ready at +30: b goes.
    pod_at(&h, 30, PodChange::Applied(replica("c", "n2", true)));
    let (summary, deletions, reports) = h.finish().await;
    assert_eq!(deletions, [deleted("a", 0), deleted("b", 30)], "{reports:#?}");
    assert_eq!(kept(&reports), [("b".to_owned(), t(0))]);
    let only: Vec<(&str, bool)> = reports
        .iter()
        .filter_map(|r| match &r.event {
            RunEvent::Kept { pod, only, .. } => Some((pod.key.name(), *only)),
            _ => None,
        })
        .collect();
    assert_eq!(only, [("b", false), ("db-0", true)], "db-0 is said to be its workload's only pod");
    let held: Vec<(&str, HeldBy)> = summary.held.iter().map(|(pod, _, by)| (pod.key.name(), *by)).collect();
    assert_eq!(held, [("db-0", HeldBy::KeepLastReady)]);
}

#[tokio::test(start_paused = true)]
async fn keep_last_ready_releases_the_held_replica_no_longer_due_and_deletes_it_once_not_ready() {
    // a, the only ready replica, falls due at once and is kept; at +20 the taint goes: not deleted,
    // even when c is ready later.
    let nodes = vec![node("n1", &[("a", 0)]), node("n2", &[])];
    let pods = vec![replica("a", "n1", true), replica("c", "n2", false)];
    let h = start(nodes.clone(), pods.clone(), keeping(), 60);
    node_at(&h, 20, NodeChange::Applied(node("n1", &[])));
    pod_at(&h, 30, PodChange::Applied(replica("c", "n2", true)));
    let (_, deletions, reports) = h.finish().await;
    assert_eq!(deletions, []);
    assert_eq!(kept(&reports), [("a".to_owned(), t(0))]);
    assert_eq!(unkept(&reports), [("a".to_owned(), LetGo::NotDue, t(20))]);
    // Kept again; at +10 a is no longer ready (its probe fails): no longer guarded, it goes.
    let h = start(nodes, pods, keeping(), 60);
    pod_at(&h, 10, PodChange::Applied(replica("a", "n1", false)));
    let (_, deletions, reports) = h.finish().await;
    assert_eq!(deletions, [deleted("a", 10)]);
    assert_eq!(unkept(&reports), [("a".to_owned(), LetGo::NotReady, t(10))]);
}

#[tokio::test(start_paused = true)]
async fn keep_last_ready_guards_neither_a_bare_pod_nor_one_not_ready_and_off_it_changes_nothing() {
    let nodes = vec![node("n1", &[("a", 0)])];
    let pods = vec![
        SnapshotPod { ready: PodReady::Yes, ..pod("bare", "n1", &[], -60) },
        replica("slow", "n1", false),
        replica("solo", "n1", true),
    ];
    let h = start(nodes.clone(), pods.clone(), keeping(), 60);
    let (_, mut deletions, reports) = h.finish().await;
    deletions.sort();
    assert_eq!(deletions, [deleted("bare", 0), deleted("slow", 0)]);
    assert_eq!(kept(&reports), [("solo".to_owned(), t(0))], "solo: the last ready replica (slow is not ready)");
    let h = start(nodes, pods, RunOptions::default(), 60);
    let (_, mut deletions, reports) = h.finish().await;
    deletions.sort();
    assert_eq!(deletions, [deleted("bare", 0), deleted("slow", 0), deleted("solo", 0)]);
    assert_eq!(kept(&reports), []);
}

#[tokio::test(start_paused = true)]
async fn keep_last_ready_in_a_dry_run_says_what_would_be_held_and_what_would_go() {
    let nodes = vec![node("n1", &[("a", 0)]), node("n2", &[])];
    let pods = vec![replica("a", "n1", true), replica("b", "n1", true), replica("c", "n2", false)];
    let recorder = Recorder { dry_run: true, ..Recorder::default() };
    let h = start_recording(nodes, pods, keeping(), 60, Leadership::always(), recorder);
    pod_at(&h, 30, PodChange::Applied(replica("c", "n2", true)));
    let (summary, deletions, reports) = h.finish().await;
    assert_eq!(deletions, [deleted("a", 0), deleted("b", 30)], "would be deleted");
    let kept: Vec<_> = reports.iter().filter(|r| matches!(r.event, RunEvent::Kept { dry_run: true, .. })).collect();
    assert_eq!(kept.len(), 1, "{reports:#?}");
    assert!(
        reports.iter().any(|r| matches!(&r.event, RunEvent::Unkept { dry_run: true, why: LetGo::Spare { .. }, .. }))
    );
    assert!(summary.dry_run && summary.deleted == 2);
}

#[tokio::test(start_paused = true)]
async fn keep_last_ready_beside_max_deletions_counts_the_capped_replicas_as_going() {
    // a, b and c, the workload's ready replicas, all due at once; one deletion per minute. a goes;
    // b waits for a slot (c is ready beside it); c, beside a gone and b going, is the last: kept.
    let nodes = vec![node("n1", &[("a", 0)])];
    let pods = vec![replica("a", "n1", true), replica("b", "n1", true), replica("c", "n1", true)];
    let options = RunOptions { max_deletions: Some((1, Duration::from_secs(60))), ..keeping() };
    let h = start(nodes, pods, options, 150);
    let (_, deletions, reports) = h.finish().await;
    assert_eq!(deletions, [deleted("a", 0), deleted("b", 60)], "{reports:#?}");
    let capped: Vec<&str> = reports
        .iter()
        .filter_map(|r| match &r.event {
            RunEvent::Capped { pod, .. } => Some(pod.key.name()),
            _ => None,
        })
        .collect();
    assert_eq!(capped, ["b"]);
    assert_eq!(kept(&reports), [("c".to_owned(), t(0))]);
    assert_eq!(unkept(&reports), []);
}

#[tokio::test(start_paused = true)]
async fn the_summary_lists_the_deletions_due_and_held_with_what_holds_each() {
    // a, b and c, ready replicas, and a bare pod d, all due at once; one deletion per minute; stopped
    // at +30: a went, b and d wait for a slot, c is the last ready replica.
    let nodes = vec![node("n1", &[("a", 0)])];
    let pods =
        vec![replica("a", "n1", true), replica("b", "n1", true), replica("c", "n1", true), pod("d", "n1", &[], -60)];
    let options = RunOptions { max_deletions: Some((1, Duration::from_secs(60))), ..keeping() };
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
async fn a_gap_with_nothing_under_way_leaves_the_deletions_after_it_unheld() {
    // The watches break at +1 and list again at +2, with nothing due; a taint at +10 makes t0 due at
    // once: deleted then, neither held nor released (the executor was left suspended before).
    let nodes = vec![node("n1", &[])];
    let h = start(nodes.clone(), vec![pod("t0", "n1", &[], -60)], RunOptions::default(), 30);
    node_at(&h, 1, NodeChange::Interrupted);
    pod_at(&h, 1, PodChange::Interrupted);
    node_at(&h, 2, NodeChange::Listed(nodes));
    pod_at(&h, 2, PodChange::Listed(vec![pod("t0", "n1", &[], -60)]));
    node_at(&h, 10, NodeChange::Applied(node("n1", &[("a", 10)])));
    let (_, deletions, reports) = h.finish().await;
    assert_eq!(deletions, [deleted("t0", 10)]);
    let held = reports.iter().filter(|r| matches!(r.event, RunEvent::Held { .. } | RunEvent::Released { .. }));
    assert_eq!(held.count(), 0, "{reports:#?}");
}

/// Where features meet: the runtime over random interleavings of taints added and removed,
/// tolerations edited, pods and nodes deleted, watches broken and listed again, with or without
/// `--max-deletions` and `--keep-last-ready`, against the engine fed the same changes as they
/// happened (upstream's controller, watching throughout).
mod interleavings {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;
    use crate::engine::model::Node;
    use crate::engine::{Action, Engine, Input};
    use crate::runtime::engine_input;

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
                    let owner = crate::engine::snapshot::Owner {
                        kind: "ReplicaSet".into(),
                        name: "web".into(),
                        uid: "rs".into(),
                    };
                    (i, SnapshotPod { owner: Some(Arc::new(owner)), ready: PodReady::Yes, ..pod })
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
            let owner =
                crate::engine::snapshot::Owner { kind: "ReplicaSet".into(), name: "web".into(), uid: "rs".into() };
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
                    let edited = super::pod(
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
        let nodes: Vec<Node> = world.nodes.values().map(engine_input::node_input).collect();
        engine.handle(Input::NodesReplaced(nodes), t(0));
        engine.handle(Input::PodsReplaced(world.pods.values().map(|p| p.pod.clone()).collect()), t(0));
        drain(&mut engine, t(0), &mut tickets);
        // Every instant something happens: a change, a deletion finished, a timer.
        let mut instants: Vec<Timestamp> =
            ops.iter().map(|(at, _)| t(*at)).chain(deleted.iter().map(|d| d.1)).collect();
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
                    Some(NodeChange::Applied(node)) => {
                        engine.handle(Input::NodeUpserted(engine_input::node_input(&node)), at)
                    }
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
            let mut ends: Vec<i64> =
                ops.iter().filter(|(_, op)| matches!(op, Op::Restart)).map(|(at, _)| *at).collect();
            ends.push(END + 60);
            let mut from = 0;
            for until in ends {
                let (nodes, pods) = world.visible();
                let options = RunOptions { edited: world.edits().into(), ..options.clone() };
                let (leading, leadership) = watch::channel(true);
                let leading = Arc::new(leading);
                let leadership = Leadership::elected(leadership).with_ledger(ledger.clone());
                let h = super::start_recording_at(
                    t(from),
                    nodes,
                    pods,
                    options,
                    until - from,
                    leadership,
                    Recorder::default(),
                );
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

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn run_deletes_only_what_the_controller_watching_throughout_wants_then_and_never_before_it(
            placement in prop::collection::vec(0..NODES.len(), PODS),
            ops in prop::collection::btree_map(1i64..END, op(), 1..16),
            cap in prop::option::of(1u32..3),
            keep_last_ready in any::<bool>(),
        ) {
            let ops: Vec<(i64, Op)> = ops.into_iter().collect();
            let start = World::start(&placement);
            let options = RunOptions {
                max_deletions: cap.map(|max| (max, Duration::from_secs(30))),
                keep_last_ready,
                ..RunOptions::default()
            };
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
}

/// Like [`start`] with `--keep-last-ready`, the replicas counted from a watch of their own (the pods
/// on every node), whose first list comes at `+listed_at` with `replicas`; its sender is returned.
fn start_with_replicas(
    nodes: Vec<SnapshotNode>,
    pods: Vec<SnapshotPod>,
    replicas: Vec<SnapshotPod>,
    listed_at: u64,
) -> (Harness, mpsc::Sender<PodChange>) {
    let clock = Clock::starting_at(t(0));
    let evictor = Recorder::default();
    *evictor.clock.lock().unwrap() = Some(clock.clone());
    let (node_tx, node_rx) = mpsc::channel(64);
    let (pod_tx, pod_rx) = mpsc::channel(64);
    let (replica_tx, replica_rx) = mpsc::channel(64);
    let (report_tx, reports) = mpsc::unbounded_channel();
    node_tx.try_send(NodeChange::Listed(nodes)).unwrap();
    pod_tx.try_send(PodChange::Listed(pods)).unwrap();
    let first = replica_tx.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(listed_at)).await;
        first.send(PodChange::Listed(replicas)).await.unwrap();
    });
    let sources = Sources {
        nodes: node_rx,
        pods: pod_rx,
        devices: None,
        replicas: Some(replica_rx),
        controller_acquired: None,
        leadership: Leadership::always(),
    };
    let stop = tokio::time::sleep(Duration::from_secs(60));
    let run = tokio::spawn(run(keeping(), sources, evictor.clone(), clock, report_tx, stop));
    (Harness { nodes: node_tx, pods: pod_tx, evictor, reports, run }, replica_tx)
}

#[tokio::test(start_paused = true)]
async fn keep_last_ready_counts_the_replicas_on_nodes_not_followed() {
    // `run n1 --keep-last-ready`: a, on n1, falls due at once; b, web's other replica, is ready on n2,
    // which is not followed. Nothing is decided before the replicas' list is in (+5); then a goes.
    let nodes = vec![node("n1", &[("a", 0)])];
    let followed = vec![replica("a", "n1", true)];
    let everywhere = vec![replica("a", "n1", true), replica("b", "n2", true)];
    let (h, _replicas) = start_with_replicas(nodes.clone(), followed.clone(), everywhere, 5);
    let (_, deletions, reports) = h.finish().await;
    assert_eq!(deletions, [deleted("a", 5)], "{reports:#?}");
    assert_eq!(kept(&reports), []);

    // b not ready yet: a is kept; b ready at +20 (seen by the replicas' watch alone): a goes.
    let everywhere = vec![replica("a", "n1", true), replica("b", "n2", false)];
    let (h, replicas) = start_with_replicas(nodes, followed, everywhere, 0);
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(20)).await;
        replicas.send(PodChange::Applied(replica("b", "n2", true))).await.unwrap();
    });
    let (_, deletions, reports) = h.finish().await;
    assert_eq!(deletions, [deleted("a", 20)], "{reports:#?}");
    assert_eq!(kept(&reports), [("a".to_owned(), t(0))]);
    assert_eq!(unkept(&reports), [("a".to_owned(), LetGo::Spare { replica: "b".into() }, t(20))]);
}

#[tokio::test(start_paused = true)]
async fn a_deletion_decided_between_two_lists_after_a_gap_is_decided_again_on_both() {
    // Both watches break at +37; meanwhile p1 comes to tolerate `a` for 3 s (+38), then n2 is tainted
    // `a` (+46). At +48 the nodes are listed first: with p1 as last seen (no toleration) it falls due
    // at once and is held; the pods' list then shows its toleration. Before, the held deletion went
    // ahead at +48, before the +49 the controller watching throughout had; now it is decided again on
    // both lists: its countdown from +48, deleted at +51.
    let nodes = vec![node("n1", &[]), node("n2", &[])];
    let p1 = pod("p1", "n2", &[], -60);
    let tolerant = pod("p1", "n2", &[("a", Some(3))], -60);
    let h = start(nodes, vec![p1], RunOptions::default(), 120);
    node_at(&h, 37, NodeChange::Interrupted);
    pod_at(&h, 37, PodChange::Interrupted);
    node_at(&h, 48, NodeChange::Listed(vec![node("n1", &[]), node("n2", &[("a", 46)])]));
    pod_at(&h, 48, PodChange::Listed(vec![tolerant]));
    let (_, deletions, reports) = h.finish().await;
    assert_eq!(deletions, [deleted("p1", 51)], "{reports:#?}");
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
