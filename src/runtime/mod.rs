//! `run`'s loop: watch changes in, the engine's decisions out, one timer, deletions carried out.
//!
//! No business rules live here: the engine decides. This module orders inputs (node changes before
//! pod changes, upstream's worker priority), keeps one sleeper armed at the engine's next deadline
//! (never a timer per pod), hands due deletions to the [`executor`], and reports what happened.

pub mod clock;
pub mod executor;

use std::future::Future;
use std::time::Duration;

use tokio::sync::{mpsc, watch};

pub use clock::Clock;
pub use executor::{Done, Evictor, Executor, Job, Notice, Outcome};

use crate::engine::model::{Node, NodeName, PodKey, PodRef};
use crate::engine::queue::EntryState;
use crate::engine::replay::{Snapshot, SnapshotNode, SnapshotPod, replay};
use crate::engine::report::{Report, RunEvent, Summary};
use crate::engine::time::Timestamp;
use crate::engine::{Action, Engine, Input};

/// A change to the watched nodes.
#[derive(Clone, Debug)]
pub enum NodeChange {
    /// The complete list (the initial list, or a re-list).
    Listed(Vec<SnapshotNode>),
    /// A node was added or changed.
    Applied(SnapshotNode),
    /// A node was deleted.
    Deleted(NodeName),
}

/// A change to the pods bound to nodes.
#[derive(Clone, Debug)]
pub enum PodChange {
    /// The complete list (the initial list, or a re-list).
    Listed(Vec<SnapshotPod>),
    /// A pod was added or changed.
    Applied(SnapshotPod),
    /// A pod was deleted.
    Deleted(PodKey),
}

/// Where changes come from.
pub struct Sources {
    /// Node changes.
    pub nodes: mpsc::Receiver<NodeChange>,
    /// Pod changes.
    pub pods: mpsc::Receiver<PodChange>,
    /// The controller manager Lease's `acquireTime`, for the start-up replay.
    pub controller_acquired: Option<Timestamp>,
}

/// How `run` behaves.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Restart every countdown at start, as upstream does on a restart, instead of continuing the
    /// ones the replay finds.
    pub restart_countdowns: bool,
    /// Deletions in flight at once.
    pub concurrency: usize,
    /// How long in-flight deletions may take to finish after the first interrupt.
    pub drain_timeout: Duration,
}

impl Default for RunOptions {
    fn default() -> Self {
        Self { restart_countdowns: false, concurrency: 16, drain_timeout: Duration::from_secs(10) }
    }
}

fn node_input(node: &SnapshotNode) -> Node {
    Node { name: node.name.clone(), taints: node.taints.clone() }
}

/// Runs until `shutdown` resolves (or both sources end), then drains and returns the summary (also
/// sent as the last report).
pub async fn run<E: Evictor>(
    options: RunOptions,
    mut sources: Sources,
    evictor: E,
    clock: Clock,
    report: mpsc::UnboundedSender<Report>,
    shutdown: impl Future<Output = ()>,
) -> Summary {
    let (done_tx, mut done_rx) = mpsc::unbounded_channel();
    let (stop_tx, stop_rx) = watch::channel(false);
    let dry_run = evictor.is_dry_run();
    let mut executor = Executor::new(evictor, clock, options.concurrency, done_tx, report.clone(), stop_rx);
    let mut loop_state = Loop { engine: Engine::new(), summary: Summary::default(), dry_run };
    let send = |event: RunEvent| {
        let _ = report.send(Report { at: clock.now(), event });
    };
    tokio::pin!(shutdown);

    // Nothing is decided before both initial lists are in.
    let mut nodes: Option<Vec<SnapshotNode>> = None;
    let mut pods: Option<Vec<SnapshotPod>> = None;
    while nodes.is_none() || pods.is_none() {
        tokio::select! {
            biased;
            () = &mut shutdown => return loop_state.finish(&mut executor, &mut done_rx, &stop_tx, &options, clock, &send).await,
            Some(change) = sources.nodes.recv() => fold_nodes(&mut nodes, change),
            Some(change) = sources.pods.recv() => fold_pods(&mut pods, change),
            else => return loop_state.finish(&mut executor, &mut done_rx, &stop_tx, &options, clock, &send).await,
        }
    }
    let snapshot = Snapshot {
        nodes: nodes.unwrap_or_default(),
        pods: pods.unwrap_or_default(),
        controller_acquired: sources.controller_acquired,
    };
    let now = clock.now();
    let engine_nodes: Vec<Node> = snapshot.nodes.iter().map(node_input).collect();
    let engine_pods = snapshot.pods.iter().map(|p| p.pod.clone()).collect();
    if options.restart_countdowns {
        loop_state.engine.handle(Input::NodesReplaced(engine_nodes), now);
        loop_state.engine.handle(Input::PodsReplaced(engine_pods), now);
    } else {
        let selected: Vec<usize> = (0..snapshot.nodes.len()).collect();
        let work = replay(&snapshot, &selected, &[], now).work();
        loop_state.engine.handle(Input::Seeded { nodes: engine_nodes, pods: engine_pods, work }, now);
    }
    send(RunEvent::Synced {
        nodes: snapshot.nodes.len(),
        pods: snapshot.pods.len(),
        scheduled: loop_state.engine.armed(),
        due: loop_state.engine.pending().filter(|(_, entry)| entry.state == EntryState::InFlight).count(),
        restarted_countdowns: options.restart_countdowns,
    });
    drop(snapshot);
    loop_state.drain_actions(&mut executor, &send);

    let mut armed_for: Option<Timestamp> = None;
    let sleep = tokio::time::sleep_until(tokio::time::Instant::now());
    tokio::pin!(sleep);
    loop {
        let deadline = loop_state.engine.poll_timeout();
        if deadline != armed_for {
            if let Some(at) = deadline {
                sleep.as_mut().reset(clock.deadline(at));
            }
            armed_for = deadline;
        }
        tokio::select! {
            biased;
            () = &mut shutdown => break,
            Some(change) = sources.nodes.recv() => {
                let input = match change {
                    NodeChange::Listed(list) => Input::NodesReplaced(list.iter().map(node_input).collect()),
                    NodeChange::Applied(node) => Input::NodeUpserted(node_input(&node)),
                    NodeChange::Deleted(name) => Input::NodeDeleted(name),
                };
                loop_state.engine.handle(input, clock.now());
            }
            Some(change) = sources.pods.recv() => {
                let input = match change {
                    PodChange::Listed(list) => Input::PodsReplaced(list.into_iter().map(|p| p.pod).collect()),
                    PodChange::Applied(pod) => Input::PodUpserted(pod.pod),
                    PodChange::Deleted(key) => Input::PodDeleted(key),
                };
                loop_state.engine.handle(input, clock.now());
            }
            Some(done) = done_rx.recv() => loop_state.finished(&mut executor, done, clock.now(), &send),
            () = &mut sleep, if armed_for.is_some() => {
                // The sleeper may fire early (horizon) or late; the engine fires only what is due.
                armed_for = None;
                loop_state.engine.handle_timeout(clock.now());
            }
            else => break,
        }
        loop_state.drain_actions(&mut executor, &send);
    }
    loop_state.finish(&mut executor, &mut done_rx, &stop_tx, &options, clock, &send).await
}

fn fold_nodes(list: &mut Option<Vec<SnapshotNode>>, change: NodeChange) {
    match (change, list.as_mut()) {
        (NodeChange::Listed(nodes), _) => *list = Some(nodes),
        (NodeChange::Applied(node), Some(nodes)) => {
            nodes.retain(|n| n.name != node.name);
            nodes.push(node);
        }
        (NodeChange::Deleted(name), Some(nodes)) => nodes.retain(|n| n.name != name),
        (_, None) => {}
    }
}

fn fold_pods(list: &mut Option<Vec<SnapshotPod>>, change: PodChange) {
    match (change, list.as_mut()) {
        (PodChange::Listed(pods), _) => *list = Some(pods),
        (PodChange::Applied(pod), Some(pods)) => {
            pods.retain(|p| p.pod.key != pod.pod.key);
            pods.push(pod);
        }
        (PodChange::Deleted(key), Some(pods)) => pods.retain(|p| p.pod.key != key),
        (_, None) => {}
    }
}

struct Loop {
    engine: Engine,
    summary: Summary,
    dry_run: bool,
}

impl Loop {
    fn drain_actions<E: Evictor>(&mut self, executor: &mut Executor<E>, send: &impl Fn(RunEvent)) {
        while let Some(action) = self.engine.poll_action() {
            match action {
                Action::Scheduled { pod, work } => send(RunEvent::Scheduled { pod, work }),
                Action::Cancelled { pod, work } => {
                    self.summary.cancelled += 1;
                    let evictor = executor.evictor().clone();
                    let notified = pod.clone();
                    tokio::spawn(async move { evictor.notify(&notified, Notice::Cancelling).await });
                    send(RunEvent::Cancelled { pod, work });
                }
                Action::Evict { pod, work, ticket } => executor.submit(Job { pod, work, ticket }),
                Action::Withdrawn { pod, ticket } => executor.withdraw(&pod.key, ticket),
            }
        }
    }

    fn finished<E: Evictor>(
        &mut self,
        executor: &mut Executor<E>,
        done: Done,
        now: Timestamp,
        send: &impl Fn(RunEvent),
    ) {
        executor.finished(&done);
        let Done { job, outcome } = done;
        match outcome {
            Some(Outcome::Deleted) => {
                self.summary.deleted += 1;
                send(RunEvent::Deleted { pod: job.pod.clone(), work: job.work, dry_run: self.dry_run });
            }
            Some(Outcome::Gone(reason)) => {
                self.summary.gone += 1;
                send(RunEvent::Gone { pod: job.pod.clone(), reason });
            }
            Some(Outcome::Failed(_)) | None => {}
        }
        self.engine.handle(Input::EvictionFinished { pod: job.pod.key, ticket: job.ticket }, now);
    }

    async fn finish<E: Evictor>(
        mut self,
        executor: &mut Executor<E>,
        done_rx: &mut mpsc::UnboundedReceiver<Done>,
        stop: &watch::Sender<bool>,
        options: &RunOptions,
        clock: Clock,
        send: &impl Fn(RunEvent),
    ) -> Summary {
        let _ = stop.send(true);
        send(RunEvent::Stopping { in_flight: executor.in_flight() });
        let drain = tokio::time::sleep(options.drain_timeout);
        tokio::pin!(drain);
        while executor.in_flight() > 0 {
            tokio::select! {
                Some(done) = done_rx.recv() => self.finished(executor, done, clock.now(), send),
                () = &mut drain => break,
            }
        }
        let mut summary = self.summary;
        summary.failed = executor.failing();
        summary.failed.sort_by(|a, b| a.0.key.cmp(&b.0.key));
        let mut scheduled: Vec<(PodRef, Timestamp)> = self
            .engine
            .pending()
            .filter(|(_, entry)| entry.state == EntryState::Armed)
            .map(|(pod, entry)| (pod, entry.work.fire))
            .collect();
        scheduled.sort_by(|a, b| (a.1, &a.0.key).cmp(&(b.1, &b.0.key)));
        summary.scheduled = scheduled;
        send(RunEvent::Summary(summary.clone()));
        summary
    }
}

#[cfg(test)]
mod tests;
