//! `run`'s output: one line per event, for people or as JSON Lines (`{"type": …}`), and the status
//! line of the live view.

use std::collections::BTreeMap;
use std::io::{self, Write};

use owo_colors::OwoColorize;
use serde_json::{Value, json};

use super::ColorMode;
use super::human::{countdown, rfc3339};
use crate::engine::model::{PodKey, PodRef};
use crate::engine::queue::{Cause, Work};
use crate::engine::report::{Report, RunEvent, Summary};
use crate::engine::time::Timestamp;

fn pod_json(pod: &PodRef) -> Value {
    json!({"namespace": pod.key.namespace(), "name": pod.key.name(), "uid": pod.uid.as_str(), "node": pod.node.as_str()})
}

fn work_json(object: &mut Value, work: &Work) {
    object["evictAt"] = json!(rfc3339(work.fire));
    object["since"] = json!(rfc3339(work.created));
    match work.cause {
        Cause::Untolerated => object["reason"] = json!("untolerated"),
        Cause::Expired { seconds } => {
            object["reason"] = json!("tolerationSeconds");
            object["tolerationSeconds"] = json!(seconds);
        }
    }
}

fn cause_text(work: &Work) -> String {
    match work.cause {
        Cause::Untolerated => "untolerated taint".to_owned(),
        Cause::Expired { seconds } => format!("tolerationSeconds={seconds}"),
    }
}

/// The event as one JSON object (a line of `run -o json`).
#[must_use]
pub fn to_json(report: &Report) -> Value {
    let mut object = match &report.event {
        RunEvent::Started { server, watching, dry_run } => {
            json!({"type": "started", "server": server, "watching": watching, "dryRun": dry_run})
        }
        RunEvent::Synced { nodes, pods, scheduled, restarted_countdowns } => json!({"type": "synced", "nodes": nodes,
            "pods": pods, "scheduled": scheduled, "restartedCountdowns": restarted_countdowns}),
        RunEvent::Scheduled { pod, work } => {
            let mut o = json!({"type": "scheduled", "pod": pod_json(pod)});
            work_json(&mut o, work);
            o
        }
        RunEvent::Cancelled { pod, work } => {
            let mut o = json!({"type": "cancelled", "pod": pod_json(pod)});
            work_json(&mut o, work);
            o
        }
        RunEvent::Evicting { pod, work } => {
            let mut o = json!({"type": "evicting", "pod": pod_json(pod)});
            work_json(&mut o, work);
            o
        }
        RunEvent::Deleted { pod, work, dry_run } => {
            let mut o = json!({"type": "deleted", "pod": pod_json(pod), "dryRun": dry_run,
                "lateSeconds": report.at.nanos_since(work.fire) as f64 / 1e9});
            work_json(&mut o, work);
            o
        }
        RunEvent::Gone { pod, reason } => json!({"type": "gone", "pod": pod_json(pod), "message": reason}),
        RunEvent::Failed { pod, reason, attempt, retry_at } => json!({"type": "failed", "pod": pod_json(pod),
            "message": reason, "attempt": attempt, "retryAt": rfc3339(*retry_at)}),
        RunEvent::Warning { message } => json!({"type": "warning", "message": message}),
        RunEvent::Stopping { in_flight } => json!({"type": "stopping", "inFlight": in_flight}),
        RunEvent::Summary(summary) => json!({"type": "summary", "deleted": summary.deleted, "gone": summary.gone,
            "cancelled": summary.cancelled,
            "failed": summary.failed.iter().map(|(p, r)| json!({"pod": pod_json(p), "message": r})).collect::<Vec<_>>(),
            "scheduled": summary.scheduled.iter().map(|(p, at)| json!({"pod": pod_json(p), "evictAt": rfc3339(*at)})).collect::<Vec<_>>()}),
    };
    object["time"] = json!(rfc3339(report.at));
    object
}

/// Writes the event as one JSON line.
pub fn write_json(report: &Report, out: &mut impl Write) -> io::Result<()> {
    serde_json::to_writer(&mut *out, &to_json(report))?;
    out.write_all(b"\n")
}

fn paint(text: &str, color: ColorMode, style: fn(&str) -> String) -> String {
    match color {
        ColorMode::Color => style(text),
        ColorMode::Plain => text.to_owned(),
    }
}

/// Writes the event as a line (or, for the summary, a few lines) for people.
pub fn write_text(report: &Report, color: ColorMode, out: &mut impl Write) -> io::Result<()> {
    let at = rfc3339(report.at);
    let (kind, text): (String, String) = match &report.event {
        RunEvent::Started { server, watching, dry_run } => {
            let mode = if *dry_run {
                "dry run: deciding and reporting only, nothing is written"
            } else {
                "deleting pods when due"
            };
            (
                "started".into(),
                format!("watching {watching} and the pods bound to them on {server} ({mode}); Ctrl-C stops"),
            )
        }
        RunEvent::Synced { nodes, pods, scheduled, restarted_countdowns } => {
            let how =
                if *restarted_countdowns { "countdowns restarted now" } else { "countdowns continued from the replay" };
            ("synced".into(), format!("{nodes} nodes, {pods} pods; {scheduled} deletions scheduled ({how})"))
        }
        RunEvent::Scheduled { pod, work } => (
            paint("scheduled", color, |t| t.yellow().to_string()),
            format!(
                "{} on {}: deletion at {} ({}), {}",
                pod.key,
                pod.node,
                rfc3339(work.fire),
                countdown(Some(work.fire), report.at),
                cause_text(work)
            ),
        ),
        RunEvent::Cancelled { pod, work } => (
            paint("cancelled", color, |t| t.green().to_string()),
            format!("{} on {}: deletion at {} cancelled", pod.key, pod.node, rfc3339(work.fire)),
        ),
        RunEvent::Evicting { pod, work } => (
            paint("evicting", color, |t| t.red().to_string()),
            format!("{} on {}: due {} ({})", pod.key, pod.node, rfc3339(work.fire), cause_text(work)),
        ),
        RunEvent::Deleted { pod, work, dry_run } => {
            let verb = if *dry_run { "would delete" } else { "deleted" };
            let late = report.at.nanos_since(work.fire).max(0) as f64 / 1e9;
            (
                paint(verb, color, |t| t.red().bold().to_string()),
                format!("{} on {} ({late:.3}s after its deadline)", pod.key, pod.node),
            )
        }
        RunEvent::Gone { pod, reason } => ("gone".into(), format!("{}: already gone ({reason})", pod.key)),
        RunEvent::Failed { pod, reason, attempt, retry_at } => (
            paint("failed", color, |t| t.red().to_string()),
            format!("{}: attempt {attempt}: {reason}; retrying at {}", pod.key, rfc3339(*retry_at)),
        ),
        RunEvent::Warning { message } => (paint("warning", color, |t| t.yellow().bold().to_string()), message.clone()),
        RunEvent::Stopping { in_flight } => (
            "stopping".into(),
            format!("no new decisions; waiting for {in_flight} deletions in flight (Ctrl-C again to quit now)"),
        ),
        RunEvent::Summary(summary) => return write_summary(summary, out),
    };
    writeln!(out, "{at}  {kind:<9} {text}")
}

fn write_summary(summary: &Summary, out: &mut impl Write) -> io::Result<()> {
    writeln!(
        out,
        "summary: {} deleted, {} already gone, {} cancelled, {} failing, {} still scheduled",
        summary.deleted,
        summary.gone,
        summary.cancelled,
        summary.failed.len(),
        summary.scheduled.len()
    )?;
    for (pod, reason) in &summary.failed {
        writeln!(out, "  failing: {} on {}: {reason}", pod.key, pod.node)?;
    }
    for (pod, at) in &summary.scheduled {
        writeln!(out, "  scheduled: {} on {} at {}", pod.key, pod.node, rfc3339(*at))?;
    }
    Ok(())
}

/// The live view's state: what is scheduled, from the events seen.
#[derive(Debug, Default)]
pub struct LiveView {
    scheduled: BTreeMap<PodKey, Timestamp>,
    deleted: usize,
}

impl LiveView {
    /// Follows one event.
    pub fn observe(&mut self, report: &Report) {
        match &report.event {
            RunEvent::Scheduled { pod, work } => {
                self.scheduled.insert(pod.key.clone(), work.fire);
            }
            RunEvent::Cancelled { pod, .. } | RunEvent::Evicting { pod, .. } => {
                self.scheduled.remove(&pod.key);
            }
            RunEvent::Deleted { .. } => self.deleted += 1,
            _ => {}
        }
    }

    /// The status line: how many are scheduled, the next few with their countdowns.
    #[must_use]
    pub fn status(&self, now: Timestamp) -> String {
        let mut next: Vec<(&Timestamp, &PodKey)> = self.scheduled.iter().map(|(k, at)| (at, k)).collect();
        next.sort();
        let shown: Vec<String> =
            next.iter().take(3).map(|(at, key)| format!("{key} {}", countdown(Some(**at), now))).collect();
        let more = if next.len() > 3 { format!(", +{} more", next.len() - 3) } else { String::new() };
        format!(
            "[{} scheduled, {} deleted] next: {}{more}",
            self.scheduled.len(),
            self.deleted,
            if shown.is_empty() { "-".to_owned() } else { shown.join(", ") }
        )
    }
}
