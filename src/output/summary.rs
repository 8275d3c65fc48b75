//! Summaries first: one line per node (counts by verdict, the next deadline, whether it is overdue),
//! a cluster line above them, and the order of the nodes by urgency.

use std::io::{self, Write};

use super::human::{count, countdown, printable, short_time};
use super::human::{short_key, time_of_day, to_second, until};
use super::view::{View, cut};
use crate::engine::lifecycle::HeldReason;
use crate::engine::plan::{NodePlan, Plan, Verdict, rate_zero_ties};
use crate::engine::time::{NANOS_PER_SECOND, Timestamp};

/// How far ahead the cluster line's "within 5m" looks.
pub const SOON_NANOS: i128 = 5 * 60 * NANOS_PER_SECOND as i128;

/// A node's pods, counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NodeCounts {
    /// Pods shown.
    pub pods: usize,
    /// Pods by verdict, those being deleted already apart (`terminating`).
    pub evict_now: usize,
    pub evict_at: usize,
    pub never: usize,
    pub unaffected: usize,
    /// Pods whose deadline has passed.
    pub overdue: usize,
    /// Pods whose deletion was already issued.
    pub terminating: usize,
    /// The earliest deadline at or after `now` of a pod not terminating.
    pub next: Option<Timestamp>,
    /// The earliest deadline of all.
    pub first: Option<Timestamp>,
}

impl NodeCounts {
    /// Counts `node`'s pods at `now`.
    #[must_use]
    pub fn of(node: &NodePlan, now: Timestamp) -> Self {
        let mut counts = Self { pods: node.pods.len(), ..Self::default() };
        for pod in &node.pods {
            match pod.verdict {
                // The table's verdict of a pod being deleted already, whatever the controller decides.
                _ if pod.terminating() => counts.terminating += 1,
                Verdict::EvictNow => counts.evict_now += 1,
                Verdict::EvictAt => counts.evict_at += 1,
                Verdict::Never => counts.never += 1,
                Verdict::Unaffected => counts.unaffected += 1,
            }
            // A pod whose deletion is issued is counted as terminating, not as overdue.
            counts.overdue += usize::from(pod.overdue && !pod.terminating());
            if let Some(at) = pod.evict_at {
                counts.first = Some(counts.first.map_or(at, |first| first.min(at)));
                // A pod being deleted already has no deletion ahead.
                if at >= now && !pod.terminating() {
                    counts.next = Some(counts.next.map_or(at, |next| next.min(at)));
                }
            }
        }
        counts
    }

    /// `13 pods: 1 evict-now, 7 evict-at, 4 never, 1 terminating; next 10:00:30 (in 30s); 2 overdue`.
    /// The pod total, then the terminating count, are left out when the line would not fit `room`.
    #[must_use]
    pub fn line(&self, now: Timestamp, room: Option<usize>) -> String {
        if self.pods == 0 {
            return "no pods".to_owned();
        }
        let verdicts = [
            (self.evict_now, "evict-now"),
            (self.evict_at, "evict-at"),
            (self.never, "never"),
            (self.unaffected, "unaffected"),
        ];
        let shown: Vec<String> =
            verdicts.iter().filter(|(n, _)| *n > 0).map(|(n, name)| format!("{} {name}", count(*n))).collect();
        let mut line = String::new();
        match self.next {
            Some(next) => {
                // To the second: a summary has no use for the fraction.
                let shown = to_second(next, false);
                // Spaced as the rows write it (`in 2m 10s`).
                line.push_str(&format!("; next {} ({})", short_time(shown, now), countdown(Some(next), now)));
            }
            None if self.evict_now + self.evict_at > 0 => line.push_str("; no deadline ahead"),
            None => {}
        }
        if self.overdue > 0 {
            line.push_str(&format!("; {} overdue", count(self.overdue)));
        } else if self.evict_now + self.evict_at > 0 {
            line.push_str("; none overdue");
        }
        let plural = if self.pods == 1 { "pod" } else { "pods" };
        let total = format!("{} {plural}: ", count(self.pods));
        let counts = shown.join(", ");
        let all = match self.terminating {
            0 => counts.clone(),
            n if counts.is_empty() => format!("{} terminating", count(n)),
            n => format!("{counts}, {} terminating", count(n)),
        };
        // The total (the sum of the counts) goes first, then the terminating pods (their rows say
        // it), before the deadlines are cut.
        let forms = [format!("{total}{all}{line}"), format!("{all}{line}"), format!("{total}{counts}{line}")];
        let fits = |text: &&String| room.is_none_or(|room| text.chars().count() <= room);
        let least = if counts.is_empty() { all } else { counts };
        forms.iter().find(fits).cloned().unwrap_or_else(|| format!("{least}{line}"))
    }
}

/// The whole plan's pods, counted by when they go.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClusterCounts {
    /// Nodes shown, those with a NoExecute taint, and those only expected to get one (the node
    /// lifecycle controller's predicted taint).
    pub nodes: usize,
    pub tainted: usize,
    pub expected: usize,
    /// Nodes shown, untainted, for their pods' tainted DRA devices.
    pub devices: usize,
    /// Pods whose deadline is `now` or has passed.
    pub due_now: usize,
    /// Pods whose deadline is within [`SOON_NANOS`] of `now`.
    pub soon: usize,
    /// Pods whose deadline is later.
    pub later: usize,
    /// Pods tolerating their node's taints forever.
    pub never: usize,
    /// Pods on nodes without a NoExecute taint.
    pub unaffected: usize,
    /// Pods being deleted already: not due, whatever their deadline (the node lines count them
    /// apart too).
    pub terminating: usize,
    /// Nodes expected to be tainted that tie for one taint (a rate-0 zone's one token): each group
    /// counts as one in `expected`.
    pub ties: Vec<Vec<String>>,
}

impl ClusterCounts {
    /// Counts `plan`'s nodes and pods.
    #[must_use]
    pub fn of(plan: &Plan) -> Self {
        let mut counts = Self { nodes: plan.nodes.len(), ..Self::default() };
        counts.ties =
            rate_zero_ties(plan).into_iter().map(|names| names.iter().map(ToString::to_string).collect()).collect();
        for node in &plan.nodes {
            let expected = node.lifecycle.as_ref().is_some_and(|l| l.forecast.taint.is_some());
            counts.tainted += usize::from(!node.taints.is_empty());
            counts.expected += usize::from(node.taints.is_empty() && expected);
            let devices = node.pods.iter().any(|pod| !pod.devices().is_empty());
            counts.devices += usize::from(node.taints.is_empty() && !expected && devices);
            for pod in &node.pods {
                match (pod.verdict, pod.evict_at) {
                    _ if pod.terminating() => counts.terminating += 1,
                    (Verdict::Never, _) => counts.never += 1,
                    (Verdict::Unaffected, _) => counts.unaffected += 1,
                    (_, Some(at)) if at.nanos_since(plan.now) <= 0 => counts.due_now += 1,
                    (_, Some(at)) if at.nanos_since(plan.now) <= SOON_NANOS => counts.soon += 1,
                    (_, _) => counts.later += 1,
                }
            }
        }
        // A tie is one taint, given to one of its nodes.
        counts.expected -= counts.ties.iter().map(|names| names.len() - 1).sum::<usize>();
        counts
    }

    /// `2 nodes tainted; 16 pods: 3 due now, 6 within 5m, 2 later, 5 never`.
    #[must_use]
    pub fn line(&self) -> String {
        let of = |k: usize| {
            let all = self.tainted + self.expected + self.devices == self.nodes;
            match (k, all) {
                (1, true) => "1 node".to_owned(),
                (k, true) => format!("{} nodes", count(k)),
                (k, false) => format!("{} of {} nodes", count(k), count(self.nodes)),
            }
        };
        // Tainted and expected to be are counted apart (docs/output.md, "The table").
        let mut nodes = match (self.tainted, self.expected, self.devices) {
            (0, 0, d) if d > 0 => format!("{} with tainted devices", of(d)),
            (t, 0, _) => format!("{} tainted", of(t)),
            (0, e, _) => format!("{} expected to be tainted", of(e)),
            (t, e, _) => format!("{} tainted, {} expected to be", of(t), count(e)),
        };
        for names in &self.ties {
            nodes.push_str(&format!(" (one of {})", names.join(", ")));
        }
        if self.devices > 0 && self.tainted + self.expected > 0 {
            nodes.push_str(&format!(", {} with tainted devices", count(self.devices)));
        }
        let pods = self.due_now + self.soon + self.later + self.never + self.unaffected + self.terminating;
        let plural = if pods == 1 { "pod" } else { "pods" };
        // Pods being deleted already go first: they are not due, and a narrow terminal cuts the end.
        let terminating = match self.terminating {
            0 => String::new(),
            n => format!("{} terminating, ", count(n)),
        };
        let mut line = format!(
            "{nodes}; {} {plural}: {terminating}{} due now, {} within 5m, {} later, {} never",
            count(pods),
            count(self.due_now),
            count(self.soon),
            count(self.later),
            count(self.never)
        );
        if self.unaffected > 0 {
            line.push_str(&format!(", {} unaffected", count(self.unaffected)));
        }
        line
    }
}

/// The nodes' indices, most urgent first: by their earliest deadline (an overdue one first of
/// all), nodes without one last; ties keep the plan's order.
#[must_use]
pub fn by_urgency(plan: &Plan, counts: &[NodeCounts]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..plan.nodes.len()).collect();
    order.sort_by_key(|&i| (counts[i].first.is_none(), counts[i].first));
    order
}

/// What the node lifecycle controller is expected to do to a node not tainted yet, in a few words:
/// `unreachable taint expected 10:00:44–10:00:47`, `held: zone z2 partially disrupted`.
fn forecast_note(node: &NodePlan) -> Option<String> {
    let forecast = &node.lifecycle.as_ref()?.forecast;
    if let Some(taint) = forecast.taint {
        let when = match taint.latest {
            Some(latest) => format!("{}–{}", time_of_day(taint.earliest, false), until(taint.earliest, latest)),
            None => format!("from {}", time_of_day(taint.earliest, false)),
        };
        return Some(format!("{} taint expected {when}", short_key(taint.key)));
    }
    let held = forecast.held.as_ref()?;
    Some(match held.reason {
        HeldReason::PartialDisruption => format!("held: zone {} partially disrupted", held.zone),
        HeldReason::AllZonesDown => "held: every zone fully disrupted".to_owned(),
        HeldReason::NoEvictionRate => format!("held: zone {} has no taint left to give (rate 0)", held.zone),
        HeldReason::Recovered => "back: its taint is removed at the next pass".to_owned(),
    })
}

/// `--summary`: the cluster line (with several nodes), then one line per node, most urgent first.
pub fn render(plan: &Plan, view: &View, out: &mut impl Write) -> io::Result<()> {
    if plan.nodes.is_empty() {
        return writeln!(out, "No node has a NoExecute taint.");
    }
    let counts: Vec<NodeCounts> = plan.nodes.iter().map(|node| NodeCounts::of(node, plan.now)).collect();
    if plan.nodes.len() > 1 {
        writeln!(out, "{}", cut(&ClusterCounts::of(plan).line(), view.width))?;
    }
    for i in by_urgency(plan, &counts) {
        let node = &plan.nodes[i];
        let name = printable(node.name.as_str());
        let note = forecast_note(node).map(|note| format!("{}; ", printable(note.as_str()))).unwrap_or_default();
        let room = view.width.map(|width| width.saturating_sub(name.chars().count() + 2 + note.chars().count()));
        let line = format!("{name}: {note}{}", counts[i].line(plan.now, room));
        writeln!(out, "{}", cut(&line, view.width))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: Timestamp = Timestamp::from_unix_seconds(1_795_341_600); // 2026-11-22T10:00:00Z

    #[test]
    fn node_line_keeps_the_counts_the_next_deadline_and_the_overdue_and_drops_the_rest_first() {
        let counts = NodeCounts {
            pods: 13,
            evict_now: 1,
            evict_at: 7,
            never: 4,
            overdue: 2,
            terminating: 1,
            next: Some(Timestamp::from_unix_seconds(1_795_341_630)),
            ..NodeCounts::default()
        };
        let full = "13 pods: 1 evict-now, 7 evict-at, 4 never, 1 terminating; next 10:00:30 (in 30s); 2 overdue";
        assert_eq!(counts.line(NOW, None), full);
        assert_eq!(
            counts.line(NOW, Some(85)),
            "1 evict-now, 7 evict-at, 4 never, 1 terminating; next 10:00:30 (in 30s); 2 overdue"
        );
        assert_eq!(
            counts.line(NOW, Some(80)),
            "13 pods: 1 evict-now, 7 evict-at, 4 never; next 10:00:30 (in 30s); 2 overdue"
        );
        assert_eq!(counts.line(NOW, Some(70)), "1 evict-now, 7 evict-at, 4 never; next 10:00:30 (in 30s); 2 overdue");
        let gone = NodeCounts { pods: 1, terminating: 1, overdue: 0, ..NodeCounts::default() };
        assert_eq!(gone.line(NOW, None), "1 pod: 1 terminating", "a pod being deleted is neither due nor unaffected");
        let calm = NodeCounts { pods: 1, never: 1, ..NodeCounts::default() };
        assert_eq!(calm.line(NOW, None), "1 pod: 1 never");
        let late = NodeCounts { pods: 1, evict_at: 1, overdue: 1, ..NodeCounts::default() };
        assert_eq!(late.line(NOW, None), "1 pod: 1 evict-at; no deadline ahead; 1 overdue");
    }

    #[test]
    fn cluster_line_counts_nodes_and_pods_by_when_they_go() {
        let counts = ClusterCounts {
            nodes: 3,
            tainted: 2,
            expected: 0,
            devices: 0,
            due_now: 120_000,
            soon: 1,
            later: 0,
            never: 5,
            unaffected: 2,
            terminating: 0,
            ties: Vec::new(),
        };
        assert_eq!(
            counts.line(),
            "2 of 3 nodes tainted; 120,008 pods: 120,000 due now, 1 within 5m, 0 later, 5 never, 2 unaffected"
        );
        // Fixed: nodes only expected to be tainted were counted as tainted.
        let line = |tainted, expected, nodes| {
            let counts = ClusterCounts { nodes, tainted, expected, ..ClusterCounts::default() };
            counts.line().split(';').next().unwrap_or_default().to_owned()
        };
        assert_eq!(line(2, 4, 6), "2 nodes tainted, 4 expected to be");
        assert_eq!(line(0, 1, 1), "1 node expected to be tainted");
        assert_eq!(line(1, 1, 3), "1 of 3 nodes tainted, 1 expected to be");
        // Nodes shown only for their pods' tainted DRA devices are not called tainted.
        let with_devices = |tainted, devices, nodes| {
            let counts = ClusterCounts { nodes, tainted, devices, ..ClusterCounts::default() };
            counts.line().split(';').next().unwrap_or_default().to_owned()
        };
        assert_eq!(with_devices(0, 2, 2), "2 nodes with tainted devices");
        assert_eq!(with_devices(1, 2, 3), "1 node tainted, 2 with tainted devices");
    }
}
