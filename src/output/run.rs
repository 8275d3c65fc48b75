//! `run`'s output: one line per event, for people or as JSON Lines (`{"time": …, "type": …}`, the
//! lines of `output/lines.rs`), and the status line of the live view.

use std::collections::BTreeMap;
use std::io::{self, Write};

use owo_colors::OwoColorize;

use super::human::{countdown, duration, printable, printable_display as shown, rfc3339, rfc3339_seconds};
use super::lines::{Logged, RunLine, Stamped, write_line};
use super::view::ColorMode;
use crate::engine::lifecycle::NodeForecast;
use crate::engine::model::{NodeName, PodKey};
use crate::engine::queue::{Cause, Work};
use crate::engine::time::Timestamp;
use crate::runtime::report::{HeldBy, LeaderState, LetGo, Report, RunEvent, Summary};

/// Writes the event as one JSON line (its shape: `output/lines.rs`).
pub fn write_json(report: &Report, out: &mut impl Write) -> io::Result<()> {
    write_line(&Stamped::new(report.at, RunLine::of(report)), out)
}

fn cause_text(work: &Work) -> String {
    match work.cause {
        Cause::Untolerated => "untolerated taint".to_owned(),
        Cause::Expired { seconds } => format!("tolerationSeconds={seconds}"),
    }
}

fn paint(text: &str, color: ColorMode, style: fn(&str) -> String) -> String {
    match color {
        ColorMode::Color => style(text),
        ColorMode::Plain => text.to_owned(),
    }
}

/// Writes the event as a line (or, for the summary, a few lines) for people.
pub fn write_text(report: &Report, color: ColorMode, out: &mut impl Write) -> io::Result<()> {
    if let RunEvent::Summary(summary) = &report.event {
        return write_summary(summary, out);
    }
    let (kind, text) = describe(report, color);
    writeln!(out, "{}  {kind:<9} {}", rfc3339_seconds(report.at), printable(&text))
}

/// How much an event matters, as a log level.
#[must_use]
pub fn level(event: &RunEvent) -> &'static str {
    match event {
        RunEvent::Failed { .. }
        | RunEvent::Blocked { .. }
        | RunEvent::Warning { .. }
        | RunEvent::Assumed { .. }
        | RunEvent::Held { .. }
        | RunEvent::Capped { .. }
        | RunEvent::Kept { .. } => "warning",
        RunEvent::Connection { connected: false, .. } => "warning",
        RunEvent::Leadership { state: LeaderState::Lost, .. } => "warning",
        _ => "info",
    }
}

/// Writes the event as one log record (`--log-format`): `TIME LEVEL EVENT text`, or a JSON object
/// with `level` and `msg` added to `run -o json`'s fields.
pub fn write_log(report: &Report, json: bool, out: &mut impl Write) -> io::Result<()> {
    let (kind, text) = describe(report, ColorMode::Plain);
    let level = level(&report.event);
    if json {
        return write_line(&Logged::new(report.at, level, &text, RunLine::of(report)), out);
    }
    let at = report.at.as_nanos();
    let millis = rfc3339(Timestamp::from_nanos(at - at.rem_euclid(1_000_000)));
    writeln!(out, "{millis} {:<7} {kind:<9} {}", level.to_uppercase(), printable(&text))
}

/// The event's one-word kind and its line of text (the summary in one line).
fn describe(report: &Report, color: ColorMode) -> (String, String) {
    match &report.event {
        RunEvent::Started { server, watching, namespace, dry_run, evict } => {
            let mode = match (dry_run, evict) {
                (true, false) => "dry run: deciding and reporting only, nothing is written",
                (true, true) => {
                    "dry run: deciding and reporting only; evictions are sent with dryRun=All, so the API \
                     server checks each against its PodDisruptionBudget and changes nothing"
                }
                (false, false) => "deleting pods when due",
                (false, true) => "evicting pods when due through the Eviction API, respecting PodDisruptionBudgets",
            };
            (
                "started".into(),
                match namespace {
                    Some(namespace) => format!(
                        "watching {watching} and the pods of namespace {namespace} bound to them on {server} ({mode}); \
                         Ctrl-C stops"
                    ),
                    None => {
                        format!("watching {watching} and the pods bound to them on {server} ({mode}); Ctrl-C stops")
                    }
                },
            )
        }
        RunEvent::Synced { nodes, pods, scheduled, terminating, due, restarted_countdowns } => {
            let how =
                if *restarted_countdowns { "countdowns restarted now" } else { "countdowns continued from the replay" };
            // Pods being deleted already first, as on `plan`'s first line: they are not due.
            let terminating = match terminating {
                0 => String::new(),
                n => format!("{n} terminating, "),
            };
            (
                "synced".into(),
                format!(
                    "{}, {}; {terminating}{} due now, {scheduled} scheduled ({how})",
                    plural(*nodes, "node", "nodes"),
                    plural(*pods, "pod", "pods"),
                    plural(*due, "deletion", "deletions")
                ),
            )
        }
        RunEvent::Scheduled { pod, work } => (
            paint("scheduled", color, |t| t.yellow().to_string()),
            format!(
                "{} on {}: deletion at {} ({}), {}",
                pod.key,
                pod.node,
                rfc3339_seconds(work.fire),
                countdown(Some(work.fire), report.at),
                cause_text(work)
            ),
        ),
        RunEvent::Cancelled { pod, work } => (
            paint("cancelled", color, |t| t.green().to_string()),
            format!("{} on {}: deletion at {} cancelled", pod.key, pod.node, rfc3339_seconds(work.fire)),
        ),
        RunEvent::Evicting { pod, work, dry_run } => (
            paint(if *dry_run { "would evict" } else { "evicting" }, color, |t| t.red().to_string()),
            format!("{} on {}: due {} ({})", pod.key, pod.node, rfc3339_seconds(work.fire), cause_text(work)),
        ),
        RunEvent::Deleted { pod, work, dry_run } => {
            let verb = if *dry_run { "would delete" } else { "deleted" };
            let late = report.at.nanos_since(work.fire).max(0).unsigned_abs();
            let late = if late < 1_000_000_000 { format!("{}ms", late / 1_000_000) } else { duration(late) };
            (
                paint(verb, color, |t| t.red().bold().to_string()),
                format!("{} on {} ({late} after its deadline)", pod.key, pod.node),
            )
        }
        RunEvent::Gone { pod, reason } => ("gone".into(), format!("{}: already gone ({reason})", pod.key)),
        RunEvent::Failed { pod, reason, attempt, retry_at } => (
            paint("failed", color, |t| t.red().to_string()),
            format!("{}: attempt {attempt}: {reason}; retrying at {}", pod.key, rfc3339_seconds(*retry_at)),
        ),
        RunEvent::Blocked { pod, budget, message, attempt, retry_at } => (
            paint("blocked", color, |t| t.yellow().to_string()),
            format!(
                "{} on {}: attempt {attempt}: eviction refused by PodDisruptionBudget {budget} ({message}); \
                 retrying at {}",
                pod.key,
                pod.node,
                rfc3339_seconds(*retry_at)
            ),
        ),
        RunEvent::Withdrawn { pod, budget } => (
            "withdrawn".into(),
            format!(
                "{} on {}: no longer due; its eviction, refused by PodDisruptionBudget {budget}, is given up",
                pod.key, pod.node
            ),
        ),
        RunEvent::Held { pod, work, watches, since } => (
            paint("held", color, |t| t.yellow().to_string()),
            format!(
                "{} on {}: due {} ({}), held: the watch of {watches} is interrupted since {}; deleted only if still \
                 due once they are listed again",
                pod.key,
                pod.node,
                rfc3339_seconds(work.fire),
                cause_text(work),
                rfc3339_seconds(*since)
            ),
        ),
        RunEvent::Capped { pod, work, max, window, until } => (
            paint("capped", color, |t| t.yellow().bold().to_string()),
            format!(
                "{} on {}: due {} ({}), held: --max-deletions {max} per {} reached; the next slot frees at {} \
                 (deletions held go in the order they fell due), or restart run with a higher --max-deletions",
                pod.key,
                pod.node,
                rfc3339_seconds(work.fire),
                cause_text(work),
                humantime::format_duration(*window),
                rfc3339_seconds(*until)
            ),
        ),
        RunEvent::Kept { pod, work, owner, only, dry_run } => {
            let (kind, held, deleted) = if *dry_run {
                ("would keep", "would be held", "would be deleted")
            } else {
                ("kept", "held", "deleted")
            };
            let then = if *only {
                // Nothing replaces it while it stays: say so, and how to let it go.
                format!(
                    "its only pod: {} {} makes no replacement while it is kept; {deleted} once another replica is \
                     ready, or delete it yourself",
                    owner.kind(),
                    owner.name()
                )
            } else {
                format!("{deleted} once another replica is ready")
            };
            (
                paint(kind, color, |t| t.yellow().bold().to_string()),
                format!(
                    "{} on {}: due {} ({}), {held}: the last ready replica of {} {} (--keep-last-ready); {then}",
                    pod.key,
                    pod.node,
                    rfc3339_seconds(work.fire),
                    cause_text(work),
                    owner.kind(),
                    owner.name()
                ),
            )
        }
        RunEvent::Unkept { pod, owner, why, dry_run } => {
            let deleting = if *dry_run { "would be deleted now" } else { "deleting it now" };
            let text = match why {
                LetGo::Spare { replica } => {
                    format!("{} {} has another ready replica ({replica}); {deleting}", owner.kind(), owner.name())
                }
                LetGo::NotReady => {
                    format!("no longer a ready replica of {} {}; {deleting}", owner.kind(), owner.name())
                }
                LetGo::NotDue => "no longer due; not deleted".to_owned(),
            };
            ("unkept".into(), format!("{} on {}: {text}", pod.key, pod.node))
        }
        RunEvent::Released { count } => (
            "released".into(),
            format!("the watches are listed again: {count} deletions held go ahead, the engine having decided again"),
        ),
        RunEvent::Dropped { pod } => (
            "dropped".into(),
            format!("{} on {}: no longer due once the watches listed again; not deleted", pod.key, pod.node),
        ),
        RunEvent::Connection { watch, connected: false, reason, .. } => (
            paint("lost", color, |t| t.yellow().bold().to_string()),
            format!(
                "the watch of {watch} lost the API server: {}; reconnecting with backoff, no decision on {watch} \
                 changes until it is back",
                reason.as_deref().unwrap_or("no reason given")
            ),
        ),
        RunEvent::Connection { watch, connected: true, since, .. } => {
            let out_for = duration(report.at.nanos_since(*since).max(0).unsigned_abs());
            (
                "reconnected".into(),
                format!("the watch of {watch} is back (disconnected since {}, {out_for})", rfc3339_seconds(*since)),
            )
        }
        RunEvent::Foreseen(forecast) => ("foreseen".into(), super::lifecycle::line(forecast)),
        RunEvent::Drain { zone, drain } => ("drain".into(), super::lifecycle::drain_text(zone, drain)),
        RunEvent::Warning { message } | RunEvent::Assumed { message } => {
            (paint("warning", color, |t| t.yellow().bold().to_string()), message.clone())
        }
        RunEvent::Leadership { state, lease, identity, holder, reason } => {
            let text = match (state, holder, reason) {
                (LeaderState::Leading, _, _) => {
                    format!("{identity} holds lease {lease}: deciding and deleting from now on")
                }
                (LeaderState::Following, Some(holder), _) => {
                    format!("lease {lease} is held by {holder}: watching, deleting nothing")
                }
                (LeaderState::Following, None, _) => format!("lease {lease} is held by another instance"),
                (LeaderState::Lost, _, reason) => format!(
                    "lost lease {lease} ({}): deletions stopped",
                    reason.as_deref().unwrap_or("another instance holds it")
                ),
            };
            let kind = match state {
                LeaderState::Lost => paint("lost", color, |t| t.yellow().bold().to_string()),
                other => other.as_str().to_owned(),
            };
            (kind, text)
        }
        RunEvent::Stopping { in_flight } => (
            "stopping".into(),
            format!("no new decisions; waiting for {in_flight} deletions in flight (Ctrl-C again to quit now)"),
        ),
        RunEvent::Summary(summary) => ("summary".into(), summary_line(summary)),
    }
}

fn summary_line(summary: &Summary) -> String {
    let mut line = format!(
        "{} {}, {} already gone, {} cancelled, {} failing, {} still scheduled",
        summary.deleted,
        if summary.dry_run { "would be deleted" } else { "deleted" },
        summary.gone,
        summary.cancelled,
        summary.failed.len(),
        summary.scheduled.len()
    );
    if !summary.held.is_empty() {
        // Due and not deleted: their pods still stand.
        let mut by: Vec<HeldBy> = summary.held.iter().map(|(_, _, by)| *by).collect();
        by.sort_unstable();
        by.dedup();
        let by: Vec<&str> = by.into_iter().map(HeldBy::words).collect();
        line.push_str(&format!(", {} due and held ({})", summary.held.len(), by.join(", ")));
    }
    line
}

fn write_summary(summary: &Summary, out: &mut impl Write) -> io::Result<()> {
    writeln!(out, "summary: {}", summary_line(summary))?;
    for (pod, reason) in &summary.failed {
        writeln!(out, "  failing: {} on {}: {}", shown(&pod.key), shown(&pod.node), printable(reason))?;
    }
    for (pod, at) in &summary.scheduled {
        writeln!(out, "  scheduled: {} on {} at {}", shown(&pod.key), shown(&pod.node), rfc3339_seconds(*at))?;
    }
    for (pod, at, by) in &summary.held {
        let (key, node, due) = (shown(&pod.key), shown(&pod.node), rfc3339_seconds(*at));
        writeln!(out, "  held: {key} on {node}, due {due}, held by {}: not deleted", by.words())?;
    }
    Ok(())
}

/// The live view's state: what is scheduled, from the events seen.
#[derive(Debug, Default)]
pub struct LiveView {
    scheduled: BTreeMap<PodKey, (Timestamp, String)>,
    deleted: usize,
    dry_run: bool,
    /// Whether the initial lists are in.
    synced: bool,
    /// The watches that lost the API server, and since when.
    disconnected: BTreeMap<String, Timestamp>,
    /// Deletions waiting for the rate limit or the server's pushback, and when they should be done.
    backlog: Option<(usize, Timestamp)>,
    /// Unhealthy nodes not yet tainted: what the node lifecycle controller is expected to do.
    foreseen: BTreeMap<NodeName, NodeForecast>,
    /// Pods due whose eviction a PodDisruptionBudget refuses, with the budget (`--mode evict`).
    blocked: BTreeMap<PodKey, String>,
    /// Pods due that `--keep-last-ready` holds: the last ready replicas of their workloads.
    kept: std::collections::BTreeSet<PodKey>,
}

/// How many upcoming deletions the live view lists.
pub const LIVE_ROWS: usize = 8;

/// How many blocked pods a budget's row of the live view names.
const BLOCKED_NAMED: usize = 3;

impl LiveView {
    /// Follows one event.
    pub fn observe(&mut self, report: &Report) {
        match &report.event {
            RunEvent::Scheduled { pod, work } => {
                self.scheduled.insert(pod.key.clone(), (work.fire, pod.node.to_string()));
            }
            RunEvent::Evicting { pod, .. } => {
                self.scheduled.remove(&pod.key);
            }
            RunEvent::Cancelled { pod, .. } => {
                self.scheduled.remove(&pod.key);
                self.blocked.remove(&pod.key);
            }
            RunEvent::Started { dry_run, .. } => self.dry_run = *dry_run,
            RunEvent::Synced { .. } => self.synced = true,
            RunEvent::Connection { watch, connected: false, since, .. } => {
                self.disconnected.insert(watch.clone(), *since);
            }
            RunEvent::Connection { watch, connected: true, .. } => {
                self.disconnected.remove(watch);
            }
            RunEvent::Deleted { pod, .. } => {
                self.deleted += 1;
                self.blocked.remove(&pod.key);
            }
            RunEvent::Blocked { pod, budget, .. } => {
                self.blocked.insert(pod.key.clone(), budget.clone());
            }
            RunEvent::Kept { pod, .. } => {
                self.scheduled.remove(&pod.key);
                self.kept.insert(pod.key.clone());
            }
            RunEvent::Unkept { pod, .. } => {
                self.kept.remove(&pod.key);
            }
            RunEvent::Gone { pod, .. } | RunEvent::Failed { pod, .. } | RunEvent::Withdrawn { pod, .. } => {
                self.blocked.remove(&pod.key);
            }
            RunEvent::Foreseen(forecast) if forecast.taint.is_some() || forecast.held.is_some() => {
                self.foreseen.insert(forecast.name.clone(), forecast.clone());
            }
            RunEvent::Foreseen(forecast) => {
                self.foreseen.remove(&forecast.name);
            }
            // Another instance decides now; the next term schedules anew.
            RunEvent::Leadership { state: LeaderState::Lost, .. } => {
                self.scheduled.clear();
                self.blocked.clear();
                self.kept.clear();
            }
            _ => {}
        }
    }

    /// One row per PodDisruptionBudget refusing evictions: how many pods it blocks, the first few named.
    fn blocked_rows(&self) -> Vec<String> {
        let mut by_budget: BTreeMap<&str, Vec<&PodKey>> = BTreeMap::new();
        for (pod, budget) in &self.blocked {
            by_budget.entry(budget).or_default().push(pod);
        }
        let mut rows: Vec<String> = by_budget
            .iter()
            .take(LIVE_ROWS)
            .map(|(budget, pods)| {
                let mut named: Vec<String> = pods.iter().take(BLOCKED_NAMED).map(|pod| shown(*pod)).collect();
                if pods.len() > BLOCKED_NAMED {
                    named.push(format!("… {} more", pods.len() - BLOCKED_NAMED));
                }
                let noun = if pods.len() == 1 { "pod" } else { "pods" };
                format!(
                    "  blocked            PodDisruptionBudget {}: {} {noun} ({})",
                    printable(budget),
                    pods.len(),
                    named.join(", ")
                )
            })
            .collect();
        if by_budget.len() > LIVE_ROWS {
            rows.push(format!("  … and {} more disruption budgets blocking evictions", by_budget.len() - LIVE_ROWS));
        }
        rows
    }

    /// How many deletions wait for `--qps`/`--burst` or the server's `Retry-After`, and when the
    /// last of their writes should go (`None`: the limiter holds nothing back).
    pub fn set_backlog(&mut self, backlog: Option<(usize, Timestamp)>) {
        self.backlog = backlog;
    }

    /// The block under the log: the next deletions by deadline, each with its countdown.
    #[must_use]
    pub fn render(&self, now: Timestamp, color: ColorMode) -> Vec<String> {
        let mut next: Vec<(&Timestamp, &PodKey, &String)> =
            self.scheduled.iter().map(|(key, (at, node))| (at, key, node)).collect();
        next.sort();
        let deleted = if self.dry_run { "would be deleted" } else { "deleted" };
        let mut counts = format!("{} scheduled, {} {deleted}", self.scheduled.len(), self.deleted);
        if let Some((waiting, drains_at)) = self.backlog {
            let drained = countdown(Some(drains_at.max(now)), now);
            counts.push_str(&format!(" · {waiting} deletions waiting for the rate limit, drained {drained}"));
        }
        if !self.blocked.is_empty() {
            counts.push_str(&format!(" · {} blocked by disruption budgets", self.blocked.len()));
        }
        if !self.kept.is_empty() {
            counts.push_str(&format!(" · {} kept as the last ready replica (--keep-last-ready)", self.kept.len()));
        }
        // The connection comes first when it is not as it should be: a quiet view may be a lost one.
        let state = match self.disconnected.iter().min_by_key(|(_, since)| **since) {
            Some((watch, since)) => Some(format!("disconnected since {} ({watch})", rfc3339_seconds(*since))),
            None if !self.synced => Some("connecting: waiting for the first lists".to_owned()),
            None => None,
        };
        let heading = match state {
            Some(state) => format!("── {state} · {counts} ──"),
            None => format!("── {counts} ──"),
        };
        let mut lines = vec![paint(&heading, color, |t| t.dimmed().to_string())];
        for (at, key, node) in next.iter().take(LIVE_ROWS) {
            lines.push(format!(
                "  {:<18} {}  {} on {}",
                countdown(Some(**at), now),
                rfc3339_seconds(**at),
                shown(key),
                printable(node)
            ));
        }
        if next.len() > LIVE_ROWS {
            lines.push(format!("  … and {} more", next.len() - LIVE_ROWS));
        }
        lines.extend(self.blocked_rows());
        lines.extend(self.foreseen.values().take(LIVE_ROWS).map(super::lifecycle::row));
        if self.foreseen.len() > LIVE_ROWS {
            lines.push(format!("  … and {} more nodes about to be tainted", self.foreseen.len() - LIVE_ROWS));
        }
        lines
    }
}

/// `1 pod`, `2 pods`.
fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::engine::model::{PodRef, Uid};
    use crate::engine::snapshot::Owner;

    fn scheduled(name: &str, fire: i64) -> Report {
        let pod = PodRef { key: PodKey::new("web", name), uid: Uid::from("u"), node: "n1".into() };
        let work = Work {
            created: Timestamp::from_unix_seconds(0),
            fire: Timestamp::from_unix_seconds(fire),
            cause: Cause::Expired { seconds: fire },
        };
        Report { at: Timestamp::from_unix_seconds(0), event: RunEvent::Scheduled { pod, work } }
    }

    fn synced() -> Report {
        let event =
            RunEvent::Synced { nodes: 1, pods: 1, scheduled: 0, terminating: 0, due: 0, restarted_countdowns: false };
        Report { at: Timestamp::from_unix_seconds(0), event }
    }

    #[test]
    fn live_view_and_lines_say_when_the_api_server_is_lost() {
        // Fixed: a lost connection showed nothing but kube's `ServiceError: client error (Connect)`.
        let mut view = LiveView::default();
        let at = |seconds| Timestamp::from_unix_seconds(seconds);
        assert_eq!(
            view.render(at(0), ColorMode::Plain)[0],
            "── connecting: waiting for the first lists · 0 scheduled, 0 deleted ──"
        );
        view.observe(&synced());
        assert_eq!(view.render(at(0), ColorMode::Plain)[0], "── 0 scheduled, 0 deleted ──");
        let lost = RunEvent::Connection {
            watch: "pods".into(),
            connected: false,
            reason: Some("connection refused".into()),
            since: at(5),
        };
        let back = RunEvent::Connection { watch: "pods".into(), connected: true, reason: None, since: at(5) };
        let mut text = Vec::new();
        for (seconds, event) in [(5, lost), (17, back.clone())] {
            let report = Report { at: at(seconds), event };
            view.observe(&report);
            if seconds == 5 {
                assert_eq!(
                    view.render(at(9), ColorMode::Plain)[0],
                    "── disconnected since 1970-01-01T00:00:05Z (pods) · 0 scheduled, 0 deleted ──"
                );
            }
            write_text(&report, ColorMode::Plain, &mut text).expect("a Vec");
            write_json(&report, &mut text).expect("a Vec");
        }
        assert_eq!(view.render(at(20), ColorMode::Plain)[0], "── 0 scheduled, 0 deleted ──");
        let text = String::from_utf8(text).expect("UTF-8");
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[0].contains("lost      the watch of pods lost the API server: connection refused; reconnecting"),
            "{text}"
        );
        assert!(lines[1].contains(r#""type":"connection""#) && lines[1].contains(r#""connected":false"#), "{text}");
        assert!(
            lines[2].contains("reconnected the watch of pods is back (disconnected since 1970-01-01T00:00:05Z, 12s)"),
            "{text}"
        );
        assert_eq!(level(&back), "info");
    }

    #[test]
    fn live_view_says_how_many_deletions_wait_for_the_rate_limit_and_when_they_drain() {
        let mut view = LiveView::default();
        view.observe(&synced());
        view.set_backlog(Some((40, Timestamp::from_unix_seconds(34))));
        let lines = view.render(Timestamp::from_unix_seconds(30), ColorMode::Plain);
        assert_eq!(lines[0], "── 0 scheduled, 0 deleted · 40 deletions waiting for the rate limit, drained in 4s ──");
        view.set_backlog(None);
        assert_eq!(view.render(Timestamp::from_unix_seconds(30), ColorMode::Plain)[0], "── 0 scheduled, 0 deleted ──");
    }

    #[test]
    fn live_view_lists_the_next_deletions_by_deadline_with_countdowns() {
        let mut view = LiveView::default();
        view.observe(&synced());
        view.observe(&scheduled("b", 300));
        view.observe(&scheduled("a", 90));
        let lines = view.render(Timestamp::from_unix_seconds(30), ColorMode::Plain);
        assert_eq!(lines[0], "── 2 scheduled, 0 deleted ──");
        assert!(lines[1].starts_with("  in 1m") && lines[1].ends_with("web/a on n1"), "{lines:?}");
        assert!(lines[2].starts_with("  in 4m 30s") && lines[2].ends_with("web/b on n1"), "{lines:?}");
    }

    #[test]
    fn names_and_messages_from_the_server_are_escaped_in_text() {
        let mut report = scheduled("a\n\u{1b}[2J", 90);
        let mut text = Vec::new();
        write_text(&report, ColorMode::Plain, &mut text).expect("a Vec");
        write_log(&report, false, &mut text).expect("a Vec");
        report.event = RunEvent::Warning { message: "watch failed: \u{1b}]0;title\u{7}".into() };
        write_text(&report, ColorMode::Plain, &mut text).expect("a Vec");
        let text = String::from_utf8(text).expect("UTF-8");
        assert_eq!(text.lines().count(), 3, "{text}");
        assert!(!text.contains('\u{1b}') && !text.contains('\u{7}'), "{text:?}");
        assert!(text.contains(r"web/a\n\u{1b}[2J on n1"), "{text}");
        let mut view = LiveView::default();
        view.observe(&scheduled("b\r", 90));
        assert!(view.render(Timestamp::from_unix_seconds(0), ColorMode::Plain)[1].ends_with(r"web/b\r on n1"));
    }

    #[test]
    fn a_dry_run_never_says_deleted_nor_evicting() {
        // Fixed: the status line, the summary and the JSON said "deleted" in a dry run, and the line
        // before it "evicting".
        let pod = PodRef { key: PodKey::new("web", "a"), uid: Uid::from("u"), node: "n1".into() };
        let work = Work {
            created: Timestamp::from_unix_seconds(0),
            fire: Timestamp::from_unix_seconds(0),
            cause: Cause::Untolerated,
        };
        let at = Timestamp::from_unix_seconds(0);
        let events = [
            RunEvent::Started {
                server: "https://k".into(),
                watching: "every node".into(),
                namespace: None,
                dry_run: true,
                evict: false,
            },
            RunEvent::Evicting { pod: pod.clone(), work, dry_run: true },
            RunEvent::Deleted { pod, work, dry_run: true },
            RunEvent::Summary(Summary { deleted: 1, dry_run: true, ..Summary::default() }),
        ];
        let mut view = LiveView::default();
        view.observe(&synced());
        let mut text = Vec::new();
        for event in events {
            let report = Report { at, event };
            view.observe(&report);
            write_text(&report, ColorMode::Plain, &mut text).expect("a Vec");
            write_log(&report, false, &mut text).expect("a Vec");
            write_json(&report, &mut text).expect("a Vec");
        }
        let text = String::from_utf8(text).expect("UTF-8");
        let heading = &view.render(at, ColorMode::Plain)[0];
        for output in [text.as_str(), heading] {
            assert!(!output.replace("would be deleted", "").contains("deleted"), "{output}");
        }
        // Nor "evicting": nothing is evicted in a dry run.
        let said = text.replace("evicting pods when due", "");
        assert!(!said.contains("evicting"), "{said}");
        assert!(said.contains("would evict web/a on n1: due") && said.contains(r#""type":"wouldEvict""#), "{said}");
        assert!(text.contains(r#""type":"wouldDelete""#) && text.contains(r#""wouldDelete":1"#), "{text}");
        assert!(text.contains("summary: 1 would be deleted, 0 already gone"), "{text}");
        assert_eq!(heading, "── 0 scheduled, 1 would be deleted ──");
    }

    #[test]
    fn a_pod_blocked_by_a_budget_is_named_with_it_in_the_line_the_json_and_the_live_view() {
        let pod = |name: &str| PodRef { key: PodKey::new("web", name), uid: Uid::from("u"), node: "n1".into() };
        let blocked = |name: &str, budget: &str| RunEvent::Blocked {
            pod: pod(name),
            budget: budget.into(),
            message: format!("The disruption budget {} needs 2 healthy pods and has 2 currently", &budget[4..]),
            attempt: 1,
            retry_at: Timestamp::from_unix_seconds(5),
        };
        let at = Timestamp::from_unix_seconds(0);
        let mut view = LiveView::default();
        view.observe(&synced());
        let mut text = Vec::new();
        for event in [blocked("a", "web/frontend"), blocked("b", "web/frontend"), blocked("c", "web/api")] {
            let report = Report { at, event };
            view.observe(&report);
            write_text(&report, ColorMode::Plain, &mut text).expect("a Vec");
            write_json(&report, &mut text).expect("a Vec");
        }
        let text = String::from_utf8(text).expect("UTF-8");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "1970-01-01T00:00:00Z  blocked   web/a on n1: attempt 1: eviction refused by PodDisruptionBudget \
             web/frontend (The disruption budget frontend needs 2 healthy pods and has 2 currently); retrying at \
             1970-01-01T00:00:05Z"
        );
        let json: Value = serde_json::from_str(lines[1]).expect("JSON");
        assert_eq!((json["type"].as_str(), json["budget"].as_str()), (Some("blocked"), Some("web/frontend")));
        assert_eq!((json["attempt"].as_u64(), json["retryAt"].as_str()), (Some(1), Some("1970-01-01T00:00:05Z")));
        assert_eq!(level(&blocked("a", "web/frontend")), "warning");
        let rendered = view.render(at, ColorMode::Plain);
        assert_eq!(rendered[0], "── 0 scheduled, 0 deleted · 3 blocked by disruption budgets ──");
        assert_eq!(rendered[1], "  blocked            PodDisruptionBudget web/api: 1 pod (web/c)");
        assert_eq!(rendered[2], "  blocked            PodDisruptionBudget web/frontend: 2 pods (web/a, web/b)");
        let work = Work { created: at, fire: at, cause: Cause::Untolerated };
        view.observe(&Report { at, event: RunEvent::Deleted { pod: pod("a"), work, dry_run: false } });
        view.observe(&Report { at, event: RunEvent::Gone { pod: pod("c"), reason: "not found".into() } });
        let rendered = view.render(at, ColorMode::Plain);
        assert_eq!(rendered[0], "── 0 scheduled, 1 deleted · 1 blocked by disruption budgets ──");
        assert_eq!(rendered[1..], ["  blocked            PodDisruptionBudget web/frontend: 1 pod (web/b)"]);
        let given_up = Report { at, event: RunEvent::Withdrawn { pod: pod("b"), budget: "web/frontend".into() } };
        view.observe(&given_up);
        assert_eq!(view.render(at, ColorMode::Plain), ["── 0 scheduled, 1 deleted ──"]);
        let mut text = Vec::new();
        write_text(&given_up, ColorMode::Plain, &mut text).expect("a Vec");
        write_json(&given_up, &mut text).expect("a Vec");
        let text = String::from_utf8(text).expect("UTF-8");
        assert!(
            text.starts_with(
                "1970-01-01T00:00:00Z  withdrawn web/b on n1: no longer due; its eviction, refused by \
                 PodDisruptionBudget web/frontend, is given up\n"
            ),
            "{text}"
        );
        assert!(text.contains(r#""type":"withdrawn""#) && text.contains(r#""budget":"web/frontend""#), "{text}");
    }

    #[test]
    fn the_last_ready_replica_kept_is_said_in_the_line_the_json_and_the_live_view_and_so_is_its_release() {
        let pod = PodRef { key: PodKey::new("web", "web-1"), uid: Uid::from("u"), node: "n2".into() };
        let owner = Owner::new("ReplicaSet", "web", "rs");
        let at = Timestamp::from_unix_seconds(3);
        let work = Work { created: at, fire: at, cause: Cause::Untolerated };
        let kept = |dry_run| RunEvent::Kept { pod: pod.clone(), work, owner: owner.clone(), only: false, dry_run };
        let unkept = |why, dry_run| RunEvent::Unkept { pod: pod.clone(), owner: owner.clone(), why, dry_run };
        let spare = || LetGo::Spare { replica: "web-2".into() };
        let mut view = LiveView::default();
        view.observe(&synced());
        view.observe(&scheduled("web-1", 3));
        let mut text = Vec::new();
        let events = [
            kept(false),
            unkept(spare(), false),
            unkept(LetGo::NotReady, false),
            unkept(LetGo::NotDue, false),
            kept(true),
            unkept(spare(), true),
        ];
        for (i, event) in events.into_iter().enumerate() {
            let report = Report { at, event };
            view.observe(&report);
            if i == 0 {
                assert_eq!(
                    view.render(at, ColorMode::Plain),
                    ["── 0 scheduled, 0 deleted · 1 kept as the last ready replica (--keep-last-ready) ──"]
                );
            }
            write_text(&report, ColorMode::Plain, &mut text).expect("a Vec");
            write_json(&report, &mut text).expect("a Vec");
        }
        assert_eq!(view.render(at, ColorMode::Plain), ["── 0 scheduled, 0 deleted ──"]);
        let text = String::from_utf8(text).expect("UTF-8");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "1970-01-01T00:00:03Z  kept      web/web-1 on n2: due 1970-01-01T00:00:03Z (untolerated taint), held: \
             the last ready replica of ReplicaSet web (--keep-last-ready); deleted once another replica is ready"
        );
        let json: Value = serde_json::from_str(lines[1]).expect("JSON");
        assert_eq!((json["type"].as_str(), json["dryRun"].as_bool()), (Some("kept"), Some(false)));
        assert_eq!(json["owner"], serde_json::json!({"kind": "ReplicaSet", "name": "web", "uid": "rs"}));
        assert_eq!(
            (json["evictAt"].as_str(), json["reason"].as_str()),
            (Some("1970-01-01T00:00:03Z"), Some("untolerated"))
        );
        assert_eq!(
            lines[2],
            "1970-01-01T00:00:03Z  unkept    web/web-1 on n2: ReplicaSet web has another ready replica (web-2); \
             deleting it now"
        );
        let json: Value = serde_json::from_str(lines[3]).expect("JSON");
        assert_eq!((json["type"].as_str(), json["reason"].as_str()), (Some("unkept"), Some("anotherReady")));
        assert_eq!(json["replica"], "web-2");
        assert!(lines[4].ends_with("no longer a ready replica of ReplicaSet web; deleting it now"), "{text}");
        assert_eq!(serde_json::from_str::<Value>(lines[5]).expect("JSON")["reason"], "notReady");
        assert!(lines[6].ends_with("web/web-1 on n2: no longer due; not deleted"), "{text}");
        let json: Value = serde_json::from_str(lines[7]).expect("JSON");
        assert_eq!((json["reason"].as_str(), json["replica"].is_null()), (Some("notDue"), true));
        assert!(
            lines[8].contains(
                "would keep web/web-1 on n2: due 1970-01-01T00:00:03Z (untolerated taint), would be \
                 held: the last ready replica of ReplicaSet web (--keep-last-ready); would be deleted once another \
                 replica is ready"
            ),
            "{text}"
        );
        assert_eq!(serde_json::from_str::<Value>(lines[9]).expect("JSON")["dryRun"], true);
        assert!(lines[10].ends_with("has another ready replica (web-2); would be deleted now"), "{text}");
        assert_eq!((level(&kept(false)), level(&unkept(LetGo::NotDue, false))), ("warning", "info"));
    }

    #[test]
    fn json_lines_name_their_type_and_time() {
        let line = json_line(&scheduled("a", 90));
        assert_eq!(line["type"], "scheduled");
        assert_eq!(line["time"], "1970-01-01T00:00:00Z");
        assert_eq!(line["pod"]["name"], "a");
        assert_eq!(line["evictAt"], "1970-01-01T00:01:30Z");
        assert_eq!(line["tolerationSeconds"], 90);
    }

    /// One report of every kind `run` prints, and of each shape a kind takes (a dry run, a namespace,
    /// each cause, each reason a kept pod is let go, a value present or absent).
    fn every_kind() -> Vec<(&'static str, Report)> {
        use crate::engine::lifecycle::{
            Basis, ConditionTaint, Drain, Held, HeldReason, NodeForecast, PredictedTaint, Ready, ZoneKey,
        };
        let t = |seconds: i64| Timestamp::from_unix_seconds(1_795_392_000 + seconds);
        let at = Timestamp::from_nanos(t(100).as_nanos() + 250_000_000);
        let pod = PodRef {
            key: PodKey::new("web", "frontend-1"),
            uid: Uid::from("0f9d6a8e-3c1b-4d2e-9f7a-1b2c3d4e5f60"),
            node: "worker-1".into(),
        };
        let other = PodRef { key: PodKey::new("batch", "job-2"), uid: Uid::from("u-2"), node: "worker-2".into() };
        let expired = Work { created: t(0), fire: t(90), cause: Cause::Expired { seconds: 90 } };
        let untolerated = Work { created: t(5), fire: t(5), cause: Cause::Untolerated };
        let owner = Owner::new("ReplicaSet", "frontend", "rs-1");
        let forecast = NodeForecast {
            name: "worker-3".into(),
            zone: ZoneKey::new("r", "z1"),
            ready: Some(Ready::Unknown),
            last_heartbeat: Some(t(-40)),
            taint: Some(PredictedTaint {
                key: ConditionTaint::Unreachable,
                earliest: t(5),
                latest: Some(t(10)),
                basis: Basis::LostHeartbeat,
                queued_with: 2,
                drained: false,
            }),
            held: None,
        };
        let open = NodeForecast {
            taint: Some(PredictedTaint {
                key: ConditionTaint::NotReady,
                earliest: t(7),
                latest: None,
                basis: Basis::NotReady,
                queued_with: 0,
                drained: false,
            }),
            ready: Some(Ready::False),
            ..forecast.clone()
        };
        let held = NodeForecast {
            taint: None,
            held: Some(Held { reason: HeldReason::PartialDisruption, zone: ZoneKey::new("r", "z1") }),
            ..forecast.clone()
        };
        let cleared = NodeForecast { ready: None, last_heartbeat: None, taint: None, held: None, ..forecast.clone() };
        let events = [
            (
                "started",
                RunEvent::Started {
                    server: "https://10.96.0.1".into(),
                    watching: "every node".into(),
                    namespace: None,
                    dry_run: false,
                    evict: false,
                },
            ),
            (
                "started in a namespace, a dry run of evictions",
                RunEvent::Started {
                    server: "https://10.96.0.1".into(),
                    watching: "nodes worker-1, worker-2".into(),
                    namespace: Some("web".into()),
                    dry_run: true,
                    evict: true,
                },
            ),
            (
                "synced",
                RunEvent::Synced {
                    nodes: 42,
                    pods: 1310,
                    scheduled: 3,
                    terminating: 0,
                    due: 1,
                    restarted_countdowns: true,
                },
            ),
            ("scheduled", RunEvent::Scheduled { pod: pod.clone(), work: expired }),
            ("cancelled", RunEvent::Cancelled { pod: pod.clone(), work: untolerated }),
            ("evicting", RunEvent::Evicting { pod: pod.clone(), work: expired, dry_run: false }),
            ("would evict", RunEvent::Evicting { pod: pod.clone(), work: untolerated, dry_run: true }),
            ("deleted", RunEvent::Deleted { pod: pod.clone(), work: expired, dry_run: false }),
            ("would delete", RunEvent::Deleted { pod: pod.clone(), work: untolerated, dry_run: true }),
            ("gone", RunEvent::Gone { pod: pod.clone(), reason: "not found".into() }),
            (
                "failed",
                RunEvent::Failed {
                    pod: pod.clone(),
                    reason: "the server is busy".into(),
                    attempt: 2,
                    retry_at: t(104),
                },
            ),
            (
                "blocked",
                RunEvent::Blocked {
                    pod: pod.clone(),
                    budget: "web/frontend".into(),
                    message: "The disruption budget frontend needs 2 healthy pods and has 2 currently".into(),
                    attempt: 3,
                    retry_at: t(105),
                },
            ),
            ("withdrawn", RunEvent::Withdrawn { pod: pod.clone(), budget: "web/frontend".into() }),
            ("held", RunEvent::Held { pod: pod.clone(), work: expired, watches: "nodes and pods", since: t(60) }),
            ("released", RunEvent::Released { count: 4 }),
            (
                "capped",
                RunEvent::Capped {
                    pod: pod.clone(),
                    work: expired,
                    max: 10,
                    window: std::time::Duration::from_millis(90_500),
                    until: t(130),
                },
            ),
            (
                "kept",
                RunEvent::Kept {
                    pod: pod.clone(),
                    work: untolerated,
                    owner: owner.clone(),
                    only: false,
                    dry_run: false,
                },
            ),
            (
                "unkept, another ready",
                RunEvent::Unkept {
                    pod: pod.clone(),
                    owner: owner.clone(),
                    why: LetGo::Spare { replica: "frontend-2".into() },
                    dry_run: true,
                },
            ),
            (
                "unkept, not ready",
                RunEvent::Unkept { pod: pod.clone(), owner: owner.clone(), why: LetGo::NotReady, dry_run: false },
            ),
            ("unkept, not due", RunEvent::Unkept { pod: pod.clone(), owner, why: LetGo::NotDue, dry_run: false }),
            ("dropped", RunEvent::Dropped { pod: pod.clone() }),
            (
                "connection lost",
                RunEvent::Connection {
                    watch: "pods".into(),
                    connected: false,
                    reason: Some("connection refused".into()),
                    since: t(50),
                },
            ),
            (
                "connection back",
                RunEvent::Connection { watch: "nodes".into(), connected: true, reason: None, since: t(50) },
            ),
            ("foreseen", RunEvent::Foreseen(forecast)),
            ("foreseen, no latest", RunEvent::Foreseen(open)),
            ("foreseen, held", RunEvent::Foreseen(held)),
            ("foreseen, cleared", RunEvent::Foreseen(cleared)),
            (
                "drain",
                RunEvent::Drain {
                    zone: ZoneKey::new("r", "z1"),
                    drain: Drain {
                        nodes: 240,
                        every: std::time::Duration::from_secs(10),
                        first: t(32),
                        last: t(2_431),
                    },
                },
            ),
            ("warning", RunEvent::Warning { message: "node \"worker-9\" not found".into() }),
            ("assumed", RunEvent::Assumed { message: "settings assumed".into() }),
            (
                "leading",
                RunEvent::Leadership {
                    state: LeaderState::Leading,
                    lease: "taint-evict/kubectl-taint-evict".into(),
                    identity: "a".into(),
                    holder: None,
                    reason: None,
                },
            ),
            (
                "following",
                RunEvent::Leadership {
                    state: LeaderState::Following,
                    lease: "taint-evict/kubectl-taint-evict".into(),
                    identity: "b".into(),
                    holder: Some("a".into()),
                    reason: None,
                },
            ),
            (
                "lost",
                RunEvent::Leadership {
                    state: LeaderState::Lost,
                    lease: "taint-evict/kubectl-taint-evict".into(),
                    identity: "a".into(),
                    holder: Some("b".into()),
                    reason: Some("renewal failed".into()),
                },
            ),
            ("stopping", RunEvent::Stopping { in_flight: 2 }),
            (
                "summary",
                RunEvent::Summary(Summary {
                    deleted: 5,
                    dry_run: false,
                    gone: 1,
                    cancelled: 2,
                    failed: vec![(pod.clone(), "the server is busy".into())],
                    scheduled: vec![(pod.clone(), t(90)), (other, t(95))],
                    held: vec![(pod, t(60), HeldBy::MaxDeletions)],
                }),
            ),
            ("summary of a dry run", RunEvent::Summary(Summary { deleted: 3, dry_run: true, ..Summary::default() })),
        ];
        events.into_iter().map(|(name, event)| (name, Report { at, event })).collect()
    }

    /// A line of `run -o json`, parsed.
    fn json_line(report: &Report) -> Value {
        let mut line = Vec::new();
        write_json(report, &mut line).expect("a Vec");
        super::super::lines::parsed(&line)
    }

    #[test]
    fn every_kind_of_line_keeps_its_fields_and_values() {
        // The names are documented (docs/run.md) and read by programs: each kind pinned, field by field.
        let time = "2026-11-23T00:01:40.25Z";
        let pod = json!({"namespace": "web", "name": "frontend-1", "uid": "0f9d6a8e-3c1b-4d2e-9f7a-1b2c3d4e5f60",
            "node": "worker-1"});
        let owner = json!({"kind": "ReplicaSet", "name": "frontend", "uid": "rs-1"});
        let expected = [
            json!({"type": "started", "dryRun": false, "mode": "delete", "server": "https://10.96.0.1",
                "watching": "every node", "time": time}),
            json!({"type": "started", "dryRun": true, "mode": "evict", "namespace": "web",
                "server": "https://10.96.0.1", "watching": "nodes worker-1, worker-2", "time": time}),
            json!({"type": "synced", "due": 1, "nodes": 42, "pods": 1310, "restartedCountdowns": true,
                "scheduled": 3, "terminating": 0, "time": time}),
            json!({"type": "scheduled", "evictAt": "2026-11-23T00:01:30Z", "pod": pod,
                "reason": "tolerationSeconds", "since": "2026-11-23T00:00:00Z", "tolerationSeconds": 90,
                "time": time}),
            json!({"type": "cancelled", "evictAt": "2026-11-23T00:00:05Z", "pod": pod,
                "reason": "untolerated", "since": "2026-11-23T00:00:05Z", "time": time}),
            json!({"type": "evicting", "evictAt": "2026-11-23T00:01:30Z", "pod": pod,
                "reason": "tolerationSeconds", "since": "2026-11-23T00:00:00Z", "tolerationSeconds": 90,
                "time": time}),
            json!({"type": "wouldEvict", "evictAt": "2026-11-23T00:00:05Z", "pod": pod,
                "reason": "untolerated", "since": "2026-11-23T00:00:05Z", "time": time}),
            json!({"type": "deleted", "dryRun": false, "evictAt": "2026-11-23T00:01:30Z",
                "lateSeconds": 10.25, "pod": pod, "reason": "tolerationSeconds", "since": "2026-11-23T00:00:00Z",
                "tolerationSeconds": 90, "time": time}),
            json!({"type": "wouldDelete", "dryRun": true, "evictAt": "2026-11-23T00:00:05Z",
                "lateSeconds": 95.25, "pod": pod, "reason": "untolerated", "since": "2026-11-23T00:00:05Z",
                "time": time}),
            json!({"type": "gone", "message": "not found", "pod": pod, "time": time}),
            json!({"type": "failed", "attempt": 2, "message": "the server is busy", "pod": pod,
                "retryAt": "2026-11-23T00:01:44Z", "time": time}),
            json!({"type": "blocked", "attempt": 3, "budget": "web/frontend",
                "message": "The disruption budget frontend needs 2 healthy pods and has 2 currently", "pod": pod,
                "retryAt": "2026-11-23T00:01:45Z", "time": time}),
            json!({"type": "withdrawn", "budget": "web/frontend", "pod": pod, "time": time}),
            json!({"type": "held", "evictAt": "2026-11-23T00:01:30Z", "pod": pod,
                "reason": "tolerationSeconds", "since": "2026-11-23T00:00:00Z", "tolerationSeconds": 90,
                "watches": "nodes and pods", "time": time}),
            json!({"type": "released", "count": 4, "time": time}),
            json!({"type": "capped", "evictAt": "2026-11-23T00:01:30Z", "maxDeletions": 10,
                "nextSlot": "2026-11-23T00:02:10Z", "pod": pod, "reason": "tolerationSeconds",
                "since": "2026-11-23T00:00:00Z", "tolerationSeconds": 90, "windowSeconds": 90.5, "time": time}),
            json!({"type": "kept", "dryRun": false, "evictAt": "2026-11-23T00:00:05Z", "onlyReplica": false, "owner": owner,
                "pod": pod, "reason": "untolerated", "since": "2026-11-23T00:00:05Z", "time": time}),
            json!({"type": "unkept", "dryRun": true, "owner": owner, "pod": pod,
                "reason": "anotherReady", "replica": "frontend-2", "time": time}),
            json!({"type": "unkept", "dryRun": false, "owner": owner, "pod": pod,
                "reason": "notReady", "replica": null, "time": time}),
            json!({"type": "unkept", "dryRun": false, "owner": owner, "pod": pod,
                "reason": "notDue", "replica": null, "time": time}),
            json!({"type": "dropped", "pod": pod, "time": time}),
            json!({"type": "connection", "connected": false, "reason": "connection refused",
                "since": "2026-11-23T00:00:50Z", "watch": "pods", "time": time}),
            json!({"type": "connection", "connected": true, "reason": null,
                "since": "2026-11-23T00:00:50Z", "watch": "nodes", "time": time}),
            json!({"type": "foreseen", "held": null, "lastHeartbeat": "2026-11-22T23:59:20Z", "node": "worker-3",
                "predictedTaint": {"basis": "lost-heartbeat", "earliest": "2026-11-23T00:00:05Z",
                    "effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "latest": "2026-11-23T00:00:10Z",
                    "queuedWith": 2},
                "ready": "Unknown", "zone": "z1", "time": time}),
            json!({"type": "foreseen", "held": null, "lastHeartbeat": "2026-11-22T23:59:20Z", "node": "worker-3",
                "predictedTaint": {"basis": "not-ready", "earliest": "2026-11-23T00:00:07Z", "effect": "NoExecute",
                    "key": "node.kubernetes.io/not-ready", "latest": null, "queuedWith": 0},
                "ready": "False", "zone": "z1", "time": time}),
            json!({"type": "foreseen", "held": {"reason": "partial-disruption", "zone": "z1"},
                "lastHeartbeat": "2026-11-22T23:59:20Z", "node": "worker-3", "predictedTaint": null,
                "ready": "Unknown", "zone": "z1", "time": time}),
            json!({"type": "foreseen", "held": null, "lastHeartbeat": null, "node": "worker-3", "predictedTaint": null,
                "ready": null, "zone": "z1", "time": time}),
            json!({"type": "drain", "zone": "z1", "nodes": 240, "everySeconds": 10.0,
                "first": "2026-11-23T00:00:32Z", "last": "2026-11-23T00:40:31Z", "time": time}),
            json!({"type": "warning", "message": "node \"worker-9\" not found", "time": time}),
            json!({"type": "warning", "message": "settings assumed", "time": time}),
            json!({"type": "leadership", "holder": null, "identity": "a",
                "lease": "taint-evict/kubectl-taint-evict", "reason": null, "state": "leading", "time": time}),
            json!({"type": "leadership", "holder": "a", "identity": "b",
                "lease": "taint-evict/kubectl-taint-evict", "reason": null, "state": "following", "time": time}),
            json!({"type": "leadership", "holder": "b", "identity": "a",
                "lease": "taint-evict/kubectl-taint-evict", "reason": "renewal failed", "state": "lost",
                "time": time}),
            json!({"type": "stopping", "inFlight": 2, "time": time}),
            json!({"type": "summary", "cancelled": 2, "deleted": 5, "dryRun": false,
                "failed": [{"message": "the server is busy", "pod": pod}], "gone": 1,
                "scheduled": [
                    {"evictAt": "2026-11-23T00:01:30Z", "pod": pod},
                    {"evictAt": "2026-11-23T00:01:35Z",
                        "pod": {"namespace": "batch", "name": "job-2", "uid": "u-2", "node": "worker-2"}},
                ],
                "held": [{"evictAt": "2026-11-23T00:01:00Z", "pod": pod, "by": "maxDeletions"}],
                "time": time}),
            json!({"type": "summary", "cancelled": 0, "dryRun": true, "failed": [], "gone": 0, "scheduled": [],
                "held": [], "wouldDelete": 3, "time": time}),
        ];
        let reports = every_kind();
        assert_eq!(reports.len(), expected.len());
        for ((name, report), expected) in reports.iter().zip(expected) {
            assert_eq!(json_line(report), expected, "{name}");
            // The log record is the same object with `level` and `msg`.
            let mut record = Vec::new();
            write_log(report, true, &mut record).expect("a Vec");
            let mut record: Value = serde_json::from_slice(&record).expect("JSON");
            let fields = record.as_object_mut().expect("an object");
            assert_eq!(fields.remove("level"), Some(json!(level(&report.event))), "{name}");
            assert_eq!(fields.remove("msg"), Some(json!(describe(report, ColorMode::Plain).1)), "{name}");
            assert_eq!(record, expected, "{name}");
        }
        // Every kind of event is among them.
        let kinds: std::collections::BTreeSet<usize> = reports.iter().map(|(_, report)| kind(&report.event)).collect();
        assert_eq!(kinds, (0..KINDS).collect(), "an event without its line pinned here");
    }

    /// How many kinds of [`RunEvent`] there are.
    const KINDS: usize = 24;

    /// The event's kind, as a number below [`KINDS`] (no wildcard: a new kind is to be added here).
    fn kind(event: &RunEvent) -> usize {
        match event {
            RunEvent::Started { .. } => 0,
            RunEvent::Synced { .. } => 1,
            RunEvent::Scheduled { .. } => 2,
            RunEvent::Cancelled { .. } => 3,
            RunEvent::Evicting { .. } => 4,
            RunEvent::Deleted { .. } => 5,
            RunEvent::Gone { .. } => 6,
            RunEvent::Failed { .. } => 7,
            RunEvent::Blocked { .. } => 8,
            RunEvent::Withdrawn { .. } => 9,
            RunEvent::Held { .. } => 10,
            RunEvent::Capped { .. } => 11,
            RunEvent::Kept { .. } => 12,
            RunEvent::Unkept { .. } => 13,
            RunEvent::Released { .. } => 14,
            RunEvent::Dropped { .. } => 15,
            RunEvent::Connection { .. } => 16,
            RunEvent::Foreseen(_) => 17,
            RunEvent::Warning { .. } => 18,
            RunEvent::Leadership { .. } => 19,
            RunEvent::Stopping { .. } => 20,
            RunEvent::Summary(_) => 21,
            RunEvent::Drain { .. } => 22,
            RunEvent::Assumed { .. } => 23,
        }
    }
}
