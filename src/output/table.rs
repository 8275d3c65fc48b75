//! kubectl-style tables: columns padded with spaces, no borders, one block per node.

use std::io::{self, Write};

use owo_colors::OwoColorize;

use super::human::{
    compact_countdown, countdown, printable, rfc3339, rfc3339_seconds, short_key, short_time, time_of_day, to_second,
    until,
};
use super::owners;
use super::summary::{self, ClusterCounts, NodeCounts, by_urgency};
use super::view::{ColorMode, SortBy, View, cut};
use super::wire::{basis_name, verdict_name};
use crate::engine::lifecycle::{ConditionTaint, HeldReason, Ready, ZoneForecast, ZoneState};
use crate::engine::model::{NodeName, PodKey};
use crate::engine::plan::{Basis, NodeLifecycle, NodePlan, Plan, PodPlan, Verdict, rate_zero_ties};
use crate::engine::time::Timestamp;

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

/// How a table's rows are laid out: each column's width, `gap` spaces apart, lines cut at `limit`.
struct Layout<'w> {
    widths: &'w [usize],
    gap: usize,
    limit: Option<usize>,
    color: ColorMode,
}

impl Layout<'_> {
    /// Writes one row, its columns aligned; widths are measured on the plain text, colour is added
    /// after. A line longer than the limit is cut there: a cell that does not fit ends in `…`, and
    /// so does a line whose next columns start past the limit.
    fn write(&self, row: &[Cell], out: &mut impl Write) -> io::Result<()> {
        let limit = self.limit.unwrap_or(usize::MAX);
        let mut line = String::new();
        // The column the next cell starts at.
        let mut at = 0;
        for (c, cell) in row.iter().enumerate() {
            let last = c + 1 == row.len();
            let length = cell.text.chars().count();
            let room = limit.saturating_sub(at);
            let text = if length > room {
                let mut text: String = cell.text.chars().take(room.saturating_sub(1)).collect();
                text.push('…');
                std::borrow::Cow::Owned(text)
            } else {
                std::borrow::Cow::Borrowed(cell.text.as_str())
            };
            let shown = text.chars().count();
            let text = match (self.color, cell.tone) {
                (ColorMode::Plain, _) | (_, Tone::Plain) => text.into_owned(),
                (ColorMode::Color, Tone::Bad) => text.red().bold().to_string(),
                (ColorMode::Color, Tone::Warn) => text.yellow().to_string(),
                (ColorMode::Color, Tone::Good) => text.green().to_string(),
                (ColorMode::Color, Tone::Dim) => text.dimmed().to_string(),
            };
            line.push_str(&text);
            if last || length > room {
                break;
            }
            let next = at + self.widths[c] + self.gap;
            if next >= limit {
                // The next columns would start past the limit: say that they are hidden.
                if at + shown < limit {
                    line.extend(std::iter::repeat_n(' ', limit - 1 - (at + shown)));
                    line.push('…');
                }
                break;
            }
            line.extend(std::iter::repeat_n(' ', next - at - shown));
            at = next;
        }
        writeln!(out, "{}", line.trim_end())
    }
}

/// Why: the deciding taint or toleration.
fn reason(pod: &PodPlan, predicted: Option<&str>, removing: Option<&str>) -> String {
    if let (Some(Basis::PredictedTaint), Some(taint)) = (pod.basis, predicted) {
        return match (pod.verdict, pod.toleration_seconds) {
            (Verdict::Never, _) => format!("tolerates the expected {taint} taint forever"),
            (_, Some(seconds)) => format!("tolerationSeconds={seconds} after the expected {taint} taint"),
            (_, None) => format!("untolerated: the expected {taint} taint"),
        };
    }
    if pod.basis == Some(Basis::DeviceTaint)
        && let Some(device) = pod.devices().iter().filter(|d| d.deadline.is_some()).min_by_key(|d| d.deadline)
    {
        let what = format!("device {} taint {}", device.device, device.taint);
        return match pod.toleration_seconds {
            Some(seconds) => format!("tolerationSeconds={seconds} for {what}"),
            None => format!("untolerated {what}"),
        };
    }
    match pod.verdict {
        Verdict::Never if pod.untolerated.is_empty() && !pod.devices().is_empty() && pod.basis.is_none() => {
            "device taints tolerated forever".to_owned()
        }
        Verdict::EvictNow if pod.untolerated.is_empty() => "untolerated when observed (taint since removed)".to_owned(),
        Verdict::EvictNow => {
            let taints: Vec<String> = pod.untolerated.iter().map(ToString::to_string).collect();
            format!("untolerated {}", taints.join(","))
        }
        Verdict::EvictAt
            if let Some(edited) = &pod.tolerations_edited
                && let (true, Some(owner)) = (edited.deadline.known(), &edited.owner) =>
        {
            format!(
                "tolerationSeconds={} from {}/{}'s template: the countdown keeps it (edited {} by {})",
                pod.toleration_seconds.unwrap_or_default(),
                owner.kind(),
                owner.name(),
                super::human::time_of_day(edited.written.at, false),
                edited.written.manager
            )
        }
        Verdict::EvictAt if let Some(edited) = &pod.tolerations_edited => format!(
            "tolerationSeconds={} now, edited {} by {}: the countdown keeps the value of before (deadline unknown)",
            pod.toleration_seconds.unwrap_or_default(),
            super::human::time_of_day(edited.written.at, false),
            edited.written.manager
        ),
        Verdict::EvictAt => format!("tolerationSeconds={}", pod.toleration_seconds.unwrap_or_default()),
        Verdict::Never => "tolerated forever".to_owned(),
        Verdict::Unaffected if let Some(why) = removing => format!("the controller removes the taint ({why})"),
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

/// A predicted window: `2026-11-23T10:00:06Z–10:00:16` (`–?` when it may never close).
fn window(earliest: Timestamp, latest: Option<Timestamp>) -> String {
    let start = rfc3339_seconds(earliest);
    match latest {
        Some(latest) => format!("{start}–{}", until(earliest, latest)),
        None => format!("{start}–?"),
    }
}

/// The line under a node's heading that says what the node lifecycle controller is expected to do:
/// `None` for a healthy node it leaves alone.
fn lifecycle_line(
    lifecycle: &NodeLifecycle,
    zones: &[ZoneForecast],
    ties: &[Vec<NodeName>],
    now: Timestamp,
) -> Option<String> {
    let forecast = &lifecycle.forecast;
    // The time of day on `now`'s day; the date too on another (a window tomorrow, an absurd grace).
    let when = |at: Timestamp| short_time(to_second(at, false), now);
    let mut parts = Vec::new();
    let ready = forecast.ready.map_or("never posted", Ready::as_str);
    if forecast.ready != Some(Ready::True) || forecast.taint.is_some() || forecast.held.is_some() {
        let mut health = format!("Ready={ready}");
        if let Some(since) = lifecycle.ready_since {
            health.push_str(&format!(" since {}", when(since)));
        }
        let heartbeat = forecast.last_heartbeat.map_or_else(|| "none".to_owned(), when);
        parts.push(format!("{health}, last heartbeat {heartbeat}"));
    }
    if let Some(taint) = forecast.taint {
        let zone = forecast.zone.name();
        // A zone drained at scale says its queue once (docs/node-lifecycle.md, "At scale").
        let queue = match taint.queued_with {
            0 => String::new(),
            _ if taint.drained => ", one of its queue's slots".to_owned(),
            1 => ", 1 other node may be tainted first".to_owned(),
            n => format!(", {n} other nodes may be tainted first"),
        };
        let when = match taint.latest {
            Some(latest) => format!("{}–{}", when(taint.earliest), until(taint.earliest, latest)),
            None => format!("from {} unless its zone holds it back", when(taint.earliest)),
        };
        // A rate-0 zone's one taint goes to one of the nodes queued together (docs/node-lifecycle.md).
        let tie = ties.iter().find(|names| names.contains(&forecast.name)).map_or_else(String::new, |names| {
            let names: Vec<&str> = names.iter().map(NodeName::as_str).collect();
            format!("; rate 0: only one of {} is tainted", names.join(", "))
        });
        parts.push(format!("{} taint expected {when} (zone {zone}{queue}{tie})", short_key(taint.key)));
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
            HeldReason::NoEvictionRate => format!(
                "held: --node-eviction-rate is 0 — zone {}'s queue had one taint to give and gave it",
                held.zone
            ),
            HeldReason::AllZonesDown => "held: every zone is fully disrupted — the controller adds no NoExecute \
                                         taints and removes the ones it added"
                .to_owned(),
            HeldReason::Recovered => {
                "back (Ready=True, heartbeating) — the controller removes its taint at its next pass".to_owned()
            }
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
        "  taint-evict does none of these itself.".to_owned(),
    ]
}

/// `line` in `width` columns: a command too long for them is continued on the next lines with a
/// backslash, as a shell reads it (so it can still be copied whole); other text is cut.
fn fit_command(line: &str, width: Option<usize>) -> Vec<String> {
    let Some(width) = width.filter(|&width| line.chars().count() > width) else { return vec![line.to_owned()] };
    let indent = line.len() - line.trim_start().len();
    if !line.trim_start().starts_with("kubectl ") {
        return vec![cut(line, Some(width)).into_owned()];
    }
    let mut lines = Vec::new();
    let mut current = line[..indent].to_owned();
    for word in line.split_whitespace() {
        let fresh = current.trim().is_empty();
        if !fresh && current.chars().count() + 1 + word.chars().count() + 2 > width {
            lines.push(format!("{current} \\"));
            current = " ".repeat(indent + 4);
        }
        if !current.trim().is_empty() {
            current.push(' ');
        }
        current.push_str(word);
    }
    lines.push(current);
    // A word wider than the terminal: cut, as the last resort every line has.
    lines.into_iter().map(|line| cut(&line, Some(width)).into_owned()).collect()
}

/// [`reason`] in fewer columns: taint keys without their prefix, `tolerates 300s`.
fn short_reason(pod: &PodPlan, predicted: Option<&str>, removing: Option<&str>) -> String {
    if let (Some(Basis::PredictedTaint), Some(taint)) = (pod.basis, predicted) {
        return match (pod.verdict, pod.toleration_seconds) {
            (Verdict::Never, _) => format!("tolerates {taint} forever"),
            (_, Some(seconds)) => format!("{seconds}s after {taint}"),
            (_, None) => format!("untolerated {taint} (expected)"),
        };
    }
    match pod.verdict {
        Verdict::EvictNow if pod.untolerated.is_empty() => "taint since removed".to_owned(),
        Verdict::EvictNow => {
            let keys: Vec<&str> = pod.untolerated.iter().map(|t| t.key.rsplit('/').next().unwrap_or(&t.key)).collect();
            format!("untolerated {}", keys.join(","))
        }
        Verdict::EvictAt if pod.tolerations_edited.as_ref().is_some_and(|edited| edited.deadline.known()) => {
            format!("tolerates {}s (owner's template)", pod.toleration_seconds.unwrap_or_default())
        }
        Verdict::EvictAt if pod.tolerations_edited.is_some() => "tolerations edited: deadline unknown".to_owned(),
        Verdict::EvictAt => format!("tolerates {}s", pod.toleration_seconds.unwrap_or_default()),
        Verdict::Never => "tolerated forever".to_owned(),
        Verdict::Unaffected if removing.is_some() => "taint being removed".to_owned(),
        Verdict::Unaffected => "no NoExecute taint".to_owned(),
    }
}

fn node_heading(node: &NodePlan, now: Option<Timestamp>) -> String {
    if node.taints.is_empty() {
        return format!("Node {}: no NoExecute taints", node.name);
    }
    let at = |at: Timestamp| now.map_or_else(|| rfc3339(at), |now| short_time(at, now));
    let taints: Vec<String> = node
        .taints
        .iter()
        .map(|t| match (t.time_added, &node.taints_written) {
            (Some(added), _) => format!("{t} (added {})", at(added)),
            (None, Some(written)) => format!("{t} (no timeAdded; written {} by {})", at(written.at), written.manager),
            (None, None) if node.pods.iter().any(|p| p.basis == Some(Basis::InputTaken)) => {
                format!("{t} (no timeAdded, so when the dump was taken)")
            }
            (None, None) => format!("{t} (no timeAdded, so now)"),
        })
        .collect();
    format!("Node {}: {}", node.name, taints.join(", "))
}

/// The narrowest a name column (namespace, pod) gets when the table is too wide without the reason:
/// at 50 columns the longest verdict (`terminating`), a deadline and a time left stay whole.
const MIN_NAME: usize = 5;

/// The narrowest a cut `REASON` column gets before it is left out.
const MIN_REASON: usize = 12;

/// How the default table fits a width: the gap between columns, the `IN` form, the `REASON` form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Fit {
    gap: usize,
    compact_in: bool,
    reason: ReasonFit,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ReasonFit {
    Full,
    Short,
    /// The short form cut to fit.
    Cut,
    Dropped,
}

/// The layouts tried, widest first: the reason gives way first (to its short form), then the
/// countdowns' spaces and the gaps; then the reason is cut, and left out last. Namespace, pod,
/// verdict, deadline and countdown always stay.
const FITS: [Fit; 10] = [
    Fit { gap: 3, compact_in: false, reason: ReasonFit::Full },
    Fit { gap: 3, compact_in: false, reason: ReasonFit::Short },
    Fit { gap: 3, compact_in: true, reason: ReasonFit::Short },
    Fit { gap: 2, compact_in: true, reason: ReasonFit::Short },
    Fit { gap: 3, compact_in: false, reason: ReasonFit::Cut },
    Fit { gap: 3, compact_in: true, reason: ReasonFit::Cut },
    Fit { gap: 2, compact_in: true, reason: ReasonFit::Cut },
    Fit { gap: 3, compact_in: false, reason: ReasonFit::Dropped },
    Fit { gap: 3, compact_in: true, reason: ReasonFit::Dropped },
    Fit { gap: 2, compact_in: true, reason: ReasonFit::Dropped },
];

/// One pod's cells in every form the tables use, made [`printable`].
struct PodRow {
    namespace: String,
    name: String,
    terminating: bool,
    verdict: Verdict,
    overdue: bool,
    deadline: String,
    deadline_full: String,
    countdown: String,
    compact_countdown: String,
    reason: String,
    short_reason: String,
    since: String,
    basis: &'static str,
    toleration: String,
    uid: String,
}

impl PodRow {
    fn new(pod: &PodPlan, now: Timestamp, predicted: Option<&str>, removing: Option<&str>) -> Self {
        let deadline = |full: bool| match (pod.basis, pod.evict_at) {
            (Some(basis), Some(at)) if full && basis.windowed() => window(at, pod.evict_at_latest),
            (Some(basis), Some(at)) if basis.windowed() => {
                let earliest = short_time(to_second(at, false), now);
                match pod.evict_at_latest {
                    Some(latest) => format!("{earliest}–{}", until(at, latest)),
                    None => format!("{earliest}–?"),
                }
            }
            (_, Some(at)) if full => rfc3339(at),
            (_, Some(at)) => short_time(at, now),
            (_, None) => "-".to_owned(),
        };
        let text = |text: String| printable(&text).into_owned();
        Self {
            namespace: text(pod.key().namespace().to_owned()),
            name: text(pod.key().name().to_owned()),
            terminating: pod.terminating(),
            verdict: pod.verdict,
            overdue: pod.overdue,
            deadline: deadline(false),
            deadline_full: deadline(true),
            countdown: countdown(pod.evict_at, now),
            compact_countdown: compact_countdown(pod.evict_at, now),
            reason: text(reason(pod, predicted, removing)),
            short_reason: text(short_reason(pod, predicted, removing)),
            since: pod.since.map_or_else(|| "-".to_owned(), rfc3339),
            basis: pod.basis.map_or("-", basis_name),
            toleration: pod.toleration_seconds.map_or_else(|| "-".to_owned(), |s| format!("{s}s")),
            uid: text(pod.uid().to_string()),
        }
    }

    /// The verdict column: `terminating` for a pod being deleted already, whatever the controller
    /// decides of it (its decision is the reason's, and the JSON document's `verdict`).
    fn verdict_text(&self) -> &'static str {
        if self.terminating { "terminating" } else { verdict_name(self.verdict) }
    }

    fn verdict_cell(&self) -> Cell {
        let tone = if self.terminating { Tone::Dim } else { verdict_tone(self.verdict) };
        Cell { text: self.verdict_text().to_owned(), tone }
    }

    fn countdown_cell(&self, compact: bool) -> Cell {
        let text = if compact { &self.compact_countdown } else { &self.countdown };
        Cell { text: text.clone(), tone: if self.overdue { Tone::Bad } else { Tone::Plain } }
    }

    /// The reason of the default table (the verdict says `terminating`, and the wide table after
    /// the name too).
    fn reason(&self, short: bool) -> String {
        if short { self.short_reason.clone() } else { self.reason.clone() }
    }

    /// The name in the `-o wide` row, which says `terminating` after it.
    fn wide_name(&self) -> String {
        if self.terminating { format!("{} (terminating)", self.name) } else { self.name.clone() }
    }

    /// The `-o wide` row: every value in full.
    fn wide(&self) -> Vec<Cell> {
        vec![
            Cell::plain(self.namespace.clone()),
            Cell::plain(self.wide_name()),
            self.verdict_cell(),
            Cell::plain(self.deadline_full.clone()),
            self.countdown_cell(false),
            Cell::plain(self.reason.clone()),
            Cell::plain(self.since.clone()),
            Cell::plain(self.basis),
            Cell::plain(self.toleration.clone()),
            Cell::plain(self.uid.clone()),
        ]
    }

    /// The default table's row, laid out as `fit` says (`reason_width` for a cut reason).
    fn fitted(&self, fit: Fit, reason_width: usize) -> Vec<Cell> {
        let mut row = vec![
            Cell::plain(self.namespace.clone()),
            Cell::plain(self.name.clone()),
            self.verdict_cell(),
            Cell::plain(self.deadline.clone()),
            self.countdown_cell(fit.compact_in),
        ];
        match fit.reason {
            ReasonFit::Full => row.push(Cell::plain(self.reason(false))),
            ReasonFit::Short => row.push(Cell::plain(self.reason(true))),
            ReasonFit::Cut => row.push(Cell::plain(cut(&self.reason(true), Some(reason_width)).into_owned())),
            ReasonFit::Dropped => {}
        }
        row
    }
}

const HEADER: [&str; 6] = ["NAMESPACE", "POD", "VERDICT", "DEADLINE", "IN", "REASON"];
const WIDE_HEADER: [&str; 10] =
    ["NAMESPACE", "POD", "VERDICT", "DEADLINE", "IN", "REASON", "SINCE", "BASIS", "TOLERATION", "UID"];

/// The widest text of each column of a table, in every form a row has: measured on every row
/// before any is written, so that no row is kept (a node may have 300,000 pods).
#[derive(Default)]
struct Widths {
    namespace: usize,
    name: usize,
    wide_name: usize,
    verdict: usize,
    deadline: usize,
    deadline_full: usize,
    countdown: usize,
    compact_countdown: usize,
    reason: usize,
    short_reason: usize,
    wide_reason: usize,
    since: usize,
    basis: usize,
    toleration: usize,
    uid: usize,
}

impl Widths {
    fn of(rows: impl Iterator<Item = PodRow>) -> Self {
        let count = |text: &str| text.chars().count();
        rows.fold(Self::default(), |w, row| Self {
            namespace: w.namespace.max(count(&row.namespace)),
            name: w.name.max(count(&row.name)),
            wide_name: w.wide_name.max(count(&row.wide_name())),
            verdict: w.verdict.max(count(row.verdict_text())),
            deadline: w.deadline.max(count(&row.deadline)),
            deadline_full: w.deadline_full.max(count(&row.deadline_full)),
            countdown: w.countdown.max(count(&row.countdown)),
            compact_countdown: w.compact_countdown.max(count(&row.compact_countdown)),
            reason: w.reason.max(count(&row.reason(false))),
            short_reason: w.short_reason.max(count(&row.reason(true))),
            wide_reason: w.wide_reason.max(count(&row.reason)),
            since: w.since.max(count(&row.since)),
            basis: w.basis.max(count(row.basis)),
            toleration: w.toleration.max(count(&row.toleration)),
            uid: w.uid.max(count(&row.uid)),
        })
    }
}

/// `widths` widened to their headers' (when the table has them).
fn with_headers<const N: usize>(mut widths: [usize; N], headers: Option<[&str; N]>) -> [usize; N] {
    for (width, header) in widths.iter_mut().zip(headers.iter().flatten()) {
        *width = (*width).max(header.chars().count());
    }
    widths
}

/// The first layout of [`FITS`] that fits `width` (the last one when none does), and the width of a
/// cut reason.
fn choose_fit(widths: &Widths, width: Option<usize>, headers: bool) -> (Fit, usize) {
    let Some(width) = width else { return (FITS[0], 0) };
    let w = widths;
    let [namespace, name, verdict, deadline, long_in, short_in, reason, short_reason] = with_headers(
        [w.namespace, w.name, w.verdict, w.deadline, w.countdown, w.compact_countdown, w.reason, w.short_reason],
        headers.then_some(["NAMESPACE", "POD", "VERDICT", "DEADLINE", "IN", "IN", "REASON", "REASON"]),
    );
    for fit in FITS {
        let fixed =
            namespace + name + verdict + deadline + if fit.compact_in { short_in } else { long_in } + 4 * fit.gap;
        let room = width.saturating_sub(fixed + fit.gap);
        let fits = match fit.reason {
            ReasonFit::Full => reason <= room && fixed < width,
            ReasonFit::Short => short_reason <= room && fixed < width,
            ReasonFit::Cut => room >= MIN_REASON && fixed < width,
            ReasonFit::Dropped => fixed <= width,
        };
        if fits {
            return (fit, room);
        }
    }
    (FITS[FITS.len() - 1], 0)
}

/// What a node's reasons need to know: the expected taint's short key, and why the controller
/// removes the node's taints, when it does.
fn node_context(node: &NodePlan) -> (Option<ConditionTaint>, Option<&'static str>) {
    let held = node.lifecycle.as_ref().and_then(|l| l.forecast.held.as_ref()).filter(|_| !node.taints.is_empty());
    let removing = match held.map(|held| held.reason) {
        Some(HeldReason::AllZonesDown) => Some("every zone down"),
        Some(HeldReason::Recovered) => Some("the node is back"),
        _ => None,
    };
    (node.lifecycle.as_ref().and_then(|l| l.forecast.taint).map(|taint| taint.key), removing)
}

/// A pod to write as a row, with its node's context (see [`node_context`]).
type Listed<'a> = (&'a PodPlan<'a>, Option<ConditionTaint>, Option<&'static str>);

/// Writes `pods` as a table: every value in full when `wide`, else fitted to `view.width`. Each
/// row is made twice, to measure the columns and to write it, and never kept.
fn write_table(pods: &[Listed<'_>], now: Timestamp, wide: bool, view: &View, out: &mut impl Write) -> io::Result<()> {
    let row = |&(pod, predicted, removing): &Listed<'_>| PodRow::new(pod, now, predicted.map(short_key), removing);
    let w = Widths::of(pods.iter().map(row));
    let headers = view.headers;
    if wide {
        let widths = with_headers(
            [
                w.namespace,
                w.wide_name,
                w.verdict,
                w.deadline_full,
                w.countdown,
                w.wide_reason,
                w.since,
                w.basis,
                w.toleration,
                w.uid,
            ],
            headers.then_some(WIDE_HEADER),
        );
        let layout = Layout { widths: &widths, gap: 3, limit: None, color: view.color };
        if headers {
            layout.write(&WIDE_HEADER.map(Cell::plain), out)?;
        }
        return pods.iter().try_for_each(|pod| layout.write(&row(pod).wide(), out));
    }
    let (fit, reason_width) = choose_fit(&w, view.width, headers);
    let countdown = if fit.compact_in { w.compact_countdown } else { w.countdown };
    let reason = match fit.reason {
        ReasonFit::Full => w.reason,
        ReasonFit::Short => w.short_reason,
        ReasonFit::Cut => w.short_reason.min(reason_width),
        ReasonFit::Dropped => 0,
    };
    let mut widths =
        with_headers([w.namespace, w.name, w.verdict, w.deadline, countdown, reason], headers.then_some(HEADER));
    // Still too wide without the reason: the names give way (cut with `…`), the namespace first, so
    // that the verdict, the deadline and the time left stay whole.
    if let Some(width) = view.width {
        let needed = widths[..5].iter().sum::<usize>() + 4 * fit.gap;
        let mut over = needed.saturating_sub(width);
        for (column, narrowest) in [(0, MIN_NAME), (1, MIN_NAME)] {
            let given = over.min(widths[column].saturating_sub(narrowest));
            widths[column] -= given;
            over -= given;
        }
    }
    let fitted = |mut cells: Vec<Cell>| {
        for (cell, &width) in cells.iter_mut().zip(&widths).take(2) {
            if cell.text.chars().count() > width {
                cell.text = cut(&cell.text, Some(width)).into_owned();
            }
        }
        cells
    };
    let layout = Layout { widths: &widths, gap: fit.gap, limit: view.width, color: view.color };
    if headers {
        let columns = if fit.reason == ReasonFit::Dropped { 5 } else { 6 };
        layout.write(&fitted(HEADER[..columns].iter().map(|h| Cell::plain(*h)).collect::<Vec<_>>()), out)?;
    }
    pods.iter().try_for_each(|pod| layout.write(&fitted(row(pod).fitted(fit, reason_width)), out))
}

/// Writes the plan as one table per node (with the default view of a pipe).
pub fn render(plan: &Plan, wide: bool, color: ColorMode, out: &mut impl Write) -> io::Result<()> {
    render_view(plan, wide, &View { color, ..View::plain() }, out)
}

/// Writes the plan as one table per node, most urgent first, each under its heading and summary
/// line, after a line for the whole plan when it has several nodes. `--summary` writes only the
/// lines; `--no-headers` only the pods, as one table.
pub fn render_view(plan: &Plan, wide: bool, view: &View, out: &mut impl Write) -> io::Result<()> {
    if plan.nodes.is_empty() {
        return writeln!(out, "No node has a NoExecute taint.");
    }
    if view.headers {
        owners::write_down_line(plan, view, out)?;
    }
    if view.summary {
        summary::render(plan, view, out)?;
        return owners::write_roll_up(plan, view, out);
    }
    let counts: Vec<NodeCounts> = plan.nodes.iter().map(|node| NodeCounts::of(node, plan.now)).collect();
    let order = by_urgency(plan, &counts);
    if !view.headers {
        let mut pods: Vec<Listed<'_>> = Vec::new();
        for &i in &order {
            let node = &plan.nodes[i];
            let (predicted, removing) = node_context(node);
            pods.extend(node.pods.iter().map(|pod| (pod, predicted, removing)));
        }
        pods.sort_by(|a, b| sorted_key(a.0, view.sort).cmp(&sorted_key(b.0, view.sort)));
        return write_table(&pods, plan.now, wide, view, out);
    }
    let width = if wide { None } else { view.width };
    if plan.nodes.len() > 1 {
        writeln!(out, "{}", cut(&ClusterCounts::of(plan).line(), width))?;
    }
    let zones = plan.zones.as_deref().unwrap_or_default();
    let ties = rate_zero_ties(plan);
    for (n, &i) in order.iter().enumerate() {
        let node = &plan.nodes[i];
        if n > 0 || plan.nodes.len() > 1 {
            writeln!(out)?;
        }
        let heading = node_heading(node, (!wide).then_some(plan.now));
        writeln!(out, "{}", cut(&printable(&heading), width))?;
        if let Some(line) =
            node.lifecycle.as_ref().and_then(|lifecycle| lifecycle_line(lifecycle, zones, &ties, plan.now))
        {
            let line = printable(&line);
            match width {
                // Too long for the terminal: one line per part, each cut if it must be.
                Some(width) if line.chars().count() > width => {
                    for part in line.split("; ") {
                        writeln!(out, "{}", cut(part, Some(width)))?;
                    }
                }
                _ => writeln!(out, "{line}")?,
            }
        }
        if node.pods.is_empty() {
            writeln!(out, "No pods.")?;
            continue;
        }
        writeln!(out, "{}", cut(&counts[i].line(plan.now, width), width))?;
        let (predicted, removing) = node_context(node);
        let mut pods: Vec<Listed<'_>> = node.pods.iter().map(|pod| (pod, predicted, removing)).collect();
        // A node's pods are in deadline order already (the replay's order).
        if view.sort == SortBy::Deadline {
            debug_assert!(pods.is_sorted_by_key(|pod| sorted_key(pod.0, SortBy::Deadline)));
        } else {
            pods.sort_by(|a, b| sorted_key(a.0, view.sort).cmp(&sorted_key(b.0, view.sort)));
        }
        write_table(&pods, plan.now, wide, view, out)?;
        let stuck: Vec<(&PodKey, Timestamp)> =
            node.pods.iter().filter_map(|pod| Some((pod.key(), pod.stuck_since()?))).collect();
        for line in stuck_lines(node.name.as_str(), &stuck) {
            for piece in fit_command(&printable(&line), width) {
                writeln!(out, "{piece}")?;
            }
        }
    }
    owners::write_roll_up(plan, view, out)
}

/// The sort key of `pod` under `sort`, for sorting pods of several nodes together.
fn sorted_key<'a>(pod: &PodPlan<'a>, sort: SortBy) -> (bool, Option<Timestamp>, &'a str, &'a str) {
    match sort {
        SortBy::Deadline => (pod.evict_at.is_none(), pod.evict_at, pod.key().namespace(), pod.key().name()),
        SortBy::Namespace => (false, None, pod.key().namespace(), pod.key().name()),
        SortBy::Name => (false, None, pod.key().name(), pod.key().namespace()),
    }
}

/// `-o name`: `pod/NAME` for every pod, one per line, in `sort` order.
pub fn render_names(plan: &Plan, sort: SortBy, out: &mut impl Write) -> io::Result<()> {
    let mut pods: Vec<&PodPlan> = plan.nodes.iter().flat_map(|node| &node.pods).collect();
    pods.sort_by(|a, b| sorted_key(a, sort).cmp(&sorted_key(b, sort)));
    for pod in pods {
        // As kubectl: `pod/NAME`, which `kubectl delete -n NS` and `explain -n NS` take back.
        writeln!(out, "pod/{}", printable(pod.key().name()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::lifecycle::{Basis as LifecycleBasis, NodeForecast, PredictedTaint, ZoneKey};

    #[test]
    fn a_taint_expected_on_another_day_says_its_date() {
        let now = Timestamp::from_unix_seconds(1_795_391_990); // 2026-11-22T23:59:50Z
        let line = |earliest: i64, latest: i64| {
            let forecast = NodeForecast {
                name: "n1".into(),
                zone: ZoneKey::new("r", "z"),
                ready: Some(Ready::True),
                last_heartbeat: Some(now),
                taint: Some(PredictedTaint {
                    key: ConditionTaint::Unreachable,
                    earliest: Timestamp::from_unix_seconds(earliest),
                    latest: Some(Timestamp::from_unix_seconds(latest)),
                    basis: LifecycleBasis::LostHeartbeat,
                    queued_with: 0,
                    drained: false,
                }),
                held: None,
            };
            let lifecycle = NodeLifecycle { forecast, ready_since: None };
            lifecycle_line(&lifecycle, &[], &[], now).expect("a line")
        };
        assert!(line(1_795_391_995, 1_795_391_998).contains("expected 23:59:55–23:59:58"));
        // Tomorrow: the date, not a bare time of day.
        let tomorrow = line(1_795_392_040, 1_795_392_050);
        assert!(tomorrow.contains("expected 2026-11-23T00:00:40Z–00:00:50"), "{tomorrow}");
    }

    #[test]
    fn an_edited_pods_reason_names_the_template_that_gave_its_deadline_or_says_it_is_unknown() {
        use crate::engine::model::{Pod, PodKey};
        use crate::engine::plan::{EditedDeadline, TolerationsEdited};
        use crate::engine::snapshot::{Owner, SnapshotPod, TaintsWritten};
        let pod =
            Pod { key: PodKey::new("default", "web-1"), uid: "u".into(), node: None, tolerations: Vec::new().into() };
        let snapshot = SnapshotPod::running(pod, None);
        let edited = |deadline| PodPlan {
            pod: &snapshot,
            verdict: Verdict::EvictAt,
            evict_at: Some(Timestamp::from_unix_seconds(1_795_391_712)),
            evict_at_latest: None,
            since: Some(Timestamp::from_unix_seconds(1_795_391_700)),
            basis: Some(Basis::TaintWritten),
            toleration_seconds: Some(12),
            untolerated: Vec::new().into(),
            overdue: false,
            stuck: false,
            tolerations_edited: Some(Box::new(TolerationsEdited {
                written: TaintsWritten {
                    at: Timestamp::from_unix_seconds(1_795_391_701),
                    manager: "kubectl-patch".into(),
                },
                owner: Some(Owner::new("ReplicaSet", "web", "rs")),
                deadline,
            })),
            devices: None,
        };
        let known = edited(EditedDeadline::OwnerTemplate);
        assert_eq!(
            reason(&known, None, None),
            "tolerationSeconds=12 from ReplicaSet/web's template: the countdown keeps it (edited 23:55:01 by kubectl-patch)"
        );
        assert_eq!(short_reason(&known, None, None), "tolerates 12s (owner's template)");
        let unknown = edited(EditedDeadline::TemplateDiffers);
        assert!(reason(&unknown, None, None).ends_with("(deadline unknown)"), "{}", reason(&unknown, None, None));
        assert_eq!(short_reason(&unknown, None, None), "tolerations edited: deadline unknown");
    }
}
