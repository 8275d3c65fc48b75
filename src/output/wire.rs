//! What the wire documents share (docs/output.md, "The JSON (and YAML) document"): the `apiVersion`,
//! a taint, when a node's taints were written, a device's taint, an owner losing pods, a predicted or
//! held taint, how a live cluster answered and its clock, the wire names of verdicts and bases. These
//! structs are part of the JSON and YAML contract; engine types never serialize themselves.

use serde::Serialize;

use super::human::rfc3339;
use crate::engine::devices::{DeviceEviction, DeviceTolerance};
use crate::engine::lifecycle::{Held, PredictedTaint};
use crate::engine::model::Taint;
use crate::engine::plan::{Basis, OwnerLoss, Verdict};
use crate::engine::snapshot::TaintsWritten;

/// The document's `apiVersion`; bump it for any change that is not an addition.
pub const API_VERSION: &str = "taint-evict/v1";

/// One owner losing pods (`owners[]`).
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct OwnerDoc<'a> {
    namespace: &'a str,
    kind: &'a str,
    name: &'a str,
    /// Its running pods, on any node.
    pods: u32,
    /// Of those, the ones deleted.
    deleted: u32,
    first_deletion: String,
    /// `null`: a predicted taint may never come, so neither may the last deletion.
    last_deletion: Option<String>,
    none_left: bool,
}

impl<'a> From<&'a OwnerLoss<'a>> for OwnerDoc<'a> {
    fn from(loss: &'a OwnerLoss<'a>) -> Self {
        Self {
            namespace: &**loss.namespace,
            kind: loss.owner.kind(),
            name: loss.owner.name(),
            pods: loss.pods,
            deleted: loss.deleted,
            first_deletion: rfc3339(loss.first),
            last_deletion: loss.last.map(rfc3339),
            none_left: loss.none_left(),
        }
    }
}

/// How a live cluster answered (JSON and YAML carry it); `None` for a dump.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Live {
    /// `watch-cache` or `quorum`.
    pub read: &'static str,
    /// What the reads were answered in (`protobuf`, `json`, `protobuf and json`), when any was.
    pub content_type: Option<&'static str>,
    /// How the control plane's time was read; `None` when `--now` fixed it.
    pub clock: Option<ClockDoc>,
}

/// `clock`: how far this machine's clock is from the control plane's.
#[derive(Serialize, Clone, Copy, Debug, PartialEq)]
pub struct ClockDoc {
    /// This machine's clock minus the control plane's, in seconds (to the millisecond).
    pub offset: f64,
    /// The most the offset may be off either way, in seconds (to the millisecond).
    pub uncertainty: f64,
    /// `kube-controller-manager-lease`, `node-lease` or `date-header`.
    pub source: &'static str,
}

impl ClockDoc {
    /// The document of an offset and its uncertainty in nanoseconds.
    #[must_use]
    pub fn new(offset: i64, uncertainty: i64, source: &'static str) -> Self {
        let seconds = |nanos: i64| (nanos as f64 / 1e6).round() / 1e3;
        Self { offset: seconds(offset), uncertainty: seconds(uncertainty), source }
    }
}

#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct PredictedTaintDoc {
    key: &'static str,
    effect: &'static str,
    earliest: String,
    latest: Option<String>,
    basis: &'static str,
}

#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct HeldDoc {
    reason: &'static str,
    zone: String,
}

/// The `managedFields` entry that owns a node's taints: when it wrote them, and who.
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct WrittenDoc<'a> {
    time: String,
    manager: &'a str,
}

impl<'a> From<&'a TaintsWritten> for WrittenDoc<'a> {
    fn from(written: &'a TaintsWritten) -> Self {
        Self { time: rfc3339(written.at), manager: &written.manager }
    }
}

/// A taint as the API writes it.
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct TaintDoc<'a> {
    pub(super) key: &'a str,
    pub(super) value: &'a str,
    pub(super) effect: &'a str,
    pub(super) time_added: Option<String>,
}

/// One NoExecute taint on a device a pod's claim holds (`devices[]`).
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub(super) struct DeviceDoc<'a> {
    driver: &'a str,
    pool: &'a str,
    device: &'a str,
    claim: &'a str,
    taint: TaintDoc<'a>,
    source: SourceDoc<'a>,
    toleration_seconds: Option<i64>,
    deadline: Option<String>,
}

#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
struct SourceDoc<'a> {
    kind: &'static str,
    name: &'a str,
}

impl<'a> From<&'a DeviceEviction> for DeviceDoc<'a> {
    fn from(eviction: &'a DeviceEviction) -> Self {
        Self {
            driver: &eviction.device.driver,
            pool: &eviction.device.pool,
            device: &eviction.device.device,
            claim: &eviction.claim,
            taint: TaintDoc::from(&eviction.taint),
            source: SourceDoc { kind: eviction.source.as_str(), name: &eviction.source_name },
            toleration_seconds: match eviction.tolerance {
                DeviceTolerance::For(seconds) => Some(seconds),
                DeviceTolerance::Untolerated | DeviceTolerance::Forever => None,
            },
            deadline: eviction.deadline.map(rfc3339),
        }
    }
}

/// Nanoseconds as seconds, to the millisecond (`offBySeconds`, a review's differences).
#[allow(clippy::cast_precision_loss)]
#[must_use]
pub fn millis_seconds(nanos: i128) -> f64 {
    (nanos as f64 / 1e6).round() / 1e3
}

/// The wire name of a verdict.
#[must_use]
pub fn verdict_name(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::EvictNow => "evict-now",
        Verdict::EvictAt => "evict-at",
        Verdict::Never => "never",
        Verdict::Unaffected => "unaffected",
    }
}

/// The wire name of a basis.
#[must_use]
pub fn basis_name(basis: Basis) -> &'static str {
    match basis {
        Basis::TaintTimeAdded => "taint-time-added",
        Basis::TaintWritten => "taint-written",
        Basis::TaintRewritten => "taint-rewritten",
        Basis::InputTaken => "input-taken",
        Basis::PodScheduled => "pod-scheduled",
        Basis::ControllerRestart => "controller-restart",
        Basis::NodeNotReady => "node-not-ready",
        Basis::Now => "now",
        Basis::PredictedTaint => "predicted-taint",
        Basis::DeviceTaint => "device-taint",
    }
}

impl<'a> From<&'a Taint> for TaintDoc<'a> {
    fn from(taint: &'a Taint) -> Self {
        Self {
            key: &taint.key,
            value: &taint.value,
            effect: taint.effect.as_str(),
            time_added: taint.time_added.map(rfc3339),
        }
    }
}

impl From<&PredictedTaint> for PredictedTaintDoc {
    fn from(taint: &PredictedTaint) -> Self {
        Self {
            key: taint.key.key(),
            effect: "NoExecute",
            earliest: rfc3339(taint.earliest),
            latest: taint.latest.map(rfc3339),
            basis: taint.basis.as_str(),
        }
    }
}

impl From<&Held> for HeldDoc {
    fn from(held: &Held) -> Self {
        Self { reason: held.reason.as_str(), zone: held.zone.name().to_owned() }
    }
}
