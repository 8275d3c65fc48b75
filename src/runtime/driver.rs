//! The one driver of the engine: `run` and `plan -w` both read their changes and their timer here.
//!
//! It orders the inputs (a node change before a pod change waiting with it, upstream's worker
//! priority), keeps one sleeper armed at the engine's next deadline (never a timer per pod), re-arms
//! it when the control plane's time is read anew, and stamps each step with the control plane's
//! instant. What a step does is the caller's: `run` feeds its [`Engine`](crate::engine::Engine) and
//! carries deletions out, `plan -w` feeds its [`Observer`](crate::engine::observe::Observer) and
//! draws. Both select on [`Driver::next`] beside their own inputs (shutdown, leadership, finished
//! deletions, reports): it is cancel-safe, everything it waits on lives in the driver.

use std::pin::Pin;

use tokio::sync::{mpsc, watch};
use tokio::time::Sleep;

use super::changes::{NodeChange, PodChange};
use crate::engine::devices::DeviceInput;
use crate::engine::time::Timestamp;
use crate::time::Clock;

/// What happened next, at the control plane's instant `at`.
#[derive(Debug)]
pub enum Step {
    /// A node changed.
    Node(NodeChange, Timestamp),
    /// A pod changed.
    Pod(PodChange, Timestamp),
    /// A DRA object the device-taint controller reads changed.
    Device(DeviceInput, Timestamp),
    /// A change of the pods on every node, for the replicas alone.
    Replicas(PodChange),
    /// The deadline armed came (the sleeper may fire early, at its horizon, or late: the engine
    /// fires only what is due at `at`).
    Timeout(Timestamp),
}

/// The watches' changes and the engine's timer, read in one order.
pub struct Driver {
    nodes: mpsc::Receiver<NodeChange>,
    pods: mpsc::Receiver<PodChange>,
    /// The DRA objects' changes, when device taints are followed (`None`: not, or ended).
    devices: Option<mpsc::Receiver<DeviceInput>>,
    replicas: Option<mpsc::Receiver<PodChange>>,
    clock: Clock,
    corrections: watch::Receiver<()>,
    sleep: Pin<Box<Sleep>>,
    armed_for: Option<Timestamp>,
}

impl Driver {
    /// Reads `nodes` and `pods`, and times deadlines by `clock`.
    #[must_use]
    pub fn new(nodes: mpsc::Receiver<NodeChange>, pods: mpsc::Receiver<PodChange>, clock: Clock) -> Self {
        let sleep = Box::pin(tokio::time::sleep_until(clock.instant()));
        let corrections = clock.corrections();
        Self { nodes, pods, devices: None, replicas: None, clock, corrections, sleep, armed_for: None }
    }

    /// Also reads the DRA objects' changes from `devices` (after the nodes' and pods').
    #[must_use]
    pub fn with_devices(mut self, devices: Option<mpsc::Receiver<DeviceInput>>) -> Self {
        self.devices = devices;
        self
    }

    /// The control plane's instant now.
    /// The pods on every node, for the replicas, when the nodes followed are not all of them.
    #[must_use]
    pub fn with_replicas(mut self, replicas: Option<mpsc::Receiver<PodChange>>) -> Self {
        self.replicas = replicas;
        self
    }

    #[must_use]
    pub fn now(&self) -> Timestamp {
        self.clock.now()
    }

    /// The next change, or the timeout of `deadline` (the engine's `poll_timeout()`; `None` arms
    /// nothing); `None` once both sources have ended and nothing is armed.
    pub async fn next(&mut self, deadline: Option<Timestamp>) -> Option<Step> {
        if deadline != self.armed_for {
            if let Some(at) = deadline {
                self.sleep.as_mut().reset(self.clock.deadline(at));
            }
            self.armed_for = deadline;
        }
        loop {
            tokio::select! {
                biased;
                Some(change) = self.nodes.recv() => return Some(Step::Node(change, self.clock.now())),
                Some(change) = self.pods.recv() => return Some(Step::Pod(change, self.clock.now())),
                change = recv(&mut self.devices), if self.devices.is_some() => match change {
                    Some(change) => return Some(Step::Device(change, self.clock.now())),
                    None => self.devices = None,
                },
                change = recv(&mut self.replicas), if self.replicas.is_some() => match change {
                    Some(change) => return Some(Step::Replicas(change)),
                    None => self.replicas = None,
                },
                () = &mut self.sleep, if self.armed_for.is_some() => {
                    self.armed_for = None;
                    return Some(Step::Timeout(self.clock.now()));
                }
                Ok(()) = self.corrections.changed(), if self.armed_for.is_some() => if let Some(at) = self.armed_for {
                    // The control plane's time was read anew: the same deadline is another instant here.
                    self.sleep.as_mut().reset(self.clock.deadline(at));
                },
                else => return None,
            }
        }
    }
}

/// The next change of `devices` (never, without it).
async fn recv<T>(source: &mut Option<mpsc::Receiver<T>>) -> Option<T> {
    match source {
        Some(source) => source.recv().await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
// The tests measure tokio's paused time directly.
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;
    use crate::engine::model::NodeName;

    const T0: i64 = 1_795_341_600;

    fn t(offset: i64) -> Timestamp {
        Timestamp::from_unix_seconds(T0 + offset)
    }

    fn driver() -> (Driver, mpsc::Sender<NodeChange>, mpsc::Sender<PodChange>, Clock) {
        let clock = Clock::starting_at(t(0));
        let (nodes_tx, nodes) = mpsc::channel(8);
        let (pods_tx, pods) = mpsc::channel(8);
        (Driver::new(nodes, pods, clock.clone()), nodes_tx, pods_tx, clock)
    }

    fn deleted(name: &str) -> NodeChange {
        NodeChange::Deleted(NodeName::from(name))
    }

    #[tokio::test(start_paused = true)]
    async fn a_node_change_comes_before_a_pod_change_waiting_with_it() {
        let (mut driver, nodes, pods, _) = driver();
        pods.send(PodChange::Listed(Vec::new())).await.unwrap();
        nodes.send(deleted("n1")).await.unwrap();
        assert!(matches!(driver.next(None).await, Some(Step::Node(NodeChange::Deleted(_), at)) if at == t(0)));
        assert!(matches!(driver.next(None).await, Some(Step::Pod(PodChange::Listed(_), _))));
    }

    #[tokio::test(start_paused = true)]
    async fn the_deadline_fires_at_its_instant_and_a_correction_moves_it() {
        let (mut driver, _nodes, _pods, clock) = driver();
        assert!(matches!(driver.next(Some(t(5))).await, Some(Step::Timeout(at)) if at == t(5)));
        // This machine is found 3 s behind the control plane: t(10) comes 3 s sooner here.
        let corrected = clock.clone();
        tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            corrected.correct(-3_000_000_000);
        });
        let start = tokio::time::Instant::now();
        assert!(matches!(driver.next(Some(t(10))).await, Some(Step::Timeout(at)) if at == t(10)));
        assert_eq!(start.elapsed(), std::time::Duration::from_secs(2), "t(10) reached 2 s after t(5), not 5 s");
    }

    #[tokio::test(start_paused = true)]
    async fn the_sources_ended_end_the_driver_once_nothing_is_armed() {
        let (mut driver, nodes, pods, _) = driver();
        drop((nodes, pods));
        assert!(matches!(driver.next(Some(t(1))).await, Some(Step::Timeout(at)) if at == t(1)));
        assert!(driver.next(None).await.is_none());
    }
}
