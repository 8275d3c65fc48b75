//! The `EvictionPlan` wire document (contract §3): versioned, with stable field names. These structs
//! are the JSON and YAML contract; engine types never serialize themselves.

use std::io::{self, Write};

use serde::Serialize;

use super::human::rfc3339;
use crate::engine::model::Taint;
use crate::engine::replay::{Basis, NodePlan, Plan, PodPlan, Verdict};

/// The document's `apiVersion`; bump it for any change that is not an addition.
pub const API_VERSION: &str = "taint-evict/v1";

/// `kind: EvictionPlan`.
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct EvictionPlan {
    api_version: &'static str,
    kind: &'static str,
    now: String,
    nodes: Vec<NodeDoc>,
}

#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
struct NodeDoc {
    name: String,
    taints: Vec<TaintDoc>,
    pods: Vec<PodDoc>,
}

/// A taint as the API writes it.
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct TaintDoc {
    key: String,
    value: String,
    effect: String,
    time_added: Option<String>,
}

#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
struct PodDoc {
    namespace: String,
    name: String,
    uid: String,
    phase: String,
    terminating: bool,
    verdict: &'static str,
    evict_at: Option<String>,
    since: Option<String>,
    overdue: bool,
    toleration_seconds: Option<i64>,
    untolerated: Vec<TaintDoc>,
    basis: Option<&'static str>,
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
        Basis::PodScheduled => "pod-scheduled",
        Basis::ControllerRestart => "controller-restart",
        Basis::Now => "now",
    }
}

impl From<&Taint> for TaintDoc {
    fn from(taint: &Taint) -> Self {
        Self {
            key: taint.key.clone(),
            value: taint.value.clone(),
            effect: taint.effect.as_str().to_owned(),
            time_added: taint.time_added.map(rfc3339),
        }
    }
}

impl From<&PodPlan> for PodDoc {
    fn from(pod: &PodPlan) -> Self {
        Self {
            namespace: pod.key.namespace().to_owned(),
            name: pod.key.name().to_owned(),
            uid: pod.uid.to_string(),
            phase: pod.phase.clone(),
            terminating: pod.terminating,
            verdict: verdict_name(pod.verdict),
            evict_at: pod.evict_at.map(rfc3339),
            since: pod.since.map(rfc3339),
            overdue: pod.overdue,
            toleration_seconds: pod.toleration_seconds,
            untolerated: pod.untolerated.iter().map(TaintDoc::from).collect(),
            basis: pod.basis.map(basis_name),
        }
    }
}

impl From<&NodePlan> for NodeDoc {
    fn from(node: &NodePlan) -> Self {
        Self {
            name: node.name.to_string(),
            taints: node.taints.iter().map(TaintDoc::from).collect(),
            pods: node.pods.iter().map(PodDoc::from).collect(),
        }
    }
}

impl From<&Plan> for EvictionPlan {
    fn from(plan: &Plan) -> Self {
        Self {
            api_version: API_VERSION,
            kind: "EvictionPlan",
            now: rfc3339(plan.now),
            nodes: plan.nodes.iter().map(NodeDoc::from).collect(),
        }
    }
}

/// Writes `document` as indented JSON and a newline.
pub fn write_json(document: &impl Serialize, out: &mut impl Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, document)?;
    out.write_all(b"\n")
}

/// Writes `document` as YAML.
pub fn write_yaml(document: &impl Serialize, out: &mut impl Write) -> io::Result<()> {
    let text = serde_saphyr::to_string(document).map_err(io::Error::other)?;
    out.write_all(text.as_bytes())
}
