//! `plan --timeline`: how many pods are deleted in each interval of the coming window, as a bar
//! chart for people and as buckets in the document, with the biggest cliff (the instant the most
//! pods go at once).

use std::io::{self, Write};

use super::human::{count, countdown, duration, short_time};
use super::summary;
use super::view::{View, cut};
use crate::engine::plan::{Plan, Verdict};
use crate::engine::time::{NANOS_PER_SECOND, Timestamp};

/// The most intervals a timeline has: a chart a 24-line terminal shows whole.
pub const MAX_BUCKETS: usize = 20;

/// The steps a timeline may take, in seconds: the smallest that covers the window in
/// [`MAX_BUCKETS`] intervals is used.
const STEPS: [i64; 18] =
    [1, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10_800, 21_600, 43_200, 86_400, 604_800];

/// Pods deleted in `(from, to]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bucket {
    pub from: Timestamp,
    pub to: Timestamp,
    pub pods: usize,
}

/// The most pods deleted at one instant from `now` on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cliff {
    pub at: Timestamp,
    pub pods: usize,
}

/// The deletions of a plan over time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timeline {
    /// The plan's `now`: the window starts there.
    pub from: Timestamp,
    /// The length of each interval, in seconds.
    pub step_seconds: i64,
    /// Pods being deleted already, whatever their deadline: counted apart, in no interval (the
    /// first line and the node lines count them apart too).
    pub terminating: usize,
    /// The other pods whose deadline is `now` or has passed.
    pub due_now: usize,
    /// The intervals after `now`, up to the last deadline (or [`MAX_BUCKETS`] of them).
    pub buckets: Vec<Bucket>,
    /// Pods whose deadline is after the last interval.
    pub later: usize,
    /// Pods tolerating their node's taints forever.
    pub never: usize,
    /// The instant the most pods go at once (the earliest of equals); `None` when none is ahead.
    pub cliff: Option<Cliff>,
}

impl Timeline {
    /// The timeline of `plan`'s pods.
    #[must_use]
    pub fn of(plan: &Plan) -> Self {
        let now = plan.now;
        let mut ahead: Vec<Timestamp> = Vec::new();
        let (mut terminating, mut due_now, mut never) = (0, 0, 0);
        for pod in plan.nodes.iter().flat_map(|node| &node.pods) {
            match (pod.verdict, pod.evict_at) {
                _ if pod.terminating() => terminating += 1,
                (Verdict::Never, _) => never += 1,
                (_, Some(at)) if at > now => ahead.push(at),
                (_, Some(at)) => {
                    due_now += 1;
                    if at == now {
                        ahead.push(at);
                    }
                }
                (_, None) => {}
            }
        }
        ahead.sort_unstable();
        let cliff = biggest_cliff(&ahead);
        let ahead: Vec<Timestamp> = ahead.into_iter().filter(|&at| at > now).collect();
        let span = ahead.last().map_or(0, |last| last.nanos_since(now));
        let nanos = |seconds: i64| i128::from(seconds) * i128::from(NANOS_PER_SECOND);
        // The intervals a step needs: the last deadline falls in the one ending at or after it.
        let needed = |step: i64| usize::try_from((span + nanos(step) - 1) / nanos(step)).unwrap_or(usize::MAX);
        let step_seconds =
            STEPS.iter().copied().find(|&step| needed(step) <= MAX_BUCKETS).unwrap_or(STEPS[STEPS.len() - 1]);
        let step = nanos(step_seconds);
        let intervals = if ahead.is_empty() { 0 } else { needed(step_seconds).min(MAX_BUCKETS) };
        let mut buckets: Vec<Bucket> = (0..intervals)
            .map(|k| {
                let k = k as i128;
                let at = |k: i128| Timestamp::from_nanos(now.as_nanos() + k * step);
                Bucket { from: at(k), to: at(k + 1), pods: 0 }
            })
            .collect();
        let mut later = 0;
        for at in ahead {
            // (from, to]: a deadline on a boundary belongs to the interval it ends.
            let k = usize::try_from((at.nanos_since(now) - 1) / step).unwrap_or(usize::MAX);
            match buckets.get_mut(k) {
                Some(bucket) => bucket.pods += 1,
                None => later += 1,
            }
        }
        Self { from: now, step_seconds, terminating, due_now, buckets, later, never, cliff }
    }

    /// The step as the tables write durations: `1m`, `5m`, `1h`.
    #[must_use]
    pub fn step(&self) -> String {
        duration(u128::try_from(self.step_seconds).unwrap_or_default() * NANOS_PER_SECOND as u128)
    }
}

/// The instant with the most deadlines in `sorted` (the earliest of equals).
fn biggest_cliff(sorted: &[Timestamp]) -> Option<Cliff> {
    let mut best: Option<Cliff> = None;
    let mut i = 0;
    while i < sorted.len() {
        let at = sorted[i];
        let pods = sorted[i..].iter().take_while(|&&t| t == at).count();
        if best.is_none_or(|best| pods > best.pods) {
            best = Some(Cliff { at, pods });
        }
        i += pods;
    }
    best
}

/// The longest bar.
const MAX_BAR: usize = 60;

/// Writes the timeline as a bar chart (after the summary lines with `--summary`), fitted to
/// `view.width` (80 columns when unknown).
pub fn render(plan: &Plan, timeline: &Timeline, view: &View, out: &mut impl Write) -> io::Result<()> {
    if plan.nodes.is_empty() {
        return writeln!(out, "No node has a NoExecute taint.");
    }
    super::owners::write_down_line(plan, view, out)?;
    if view.summary {
        summary::render(plan, view, out)?;
        writeln!(out)?;
    }
    let now = plan.now;
    let ahead: usize = timeline.buckets.iter().map(|b| b.pods).sum::<usize>() + timeline.later;
    let width = view.width.unwrap_or(80);
    // Pods being deleted already go first, as on the plan's first line.
    let terminating = match timeline.terminating {
        0 => String::new(),
        n => format!("{} terminating, ", count(n)),
    };
    let heading = format!(
        "Deletions per {} from {}: {terminating}{} due now, {} ahead, {} never",
        timeline.step(),
        short_time(timeline.from, now),
        count(timeline.due_now),
        count(ahead),
        count(timeline.never)
    );
    writeln!(out, "{}", cut(&heading, view.width))?;
    let mut rows: Vec<(String, usize)> = Vec::with_capacity(timeline.buckets.len() + 2);
    rows.push(("due now".to_owned(), timeline.due_now));
    rows.extend(timeline.buckets.iter().map(|b| (short_time(b.from, now), b.pods)));
    if timeline.later > 0 {
        rows.push(("later".to_owned(), timeline.later));
    }
    let label = rows.iter().map(|(label, _)| label.chars().count()).max().unwrap_or(0);
    let digits = rows.iter().map(|(_, pods)| count(*pods).len()).max().unwrap_or(1);
    let most = rows.iter().map(|(_, pods)| *pods).max().unwrap_or(0).max(1);
    let bar_room = width.saturating_sub(label + digits + 4).clamp(1, MAX_BAR);
    for (text, pods) in &rows {
        // Any deletion shows at least one block; the biggest fills the room.
        let bar = if *pods == 0 { 0 } else { (pods * bar_room).div_ceil(most).max(1) };
        let line = format!("{text:<label$}  {:>digits$}  {}", count(*pods), "█".repeat(bar));
        writeln!(out, "{}", cut(line.trim_end(), view.width))?;
    }
    let cliff = match timeline.cliff {
        Some(cliff) => format!(
            "Biggest cliff: {} {} at {} ({})",
            count(cliff.pods),
            if cliff.pods == 1 { "pod" } else { "pods" },
            short_time(cliff.at, now),
            countdown(Some(cliff.at), now)
        ),
        None => "No deletion ahead.".to_owned(),
    };
    writeln!(out, "{}", cut(&cliff, view.width))?;
    super::owners::write_roll_up(plan, view, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::model::{Pod, PodKey, Uid};
    use crate::engine::{
        plan::{NodePlan, PodPlan},
        snapshot::SnapshotPod,
    };

    const NOW: i64 = 1_795_341_600; // 2026-11-22T10:00:00Z

    fn pod(name: &str, verdict: Verdict, at: Option<i64>) -> PodPlan<'static> {
        let pod =
            Pod { key: PodKey::new("ns", name), uid: Uid::from(name), node: None, tolerations: Vec::new().into() };
        PodPlan {
            // A test's pods are kept for the rest of the run.
            pod: Box::leak(Box::new(SnapshotPod::running(pod, None))),
            verdict,
            evict_at: at.map(|s| Timestamp::from_unix_seconds(NOW + s)),
            evict_at_latest: None,
            since: None,
            basis: None,
            toleration_seconds: None,
            untolerated: Vec::new().into(),
            overdue: at.is_some_and(|s| s < 0),
            stuck: false,
            tolerations_edited: None,
            devices: None,
        }
    }

    fn plan(pods: Vec<PodPlan<'static>>) -> Plan<'static> {
        Plan {
            now: Timestamp::from_unix_seconds(NOW),
            nodes: vec![NodePlan {
                name: "n".into(),
                taints: Vec::new().into(),
                taints_written: None,
                pods,
                lifecycle: None,
            }],
            zones: None,
            device_taints: None,
            owners: None,
            assumed: None,
        }
    }

    #[test]
    fn timeline_counts_deletions_per_interval_ending_at_each_boundary() {
        let timeline = Timeline::of(&plan(vec![
            pod("late", Verdict::EvictAt, Some(-30)),
            pod("now", Verdict::EvictNow, Some(0)),
            pod("a", Verdict::EvictAt, Some(60)),
            pod("b", Verdict::EvictAt, Some(130)),
            pod("c", Verdict::EvictAt, Some(130)),
            pod("d", Verdict::EvictAt, Some(1200)),
            pod("forever", Verdict::Never, None),
        ]));
        assert_eq!(timeline.step_seconds, 60);
        assert_eq!((timeline.due_now, timeline.never, timeline.later), (2, 1, 0));
        let pods: Vec<usize> = timeline.buckets.iter().map(|b| b.pods).collect();
        let mut expected = [0; MAX_BUCKETS];
        (expected[0], expected[2], expected[19]) = (1, 2, 1);
        assert_eq!(pods, expected, "60s is the first interval's end, 1200s the last's");
        assert_eq!(timeline.cliff, Some(Cliff { at: Timestamp::from_unix_seconds(NOW + 130), pods: 2 }));
    }

    #[test]
    fn timeline_counts_terminating_pods_apart_whatever_their_deadline() {
        // Their deletion is issued already: not due now, not a deletion ahead, not the cliff.
        let terminating = |name: &str, verdict: Verdict, at: Option<i64>| {
            let mut pod = pod(name, verdict, at);
            pod.pod = Box::leak(Box::new(SnapshotPod { terminating: true, ..pod.pod.clone() }));
            pod
        };
        let timeline = Timeline::of(&plan(vec![
            terminating("gone", Verdict::EvictNow, Some(-30)),
            terminating("going", Verdict::EvictAt, Some(60)),
            terminating("held", Verdict::Never, None),
            pod("due", Verdict::EvictNow, Some(-30)),
            pod("a", Verdict::EvictAt, Some(120)),
        ]));
        assert_eq!((timeline.terminating, timeline.due_now, timeline.never, timeline.later), (3, 1, 0, 0));
        assert_eq!(timeline.buckets.iter().map(|b| b.pods).sum::<usize>(), 1, "{timeline:?}");
        assert_eq!(timeline.cliff, Some(Cliff { at: Timestamp::from_unix_seconds(NOW + 120), pods: 1 }));
    }

    #[test]
    fn timeline_steps_up_to_fit_the_window_and_keeps_the_far_future_as_later() {
        let hour = Timeline::of(&plan(vec![pod("a", Verdict::EvictAt, Some(3600))]));
        assert_eq!((hour.step_seconds, hour.buckets.len()), (300, 12));
        let far = Timeline::of(&plan(vec![
            pod("a", Verdict::EvictAt, Some(1)),
            pod("b", Verdict::EvictAt, Some(i64::from(i32::MAX))),
        ]));
        assert_eq!((far.step_seconds, far.buckets.len(), far.later), (604_800, MAX_BUCKETS, 1));
        let none = Timeline::of(&plan(vec![pod("a", Verdict::Never, None)]));
        assert!(none.buckets.is_empty() && none.cliff.is_none());
    }

    #[test]
    fn chart_fits_the_width_and_names_the_cliff() {
        let pods = (0..120).map(|i| pod(&format!("p{i}"), Verdict::EvictAt, Some(130))).collect();
        let plan = plan(pods);
        let mut out = Vec::new();
        let view = View { width: Some(60), ..View::plain() };
        render(&plan, &Timeline::of(&plan), &view, &mut out).expect("a Vec takes it");
        let text = String::from_utf8(out).expect("UTF-8");
        assert!(text.lines().all(|line| line.chars().count() <= 60), "{text}");
        assert!(text.contains("Biggest cliff: 120 pods at 10:02:10 (in 2m 10s)"), "{text}");
        let empty = Plan { nodes: Vec::new(), ..plan };
        let mut out = Vec::new();
        render(&empty, &Timeline::of(&empty), &view, &mut out).expect("a Vec takes it");
        assert_eq!(out, b"No node has a NoExecute taint.\n");
    }
}
