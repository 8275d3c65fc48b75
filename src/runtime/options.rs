//! What `run` is given: how it behaves ([`RunOptions`]), where its changes come from ([`Sources`]),
//! and when it may decide ([`Leadership`]).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{mpsc, watch};

use super::absent::Asked;
use super::changes::{NodeChange, PodChange};
use super::ledger::Ledger;
use crate::engine::devices::DeviceInput;
use crate::engine::model::{NodeName, PodKey};
use crate::engine::snapshot::TolerationsWritten;
use crate::engine::time::Timestamp;
use crate::metrics::Metrics;

/// Whether this instance may decide and delete: always, or while it holds the election's lease.
#[derive(Debug)]
pub struct Leadership {
    leading: Option<watch::Receiver<bool>>,
    /// `--max-deletions`' count as the Lease carries it, when there is one.
    ledger: Option<Ledger>,
}

impl Leadership {
    /// A lone `run`: it always decides.
    #[must_use]
    pub fn always() -> Self {
        Self { leading: None, ledger: None }
    }

    /// Decides while `leading` says so (the election's channel).
    #[must_use]
    pub fn elected(leading: watch::Receiver<bool>) -> Self {
        Self { leading: Some(leading), ledger: None }
    }

    /// Counts `--max-deletions` in `ledger`, which the Lease carries from leader to leader.
    #[must_use]
    pub fn with_ledger(mut self, ledger: Ledger) -> Self {
        self.ledger = Some(ledger);
        self
    }

    pub(super) fn ledger(&self) -> Option<&Ledger> {
        self.ledger.as_ref()
    }

    pub(super) fn leading(&self) -> bool {
        self.leading.as_ref().is_none_or(|leading| *leading.borrow())
    }

    /// Whether leadership can come and go: the lists are then kept, to seed each new term.
    pub(super) fn is_elected(&self) -> bool {
        self.leading.is_some()
    }

    /// Resolves when leadership changes, with the new state; never for a lone `run`, nor once the
    /// election has ended.
    pub(super) async fn changed(&mut self) -> bool {
        if let Some(leading) = &mut self.leading
            && leading.changed().await.is_ok()
        {
            return *leading.borrow_and_update();
        }
        std::future::pending().await
    }
}

/// Where changes come from.
pub struct Sources {
    /// Node changes.
    pub nodes: mpsc::Receiver<NodeChange>,
    /// Pod changes.
    pub pods: mpsc::Receiver<PodChange>,
    /// The DRA objects' changes, when device taints are enforced too.
    pub devices: Option<mpsc::Receiver<DeviceInput>>,
    /// The pods on every node, for `--keep-last-ready` when the nodes followed are not all of them
    /// (then the replicas are counted from these, not from `pods`).
    pub replicas: Option<mpsc::Receiver<PodChange>>,
    /// The controller manager Lease's `acquireTime`, for the start-up replay.
    pub controller_acquired: Option<Timestamp>,
    /// When this instance may decide.
    pub leadership: Leadership,
}

/// `--concurrency`'s default: deletions in flight at once.
pub const DEFAULT_CONCURRENCY: u16 = 16;

/// How `run` carries out what the engine decides: the flags that act in the loop, checked once from
/// the command line and handed over whole.
#[derive(Clone, Debug, PartialEq)]
pub struct Policy {
    /// Restart every countdown at start, as upstream does on a restart, instead of continuing the
    /// ones the replay finds.
    pub restart_countdowns: bool,
    /// Deletions in flight at once.
    pub concurrency: usize,
    /// A brake: at most this many deletions in any window of this length (docs/run.md, "A cap on
    /// deletions"); `None`: none.
    pub max_deletions: Option<(u32, Duration)>,
    /// A guard: never delete the last ready replica of a workload (docs/run.md, "Keeping the last
    /// ready replica").
    pub keep_last_ready: bool,
    /// How long in-flight deletions may take to finish after the first interrupt.
    pub drain_timeout: Duration,
}

impl Default for Policy {
    fn default() -> Self {
        Self {
            restart_countdowns: false,
            concurrency: usize::from(DEFAULT_CONCURRENCY),
            max_deletions: None,
            keep_last_ready: false,
            drain_timeout: Duration::from_secs(10),
        }
    }
}

/// How `run` behaves: its policy, and what the start-up read.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// The flags that act in the loop.
    pub policy: Policy,
    /// Where counts and readiness go.
    pub metrics: Arc<Metrics>,
    /// Enforce DRA device taints too, as the device-taint controller of Kubernetes `1.minor` does.
    pub device_minor: Option<u32>,
    /// The nodes asked for: each list of nodes that lacks one is said once.
    pub asked: Asked,
    /// When nodes last became not ready, as their Events said at start: the start-up replay keeps
    /// the countdowns of a swapped condition taint (docs/upstream.md, "A taint swapped"). Used by
    /// the first term only (a later one would read a spell that may have ended since).
    pub not_ready: BTreeMap<NodeName, Timestamp>,
    /// The node lifecycle controller's `--node-monitor-period`, for the same.
    pub node_monitor_period: Duration,
    /// Pods whose tolerations were written after their creation, with their controllers'
    /// templates: the start-up replay keeps an edited pod's first countdown when its template
    /// recovers it (docs/upstream.md, "A toleration edited"). Used by the first term only.
    pub edited: Edits,
}

/// The pods whose tolerations were edited mid-countdown, with their controllers' templates: known
/// at start, or found in the watches' first lists and put here before the first list of pods
/// reaches the loop (`live`). Taken once, by the start-up replay.
#[derive(Clone, Debug, Default)]
pub struct Edits(Arc<Mutex<BTreeMap<PodKey, TolerationsWritten>>>);

impl Edits {
    /// Adds `found` to what is held.
    pub fn put(&self, found: BTreeMap<PodKey, TolerationsWritten>) {
        self.0.lock().expect("edits").extend(found);
    }

    /// What is held, taken: nothing is left.
    #[must_use]
    pub fn take(&self) -> BTreeMap<PodKey, TolerationsWritten> {
        std::mem::take(&mut *self.0.lock().expect("edits"))
    }
}

impl From<BTreeMap<PodKey, TolerationsWritten>> for Edits {
    fn from(edits: BTreeMap<PodKey, TolerationsWritten>) -> Self {
        Self(Arc::new(Mutex::new(edits)))
    }
}

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            policy: Policy::default(),
            metrics: Arc::default(),
            device_minor: None,
            asked: Asked::Every,
            not_ready: BTreeMap::new(),
            node_monitor_period: Duration::from_secs(5),
            edited: Edits::default(),
        }
    }
}

impl From<Policy> for RunOptions {
    fn from(policy: Policy) -> Self {
        Self { policy, ..Self::default() }
    }
}
