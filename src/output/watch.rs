//! `plan -w`'s output: the screen redrawn in place on a terminal, or one JSON line per change.
//!
//! The screen: a heading with the counts, one line per tainted node, then the pods being followed,
//! due ones first (the cluster's controller is late with them), then by deadline, then the done
//! ones, latest first; cut to the terminal's height, the rest counted on the last line.

use std::collections::{BTreeMap, HashMap};
use std::io::{self, Write};

use owo_colors::OwoColorize;

use super::human::{countdown, duration, printable, printable_display as shown, rfc3339_seconds};
use super::lines::{Stamped, WatchLine, write_line};
use super::redraw::TermSize;
use super::view::ColorMode;
use crate::engine::model::{NodeName, PodKey, PodRef, Taint};
use crate::engine::observe::{Deletion, Observed, Seen};
use crate::engine::queue::Work;
use crate::engine::time::{NANOS_PER_SECOND, Timestamp};

/// A deletion done within this much of its deadline is on time (the watch sees it a moment after
/// the controller acts).
const ON_TIME_NANOS: i128 = 2 * NANOS_PER_SECOND as i128;

/// How late a deletion came against the deadline: `on time`, `12s late`, `5s early`.
#[must_use]
pub fn lateness(deleted_at: Timestamp, deadline: Timestamp) -> String {
    match deleted_at.nanos_since(deadline) {
        late if late.abs() < ON_TIME_NANOS => "on time".to_owned(),
        late if late > 0 => format!("{} late", duration(late.unsigned_abs())),
        early => format!("{} early", duration(early.unsigned_abs())),
    }
}

/// Writes the change as one JSON line (a line of `plan -w` when piped; its shape: `output/lines.rs`).
pub fn write_json(seen: &Seen, out: &mut impl Write) -> io::Result<()> {
    write_line(&Stamped::new(seen.at, WatchLine::of(seen)), out)
}

/// Where a followed pod stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Waiting,
    Due,
    Done { at: Timestamp, how: Deletion },
}

#[derive(Clone, Debug)]
struct Row {
    pod: PodRef,
    work: Work,
    state: State,
}

/// The screen's state, from the changes seen.
#[derive(Debug, Default)]
pub struct WatchView {
    synced: bool,
    taints: BTreeMap<NodeName, Vec<Taint>>,
    rows: HashMap<PodKey, Row>,
    /// The watches that lost the API server, and since when.
    disconnected: BTreeMap<String, Timestamp>,
    /// The nodes the node lifecycle controller is expected to taint or holds back, in words.
    foreseen: BTreeMap<NodeName, String>,
}

fn paint(text: &str, color: ColorMode, style: fn(&str) -> String) -> String {
    match color {
        ColorMode::Color => style(text),
        ColorMode::Plain => text.to_owned(),
    }
}

/// `10:02:10Z` on `now`'s (UTC) day, the whole instant otherwise.
fn deadline_text(at: Timestamp, now: Timestamp) -> String {
    let (at_text, now_text) = (rfc3339_seconds(at), rfc3339_seconds(now));
    match (at_text.split_once('T'), now_text.split_once('T')) {
        (Some((day, time)), Some((today, _))) if day == today => time.to_owned(),
        _ => at_text,
    }
}

impl WatchView {
    /// Follows one change.
    pub fn observe(&mut self, seen: &Seen) {
        match &seen.what {
            Observed::Synced { .. } => self.synced = true,
            Observed::Taints { node, taints } if taints.is_empty() => {
                self.taints.remove(node);
            }
            Observed::Taints { node, taints } => {
                self.taints.insert(node.clone(), taints.clone());
            }
            Observed::Scheduled { pod, work } => {
                self.rows.insert(pod.key.clone(), Row { pod: pod.clone(), work: *work, state: State::Waiting });
            }
            Observed::Due { pod, work } => {
                self.rows.insert(pod.key.clone(), Row { pod: pod.clone(), work: *work, state: State::Due });
            }
            Observed::Cancelled { pod, .. } => {
                self.rows.remove(&pod.key);
            }
            Observed::Done { pod, work, how } => {
                let state = State::Done { at: seen.at, how: *how };
                self.rows.insert(pod.key.clone(), Row { pod: pod.clone(), work: *work, state });
            }
        }
    }

    /// Follows what the node lifecycle controller is expected to do to a node (cleared when nothing).
    pub fn foreseen(&mut self, forecast: &crate::engine::lifecycle::NodeForecast) {
        if forecast.taint.is_some() || forecast.held.is_some() {
            self.foreseen.insert(forecast.name.clone(), super::lifecycle::line(forecast));
        } else {
            self.foreseen.remove(&forecast.name);
        }
    }

    /// Follows the connection of a watch (`run`'s connection reports).
    pub fn connection(&mut self, watch: &str, connected: bool, since: Timestamp) {
        if connected {
            self.disconnected.remove(watch);
        } else {
            self.disconnected.insert(watch.to_owned(), since);
        }
    }

    /// The screen at `now`: at most `size.rows` lines (each still to be cut to the width).
    #[must_use]
    pub fn render(&self, now: Timestamp, size: TermSize, color: ColorMode) -> Vec<String> {
        let mut rows: Vec<&Row> = self.rows.values().collect();
        let (mut due, mut waiting, mut done) = (0, 0, 0);
        for row in &rows {
            match row.state {
                State::Waiting => waiting += 1,
                State::Due => due += 1,
                State::Done { .. } => done += 1,
            }
        }
        let rank = |row: &Row| match row.state {
            State::Due => (0, row.work.fire.as_nanos()),
            State::Waiting => (1, row.work.fire.as_nanos()),
            State::Done { at, .. } => (2, -at.as_nanos()),
        };
        // Only the rows a screen holds are put in order: a large incident follows 100,000s of pods,
        // redrawn four times a second.
        let order = |a: &&Row, b: &&Row| (rank(a), &a.pod.key).cmp(&(rank(b), &b.pod.key));
        let shown_at_most = size.rows.max(4);
        if rows.len() > shown_at_most {
            rows.select_nth_unstable_by(shown_at_most, order);
            rows.truncate(shown_at_most + 1);
        }
        let total = self.rows.len();
        rows.sort_by(order);

        let nodes = match self.taints.len() {
            1 => "1 tainted node".to_owned(),
            n => format!("{n} tainted nodes"),
        };
        let counts = format!("{nodes} · {due} due · {waiting} scheduled · {done} done");
        let state = match self.disconnected.iter().min_by_key(|(_, since)| **since) {
            Some((watch, since)) => format!("disconnected since {} ({watch}) · ", rfc3339_seconds(*since)),
            None if !self.synced => "connecting: waiting for the first lists · ".to_owned(),
            None => String::new(),
        };
        let heading = format!("── {} · {state}{counts} ── Ctrl-C ends", deadline_text(now, now));
        let mut lines = vec![paint(&heading, color, |t| t.bold().to_string())];
        let room = size.rows.max(4);

        // Nodes take at most a quarter of the screen.
        let node_room = (room / 4).max(1);
        let nodes: Vec<(&NodeName, &Vec<Taint>)> = self.taints.iter().collect();
        let shown_nodes = if nodes.len() > node_room { node_room - 1 } else { nodes.len() };
        for (node, taints) in nodes.iter().take(shown_nodes) {
            let listed: Vec<String> = taints.iter().map(shown).collect();
            lines.push(format!("node {}: {}", printable(node.as_str()), listed.join(", ")));
        }
        if nodes.len() > shown_nodes {
            let more = nodes.len() - shown_nodes;
            lines.push(format!("… and {more} more tainted node{}", if more == 1 { "" } else { "s" }));
        }
        // Then those about to be tainted, in what is left of that quarter.
        let foreseen_room = node_room.saturating_sub(shown_nodes).max(1);
        for (shown, text) in self.foreseen.values().enumerate() {
            if shown + 1 == foreseen_room && self.foreseen.len() > foreseen_room {
                lines.push(format!("… and {} more nodes expected to be tainted", self.foreseen.len() - shown));
                break;
            }
            lines.push(printable(text).into_owned());
        }
        if rows.is_empty() {
            if self.synced {
                lines.push("No deletion scheduled.".to_owned());
            }
            return lines;
        }
        let left = room.saturating_sub(lines.len() + 1);
        let fits = if total > left { left.saturating_sub(1) } else { total };
        let cells: Vec<(String, String)> = rows
            .iter()
            .take(fits)
            .map(|row| {
                let state = match row.state {
                    State::Waiting => countdown(Some(row.work.fire), now),
                    State::Due => paint(&countdown(Some(row.work.fire), now), color, |t| t.red().bold().to_string()),
                    // Issued, not done: a pod on a node whose kubelet is gone stays terminating.
                    State::Done { at, how: Deletion::Terminating } => {
                        paint(&format!("terminating, issued {}", lateness(at, row.work.fire)), color, |t| {
                            t.yellow().to_string()
                        })
                    }
                    State::Done { at, how: Deletion::Deleted } => {
                        paint(&format!("done, {}", lateness(at, row.work.fire)), color, |t| t.green().to_string())
                    }
                };
                (state, deadline_text(row.work.fire, now))
            })
            .collect();
        // Columns as wide as what they hold, at least as wide as a countdown and a time of day, so that
        // a countdown ticking does not move them (padding counts the visible text only).
        let state_width = cells.iter().map(|(state, _)| super::redraw::visible_width(state)).max().unwrap_or(0).max(18);
        let deadline_width = cells.iter().map(|(_, deadline)| deadline.chars().count()).max().unwrap_or(0).max(9);
        let width = rows.iter().take(fits).map(|row| shown(&row.pod.key).chars().count()).max().unwrap_or(0).max(3);
        let heading = format!("{:<state_width$} {:<deadline_width$}  {:<width$}  NODE", "STATE", "DEADLINE", "POD");
        lines.push(paint(&heading, color, |t| t.dimmed().to_string()));
        for (row, (state, deadline)) in rows.iter().zip(cells) {
            let pad = state_width.saturating_sub(super::redraw::visible_width(&state));
            lines.push(format!(
                "{state}{} {deadline:<deadline_width$}  {:<width$}  {}",
                " ".repeat(pad),
                shown(&row.pod.key),
                printable(row.pod.node.as_str())
            ));
        }
        if total > fits {
            lines.push(format!("… and {} more", total - fits));
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::engine::model::{Effect, Uid};
    use crate::engine::queue::Cause;

    fn t(seconds: i64) -> Timestamp {
        Timestamp::from_unix_seconds(seconds)
    }

    fn pod(name: &str) -> PodRef {
        PodRef { key: PodKey::new("web", name), uid: Uid::from(format!("uid-{name}")), node: "n1".into() }
    }

    fn work(fire: i64) -> Work {
        Work { created: t(0), fire: t(fire), cause: Cause::Expired { seconds: fire } }
    }

    fn seen(at: i64, what: Observed) -> Seen {
        Seen { at: t(at), what }
    }

    #[test]
    fn the_screen_lists_due_then_scheduled_then_done_with_countdowns_and_lateness() {
        let mut view = WatchView::default();
        let taint = Taint::new("example.com/drain", "", Effect::NoExecute);
        for change in [
            seen(0, Observed::Synced { tainted: 1, pods: 3 }),
            seen(0, Observed::Taints { node: "n1".into(), taints: vec![taint] }),
            seen(0, Observed::Scheduled { pod: pod("later"), work: work(300) }),
            seen(0, Observed::Due { pod: pod("late"), work: work(10) }),
            seen(0, Observed::Due { pod: pod("gone"), work: work(20) }),
            seen(45, Observed::Done { pod: pod("gone"), work: work(20), how: Deletion::Deleted }),
        ] {
            view.observe(&change);
        }
        let lines = view.render(t(60), TermSize::default(), ColorMode::Plain);
        assert_eq!(lines[0], "── 00:01:00Z · 1 tainted node · 1 due · 1 scheduled · 1 done ── Ctrl-C ends");
        assert_eq!(lines[1], "node n1: example.com/drain:NoExecute");
        assert!(lines[2].starts_with("STATE"), "{lines:#?}");
        let row = |state: &str, deadline: &str, pod: &str| format!("{state:<18} {deadline:<9}  {pod:<9}  n1");
        assert_eq!(lines[3], row("overdue by 50s", "00:00:10Z", "web/late"));
        assert_eq!(lines[4], row("in 4m", "00:05:00Z", "web/later"));
        assert_eq!(lines[5], row("done, 25s late", "00:00:20Z", "web/gone"));
        assert!(lines[5].ends_with(" n1"), "{lines:#?}");
    }

    #[test]
    fn a_deletion_issued_that_still_terminates_is_terminating_not_done() {
        let mut view = WatchView::default();
        view.observe(&seen(0, Observed::Synced { tainted: 1, pods: 1 }));
        view.observe(&seen(0, Observed::Due { pod: pod("stuck"), work: work(20) }));
        view.observe(&seen(21, Observed::Done { pod: pod("stuck"), work: work(20), how: Deletion::Terminating }));
        let lines = view.render(t(60), TermSize::default(), ColorMode::Plain);
        assert!(lines.iter().any(|l| l.starts_with("terminating, issued on time")), "{lines:#?}");
        assert!(!lines.iter().any(|l| l.starts_with("done")), "{lines:#?}");
    }

    #[test]
    fn columns_widen_for_a_long_overdue_state_and_a_deadline_of_another_day() {
        // Fixed: "overdue by 3d 14h 44m 13s" and "2026-11-22T09:57:10Z" pushed the POD column
        // of their row out of line with the heading.
        let mut view = WatchView::default();
        view.observe(&seen(0, Observed::Synced { tainted: 1, pods: 2 }));
        view.observe(&seen(0, Observed::Due { pod: pod("old"), work: work(10) }));
        view.observe(&seen(0, Observed::Scheduled { pod: pod("next"), work: work(320_000) }));
        let lines = view.render(t(310_000), TermSize::default(), ColorMode::Plain);
        let pod_column = |line: &str| line.find("web/").unwrap_or_else(|| line.find("POD").expect("a POD column"));
        let heading = lines.iter().find(|l| l.starts_with("STATE")).expect("the heading");
        for row in lines.iter().filter(|l| l.contains("web/")) {
            assert_eq!(pod_column(row), pod_column(heading), "{lines:#?}");
        }
        assert!(lines.iter().any(|l| l.starts_with("overdue by 3d 14h 6m 30s 1970-01-01T00:00:10Z")), "{lines:#?}");
    }

    #[test]
    fn the_screen_is_cut_to_the_terminal_height_and_counts_the_rest() {
        let mut view = WatchView::default();
        view.observe(&seen(0, Observed::Synced { tainted: 0, pods: 50 }));
        for i in 0..50 {
            view.observe(&seen(0, Observed::Scheduled { pod: pod(&format!("p{i:02}")), work: work(100 + i) }));
        }
        let lines = view.render(t(0), TermSize { columns: 80, rows: 24 }, ColorMode::Plain);
        assert_eq!(lines.len(), 24);
        assert_eq!(lines[23], "… and 29 more");
    }

    #[test]
    fn json_lines_say_how_late_the_cluster_deleted_a_pod() {
        let line = json_line(&seen(25, Observed::Done { pod: pod("a"), work: work(20), how: Deletion::Terminating }));
        assert_eq!(line["type"], "done");
        assert_eq!(line["how"], "terminating");
        assert_eq!(line["lateSeconds"], 5.0);
        assert_eq!(line["evictAt"], "1970-01-01T00:00:20Z");
        assert_eq!(line["pod"]["namespace"], "web");
        assert_eq!(line["time"], "1970-01-01T00:00:25Z");
        assert_eq!(lateness(t(21), t(20)), "on time");
        assert_eq!(lateness(t(10), t(20)), "10s early");
    }

    #[test]
    fn a_node_expected_to_be_tainted_is_listed_under_the_tainted_ones_until_cleared() {
        // Fixed: the live view never showed the silent-node predictions `plan` shows.
        use crate::engine::lifecycle::{Basis, ConditionTaint, NodeForecast, PredictedTaint, Ready, ZoneKey};
        let mut forecast = NodeForecast {
            name: "n1".into(),
            zone: ZoneKey::new("r", "z"),
            ready: Some(Ready::True),
            last_heartbeat: Some(t(-40)),
            taint: Some(PredictedTaint {
                key: ConditionTaint::Unreachable,
                earliest: t(5),
                latest: Some(t(10)),
                basis: Basis::LostHeartbeat,
                queued_with: 0,
                drained: false,
            }),
            held: None,
        };
        let mut view = WatchView::default();
        view.foreseen(&forecast);
        let size = TermSize { columns: 200, rows: 24 };
        let lines = view.render(t(0), size, ColorMode::Plain);
        assert!(
            lines.iter().any(|l| l.starts_with("node n1: ") && l.contains("unreachable taint expected")),
            "{lines:?}"
        );
        forecast.taint = None;
        view.foreseen(&forecast);
        assert!(!view.render(t(0), size, ColorMode::Plain).iter().any(|l| l.contains("n1")));
    }

    /// One change of every kind `plan -w` prints as a line, and of each shape a kind takes.
    fn every_kind() -> Vec<(&'static str, Seen)> {
        let at = Timestamp::from_nanos(t(100).as_nanos() + 250_000_000);
        let untolerated = Work { created: t(5), fire: t(5), cause: Cause::Untolerated };
        let mut added = Taint::new("node.kubernetes.io/unreachable", "", Effect::NoExecute);
        added.time_added = Some(t(-30));
        let planned = Taint::new("example.com/maintenance", "planned", Effect::NoExecute);
        let changes = [
            ("synced", Observed::Synced { tainted: 3, pods: 18 }),
            ("taints", Observed::Taints { node: "worker-1".into(), taints: vec![added, planned] }),
            ("untainted", Observed::Taints { node: "worker-2".into(), taints: Vec::new() }),
            ("scheduled", Observed::Scheduled { pod: pod("a"), work: work(90) }),
            ("due", Observed::Due { pod: pod("a"), work: untolerated }),
            ("cancelled", Observed::Cancelled { pod: pod("a"), work: work(90) }),
            ("done", Observed::Done { pod: pod("a"), work: work(90), how: Deletion::Deleted }),
            ("done early, terminating", Observed::Done { pod: pod("a"), work: work(120), how: Deletion::Terminating }),
        ];
        changes.into_iter().map(|(name, what)| (name, Seen { at, what })).collect()
    }

    /// A line of `plan -w`, parsed.
    fn json_line(seen: &Seen) -> Value {
        let mut line = Vec::new();
        write_json(seen, &mut line).expect("a Vec");
        super::super::lines::parsed(&line)
    }

    #[test]
    fn every_kind_of_line_keeps_its_fields_and_values() {
        // The names are documented (docs/plan.md) and read by programs: each kind pinned, field by field.
        let time = "1970-01-01T00:01:40.25Z";
        let pod = json!({"namespace": "web", "name": "a", "uid": "uid-a", "node": "n1"});
        let expected = [
            json!({"type": "synced", "pods": 18, "taintedNodes": 3, "time": time}),
            json!({"type": "taints", "node": "worker-1",
                "taints": [
                    {"key": "node.kubernetes.io/unreachable", "value": "", "effect": "NoExecute",
                        "timeAdded": "1969-12-31T23:59:30Z"},
                    {"key": "example.com/maintenance", "value": "planned", "effect": "NoExecute", "timeAdded": null},
                ],
                "time": time}),
            json!({"type": "taints", "node": "worker-2", "taints": [], "time": time}),
            json!({"type": "scheduled", "evictAt": "1970-01-01T00:01:30Z", "pod": pod,
                "reason": "tolerationSeconds", "since": "1970-01-01T00:00:00Z", "tolerationSeconds": 90,
                "time": time}),
            json!({"type": "due", "evictAt": "1970-01-01T00:00:05Z", "pod": pod, "reason": "untolerated",
                "since": "1970-01-01T00:00:05Z", "time": time}),
            json!({"type": "cancelled", "evictAt": "1970-01-01T00:01:30Z", "pod": pod,
                "reason": "tolerationSeconds", "since": "1970-01-01T00:00:00Z", "tolerationSeconds": 90,
                "time": time}),
            json!({"type": "done", "evictAt": "1970-01-01T00:01:30Z", "how": "deleted",
                "lateSeconds": 10.25, "pod": pod, "reason": "tolerationSeconds", "since": "1970-01-01T00:00:00Z",
                "tolerationSeconds": 90, "time": time}),
            json!({"type": "done", "evictAt": "1970-01-01T00:02:00Z",
                "how": "terminating", "lateSeconds": -19.75, "pod": pod, "reason": "tolerationSeconds",
                "since": "1970-01-01T00:00:00Z", "tolerationSeconds": 120, "time": time}),
        ];
        let changes = every_kind();
        assert_eq!(changes.len(), expected.len());
        for ((name, seen), expected) in changes.iter().zip(expected) {
            assert_eq!(json_line(seen), expected, "{name}");
        }
        // Every kind of change is among them.
        let kinds: std::collections::BTreeSet<usize> = changes.iter().map(|(_, seen)| kind(&seen.what)).collect();
        assert_eq!(kinds, (0..KINDS).collect(), "a change without its line pinned here");
    }

    /// How many kinds of [`Observed`] there are.
    const KINDS: usize = 6;

    /// The change's kind, as a number below [`KINDS`] (no wildcard: a new kind is to be added here).
    fn kind(what: &Observed) -> usize {
        match what {
            Observed::Synced { .. } => 0,
            Observed::Taints { .. } => 1,
            Observed::Scheduled { .. } => 2,
            Observed::Due { .. } => 3,
            Observed::Cancelled { .. } => 4,
            Observed::Done { .. } => 5,
        }
    }
}
