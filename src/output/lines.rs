//! The JSON lines of `run -o json` (and of `--log-format json`) and of `plan -w` piped: one enum per
//! stream, [`RunLine`] and [`WatchLine`], each variant a kind of line written with its `type`, its
//! fields borrowed from the event; [`Stamped`] and [`Logged`] put the instant (and a log record's
//! `level` and `msg`) first. `plan -w` prints `run`'s `connection`, `foreseen` and `warning` lines as
//! [`RunLine`]s.
//!
//! The field names and values are a stable interface (docs/run.md, docs/plan.md). A line is written
//! in the order its fields are declared: `time` first, as a text line starts with its time, then
//! `type`, then the kind's own fields.
//!
//! Owns: the lines' shape, the shapes they share (a pod, its owner, its deadline), and how a line is
//! written ([`write_line`]). Uses: the engine's values and `run`'s events.

use std::io::{self, Write};

use serde::{Serialize, Serializer};

use super::human::{RFC3339_MAX, rfc3339, rfc3339_ascii};
use crate::engine::lifecycle::{NodeForecast, Ready};
use crate::engine::model::{PodRef, Taint, Uid};
use crate::engine::observe::{Observed, Seen};
use crate::engine::queue::{Cause, Work};
use crate::engine::snapshot;
use crate::engine::time::Timestamp;
use crate::runtime::report::{HeldBy, LetGo, Report, RunEvent, Summary};

/// Writes `line` as one JSON object and a newline.
pub fn write_line(line: &impl Serialize, out: &mut impl Write) -> io::Result<()> {
    serde_json::to_writer(&mut *out, line)?;
    out.write_all(b"\n")
}

/// A line with its instant: `{"time": …, "type": …, …}`.
#[derive(Serialize)]
pub struct Stamped<L> {
    time: Time,
    #[serde(flatten)]
    line: L,
}

impl<L> Stamped<L> {
    /// `line`, seen at `at`.
    pub fn new(at: Timestamp, line: L) -> Self {
        Self { time: Time(at), line }
    }
}

/// A log record (`--log-format json`): `{"time": …, "level": …, "msg": …, "type": …, …}`, the line
/// of `run -o json` with the record's level and text.
#[derive(Serialize)]
pub struct Logged<'a, L> {
    time: Time,
    level: &'static str,
    msg: &'a str,
    #[serde(flatten)]
    line: L,
}

impl<'a, L> Logged<'a, L> {
    /// `line`, seen at `at`, with its level and its text.
    pub fn new(at: Timestamp, level: &'static str, msg: &'a str, line: L) -> Self {
        Self { time: Time(at), level, msg, line }
    }
}

/// A line of `run -o json`: one per event.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum RunLine<'a> {
    /// `run` connected and starts watching.
    Started {
        server: &'a str,
        watching: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        namespace: Option<&'a str>,
        /// `delete` or `evict`.
        mode: &'static str,
        dry_run: bool,
    },
    /// The initial lists are in.
    Synced { nodes: usize, pods: usize, scheduled: usize, terminating: usize, due: usize, restarted_countdowns: bool },
    /// A deletion timer was armed.
    Scheduled(PodDeadline<'a>),
    /// A pending deletion was cancelled.
    Cancelled(PodDeadline<'a>),
    /// A deletion is being carried out.
    Evicting(PodDeadline<'a>),
    /// In a dry run, a deletion is due: nothing is evicted, so a dry run never says `evicting`.
    WouldEvict(PodDeadline<'a>),
    /// The pod was deleted.
    Deleted(Removal<'a>),
    /// In a dry run, the pod would have been deleted: a dry run never says `deleted`.
    WouldDelete(Removal<'a>),
    /// The pod was already gone.
    Gone { pod: Pod<'a>, message: &'a str },
    /// A deletion attempt failed; it is retried.
    Failed { pod: Pod<'a>, message: &'a str, attempt: u32, retry_at: Time },
    /// A PodDisruptionBudget refused the eviction; it is retried.
    Blocked { pod: Pod<'a>, budget: &'a str, message: &'a str, attempt: u32, retry_at: Time },
    /// An eviction a budget refused is given up.
    Withdrawn { pod: Pod<'a>, budget: &'a str },
    /// A deletion fell due while a watch was interrupted (`since` is its countdown's start).
    Held {
        #[serde(flatten)]
        due: PodDeadline<'a>,
        watches: &'static str,
    },
    /// The interrupted watches are listed again: the deletions held go ahead.
    Released { count: usize },
    /// A deletion held is no longer wanted.
    Dropped { pod: Pod<'a> },
    /// A deletion fell due past `--max-deletions`.
    Capped {
        #[serde(flatten)]
        due: PodDeadline<'a>,
        max_deletions: u32,
        window_seconds: f64,
        next_slot: Time,
    },
    /// A deletion of the last ready replica of a workload is held (`--keep-last-ready`).
    Kept {
        #[serde(flatten)]
        due: PodDeadline<'a>,
        owner: Owner<'a>,
        /// The workload has no other pod: no replacement is made while it is kept.
        only_replica: bool,
        dry_run: bool,
    },
    /// A deletion `--keep-last-ready` held is let go.
    Unkept {
        pod: Pod<'a>,
        owner: Owner<'a>,
        /// `anotherReady`, `notReady` or `notDue`.
        reason: &'static str,
        /// The other ready replica (`null` unless `anotherReady`).
        replica: Option<&'a str>,
        dry_run: bool,
    },
    /// A watch lost the API server, or is back.
    Connection { watch: &'a str, connected: bool, reason: Option<&'a str>, since: Time },
    /// What the node lifecycle controller is expected to do to a node changed.
    Foreseen(Foreseen<'a>),
    /// A zone predicted at scale: its queue's drain, which every node foreseen in it shares.
    Drain(Drain<'a>),
    /// Something the operator should know that is not about one pod.
    Warning { message: &'a str },
    /// The election changed who decides.
    Leadership {
        /// `leading`, `following` or `lost`.
        state: &'static str,
        lease: &'a str,
        identity: &'a str,
        holder: Option<&'a str>,
        reason: Option<&'a str>,
    },
    /// No new decisions; deletions in flight are finishing.
    Stopping { in_flight: usize },
    /// The last line.
    Summary(SummaryLine<'a>),
}

impl<'a> RunLine<'a> {
    /// The line of `report`.
    #[must_use]
    pub fn of(report: &'a Report) -> Self {
        match &report.event {
            RunEvent::Started { server, watching, namespace, dry_run, evict } => Self::Started {
                server,
                watching,
                namespace: namespace.as_deref(),
                mode: if *evict { "evict" } else { "delete" },
                dry_run: *dry_run,
            },
            &RunEvent::Synced { nodes, pods, scheduled, terminating, due, restarted_countdowns } => {
                Self::Synced { nodes, pods, scheduled, terminating, due, restarted_countdowns }
            }
            RunEvent::Scheduled { pod, work } => Self::Scheduled(PodDeadline::new(pod, work)),
            RunEvent::Cancelled { pod, work } => Self::Cancelled(PodDeadline::new(pod, work)),
            RunEvent::Evicting { pod, work, dry_run } => {
                let deadline = PodDeadline::new(pod, work);
                if *dry_run { Self::WouldEvict(deadline) } else { Self::Evicting(deadline) }
            }
            RunEvent::Deleted { pod, work, dry_run } => {
                let removal = Removal {
                    due: PodDeadline::new(pod, work),
                    late_seconds: seconds(report.at.nanos_since(work.fire)),
                    dry_run: *dry_run,
                };
                if *dry_run { Self::WouldDelete(removal) } else { Self::Deleted(removal) }
            }
            RunEvent::Gone { pod, reason } => Self::Gone { pod: pod.into(), message: reason },
            RunEvent::Failed { pod, reason, attempt, retry_at } => {
                Self::Failed { pod: pod.into(), message: reason, attempt: *attempt, retry_at: Time(*retry_at) }
            }
            RunEvent::Blocked { pod, budget, message, attempt, retry_at } => {
                Self::Blocked { pod: pod.into(), budget, message, attempt: *attempt, retry_at: Time(*retry_at) }
            }
            RunEvent::Withdrawn { pod, budget } => Self::Withdrawn { pod: pod.into(), budget },
            RunEvent::Held { pod, work, watches, since: _ } => Self::Held { due: PodDeadline::new(pod, work), watches },
            &RunEvent::Released { count } => Self::Released { count },
            RunEvent::Dropped { pod } => Self::Dropped { pod: pod.into() },
            RunEvent::Capped { pod, work, max, window, until } => Self::Capped {
                due: PodDeadline::new(pod, work),
                max_deletions: *max,
                window_seconds: window.as_secs_f64(),
                next_slot: Time(*until),
            },
            RunEvent::Kept { pod, work, owner, only, dry_run } => Self::Kept {
                due: PodDeadline::new(pod, work),
                owner: owner.into(),
                only_replica: *only,
                dry_run: *dry_run,
            },
            RunEvent::Unkept { pod, owner, why, dry_run } => Self::Unkept {
                pod: pod.into(),
                owner: owner.into(),
                reason: why.as_str(),
                replica: match why {
                    LetGo::Spare { replica } => Some(replica.as_str()),
                    LetGo::NotReady | LetGo::NotDue => None,
                },
                dry_run: *dry_run,
            },
            RunEvent::Connection { watch, connected, reason, since } => {
                Self::Connection { watch, connected: *connected, reason: reason.as_deref(), since: Time(*since) }
            }
            RunEvent::Foreseen(forecast) => Self::Foreseen(forecast.into()),
            RunEvent::Drain { zone, drain } => Self::Drain(Drain {
                zone: zone.name(),
                nodes: drain.nodes,
                every_seconds: drain.every.as_secs_f64(),
                first: Time(drain.first),
                last: Time(drain.last),
            }),
            RunEvent::Warning { message } | RunEvent::Assumed { message } => Self::Warning { message },
            RunEvent::Leadership { state, lease, identity, holder, reason } => Self::Leadership {
                state: state.as_str(),
                lease,
                identity,
                holder: holder.as_deref(),
                reason: reason.as_deref(),
            },
            &RunEvent::Stopping { in_flight } => Self::Stopping { in_flight },
            RunEvent::Summary(summary) => Self::Summary(summary.into()),
        }
    }
}

/// A line of `plan -w` piped: one per change seen.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum WatchLine<'a> {
    /// Both first lists are in.
    Synced { tainted_nodes: usize, pods: usize },
    /// A node's NoExecute taints changed (`[]`: untainted or deleted).
    Taints {
        node: &'a str,
        #[serde(serialize_with = "taint_lines")]
        taints: &'a [Taint],
    },
    /// A pod's deletion is scheduled.
    Scheduled(PodDeadline<'a>),
    /// Its deadline came.
    Due(PodDeadline<'a>),
    /// A scheduled or due deletion is no longer wanted.
    Cancelled(PodDeadline<'a>),
    /// The pod was deleted while scheduled or due.
    Done {
        #[serde(flatten)]
        due: PodDeadline<'a>,
        /// `deleted` or `terminating`.
        how: &'static str,
        late_seconds: f64,
    },
}

impl<'a> WatchLine<'a> {
    /// The line of `seen`.
    #[must_use]
    pub fn of(seen: &'a Seen) -> Self {
        match &seen.what {
            &Observed::Synced { tainted, pods } => Self::Synced { tainted_nodes: tainted, pods },
            Observed::Taints { node, taints } => Self::Taints { node: node.as_str(), taints },
            Observed::Scheduled { pod, work } => Self::Scheduled(PodDeadline::new(pod, work)),
            Observed::Due { pod, work } => Self::Due(PodDeadline::new(pod, work)),
            Observed::Cancelled { pod, work } => Self::Cancelled(PodDeadline::new(pod, work)),
            Observed::Done { pod, work, how } => Self::Done {
                due: PodDeadline::new(pod, work),
                how: how.as_str(),
                late_seconds: seconds(seen.at.nanos_since(work.fire)),
            },
        }
    }
}

/// Nanoseconds in seconds, as the lines say how late.
fn seconds(nanos: i128) -> f64 {
    nanos as f64 / 1e9
}

/// An instant, written in RFC 3339 (`2026-11-22T10:00:05.25Z`).
#[derive(Clone, Copy)]
pub struct Time(Timestamp);

impl Serialize for Time {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut buffer = [0; RFC3339_MAX];
        // Years 0000 to 9999 (the API's) without an allocation.
        match rfc3339_ascii(self.0, &mut buffer).and_then(|text| std::str::from_utf8(text).ok()) {
            Some(text) => serializer.serialize_str(text),
            None => serializer.serialize_str(&rfc3339(self.0)),
        }
    }
}

/// `pod`: `namespace`, `name`, `uid`, `node`.
#[derive(Serialize)]
pub struct Pod<'a> {
    namespace: &'a str,
    name: &'a str,
    #[serde(serialize_with = "uid_text")]
    uid: &'a Uid,
    node: &'a str,
}

impl<'a> From<&'a PodRef> for Pod<'a> {
    fn from(pod: &'a PodRef) -> Self {
        Self { namespace: pod.key.namespace(), name: pod.key.name(), uid: &pod.uid, node: pod.node.as_str() }
    }
}

fn uid_text<S: Serializer>(uid: &&Uid, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(uid.text().as_str())
}

/// `owner`: the workload's controller, `kind`, `name`, `uid`.
#[derive(Serialize)]
pub struct Owner<'a> {
    kind: &'a str,
    name: &'a str,
    uid: &'a str,
}

impl<'a> From<&'a snapshot::Owner> for Owner<'a> {
    fn from(owner: &'a snapshot::Owner) -> Self {
        Self { kind: owner.kind(), name: owner.name(), uid: owner.uid() }
    }
}

/// A pod and its deletion's clock: `pod`, `evictAt`, `since` (when the countdown started), `reason`
/// (`untolerated` or `tolerationSeconds`) and, with that reason, `tolerationSeconds`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodDeadline<'a> {
    pod: Pod<'a>,
    evict_at: Time,
    since: Time,
    reason: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    toleration_seconds: Option<i64>,
}

impl<'a> PodDeadline<'a> {
    fn new(pod: &'a PodRef, work: &Work) -> Self {
        let (reason, toleration_seconds) = match work.cause {
            Cause::Untolerated => ("untolerated", None),
            Cause::Expired { seconds } => ("tolerationSeconds", Some(seconds)),
        };
        Self { pod: pod.into(), evict_at: Time(work.fire), since: Time(work.created), reason, toleration_seconds }
    }
}

/// `deleted` and `wouldDelete`: the pod and its deadline, how late (`lateSeconds`, the line's time
/// minus `evictAt`) and whether it was a dry run.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Removal<'a> {
    #[serde(flatten)]
    due: PodDeadline<'a>,
    late_seconds: f64,
    dry_run: bool,
}

/// `foreseen`: a node, its health and what the node lifecycle controller is expected to do to it
/// (docs/run.md).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Foreseen<'a> {
    node: &'a str,
    zone: &'a str,
    ready: Option<&'static str>,
    last_heartbeat: Option<Time>,
    predicted_taint: Option<PredictedTaint>,
    held: Option<Held<'a>>,
}

/// `predictedTaint`: the taint expected and its window.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PredictedTaint {
    key: &'static str,
    effect: &'static str,
    earliest: Time,
    latest: Option<Time>,
    basis: &'static str,
    queued_with: usize,
}

/// `held`: why the controller holds the taint back, and the zone.
#[derive(Serialize)]
pub struct Held<'a> {
    reason: &'static str,
    zone: &'a str,
}

impl<'a> From<&'a NodeForecast> for Foreseen<'a> {
    fn from(forecast: &'a NodeForecast) -> Self {
        Self {
            node: forecast.name.as_str(),
            zone: forecast.zone.name(),
            ready: forecast.ready.map(Ready::as_str),
            last_heartbeat: forecast.last_heartbeat.map(Time),
            predicted_taint: forecast.taint.map(|taint| PredictedTaint {
                key: taint.key.key(),
                effect: "NoExecute",
                earliest: Time(taint.earliest),
                latest: taint.latest.map(Time),
                basis: taint.basis.as_str(),
                queued_with: taint.queued_with,
            }),
            held: forecast.held.as_ref().map(|held| Held { reason: held.reason.as_str(), zone: held.zone.name() }),
        }
    }
}

/// `drain`: a zone predicted at scale, its queue drained `nodes` one every `everySeconds`, from the
/// `first` slot at the earliest to the `last` at the latest, in an order nobody sees.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Drain<'a> {
    zone: &'a str,
    nodes: usize,
    every_seconds: f64,
    first: Time,
    last: Time,
}

/// `summary`: what the run did. `deleted`, or in a dry run `wouldDelete`: a dry run never says
/// deleted.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SummaryLine<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    deleted: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    would_delete: Option<usize>,
    dry_run: bool,
    gone: usize,
    cancelled: usize,
    /// `{pod, message}` for each pod whose deletion kept failing.
    #[serde(serialize_with = "failing_lines")]
    failed: &'a [(PodRef, String)],
    /// `{pod, evictAt}` for each deletion still scheduled.
    #[serde(serialize_with = "pending_lines")]
    scheduled: &'a [(PodRef, Timestamp)],
    /// `{pod, evictAt, by}` for each deletion due and held (`by`: `watchGap`, `maxDeletions`,
    /// `keepLastReady`).
    #[serde(serialize_with = "held_lines")]
    held: &'a [(PodRef, Timestamp, HeldBy)],
}

impl<'a> From<&'a Summary> for SummaryLine<'a> {
    fn from(summary: &'a Summary) -> Self {
        let (deleted, would_delete) =
            if summary.dry_run { (None, Some(summary.deleted)) } else { (Some(summary.deleted), None) };
        Self {
            deleted,
            would_delete,
            dry_run: summary.dry_run,
            gone: summary.gone,
            cancelled: summary.cancelled,
            failed: &summary.failed,
            scheduled: &summary.scheduled,
            held: &summary.held,
        }
    }
}

#[derive(Serialize)]
struct Failing<'a> {
    pod: Pod<'a>,
    message: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Pending<'a> {
    pod: Pod<'a>,
    evict_at: Time,
}

fn failing_lines<S: Serializer>(failed: &&[(PodRef, String)], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(failed.iter().map(|(pod, message)| Failing { pod: pod.into(), message }))
}

fn pending_lines<S: Serializer>(scheduled: &&[(PodRef, Timestamp)], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(scheduled.iter().map(|(pod, at)| Pending { pod: pod.into(), evict_at: Time(*at) }))
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct HeldLine<'a> {
    pod: Pod<'a>,
    evict_at: Time,
    by: &'static str,
}

fn held_lines<S: Serializer>(held: &&[(PodRef, Timestamp, HeldBy)], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(held.iter().map(|(pod, at, by)| HeldLine {
        pod: pod.into(),
        evict_at: Time(*at),
        by: by.as_str(),
    }))
}

/// `taints`: each `{key, value, effect, timeAdded}` (`timeAdded` `null` when the writer set none).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TaintLine<'a> {
    key: &'a str,
    value: &'a str,
    effect: &'a str,
    time_added: Option<Time>,
}

fn taint_lines<S: Serializer>(taints: &&[Taint], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(taints.iter().map(|taint| TaintLine {
        key: taint.key.as_str(),
        value: &taint.value,
        effect: taint.effect.as_str(),
        time_added: taint.time_added.map(Time),
    }))
}

/// One line as written, checked and parsed, for the tests of each stream: one line, `time` first (as
/// a text line starts with it), then `type` (docs/run.md, docs/plan.md).
#[cfg(test)]
pub(super) fn parsed(line: &[u8]) -> serde_json::Value {
    assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1, "one line");
    let text = std::str::from_utf8(line).expect("UTF-8");
    let after_time = text.strip_prefix(r#"{"time":""#).and_then(|rest| rest.split_once('"')).map(|(_, rest)| rest);
    assert!(after_time.is_some_and(|rest| rest.starts_with(r#","type":""#)), "time, then type: {text}");
    serde_json::from_slice(line).expect("JSON")
}
