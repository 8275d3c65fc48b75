//! kubectl-style tables: columns padded with spaces, no borders, one block per node.

use std::io::{self, Write};

use owo_colors::OwoColorize;

use super::ColorMode;
use super::human::{countdown, printable, rfc3339, rfc3339_seconds};
use super::json::{basis_name, verdict_name};
use crate::engine::lifecycle::{ConditionTaint, HeldReason, Ready, ZoneForecast, ZoneState};
use crate::engine::model::PodKey;
use crate::engine::replay::{Basis, NodeLifecycle, NodePlan, Plan, PodPlan, Verdict};
use crate::engine::time::{NANOS_PER_SECOND, Timestamp};

/// How a cell is coloured.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Tone {
    Plain,
    Bad,
    Warn,
    Good,
    Dim,
}

struct Cell {
    text: String,
    tone: Tone,
}

impl Cell {
    fn plain(text: impl Into<String>) -> Self {
        Self { text: text.into(), tone: Tone::Plain }
    }
}

/// Rows with every cell made [`printable`], before widths are measured.
fn printable_rows(rows: Vec<Vec<Cell>>) -> Vec<Vec<Cell>> {
    let cell = |cell: Cell| match printable(&cell.text) {
        std::borrow::Cow::Borrowed(_) => cell,
        std::borrow::Cow::Owned(text) => Cell { text, tone: cell.tone },
    };
    rows.into_iter().map(|row| row.into_iter().map(cell).collect()).collect()
}

/// Writes rows as aligned columns; widths are measured on the plain text, colour is added after.
fn write_rows(rows: &[Vec<Cell>], color: ColorMode, out: &mut impl Write) -> io::Result<()> {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| rows.iter().filter_map(|r| r.get(c)).map(|cell| cell.text.chars().count()).max().unwrap_or(0))
        .collect();
    for row in rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            let last = c + 1 == row.len();
            let text = match (color, cell.tone) {
                (ColorMode::Plain, _) | (_, Tone::Plain) => cell.text.clone(),
                (ColorMode::Color, Tone::Bad) => cell.text.red().bold().to_string(),
                (ColorMode::Color, Tone::Warn) => cell.text.yellow().to_string(),
                (ColorMode::Color, Tone::Good) => cell.text.green().to_string(),
                (ColorMode::Color, Tone::Dim) => cell.text.dimmed().to_string(),
            };
            line.push_str(&text);
            if !last {
                let pad = widths[c] - cell.text.chars().count() + 3;
                line.extend(std::iter::repeat_n(' ', pad));
            }
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

/// Why: the deciding taint or toleration.
fn reason(pod: &PodPlan, predicted: Option<&str>, removing: bool) -> String {
    if let (Some(Basis::PredictedTaint), Some(taint)) = (pod.basis, predicted) {
        return match (pod.verdict, pod.toleration_seconds) {
            (Verdict::Never, _) => format!("tolerates the expected {taint} taint forever"),
            (_, Some(seconds)) => format!("tolerationSeconds={seconds} after the expected {taint} taint"),
            (_, None) => format!("untolerated: the expected {taint} taint"),
        };
    }
    match pod.verdict {
        Verdict::EvictNow if pod.untolerated.is_empty() => "untolerated when observed (taint since removed)".to_owned(),
        Verdict::EvictNow => {
            let taints: Vec<String> = pod.untolerated.iter().map(ToString::to_string).collect();
            format!("untolerated {}", taints.join(","))
        }
        Verdict::EvictAt => format!("tolerationSeconds={}", pod.toleration_seconds.unwrap_or_default()),
        Verdict::Never => "tolerated forever".to_owned(),
        Verdict::Unaffected if removing => "the controller removes the taint (every zone down)".to_owned(),
        Verdict::Unaffected => "no NoExecute taint".to_owned(),
    }
}

fn verdict_tone(verdict: Verdict) -> Tone {
    match verdict {
        Verdict::EvictNow => Tone::Bad,
        Verdict::EvictAt => Tone::Warn,
        Verdict::Never => Tone::Good,
        Verdict::Unaffected => Tone::Dim,
    }
}

/// The time of day of `at` (UTC), to the second: rounded up when `up`, else down.
pub(super) fn time_of_day(at: Timestamp, up: bool) -> String {
    let second = i128::from(NANOS_PER_SECOND);
    let nanos = at.as_nanos();
    let rest = nanos.rem_euclid(second);
    let whole = if up && rest != 0 { nanos - rest + second } else { nanos - rest };
    let text = rfc3339(Timestamp::from_nanos(whole));
    text.split_once('T').map_or_else(|| text.clone(), |(_, time)| time.trim_end_matches('Z').to_owned())
}

/// A predicted window: `2026-11-23T10:00:06Z–10:00:16` (`–?` when it may never close).
fn window(earliest: Timestamp, latest: Option<Timestamp>) -> String {
    let start = rfc3339_seconds(earliest);
    match latest {
        Some(latest) => format!("{start}–{}", time_of_day(latest, true)),
        None => format!("{start}–?"),
    }
}

/// The short name of a condition taint (`unreachable`, `not-ready`).
pub(super) fn short_key(key: ConditionTaint) -> &'static str {
    key.key().rsplit('/').next().unwrap_or_default()
}

/// The line under a node's heading that says what the node lifecycle controller is expected to do:
/// `None` for a healthy node it leaves alone.
fn lifecycle_line(lifecycle: &NodeLifecycle, zones: &[ZoneForecast]) -> Option<String> {
    let forecast = &lifecycle.forecast;
    let mut parts = Vec::new();
    let ready = forecast.ready.map_or("never posted", Ready::as_str);
    if forecast.ready != Some(Ready::True) || forecast.taint.is_some() || forecast.held.is_some() {
        let mut health = format!("Ready={ready}");
        if let Some(since) = lifecycle.ready_since {
            health.push_str(&format!(" since {}", time_of_day(since, false)));
        }
        let heartbeat = forecast.last_heartbeat.map_or_else(|| "none".to_owned(), |at| time_of_day(at, false));
        parts.push(format!("{health}, last heartbeat {heartbeat}"));
    }
    if let Some(taint) = forecast.taint {
        let zone = forecast.zone.name();
        let queue = match taint.queued_with {
            0 => String::new(),
            1 => ", 1 other node may be tainted first".to_owned(),
            n => format!(", {n} other nodes may be tainted first"),
        };
        let when = match taint.latest {
            Some(latest) => format!("{}–{}", time_of_day(taint.earliest, false), time_of_day(latest, true)),
            None => format!("from {} unless its zone holds it back", time_of_day(taint.earliest, false)),
        };
        parts.push(format!("{} taint expected {when} (zone {zone}{queue})", short_key(taint.key)));
    }
    if let Some(held) = &forecast.held {
        parts.push(match held.reason {
            HeldReason::PartialDisruption => {
                // The zone's counts now; before the controller marks its silent nodes it still
                // looks healthy.
                let state = match zones.iter().find(|z| z.zone == held.zone) {
                    Some(z) if z.state == ZoneState::PartialDisruption => {
                        format!("partially disrupted ({}/{} not ready)", z.not_ready, z.nodes)
                    }
                    _ => "about to be partially disrupted".to_owned(),
                };
                format!("held: zone {} {state} — the controller adds no NoExecute taints here", held.zone)
            }
            HeldReason::AllZonesDown => "held: every zone is fully disrupted — the controller adds no NoExecute \
                                         taints and removes the ones it added"
                .to_owned(),
        });
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// The lines under a node's table about its pods stuck terminating: which, since when, and what
/// unblocks them (none of which this tool does). Empty when none is stuck.
pub(super) fn stuck_lines(node: &str, stuck: &[(&PodKey, Timestamp)]) -> Vec<String> {
    let Some(first) = stuck.iter().map(|(_, since)| *since).min() else { return Vec::new() };
    let names: Vec<String> = stuck.iter().map(|(key, _)| key.to_string()).collect();
    let force = match stuck {
        [(key, _)] => format!("kubectl delete pod -n {} {} --force --grace-period=0", key.namespace(), key.name()),
        _ => "kubectl delete pod -n NAMESPACE POD --force --grace-period=0".to_owned(),
    };
    vec![
        format!("Stuck terminating since {} (kubelet gone): {}", time_of_day(first, false), names.join(", ")),
        "  Only these finish the deletion: the node coming back;".to_owned(),
        format!("  kubectl taint nodes {node} node.kubernetes.io/out-of-service=nodeshutdown:NoExecute"),
        "  (non-graceful node shutdown: only if the node is really down); or".to_owned(),
        format!("  {force}"),
        "  taint-evict does neither itself.".to_owned(),
    ]
}

fn node_heading(node: &NodePlan) -> String {
    if node.taints.is_empty() {
        return format!("Node {}: no NoExecute taints", node.name);
    }
    let taints: Vec<String> = node
        .taints
        .iter()
        .map(|t| match t.time_added {
            Some(at) => format!("{t} (added {})", rfc3339(at)),
            None => format!("{t} (no timeAdded)"),
        })
        .collect();
    format!("Node {}: {}", node.name, taints.join(", "))
}

/// Writes the plan as one table per node.
pub fn render(plan: &Plan, wide: bool, color: ColorMode, out: &mut impl Write) -> io::Result<()> {
    if plan.nodes.is_empty() {
        return writeln!(out, "No node has a NoExecute taint.");
    }
    for (i, node) in plan.nodes.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        writeln!(out, "{}", printable(&node_heading(node)))?;
        let zones = plan.zones.as_deref().unwrap_or_default();
        if let Some(line) = node.lifecycle.as_ref().and_then(|lifecycle| lifecycle_line(lifecycle, zones)) {
            writeln!(out, "{}", printable(&line))?;
        }
        let removing = !node.taints.is_empty()
            && node
                .lifecycle
                .as_ref()
                .and_then(|l| l.forecast.held.as_ref())
                .is_some_and(|held| held.reason == HeldReason::AllZonesDown);
        let predicted = node.lifecycle.as_ref().and_then(|l| l.forecast.taint).map(|taint| short_key(taint.key));
        if node.pods.is_empty() {
            writeln!(out, "No pods.")?;
            continue;
        }
        let mut header = vec!["NAMESPACE", "POD", "VERDICT", "DEADLINE", "IN", "REASON"];
        if wide {
            header.extend(["SINCE", "BASIS", "TOLERATION", "UID"]);
        }
        let mut rows = vec![header.into_iter().map(Cell::plain).collect::<Vec<_>>()];
        for pod in &node.pods {
            let name =
                if pod.terminating { format!("{} (terminating)", pod.key.name()) } else { pod.key.name().to_owned() };
            let mut row = vec![
                Cell::plain(pod.key.namespace()),
                Cell::plain(name),
                Cell { text: verdict_name(pod.verdict).to_owned(), tone: verdict_tone(pod.verdict) },
                Cell::plain(match (pod.basis, pod.evict_at) {
                    (Some(Basis::PredictedTaint), Some(at)) => window(at, pod.evict_at_latest),
                    (_, at) => at.map_or_else(|| "-".to_owned(), rfc3339),
                }),
                Cell {
                    text: countdown(pod.evict_at, plan.now),
                    tone: if pod.overdue { Tone::Bad } else { Tone::Plain },
                },
                Cell::plain(reason(pod, predicted, removing)),
            ];
            if wide {
                row.extend([
                    Cell::plain(pod.since.map_or_else(|| "-".to_owned(), rfc3339)),
                    Cell::plain(pod.basis.map_or("-", basis_name)),
                    Cell::plain(pod.toleration_seconds.map_or_else(|| "-".to_owned(), |s| format!("{s}s"))),
                    Cell::plain(pod.uid.to_string()),
                ]);
            }
            rows.push(row);
        }
        write_rows(&printable_rows(rows), color, out)?;
        let stuck: Vec<(&PodKey, Timestamp)> =
            node.pods.iter().filter_map(|pod| Some((&pod.key, pod.stuck_since?))).collect();
        for line in stuck_lines(node.name.as_str(), &stuck) {
            writeln!(out, "{}", printable(&line))?;
        }
    }
    Ok(())
}
