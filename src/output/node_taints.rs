//! `review`'s node taints: each `unreachable`/`not-ready` NoExecute taint set beside the window the
//! node lifecycle prediction gave when its node went silent, as the table's section and the
//! document's `nodeTaints` (docs/review.md, "Node taints").

use std::io::{self, Write};

use serde::Serialize;

use super::human::{duration, printable, rfc3339};
use super::wire::millis_seconds;
use crate::engine::lifecycle::ZoneState;
use crate::engine::taint_review::{TaintReview, TaintVerdict, Why, Writer};
use crate::engine::time::Timestamp;

/// A verdict's name in the document.
#[must_use]
pub fn verdict_name(verdict: TaintVerdict) -> &'static str {
    match verdict {
        TaintVerdict::Within => "within",
        TaintVerdict::Early(_) => "early",
        TaintVerdict::Late(_) => "late",
        TaintVerdict::NotTainted => "not-tainted",
        TaintVerdict::HandMade => "by-hand",
        TaintVerdict::NotSeenSilent => "not-seen-silent",
        TaintVerdict::Held(_) => "held",
    }
}

/// A lateness to the nearest second (to the millisecond below one).
fn rounded(nanos: i128) -> String {
    let nanos = nanos.unsigned_abs();
    let half = 500_000_000;
    duration(if nanos < 2 * half { nanos } else { nanos + half })
}

fn state_words(state: ZoneState) -> &'static str {
    match state {
        ZoneState::Normal => "normal",
        ZoneState::PartialDisruption => "partially disrupted",
        ZoneState::FullDisruption => "fully disrupted",
    }
}

/// What moved a taint, in words: `zone eu-1c partially disrupted (4/6 not ready): 0.01/s`.
fn why_words(why: &Why) -> String {
    match why {
        Why::Zone { zone, state, not_ready, nodes, rate } => {
            let rate = if *rate > 0.0 { format!("{rate}/s") } else { "no taints".to_owned() };
            format!("zone {} {} ({not_ready}/{nodes} not ready): {rate}", printable(zone.name()), state_words(*state))
        }
        Why::Restart { at, last_renewed } => {
            let since = last_renewed.map_or_else(String::new, |last| {
                format!(", no leader since {} ({})", rfc3339(last), rounded(at.nanos_since(last)))
            });
            format!("a new leader at {}{since}: every grace started again", rfc3339(*at))
        }
    }
}

fn verdict_words(review: &TaintReview) -> String {
    let said = match review.verdict {
        TaintVerdict::Within => "within the window".to_owned(),
        TaintVerdict::Early(nanos) => format!("early by {}", rounded(nanos)),
        TaintVerdict::Late(nanos) => format!("late by {}", rounded(nanos)),
        TaintVerdict::NotTainted => "not tainted".to_owned(),
        TaintVerdict::HandMade => match &review.by {
            Some(Writer::Other(name)) => format!("by hand ({}), not judged", printable(name)),
            _ => "by hand (not the node's Ready condition), not judged".to_owned(),
        },
        TaintVerdict::NotSeenSilent => "not judged: the record never showed the node silent before it".to_owned(),
        TaintVerdict::Held(reason) => format!("not judged: held back ({}) when foreseen", reason.as_str()),
    };
    let why: Vec<String> = review.why.iter().map(why_words).collect();
    let why = if why.is_empty() { String::new() } else { format!(" ({})", why.join("; ")) };
    let gap = if review.in_gap { " (in a gap of the record)" } else { "" };
    format!("{said}{why}{gap}")
}

/// A window's edges to the millisecond, widened: the earliest down, the latest up.
fn earliest(at: Timestamp) -> Timestamp {
    Timestamp::from_nanos(at.as_nanos().div_euclid(MS) * MS)
}

fn latest(at: Timestamp) -> Timestamp {
    Timestamp::from_nanos((at.as_nanos() + MS - 1).div_euclid(MS) * MS)
}

const MS: i128 = 1_000_000;

fn expected(review: &TaintReview) -> String {
    match review.foreseen {
        Some(f) => match f.latest {
            Some(last) => format!("{} to {}", rfc3339(earliest(f.earliest)), rfc3339(latest(last))),
            None => format!("from {}", rfc3339(earliest(f.earliest))),
        },
        None => "-".to_owned(),
    }
}

/// The table's section: one row a taint; `leases` says whether the record held node Lease
/// renewals (without, each row's silence rests on its status heartbeat, said once above it).
///
/// # Errors
/// The writer's.
pub fn write_node_taints(taints: &[TaintReview], leases: bool, out: &mut impl Write) -> io::Result<()> {
    if taints.is_empty() {
        return Ok(());
    }
    writeln!(out, "\nnode taints (against when the node lifecycle controller should have added them):")?;
    let rows: Vec<[String; 5]> = taints
        .iter()
        .map(|r| {
            let lease = if leases && r.without_lease { " (no Lease: silence read from its status)" } else { "" };
            [
                printable(r.node.as_str()).into_owned(),
                r.key.key().trim_start_matches("node.kubernetes.io/").to_owned(),
                expected(r),
                r.added.map_or_else(|| "-".to_owned(), rfc3339),
                format!("{}{lease}", verdict_words(r)),
            ]
        })
        .collect();
    let header = ["NODE", "TAINT", "EXPECTED", "ADDED", "VERDICT"].map(str::to_owned);
    let mut widths = [0; 4];
    for row in std::iter::once(&header).chain(&rows) {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    for row in std::iter::once(&header).chain(&rows) {
        for (width, cell) in widths.iter().zip(row) {
            write!(out, "{cell:<width$}   ")?;
        }
        writeln!(out, "{}", row[4])?;
    }
    Ok(())
}

/// `nodeTaints[].expected`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ExpectedDoc {
    /// When the prediction was made: the node's silence.
    foreseen_at: String,
    /// To the millisecond, rounded down.
    earliest: String,
    /// To the millisecond, rounded up; `null`: its zone may hold it back for good.
    latest: Option<String>,
    basis: &'static str,
}

/// `nodeTaints[].zone`'s state when not normal.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ZoneDoc<'a> {
    zone: &'a str,
    state: &'static str,
    not_ready: usize,
    nodes: usize,
    rate_per_second: f64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RestartDoc {
    at: String,
    previous_renewed: Option<String>,
}

/// `nodeTaints[]`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaintDoc<'a> {
    node: &'a str,
    zone: &'a str,
    taint: &'static str,
    verdict: &'static str,
    /// When the record saw it added; `null`: not added.
    added: Option<String>,
    /// `node-lifecycle-controller`, a user's name, or `null` (the record does not say).
    added_by: Option<&'a str>,
    last_heartbeat: Option<String>,
    without_lease: bool,
    expected: Option<ExpectedDoc>,
    /// Added less the window's edge, in seconds: positive late, negative early; else `null`.
    off_by_seconds: Option<f64>,
    held_reason: Option<&'static str>,
    zone_state: Option<ZoneDoc<'a>>,
    restarts: Vec<RestartDoc>,
    in_gap: bool,
}

impl<'a> From<&'a TaintReview> for TaintDoc<'a> {
    fn from(review: &'a TaintReview) -> Self {
        let zone_state = review.why.iter().find_map(|why| match why {
            Why::Zone { zone, state, not_ready, nodes, rate } => Some(ZoneDoc {
                zone: zone.name(),
                state: state.as_str(),
                not_ready: *not_ready,
                nodes: *nodes,
                // As the f32 reads (`0.01`), not its f64 widening.
                rate_per_second: rate.to_string().parse().unwrap_or_default(),
            }),
            Why::Restart { .. } => None,
        });
        let restarts = review
            .why
            .iter()
            .filter_map(|why| match why {
                Why::Restart { at, last_renewed } => {
                    Some(RestartDoc { at: rfc3339(*at), previous_renewed: last_renewed.map(rfc3339) })
                }
                Why::Zone { .. } => None,
            })
            .collect();
        Self {
            node: review.node.as_str(),
            zone: review.zone.name(),
            taint: review.key.key(),
            verdict: verdict_name(review.verdict),
            added: review.added.map(rfc3339),
            added_by: review.by.as_ref().map(|by| match by {
                Writer::Controller => "node-lifecycle-controller",
                Writer::Other(name) => name,
            }),
            last_heartbeat: review.heartbeat.map(rfc3339),
            without_lease: review.without_lease,
            expected: review.foreseen.map(|f| ExpectedDoc {
                foreseen_at: rfc3339(f.at),
                earliest: rfc3339(earliest(f.earliest)),
                latest: f.latest.map(|last| rfc3339(latest(last))),
                basis: f.basis.as_str(),
            }),
            off_by_seconds: match review.verdict {
                TaintVerdict::Late(nanos) => Some(millis_seconds(nanos)),
                TaintVerdict::Early(nanos) => Some(-millis_seconds(nanos)),
                _ => None,
            },
            held_reason: match review.verdict {
                TaintVerdict::Held(reason) => Some(reason.as_str()),
                _ => None,
            },
            zone_state,
            restarts,
            in_gap: review.in_gap,
        }
    }
}

/// `taintCounts`: the node taints by verdict.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaintCounts {
    within: usize,
    early: usize,
    late: usize,
    not_tainted: usize,
    by_hand: usize,
    not_judged: usize,
}

impl TaintCounts {
    /// The counts of `taints`.
    #[must_use]
    pub fn of(taints: &[TaintReview]) -> Self {
        let n = |wanted: &[&str]| taints.iter().filter(|t| wanted.contains(&verdict_name(t.verdict))).count();
        Self {
            within: n(&["within"]),
            early: n(&["early"]),
            late: n(&["late"]),
            not_tainted: n(&["not-tainted"]),
            by_hand: n(&["by-hand"]),
            not_judged: n(&["not-seen-silent", "held"]),
        }
    }
}
