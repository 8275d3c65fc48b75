//! The runtime on tokio's paused clock: in-memory sources, a recording evictor, exact virtual
//! instants. The loop's tests, beside what each tests, start it through here.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{mpsc, watch};

use crate::engine::model::{Effect, Pod, PodKey, PodRef, Taint, Toleration};
use crate::engine::snapshot::{PodReady, SnapshotNode, SnapshotPod};
use crate::engine::time::Timestamp;
use crate::metrics::FailureReason;
use crate::runtime::changes::{NodeChange, PodChange};
use crate::runtime::event_loop::run;
use crate::runtime::evictor::{Controller, Evictor, Notice, Outcome};
use crate::runtime::options::{Leadership, Policy, RunOptions, Sources};
use crate::runtime::report::{LetGo, Report, RunEvent, Summary};
use crate::runtime::throttle::Throttle;
use crate::time::Clock;

/// 2026-11-22T10:00:00Z, the virtual start.
pub(super) const T0: i64 = 1_795_341_600;

pub(super) fn t(offset: i64) -> Timestamp {
    Timestamp::from_unix_seconds(T0 + offset)
}

#[derive(Clone, Default)]
pub(super) struct Recorder {
    /// It says it is a dry run (it records alike: a dry run's deletions change nothing either).
    pub(super) dry_run: bool,
    pub(super) clock: Arc<Mutex<Option<Clock>>>,
    pub(super) deletions: Arc<Mutex<Vec<(String, Timestamp)>>>,
    pub(super) notices: Arc<Mutex<Vec<(String, Notice)>>>,
    /// Pods whose next N attempts fail.
    pub(super) failures: Arc<Mutex<Vec<(String, u32)>>>,
    pub(super) gone: Arc<Mutex<Vec<String>>>,
    /// Pods whose next attempt takes this long to answer.
    pub(super) slow: Arc<Mutex<Vec<(String, Duration)>>>,
    /// Every attempt waits for its turn here, as the cluster's writes do.
    pub(super) throttle: Option<Throttle>,
    /// Pods whose next attempt the server refuses with 503 and this `Retry-After`.
    pub(super) pushback: Arc<Mutex<Vec<(String, Duration)>>>,
    /// Pods whose eviction a PodDisruptionBudget (`default/NAME`) refuses the next N attempts.
    pub(super) budgets: Arc<Mutex<Vec<(String, String, u32)>>>,
    /// Requests go to a server answering a few at a time: a deletion is then two writes (the
    /// status PATCH, the DELETE), an event one.
    pub(super) server: Option<Server>,
}

/// A server answering `capacity` requests at a time (in the order they came), a write in `write`,
/// an event in `event`.
#[derive(Clone)]
pub(super) struct Server {
    pub(super) capacity: Arc<tokio::sync::Semaphore>,
    pub(super) write: Duration,
    pub(super) event: Duration,
}

impl Server {
    pub(super) fn new(capacity: usize, write: Duration, event: Duration) -> Self {
        Self { capacity: Arc::new(tokio::sync::Semaphore::new(capacity)), write, event }
    }

    /// One request taking `latency` of the server's time (simulated on the paused clock).
    pub(super) async fn request(&self, latency: Duration) {
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

pub(super) fn node(name: &str, taints: &[(&str, i64)]) -> SnapshotNode {
    let taints = taints.iter().map(|(k, added)| Taint::new(*k, "", Effect::NoExecute).with_time_added(t(*added)));
    SnapshotNode::new(name.into(), Default::default(), taints)
}

pub(super) fn pod(name: &str, node: &str, tolerations: &[(&str, Option<i64>)], bound: i64) -> SnapshotPod {
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

pub(super) struct Harness {
    pub(super) nodes: mpsc::Sender<NodeChange>,
    pub(super) pods: mpsc::Sender<PodChange>,
    pub(super) evictor: Recorder,
    pub(super) reports: mpsc::UnboundedReceiver<Report>,
    pub(super) run: tokio::task::JoinHandle<Summary>,
}

/// Starts `run` at virtual T0 with the given initial lists; it stops at `T0 + stop_after`.
pub(super) fn start(nodes: Vec<SnapshotNode>, pods: Vec<SnapshotPod>, options: RunOptions, stop_after: i64) -> Harness {
    start_with(nodes, pods, options, stop_after, Leadership::always())
}

/// Like [`start`], deciding only while `leadership` says so.
pub(super) fn start_with(
    nodes: Vec<SnapshotNode>,
    pods: Vec<SnapshotPod>,
    options: RunOptions,
    stop_after: i64,
    leadership: Leadership,
) -> Harness {
    start_paced(nodes, pods, options, stop_after, leadership, None)
}

/// Like [`start_with`], each attempt paced at `pace` (`--qps`, `--burst`).
pub(super) fn start_paced(
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
pub(super) fn start_recording(
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
pub(super) fn start_recording_at(
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
pub(super) fn node_at(h: &Harness, at: i64, change: NodeChange) {
    let tx = h.nodes.clone();
    tokio::spawn(async move {
        tokio::time::sleep_until(tokio::time::Instant::now() + Duration::from_secs(at as u64)).await;
        tx.send(change).await.unwrap();
    });
}

pub(super) fn pod_at(h: &Harness, at: i64, change: PodChange) {
    let tx = h.pods.clone();
    tokio::spawn(async move {
        tokio::time::sleep_until(tokio::time::Instant::now() + Duration::from_secs(at as u64)).await;
        tx.send(change).await.unwrap();
    });
}

impl Harness {
    pub(super) async fn finish(mut self) -> (Summary, Vec<(String, Timestamp)>, Vec<Report>) {
        let summary = self.run.await.unwrap();
        let mut reports = Vec::new();
        while let Ok(report) = self.reports.try_recv() {
            reports.push(report);
        }
        let deletions = self.evictor.deletions.lock().unwrap().clone();
        (summary, deletions, reports)
    }
}

pub(super) fn deleted(name: &str, at: i64) -> (String, Timestamp) {
    (name.into(), t(at))
}

/// Sets leadership at virtual `T0 + at`.
pub(super) fn lead_at(leading: &Arc<watch::Sender<bool>>, at: i64, value: bool) {
    let leading = leading.clone();
    tokio::spawn(async move {
        tokio::time::sleep_until(tokio::time::Instant::now() + Duration::from_secs(at as u64)).await;
        leading.send_replace(value);
    });
}

/// Starts `run` against a [`Server`] answering two requests at a time, a write in 10 ms and an
/// event in 1 s (a fault on the events path).
pub(super) fn start_served(nodes: Vec<SnapshotNode>, pods: Vec<SnapshotPod>, stop_after: i64) -> Harness {
    let server = Server::new(2, Duration::from_millis(10), Duration::from_secs(1));
    let evictor = Recorder { server: Some(server), ..Recorder::default() };
    start_recording(nodes, pods, RunOptions::default(), stop_after, Leadership::always(), evictor)
}

/// Corrects the run's clock at virtual `T0 + at`: this machine is taken to be `ahead` seconds ahead
/// of the control plane from then on.
pub(super) fn correct_at(h: &Harness, at: i64, ahead: i64) {
    let clock = h.evictor.clock.lock().unwrap().clone().expect("clock set");
    tokio::spawn(async move {
        tokio::time::sleep_until(tokio::time::Instant::now() + Duration::from_secs(at as u64)).await;
        clock.correct(ahead * 1_000_000_000);
    });
}

/// `--keep-last-ready`: pod `name` on `node`, a replica of ReplicaSet `web`, its Ready condition
/// `ready`; it tolerates no taint.
pub(super) fn replica(name: &str, node: &str, ready: bool) -> SnapshotPod {
    let owner = crate::engine::snapshot::Owner::new("ReplicaSet", "web", "rs-web");
    let ready = if ready { PodReady::Yes } else { PodReady::No };
    SnapshotPod { owner: Some(owner), ready, ..pod(name, node, &[], -60) }
}

/// The `kept` lines: each pod's name and when.
pub(super) fn kept(reports: &[Report]) -> Vec<(String, Timestamp)> {
    reports
        .iter()
        .filter_map(|r| match &r.event {
            RunEvent::Kept { pod, owner, .. } if owner.name() == "web" => Some((pod.key.name().to_owned(), r.at)),
            _ => None,
        })
        .collect()
}

/// The `unkept` lines: each pod's name, why, and when.
pub(super) fn unkept(reports: &[Report]) -> Vec<(String, LetGo, Timestamp)> {
    reports
        .iter()
        .filter_map(|r| match &r.event {
            RunEvent::Unkept { pod, why, .. } => Some((pod.key.name().to_owned(), why.clone(), r.at)),
            _ => None,
        })
        .collect()
}

pub(super) fn keeping() -> RunOptions {
    RunOptions::from(Policy { keep_last_ready: true, ..Policy::default() })
}

/// Like [`start`] with `--keep-last-ready`, the replicas counted from a watch of their own (the pods
/// on every node), whose first list comes at `+listed_at` with `replicas`; its sender is returned.
pub(super) fn start_with_replicas(
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
