//! `explain`: for one pod, which toleration covers each NoExecute taint, why the others do not, and
//! what that means for its deadline.

use std::io::{self, Write};

use serde::Serialize;

use super::human::{countdown, printable_display as shown, rfc3339};
use super::json::{API_VERSION, TaintDoc, basis_name, verdict_name};
use crate::engine::explain::TaintMatch;
use crate::engine::model::{NodeName, Toleration};
use crate::engine::replay::{PodPlan, Verdict};
use crate::engine::time::Timestamp;
use crate::engine::tolerate::{Mismatch, TolerationWindow};

/// Everything `explain` reports about one pod.
#[derive(Debug)]
pub struct Explanation<'a> {
    /// The evaluation instant.
    pub now: Timestamp,
    /// The pod's node.
    pub node: &'a NodeName,
    /// The pod's tolerations, in order.
    pub tolerations: &'a [Toleration],
    /// The replay's result for the pod.
    pub plan: &'a PodPlan,
    /// Each NoExecute taint of the node at `now`, matched.
    pub matches: Vec<TaintMatch>,
    /// The window the used tolerations give now (`None` when some taint is untolerated or there are
    /// no taints).
    pub window: Option<TolerationWindow>,
}

fn mismatch_text(why: &Mismatch) -> &'static str {
    match why {
        Mismatch::Effect => "effect differs",
        Mismatch::Key => "key differs",
        Mismatch::Value => "value differs (operator Equal)",
        Mismatch::Operator => "operator matches nothing (only Equal and Exists do)",
    }
}

/// Writes the explanation as text.
pub fn render_text(e: &Explanation<'_>, out: &mut impl Write) -> io::Result<()> {
    let plan = e.plan;
    writeln!(out, "Pod {} (uid {}) on node {}", shown(&plan.key), shown(&plan.uid), shown(e.node))?;
    let deadline =
        plan.evict_at.map_or_else(String::new, |at| format!(" {} ({})", rfc3339(at), countdown(Some(at), e.now)));
    writeln!(out, "Verdict: {}{deadline}", verdict_name(plan.verdict))?;
    if let (Some(since), Some(basis)) = (plan.since, plan.basis) {
        writeln!(out, "Clock started: {} ({})", rfc3339(since), basis_name(basis))?;
    }
    if let Some(since) = plan.stuck_since {
        for line in super::table::stuck_lines(e.node.as_str(), &[(&plan.key, since)]) {
            writeln!(out, "{}", super::human::printable(&line))?;
        }
    } else if plan.terminating {
        writeln!(out, "Note: the pod is already terminating (its deletion was issued).")?;
    }
    writeln!(out)?;
    if e.matches.is_empty() {
        writeln!(out, "Node {} has no NoExecute taints at {}.", shown(e.node), rfc3339(e.now))?;
    } else {
        writeln!(
            out,
            "NoExecute taints of {} at {}, in node order (the first matching toleration is used):",
            shown(e.node),
            rfc3339(e.now)
        )?;
    }
    for (n, m) in e.matches.iter().enumerate() {
        writeln!(out, "  {}. {}", n + 1, shown(&m.taint))?;
        for (i, why) in &m.rejected {
            writeln!(out, "       tolerations[{i}] {}: {}", shown(&e.tolerations[*i]), mismatch_text(why))?;
        }
        match m.used {
            Some(i) => writeln!(out, "     used: tolerations[{i}] {}", shown(&e.tolerations[i]))?,
            None => writeln!(out, "     untolerated: no toleration matches")?,
        }
    }
    writeln!(out)?;
    match (&e.window, plan.verdict) {
        (_, Verdict::Unaffected) => writeln!(out, "Result: nothing to do, the node is not NoExecute-tainted.")?,
        (None, _) => {
            writeln!(out, "Result: some taint is untolerated, so the pod is deleted as soon as it is observed.")?
        }
        (Some(TolerationWindow::Forever), _) => {
            writeln!(
                out,
                "Result: every used toleration is without tolerationSeconds (or wraps negative): tolerated forever."
            )?;
        }
        (Some(TolerationWindow::After { seconds, .. }), _) => {
            writeln!(out, "Result: the smallest tolerationSeconds of the used tolerations is {seconds}s.")?;
            if plan.toleration_seconds.is_some_and(|s| s != *seconds) {
                writeln!(
                    out,
                    "  The pending deadline was set with {}s and is kept: upstream never moves an existing deadline.",
                    plan.toleration_seconds.unwrap_or_default()
                )?;
            }
        }
    }
    Ok(())
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ExplanationDoc {
    api_version: &'static str,
    kind: &'static str,
    now: String,
    namespace: String,
    name: String,
    uid: String,
    node: String,
    verdict: &'static str,
    evict_at: Option<String>,
    since: Option<String>,
    basis: Option<&'static str>,
    overdue: bool,
    toleration_seconds: Option<i64>,
    /// Present (`true`) only for a pod stuck terminating.
    #[serde(skip_serializing_if = "Option::is_none")]
    stuck: Option<bool>,
    /// Its `deletionTimestamp`; present with `stuck`.
    #[serde(skip_serializing_if = "Option::is_none")]
    stuck_since: Option<String>,
    taints: Vec<TaintMatchDoc>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TaintMatchDoc {
    taint: TaintDoc,
    used_toleration: Option<usize>,
    rejected: Vec<RejectedDoc>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RejectedDoc {
    toleration: usize,
    reason: &'static str,
}

/// Writes the explanation as a JSON document (`kind: EvictionExplanation`).
pub fn render_json(e: &Explanation<'_>, out: &mut impl Write) -> io::Result<()> {
    super::json::write_json(&document(e), out)
}

/// Writes the explanation's document as YAML.
pub fn render_yaml(e: &Explanation<'_>, out: &mut impl Write) -> io::Result<()> {
    super::json::write_yaml(&document(e), out)
}

fn document(e: &Explanation<'_>) -> ExplanationDoc {
    let plan = e.plan;
    ExplanationDoc {
        api_version: API_VERSION,
        kind: "EvictionExplanation",
        now: rfc3339(e.now),
        namespace: plan.key.namespace().to_owned(),
        name: plan.key.name().to_owned(),
        uid: plan.uid.to_string(),
        node: e.node.to_string(),
        verdict: verdict_name(plan.verdict),
        evict_at: plan.evict_at.map(rfc3339),
        since: plan.since.map(rfc3339),
        basis: plan.basis.map(basis_name),
        overdue: plan.overdue,
        toleration_seconds: plan.toleration_seconds,
        stuck: plan.stuck_since.map(|_| true),
        stuck_since: plan.stuck_since.map(rfc3339),
        taints: e
            .matches
            .iter()
            .map(|m| TaintMatchDoc {
                taint: TaintDoc::from(&m.taint),
                used_toleration: m.used,
                rejected: m
                    .rejected
                    .iter()
                    .map(|(i, why)| RejectedDoc { toleration: *i, reason: mismatch_text(why) })
                    .collect(),
            })
            .collect(),
    }
}
