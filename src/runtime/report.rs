//! What `run` tells the operator: one value per thing that happened, with the instant it happened.
//!
//! Plain data, so the runtime can produce it and `output` can render it without either knowing the
//! other.
//!
//! Owns: `run`'s vocabulary (the server's URL, the Lease, leadership, the summary), not the
//! engine's decisions. Uses: the engine's values only, so that `output` can render it without
//! reaching the rest of the runtime.

use crate::engine::lifecycle::{Drain, NodeForecast, ZoneKey};
use crate::engine::model::PodRef;
use crate::engine::queue::Work;
use crate::engine::snapshot::Owner;
use crate::engine::time::Timestamp;

/// Something `run` did or saw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunEvent {
    /// `run` connected and starts watching.
    Started {
        /// The API server.
        server: String,
        /// What is watched, in words (`every node`, `nodes n1, n2`, …).
        watching: String,
        /// `-n`: the namespace whose pods alone are watched.
        namespace: Option<String>,
        /// Nothing is written.
        dry_run: bool,
        /// Pods go through the Eviction API (`--mode evict`), which respects PodDisruptionBudgets,
        /// instead of DELETE.
        evict: bool,
    },
    /// The initial lists are in and the engine is seeded.
    Synced {
        /// Nodes watched.
        nodes: usize,
        /// Pods seen (bound to any node).
        pods: usize,
        /// Deletions scheduled after seeding.
        scheduled: usize,
        /// Pods already being deleted whose deletion is due at once: done without another DELETE,
        /// counted apart from `due` (as `plan`'s first line counts them).
        terminating: usize,
        /// Deletions due at once (overdue by the replay), of pods not terminating.
        due: usize,
        /// Whether countdowns were restarted (upstream's behaviour) instead of continued.
        restarted_countdowns: bool,
    },
    /// A deletion timer was armed.
    Scheduled {
        /// The pod.
        pod: PodRef,
        /// Its deletion and clock.
        work: Work,
    },
    /// A pending deletion was cancelled (the taint went away, the pod tolerates it forever, or the pod
    /// is gone).
    Cancelled {
        /// The pod.
        pod: PodRef,
        /// The deletion that will not happen.
        work: Work,
    },
    /// A deletion is due and being carried out (in a dry run, would be: nothing is evicted).
    Evicting {
        /// The pod.
        pod: PodRef,
        /// Its deletion and clock.
        work: Work,
        /// A dry run: nothing is written.
        dry_run: bool,
    },
    /// The pod was deleted (or, in a dry run, would have been).
    Deleted {
        /// The pod.
        pod: PodRef,
        /// Its deletion and clock.
        work: Work,
        /// Nothing was written.
        dry_run: bool,
    },
    /// The pod was already gone, or replaced by another with the same name: nothing to delete.
    Gone {
        /// The pod.
        pod: PodRef,
        /// What the server said.
        reason: String,
    },
    /// A deletion attempt failed; it is retried.
    Failed {
        /// The pod.
        pod: PodRef,
        /// What went wrong.
        reason: String,
        /// Attempts so far.
        attempt: u32,
        /// When the next attempt is made.
        retry_at: Timestamp,
    },
    /// A PodDisruptionBudget refused the pod's eviction (`--mode evict`); it is retried until the
    /// budget allows it.
    Blocked {
        /// The pod.
        pod: PodRef,
        /// The budget, `NAMESPACE/NAME`.
        budget: String,
        /// What the server said (`The disruption budget web needs 2 healthy pods and has 2 currently`).
        message: String,
        /// Attempts so far.
        attempt: u32,
        /// When the next attempt is made.
        retry_at: Timestamp,
    },
    /// A pod whose eviction a PodDisruptionBudget was refusing is no longer due (its taint went away,
    /// it tolerates it now, or it is gone): the eviction is given up.
    Withdrawn {
        /// The pod.
        pod: PodRef,
        /// The budget that was refusing it, `NAMESPACE/NAME`.
        budget: String,
    },
    /// A deletion fell due (or its retries stopped) while a watch was interrupted: it waits for the
    /// re-lists (docs/run.md, "Continuous watches").
    Held {
        /// The pod.
        pod: PodRef,
        /// Its deletion and clock.
        work: Work,
        /// The watches interrupted: `nodes`, `pods`, `nodes and pods`.
        watches: &'static str,
        /// Since when.
        since: Timestamp,
    },
    /// A deletion fell due past `--max-deletions`: it waits for the window to free a slot.
    Capped {
        /// The pod.
        pod: PodRef,
        /// Its deletion and clock.
        work: Work,
        /// The cap.
        max: u32,
        /// Its window.
        window: std::time::Duration,
        /// When the window frees the next slot (later ones wait behind it).
        until: Timestamp,
    },
    /// A deletion fell due for the last ready replica of its workload (`--keep-last-ready`): it is
    /// held until another replica is ready (docs/run.md, "Keeping the last ready replica").
    Kept {
        /// The pod.
        pod: PodRef,
        /// Its deletion and clock.
        work: Work,
        /// The workload's controller (in the pod's namespace).
        owner: Owner,
        /// The workload has no other pod: its controller makes no replacement while this one
        /// stays, so it stays down until the pod is deleted or its node returns.
        only: bool,
        /// Nothing is written: the pod would be held.
        dry_run: bool,
    },
    /// A deletion `--keep-last-ready` held is let go.
    Unkept {
        /// The pod.
        pod: PodRef,
        /// The workload's controller.
        owner: Owner,
        /// Why, and whether the deletion goes ahead.
        why: LetGo,
        /// Nothing is written.
        dry_run: bool,
    },
    /// The interrupted watches are listed again: the deletions held that the engine still wants
    /// go ahead.
    Released {
        /// How many.
        count: usize,
    },
    /// A deletion held is no longer wanted once the watches listed again: it is not sent.
    Dropped {
        /// The pod.
        pod: PodRef,
    },
    /// A watch lost its connection to the API server, or got it back (reported once each way, not
    /// per retry).
    Connection {
        /// What is watched: `nodes` or `pods`.
        watch: String,
        /// Whether it is connected now.
        connected: bool,
        /// Why it was lost, in words (`connection refused`); `None` when it is back.
        reason: Option<String>,
        /// When it was lost.
        since: Timestamp,
    },
    /// The node lifecycle controller's expected action on a node changed: an unhealthy node not yet
    /// tainted, with its predicted taint window or why the controller holds it back; or, with
    /// neither, a node the controller no longer needs to act on (it recovered, or got its taint).
    /// `run` never taints nodes: that stays the cluster's controller's job.
    Foreseen(NodeForecast),
    /// What the foresight rests on that was assumed (the node lifecycle controller's settings, its
    /// pod not read), said with the first prediction that rests on it: a `warning` line.
    Assumed {
        /// One line.
        message: String,
    },
    /// A zone predicted at scale: its queue drains the nodes foreseen in it one per token, in an order
    /// nobody sees, which their `Foreseen` windows all span; said once for the zone, again when the
    /// drain changes (docs/node-lifecycle.md, "At scale").
    Drain {
        /// The zone.
        zone: ZoneKey,
        /// Its queue's slots.
        drain: Drain,
    },
    /// Something the operator should know that is not about one pod.
    Warning {
        /// One line.
        message: String,
    },
    /// The election (`--leader-elect`) changed who decides.
    Leadership {
        /// This instance's part now.
        state: LeaderState,
        /// The Lease, `NAMESPACE/NAME`.
        lease: String,
        /// This instance's identity.
        identity: String,
        /// The holder, when known.
        holder: Option<String>,
        /// Why leadership was lost.
        reason: Option<String>,
    },
    /// The first interrupt: no new decisions, in-flight deletions are finishing.
    Stopping {
        /// Deletions still in flight.
        in_flight: usize,
    },
    /// The last event.
    Summary(Summary),
}

/// Why `--keep-last-ready` lets a deletion go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LetGo {
    /// Another replica of the workload is ready (this one, by name): the deletion goes ahead.
    Spare {
        /// The ready replica's name.
        replica: String,
    },
    /// The pod is no longer a ready replica (not ready, terminating, or no longer owned): not
    /// guarded, the deletion goes ahead.
    NotReady,
    /// The engine no longer wants the deletion (the taint went away, the pod tolerates it now, or it
    /// is gone): it is not carried out.
    NotDue,
}

impl LetGo {
    /// The reason in one word, for `-o json`.
    #[must_use]
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Spare { .. } => "anotherReady",
            Self::NotReady => "notReady",
            Self::NotDue => "notDue",
        }
    }
}

/// An instance's part in the election.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeaderState {
    /// It holds the lease: it decides and deletes.
    Leading,
    /// Another instance holds the lease: this one watches and deletes nothing.
    Following,
    /// It held the lease and lost it: it stopped deleting.
    Lost,
}

impl LeaderState {
    /// The state in one word.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Leading => "leading",
            Self::Following => "following",
            Self::Lost => "lost",
        }
    }
}

/// What a `run` did, reported when it stops.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Pods deleted (or, in a dry run, that would have been).
    pub deleted: usize,
    /// Whether this was a dry run: nothing was deleted, `deleted` counts what would have been.
    pub dry_run: bool,
    /// Deletions that found the pod already gone or replaced.
    pub gone: usize,
    /// Pending deletions cancelled.
    pub cancelled: usize,
    /// Pods whose deletion kept failing, with the last reason.
    pub failed: Vec<(PodRef, String)>,
    /// Deletions still scheduled, with their deadlines, by deadline.
    pub scheduled: Vec<(PodRef, Timestamp)>,
    /// Deletions due and held when `run` stopped, with their deadlines and what held them, by
    /// deadline: neither deleted nor scheduled, their pods still stand.
    pub held: Vec<(PodRef, Timestamp, HeldBy)>,
}

/// What holds a due deletion back (docs/run.md: "Continuous watches", "A cap on deletions",
/// "Keeping the last ready replica").
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum HeldBy {
    /// A watch is interrupted and not yet listed again.
    WatchGap,
    /// `--max-deletions` is reached.
    MaxDeletions,
    /// `--keep-last-ready`: the last ready replica of its workload.
    KeepLastReady,
}

impl HeldBy {
    /// Every hold, in order.
    pub const ALL: [Self; 3] = [Self::WatchGap, Self::MaxDeletions, Self::KeepLastReady];

    /// Its name in JSON lines and in the metrics' `by` label.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::WatchGap => "watchGap",
            Self::MaxDeletions => "maxDeletions",
            Self::KeepLastReady => "keepLastReady",
        }
    }

    /// What holds it, in words: the flag, or the broken watch.
    #[must_use]
    pub fn words(self) -> &'static str {
        match self {
            Self::WatchGap => "a watch interrupted",
            Self::MaxDeletions => "--max-deletions",
            Self::KeepLastReady => "--keep-last-ready",
        }
    }
}

/// A [`RunEvent`] and when it happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// The instant.
    pub at: Timestamp,
    /// What happened.
    pub event: RunEvent,
}
