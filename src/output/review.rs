//! `review`'s words: each pod the controller deleted or should have, with when it was due, when it
//! went and the verdict, as a table or the `Review` document (`-o json|yaml`), then the controller's
//! leader changes and the record's gaps (docs/review.md, "`review`").

use std::io::{self, Write};

use serde::Serialize;

use super::human::{count, duration, printable, rfc3339};
use super::node_taints::{TaintCounts, TaintDoc, verdict_name as taint_verdict, write_node_taints};
use super::settings::SettingsDoc;
use super::wire::{API_VERSION, millis_seconds};
use crate::engine::lifecycle::Settings;
use crate::engine::queue::Cause;
use crate::engine::review::{Deleter, PodReview, Review, Verdict};
use crate::engine::taint_review::TaintReview;
use crate::engine::time::Timestamp;

/// A review as printed: what the engine found, and of what record.
pub struct Reviewed<'a> {
    /// What the review found.
    pub review: &'a Review,
    /// The record's lines read.
    pub lines: usize,
    /// Its files.
    pub files: usize,
    /// Deletions within this many nanoseconds of when they were due are on time.
    pub slack: i128,
    /// Each node's condition taint, judged.
    pub taints: &'a [TaintReview],
    /// The node Lease renewals the record holds.
    pub renewals: usize,
    /// The node lifecycle controller's settings the windows rest on.
    pub settings: &'a Settings,
    /// Why they are assumed, in one line, when some are.
    pub assumed: Option<&'a str>,
}

/// A verdict's name in the document and the table.
#[must_use]
pub fn verdict_name(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::OnTime => "on-time",
        Verdict::Late(_) => "late",
        Verdict::Early(_) => "early",
        Verdict::NotDeleted => "not-deleted",
        Verdict::NothingDue => "nothing-due",
        Verdict::Pending => "pending",
        Verdict::DeletedByOther => "by-other",
    }
}

/// A verdict in words: `late by 41s`.
fn verdict_words(verdict: Verdict) -> String {
    match verdict {
        Verdict::Late(nanos) => format!("late by {}", rounded(nanos)),
        Verdict::Early(nanos) => format!("early by {}", rounded(nanos)),
        other => verdict_name(other).replace('-', " "),
    }
}

/// How long from `from` to `to`, to the nearest second.
fn t_since(to: Timestamp, from: Timestamp) -> String {
    rounded(to.nanos_since(from))
}

/// A lateness to the nearest second (to the millisecond below one).
fn rounded(nanos: i128) -> String {
    let nanos = nanos.unsigned_abs();
    let half = 500_000_000;
    duration(if nanos < 2 * half { nanos } else { nanos + half })
}

fn deleter_name(by: &Deleter) -> &str {
    match by {
        Deleter::Controller => "taint-eviction-controller",
        Deleter::Other(name) => name,
        Deleter::Unknown => "unknown",
    }
}

/// `review.pods[]`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PodDoc<'a> {
    namespace: &'a str,
    name: &'a str,
    uid: String,
    node: &'a str,
    verdict: &'static str,
    /// When it was due; `null`: nothing was.
    due: Option<String>,
    /// When its countdown started.
    countdown_from: Option<String>,
    /// `tolerationSeconds` that ran out; `null`: no toleration, deleted at once.
    toleration_seconds: Option<i64>,
    /// When its deletion started; `null`: it was not deleted.
    deleted: Option<String>,
    /// `taint-eviction-controller`, another's name, or `unknown`.
    deleted_by: Option<&'a str>,
    /// Deleted minus due, in seconds (to the millisecond): positive late, negative early.
    off_by_seconds: Option<f64>,
    in_gap: bool,
    /// When it was due before the controller's restart started its countdown again; `null`: no
    /// restart moved it.
    due_before_restart: Option<String>,
}

impl<'a> From<&'a PodReview> for PodDoc<'a> {
    fn from(review: &'a PodReview) -> Self {
        let due = review.due.map(|work| work.fire);
        let deleted = review.deleted.as_ref().map(|(at, _)| *at);
        let off = match (due, deleted) {
            (Some(due), Some(deleted)) => Some(millis_seconds(deleted.nanos_since(due))),
            _ => None,
        };
        Self {
            namespace: review.pod.key.namespace(),
            name: review.pod.key.name(),
            uid: review.pod.uid.text().as_str().to_owned(),
            node: review.pod.node.as_str(),
            verdict: verdict_name(review.verdict),
            due: due.map(instant),
            countdown_from: review.due.map(|work| instant(work.created)),
            toleration_seconds: review.due.and_then(|work| match work.cause {
                Cause::Expired { seconds } => Some(seconds),
                Cause::Untolerated => None,
            }),
            deleted: deleted.map(instant),
            deleted_by: review.deleted.as_ref().map(|(_, by)| deleter_name(by)),
            off_by_seconds: off,
            in_gap: review.in_gap,
            due_before_restart: review.due_before_restart.map(instant),
        }
    }
}

fn instant(at: Timestamp) -> String {
    rfc3339(at)
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Counts {
    on_time: usize,
    late: usize,
    early: usize,
    not_deleted: usize,
    nothing_due: usize,
    pending: usize,
    by_other: usize,
}

impl Counts {
    fn of(review: &Review) -> Self {
        let n = |wanted: &str| review.pods.iter().filter(|p| verdict_name(p.verdict) == wanted).count();
        Self {
            on_time: n("on-time"),
            late: n("late"),
            early: n("early"),
            not_deleted: n("not-deleted"),
            nothing_due: n("nothing-due"),
            pending: n("pending"),
            by_other: n("by-other"),
        }
    }

    /// `9 on time, 2 late, 1 not deleted`: the verdicts found, in the table's order.
    fn words(&self) -> String {
        let all = [
            (self.on_time, "on time"),
            (self.late, "late"),
            (self.early, "early"),
            (self.not_deleted, "not deleted"),
            (self.nothing_due, "deleted with nothing due"),
            (self.by_other, "deleted by another"),
            (self.pending, "due after the record"),
        ];
        let said: Vec<String> =
            all.iter().filter(|(n, _)| *n > 0).map(|(n, what)| format!("{} {what}", count(*n))).collect();
        if said.is_empty() { "nothing due, nothing deleted".to_owned() } else { said.join(", ") }
    }
}

#[derive(Serialize)]
struct Span {
    from: String,
    to: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TermDoc<'a> {
    at: String,
    holder: &'a str,
    /// When the leader before it last renewed its term: no controller acted from then to `at`.
    previous_renewed: Option<String>,
    /// `at` less that, in seconds (to the millisecond).
    without_leader_seconds: Option<f64>,
}

/// The `Review` document.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewDoc<'a> {
    kind: &'static str,
    api_version: &'static str,
    /// When the record starts and ends.
    record: Option<Span>,
    lines: usize,
    files: usize,
    slack_seconds: f64,
    counts: Counts,
    pods: Vec<PodDoc<'a>>,
    taint_counts: TaintCounts,
    node_taints: Vec<TaintDoc<'a>>,
    node_lease_renewals: usize,
    controller_settings: SettingsDoc,
    /// Why the settings are assumed, when some are; else `null`.
    settings_assumed: Option<&'a str>,
    leader_changes: Vec<TermDoc<'a>>,
    gaps: Vec<Span>,
}

impl<'a> ReviewDoc<'a> {
    /// The document of `reviewed`.
    #[must_use]
    pub fn new(reviewed: &Reviewed<'a>) -> Self {
        let review = reviewed.review;
        Self {
            kind: "Review",
            api_version: API_VERSION,
            record: review.span.map(|(from, to)| Span { from: instant(from), to: instant(to) }),
            lines: reviewed.lines,
            files: reviewed.files,
            slack_seconds: millis_seconds(reviewed.slack),
            counts: Counts::of(review),
            pods: review.pods.iter().map(PodDoc::from).collect(),
            taint_counts: TaintCounts::of(reviewed.taints),
            node_taints: reviewed.taints.iter().map(TaintDoc::from).collect(),
            node_lease_renewals: reviewed.renewals,
            controller_settings: SettingsDoc::from(reviewed.settings),
            settings_assumed: reviewed.assumed,
            leader_changes: review
                .terms
                .iter()
                .map(|t| TermDoc {
                    at: instant(t.at),
                    holder: &t.holder,
                    previous_renewed: t.last_renewed.map(instant),
                    without_leader_seconds: t.last_renewed.map(|last| millis_seconds(t.at.nanos_since(last))),
                })
                .collect(),
            gaps: review.gaps.iter().map(|&(from, to)| Span { from: instant(from), to: instant(to) }).collect(),
        }
    }
}

/// `2 node taints: 1 within the window, 1 late`.
fn taint_summary(taints: &[TaintReview]) -> String {
    let all = [
        ("within", "within the window"),
        ("early", "early"),
        ("late", "late"),
        ("not-tainted", "not tainted"),
        ("by-hand", "by hand"),
        ("not-seen-silent", "not judged"),
        ("held", "not judged (held back)"),
    ];
    let said: Vec<String> = all
        .iter()
        .map(|(name, words)| (taints.iter().filter(|t| taint_verdict(t.verdict) == *name).count(), words))
        .filter(|(n, _)| *n > 0)
        .map(|(n, words)| format!("{} {words}", count(n)))
        .collect();
    let noun = if taints.len() == 1 { "node taint" } else { "node taints" };
    format!("{} {noun}: {}", count(taints.len()), said.join(", "))
}

/// The table: the heading, one row a pod, then the leader changes and the gaps.
///
/// # Errors
/// The writer's.
pub fn write_review(reviewed: &Reviewed<'_>, out: &mut impl Write) -> io::Result<()> {
    let review = reviewed.review;
    let counts = Counts::of(review);
    writeln!(out, "{} pods: {}", count(review.pods.len()), counts.words())?;
    let span = review.span.map_or_else(
        || "an empty record".to_owned(),
        |(from, to)| format!("record {} to {}", instant(from), instant(to)),
    );
    let terms = match review.terms.len() {
        0 => "no leader change".to_owned(),
        1 => "1 leader change".to_owned(),
        n => format!("{n} leader changes"),
    };
    let gaps = match review.gaps.len() {
        0 => "no gap".to_owned(),
        1 => "1 gap".to_owned(),
        n => format!("{n} gaps"),
    };
    writeln!(out, "{span}: {} lines in {} file(s); {terms}; {gaps}", count(reviewed.lines), reviewed.files)?;
    if !reviewed.taints.is_empty() {
        writeln!(out, "{}", taint_summary(reviewed.taints))?;
    }
    if !review.pods.is_empty() {
        let rows: Vec<[String; 5]> = review
            .pods
            .iter()
            .map(|p| {
                let gap = if p.in_gap { " (in a gap of the record)" } else { "" };
                let moved = p.due_before_restart.zip(p.due).map_or_else(String::new, |(before, due)| {
                    format!(
                        " (due at {} before a restart: {} later)",
                        instant(before),
                        rounded(due.fire.nanos_since(before))
                    )
                });
                [
                    printable(&p.pod.key.to_string()).into_owned(),
                    printable(p.pod.node.as_str()).into_owned(),
                    p.due.map_or_else(|| "-".to_owned(), |w| instant(w.fire)),
                    p.deleted.as_ref().map_or_else(|| "-".to_owned(), |(at, _)| instant(*at)),
                    format!("{}{moved}{gap}", verdict_words(p.verdict)),
                ]
            })
            .collect();
        let header = ["POD", "NODE", "DUE", "DELETED", "VERDICT"].map(str::to_owned);
        let mut widths = [0; 4];
        for row in std::iter::once(&header).chain(&rows) {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(cell.chars().count());
            }
        }
        writeln!(out)?;
        for row in std::iter::once(&header).chain(&rows) {
            for (width, cell) in widths.iter().zip(row) {
                write!(out, "{cell:<width$}   ")?;
            }
            writeln!(out, "{}", row[4])?;
        }
    }
    write_node_taints(reviewed.taints, reviewed.renewals > 0, out)?;
    if !review.terms.is_empty() {
        writeln!(out, "\nleader changes (a restart of the controller: every countdown started again):")?;
        for term in &review.terms {
            let without = term.last_renewed.map_or_else(String::new, |last| {
                let span = t_since(term.at, last);
                format!(": no leader since {} ({span})", instant(last))
            });
            writeln!(out, "  {}  {}{without}", instant(term.at), printable(&term.holder))?;
        }
    }
    if !review.gaps.is_empty() {
        writeln!(out, "\ngaps (nothing seen; a verdict across one is not known):")?;
        for (from, to) in &review.gaps {
            writeln!(
                out,
                "  {} to {} ({})",
                instant(*from),
                instant(*to),
                duration(to.nanos_since(*from).unsigned_abs())
            )?;
        }
    }
    Ok(())
}
