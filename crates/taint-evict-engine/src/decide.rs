//! The decision for one pod on one tainted node: upstream's `processPodOnNode`, as a pure function.

use super::model::{Taint, Toleration};
use super::queue::{Cause, Entry, EntryState, Work};
use super::time::Timestamp;
use super::tolerate::{Tolerance, TolerationWindow, tolerance};

/// What to do with a pod's work after evaluating it against its node's NoExecute taints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub enum Decision {
    /// Leave the queue as it is.
    Keep,
    /// Cancel any work (the pod tolerates every taint forever).
    Cancel,
    /// Cancel any work, then add this immediate work (some taint is untolerated).
    EvictNow(Work),
    /// Add this work unless the key has some (no live timer existed).
    Schedule(Work),
    /// Cancel the live timer and add this work in its place, keeping its start.
    Reschedule(Work),
}

/// Decides for a pod with `tolerations` on a node with the NoExecute `taints` (never empty), given
/// its current queue entry, at `now`.
///
/// Mirrors `processPodOnNode` (`pkg/controller/tainteviction/taint_eviction.go`, ≥ 1.19):
/// - untolerated: cancel, then immediate work (`created = fire = now`);
/// - tolerated forever: cancel;
/// - finite window `m`: a live timer created before `now` is **kept unchanged**, whatever `m` is now
///   (upstream's early return: a later evaluation never moves an existing deadline,
///   kubernetes/kubernetes#102993, kubernetes/kubernetes#108982); a live timer created at `now` is
///   re-armed to `now + m` keeping its start; otherwise work is added (`created = now`,
///   `fire = now + m`), which the queue skips while a deletion is in flight (upstream's placeholder
///   for it holds the pod's key).
///
/// One deliberate refinement: where upstream would cancel and re-add a timer created at this very
/// instant with an identical deadline (two evaluations sharing one `now`, which only a virtual clock
/// produces), the decision is [`Decision::Keep`], so no spurious "Cancelling deletion" event is sent.
pub fn decide(taints: &[Taint], tolerations: &[Toleration], existing: Option<&Entry>, now: Timestamp) -> Decision {
    debug_assert!(
        !taints.is_empty(),
        "a pod is never evaluated against an untainted node (upstream's function would delete it)"
    );
    let (seconds, nanos) = match tolerance(taints, tolerations) {
        Tolerance::Untolerated => {
            return Decision::EvictNow(Work { created: now, fire: now, cause: Cause::Untolerated });
        }
        Tolerance::Tolerated(TolerationWindow::Forever) => return Decision::Cancel,
        Tolerance::Tolerated(TolerationWindow::After { seconds, nanos }) => (seconds, nanos),
    };
    let fire = now.add_nanos(nanos);
    let cause = Cause::Expired { seconds };
    match existing {
        Some(entry) if entry.state == EntryState::Armed => {
            if entry.work.created < now || entry.work.fire == fire {
                Decision::Keep
            } else {
                Decision::Reschedule(Work { created: entry.work.created, fire, cause })
            }
        }
        Some(_) => Decision::Keep,
        None => Decision::Schedule(Work { created: now, fire, cause }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Effect;
    use crate::queue::Ticket;
    use crate::sim::{t, taint, tol};
    use crate::time::NANOS_PER_SECOND;

    fn armed(created: i64, fire: i64, seconds: i64) -> Entry {
        Entry {
            work: Work { created: t(created), fire: t(fire), cause: Cause::Expired { seconds } },
            ticket: Ticket(7),
            state: EntryState::Armed,
        }
    }

    fn schedule(created: i64, fire: i64, seconds: i64) -> Decision {
        Decision::Schedule(Work { created: t(created), fire: t(fire), cause: Cause::Expired { seconds } })
    }

    #[test]
    fn untolerated_taint_evicts_now() {
        let d = decide(&[taint("a")], &[], None, t(100));
        assert_eq!(d, Decision::EvictNow(Work { created: t(100), fire: t(100), cause: Cause::Untolerated }));
    }

    #[test]
    fn tolerated_taint_schedules_at_now_plus_seconds() {
        assert_eq!(decide(&[taint("a")], &[tol("a", Some(300))], None, t(100)), schedule(100, 400, 300));
    }

    #[test]
    fn existing_deadline_is_kept_when_another_tolerated_taint_arrives() {
        let tolerations = [tol("a", Some(300)), tol("b", Some(300))];
        let w = armed(100, 400, 300);
        assert_eq!(decide(&[taint("a"), taint("b")], &tolerations, Some(&w), t(250)), Decision::Keep);
    }

    #[test]
    fn existing_deadline_is_kept_when_a_shorter_tolerated_taint_arrives() {
        let tolerations = [tol("a", Some(3600)), tol("b", Some(60))];
        let w = armed(0, 3600, 3600);
        assert_eq!(decide(&[taint("a"), taint("b")], &tolerations, Some(&w), t(10)), Decision::Keep);
    }

    #[test]
    fn edited_toleration_seconds_never_move_the_deadline() {
        let w = armed(0, 300, 300);
        for (case, seconds) in [("shortened to 30 s", 30), ("zeroed", 0), ("lengthened to an hour", 3600)] {
            let d = decide(&[taint("a")], &[tol("a", Some(seconds))], Some(&w), t(50));
            assert_eq!(d, Decision::Keep, "{case}: lengthening or shortening a toleration shouldn't work");
        }
    }

    #[test]
    fn untolerated_taint_added_cancels_and_evicts_now() {
        let w = armed(0, 300, 300);
        let d = decide(&[taint("a"), taint("c")], &[tol("a", Some(300))], Some(&w), t(50));
        assert_eq!(d, Decision::EvictNow(Work { created: t(50), fire: t(50), cause: Cause::Untolerated }));
    }

    #[test]
    fn remaining_taints_tolerated_forever_cancel() {
        let w = armed(0, 300, 300);
        let d = decide(&[taint("d")], &[tol("a", Some(300)), tol("d", None)], Some(&w), t(50));
        assert_eq!(d, Decision::Cancel);
    }

    #[test]
    fn tolerated_forever_without_work_cancels_nothing_real() {
        assert_eq!(decide(&[taint("a")], &[tol("a", None)], None, t(5)), Decision::Cancel);
    }

    #[test]
    fn pod_bound_after_the_taint_starts_its_clock_at_binding() {
        assert_eq!(decide(&[taint("a")], &[tol("a", Some(300))], None, t(500)), schedule(500, 800, 300));
    }

    #[test]
    fn swapped_condition_taint_keeps_the_deadline() {
        let tolerations =
            [tol("node.kubernetes.io/not-ready", Some(300)), tol("node.kubernetes.io/unreachable", Some(300))];
        let w = armed(0, 300, 300);
        let swapped = Taint::new("node.kubernetes.io/unreachable", "", Effect::NoExecute).with_time_added(t(100));
        assert_eq!(decide(&[swapped], &tolerations, Some(&w), t(100)), Decision::Keep);
    }

    #[test]
    fn wrapping_seconds_mean_forever() {
        assert_eq!(decide(&[taint("a")], &[tol("a", Some(18_446_744_073))], None, t(100)), Decision::Cancel);
    }

    #[test]
    fn wrapping_seconds_can_mean_a_fraction_of_a_second() {
        let d = decide(&[taint("a")], &[tol("a", Some(18_446_744_074))], None, t(100));
        let fire = t(100).add_nanos(290_448_384);
        assert_eq!(
            d,
            Decision::Schedule(Work { created: t(100), fire, cause: Cause::Expired { seconds: 18_446_744_074 } })
        );
    }

    #[test]
    fn in_flight_deletion_blocks_the_finite_path() {
        let in_flight = Entry {
            work: Work { created: t(0), fire: t(0), cause: Cause::Untolerated },
            ticket: Ticket(1),
            state: EntryState::InFlight,
        };
        assert_eq!(decide(&[taint("a")], &[tol("a", Some(300))], Some(&in_flight), t(1)), Decision::Keep);
    }

    #[test]
    fn zero_and_negative_seconds_schedule_immediate_work() {
        for seconds in [0, -5] {
            let d = decide(&[taint("a")], &[tol("a", Some(seconds))], None, t(9));
            let Decision::Schedule(work) = d else { panic!("{seconds}: {d:?}") };
            assert!(work.is_immediate(), "{seconds}");
            assert_eq!(work.cause, Cause::Expired { seconds });
        }
    }

    #[test]
    fn timer_created_at_this_instant_is_rearmed_keeping_its_start() {
        let w = armed(100, 400, 300);
        let d = decide(&[taint("a")], &[tol("a", Some(60))], Some(&w), t(100));
        assert_eq!(
            d,
            Decision::Reschedule(Work { created: t(100), fire: t(160), cause: Cause::Expired { seconds: 60 } })
        );
        let same = decide(&[taint("a")], &[tol("a", Some(300))], Some(&w), t(100));
        assert_eq!(same, Decision::Keep, "an identical deadline at the same instant changes nothing");
    }

    #[test]
    fn window_is_nanosecond_exact() {
        let d = decide(&[taint("a")], &[tol("a", Some(1))], None, t(0));
        let Decision::Schedule(work) = d else { panic!("{d:?}") };
        assert_eq!(work.fire.nanos_since(work.created), i128::from(NANOS_PER_SECOND));
    }
}
