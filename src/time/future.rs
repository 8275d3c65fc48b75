//! Timestamps of the input later than the evaluation instant.
//!
//! Every stamp the replay reads was written by the control plane's clocks before the input was read,
//! so a stamp after `now` says a clock is wrong: `--now` (a typo in the year, a dump from a machine
//! ahead of this one), this machine's clock, or the writer's. The replay takes such a stamp as `now`
//! (a taint observed now, a pod bound now); these warnings say so, one line a kind, naming the
//! furthest object and by how much.

use crate::engine::snapshot::Snapshot;
use crate::engine::time::{NANOS_PER_SECOND, Timestamp};
use crate::words::duration;

/// `at` in RFC 3339, as every layer writes it.
fn rfc3339(at: Timestamp) -> String {
    crate::words::rfc3339(at.as_nanos())
}

/// What made `now`, for the warnings' words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NowFrom {
    /// `--now`.
    Flag,
    /// The control plane's clock, read live.
    ControlPlane,
    /// This machine's clock (a dump without `--now`).
    ThisMachine,
}

impl NowFrom {
    fn describe(self, now: Timestamp) -> String {
        match self {
            Self::Flag => format!("--now {}", rfc3339(now)),
            Self::ControlPlane => format!("the control plane's time ({})", rfc3339(now)),
            Self::ThisMachine => format!("this machine's time ({})", rfc3339(now)),
        }
    }
}

impl NowFrom {
    /// How much later than `now` a stamp may be before it is named: none after `--now`; a second
    /// after a clock read (a dump taken just before it is read; the control plane's time, known to a
    /// fraction of a second).
    fn slack(self) -> i64 {
        match self {
            Self::Flag => 0,
            Self::ControlPlane | Self::ThisMachine => NANOS_PER_SECOND,
        }
    }
}

/// One warning line per kind of stamp later than `now`: the controller Lease's renewal (`renewed`,
/// when the input has it), NoExecute taints' `timeAdded`, pods' binding.
#[must_use]
pub fn warnings(snapshot: &Snapshot, renewed: Option<Timestamp>, now: Timestamp, from: NowFrom) -> Vec<String> {
    let mut lines = Vec::new();
    let after = |at: Timestamp| u128::try_from(at.nanos_since(now)).unwrap_or(0);
    let late = now.add_nanos(from.slack());
    if let Some(renewed) = renewed.filter(|at| *at > late) {
        let by = duration(after(renewed));
        lines.push(match from {
            NowFrom::Flag => format!(
                "--now {} is {by} before the input was taken (the kube-controller-manager Lease was renewed at {}): \
                 the plan is of a time the input had already passed",
                rfc3339(now),
                rfc3339(renewed)
            ),
            _ => format!(
                "the kube-controller-manager Lease was renewed at {}, {by} after {}: a clock is wrong; the plan \
                 is made at {}",
                rfc3339(renewed),
                from.describe(now),
                rfc3339(now)
            ),
        });
    }
    let taints = snapshot.nodes.iter().flat_map(|node| {
        node.taints
            .iter()
            .filter(|taint| taint.is_no_execute())
            .filter_map(move |taint| taint.time_added.filter(|at| *at > late).map(|at| (at, node, taint)))
    });
    if let Some((count, (at, node, taint))) = furthest(taints, |(at, ..)| *at) {
        lines.push(format!(
            "taint {taint} of node \"{}\" was added at {}, {} after {}{}: its countdowns are taken to start at {}",
            node.name,
            rfc3339(at),
            duration(after(at)),
            from.describe(now),
            more(count, "taint"),
            rfc3339(now)
        ));
    }
    let pods = snapshot.pods.iter().filter_map(|pod| pod.bound_at.filter(|at| *at > late).map(|at| (at, pod)));
    if let Some((count, (at, pod))) = furthest(pods, |(at, _)| *at) {
        lines.push(format!(
            "pod {} was bound at {}, {} after {}{}: it is taken as bound at {}",
            pod.pod.key,
            rfc3339(at),
            duration(after(at)),
            from.describe(now),
            more(count, "pod"),
            rfc3339(now)
        ));
    }
    lines
}

/// How many there are, and the one furthest ahead.
fn furthest<T>(items: impl Iterator<Item = T>, at: impl Fn(&T) -> Timestamp) -> Option<(usize, T)> {
    items.fold(None, |best, item| match best {
        Some((count, best)) if at(&best) >= at(&item) => Some((count + 1, best)),
        Some((count, _)) => Some((count + 1, item)),
        None => Some((1, item)),
    })
}

fn more(count: usize, what: &str) -> String {
    match count {
        1 => String::new(),
        2 => format!(" (and 1 more {what})"),
        n => format!(" (and {} more {what}s)", n - 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::model::{Effect, Taint};
    use crate::engine::snapshot::SnapshotNode;

    fn t(seconds: i64) -> Timestamp {
        Timestamp::from_unix_seconds(1_795_341_600 + seconds)
    }

    #[test]
    fn a_future_taint_is_named_with_how_far_and_what_is_assumed() {
        let taints = [
            Taint::new("a", "", Effect::NoExecute).with_time_added(t(3600)),
            Taint::new("b", "", Effect::NoExecute).with_time_added(t(60)),
            Taint::new("c", "", Effect::NoExecute).with_time_added(t(-60)),
        ];
        let snapshot =
            Snapshot { nodes: vec![SnapshotNode::new("n1".into(), Default::default(), taints)], ..Snapshot::default() };
        let lines = warnings(&snapshot, None, t(0), NowFrom::ThisMachine);
        assert_eq!(
            lines,
            ["taint a:NoExecute of node \"n1\" was added at 2026-11-22T11:00:00Z, 1h after this machine's time \
                 (2026-11-22T10:00:00Z) (and 1 more taint): its countdowns are taken to start at 2026-11-22T10:00:00Z"]
        );
    }

    #[test]
    fn a_now_before_the_controller_lease_was_renewed_is_named() {
        let lines = warnings(&Snapshot::default(), Some(t(110)), t(0), NowFrom::Flag);
        assert_eq!(
            lines,
            ["--now 2026-11-22T10:00:00Z is 1m 50s before the input was taken (the kube-controller-manager Lease was \
                 renewed at 2026-11-22T10:01:50Z): the plan is of a time the input had already passed"]
        );
        assert!(warnings(&Snapshot::default(), Some(t(-1)), t(0), NowFrom::Flag).is_empty());
    }
}
