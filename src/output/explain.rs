//! `explain`: for one pod, which toleration covers each NoExecute taint, why the others do not, and
//! what that means for its deadline.

use std::io::{self, Write};

use serde::Serialize;

use super::human::{countdown, printable_display as shown, rfc3339, std_duration};
use super::human::{short_key, time_of_day, until};
use super::json::{write_json, write_yaml};
use super::settings::{SettingsDoc, from_words};
use super::wire::{API_VERSION, ClockDoc, DeviceDoc, TaintDoc, WrittenDoc, basis_name, verdict_name};
use crate::engine::devices::{ClaimSeen, DeviceEviction, DeviceReport, DeviceTolerance, Via};
use crate::engine::explain::TaintMatch;
use crate::engine::lifecycle::{Basis, ConditionTaint, HeldReason, Ready, Settings, ZoneForecast, ZoneState};
use crate::engine::model::{NodeName, Operator, Taint, Toleration};
use crate::engine::plan::{Basis as PlanBasis, EditedDeadline, NodeLifecycle, PodPlan, TolerationsEdited, Verdict};
use crate::engine::snapshot::TaintsWritten;
use crate::engine::time::Timestamp;

use crate::engine::tolerate::{Mismatch, TolerationWindow, integer};

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
    pub plan: &'a PodPlan<'a>,
    /// When the node's taints were last written, when one has no `timeAdded` and the input says.
    pub taints_written: Option<&'a TaintsWritten>,
    /// When the node's Events say it became not ready: `None` when the input holds no events (a
    /// dump), `Some(None)` when they say nothing of a not-ready spell.
    pub not_ready: Option<Option<Timestamp>>,
    /// Each NoExecute taint of the node at `now`, matched.
    pub matches: Vec<TaintMatch>,
    /// The window the used tolerations give now (`None` when some taint is untolerated or there are
    /// no taints).
    pub window: Option<TolerationWindow>,
    /// What the node lifecycle controller is expected to do to the node; `None` when not predicted.
    pub before_taint: Option<BeforeTaint<'a>>,
    /// How the control plane's time was read; `None` for a dump or with `--now`.
    pub clock: Option<ClockDoc>,
    /// The device-taint controller's view of the pod, and the minor version it follows; `None` when
    /// the pod uses no DRA claim.
    pub devices: Option<(DeviceReport, u32)>,
}

/// The chain before a predicted taint: heartbeat, `Ready=Unknown`, the zone's queue, the taint, the
/// toleration, the deletion (or why the controller holds the taint back).
#[derive(Debug)]
pub struct BeforeTaint<'a> {
    /// The node's health and forecast.
    pub node: &'a NodeLifecycle,
    /// Its zone's state now.
    pub zone: Option<ZoneForecast>,
    /// The controller's settings the prediction used, and where each came from.
    pub settings: Settings,
    /// The toleration (index) that tolerates the predicted taint; `None` when none does.
    pub used: Option<usize>,
    /// The node goes down in a what-if (`--down`): its kubelet stops heartbeating at `now`.
    pub down: bool,
}

impl BeforeTaint<'_> {
    /// When the controller marks (or marked) the node `Ready=Unknown`: it queues the node one pass
    /// after that, so about a monitor period before the taint's window; the earliest, and the
    /// latest when the window closes.
    fn unknown_window(&self) -> Option<(Timestamp, Option<Timestamp>)> {
        let taint = self.node.forecast.taint?;
        let period = -i64::try_from(self.settings.flags.node_monitor_period.as_nanos()).unwrap_or(0);
        (taint.basis == Basis::LostHeartbeat && self.node.forecast.ready == Some(Ready::True))
            .then(|| (taint.earliest.add_nanos(period), taint.latest.map(|latest| latest.add_nanos(period))))
    }

    /// The earliest of [`unknown_window`](Self::unknown_window).
    fn unknown_expected(&self) -> Option<Timestamp> {
        self.unknown_window().map(|(earliest, _)| earliest)
    }
}

/// The chain's lines (without the heading).
fn chain_lines(b: &BeforeTaint<'_>, e: &Explanation<'_>) -> Vec<String> {
    let forecast = &b.node.forecast;
    let mut lines = Vec::new();
    let heartbeat = forecast.last_heartbeat.map_or_else(
        || "none seen".to_owned(),
        |at| format!("{} ({} ago)", rfc3339(at), countdown(Some(at), e.now).trim_start_matches("overdue by ")),
    );
    if b.down {
        lines.push(format!(
            "node down (what-if, --down): its kubelet stops heartbeating at {} at the latest",
            rfc3339(e.now)
        ));
        lines.push(format!("last heartbeat recorded: {heartbeat}; the last one falls between it and then"));
    } else {
        lines.push(format!("last heartbeat: {heartbeat}"));
    }
    let ready = forecast.ready.map_or("never posted", Ready::as_str);
    match (forecast.ready, b.node.ready_since, b.unknown_window()) {
        // A node going down: its last heartbeat spans up to now, and so does the instant.
        (Some(Ready::True), _, Some((at, Some(latest)))) if b.down => {
            lines.push(format!(
                "Ready=Unknown expected {}–{} ({} of silence after the controller's pass that saw the last heartbeat; \
                 the grace period {})",
                time_of_day(at, false),
                until(at, latest),
                std_duration(b.settings.flags.node_monitor_grace_period),
                from_words(b.settings.sources.node_monitor_grace_period)
            ));
        }
        (Some(Ready::True), _, Some((at, _))) => lines.push(format!(
            "Ready=Unknown expected about {} ({} of silence after the controller's pass that saw the heartbeat; the \
             grace period {})",
            time_of_day(at, false),
            std_duration(b.settings.flags.node_monitor_grace_period),
            from_words(b.settings.sources.node_monitor_grace_period)
        )),
        (_, Some(since), _) => lines.push(format!("Ready={ready} since {}", time_of_day(since, false))),
        _ => lines.push(format!("Ready={ready}")),
    }
    if let Some(held) = &forecast.held {
        let why = match held.reason {
            HeldReason::PartialDisruption => match &b.zone {
                Some(z) if z.state == ZoneState::PartialDisruption => {
                    format!("zone {} is partially disrupted ({}/{} not ready)", held.zone, z.not_ready, z.nodes)
                }
                _ => format!("zone {} is about to be partially disrupted", held.zone),
            },
            HeldReason::AllZonesDown => "every zone is fully disrupted".to_owned(),
            HeldReason::Recovered => {
                lines.push(
                    "held: the node is back (Ready=True, heartbeating): the controller removes its taint at its \
                     next pass, and the deletions not due by then with it"
                        .to_owned(),
                );
                return lines;
            }
            HeldReason::NoEvictionRate => format!(
                "--node-eviction-rate is 0: zone {}'s queue started with one taint to give (a token bucket of rate 0 \
                 and burst 1), and gave it",
                held.zone
            ),
        };
        lines.push(format!(
            "held: {why}: the controller adds no NoExecute taint here while that holds, so no taint comes"
        ));
        return lines;
    }
    let Some(taint) = forecast.taint else { return lines };
    let rate = b.zone.as_ref().map_or_else(String::new, |z| {
        format!(", zone {} (state {}, {} taints/s)", z.zone, z.state.as_str(), z.rate_per_second)
    });
    let ahead = match taint.queued_with {
        0 => "no other node ahead".to_owned(),
        // A zone predicted at scale (docs/node-lifecycle.md, "At scale").
        n if taint.drained => format!("one of {} nodes its zone's queue serves in an order nobody sees", n + 1),
        1 => "1 other node may be tainted first".to_owned(),
        n => format!("{n} other nodes may be tainted first"),
    };
    lines.push(format!("queued: {ahead}{rate}"));
    let when = match taint.latest {
        Some(latest) => format!("{}–{}", time_of_day(taint.earliest, false), until(taint.earliest, latest)),
        None => format!("from {} unless its zone holds it back", time_of_day(taint.earliest, false)),
    };
    lines.push(format!("{} taint expected {when} ({})", short_key(taint.key), taint.basis.as_str()));
    lines.push(match (b.used, e.plan.verdict) {
        (Some(i), Verdict::Never) => {
            format!("toleration: tolerations[{i}] {} tolerates it forever", shown(&e.tolerations[i]))
        }
        (Some(i), _) => format!("toleration: tolerations[{i}] {}", shown(&e.tolerations[i])),
        (None, _) => "toleration: none matches: the pod is deleted as soon as the taint comes".to_owned(),
    });
    if e.plan.basis == Some(PlanBasis::PredictedTaint)
        && let Some(at) = e.plan.evict_at
    {
        let end = e.plan.evict_at_latest.map_or_else(|| "?".to_owned(), |latest| until(at, latest));
        lines.push(format!("deletion expected {}–{end}", time_of_day(at, false)));
    }
    lines
}

/// Why `toleration` does not tolerate `taint`, with the values compared where an operator compares.
fn mismatch_text(why: &Mismatch, toleration: &Toleration, taint: &Taint) -> String {
    let op = toleration.operator.as_str();
    match why {
        Mismatch::Effect => "effect differs".to_owned(),
        Mismatch::Key => "key differs".to_owned(),
        Mismatch::Value => "value differs (operator Equal)".to_owned(),
        Mismatch::NotAnInteger => {
            let (whose, value) = match integer(&taint.value) {
                None => ("the taint's", &taint.value),
                Some(_) => ("the toleration's", &toleration.value),
            };
            format!("operator {op} compares integers, and {whose} value {value:?} is not one")
        }
        Mismatch::Comparison => {
            let relation = if toleration.operator == Operator::Lt { "less" } else { "greater" };
            format!("{} is not {relation} than {} (operator {op})", taint.value, toleration.value)
        }
        Mismatch::Operator if matches!(op, "Lt" | "Gt") => format!(
            "operator {op} matches nothing with kube-controller-manager's TaintTolerationComparisonOperators gate off \
             (--feature-gates)"
        ),
        Mismatch::Operator => "operator matches nothing (only Equal, Exists, Lt and Gt do)".to_owned(),
    }
}

/// ` (950 > 750)` when the used toleration compares values, else nothing.
fn comparison(toleration: &Toleration, taint: &Taint) -> String {
    match toleration.operator {
        Operator::Lt => format!(" ({} < {})", taint.value, toleration.value),
        Operator::Gt => format!(" ({} > {})", taint.value, toleration.value),
        _ => String::new(),
    }
}

/// The chain for each claim the pod names: pod → claim → allocated device → taint → the claim's
/// toleration → deadline, with the quirks that decided it.
fn device_lines(report: &DeviceReport) -> Vec<String> {
    let mut lines = Vec::new();
    for ClaimSeen { uses, skipped } in &report.claims {
        let via = match uses.via {
            Via::Name => "resourceClaimName",
            Via::Template => "resourceClaimTemplateName, status.resourceClaimStatuses",
            Via::Extended => "status.extendedResourceClaimStatus",
        };
        let claim = uses.claim.as_deref().unwrap_or("?");
        match skipped {
            Some(why) => lines.push(format!("claim {} → {claim} ({via}): not counted: {}", uses.entry, why.as_str())),
            None => lines.push(format!("claim {} → {claim} ({via})", uses.entry)),
        }
        let taints = report.evictions.iter().filter(|e| uses.claim.as_deref() == Some(&*e.claim));
        for eviction in taints.filter(|_| skipped.is_none()) {
            lines.extend(eviction_lines(eviction));
        }
    }
    if report.evictions.is_empty() {
        lines.push("no NoExecute taint on an allocated device".to_owned());
    }
    lines
}

fn eviction_lines(e: &DeviceEviction) -> Vec<String> {
    let since =
        e.taint.time_added.map_or_else(|| "without timeAdded".to_owned(), |at| format!("since {}", rfc3339(at)));
    let mut lines = vec![
        format!("  device {} (request {}): taint {} {since}", e.device, e.request, e.taint),
        format!("    set by {} \"{}\"", e.source.as_str(), e.source_name),
    ];
    lines.push(match (e.tolerance, e.deadline) {
        (DeviceTolerance::Forever, _) => "    tolerated forever by the claim's allocation result".to_owned(),
        (_, None) => "    no deadline: the taint has no timeAdded (the controller ignores it)".to_owned(),
        (DeviceTolerance::For(seconds), Some(at)) => {
            format!("    tolerated for {seconds}s by the claim's allocation result: deleted at {}", rfc3339(at))
        }
        (DeviceTolerance::Untolerated, Some(at)) => {
            format!("    untolerated: deleted at its timeAdded, {}", rfc3339(at))
        }
    });
    if e.effectless_ignored {
        lines.push(
            "    note: a toleration without an effect would match it, but the controller reads only NoExecute ones"
                .to_owned(),
        );
    }
    if e.uncopied {
        lines.push(
            "    note: the claim's request has tolerations, but its allocation result holds none (the scheduler \
             copies them only from Kubernetes 1.35), and the controller reads only that copy"
                .to_owned(),
        );
    }
    lines
}

/// Writes the explanation as text, each line wrapped at word boundaries to `width` when given (the
/// terminal's, as the table is fitted), continued two columns further in.
pub fn render_text(e: &Explanation<'_>, width: Option<usize>, out: &mut impl Write) -> io::Result<()> {
    let mut text = Vec::new();
    render_lines(e, &mut text)?;
    let text = String::from_utf8_lossy(&text);
    for line in text.lines() {
        match width {
            Some(width) => wrap(line, width).iter().try_for_each(|part| writeln!(out, "{part}"))?,
            None => writeln!(out, "{line}")?,
        }
    }
    Ok(())
}

/// `line` cut at spaces into parts of at most `width` columns, the parts after the first indented two
/// columns more than the line; a word longer than that stays whole.
fn wrap(line: &str, width: usize) -> Vec<String> {
    if super::redraw::visible_width(line) <= width {
        return vec![line.to_owned()];
    }
    let indent = line.len() - line.trim_start().len();
    let continued = " ".repeat(indent + 2);
    let mut parts = Vec::new();
    let mut current = line[..indent].to_owned();
    let mut empty = true;
    for word in line[indent..].split(' ') {
        let needed = super::redraw::visible_width(&current) + usize::from(!empty) + super::redraw::visible_width(word);
        if !empty && needed > width {
            parts.push(std::mem::replace(&mut current, continued.clone()));
            empty = true;
        }
        if !empty {
            current.push(' ');
        }
        current.push_str(word);
        empty = false;
    }
    parts.push(current);
    parts
}

/// What explain says of a pod's tolerations written after its countdown began, and of its deadline.
fn edited_note(edited: &TolerationsEdited) -> String {
    let head = format!(
        "{} wrote the pod's tolerations at {}, after this countdown began: the controller keeps the countdown it \
         began, with the tolerationSeconds of then, which the pod no longer shows (its managedFields say when, \
         not what).",
        edited.written.manager,
        rfc3339(edited.written.at)
    );
    let owner = edited.owner.as_ref().map_or_else(String::new, |owner| format!("{}/{}", owner.kind(), owner.name()));
    let unknown = "The deadline above counts with the tolerationSeconds of now; the real one cannot be known from \
                   the pod";
    let tail = match edited.deadline {
        EditedDeadline::OwnerTemplate => format!(
            "{owner}'s pod template holds the tolerations the pod was made with (the pod's but for \
             tolerationSeconds): the deadline above is the countdown counted with them from its start."
        ),
        EditedDeadline::NoOwner => {
            format!("{unknown}: it has no owner template to recover the value the countdown used.")
        }
        EditedDeadline::OwnerKind => format!("{unknown}: its owner {owner} has no pod template this tool reads."),
        EditedDeadline::OwnerUnread => format!("{unknown}: its owner {owner} could not be read."),
        EditedDeadline::TemplateDiffers => format!(
            "{unknown}: {owner}'s pod template differs from its tolerations in more than tolerationSeconds (the \
             template changed since, or the pod was edited otherwise)."
        ),
        EditedDeadline::AddedAtCreation => format!(
            "{unknown}: a toleration the API server added when the pod was made decides it, and {owner}'s pod \
             template does not hold its value."
        ),
        EditedDeadline::ForeverThen => format!(
            "{unknown}: with {owner}'s pod template it tolerated the taints forever, so its countdown began with an \
             edit."
        ),
    };
    format!("{head} {tail}")
}

/// What the clock's start rests on, when a taint has no `timeAdded` (docs/plan.md, "When the clock
/// started"): the write `managedFields` records, or nothing the input says.
fn basis_note(e: &Explanation<'_>) -> Option<String> {
    match (e.plan.basis?, e.taints_written) {
        _ if let Some(edited) = &e.plan.tolerations_edited => Some(edited_note(edited)),
        (PlanBasis::TaintWritten, Some(written)) => Some(format!(
            "The taint has no timeAdded: counted from when {} last wrote the node's taints (managedFields, \
             whole seconds: the controller began counting within the second after, or earlier if {} \
             wrote them again since).",
            written.manager, written.manager
        )),
        (PlanBasis::TaintRewritten, Some(written)) => Some(format!(
            "The taint has no timeAdded, and the node's taints were written again at {} by {} (a write that added \
             another taint, or the node lifecycle controller's): the taint was there before, so the controller \
             began counting before that write, and no earlier than the pod was bound; when exactly cannot be \
             known here. `run` deletes at the window's end, never before the controller would.",
            rfc3339(written.at),
            written.manager
        )),
        (PlanBasis::InputTaken, _) => Some(
            "The taint has no timeAdded and the dump does not say when it was written (`kubectl get -o json` \
             leaves out managedFields): counted from when the dump was taken (its newest heartbeat), the \
             latest it can have started; the controller may have started counting earlier, and the deadline \
             be earlier."
                .to_owned(),
        ),
        (PlanBasis::Now, _) if e.matches.iter().any(|m| m.taint.time_added.is_none()) => Some(
            "The taint has no timeAdded and the input does not say when it was written (`kubectl get -o json` \
             leaves out managedFields): counted from now; the controller may have started counting earlier, \
             and the deadline be earlier."
                .to_owned(),
        ),
        (PlanBasis::NodeNotReady, _) => {
            let since = e.not_ready.flatten().map_or_else(|| "?".to_owned(), rfc3339);
            Some(format!(
                "The node's Events say it became not ready at {since}, before its condition taint was added: the \
                 node lifecycle controller swapped its first not-ready or unreachable taint for this one when its \
                 Ready condition changed, and the controller kept the countdown it began with the first, added \
                 after the event and before the swap (its zone's queue may have held it back): the deadline is a \
                 window, and an enforcer acts at its end."
            ))
        }
        (PlanBasis::TaintTimeAdded, _)
            if e.not_ready.is_none()
                && e.matches
                    .iter()
                    .any(|m| m.taint.time_added.is_some() && ConditionTaint::from_key(&m.taint.key).is_some()) =>
        {
            Some(
                "The input holds no Events: if the node was not ready before it was unreachable (or the reverse), its \
                 taint was swapped and the countdown begun with the first runs on, so the deadline may be earlier; \
                 this cannot be known here."
                    .to_owned(),
            )
        }
        _ => None,
    }
}

/// Writes the explanation as text.
fn render_lines(e: &Explanation<'_>, out: &mut impl Write) -> io::Result<()> {
    let plan = e.plan;
    writeln!(out, "Pod {} (uid {}) on node {}", shown(plan.key()), shown(plan.uid()), shown(e.node))?;
    let deadline = match (plan.evict_at, plan.evict_at_latest) {
        (Some(at), Some(latest)) if matches!(plan.basis, Some(PlanBasis::NodeNotReady | PlanBasis::TaintRewritten)) => {
            format!(" {}–{} ({})", rfc3339(at), rfc3339(latest), countdown(Some(at), e.now))
        }
        (Some(at), _) => format!(" {} ({})", rfc3339(at), countdown(Some(at), e.now)),
        (None, _) => String::new(),
    };
    if plan.terminating() {
        // Being deleted already, whatever the controller decides of it (docs/output.md, "Verdicts").
        writeln!(out, "Verdict: terminating: its deletion was issued already")?;
        writeln!(out, "Controller's decision: {}{deadline}", verdict_name(plan.verdict))?;
    } else {
        writeln!(out, "Verdict: {}{deadline}", verdict_name(plan.verdict))?;
    }
    if let (Some(since), Some(basis)) = (plan.since, plan.basis) {
        writeln!(out, "Clock started: {} ({})", rfc3339(since), basis_name(basis))?;
    }
    if let Some(note) = basis_note(e) {
        writeln!(out, "  {}", super::human::printable(&note))?;
    }
    if let Some(since) = plan.stuck_since() {
        for line in super::table::stuck_lines(e.node.as_str(), &[(plan.key(), since)]) {
            writeln!(out, "{}", super::human::printable(&line))?;
        }
    }
    if let Some(before) = &e.before_taint
        && (before.node.forecast.taint.is_some() || before.node.forecast.held.is_some())
    {
        writeln!(out)?;
        if before.down {
            writeln!(out, "What if node {} went down now (the node lifecycle controller, predicted):", e.node)?;
        } else {
            writeln!(out, "Before the taint (the node lifecycle controller, predicted):")?;
        }
        for (n, line) in chain_lines(before, e).iter().enumerate() {
            writeln!(out, "  {}. {}", n + 1, super::human::printable(line))?;
        }
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
            let reason = mismatch_text(why, &e.tolerations[*i], &m.taint);
            writeln!(out, "       tolerations[{i}] {}: {}", shown(&e.tolerations[*i]), shown(&reason))?;
        }
        match m.used {
            Some(i) => {
                let compared = comparison(&e.tolerations[i], &m.taint);
                writeln!(out, "     used: tolerations[{i}] {}{}", shown(&e.tolerations[i]), shown(&compared))?;
            }
            None => writeln!(out, "     untolerated: no toleration matches")?,
        }
    }
    if let Some((report, minor)) = &e.devices {
        writeln!(out)?;
        writeln!(out, "DRA devices (the device-taint controller of Kubernetes 1.{minor}):")?;
        for line in device_lines(report) {
            writeln!(out, "  {}", super::human::printable(&line))?;
        }
    }
    writeln!(out)?;
    if plan.basis == Some(PlanBasis::DeviceTaint)
        && let Some(at) = plan.evict_at
    {
        writeln!(
            out,
            "Result: a device taint decides: the device-taint controller deletes the pod at {}, before any node taint \
             would.",
            rfc3339(at)
        )?;
        return Ok(());
    }
    match (&e.window, plan.verdict) {
        _ if e.matches.is_empty() && plan.basis == Some(PlanBasis::PredictedTaint) => {
            writeln!(out, "Result: no NoExecute taint yet; the deletion follows the expected taint (see above).")?;
        }
        (_, Verdict::Unaffected) if plan.terminating() => writeln!(
            out,
            "Result: the pod is terminating: its deletion was issued already; the node is not NoExecute-tainted now."
        )?,
        (_, Verdict::Unaffected) => writeln!(out, "Result: nothing to do, the node is not NoExecute-tainted.")?,
        _ if e.matches.is_empty() && plan.verdict == Verdict::Never => {
            writeln!(out, "Result: every device taint is tolerated forever; the node is not NoExecute-tainted.")?;
        }
        (None, _) => {
            writeln!(out, "Result: some taint is untolerated, so the pod is deleted as soon as it is observed.")?
        }
        (Some(TolerationWindow::Forever), _) => {
            writeln!(
                out,
                "Result: every used toleration is without tolerationSeconds (or wraps negative): tolerated forever."
            )?;
        }
        (Some(TolerationWindow::After { seconds, nanos }), _) => {
            writeln!(out, "Result: the smallest tolerationSeconds of the used tolerations is {seconds}s.")?;
            if i128::from(*seconds) * i128::from(crate::engine::time::NANOS_PER_SECOND) != i128::from(*nanos) {
                // Faithful to upstream, whose time.Duration multiplication wraps: say so.
                writeln!(
                    out,
                    "  {seconds}s is past the 292 years a Go time.Duration holds: the controller's nanoseconds wrap, \
                     to a window of {} (as the deadline above), as upstream computes it.",
                    super::human::duration(u128::try_from(*nanos).unwrap_or(0))
                )?;
            }
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
struct ExplanationDoc<'a> {
    api_version: &'static str,
    kind: &'static str,
    now: String,
    /// How the control plane's time was read; absent for a dump or with `--now`.
    #[serde(skip_serializing_if = "Option::is_none")]
    clock: Option<ClockDoc>,
    namespace: String,
    name: String,
    uid: String,
    node: String,
    /// The pod has `metadata.deletionTimestamp`: its deletion was issued already.
    terminating: bool,
    verdict: &'static str,
    evict_at: Option<String>,
    since: Option<String>,
    basis: Option<&'static str>,
    /// What the clock's start rests on, for a taint without `timeAdded`.
    #[serde(skip_serializing_if = "Option::is_none")]
    basis_note: Option<String>,
    /// When the node's taints were last written, for a taint without `timeAdded`.
    #[serde(skip_serializing_if = "Option::is_none")]
    taints_written: Option<WrittenDoc<'a>>,
    overdue: bool,
    toleration_seconds: Option<i64>,
    /// Present (`true`) only for a pod stuck terminating.
    #[serde(skip_serializing_if = "Option::is_none")]
    stuck: Option<bool>,
    /// Its `deletionTimestamp`; present with `stuck`.
    #[serde(skip_serializing_if = "Option::is_none")]
    stuck_since: Option<String>,
    taints: Vec<TaintMatchDoc<'a>>,
    /// The latest deletion, for a pod whose deletion follows a predicted taint.
    #[serde(skip_serializing_if = "Option::is_none")]
    evict_at_latest: Option<String>,
    /// The chain before a predicted taint; present when the controller is expected to taint the
    /// node or holds its taint back.
    #[serde(skip_serializing_if = "Option::is_none")]
    before_taint: Option<BeforeTaintDoc>,
    /// The node lifecycle controller's settings the chain used; present with `beforeTaint`.
    #[serde(skip_serializing_if = "Option::is_none")]
    controller_settings: Option<SettingsDoc>,
    /// The device-taint controller's view; present when the pod uses a DRA claim.
    #[serde(skip_serializing_if = "Option::is_none")]
    devices: Option<DevicesDoc<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DevicesDoc<'a> {
    kube_version: String,
    claims: Vec<ClaimDoc<'a>>,
    taints: Vec<DeviceDoc<'a>>,
    /// The chain in words, as the text says it.
    chain: Vec<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ClaimDoc<'a> {
    name: &'a str,
    claim: Option<&'a str>,
    counted: bool,
    reason: Option<&'static str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct BeforeTaintDoc {
    /// Present (`true`) when the node goes down in a what-if (`--down`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    down: bool,
    ready: Option<&'static str>,
    ready_since: Option<String>,
    ready_unknown_expected: Option<String>,
    last_heartbeat: Option<String>,
    zone: String,
    zone_state: Option<&'static str>,
    rate_per_second: Option<f32>,
    queued_ahead: Option<usize>,
    predicted_taint: Option<PredictedTaintDoc>,
    held: Option<HeldDoc>,
    used_toleration: Option<usize>,
    chain: Vec<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PredictedTaintDoc {
    key: &'static str,
    effect: &'static str,
    earliest: String,
    latest: Option<String>,
    basis: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct HeldDoc {
    reason: &'static str,
    zone: String,
}

fn before_taint_doc(b: &BeforeTaint<'_>, e: &Explanation<'_>) -> BeforeTaintDoc {
    let forecast = &b.node.forecast;
    BeforeTaintDoc {
        down: b.down,
        ready: forecast.ready.map(Ready::as_str),
        ready_since: b.node.ready_since.map(rfc3339),
        ready_unknown_expected: b.unknown_expected().map(rfc3339),
        last_heartbeat: forecast.last_heartbeat.map(rfc3339),
        zone: forecast.zone.name().to_owned(),
        zone_state: b.zone.as_ref().map(|z| z.state.as_str()),
        rate_per_second: b.zone.as_ref().map(|z| z.rate_per_second),
        queued_ahead: forecast.taint.map(|t| t.queued_with),
        predicted_taint: forecast.taint.map(|t| PredictedTaintDoc {
            key: t.key.key(),
            effect: "NoExecute",
            earliest: rfc3339(t.earliest),
            latest: t.latest.map(rfc3339),
            basis: t.basis.as_str(),
        }),
        held: forecast.held.as_ref().map(|h| HeldDoc { reason: h.reason.as_str(), zone: h.zone.name().to_owned() }),
        used_toleration: b.used,
        chain: chain_lines(b, e),
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TaintMatchDoc<'a> {
    taint: TaintDoc<'a>,
    used_toleration: Option<usize>,
    rejected: Vec<RejectedDoc>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RejectedDoc {
    toleration: usize,
    reason: String,
}

/// Writes the explanation as a JSON document (`kind: EvictionExplanation`).
pub fn render_json(e: &Explanation<'_>, out: &mut impl Write) -> io::Result<()> {
    write_json(&document(e), out)
}

/// Writes the explanation's document as YAML.
pub fn render_yaml(e: &Explanation<'_>, out: &mut impl Write) -> io::Result<()> {
    write_yaml(&document(e), out)
}

fn document<'a>(e: &'a Explanation<'_>) -> ExplanationDoc<'a> {
    let plan = e.plan;
    ExplanationDoc {
        api_version: API_VERSION,
        kind: "EvictionExplanation",
        now: rfc3339(e.now),
        clock: e.clock,
        namespace: plan.key().namespace().to_owned(),
        name: plan.key().name().to_owned(),
        uid: plan.uid().to_string(),
        node: e.node.to_string(),
        terminating: plan.terminating(),
        verdict: verdict_name(plan.verdict),
        evict_at: plan.evict_at.map(rfc3339),
        since: plan.since.map(rfc3339),
        basis: plan.basis.map(basis_name),
        basis_note: basis_note(e),
        taints_written: e.taints_written.map(WrittenDoc::from),
        overdue: plan.overdue,
        toleration_seconds: plan.toleration_seconds,
        stuck: plan.stuck_since().map(|_| true),
        stuck_since: plan.stuck_since().map(rfc3339),
        taints: e
            .matches
            .iter()
            .map(|m| TaintMatchDoc {
                taint: TaintDoc::from(&m.taint),
                used_toleration: m.used,
                rejected: m
                    .rejected
                    .iter()
                    .map(|(i, why)| RejectedDoc {
                        toleration: *i,
                        reason: mismatch_text(why, &e.tolerations[*i], &m.taint),
                    })
                    .collect(),
            })
            .collect(),
        evict_at_latest: plan.evict_at_latest.map(rfc3339),
        before_taint: e
            .before_taint
            .as_ref()
            .filter(|b| b.node.forecast.taint.is_some() || b.node.forecast.held.is_some())
            .map(|b| before_taint_doc(b, e)),
        controller_settings: e
            .before_taint
            .as_ref()
            .filter(|b| b.node.forecast.taint.is_some() || b.node.forecast.held.is_some())
            .map(|b| SettingsDoc::from(&b.settings)),
        devices: e.devices.as_ref().map(|(report, minor)| DevicesDoc {
            kube_version: format!("1.{minor}"),
            claims: report
                .claims
                .iter()
                .map(|seen| ClaimDoc {
                    name: &seen.uses.entry,
                    claim: seen.uses.claim.as_deref(),
                    counted: seen.skipped.is_none(),
                    reason: seen.skipped.map(|why| why.as_str()),
                })
                .collect(),
            taints: report.evictions.iter().map(DeviceDoc::from).collect(),
            chain: device_lines(report),
        }),
    }
}
